"""Plain-text summaries of records, for ``ikreport show`` and ``ikreport list`` (pure)."""

from __future__ import annotations

from typing import Any

from ikreport.formatting import fmt_duration_us, fmt_pct, plural, short


def summary_line(record_id: str, record: dict[str, Any]) -> str:
    gpu = record["subject"].get("gpu") or "-"
    return f"{record_id[:12]}  {record['kind']:<14} {gpu:<28} {record['title']}"


def describe(record_id: str, record: dict[str, Any]) -> list[str]:
    lines = [
        f"{record['title']}",
        f"  id:        {record_id}",
        f"  kind:      {record['kind']}",
        f"  collected: {record['collected_at'] or '(derived record: no time)'}",
    ]
    for key in ("gpu", "engine", "model", "workload"):
        if record["subject"].get(key):
            lines.append(f"  {key + ':':<10} {record['subject'][key]}")
    method = record["method"]
    lines.append(f"  method:    {method['tool']}{' ' + method['tool_version'] if method.get('tool_version') else ''}: {method['how']}")
    if record.get("environment"):
        lines.append(f"  environment: {short(record['environment'])}")
    for source in record["sources"]:
        lines.append(f"  source:    {source['role']} {short(source['id'])} {source['name']} ({source['size']} bytes)")
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
                f"{k['bound']:<14} {k['kernel'][:70]}"
            )
    lines.append("  limitations:")
    lines.extend(f"    - {text}" for text in record["limitations"])
    return lines
