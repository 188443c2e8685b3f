"""Hostile input, property-based (hypothesis): random and mutated real exports, random record
bytes and random report Markdown give a clean error or a correct result, never a traceback.
tests/reliability/fuzz.py runs the same properties at volume."""

from __future__ import annotations


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
