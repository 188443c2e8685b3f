"""The ``serving-benchmark`` kind: what the user of an inference service sees, as a load generator
(vLLM's or SGLang's serving benchmark, AIPerf) measured it — time to first token, time per output
token, inter-token latency, end-to-end latency and throughput — with the run's settings; its
facts, its claims, its page and its chart of the per-request latencies when the file kept them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ikreport.claims.model import Claim, Record, RecordSet, make_claim
from ikreport.formatting import fmt_duration_us, fmt_number, plural
from ikreport.kinds.base import Facts, Kind, PageContext, Tables, na, rows_data
from ikreport.kinds.serving_history import HISTORY, tokens_per_request
from ikreport.terminal import safe_text as t

NAME = "serving-benchmark"

METRICS = (("ttft", "time to first token"), ("tpot", "time per output token"), ("itl", "inter-token latency"),
           ("e2el", "end-to-end latency"))
COLUMNS = ("mean", "median", "p90", "p95", "p99", "std", "min", "max")
CAVEAT_OWN = ("The percentiles are the load generator's own, as it computed them over the requests it counted; "
              "ikreport recomputes none.")


def _ms(value: Any) -> str:
    return fmt_duration_us(value * 1e3) if isinstance(value, (int, float)) else "n/a"


def _rate(d: Mapping[str, Any]) -> str:
    rate = d.get("request_rate")
    if rate == "inf":
        return "every request at once (rate inf)"
    return f"{fmt_number(rate)} requests/s" if rate is not None else "not recorded"


def _latency_phrase(d: Mapping[str, Any], metric: str, label: str) -> str | None:
    parts = [f"{stat} {_ms(d[f'{stat}_{metric}_ms'])}" for stat in ("mean", "median", "p99")
             if d.get(f"{stat}_{metric}_ms") is not None]
    return f"{label} {', '.join(parts)}" if parts else None


def serving_claims(record_id: str, record: Record, records: RecordSet) -> list[Claim]:
    """What a user of the service saw: the latencies with their percentiles, and the throughput."""
    d = record["data"]
    phrases = [p for m, label in METRICS if (p := _latency_phrase(d, m, label))]
    text = (f"As {d['tool']} measured it, " + "; ".join(phrases) + "." if phrases
            else f"{d['tool']} recorded no latency figure for this run.")
    throughput = [f"{fmt_number(d[k])} {unit}" for k, unit in (("request_throughput", "requests/s"),
                                                                ("output_throughput", "output tokens/s"))
                  if d.get(k) is not None]
    if throughput:
        text += " Throughput: " + ", ".join(throughput)
        done = d.get("completed")
        text += (f" ({done:,} of {d['num_prompts']:,} requests completed)." if done is not None and d.get("num_prompts")
                 else f" ({done:,} requests completed)." if done is not None else ".")
    return [make_claim("serving-latency", "", record_id, text, [record_id], [CAVEAT_OWN], records)]


def settings_facts(d: Mapping[str, Any]) -> Facts:
    """How the run was made, as the file says it (n/a where it does not)."""
    lengths = tokens_per_request(d)
    facts: Facts = [("load generator", d["tool"]), ("backend", na(d.get("backend"))), ("model", na(d.get("model"))),
                    ("dataset", na(d.get("dataset"))), ("tokens per request", lengths),
                    ("request rate", _rate(d)), ("max concurrency", na(d.get("max_concurrency"))),
                    ("requests", na(d.get("num_prompts"))), ("completed", na(d.get("completed"))),
                    ("failed", na(d.get("failed"))),
                    ("duration", fmt_duration_us(d["duration_s"] * 1e6) if d.get("duration_s") is not None else "n/a")]
    if d.get("command"):
        facts.append(("command", d["command"]))
    if d.get("line"):
        facts.append(("line of the file", str(d["line"])))
    return facts


def view(record: Record, page: PageContext) -> dict[str, Any]:
    """The settings, the latency figures with their percentiles, the throughput, and the
    distribution of per-request latencies when the file kept them."""
    d = record["data"]
    rows = [[label, *(_ms(d.get(f"{c}_{m}_ms")) for c in COLUMNS)] for m, label in METRICS
            if any(d.get(f"{c}_{m}_ms") is not None for c in COLUMNS)]
    none = "The file records no latency (no request completed, or the tool saved none)."  # rather than a table of no rows
    tables: Tables = [{"title": "Latency", "note": CAVEAT_OWN if rows else none, "columns": ["", *COLUMNS], "rows": rows}]
    tables.append({"title": "Throughput", "note": "", "columns": ["", "per second"],
                   "rows": [[label, na(d.get(k))] for k, label in (
                       ("request_throughput", "requests"), ("output_throughput", "output tokens"),
                       ("total_token_throughput", "input + output tokens"))]})
    return {"facts": settings_facts(d), "tables": tables, "charts": _samples_chart(d, page)}


def _samples_chart(d: Mapping[str, Any], page: PageContext) -> list[Any]:
    samples = d.get("samples") or {}
    rows = [{"metric": label, "ms": v} for key, label in (("ttft_ms", "time to first token"),
                                                          ("tpot_ms", "time per output token"))
            for v in samples.get(key) or []]
    if not rows:
        return []
    alt = (f"Strip plot of {plural(len(samples.get('ttft_ms') or []), 'request', 'requests')}' latencies in ms: "
           "time to first token and time per output token.")
    return [page.charts.render("serving-latency-samples", "Per-request latency", alt, rows)]


def _latency_samples() -> dict[str, Any]:
    import altair as alt

    return alt.Chart(alt.Data(name="rows")).mark_tick(thickness=1, size=14, color="#4c78a8").encode(
        x=alt.X("ms:Q", title="ms per request", scale=alt.Scale(type="log")),
        y=alt.Y("metric:N", title=None),
    ).properties(width=420).to_dict(validate=False)


def show(record: Mapping[str, Any], records: RecordSet) -> list[str]:
    """``ikreport show``'s lines: the latencies, the throughput and the load."""
    d = record["data"]
    lines = [f"  {t(p)}" for m, label in METRICS if (p := _latency_phrase(d, m, label))]
    lines.append(f"  throughput: {na(d.get('request_throughput'))} requests/s, {na(d.get('output_throughput'))} "
                 "output tokens/s")
    lines.append(f"  load:      {t(_rate(d))}, concurrency {na(d.get('max_concurrency'))}")
    return lines


KIND = Kind(NAME, rules=(serving_claims,), view=view, show=show, history=HISTORY,
            charts={"serving-latency-samples": (_latency_samples, rows_data)})
