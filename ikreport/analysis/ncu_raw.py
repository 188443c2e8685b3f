"""Read ``ncu --csv --page raw`` exports: one row per launch, one column per metric.

Layout: header row of metric names (``gpu__time_duration.sum``...), then a units row
(``ns``, ``%``, ``byte``, ``""``), then one row per launch. Values may carry thousands
separators (``"2,104,704"``, ``"112,183.50"``), be ``n/a``, or be strings in columns that
look numeric. Only the columns a summary needs are parsed, column-wise with pyarrow, so a
20,000-launch export with 475 columns costs little more than reading it.
"""

from __future__ import annotations

import csv
import io

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from ikreport.analysis.ncu_export import Export
from ikreport.analysis.ncu_launch import Launch, dims_product
from ikreport.analysis.ncu_metrics import FIELD_KIND, RAW_FIELDS, best_stalls, flop_weight, stall_reason
from ikreport.analysis.units import NUMBER_RX, is_missing, unit_factor
from ikreport.errors import NcuExportError

TEXT_COLUMNS = {
    "id": "ID",
    "kernel": "Kernel Name",
    "cc": "CC",
    "grid_dims": "Grid Size",
    "block_dims": "Block Size",
    "device": "device__attribute_display_name",
}


def _numbers(column: pa.ChunkedArray) -> list[float | None]:
    """Strings -> floats, column-wise; thousands separators dropped, non-numbers None."""
    text = pc.utf8_trim_whitespace(pc.replace_substring(column, ",", ""))
    ok = pc.match_substring_regex(text, NUMBER_RX.pattern)
    return pc.cast(pc.if_else(ok, text, pa.scalar(None, pa.string())), pa.float64()).to_pylist()


def parse_raw(export: Export) -> list[Launch]:
    """Launches of a raw page, in profiling order. Rows of the wrong width are skipped."""
    if not export.lines:
        raise NcuExportError(f"{export.name}: the raw page has a header but no units row; export it again")
    header = list(export.header)
    units = next(csv.reader([export.lines[0]]))
    rows = export.lines[1:]
    if not rows:
        return []
    col = {}
    for i, h in enumerate(header):
        col.setdefault(h, i)  # a repeated header keeps its first column
    if "ID" not in col:
        raise NcuExportError(f"{export.name}:{export.header_line}: the header has no ID column")

    wanted: dict[str, int] = {}  # role -> column index
    for role, name in TEXT_COLUMNS.items():
        if name in col:
            wanted[role] = col[name]
    for field, names in RAW_FIELDS.items():
        name = next((n for n in names if n in col), None)
        if name is not None:
            wanted[f"field:{field}"] = col[name]
    for name, i in col.items():
        found = stall_reason(name)
        if found:
            wanted[f"stall:{found[0]}:{found[1]}"] = i
        elif flop_weight(name) is not None:
            wanted[f"flop:{name}"] = i

    skipped: list[int] = []

    def skip(row: pacsv.InvalidRow) -> str:
        skipped.append(row.number or 0)
        return "skip"

    table = pacsv.read_csv(
        # a final newline: pyarrow reads a lone unterminated row as an empty file
        io.BytesIO(("\n".join(rows) + "\n").encode("utf-8")),
        read_options=pacsv.ReadOptions(autogenerate_column_names=True, block_size=1 << 24),
        parse_options=pacsv.ParseOptions(invalid_row_handler=skip),
        convert_options=pacsv.ConvertOptions(
            include_columns=[f"f{i}" for i in sorted(set(wanted.values()))],
            column_types={f"f{i}": pa.string() for i in wanted.values()},
            strings_can_be_null=False,
        ),
    )
    n = table.num_rows
    text = {role: table.column(f"f{i}").to_pylist() for role, i in wanted.items() if role in TEXT_COLUMNS}
    launches = [
        Launch(
            id=text["id"][k],
            kernel=text.get("kernel", [""] * n)[k],
            device=(text["device"][k] or None) if "device" in text else None,
            cc=(text["cc"][k] or None) if "cc" in text else None,
            grid_dims=(text["grid_dims"][k] or None) if "grid_dims" in text else None,
            block_dims=(text["block_dims"][k] or None) if "block_dims" in text else None,
        )
        for k in range(n)
    ]
    stalls: list[dict[str, dict[str, float]]] = [{} for _ in range(n)]  # per launch: source -> reason -> value
    for role, i in wanted.items():
        if role.startswith("field:"):
            field = role[len("field:"):]
            _fill_field(launches, field, table.column(f"f{i}"), units[i] if i < len(units) else "")
        elif role.startswith("stall:"):
            _, source, reason = role.split(":", 2)
            for found, value in zip(stalls, _numbers(table.column(f"f{i}"))):
                if value is not None:
                    found.setdefault(source, {})[reason] = value
        elif role.startswith("flop:"):
            weight = flop_weight(role[len("flop:"):]) or 0.0
            for launch, value in zip(launches, _numbers(table.column(f"f{i}"))):
                if value is not None:
                    launch.flops = (launch.flops or 0.0) + weight * value
                    launch.flops_sass = launch.flops_sass or "sass" in role
    for launch, found in zip(launches, stalls):
        launch.stalls = best_stalls(found)
        for field in ("grid", "block"):
            if launch.fields.get(field) is None:
                launch.fields[field] = dims_product(launch.grid_dims if field == "grid" else launch.block_dims)
    return launches


def _fill_field(launches: list[Launch], field: str, column: pa.ChunkedArray, unit: str) -> None:
    kind = FIELD_KIND.get(field, "count")
    factor = unit_factor(unit, kind)
    raw_text = column.to_pylist()
    values = _numbers(column)
    for launch, text, value in zip(launches, raw_text, values):
        if value is not None and factor is not None:
            launch.fields[field] = value * factor
            continue
        launch.fields[field] = None
        if not is_missing(text):
            launch.problems.append(f"{field}: {text!r} {unit!r}")
