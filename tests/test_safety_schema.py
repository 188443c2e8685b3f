"""Issue 12 item 6: a record that passes ``verify`` always builds, or fails in one line.

The schema says per kind what each value in ``data`` is (type, range, required keys), so what
``verify`` accepts the pages can render; what the schema cannot say (an id in ``data`` that the
record must cite, a per-launch table blob's rows) is checked in one line too.
tests/reliability/mutate_records.py runs the mutation fuzzer at volume.
"""

from __future__ import annotations

import copy
import shutil
from pathlib import Path

import pytest
import rfc8785
from click.testing import CliRunner

from conftest import ROOT, record_path
from ikreport.store import records
from ikreport.store.archive import Archive, sha256
from ikreport.cli.main import cli
from ikreport.commands.compare import compare_runs
from ikreport.errors import IkreportError, RecordError
from ikreport.kinds.ncu_profile.data import durations_by_kernel
from ikreport.commands.build import build_site
from ikreport.commands.verify import verify_archive
from reliability import mutate_records

SAMPLE = ROOT / "sample_evidence"


@pytest.fixture
def arch(tmp_path):
    shutil.copytree(SAMPLE, tmp_path / "arch")
    return Archive.open(tmp_path / "arch")


def _first(archive: Archive, kind: str) -> tuple[str, dict]:
    rid = next(r for r in archive.record_ids() if archive.load(r)["kind"] == kind)
    return rid, archive.load(rid)


def _store_raw(archive: Archive, record: dict) -> str:
    """Store a record's canonical bytes as a hostile hand would: past the library's checks."""
    data = rfc8785.dumps(record)
    rid = sha256(data)
    path = record_path(archive, rid)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return rid


def _refused_everywhere(archive: Archive, tmp_path: Path, rid: str) -> list[str]:
    """verify names the record, and build stops with one line; returns verify's problems."""
    problems = verify_archive(archive)
    assert problems and any(rid[2:] in p for p in problems), problems
    assert all("\n" not in p and len(p) <= 300 for p in problems)
    with pytest.raises(IkreportError) as caught:
        build_site(archive, tmp_path / "site", cache_dir=tmp_path / "cache", workers=1)
    assert "\n" not in str(caught.value) and len(str(caught.value)) <= 300
    return problems


def test_mutation_fuzzer_small_run_finds_no_traceback_and_no_disagreement():
    counts = mutate_records.run(150, seed=1)
    assert counts["FAILED"] == 0, counts
    assert counts["accepted"] and counts["refused"]  # both outcomes are exercised


@pytest.mark.parametrize("kind, path, value", [
    ("ncu-profile", ("kernels", 0, "total_us"), [1, 2]),           # a list where a number was
    ("ncu-profile", ("launches",), "x"),                            # a string where a list was
    ("ncu-profile", ("launches", 0, "dram_gbs"), 1e300),            # far beyond any memory
    ("ncu-profile", ("kernels", 0, "share_pct"), -1),               # a share below zero
    ("ncu-profile", ("kernels", 0, "first_launch", "kernel"), None),
    ("ncu-profile", ("profiled_time_us",), {"a": {"b": [None]}}),  # a nested object
    ("peak-bandwidth", ("peak_gbs",), 0),                           # divides the of-peak claims
    ("peak-bandwidth", ("peak_gbs",), 500_000),                     # 500 TB/s: no importer would take it
    ("ncu-profile", ("launches", 0, "memory_pct"), 250),            # % of peak far past rounding
    ("peak-bandwidth", ("kernels", 0), "Copy"),
    ("environment", ("gpus", 0), [None]),
    ("environment", ("packages",), ["torch"]),
    ("comparison", ("kernels", 0, "ratio"), "fast"),
    ("comparison", ("verdicts",), []),
])
def test_a_record_the_pages_cannot_render_is_refused_by_verify_and_build(arch, tmp_path, kind, path, value):
    _, record = _first(arch, kind)
    bad = copy.deepcopy(record)
    parent = bad["data"]
    for step in path[:-1]:
        parent = parent[step]
    parent[path[-1]] = value
    rid = _store_raw(arch, bad)
    problems = _refused_everywhere(arch, tmp_path, rid)
    assert any("data/" + "/".join(str(p) for p in path) in p for p in problems), problems


def test_a_missing_required_key_in_data_is_refused(arch, tmp_path):
    _, record = _first(arch, "ncu-profile")
    bad = copy.deepcopy(record)
    del bad["data"]["kernels"][0]["bound"]
    rid = _store_raw(arch, bad)
    problems = _refused_everywhere(arch, tmp_path, rid)
    assert any('data/kernels/0: "bound" is a required property' in p for p in problems), problems


def test_schema_error_is_one_short_line_naming_the_record_and_the_json_path(arch):
    _, record = _first(arch, "ncu-profile")
    bad = copy.deepcopy(record)
    bad["data"]["kernels"][0]["total_us"] = "a" * 100_000
    with pytest.raises(RecordError) as caught:
        records.validate(bad, "records/ab/cd.json")
    message = str(caught.value)
    assert message.startswith('records/ab/cd.json: data/kernels/0/total_us: "aaaa')
    assert message.endswith('... is not of types "null", "number"')  # the value cut, what is wrong kept
    assert "\n" not in message and len(message) <= 300


@pytest.mark.parametrize("depth", [300, 1_500])
def test_a_value_nested_hundreds_deep_is_one_line_not_a_traceback(arch, depth):
    """jsonschema-rs tells such a record is not valid, then cannot say why (ValueError: recursion
    limit), which verify, check, list, show and build printed as a traceback."""
    _, record = _first(arch, "ncu-profile")
    bad = copy.deepcopy(record)
    deep: list = []
    for _ in range(depth):
        deep = [deep]
    bad["title"] = deep
    with pytest.raises(RecordError, match="^r.json: a value nested deeper than any record's; this is not an ikreport record$"):
        records.validate(bad, "r.json")


def test_a_huge_unknown_schema_version_is_one_short_line():
    with pytest.raises(RecordError) as caught:
        records.validate({"schema": "x" * 100_000}, "r.json")
    assert len(str(caught.value)) <= 300


def test_a_comparison_naming_a_record_it_does_not_cite_is_refused(arch, tmp_path):
    _, record = _first(arch, "comparison")
    bad = copy.deepcopy(record)
    bad["data"]["a"] = "0" * 64  # well formed, but no record: the page and claims would follow it
    rid = _store_raw(arch, bad)
    problems = _refused_everywhere(arch, tmp_path, rid)
    assert any("data/a: names record 000000000000, which the record does not cite" in p for p in problems)


def test_a_supersession_naming_a_record_it_does_not_cite_is_refused():
    # new_record validates, so the rule verify applies also stops such a record being written
    with pytest.raises(RecordError, match="data/new: names record 111111111111, which the record does not cite"):
        records.new_record("supersession", "t", collected_at=None, subject={},
                           method={"tool": "t", "tool_version": None, "command": None, "options": {}, "how": "h"},
                           data={"old": "0" * 64, "new": "1" * 64, "reason": "r"}, limitations=[],
                           cites=["2" * 64], supersedes=[{"id": "0" * 64, "reason": "r"}])


def test_a_profile_whose_launches_are_not_inline_must_cite_its_launch_table(arch, tmp_path):
    _, record = _first(arch, "ncu-profile")
    bad = copy.deepcopy(record)
    bad["data"]["launches_complete"] = False
    rid = _store_raw(arch, bad)
    problems = _refused_everywhere(arch, tmp_path, rid)
    assert any(": sources:" in p for p in problems), problems


def test_a_bad_launch_table_blob_is_one_line_in_compare():
    record = {"data": {"launches_complete": False, "launches": []},
              "sources": [{"role": "ncu-launch-table", "id": "ab" * 32}]}
    for table in (b"kernel,duration_us\nk,fast\n", b"name,time\nk,1\n", b"\xff\xfe", b"kernel,duration_us\nk,nan\n"):
        with pytest.raises(RecordError, match="^blob abababababab \\(the per-launch table\\): "):
            durations_by_kernel(record, lambda _blob, t=table: t)


def test_compare_takes_a_zero_duration_as_no_timing():
    def profile(duration):
        launch = {"kernel": "k", "duration_us": duration}
        return {"subject": {"gpu": "g"}, "method": {"tool_version": "1", "options": {}},
                "sources": [], "data": {"launches": [launch, {"kernel": "k", "duration_us": 2.0}]}}
    result = compare_runs([profile(0)], [profile(0)], [None], [None])
    assert result["kernels"][0]["a_median_us"] == 2.0


def test_verify_and_build_of_a_refused_record_from_the_command_line(arch, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    _, record = _first(arch, "peak-bandwidth")
    bad = copy.deepcopy(record)
    bad["data"]["kernels"] = "Copy"
    rid = _store_raw(arch, bad)
    runner = CliRunner()
    verified = runner.invoke(cli, ["verify", str(arch.root)])
    assert verified.exit_code == 1
    assert f'{rid[2:]}.json: data/kernels: "Copy" is not of types "null", "array"' in verified.output
    built = runner.invoke(cli, ["build", str(arch.root), "-o", str(tmp_path / "site")])
    assert built.exit_code == 1
    assert "Traceback" not in built.output and len(built.output.strip().splitlines()) == 1
    assert 'data/kernels: "Copy" is not of type' in built.output


def test_the_sample_and_every_record_the_collectors_write_stay_valid(arch):
    assert verify_archive(arch) == []


def test_a_launch_count_below_the_launch_table_never_shows_a_negative_count(arch, tmp_path):
    _, record = _first(arch, "ncu-profile")
    odd = copy.deepcopy(record)
    odd["data"]["launch_count"] = 0  # the schema cannot tie it to the table's length
    rid = _store_raw(arch, odd)
    assert verify_archive(arch) == []
    build_site(arch, tmp_path / "site", cache_dir=tmp_path / "cache", workers=1)
    page = (tmp_path / "site" / "e" / f"{rid}.html").read_text("utf-8")
    assert "more launches are" not in page


def test_the_schema_keeps_the_bounds_the_importers_keep():
    """A hand-made record must not publish what no importer accepts (issue 12 items 6 and 7)."""
    from ikreport.analysis import plausible

    defs = records._schema()["$defs"]
    assert defs["gbs"]["maximum"] == plausible.MAX_MEMORY_GBS
    assert defs["peak_pct"]["maximum"] == plausible.MAX_PERCENT
    bounds = defs["peak-bandwidth"]["properties"]["peak_gbs"]
    assert (bounds["minimum"], bounds["maximum"]) == (plausible.MIN_MEMORY_GBS, plausible.MAX_MEMORY_GBS)
