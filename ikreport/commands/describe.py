"""Plain-text summaries of records, for ``ikreport show`` and ``ikreport list`` (pure).

Every piece of record text passes through ``safe_text``: records come from anyone, and a
terminal acts on the control characters they may hold.
"""

from __future__ import annotations

from typing import Any

from ikreport.claims.model import RecordSet
from ikreport.formatting import short
from ikreport.kinds.base import record_times
from ikreport.kinds.registry import kind
from ikreport.store.schema_parts import record_facts
from ikreport.terminal import safe_text as t


GPU_WIDTH = 40  # the longest GPU name seen ("NVIDIA GeForce RTX 3060 Laptop GPU") fits; longer is cut


def summary_line(record_id: str, record: dict[str, Any]) -> str:
    """One line of ``ikreport list``: short id, kind, GPU and title."""
    return summary_lines([(record_id, record)])[0]


def summary_lines(rows: list[tuple[str, dict[str, Any]]]) -> list[str]:
    """The lines of ``ikreport list``: short id, kind, GPU and title, each column as wide as its
    widest cell (a GPU name cut at GPU_WIDTH with an ellipsis), so two spaces always part them."""
    cells = [(rid[:12], t(r["kind"]), _cut(t(_gpu(r) or "-"), GPU_WIDTH), t(r["title"])) for rid, r in rows]
    kinds = max((len(c[1]) for c in cells), default=0)
    gpus = max((len(c[2]) for c in cells), default=0)
    return [f"{rid}  {k:<{kinds}}  {gpu:<{gpus}}  {title}" for rid, k, gpu, title in cells]


def _gpu(record: dict[str, Any]) -> str | None:
    return kind(record["kind"]).gpu_shown(record_facts(record), record["subject"].get("gpu"))


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[:width - 1] + "…"


def describe(record_id: str, record: dict[str, Any], records: RecordSet) -> list[str]:
    """The lines of ``ikreport show``: the record's head, what its kind adds (from the record and
    ``records``, the archive's others), its limitations."""
    lines = [
        f"{t(record['title'])}",
        f"  id:        {record_id}",
        f"  kind:      {t(record['kind'])}",
    ]
    lines += [f"  {label + ':':<10} {t(value)}" for label, value in record_times(record)]
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
    lines.extend(kind(record["kind"]).show(record, records))
    if record["limitations"]:  # a heading over nothing reads as if something were missing
        lines.append("  limitations:")
        lines.extend(f"    - {t(text)}" for text in record["limitations"])
    return lines
