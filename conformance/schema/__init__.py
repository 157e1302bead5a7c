"""Schema tools over `schemas/`: the exported bundle, revisions in git history, compatibility
diffs (with witnesses from `conformance.strategies`), and the models of each target
(`turnspec models`, and `codegen`, which writes `generated/`)."""
