"""Compare two ncu profiles the way careful benchmarkers do (pure, except ``compare_records``).

A is "before", B is "after". Kernels are matched by name, and launches by their order among
that kernel's launches (the k-th launch of a kernel in A with its k-th launch in B). Per
kernel, the verdict says what B is relative to A:

- UNDECIDED unless the two profiles are like-for-like (same GPU, driver, ncu version, clock
  control, cache control and replay mode, all known), and each side has at least
  ``min_samples`` matched launches: one launch each is not evidence of a difference;
- FASTER / SLOWER when the median ratio is beyond the threshold *and* the two sets of
  durations do not overlap at all;
- SAME when the median ratio is within the threshold;
- UNDECIDED otherwise (beyond the threshold, but the spreads overlap).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from typing import Any

from ikreport.store import records
from ikreport.store.archive import Archive
from ikreport.errors import RecordError
from ikreport.kinds.comparison import NAME as COMPARISON
from ikreport.kinds.ncu_profile import NAME as NCU_PROFILE
from ikreport.store.profile_data import durations_by_kernel
from ikreport.formatting import with_article

DEFAULT_THRESHOLD_PCT = 5.0
DEFAULT_MIN_SAMPLES = 3
Record = dict[str, Any]


def method_facts(record: Record, env: Record | None) -> dict[str, str | None]:
    """The facts whose difference makes two profiles not like-for-like (None: not recorded)."""
    options = record["method"].get("options") or {}
    driver = env["data"].get("driver") if env else None
    return {
        "gpu": record["subject"].get("gpu"),
        "driver": driver,
        "ncu version": record["method"].get("tool_version"),
        "clock control": options.get("clock_control"),
        "cache control": options.get("cache_control"),
        "replay mode": options.get("replay_mode"),
    }


def differences(a: dict[str, str | None], b: dict[str, str | None]) -> list[dict[str, Any]]:
    """The environment and method facts that differ between A and B, or that either does not record."""
    out = []
    for key in a:
        if a[key] is None or b[key] is None:
            out.append({"field": key, "a": a[key], "b": b[key], "why": "not recorded"})
        elif a[key] != b[key]:
            out.append({"field": key, "a": a[key], "b": b[key], "why": "differs"})
    return out


def _no_blobs(blob_id: str) -> bytes:
    raise RecordError(f"blob {blob_id[:12]}: the per-launch table is needed but no archive was given")


def verdict(a: list[float], b: list[float], like_for_like: bool, threshold_pct: float,
            min_samples: int) -> tuple[str, str]:
    """(verdict, reason) for B's durations against A's."""
    ratio = statistics.median(b) / statistics.median(a)
    t = threshold_pct / 100
    if not like_for_like:
        return "UNDECIDED", "the profiles are not like-for-like"
    if min(len(a), len(b)) < min_samples:
        return "UNDECIDED", f"fewer than {min_samples} matched launches on a side"
    if abs(ratio - 1) <= t:
        return "SAME", f"median ratio within {threshold_pct:g}%"
    if ratio < 1 - t and max(b) < min(a):
        return "FASTER", f"every launch in B is faster than every launch in A, median {threshold_pct:g}%+ faster"
    if ratio > 1 + t and min(b) > max(a):
        return "SLOWER", f"every launch in B is slower than every launch in A, median {threshold_pct:g}%+ slower"
    return "UNDECIDED", "beyond the threshold, but the launch durations overlap"


def compare_profiles(a: Record, b: Record, env_a: Record | None, env_b: Record | None,
                     threshold_pct: float = DEFAULT_THRESHOLD_PCT, min_samples: int = DEFAULT_MIN_SAMPLES,
                     read_blob: Callable[[str], bytes] | None = None) -> dict[str, Any]:
    """The per-kernel verdicts of B against A, and whether the two are like-for-like (see the module docstring)."""
    diffs = differences(method_facts(a, env_a), method_facts(b, env_b))
    like = not diffs
    da, db = durations_by_kernel(a, read_blob or _no_blobs), durations_by_kernel(b, read_blob or _no_blobs)
    kernels = []
    for name in sorted(set(da) | set(db), key=lambda n: (-(sum(da.get(n, [])) + sum(db.get(n, []))), n)):
        if name not in da or name not in db:
            kernels.append({"kernel": name, "launches": 0, "a_median_us": None, "b_median_us": None, "ratio": None,
                            "verdict": "ONLY IN " + ("A" if name in da else "B"), "reason": "no match on the other side"})
            continue
        n = min(len(da[name]), len(db[name]))
        sa, sb = da[name][:n], db[name][:n]
        call, why = verdict(sa, sb, like, threshold_pct, min_samples)
        kernels.append({
            "kernel": name, "launches": n, "a_median_us": round(statistics.median(sa), 3),
            "b_median_us": round(statistics.median(sb), 3),
            "a_range_us": [min(sa), max(sa)], "b_range_us": [min(sb), max(sb)],
            "ratio": round(statistics.median(sb) / statistics.median(sa), 4), "verdict": call, "reason": why,
        })
    counts: dict[str, int] = {}
    for k in kernels:
        counts[k["verdict"]] = counts.get(k["verdict"], 0) + 1
    return {"threshold_pct": threshold_pct, "min_samples": min_samples, "like_for_like": like,
            "differences": diffs, "kernels": kernels, "verdicts": dict(sorted(counts.items()))}


def markdown_table(result: dict[str, Any], a_id: str, b_id: str) -> str:
    """The comparison as the Markdown ``ikreport compare`` prints: differences, then one row per kernel."""
    lines = [f"A = {a_id[:8]} (before), B = {b_id[:8]} (after); threshold {result['threshold_pct']:g}%, "
             f"at least {result['min_samples']} matched launches per kernel", ""]
    if not result["like_for_like"]:
        lines.append("**Not like-for-like: no difference is called.**")
        lines += [f"- {d['field']}: A {d['a'] or 'not recorded'}, B {d['b'] or 'not recorded'} ({d['why']})"
                  for d in result["differences"]]
        lines.append("")
    lines += ["| kernel | launches | A median (µs) | B median (µs) | B/A | verdict |", "|---|---:|---:|---:|---:|---|"]
    for k in result["kernels"]:
        name = k["kernel"].replace("|", "\\|")
        def num(v: float | None) -> str:
            return "" if v is None else f"{v:g}"
        lines.append(f"| `{name}` | {k['launches']} | {num(k['a_median_us'])} | {num(k['b_median_us'])} | "
                     f"{num(k['ratio'])} | {k['verdict']} |")
    return "\n".join(lines) + "\n"


def compare_records(archive: Archive, a: str, b: str, threshold_pct: float, min_samples: int) -> tuple[str, dict[str, Any]]:
    """Write the ``comparison`` record (no wall-clock time: same inputs, same id)."""
    a_id, b_id = archive.resolve(a), archive.resolve(b)
    ra, rb = archive.load(a_id), archive.load(b_id)
    for rid, rec in ((a_id, ra), (b_id, rb)):
        if rec["kind"] != NCU_PROFILE:
            raise RecordError(f"{rid[:12]}: is {with_article(rec['kind'])} record; compare takes two {NCU_PROFILE} records")
    env_a = archive.load(ra["environment"]) if ra.get("environment") else None
    env_b = archive.load(rb["environment"]) if rb.get("environment") else None
    result = compare_profiles(ra, rb, env_a, env_b, threshold_pct, min_samples, archive.read_blob)
    limitations = ["A comparison inherits the limitations of both profiles it cites.",
                   f"A verdict needs at least {min_samples} matched launches of a kernel on each side, a median "
                   f"change beyond {threshold_pct:g}%, and no overlap between the two sets of durations."]
    if not result["like_for_like"]:
        fields = ", ".join(f"{d['field']} ({d['why']})" for d in result["differences"])
        limitations.append(f"Not like-for-like, so no difference is called: {fields}.")
    record = records.new_record(
        COMPARISON, f"{rb['title']} against {ra['title']}", collected_at=None, subject=rb["subject"],
        method={"tool": "ikreport compare", "tool_version": None, "command": None,
                "options": {"threshold_pct": threshold_pct, "min_samples": min_samples},
                "how": "derived from the two cited profiles"},
        data={"a": a_id, "b": b_id, **result}, limitations=limitations, cites=[a_id, b_id],
    )
    return archive.put_record(record), result


def compare(archive: Archive, a: str, b: str, threshold_pct: float, min_samples: int) -> tuple[str, str]:
    """What ``ikreport compare`` prints: the Markdown table, and the id of the comparison record it wrote."""
    record_id, result = compare_records(archive, a, b, threshold_pct, min_samples)
    data = archive.load(record_id)["data"]
    return markdown_table(result, data["a"], data["b"]), record_id
