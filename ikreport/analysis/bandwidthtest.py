"""Read saved output of the CUDA samples' ``bandwidthTest`` (pure).

Accepts the console output of any mode (quick, range, shmoo), whole or pasted into docs with
lines indented: an optional banner (``[CUDA Bandwidth Test]``, ``Device N: NAME``, ``Quick
Mode``), then per direction a block ``Host to Device | Device to Host | Device to Device
Bandwidth, N Device(s)``, a memory line (``PINNED Memory Transfers``), a header ``Transfer
Size (Bytes) Bandwidth(GB/s)`` (``MB/s`` before CUDA 11) and one ``SIZE FIGURE`` row per
transfer size, and optionally ``Result = PASS``.

How it counts bytes: the device-to-device figure is already read + write. bandwidthTest times
``cudaMemcpy(DeviceToDevice)`` (a copy engine) and divides 2 x the size by the time ("a factor
of two because we are reading and writing"), the convention ikreport keeps, so the figure is
stored as printed. Its GB are 1e9 bytes; the older MB/s are 2^20 bytes.

Only the device-to-device block measures device memory; host<->device blocks measure PCIe
(or C2C) and are never a memory peak. One file holds one run: a second device-to-device
block is refused, and so is a block over several devices (``--device=all`` sums their
figures). Each figure is checked against plausible.py's memory bounds, naming its line.
"""

from __future__ import annotations

import re
from typing import Any

from ikreport.analysis import plausible
from ikreport.analysis.sniff import other_tool
from ikreport.errors import BandwidthOutputError

NUM = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|(?i:nan|inf)"
FIX = "the output is damaged or edited, or the run was broken; run bandwidthTest again"
BLOCK = re.compile(r"^(Host to Device|Device to Host|Device to Device) Bandwidth, (\d+) Device\(s\)$")
HEADER = re.compile(r"^Transfer Size \(Bytes\)\s+Bandwidth\((GB|MB)/s\)$")
ROW = re.compile(rf"^(\d+)\s+({NUM})$")
# MB/s (CUDA 10 and older) are MiB: (1 << 20) bytes
TO_GBS = {"GB": 1.0, "MB": (1 << 20) / 1e9}


def parse_bandwidthtest(text: str, name: str) -> dict[str, Any]:
    """The banner facts and every transfer block of saved bandwidthTest output (see the
    module docstring): {"device", "mode", "result", "blocks": [{"direction", "devices",
    "memory", "rows": [{"bytes", "gbs", "line"}]}]}."""
    lines = [line.strip() for line in text.split("\n")]
    blocks: list[dict[str, Any]] = []
    current: dict[str, Any] | None = None
    for number, line in enumerate(lines, 1):
        block = BLOCK.match(line)
        if block:
            current = {"direction": block.group(1), "devices": int(block.group(2)), "memory": None, "unit": None,
                       "rows": [], "line": number}
            blocks.append(current)
            continue
        if current is None:
            continue
        if line.endswith("Memory Transfers"):
            current["memory"] = line.removesuffix(" Memory Transfers").strip()
        elif (header := HEADER.match(line)) is not None:
            current["unit"] = header.group(1)
        elif (row := ROW.match(line)) is not None and current["unit"]:
            where = f"{name}:{number}"
            size = int(row.group(1))
            plausible.above_zero(size, where, "the transfer size", "bytes", FIX)
            gbs = float(row.group(2)) * TO_GBS[current["unit"]]
            current["rows"].append({"bytes": size, "gbs": gbs, "line": number})
        elif not line:
            continue
        else:
            current = None  # the block ends at the first line that is none of its own
    if not blocks:
        said = other_tool(text, name, "bandwidthtest")
        if said:
            raise BandwidthOutputError(said)
        raise BandwidthOutputError(f"{name}: no 'Device to Device Bandwidth, N Device(s)' block; save the whole "
                                   "output of bandwidthTest")
    device = re.search(r"^Device (\d+): (.+)$", "\n".join(lines), re.MULTILINE)
    mode = re.search(r"^(Quick|Range|Shmoo) Mode$", "\n".join(lines), re.MULTILINE)
    result = re.search(r"^Result = (\S+)$", "\n".join(lines), re.MULTILINE)
    return {"tool": "bandwidthTest", "device": device.group(2) if device else None,
            "mode": mode.group(1).lower() if mode else None, "result": result.group(1) if result else None,
            "blocks": blocks}


def device_to_device(parsed: dict[str, Any], name: str) -> dict[str, Any]:
    """The one device-to-device block of one GPU, its figures checked; refuses output without
    one (host transfers measure PCIe), with two (two runs) or over several GPUs (a sum)."""
    dtod = [b for b in parsed["blocks"] if b["direction"] == "Device to Device"]
    if not dtod:
        found = ", ".join(sorted({b["direction"].lower() for b in parsed["blocks"]}))
        raise BandwidthOutputError(f"{name}: no device-to-device block, only {found}: those measure PCIe between "
                                   "CPU and GPU, not device memory, so they cannot be a memory-bandwidth peak; "
                                   "run 'bandwidthTest --dtod' (or its default quick mode)")
    if len(dtod) > 1:
        raise BandwidthOutputError(f"{name}:{dtod[1]['line']}: a second device-to-device block (the first is on "
                                   f"line {dtod[0]['line']}): the file holds more than one run; save each "
                                   "bandwidthTest run to its own file")
    block = dtod[0]
    if block["devices"] != 1:
        raise BandwidthOutputError(f"{name}:{block['line']}: the device-to-device figures are summed over "
                                   f"{block['devices']} GPUs (--device=all), not one GPU's memory; run "
                                   "bandwidthTest with --device=0")
    if not block["rows"]:
        raise BandwidthOutputError(f"{name}:{block['line']}: the device-to-device block has no 'SIZE FIGURE' rows; "
                                   "the output is cut short")
    sizes = [r["bytes"] for r in block["rows"]]
    if len(set(sizes)) != len(sizes):
        raise BandwidthOutputError(f"{name}:{block['line']}: a transfer size appears twice in the device-to-device "
                                   f"block; {FIX}")
    for r in block["rows"]:
        plausible.memory_gbs(r["gbs"], f"{name}:{r['line']}", "the device-to-device bandwidth", FIX)
    return block
