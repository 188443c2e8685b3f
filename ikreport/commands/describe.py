"""Plain-text summaries of records, for ``ikreport show`` and ``ikreport list`` (pure).

Every piece of record text passes through ``safe_text``: records come from anyone, and a
terminal acts on the control characters they may hold.
"""

from __future__ import annotations

from typing import Any

from ikreport.formatting import fmt_duration_us, fmt_pct, plural, short
from ikreport.terminal import safe_text as t


def summary_line(record_id: str, record: dict[str, Any]) -> str:
    gpu = t(record["subject"].get("gpu") or "-")
    return f"{record_id[:12]}  {t(record['kind']):<14} {gpu:<28} {t(record['title'])}"


def describe(record_id: str, record: dict[str, Any]) -> list[str]:
    lines = [
        f"{t(record['title'])}",
        f"  id:        {record_id}",
        f"  kind:      {t(record['kind'])}",
        f"  collected: {t(record['collected_at'] or '(derived record: no time)')}",
    ]
    for key in ("gpu", "engine", "model", "workload"):
        if record["subject"].get(key):
            lines.append(f"  {key + ':':<10} {t(record['subject'][key])}")
    method = record["method"]
    version = f" {method['tool_version']}" if method.get("tool_version") else ""
    lines.append(f"  method:    {t(method['tool'] + version)}: {t(method['how'])}")
    if record.get("environment"):
        lines.append(f"  environment: {short(record['environment'])}")
    for source in record["sources"]:
        lines.append(f"  source:    {t(source['role'])} {short(source['id'])} {t(source['name'])} ({source['size']} bytes)")
    data = record["data"]
    if record["kind"] == "ncu-profile":
        lines.append(
            f"  profile:   {plural(data['launch_count'], 'launch', 'launches')} of "
            f"{plural(data['kernel_count'], 'kernel', 'kernels')}, "
            f"{fmt_duration_us(data['profiled_time_us'])} profiled GPU time"
        )
        for k in data["kernels"][:10]:
            lines.append(
                f"    {fmt_pct(k['share_pct']):>7}  {fmt_duration_us(k['total_us']):>10}  x{k['launches']:<5} "
                f"{t(k['bound']):<14} {t(k['kernel'][:70])}"
            )
    lines.append("  limitations:")
    lines.extend(f"    - {t(text)}" for text in record["limitations"])
    return lines
