"""``collect env``: an ``environment`` record of the GPUs, driver, host and packages.

Live, it runs ``nvidia-smi -q`` (kept verbatim as a blob) and reads it with the same parser
that ``--from-nvidia-smi`` uses for saved output, adds compute capability from
``nvidia-smi --query-gpu``, memory bus width from NVML when ``nvidia-ml-py`` is installed,
and the host, OS and versions of the Python packages that matter.
"""

from __future__ import annotations

import importlib.metadata
import os
import platform
import socket
from pathlib import Path
from typing import Any

from ikreport.store import records
from ikreport.analysis.nvidia_smi import NvidiaSmiError, parse_nvidia_smi
from ikreport.store.archive import Archive
from ikreport.collect import tools
from ikreport.collect.context import Context, utc_now
from ikreport.collect.textfile import read_text
from ikreport.kinds.environment import NAME as ENVIRONMENT

PACKAGES = ("torch", "triton", "vllm", "sglang", "tensorrt_llm", "transformers", "cupy", "cupy-cuda12x",
            "cupy-cuda11x", "nvidia-ml-py", "flashinfer-python", "flash-attn")
LIMIT_SNAPSHOT = ("A snapshot at one moment: clocks, power and temperature change while a workload runs, "
                  "and what another process did to the GPU is not seen.")
LIMIT_TABLE = ("Read from the default nvidia-smi table, which has no clocks, UUIDs, VBIOS or ECC mode: "
               "those are unknown.")
LIMIT_IMPORTED = "Imported from saved nvidia-smi output: the host, OS and Python packages are not known."


def gpu_label(gpus: list[dict[str, Any]]) -> str | None:
    """The subject's GPU name: 'NVIDIA H200', '2x NVIDIA H200', or the names joined; None when none is named."""
    names = sorted({g["name"] for g in gpus if g.get("name")})
    if not names:
        return None
    if len(names) == 1:
        return names[0] if len(gpus) == 1 else f"{len(gpus)}x {names[0]}"
    return ", ".join(names)


def packages() -> dict[str, str]:
    """The installed versions of the Python packages that matter to a profile, by name."""
    found = {}
    for name in PACKAGES:
        try:
            found[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return found


def host() -> dict[str, Any]:
    """The host's name, OS, CPU, CPU count and Python version."""
    return {"hostname": socket.gethostname(), "os": platform.platform(), "cpu": platform.processor() or platform.machine(),
            "cpu_count": os.cpu_count(), "python": platform.python_version()}


def _compute_caps(parsed: dict[str, Any]) -> None:
    try:
        result = tools.run(["nvidia-smi", "--query-gpu=index,compute_cap", "--format=csv,noheader"], timeout=60)
    except tools.ToolError:
        return
    if result.returncode != 0:
        return
    caps = [line.split(",")[1].strip() for line in result.stdout.splitlines() if line.count(",") == 1]
    for gpu, cap in zip(parsed["gpus"], caps):
        gpu["compute_capability"] = cap or None


def _nvml_bus_width(parsed: dict[str, Any]) -> bool:
    try:
        import pynvml  # nvidia-ml-py
    except ImportError:
        return False
    try:
        pynvml.nvmlInit()
        for i, gpu in enumerate(parsed["gpus"]):
            handle = pynvml.nvmlDeviceGetHandleByIndex(i)
            gpu["memory_bus_width_bits"] = int(pynvml.nvmlDeviceGetMemoryBusWidth(handle))
        pynvml.nvmlShutdown()
        return True
    except Exception:  # NVML errors vary by driver; a missing width only loses the theoretical peak
        return False


def snapshot(hint: str | None = None) -> tuple[bytes, dict[str, Any]]:
    """Run nvidia-smi now: (its raw -q output, the parsed environment). ``hint``: what the
    command offers instead when nvidia-smi is missing (each imports saved output its own way)."""
    result = tools.run(["nvidia-smi", "-q"], timeout=120, hint=hint)
    if result.returncode != 0:
        said = (result.stdout + result.stderr).strip().splitlines()
        raise tools.ToolError(f"nvidia-smi -q failed (exit {result.returncode}): {said[0] if said else 'no output'}")
    parsed = parse_nvidia_smi(result.stdout, "nvidia-smi -q")
    _compute_caps(parsed)
    parsed["nvml"] = _nvml_bus_width(parsed)
    return result.stdout.encode("utf-8"), parsed


def write_env_record(archive: Archive, raw: bytes, parsed: dict[str, Any], context: Context, *,
                     imported: str | None = None) -> str:
    """Write an environment record of a parsed nvidia-smi snapshot (its raw output as the
    blob); returns its id."""
    blob = archive.put_blob(raw)
    live = imported is None
    limitations = [LIMIT_SNAPSHOT]
    if parsed["format"] == "nvidia-smi":
        limitations.append(LIMIT_TABLE)
    if not live:
        limitations.append(LIMIT_IMPORTED)
    if not any(g.get("compute_capability") for g in parsed["gpus"]):
        tool = "nvidia-smi's table output" if parsed["format"] == "nvidia-smi" else parsed["format"]
        limitations.append(f"{tool} does not report compute capability; it is not recorded.")
    data = {
        "gpus": parsed["gpus"],
        "gpu_count": len(parsed["gpus"]),
        "driver": parsed["driver"],
        "cuda": parsed["cuda"],
        "host": host() if live else None,
        "packages": packages() if live else None,
    }
    record = records.new_record(
        ENVIRONMENT,
        context.title or f"Environment: {gpu_label(parsed['gpus']) or 'GPU'}, driver {parsed['driver']}",
        collected_at=utc_now(),
        subject=context.subject(gpu_label(parsed["gpus"])),
        method={"tool": "nvidia-smi", "tool_version": parsed["driver"],
                "command": ["nvidia-smi", "-q"] if live else None, "options": {},
                "how": "queried on this machine" if live else f"imported from saved {parsed['format']} output"},
        data=data,
        limitations=limitations + list(context.limitations),
        sources=[{"role": "nvidia-smi-output", "id": blob, "size": len(raw), "media_type": "text/plain",
                  "name": imported or "nvidia-smi-q.txt"}],
    )
    return archive.put_record(record)


def collect_env(archive: Archive, context: Context, from_file: Path | None = None) -> str:
    """Snapshot the environment now (or read a saved nvidia-smi -q file) and write its record;
    returns its id."""
    if from_file is not None:
        raw, text = read_text(from_file, NvidiaSmiError)
        parsed = parse_nvidia_smi(text, str(from_file))
        return write_env_record(archive, raw, parsed, context, imported=from_file.name)
    raw, parsed = snapshot()
    return write_env_record(archive, raw, parsed, context)
