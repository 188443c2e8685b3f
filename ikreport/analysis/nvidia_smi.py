"""Read saved ``nvidia-smi`` output: the ``-q`` text dump and the default table.

``-q``: a tree of ``Key : Value`` lines indented by 4 spaces a level (keys padded with
spaces; some keys end in a space; values may carry ``[Deprecated; …]`` notes or say
``N/A``). Each GPU starts at a line ``GPU 00000000:01:00.0``. The default table: a banner
with driver and CUDA versions, then a three-line block per GPU (name, bus id, memory,
power, persistence, ECC, MIG). Several GPUs in one file are several GPUs. Numbers are read in
the C locale nvidia-smi prints, or in another locale's spelling where the digits leave no doubt
(see ``_number``).
``nvidia-smi --query-gpu`` CSV (a header row of field names) is recognised only to be refused
by name: it holds just the fields it asked for.
"""

from __future__ import annotations

import re
from typing import Any

from ikreport.analysis.sniff import QUERY_HEADER, other_tool
from ikreport.errors import NvidiaSmiError
from ikreport.formatting import plural


GPU_LINE = re.compile(r"^GPU ([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f])\s*$")
KEY_VALUE = re.compile(r"^(?P<indent> *)(?P<key>[^:]+?)\s*(?::\s?(?P<value>.*))?$")
DEPRECATED = re.compile(r"\s*\[Deprecated;[^\]]*\]\s*$")
NOT_A_VALUE = {"N/A", "", "Requested functionality has been deprecated", "Not available in WDDM driver model",
               "[N/A]", "Not Supported", "[Not Supported]"}
TABLE_BANNER = re.compile(r"NVIDIA-SMI\s+(?P<smi>\S+)\s+Driver Version:\s+(?P<driver>\S+)\s+CUDA Version:\s+(?P<cuda>\S+)")
TABLE_GPU1 = re.compile(r"^\|\s+(?P<index>\d+)\s+(?P<name>.+?)\s+(?P<persist>On|Off)\s+\|\s+(?P<bus>\S+)\s+(?P<disp>\S+)\s+\|\s+(?P<ecc>.*?)\s+\|$")
TABLE_GPU2 = re.compile(r"^\|\s+(?P<fan>\S+)\s+(?P<temp>\S+)\s+(?P<perf>P\d+|N/A)\s+(?P<power>.*?)\s+\|\s+(?P<used>\d+)MiB\s*/\s*(?P<total>\d+)MiB\s+\|\s+(?P<util>\S+)\s+(?P<mode>.*?)\s+\|$")
TABLE_GPU3 = re.compile(r"^\|\s+\|\s+\|\s+(?P<mig>.*?)\s+\|$")


def _value(text: str | None) -> str | None:
    if text is None:
        return None
    v = DEPRECATED.sub("", text).strip()
    return None if v in NOT_A_VALUE else v


# nvidia-smi prints MHz and MiB as integers and watts with two decimals, in the C locale; a
# dump passed through a localised tool or editor can read "2.100 MHz" (German thousands) or
# "80,00 W" (decimal comma). Group separators are only taken where the digits after them
# leave no doubt; anything else is refused, never read as a smaller or larger number.
_GROUPED = re.compile(r"^\d{1,3}(?:([.,\u00a0\u202f ])\d{3})+$")  # 2.100, 2,100, 2 100: thousands
_DECIMAL = re.compile(r"^\d+([.,])\d{1,2}$")  # 80.00, 80,00: decimals (never three digits)


def _number(text: str | None, unit: str, decimals: bool, key: str, name: str) -> float | None:
    """The number before ``unit`` in ``text``, in any of the spellings above; None when the value
    is absent or has another unit. ``decimals``: the unit is printed with two decimals (watts)."""
    m = re.match(rf"^(\S+(?:[\u00a0\u202f ]\d{{3}})*)\s*{unit}$", text or "")
    if not m:
        return None
    digits = m.group(1)
    if re.fullmatch(r"\d+", digits):
        return float(digits)
    if decimals and _DECIMAL.match(digits):
        return float(digits.replace(",", "."))
    if not decimals and _GROUPED.match(digits):
        return float(re.sub(r"\D", "", digits))
    raise NvidiaSmiError(f"{name}: {key} reads {text!r}, a number in a locale's format ikreport cannot read "
                         "without guessing; save the dump again with 'LC_ALL=C nvidia-smi -q'")


def _int(value: float | None) -> int | None:
    return None if value is None else int(value)


def parse_query(text: str, name: str) -> dict[str, Any]:
    """``nvidia-smi -q`` -> {"driver", "cuda", "gpus": [...]}."""
    top: dict[str, Any] = {}
    gpus: list[dict[str, Any]] = []
    tree: dict[str, Any] | None = None
    stack: list[tuple[int, dict[str, Any]]] = []
    for raw in text.splitlines():
        line = raw.rstrip()
        if not line.strip() or line.startswith("====="):
            continue
        gpu = GPU_LINE.match(line)
        if gpu:
            tree = {"_bus": gpu.group(1)}
            gpus.append(tree)
            stack = [(0, tree)]
            continue
        m = KEY_VALUE.match(line)
        if not m:
            continue
        depth = len(m["indent"]) // 4
        key = m["key"].strip()
        if tree is None:
            if m["value"] is not None:
                top[key] = _value(m["value"])
            continue
        while stack and stack[-1][0] >= depth:
            stack.pop()
        parent = stack[-1][1] if stack else tree
        if m["value"] is None:
            child: dict[str, Any] = {}
            parent.setdefault(key, child)
            stack.append((depth, parent[key] if isinstance(parent[key], dict) else child))
        else:
            parent.setdefault(key, _value(m["value"]))
    if not gpus:
        raise NvidiaSmiError(f"{name}: no 'GPU 0000…' section found; save the output of 'nvidia-smi -q'")
    declared = top.get("Attached GPUs")
    if declared and declared.isdigit() and int(declared) != len(gpus):
        raise NvidiaSmiError(f"{name}: says {plural(int(declared), 'GPU is', 'GPUs are')} attached but holds "
                             f"{len(gpus)}; the dump is truncated: save 'nvidia-smi -q' again")
    for g in gpus:
        if not isinstance(g.get("FB Memory Usage"), dict) or "Product Name" not in g:
            raise NvidiaSmiError(f"{name}: GPU {g['_bus']} has no 'Product Name' or 'FB Memory Usage'; "
                                 "the dump is truncated: save 'nvidia-smi -q' again")
    return {
        "format": "nvidia-smi -q",
        "driver": top.get("KMD Version") or top.get("Driver Version"),
        "cuda": top.get("CUDA UMD Version") or top.get("CUDA Version"),
        "gpus": [_gpu_from_query(g, name) for g in gpus],
    }


def _get(tree: dict[str, Any], *path: str) -> str | None:
    node: Any = tree
    for key in path:
        if not isinstance(node, dict) or key not in node:
            return None
        node = node[key]
    return node if isinstance(node, str) else None


def _gpu_from_query(g: dict[str, Any], name: str) -> dict[str, Any]:
    return {
        "name": _get(g, "Product Name"),
        "uuid": _get(g, "GPU UUID"),
        "pci_bus": _get(g, "PCI", "Bus Id") or g["_bus"],
        "vbios": _get(g, "VBIOS Version"),
        "architecture": _get(g, "Product Architecture"),
        "compute_capability": None,  # not in -q output; collect env asks nvidia-smi --query-gpu=compute_cap
        "memory_total_mib": _int(_number(_get(g, "FB Memory Usage", "Total"), "MiB", False, "FB Memory Usage/Total",
                                         name)),
        **{field: _number(_get(g, *path), "MHz", False, "/".join(path), name) for field, path in (
            ("sm_clock_mhz", ("Clocks", "SM")), ("memory_clock_mhz", ("Clocks", "Memory")),
            ("max_sm_clock_mhz", ("Max Clocks", "SM")), ("max_memory_clock_mhz", ("Max Clocks", "Memory")))},
        "memory_bus_width_bits": None,  # not in nvidia-smi output; NVML gives it
        "ecc_mode": _get(g, "ECC Mode", "Current"),
        "mig_mode": _get(g, "MIG Mode", "Current"),
        "persistence_mode": _get(g, "Persistence Mode"),
        "power_limit_w": _number(_get(g, "GPU Power Readings", "GPU Ceiling Power Limit", "Current Power Limit")
                                 or _get(g, "GPU Power Readings", "Current Power Limit")
                                 or _get(g, "Power Readings", "Power Limit"), "W", True, "the power limit", name),
        "performance_state": _get(g, "Performance State"),
        "driver_model": _get(g, "Driver Model", "Current"),
    }


def parse_table(text: str, name: str) -> dict[str, Any]:
    """The default ``nvidia-smi`` table -> {"driver", "cuda", "gpus": [...]}."""
    banner = TABLE_BANNER.search(text)
    if not banner:
        raise NvidiaSmiError(f"{name}: no 'NVIDIA-SMI … Driver Version … CUDA Version' banner; "
                             "save the whole output of 'nvidia-smi' or 'nvidia-smi -q'")
    lines = [ln.rstrip() for ln in text.splitlines()]
    gpus = []
    for i, line in enumerate(lines):
        first = TABLE_GPU1.match(line)
        if not first:
            continue
        second = TABLE_GPU2.match(lines[i + 1]) if i + 1 < len(lines) else None
        if second is None:
            raise NvidiaSmiError(f"{name}:{i + 2}: GPU {first['index']}'s block is cut short; the table is truncated")
        third = TABLE_GPU3.match(lines[i + 2]) if i + 2 < len(lines) else None
        power = re.match(r"^(?:\S+\s*/\s*)?(?P<cap>[\d.]+)W$", second["power"].replace(" ", ""))
        gpus.append({
            "index": int(first["index"]),
            "name": first["name"],
            "uuid": None,
            "pci_bus": first["bus"],
            "vbios": None,
            "architecture": None,
            "compute_capability": None,
            "memory_total_mib": int(second["total"]),
            "sm_clock_mhz": None, "memory_clock_mhz": None, "max_sm_clock_mhz": None, "max_memory_clock_mhz": None,
            "memory_bus_width_bits": None,
            "ecc_mode": None,
            "volatile_uncorrected_ecc": _value(first["ecc"]),
            "mig_mode": _value(third["mig"]) if third else None,
            "persistence_mode": "Enabled" if first["persist"] == "On" else "Disabled",
            "power_limit_w": float(power["cap"]) if power else None,
            "performance_state": second["perf"],
            "compute_mode": second["mode"],
            "driver_model": None,
        })
    if not gpus:
        raise NvidiaSmiError(f"{name}: the table lists no GPU rows; save the whole output of 'nvidia-smi'")
    return {"format": "nvidia-smi", "driver": banner["driver"], "cuda": banner["cuda"], "gpus": gpus}


def parse_nvidia_smi(text: str, name: str) -> dict[str, Any]:
    """Either format, detected from the text."""
    if "NVSMI LOG" in text or re.search(r"^GPU [0-9A-Fa-f]{4,8}:", text, re.MULTILINE):
        return parse_query(text, name)
    if "NVIDIA-SMI" in text:
        return parse_table(text, name)
    if QUERY_HEADER.match(text.lstrip("\ufeff")):
        raise NvidiaSmiError(f"{name}: 'nvidia-smi --query-gpu' CSV output, which holds only the fields it asked "
                             "for; save 'nvidia-smi -q' (or plain 'nvidia-smi') to a file instead")
    said = other_tool(text, name, "nvidia-smi")
    if said:
        raise NvidiaSmiError(said)
    raise NvidiaSmiError(f"{name}: not nvidia-smi output; save 'nvidia-smi -q' (or plain 'nvidia-smi') to a file")
