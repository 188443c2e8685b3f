"""The ``ncu-profile`` kind's warp-stall claim: a kernel's top stalls as shares of warp-active
cycles, as ncu defines them, with the coverage of the captured warp states and the states the
export lacks (the arithmetic is analysis/ncu/stalls.py). Records imported before ikreport kept
every state read right too: their top stalls are given without a coverage."""

from __future__ import annotations

from ikreport.analysis.ncu.stalls import UNITS
from ikreport.formatting import fmt_number, fmt_pct, plural

CAVEAT_STALLS = ("Warp states as ncu defines them, for the kernel's first launch: each cycle, each active warp is "
                 "issuing (selected) or stalled for one reason, so a state's share is of warp-active cycles. "
                 "Issuing is not a stall: it is left out of the list but counted in the coverage.")


def stalls_caveats(data: dict, kernel: dict, top_kernels: int) -> list[str]:
    """The stall caveat, and how the kernels with claims (the first ``top_kernels`` of the
    record's kernel table) were chosen when not by time."""
    if kernel.get("total_us") is not None:
        return [CAVEAT_STALLS]
    return [CAVEAT_STALLS, f"The export has no kernel durations, so the kernels with claims are the first "
                           f"{min(top_kernels, len(data['kernels']))} by name, not the ones that take the most time."]


def stall_shares(first: dict) -> list[dict] | None:
    """The first launch's top stalls, each with its share_pct of warp-active cycles; None where
    the export cannot give shares (the stall claim and the stall chart both read them here)."""
    top = first.get("top_stalls") or []
    if not top:
        return None
    states = first.get("stall_states")
    source = states["source"] if states else top[0].get("source")
    if states is None and source == "pct":
        # imported before ikreport kept every state: share_pct was of the captured stalls'
        # sum, but each value is still ncu's % of warp-active cycles
        top = [{**t, "share_pct": t["value"]} for t in top]
    if all(t.get("share_pct") is not None for t in top) and (states or source == "pct"):
        return top
    return None


def stalls_text(short: str, first: dict) -> str | None:
    """The stall claim of a kernel's first launch: its top stalls as % of warp-active cycles with
    the coverage of the captured states and the states the export lacks (analysis/ncu/stalls.py);
    in the metric's own unit, with no share, where the export cannot give one."""
    top = first.get("top_stalls") or []
    if not top:
        return None
    states = first.get("stall_states")
    source = states["source"] if states else top[0].get("source")
    shares = stall_shares(first)
    sampled = source == "pcsamp"
    whole = "PC samples" if sampled else "warp-active cycles"
    if shares and sampled:
        listed = _and([f"{fmt_pct(t['share_pct'])} on {t['reason']}" for t in shares])
        listed = listed.replace(" on ", " of its PC samples on ", 1)
        text = (f"{short}'s warps were found stalled in {listed} (first launch; PC samples of warp states, "
                "not cycles).")
    elif shares:
        listed = _and([f"{fmt_pct(t['share_pct'])} on {t['reason']}" for t in shares])
        listed = listed.replace(" on ", " of their warp-active cycles on ", 1)
        text = f"{short}'s warps are stalled for {listed} (first launch)."
    else:
        unit = UNITS.get(source or "", "as exported")
        listed = _and([f"{t['reason']} ({fmt_number(t['value'])})" for t in top])
        text = (f"{short}'s warps stall most on {listed}, in {unit} (first launch); "
                "no share of warp-active cycles is given, because not every warp state is known to be captured.")
    if states is None:
        return text + (" The record keeps only these top stalls, so how much of the warp-active cycles the "
                       "captured states cover is not known.")
    count = plural(len(states["captured"]), "captured warp state", "captured warp states")
    if states["coverage_pct"] is not None:
        text += f" The {count} account for {fmt_pct(states['coverage_pct'])} of {whole}"
    else:
        text += f" The export has {count}"
    missing = states["missing"]
    if sampled and shares:
        text += " (smsp__pcsamp_sample_count), so none is missing."
    elif missing:
        text += f"; of ncu's warp states on this architecture, the export lacks {_and(missing)}."
    elif missing is None:
        text += ("; ikreport does not know ncu's full set of warp states on this architecture, so none can be "
                 "named as missing.")
    else:
        text += "; none of ncu's warp states on this architecture is missing."
    return text


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"
