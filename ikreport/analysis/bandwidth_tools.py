"""Read saved output of BabelStream and nvbandwidth (pure).

BabelStream (2.x as GPU-STREAM to 5.x, any model): a banner (``Version:``, ``Array size:``, ``Using … device
NAME``), then a fixed-width table ``Function MBytes/sec Min (sec) Max Average`` whose fields
are padded to 12 characters, so every line ends in spaces. BabelStream counts read + write
(Copy moves 2 arrays), in MB = 1e6 bytes. Its MBytes/sec figure comes from each kernel's
fastest run, timed to the nanosecond; the times it prints have only 5 decimals, so no figure
is derived from them (an "average" from 0.00039 s can exceed the best). A row whose times are
out of order, or whose MB/s its own minimum time does not give, is refused as damaged. A run under a
debugger or profiler (see run_wrappers.py) is read, its tool's lines skipped; one file holds
one run (a second results table is refused).

nvbandwidth (v0.2 to v0.8), its text output: a banner (version, CUDA and driver versions, ``Device N: NAME``,
or ``Process N (host): device M: NAME`` in a multinode run), then per testcase ``Running
NAME.``, a title, a matrix of GB/s and ``SUM NAME VALUE``. Lines may be indented (output
pasted into docs or a log). Only ``device_local_copy`` measures a GPU's own memory (copied
size counted once, by a copy engine: a cudaMemcpy); every other testcase measures a link
(PCIe or C2C host<->device, NVLink or PCIe GPU<->GPU, NVLink across nodes in ``multinode_*``)
and is never a memory peak, with or without a version line. Its JSON output (``-j``) is read
by nvbandwidth_json.py into the same shape and judged by the same rules here; a testcase that
nvbandwidth reports as failed gives no figure.

Numbers are checked against plausible.py, naming the line: a bandwidth (as printed, or derived
from the array size and a time) outside one GPU's memory bounds or not finite, and a negative
time, are refused rather than published as a measured peak.
"""

from __future__ import annotations

import re
from typing import Any

from ikreport.analysis.sniff import other_tool

from ikreport.analysis import nvbandwidth_json, plausible, run_wrappers
from ikreport.errors import BandwidthOutputError


# one number: "1394571.325", "0.00038", "3.8e-04"; also the signed, "nan" and "inf" C++ streams
# print for a broken timer, so such a row is read and refused, not silently left out
NUM = r"[-+]?(?:(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|(?i:nan|inf(?:inity)?))"
FIX = "the output is damaged or edited, or the run was broken; run the tool again"
BABEL_ROW = re.compile(rf"^(?P<fn>Copy|Mul|Add|Triad|Dot|Nstream)\s+(?P<mbs>{NUM})\s+(?P<min>{NUM})\s+"
                       rf"(?P<max>{NUM})\s+(?P<avg>{NUM})\s*$")


def parse_babelstream(text: str, name: str) -> dict[str, Any]:
    """The banner facts and the results table of saved BabelStream output (see the module docstring)."""
    version = re.search(r"^Version:\s*(\S+)", text, re.MULTILINE)
    # BabelStream was GPU-STREAM until its 3.0; the table is the same
    banner = re.search(r"^\s*(BabelStream|GPU-STREAM)\s*$", text, re.MULTILINE)
    if not banner or not version:
        said = other_tool(text, name, "babelstream")
        if said:
            raise BandwidthOutputError(said)
        raise BandwidthOutputError(f"{name}: no 'BabelStream' banner with 'Version:'; save the whole output")
    device = re.search(r"^Using \S+ device (.+?)\s*$", text, re.MULTILINE)
    array = re.search(rf"^Array size:\s*({NUM})\s*MB", text, re.MULTILINE)
    precision = re.search(r"^Precision:\s*(\S+)", text, re.MULTILINE)
    runs = re.search(r"^Running kernels (\d+) times", text, re.MULTILINE)
    implementation = re.search(r"^Implementation:\s*(.+?)\s*$", text, re.MULTILINE)
    array_mb = float(array.group(1)) if array else None
    if array and array_mb is not None:
        plausible.at_least_zero(array_mb, f"{name}:{_line(text, array.start())}", "the array size", "MB", FIX)
    kernels: list[dict[str, Any]] = []
    seen: dict[str, int] = {}
    for number, line in enumerate(text.split("\n"), 1):
        m = BABEL_ROW.match(line.rstrip("\r"))
        if not m:
            continue
        where = f"{name}:{number}"
        fn = m["fn"]
        if fn in seen:
            raise BandwidthOutputError(f"{where}: a second {fn} row (the first is on line {seen[fn]}): the file "
                                       "holds more than one run; save each BabelStream run to its own file")
        seen[fn] = number
        # BabelStream's own figure, from its fastest run; its MB are 1e6 bytes
        best = plausible.memory_gbs(float(m["mbs"]) / 1e3, where, f"{fn} bandwidth", FIX)
        times = {key: plausible.at_least_zero(float(m[key]), where, f"{fn} {label} time", "s", FIX)
                 for key, label in (("min", "minimum"), ("max", "maximum"), ("avg", "average"))}
        _consistent(fn, float(m["mbs"]), times, array_mb, where)
        kernels.append({"function": fn, "best_gbs": round(best, 1), "min_s": times["min"],
                        "max_s": times["max"], "avg_s": times["avg"]})
    if not any(k["function"] == "Copy" for k in kernels):
        raise BandwidthOutputError(f"{name}: no 'Copy' row in the results table; the output is cut short")
    driver = re.search(r"^Driver:\s*(\S+)", text, re.MULTILINE)
    # BabelStream checks its arrays after the runs and prints a line per failed check
    # ("Validation failed on sum. Error 7.6e-06"), with detail lines after some ("Sum was …")
    failed = [ln.strip() for ln in text.split("\n") if re.match(r"^\s*(Validation failed|Sum was )", ln)]
    return {
        "tool": banner.group(1), "version": version.group(1), "device": device.group(1) if device else None,
        "driver": driver.group(1) if driver else None, "validation_failed": failed,
        "implementation": implementation.group(1) if implementation else None,
        "precision": precision.group(1) if precision else None,
        "runs": int(runs.group(1)) if runs else None, "array_mb": array_mb, "kernels": kernels,
        "run_under": run_wrappers.run_under(text),
    }


# arrays each kernel reads plus writes: BabelStream's MB/s is these x the array size / the minimum time
BABEL_ARRAYS = {"Copy": 2, "Mul": 2, "Add": 3, "Triad": 3, "Dot": 2, "Nstream": 4}
HALF_LAST_DIGIT_S = 0.000005  # the times are printed to 5 decimals


def _consistent(fn: str, mbs: float, times: dict[str, float], array_mb: float | None, where: str) -> None:
    """Refuse a row whose numbers cannot come from one run: times out of order, or a MB/s figure
    that its own minimum time and the array size do not give (beyond the printed rounding)."""
    if not times["min"] <= times["avg"] <= times["max"]:
        raise BandwidthOutputError(f"{where}: {fn} times are out of order (minimum {times['min']:g} s, average "
                                   f"{times['avg']:g} s, maximum {times['max']:g} s); {FIX}")
    if not array_mb or times["min"] <= 0 or mbs <= 0:
        return
    seconds = BABEL_ARRAYS[fn] * array_mb / mbs
    # the array size is printed to 0.1 MB and the time to 5 decimals; allow both roundings and 0.1%
    slack = HALF_LAST_DIGIT_S + seconds * (0.05 / array_mb + 0.001)
    if abs(seconds - times["min"]) > slack:
        raise BandwidthOutputError(f"{where}: {fn} {mbs:g} MB/s does not follow from its minimum time "
                                   f"{times['min']:g} s for {BABEL_ARRAYS[fn]} arrays of {array_mb:g} MB "
                                   f"({seconds:.5g} s); {FIX}")


NVB_VERSION = re.compile(r"^nvbandwidth Version:\s*v?(\d+)\.(\d+)", re.MULTILINE)
NVB_KNOWN = range(2, 9)  # v0.2 .. v0.8 read here; another layout is refused, not guessed
LOCAL_TESTS = ("device_local_copy",)


def _line(text: str, at: int) -> int:
    return text.count("\n", 0, at) + 1


def parse_nvbandwidth(text: str, name: str) -> dict[str, Any]:
    """The banner facts and every testcase's matrix and sum of saved nvbandwidth output.

    Without a version line, output whose testcases all measure links is refused for that
    reason: a pasted peer or multinode block often lacks the banner, and the missing line is
    not what is wrong with it.
    """
    said = other_tool(text, name, "nvbandwidth")
    if said:
        raise BandwidthOutputError(said)
    if nvbandwidth_json.looks_like_json(text):
        return _from_json(nvbandwidth_json.parse(text, name), name)
    # pasted into docs or a log, every line may carry the same indentation; none has meaning
    lines = [line.strip() for line in text.split("\n")]
    tests = _nvbandwidth_tests(lines, name)
    flat = "\n".join(lines)
    version = NVB_VERSION.search(flat)
    if not version and tests and not any(t["name"] in LOCAL_TESTS for t in tests):
        raise BandwidthOutputError(_links_only(tests, name))
    if not version:
        raise BandwidthOutputError(f"{name}: no 'nvbandwidth Version:' line; save the whole output of nvbandwidth")
    known = _known_version(version, name)
    # "Device 0: NVIDIA H100 80GB HBM3" (v0.8 adds " (00000000:01:00)", the PCI bus, dropped here)
    devices = {int(m.group(1)): m.group(2).strip()
               for m in re.finditer(r"^Device (\d+): (.+?)(?:\s+\([0-9A-Fa-f:.]+\))?$", flat, re.MULTILINE)}
    if not tests:
        raise BandwidthOutputError(f"{name}: no 'Running <testcase>.' blocks; the output is cut short")
    unfinished = [t["name"] for t in tests if t["sum_gbs"] is None]
    if unfinished:
        raise BandwidthOutputError(f"{name}: testcase {unfinished[0]} has no SUM line; the output is truncated")
    return {"tool": "nvbandwidth", "version": known, "devices": devices, "tests": tests,
            "run_under": run_wrappers.run_under(text), "output": "text"}


def _known_version(version: re.Match[str], name: str) -> str:
    """``v0.N`` for a major and minor version ikreport reads; refused otherwise."""
    major, minor = int(version.group(1)), int(version.group(2))
    if major != 0 or minor not in NVB_KNOWN:
        raise BandwidthOutputError(f"{name}: nvbandwidth v{major}.{minor} is not a version ikreport reads "
                                   "(v0.2 to v0.8); import a BabelStream run or measure with 'collect bandwidth'")
    return f"v{major}.{minor}"


def _from_json(parsed: dict[str, Any], name: str) -> dict[str, Any]:
    """nvbandwidth -j output, read by nvbandwidth_json, checked as the text output is."""
    version = re.fullmatch(r"v?(\d+)\.(\d+)", parsed["version"] or "")
    if not version:
        raise BandwidthOutputError(f"{name}: no nvbandwidth 'version' in the JSON; save nvbandwidth -j's whole output")
    known = _known_version(version, name)
    failed = [t for t in parsed["tests"] if t["name"] in LOCAL_TESTS and t["status"] != "Passed"]
    if failed:
        said = f": {failed[0]['error']}" if failed[0].get("error") else ""
        raise BandwidthOutputError(f"{name}: nvbandwidth reports testcase {failed[0]['name']} as "
                                   f"{failed[0]['status'] or 'not passed'}{said}; it gave no figure to import: "
                                   "run it again")
    if not parsed["tests"]:
        raise BandwidthOutputError(f"{name}: every testcase was waived or none ran; run 'nvbandwidth -t "
                                   "device_local_copy -j'")
    return {"tool": "nvbandwidth", "version": known, "devices": parsed["devices"],
            "tests": parsed["tests"], "run_under": [], "output": "json",
            "cuda_runtime": parsed["cuda_runtime"], "driver": parsed["driver"]}


def _nvbandwidth_tests(lines: list[str], name: str) -> list[dict[str, Any]]:
    """Each ``Running NAME.`` block of stripped lines: its title, column labels, rows and SUM."""
    tests: list[dict[str, Any]] = []
    current: dict[str, Any] | None = None
    for number, line in enumerate(lines, 1):
        run = re.match(r"^Running (\S+)\.$", line)
        if run:
            current = {"name": run.group(1), "title": None, "columns": [], "cells": [], "sum_gbs": None}
            tests.append(current)
            continue
        if current is None:
            continue
        if current["title"] is None and line and not line.startswith("Waived"):
            current["title"] = line
            continue
        if not current.get("columns") and line:
            current["columns"] = line.split()  # the matrix's column labels: device indices
            continue
        total = re.match(rf"^SUM (\S+) ({NUM})$", line)
        if total and total.group(1) == current["name"]:
            current["sum_gbs"] = float(total.group(2))
            current = None
            continue
        row = re.match(r"^(\d+)\s+(.+)$", line)
        if row and current["title"] is not None:
            values = [None if v == "N/A" else float(v) for v in row.group(2).split()
                      if re.fullmatch(rf"N/A|{NUM}", v)]
            current["cells"].append({"row": int(row.group(1)), "values": values, "line": number,
                                     "where": f"{name}:{number}"})
    return tests


def _links_only(tests: list[dict[str, Any]], name: str) -> str:
    """Why testcases without device_local_copy are no memory peak: what each kind of them measures."""
    names = sorted({t["name"] for t in tests})
    measures = []
    if any(n.startswith("multinode_") for n in names):
        measures.append("multinode testcases measure NVLink between GPUs of different nodes")
    if any(re.match(r"^(device_to_device|all_to_one|one_to_all)", n) for n in names):
        measures.append("peer testcases measure NVLink or PCIe between GPUs")
    if any(re.match(r"^(host|device_to_host|all_to_host|host_to_all)", n) for n in names):
        measures.append("host testcases measure PCIe or C2C between CPU and GPU")
    why = f" ({'; '.join(measures)})" if measures else ""
    return (f"{name}: no device_local_copy testcase; its {len(tests)} testcases ({', '.join(names[:3])}, …) "
            f"measure PCIe and NVLink links, not device memory{why}, so they cannot be a memory-bandwidth peak. "
            "Run 'nvbandwidth -t device_local_copy' (v0.5 or later) or 'ikreport collect bandwidth'")


def nvbandwidth_local_copies(parsed: dict[str, Any], name: str) -> list[dict[str, Any]]:
    """Per GPU, device-local copy bandwidth in GB/s as nvbandwidth counts it (copied size once).

    Refuses output with no device-local test: link bandwidth is not memory bandwidth.
    """
    local = [t for t in parsed["tests"] if t["name"] in LOCAL_TESTS]
    if not local:
        raise BandwidthOutputError(_links_only(parsed["tests"], name))
    out = []
    for test in local:
        values = [(v, cell["where"]) for cell in test["cells"] for v in cell["values"] if v is not None]
        for gpu, (value, where) in enumerate(values):
            # the bound is on read + write, what the record publishes: nvbandwidth counts once
            plausible.memory_gbs(2 * value, where, f"GPU {gpu}'s device-local copy, doubled to read+write",
                                 FIX)
            out.append({"test": test["name"], "gpu_index": gpu, "device": parsed["devices"].get(gpu),
                        "counted_once_gbs": value})
    return out
