"""Which ncu metrics feed which summary field, under every name ncu has used for them.

Raw metric names (``dram__bytes_read.sum``) appear as columns of ``--page raw`` and as
``Metric Name`` rows of ``--page details`` when collected with ``--metrics`` (section
"Command line profiler metrics"). Human names (``DRAM Throughput``) appear in the details
page's sections; 2020 releases used other ones (``SOL FB``, ``SM [%]``, ``Memory [%]``).
"""

from __future__ import annotations

import re

from ikreport.analysis.ncu.roofline import COUNT_FIELDS, RATE_FIELDS, SECTION_FIELDS
from ikreport.analysis.units import Kind

# What each field must be; fields not listed are counts (registers, grid size, waves...).
FIELD_KIND: dict[str, Kind] = {
    "duration_ns": "time",
    "dram_read_bytes": "bytes",
    "dram_write_bytes": "bytes",
    "dram_bytes_per_s": "byte_rate",
    "dram_pct": "percent",
    "sm_pct": "percent",
    "mem_pct": "percent",
    "occupancy_achieved_pct": "percent",
    "occupancy_theoretical_pct": "percent",
    "l2_hit_pct": "percent",
    "l1_pct": "percent",
    "l2_pct": "percent",
    "dram_bytes": "bytes",
    **{name: "byte_rate" for name in RATE_FIELDS},
    "sm_hz": "frequency",
    "dram_hz": "frequency",
}

# field -> raw metric names, first present wins.
RAW_FIELDS: dict[str, tuple[str, ...]] = {
    # one instance a launch: sum, max and average are the one duration
    "duration_ns": ("gpu__time_duration.sum", "gpu__time_duration.max", "gpu__time_duration.avg"),
    # 2025.x releases spell the DRAM byte counters with "_op_".
    "dram_read_bytes": ("dram__bytes_read.sum", "dram__bytes_op_read.sum"),
    "dram_write_bytes": ("dram__bytes_write.sum", "dram__bytes_op_write.sum"),
    # all DRAM traffic, as ncu's roofline sections count it for arithmetic intensity
    "dram_bytes": ("dram__bytes.sum",),
    # ncu's DRAM byte rate (the roofline sections' "DRAM Bandwidth"), in raw pages of --set full
    "dram_bytes_per_s": ("dram__bytes.sum.per_second",),
    "dram_pct": (
        "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
        "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    ),
    "sm_pct": ("sm__throughput.avg.pct_of_peak_sustained_elapsed",),
    "mem_pct": ("gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",),
    "occupancy_achieved_pct": ("sm__warps_active.avg.pct_of_peak_sustained_active",),
    "occupancy_theoretical_pct": ("sm__maximum_warps_per_active_cycle_pct",),
    "registers": ("launch__registers_per_thread",),
    "waves": ("launch__waves_per_multiprocessor",),
    # SMs the launch could use (a green context or MPS gives it fewer than the device has)
    "sms": ("launch__sm_count", "device__attribute_multiprocessor_count"),
    "grid": ("launch__grid_size",),
    "block": ("launch__block_size",),
    "limit_registers": ("launch__occupancy_limit_registers",),
    "limit_shared_mem": ("launch__occupancy_limit_shared_mem",),
    "limit_warps": ("launch__occupancy_limit_warps",),
    "limit_blocks": ("launch__occupancy_limit_blocks",),
    "l2_hit_pct": ("lts__t_sector_hit_rate.pct",),
    # each memory level's own throughput, so the busiest level can be named (ncu's SOL breakdown)
    "l1_pct": ("l1tex__throughput.avg.pct_of_peak_sustained_active",),
    "l2_pct": ("lts__throughput.avg.pct_of_peak_sustained_elapsed",),
    # the clocks the launch ran at, and its length in cycles (what ncu's SpeedOfLight section
    # shows as SM Frequency, DRAM Frequency and Elapsed Cycles): see analysis/ncu/clocks.py
    # (GPC, SM and SM sub-partition counters run on the one SM clock)
    "sm_hz": ("gpc__cycles_elapsed.avg.per_second", "sm__cycles_elapsed.avg.per_second",
              "smsp__cycles_elapsed.avg.per_second", "gpc__cycles_elapsed.max.per_second",
              "sm__cycles_elapsed.max.per_second"),
    "dram_hz": ("dram__cycles_elapsed.avg.per_second", "dram__cycles_elapsed.max.per_second"),
    "cycles": ("gpc__cycles_elapsed.max", "sm__cycles_elapsed.max", "gpc__cycles_elapsed.avg",
               "sm__cycles_elapsed.avg", "smsp__cycles_elapsed.max", "smsp__cycles_elapsed.avg"),
    # the launch's length in DRAM cycles: a duration over the DRAM clock where the SM's is missing
    "dram_cycles": ("dram__cycles_elapsed.max", "dram__cycles_elapsed.avg"),
    # instructions issued to the tensor pipes: tensor-core work, though not a FLOP count
    "tensor_pipe_inst": ("sm__inst_executed_pipe_tensor.sum", "smsp__inst_executed_pipe_tensor.sum",
                         "sm__inst_executed_pipe_tensor_op_hmma.sum", "smsp__inst_executed_pipe_tensor_op_hmma.sum"),
    # PC samples taken of the launch's warps: the pcsamp stall states add up to it when all are there
    "pcsamp_samples": ("smsp__pcsamp_sample_count", "smsp__pcsamp_sample_count.sum"),
    # the device's top SM clock, in kHz (a unitless device attribute)
    "max_sm_khz": ("device__attribute_max_gpu_frequency_khz",),
}

# field -> (section, human metric name) in the details page, first present wins.
# ncu's speed-of-light section has had two titles and, by era, these names for one fact:
#   2019.x-2020.1  GPU Speed Of Light: SM [%], Memory [%], SOL FB, SOL TEX, SOL L2, Memory Frequency
#   2020.2-2020.3  SM [%], Memory [%], SOL DRAM, SOL L1/TEX Cache, SOL L2 Cache, DRAM Frequency
#   2021.x         GPU Speed Of Light Throughput: Compute (SM) [%], Memory [%], DRAM Throughput,
#                  L1/TEX Cache Throughput, L2 Cache Throughput
#   2022.x-        Compute (SM) Throughput, Memory Throughput (in %)
SOL_SECTIONS = ("GPU Speed Of Light Throughput", "GPU Speed Of Light")


def _sol(*names: str) -> tuple[tuple[str, str], ...]:
    """Each of ``names`` under each title of the speed-of-light section."""
    return tuple((section, name) for name in names for section in SOL_SECTIONS)


def _in(section: str, **names: str) -> dict[str, tuple[tuple[str, str], ...]]:
    """Each field's one name under one section title."""
    return {field: ((section, name),) for field, name in names.items()}


DETAIL_FIELDS: dict[str, tuple[tuple[str, str], ...]] = {
    "duration_ns": _sol("Duration"),
    "dram_pct": _sol("DRAM Throughput", "SOL DRAM", "SOL FB"),
    "sm_pct": _sol("Compute (SM) Throughput", "Compute (SM) [%]", "SM [%]"),
    "mem_pct": _sol("Memory Throughput", "Memory [%]"),
    **_in("Memory Workload Analysis", dram_bytes_per_s="Memory Throughput"),
    **_in("Occupancy", occupancy_achieved_pct="Achieved Occupancy", occupancy_theoretical_pct="Theoretical Occupancy"),
    **_in("Launch Statistics", registers="Registers Per Thread", waves="Waves Per SM", sms="# SMs", grid="Grid Size",
          block="Block Size"),
    **_in("Occupancy", limit_registers="Block Limit Registers", limit_shared_mem="Block Limit Shared Mem",
          limit_warps="Block Limit Warps", limit_blocks="Block Limit SM"),
    **_in("Memory Workload Analysis", l2_hit_pct="L2 Hit Rate"),
    "l1_pct": _sol("L1/TEX Cache Throughput", "SOL L1/TEX Cache", "SOL TEX"),
    "l2_pct": _sol("L2 Cache Throughput", "SOL L2 Cache", "SOL L2"),
    "sm_hz": _sol("SM Frequency"),
    "dram_hz": _sol("DRAM Frequency", "Memory Frequency"),
    "cycles": _sol("Elapsed Cycles"),
}

# counts summed from several metrics and the roofline sections' values (analysis/ncu/roofline.py)
FIELDS: tuple[str, ...] = (tuple(RAW_FIELDS) + tuple(f for f in DETAIL_FIELDS if f not in RAW_FIELDS)
                           + COUNT_FIELDS + SECTION_FIELDS)

# Warp stall reasons, in the order of preference when an export has several forms
# (stalls.py says what each one measures):
#   pcsamp:  PC-sampling counts (--section WarpStateStats with sampling);
#   ratio:   warp cycles per issued instruction in each state;
#   latency: warp cycles per warp in each state;
#   pct:     % of warp-active cycles in each state (smsp__warp_issue_stalled_*_per_warp_active.pct).
STALL_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("pcsamp", re.compile(r"^smsp__pcsamp_warps_issue_stalled_(.+?)(?:\.sum)?$")),
    ("ratio", re.compile(r"^smsp__average_warps_issue_stalled_(.+)_per_issue_active\.ratio$")),
    ("latency", re.compile(r"^smsp__average_warp_latency_issue_stalled_([a-z0-9_]+?)(?:\.ratio)?$")),
    ("pct", re.compile(r"^smsp__warp_issue_stalled_(.+)_per_warp_active\.pct$")),
)


def stall_reason(metric: str) -> tuple[str, str] | None:
    """(source, warp state) when ``metric`` gives the warps in one state, else None. "selected"
    (the warp issued) and "not_selected" are kept: with the stalls they make up all
    warp-active cycles, which the coverage of the captured states is measured against."""
    for source, rx in STALL_PATTERNS:
        m = rx.match(metric)
        if m:
            reason = m.group(1)
            # each pcsamp reason has a "_not_issued" twin (a subset): counting it would double.
            if reason.endswith("not_issued"):
                return None
            return source, reason
    return None


def best_stalls(found: dict[str, dict[str, float]]) -> dict[str, tuple[str, float]]:
    """From {source: {reason: value}}, the reasons of the most precise source present."""
    best = next((source for source, _ in STALL_PATTERNS if found.get(source)), None)
    return {reason: (best, value) for reason, value in found[best].items()} if best else {}


