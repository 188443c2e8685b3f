"""Options and helpers shared by the ``ikreport`` commands (see main.py)."""

from __future__ import annotations

import contextlib
import functools
import math
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click

from ikreport.collect.context import MAX_TITLE, long_title
from ikreport.progress import Progress
from ikreport.store.discover import SAMPLE as DEFAULT_ARCHIVE
ARCHIVE_ENV = "IKREPORT_ARCHIVE"


class ArchiveLocation(click.ParamType):
    """A folder (a Path, as click.Path checks it) or a URL such as s3://bucket/prefix (a str)."""

    name = "archive"
    folder = click.Path(file_okay=False, path_type=Path)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        """The URL as given, or the folder's Path; a usage error for ``s3:/b`` or ``s3://``."""
        from ikreport.errors import ArchiveError
        from ikreport.store.bucket import check_location, is_url

        if isinstance(value, str):
            try:
                check_location(value)
            except ArchiveError as exc:
                self.fail(str(exc), param, ctx)
        return value if is_url(value) else self.folder.convert(value, param, ctx)


ARCHIVE = ArchiveLocation()


def input_files(*options: tuple[str, str]) -> Any:
    """Options that each name a saved tool output to import, as ``(flag, help)`` pairs."""

    def decorate(f: Any) -> Any:
        for flag, text in reversed(options):
            f = click.option(flag, type=click.Path(dir_okay=False, path_type=Path), help=text)(f)
        return f

    return decorate


class FiniteFloatRange(click.FloatRange):
    """A FloatRange that refuses nan and infinity too, which compare false with every bound."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        """The number, when finite and in range; a usage error otherwise."""
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value} is not a finite number.", param, ctx)
        return number


def archive_option(unless: str | None = None) -> Any:
    """The ``--archive``/``-a`` option, also read from IKREPORT_ARCHIVE; when neither is given,
    the archive found from the working directory upward (see default_archive). ``unless``: a
    flag of the command that writes nothing, with which no archive is looked for."""

    def decorate(f: Any) -> Any:
        @functools.wraps(f)
        def command(*args: Any, archive: Path | None, **kwargs: Any) -> Any:
            if unless is not None and kwargs.get(unless):
                return f(*args, archive=archive, **kwargs)
            return f(*args, archive=default_archive(archive), **kwargs)

        return _archive_flag()(command)

    return decorate


def _archive_flag() -> Any:
    return click.option(
        "--archive", "-a", "archive", type=ARCHIVE, metavar="DIR|URL", default=None, envvar=ARCHIVE_ENV,
        show_envvar=True, help="Archive folder (records/ and blobs/), or a URL: s3://bucket/prefix, any fsspec URL "
                               "[default: the folder found from the working directory upward].",
    )


def default_archive(archive: Path | None, demo: bool = False) -> Path:
    """The archive named, else the one found from the working directory upward; only ``build``
    (``demo``) falls back to the sample archive, so no command writes into it by default."""
    from ikreport.store.discover import choose_archive

    return choose_archive(archive, Path.cwd(), Path(DEFAULT_ARCHIVE) if demo else None)


def archive_argument(demo: bool = False, resolve: bool = True) -> Any:
    """An optional positional ARCHIVE, a shorthand for ``--archive`` (which IKREPORT_ARCHIVE sets too).
    ``resolve=False`` leaves an unnamed archive None, for a command that may not need one."""

    def decorate(f: Any) -> Any:
        @functools.wraps(f)
        def command(*args: Any, archive_arg: Path | None, archive: Path | None, **kwargs: Any) -> Any:
            if archive_arg is not None:
                source = click.get_current_context().get_parameter_source("archive")
                if source is click.core.ParameterSource.COMMANDLINE and archive != archive_arg:
                    raise click.UsageError("give the archive as ARCHIVE or --archive, not both")
                archive = archive_arg  # named on the command line, it wins over IKREPORT_ARCHIVE
            return f(*args, archive=default_archive(archive, demo) if resolve else archive, **kwargs)

        command = click.argument("archive_arg", metavar="[ARCHIVE]", required=False, type=ARCHIVE)(command)
        return _archive_flag()(command)

    return decorate


def _short_title(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value is not None and (too_long := long_title(value)):
        raise click.BadParameter(f"{len(value)} characters; {too_long}")
    return value


def context_options(f: Any) -> Any:
    """The options that describe what was measured (title, GPU, engine, model, workload, limitations)."""
    for decorator in reversed([
        click.option("--title", help=f"Title of the record (at most {MAX_TITLE} characters).", callback=_short_title),
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


def make_context(context_file: Path | None, limitations: tuple[str, ...], fields: dict[str, Any],
                 stated: dict[str, str] | None = None) -> Any:
    """The Context from the flags, merged over the --context file when there is one (flags win).
    ``stated``: how an imported profile was made, as given on the command line."""
    from ikreport.collect.context import Context, load_context, merge_context

    flags = Context(limitations=limitations, stated=tuple(sorted((stated or {}).items())),
                    **{k: fields.pop(k) for k in ("title", "gpu", "engine", "model", "workload")})
    return merge_context(load_context(context_file), flags) if context_file else flags


class _TerminalProgress:
    """Progress on stderr with ``click.progressbar``: a bar per counted step, a line per named one."""

    def __init__(self, unit: str) -> None:
        self.unit = unit
        self.bar: Any = None
        self.done = 0

    def step(self, text: str) -> None:
        """Print the step that begins ("  exporting the raw page…")."""
        self.close()
        click.echo(f"  {text}…", err=True)

    def count(self, done: int, total: int) -> None:
        """Move the bar to ``done`` of ``total``; a new total starts a new bar."""
        if self.bar is None or self.bar.length != total:
            self.close()
            self.bar = click.progressbar(length=total, label=f"  {self.unit}", file=sys.stderr, show_pos=True)
            self.bar.__enter__()
        self.bar.update(done - self.done)
        self.done = done

    def close(self) -> None:
        """End the bar, if one is showing."""
        if self.bar is not None:
            self.bar.__exit__(None, None, None)
            self.bar, self.done = None, 0


@contextlib.contextmanager
def terminal_progress(unit: str = "done") -> Iterator[Progress | None]:
    """A Progress that shows on stderr when it is a terminal; None otherwise, so output that
    scripts and tests read never holds progress."""
    if not sys.stderr.isatty():
        yield None
        return
    progress = _TerminalProgress(unit)
    try:
        yield progress
    finally:
        progress.close()
