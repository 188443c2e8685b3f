"""Compare ncu profiles, one or several runs a side, kernel by kernel (pure, except ``compare_records``);
two serving benchmarks go to commands/compare_serving.py, and records of two kinds are refused.

A is "before", B is "after". Kernels match by name and launch configuration (grid and block
size); a kernel whose configuration changed is matched by name and the order in which the
kernels first launch, and the row says so; the rest are listed as on one side only.

The unit of the interval is the run: with several runs a side, each run gives its median
duration of the kernel and the interval is over those medians (launches within one run are
not independent). With one run a side, the launches are the unit and the record says that
run-to-run variance is not captured. The verdict is analysis/ratio_interval.py's rule, and
UNDECIDED whenever the profiles are not like-for-like (commands/like_for_like.py).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from typing import Any

from ikreport.analysis.ratio_interval import (CONFIDENCE, DEFAULT_MIN_SAMPLES, DEFAULT_THRESHOLD_PCT, METHOD, call,
                                              ratio_interval)
from ikreport.commands import like_for_like
from ikreport.commands.like_for_like import number_cell as cell
from ikreport.commands.compare_serving import compare_serving_records, markdown_table as serving_table
from ikreport.errors import CompareError, RecordError
from ikreport.formatting import md_code, plural, with_article
from ikreport.kinds.comparison import DATA_VERSION, NAME as COMPARISON, lacking_text, ratio_text, sample_units
from ikreport.kinds.ncu_profile import NAME as NCU_PROFILE
from ikreport.kinds.serving_benchmark import NAME as SERVING_BENCHMARK
from ikreport.store import records
from ikreport.store.archive import Archive
from ikreport.kinds.ncu_profile.data import launch_rows

INTERVAL = METHOD
LIMIT_ONE_RUN = ("One run a side: the interval is over launches within one run, which are not independent, so "
                 "run-to-run variance is not captured; compare several runs a side (collect ncu --repeat N).")
NOT_LIKE = "the profiles are not like-for-like"
Record = dict[str, Any]
Key = tuple[str, str | None, str | None]  # kernel name, grid size, block size
# per run: launch durations (µs; None for an untimed launch) by kernel and configuration
Runs = list[dict[Key, list[float | None]]]


def _no_blobs(blob_id: str) -> bytes:
    raise RecordError(f"blob {blob_id[:12]}: the per-launch table is needed but no archive was given")


def _runs(profiles: Sequence[Record], read_blob: Callable[[str], bytes]) -> Runs:
    out: Runs = []
    for profile in profiles:
        run: dict[Key, list[float | None]] = {}
        for launch in launch_rows(profile, read_blob):
            # an untimed launch (None) still says the kernel ran
            run.setdefault((launch["kernel"], launch["grid"], launch["block"]), []).append(launch["duration_us"])
        out.append(run)
    return out


def _first_seen(runs: Runs) -> list[Key]:
    return list(dict.fromkeys(key for run in runs for key in run))


def match(a: Runs, b: Runs) -> tuple[list[tuple[Key, Key, str]], list[Key], list[Key]]:
    """(A key, B key, how matched) pairs, then the keys only in A and only in B."""
    ka, kb = _first_seen(a), _first_seen(b)
    in_a, in_b = set(ka), set(kb)
    pairs = [(k, k, "name and launch configuration") for k in ka if k in in_b]
    rest_a, rest_b = [k for k in ka if k not in in_b], [k for k in kb if k not in in_a]
    for name in dict.fromkeys(k[0] for k in rest_a):
        left = [k for k in rest_a if k[0] == name]
        right = [k for k in rest_b if k[0] == name]
        pairs += [(x, y, "name and launch order (launch configuration differs)") for x, y in zip(left, right)]
    paired_a, paired_b = {p[0] for p in pairs}, {p[1] for p in pairs}
    return pairs, [k for k in rest_a if k not in paired_a], [k for k in rest_b if k not in paired_b]


def _samples(runs: Runs, key: Key, by_run: bool) -> tuple[list[float], int]:
    """The values the interval resamples (each run's median, or every timed launch) and the
    launch count, untimed launches included."""
    found = [run[key] for run in runs if key in run]
    timed = [[t for t in d if t is not None] for d in found]
    values = [statistics.median(d) for d in timed if d] if by_run else [t for d in timed for t in d]
    return values, sum(len(d) for d in found)


def _lacking(runs: Runs, key: Key, where: str) -> dict[str, list[int]]:
    """``{"a_lacking": [run indices]}`` for the runs of a side of several that lack the kernel
    (none when every run has it, so such records are as before)."""
    lacking = [i for i, run in enumerate(runs) if key not in run] if len(runs) > 1 else []
    return {f"{where}_lacking": lacking} if lacking else {}


def _config(key: Key) -> str:
    return f"grid {key[1] or '?'}, block {key[2] or '?'}"


def _total(runs: Runs, key: Key) -> float:
    return sum(t for run in runs for t in run.get(key, []) if t is not None)


def compare_runs(a: Sequence[Record], b: Sequence[Record], env_a: Sequence[Record | None],
                 env_b: Sequence[Record | None], threshold_pct: float = DEFAULT_THRESHOLD_PCT,
                 min_samples: int = DEFAULT_MIN_SAMPLES,
                 read_blob: Callable[[str], bytes] | None = None) -> dict[str, Any]:
    """The per-kernel intervals and verdicts of B's runs against A's (see the module docstring)."""
    side_a = like_for_like.side([like_for_like.method_fields(r, e) for r, e in zip(a, env_a)])
    side_b = like_for_like.side([like_for_like.method_fields(r, e) for r, e in zip(b, env_b)])
    fields, diffs = like_for_like.compare_fields(side_a, side_b)
    by_run = len(a) > 1 or len(b) > 1
    unit = "run" if by_run else "launch"
    runs_a, runs_b = _runs(a, read_blob or _no_blobs), _runs(b, read_blob or _no_blobs)
    pairs, only_a, only_b = match(runs_a, runs_b)
    matched = []
    for ka, kb, how in pairs:
        va, la = _samples(runs_a, ka, by_run)
        vb, lb = _samples(runs_b, kb, by_run)
        row = {"kernel": ka[0], "matched_by": how, "a_config": _config(ka), "b_config": _config(kb),
               "a_launches": la, "b_launches": lb, **_lacking(runs_a, ka, "a"), **_lacking(runs_b, kb, "b")}
        if not va or not vb:  # on both sides, but a side has no duration to compare
            untimed = " and ".join(side for side, v in (("A", va), ("B", vb)) if not v)
            matched.append((-(_total(runs_a, ka) + _total(runs_b, kb)), ka[0], {
                **row, "n_a": len(va), "n_b": len(vb),
                "a_median_us": round(statistics.median(va), 3) if va else None,
                "b_median_us": round(statistics.median(vb), 3) if vb else None,
                "ratio": None, "ratio_ci": None, "interval_method": "none", "verdict": "UNDECIDED",
                "reason": f"no launch of it in {untimed} has a duration (zero or missing in the export)"}))
            continue
        interval = ratio_interval(va, vb)
        verdict, reason = call(interval, threshold_pct, min_samples, "launches" if unit == "launch" else "runs")
        if diffs:
            verdict, reason = "UNDECIDED", NOT_LIKE
        ci = None if interval.low is None or interval.high is None else [round(interval.low, 4), round(interval.high, 4)]
        matched.append((-(_total(runs_a, ka) + _total(runs_b, kb)), ka[0], {
            **row, "n_a": interval.n_a, "n_b": interval.n_b,
            "a_median_us": round(statistics.median(va), 3), "b_median_us": round(statistics.median(vb), 3),
            "ratio": round(interval.ratio, 4), "ratio_ci": ci, "interval_method": interval.method,
            "verdict": verdict, "reason": reason}))
    alone = []
    for keys, runs, where in ((only_a, runs_a, "A"), (only_b, runs_b, "B")):
        for key in keys:
            _, launches = _samples(runs, key, by_run)
            alone.append((-_total(runs, key), key[0], {
                "kernel": key[0], "matched_by": None, "a_config": _config(key) if where == "A" else None,
                "b_config": _config(key) if where == "B" else None, "n_a": 0, "n_b": 0,
                "a_launches": launches if where == "A" else 0, "b_launches": launches if where == "B" else 0,
                "a_median_us": None, "b_median_us": None, "ratio": None, "ratio_ci": None, "interval_method": "none",
                "verdict": f"ONLY IN {where}", "reason": "no kernel of this name on the other side",
                **_lacking(runs, key, where.lower())}))
    # matched kernels first, most time first: kernels.0 is the one a report most likely cites
    kernels = [row for *_, row in sorted(matched, key=lambda x: x[:2])] + [row for *_, row in sorted(alone, key=lambda x: x[:2])]
    counts: dict[str, int] = {}
    for k in kernels:
        verdict = str(k["verdict"])
        counts[verdict] = counts.get(verdict, 0) + 1
    return {"version": DATA_VERSION, "unit": unit, "confidence_pct": round(CONFIDENCE * 100), "interval": INTERVAL,
            "threshold_pct": threshold_pct, "min_samples": min_samples, "like_for_like": not diffs,
            "method_fields": fields, "differences": diffs, "kernels": kernels, "verdicts": dict(sorted(counts.items()))}


def markdown_table(result: dict[str, Any]) -> str:
    """The comparison as the Markdown ``ikreport compare`` prints: how each side was made, then one row per kernel."""
    unit, runs_a, runs_b = result["unit"], result["a_runs"], result["b_runs"]
    side = sample_units(result)

    def ids(run_ids: list[str]) -> str:
        return plural(len(run_ids), "run", "runs") + " (" + ", ".join(r[:8] for r in run_ids) + ")"

    lines = [f"A (before) = {ids(runs_a)}; B (after) = {ids(runs_b)}",
             f"threshold {result['threshold_pct']:g}%; {result['confidence_pct']}% interval of B/A over {side} "
             f"({result['interval']}); at least {result['min_samples']} {side} a side", ""]
    if unit == "launch":
        lines += [LIMIT_ONE_RUN, ""]
    lines += like_for_like.method_lines(result, "method field")
    lines += [f"| kernel | A {side} | B {side} | A median (µs) | B median (µs) | B/A [{result['confidence_pct']}% interval] | verdict |",
              "|---|---:|---:|---:|---:|---:|---|"]
    for k in result["kernels"]:
        na, nb = (k["n_a"], k["n_b"]) if k["ratio"] is not None else (k["a_launches"], k["b_launches"])
        lines.append(f"| {md_code(k['kernel'])} | {na} | {nb} | {cell(k['a_median_us'])} | {cell(k['b_median_us'])} | "
                     f"{ratio_text(k) if k['ratio'] is not None else ''} | {k['verdict']} |")
    changed = [k for k in result["kernels"] if k["matched_by"] and k["a_config"] != k["b_config"]]
    notes = [f"- {md_code(k['kernel'], table=False)}: matched by name and launch order; A {k['a_config']}, B {k['b_config']}"
             for k in changed]
    notes += [f"- {md_code(k['kernel'], table=False)}: {text}" for k in result["kernels"] if (text := lacking_text(k, runs_a, runs_b))]
    notes += [f"- {md_code(k['kernel'], table=False)}: UNDECIDED: {k['reason']}" for k in result["kernels"]
              if k["verdict"] == "UNDECIDED" and k["reason"] != NOT_LIKE]
    if notes:
        lines += [""] + notes
    return "\n".join(lines) + "\n"


COMPARED = (NCU_PROFILE, SERVING_BENCHMARK)  # the kinds compare takes, a kind a comparison


def _load(archive: Archive, ids: Sequence[str]) -> tuple[list[str], list[Record]]:
    resolved = [archive.resolve(i) for i in ids]
    loaded = [archive.load(rid) for rid in resolved]
    for rid, rec in zip(resolved, loaded):
        if rec["kind"] not in COMPARED:
            raise RecordError(f"{rid[:12]}: is {with_article(rec['kind'])} record; compare takes {NCU_PROFILE} records "
                              f"or {SERVING_BENCHMARK} records")
    return resolved, loaded


def _one_kind(ids: list[str], loaded: list[Record]) -> str:
    """The kind every record given is of; a one-line refusal naming two records' kinds when not."""
    first = loaded[0]["kind"]
    for rid, rec in zip(ids, loaded):
        if rec["kind"] != first:
            raise CompareError(f"{ids[0][:12]} is {with_article(first)} record and {rid[:12]} is "
                               f"{with_article(rec['kind'])} record; compare takes records of one kind")
    return str(first)


def compare_records(archive: Archive, a: Sequence[str], b: Sequence[str], threshold_pct: float,
                    min_samples: int, write: bool = True) -> tuple[str | None, dict[str, Any]]:
    """Write the ``comparison`` record (no wall-clock time: same inputs, same id); with
    ``write`` false, only what it would hold (its id None)."""
    a_ids, ra = _load(archive, a)
    b_ids, rb = _load(archive, b)
    every = a_ids + b_ids
    twice = sorted({rid for rid in every if every.count(rid) > 1})
    if twice:
        raise CompareError(f"{twice[0][:12]}: is given twice; a record compared with itself shows nothing, "
                           "give different runs for A and B")
    if _one_kind(every, ra + rb) == SERVING_BENCHMARK:
        if len(a_ids) > 1 or len(b_ids) > 1:
            raise CompareError(f"compare takes one {SERVING_BENCHMARK} record a side (the requests of one run are "
                               "the unit); give one id for A and one for B")
        return compare_serving_records(archive, a_ids[0], ra[0], b_ids[0], rb[0], threshold_pct, min_samples, write)
    env_a, env_b = ([archive.load(r["environment"]) if r.get("environment") else None for r in side] for side in (ra, rb))
    result = compare_runs(ra, rb, env_a, env_b, threshold_pct, min_samples, archive.read_blob)
    result = {"a": a_ids[0], "b": b_ids[0], "a_runs": a_ids, "b_runs": b_ids, **result}
    side = sample_units(result)
    limitations = ["A comparison inherits the limitations of every profile it cites.",
                   f"A verdict needs at least {min_samples} {side} a side and the {result['confidence_pct']}% "
                   f"interval of the B/A ratio of medians wholly beyond {threshold_pct:g}% (FASTER, SLOWER) or wholly "
                   f"within it (SAME); otherwise it is UNDECIDED."]
    if result["unit"] == "launch":
        limitations.append(LIMIT_ONE_RUN)
    if not result["like_for_like"]:
        fields = ", ".join(f"{d['field']} ({d['why']})" for d in result["differences"])
        limitations.append(f"Not like-for-like, so no difference is called: {fields}.")
    title = f"{rb[0]['title']} against {ra[0]['title']}"
    if result["unit"] == "run":
        title += f" ({len(rb)} against {plural(len(ra), 'run', 'runs')})"
    record = records.new_record(
        COMPARISON, title, collected_at=None, subject=rb[0]["subject"],
        method={"tool": "ikreport compare", "tool_version": None, "command": None,
                "options": {"threshold_pct": threshold_pct, "min_samples": min_samples},
                "how": "derived from the cited profiles"},
        data=result, limitations=limitations, cites=sorted(set(every)),
    )
    return (archive.put_record(record) if write else None), result


def compare(archive: Archive, a: Sequence[str], b: Sequence[str], threshold_pct: float,
            min_samples: int, write: bool = True) -> tuple[str, str | None]:
    """What ``ikreport compare`` prints: the Markdown table, and the id of the comparison record
    it wrote (None with ``write`` false: nothing is written)."""
    record_id, result = compare_records(archive, a, b, threshold_pct, min_samples, write)
    return (serving_table(result) if "metrics" in result else markdown_table(result)), record_id
