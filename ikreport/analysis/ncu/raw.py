"""Read ``ncu --csv --page raw`` exports: one row per launch, one column per metric.

Layout: header row of metric names (``gpu__time_duration.sum``...), then a units row
(``ns``, ``%``, ``byte``, ``""``), then one row per launch. Values may carry thousands
separators (``"2,104,704"``, ``"112,183.50"``), be ``n/a``, or be strings in columns that
look numeric. Only the columns a summary needs are parsed, column-wise with pyarrow and
numpy, so a 20,000-launch export with 475 columns costs little more than reading it, and a
block of rows at a time (``raw_blocks``), so the page's launches are never whole in memory
unless the caller joins the blocks (``LaunchTable.concat``, to merge with a details page).
A row of another width than the header (cut short, or its quoting broken) is refused, naming
its line: skipping it would drop a launch without a word.
"""

from __future__ import annotations


import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv

from ikreport.analysis.arrow import (CastOptions, MatchSubstringOptions, ReplaceSubstringOptions, bool_values, call,
                                     float_values, null_string)
from ikreport.analysis.ncu.export import Export, csv_row
from ikreport.analysis.ncu.launch import dims_product
from ikreport.analysis.ncu.metrics import FIELD_KIND, RAW_FIELDS, STALL_PATTERNS, stall_reason
from ikreport.analysis.ncu.roofline import INT_OPS, counted_twice, flop_term, metric_label, raw_section_columns
from ikreport.analysis.ncu.table import LaunchTable, check_plausible
from ikreport.analysis.units import NOT_AVAILABLE, NUMBER_RX, unit_factor
from ikreport.errors import NcuExportError, TruncatedExportError

BLOCK_BYTES = 2 << 20
NOT_AVAILABLE_RX = "^(?:" + "|".join(re.escape(v) for v in sorted(NOT_AVAILABLE)) + ")$"
_NOT_AVAILABLE = MatchSubstringOptions(NOT_AVAILABLE_RX)
_NUMBER = MatchSubstringOptions(NUMBER_RX.pattern)
_NO_COMMA = ReplaceSubstringOptions(",", "")
_TO_FLOAT = CastOptions.safe(pa.float64())
TEXT_COLUMNS = {
    "id": "ID",
    "kernel": "Kernel Name",
    "cc": "CC",
    "grid_dims": "Grid Size",
    "block_dims": "Block Size",
    "device": "device__attribute_display_name",
}


def _numbers(column: pa.ChunkedArray) -> np.ndarray:
    """Strings -> float64, column-wise; thousands separators dropped, non-numbers NaN."""
    try:
        # The common case, a column of plain numbers, is one cast (a tenth of the time of the
        # checks below). Arrow also casts "nan" and "inf", which are not numbers here, so only a
        # finite result is taken; any other cell Arrow reads is one NUMBER_RX matches.
        values = float_values(call("cast", column, options=_TO_FLOAT))
        if np.isfinite(values).all():
            return values
    except pa.ArrowInvalid:
        pass
    text = call("utf8_trim_whitespace", call("replace_substring", column, options=_NO_COMMA))
    ok = call("match_substring_regex", text, options=_NUMBER)
    return float_values(call("cast", call("if_else", ok, text, null_string()), options=_TO_FLOAT))


def _unreadable(column: pa.ChunkedArray, values: np.ndarray) -> np.ndarray:
    """Rows whose cell holds something that is neither a number nor 'n/a' / empty."""
    unread = np.isnan(values)
    if not unread.any():  # every cell a number: nothing to look at (most columns of most exports)
        return unread
    missing = call("match_substring_regex", call("utf8_trim_whitespace", column), options=_NOT_AVAILABLE)
    return unread & ~bool_values(missing)


def _batches(export: Export, indices: list[int]) -> Iterator[pa.Table]:
    """The rows' ``indices`` columns as strings, a block of rows at a time, so that only one
    block's strings are held at once (a 200,000-launch export's strings cost 230 MB whole)."""
    wrong: list[pacsv.InvalidRow] = []

    def refuse(row: pacsv.InvalidRow) -> str:
        wrong.append(row)  # pyarrow does not know the row's line: found from its text below
        return "error"

    body = export.body
    start = bytes(body[:65536 * 16]).index(b"\n") + 1  # after the units row
    source: pa.NativeFile
    if export.file is not None:  # a big export: rows read from its file, a block at a time
        source = pa.OSFile(export.file)
        source.seek(export.file_offset + start)
    elif bytes(body[-1:]) in (b"\n", b"\r"):
        source = pa.BufferReader(pa.py_buffer(body)[start:])
    else:  # pyarrow reads a lone unterminated row as an empty file: end with a newline (a copy only then)
        source = pa.BufferReader(pa.py_buffer(bytes(body[start:]) + b"\n"))
    # Streamed in small blocks: pyarrow holds every column of a block while parsing it, so big
    # blocks cost memory (16 MB blocks: +107 MB on a 61 MB export; 2 MB: about +25 MB).
    # Column names from the header (not inferred from the first row, which may be short):
    # rows of another width are then invalid, and refused.
    names = [f"f{i}" for i in range(len(export.header))]
    try:
        reader = pacsv.open_csv(
            source,
            read_options=pacsv.ReadOptions(column_names=names, block_size=BLOCK_BYTES),
            parse_options=pacsv.ParseOptions(invalid_row_handler=refuse),
            convert_options=pacsv.ConvertOptions(include_columns=[f"f{i}" for i in indices],
                                                 column_types={f"f{i}": pa.string() for i in indices},
                                                 strings_can_be_null=False),
        )
        for batch in reader:
            yield pa.Table.from_batches([batch])
    except (pa.ArrowInvalid, pa.ArrowKeyError) as exc:
        if wrong:
            row = wrong[0]
            raise TruncatedExportError(
                f"{export.name}:{export.row_line(row.text.encode('utf-8'))}: a row of {row.actual_columns} fields "
                f"under a header of {row.expected_columns} (cut short, or its quoting is broken); "
                "export it again with ncu --csv") from exc
        why = " ".join(str(exc).split())[:160]
        raise NcuExportError(f"{export.name}: the raw page cannot be read ({why}); export it again") from exc
    finally:
        source.close()


@dataclass(frozen=True)
class _Columns:
    """Which columns of the page hold what: the plan every block of rows is read by."""

    units: list[str]
    text: dict[str, int]  # role -> column
    fields: dict[str, int]
    roof: dict[str, int]  # ncu roofline section metric -> column
    flops: dict[str, int]
    stalls: dict[str, int]  # reason -> column, from the one stall source the page is read by
    stall_source: str | None


@dataclass(frozen=True)
class _Part:
    """One block of rows, read: text cells, numbers, and the cells that could not be read."""

    text: dict[str, list[str]]
    fields: dict[str, np.ndarray]
    stalls: dict[str, np.ndarray]
    flops: np.ndarray
    sass: np.ndarray
    problems: dict[int, list[str]]  # launch row (in the block) -> what was unreadable


def _convert(table: pa.Table, columns: _Columns) -> _Part:
    """Read one block of rows into numbers and text."""
    n = table.num_rows
    units = columns.units

    def column(i: int) -> pa.ChunkedArray:
        return table.column(f"f{i}")

    text = {role: column(i).to_pylist() for role, i in columns.text.items()}
    problems: dict[int, list[str]] = {}
    fields: dict[str, np.ndarray] = {}
    for field, i in columns.fields.items():
        values = _numbers(column(i))
        unit = units[i] if i < len(units) else ""
        factor = unit_factor(unit, FIELD_KIND.get(field, "count"))
        bad = _unreadable(column(i), values)
        if factor is None:
            bad = bad | ~np.isnan(values)
            values = np.full(n, np.nan)
        else:
            values = values * factor
        if bad.any():
            cells = column(i).to_pylist()
            for row in np.flatnonzero(bad):
                problems.setdefault(int(row), []).append(f"{field}: {cells[row]!r} {unit!r}")
        fields[field] = values
    for field, dims in (("grid", "grid_dims"), ("block", "block_dims")):
        if field not in fields and dims in text:
            fields[field] = np.array([dims_product(t) or np.nan for t in text[dims]], dtype=float)
    if columns.roof:
        fields.update(raw_section_columns({name: (column(i).to_pylist(), units[i])
                                           for name, i in columns.roof.items()}, n))
    stalls = {reason: _numbers(column(i)) for reason, i in columns.stalls.items()}
    flops = np.full(n, np.nan)
    sass = np.zeros(n, dtype=bool)
    for name, i in columns.flops.items():
        term = flop_term(name)
        assert term is not None  # columns.flops holds only the names it knows
        field, weight = term
        values = _numbers(column(i)) * weight
        present = ~np.isnan(values)
        # per data type (and integer ops apart), then the FLOP total of every float type
        fields[field] = np.where(present, np.nan_to_num(fields.get(field, np.full(n, np.nan))) + values,
                                 fields.get(field, np.full(n, np.nan)))
        if field == INT_OPS:  # integer ops are kept apart from FLOPs
            continue
        flops = np.where(present, np.nan_to_num(flops) + values, flops)
        if "sass" in name:
            sass |= present
    return _Part(text=text, fields=fields, stalls=stalls, flops=flops, sass=sass, problems=problems)


def _plan(export: Export) -> tuple[_Columns, list[int]] | None:
    """Which columns hold what, from the header and units row, and the columns to read; None
    when the page has no rows."""
    if not len(export.body):
        raise TruncatedExportError(f"{export.name}: the raw page has a header but no units row; export it again")
    first = bytes(export.body[:65536 * 16])
    units = csv_row(first.split(b"\n", 1)[0].decode("utf-8", "replace"), export.name, export.header_line + 1)
    if len(units) != len(export.header):
        raise TruncatedExportError(f"{export.name}:{export.file_line(0)}: the units row has {len(units)} fields "
                                   f"under a header of {len(export.header)}; export it again with ncu --csv")
    col: dict[str, int] = {}
    for i, h in enumerate(export.header):
        col.setdefault(h, i)  # a repeated header keeps its first column
    if "ID" not in col:
        raise NcuExportError(f"{export.name}:{export.header_line}: the header has no ID column")
    text_cols = {role: col[name] for role, name in TEXT_COLUMNS.items() if name in col}
    field_cols = {f: next(col[n] for n in names if n in col) for f, names in RAW_FIELDS.items()
                  if any(n in col for n in names)}
    stall_cols: dict[str, dict[str, int]] = {}
    flop_cols: dict[str, int] = {}
    for name, i in col.items():
        found = stall_reason(name)
        if found:
            stall_cols.setdefault(found[0], {})[found[1]] = i
        elif flop_term(name) is not None and not counted_twice(name, col):
            flop_cols[name] = i
    # the metrics behind ncu's roofline sections (--set full), read as the sections read them
    roof_cols = {name: i for name, i in col.items() if metric_label(name) != name}
    if b"\n" not in first:
        return None
    wanted = sorted({*text_cols.values(), *field_cols.values(), *flop_cols.values(), *roof_cols.values(),
                     *(i for reasons in stall_cols.values() for i in reasons.values())})
    source = next((s for s, _ in STALL_PATTERNS if s in stall_cols), None)
    columns = _Columns(units=units, text=text_cols, fields=field_cols, roof=roof_cols, flops=flop_cols,
                       stalls=dict(sorted(stall_cols.get(source, {}).items())) if source else {},
                       stall_source=source)
    return columns, wanted


def raw_blocks(export: Export) -> Iterator[LaunchTable]:
    """The page's launches a block of rows at a time, in profiling order, each refused as it
    comes if it holds a value no GPU can produce (naming the value's file line): the reader of
    a big export that never holds it whole. Repeated text (kernel names, device, grid) shares
    one ``str`` across blocks."""
    plan = _plan(export)
    if plan is None:
        return
    columns, wanted = plan
    shared: dict[str, str] = {}
    start = 0
    for batch in _batches(export, wanted):
        part = _convert(batch, columns)
        n = batch.num_rows
        text = {role: cells if role == "id" else [shared.setdefault(v, v) for v in cells]
                for role, cells in part.text.items()}
        table = LaunchTable(
            ids=text["id"], kernels=text.get("kernel", [""] * n),
            text={k: [v or None for v in text[k]] for k in ("device", "cc", "grid_dims", "block_dims") if k in text},
            fields=part.fields, stalls=part.stalls, stall_source=columns.stall_source if part.stalls else None,
            flops=part.flops, flops_sass=part.sass, problems=part.problems,
            names={f: export.header[i] for f, i in columns.fields.items()},
        )
        # launch row i is CSV record i after the units row (body line 0)
        check_plausible(table, _record_line(export, start))
        yield table
        start += n


def _record_line(export: Export, start: int) -> Callable[[int, str], str]:
    """Where launch row ``i`` of a part starting at CSV record ``start`` is, as FILE:LINE."""
    return lambda i, _field: f"{export.name}:{export.record_line(start + i, skip=1)}"
