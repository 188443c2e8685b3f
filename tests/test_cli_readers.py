"""The command line as a new user meets it (issue 16): which archive a command works on,
warnings a build prints, errors that point the right way, what ``show`` says."""

from __future__ import annotations

import shutil

import pytest
from click.testing import CliRunner

from conftest import FIXTURES, NCU, ROOT
from ikreport.cli.main import cli

K3 = NCU / "ncu_details_llmperfopt_k0003_cmdline_plus_sections.csv"
SMI_Q = FIXTURES / "nvidia-smi" / "smi_q_gpukernellab_rtx3060laptop.txt"


@pytest.fixture
def run(monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1796169600")
    monkeypatch.delenv("IKREPORT_ARCHIVE", raising=False)
    runner = CliRunner()
    return lambda *args: runner.invoke(cli, [str(a) for a in args], catch_exceptions=False)


def files_under(folder):
    return sorted(p.relative_to(folder) for p in folder.rglob("*") if p.is_file())


# -- item 1: an archive must be named or found; only build falls back to the sample ---------------

def test_writing_commands_never_write_into_the_sample_of_a_clone(tmp_path, run, monkeypatch):
    clone = tmp_path / "clone"
    shutil.copytree(ROOT / "sample_evidence", clone / "sample_evidence")
    before = files_under(clone)
    monkeypatch.chdir(clone)
    old, new = sorted(p.stem for p in (clone / "sample_evidence" / "records").rglob("*.json"))[:2]
    expected = (f"Error: {clone}: no archive named, and none found here or above (a folder holding records/ "
                "and blobs/, or evidence/ holding them); give --archive DIR or set IKREPORT_ARCHIVE\n")
    for args in (("supersede", old, "--by", new, "--reason", "oops"), ("compare", old, new),
                 ("collect", "env", "--from-nvidia-smi", SMI_Q), ("collect", "ncu", "--from-csv", K3),
                 ("collect", "bandwidth"), ("list",), ("check",), ("verify",)):
        result = run(*args)
        assert (result.exit_code, result.stderr) == (1, expected), args
    assert files_under(clone) == before
    # build alone keeps the sample as its demo
    built = run("build", "-o", tmp_path / "site", "--cache-dir", tmp_path / "cache")
    assert built.exit_code == 0 and built.stdout.startswith(f"{tmp_path / 'site'}: 14 pages (11 records")


def test_an_archive_is_found_from_the_working_directory_upward(tmp_path, run, monkeypatch):
    repo = tmp_path / "repo"
    first = run("collect", "env", "--from-nvidia-smi", SMI_Q, "--archive", repo / "evidence")
    assert first.exit_code == 0
    deep = repo / "src" / "deep"
    deep.mkdir(parents=True)
    monkeypatch.chdir(deep)
    # found as the evidence/ of a folder above: collect writes there, list and build read it
    second = run("collect", "ncu", "--from-csv", K3, "--gpu", "RTX 5090")
    assert second.exit_code == 0
    assert len(list((repo / "evidence" / "records").rglob("*.json"))) == 2
    assert len(run("list").stdout.splitlines()) == 2
    built = run("build", "-o", tmp_path / "site", "--cache-dir", tmp_path / "cache")
    assert built.stdout.startswith(f"{tmp_path / 'site'}: ") and "(2 records" in built.stdout
    # inside the archive itself, it is the archive
    monkeypatch.chdir(repo / "evidence" / "records")
    assert run("verify").stdout == f"{repo / 'evidence'}: 2 records and 2 blobs verified\n"
    # a folder with records/ but no blobs/ is not an archive
    (tmp_path / "half" / "records").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "half")
    assert run("list").exit_code == 1


def test_a_named_archive_wins_over_a_found_one(tmp_path, run, monkeypatch):
    run("collect", "env", "--from-nvidia-smi", SMI_Q, "--archive", tmp_path / "evidence")
    other = tmp_path / "other"
    assert run("collect", "ncu", "--from-csv", K3, "--archive", other).exit_code == 0
    monkeypatch.chdir(tmp_path)
    assert "ncu-profile" in run("list", "--archive", other).stdout
    monkeypatch.setenv("IKREPORT_ARCHIVE", str(other))
    assert "ncu-profile" in run("list").stdout


# -- item 2: build prints every finding check would, with a count; --strict fails on them ---------

@pytest.fixture
def sample(tmp_path):
    """A copy of the sample archive, with a report citing a superseded record and a null value."""
    arch = tmp_path / "arch"
    shutil.copytree(ROOT / "sample_evidence", arch)
    return arch


def sample_id(run, arch, kind, title_part):
    line = next(x for x in run("list", "-a", arch).stdout.splitlines() if kind in x and title_part in x)
    return line.split()[0]


def test_build_prints_each_warning_with_a_count_and_strict_fails(sample, tmp_path, run):
    old = sample_id(run, sample, "environment", "RTX 3060")  # the sample's report cites neither
    new = sample_id(run, sample, "environment", "H100")
    babel = sample_id(run, sample, "peak-bandwidth", "BabelStream")
    assert run("supersede", old, "--by", new, "--reason", "wrong kernel", "-a", sample).exit_code == 0
    reports = sample / "reports"
    (reports / "old.md").write_text(f"The laptop [ev:{old}].\n")
    # BabelStream prints no median: the record holds null there
    (reports / "null.md").write_text(f"Median [ev:{babel} data.median_gbs].\n")
    (reports / "none.md").write_text("Nothing cited.\n")
    found = [f"{reports / 'none.md'}:1: IK202 the report cites no record",
             f"{reports / 'null.md'}:1: IK203 record {babel[:8]}: data.median_gbs is null (not measured or "
             "not reported), so the page shows n/a",
             f"{reports / 'old.md'}:1: IK201 cites {old[:8]}, which {new[:8]} supersedes"]
    assert run("check", sample).stdout.splitlines() == found
    built = run("build", sample, "-o", tmp_path / "site", "--cache-dir", tmp_path / "cache")
    assert built.exit_code == 0
    assert built.stderr.splitlines() == [f"Warning: {line}" for line in found] + [
        "3 warnings; --strict makes the IK2xx ones fail ('ikreport check' lists them)"]
    assert "n/a" in (tmp_path / "site" / "r" / "null.html").read_text()
    strict = run("build", sample, "-o", tmp_path / "strict", "--strict", "--cache-dir", tmp_path / "cache")
    assert (strict.exit_code, strict.stdout) == (1, "")
    assert strict.stderr.splitlines() == found + ["Error: build stopped by 3 warnings (--strict); nothing written"]
    assert not (tmp_path / "strict").exists()


def test_a_build_stopped_by_an_error_lists_the_warnings_too(sample, tmp_path, run):
    (sample / "reports" / "bad.md").write_text("Unknown [ev:0123abcd].\n\nNothing here either.\n")
    (sample / "reports" / "none.md").write_text("Nothing cited.\n")
    built = run("build", sample, "-o", tmp_path / "site", "--cache-dir", tmp_path / "cache")
    assert built.exit_code == 1 and not (tmp_path / "site").exists()
    assert built.stderr.splitlines() == [
        f"{sample / 'reports' / 'bad.md'}:1: IK103 no record starts with 0123abcd; 'ikreport list' lists the records",
        f"{sample / 'reports' / 'none.md'}:1: IK202 the report cites no record",
        "Error: build stopped by 1 error; nothing written"]


def test_the_sample_builds_without_a_warning(tmp_path, run):
    built = run("build", ROOT / "sample_evidence", "-o", tmp_path / "site", "--cache-dir", tmp_path / "cache")
    assert (built.exit_code, built.stderr) == (0, "")
