"""Issue 12, items 7 and 8: an export cut short or broken is refused, never imported as whole;
a number no hardware can measure is refused, never published. Each error names the file and line."""

from __future__ import annotations

import math
import os
import sys

import pytest
from click.testing import CliRunner

from conftest import FIXTURES
from ikreport.analysis.ncu.read import read_exports
from ikreport.cli.main import cli
from ikreport.errors import ImplausibleValueError, TruncatedExportError

NCU = sorted((FIXTURES / "ncu").glob("ncu_*.csv"))
AGAIN = "export it again with ncu --csv"
CUT = "the last row ends inside a quoted field: the export is cut short; " + AGAIN
BROKEN = "a quoted field does not close on this line (its quoting is broken); " + AGAIN
RAW = '"ID","Kernel Name","gpu__time_duration.sum"\n"","","nsecond"\n'
DETAILS = '"ID","Kernel Name","Section Name","Metric Name","Metric Unit","Metric Value"\n'


def read(data: bytes | str):
    return read_exports({"x.csv": data})


def lines(data: bytes) -> int:
    """The line number of the end of ``data``."""
    return data.count(b"\n") + 1


def refused(data: bytes | str) -> str:
    with pytest.raises(TruncatedExportError) as err:
        read(data)
    return str(err.value)


# -- item 8: an export cut short -------------------------------------------------------------

@pytest.mark.parametrize("fixture", NCU, ids=lambda p: p.stem)
def test_real_export_cut_at_99_percent_is_refused(fixture):
    data = fixture.read_bytes()
    cut = data[: int(len(data) * 0.99)]
    assert refused(cut) == f"x.csv:{lines(cut)}: {CUT}"


@pytest.mark.parametrize("fixture", NCU, ids=lambda p: p.stem)
def test_real_export_cut_anywhere_in_its_last_row_is_refused(fixture):
    """Every cut in the last row is refused, but a cut at a line end: whole rows are all such a
    cut leaves, and it cannot be told from an export with fewer rows."""
    data = fixture.read_bytes()
    start = data.rstrip(b"\r\n").rfind(b"\n") + 1
    # every 5th byte, every cut just after a comma (the subtle case), and the row's last bytes:
    # each cut re-reads the file, and the B200 export's last row alone is 4 kB
    for at in (i for i in range(start, len(data)) if i % 5 == 0 or data[i - 1] == ord(",") or i > len(data) - 64):
        cut = data[:at]
        rest = data[at:].lstrip(b",")
        if cut.endswith((b"\n", b"\r")) or (cut.endswith(b'"') and rest[:1] in (b"\n", b"\r")):
            read(cut)  # whole rows (the last without its line end, or its trailing comma): nothing lost
        else:
            with pytest.raises(TruncatedExportError):
                read(cut)


@pytest.mark.parametrize("fixture", NCU, ids=lambda p: p.stem)
def test_real_export_with_a_quote_lost_in_the_middle_is_refused(fixture):
    data = fixture.read_bytes()
    quote = data.index(b'"', (data.index(b'"ID"') + len(data)) // 2)
    broken = data[:quote] + data[quote + 1:]
    assert refused(broken) == f"x.csv:{lines(data[:quote])}: {BROKEN}"


@pytest.mark.parametrize("fixture", [NCU[0], NCU[-1]], ids=lambda p: p.stem)
def test_crlf_export_cut_short_is_refused(fixture):
    data = fixture.read_bytes().replace(b"\n", b"\r\n")  # as saved on Windows
    cut = data[: int(len(data) * 0.99)]
    assert refused(cut) == f"x.csv:{lines(cut)}: {CUT}"
    whole = read(data).launch_count
    assert read(data[:-1]).launch_count == whole  # cut between CR and LF: every row is whole


def test_a_lost_quote_that_kept_the_row_width_is_refused():
    # '"1","4,096"' without one quote still parses as two fields, "1,4" and '096"': 14, not 1
    text = ('"ID","Kernel Name","launch__grid_size","launch__block_size"\n"","","",""\n'
            '"0","k","1","4,096"\n"1","k","1,"4,096"\n')
    assert refused(text) == f"x.csv:4: {BROKEN}"


@pytest.mark.parametrize("text,line", [
    (RAW + '"0","a","100"\n"1","b","2', 4),  # raw: cut mid-value
    (DETAILS + '"0","k","S","Duration","ns","1"\n"1","k","S","Dur', 3),  # details
    (RAW + '"0","a","100"\n"1","b","200\n', 4),  # cut, then a line end added
])
def test_small_export_cut_mid_field_is_refused(text, line):
    assert refused(text).startswith(f"x.csv:{line}: ")


@pytest.mark.parametrize("text,line", [
    (RAW + '"0","a","100"\n"1","b",', 4),  # raw: cut after a comma; the empty last field would pass
    (DETAILS + '"0","k","S","Duration","ns",', 2),  # details: cut just before the value
])
def test_unterminated_last_row_without_a_closing_quote_is_refused(text, line):
    assert refused(text) == (f"x.csv:{line}: the last row ends without a closing quote or a line end: the export "
                             f"is cut short; {AGAIN}")


def test_unclosed_quote_in_the_middle_is_refused_naming_its_line():
    text = RAW + '"0","a","100"\n"1","b,"200"\n"2","c","300"\n'
    assert refused(text) == f"x.csv:4: {BROKEN}"
    text = (DETAILS + '"0","k","S","Duration","ns","1"\n"1","k","S,"Duration","ns","2"\n'
            '"2","k","S","Duration","ns","3"\n')
    assert refused(text) == f"x.csv:3: {BROKEN}"


def test_details_row_of_the_wrong_width_is_refused():
    text = DETAILS + '"0","k","S","Duration","ns","1"\n"1","k","S","Duration"\n'
    assert refused(text) == ("x.csv:3: a row of 4 fields under a header of 6 (cut short, or its quoting is broken); "
                             + AGAIN)


def test_details_rule_row_cut_to_a_metric_row_width_is_refused():
    # metric rows may end after Metric Value; a rule row (no metric name) may not
    header = DETAILS.rstrip("\n") + ',"Rule Name","Rule Type","Rule Description"\n'
    ok = header + '"0","k","S","Duration","ns","1"\n"0","k","S","","","","R","OPT","d"\n'
    assert read(ok).launch_count == 1
    cut = header + '"0","k","S","Duration","ns","1"\n"0","k","S","","",""\n'
    assert refused(cut).startswith("x.csv:3: a row of 6 fields under a header of 9 ")


def test_line_numbers_count_the_chatter_lines_taken_out():
    text = ("==PROF== Connected\n" + RAW + "program output\n" + '"0","a","100"\n' + "==PROF== Disconnected\n"
            + '"1","b","200"\n"2","c"\n')
    assert refused(text).startswith("x.csv:8: a row of 2 fields under a header of 3 ")


def test_a_row_that_lost_its_first_quote_is_not_dropped_as_chatter():
    text = RAW + '"0","a","100"\n1","b","200"\n"2","c","300"\n'
    assert refused(text) == ("x.csv:4: a CSV row that does not start with a quote (its quoting is broken); "
                             + AGAIN)


def test_header_cut_short_is_refused():
    assert refused('"ID","Kernel Name","gpu__ti') == f"x.csv:1: the header row ends inside a quoted field: " \
                                                    f"the export is cut short; {AGAIN}"


def test_cut_export_is_refused_by_the_cli_and_nothing_is_written(tmp_path):
    data = (FIXTURES / "ncu" / "ncu_raw_roofline_decodebench_b200_16kernels_preamble.csv").read_bytes()
    cut = tmp_path / "cut.csv"
    cut.write_bytes(data[: int(len(data) * 0.99)])
    arch = tmp_path / "arch"
    result = CliRunner().invoke(cli, ["collect", "ncu", "--from-csv", str(cut), "-a", str(arch)])
    assert result.exit_code == 1
    assert result.stderr == f"Error: {cut}:20: {CUT}\n"
    assert written(arch) == []


# -- item 7: numbers no hardware can measure ----------------------------------------------------

RAW_SOL = ('"ID","Kernel Name","gpu__time_duration.sum","sm__throughput.avg.pct_of_peak_sustained_elapsed",'
           '"dram__bytes_read.sum"\n"","","usecond","%","Mbyte"\n"0","k","5","50","1"\n')
NCU_FIX = "the export is damaged or edited; export it again with ncu --csv"
PERCENT_FIX = ("ncu prints such a value only for a metric it could not collect accurately (a launch too small to "
               "fill the GPU), or the file was edited; profile a larger launch, or leave this kernel out with "
               "ncu --kernel-name")


@pytest.mark.parametrize("row,message", [
    ('"1","k","5","250","1"', "sm_pct is 250 %, above 101 % (more than rounding can put over 100 %)"),
    ('"1","k","5","-0.5","1"', "sm_pct is -0.5 %, below zero"),
    ('"1","k","-5","50","1"', "duration_ns is -5000 ns, below zero"),
    ('"1","k","1e400","50","1"', "duration_ns is inf, not a finite number"),
    ('"1","k","5","50","-1"', "dram_read_bytes is -1e+06 byte, below zero"),
    # 1 GB in 5 us: 200,000 GB/s
    ('"1","k","5","50","1,000"', "DRAM bytes read + written over the duration is 200000 GB/s, above 50000 GB/s, "
                                 "more than any GPU's memory moves"),
])
def test_implausible_raw_values_are_refused_naming_the_line(row, message):
    with pytest.raises(ImplausibleValueError) as err:
        read(RAW_SOL + row + "\n")
    assert str(err.value) == f"x.csv:4: {message}; {PERCENT_FIX if ' %' in message else NCU_FIX}"


def test_percent_within_rounding_of_100_is_accepted():
    [launch] = read(RAW_SOL.replace('"50"', '"100.9"')).launches
    assert launch["sm_pct"] == 100.9


def test_implausible_details_value_is_refused_naming_its_own_line():
    text = DETAILS + "".join(f'"0","k","GPU Speed Of Light Throughput","{metric}","{unit}","{value}"\n'
                             for metric, unit, value in [("Duration", "usecond", "5"), ("DRAM Throughput", "%", "40"),
                                                         ("Compute (SM) Throughput", "%", "180")])
    with pytest.raises(ImplausibleValueError) as err:
        read(text)
    assert str(err.value) == ("x.csv:4: sm_pct is 180 %, above 101 % (more than rounding can put over 100 %); "
                              + PERCENT_FIX)
    rate = DETAILS + '"0","k","Memory Workload Analysis","Memory Throughput","Tbyte/s","900"\n'
    with pytest.raises(ImplausibleValueError, match=r"^x.csv:2: dram_bytes_per_s is 900000 GB/s, above 50000 GB/s"):
        read(rate)


BABEL = FIXTURES / "bandwidth" / "babelstream_alcfguide_a100_v4.0_trailingspaces_excerpt.txt"
BW_FIX = "the output is damaged or edited, or the run was broken; run the tool again"
COPY_ROW = "Copy        1394571.325 0.00038     0.00039     0.00039     "


@pytest.mark.parametrize("old,new,line,message", [
    ("1394571.325", "1e30", 11, "Copy bandwidth is 1e+27 GB/s, above 50000 GB/s, more than any GPU's memory moves"),
    # the MB/s column is plausible; an average below the minimum cannot come from one run
    (COPY_ROW, COPY_ROW.replace("0.00039     0.00039", "0.00039     0.000000001"), 11,
     "Copy times are out of order (minimum 0.00038 s, average 1e-09 s, maximum 0.00039 s)"),
    ("268.4 MB", "268400000 MB", 11, "Copy 1.39457e+06 MB/s does not follow from its minimum time 0.00038 s for "
                                     "2 arrays of 2.684e+08 MB (384.92 s)"),
    ("268.4 MB", "-268.4 MB", 6, "the array size is -268.4 MB, below zero"),
    ("1356858.489", "nan", 12, "Mul bandwidth is nan, not a finite number"),
    ("1394571.325", "-1394571.325", 11, "Copy bandwidth is -1394.57 GB/s, below 1 GB/s, less than any memory moves"),
    ("1356858.489", "13.000", 12, "Mul bandwidth is 0.013 GB/s, below 1 GB/s, less than any memory moves"),
    ("0.00059     0.00059     0.00059", "0.00059     0.00059     -0.00059", 13, "Add average time is -0.00059 s, "
                                                                                  "below zero"),
])
def test_implausible_babelstream_is_refused_and_nothing_written(tmp_path, old, new, line, message):
    text = BABEL.read_text()
    assert old in text
    out = tmp_path / "babel.txt"
    out.write_text(text.replace(old, new, 1))
    arch = tmp_path / "arch"
    result = CliRunner().invoke(cli, ["collect", "bandwidth", "--from-babelstream", str(out), "-a", str(arch)])
    assert result.exit_code == 1
    assert result.stderr == f"Error: {out}:{line}: {message}; {BW_FIX}\n"
    assert written(arch) == []


@pytest.mark.parametrize("value,message", [
    ("1e30", "is 2e+30 GB/s, above 50000 GB/s, more than any GPU's memory moves"),
    ("-1656.21", "is -3312.42 GB/s, below 1 GB/s, less than any memory moves"),
    ("inf", "is inf, not a finite number"),
])
def test_implausible_nvbandwidth_is_refused_and_nothing_written(tmp_path, value, message):
    out = tmp_path / "nvb.txt"
    out.write_text("nvbandwidth Version: v0.7\nDevice 0: NVIDIA H100 80GB HBM3\n\nRunning device_local_copy.\n"
                   f"memcpy local GPU(column) bandwidth (GB/s)\n           0\n 0   {value}\n\n"
                   f"SUM device_local_copy {value}\n")
    arch = tmp_path / "arch"
    result = CliRunner().invoke(cli, ["collect", "bandwidth", "--from-nvbandwidth", str(out), "-a", str(arch)])
    assert result.exit_code == 1
    assert result.stderr == f"Error: {out}:7: GPU 0's device-local copy, doubled to read+write {message}; {BW_FIX}\n"
    assert written(arch) == []


@pytest.fixture
def standins(monkeypatch, tmp_path):
    """Stand-in nvidia-smi on PATH and stand-in cupy (tests/standins), gone after the test."""
    standins = FIXTURES.parent / "standins"
    monkeypatch.setenv("PATH", f"{standins}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("IK_STANDIN_STATE", str(tmp_path))
    monkeypatch.setenv("IK_STANDIN_LOG", str(tmp_path / "args.log"))
    for var in ("IK_STANDIN_SMI_FAIL", "IK_STANDIN_SMI_CHANGE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.syspath_prepend(str(standins / "python"))
    import standin_gpu

    yield standin_gpu
    for name in ("cupy", "torch", "pynvml", "standin_gpu"):
        sys.modules.pop(name, None)


@pytest.mark.parametrize("rate,message", [
    (1e30, "its bandwidth is 1e+21 GB/s, above 50000 GB/s, more than any GPU's memory moves"),
    (math.inf, "its time is 0 s, not above zero"),  # a copy timed as taking no time at all
])
def test_live_measurement_of_nonsense_writes_no_record(tmp_path, standins, monkeypatch, rate, message):
    monkeypatch.setattr(standins, "RATE", rate)
    arch = tmp_path / "arch"
    result = CliRunner().invoke(cli, ["collect", "bandwidth", "--backend", "cupy", "--size-mib", "256",
                                      "--repeats", "2", "-a", str(arch)])
    assert result.exit_code == 1
    assert result.stderr == (f"Error: collect bandwidth: sample 1 of 2 (256 MiB copy): {message}; the GPU's timer "
                             "gave nonsense, so nothing was written; run it again\n")
    assert written(arch) == []  # neither the bandwidth record nor its environment record


def written(arch) -> list:
    return sorted(str(p.relative_to(arch)) for p in arch.rglob("*") if p.is_file()) if arch.exists() else []


def test_implausible_raw_value_after_blank_lines_and_chatter_names_its_line():
    text = RAW_SOL + "\n" + '"1","k","5","50","1"\n' + "==PROF== x\n\n" + '"2","k","5","250","1"\n'
    with pytest.raises(ImplausibleValueError, match=r"^x.csv:8: sm_pct is 250 %"):
        read(text)


def test_a_short_row_is_named_even_when_an_earlier_row_starts_like_it():
    text = RAW + '"1","b","200"\n"1","b"\n'
    assert refused(text).startswith("x.csv:4: a row of 2 fields under a header of 3 ")
