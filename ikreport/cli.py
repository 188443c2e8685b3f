"""The ``ikreport`` command: options in, one library call, output out.

Library errors (IkreportError) become one-line ``Error: …`` messages with exit code 1 here,
and nowhere else. Heavy libraries are imported inside commands, so ``--help`` is quick.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import click

from ikreport import __version__
from ikreport.errors import IkreportError

DEFAULT_ARCHIVE = "sample_evidence"
ARCHIVE_ENV = "IKREPORT_ARCHIVE"


class Cli(click.Group):
    """Turns every IkreportError raised by a command into a one-line click error."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except IkreportError as exc:
            raise click.ClickException(str(exc)) from exc


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
        click.option("--gpu", help="GPU model, e.g. 'NVIDIA H200' (default: the name in the export, if any)."),
        click.option("--engine", help="Inference engine and version, e.g. 'vLLM 0.6.3'."),
        click.option("--model", help="Model, e.g. 'Llama-3.1-8B-Instruct bf16'."),
        click.option("--workload", help="Workload, e.g. 'decode, batch 32, 4k context'."),
        click.option("--limitation", "limitations", multiple=True, metavar="TEXT",
                     help="What this evidence does not show (repeatable); added to the automatic ones."),
    ]):
        f = decorator(f)
    return f


@click.group(cls=Cli, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="ikreport")
def cli() -> None:
    """Evidence records for GPU performance claims, and a static site that cites them.

    \b
    collect  capture or import measurements as content-addressed records
    build    make the HTML + Markdown site in which every claim cites its records
    verify   re-hash an archive and check every reference
    """


@cli.group()
def collect() -> None:
    """Capture measurements as evidence records in an archive."""


@collect.command("ncu")
@click.argument("files", nargs=-1, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--from-csv", "from_csv", is_flag=True, required=True,
              help="Import FILES: one raw and/or one details CSV export (page detected from the header).")
@archive_option(required=True)
@context_options
def collect_ncu(files: tuple[Path, ...], from_csv: bool, archive: Path, limitations: tuple[str, ...], **context: Any) -> None:
    """Import Nsight Compute CSV exports as an ncu-profile record.

    \b
    ikreport collect ncu --from-csv raw.csv [details.csv] --archive evidence
    Prints the new record's id as the last line.
    """
    from ikreport.archive import Archive
    from ikreport.collect.context import Context
    from ikreport.collect.ncu_import import import_csv

    if not files:
        raise click.UsageError("give one or two CSV files after --from-csv")
    record_id = import_csv(Archive.create(archive), list(files), Context(limitations=limitations, **context))
    click.echo(record_id)


@cli.command()
@click.argument("record_id", metavar="ID")
@archive_option()
@click.option("--json", "as_json", is_flag=True, help="Print the record's exact stored bytes.")
def show(record_id: str, archive: Path, as_json: bool) -> None:
    """Show one record (ID: its hash, or a unique prefix of at least 8 digits)."""
    from ikreport.archive import Archive
    from ikreport.describe import describe

    store = Archive.open(archive)
    full = store.resolve(record_id)
    if as_json:
        click.echo(store.record_bytes(full).decode("utf-8"), nl=False)
        return
    click.echo("\n".join(describe(full, store.load(full))))


@cli.command("list")
@archive_option()
def list_records(archive: Path) -> None:
    """List the records of an archive: id, kind, GPU, title."""
    from ikreport.archive import Archive
    from ikreport.describe import summary_line

    store = Archive.open(archive)
    for record_id in store.record_ids():
        click.echo(summary_line(record_id, store.load(record_id)))


@cli.command()
@click.argument("archive", required=False, type=click.Path(file_okay=False, path_type=Path))
def verify(archive: Path | None) -> None:
    """Re-hash every file of ARCHIVE and check every record and reference.

    One line per problem; exit status 1 if there is any.
    """
    from ikreport.archive import Archive
    from ikreport.verify import verify_archive

    store = Archive.open(archive or Path(os.environ.get(ARCHIVE_ENV, DEFAULT_ARCHIVE)))
    problems = verify_archive(store)
    for line in problems:
        click.echo(line)
    if problems:
        raise click.exceptions.Exit(1)
    click.echo(f"{store.root}: {len(store.record_ids())} records and {len(store.blob_ids())} blobs verified")


@cli.command()
@click.argument("archive", required=False, default=DEFAULT_ARCHIVE, type=click.Path(file_okay=False, path_type=Path))
@click.option("-o", "--output", default="site", show_default=True, type=click.Path(file_okay=False, path_type=Path),
              help="Site folder to write (replaced as a whole when the build succeeds).")
@click.option("--templates", type=click.Path(file_okay=False, exists=True, path_type=Path),
              help="Folder of templates that override the shipped ones.")
@click.option("--cache-dir", type=click.Path(file_okay=False, path_type=Path),
              help="Where rendered charts are cached [default: ARCHIVE/../.ikreport-cache].")
def build(archive: Path, output: Path, templates: Path | None, cache_dir: Path | None) -> None:
    """Build the static HTML + Markdown site of ARCHIVE [default: sample_evidence]."""
    from ikreport.archive import Archive
    from ikreport.site.build import build_site

    result = build_site(Archive.open(archive), output, templates=templates, cache_dir=cache_dir)
    click.echo(f"{output}: {result.pages} pages ({result.records} records, {result.claims} claims)")


def main() -> None:
    cli(prog_name="ikreport")
