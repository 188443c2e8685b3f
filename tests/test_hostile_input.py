"""Hostile input, property-based (hypothesis): random and mutated real exports, random record
bytes and random report Markdown give a clean error or a correct result, never a traceback.
tests/reliability/fuzz.py runs the same properties at volume."""

from __future__ import annotations


import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import FIXTURES, NCU
from ikreport.store import records
from ikreport.analysis.bandwidth_tools import parse_babelstream, parse_nvbandwidth
from ikreport.analysis.ncu.read import read_exports
from ikreport.analysis.nvidia_smi import parse_nvidia_smi
from ikreport.errors import IkreportError
from reliability.fuzz import check_markdown, check_ncu, mutate

EXPORTS = sorted(p.read_bytes() for p in NCU.glob("*.csv"))
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
    try:
        records.decode(data, "r.json")
    except IkreportError:
        pass


@SETTINGS
@given(st.recursive(st.none() | st.booleans() | st.floats(allow_nan=False) | st.text(max_size=20),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
                    max_leaves=20))
def test_random_json_as_a_record(value):
    try:
        records.validate(value, "r.json")
    except IkreportError:
        pass


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
    text = mutate((FIXTURES / fixture).read_bytes(), rng).decode("utf-8", "replace")
    try:
        parse(text, "x.txt")
    except IkreportError:
        pass


@pytest.mark.parametrize("data,message", [
    (b"\xff\xfe\x00\x00garbage", "not a text file"),
    ("\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\"\n\"\",\"\",\"ns\"\n\"0\",\"k\",\"1".encode(), None),
])
def test_truncated_and_binary_exports(data, message):
    if message:
        with pytest.raises(IkreportError, match=message):
            read_exports({"x.csv": data})
    else:
        check_ncu(data)  # a row cut mid-value: parsed or refused, never a crash


def test_wrongly_encoded_file_is_refused_naming_it(tmp_path):
    from click.testing import CliRunner

    from ikreport.cli.main import cli

    latin = tmp_path / "latin1.csv"
    latin.write_bytes('"ID","Kernel Name"\n"0","kernel_\xe9"\n'.encode("latin-1"))
    result = CliRunner().invoke(cli, ["collect", "ncu", "--from-csv", str(latin), "-a", str(tmp_path / "a")])
    assert result.exit_code == 1
    assert result.stderr == f"Error: {latin}: not UTF-8 text (near byte 31); export it again with ncu --csv\n"
