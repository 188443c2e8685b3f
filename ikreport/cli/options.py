"""Options and helpers shared by the ``ikreport`` commands (see main.py)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

DEFAULT_ARCHIVE = "sample_evidence"
ARCHIVE_ENV = "IKREPORT_ARCHIVE"


def archive_option(required: bool = False) -> Any:
    # click enforces required=True only when no default is passed at all (not even None)
    extra: dict[str, Any] = {"required": True} if required else {"default": DEFAULT_ARCHIVE, "show_default": True}
    return click.option(
        "--archive", "-a", "archive", type=click.Path(file_okay=False, path_type=Path),
        envvar=ARCHIVE_ENV, show_envvar=True, help="Archive folder (records/ and blobs/).", **extra,
    )


def context_options(f: Any) -> Any:
    for decorator in reversed([
        click.option("--title", help="Title of the record."),
        click.option("--gpu", help="GPU model, e.g. 'NVIDIA H200' (default: the name the tool reports, if any)."),
        click.option("--engine", help="Inference engine and version, e.g. 'vLLM 0.6.3'."),
        click.option("--model", help="Model, e.g. 'Llama-3.1-8B-Instruct bf16'."),
        click.option("--workload", help="Workload, e.g. 'decode, batch 32, 4k context'."),
        click.option("--limitation", "limitations", multiple=True, metavar="TEXT",
                     help="What this evidence does not show (repeatable); added to the automatic ones."),
        click.option("--context", "context_file", type=click.Path(dir_okay=False, path_type=Path),
                     help="TOML file with title, gpu, engine, model, workload, limitations = [...]; flags win."),
    ]):
        f = decorator(f)
    return f


def make_context(context_file: Path | None, limitations: tuple[str, ...], fields: dict[str, Any]) -> Any:
    from ikreport.collect.context import Context, load_context, merge_context

    flags = Context(limitations=limitations, **{k: fields.pop(k) for k in ("title", "gpu", "engine", "model", "workload")})
    return merge_context(load_context(context_file), flags) if context_file else flags


def progress_reporter(unit: str = "done") -> Any:
    """A callback that prints progress on stderr when it is a terminal; None otherwise.
    Called with (done, total) it updates one line ("  120/1000 record pages"); with a
    message, it prints the step ("  exporting the raw page…")."""
    if not sys.stderr.isatty():
        return None

    def report(*args: Any) -> None:
        if len(args) == 2:
            click.echo(f"\r  {args[0]}/{args[1]} {unit}", err=True, nl=args[0] >= args[1])
        else:
            click.echo(f"  {args[0]}…", err=True)

    return report
