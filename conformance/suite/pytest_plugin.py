"""pytest plugin (placeholder until the suite lands)."""
