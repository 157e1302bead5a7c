"""Developer sessions: tests, lint, generate, generate_check, docs, bench (and bench_instructions, bench_jobs, bench_ray)."""

from __future__ import annotations

import nox

nox.options.default_venv_backend = "venv"
nox.options.sessions = ["tests", "lint", "generate_check"]


@nox.session
def tests(session: nox.Session) -> None:
    """The test suite (the same command README and .ci/run use)."""
    session.install("-e", ".[test]")
    session.run("pytest", "-n", "auto", *session.posargs)


@nox.session
def lint(session: nox.Session) -> None:
    """ruff (lint + format check), mypy --strict, and the import-layer contracts (.importlinter)."""
    session.install("-e", ".[dev]")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")
    session.run("mypy")
    session.run("lint-imports")


@nox.session
def generate(session: nox.Session) -> None:
    """Rewrite generated/ from schemas/ (datamodel-code-generator, pinned)."""
    session.install("-e", ".[dev]")
    session.run("python", "-m", "conformance.schema.codegen")


@nox.session
def generate_check(session: nox.Session) -> None:
    """Fail when generated/ differs from a fresh generation."""
    session.install("-e", ".[dev]")
    session.run("python", "-m", "conformance.schema.codegen", "--check")


@nox.session
def docs(session: nox.Session) -> None:
    """The docs site (mkdocs-material) in site/; --strict fails on a broken internal link. The
    rule and check reference pages are generated from the registries while it builds."""
    session.install("-e", ".[docs]")
    session.env["NO_MKDOCS_2_WARNING"] = "1"
    session.run("mkdocs", "build", "--strict", *session.posargs)


@nox.session
def bench(session: nox.Session) -> None:
    """Throughput of `turnspec validate` as a ratio of the orjson parse floor, one process."""
    session.install("-e", ".[test]")
    session.run("python", "-m", "conformance.benchmarks.validate", *session.posargs)
    session.run("python", "-m", "conformance.benchmarks.commands")  # schema diff, whole processes


@nox.session
def bench_instructions(session: nox.Session) -> None:
    """The ratios of `bench` counted in instructions (valgrind), for a machine too busy for the clock."""
    session.install("-e", "./generated", "-e", ".[test]")
    session.run("python", "-m", "conformance.benchmarks.instructions", *session.posargs)


@nox.session
def bench_jobs(session: nox.Session) -> None:
    """`validate --jobs N` throughput and its scaling over `--jobs 1` (same corpus, same run)."""
    session.install("-e", ".[test]")
    session.run("python", "-m", "conformance.benchmarks.parallel", *session.posargs)


@nox.session
def bench_ray(session: nox.Session) -> None:
    """`validate --engine ray` throughput on a local Ray instance, next to `--jobs`."""
    session.install("-e", ".[test]")
    session.run("python", "-m", "conformance.benchmarks.parallel", "--ray", *session.posargs)


@nox.session
def bridges_table(session: nox.Session) -> None:
    """docs/bridges.md: each bridge's result per check (pydantic-ai, LangChain, the AI SDK), every failure classified."""
    session.install("-e", ".[pydantic-ai,langchain-bridges]")
    session.run("turnspec", "ai-sdk", "install")  # the AI SDK bridge's Node packages (npm ci from its lock)
    session.run("python", "-m", "conformance.bridges.table", "docs/bridges.md", *session.posargs)
