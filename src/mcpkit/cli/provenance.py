"""`mcpkit pins provenance [--forget SERVER]`: the package versions the host recorded for its
`npx`/`uvx`/`pipx`/`docker` servers (`host/provenance.py`), and accepting a moved one."""

from __future__ import annotations

from typing import Annotated

import typer

from .runtime import ConfigOpt, PinsOpt, fail, host_settings

__all__ = ["pin_command", "provenance"]


def pin_command(argv: list[str], env: dict[str, str]) -> list[str]:
    """`argv` with its package pinned to the version that would run now (`npx pkg` →
    `npx pkg@X.Y.Z`); as given, with a note, when that cannot be told (offline)."""
    import asyncio

    from ..host.provenance import origin_of, pinned_args, resolve

    origin = origin_of(argv[0], argv[1:])
    if origin is None or origin.exact is not None:
        return argv
    try:
        version = asyncio.run(resolve(origin, env))
    except RuntimeError as exc:
        typer.echo(
            f"note: {exc}; written unpinned (the host records the version it first runs)", err=True
        )
        return argv
    typer.echo(f"pinned {origin.spec} to {version} (what runs today)", err=True)
    return [argv[0], *pinned_args(argv[0], argv[1:], version)]


def provenance(
    forget: Annotated[
        str | None,
        typer.Option(
            "--forget",
            metavar="SERVER",
            help="Drop SERVER's record: its next start records the version it runs then.",
        ),
    ] = None,
    config: ConfigOpt = None,
    pins: PinsOpt = None,
) -> None:
    """The package and version each packaged server ran when first approved."""
    from ..host.provenance import ProvenanceStore

    store = ProvenanceStore.beside(pins or host_settings(config).pins)
    if forget is not None:
        if not store.forget(forget):
            fail(f"no provenance is recorded for {forget!r} (see: mcpkit pins provenance)")
        typer.echo(f"forgot {forget!r}: its next start records the version it runs then")
        return
    records = store.records()
    if not records:
        typer.echo("no packaged servers recorded yet (npx, uvx, pipx and docker entries are)")
    for server, record in sorted(records.items()):
        typer.echo(
            f"{server}\t{record.get('kind')}\t{record.get('package')}\t{record.get('version')}"
        )
