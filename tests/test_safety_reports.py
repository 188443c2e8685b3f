"""Issue 12, items 1 and 5: reports are hostile input. Reading ARCHIVE/reports never follows a
link or opens anything but a bounded regular file, and front matter cannot hang or exhaust
memory (anchors, aliases, depth and size are limited before anything is built)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT
from ikreport.store.archive import Archive
from ikreport.claims.model import RecordSet
from ikreport.errors import ReportFileError
from ikreport.reports import source
from ikreport.reports.front_matter import MAX_DEPTH, MAX_FRONT_MATTER_BYTES
from ikreport.reports.render import render_report
from ikreport.reports.resolver import RecordResolver
from ikreport.reports.source import MAX_REPORT_BYTES, read_reports
from ikreport.commands.verify import verify_archive

SECRET = "ikreport-test-secret-7f3a"
LINK = "symbolic link in the reports folder; reports are read only from plain files, so remove it"
NOT_REGULAR = "not a regular file (a FIFO, socket or device) in the reports folder; remove it"
# Promptly: the hang this guards against never ends; a second of work is far inside this.
PROMPT_S = 60


@pytest.fixture
def archive(tmp_path: Path) -> Path:
    """A copy of the sample archive with its one report."""
    dest = tmp_path / "arch"
    shutil.copytree(ROOT / "sample_evidence", dest)
    return dest


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    """A file outside the archive that must never reach a site or an error message."""
    path = tmp_path / "outside" / "key.md"
    path.parent.mkdir()
    path.write_text(f"---\ntitle: {SECRET}\n---\n{SECRET}\n")
    return path


def build(run, archive: Path, tmp_path: Path, *more: object):
    return run("build", archive, "-o", tmp_path / "site", "--cache-dir", tmp_path / "cache", *more)


def refused(result, message: str) -> None:
    assert result.exit_code == 1, result.output
    assert result.stderr == f"Error: {message}\n"
    assert SECRET not in result.output


def ik(*args: object) -> subprocess.CompletedProcess[str]:
    """The CLI in its own process, so a hang fails the test instead of stopping the suite."""
    return subprocess.run([sys.executable, "-m", "ikreport", *map(str, args)], capture_output=True, text=True,
                          timeout=PROMPT_S, env={**os.environ, "PYTHONPATH": str(ROOT)}, check=False)


# -- item 1: nothing outside the archive is read into a site ---------------------------------

def test_a_report_that_is_a_symlink_is_refused_by_build_and_check(archive, secret, tmp_path, run):
    link = archive / "reports" / "leak.md"
    link.symlink_to(secret)
    refused(build(run, archive, tmp_path), f"{link}: {LINK}")
    assert not (tmp_path / "site").exists()
    refused(run("check", archive), f"{link}: {LINK}")


def test_a_symlinked_sub_folder_is_refused(archive, secret, tmp_path, run):
    link = archive / "reports" / "more"
    link.symlink_to(secret.parent, target_is_directory=True)
    refused(build(run, archive, tmp_path), f"{link}: {LINK}")
    refused(run("check", archive), f"{link}: {LINK}")


def test_a_linked_archive_reports_folder_is_refused_but_a_linked_reports_option_is_followed(archive, tmp_path, run):
    real = tmp_path / "elsewhere"
    (archive / "reports").rename(real)
    (archive / "reports").symlink_to(real, target_is_directory=True)
    message = (f"{archive / 'reports'}: the reports folder is a symbolic link; make it a plain folder "
               "or pass the folder you mean with --reports")
    refused(build(run, archive, tmp_path), message)
    refused(run("check", archive), message)
    # Given by the user, the folder may be a link; what is in it follows the same rules.
    assert build(run, archive, tmp_path, "--reports", archive / "reports").exit_code == 0
    assert (tmp_path / "site" / "r" / "what-the-sample-shows.html").is_file()
    (real / "leak.md").symlink_to(real / "what-the-sample-shows.md")
    refused(run("check", archive, "--reports", archive / "reports"), f"{archive / 'reports' / 'leak.md'}: {LINK}")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_report_is_refused_promptly(archive, tmp_path):
    fifo = archive / "reports" / "pipe.md"
    os.mkfifo(fifo)
    for args in (("check", archive), ("build", archive, "-o", tmp_path / "site", "--cache-dir", tmp_path / "c")):
        done = ik(*args)  # before: blocked for ever in open(), waiting for a writer
        assert (done.returncode, done.stderr) == (1, f"Error: {fifo}: {NOT_REGULAR}\n")


def test_a_report_over_the_size_limit_is_refused(archive, tmp_path, run):
    big = archive / "reports" / "big.md"
    big.write_text("x" * (MAX_REPORT_BYTES + 1))
    size = f"{MAX_REPORT_BYTES + 1:,}"
    refused(build(run, archive, tmp_path),
            f"{big}: report is {size} bytes, over the limit of {MAX_REPORT_BYTES:,}; split it into several reports")


def test_a_reports_file_or_a_report_not_in_utf8_is_one_line(archive, tmp_path, run):
    report = archive / "reports" / "latin1.md"
    report.write_bytes("caf\xe9\n".encode("latin-1"))
    refused(run("check", archive), f"{report}: cannot read the report (not UTF-8: invalid continuation byte "
                                   "at byte 3); save it as UTF-8")
    shutil.rmtree(archive / "reports")
    (archive / "reports").write_text("not a folder")
    refused(build(run, archive, tmp_path), f"{archive / 'reports'}: not a folder; reports go in a folder of *.md files")


def test_a_link_or_fifo_swapped_in_after_the_listing_is_still_refused(archive, secret, monkeypatch):
    # The listing is checked with lstat; the open checks again (O_NOFOLLOW, O_NONBLOCK, fstat).
    monkeypatch.setattr(source, "_problem_at", lambda dir_fd, path: None)
    folder = archive / "reports"
    (folder / "leak.md").symlink_to(secret)
    with pytest.raises(ReportFileError, match=LINK):
        read_reports(folder)
    (folder / "leak.md").unlink()
    if hasattr(os, "mkfifo"):
        os.mkfifo(folder / "pipe.md")
        with pytest.raises(ReportFileError, match="not a regular file"):
            read_reports(folder)


def test_verify_lists_links_and_fifos_in_reports(archive, secret, tmp_path):
    folder = archive / "reports"
    (folder / "leak.md").symlink_to(secret)
    (folder / "more").symlink_to(secret.parent, target_is_directory=True)
    expected = [f"{folder / 'leak.md'}: {LINK}", f"{folder / 'more'}: {LINK}"]
    if hasattr(os, "mkfifo"):
        os.mkfifo(folder / "pipe.md")
        expected.append(f"{folder / 'pipe.md'}: {NOT_REGULAR}")
    assert verify_archive(Archive(archive)) == expected
    shutil.rmtree(folder)
    (archive / "reports").symlink_to(tmp_path, target_is_directory=True)
    [problem] = verify_archive(Archive(archive))
    assert problem.startswith(f"{archive / 'reports'}: the reports folder is a symbolic link")


# -- item 5: front matter cannot hang or exhaust memory ---------------------------------------

def billion_laughs() -> str:
    """The classic: nine levels of nine aliases, 9**9 strings once expanded."""
    lines = ['a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for prev, name in zip("abcdefgh", "bcdefghi"):
        lines.append(f"{name}: &{name} [" + ", ".join([f"*{prev}"] * 9) + "]")
    lines.append("title: *i")
    return "---\n" + "\n".join(lines) + "\n---\n\nText.\n"


def test_a_billion_laughs_front_matter_is_refused_at_its_first_anchor_by_check_and_build(archive, tmp_path):
    """Refused on the event stream, at line 2's anchor, before YAML builds anything: a bomb that
    reached safe_load would be refused later, if ever, for its title. ik's timeout fails a hang;
    the refusal's speed is for a benchmark to measure, not a test."""
    bomb = archive / "reports" / "bomb.md"
    bomb.write_text(billion_laughs())
    done = ik("check", archive)  # before: never returned, memory growing without bound
    assert (done.returncode, done.stdout) == (
        1, f"{bomb}:2: IK107 front matter uses a YAML anchor (&a); write the value out instead\n")
    done = ik("build", archive, "-o", tmp_path / "site", "--cache-dir", tmp_path / "c")
    assert (done.returncode, done.stderr) == (
        1, f"Error: {bomb}:2: IK107 front matter uses a YAML anchor (&a); write the value out instead\n")


def nested(depth: int) -> str:
    return "x: " + "[" * (depth - 1) + "1" + "]" * (depth - 1)


@pytest.mark.parametrize("front,line,message", [
    ("title: T\nrecords: *r", 3, "front matter uses a YAML alias (*r); write the value out instead"),
    ("title: T\nsummary: &s S", 3, "front matter uses a YAML anchor (&s); write the value out instead"),
    (nested(MAX_DEPTH + 1), 2, f"front matter is nested more than {MAX_DEPTH} levels deep; flatten it"),
    (nested(10_000), 2, f"front matter is nested more than {MAX_DEPTH} levels deep; flatten it"),
    ("summary: " + "s" * MAX_FRONT_MATTER_BYTES, 2,
     (f"front matter is {MAX_FRONT_MATTER_BYTES + 9:,} bytes, over the limit of {MAX_FRONT_MATTER_BYTES:,}; "
      "keep it to title, summary and records")),
])
def test_front_matter_limits_are_ik107_findings(front, line, message):
    report = render_report(Path("r.md"), f"---\n{front}\n---\nText.\n", RecordResolver(RecordSet.of({}), "../"))
    assert [(f.code, f.line, f.message) for f in report.findings] == [("IK107", line, message)]


def test_front_matter_within_the_limits_still_works():
    front = nested(MAX_DEPTH) + "\ntitle: Fine\nsummary: Also fine"
    report = render_report(Path("r.md"), f"---\n{front}\n---\nText.\n", RecordResolver(RecordSet.of({}), "../"))
    assert report.title == "Fine" and [f.code for f in report.findings] == ["IK202"]


# Found by the review of the merged safety work: values past Python's limit on int() and
# front matter of the wrong type reached the page (or a traceback) instead of IK107/IK106.
@pytest.mark.parametrize("front, message", [
    ("title: " + "1" * 5000, "front matter is not valid YAML"),
    ("title: 0x" + "f" * 5000, "front matter 'title' must be text; quote it"),
    ("title: [1, 2]", "front matter 'title' must be text; quote it"),
    ("summary: {a: 1}", "front matter 'summary' must be text; quote it"),
    ("records: 5", "front matter 'records' must be a list of record ids (quoted)"),
])
def test_front_matter_of_the_wrong_type_is_ik107_not_a_traceback(front, message):
    report = render_report(Path("r.md"), f"---\n{front}\n---\nText.\n", RecordResolver(RecordSet.of({}), "../"))
    assert [f.code for f in report.findings] == ["IK107"]
    assert report.findings[0].message.startswith(message)


def test_numbers_in_front_matter_are_taken_as_their_digits():
    report = render_report(Path("r.md"), "---\ntitle: 2024\nsummary: 1.5\n---\nText.\n",
                           RecordResolver(RecordSet.of({}), "../"))
    assert (report.title, report.summary) == ("2024", "1.5")


def test_a_citation_path_with_a_huge_index_is_ik106(archive, tmp_path, run):
    rid = Archive.open(archive).record_ids()[0]
    (archive / "reports" / "huge.md").write_text(
        f"---\ntitle: t\nsummary: s\n---\nv [ev:{rid[:8]} data.launches.{'1' * 5000}.x]\n")
    result = run("check", archive)
    assert result.exit_code == 1
    assert "huge.md:5: IK106" in result.output and "Traceback" not in result.output
