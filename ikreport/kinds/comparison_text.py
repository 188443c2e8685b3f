"""How a comparison's numbers read, on its page, in its claims and in what ``compare`` prints,
for kernels and serving latencies alike (pure)."""

from __future__ import annotations

from typing import Any


def ratio_text(k: dict[str, Any]) -> str:
    """'0.800 [0.792, 0.803]': a kernel's (or a latency's) B/A with its interval, as pages and claims print it."""
    if k["ratio"] is None:
        return "n/a"
    ci = k.get("ratio_ci")
    return f"{k['ratio']:.3f}" + (f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "")


def field_text(value: str | None, source: str) -> str:
    """'none (stated)', or 'missing': one side's method field as tables print it."""
    return f"{value} ({source})" if value is not None else "missing"


def summary_text(data: dict[str, Any], of: str, compared: str, none: str = "") -> str:
    """'Of 3 kernels: 2 SAME, 1 FASTER.', and why no difference is called when the runs are not like-for-like."""
    counts = ", ".join(f"{n} {v}" for v, n in data["verdicts"].items()) or none
    text = f"Of {of}: {counts}."
    if not data["like_for_like"]:
        fields = ", ".join(f"{d['field']} ({d['why']})" for d in data["differences"])
        text += f" The {compared} are not like-for-like ({fields}), so no difference is called."
    return text
