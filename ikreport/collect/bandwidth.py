"""``collect bandwidth``: a ``peak-bandwidth`` record, measured here or imported.

Every record states its byte-counting convention (read + write) and what it compares with:
the theoretical peak from the maximum memory clock and the bus width, when both are known.
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

from ikreport.store import records
from ikreport.analysis import plausible
from ikreport.analysis.bandwidth import CONVENTION, copy_gbs, summarize_samples, theoretical_peak_gbs
from ikreport.analysis.bandwidth_tools import (
    BandwidthOutputError,
    nvbandwidth_local_copies,
    parse_babelstream,
    parse_nvbandwidth,
)
from ikreport.store.archive import Archive
from ikreport.collect import bandwidth_run
from ikreport.collect.context import Context, utc_now
from ikreport.collect.env import snapshot, write_env_record
from ikreport.collect.textfile import read_text
from ikreport.progress import Progress
from ikreport.kinds.peak_bandwidth import NAME as PEAK_BANDWIDTH

LIMIT_COPY = ("A copy kernel measures what a simple streaming read and write achieves; kernels with other "
              "access patterns (strided, random, read-only) can reach less, and the datasheet peak is not reached.")
LIMIT_CLOCKS = "Clocks were not locked: the result is at whatever clocks the GPU ran during the copies."
LIMIT_ONE_GPU = "Measured on GPU 0 only; other GPUs of the same model can differ by a few percent."
LIMIT_NO_THEORY = ("The memory bus width is unknown here (install nvidia-ml-py so NVML reports it), so the "
                   "result is not compared with a theoretical peak.")

LIMIT_IMPORT_NO_THEORY = ("No theoretical peak is given: the tool's output does not say the memory clock and bus "
                          "width it ran with.")


def _record(archive: Archive, context: Context, *, title: str, gpu: str | None, method: dict[str, Any],
            data: dict[str, Any], limitations: list[str], sources: list[dict[str, Any]],
            environment: str | None = None) -> str:
    record = records.new_record(
        PEAK_BANDWIDTH, context.title or title, collected_at=utc_now(), subject=context.subject(gpu),
        method=method, data=data, limitations=limitations + list(context.limitations), sources=sources,
        environment=environment, cites=[environment] if environment else [],
    )
    return archive.put_record(record)


def measure_bandwidth(archive: Archive, context: Context, *, sizes_mib: list[int], warmup: int, repeats: int,
                      backend: str | None = None, progress: Progress | None = None) -> str:
    """Measure device-to-device copy bandwidth on this machine and store it as a record; return its id."""
    chosen = bandwidth_run.available_backend(backend)
    raw_env, env = snapshot(bandwidth_run.NO_GPU_HINT)  # the GPU's state as the copies start; written only if they make sense
    result = bandwidth_run.measure(chosen, [s * bandwidth_run.MiB for s in sizes_mib], warmup, repeats, progress)
    if not result["samples"]:
        raise bandwidth_run.tools.ToolError("the bandwidth measurement gave no samples")
    samples = [{**s, "gbs": round(_sample_gbs(s, i, len(result["samples"])), 1)}
               for i, s in enumerate(result["samples"])]
    env_id = write_env_record(archive, raw_env, env, Context(limitations=context.limitations))
    gpu0 = env["gpus"][0]
    theory = theoretical_peak_gbs(gpu0.get("max_memory_clock_mhz"), gpu0.get("memory_bus_width_bits"))
    summary = summarize_samples(samples, theory)
    raw = json.dumps(result, sort_keys=True, indent=1).encode("utf-8")
    blob = archive.put_blob(raw)
    limitations = [LIMIT_COPY, LIMIT_CLOCKS, LIMIT_ONE_GPU]
    if theory is None:
        limitations.append(LIMIT_NO_THEORY)
    data = {
        **summary,
        "peak_gbs": summary["median_gbs"],
        "peak_basis": f"median of {len(samples)} timed copies",
        "device": result["device"],
        "method": "device-to-device copy, timed with CUDA events",
        "backend": f"{chosen} {result['backend_version'] or ''}".strip(),
        "buffer_sizes_bytes": sorted({s["buffer_bytes"] for s in samples}),
        "warmup": warmup, "repeats": repeats,
        "max_memory_clock_mhz": gpu0.get("max_memory_clock_mhz"),
        "memory_bus_width_bits": gpu0.get("memory_bus_width_bits"),
        "samples": samples,
    }
    return _record(
        archive, context, title=f"Peak memory bandwidth: {result['device'] or gpu0.get('name')}",
        gpu=result["device"] or gpu0.get("name"),
        method={"tool": f"ikreport collect bandwidth ({chosen})", "tool_version": result["backend_version"],
                "command": None, "options": {"backend": chosen, "sizes_mib": sizes_mib, "warmup": warmup,
                                             "repeats": repeats, "convention": CONVENTION},
                "how": "measured on this machine"},
        data=data, limitations=limitations, environment=env_id,
        sources=[{"role": "bandwidth-samples", "id": blob, "size": len(raw), "media_type": "application/json",
                  "name": "bandwidth-samples.json"}],
    )


def _sample_gbs(sample: dict[str, Any], i: int, n: int) -> float:
    """A timed copy's read + write GB/s; a timer that gave nonsense (no time, a negative or
    tiny one) is refused before anything is written."""
    where = f"collect bandwidth: sample {i + 1} of {n} ({sample['buffer_bytes'] / bandwidth_run.MiB:g} MiB copy)"
    fix = "the GPU's timer gave nonsense, so nothing was written; run it again"
    seconds = plausible.above_zero(float(sample["seconds"]), where, "its time", "s", fix)
    return plausible.memory_gbs(copy_gbs(sample["buffer_bytes"], seconds), where, "its bandwidth", fix)


def import_babelstream(archive: Archive, path: Path, context: Context) -> str:
    """Store saved BabelStream output and its ``peak-bandwidth`` record; return the record's id."""
    raw, text = read_text(path, BandwidthOutputError)
    parsed = parse_babelstream(text, str(path))
    copy = next(k for k in parsed["kernels"] if k["function"] == "Copy")
    typical = copy["avg_gbs"] if copy["avg_gbs"] is not None else copy["best_gbs"]
    data = {
        "peak_gbs": typical,
        "peak_basis": f"BabelStream Copy, from the average time of {parsed['runs'] or 'its'} runs",
        "max_gbs": copy["best_gbs"], "median_gbs": None, "sample_count": parsed["runs"],
        "device": parsed["device"], "method": "BabelStream Copy kernel",
        "backend": f"BabelStream {parsed['version']} ({parsed['implementation']}, {parsed['precision']})",
        "convention": CONVENTION + " (BabelStream's own: Copy reads one array and writes another)",
        "array_mb": parsed["array_mb"], "kernels": parsed["kernels"], "theoretical_gbs": None, "samples": [],
    }
    limitations = [LIMIT_COPY, "Imported from saved BabelStream output: clocks, driver and other processes are not known.",
                   "BabelStream prints times to 5 decimals, so short runs are coarse: the average-time figure is "
                   "rounded by up to a few percent.", LIMIT_IMPORT_NO_THEORY]
    blob = archive.put_blob(raw)
    return _record(
        archive, context, title=f"Peak memory bandwidth (BabelStream): {parsed['device'] or 'GPU'}",
        gpu=parsed["device"],
        method={"tool": "BabelStream", "tool_version": parsed["version"], "command": None,
                "options": {"precision": parsed["precision"], "runs": parsed["runs"], "array_mb": parsed["array_mb"]},
                "how": "imported from saved BabelStream output"},
        data=data, limitations=limitations,
        sources=[{"role": "babelstream-output", "id": blob, "size": len(raw), "media_type": "text/plain",
                  "name": path.name}],
    )


def import_nvbandwidth(archive: Archive, path: Path, context: Context) -> str:
    """Store saved nvbandwidth output and its ``peak-bandwidth`` record; return the record's id."""
    raw, text = read_text(path, BandwidthOutputError)
    parsed = parse_nvbandwidth(text, str(path))
    local = nvbandwidth_local_copies(parsed, str(path))  # refuses link-only output
    per_gpu = [{**x, "gbs": round(2 * x["copy_gbs_counted_once"], 1)} for x in local]
    values = [x["gbs"] for x in per_gpu]
    devices = sorted({x["device"] for x in per_gpu if x["device"]})
    data = {
        "peak_gbs": round(statistics.median(values), 1),
        "peak_basis": f"median over {len(values)} GPU(s) of nvbandwidth device_local_copy, doubled to read+write",
        "max_gbs": max(values), "median_gbs": round(statistics.median(values), 1), "sample_count": len(values),
        "device": devices[0] if len(devices) == 1 else ", ".join(devices) or None,
        "method": "nvbandwidth device_local_copy",
        "backend": f"nvbandwidth {parsed['version']}",
        "convention": CONVENTION + " (nvbandwidth counts the copied size once: its figures are doubled here)",
        "per_gpu": per_gpu, "theoretical_gbs": None, "samples": [],
        "link_tests_not_imported": sorted(t["name"] for t in parsed["tests"] if t["name"] != "device_local_copy"),
    }
    limitations = [LIMIT_COPY, "Imported from saved nvbandwidth output: clocks and other processes are not known.",
                   "nvbandwidth reports one figure per GPU (the mean of its loop), so run-to-run spread is not known.",
                   LIMIT_IMPORT_NO_THEORY]
    if data["link_tests_not_imported"]:
        limitations.append("The file's link testcases (PCIe, NVLink) measure links, not device memory, and were not imported.")
    blob = archive.put_blob(raw)
    return _record(
        archive, context, title=f"Peak memory bandwidth (nvbandwidth): {data['device'] or 'GPU'}",
        gpu=data["device"],
        method={"tool": "nvbandwidth", "tool_version": parsed["version"], "command": None, "options": {},
                "how": "imported from saved nvbandwidth output"},
        data=data, limitations=limitations,
        sources=[{"role": "nvbandwidth-output", "id": blob, "size": len(raw), "media_type": "text/plain",
                  "name": path.name}],
    )
