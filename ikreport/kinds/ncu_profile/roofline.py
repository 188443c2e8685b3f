"""The ``ncu-profile`` kind's roofline: the claim that places a kernel on ncu's roofline, the
memory side filled from ncu's roofline DRAM peak, and the roofline chart with roofs of the
kernel's own data type (see analysis/ncu/roofline.py for how FLOPs are weighted, after ncu's
SpeedOfLight_RooflineChart and SpeedOfLight_Hierarchical{Single,Double,Half,Tensor}RooflineChart
section files). Part of the kind's package (kinds/ncu_profile/), split off along the roofline seam; it reads only
a record's ``data`` and formats numbers with ``formatting``."""

from __future__ import annotations

import re
from typing import Any, cast

from ikreport.claims.datasheet import compute_peak_tflops
from ikreport.claims.kernel_names import short_kernel
from ikreport.claims.model import Record
from ikreport.formatting import fmt_flops, fmt_gbs, fmt_number, fmt_pct, plural
from ikreport.kinds.base import MAX_TABLE_KERNELS, PageContext, XYChart
from ikreport.kinds.ncu_profile.measured_peak import measured_peak
from ikreport.kinds.peak_bandwidth import measured_peak_for
from ikreport.kinds.ncu_profile.data import first_launch

CAVEAT_ROOFLINE = ("FLOPs are weighted as ncu's roofline sections weight them (SpeedOfLight_RooflineChart: an FFMA "
                   "or DFMA is 2, FADD/FMUL 1; SpeedOfLight_HierarchicalHalfRooflineChart: an HFMA 4, HADD/HMUL 2; "
                   "tensor ops 1 each); integer ops are not FLOPs.")
CAVEAT_ROOFLINE_PEAK = ("The peak is the one ncu's roofline section computes from the profiled GPU's clocks "
                        "(theoretical), not a measurement.")
CAVEAT_FILLED = ("The export has no memory throughput %: the memory side is ncu's DRAM bandwidth over the DRAM "
                 "peak ncu's roofline section uses (theoretical bytes per cycle at the DRAM clock it saw).")


def roofline_memory(first: dict) -> str | None:
    """The memory side filled from ncu's roofline section (no memory % in the export), with
    its source: "DRAM 958.1 GB/s = 71.0% of the 1.35 TB/s peak ncu's roofline section uses"."""
    if first.get("memory_source") != "ncu-roofline" or first.get("dram_peak_gbs") is None:
        return None
    return (f"DRAM {fmt_gbs(first['dram_gbs'])} = {fmt_pct(first['memory_pct'])} of the "
            f"{fmt_gbs(first['dram_peak_gbs'])} peak ncu's roofline section uses")


NO_CHART = ("No roofline chart is drawn: it would be this one kernel with no memory or compute roof to place it "
            "against.")


# a kernel name that says half-precision or tensor-core work (cuBLAS/CUTLASS/FlashAttention spellings)
HALF_OR_TENSOR = re.compile(r"tensorop|hmma|wmma|xmma|mma_|_mma|gmma|bf16|bfloat16|fp16|f16|half|tf32|fp8|e4m3|e5m2|"
                            r"flash|fmha", re.IGNORECASE)


def uncounted(kernel: str, first: dict) -> str | None:
    """What the export does not count of a kernel whose name, or its instructions on the tensor
    pipes, say half or tensor-core work but whose FLOPs are fp32/fp64 alone ('fp16 and
    tensor'), else None."""
    missing = first.get("flops_uncounted") or []
    said = HALF_OR_TENSOR.search(kernel) or (first.get("tensor_pipe_inst") or 0) > 0
    return " and ".join(missing) if missing and said else None


def roofline_text(short: str, first: dict, alone: bool = False, kernel: str = "") -> str | None:
    """The kernel on ncu's roofline: its FLOP/s against the roof of its own data type when ncu's
    roofline section gives one, and its FLOP per DRAM byte; None without FLOP/s. ``alone``: the
    profile's roofline would be this one point with no roof, so none is drawn, and this says so.
    A kernel named for half or tensor-core work whose export counts fp32/fp64 alone is said so:
    its rate is of the instructions counted, not its FLOP rate."""
    achieved, precision = first.get("flops_per_s"), first.get("flop_precision")
    if not achieved:
        return None
    missing = uncounted(kernel, first)
    own, peak = first.get("precision_flops_per_s"), first.get("peak_flops_per_s")
    if missing:  # fp16 counted too (HFMA) makes the counted FLOPs more than the main type's
        counted = (f"{precision} instructions, the only FLOPs the export counts" if own is None or own >= achieved
                   else f"the FLOPs the export counts, most of them {precision} ({fmt_flops(own)})")
        return (f"{short} runs {fmt_flops(achieved)} of {counted}; its "
                f"{'tensor-pipe instructions say' if first.get('tensor_pipe_inst') else 'name says'} "
                f"half-precision or tensor-core work, and the export holds no {missing} FLOP "
                "counter or roofline row, so its FLOP rate and its place on the roofline are not known "
                "(first launch).")
    text = f"{short} runs at {fmt_flops(achieved)}"
    if precision and own is not None and own < achieved:
        text += f", most of it {precision} ({fmt_flops(own)})"
    elif precision:
        text += f" ({precision})"
    if peak and own is not None:
        text += f"; that is {fmt_pct(100 * own / peak)} of the {fmt_flops(peak)} {precision} peak ncu's roofline section uses"
    if first.get("arithmetic_intensity"):
        text += f"; {first['arithmetic_intensity']:.3g} FLOP per DRAM byte"
    if first.get("int_ops"):
        text += f"; plus {fmt_number(first['int_ops'])} integer tensor ops, not counted as FLOPs"
    return text + " (first launch)." + (f" {NO_CHART}" if alone else "")


def _plotted(data: dict) -> list[tuple[int, dict, dict]]:
    """(index, kernel, its first launch) of the table's kernels a roofline can place."""
    out = []
    for n, kernel in enumerate(data["kernels"][:MAX_TABLE_KERNELS]):
        first = first_launch(data, kernel)
        if first.get("arithmetic_intensity") and first.get("flops_per_s") and not uncounted(kernel["kernel"], first):
            out.append((n, kernel, first))
    return out


def roofline_alone(record: Record, records: Any) -> str | None:
    """The kernel a roofline would show alone, with no roof (so no chart is drawn), if any."""
    plotted = _plotted(record["data"])
    if len(plotted) != 1:
        return None
    _, kernel, first = plotted[0]
    if measured_peak_for(record, records) or first.get("dram_peak_gbs") or _compute_roof(record, first)[0]:
        return None
    return str(kernel["kernel"])


def roofline_chart(record: Record, page: PageContext) -> list[Any]:
    """Kernels as FLOP/s against FLOP per DRAM byte, under the roofs that can be named:
    memory from the cited peak-bandwidth record of the same GPU model, compute from a
    datasheet value (labelled as such)."""
    records = page.records
    data = record["data"]
    plotted = _plotted(data)
    points = [{"series": "kernel", "label": short_kernel(kernel["kernel"]), "href": page.anchor(f"k-{n + 1}"),
               "intensity": first["arithmetic_intensity"], "tflops": round(first["flops_per_s"] / 1e12, 6)}
              for n, kernel, first in plotted]
    if not points or roofline_alone(record, records):  # one point under no roof says nothing; its claim says why
        return []
    lo = min(p["intensity"] for p in points) / 10
    hi = max(p["intensity"] for p in points) * 10
    rows: list[dict[str, Any]] = list(points)
    notes: list[dict[str, str]] = []
    peak_id, measured = measured_peak(record, records)
    top_launch = plotted[0][2]
    compute, compute_series, compute_note = _compute_roof(record, top_launch)
    ncu_dram = top_launch.get("dram_peak_gbs")
    if peak_id or ncu_dram:
        gbs = cast(float, measured if peak_id else ncu_dram)  # a peak record's facts always hold its GB/s
        top = compute if compute else max(p["tflops"] for p in points) * 10
        ridge = min(hi, top * 1e3 / gbs)
        series = "memory (measured)" if peak_id else "memory (ncu roofline)"
        rows += [{"series": series, "intensity": x, "tflops": round(gbs * x / 1e3, 6)} for x in (lo, ridge)]
        notes.append({"text": f"Memory roof: the measured peak of {fmt_gbs(gbs)}", **page.record_link(peak_id)} if peak_id
                     else {"text": f"Memory roof: the {fmt_gbs(gbs)} DRAM peak ncu's roofline section uses "
                                   "(theoretical, from the profiled GPU's DRAM clock)."})
    else:
        notes.append({"text": "No memory roof: no peak-bandwidth record for this GPU model."})
    if compute:
        rows += [{"series": compute_series, "intensity": x, "tflops": compute} for x in (lo, hi)]
    notes.append({"text": compute_note})
    notes.append({"text": "FLOPs are weighted as ncu's roofline sections weight them: tensor-path ops one each, "
                          "SASS FP instructions when collected (FFMA and DFMA as two, HFMA as four, HADD and HMUL "
                          "as two); integer ops are not FLOPs."})
    alt = (f"Log-log roofline of {plural(len(points), 'kernel', 'kernels')}: FLOP/s against FLOP per DRAM byte, "
           "first launch of each.")
    return [page.charts.render("roofline", "Roofline", alt, rows, tuple(notes))]


def _compute_roof(record: Record, launch: dict) -> tuple[float | None, str, str]:
    """(TFLOP/s, series, note) of the compute roof for the top plotted kernel's data type: the
    peak ncu's roofline section gives for that type, else the datasheet's dense BF16 figure,
    but only for tensor work (or a record that does not say its type): a BF16 tensor roof over
    an FP32 kernel would be the roof of another data type."""
    precision, peak = launch.get("flop_precision"), launch.get("peak_flops_per_s")
    if peak:
        tflops = round(peak / 1e12, 6)
        return tflops, "compute (ncu roofline)", (f"Compute roof: {fmt_flops(peak)} {precision}, the peak ncu's "
                                                  "roofline section uses for the top kernel's data type (theoretical).")
    datasheet = compute_peak_tflops(record["subject"].get("gpu")) if precision in (None, "tensor") else None
    if datasheet:
        return datasheet, "compute (datasheet)", f"Compute roof: {datasheet:g} TFLOP/s dense BF16, a datasheet value, not measured."
    if precision not in (None, "tensor"):
        return None, "", (f"No compute roof: the export has no {precision} peak, and the datasheet figure "
                          "(dense BF16 tensor) is not this kernel's data type.")
    return None, "", "No compute roof: no measured or datasheet compute peak for this GPU model."


ROOFLINE = XYChart(x="intensity", y="tflops", x_title="arithmetic intensity (FLOP per DRAM byte)", y_title="TFLOP/s",
                   log=True, series="series", point_series="kernel", legend_title="roof", width=420, height=300)



