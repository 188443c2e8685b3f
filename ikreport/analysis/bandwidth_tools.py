"""Read saved output of BabelStream and nvbandwidth (pure).

BabelStream (4.x/5.x, any model): a banner (``Version:``, ``Array size:``, ``Using … device
NAME``), then a fixed-width table ``Function MBytes/sec Min (sec) Max Average`` whose fields
are padded to 12 characters, so every line ends in spaces. BabelStream counts read + write
(Copy moves 2 arrays), in MB = 1e6 bytes.

nvbandwidth (v0.2 to v0.8): a banner (version, CUDA and driver versions, ``Device N: NAME``),
then per testcase ``Running NAME.``, a title, a matrix of GB/s and ``SUM NAME VALUE``.
Only ``device_local_copy`` measures a GPU's own memory (copied size counted once); every other
testcase measures a link (PCIe host<->device, NVLink GPU<->GPU) and is never a memory peak.

Numbers are checked against plausible.py, naming the line: a bandwidth (as printed, or derived
from the array size and a time) outside one GPU's memory bounds or not finite, and a negative
time, are refused rather than published as a measured peak.
"""

from __future__ import annotations

import re
from typing import Any

from ikreport.analysis import plausible
from ikreport.errors import BandwidthOutputError


# one number: "1394571.325", "0.00038", "3.8e-04"; also the signed, "nan" and "inf" C++ streams
# print for a broken timer, so such a row is read and refused, not silently left out
NUM = r"[-+]?(?:(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|(?i:nan|inf(?:inity)?))"
FIX = "the output is damaged or edited, or the run was broken; run the tool again"
BABEL_ROW = re.compile(rf"^(?P<fn>Copy|Mul|Add|Triad|Dot|Nstream)\s+(?P<mbs>{NUM})\s+(?P<min>{NUM})\s+"
                       rf"(?P<max>{NUM})\s+(?P<avg>{NUM})\s*$")
BABEL_ARRAYS = {"Copy": 2, "Mul": 2, "Add": 3, "Triad": 3, "Dot": 2, "Nstream": 4}


def parse_babelstream(text: str, name: str) -> dict[str, Any]:
    """The banner facts and the results table of saved BabelStream output (see the module docstring)."""
    version = re.search(r"^Version:\s*(\S+)", text, re.MULTILINE)
    if "BabelStream" not in text or not version:
        raise BandwidthOutputError(f"{name}: no 'BabelStream' banner with 'Version:'; save the whole output")
    device = re.search(r"^Using \S+ device (.+?)\s*$", text, re.MULTILINE)
    array = re.search(rf"^Array size:\s*({NUM})\s*MB", text, re.MULTILINE)
    precision = re.search(r"^Precision:\s*(\S+)", text, re.MULTILINE)
    runs = re.search(r"^Running kernels (\d+) times", text, re.MULTILINE)
    implementation = re.search(r"^Implementation:\s*(.+?)\s*$", text, re.MULTILINE)
    array_mb = float(array.group(1)) if array else None
    if array and array_mb is not None:
        plausible.at_least_zero(array_mb, f"{name}:{_line(text, array.start())}", "the array size", "MB", FIX)
    kernels = []
    for number, line in enumerate(text.split("\n"), 1):
        m = BABEL_ROW.match(line.rstrip("\r"))
        if m:
            where = f"{name}:{number}"
            fn = m["fn"]
            # BabelStream's MB are 1e6 bytes
            best = plausible.memory_gbs(float(m["mbs"]) / 1e3, where, f"{fn} bandwidth", FIX)
            times = {key: plausible.at_least_zero(float(m[key]), where, f"{fn} {label} time", "s", FIX)
                     for key, label in (("min", "minimum"), ("max", "maximum"), ("avg", "average"))}
            avg = None
            if array_mb and times["avg"] > 0:
                # Average bandwidth from the average time: arrays touched x array size / time.
                avg = plausible.memory_gbs(BABEL_ARRAYS[fn] * array_mb * 1e6 / times["avg"] / 1e9, where,
                                           f"{fn} bandwidth from the array size and the average time", FIX)
            kernels.append({"function": fn, "best_gbs": round(best, 1), "min_s": times["min"],
                            "max_s": times["max"], "avg_s": times["avg"],
                            "avg_gbs": None if avg is None else round(avg, 1)})
    if not any(k["function"] == "Copy" for k in kernels):
        raise BandwidthOutputError(f"{name}: no 'Copy' row in the results table; the output is cut short")
    return {
        "tool": "BabelStream", "version": version.group(1), "device": device.group(1) if device else None,
        "implementation": implementation.group(1) if implementation else None,
        "precision": precision.group(1) if precision else None,
        "runs": int(runs.group(1)) if runs else None, "array_mb": array_mb, "kernels": kernels,
    }


NVB_VERSION = re.compile(r"^nvbandwidth Version:\s*v?(\d+)\.(\d+)", re.MULTILINE)
NVB_KNOWN = range(2, 9)  # v0.2 .. v0.8 read here; another layout is refused, not guessed
LOCAL_TESTS = ("device_local_copy",)


def _line(text: str, at: int) -> int:
    return text.count("\n", 0, at) + 1


def parse_nvbandwidth(text: str, name: str) -> dict[str, Any]:
    """The banner facts and every testcase's matrix and sum of saved nvbandwidth output."""
    version = NVB_VERSION.search(text)
    if not version:
        raise BandwidthOutputError(f"{name}: no 'nvbandwidth Version:' line; save the whole output of nvbandwidth")
    major, minor = int(version.group(1)), int(version.group(2))
    if major != 0 or minor not in NVB_KNOWN:
        raise BandwidthOutputError(f"{name}: nvbandwidth v{major}.{minor} is not a version ikreport reads "
                                   "(v0.2 to v0.8); import a BabelStream run or measure with 'collect bandwidth'")
    devices = {int(m.group(1)): m.group(2).strip()
               for m in re.finditer(r"^Device (\d+): (.+)$", text, re.MULTILINE)}
    tests: list[dict[str, Any]] = []
    current: dict[str, Any] | None = None
    for number, line in enumerate(text.split("\n"), 1):
        line = line.rstrip()
        run = re.match(r"^Running (\S+)\.$", line)
        if run:
            current = {"name": run.group(1), "title": None, "columns": [], "cells": [], "sum_gbs": None}
            tests.append(current)
            continue
        if current is None:
            continue
        if current["title"] is None and line and not line.startswith("Waived"):
            current["title"] = line.strip()
            continue
        if not current.get("columns") and line.strip():
            current["columns"] = line.split()  # the matrix's column labels: device indices
            continue
        total = re.match(rf"^SUM (\S+) ({NUM})$", line)
        if total and total.group(1) == current["name"]:
            current["sum_gbs"] = float(total.group(2))
            current = None
            continue
        row = re.match(r"^\s*(\d+)\s+(.+)$", line)
        if row and current["title"] is not None:
            values = [None if v == "N/A" else float(v) for v in row.group(2).split()
                      if re.fullmatch(rf"N/A|{NUM}", v)]
            current["cells"].append({"row": int(row.group(1)), "values": values, "line": number})
    if not tests:
        raise BandwidthOutputError(f"{name}: no 'Running <testcase>.' blocks; the output is cut short")
    unfinished = [t["name"] for t in tests if t["sum_gbs"] is None]
    if unfinished:
        raise BandwidthOutputError(f"{name}: testcase {unfinished[0]} has no SUM line; the output is truncated")
    return {"tool": "nvbandwidth", "version": f"v{major}.{minor}", "devices": devices, "tests": tests}


def nvbandwidth_local_copies(parsed: dict[str, Any], name: str) -> list[dict[str, Any]]:
    """Per GPU, device-local copy bandwidth in GB/s as nvbandwidth counts it (copied size once).

    Refuses output with no device-local test: link bandwidth is not memory bandwidth.
    """
    local = [t for t in parsed["tests"] if t["name"] in LOCAL_TESTS]
    if not local:
        links = ", ".join(sorted({t["name"] for t in parsed["tests"]})[:3])
        raise BandwidthOutputError(
            f"{name}: no device_local_copy testcase; its {len(parsed['tests'])} testcases ({links}, …) measure "
            "PCIe and NVLink links, not device memory, so they cannot be a memory-bandwidth peak. "
            "Run 'nvbandwidth -t device_local_copy' (v0.5 or later) or 'ikreport collect bandwidth'"
        )
    out = []
    for test in local:
        values = [(v, cell["line"]) for cell in test["cells"] for v in cell["values"] if v is not None]
        for gpu, (value, line) in enumerate(values):
            # the bound is on read + write, what the record publishes: nvbandwidth counts once
            plausible.memory_gbs(2 * value, f"{name}:{line}", f"GPU {gpu}'s device-local copy, doubled to read+write",
                                 FIX)
            out.append({"test": test["name"], "gpu_index": gpu, "device": parsed["devices"].get(gpu),
                        "copy_gbs_counted_once": value})
    return out
