"""Read ``ncu --csv --page raw`` exports: one row per launch, one column per metric.

Layout: header row of metric names (``gpu__time_duration.sum``...), then a units row
(``ns``, ``%``, ``byte``, ``""``), then one row per launch. Values may carry thousands
separators (``"2,104,704"``, ``"112,183.50"``), be ``n/a``, or be strings in columns that
look numeric. Only the columns a summary needs are parsed, column-wise with pyarrow and
numpy, so a 20,000-launch export with 475 columns costs little more than reading it.
A row of another width than the header (cut short, or its quoting broken) is refused, naming
its line: skipping it would drop a launch without a word.
"""

from __future__ import annotations


import re

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from ikreport.analysis.arrow import bool_values, float_values, null_string
from ikreport.analysis.ncu_export import Export, csv_row
from ikreport.analysis.ncu_launch import dims_product
from ikreport.analysis.ncu_metrics import FIELD_KIND, RAW_FIELDS, STALL_PATTERNS, flop_weight, stall_reason
from ikreport.analysis.ncu_roofline import flop_term, metric_label, raw_section_columns
from ikreport.analysis.ncu_table import LaunchTable, check_plausible
from ikreport.analysis.units import NOT_AVAILABLE, NUMBER_RX, unit_factor
from ikreport.errors import NcuExportError, TruncatedExportError

BLOCK_BYTES = 2 << 20
NOT_AVAILABLE_RX = "^(?:" + "|".join(re.escape(v) for v in sorted(NOT_AVAILABLE)) + ")$"
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
    text = pc.utf8_trim_whitespace(pc.replace_substring(column, ",", ""))
    ok = pc.match_substring_regex(text, NUMBER_RX.pattern)
    values = pc.cast(pc.if_else(ok, text, null_string()), pa.float64())
    return float_values(values)


def _unreadable(column: pa.ChunkedArray, values: np.ndarray) -> np.ndarray:
    """Rows whose cell holds something that is neither a number nor 'n/a' / empty."""
    missing = pc.match_substring_regex(pc.utf8_trim_whitespace(column), NOT_AVAILABLE_RX)
    return np.isnan(values) & ~bool_values(missing)


def _read(export: Export, indices: list[int]) -> pa.Table:
    wrong: list[pacsv.InvalidRow] = []

    def refuse(row: pacsv.InvalidRow) -> str:
        wrong.append(row)  # pyarrow does not know the row's line: found from its text below
        return "error"

    # a final newline: pyarrow reads a lone unterminated row as an empty file
    body = export.body
    start = bytes(body[:65536 * 16]).index(b"\n") + 1  # after the units row
    # pyarrow reads a lone unterminated row as an empty file: end with a newline (a copy only then)
    rows = pa.py_buffer(body)[start:] if bytes(body[-1:]) in (b"\n", b"\r") else pa.py_buffer(bytes(body[start:]) + b"\n")
    # Streamed in small blocks: pyarrow holds every column of a block while parsing it, so big
    # blocks cost memory (16 MB blocks: +107 MB on a 61 MB export; 2 MB: about +25 MB).
    # Column names from the header (not inferred from the first row, which may be short):
    # rows of another width are then invalid, and refused.
    names = [f"f{i}" for i in range(len(export.header))]
    try:
        reader = pacsv.open_csv(
            pa.BufferReader(rows),
            read_options=pacsv.ReadOptions(column_names=names, block_size=BLOCK_BYTES),
            parse_options=pacsv.ParseOptions(invalid_row_handler=refuse),
            convert_options=pacsv.ConvertOptions(include_columns=[f"f{i}" for i in indices],
                                                 column_types={f"f{i}": pa.string() for i in indices},
                                                 strings_can_be_null=False),
        )
        return pa.Table.from_batches(list(reader), schema=reader.schema)
    except (pa.ArrowInvalid, pa.ArrowKeyError) as exc:
        if wrong:
            row = wrong[0]
            raise TruncatedExportError(
                f"{export.name}:{export.row_line(row.text.encode('utf-8'))}: a row of {row.actual_columns} fields "
                f"under a header of {row.expected_columns} (cut short, or its quoting is broken); "
                "export it again with ncu --csv") from exc
        why = " ".join(str(exc).split())[:160]
        raise NcuExportError(f"{export.name}: the raw page cannot be read ({why}); export it again") from exc


def parse_raw(export: Export) -> LaunchTable:
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
        elif flop_term(name) is not None:
            flop_cols[name] = i
    # the metrics behind ncu's roofline sections (--set full), read as the sections read them
    roof_cols = {name: i for name, i in col.items() if metric_label(name) != name}
    if b"\n" not in first:
        return LaunchTable(ids=[], kernels=[], text={}, fields={})
    wanted = sorted({*text_cols.values(), *field_cols.values(), *flop_cols.values(), *roof_cols.values(),
                     *(i for reasons in stall_cols.values() for i in reasons.values())})
    table = _read(export, wanted)
    n = table.num_rows

    def column(i: int) -> pa.ChunkedArray:
        return table.column(f"f{i}")

    text = {role: column(i).to_pylist() for role, i in text_cols.items()}
    problems: dict[int, list[str]] = {}
    fields: dict[str, np.ndarray] = {}
    for field, i in field_cols.items():
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
    if roof_cols:
        fields.update(raw_section_columns({name: (column(i).to_pylist(), units[i]) for name, i in roof_cols.items()}, n))
    source = next((s for s, _ in STALL_PATTERNS if s in stall_cols), None)
    stalls = {reason: _numbers(column(i)) for reason, i in sorted(stall_cols.get(source, {}).items())}
    flops = np.full(n, np.nan)
    sass = np.zeros(n, dtype=bool)
    for name, i in flop_cols.items():
        field, weight = flop_term(name) or ("", 0.0)
        values = _numbers(column(i)) * weight
        present = ~np.isnan(values)
        # per data type (and integer ops apart), then the FLOP total of every float type
        fields[field] = np.where(present, np.nan_to_num(fields.get(field, np.full(n, np.nan))) + values,
                                 fields.get(field, np.full(n, np.nan)))
        if flop_weight(name) is None:
            continue
        flops = np.where(present, np.nan_to_num(flops) + values, flops)
        if "sass" in name:
            sass |= present
    table = LaunchTable(
        ids=text["id"], kernels=text.get("kernel", [""] * n),
        text={k: [v or None for v in text[k]] for k in ("device", "cc", "grid_dims", "block_dims") if k in text},
        fields=fields, stalls=stalls, stall_source=source if stalls else None, flops=flops, flops_sass=sass,
        problems=problems,
    )
    # launch row i is CSV record i after the units row (body line 0)
    check_plausible(table, lambda i, _field: f"{export.name}:{export.record_line(i, skip=1)}")
    return table

