"""mkdocs hooks: the rule and check reference pages are generated from the registries
(`conformance.cli.docsgen`) while the site builds, and pages other work adds to docs/ later
(a guide listed in OPTIONAL_PAGES) join the nav only when their file exists, so
`mkdocs build --strict` never fails on a page that is not there yet."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files

from conformance.cli import docsgen

# title -> file under docs/: added to the "Guides" section when present
OPTIONAL_PAGES = {"A new wire API": "new-wire-api.md", "Bridges": "bridges.md"}


def on_config(config: MkDocsConfig, **_: Any) -> MkDocsConfig:
    docs = Path(config.docs_dir)
    nav: list[Any] = config.nav or []
    for section in nav:
        if isinstance(section, dict) and "Guides" in section:
            have = {next(iter(p.values())) for p in section["Guides"] if isinstance(p, dict)}
            for title, name in OPTIONAL_PAGES.items():
                if (docs / name).is_file() and name not in have:
                    section["Guides"].append({title: name})
    return config


def on_files(files: Files, config: MkDocsConfig, **_: Any) -> Files:
    for rel, body in docsgen.pages().items():
        files.append(File.generated(config, rel, content=body))
    return files
