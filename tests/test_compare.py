"""compare: verdicts from the 95% interval of the B/A ratio of medians, runs as the unit,
kernels matched by name and launch configuration, like-for-like from observed or stated
method fields, refusals, and a deterministic comparison record.

The gain and the 1% change are the real B200 export's launch durations (tests/fixtures/ncu),
scaled: every launch of B is the matching launch of A times a factor."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from ikreport.analysis.ncu.read import read_exports
from ikreport.cli.main import cli
from ikreport.commands.compare import compare_runs
from ikreport.reports.values import format_value, lookup
from ikreport.store.archive import Archive

FIXTURES = Path(__file__).parent / "fixtures" / "ncu"
B200 = FIXTURES / "ncu_raw_roofline_decodebench_b200_16kernels_preamble.csv"
HEADER = '"ID","Kernel Name","Section Name","Metric Name","Metric Unit","Metric Value"'
ENV = {"data": {"driver": "570.133.20"}}
OPTIONS = {"clock_control": "none", "cache_control": "all", "replay_mode": "kernel"}


def b200_launches() -> list[dict]:
    profile = read_exports({B200.name: B200.read_bytes()})
    return [profile.launch(i) for i in range(profile.launch_count)]


def run(launches, scale=1.0, slow: int | None = None, live=True):
    """A profile record of these launches (durations times ``scale``; launch ``slow`` 3x slower)."""
    rows = [{"kernel": x["kernel"], "grid": x.get("grid"), "block": x.get("block"),
             "duration_us": x["duration_us"] * scale * (3 if i == slow else 1)} for i, x in enumerate(launches)]
    method = {"tool": "ncu", "tool_version": "2025.1.0.0", "command": ["ncu"] if live else None,
              "options": dict(OPTIONS)}
    return {"subject": {"gpu": "NVIDIA B200"}, "data": {"launches": rows, "devices": ["NVIDIA B200"]},
            "method": method}


def one(kernel, durations, grid=64, block=128):
    return [{"kernel": kernel, "grid": grid, "block": block, "duration_us": d} for d in durations]


def by_kernel(result):
    return {k["kernel"]: k for k in result["kernels"]}


MAIN = "void flash_fwd_splitkv_kernel"


def main_kernel(result):
    return next(k for k in result["kernels"] if k["kernel"].startswith(MAIN))


def test_a_clear_gain_with_one_outlier_is_faster():
    launches = b200_launches()
    slow = next(i for i, x in enumerate(launches) if x["kernel"].startswith(MAIN))
    result = compare_runs([run(launches, slow=slow)], [run(launches, 0.8)], [ENV], [ENV])
    k = main_kernel(result)
    assert k["verdict"] == "FASTER" and k["n_a"] == k["n_b"] == 8
    assert k["ratio_ci"][0] < 0.8 < k["ratio_ci"][1] < 0.95  # the outlier moves neither the median nor the call
    assert result["unit"] == "launch" and result["like_for_like"]


def test_noise_with_three_launches_a_side_is_undecided():
    result = compare_runs([run(one("k", [100, 140, 60]))], [run(one("k", [104, 70, 150]))], [ENV], [ENV])
    k = result["kernels"][0]
    assert k["verdict"] == "UNDECIDED" and k["ratio_ci"][0] < 0.95 and k["ratio_ci"][1] > 1.05


def test_a_one_percent_change_is_same_at_five_percent():
    launches = b200_launches()
    result = compare_runs([run(launches)], [run(launches, 1.01)], [ENV], [ENV], threshold_pct=5)
    k = main_kernel(result)
    assert k["verdict"] == "SAME" and 0.95 <= k["ratio_ci"][0] <= 1.01 <= k["ratio_ci"][1] <= 1.05
    assert compare_runs([run(launches)], [run(launches, 1.01)], [ENV], [ENV], threshold_pct=0.5)["kernels"][0][
        "verdict"] != "SAME"  # a tighter threshold than the change: not shown equivalent


def test_runs_are_the_unit():
    # eight tight launches a run, but the runs themselves vary by 20%: one run a side calls a
    # difference the runs do not support
    def tight(level):
        return one("k", [level + 0.01 * i for i in range(8)])
    a = [run(tight(level)) for level in (100, 120, 80)]
    b = [run(tight(level)) for level in (90, 108, 72)]
    pooled = compare_runs(a[:1], b[:1], [ENV], [ENV])["kernels"][0]
    assert pooled["verdict"] == "FASTER" and pooled["n_a"] == 8
    result = compare_runs(a, b, [ENV] * 3, [ENV] * 3)
    k = result["kernels"][0]
    assert result["unit"] == "run" and (k["n_a"], k["n_b"], k["a_launches"]) == (3, 3, 24)
    assert k["a_median_us"] == pytest.approx(100.035) and k["verdict"] == "UNDECIDED"


def test_kernels_match_by_name_and_configuration_then_launch_order():
    a = run(one("gemm", [10, 10.1, 10.2], grid=64) + one("norm", [1, 1, 1]) + one("old", [2, 2, 2]))
    b = run(one("gemm", [8, 8.1, 8.2], grid=128) + one("norm", [1, 1, 1]) + one("new", [3, 3, 3]))
    result = compare_runs([a], [b], [ENV], [ENV])
    k = by_kernel(result)
    assert k["norm"]["matched_by"] == "name and launch configuration" and k["norm"]["verdict"] == "SAME"
    assert k["gemm"]["matched_by"].startswith("name and launch order")
    assert (k["gemm"]["a_config"], k["gemm"]["b_config"]) == ("grid 64, block 128", "grid 128, block 128")
    assert k["old"]["verdict"] == "ONLY IN A" and k["new"]["verdict"] == "ONLY IN B"
    assert {x["verdict"] for x in result["kernels"][-2:]} == {"ONLY IN A", "ONLY IN B"}  # matched ones first


def test_method_fields_say_observed_stated_or_missing():
    imported = run(one("k", [10, 10, 10]), live=False)
    imported["subject"]["gpu"] = "NVIDIA H200"  # named with --gpu: the export names no device
    imported["data"]["devices"] = []
    result = compare_runs([run(one("k", [10, 10, 10]))], [imported], [ENV], [None])
    fields = {f["field"]: (f["a_source"], f["b_source"]) for f in result["method_fields"]}
    assert fields == {"gpu": ("observed", "stated"), "driver": ("observed", "missing"),
                      "ncu version": ("observed", "stated"), "clock control": ("observed", "stated"),
                      "cache control": ("observed", "stated"), "replay mode": ("observed", "stated")}
    assert [(d["field"], d["why"]) for d in result["differences"]] == [("gpu", "differs"), ("driver", "not recorded for B")]
    assert result["kernels"][0]["verdict"] == "UNDECIDED" and not result["like_for_like"]


def test_a_session_page_is_observed_and_equal_stated_values_are_like_for_like(tmp_path):
    arch = tmp_path / "arch"
    session = FIXTURES / "session_constructed_b200.csv"
    stated = ["--gpu", "NVIDIA B200", "--clock-control", "base", "--cache-control", "all", "--replay-mode", "kernel",
              "--ncu-version", "2025.2.1.0", "--driver", "575.57.08"]
    ids = [CliRunner().invoke(cli, ["collect", "ncu", "--from-csv", str(B200), *extra, "-a", str(arch)]).stdout.strip()
           for extra in ([str(session)], stated)]
    out = CliRunner().invoke(cli, ["compare", *ids, "-a", str(arch)])
    assert out.exit_code == 0, out.output
    assert "| clock control | base (observed) | base (stated) |" in out.stdout
    assert "| driver | 575.57.08 (observed) | 575.57.08 (stated) |" in out.stdout
    assert "| gpu | NVIDIA B200 (observed) | NVIDIA B200 (observed) |" in out.stdout  # the export names it
    assert "Not like-for-like" not in out.stdout and out.stdout.count("| SAME |") == 2


def export(path, durations: list[float], kernel="gemm(float*)"):
    rows = [HEADER] + [f'"{i}","{kernel}","GPU Speed Of Light Throughput","Duration","usecond","{t}"'
                       for i, t in enumerate(durations)]
    path.write_text("\n".join(rows) + "\n")
    return path


STATED = ["--gpu", "NVIDIA H200", "--clock-control", "base", "--cache-control", "all", "--replay-mode", "kernel",
          "--ncu-version", "2025.1.0.0", "--driver", "570.133.20"]


@pytest.fixture
def imported(tmp_path, monkeypatch):
    """An archive with three imports a side, their method stated on import."""
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1796169600")
    arch = tmp_path / "arch"
    ids: dict[str, list[str]] = {"a": [], "b": []}
    for side, level in (("a", 10.0), ("b", 7.0)):
        for r in range(3):
            csv = export(tmp_path / f"{side}{r}.csv", [level + r * 0.01 + i * 0.001 for i in range(3)])
            out = CliRunner().invoke(cli, ["collect", "ncu", "--from-csv", str(csv), "-a", str(arch), *STATED])
            assert out.exit_code == 0, out.output
            ids[side].append(out.stdout.strip())
    return arch, ids


def test_compare_cli_runs_a_side_with_stated_method(imported):
    arch, ids = imported
    out = CliRunner().invoke(cli, ["compare", ",".join(i[:8] for i in ids["a"]), ",".join(ids["b"]), "-a", str(arch)])
    assert out.exit_code == 0, out.output
    lines = out.stdout.splitlines()
    assert lines[0].startswith("A (before) = 3 runs (") and "; B (after) = 3 runs (" in lines[0]
    assert "| clock control | base (stated) | base (stated) |" in lines
    assert "| `gemm(float*)` | 3 | 3 | 10.011 | 7.011 | 0.700 [0.699, 0.702] | FASTER |" in lines
    record = Archive.open(arch).load(lines[-1])
    assert record["data"]["version"] == 2 and record["data"]["a_runs"] == ids["a"]
    assert record["cites"] == sorted(ids["a"] + ids["b"]) and record["collected_at"] is None
    again = CliRunner().invoke(cli, ["compare", ",".join(ids["a"]), ",".join(ids["b"]), "-a", str(arch)])
    assert again.stdout.splitlines()[-1] == lines[-1]  # a fixed seed and no clock: the same record


def test_one_run_a_side_says_run_to_run_variance_is_not_captured(imported):
    arch, ids = imported
    out = CliRunner().invoke(cli, ["compare", ids["a"][0], ids["b"][0], "-a", str(arch)])
    assert out.exit_code == 0 and "run-to-run variance is not captured" in out.stdout
    record = Archive.open(arch).load(out.stdout.splitlines()[-1])
    assert any("run-to-run variance is not captured" in x for x in record["limitations"])


@pytest.mark.parametrize("args,message", [
    (["{a0}", "{a0}"], "is given twice; a record compared with itself shows nothing"),
    (["{a0},{a1}", "{b0},{a1}"], "is given twice"),
    (["{a0},", "{b0}"], "A and B are record ids or prefixes separated by commas, with none empty"),
    (["{a0}", "{b0}", "--threshold", "0"], "Invalid value for '--threshold': 0.0 is not in the range 0<x<100."),
    (["{a0}", "{b0}", "--threshold", "nan"], "Invalid value for '--threshold': nan is not in the range 0<x<100."),
    (["{a0}", "{b0}", "--threshold", "inf"], "Invalid value for '--threshold': inf is not in the range 0<x<100."),
    (["{a0}", "{b0}", "--threshold", "200"], "Invalid value for '--threshold': 200.0 is not in the range 0<x<100."),
    (["{a0}", "{b0}", "--min-samples", str(10**20)], "Invalid value for '--min-samples': 100000000000000000000 is "
                                                    "not in the range 2<=x<=10000."),
    # accepted, it acted as 2: a verdict needs an interval, and one value a side has none
    (["{a0}", "{b0}", "--min-samples", "1"], "Invalid value for '--min-samples': 1 is not in the range 2<=x<=10000."),
    (["{a0}", "ffffffff"], "ffffffff"),
])
def test_compare_cli_errors_write_nothing(imported, args, message):
    arch, ids = imported
    names = {f"{s}{n}": i for s in ("a", "b") for n, i in enumerate(ids[s])}
    before = sorted(p.name for p in (arch / "records").rglob("*"))
    out = CliRunner().invoke(cli, ["compare", *[x.format(**names) for x in args], "-a", str(arch)])
    last = out.stderr.splitlines()[-1]
    assert out.exit_code in (1, 2) and last.startswith("Error: ") and message in last
    assert sorted(p.name for p in (arch / "records").rglob("*")) == before


def test_compare_refuses_a_record_that_is_not_a_profile(imported):
    arch, ids = imported
    made = CliRunner().invoke(cli, ["compare", ids["a"][0], ids["b"][0], "-a", str(arch)]).stdout.splitlines()[-1]
    out = CliRunner().invoke(cli, ["compare", ids["a"][0], made, "-a", str(arch)])
    assert out.exit_code == 1 and "is a comparison record; compare takes ncu-profile records" in out.stderr


def test_a_report_cites_a_comparisons_interval(imported):
    arch, ids = imported
    out = CliRunner().invoke(cli, ["compare", ",".join(ids["a"]), ",".join(ids["b"]), "-a", str(arch)])
    record = Archive.open(arch).load(out.stdout.splitlines()[-1])
    assert format_value("data.kernels.0.ratio_ci", lookup(record, "data.kernels.0.ratio_ci")) == "0.699–0.702"
    assert format_value("data.kernels.0.ratio", lookup(record, "data.kernels.0.ratio")) == "0.70"


def test_a_comparison_of_several_runs_a_side_answers_the_one_run_limitation(imported, tmp_path):
    arch, ids = imported
    out = CliRunner().invoke(cli, ["compare", ",".join(ids["a"]), ",".join(ids["b"]), "-a", str(arch)])
    made = out.stdout.splitlines()[-1]
    built = CliRunner().invoke(cli, ["build", str(arch), "-o", str(tmp_path / "site"), "--cache-dir", str(tmp_path / "c")])
    assert built.exit_code == 0, built.output
    page = (tmp_path / "site" / "e" / f"{made}.md").read_text()
    assert ("One profile of one run: it shows no run-to-run variance. Answered by this comparison, which takes "
            "3 runs in A and 3 runs in B, each run's median one sample." in page)
    assert page.count("One profile of one run") == 1  # stated once, as every limitation


def test_the_runs_that_lack_a_kernel_are_named(tmp_path, monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1796169600")
    arch = tmp_path / "arch"
    ids: dict[str, list[str]] = {"a": [], "b": []}
    for side, level in (("a", 10.0), ("b", 7.0)):
        for r in range(3):
            rows = [HEADER] + [f'"{i}","gemm(float*)","GPU Speed Of Light Throughput","Duration","usecond","{level + i * 0.01}"'
                               for i in range(3)]
            if not (side == "a" and r == 1):  # A's second run never launched the norm kernel
                rows += [f'"{3 + i}","norm(float*)","GPU Speed Of Light Throughput","Duration","usecond","2.0{i}"'
                         for i in range(3)]
            (tmp_path / f"{side}{r}.csv").write_text("\n".join(rows) + "\n")
            out = CliRunner().invoke(cli, ["collect", "ncu", "--from-csv", str(tmp_path / f"{side}{r}.csv"), "-a", str(arch),
                                           "--title", f"{side}{r}", *STATED])
            ids[side].append(out.stdout.strip())
    out = CliRunner().invoke(cli, ["compare", ",".join(ids["a"]), ",".join(ids["b"]), "-a", str(arch)])
    assert out.exit_code == 0, out.output
    assert f"- `norm(float*)`: not in A's run 2 [{ids['a'][1][:8]}]" in out.stdout.splitlines()
    made = out.stdout.splitlines()[-1]
    assert Archive.open(arch).load(made)["data"]["kernels"][1]["a_lacking"] == [1]
    built = CliRunner().invoke(cli, ["build", str(arch), "-o", str(tmp_path / "site"), "--cache-dir", str(tmp_path / "c")])
    assert built.exit_code == 0, built.output
    assert f"norm: not in A's run 2 \\[{ids['a'][1][:8]}\\]" in (tmp_path / "site" / "e" / f"{made}.md").read_text()


def test_a_comparison_across_gpus_names_both_in_list_and_the_index(tmp_path, monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1796169600")
    arch = tmp_path / "arch"
    ids = []
    for gpu in ("NVIDIA A100", "NVIDIA H100"):
        csv = export(tmp_path / f"{gpu[-4:]}.csv", [10.0, 10.1, 10.2])
        out = CliRunner().invoke(cli, ["collect", "ncu", "--from-csv", str(csv), "-a", str(arch), *STATED, "--gpu", gpu])
        ids.append(out.stdout.strip())
    made = CliRunner().invoke(cli, ["compare", ids[0], ids[1], "-a", str(arch)]).stdout.splitlines()[-1]
    listed = CliRunner().invoke(cli, ["list", "-a", str(arch)]).stdout
    (line,) = [x for x in listed.splitlines() if x.startswith(made[:12])]
    assert "NVIDIA A100 (A), NVIDIA H100 (B)" in line
    built = CliRunner().invoke(cli, ["build", str(arch), "-o", str(tmp_path / "site"), "--cache-dir", str(tmp_path / "c")])
    assert built.exit_code == 0, built.output
    (row,) = [x for x in (tmp_path / "site" / "index.md").read_text().splitlines() if made[:8] in x]
    assert "NVIDIA A100 (A), NVIDIA H100 (B)" in row
    import json
    docs = [d for f in sorted((tmp_path / "site" / "search").glob("*/docs-*.json")) for d in json.loads(f.read_text())]
    (doc,) = [d for d in docs if d["u"] == f"e/{made}.html"]
    assert doc["g"] == "NVIDIA A100 (A), NVIDIA H100 (B)"  # search names the GPUs as the index does


def test_show_prints_a_comparisons_kernels_and_a_supersessions_ids_and_reason(imported):
    arch, ids = imported
    made = CliRunner().invoke(cli, ["compare", ",".join(ids["a"]), ",".join(ids["b"]), "-a", str(arch)]).stdout
    out = CliRunner().invoke(cli, ["show", made.splitlines()[-1], "-a", str(arch)])
    assert out.exit_code == 0, out.output
    assert "  verdicts:  1 FASTER" in out.stdout.splitlines()
    assert "    0.700 [0.699, 0.702]           3/3  FASTER     gemm(float*)" in out.stdout.splitlines()
    by = CliRunner().invoke(cli, ["supersede", ids["a"][0], "--by", ids["a"][1], "--reason", "clocks were not locked",
                                  "-a", str(arch)]).stdout.strip()
    out = CliRunner().invoke(cli, ["show", by, "-a", str(arch)])
    lines = out.stdout.splitlines()
    assert f"  old:       {ids['a'][0]} (superseded)" in lines and f"  new:       {ids['a'][1]} (replaces it)" in lines
    assert "  reason:    clocks were not locked" in lines
    assert "  limitations:" not in lines  # a supersession states none: no empty heading


def test_the_printed_table_shows_a_kernel_name_with_a_backtick_or_a_pipe_whole():
    from markdown_it import MarkdownIt

    from ikreport.commands.compare import markdown_table

    name = "op`x|y<T>"
    result = compare_runs([run(one(name, [10, 11, 12]))], [run(one(name, [7, 7.1, 7.2]))], [ENV], [ENV])
    text = markdown_table({"a_runs": ["a" * 64], "b_runs": ["b" * 64], **result})
    html = MarkdownIt("commonmark").enable("table").render(text)
    assert "<td><code>op`x|y&lt;T&gt;</code></td>" in html  # one cell, the name whole: not cut at the pipe or backtick


def test_not_like_for_like_names_the_flags_that_would_make_the_sides_comparable(tmp_path):
    """Issue 27 item 17: two imports with nothing stated can never decide; compare says exactly
    what to state, and doing so gives a verdict."""
    arch = tmp_path / "arch"
    session = FIXTURES / "session_constructed_b200.csv"

    def imported(*extra):
        out = CliRunner().invoke(cli, ["collect", "ncu", "--from-csv", str(B200), *extra, "-a", str(arch)])
        assert out.exit_code == 0, out.output
        return out.stdout.strip().splitlines()[-1]
    bare, observed = imported("--title", "bare"), imported(str(session))
    out = CliRunner().invoke(cli, ["compare", bare, observed, "-a", str(arch), "--no-record"])
    lines = out.stdout.splitlines()
    assert "- clock control: not recorded for A (B: base)" in lines  # never "B ... (not recorded)"
    assert "- driver: not recorded for A (B: 575.57.08)" in lines
    advice = next(line for line in lines if line.startswith("- Re-import A"))
    assert ("`--driver 575.57.08 --ncu-version 2025.2.1.0 --clock-control base --cache-control all "
            "--replay-mode kernel`") in advice
    assert "driver, ncu_version, clock_control, cache_control, replay_mode in its --context file" in advice
    assert not any(line.startswith("- Re-import B") for line in lines)
    # following the advice makes the two comparable
    flags = advice.split("`")[1].split()
    stated = imported("--title", "stated", *flags)
    again = CliRunner().invoke(cli, ["compare", stated, observed, "-a", str(arch), "--no-record"])
    assert "Not like-for-like" not in again.stdout and again.stdout.count("| SAME |") == 2


def test_no_record_prints_the_comparison_and_writes_nothing(imported):
    arch, ids = imported
    before = sorted(p.relative_to(arch) for p in arch.rglob("*"))
    out = CliRunner().invoke(cli, ["compare", ",".join(ids["a"]), ",".join(ids["b"]), "-a", str(arch), "--no-record"])
    assert out.exit_code == 0, out.output
    assert "| `gemm(float*)` | 3 | 3 |" in out.stdout and out.stdout.rstrip().endswith("|")  # no id line
    assert "no comparison record written (--no-record)" in out.stderr
    assert sorted(p.relative_to(arch) for p in arch.rglob("*")) == before


def test_a_gpu_stated_over_the_export_s_own_device_is_not_what_is_compared(tmp_path):
    """A GTX 1650 Ti export and a B200 one, both imported with --gpu "NVIDIA H200" (a team context
    file makes it easy), were compared as like for like: the stated name was taken for both."""
    arch = tmp_path / "arch"
    stated = ["--gpu", "NVIDIA H200", "--clock-control", "base", "--cache-control", "all", "--replay-mode", "kernel",
              "--ncu-version", "2025.2.1.0", "--driver", "575.57.08"]
    ids = [CliRunner().invoke(cli, ["collect", "ncu", "--from-csv", *files, *flags, "-a", str(arch)]).stdout.strip()
           for files, flags in (([str(FIXTURES / "ncu_raw_pmpp_06_gtx1650ti_preamble.csv")], stated),
                                ([str(B200), str(FIXTURES / "session_constructed_b200.csv")], stated[:2]))]
    out = CliRunner().invoke(cli, ["compare", *ids, "-a", str(arch), "--no-record"])
    assert out.exit_code == 0, out.output
    assert "| gpu | NVIDIA GeForce GTX 1650 Ti (observed) | NVIDIA B200 (observed) |" in out.stdout
    assert "**Not like-for-like: no difference is called.**" in out.stdout


def test_too_few_launches_are_named_as_launches(tmp_path):
    """The reason read 'fewer than 3 launchs on a side' (a review helper found it)."""
    arch = tmp_path / "arch"
    ids = [CliRunner().invoke(cli, ["collect", "ncu", "--from-csv", str(export(tmp_path / f"{s}.csv", [v, v + 0.1])),
                                    "-a", str(arch), *STATED]).stdout.strip() for s, v in (("a", 10.0), ("b", 7.0))]
    out = CliRunner().invoke(cli, ["compare", *ids, "-a", str(arch), "--no-record"])
    assert out.exit_code == 0, out.output
    assert "UNDECIDED: fewer than 3 launches on a side" in out.stdout


def test_a_kernel_name_with_a_pipe_reads_whole_in_the_notes_under_the_table(tmp_path):
    """The notes are list items, not table cells: a pipe escaped there showed as '\\|' (a review helper)."""
    arch = tmp_path / "arch"
    kernel = "k<a|b>(float*)"
    ids = [CliRunner().invoke(cli, ["collect", "ncu", "--from-csv", str(export(tmp_path / f"{s}.csv", [v, v + 0.1], kernel)),
                                    "-a", str(arch), *STATED]).stdout.strip() for s, v in (("a", 10.0), ("b", 7.0))]
    out = CliRunner().invoke(cli, ["compare", *ids, "-a", str(arch), "--no-record"])
    assert out.exit_code == 0, out.output
    assert f"- `{kernel}`: UNDECIDED: fewer than 3 launches on a side" in out.stdout.splitlines()
    assert "| `k<a\\|b>(float*)` |" in out.stdout  # in the table the escape is GFM's, and no reader shows it
