"""Serving-benchmark results as the load generators save them (pure).

Accepts:

- vLLM's ``benchmark_serving.py --save-result`` / ``vllm bench serve`` JSON: one object with
  ``request_throughput``, ``output_throughput``, ``{mean,median,std,pNN}_{ttft,tpot,itl,e2el}_ms``,
  ``completed``, ``num_prompts``, ``request_rate``, ``max_concurrency`` … and, when saved with its
  details, the per-request lists ``ttfts`` and ``itls`` (seconds), ``input_lens``, ``output_lens``,
  ``errors``; releases of 2024 name the end-to-end latency ``{stat}_latency_ms``; a run in which no
  request completed holds 0.0 for every latency;
- SGLang's ``bench_serving --output-file`` JSONL: one run per line, appended, with the old key set
  (``median_ttft_ms``, ``mean_e2e_latency_ms`` … only) or the new one (means, medians, stds, p99s);
  ``null`` values and ``Infinity`` for an unbounded request rate;
- NVIDIA AIPerf's ``profile_export_aiperf.csv`` (a block of ``Metric,avg,min,max,p1,…,std`` rows,
  a blank line, a block of ``Metric,Value`` rows) and ``profile_export_aiperf.json``: before
  schema 1.3 the metrics under ``records`` by tag (``ttft``) and the load under
  ``input_config.loadgen``; from 1.3 (``schema_version``, ``aiperf_version``) the metrics at the top
  level (``time_to_first_token``), the model under ``input_config.models.items`` and the load in
  ``input_config.phases``.

Each gives one or more runs: a flat dict of the figures the tool printed (milliseconds and per
second, as it wrote them), the run's settings, and the per-request samples when the file has
them. A value the file does not hold is None, never 0; no percentile is recomputed.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from collections.abc import Mapping
from typing import Any

from ikreport.errors import ServingOutputError

METRICS = ("ttft", "tpot", "itl", "e2el")
STAT = re.compile(r"^(?P<stat>mean|median|std|min|max|p\d+(?:\.\d+)?)_"
                  r"(?P<metric>ttft|tpot|itl|e2el|e2e_latency|latency)_ms$")
E2EL = ("e2el", "e2e_latency", "latency")
THROUGHPUTS = ("request_throughput", "request_goodput", "input_throughput", "output_throughput",
               "total_token_throughput", "total_throughput")
AIPERF_METRICS = {"time to first token": "ttft", "inter token latency": "itl", "request latency": "e2el",
                  "ttft": "ttft", "time_to_first_token": "ttft", "inter_token_latency": "itl",
                  "request_latency": "e2el"}
AIPERF_VALUES = {"request throughput": "request_throughput", "output token throughput": "output_throughput",
                 "request count": "completed", "error request count": "failed", "benchmark duration": "duration_s",
                 "total input sequence length": "total_input_tokens", "total output sequence length": "total_output_tokens",
                 "request_throughput": "request_throughput", "output_token_throughput": "output_throughput",
                 "request_count": "completed", "error_request_count": "failed", "benchmark_duration": "duration_s",
                 "total_isl": "total_input_tokens", "total_osl": "total_output_tokens"}
AIPERF_STATS = ("avg", "min", "max", "p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99", "std")


def _stat_key(stat: str, metric: str) -> str:
    """The record's key of a figure: a dot in p99.9 would cut a citation's path, so p99_9."""
    return f"{stat.replace('.', '_')}_{'e2el' if metric in E2EL else metric}_ms"


def _num(value: Any) -> float | int | None:
    """A number the file holds; None for null, missing, NaN or infinite (unknown, never 0)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return value if math.isfinite(value) else None


def _rate(value: Any) -> float | str | None:
    """A request rate: a number, "inf" (every request sent at once), or None."""
    if isinstance(value, str) and value.lower() in ("inf", "infinity"):
        return "inf"
    if isinstance(value, float) and math.isinf(value):
        return "inf"
    return _num(value)


def _loads(text: str, name: str, line: int = 1) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ServingOutputError(f"{name}:{line + exc.lineno - 1}: not complete JSON ({exc.msg}); the file is cut or "
                                 "not the tool's result, save it again") from None


def _figures(obj: dict[str, Any]) -> dict[str, Any]:
    """The latency and throughput figures a vLLM or SGLang result holds, under the record's keys."""
    out: dict[str, Any] = {}
    for key, value in obj.items():
        m = STAT.match(key)
        if m:
            out[_stat_key(m["stat"], m["metric"])] = _num(value)
    for key in THROUGHPUTS:
        if key in obj:
            out["total_token_throughput" if key == "total_throughput" else key] = _num(obj[key])
    return out


# What a load generator's backend may name that is the API its client spoke, not the engine
# that served it: vLLM's openai backends (and chat or completions where a tool says so).
API_KINDS = frozenset({"openai", "openai-chat", "openai-comp", "openai-audio", "openai-embeddings", "chat",
                       "completions", "embeddings", "rankings", "responses"})


def engine_named(data: Mapping[str, Any]) -> str | None:
    """The serving engine a run's backend names, or None when it names an API (openai, chat);
    AIPerf's is its endpoint type, never an engine."""
    backend = data.get("backend")
    if data.get("tool") == "AIPerf" or not isinstance(backend, str) or backend.lower() in API_KINDS:
        return None
    return backend or None


def _settings(obj: dict[str, Any]) -> dict[str, Any]:
    def text(*keys: str) -> str | None:
        for k in keys:
            if isinstance(obj.get(k), str) and obj[k]:
                return obj[k]
        return None

    def count(*keys: str) -> int | None:
        for k in keys:
            v = _num(obj.get(k))
            if v is not None:
                return int(v)
        return None

    dataset = text("dataset_name", "dataset")
    # SGLang writes random_*_len whatever the dataset, and reads them for every random* one (random-ids
    # too): a sharegpt run's prompts are its own
    drawn = dataset is None or dataset.startswith("random")
    return {"backend": text("backend"), "model": text("model_id", "model", "served_model_name"),
            "dataset": dataset,
            "input_len": count(*(["random_input_len"] if drawn else []), "input_len"),
            "output_len": count(*(["random_output_len"] if drawn else []), "sharegpt_output_len", "output_len"),
            "request_rate": _rate(obj.get("request_rate")), "max_concurrency": count("max_concurrency"),
            "num_prompts": count("num_prompts"), "completed": count("completed"), "failed": count("failed"),
            "duration_s": _num(obj.get("duration")), "total_input_tokens": count("total_input_tokens"),
            "total_output_tokens": count("total_output_tokens"), "run_date": text("date")}


def _samples(obj: dict[str, Any], name: str) -> dict[str, Any] | None:
    """Per-request samples (ms) of the requests that gave a first token; None when not saved."""
    ttfts = obj.get("ttfts")
    if not isinstance(ttfts, list) or not ttfts:
        return None
    saved_errors, saved_itls = obj.get("errors"), obj.get("itls")
    errors: list[Any] = saved_errors if isinstance(saved_errors, list) else [""] * len(ttfts)
    itls: list[Any] = saved_itls if isinstance(saved_itls, list) else [None] * len(ttfts)
    if len(errors) != len(ttfts) or len(itls) != len(ttfts):
        raise ServingOutputError(f"{name}: 'ttfts', 'itls' and 'errors' hold different numbers of requests; "
                                 "save the result again")
    saved_lens, saved_latencies = obj.get("output_lens"), obj.get("latencies")
    lens: list[Any] = saved_lens if isinstance(saved_lens, list) and len(saved_lens) == len(ttfts) else [None] * len(ttfts)
    latencies: list[Any] = (saved_latencies if isinstance(saved_latencies, list) and len(saved_latencies) == len(ttfts)
                            else [None] * len(ttfts))
    ttft_ms, tpot_ms = [], []
    for t, gaps, err, out, latency in zip(ttfts, itls, errors, lens, latencies):
        if err or _num(t) is None or t <= 0:
            continue  # failed, or no token: the tool leaves it out of its figures too
        ttft_ms.append(round(t * 1e3, 4))
        tpot = _tpot(t, gaps, out, latency)
        if tpot is not None:
            tpot_ms.append(round(tpot * 1e3, 4))
    return {"ttft_ms": ttft_ms, "tpot_ms": tpot_ms, "requests": len(ttfts),
            "no_token": sum(1 for t, err in zip(ttfts, errors) if not err and (_num(t) is None or t <= 0)),
            "errored": sum(1 for err in errors if err)}


def _tpot(ttft: float, gaps: Any, out: Any, latency: Any) -> float | None:
    """One request's time per output token (s) as vLLM computes it: the time after the first token
    over the tokens after the first. A streamed chunk can hold several tokens, so the mean gap
    between chunks is not it; without the request's token count it is unknown."""
    if _num(out) is None or out <= 1:
        return None
    if _num(latency) is not None:
        return (latency - ttft) / (out - 1)
    if isinstance(gaps, list) and gaps and all(_num(g) is not None for g in gaps):
        return sum(gaps) / (out - 1)
    return None


def _nothing_measured(figures: dict[str, Any], settings: dict[str, Any]) -> None:
    """vLLM writes 0.0 for every latency when no request completed: no request was measured, so
    the latencies are unknown, not 0 ms (the best value a latency axis has)."""
    if settings["completed"] == 0:
        for key in figures:
            if key.endswith("_ms"):
                figures[key] = None


def _run(obj: Any, name: str, tool: str) -> dict[str, Any]:
    if not isinstance(obj, dict):
        raise ServingOutputError(f"{name}: not a {tool} result (a JSON object of figures)")
    figures = _figures(obj)
    if not any(v is not None for v in figures.values()):
        raise ServingOutputError(f"{name}: no latency or throughput figure (mean_ttft_ms, request_throughput …); "
                                 f"this is not a {tool} result")
    settings = _settings(obj)
    _nothing_measured(figures, settings)
    samples = _samples(obj, name)
    if settings["failed"] is None and samples is not None:
        settings["failed"] = samples["errored"]
    return {"tool": tool, "settings": settings, "figures": figures, "samples": samples}


def parse_vllm(text: str, name: str) -> dict[str, Any]:
    """One run of vLLM's saved serving benchmark."""
    return _run(_loads(text, name), name, "vLLM benchmark_serving")


def parse_sglang(text: str, name: str) -> list[dict[str, Any]]:
    """Every run of an SGLang bench_serving JSONL file, in file order (one per line)."""
    runs = []
    for line, row in enumerate(text.splitlines(), start=1):
        if row.strip():
            obj = _loads(row, name, line)
            run = _run(obj, f"{name}:{line}", "SGLang bench_serving")
            ratio = _num(obj.get("random_range_ratio"))
            if str(run["settings"]["dataset"]).startswith("random") and ratio is not None and 0 <= ratio < 1:
                # its random lengths are drawn between ratio × the length and the length: the length is a most
                run["settings"]["length_range_ratio"] = ratio
            runs.append({**run, "line": line})
    if not runs:
        raise ServingOutputError(f"{name}: empty; give the file bench_serving --output-file wrote")
    return runs


def parse_aiperf(text: str, name: str) -> dict[str, Any]:
    """One AIPerf run, from profile_export_aiperf.csv or profile_export_aiperf.json."""
    if text.lstrip().startswith("{"):
        return _aiperf_json(_loads(text, name), name)
    return _aiperf_csv(text, name)


def _unit_free(label: str) -> str:
    return re.sub(r"\s*\([^)]*\)\s*$", "", label).strip().lower()


def _aiperf_stats(metric: str, stats: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for stat in AIPERF_STATS:
        if stat in stats:
            value = _num(stats[stat])
            out[_stat_key("mean" if stat == "avg" else stat, metric)] = value
            if stat == "p50":
                out[_stat_key("median", metric)] = value
    return out


def _aiperf_csv(text: str, name: str) -> dict[str, Any]:
    figures: dict[str, Any] = {}
    settings: dict[str, Any] = {}
    header: list[str] | None = None
    for line, row in enumerate(csv.reader(io.StringIO(text)), start=1):
        if not row or not any(c.strip() for c in row):
            header = None
            continue
        if row[0] == "Metric":
            header = [c.strip() for c in row]
            continue
        if header is None:
            raise ServingOutputError(f"{name}:{line}: a row before any 'Metric,…' header; this is not AIPerf's "
                                     "profile_export_aiperf.csv")
        if len(row) != len(header):
            raise ServingOutputError(f"{name}:{line}: {len(row)} fields where its block's header has {len(header)}; "
                                     "the file is cut, save it again")
        label = _unit_free(row[0])
        try:
            cells = {h: float(c) if c.strip() else None for h, c in zip(header[1:], row[1:])}
        except ValueError:
            raise ServingOutputError(f"{name}:{line}: {row[0]} holds a value that is not a number") from None
        if label in AIPERF_METRICS:
            figures.update(_aiperf_stats(AIPERF_METRICS[label], cells))
        elif label in AIPERF_VALUES and "Value" in cells:
            settings[AIPERF_VALUES[label]] = cells["Value"]
    return _aiperf_run(figures, settings, {}, name)


def _aiperf_json(obj: Any, name: str) -> dict[str, Any]:
    if not isinstance(obj, dict):
        raise ServingOutputError(f"{name}: not AIPerf's profile_export_aiperf.json (a JSON object of metrics)")
    records = obj.get("records")
    if records is None and "aiperf_version" in obj:
        records = obj  # schema 1.3 and later: the metrics sit at the top level
    if not isinstance(records, dict):
        raise ServingOutputError(f"{name}: no 'records'; this is not AIPerf's profile_export_aiperf.json")
    figures: dict[str, Any] = {}
    values: dict[str, Any] = {}
    for tag, stats in sorted(records.items()):
        if not isinstance(stats, dict):
            continue
        if tag in AIPERF_METRICS:
            figures.update(_aiperf_stats(AIPERF_METRICS[tag], stats))
        elif tag in AIPERF_VALUES:
            values[AIPERF_VALUES[tag]] = _num(stats.get("avg"))
    errors = obj.get("error_summary")
    if values.get("failed") is None and isinstance(errors, list):
        # the file lists every kind of error with its count: an empty list says none failed
        counts = [_num(e.get("count")) if isinstance(e, dict) else None for e in errors]
        values["failed"] = sum(c for c in counts if c is not None) if None not in counts else None
    run = _aiperf_run(figures, values, _dict(obj.get("input_config")), name)
    run_info = _dict(obj.get("run_info"))
    s = run["settings"]
    s["command"] = s["command"] or run_info.get("cli_command")
    s["run_date"] = obj.get("start_time") if isinstance(obj.get("start_time"), str) else None
    if isinstance(obj.get("aiperf_version"), str):
        run["tool_version"] = obj["aiperf_version"]
    return run


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _profiling_phase(config: dict[str, Any]) -> dict[str, Any]:
    """The load of the measured phase (schema 1.3): the one phase not left out of the results; none
    when several are measured, as their loads can differ."""
    phases = config.get("phases")
    if not isinstance(phases, list):
        return {}
    measured = [p for p in phases if isinstance(p, dict) and not p.get("exclude_from_results")]
    return measured[0] if len(measured) == 1 else {}


def _aiperf_model(config: dict[str, Any]) -> str | None:
    names = (config.get("endpoint") or {}).get("model_names") or []
    items = (config.get("models") or {}).get("items") or []
    names = names or [i.get("name") for i in items if isinstance(i, dict)]
    return names[0] if names and isinstance(names[0], str) else None


def _aiperf_run(figures: dict[str, Any], values: dict[str, Any], config: dict[str, Any], name: str) -> dict[str, Any]:
    if not any(v is not None for v in figures.values()):
        raise ServingOutputError(f"{name}: no Time to First Token or latency rows; this is not AIPerf's export")
    for key in ("request_throughput", "output_throughput"):
        figures[key] = values.get(key)
    endpoint = config.get("endpoint") or {}
    loadgen = {**_profiling_phase(config), **(config.get("loadgen") or {})}
    prompt = ((config.get("input") or {}).get("prompt") or {})

    def count(value: Any) -> int | None:
        return int(value) if _num(value) is not None else None

    settings = {"backend": endpoint.get("type"), "model": _aiperf_model(config), "dataset": None,
                "input_len": count((prompt.get("input_tokens") or {}).get("mean")),
                "output_len": count((prompt.get("output_tokens") or {}).get("mean")),
                "request_rate": _rate(loadgen.get("request_rate")), "max_concurrency": count(loadgen.get("concurrency")),
                "num_prompts": count(loadgen.get("request_count")), "completed": count(values.get("completed")),
                "failed": count(values.get("failed")), "duration_s": values.get("duration_s"),
                "total_input_tokens": count(values.get("total_input_tokens")),
                "total_output_tokens": count(values.get("total_output_tokens")), "run_date": None,
                "command": config.get("cli_command")}
    return {"tool": "AIPerf", "settings": settings, "figures": figures, "samples": None}
