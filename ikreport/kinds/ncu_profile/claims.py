"""The ``ncu-profile`` kind's claims: the profile's size, each top kernel's share of profiled
time, its bound, occupancy limiter, place on the roofline, ncu's own rule findings and stalls,
the SM clock, and DRAM throughput against a measured peak. Each rule reads only the record's
``data`` (and the measured peak's record it cites) and writes its numbers with ``formatting``,
so a claim cannot drift from the record it cites. The page (kind.py) labels kernels and sets
the precision of its figures with the same functions."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ikreport.analysis.ncu.clocks import clock_fact
from ikreport.analysis.ncu.summary import FULL_OCCUPANCY_PCT, LABELS, SOL_RULE, TIE, bound_label
from ikreport.claims.datasheet import base_sm_clock_hz, max_sm_clock_hz
from ikreport.claims.kernel_names import short_kernel
from ikreport.claims.model import Claim, Record, RecordSet, make_claim
from ikreport.formatting import distinct_digits, fmt_duration_us, fmt_gbs, fmt_number, fmt_pct, plural
from ikreport.kinds.base import MAX_TABLE_KERNELS
from ikreport.kinds.ncu_profile.data import first_launch
from ikreport.kinds.ncu_profile.measured_peak import (CAVEAT_MEASURED_FILL, measured_fill, measured_memory, measured_peak,
                                                      memory_pct)
from ikreport.kinds.ncu_profile.roofline import (CAVEAT_FILLED, CAVEAT_ROOFLINE, CAVEAT_ROOFLINE_PEAK, roofline_alone,
                                                 roofline_memory, roofline_text)
from ikreport.kinds.ncu_profile.stalls import stalls_caveats, stalls_text
from ikreport.kinds.peak_bandwidth import CAVEAT_OTHER_MACHINE, same_machine

MAX_TABLE_LAUNCHES = 200
TOP_KERNELS = 5

CAVEAT_SHARE = "Shares are of profiled GPU time (the sum of kernel durations under ncu), not of wall time."
CAVEAT_BOUND = (
    f"The label follows {SOL_RULE}. SM is sm__throughput; memory is ncu's Memory Throughput "
    "(gpu__compute_memory_throughput), or DRAM throughput where the export lacks it, as the claim says. "
    "It is the kernel's most common label across the launches the record holds."
)
CAVEAT_OCCUPANCY = (
    "The limiter is the smallest per-resource block limit: it says what caps occupancy, "
    "not whether more occupancy would make the kernel faster."
)
CAVEAT_NCU_RULES = ("These are ncu's own rule findings, quoted from the export as ncu wrote them for the "
                    "kernel's first launch; ikreport's bound label applies the thresholds of ncu's SOLBottleneck "
                    "rule to the numbers in the record.")
CAVEAT_OF_PEAK = ("DRAM throughput is ncu's bytes read + written over the kernel's duration; the peak is a "
                  "streaming copy measured on the same GPU model, not necessarily the same board or clocks.")
CAVEAT_OF_PEAK_PRINTED = ("DRAM throughput is the rate ncu printed for the kernel; the peak is a streaming copy "
                          "measured on the same GPU model, not necessarily the same board or clocks.")

CAVEAT_CLOCK = ("ncu reads the clock over each profiled kernel (cycles elapsed per second); the median over the "
                "launches is shown. Whether clocks were locked is said only as the session page, the importer or "
                "ikreport's own ncu command records it, never guessed from the clock.")

MEMORY_LEVEL = {"dram": "DRAM", "cache": "L1/L2 cache, not DRAM", "unknown": "level not in the export",
                "l1": "L1/TEX cache", "l2": "L2 cache"}


def duration_digits(data: dict[str, Any]) -> int | None:
    """The precision of the durations on the record's page (its claims, tables and chart text),
    so that no two different durations read the same."""
    kernels, launches = data["kernels"][:MAX_TABLE_KERNELS], data["launches"][:MAX_TABLE_LAUNCHES]
    return distinct_digits([data.get("profiled_time_us"), *(k["total_us"] for k in kernels),
                            *(k["mean_us"] for k in kernels), *(s["duration_us"] for s in launches)], fmt_duration_us)


def rate_digits(data: dict[str, Any], peak_gbs: float | None) -> int | None:
    """The precision of the GB/s figures on the record's page, the measured peak among them."""
    rates = [s["dram_gbs"] for s in data["launches"][:MAX_TABLE_LAUNCHES]]
    rates += [first_launch(data, k).get("dram_gbs") for k in data["kernels"][:MAX_TABLE_KERNELS]]
    return distinct_digits(rates + [peak_gbs], fmt_gbs)


@dataclass(frozen=True)
class ProfileContext:
    """What each of the profile's rules reads: the record and its id, the archive, the precision
    of the page's durations, the measured peak of the GPU model ((None, None) without one) and
    the kernel a roofline would show alone (None when none would)."""

    record_id: str
    record: Record
    records: RecordSet
    us: int | None
    peak_id: str | None
    peak_gbs: float | None
    roofline_alone: str | None

    @property
    def data(self) -> dict[str, Any]:
        return self.record["data"]

    def kernel_claim(self, rule: str, kernel: str, text: str, caveats: list[str],
                     cites: list[str] | None = None) -> Claim:
        """A claim about ``kernel`` (its full name) on this record's page, citing this record
        alone unless ``cites`` says more."""
        return make_claim(rule, kernel, self.record_id, text, cites or [self.record_id], caveats, self.records, kernel)


@dataclass(frozen=True)
class TopKernel:
    """One of the profile's top kernels as its rules read it: its row of ``data["kernels"]``,
    its full and short name and its first launch."""

    row: dict[str, Any]
    name: str
    short: str
    first: dict[str, Any]


def profile_size(p: ProfileContext) -> list[Claim]:
    """profile-size: how many launches of how many kernels, and the profiled GPU time."""
    data, total = p.data, p.data.get("profiled_time_us")
    text = (f"The profile holds {plural(data['launch_count'], 'kernel launch', 'kernel launches')} "
            f"of {plural(data['kernel_count'], 'kernel', 'kernels')}")
    text += f", {fmt_duration_us(total, p.us)} of profiled GPU time." if total else "; it has no kernel durations."
    return [make_claim("profile-size", "", p.record_id, text, [p.record_id], [CAVEAT_SHARE] if total else [], p.records)]


def kernel_share(p: ProfileContext, k: TopKernel) -> list[Claim]:
    """kernel-share: the kernel's share of profiled GPU time, its total and its launches."""
    kernel = k.row
    if kernel["share_pct"] is None:
        return []
    text = (f"{k.short} takes {fmt_pct(kernel['share_pct'])} of profiled GPU time: "
            f"{fmt_duration_us(kernel['total_us'], p.us)} over {kernel['launches']} "
            f"launch{'es' if kernel['launches'] != 1 else ''}"
            f"{', derived from elapsed cycles over their clock' if kernel.get('duration_derived') else ''}.")
    return [p.kernel_claim("kernel-share", k.name, text, [CAVEAT_SHARE])]


def kernel_bound(p: ProfileContext, k: TopKernel) -> list[Claim]:
    """kernel-bound: the kernel's bound label (_bound_text), citing the measured peak's record
    too when that judged a memory side."""
    bound = _bound_text(k.short, k.row, k.first, p.data, p.peak_gbs)
    if not bound:
        return []
    caveats = [CAVEAT_BOUND] + ([CAVEAT_FILLED] if k.first.get("memory_source") == "ncu-roofline" else [])
    cites = None
    if p.peak_id and any(measured_fill(s, p.peak_gbs) is not None for s in judged_launches(p.data, k.row)):
        # the memory side is the measured peak's record as much as this one: cite both, so
        # both limitation lists show
        cites = [p.record_id, p.peak_id]
        caveats += [CAVEAT_MEASURED_FILL] + ([] if same_machine(p.record, p.peak_id, p.records)
                                             else [CAVEAT_OTHER_MACHINE])
    return [p.kernel_claim("kernel-bound", k.name, bound, caveats, cites)]


def kernel_occupancy(p: ProfileContext, k: TopKernel) -> list[Claim]:
    """kernel-occupancy: what limits the kernel's occupancy (_occupancy_text)."""
    occupancy = _occupancy_text(k.short, k.first)
    return [p.kernel_claim("kernel-occupancy", k.name, occupancy, [CAVEAT_OCCUPANCY])] if occupancy else []


def kernel_roofline(p: ProfileContext, k: TopKernel) -> list[Claim]:
    """kernel-roofline: the kernel's FLOP/s on ncu's roofline (roofline.py)."""
    roofline = roofline_text(k.short, k.first, p.roofline_alone == k.name, k.name)
    if not roofline:
        return []
    caveats = [CAVEAT_ROOFLINE] + ([CAVEAT_ROOFLINE_PEAK] if k.first.get("peak_flops_per_s") else [])
    return [p.kernel_claim("kernel-roofline", k.name, roofline, caveats)]


def kernel_ncu_rules(p: ProfileContext, k: TopKernel) -> list[Claim]:
    """kernel-ncu-rules: ncu's own rule findings on the kernel's first launch, quoted."""
    findings = _ncu_rules_text(k.short, k.row, k.first)
    return [p.kernel_claim("kernel-ncu-rules", k.name, findings, [CAVEAT_NCU_RULES])] if findings else []


def kernel_stalls(p: ProfileContext, k: TopKernel) -> list[Claim]:
    """kernel-stalls: the kernel's top warp stalls (stalls.py)."""
    stalls = stalls_text(k.short, k.first)
    return [p.kernel_claim("kernel-stalls", k.name, stalls, stalls_caveats(p.data, k.row, TOP_KERNELS))] if stalls else []


# each top kernel's rules, in the order its claims appear
KERNEL_RULES: tuple[Callable[[ProfileContext, TopKernel], list[Claim]], ...] = (
    kernel_share, kernel_bound, kernel_occupancy, kernel_roofline, kernel_ncu_rules, kernel_stalls)


def profile_claims(record_id: str, record: Record, records: RecordSet) -> list[Claim]:
    """The profile's size (profile_size), then for each top kernel in turn the claims of
    KERNEL_RULES: its share, bound, occupancy limiter, roofline, ncu's rule findings and stalls."""
    peak_id, peak_gbs = measured_peak(record, records)
    p = ProfileContext(record_id, record, records, duration_digits(record["data"]), peak_id, peak_gbs,
                       roofline_alone(record, records))
    claims = profile_size(p)
    for row in p.data["kernels"][:TOP_KERNELS]:
        kernel = TopKernel(row, row["kernel"], short_kernel(row["kernel"]), first_launch(p.data, row))
        for rule in KERNEL_RULES:
            claims += rule(p, kernel)
    return claims


def clock_claims(record_id: str, record: Record, records: RecordSet) -> list[Claim]:
    """The SM clock the counters show, beside the device's maximum (from the export or its
    session page, else a datasheet value, named as such) and its datasheet base clock, and
    whether ncu locked the clocks only as the record's method says it, with each source."""
    clocks = record["data"].get("clocks")
    if not clocks:
        return []
    gpu = record["subject"].get("gpu")
    top, source = clocks.get("max_sm_hz"), clocks.get("max_source")
    if not top:
        top, source = max_sm_clock_hz(gpu), "a datasheet value, not measured"
    base = base_sm_clock_hz(gpu)
    text = f"{clock_fact(clocks['sm_hz'], top, base, clock_control(record['method']))}. SM clock from " \
           f"{clocks['sm_source']}, median of {plural(clocks['launches'], 'launch', 'launches')}"
    text += f"; maximum from {source}" if top else "; the device's maximum is not in the export"
    if base:
        text += f"; base from the {gpu} datasheet, not measured"
    if clocks.get("dram_hz"):
        text += f". DRAM at {clocks['dram_hz'] / 1e9:.2f} GHz, from {clocks['dram_source']}"
    return [make_claim("profile-clock", "", record_id, text + ".", [record_id], [CAVEAT_CLOCK], records)]


def clock_control(method: Mapping[str, Any]) -> tuple[str, str] | None:
    """(--clock-control value, how the record knows it), or None when it does not: observed on
    a session page, stated by the importer, or passed to ncu by ikreport itself."""
    value = (method.get("options") or {}).get("clock_control")
    if value is None:
        return None
    sources = method.get("option_sources")
    if sources is not None:
        how = sources.get("clock_control")
        return (str(value), how) if how else None
    if "exported_with" in method:
        return str(value), "observed from the report's session page"
    if method.get("command") is not None:
        return str(value), "passed to ncu by ikreport"
    return str(value), "stated by the importer"  # an import from before option sources were kept


def judged_launches(data: dict, kernel: dict) -> list[dict]:
    """The launches a kernel's label is voted from: all it has, or its first alone when the
    record keeps only some launches."""
    launches = [s for s in data["launches"] if s["kernel"] == kernel["kernel"]]
    if not data.get("launches_complete", True) or not launches:
        launches = [first_launch(data, kernel)]
    return launches


def kernel_label(data: dict, kernel: dict, peak_gbs: float | None = None) -> tuple[str, int, int]:
    """(label, launches with it, launches judged): the kernel's most common bound label under
    today's rule (bound_label), re-derived from the launches the record holds, so a record
    imported under an older rule reads right; its first launch alone when the record keeps
    only some launches. With ``peak_gbs`` (a measured peak of the GPU model), a launch without
    memory % is judged by its DRAM bytes/s over it. Ties go to the label first in LABELS."""
    votes = [bound_label(memory_pct(s, peak_gbs), s.get("sm_pct")) for s in judged_launches(data, kernel)]
    label = min(set(votes), key=lambda x: (-votes.count(x), LABELS.index(x)))
    return label, votes.count(label), len(votes)


def _bound_text(short: str, kernel: dict, first: dict, data: dict | None = None,
                peak_gbs: float | None = None) -> str | None:
    """The bound claim; when the export lacks one side of the speed-of-light pair, what is known
    and that no bound is named (a missing side is unknown, never 0); None when it has neither.
    A missing memory side is filled from ncu's roofline peak (in the record) or from
    ``peak_gbs``, a measured peak of the GPU model, and the claim says which. Without the
    record's ``data``, the first launch alone is judged."""
    mem, sm = memory_pct(first, peak_gbs), first.get("sm_pct")
    filled = roofline_memory(first) or measured_memory(first, peak_gbs)
    label, count, judged = kernel_label(data, kernel, peak_gbs) if data else (bound_label(mem, sm), 1, 1)
    if label == "unknown" or mem is None or sm is None:
        if mem is None and sm is None:
            return None
        known = (f"SM at {fmt_pct(sm)} of peak; memory throughput" if sm is not None
                 else (filled + "; SM throughput") if filled
                 else f"memory at {fmt_pct(mem)} of peak ({MEMORY_LEVEL.get(first.get('memory_level', 'unknown'), '')}); "
                      "SM throughput")
        return f"{short}: {known} not captured, so no bound is named (first launch)."
    level = MEMORY_LEVEL.get(first.get("memory_level", "unknown"), "")
    memory = f"memory {fmt_pct(mem)} of peak ({level})"
    memory = filled or memory
    if first.get("memory_level") in ("cache", "l1", "l2") and first.get("dram_pct") is not None:
        memory = f"memory {fmt_pct(mem)} of peak ({level.split(',')[0]}; DRAM {fmt_pct(first['dram_pct'])})"
    of = f" in {count} of {judged} launches" if judged > 1 else ""
    return (f"{short} is {label} by ncu's SOLBottleneck thresholds{of}: {memory}, SM {fmt_pct(sm)} of peak "
            "(first launch).")


# ncu's SOLBottleneck finding opens with the branch it took (its wording across 2021-2025
# releases); each maps to the label ikreport gives that branch. "High Throughput" ("utilizing
# greater than 80%") names no side in its opening, so it is not compared.
SOL_SIDE = {"Memory is more heavily utilized": "memory-bound", "Compute is more heavily utilized": "compute-bound",
            "Compute and Memory are well-balanced": "balanced",
            "This kernel grid is too small": "latency-bound",
            "All launches of this workload use grids": "latency-bound",
            "This kernel exhibits low compute throughput": "latency-bound",
            "This workload exhibits low compute throughput": "latency-bound"}


def _ncu_rules_text(short: str, kernel: dict, first: dict) -> str | None:
    """ncu's own rule findings for the kernel's first launch, quoted, and a note when ncu's
    SOLBottleneck finding is another branch than ikreport's label of that launch: the
    thresholds agree, so this shows where the numbers differ (a DRAM-only
    memory side, rounding)."""
    rules = [r for r in first.get("ncu_rules") or [] if r.get("description")]
    if not rules:
        return None
    quoted = " ".join(f"{r.get('rule') or r.get('section') or 'rule'}"
                      f"{' (' + r['type'] + ')' if r.get('type') else ''}: {r['description']}" for r in rules)
    text = f"ncu's rules on {short} (first launch) say: {quoted}"
    label = bound_label(first.get("memory_pct"), first.get("sm_pct"))
    for r in rules:
        ncu_side = next((side for opening, side in SOL_SIDE.items()
                         if r.get("rule") == "SOLBottleneck" and r["description"].startswith(opening)), None)
        if ncu_side and label != "unknown" and label != ncu_side:
            text += f" (ikreport's label, {label}, disagrees with ncu's SOLBottleneck rule, which finds it {ncu_side}.)"
    return text


def _occupancy_text(short: str, first: dict) -> str | None:
    """The occupancy claim: what limits it (a tie named as one), or that nothing does at full
    theoretical occupancy, and why achieved falls far short when the export shows it (a grid
    of less than one wave)."""
    limiter, theoretical = first.get("occupancy_limiter"), first.get("occupancy_theoretical_pct")
    achieved, waves = first.get("occupancy_achieved_pct"), first.get("waves")
    parts = []
    if theoretical is not None:
        parts.append(f"theoretical {fmt_pct(theoretical)}")
    if achieved is not None:
        parts.append(f"achieved {fmt_pct(achieved)}")
    numbers = f" ({', '.join(parts)})" if parts else ""
    if theoretical is not None and theoretical >= FULL_OCCUPANCY_PCT:
        text = f"{short} reaches full theoretical occupancy: no resource limits it{numbers}."
    elif limiter and TIE in limiter:
        text = (f"{short}'s occupancy is limited by {limiter.replace(TIE, ' and ')} alike{numbers}: "
                "a tie, so reducing one of them alone gains nothing.")
    elif limiter:
        text = f"{short}'s occupancy is limited by {limiter}{numbers}."
    else:
        return None
    if achieved is not None and theoretical and achieved < theoretical / 2 and waves is not None and waves < 1:
        text += f" Achieved is far below theoretical because {_small_grid(first, waves)}."
    return text


def _small_grid(first: dict, waves: float) -> str:
    """Why a grid of less than one wave leaves SMs short of work, in what the numbers show (as
    ncu's launch-statistics rules say it): first blocks against SMs, then against how many
    blocks the SMs could hold at once."""
    grid, sms, per_sm = first.get("grid"), first.get("sms"), first.get("blocks_per_sm")
    wave = f"the grid fills {waves:.2g} of a wave"
    if grid is None or not sms:
        return f"{wave}: the GPU could run more blocks at once than the grid has"
    if grid < sms:
        return (f"its {fmt_number(grid)} blocks leave {fmt_number(sms - grid)} of the {fmt_number(sms)} SMs "
                f"without a block ({wave})")
    room = f", of the {fmt_number(per_sm)} each could hold at once" if per_sm else ""
    return (f"every one of the {fmt_number(sms)} SMs has a block, but only about {grid / sms:.2g}{room} "
            f"({fmt_number(grid)} blocks: {wave})")


def of_peak_claims(record_id: str, record: Record, records: RecordSet) -> list[Claim]:
    """Each top kernel's DRAM throughput as a share of the measured peak of the same GPU model."""
    peak_id, peak = measured_peak(record, records)
    if peak_id is None or peak is None:
        return []
    other = [] if same_machine(record, peak_id, records) else [CAVEAT_OTHER_MACHINE]
    gbs_digits = rate_digits(record["data"], peak)
    claims = []
    for kernel in record["data"]["kernels"][:TOP_KERNELS]:
        first = first_launch(record["data"], kernel)
        gbs = first.get("dram_gbs")
        if gbs is None:
            continue
        name = kernel["kernel"]
        text = (f"{short_kernel(name)} moves {fmt_gbs(gbs, gbs_digits)} to and from DRAM, {fmt_pct(100 * gbs / peak)} "
                f"of the measured peak of {fmt_gbs(peak, gbs_digits)} on this GPU model (first launch).")
        caveats = [CAVEAT_OF_PEAK if first.get("dram_gbs_derived") else CAVEAT_OF_PEAK_PRINTED, *other]
        claims.append(make_claim("kernel-of-measured-peak", name, record_id, text, [record_id, peak_id],
                                 caveats, records, name))
    return claims
