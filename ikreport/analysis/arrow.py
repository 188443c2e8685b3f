"""Arrow arrays to and from numpy and str columns, directly through their buffers.

``pa.array``, ``pa.scalar`` and ``ChunkedArray.to_numpy`` ask pyarrow's pandas shim whether
pandas objects are involved, and that imports pandas (a quarter of a second of every
import's start-up) although none ever is here. These give the same arrays without it.

Compute functions are called by name through ``call``: importing ``pyarrow.compute`` (which
``Array.cast`` and the ``pc.*`` functions do) builds a Python wrapper and docstring for each of
its 300 functions at every import's start-up, for the five an import uses.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa

try:  # the extension module behind pyarrow.compute, without the wrappers it generates on import
    from pyarrow._compute import (CastOptions, FunctionOptions, MatchSubstringOptions, ReplaceSubstringOptions,
                                  call_function)
except ImportError:  # a pyarrow that moved it: the public module has the same names
    from pyarrow.compute import (CastOptions, FunctionOptions, MatchSubstringOptions,
                                 ReplaceSubstringOptions, call_function)

__all__ = ["CastOptions", "MatchSubstringOptions", "ReplaceSubstringOptions", "call"]


def call(function: str, *args: Any, options: FunctionOptions | None = None) -> Any:
    """Arrow compute function ``function`` (as ``pyarrow.compute.<function>`` would call it)."""
    return call_function(function, list(args), options)


def _validity(valid: np.ndarray) -> tuple[pa.Buffer | None, int]:
    nulls = int(valid.size - np.count_nonzero(valid))
    if nulls == 0:
        return None, 0
    return pa.py_buffer(np.packbits(valid, bitorder="little").tobytes()), nulls


def float_array(values: np.ndarray) -> pa.Array:
    """float64, NaN as null."""
    values = np.ascontiguousarray(values, dtype=np.float64)
    validity, nulls = _validity(~np.isnan(values))
    return pa.Array.from_buffers(pa.float64(), len(values), [validity, pa.py_buffer(values)], null_count=nulls)


def int_array(values: np.ndarray) -> pa.Array:
    """int64, no nulls."""
    values = np.ascontiguousarray(values, dtype=np.int64)
    return pa.Array.from_buffers(pa.int64(), len(values), [None, pa.py_buffer(values)], null_count=0)


def string_array(values: Sequence[str | None]) -> pa.Array:
    """UTF-8 strings (large offsets, so no size limit), None as null."""
    encoded = [b"" if v is None else v.encode("utf-8") for v in values]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum([len(b) for b in encoded], out=offsets[1:])
    validity, nulls = _validity(np.array([v is not None for v in values], dtype=bool))
    data = pa.py_buffer(b"".join(encoded))
    if offsets[-1] >= 1 << 31:  # past 32-bit offsets: Arrow's cast says so, as it always did
        return call("cast", pa.Array.from_buffers(pa.large_string(), len(encoded), [validity, pa.py_buffer(offsets), data],
                                                  null_count=nulls), options=CastOptions.safe(pa.string()))
    return pa.Array.from_buffers(pa.string(), len(encoded), [validity, pa.py_buffer(offsets.astype(np.int32)), data],
                                 null_count=nulls)


def column(values: np.ndarray | Sequence[str | None]) -> pa.Array:
    """A numpy column (ints, floats with NaN as null, or objects holding str) or a list of str."""
    if not isinstance(values, np.ndarray) or values.dtype == object:
        return string_array(list(values))
    return int_array(values) if values.dtype.kind in "iu" else float_array(values)


def null_string() -> pa.Scalar:
    """A null string scalar."""
    return pa.nulls(1, pa.string())[0]


def _chunks(column: pa.Array | pa.ChunkedArray) -> list[pa.Array]:
    return list(column.chunks) if isinstance(column, pa.ChunkedArray) else [column]


def _valid_bits(chunk: pa.Array) -> np.ndarray | None:
    """Per value, whether it is not null; None when none is null."""
    if chunk.null_count == 0:
        return None
    bitmap = chunk.buffers()[0]
    if bitmap is None:  # a null-typed array
        return np.zeros(len(chunk), dtype=bool)
    bits = np.unpackbits(np.frombuffer(bitmap, dtype=np.uint8), bitorder="little")
    return bits[chunk.offset:chunk.offset + len(chunk)].astype(bool)


def float_values(column: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """A float64 column as numpy, null as NaN."""
    parts = []
    for chunk in _chunks(column):
        data = chunk.buffers()[1]
        if data is None:
            parts.append(np.full(len(chunk), np.nan))
            continue
        values = np.frombuffer(data, dtype=np.float64, count=chunk.offset + len(chunk))[chunk.offset:].copy()
        valid = _valid_bits(chunk)
        if valid is not None:
            values[~valid] = np.nan
        parts.append(values)
    return np.concatenate(parts) if parts else np.empty(0)


def bool_values(column: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """A boolean column as numpy, null as False."""
    parts = []
    for chunk in _chunks(column):
        data = chunk.buffers()[1]
        if data is None:
            parts.append(np.zeros(len(chunk), dtype=bool))
            continue
        bits = np.unpackbits(np.frombuffer(data, dtype=np.uint8), bitorder="little")
        values = bits[chunk.offset:chunk.offset + len(chunk)].astype(bool)
        valid = _valid_bits(chunk)
        parts.append(values & valid if valid is not None else values)
    return np.concatenate(parts) if parts else np.empty(0, dtype=bool)
