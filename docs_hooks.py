"""MkDocs hook: the CLI reference page is generated from the `mcpkit` command at build time."""

from __future__ import annotations

from typing import Any


def on_files(files: Any, config: Any) -> Any:
    from mkdocs.structure.files import File

    from mcpkit.cli.reference import markdown

    files.append(File.generated(config, "cli.md", content=markdown()))
    return files
