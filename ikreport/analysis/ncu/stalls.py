"""Warp-stall reasons of one launch as ncu defines them: shares of warp-active cycles, and how
much of those cycles the captured reasons cover.

Input: ``{reason: value}`` for one launch, all of one source (``metrics.STALL_PATTERNS``),
with the launch's compute capability ("8.9"). Every cycle, each active warp is in exactly one
state: issuing ("selected") or stalled for one reason. So over all states:

- ``pct``: ``smsp__warp_issue_stalled_<reason>_per_warp_active.pct`` is already the % of
  warp-active cycles in that state ("proportion of warps per cycle" in ncu's metric
  description); the captured states sum to the share of warp-active cycles they cover.
- ``ratio``: ``smsp__average_warps_issue_stalled_<reason>_per_issue_active.ratio`` is warp
  cycles per issued instruction in that state (ncu's Warp State Statistics chart); ``latency``:
  ``smsp__average_warp_latency_issue_stalled_<reason>`` is warp cycles per warp; ``pcsamp``:
  ``smsp__pcsamp_warps_issue_stalled_<reason>`` is PC samples. Each state's value over the
  sum of all states is its share of warp-active cycles (of samples, for pcsamp), so shares are
  given only when every state ncu has on that architecture was captured.

A state ncu has on the architecture but the export lacks is named as missing. ikreport knows
ncu's states for compute capability 7.x-9.x (Volta to Hopper); on others no state can be named
as missing, and for sources other than ``pct`` no share is given.
"""

from __future__ import annotations

from dataclasses import dataclass

# ncu's warp states on Volta to Ada (the smsp__warp_issue_stalled_* metrics of those parts).
_STATES_SM70 = frozenset({
    "barrier", "branch_resolving", "dispatch_stall", "drain", "imc_miss", "lg_throttle", "long_scoreboard",
    "math_pipe_throttle", "membar", "mio_throttle", "misc", "no_instruction", "not_selected", "selected",
    "short_scoreboard", "sleeping", "tex_throttle", "wait",
})
# by compute capability major; Hopper adds the warpgroup MMA wait
STATES: dict[int, frozenset[str]] = {7: _STATES_SM70, 8: _STATES_SM70, 9: _STATES_SM70 | {"gmma"}}
# PC sampling spells one state in the plural
ALIASES = {"no_instructions": "no_instruction"}
ISSUED = "selected"  # the warp issued: a warp state, but not a stall
# the states' PC samples must add up to smsp__pcsamp_sample_count within this share (a count
# printed in a scaled unit, "1.23 Ksample", loses its last digits)
SAMPLE_SLACK = 0.005
UNITS = {"pct": "% of warp-active cycles", "ratio": "warp cycles per issued instruction",
         "latency": "warp cycles per warp", "pcsamp": "PC samples"}


@dataclass(frozen=True)
class StallBreakdown:
    """One launch's warp states: which were captured, which ncu has but the export lacks, the
    share of warp-active cycles the captured ones cover, and the top stalls."""

    source: str
    captured: tuple[str, ...]
    missing: tuple[str, ...] | None  # None: ikreport does not know ncu's states on this architecture
    coverage_pct: float | None  # % of warp-active cycles in the captured states; None when unknown
    top: tuple[tuple[str, float, float | None], ...]  # (reason, value, % of warp-active cycles or None)


def states_for(cc: str | None) -> frozenset[str] | None:
    """ncu's warp states on compute capability ``cc`` ("8.9"), or None when not known here."""
    try:
        major = int(str(cc).split(".")[0])
    except ValueError:
        return None
    return STATES.get(major)


def breakdown(values: dict[str, float], source: str, cc: str | None, top: int,
              samples: float | None = None) -> StallBreakdown:
    """The warp-state breakdown of one launch (see module doc); ``top`` stalls at most, largest
    first (ties by name), the issuing state left out and zeros dropped. ``samples``: the
    launch's smsp__pcsamp_sample_count; when the pcsamp states' samples add up to it, every
    sample's state was captured, on any architecture, and shares are of those samples."""
    found = {ALIASES.get(reason, reason): value for reason, value in values.items()}
    known = states_for(cc)
    missing = tuple(sorted(known - set(found))) if known is not None else None
    total = sum(found.values())
    complete = source == "pcsamp" and samples is not None and samples > 0 and abs(total - samples) <= SAMPLE_SLACK * samples
    coverage: float | None
    scale: float | None
    if complete:
        assert samples is not None
        coverage, scale = 100.0 * total / samples, 100.0 / samples
        missing = ()
    elif source == "pct":
        coverage, scale = total, 1.0
    elif missing == () and total > 0:  # every state captured: their sum is all warp-active cycles
        coverage, scale = 100.0, 100.0 / total
    else:
        coverage, scale = None, None
    stalls = sorted(((v, r) for r, v in found.items() if r != ISSUED and v > 0), key=lambda x: (-x[0], x[1]))[:top]
    return StallBreakdown(
        source=source, captured=tuple(sorted(found)), missing=missing, coverage_pct=coverage,
        top=tuple((r, v, None if scale is None else v * scale) for v, r in stalls),
    )
