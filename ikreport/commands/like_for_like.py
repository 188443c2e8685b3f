"""Whether profiles (or serving runs) were made the same way: each method field, and where its
value comes from.

A field's value is **observed** when a tool ikreport ran (or a file the tool wrote) says it,
**stated** when the person importing an export gave it (``collect ncu --from-csv
--clock-control …``, a context file), and **missing** otherwise. Observed values come from a
live run (ikreport ran ncu), ncu's session page (``method.option_sources``, or an ``--import``
of a report), the environment record (the driver) and the export's device column (the GPU).
The sources are tried in the order of ``SOURCES``, observed ones first; a new source is one
function added there.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ikreport.analysis.serving import engine_named
from ikreport.collect.ncu_session import OBSERVED, STATED
from ikreport.kinds.comparison_text import field_text

Record = Mapping[str, Any]
FIELDS = ("gpu", "driver", "ncu version", "clock control", "cache control", "replay mode")
OPTION_KEYS = {"clock control": "clock_control", "cache control": "cache_control", "replay mode": "replay_mode",
               "driver": "driver"}
STRENGTH = {"missing": 0, "stated": 1, "observed": 2}


def _keyed(options: Mapping[str, Any], version: str | None) -> dict[str, str]:
    """Method options (and the ncu version) under the field names this module uses."""
    found = {f: str(options[k]) for f, k in OPTION_KEYS.items() if options.get(k) is not None}
    if version:
        found["ncu version"] = version
    return found


def _live_run(record: Record, env: Record | None) -> dict[str, str]:
    """``collect ncu -- CMD``: ikreport ran ncu with these options itself (it records the
    command, and neither an import's option sources nor the ncu that exported a report)."""
    method = record["method"]
    if method.get("command") is None or "option_sources" in method or "exported_with" in method:
        return {}
    options = {k: v for k, v in (method.get("options") or {}).items() if k != "driver"}
    return _keyed(options, method.get("tool_version"))


def _session_page(record: Record, env: Record | None) -> dict[str, str]:
    """What ncu's session page recorded: every option of an ``--import`` (read from the
    report's own session page), and the options a ``--from-csv`` import marks as observed."""
    method = record["method"]
    options = method.get("options") or {}
    if "exported_with" in method:
        return _keyed(options, method.get("tool_version"))
    sources = method.get("option_sources") or {}
    seen = {k: v for k, v in options.items() if sources.get(k) == OBSERVED}
    return _keyed(seen, method.get("tool_version") if sources.get("ncu_version") == OBSERVED else None)


def _environment(record: Record, env: Record | None) -> dict[str, str]:
    """The driver in the environment record nvidia-smi wrote beside the profile."""
    driver = env["data"].get("driver") if env else None
    return {"driver": driver} if driver else {}


def _export_device(record: Record, env: Record | None) -> dict[str, str]:
    """The GPU the export's own device column names: its one device, whatever --gpu stated (a B200
    and a GTX 1650 Ti both stated as an H200 were called like for like), or of several the one stated."""
    devices, gpu = record["data"].get("devices") or [], record["subject"].get("gpu")
    return {"gpu": devices[0]} if len(devices) == 1 else {"gpu": gpu} if gpu and gpu in devices else {}


def _stated(record: Record, env: Record | None) -> dict[str, str]:
    """What the importer gave: the options an import marks as stated (before option sources
    were kept, every option of an import was stated), and the GPU named with --gpu."""
    method = record["method"]
    options = method.get("options") or {}
    found: dict[str, str] = {}
    if "option_sources" in method:
        sources = method["option_sources"]
        said = {k: v for k, v in options.items() if sources.get(k) == STATED}
        found = _keyed(said, method.get("tool_version") if sources.get("ncu_version") == STATED else None)
    elif method.get("command") is None and "exported_with" not in method:
        found = _keyed(options, method.get("tool_version"))
    if record["subject"].get("gpu"):
        found["gpu"] = record["subject"]["gpu"]
    return found


Source = Callable[[Record, "Record | None"], dict[str, str]]
# (how a value from it counts, the source), tried in this order: the first to give a field wins
SOURCES: tuple[tuple[str, Source], ...] = (
    ("observed", _live_run),
    ("observed", _session_page),
    ("observed", _environment),
    ("observed", _export_device),
    ("stated", _stated),
)


def method_fields(record: Record, env: Record | None) -> dict[str, tuple[str | None, str]]:
    """field -> (value, "observed" | "stated" | "missing") for one profile."""
    out: dict[str, tuple[str | None, str]] = {f: (None, "missing") for f in FIELDS}
    for how, source in SOURCES:
        for field, value in source(record, env).items():
            if out[field][1] == "missing":
                out[field] = (str(value), how)
    return out


# a serving benchmark's fields: what the run was of (GPU and model must be recorded), then its load,
# which must be equal where either file records it
SERVING_FIELDS = ("gpu", "model", "engine", "workload", "load generator", "dataset", "request rate", "max concurrency",
                  "input tokens", "output tokens", "token lengths")  # token lengths: fixed, or SGLang's drawn up to them
SERVING_LENIENT = SERVING_FIELDS[2:]
SERVING_DATA = {"load generator": "tool", "dataset": "dataset", "request rate": "request_rate",
                "max concurrency": "max_concurrency", "input tokens": "input_len", "output tokens": "output_len"}


def serving_fields(record: Record) -> dict[str, tuple[str | None, str]]:
    """field -> (value, source) for one serving benchmark: the load as the tool's file says it
    (observed), the model and engine observed where the file's agree with the subject's, and
    the GPU and workload as the importer stated them (a load generator's file names neither)."""
    subject, data = record["subject"], record["data"]
    out: dict[str, tuple[str | None, str]] = {}
    for field, said in (("gpu", None), ("model", data.get("model")), ("engine", engine_named(data)),
                        ("workload", None)):
        given = subject.get(field)
        if field == "engine" and given == data.get("backend") and said is None:
            given = None  # an API the client spoke, taken for the engine by an import before this code
        out[field] = ((str(given), "observed" if given == said else "stated") if given
                      else (str(said), "observed") if said else (None, "missing"))
    for field, key in SERVING_DATA.items():
        value = data.get(key)
        out[field] = (str(value), "observed") if value is not None else (None, "missing")
    ratio, lengths = data.get("length_range_ratio"), data.get("input_len") is not None or data.get("output_len") is not None
    out["token lengths"] = ((f"drawn at random from {100 * ratio:g}% of the most up", "observed") if ratio is not None
                            else ("fixed", "observed") if lengths else (None, "missing"))
    return out


Side = dict[str, tuple[str | None, str, bool]]  # field -> (value, source, the same in every run)


def side(runs: Sequence[dict[str, tuple[str | None, str]]], fields: Sequence[str] = FIELDS) -> Side:
    """One side's fields over its runs: the values joined when the runs differ, and the
    weakest source (one run missing a field leaves the side missing it)."""
    out = {}
    for f in fields:
        values = sorted({v for r in runs if (v := r[f][0]) is not None})
        how = min((r[f][1] for r in runs), key=STRENGTH.__getitem__)
        out[f] = (" / ".join(values) if values and how != "missing" else None, how, len(values) <= 1)
    return out


def compare_fields(a: Side, b: Side, names: Sequence[str] = FIELDS,
                   lenient: Sequence[str] = ()) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(every field with its value and source a side, the fields that differ or are missing).
    A ``lenient`` field recorded on neither side is no difference (a setting neither file
    records); recorded on one side only, it is one, as every other field is."""
    fields, diffs = [], []
    for f in names:
        (va, ha, same_a), (vb, hb, same_b) = a[f], b[f]
        fields.append({"field": f, "a": va, "a_source": ha, "b": vb, "b_source": hb})
        if va is None and vb is None and f in lenient:
            continue
        if va is None or vb is None:
            lacking = " or ".join(x for x, v in (("A", va), ("B", vb)) if v is None)
            diffs.append({"field": f, "a": va, "b": vb, "why": f"not recorded for {lacking}"})
        elif not (same_a and same_b):
            diffs.append({"field": f, "a": va, "b": vb, "why": "differs between the runs of a side"})
        elif va != vb:
            diffs.append({"field": f, "a": va, "b": vb, "why": "differs"})
    return fields, diffs


def difference_text(d: Mapping[str, Any]) -> str:
    """'A NVIDIA H100, B NVIDIA H200 (differs)'; 'not recorded for A (B: base)'."""
    if d["a"] is not None and d["b"] is not None:
        return f"A {d['a']}, B {d['b']} ({d['why']})"
    known = [f"{x}: {v}" for x, v in (("A", d["a"]), ("B", d["b"])) if v is not None]
    return d["why"] + (f" ({known[0]})" if known else "")


# field -> (the import flag that states it, its key in a --context file)
STATE_WITH = {"gpu": ("--gpu", "gpu"), "driver": ("--driver", "driver"), "ncu version": ("--ncu-version", "ncu_version"),
              "clock control": ("--clock-control", "clock_control"), "cache control": ("--cache-control", "cache_control"),
              "replay mode": ("--replay-mode", "replay_mode"), "model": ("--model", "model"),
              "engine": ("--engine", "engine"), "workload": ("--workload", "workload")}
# fields ncu's session page records, so giving it beside the export makes them observed
ON_SESSION_PAGE = ("driver", "ncu version", "clock control", "cache control", "replay mode")


def remedy(diffs: Sequence[Mapping[str, Any]]) -> list[str]:
    """What would make the sides of ``compare_fields``'s differences comparable, one sentence a
    side that lacks a field: the import flags (or --context keys) that state them, with the
    other side's value where it has one (a field no flag states, a serving run's load, a
    sentence of its own); and a sentence for fields recorded on both sides but different,
    which no flag can mend."""
    out = []
    for side, other in (("A", "b"), ("B", "a")):
        lacking = [d for d in diffs if d[side.lower()] is None and d["field"] in STATE_WITH]
        out += [f"- {d['field'].capitalize()}: not recorded for {side}, whose file does not say it and no flag states "
                "it: compare runs whose files record it." for d in diffs
                if d[side.lower()] is None and d["field"] not in STATE_WITH]
        if not lacking:
            continue
        flags = " ".join(f"{STATE_WITH[d['field']][0]} {d[other] if d[other] is not None else 'VALUE'}" for d in lacking)
        keys = ", ".join(STATE_WITH[d["field"]][1] for d in lacking)
        text = (f"- Re-import {side} stating how it was made: `{flags}` (VALUE: what it ran with), or {keys} in its "
                "--context file")
        if any(d["field"] in ON_SESSION_PAGE for d in lacking):
            text += ("; ncu's session page (`ncu --import REPORT --page session --csv`) given beside the export "
                     "records the driver, ncu's version and its options as observed")
        out.append(text + ".")
    unequal = [d["field"] for d in diffs if d["a"] is not None and d["b"] is not None]
    if unequal:
        out.append(f"- {', '.join(unequal).capitalize()} {'differs' if len(unequal) == 1 else 'differ'}: "
                   "compare runs made the same way.")
    return ["To make A and B comparable:", *out] if out else []


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def number_cell(value: float | None) -> str:
    """A median as a table cell: empty when there is none."""
    return "" if value is None else f"{value:g}"


def method_lines(result: Mapping[str, Any], heading: str) -> list[str]:
    """What ``compare`` prints of how each side was made: a table of the method fields, then,
    when the sides are not like-for-like, what differs and how to make them so."""
    lines = [f"| {heading} | A | B |", "|---|---|---|"]
    lines += [f"| {f['field']} | {_cell(field_text(f['a'], f['a_source']))} | "
              f"{_cell(field_text(f['b'], f['b_source']))} |" for f in result["method_fields"]]
    lines.append("")
    if not result["like_for_like"]:
        lines.append("**Not like-for-like: no difference is called.**")
        lines += [f"- {d['field']}: {difference_text(d)}" for d in result["differences"]]
        lines += ["", *remedy(result["differences"]), ""]
    return lines
