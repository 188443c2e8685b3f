"""Hostile input, property-based (hypothesis): random and mutated real exports, random record
bytes and random report Markdown give a clean error or a correct result, never a traceback.
tests/reliability/fuzz.py runs the same properties at volume."""

from __future__ import annotations


from pathlib import Path

import orjson
import pytest
import rfc8785
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import FIXTURES, NCU, ROOT
from ikreport.store import records
from ikreport.store.archive import Archive
from ikreport.analysis.bandwidth_tools import parse_babelstream, parse_nvbandwidth
from ikreport.analysis.ncu.read import read_exports
from ikreport.analysis.nvidia_smi import parse_nvidia_smi
from ikreport.errors import IkreportError, RecordError
from reliability.fuzz import check_markdown, check_ncu, check_record, mutate, one_line_naming

EXPORTS = sorted(p.read_bytes() for p in NCU.glob("*.csv"))
SAMPLE = Archive.open(ROOT / "sample_evidence")
RECORDS = [SAMPLE.record_bytes(rid) for rid in SAMPLE.record_ids()]
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(st.binary(max_size=4000))
def test_random_bytes_as_an_export(data):
    check_ncu(data)


@SETTINGS
@given(st.integers(0, len(EXPORTS) - 1), st.randoms(use_true_random=False))
def test_mutated_real_exports(which, rng):
    check_ncu(mutate(EXPORTS[which], rng))


CSV_PIECES = ['"', ",", "\n", "\r\n", "ID", "Kernel Name", "Metric Value", "Metric Name", "Section Name",
              "Metric Unit", "0", "1,234.5", "%", "usecond", "n/a", "gpu__time_duration.sum", "Duration"]


@SETTINGS
@given(st.lists(st.sampled_from(CSV_PIECES), max_size=200))
def test_csv_shaped_text(pieces):
    check_ncu('"ID","Kernel Name",' + "".join(pieces))


@SETTINGS
@given(st.binary(max_size=2000))
def test_random_record_bytes(data):
    check_record(data)


@SETTINGS
@given(st.integers(0, len(RECORDS) - 1), st.randoms(use_true_random=False))
def test_mutated_real_records(which, rng):
    check_record(mutate(RECORDS[which], rng))


def test_real_records_are_accepted_and_known_bad_ones_refused_naming_the_file():
    assert all(check_record(data) for data in RECORDS)  # what the properties above mutate is accepted
    record = orjson.loads(RECORDS[0])
    bad = [b"", b"\xff\xfe", b"[]", b"{}", RECORDS[0][:-1], RECORDS[0] + b"\n",
           orjson.dumps(record, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS),  # valid, not canonical
           rfc8785.dumps({k: v for k, v in record.items() if k != "title"}),
           rfc8785.dumps({**record, "schema": "ikreport.record/2"})]
    assert [check_record(data) for data in bad] == [False] * len(bad)


@SETTINGS
@given(st.recursive(st.none() | st.booleans() | st.floats(allow_nan=False) | st.text(max_size=20),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
                    max_leaves=20))
def test_random_json_as_a_record(value):
    # a record needs twelve keys; these objects have at most four, so every one is refused
    with pytest.raises(RecordError) as refused:
        records.validate(value, "r.json")
    one_line_naming(refused.value, "r.json")


@SETTINGS
@given(st.text(max_size=400), st.randoms(use_true_random=False))
def test_random_markdown_with_citations(text, rng):
    check_markdown(text, rng)


@pytest.mark.parametrize("parse,fixture", [
    (parse_nvidia_smi, "nvidia-smi/smi_q_gpukernellab_rtx3060laptop.txt"),
    (parse_nvidia_smi, "nvidia-smi/smi_table_evaldataset_h100x2.txt"),
    (parse_babelstream, "bandwidth/babelstream_alcfguide_a100_v4.0_trailingspaces_excerpt.txt"),
    (parse_nvbandwidth, "bandwidth/nvbandwidth_llmaction_h800x8_v0.2_excerpt.txt"),
])
@SETTINGS
@given(rng=st.randoms(use_true_random=False))
def test_mutated_tool_outputs(parse, fixture, rng):
    """Refused naming the file on one line, or read into what the whole output gives."""
    whole = parse((FIXTURES / fixture).read_text("utf-8"), "x.txt")
    text = mutate((FIXTURES / fixture).read_bytes(), rng).decode("utf-8", "replace")
    try:
        got = parse(text, "x.txt")
    except IkreportError as exc:
        one_line_naming(exc, "x.txt")
        return
    assert sorted(got) == sorted(whole)


@pytest.mark.parametrize("data,message", [
    (b"\xff\xfe\x00\x00garbage", "not a text file"),
    (b"", "the file is empty"),
    (b"hello", "no ncu CSV header"),
    (b'"ID","Kernel Name"\n', "a header but no units row"),
    # a row cut mid-value
    ("\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\"\n\"\",\"\",\"ns\"\n\"0\",\"k\",\"1".encode(),
     "ends inside a quoted field: the export is cut short"),
])
def test_truncated_and_binary_exports_are_refused_naming_the_file(data, message):
    with pytest.raises(IkreportError, match=message) as refused:
        read_exports({"x.csv": data})
    one_line_naming(refused.value, "x.csv")


def test_wrongly_encoded_file_is_refused_naming_it(tmp_path):
    from click.testing import CliRunner

    from ikreport.cli.main import cli

    latin = tmp_path / "latin1.csv"
    latin.write_bytes('"ID","Kernel Name"\n"0","kernel_\xe9"\n'.encode("latin-1"))
    result = CliRunner().invoke(cli, ["collect", "ncu", "--from-csv", str(latin), "-a", str(tmp_path / "a")])
    assert result.exit_code == 1
    assert result.stderr == f"Error: {latin}: not UTF-8 text (near byte 31); export it again with ncu --csv\n"


CUT = [  # (collect arguments, a real tool output saved by a shell): each read as lines
    (["bandwidth", "--from-bandwidthtest"], "bandwidth/bandwidthtest_jdh4_della_a100_cuda11.3_range_dtod_excerpt.txt"),
    (["bandwidth", "--from-babelstream"], "bandwidth/babelstream_uobhpc_titanxp_v3.3_addtriad_faster_than_copy.txt"),
    (["env", "--from-nvidia-smi"], "nvidia-smi/smi_q_gpukernellab_rtx3060laptop.txt"),
    (["env", "--from-nvidia-smi"], "nvidia-smi/smi_table_evaldataset_h100x2.txt"),
    (["nsys", "--from-csv"], "nsys/nsys_kern_sum_llmperfopt_dsocr_projector_rtx5090.csv"),
    (["serving", "--from-aiperf"], "serving/aiperf_example_run1_gptoss20b_profile_export_aiperf.csv"),
]


@pytest.mark.parametrize("command, fixture", CUT)
@pytest.mark.parametrize("share", [0.37, 0.5, 0.91, 0.99])
def test_an_output_cut_in_the_middle_of_a_line_is_refused_not_read_as_smaller_figures(tmp_path, command, fixture,
                                                                                       share):
    """A copy or a run that stopped leaves a last line with no line end: a bandwidthTest table so
    cut read "1000000000 1" as a 1 GB/s peak, an nvidia-smi table one GPU of two, an nsys
    summary a kernel name cut short. The whole output is read, the cut one refused in one line."""
    from click.testing import CliRunner

    from ikreport.cli.main import cli

    data = (FIXTURES / fixture).read_bytes()
    whole = CliRunner().invoke(cli, ["collect", *command, str(FIXTURES / fixture), "-a", str(tmp_path / "a")])
    assert whole.exit_code == 0, whole.output
    cut = tmp_path / "cut.txt"
    cut.write_bytes(data[:int(len(data) * share)].rstrip(b"\n") + b"x")  # never at a line end
    result = CliRunner().invoke(cli, ["collect", *command, str(cut), "-a", str(tmp_path / "b")])
    assert result.exit_code == 1
    assert result.stderr.startswith(f"Error: {cut}: ") and result.stderr.count("\n") == 1
    assert "its last line has no line end, so the output was cut short" in result.stderr
    assert not (tmp_path / "b" / "records").exists() or not any((tmp_path / "b" / "records").rglob("*.json"))


@pytest.mark.parametrize("make", ["device", "zeros"])
def test_a_device_or_a_file_of_nul_bytes_is_refused_before_it_is_read_whole(tmp_path, make):
    """/dev/zero once took 20 GB of memory; a big file of NUL bytes, a minute: both are refused
    from their first bytes, naming the file."""
    from click.testing import CliRunner

    from ikreport.cli.main import cli

    path = Path("/dev/zero") if make == "device" else tmp_path / "zeros.txt"
    if make == "zeros":
        with open(path, "wb") as f:
            f.truncate(64 << 20)  # sparse: no disk, and far more than the look at the start
    for command in (["bandwidth", "--from-babelstream"], ["env", "--from-nvidia-smi"], ["serving", "--from-vllm"],
                    ["ncu", "--from-csv"]):
        result = CliRunner().invoke(cli, ["collect", *command, str(path), "-a", str(tmp_path / "a")])
        assert result.exit_code == 1, result.output
        assert result.stderr.startswith(f"Error: {path}: not a ") and result.stderr.count("\n") == 1


def test_a_file_name_that_is_not_utf8_is_kept_with_replacement_characters(tmp_path):
    """A file name's bytes need not be UTF-8; a record's text must be. The import once stopped
    with a message naming neither the file nor a fix, after storing the blob: the name is now
    kept with U+FFFD for each byte that is not UTF-8, and the record builds and verifies."""
    import os

    from click.testing import CliRunner

    from ikreport.cli.main import cli

    odd = tmp_path / os.fsdecode(b"bad\xff.csv")
    odd.write_bytes((FIXTURES / "ncu" / "ncu_details_llmperfopt_k0009_fmha_cutlass_bf16_rtx5090.csv").read_bytes())
    arch = tmp_path / "a"
    result = CliRunner().invoke(cli, ["collect", "ncu", "--from-csv", str(odd), "-a", str(arch)])
    assert result.exit_code == 0, result.output
    (source,) = Archive.open(arch).load(result.stdout.split()[-1])["sources"]
    assert source["name"] == "bad\ufffd.csv"
    assert CliRunner().invoke(cli, ["verify", str(arch)]).exit_code == 0


def test_a_whole_output_ending_in_spaces_after_its_last_line_end_is_read(tmp_path):
    """Spaces after the last line end (an editor, a pasted excerpt) are no cut line."""
    from click.testing import CliRunner

    from ikreport.cli.main import cli

    path = tmp_path / "babel.txt"
    path.write_bytes((FIXTURES / CUT[1][1]).read_bytes() + b"   ")
    result = CliRunner().invoke(cli, ["collect", "bandwidth", "--from-babelstream", str(path), "-a", str(tmp_path / "a")])
    assert result.exit_code == 0, result.output


def test_an_import_runs_under_a_limit_on_address_space(tmp_path):
    """HPC login nodes limit address space (ulimit -v): reading a small file must not reserve
    room for the biggest one ikreport reads (2 GiB), which failed with a MemoryError traceback."""
    import resource
    import subprocess
    import sys

    limit = 1536 << 20

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    fixture = FIXTURES / "bandwidth" / "babelstream_uobhpc_titanxp_v3.3_addtriad_faster_than_copy.txt"
    result = subprocess.run([sys.executable, "-m", "ikreport", "collect", "bandwidth", "--from-babelstream", str(fixture),
                             "-a", str(tmp_path / "a")], capture_output=True, text=True, preexec_fn=limited)
    assert result.returncode == 0, result.stderr
