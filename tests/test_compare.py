"""compare: kernels matched by name and launch order, conservative verdicts, refusal when the
profiles are not like-for-like, and a deterministic comparison record."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from ikreport.store.archive import Archive
from ikreport.cli.main import cli
from ikreport.commands.compare import compare_profiles, verdict

HEADER = '"ID","Kernel Name","Section Name","Metric Name","Metric Unit","Metric Value"'


def export(path, durations: dict[str, list[float]]):
    rows, i = [HEADER], 0
    for kernel, times in durations.items():
        for t in times:
            rows.append(f'"{i}","{kernel}","GPU Speed Of Light Throughput","Duration","usecond","{t}"')
            i += 1
    path.write_text("\n".join(rows) + "\n")
    return path


def profile(durations):
    launches = [{"kernel": k, "duration_us": t} for k, ts in durations.items() for t in ts]
    return {"subject": {"gpu": "NVIDIA H200"}, "data": {"launches": launches},
            "method": {"tool_version": "2025.1.0.0",
                       "options": {"clock_control": "none", "cache_control": "all", "replay_mode": "kernel"}}}


ENV = {"data": {"driver": "550.54.15"}}


@pytest.mark.parametrize("a,b,expected", [
    ([10, 10.2, 10.1], [8, 8.1, 8.2], "FASTER"),
    ([10, 10.2, 10.1], [12, 12.1, 12.2], "SLOWER"),
    ([10, 10.2, 10.1], [10.1, 10.0, 10.3], "SAME"),
    ([10, 14, 10.1], [8, 12, 8.2], "UNDECIDED"),  # beyond the threshold, but the spreads overlap
    ([10], [5], "UNDECIDED"),  # one launch each is not evidence
])
def test_verdicts(a, b, expected):
    assert verdict(a, b, True, 5.0, 3)[0] == expected


def test_not_like_for_like_calls_nothing():
    a = profile({"k": [10, 10, 10]})
    b = profile({"k": [5, 5, 5]})
    assert compare_profiles(a, b, ENV, ENV)["kernels"][0]["verdict"] == "FASTER"
    other = {"data": {"driver": "560.28.03"}}
    result = compare_profiles(a, b, ENV, other)
    assert not result["like_for_like"]
    assert result["differences"] == [{"field": "driver", "a": "550.54.15", "b": "560.28.03", "why": "differs"}]
    assert result["kernels"][0]["verdict"] == "UNDECIDED"
    b["method"]["options"]["clock_control"] = "base"
    assert compare_profiles(a, b, ENV, ENV)["differences"][0]["field"] == "clock control"


def test_launches_matched_by_name_and_order():
    a = profile({"gemm": [10, 11, 12, 13], "norm": [1, 1, 1], "old": [2]})
    b = profile({"gemm": [5, 6, 7], "norm": [1, 1, 1], "new": [3]})
    result = compare_profiles(a, b, ENV, ENV)
    by = {k["kernel"]: k for k in result["kernels"]}
    assert by["gemm"]["launches"] == 3 and by["gemm"]["a_median_us"] == 11 and by["gemm"]["ratio"] == pytest.approx(6 / 11, abs=1e-4)
    assert by["gemm"]["verdict"] == "FASTER" and by["norm"]["verdict"] == "SAME"
    assert by["old"]["verdict"] == "ONLY IN A" and by["new"]["verdict"] == "ONLY IN B"


def test_compare_cli_on_imports_refuses_and_record_is_deterministic(tmp_path, monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1796169600")
    arch = tmp_path / "arch"
    runner = CliRunner()
    ids = []
    for name, times in (("a", [10, 10.1, 10.2]), ("b", [7, 7.1, 7.2])):
        csv = export(tmp_path / f"{name}.csv", {"gemm(float*)": times})
        out = runner.invoke(cli, ["collect", "ncu", "--from-csv", str(csv), "-a", str(arch), "--gpu", "NVIDIA H200"])
        ids.append(out.stdout.strip())
    first = runner.invoke(cli, ["compare", ids[0][:8], ids[1][:8], "-a", str(arch)])
    assert first.exit_code == 0, first.output
    lines = first.stdout.splitlines()
    assert "**Not like-for-like: no difference is called.**" in lines
    assert "- clock control: A not recorded, B not recorded (not recorded)" in lines
    assert "| `gemm(float*)` | 3 | 10.1 | 7.1 | 0.703 | UNDECIDED |" in lines
    again = runner.invoke(cli, ["compare", ids[0], ids[1], "-a", str(arch)])
    assert again.stdout.splitlines()[-1] == lines[-1]  # derived record: no clock, same id
    record = Archive.open(arch).load(lines[-1])
    assert record["kind"] == "comparison" and record["collected_at"] is None and record["cites"] == sorted(ids)
    refused = runner.invoke(cli, ["compare", ids[0], lines[-1], "-a", str(arch)])
    assert refused.exit_code == 1 and "is a comparison record; compare takes two ncu-profile records" in refused.stderr
