"""The ncu parser on small hand-made exports: one quirk per test."""

from __future__ import annotations

import pytest

from ikreport.analysis.ncu.read import read_exports
from ikreport.analysis.ncu.summary import bound_label, memory_side, occupancy_limiter
from ikreport.analysis.units import to_number, unit_kind
from ikreport.errors import MismatchedExportsError, NcuExportError, TruncatedExportError

DETAILS_HEADER = '"ID","Kernel Name","Section Name","Metric Name","Metric Unit","Metric Value"'


def details(*rows: str, header: str = DETAILS_HEADER, newline: str = "\n") -> str:
    return newline.join([header, *rows]) + newline


def read(text: str, name: str = "x.csv"):
    return read_exports({name: text})


@pytest.mark.parametrize("unit,expected", [
    ("usecond", ("time", 1e3)), ("us", ("time", 1e3)), ("nsecond", ("time", 1.0)), ("ms", ("time", 1e6)),
    ("Gbyte/second", ("byte_rate", 1e9)), ("Gbyte/s", ("byte_rate", 1e9)), ("TB/s", ("byte_rate", 1e12)),
    ("byte/s", ("byte_rate", 1.0)), ("Kbyte", ("bytes", 1e3)), ("Mbyte", ("bytes", 1e6)), ("byte", ("bytes", 1.0)),
    ("%", ("percent", 1.0)), ("block", ("count", 1.0)), ("register/thread", ("count", 1.0)), ("", ("count", 1.0)),
    ("cycle/nsecond", ("frequency", 1e9)), ("Gbyte/ms", None), ("hz", ("frequency", 1.0)), ("Ghz", ("frequency", 1e9)),
    ("cycle/second", ("frequency", 1.0)),
])
def test_unit_kinds(unit, expected):
    assert unit_kind(unit) == expected


def test_values_never_read_in_the_wrong_dimension():
    assert to_number("1,234.5", "usecond", "time") == pytest.approx(1_234_500.0)
    assert to_number("763", "Gbyte/s", "bytes") is None  # a rate is not an amount
    assert to_number("43", "%", "byte_rate") is None  # a percentage is not a byte rate
    assert to_number("43", "", "percent") == 43.0  # a bare number is accepted as a percentage
    assert to_number("5", "block", "percent") is None
    assert to_number("n/a", "", "count") is None
    assert to_number("CachePreferNone", "", "count") is None


def test_crlf_and_trailing_comma_rows():
    text = details(
        '"1","k(int)","GPU Speed Of Light Throughput","Duration","usecond","2.50",',
        '"1","k(int)","GPU Speed Of Light Throughput","DRAM Throughput","%","70.1",',
        newline="\r\n",
    )
    [s] = read(text).launches
    # SM throughput is not in this export: unknown, never read as 0 (issue 14 item 1)
    assert s["duration_us"] == 2.5 and s["dram_pct"] == 70.1 and s["bound"] == "unknown"


def test_body_item_label_column_and_extra_columns_anywhere():
    header = '"ID","Kernel Name","Body Item Label","Section Name","Metric Name","Metric Unit","Metric Value","Rule Name"'
    text = details('"0","k","","GPU Speed Of Light Throughput","Compute (SM) Throughput","%","81.0",""', header=header)
    [s] = read(text).launches
    assert s["sm_pct"] == 81.0 and s["bound"] == "unknown"  # no memory throughput: no bound named


def test_warning_lines_between_csv_lines_are_chatter():
    text = "\n".join([
        "==PROF== Connected to process 1",
        "==WARNING== Found outstanding GPU clock reset",
        DETAILS_HEADER,
        '"0","k","GPU Speed Of Light Throughput","Duration","nsecond","1,500"',
        "==PROF== Disconnected from process 1",
        '"1","k","GPU Speed Of Light Throughput","Duration","nsecond","1,700"',
    ])
    assert [s["duration_us"] for s in read(text).launches] == [1.5, 1.7]


def test_string_values_in_numeric_fields_are_listed_not_guessed():
    text = details('"0","k","Launch Statistics","Registers Per Thread","register/thread","lots"')
    [s] = read(text).launches
    assert s["registers"] is None
    assert s["unparsed_units"] == ["registers: 'lots' 'register/thread'"]


def test_memory_throughput_percent_is_not_a_byte_rate():
    # --set basic: no Memory Workload Analysis; the only "Memory Throughput" is the SOL one, in %
    text = details('"0","k","Speed Of Light","Memory Throughput","%","43"')
    [s] = read(text).launches
    assert s["dram_gbs"] is None
    assert s["mem_pct"] == 43.0  # renamed section: the name is accepted because its unit is of the right kind
    text = details('"0","k","Memory Workload Analysis","Memory Throughput","Gbyte/ms","43"')
    [s] = read(text).launches
    assert s["dram_gbs"] is None and s["unparsed_units"] == ["dram_bytes_per_s: '43' 'Gbyte/ms'"]


def test_renamed_section_accepted_when_the_name_is_unambiguous():
    text = details('"0","k","Occupancy Stats","Achieved Occupancy","%","55.5"')
    [s] = read(text).launches
    assert s["occupancy_achieved_pct"] == 55.5


RAW_HEADER = ('"ID","Kernel Name","gpu__time_duration.sum","dram__bytes_op_read.sum","dram__bytes_op_write.sum",'
              '"smsp__pcsamp_warps_issue_stalled_long_scoreboard","smsp__pcsamp_warps_issue_stalled_long_scoreboard_not_issued",'
              '"smsp__pcsamp_warps_issue_stalled_selected","smsp__pcsamp_warps_issue_stalled_wait",'
              '"smsp__average_warps_issue_stalled_wait_per_issue_active.ratio"')


def test_raw_2025_op_byte_names_and_pcsamp_stalls_preferred():
    text = "\n".join([
        RAW_HEADER,
        '"","","usecond","Mbyte","Mbyte","","","","",""',
        '"0","gemv<float, 4>(float*, int)","10.00","4.00","1.00","300","250","900","100","1.5"',
    ])
    [s] = read(text).launches
    assert s["dram_gbs"] == 500.0  # 5 Mbyte in 10 us
    # samples, not shares: with no compute capability, whether every warp state was sampled is unknown
    assert [(t["reason"], t["value"], t["share_pct"], t["source"]) for t in s["top_stalls"]] == [
        ("long_scoreboard", 300, None, "pcsamp"), ("wait", 100, None, "pcsamp")]
    assert s["kernel"] == "gemv<float, 4>(float*, int)"


def test_raw_row_of_the_wrong_width_is_refused():
    # skipping it dropped launch 1 without a word (issue 12, item 8)
    text = "\n".join(['"ID","Kernel Name","gpu__time_duration.sum"', '"","","nsecond"',
                      '"0","a","100"', '"1","b"', '"2","c","300"'])
    with pytest.raises(TruncatedExportError) as err:
        read(text)
    assert str(err.value) == ("x.csv:4: a row of 2 fields under a header of 3 (cut short, or its quoting is broken); "
                              "export it again with ncu --csv")


@pytest.mark.parametrize("text,message", [
    ("", "x.csv: the file is empty; export a report with 'ncu --import REPORT --csv'"),
    ("==PROF== Connected to process 7\n==WARNING== No kernels were profiled.\n",
     "x.csv: no CSV in this file; ncu said: ==WARNING== No kernels were profiled."),
    ("a,b\n1,2\n", 'x.csv: no ncu CSV header ("ID",...,"Kernel Name",...) found; '
                   "export with 'ncu --import REPORT --csv --page raw' or '--page details'"),
    ("\x00\x01binary", "x.csv: not a text file; give the CSV from 'ncu --import REPORT --csv'"),
    (DETAILS_HEADER + "\n", "x.csv: the details page has a header but no kernel launches"),
])
def test_bad_exports_give_one_clear_line(text, message):
    with pytest.raises(NcuExportError) as err:
        read(text)
    assert str(err.value) == message


def test_two_exports_of_the_same_page_are_refused():
    text = details('"0","k","GPU Speed Of Light Throughput","Duration","usecond","1"')
    with pytest.raises(NcuExportError, match="a second details page"):
        read_exports({"a.csv": text, "b.csv": text})


# The branches of ncu's SOLBottleneck rule (SpeedOfLight section): latency_bound_threshold 60,
# no_bound_threshold 80, balanced_threshold 10; the side is compute when sm >= mem.
@pytest.mark.parametrize("memory,sm,label", [
    (None, None, "unknown"), (70, None, "unknown"), (70, 20, "memory-bound"), (20, 70, "compute-bound"),
    (65, 65, "balanced"), (69.9, 60.0, "balanced"), (70, 60, "memory-bound"), (60, 0, "memory-bound"),
    (59.9, 59.9, "latency-bound"), (50, 10, "latency-bound"), (30, 30, "latency-bound"),
    (85, 78, "memory-bound"), (80, 80, "compute-bound"), (75, 80, "compute-bound"),
])
def test_bound_label_follows_ncu_sol_bottleneck_thresholds(memory, sm, label):
    assert bound_label(memory, sm) == label


def test_memory_side_names_the_level():
    assert memory_side(8.13, 61.83) == (61.83, "cache")
    assert memory_side(61.84, 61.84) == (61.84, "dram")
    assert memory_side(None, 50.0) == (50.0, "unknown")
    assert memory_side(None, None) == (None, "unknown")


def test_occupancy_limiter_is_the_smallest_block_limit():
    assert occupancy_limiter({"limit_registers": 5, "limit_shared_mem": 2, "limit_warps": 12}) == "shared memory"
    assert occupancy_limiter({"limit_blocks": 16}) == "blocks per SM"
    assert occupancy_limiter({}) is None


# Regressions found by tests/test_hostile_input.py and tests/reliability/fuzz.py


def test_raw_page_whose_first_row_is_short_is_refused():
    text = "\n".join(['"ID","Kernel Name","gpu__time_duration.sum","launch__registers_per_thread"',
                      '"","","nsecond","register/thread"', '"0","a"', '"1","b","300","32"'])
    with pytest.raises(TruncatedExportError, match=r"^x.csv:3: a row of 2 fields under a header of 4 "):
        read(text)


def test_invalid_utf8_bytes_are_refused_naming_the_byte():
    data = b'"ID","Kernel Name","gpu__time_duration.sum"\n"","","ns"\n"0","k\xe9","5"\n'
    with pytest.raises(NcuExportError, match=r"^x.csv: not UTF-8 text \(near byte 61\)"):
        read_exports({"x.csv": data})


def test_a_stray_carriage_return_in_a_field_is_read_not_a_crash():
    quoted = DETAILS_HEADER + '\n"0","k","S","Duration","ns","1"\n"1","k\r2","S","Duration","ns","2"\n'
    assert [(s["id"], s["kernel"]) for s in read(quoted).launches] == [("0", "k"), ("1", "k\r2")]
    unquoted = DETAILS_HEADER + '\n"0","k","S","Duration","ns","1"\n"1",k\r2,"S","Duration","ns","2"\n'
    with pytest.raises(TruncatedExportError, match=r"^x.csv:3: not a CSV line"):  # a broken row, not dropped
        read(unquoted)


# A raw and a details page given together must be of one run (issue 14 item 10).
SAME_RUN_RAW = "\n".join([
    '"ID","Kernel Name","Grid Size","Block Size","gpu__time_duration.sum"',
    '"","","","","usecond"',
    '"0","copy(float*)","(64, 1, 1)","(256, 1, 1)","10.00"',
    '"1","scale(float*)","(64, 1, 1)","(256, 1, 1)","20.00"',
]) + "\n"


def same_run_details(kernel0: str = "copy(float*)", grid0: str = "64", ids: tuple[str, ...] = ("0", "1")) -> str:
    names = {"0": kernel0, "1": "scale(float*)", "2": "other(float*)"}
    grids = {"0": grid0, "1": "64", "2": "64"}
    rows = []
    for i in ids:
        rows.append(f'"{i}","{names[i]}","Launch Statistics","Grid Size","","{grids[i]}"')
        rows.append(f'"{i}","{names[i]}","GPU Speed Of Light Throughput","Compute (SM) Throughput","%","40.5"')
    return details(*rows)


def test_raw_and_details_of_one_run_merge():
    p = read_exports({"raw.csv": SAME_RUN_RAW, "details.csv": same_run_details()})
    assert [s["sm_pct"] for s in p.launches] == [40.5, 40.5]  # filled from the details page
    assert [s["duration_us"] for s in p.launches] == [10.0, 20.0]


@pytest.mark.parametrize("changed, message", [
    ({"kernel0": "other(float*)"}, "details.csv: launch ID 0 has kernel 'other(float*)' here but 'copy(float*)' in raw.csv"),
    ({"grid0": "128"}, "details.csv: launch ID 0 has grid '128' here but '64' in raw.csv"),
    ({"ids": ("0",)}, "details.csv: has no launch ID 1, which raw.csv has"),
    ({"ids": ("0", "1", "2")}, "details.csv: launch ID 2 is not in raw.csv"),
])
def test_raw_and_details_of_different_runs_are_refused(changed, message):
    with pytest.raises(MismatchedExportsError) as caught:
        read_exports({"raw.csv": SAME_RUN_RAW, "details.csv": same_run_details(**changed)})
    assert str(caught.value).startswith(message + "; the two are not one run: export both pages from one report")


# Issue 14 items 1 and 3: a missing side is unknown, and occupancy limiters say only what holds.
def test_a_missing_side_of_the_speed_of_light_pair_names_no_bound():
    assert bound_label(None, 88.9) == "unknown" and bound_label(22.3, None) == "unknown"
    assert bound_label(95.0, 30.0) == "memory-bound" and bound_label(20.0, 30.0) == "latency-bound"


@pytest.mark.parametrize("fields, limiter", [
    ({"limit_registers": 2, "limit_shared_mem": 2, "limit_warps": 12}, "registers + shared memory"),
    ({"limit_registers": 5, "limit_shared_mem": 2, "limit_warps": 12, "occupancy_theoretical_pct": 50}, "shared memory"),
    ({"limit_registers": 5, "limit_warps": 2, "occupancy_theoretical_pct": 100}, None),  # full: nothing limits
    ({}, None),
])
def test_occupancy_limiter_ties_and_full_occupancy(fields, limiter):
    assert occupancy_limiter(fields) == limiter


def _claims_of(first: dict) -> list[str]:
    from ikreport.kinds.ncu_profile.claims import profile_claims
    from ikreport.store.recordset import RecordSet

    kernel = {"kernel": "k(int)", "launches": 1, "total_us": 5.0, "mean_us": 5.0, "share_pct": 100.0,
              "bound": bound_label(first.get("memory_pct"), first.get("sm_pct")), "bound_launches": 1,
              "first_launch": {"kernel": "k(int)", **first}}
    record = {"kind": "ncu-profile", "title": "t", "limitations": ["l"], "data": {
        "launch_count": 1, "kernel_count": 1, "profiled_time_us": 5.0, "kernels": [kernel], "launches": []}}
    return [c.text for c in profile_claims("a" * 64, record, RecordSet.of({"a" * 64: record}))]


def test_claims_say_what_is_known_and_never_limited_by_warps_at_full_occupancy():
    texts = _claims_of({"sm_pct": 88.9, "memory_pct": None, "occupancy_theoretical_pct": 100.0,
                        "occupancy_achieved_pct": 10.8, "occupancy_limiter": "warps", "waves": 0.03})
    assert "k: SM at 88.9% of peak; memory throughput not captured, so no bound is named (first launch)." in texts
    [occupancy] = [t for t in texts if "occupancy" in t]
    assert occupancy.startswith("k reaches full theoretical occupancy: no resource limits it")
    assert "the grid fills 0.03 of a wave" in occupancy and "warps" not in occupancy
    tie = _claims_of({"occupancy_theoretical_pct": 50.0, "occupancy_limiter": "registers + shared memory"})
    assert ("k's occupancy is limited by registers and shared memory alike (theoretical 50.0%): a tie, so "
            "reducing one of them alone gains nothing.") in tie


def test_ncu_rule_findings_are_shown_and_a_disagreeing_label_is_said():
    rules = [{"rule": "SOLBottleneck", "section": "SpeedOfLight", "type": "OPT",
              "description": "Memory is more heavily utilized than Compute: Look at the Memory Workload Analysis."}]
    texts = _claims_of({"memory_pct": 62.0, "sm_pct": 75.0, "ncu_rules": rules})
    [found] = [t for t in texts if t.startswith("ncu's rules on k")]
    assert found == ("ncu's rules on k (first launch) say: SOLBottleneck (OPT): Memory is more heavily utilized than "
                     "Compute: Look at the Memory Workload Analysis. (ikreport's label, compute-bound, disagrees "
                     "with ncu's SOLBottleneck rule, which finds it memory-bound.)")
    agreeing = _claims_of({"memory_pct": 80.0, "sm_pct": 30.0, "ncu_rules": rules})
    assert not any("disagrees" in t for t in agreeing)
    assert not any(t.startswith("ncu's rules") for t in _claims_of({"memory_pct": 80.0, "sm_pct": 30.0}))


@pytest.mark.parametrize("cells", [
    ["12", "0.58", "1e3", "-4", "+5", "1.", ".5", "1.5E-2", "0"],  # all plain numbers: read by one cast
    ["2,104,704", "112,183.50", "n/a", "", " 7 ", "nan", "inf", "-Infinity", "NaN", "1e999", "0x10", "1_000",
     "12abc", ".", "1e", "--1", "1,2.5", "e5"],
])
def test_raw_page_numbers_are_read_as_the_one_number_rule_reads_each_cell(cells):
    import numpy as np
    import pyarrow as pa

    from ikreport.analysis.ncu.raw import _numbers
    from ikreport.analysis.units import parse_number

    values = _numbers(pa.chunked_array([pa.array(cells, pa.string())]))
    expected = [parse_number(c) for c in cells]
    assert [None if np.isnan(v) else v for v in values] == expected
