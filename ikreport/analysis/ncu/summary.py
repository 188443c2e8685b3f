"""Turn a LaunchTable into summaries: per launch (for the launches a record keeps) and as rows
of the per-launch CSV table. Derived values are computed column-wise, and row by row alike, so
a block of rows gives what the whole table gives for those rows (the per-kernel figures are
folded from such blocks in fold.py).

Derived values: DRAM GB/s (bytes moved / duration, else ncu's own DRAM byte rate), the
occupancy limiter, the top warp-stall reasons as % of warp-active cycles with the coverage of
the captured states (stalls.py), FLOP/s and arithmetic intensity, and the
bound label.

The bound label follows the thresholds and wording of ncu's own SOLBottleneck rule (the
SpeedOfLight section's rule, whose findings the details page quotes). ncu reports each unit's
throughput as % of its peak. The memory side is ncu's "Memory Throughput" (the busiest of L1,
L2 and DRAM) where the export has it, else DRAM throughput: a kernel that saturates L2 is
memory-bound even when DRAM is idle. With m and s the memory and SM sides:
  - both below 60%: 'latency-bound' (ncu: "Latency Issue", or "Small Grid" below one wave);
  - the higher at 80% or more: that side's bound (ncu: "High Throughput");
  - the higher between 60% and 80%: that side's bound when the two differ by 10 points or more
    (ncu: "High Compute/Memory Throughput", "X is more heavily utilized than Y"), else
    'balanced' (ncu: "Balanced Throughput").
Ties go to compute, as in ncu's rule. Both sides must be in the export: a missing side is
unknown, never 0, so a launch with only one of them is 'unknown' (its claim says which side
it has). One exception: when the export has no memory % but has the DRAM byte rate and the
DRAM peak ncu's roofline section uses, the memory side is that rate over that peak, and the
record says so (``memory_source`` 'ncu-roofline').

Roofline (analysis/ncu/roofline.py): FLOPs per data type from the SASS and tensor counters,
else ncu's roofline section's achieved FLOP/s; the kernel's data type is the one with the most
FLOPs, and its roof is the peak ncu's roofline section gives for that type. Arithmetic
intensity divides FLOPs by ``dram__bytes.sum`` where the export has it, else by DRAM bytes
read + written, else by the DRAM byte rate times the duration.

The occupancy limiter is the resource whose per-SM block limit is smallest. At a theoretical
occupancy of 100% nothing limits it (no limiter is named), and resources that share the
smallest limit are a tie, named together ("registers + shared memory"): reducing one alone
gains nothing.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from ikreport.analysis.ncu.clocks import durations_ns
from ikreport.analysis.ncu.roofline import PRECISIONS
from ikreport.analysis.ncu.stalls import breakdown
from ikreport.analysis.ncu.table import LaunchTable

# ncu's SOLBottleneck thresholds, as its rule file (sections/SpeedOfLight.py, 2021-2025 releases) names
# them: latency_bound_threshold, no_bound_threshold, balanced_threshold. Its findings quote them
# ("below 60.0% of peak typically indicate latency issues", "greater than 80.0%").
LATENCY_PCT = 60.0
HIGH_PCT = 80.0
BALANCED_GAP_PCT = 10.0
SOL_RULE = (f"ncu's SOLBottleneck thresholds: latency-bound when memory and SM are both below {LATENCY_PCT:g}% "
            f"of peak; memory- or compute-bound when the higher is at {HIGH_PCT:g}% or more, or at "
            f"{LATENCY_PCT:g}-{HIGH_PCT:g}% and {BALANCED_GAP_PCT:g} points above the other; balanced otherwise")
TOP_STALLS = 4
# DRAM counts as the busiest memory level when within this many points of the max.
SAME_LEVEL_PCT = 1.0
# Labels in alphabetical order: a kernel's most common label wins ties by this order.
LABELS = ("balanced", "compute-bound", "latency-bound", "memory-bound", "unknown")
UNKNOWN = LABELS.index("unknown")  # the label code of a launch judged on nothing
# the busiest memory level: DRAM, L1/TEX or L2 when the export has each level's throughput,
# "cache" when it only shows that a cache (not DRAM) is the busiest
LEVELS = ("dram", "cache", "unknown", "l1", "l2")
LIMITERS = ("registers", "shared memory", "warps", "blocks per SM")
LIMIT_FIELDS = ("limit_registers", "limit_shared_mem", "limit_warps", "limit_blocks")
FULL_OCCUPANCY_PCT = 99.5  # ncu prints theoretical occupancy rounded; 100% means no limit bites
TIE = " + "  # joins the resources of a tied limiter

Summary = dict[str, Any]


# A record page asks this for every launch it shows and every launch of every kernel it
# labels (about 100 calls), mostly with values seen before; numpy's per-call overhead made it
# the largest cost of a page after its chart.
@lru_cache(maxsize=4096)
def bound_label(memory_pct: float | None, sm_pct: float | None) -> str:
    """'memory-bound', 'compute-bound', 'latency-bound', 'balanced' or 'unknown', by ncu's
    SOLBottleneck thresholds (see module doc)."""
    m = np.array([np.nan if memory_pct is None else memory_pct])
    s = np.array([np.nan if sm_pct is None else sm_pct])
    return LABELS[int(_labels(m, s)[0])]


def _labels(memory: np.ndarray, sm: np.ndarray) -> np.ndarray:
    m, s = np.nan_to_num(memory), np.nan_to_num(sm)
    high = np.maximum(m, s)
    # ncu names a side when one is near peak, or when it leads by the balanced threshold
    leads = (high >= HIGH_PCT) | (np.abs(m - s) >= BALANCED_GAP_PCT)
    out = np.full(len(m), LABELS.index("balanced"))
    out[(m < LATENCY_PCT) & (s < LATENCY_PCT)] = LABELS.index("latency-bound")
    named = (high >= LATENCY_PCT) & leads
    out[named & (m > s)] = LABELS.index("memory-bound")
    out[named & (m <= s)] = LABELS.index("compute-bound")  # ncu: sm >= mem points at compute
    # a side the export lacks is unknown, not 0: without both, no label can be named
    out[np.isnan(memory) | np.isnan(sm)] = UNKNOWN
    return out


def memory_side(dram_pct: float | None, mem_pct: float | None) -> tuple[float | None, str]:
    """(memory throughput % of peak, which level that is: 'dram', 'cache' or 'unknown')."""
    top, level = _memory(np.array([np.nan if dram_pct is None else dram_pct]),
                         np.array([np.nan if mem_pct is None else mem_pct]))
    return (None if np.isnan(top[0]) else float(top[0])), LEVELS[int(level[0])]


def _memory(dram: np.ndarray, mem: np.ndarray, l1: np.ndarray | None = None,
            l2: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    with np.errstate(invalid="ignore"):
        top = np.fmax(dram, mem)
    level = np.full(len(top), LEVELS.index("cache"))
    if l1 is not None and l2 is not None:
        # a cache is busiest: name the level whose own throughput is the top, when it is there
        with np.errstate(invalid="ignore"):
            level[(top - l2 <= SAME_LEVEL_PCT) & ~(l1 > l2)] = LEVELS.index("l2")
            level[(top - l1 <= SAME_LEVEL_PCT) & (l1 > l2)] = LEVELS.index("l1")
            level[(top - l1 <= SAME_LEVEL_PCT) & np.isnan(l2)] = LEVELS.index("l1")
    level[top - dram <= SAME_LEVEL_PCT] = LEVELS.index("dram")
    level[np.isnan(dram) | np.isnan(top)] = LEVELS.index("unknown")
    return top, level


def occupancy_limiter(fields: dict[str, float | None]) -> str | None:
    """Which resource caps blocks per SM: the smallest per-resource block limit, tied resources
    joined with " + "; None when unknown or when theoretical occupancy is full."""
    row = np.array([[np.nan if fields.get(f) is None else fields[f] for f in LIMIT_FIELDS]], dtype=float)
    theoretical = fields.get("occupancy_theoretical_pct")
    return limiter_name(int(_limiters(row, np.array([np.nan if theoretical is None else theoretical]))[0]))


def limiter_name(code: int) -> str | None:
    """The name of a limiter code from _limiters: None for unknown (-1) or no limit (0)."""
    if code <= 0:
        return None
    return TIE.join(name for bit, name in enumerate(LIMITERS) if code & (1 << bit))


def _limiters(limits: np.ndarray, theoretical: np.ndarray) -> np.ndarray:
    """Per launch: -1 unknown, 0 nothing limits (full theoretical occupancy), else a bit mask
    over LIMITERS of the resources that share the smallest block limit."""
    filled = np.where(np.isnan(limits), np.inf, limits)
    low = filled.min(axis=1) if len(filled) else np.zeros(0)
    at_min = (filled == low[:, None]) & np.isfinite(filled)
    code = (at_min * (1 << np.arange(len(LIMITERS)))).sum(axis=1).astype(np.int64)
    code[np.isinf(low)] = -1
    code[theoretical >= FULL_OCCUPANCY_PCT] = 0
    return code


@dataclass(frozen=True)
class Derived:
    """Per-launch derived columns of a LaunchTable."""

    duration_us: np.ndarray
    dram_gbs: np.ndarray
    memory_pct: np.ndarray
    memory_level: np.ndarray  # index into LEVELS
    bound: np.ndarray  # index into LABELS
    limiter: np.ndarray  # -1 unknown, 0 no limit, else a bit mask over LIMITERS (see _limiters)
    flops: np.ndarray  # NaN unknown
    flops_per_s: np.ndarray
    intensity: np.ndarray
    memory_filled: np.ndarray  # bool: memory_pct is DRAM bytes/s over ncu's roofline DRAM peak
    dram_peak_gbs: np.ndarray  # the DRAM peak ncu's roofline section uses, GB/s; NaN unknown
    precision: np.ndarray  # index into PRECISIONS of the data type with the most FLOPs; -1 unknown
    peak_flops: np.ndarray  # FLOP/s roof of that data type from ncu's roofline section; NaN unknown
    precision_flops_per_s: np.ndarray  # FLOP/s of that data type alone, to set against its roof
    duration_derived: np.ndarray | None = None  # bool: duration from cycles / SM clock (clocks.py)
    dram_gbs_derived: np.ndarray | None = None  # bool: DRAM GB/s from bytes over the duration, not printed


def derive(t: LaunchTable) -> Derived:
    f = t.fields
    dur, dur_derived = durations_ns(f)
    with np.errstate(invalid="ignore", divide="ignore"):
        moved = np.nan_to_num(f["dram_read_bytes"]) + np.nan_to_num(f["dram_write_bytes"])
        # bytes read + written, else all DRAM traffic (dram__bytes.sum), over the duration
        traffic = np.where(moved > 0, moved, f["dram_bytes"])
        counted = np.where((traffic > 0) & (dur > 0), traffic / dur, np.nan)  # bytes per ns == GB/s
        # ncu's own DRAM byte rate: Memory Workload Analysis, else the roofline's "DRAM Bandwidth"
        rate = np.where(np.isnan(f["dram_bytes_per_s"]), f["roofline_dram_bytes_per_s"], f["dram_bytes_per_s"])
        # the rate the export prints first; bytes over the duration only where it prints none,
        # to the three significant digits the fewest-digit input (ncu prints 3 to 5) holds
        gbs = np.where(np.isnan(rate), _significant(counted, 3), rate / 1e9)
        gbs_derived = np.isnan(rate) & ~np.isnan(counted)
        # DRAM bytes for the roofline: dram__bytes.sum (all DRAM traffic, as ncu's roofline
        # sections count it), else bytes read + written, else ncu's byte rate over the duration
        dram_bytes = np.where(f["dram_bytes"] > 0, f["dram_bytes"], np.where(moved > 0, moved, rate * dur / 1e9))
        # Tensor counters alone cannot show that a kernel did no FP math (a GEMV runs on FMA
        # units): a zero is believed only when the SASS FP instruction counters were collected.
        assert t.flops is not None and t.flops_sass is not None
        flops = np.where((t.flops > 0) | t.flops_sass, t.flops, np.nan)
        flops_per_s = np.where((flops > 0) & (dur > 0), flops / dur * 1e9, np.nan)
        # no counters: the FLOP/s ncu's roofline section shows, and the FLOPs it makes over the duration
        section = np.column_stack([f[f"roofline_flops_per_s_{p}"] for p in PRECISIONS]) if t.n else np.zeros((0, 4))
        section_total = np.where(np.isnan(section).all(axis=1), np.nan, np.nansum(section, axis=1)) if t.n else np.zeros(0)
        use_section = np.isnan(flops_per_s) & (section_total > 0)
        flops_per_s = np.where(use_section, section_total, flops_per_s)
        flops = np.where(use_section & (dur > 0), section_total * dur / 1e9, flops)
        intensity = np.where((flops > 0) & (dram_bytes > 0), flops / dram_bytes, np.nan)
    memory, level = _memory(f["dram_pct"], f["mem_pct"], f["l1_pct"], f["l2_pct"])
    filled, peak_gbs = _filled_memory(memory, gbs, f["roofline_dram_peak_bytes_per_s"])
    memory = np.where(filled, 100 * gbs / peak_gbs, memory)
    level[filled] = LEVELS.index("dram")
    precision, peak_flops, precision_rate = _precision_roof(t, section, dur)
    limits = np.column_stack([f[x] for x in LIMIT_FIELDS]) if t.n else np.zeros((0, 4))
    return Derived(
        duration_us=np.where(dur > 0, dur / 1e3, np.nan), dram_gbs=gbs, memory_pct=memory, memory_level=level,
        bound=_labels(memory, f["sm_pct"]), limiter=_limiters(limits, f["occupancy_theoretical_pct"]), flops=flops, flops_per_s=flops_per_s,
        intensity=intensity, memory_filled=filled, dram_peak_gbs=peak_gbs, precision=precision, peak_flops=peak_flops,
        precision_flops_per_s=precision_rate, duration_derived=dur_derived, dram_gbs_derived=gbs_derived,
    )


def _filled_memory(memory: np.ndarray, gbs: np.ndarray, peak_bytes_per_s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(where the memory side can be filled, the DRAM peak in GB/s): a launch with no memory %
    whose DRAM byte rate and ncu's roofline DRAM peak are both in the export."""
    peak_gbs = peak_bytes_per_s / 1e9
    with np.errstate(invalid="ignore"):
        return np.isnan(memory) & (gbs >= 0) & (peak_gbs > 0), peak_gbs


def _precision_roof(t: LaunchTable, section: np.ndarray, dur: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per launch: the data type with the most FLOPs (index into PRECISIONS, -1 unknown), the
    FLOP/s roof ncu's roofline section gives for that type, and the FLOP/s of that type alone.
    Rates come from the counters over the duration, else from ncu's roofline section."""
    f = t.fields
    if not t.n:
        return np.zeros(0, dtype=np.int64), np.zeros(0), np.zeros(0)
    counts = np.column_stack([f[f"flops_{p}"] for p in PRECISIONS])
    with np.errstate(invalid="ignore", divide="ignore"):
        rates = np.where((dur > 0)[:, None], counts / dur[:, None] * 1e9, np.nan)
    rates = np.where(np.isnan(counts).all(axis=1)[:, None], section, rates)
    has = (np.nan_to_num(rates) > 0).any(axis=1)
    precision = np.where(has, np.argmax(np.nan_to_num(rates, nan=-1.0), axis=1), -1)
    peaks = np.column_stack([f[f"roofline_peak_flops_per_s_{p}"] for p in PRECISIONS])
    rows, cols = np.arange(t.n), np.maximum(precision, 0)
    return precision, np.where(has, peaks[rows, cols], np.nan), np.where(has, rates[rows, cols], np.nan)


def _derived_flag(d: Derived, rows: np.ndarray | int) -> dict[str, bool]:
    """``{"duration_derived": True}`` when a row's duration was derived from cycles; else nothing,
    so records of exports with measured durations keep their bytes."""
    flags = d.duration_derived
    return {"duration_derived": True} if flags is not None and bool(np.any(flags[rows])) else {}


def _rate_flag(d: Derived, i: int) -> dict[str, bool]:
    """``{"dram_gbs_derived": True}`` when launch ``i``'s DRAM GB/s is bytes over its duration,
    not a rate the export prints; else nothing."""
    flags = d.dram_gbs_derived
    return {"dram_gbs_derived": True} if flags is not None and bool(flags[i]) else {}


def _significant(values: np.ndarray, digits: int) -> np.ndarray:
    """``values`` rounded to ``digits`` significant digits (NaN and zero kept)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        scale = np.where(values > 0, 10.0 ** (digits - 1 - np.floor(np.log10(np.abs(values)))), 1.0)
    return np.round(values * scale) / scale


def _num(x: float, digits: int | None = None) -> float | int | None:
    if np.isnan(x):
        return None
    value = float(x)
    if digits is not None:
        value = round(value, digits)
    return int(value) if value.is_integer() and abs(value) < 2**53 else value


def launch_summary(t: LaunchTable, d: Derived, i: int, start: int = 0) -> Summary:
    """The summary of launch row ``i`` of ``t``, a block of rows whose first is launch
    ``start`` of the page: the fields a record keeps for one launch."""
    f = t.fields
    return {
        "index": start + i,
        "id": t.ids[i],
        "kernel": t.kernels[i],
        "device": t.text["device"][i],
        "cc": t.text["cc"][i],
        "duration_us": _num(d.duration_us[i], 3),
        "dram_gbs": _num(d.dram_gbs[i], 1),
        "dram_pct": _num(f["dram_pct"][i]),
        "sm_pct": _num(f["sm_pct"][i]),
        "mem_pct": _num(f["mem_pct"][i]),
        "l1_pct": _num(f["l1_pct"][i]),
        "l2_pct": _num(f["l2_pct"][i]),
        "memory_pct": _num(d.memory_pct[i]),
        "memory_level": LEVELS[int(d.memory_level[i])],
        "occupancy_achieved_pct": _num(f["occupancy_achieved_pct"][i]),
        "occupancy_theoretical_pct": _num(f["occupancy_theoretical_pct"][i]),
        "occupancy_limiter": limiter_name(int(d.limiter[i])),
        "registers": _num(f["registers"][i]),
        "waves": _num(f["waves"][i]),
        "sms": _num(f["sms"][i]),
        "blocks_per_sm": _resident_blocks(f, i),
        "grid": _num(f["grid"][i]),
        "block": _num(f["block"][i]),
        "grid_dims": t.text["grid_dims"][i],
        "block_dims": t.text["block_dims"][i],
        "l2_hit_pct": _num(f["l2_hit_pct"][i]),
        "flops": _num(d.flops[i]),
        "flops_per_s": _num(d.flops_per_s[i], 0),
        "arithmetic_intensity": _num(d.intensity[i], 3),
        **launch_stalls(t, i),
        "bound": LABELS[int(d.bound[i])],
        **roofline_summary(t, d, i),
        "ncu_rules": t.rules.get(i, []),
        "unparsed_units": t.problems.get(i, []),
        **_derived_flag(d, i),
        **_rate_flag(d, i),
    }


def _resident_blocks(f: dict[str, np.ndarray], i: int) -> float | None:
    """How many blocks of launch ``i`` an SM can hold at once: the smallest of its per-SM block
    limits (ncu's "Block Limit" rows), None without them."""
    limits = [float(f[name][i]) for name in LIMIT_FIELDS if not np.isnan(f[name][i])]
    return min(limits) if limits else None


def launch_stalls(t: LaunchTable, i: int) -> Summary:
    """Launch row ``i``'s warp stalls as ncu defines them (analysis/ncu/stalls.py):
    ``top_stalls`` (each with its % of warp-active cycles as ``share_pct``, None where the export
    cannot give it) and ``stall_states`` (source, captured and missing states, coverage)."""
    values = {reason: float(v[i]) for reason, v in t.stalls.items() if not np.isnan(v[i])}
    if not values or t.stall_source is None:
        return {"top_stalls": [], "stall_states": None}
    samples = t.fields["pcsamp_samples"][i]
    b = breakdown(values, t.stall_source, t.text["cc"][i], TOP_STALLS, None if np.isnan(samples) else float(samples))
    return {
        "top_stalls": [{"reason": reason, "value": round(v, 3), "share_pct": None if pct is None else round(pct, 1),
                        "source": b.source} for reason, v, pct in b.top],
        "stall_states": {"source": b.source, "captured": list(b.captured),
                         "missing": None if b.missing is None else list(b.missing),
                         "coverage_pct": None if b.coverage_pct is None else round(b.coverage_pct, 1)},
    }


def roofline_summary(t: LaunchTable, d: Derived, i: int) -> Summary:
    """A launch's roofline fields: where its memory side came from, ncu's roofline DRAM peak,
    its data type, that type's FLOP/s roof, and its integer ops (not FLOPs). Only those the
    export gives, so records of exports without them keep their bytes."""
    precision = int(d.precision[i])
    fields = {
        "memory_source": "ncu-roofline" if d.memory_filled[i] else None,
        "dram_peak_gbs": _num(d.dram_peak_gbs[i], 1),
        "flop_precision": PRECISIONS[precision] if precision >= 0 else None,
        "peak_flops_per_s": _num(d.peak_flops[i], 0),
        "precision_flops_per_s": _num(d.precision_flops_per_s[i], 0),
        "int_ops": _num(t.fields["int_ops"][i]),
        "tensor_pipe_inst": _num(t.fields["tensor_pipe_inst"][i]),
        # the half and tensor data types the export holds no counter or roofline row for, when
        # its FLOPs are fp32 or fp64 alone: a half or tensor-core kernel's real work is then uncounted
        "flops_uncounted": [p for p in ("fp16", "tensor") if np.isnan(t.fields[f"flops_{p}"][i])
                            and np.isnan(t.fields[f"roofline_flops_per_s_{p}"][i])]
        if PRECISIONS[precision] in ("fp32", "fp64") and precision >= 0 else None,
    }
    return {key: value for key, value in fields.items() if value is not None and value != []}


CSV_COLUMNS = ("index", "id", "kernel", "duration_us", "dram_gbs", "dram_pct", "sm_pct", "mem_pct", "memory_pct",
               "occupancy_achieved_pct", "occupancy_theoretical_pct", "occupancy_limiter", "registers", "grid",
               "block", "flops", "bound")


CSV_SLICE = 20_000  # rows of the launch CSV converted and written at a time


def launch_csv(t: LaunchTable, d: Derived, start: int = 0) -> bytes:
    """The launches of ``t`` as CSV rows (one each, profiling order), ``t`` being a block of rows
    whose first is launch ``start``; the header comes with the block at 0. Joined, the blocks'
    rows are the table a big profile's record cites as a blob, whatever the blocks: each cell is
    formatted alone. Text cells are neutralised against CSV injection (``ikreport.csv_cells``);
    readers undo it with ``csv_cells.restore``."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    from ikreport.analysis.arrow import column
    from ikreport.csv_cells import neutralise

    f = t.fields
    codes, where = np.unique(d.limiter, return_inverse=True)  # a few codes, named once each, not per launch
    limiter = np.array([limiter_name(int(c)) or "" for c in codes], dtype=object)[where]
    columns = {
        "index": start + np.arange(t.n), "id": t.ids, "kernel": t.kernels,
        "duration_us": np.round(d.duration_us, 3), "dram_gbs": np.round(d.dram_gbs, 1),
        "dram_pct": f["dram_pct"], "sm_pct": f["sm_pct"], "mem_pct": f["mem_pct"], "memory_pct": d.memory_pct,
        "occupancy_achieved_pct": f["occupancy_achieved_pct"],
        "occupancy_theoretical_pct": f["occupancy_theoretical_pct"], "occupancy_limiter": limiter,
        "registers": f["registers"], "grid": f["grid"], "block": f["block"], "flops": d.flops,
        "bound": np.array(LABELS, dtype=object)[d.bound] if t.n else np.array([], dtype=object),
    }
    out = io.BytesIO()
    # written CSV_SLICE rows at a time: a whole table of a 200,000-launch profile's text
    # cells (twice, neutralised) cost about 100 MB at the peak of an import
    for at in range(0, max(t.n, 1), CSV_SLICE):
        part = {name: column(columns[name][at:at + CSV_SLICE]) for name in CSV_COLUMNS}
        # kernel names and ids are anyone's text: no cell may reach a spreadsheet as a formula
        pacsv.write_csv(neutralise(pa.table(part)), out,
                        write_options=pacsv.WriteOptions(include_header=start == 0 and at == 0))
    return out.getvalue()
