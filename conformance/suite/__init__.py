"""The adapter conformance suite (checks TCxxx, runner, reports, pytest plugin, base test class)."""
