"""Peak device-memory bandwidth arithmetic (pure).

Convention: ikreport counts the bytes a copy reads **plus** the bytes it writes, so a copy
of N bytes in t seconds moves 2N bytes: 2N / t. This is BabelStream's convention and the
one a roofline needs (DRAM traffic in both directions). nvbandwidth and cudaMemcpy
benchmarks count the copied size once; importers double those and say so.
"""

from __future__ import annotations

import statistics
from typing import Any

CONVENTION = "read+write: a copy of N bytes counts 2N bytes moved"


def copy_gbs(copied_bytes: int, seconds: float) -> float:
    """GB/s (1e9 bytes/s) moved by a copy of ``copied_bytes``, counting read + write."""
    return 2 * copied_bytes / seconds / 1e9


def theoretical_peak_gbs(max_memory_clock_mhz: float | None, bus_width_bits: int | None) -> float | None:
    """Datasheet-style peak: two transfers per memory clock (as nvidia-smi and NVML report the
    clock for GDDR and HBM alike) times the bus width. H100 SXM: 2619 MHz x 5120 bit = 3352 GB/s."""
    if not max_memory_clock_mhz or not bus_width_bits:
        return None
    return 2 * max_memory_clock_mhz * 1e6 * bus_width_bits / 8 / 1e9


def summarize_samples(samples: list[dict[str, Any]], theoretical: float | None) -> dict[str, Any]:
    """samples: [{"buffer_bytes", "seconds", "gbs"}] -> median/max/min, per size, vs theory."""
    values = [s["gbs"] for s in samples]
    by_size: dict[int, list[float]] = {}
    for s in samples:
        by_size.setdefault(s["buffer_bytes"], []).append(s["gbs"])
    median = statistics.median(values)
    best = max(values)
    return {
        "median_gbs": round(median, 1),
        "max_gbs": round(best, 1),
        "min_gbs": round(min(values), 1),
        "sample_count": len(values),
        "by_size": [{"buffer_bytes": size, "median_gbs": round(statistics.median(v), 1), "max_gbs": round(max(v), 1),
                     "samples": len(v)} for size, v in sorted(by_size.items())],
        "theoretical_gbs": round(theoretical, 1) if theoretical else None,
        "median_of_theoretical_pct": round(100 * median / theoretical, 1) if theoretical else None,
        "max_of_theoretical_pct": round(100 * best / theoretical, 1) if theoretical else None,
        "convention": CONVENTION,
    }
