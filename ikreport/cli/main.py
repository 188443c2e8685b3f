"""The ``ikreport`` command: options in, one library call, output out.

Library errors (IkreportError) become one-line ``Error: …`` messages with exit code 1 here,
and nowhere else. Heavy libraries are imported inside commands, so ``--help`` is quick.
"""

from __future__ import annotations

import contextlib
import gc
import os
import re
import signal
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click

from ikreport import __version__
from ikreport.cli.collect import collect
from ikreport.cli.options import (ARCHIVE, FiniteFloatRange, archive_argument, archive_option, default_archive,
                                  terminal_progress)
from ikreport.errors import IkreportError
from ikreport.formatting import plural


class Cli(click.Group):
    """Turns every IkreportError raised by a command into a one-line click error."""

    def invoke(self, ctx: click.Context) -> Any:
        """Run the command in one pass (see one_pass); a library error becomes ``Error: …``, exit 1;
        Ctrl-C ``Aborted!``, exit 1, even where a library swallowed it (see noted_ctrl_c)."""
        with noted_ctrl_c() as pressed:
            try:
                with one_pass():
                    result = super().invoke(ctx)
            except IkreportError as exc:
                from ikreport.terminal import safe_text

                # messages may quote record text (a schema error shows the bad value)
                raise click.ClickException(safe_text(str(exc))) from exc
            except BaseException as exc:
                if pressed and not isinstance(exc, (Exception, KeyboardInterrupt)):  # a panic (pyo3's PanicException)
                    raise click.Abort() from exc
                raise
            if pressed:
                raise click.Abort()
            return result


@contextlib.contextmanager
def noted_ctrl_c() -> Iterator[list[bool]]:
    """Ctrl-C raises KeyboardInterrupt, as Python's own handler does, and is noted in the list
    given: jsonschema-rs, validating a record when it comes, can swallow the exception (the
    command then finished, exit 0) or turn it into a panic. Signals are only the main thread's
    to set; elsewhere nothing changes."""
    pressed: list[bool] = []

    def note(_signum: int, _frame: Any) -> None:
        pressed.append(True)
        raise KeyboardInterrupt

    if threading.current_thread() is not threading.main_thread() \
            or signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        yield pressed
        return
    signal.signal(signal.SIGINT, note)
    try:
        yield pressed
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@contextlib.contextmanager
def one_pass() -> Iterator[None]:
    """Run one command with the cyclic garbage collector paused, and restore it after.

    A command is one pass over an archive: a thousand records are millions of small dicts
    and lists, which the collector would scan again and again while they load and at every
    later full collection, for no gain: records hold no reference cycles, so reference counting
    still frees them. Worker processes do the same in their pool's initializer.
    """
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


@click.group(cls=Cli, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="ikreport")
def cli() -> None:
    """Evidence records for GPU performance claims, and a static site that cites them.

    \b
    collect  capture or import measurements as content-addressed records
    build    make the HTML + Markdown site in which every claim cites its records
    verify   re-hash an archive and check every reference
    sync     copy what one archive lacks from another (folder or bucket)
    """


@cli.command()
@click.argument("record_id", metavar="ID")
@archive_option()
@click.option("--json", "as_json", is_flag=True,
              help="Print the record's stored JSON (DEL, C1 and bidirectional control characters as \\u escapes).")
def show(record_id: str, archive: Path, as_json: bool) -> None:
    """Show one record (ID: its hash, or a unique prefix of at least 8 digits)."""
    from ikreport.commands.show import show as text
    from ikreport.store.archive import Archive

    click.echo(text(Archive.open(archive), record_id, as_json), nl=False)


@cli.command("list")
@archive_option()
def list_records(archive: Path) -> None:
    """List the records of an archive: id, kind, GPU, title."""
    from ikreport.commands.show import list_lines
    from ikreport.store.archive import Archive

    for line in list_lines(Archive.open(archive)):
        click.echo(line)


@cli.command()
@archive_argument(resolve=False)
@click.option("--site", "site", metavar="URL_OR_DIR",
              help="Check a built or published site instead: every record in its manifest.json hashes to its id.")
@click.option("--no-cache", is_flag=True,
              help="Parse and validate every record, even those validated before (every file is re-hashed anyway).")
def verify(archive: Path | None, site: str | None, no_cache: bool) -> None:
    """Re-hash every file of ARCHIVE and check every record and reference.

    One line per problem; exit status 1 if there is any.
    """
    from ikreport.store.archive import Archive
    from ikreport.terminal import safe_text
    from ikreport.commands.verify import verify as verify_archive
    from ikreport.commands.verify_site import verify_site

    # Problems name files found in the archive or site: a planted name must not break a line
    # or reach the terminal as an escape sequence.
    if site:
        checked, site_problems = verify_site(site)
        for line in site_problems:
            click.echo(safe_text(line))
        if site_problems:
            raise click.exceptions.Exit(1)
        click.echo(f"{site}: {plural(checked, 'record', 'records')} verified against manifest.json")
        return
    with terminal_progress("files checked") as progress:
        verified = verify_archive(Archive.open(default_archive(archive)), use_cache=not no_cache, progress=progress)
    for line in verified.notes:
        click.echo(f"note: {safe_text(line)}", err=True)
    for line in verified.problems:
        click.echo(safe_text(line))
    if verified.problems:
        raise click.exceptions.Exit(1)
    counts = f"{plural(verified.records, 'record', 'records')} and {plural(verified.blobs, 'blob', 'blobs')}"
    click.echo(f"{verified.root}: {counts} verified")


@cli.command()
@archive_argument(demo=True)
@click.option("-o", "--output", type=click.Path(file_okay=False, path_type=Path),
              help="Site folder to write [default: beside the archive, named after it (evidence-site); "
                   "site for sample_evidence].")
@click.option("--templates", type=click.Path(file_okay=False, exists=True, path_type=Path),
              help="Folder of templates that override the shipped ones.")
@click.option("--cache-dir", type=click.Path(file_okay=False, path_type=Path),
              help="Where the build keeps what makes rebuilds fast: record summaries, pages, charts; "
                   "deleting it loses nothing [default: $XDG_CACHE_HOME/ikreport or ~/.cache/ikreport].")
@click.option("--reports", "reports_dir", type=click.Path(file_okay=False, path_type=Path),
              help="Folder of Markdown reports [default: ARCHIVE/reports; none for an archive at a URL].")
@click.option("--strict", is_flag=True, help="Fail on warnings too (superseded citations, reports citing nothing).")
@click.option("--max-blob-mb", type=FiniteFloatRange(min=0), default=20.0, show_default=True,
              help="Leave raw blobs larger than this out of the site (their hashes stay on the pages).")
def build(archive: Path, output: Path | None, templates: Path | None, cache_dir: Path | None, reports_dir: Path | None,
          strict: bool, max_blob_mb: float) -> None:
    """Build the static HTML + Markdown site of ARCHIVE.

    ARCHIVE defaults to the archive found from the working directory upward, else (as a demo)
    sample_evidence. The site goes beside the archive unless -o says where, so a build of your
    archive never rewrites a clone's sample site/.
    """
    from ikreport.store.archive import Archive
    from ikreport.store.discover import default_site
    from ikreport.commands.build import build_site
    from ikreport.terminal import safe_text

    output = output if output is not None else default_site(archive)

    with terminal_progress("record pages rendered") as progress:
        result = build_site(Archive.open(archive), output, templates=templates, cache_dir=cache_dir,
                            reports_dir=reports_dir, strict=strict, max_blob_mb=max_blob_mb, progress=progress)
    warnings = result.findings + result.warnings
    for warning in warnings:  # findings quote report text and file names: escaped
        click.echo(f"Warning: {safe_text(warning)}", err=True)
    left_out = f", {result.blobs_left_out} large blobs left out" if result.blobs_left_out else ""
    counts = f"{plural(result.records, 'record', 'records')}, {plural(result.claims, 'claim', 'claims')}"
    click.echo(f"{output}: {plural(result.pages, 'page', 'pages')} ({counts}{left_out})")
    if warnings:
        strict_note = "; --strict makes the IK2xx ones fail ('ikreport check' lists them)" if result.findings else ""
        click.echo(f"{plural(len(warnings), 'warning', 'warnings')}{strict_note}", err=True)


@cli.command()
@click.argument("site", required=False, type=click.Path(file_okay=False, path_type=Path))
@click.option("--remote", default="origin", show_default=True, help="Git remote (name, URL or path) to push to.")
@click.option("--branch", default="gh-pages", show_default=True)
@click.option("--no-history", is_flag=True, help="Replace the branch with one commit instead of adding one.")
@click.option("--message", "-m", help="Commit message.")
@click.option("--repo", type=click.Path(file_okay=False, path_type=Path),
              help="The git repository that holds the branch [default: the one SITE is in].")
@click.option("--no-push", is_flag=True, help="Commit to the branch but do not push.")
@click.option("--force", is_flag=True,
              help="Publish even to the checked-out branch, or to one holding commits that are not site commits.")
@click.option("--cname", metavar="DOMAIN", callback=lambda ctx, param, value: _domain(value),
              help="A custom domain for GitHub Pages (docs.example.com): written as CNAME in the commit, not in SITE.")
def publish(site: Path | None, remote: str, branch: str, no_history: bool, message: str | None, repo: Path | None,
            no_push: bool, force: bool, cname: str | None) -> None:
    """Commit the built SITE to a branch and push it, for GitHub Pages.

    Uses ghp-import (as mkdocs gh-deploy does) and always adds .nojekyll (and CNAME, with
    --cname, for a custom domain). Use it to publish from your machine; use 'ikreport
    init-pages' to have GitHub build and deploy instead. Without SITE it publishes nothing and names the site of the archive found here. Refuses a
    site holding links, files its manifest.json does not list, or records and blobs that do
    not hash to their names, and (unless --force) a branch that is checked out or holds
    commits publish did not write.
    """
    from ikreport.commands.publish import choose_site, publish as run

    click.echo(run(choose_site(site, Path.cwd()), remote=remote, branch=branch, no_history=no_history, message=message, repo=repo,
                   push=not no_push, force=force, cname=cname))


def _domain(value: str | None) -> str | None:
    """A host name for --cname (letters, digits and hyphens, in dot-separated labels), lowercased."""
    if value is not None and not re.fullmatch(r"(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}", value.lower()):
        raise click.BadParameter(f"{value!r} is not a domain name (as docs.example.com)", param_hint="--cname")
    return value.lower() if value is not None else None


@cli.command("init-pages")
@click.option("--repo", default=".", type=click.Path(file_okay=False, path_type=Path), show_default=True,
              help="The repository to add the workflow to.")
@click.option("--archive", "archive_path", default="evidence", show_default=True,
              help="The archive folder, relative to the repository.")
@click.option("--install", metavar="SPEC",
              help="What the workflow pip-installs instead of this ikreport's wheel (a git URL at a commit, a path).")
@click.option("--wheel", type=click.Path(dir_okay=False, path_type=Path),
              help="The ikreport wheel to copy into the repository [default: one built from this ikreport].")
@click.option("--main", "main_branch", default="main", show_default=True, help="The branch whose pushes deploy.")
@click.option("--force", is_flag=True, help="Replace an existing workflow file.")
def init_pages(repo: Path, archive_path: str, install: str | None, wheel: Path | None, main_branch: str,
               force: bool) -> None:
    """Write .github/workflows/ikreport-pages.yml: GitHub builds the site and deploys it to Pages.

    The workflow installs the ikreport you run now: its wheel is copied into .github/ikreport/
    (commit it with the workflow), unless --install names something else to install.
    """
    from ikreport.commands.publish import init_pages as write

    if install is not None and wheel is not None:
        raise click.UsageError("give --install or --wheel, not both")
    path, placed = write(repo, archive=archive_path, install=install, main=main_branch, force=force, wheel=wheel)
    commit = f"commit it and {placed}; " if placed else ""
    click.echo(f"{path}: written; {commit}in the repository's Settings > Pages, set Source to 'GitHub Actions'")


def _not_nan(ctx: click.Context, param: click.Parameter, value: float) -> float:
    """FloatRange lets nan through (every comparison with it is false): refuse it the same way."""
    if value != value:
        raise click.BadParameter("nan is not in the range 0<x<100.", ctx, param)
    return value


@cli.command()
@click.argument("a", metavar="A")
@click.argument("b", metavar="B")
@archive_option()
# click checks the ranges, so nan, inf or 10**20 is a usage error naming the option, never a schema error
@click.option("--threshold", "threshold_pct", type=click.FloatRange(0, 100, min_open=True, max_open=True),
              default=5.0, show_default=True, callback=_not_nan,
              help="Smallest change (%) of the B/A ratio called FASTER or SLOWER, 0 < T < 100; SAME needs the "
                   "interval within it.")
@click.option("--min-samples", type=click.IntRange(2, 10000), default=3, show_default=True,
              help="Runs (or, with one run a side, launches) needed on each side before any verdict but UNDECIDED "
                   "(2 at least: one value a side has no interval).")
@click.option("--no-record", is_flag=True,
              help="Print the comparison without writing a comparison record (the archive is left as it is).")
def compare(a: str, b: str, archive: Path, threshold_pct: float, min_samples: int, no_record: bool) -> None:
    """Compare ncu-profile records, A (before) and B (after), kernel by kernel.

    A and B are each one record, or several runs as comma-separated ids or prefixes
    (A1,A2,A3); with several runs a side the run is the unit of the interval. Prints how
    each side was made, then a Markdown table with each kernel's B/A ratio of medians, its
    95% interval and a FASTER / SLOWER / SAME / UNDECIDED verdict, and writes a comparison
    record citing every run (its id is the last line; --no-record writes none). When the
    sides were not made alike, it says which flags or --context keys would make them so.

    Two serving-benchmark records (one a side) are compared by time to first token and time per
    output token, the requests of each run as the unit; a run that kept no per-request latencies
    leaves the verdict UNDECIDED, and records of two kinds are refused.
    """
    from ikreport.store.archive import Archive
    from ikreport.commands.compare import compare as run
    from ikreport.terminal import safe_text

    sides = [[i.strip() for i in side.split(",")] for side in (a, b)]
    if any(not i for side in sides for i in side):
        raise click.UsageError("A and B are record ids or prefixes separated by commas, with none empty")
    table, record_id = run(Archive.open(archive), sides[0], sides[1], threshold_pct, min_samples, not no_record)
    for line in table.split("\n"):  # kernel names and titles are record text
        click.echo(safe_text(line))
    if record_id is None:
        click.echo("no comparison record written (--no-record)", err=True)
    else:
        click.echo(record_id)


@cli.command()
@click.argument("old", metavar="OLD")
@click.option("--by", "new", required=True, metavar="NEW", help="The record that replaces OLD.")
@click.option("--reason", required=True, help="Why OLD is replaced.")
@archive_option()
def supersede(old: str, new: str, reason: str, archive: Path) -> None:
    """Record that NEW corrects and replaces OLD. OLD keeps its page, with a banner to NEW."""
    from ikreport.store.archive import Archive
    from ikreport.commands.supersede import supersede as write

    click.echo(write(Archive.open(archive), old, new, reason))


@cli.command("check")
@archive_argument()
@click.option("--reports", "reports_dir", type=click.Path(file_okay=False, path_type=Path),
              help="Folder of Markdown reports [default: ARCHIVE/reports; none for an archive at a URL].")
@click.option("--strict", is_flag=True, help="Warnings fail too.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per finding, one per line.")
def check_command(archive: Path, reports_dir: Path | None, strict: bool, as_json: bool) -> None:
    """Run the build's checks without writing a site: one line per finding, with its rule id.

    Exit status 0 when nothing fails, 1 when an error (IK1xx) or, with --strict, a warning (IK2xx) is found.
    """
    import json

    from ikreport.store.archive import Archive
    from ikreport.commands.check import check

    from ikreport.terminal import safe_json, safe_text

    checked = check(Archive.open(archive), reports_dir)
    for finding in checked.findings:  # file names and messages quote report text: escaped
        click.echo(safe_json(json.dumps(finding.as_dict(), sort_keys=True)) if as_json else safe_text(str(finding)))
    if checked.failures(strict):
        raise click.exceptions.Exit(1)


@cli.command()
@click.argument("src", type=ARCHIVE, metavar="SRC")
@click.argument("dst", type=ARCHIVE, metavar="DST")
@click.option("--check", is_flag=True, help="Re-hash what DST in object storage already holds, not only compare "
              "sizes (a folder is always re-hashed).")
def sync(src: Any, dst: Any, check: bool) -> None:
    """Copy into DST every record and blob it lacks from SRC (folders or URLs, either way).

    Each object is re-hashed as it is read, and a damaged one is not copied; nothing in DST is
    deleted or replaced. Prints each copied object's name in DST; exit 1 if any could not be.
    """
    from ikreport.commands.sync import open_pair, sync as run
    from ikreport.terminal import safe_text

    source, target = open_pair(src, dst)
    with terminal_progress("objects copied") as progress:
        synced = run(source, target, check=check, progress=progress)
    for name in synced.copied:
        click.echo(name)
    for line in synced.problems:
        click.echo(safe_text(line), err=True)
    how = "" if synced.rehashed or not synced.present else " (sizes compared; --check re-hashes them)"
    click.echo(f"{target.location}: {plural(len(synced.copied), 'object', 'objects')} copied, "
               f"{synced.present} already there{how}")
    if synced.problems:
        raise click.exceptions.Exit(1)


cli.add_command(collect)


def main() -> None:
    """The ``ikreport`` console script."""
    # pyarrow's allocator (mimalloc) keeps freed memory for later reuse; each ikreport command
    # is one pass, so memory is better returned at once (peak of a 61 MB import: 191 -> 172 MB).
    # Set before pyarrow is first imported; a value the user set wins.
    os.environ.setdefault("MIMALLOC_PURGE_DELAY", "0")
    cli(prog_name="ikreport")
