"""Read ``ncu --csv --page details`` exports: one row per (launch, section, metric).

Accepted layouts, all seen in real exports from 2020 to 2025:
- 2020.x (``nv-nsight-cu-cli``): 12 columns with ``Kernel Time``, no Block/Grid Size, section
  "GPU Speed Of Light" with ``SOL FB``, ``SM [%]``, ``Memory [%]``, unit ``nsecond``;
- later: 15 to 20 columns (Block Size, Grid Size, Device, CC, and the rule columns Rule Name,
  Rule Type, Rule Description, Estimated Speedup...), maybe ``Body Item Label``; metric rows
  often end after ``Metric Value`` (shorter than the header); rule rows have an empty metric;
- ``--metrics`` rows in section "Command line profiler metrics" carry raw metric names
  (``gpu__time_duration.sum``, ``dram__bytes_op_read.sum``, stall ``.pct`` metrics);
- units auto-scaled per row (``Mbyte`` next to ``byte``) or ``--print-units base``.
Columns are found by name, so their order and extra columns do not matter.

A row is as wide as the header, or (a metric row) ends after ``Metric Value``; either may
carry one trailing comma. Any other width means a row cut short or broken quoting, and is
refused naming its line (``TruncatedExportError``), as is a line end inside an unquoted field.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator

from ikreport.analysis.ncu.export import Export
from ikreport.analysis.ncu.launch import Launch, dims_product
from ikreport.analysis.ncu.table import LaunchTable, check_plausible
from ikreport.analysis.ncu.metrics import DETAIL_FIELDS, FIELD_KIND, FIELDS, RAW_FIELDS, best_stalls, stall_reason
from ikreport.analysis.ncu.roofline import INT_OPS, counted_twice, flop_term, section_values
from ikreport.analysis.units import is_missing, parse_number, to_number, unit_factor
from ikreport.errors import TruncatedExportError

Cell = tuple[str, str, int]  # (value text, unit, body line from 0)


class _Collected:
    """Every metric row of one launch, by (section, name) and by name."""

    def __init__(self, launch: Launch) -> None:
        self.launch = launch
        self.by_key: dict[tuple[str, str], Cell] = {}
        self.by_name: dict[str, list[Cell]] = {}
        # rows with a Body Item Label (the roofline sections): (section, label) -> {name: cell}
        self.items: dict[tuple[str, str], dict[str, Cell]] = {}

    def add(self, section: str, name: str, cell: Cell, item: str = "") -> None:
        if item:
            self.items.setdefault((section, item), {}).setdefault(name, cell)
        if (section, name) in self.by_key:
            return  # tables with body items repeat a metric; the first row is the summary
        self.by_key[(section, name)] = cell
        self.by_name.setdefault(name, []).append(cell)


def parse_details(export: Export) -> LaunchTable:
    """Launches of a details page, in the order their ids first appear."""
    col: dict[str, int] = {}
    for i, h in enumerate(export.header):
        col.setdefault(h, i)
    value_at = col["Metric Value"]
    launches: dict[str, _Collected] = {}
    for row, line in _rows(export, col):
        if not row[col["Metric Name"]]:
            # rule rows (empty metric) still carry ncu's own verdicts: keep them
            _add_rule(launches, row, col, line)
            continue
        got = launches.get(row[col["ID"]])
        if got is None:
            got = launches[row[col["ID"]]] = _Collected(_new_launch(row, col, line))
        got.add(_cell(row, col, "Section Name"), row[col["Metric Name"]],
                (row[value_at], _cell(row, col, "Metric Unit"), line), _cell(row, col, "Body Item Label"))
    finished = [_finish(c) for c in launches.values()]
    table = LaunchTable.from_launches(finished)

    def where(i: int, field: str) -> str:
        return f"{export.name}:{export.file_line(finished[i].lines.get(field, finished[i].line))}"

    check_plausible(table, where)
    return table


def _rows(export: Export, col: dict[str, int]) -> Iterator[tuple[list[str], int]]:
    """The page's rows and their body lines (from 0), each checked for width; blank lines are
    left out."""
    # lines end at "\n" only (not at a lone "\r"), so reader.line_num counts the same lines as
    # the quote check and file_line; decoded a block at a time, never as one big string
    lines = io.TextIOWrapper(io.BytesIO(export.body), encoding="utf-8", errors="replace", newline="\n")
    reader = csv.reader(lines)
    full, metric = len(export.header), col["Metric Value"] + 1
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            raise TruncatedExportError(f"{export.name}:{export.file_line(reader.line_num - 1)}: not a CSV line "
                                       f"({exc}); export it again with ncu --csv") from exc
        if not row:
            continue
        trailing = row[-1] == ""  # one trailing comma adds an empty field
        if not (_width(row, full, trailing) or (_width(row, metric, trailing) and row[col["Metric Name"]])):
            raise TruncatedExportError(
                f"{export.name}:{export.file_line(reader.line_num - 1)}: a row of {len(row)} fields under a header "
                f"of {full} (cut short, or its quoting is broken); export it again with ncu --csv")
        yield row, reader.line_num - 1


def _width(row: list[str], width: int, trailing: bool) -> bool:
    return len(row) == width or (trailing and len(row) == width + 1)


def _cell(row: list[str], col: dict[str, int], name: str) -> str:
    i = col.get(name)
    return row[i] if i is not None and i < len(row) else ""


def _new_launch(row: list[str], col: dict[str, int], line: int) -> Launch:
    return Launch(
        line=line,
        id=row[col["ID"]],
        kernel=_cell(row, col, "Kernel Name"),
        cc=_cell(row, col, "CC") or None,
        grid_dims=_cell(row, col, "Grid Size") or None,
        block_dims=_cell(row, col, "Block Size") or None,
        kernel_time=_cell(row, col, "Kernel Time") or None,
    )


def _add_rule(launches: dict[str, _Collected], row: list[str], col: dict[str, int], line: int) -> None:
    if "Rule Name" not in col or len(row) <= col["Rule Name"] or not row[col["Rule Name"]]:
        return
    got = launches.get(row[col["ID"]])
    if got is None:
        got = launches[row[col["ID"]]] = _Collected(_new_launch(row, col, line))
    got.launch.rules.append({
        "section": _cell(row, col, "Section Name"),
        "rule": row[col["Rule Name"]],
        "type": _cell(row, col, "Rule Type"),
        # ncu wraps some descriptions with double spaces; keep its words, not its spacing
        "description": " ".join(_cell(row, col, "Rule Description").split()),
    })


def _finish(c: _Collected) -> Launch:
    launch = c.launch
    for field in FIELDS:
        launch.fields[field] = _field(c, field)
    for field, dims in (("grid", launch.grid_dims), ("block", launch.block_dims)):
        if launch.fields.get(field) is None:
            launch.fields[field] = dims_product(dims)
    found: dict[str, dict[str, float]] = {}
    for name, cells in c.by_name.items():
        term = None if counted_twice(name, c.by_name) else flop_term(name)
        if term is not None:
            value = parse_number(cells[0][0])
            if value is not None:
                field, weight = term
                launch.fields[field] = (launch.fields.get(field) or 0.0) + weight * value
                if field != INT_OPS:  # integer ops are kept apart from FLOPs
                    launch.flops = (launch.flops or 0.0) + weight * value
                    launch.flops_sass = launch.flops_sass or "sass" in name
            continue
        hit = stall_reason(name)
        if hit:
            value = parse_number(cells[0][0])
            if value is not None:
                found.setdefault(hit[0], {})[hit[1]] = value
    launch.stalls = best_stalls(found)
    launch.fields.update(section_values(c.items))
    return launch


def _field(c: _Collected, field: str) -> float | None:
    """A field's value from raw metric names first, then from its human names."""
    kind = FIELD_KIND.get(field, "count")
    for name in RAW_FIELDS.get(field, ()):
        if name in c.by_name:
            return _read(c.launch, field, c.by_name[name][0], name)
    for key in DETAIL_FIELDS.get(field, ()):
        if key in c.by_key:
            return _read(c.launch, field, c.by_key[key], key[1])
    # Section renamed in some ncu release: accept the name alone when exactly one row of the
    # right kind has it. With --set basic the only "Memory Throughput" is the Speed Of Light
    # one in %, which must not be read as a byte rate: the kind check leaves it out.
    for _section, name in DETAIL_FIELDS.get(field, ()):
        cells = [cell for cell in c.by_name.get(name, ()) if unit_factor(cell[1], kind) is not None]
        if len(cells) == 1:
            return _read(c.launch, field, cells[0], name)
    return None


def _read(launch: Launch, field: str, cell: Cell, name: str) -> float | None:
    text, unit, line = cell
    launch.lines[field] = line
    launch.names[field] = name
    value = to_number(text, unit, FIELD_KIND.get(field, "count"))
    if value is None and not is_missing(text):
        launch.problems.append(f"{field}: {text!r} {unit!r}")
    return value
