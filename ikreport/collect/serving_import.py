"""``collect serving``: ``serving-benchmark`` records from a load generator's saved result (vLLM,
SGLang, AIPerf). The file is kept as a blob; each run is one record, and nothing is written
unless every run of the file reads."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

from ikreport.analysis import serving, sniff
from ikreport.collect.context import Context, long_title, utc_now
from ikreport.collect.textfile import read_text
from ikreport.errors import ServingOutputError
from ikreport.kinds.serving_benchmark import NAME as SERVING_BENCHMARK
from ikreport.store import records
from ikreport.store.archive import Archive

FORMATS = {"vllm": ("vllm-serving", "application/json"), "sglang": ("sglang-serving", "application/x-ndjson"),
           "aiperf": ("aiperf-export", "text/csv")}
LIMIT_CLIENT = ("Client-side timing: {tool} measured each request from the moment it sent it to the moment it received "
                "tokens, so network, HTTP, queueing and tokenisation are in every figure; these are not the server's "
                "own timings.")
LIMIT_ONE_RUN = "One run of the load generator: run-to-run variance is not captured."
LIMIT_WARMUP = "The file does not say whether the server was warmed up before the measured requests."
LIMIT_WHAT = ("What the load generator measured: time to first token is the time to the first streamed chunk, time "
              "per output token leaves the first token out, and inter-token latency is the gap between streamed "
              "chunks, which can hold more than one token.")
LIMIT_OWN = ("The percentiles are {tool}'s own; ikreport recomputes none. A figure the file does not hold is shown "
             "as unknown, never as 0.")
LIMIT_SAMPLES = ("The file keeps each request's latencies: the page's distribution and any comparison use them "
                 "({n} requests that gave a first token).")
LIMIT_NO_SAMPLES = "The file keeps no per-request latencies: only the tool's own summary figures are known."


def _limitations(run: dict[str, Any]) -> list[str]:
    tool, s = run["tool"], run["settings"]
    out = [LIMIT_CLIENT.format(tool=tool), LIMIT_ONE_RUN, LIMIT_WARMUP, LIMIT_WHAT, LIMIT_OWN.format(tool=tool)]
    if s.get("failed") is None:
        out.append("The file does not say how many requests failed or gave no token, nor whether any were counted.")
    elif s.get("completed") == 0:
        out.append(f"No request completed ({s['failed']:,} failed): {tool} measured no latency, so none is shown; "
                   "the 0.0 the file writes for each is not a measurement.")
    elif s["failed"]:
        out.append(f"{s['failed']:,} requests failed; {tool} leaves them out of its latency figures, which cover the "
                   "completed requests only.")
    samples = run["samples"]
    if samples:
        out.append(LIMIT_SAMPLES.format(n=len(samples["ttft_ms"])))
        if samples.get("no_token"):
            out.append(f"{samples['no_token']:,} requests succeeded without a first token and are left out of the samples.")
    else:
        out.append(LIMIT_NO_SAMPLES)
    return out


def _argv(command: Any) -> list[str] | None:
    """The command line as its words: AIPerf writes it as one shell line."""
    if not isinstance(command, str) or not command.strip():
        return None
    try:
        return shlex.split(command)
    except ValueError:  # unbalanced quotes: keep the line whole rather than guess its words
        return [command]


def _parse(fmt: str, text: str, name: str) -> list[dict[str, Any]]:
    expected = {"vllm": "vllm-serving", "sglang": "sglang-serving", "aiperf": "aiperf-export"}[fmt]
    other = sniff.other_tool(text, name, expected)
    if other:
        raise ServingOutputError(other)
    if fmt == "vllm":
        return [serving.parse_vllm(text, name)]
    if fmt == "sglang":
        return serving.parse_sglang(text, name)
    return [serving.parse_aiperf(text, name)]


def import_serving(archive: Archive, path: Path, fmt: str, context: Context) -> list[str]:
    """Store a saved serving-benchmark result and one record per run in it; return their ids."""
    raw, text = read_text(path, ServingOutputError)
    runs = _parse(fmt, text, str(path))  # every run read before anything is written
    added = max(len(f", line {run['line']}") for run in runs) if len(runs) > 1 else 0  # to each run's title
    if context.title and (too_long := long_title(context.title, added)):
        raise ServingOutputError(f"{path}: the title is {len(context.title)} characters, and each of its {len(runs)} runs "
                                 f"adds ', line N' to it; {too_long}")
    role, media = FORMATS[fmt]
    if fmt == "aiperf" and text.lstrip().startswith("{"):
        media = "application/json"
    blob = archive.put_blob(raw)
    ids = []
    for run in runs:
        s = run["settings"]
        data = {"tool": run["tool"], **s, **run["figures"], "samples": run["samples"],
                **({"line": run["line"]} if run.get("line") else {})}
        where = f", line {run['line']}" if len(runs) > 1 else ""
        title = (f"{run['tool']}: {s.get('model') or 'model not recorded'}, rate {s.get('request_rate') or 'n/a'}, "
                 f"concurrency {s.get('max_concurrency') or 'n/a'}{where}")
        record = records.new_record(
            SERVING_BENCHMARK, context.title + where if context.title else title, collected_at=utc_now(),
            subject={**context.subject(), "engine": context.engine or serving.engine_named(s),
                     "model": context.model or s.get("model")},
            method={"tool": run["tool"], "tool_version": run.get("tool_version"), "command": _argv(s.get("command")), "options": {},
                    "how": f"imported from a saved {run['tool']} result"},
            data=data, limitations=_limitations(run) + list(context.limitations),
            sources=[{"role": role, "id": blob, "size": len(raw), "media_type": media, "name": path.name}])
        ids.append(archive.put_record(record))
    return ids
