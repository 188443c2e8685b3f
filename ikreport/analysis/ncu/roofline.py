"""ncu's roofline: FLOPs per data type, weighted as ncu's own roofline sections weight them, and
the values the details page's roofline sections export.

Accepted input:
- a raw page's columns of the metrics behind the roofline sections' labels (``--set full``:
  ``dram__bytes.sum.peak_sustained``, ``dram__cycles_elapsed.avg.per_second``,
  ``derived__smsp__sass_thread_inst_executed_op_ffma_pred_on_x2``...), read as those labels;
- raw metric names (``--page raw`` columns, or ``--metrics`` rows of ``--page details``): the
  SASS thread-instruction counters ``smsp__sass_thread_inst_executed_op_<op>_pred_on.sum`` and
  the tensor-path op counters ``sm__ops_path_tensor_src_<type>[_dst_<type>].sum``;
- rows of the details page's roofline sections (``ncu --set full`` or ``--section
  SpeedOfLight_RooflineChart`` / ``SpeedOfLight_Hierarchical{Single,Double,Half,Tensor}
  RooflineChart``), told apart by their ``Body Item Label`` column ("Single Precision Roofline",
  "Single Precision Achieved Value", "DRAM Roofline", "DRAM Achieved Value", ...). Metric Name
  is the label the section file gives each value ("Theoretical DRAM Bytes Accessible", "DRAM
  Frequency", "DRAM Bandwidth", "SM Frequency", "Predicated-On FFMA Operations Per Cycle",
  "Theoretical Tensor Operations", ...); units are ncu's (``Kbyte/cycle``, ``Ghz``, ``hz``,
  ``cycle/nsecond``, ``inst``, ``inst/cycle``, ``Gbyte/s``).

The weights are those of ncu's section files (sections/*.section in the Nsight Compute install):
SpeedOfLight_RooflineChart counts FFMA and DFMA as 2 FLOPs (its ``..._pred_on_x2`` metrics) and
FADD, FMUL, DADD, DMUL as 1; SpeedOfLight_HierarchicalHalfRooflineChart counts HFMA as 4 and
HADD, HMUL as 2 (a half instruction is a packed HFMA2/HADD2/HMUL2 on two values);
SpeedOfLight_HierarchicalTensorRooflineChart counts tensor-path ops one each. Tensor ops on
integer sources (``src_int8``...) are integer operations, kept apart from FLOPs. The roofline
section values are already weighted by ncu (its "Operations" labels are the ``_x2``/``_x4``
metrics), so they are summed as exported.
"""

from __future__ import annotations

import re
from typing import Any
from collections.abc import Mapping

import numpy as np

from ikreport.analysis.units import SI_PREFIX, parse_number, to_number

PRECISIONS = ("fp16", "fp32", "fp64", "tensor")
INT_OPS = "int_ops"  # integer tensor ops: counted like FLOPs, kept apart from them
# per-precision FLOP counts and integer ops of a launch (counts, from raw metric names)
COUNT_FIELDS = tuple(f"flops_{p}" for p in PRECISIONS) + (INT_OPS,)
# what a details page's roofline sections give (rates in base units: bytes/s, FLOP/s)
SECTION_FIELDS = ("roofline_dram_bytes_per_s", "roofline_dram_peak_bytes_per_s") + tuple(
    f"roofline_{what}_{p}" for what in ("flops_per_s", "peak_flops_per_s") for p in PRECISIONS)
RATE_FIELDS = ("roofline_dram_bytes_per_s", "roofline_dram_peak_bytes_per_s")
FLOP_RATE_FIELDS = tuple(f for f in SECTION_FIELDS if "flops" in f)

_LETTER = {"h": "fp16", "f": "fp32", "d": "fp64"}
# (pattern, precision or None for integer ops, weight) for raw metric names
_TERMS: tuple[tuple[re.Pattern[str], str | None, float], ...] = (
    (re.compile(r"^sm__ops_path_tensor_src_u?int\w*\.sum$"), None, 1.0),
    (re.compile(r"^sm__ops_path_tensor_src_[a-z0-9]+(?:_dst_[a-z0-9]+)?\.sum$"), "tensor", 1.0),
    # the SASS counters under smsp__ or, as NERSC's roofline scripts ask for them, sm__ (one count)
    (re.compile(r"^sm(?:sp)?__sass_thread_inst_executed_op_([dfh])fma_pred_on\.sum$"), "", 2.0),
    (re.compile(r"^sm(?:sp)?__sass_thread_inst_executed_op_([dfh])(?:add|mul)_pred_on\.sum$"), "", 1.0),
)
HALF_PACKED = 2.0  # ncu's half roofline: HFMA2/HADD2/HMUL2 work on two values at once


def counted_twice(metric: str, names: Any) -> bool:
    """Whether ``metric`` is an sm__ SASS counter whose smsp__ twin (the same count) is also
    among ``names``: only one of the two is added."""
    return metric.startswith("sm__sass") and "smsp__" + metric[len("sm__"):] in names


def flop_term(metric: str) -> tuple[str, float] | None:
    """(field, weight) when ``metric`` counts floating-point or integer math: the field is
    ``flops_<precision>`` or ``int_ops``; None for any other metric. The tensor counters'
    _sparsity_on/_off variants split the same ops again and are not matched."""
    for rx, precision, weight in _TERMS:
        m = rx.match(metric)
        if not m:
            continue
        if precision is None:
            return INT_OPS, weight
        if precision == "":
            precision = _LETTER[m.group(1)]
            weight *= HALF_PACKED if precision == "fp16" else 1.0
        return f"flops_{precision}", weight
    return None


# --- the details page's roofline sections ---------------------------------------------------

_ACHIEVED_RX = re.compile(r"^Predicated-On ([DFH])(?:(?:ADD|MUL) Thread Instructions Executed|(?:ADD|MUL|FMA) "
                          r"Operations) Per Cycle$")
_PEAK_RX = re.compile(r"^Theoretical Predicated-On ([DFH])FMA Operations$")
# a raw page gives the derived operation counts in "thread" (thread instructions), a details page in "inst"
_PER_CYCLE_RX = re.compile(r"^(?P<p>[KMGT]?)(?P<what>byte|inst|thread|op|)(?:/cycle)?$")

Cell = tuple[str, str, int]  # (value text, unit, body line)


def _hz(text: str, unit: str) -> float | None:
    """A clock in Hz (``hz``, ``Ghz``, ``cycle/second``, ``cycle/nsecond``: units.py's frequency)."""
    return to_number(text, unit, "frequency")


def _per_cycle(text: str, unit: str, what: str) -> float | None:
    """A per-cycle amount: bytes (``Kbyte/cycle``) or operations (``inst``, ``thread``, ``inst/cycle``,
    no unit)."""
    value = parse_number(text)
    m = _PER_CYCLE_RX.match(unit.strip())
    if value is None or not m or (m["what"] == "byte") != (what == "byte"):
        return None
    return value * SI_PREFIX[m["p"]]


def _precision(letter: str) -> str:
    return _LETTER[letter.lower()]


# ncu --print-metric-name name / label-name print the metric behind each label (the section
# files' Name fields) instead of, or after, the label: read them as the label they stand for
_LABEL_NAME_RX = re.compile(r"^(?P<label>.+) \((?P<name>[\w.]+)\)$")
_NAMED: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^dram__bytes\.sum\.per_second$"), "DRAM Bandwidth"),
    (re.compile(r"^dram__bytes\.sum\.peak_sustained$"), "Theoretical DRAM Bytes Accessible"),
    (re.compile(r"^dram__cycles_elapsed\.avg\.per_second$"), "DRAM Frequency"),
    (re.compile(r"^sm(?:sp)?__cycles_elapsed\.avg\.per_second$"), "SM Frequency"),
    (re.compile(r"^derived__sm__sass_thread_inst_executed_op_([dfh])fma_pred_on_x[24]$"),
     "Theoretical Predicated-On {}FMA Operations"),
    (re.compile(r"^derived__smsp__sass_thread_inst_executed_op_([dfh])fma_pred_on_x[24]$"),
     "Predicated-On {}FMA Operations Per Cycle"),
    (re.compile(r"^(?:derived__smsp__sass_thread_inst_executed_op_(h)(add|mul)_pred_on_x2|"
                r"smsp__sass_thread_inst_executed_op_([df])(add|mul)_pred_on\.sum\.per_cycle_elapsed)$"),
     "Predicated-On {}{} Thread Instructions Executed Per Cycle"),
    (re.compile(r"^sm__ops_path_tensor_src_\w+\.sum\.peak_sustained$"), "Theoretical Tensor Operations"),
    (re.compile(r"^sm__ops_path_tensor_src_\w+\.sum\.per_cycle_elapsed$"), "Tensor Operations Per Cycle"),
)


def metric_label(name: str) -> str:
    """The section file's label for a roofline row's Metric Name, however ncu printed it:
    the label, "label (metric)", or the metric alone."""
    m = _LABEL_NAME_RX.match(name)
    if m:
        return m["label"]
    for rx, label in _NAMED:
        found = rx.match(name)
        if found:
            return label.format(*(g.upper() for g in found.groups() if g))
    return name


def section_values(items: Mapping[tuple[str, str], Mapping[str, Cell]]) -> dict[str, float]:
    """What a launch's roofline rows say, from ``items``: (section, body item label) -> {metric
    name: cell}. Keys are SECTION_FIELDS; a value missing from the export is left out. Items
    are read in export order and the first value of each kind wins (ncu repeats the same
    peaks and the same achieved work in every item of a chart)."""
    out: dict[str, float] = {}

    def keep(field: str, value: float | None) -> None:
        if value is not None and field not in out:
            out[field] = value

    tensor_done: set[str] = set()  # tensor ops summed over the "DRAM ..." items, one per source type
    for (_section, label), named in items.items():
        metrics = {metric_label(name): cell for name, cell in named.items()}
        sm_hz = _hz(*metrics["SM Frequency"][:2]) if "SM Frequency" in metrics else None
        dram = metrics.get("DRAM Bandwidth")
        if dram is not None:
            keep("roofline_dram_bytes_per_s", to_number(dram[0], dram[1], "byte_rate"))
        accessible, dram_hz = metrics.get("Theoretical DRAM Bytes Accessible"), metrics.get("DRAM Frequency")
        if accessible and dram_hz:
            per_cycle, hz = _per_cycle(accessible[0], accessible[1], "byte"), _hz(*dram_hz[:2])
            keep("roofline_dram_peak_bytes_per_s", per_cycle * hz if per_cycle is not None and hz else None)
        if sm_hz is None:
            continue
        achieved: dict[str, float] = {}
        for name, (text, unit, _line) in metrics.items():
            value = _per_cycle(text, unit, "op")
            if value is None:
                continue
            if (m := _ACHIEVED_RX.match(name)) is not None:
                precision = _precision(m.group(1))
                achieved[precision] = achieved.get(precision, 0.0) + value
            elif name == "Tensor Operations Per Cycle" and label.startswith("DRAM") and label not in tensor_done:
                # the Tensor chart has one DRAM/L2/L1 item triple per source type: count each type once
                tensor_done.add(label)
                out["roofline_flops_per_s_tensor"] = out.get("roofline_flops_per_s_tensor", 0.0) + value * sm_hz
            elif (m := _PEAK_RX.match(name)) is not None:
                keep(f"roofline_peak_flops_per_s_{_precision(m.group(1))}", value * sm_hz)
            elif name == "Theoretical Tensor Operations":
                keep("roofline_peak_flops_per_s_tensor", value * sm_hz)
        for precision, per_cycle in achieved.items():
            keep(f"roofline_flops_per_s_{precision}", per_cycle * sm_hz)
    return out


def raw_section_columns(columns: Mapping[str, tuple[list[str], str]], n: int) -> dict[str, np.ndarray]:
    """The roofline values of a raw page (``--set full``), whose columns are the metrics behind
    the roofline sections' labels (``dram__bytes.sum.peak_sustained``...): ``columns`` maps a
    metric to (its cells, its unit). Read by section_values, the one rule for both pages, a
    launch at a time; each tensor per-cycle column is an item of its own, one per source type,
    as in ncu's Tensor chart. Only exports that have such columns pay for this loop."""
    tensor = [name for name in columns if metric_label(name) == "Tensor Operations Per Cycle"]
    sm = [name for name in columns if metric_label(name) == "SM Frequency"]
    out = {field: np.full(n, np.nan) for field in SECTION_FIELDS}
    for i in range(n):
        base = {name: (cells[i], unit, 0) for name, (cells, unit) in columns.items() if name not in tensor}
        items: dict[tuple[str, str], dict[str, Cell]] = {("raw", "raw"): base}
        for name in tensor:
            items[("raw", f"DRAM {name}")] = {name: (columns[name][0][i], columns[name][1], 0),
                                               **{s: base[s] for s in sm}}
        for field, value in section_values(items).items():
            out[field][i] = value
    return {field: values for field, values in out.items() if not np.isnan(values).all()}
