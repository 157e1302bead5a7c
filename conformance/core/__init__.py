"""The core every other domain builds on: findings and rule metadata, errors, ids and times,
JSON and YAML input, the schema store and its validators, outputs (atomic writes, the
findings renderers), escaping per output sink, configuration and baselines. It imports
nothing else of the package."""
