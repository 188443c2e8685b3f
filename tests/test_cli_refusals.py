"""Commands refuse what they cannot do well, in one line and before writing anything: an
archive location that looks like a URL but is not one, a sync into itself, conflicting or
out-of-range options; and sync names a damaged copy that DST already holds."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import FIXTURES

SMI_TABLE = FIXTURES / "nvidia-smi" / "smi_table_evaldataset_h100x2.txt"
RAW_PMPP = FIXTURES / "ncu" / "ncu_raw_pmpp_06_gtx1650ti_preamble.csv"


def last_line(result) -> str:
    return result.output.strip().splitlines()[-1]


@pytest.fixture
def box(tmp_path: Path, run) -> Path:
    """A small real archive: an environment record and a profile, from real exports."""
    folder = tmp_path / "box"
    assert run("collect", "env", "--from-nvidia-smi", SMI_TABLE, "-a", folder).exit_code == 0
    assert run("collect", "ncu", "--from-csv", RAW_PMPP, "-a", folder).exit_code == 0
    return folder


@pytest.mark.parametrize(("given", "form"), [
    ("s3:/team2/q", "s3://bucket/prefix"),
    ("s3://", "s3://bucket/prefix"),
    ("gs:bucket", "gs://bucket/prefix"),
    ("file://", "file:///absolute/folder"),
])
def test_a_location_that_is_not_a_whole_url_is_refused_and_nothing_is_made(tmp_path, monkeypatch, given, form, run):
    monkeypatch.chdir(tmp_path)
    result = run("collect", "env", "--from-nvidia-smi", SMI_TABLE, "-a", given)
    assert result.exit_code == 2
    assert f"{given}: not a valid archive URL; write it as {form}" in last_line(result)
    assert list(tmp_path.iterdir()) == []  # no ./s3: folder
    assert run("sync", given, tmp_path / "x").exit_code == 2
    monkeypatch.setenv("IKREPORT_ARCHIVE", given)
    assert run("list").exit_code == 2


def test_a_folder_whose_name_holds_a_colon_is_still_reachable(tmp_path, monkeypatch, run):
    monkeypatch.chdir(tmp_path)
    assert run("collect", "env", "--from-nvidia-smi", SMI_TABLE, "-a", "./ab:c").exit_code == 0
    assert (tmp_path / "ab:c" / "records").is_dir()


def test_sync_names_a_damaged_copy_in_dst_and_exits_1(box, tmp_path, run):
    mirror = tmp_path / "mirror"
    assert run("sync", box, mirror).exit_code == 0
    blob = next(p for p in sorted((mirror / "blobs").rglob("*")) if p.is_file())
    blob.chmod(0o644)
    blob.write_bytes(blob.read_bytes()[:-1] + b"!")  # same size, other bytes
    result = run("sync", box, mirror)
    assert result.exit_code == 1
    assert (f"{blob}: damaged in DST (its bytes do not hash to its name); restore it from a good copy, "
            "or remove it and sync again") in result.stderr
    total = sum(1 for p in box.rglob("*") if p.is_file())
    assert result.stdout == f"{mirror}: 0 objects copied, {total - 1} already there\n"
    blob.unlink()
    assert run("sync", box, mirror).exit_code == 0  # removed and synced again: whole
    assert run("verify", mirror).exit_code == 0


@pytest.mark.parametrize(("src", "dst"), [("ev", "ev/sub"), ("ev/sub", "ev"), ("ev", "ev"), ("ev", "./ev/")])
def test_sync_refuses_an_archive_inside_the_other(box, tmp_path, monkeypatch, src, dst, run):
    monkeypatch.chdir(tmp_path)
    box.rename(tmp_path / "ev")
    if src == "ev/sub":
        assert run("sync", "ev", tmp_path / "elsewhere" / "sub").exit_code == 0
        (tmp_path / "elsewhere" / "sub").rename(tmp_path / "ev" / "sub")
    before = sorted(tmp_path.rglob("*"))
    result = run("sync", src, dst)
    assert result.exit_code == 1
    assert result.output == (f"Error: {Path(src)} and {Path(dst)}: one archive, or one inside the other; "
                             "sync between two separate archives\n")
    assert sorted(tmp_path.rglob("*")) == before


def test_sync_refuses_a_bucket_prefix_inside_the_other(run):
    result = run("sync", "s3://b/g", "s3://b/g/sub/")
    assert result.exit_code == 1
    assert "s3://b/g and s3://b/g/sub/: one archive, or one inside the other" in result.output
    assert "s3://b/gh" not in run("sync", "memory://b/g", "memory://b/gh").output  # a sibling is apart


@pytest.mark.parametrize("made", [False, True])
def test_init_pages_needs_an_existing_git_repository(tmp_path, made, run):
    repo = tmp_path / "missing"
    if made:
        repo.mkdir()  # a folder, but no repository
    result = run("init-pages", "--repo", repo, "--install", "ikreport==0.1.0")
    assert (result.exit_code, result.stderr) == (1, (
        f"Error: {repo}: not a git repository's top folder (no .git); run 'git init' there, or give --repo the "
        "repository's folder\n"))
    assert sorted(tmp_path.rglob("*")) == ([repo] if made else [])


def test_import_and_from_csv_together_are_refused(tmp_path, run):
    report = tmp_path / "x.ncu-rep"
    report.write_bytes(b"NVR\x00")
    result = run("collect", "ncu", "--import", report, "--from-csv", RAW_PMPP, "-a", tmp_path / "arch")
    assert result.exit_code == 2
    assert last_line(result) == "Error: give --import REPORT or --from-csv FILES, not both"
    assert not (tmp_path / "arch").exists()


def test_one_export_given_twice_is_refused(tmp_path, run):
    copy = tmp_path / "copy.csv"
    copy.write_bytes(RAW_PMPP.read_bytes())
    for second in (RAW_PMPP, copy):
        result = run("collect", "ncu", "--from-csv", RAW_PMPP, second, "-a", tmp_path / "arch")
        assert (result.exit_code, result.stderr) == (1, (
            f"Error: {second}: the same file as {RAW_PMPP}, given twice; give each export once\n"))
    assert run("list", "-a", tmp_path / "arch").stdout == ""


@pytest.mark.parametrize("value", ["-1", "nan", "inf"])
def test_build_refuses_a_blob_size_that_is_no_size(tmp_path, value, run):
    result = run("build", "-o", tmp_path / "site", "--cache-dir", tmp_path / "c", "--max-blob-mb", value)
    assert result.exit_code == 2 and "Invalid value for '--max-blob-mb'" in result.output
    assert not (tmp_path / "site").exists()


def test_list_columns_stay_two_spaces_apart_with_long_gpu_names(box, tmp_path, run):
    long_name = "NVIDIA GeForce RTX 3060 Laptop GPU with Max-Q Design, 6 GB GDDR6"
    assert run("collect", "ncu", "--from-csv", RAW_PMPP, "-a", box, "--gpu", long_name,
               "--title", "pmpp again").exit_code == 0
    lines = run("list", "-a", box).stdout.splitlines()
    (cut,) = [line for line in lines if line.endswith("pmpp again")]
    assert "  NVIDIA GeForce RTX 3060 Laptop GPU with…  pmpp again" in cut
    # id, kind, GPU, title: parted by two spaces or more, each column starting at one place
    starts = {tuple(m.start() for m in re.finditer(r"(?:^|(?<=  ))\S", line))[:4] for line in lines}
    assert len(starts) == 1 and len(next(iter(starts))) == 4


def test_list_of_the_sample_parts_the_laptop_gpu_from_its_title(run):
    from conftest import ROOT

    line = next(x for x in run("list", "-a", ROOT / "sample_evidence").stdout.splitlines() if "3060" in x)
    assert "NVIDIA GeForce RTX 3060 Laptop GPU  " in line


@pytest.mark.parametrize("command", [
    ("collect", "ncu", "--from-csv"), ("collect", "env", "--from-nvidia-smi"), ("collect", "bandwidth", "--from-babelstream"),
])
def test_a_refused_import_into_a_new_archive_leaves_no_folder_behind(tmp_path: Path, command, run):
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b\n1,2\n", "utf-8")
    result = run(*command, bad, "-a", tmp_path / "new" / "archive")
    assert result.exit_code == 1 and "bad.csv" in last_line(result)
    assert not (tmp_path / "new").exists()


def test_an_archive_under_a_file_is_refused_in_one_line(tmp_path: Path, run):
    (tmp_path / "plain").write_text("not a folder", "utf-8")
    result = run("collect", "ncu", "--from-csv", RAW_PMPP, "-a", tmp_path / "plain" / "archive")
    assert result.exit_code == 1 and "cannot create the archive" in last_line(result)
    assert len(result.output.strip().splitlines()) == 1


def test_a_title_longer_than_a_record_takes_is_refused_as_an_option_with_the_fix(tmp_path, run):
    """A record's title is at most 500 characters: a longer --title was refused as a schema path
    ("record: title: … is longer than 500 characters"); it is the option's value, to shorten."""
    result = run("collect", "ncu", "--from-csv", RAW_PMPP, "-a", tmp_path / "a", "--title", "x" * 501)
    assert result.exit_code == 2
    assert last_line(result) == "Error: Invalid value for '--title': 501 characters; a record's title is at most 500: shorten it"
    assert not (tmp_path / "a").exists()
    assert run("collect", "ncu", "--from-csv", RAW_PMPP, "-a", tmp_path / "a", "--title", "x" * 500).exit_code == 0


def test_a_title_longer_than_a_record_takes_in_a_context_file_is_refused_naming_the_file(tmp_path, run):
    """The same limit for a title given in a --context file, before anything is stored."""
    context = tmp_path / "ctx.toml"
    context.write_text(f'title = "{"x" * 600}"\n')
    result = run("collect", "ncu", "--from-csv", RAW_PMPP, "-a", tmp_path / "a", "--context", context)
    assert result.exit_code == 1
    assert result.stderr == f"Error: {context}: 'title' is 600 characters; a record's title is at most 500: shorten it\n"
    assert not (tmp_path / "a").exists()


def test_a_title_that_a_multi_run_file_would_push_over_the_limit_is_refused_before_any_run(tmp_path, run):
    """Each run of a multi-run SGLang file adds ', line N' to the title given: one that would
    pass 500 characters so is refused before any record is written (the schema refused it at
    the first run, after the blob)."""
    runs = FIXTURES / "serving" / "sglang_h200bench_llama33_70b_online_6runs.jsonl"
    result = run("collect", "serving", "--from-sglang", runs, "-a", tmp_path / "a", "--title", "x" * 495)
    assert result.exit_code == 1
    assert result.stderr.startswith(f"Error: {runs}: the title is 495 characters, and each of its 7 runs adds ', line N' to it; ")
    assert result.stderr.endswith("a record's title is at most 500: shorten it to 492\n")
    assert not (tmp_path / "a").exists()
    assert run("collect", "serving", "--from-sglang", runs, "-a", tmp_path / "a", "--title", "x" * 492).exit_code == 0


def test_from_csv_with_no_file_names_every_page_it_takes(tmp_path, run):
    """The session page, taken as a third file, was missing from this message and the option's help."""
    result = run("collect", "ncu", "--from-csv", "-a", tmp_path / "ev")
    assert result.exit_code == 2
    assert "one raw and/or one details page, and optionally the session page" in last_line(result)
    assert "the session page of the same report" in " ".join(run("collect", "ncu", "--help").output.split())
