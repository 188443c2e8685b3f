"""Read nvbandwidth's JSON output (``nvbandwidth -j``, v0.5 to v0.8) into the shape its text
output is read into (pure).

Accepts one JSON object ``{"nvbandwidth": {...}}`` with ``version`` (or ``git_version``),
``CUDA Runtime Version``, ``Driver Version``, ``GPU Device list`` (``"0: NAME (bus): (host)"``)
and ``testcases``: each a ``name``, a ``status`` (``Passed``, ``Waived`` when the machine
cannot run it, ``Error`` with an ``error``), and when it ran a ``bandwidth_description``, a
``bandwidth_matrix`` of strings (GB/s, or ``N/A``) and a ``sum``. A waived testcase did not run
and is left out; a testcase that failed is kept with no figures, so a reader can say so.
Where a figure sits is named by testcase and matrix row (JSON has no lines worth citing).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from ikreport.errors import BandwidthOutputError

# "0: NVIDIA GeForce RTX 5090 (00000000:0c:00): (nf5468-m7)": index, name, PCI bus, host
DEVICE = re.compile(r"^(\d+): (.+?)(?: \([0-9A-Fa-f:.]+\))?(?:: \([^()]*\))?$")


def looks_like_json(text: str) -> bool:
    """Whether the text is a JSON object (nvbandwidth -j), as its first character says."""
    return text.lstrip("\ufeff \t\r\n").startswith("{")


def parse(text: str, name: str) -> dict[str, Any]:
    """{"version": "v0.8" or None, "devices", "tests", "cuda_runtime", "driver"} of nvbandwidth
    JSON output; tests as the text reader gives them, each cell with ``where`` for messages."""
    try:
        top = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BandwidthOutputError(f"{name}:{exc.lineno}: not valid JSON ({exc.msg}); the file is cut short or "
                                   "edited: save nvbandwidth -j's output again") from exc
    body = top.get("nvbandwidth") if isinstance(top, dict) else None
    if not isinstance(body, dict):
        raise BandwidthOutputError(f"{name}: JSON without an 'nvbandwidth' object; this is not nvbandwidth -j output")
    devices: dict[int, str] = {}
    for entry in body.get("GPU Device list") or []:
        m = DEVICE.match(str(entry).strip())
        if m:
            devices[int(m.group(1))] = m.group(2).strip()
    tests = []
    for index, case in enumerate(body.get("testcases") or []):
        if not isinstance(case, dict) or not isinstance(case.get("name"), str):
            raise BandwidthOutputError(f"{name}: testcase {index + 1} has no name; save nvbandwidth -j's output again")
        if case.get("status") == "Waived":
            continue
        test: dict[str, Any] = {"name": case["name"], "title": case.get("bandwidth_description"), "columns": [],
                                "cells": [], "sum_gbs": None, "status": case.get("status"),
                                "error": case.get("error")}
        for row, values in enumerate(case.get("bandwidth_matrix") or []):
            test["cells"].append({"row": row, "values": [_value(v, name, case["name"], row) for v in values],
                                  "where": f"{name}: testcase {case['name']}, matrix row {row}"})
        total = case.get("sum")
        if isinstance(total, (int, float)) and not isinstance(total, bool):
            test["sum_gbs"] = float(total)
        tests.append(test)
    version = body.get("version") or body.get("git_version")
    return {"version": str(version) if version else None, "devices": devices, "tests": tests,
            "cuda_runtime": body.get("CUDA Runtime Version"), "driver": body.get("Driver Version")}


def _value(value: Any, name: str, test: str, row: int) -> float | None:
    """A matrix cell: nvbandwidth writes each figure as a string, ``N/A`` where none applies."""
    if value in ("N/A", None):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = math.nan
    if isinstance(value, bool) or not math.isfinite(number):
        raise BandwidthOutputError(f"{name}: testcase {test}, matrix row {row}: {value!r} is not a bandwidth; "
                                   "the output is damaged or edited: run nvbandwidth again")
    return number
