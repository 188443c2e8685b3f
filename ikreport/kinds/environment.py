"""The ``environment`` kind: a snapshot of the GPUs, driver, host and Python packages — its page."""

from __future__ import annotations

from typing import Any

from ikreport.claims.model import Record, RecordSet
from ikreport.kinds.base import Facts, Kind, PageContext, Tables, na
from ikreport.terminal import safe_text as t

NAME = "environment"


def _clock(now: float | None, top: float | None) -> str:
    if now is None and top is None:
        return "n/a"
    return f"{na(now)} MHz (max {na(top)})"


def environment_view(record: Record) -> tuple[Facts, Tables]:
    """The page's facts (driver, CUDA, host) and tables (each GPU, each package)."""
    d = record["data"]
    facts: Facts = [("driver", na(d.get("driver"))), ("CUDA", na(d.get("cuda"))), ("GPUs", str(d["gpu_count"]))]
    host = d.get("host") or {}
    for key in ("hostname", "os", "cpu", "cpu_count", "python"):
        if host.get(key) is not None:
            facts.append((key, str(host[key])))
    tables: Tables = [{
        "title": "GPUs", "note": "",
        "columns": ["#", "name", "UUID", "PCI bus", "VBIOS", "CC", "memory", "SM clock",
                    "memory clock", "power limit", "ECC", "MIG", "persistence"],
        "rows": [[str(i), na(g.get("name")), na(g.get("uuid")), na(g.get("pci_bus")), na(g.get("vbios")),
                  na(g.get("compute_capability")), na(g.get("memory_total_mib"), " MiB"),
                  _clock(g.get("sm_clock_mhz"), g.get("max_sm_clock_mhz")),
                  _clock(g.get("memory_clock_mhz"), g.get("max_memory_clock_mhz")),
                  na(g.get("power_limit_w"), " W"), na(g.get("ecc_mode")), na(g.get("mig_mode")),
                  na(g.get("persistence_mode"))] for i, g in enumerate(d["gpus"])],
    }]
    if d.get("packages"):
        tables.append({"title": "Python packages", "note": "", "columns": ["package", "version"],
                       "rows": [[k, v] for k, v in sorted(d["packages"].items())]})
    return facts, tables


def view(record: Record, page: PageContext) -> dict[str, Any]:
    """Facts and tables; an environment page has no chart."""
    facts, tables = environment_view(record)
    return {"facts": facts, "tables": tables}


def show(record: Record, records: RecordSet) -> list[str]:
    """``ikreport show``'s lines: driver and CUDA, then each GPU's memory, power limit and top clocks."""
    d = record["data"]
    lines = [f"  driver:    {t(na(d.get('driver')))}, CUDA {t(na(d.get('cuda')))}"]
    for i, g in enumerate(d["gpus"]):
        parts = [f"memory {na(g.get('memory_total_mib'), ' MiB')}", f"power limit {na(g.get('power_limit_w'), ' W')}"]
        if g.get("max_sm_clock_mhz") is not None or g.get("max_memory_clock_mhz") is not None:
            parts.append(f"max clocks SM {na(g.get('max_sm_clock_mhz'))} / memory {na(g.get('max_memory_clock_mhz'))} MHz")
        lines.append(f"  {f'gpu {i}:':<10} {t(na(g.get('name')))}: {', '.join(parts)}")
    return lines


KIND = Kind(NAME, view=view, show=show)
