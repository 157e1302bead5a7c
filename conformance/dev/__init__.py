"""Scaffolding for turnspec's own contributors (`python -m conformance.dev`), run in a checkout:

    python -m conformance.dev new-rule TS122 --family message --proof local --name MY_RULE
    python -m conformance.dev new-check TC911 --family semantics --name MY_CHECK
    python -m conformance.dev new-wire-api my-api --provider acme

Each writes every piece CONTRIBUTING.md's recipe lists, as a stub the guard tests accept
and the rule's, check's or API's own test rejects until its logic is written, and prints
the files it wrote and edited, then the steps left by hand. It refuses (exit 2, one line,
nothing written) an id or name that exists, an unknown family and a malformed id.
"""
