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
