"""The command line: exact messages and exit codes (click's CliRunner)."""

from __future__ import annotations

import hashlib
import os

import pytest

from conftest import NCU, ROOT
from ikreport.cli.main import cli

K3 = str(NCU / "ncu_details_llmperfopt_k0003_cmdline_plus_sections.csv")
ERROR_ONLY = str(NCU / "other_llmperfopt_raw_error_only.csv")


@pytest.fixture
def archive(tmp_path, run):
    arch = tmp_path / "arch"
    result = run("collect", "ncu", "--from-csv", K3, "--archive", arch, "--gpu", "RTX 5090", "--title", "GEMM")
    assert result.exit_code == 0
    return arch, result.stdout.strip().splitlines()[-1]


def test_collect_prints_the_id_of_a_file_that_hashes_to_it(archive):
    arch, rid = archive
    path = arch / "records" / rid[:2] / f"{rid[2:]}.json"
    assert hashlib.sha256(path.read_bytes()).hexdigest() == rid


def test_collect_is_idempotent(archive, run):
    arch, rid = archive
    again = run("collect", "ncu", "--from-csv", K3, "--archive", arch, "--gpu", "RTX 5090", "--title", "GEMM")
    assert again.stdout.strip() == rid


def test_collect_bad_export_is_one_line_and_writes_nothing(tmp_path, run):
    arch = tmp_path / "arch"
    result = run("collect", "ncu", "--from-csv", ERROR_ONLY, "--archive", arch)
    assert result.exit_code == 1
    assert result.stderr == (f"Error: {ERROR_ONLY}: no CSV in this file; ncu said: "
                             "==ERROR== Option '--section .*SpeedOfLight.*' did not match any section.\n")
    assert [p for p in arch.rglob("*") if p.is_file()] == []


def test_collect_missing_file(tmp_path, run):
    result = run("collect", "ncu", "--from-csv", tmp_path / "nope.csv", "--archive", tmp_path / "a")
    assert result.exit_code == 1
    assert result.stderr == f"Error: {tmp_path / 'nope.csv'}: no such file\n"


def test_collect_needs_files_and_an_archive(tmp_path, run, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert run("collect", "ncu", "--from-csv", "--archive", tmp_path / "a").exit_code == 2
    result = run("collect", "ncu", "--from-csv", K3)  # from a folder with no archive in or above it
    assert result.exit_code == 1 and "no archive named, and none found here or above" in result.stderr


def test_show_by_prefix_and_json_bytes(archive, run):
    arch, rid = archive
    result = run("show", rid[:8], "--archive", arch)
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[0] == "GEMM"
    assert lines[1] == f"  id:        {rid}"
    assert "  gpu:       RTX 5090" in lines
    assert "  profile:   1 launch of 1 kernel, 23.4 µs profiled GPU time" in lines
    assert "  limitations:" in lines
    raw = run("show", rid, "--archive", arch, "--json")
    assert raw.stdout_bytes == (arch / "records" / rid[:2] / f"{rid[2:]}.json").read_bytes()


def test_show_unknown_and_malformed_ids(archive, run):
    arch, rid = archive
    other = "0" * 8 if not rid.startswith("00000000") else "f" * 8
    result = run("show", other, "--archive", arch)
    assert result.exit_code == 1
    assert result.stderr == f"Error: {arch}: no record starts with {other}; check the id, or the --archive folder\n"
    result = run("show", "xyz", "--archive", arch)
    assert result.stderr == "Error: 'xyz' is not a record id or prefix (8 to 64 hex digits)\n"


def test_show_missing_archive(tmp_path, run):
    result = run("show", "abcdef01", "--archive", tmp_path / "none")
    assert result.exit_code == 1
    assert result.stderr == f"Error: {tmp_path / 'none'}: no such archive folder; collect into it first (--archive DIR)\n"


def test_list(archive, run):
    arch, rid = archive
    result = run("list", "--archive", arch)
    assert result.stdout == f"{rid[:12]}  ncu-profile  RTX 5090  GEMM\n"  # columns as wide as their cells


def test_verify_ok_then_tampered(archive, run):
    arch, rid = archive
    ok = run("verify", arch)
    assert ok.exit_code == 0 and ok.stdout == f"{arch}: 1 record and 1 blob verified\n"
    path = arch / "records" / rid[:2] / f"{rid[2:]}.json"
    os.chmod(path, 0o644)
    path.write_bytes(path.read_bytes()[:-10])  # truncated
    os.chmod(path, 0o444)
    bad = run("verify", arch)
    assert bad.exit_code == 1
    assert bad.stdout == (f"{path}: the bytes do not hash to the file's name (truncated or tampered); "
                          "restore it from a good copy of the archive\n")


def test_show_refuses_a_tampered_record(archive, run):
    arch, rid = archive
    path = arch / "records" / rid[:2] / f"{rid[2:]}.json"
    os.chmod(path, 0o644)
    path.write_bytes(path.read_bytes().replace(b"RTX 5090", b"RTX 4090"))
    result = run("show", rid[:8], "--archive", arch)
    assert result.exit_code == 1 and "truncated or tampered" in result.stderr
    assert result.stderr.count("\n") == 1


def test_build_refuses_to_replace_a_folder_that_is_not_a_site(archive, run, tmp_path):
    arch, _ = archive
    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "thesis.tex").write_text("keep me")
    result = run("build", arch, "-o", precious, "--cache-dir", tmp_path / "cache")
    assert result.exit_code == 1
    assert result.stderr == f"Error: {precious}: exists and is not an ikreport site (no manifest.json); choose another output folder (-o)\n"
    assert (precious / "thesis.tex").read_text() == "keep me"


def test_build_missing_archive(tmp_path, run):
    result = run("build", tmp_path / "none", "-o", tmp_path / "site")
    assert result.exit_code == 1 and "no such archive folder" in result.stderr


def test_help_and_version(run):
    result = run("--help")
    assert result.exit_code == 0
    for command in ("collect", "build", "verify", "show", "list"):
        assert f"  {command}" in result.stdout
    assert run("--version").stdout.startswith("ikreport, version ")


def _commands(group, prefix=""):
    for name, command in sorted(group.commands.items()):
        if hasattr(command, "commands"):
            yield from _commands(command, f"{prefix}{name} ")
        else:
            yield f"{prefix}{name}"


def test_every_command_is_in_the_command_reference():
    reference = (ROOT / "docs" / "cli.md").read_text("utf-8")
    missing = [c for c in _commands(cli) if f"ikreport {c}" not in reference]
    assert missing == []


def test_the_readme_is_a_front_page_whose_links_all_lead_somewhere():
    """At most 200 lines; every relative link of the README and of docs/ names a file that is there."""
    import re

    readme = ROOT / "README.md"
    assert len(readme.read_text("utf-8").splitlines()) <= 200
    broken = []
    for page in [readme, *sorted((ROOT / "docs").glob("*.md"))]:
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", page.read_text("utf-8")):
            if "://" not in target and not (page.parent / target).exists():
                broken.append(f"{page.name}: {target}")
    assert broken == []


def test_progress_shows_on_a_terminal_and_stays_quiet_otherwise(monkeypatch, capsys):
    import io
    import sys

    from ikreport.cli.options import terminal_progress

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.setattr(sys, "stderr", io.StringIO())
    with terminal_progress("pages") as progress:
        assert progress is None
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    with terminal_progress("record pages rendered") as progress:
        progress.count(1, 2)
        progress.count(2, 2)
        progress.step("exporting the raw page")
    shown = terminal.getvalue()
    assert "record pages rendered" in shown and "2/2" in shown  # click.progressbar draws the bar itself
    assert shown.endswith("  exporting the raw page…\n")


def test_every_archive_command_takes_archive_the_same_ways(archive, run, monkeypatch, tmp_path):
    arch, rid = archive
    # positional shorthand, --archive, and IKREPORT_ARCHIVE all name the same archive
    assert run("check", arch).exit_code == 0
    assert run("check", "--archive", arch).exit_code == 0
    verified = f"{arch}: 1 record and 1 blob verified\n"
    assert run("verify", "--archive", arch).stdout == verified
    monkeypatch.setenv("IKREPORT_ARCHIVE", str(arch))
    assert run("verify").stdout == verified
    assert run("list").stdout.startswith(rid[:12])
    result = run("build", "-o", tmp_path / "site", "--cache-dir", tmp_path / "cache")
    assert result.exit_code == 0 and result.stdout.startswith(f"{tmp_path / 'site'}: ")
    # the argument wins over the variable; naming two different archives is refused
    assert run("check", tmp_path / "missing").exit_code == 1
    result = run("check", arch, "--archive", tmp_path / "other")
    assert result.exit_code == 2 and "give the archive as ARCHIVE or --archive, not both" in result.output
