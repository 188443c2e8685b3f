"""The ``comparison`` kind: profiles compared kernel by kernel (commands/compare.py writes it), or two
serving runs latency by latency (kinds/comparison_serving.py reads those) —
its claims (the overall count and each kernel's ratio, interval and verdict, citing the
comparison and every profile), its page and its ratio chart.

Data version 2 (``"version": 2``) holds one or several runs a side, each kernel's B/A ratio of
medians with its 95% interval, and where each method field came from. Version 1 (no
``version``: one profile a side, no interval, a verdict from non-overlapping launches) is
still read and shown as it was written: records are never rewritten.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ikreport.claims.kernel_names import distinct_kernel_labels, short_kernel, short_title
from ikreport.claims.model import Claim, Record, RecordSet, make_claim
from ikreport.formatting import distinct_digits, fmt_duration_us, plural
from ikreport.kinds import comparison_serving as serving
from ikreport.kinds.base import MAX_CHART_KERNELS, Facts, Kind, PageContext, Tables, na, rows_data
from ikreport.kinds.comparison_text import field_text, ratio_text, summary_text
from ikreport.kinds.ncu_profile import ONE_RUN
from ikreport.terminal import safe_text as t

NAME = "comparison"
DATA_VERSION = 2

CAVEAT_VERDICT = ("B is compared with A through the 95% interval of the B/A ratio of medians: FASTER or SLOWER "
                  "when the whole interval lies beyond the threshold, SAME when it lies wholly within it, "
                  "UNDECIDED otherwise.")
CAVEAT_VERDICT_V1 = ("B is compared with A. FASTER or SLOWER needs a median change beyond the threshold and no "
                     "overlap between the two sets of launch durations; otherwise the verdict stays UNDECIDED. "
                     "This comparison was written before verdicts came from an interval.")
MAX_KERNEL_CLAIMS = 10
MAX_SHOW_KERNELS = 20  # the lines `ikreport show` gives a comparison's kernels
SIDE_TITLE = 60  # each side's title in the heading "B against A"


def _kernels(data: dict[str, Any]) -> list[dict[str, Any]]:
    """Each kernel row in version 2's shape (a version 1 row: no interval, launches a side)."""
    if "version" in data:
        return data["kernels"]
    return [{**k, "n_a": k["launches"], "n_b": k["launches"], "a_launches": k["launches"], "b_launches": k["launches"],
             "ratio_ci": None} for k in data["kernels"]]


def sample_units(data: dict[str, Any]) -> str:
    """What the comparison's samples are: "runs", or "launches" of one run a side."""
    return "runs" if data.get("unit") == "run" else "launches"


def runs(data: dict[str, Any], side: str) -> list[str]:
    """The profiles of side "a" or "b" (a version-1 comparison names one a side)."""
    return data.get(f"{side}_runs", [data[side]])


def _cites(record_id: str, data: dict[str, Any]) -> list[str]:
    return [record_id, *runs(data, "a"), *runs(data, "b")]


def lacking_text(k: dict[str, Any], a_runs: list[str], b_runs: list[str]) -> str:
    """'not in A's run 2 [1a2b3c4d]; not in B's runs 1 [..] and 3 [..]': the runs of a side of
    several that lack a kernel ('' when every run has it)."""
    parts = []
    for side, runs in (("A", a_runs), ("B", b_runs)):
        lacking = k.get(f"{side.lower()}_lacking", [])
        if lacking:
            named = [f"{i + 1} [{runs[i][:8]}]" if i < len(runs) else str(i + 1) for i in lacking]
            listed = named[0] if len(named) == 1 else ", ".join(named[:-1]) + " and " + named[-1]
            parts.append(f"not in {side}'s {'run' if len(named) == 1 else 'runs'} {listed}")
    return "; ".join(parts)


def comparison_claims(record_id: str, record: Record, records: RecordSet) -> list[Claim]:
    """The count of verdicts, then one claim per matched kernel (the first MAX_KERNEL_CLAIMS)."""
    data = record["data"]
    cites = _cites(record_id, data)
    if "metrics" in data:
        return serving.claims(record_id, record, records, cites)
    caveat = CAVEAT_VERDICT if "version" in data else CAVEAT_VERDICT_V1
    text = summary_text(data, plural(len(data["kernels"]), "kernel", "kernels"), "profiles", "no kernels")
    claims = [make_claim("comparison-summary", "", record_id, text, cites, [caveat], records)]
    units = sample_units(data)
    unit = units[:-1] if units == "runs" else "launch"
    us = _digits(data)
    for k in [k for k in _kernels(data) if k["ratio"] is not None][:MAX_KERNEL_CLAIMS]:
        interval = f"B/A {ratio_text(k)}" + (f", {data['confidence_pct']}% interval" if k["ratio_ci"] else "")
        text = (f"{short_kernel(k['kernel'])}: {fmt_duration_us(k['b_median_us'], us)} in B against "
                f"{fmt_duration_us(k['a_median_us'], us)} in A (median of {plural(k['n_a'], unit, units)} in A and "
                f"{plural(k['n_b'], unit, units)} in B, "
                f"{interval}): {k['verdict']}, {k['reason']}.")
        claims.append(make_claim("comparison-kernel", k["kernel"], record_id, text, cites, [caveat],
                                 records, k["kernel"]))
    return claims


def _sides(d: dict[str, Any], page: PageContext) -> Facts:
    """Each side's runs, when a side has several (one run a side is linked under the heading)."""
    facts: Facts = []
    if len(runs(d, "a")) < 2 and len(runs(d, "b")) < 2:
        return facts
    for label, key in (("A (before)", "a"), ("B (after)", "b")):
        side = runs(d, key)
        facts.append((label, "; ".join(f"[{r[:8]}] {page.ref(r)['title']}" for r in side)
                      + (f" ({len(side)} runs)" if len(side) > 1 else "")))
    return facts


def comparison_view(record: Record, page: PageContext) -> tuple[Facts, Tables]:
    """The page's facts (A, B, the rule) and tables (method fields, what differs, each kernel's verdict)."""
    d = record["data"]
    if "metrics" in d:
        return serving.facts_tables(d)
    units = sample_units(d)
    facts = _sides(d, page)
    if "version" in d:
        facts += [("verdict rule", f"{d['confidence_pct']}% interval of the B/A ratio of medians over {units} "
                           f"({d['interval']}): beyond {d['threshold_pct']:g}% FASTER or SLOWER, within it SAME, "
                           f"else UNDECIDED; at least {d['min_samples']} {units} a side"),
                  ("unit of the interval", "the run (each run's median)" if d["unit"] == "run"
                   else "the launch: one run a side, so run-to-run variance is not captured")]
    else:
        facts.append(("verdict rule", f"a median change beyond {d['threshold_pct']:g}%, at least {d['min_samples']} matched "
                                   "launches per side, and no overlap of their durations"))
    facts.append(("like-for-like", "yes" if d["like_for_like"] else "no: no difference is called"))
    tables: Tables = []
    if "method_fields" in d:
        tables.append({"title": "How each side was made", "note": "observed: a tool ikreport ran says it; stated: "
                       "the importer gave it; missing: not recorded.", "columns": ["field", "A", "B"],
                       "rows": [[f["field"], field_text(f["a"], f["a_source"]), field_text(f["b"], f["b_source"])]
                                for f in d["method_fields"]]})
    elif d["differences"]:  # version 2's table above says what each side lacks
        tables.append({"title": "What differs between A and B", "note": "Each of these must be recorded and equal "
                       "for a comparison to be like-for-like.", "columns": ["field", "A", "B", "why"],
                       "rows": [[x["field"], na(x["a"]), na(x["b"]), x["why"]] for x in d["differences"]]})
    kernels = _kernels(d)
    us = _digits(d)
    matched = [k for k in kernels if k["ratio"] is not None]
    rank = {id(k): str(i + 1) for i, k in enumerate(matched)}  # as the chart numbers its bars
    ci = f" [{d['confidence_pct']}% interval]" if "version" in d else ""
    lacking = [f"{short_kernel(k['kernel'])}: {text}" for k in kernels
               if (text := lacking_text(k, runs(d, "a"), runs(d, "b")))]
    # eight columns: on a phone each kernel is a block of labelled lines ("stack"), so its medians,
    # ratio and verdict are on the screen rather than scrolled out of it
    tables.append({"title": "Kernels", "note": "; ".join(filter(None, [_config_note(kernels), *lacking])),
                   "stack": True,
                   "columns": ["#", "kernel", f"A {units}", f"B {units}", "A median", "B median", f"B/A{ci}", "verdict"],
                   # an unmatched kernel has no samples: its launches are shown
                   "rows": [[rank.get(id(k), ""), k["kernel"], *_counts(k),
                             fmt_duration_us(k["a_median_us"], us), fmt_duration_us(k["b_median_us"], us), ratio_text(k),
                             k["verdict"]] for k in kernels]})
    return facts, tables


def _counts(k: dict[str, Any]) -> list[str]:
    return [str(k["n_a"]), str(k["n_b"])] if k["ratio"] is not None else [str(k["a_launches"]), str(k["b_launches"])]


def _config_note(kernels: list[dict[str, Any]]) -> str:
    changed = [k for k in kernels if k.get("matched_by") and k["a_config"] != k["b_config"]]
    return "; ".join(f"{short_kernel(k['kernel'])} matched by name and launch order (A {k['a_config']}, "
                     f"B {k['b_config']})" for k in changed)


def _digits(data: dict[str, Any]) -> int | None:
    """The precision at which no two different medians on the page read the same."""
    return distinct_digits([m for k in _kernels(data) for m in (k["a_median_us"], k["b_median_us"])], fmt_duration_us)


def view(record: Record, page: PageContext) -> dict[str, Any]:
    """Facts, tables and the B/A ratio chart, under the heading "B against A" by their short
    titles, each linked."""
    facts, tables = comparison_view(record, page)
    a, b = page.ref(record["data"]["a"]), page.ref(record["data"]["b"])
    return {"facts": facts, "tables": tables, "charts": _ratio_chart(record, page),
            "heading": f"{short_title(b['title'], SIDE_TITLE)} against {short_title(a['title'], SIDE_TITLE)}",
            "answered": _answered(record["data"]),
            "versus": {"a": {**a, "title": short_title(a["title"], SIDE_TITLE)},
                       "b": {**b, "title": short_title(b["title"], SIDE_TITLE)}}}


def _answered(data: dict[str, Any]) -> dict[str, str]:
    """The cited profiles' limitations this comparison answers, with how: several runs a side
    capture the run-to-run variance one profile cannot show."""
    if data.get("unit") != "run":
        return {}
    n_a, n_b = len(runs(data, "a")), len(runs(data, "b"))
    return {ONE_RUN: f"Answered by this comparison, which takes {plural(n_a, 'run', 'runs')} in A and "
                     f"{plural(n_b, 'run', 'runs')} in B, each run's median one sample."}


def _ratio_chart(record: Record, page: PageContext) -> list[Any]:
    if "metrics" in record["data"]:
        rows = serving.chart_rows(record["data"])
        alt = (f"Chart of the B/A ratio of median latencies for {plural(len(rows), 'latency', 'latencies')}, "
               "with its interval where there is one; below 1 is faster in B.")
        return [page.charts.render("comparison-interval", "B/A median latency", alt, rows)] if rows else []
    kernels = [k for k in _kernels(record["data"]) if k["ratio"] is not None][:MAX_CHART_KERNELS]
    rows = [{"label": label, "ratio": k["ratio"], "verdict": k["verdict"],
             "low": (k["ratio_ci"] or [k["ratio"]] * 2)[0], "high": (k["ratio_ci"] or [k["ratio"]] * 2)[1]}
            for label, k in zip(distinct_kernel_labels([k["kernel"] for k in kernels]), kernels)]
    if not rows:
        return []
    alt = (f"Chart of the B/A ratio of median kernel durations for {plural(len(rows), 'kernel', 'kernels')}, "
           "with its interval where there is one; below 1 is faster in B.")
    return [page.charts.render("comparison-interval", "B/A median duration by kernel",
                               alt, rows)]


def _comparison_ratio() -> dict[str, Any]:
    import altair as alt

    base = alt.Chart(alt.Data(name="rows")).encode(
        y=alt.Y("label:N", sort=None, title=None, axis=alt.Axis(labelLimit=0)))  # labels cut in Python: distinct_kernel_labels
    bars = base.mark_rule(strokeWidth=2).encode(
        x=alt.X("low:Q", title="B/A median duration, 95% interval (below 1: faster in B)",
                scale=alt.Scale(zero=False)), x2="high:Q",
        color=alt.Color("verdict:N", sort=["FASTER", "SAME", "SLOWER", "UNDECIDED"]))
    points = base.mark_point(filled=True).encode(x="ratio:Q", color=alt.Color("verdict:N"))
    # the reference at 1.0, labelled, so that a point reads as faster or slower at a glance
    same = alt.Chart(alt.Data(values=[{"x": 1, "text": "1.0 = no change"}]))
    one = same.mark_rule(color="#555", strokeDash=[4, 4]).encode(x="x:Q")
    label = same.mark_text(align="left", baseline="bottom", dx=3, dy=-2, color="#555").encode(
        x="x:Q", y=alt.value(0), text="text:N")
    return alt.layer(bars, points, one, label).properties(width=420, height=alt.Step(18)).to_dict(validate=False)


def gpu_shown(facts: Mapping[str, Any], gpu: str | None) -> str | None:
    """'NVIDIA A100 (A), NVIDIA H100 (B)' for a comparison across GPUs; else the subject's GPU."""
    a, b = facts.get("a_gpu"), facts.get("b_gpu")
    return f"{a} (A), {b} (B)" if isinstance(a, str) and isinstance(b, str) and a != b else gpu


def show(record: Mapping[str, Any], records: RecordSet) -> list[str]:
    """``ikreport show``'s lines: the sides, the rule, the verdict counts, then each kernel's
    B/A ratio with its interval, the samples a side and the verdict (the first MAX_SHOW_KERNELS)."""
    d = record["data"]
    if "metrics" in d:
        return serving.show(d)
    units = sample_units(d)
    a_runs, b_runs = runs(d, "a"), runs(d, "b")
    lines = [f"  A (before): {plural(len(a_runs), 'run', 'runs')}: {', '.join(r[:12] for r in a_runs)}",
             f"  B (after):  {plural(len(b_runs), 'run', 'runs')}: {', '.join(r[:12] for r in b_runs)}",
             f"  rule:      threshold {d['threshold_pct']:g}%, at least {d['min_samples']} {units} a side"
             + ("" if d["like_for_like"] else "; not like-for-like, so no difference is called"),
             "  verdicts:  " + (", ".join(f"{n} {t(v)}" for v, n in d["verdicts"].items()) or "no kernels"),
             f"  kernels:   B/A [{d.get('confidence_pct', 95)}% interval], {units} in A and B, verdict"]
    kernels = _kernels(d)
    for k in kernels[:MAX_SHOW_KERNELS]:
        counts = "/".join(_counts(k))
        lines.append(f"    {ratio_text(k):<24} {counts:>9}  {t(k['verdict']):<10} {t(k['kernel'][:70])}")
    if len(kernels) > MAX_SHOW_KERNELS:
        lines.append(f"    ... and {len(kernels) - MAX_SHOW_KERNELS} more (ikreport show --json, or the site)")
    return lines


KIND = Kind(NAME, rules=(comparison_claims,), view=view, gpu_shown=gpu_shown, show=show,
            charts={"comparison-interval": (_comparison_ratio, rows_data)})
