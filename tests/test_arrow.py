"""The buffer-level Arrow conversions give what pyarrow's own conversions give (nulls,
slices, chunks, non-ASCII text), and importing an export never imports pandas."""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import NCU, ROOT
from ikreport.analysis.arrow import bool_values, column, float_values, string_array

floats = st.lists(st.one_of(st.none(), st.floats(allow_nan=False, width=64)), max_size=40)
cuts = st.tuples(st.integers(0, 5), st.integers(0, 5))


@settings(max_examples=150, deadline=None)
@given(values=floats, cut=cuts, split=st.integers(0, 40))
def test_float_values_match_pyarrow_for_slices_and_chunks(values, cut, split):
    arr = pa.array(values, pa.float64())
    sliced = arr.slice(min(cut[0], len(values)), max(0, len(values) - cut[0] - cut[1]))
    chunked = pa.chunked_array([sliced.slice(0, split), sliced.slice(split)], pa.float64())
    expected = [math.nan if v is None else v for v in sliced.to_pylist()]
    for got in (float_values(sliced), float_values(chunked)):
        assert len(got) == len(expected)
        assert all((math.isnan(e) and math.isnan(g)) or e == g for e, g in zip(expected, got.tolist(), strict=True))


@settings(max_examples=150, deadline=None)
@given(values=st.lists(st.one_of(st.none(), st.booleans()), max_size=40), cut=cuts)
def test_bool_values_match_pyarrow_with_null_as_false(values, cut):
    arr = pa.array(values, pa.bool_()).slice(cut[0])
    assert bool_values(arr).tolist() == [bool(v) for v in arr.to_pylist()]


@settings(max_examples=150, deadline=None)
@given(values=st.lists(st.one_of(st.none(), st.text()), max_size=30))
def test_string_array_matches_pyarrow(values):
    assert string_array(values).equals(pa.array(values, pa.string()))


@settings(max_examples=100, deadline=None)
@given(values=st.lists(st.one_of(st.just(math.nan), st.floats(allow_nan=False, width=64)), max_size=30))
def test_numpy_columns_match_pyarrow_from_pandas_conversion(values):
    as_float = np.array(values, dtype=np.float64)
    assert column(as_float).equals(pa.array(as_float, from_pandas=True))
    as_int = np.arange(len(values))
    assert column(as_int).equals(pa.array(as_int))
    as_object = np.array([str(v) for v in values], dtype=object)
    assert column(as_object).equals(pa.array(as_object, pa.string()))


def test_importing_an_export_does_not_import_pandas(tmp_path):
    # nor anything else heavy it does not use: each is tenths of a second of every import's start
    # (pyarrow.compute's 0.04 s: its functions are called through analysis/arrow.py's ``call``)
    heavy = ["pandas", "altair", "scipy", "vl_convert", "jinja2", "fsspec", "pyarrow.compute"]
    code = ("import sys; from ikreport.cli.main import main; sys.argv = ['ikreport', 'collect', 'ncu', '--from-csv', "
            f"{str(NCU / 'ncu_raw_roofline_decodebench_b200_16kernels_preamble.csv')!r}, '-a', {str(tmp_path / 'a')!r}]\n"
            "try:\n    main()\nexcept SystemExit as exc:\n    assert not exc.code, exc.code\n"
            f"print([m for m in {heavy!r} if m in sys.modules])")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert done.stdout.strip().splitlines()[-1] == "[]", done.stdout + done.stderr
