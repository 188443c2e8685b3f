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
from ikreport.analysis import plausible, run_wrappers
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
from ikreport.analysis.bandwidthtest import device_to_device, parse_bandwidthtest
from ikreport.formatting import fmt_gbs
from ikreport.progress import Progress
from ikreport.kinds.peak_bandwidth import NAME as PEAK_BANDWIDTH

LIMIT_COPY = ("A copy kernel measures what a simple streaming read and write achieves; kernels with other "
              "access patterns (strided, random, read-only) can reach less, and the datasheet peak is not reached.")
LIMIT_CLOCKS = "Clocks were not locked: the result is at whatever clocks the GPU ran during the copies."
LIMIT_ONE_GPU = "Measured on GPU 0 only; other GPUs of the same model can differ by a few percent."
LIMIT_NO_THEORY = ("The memory bus width is unknown here (install nvidia-ml-py so NVML reports it), so the "
                   "result is not compared with a theoretical peak.")

# How the bytes were copied: an SM kernel streams at close to DRAM peak, a copy engine (what
# cudaMemcpy and nvbandwidth's device_local_copy use) can stay well under it on some parts.
KERNEL_COPY = "kernel (SMs read and write)"
CE_COPY = "copy engine (cudaMemcpy)"
LIMIT_CE = ("The copy ran on a copy engine (cudaMemcpy), which on some GPUs moves data well under what a copy "
            "kernel reaches: a kernel copy (BabelStream, or 'ikreport collect bandwidth' with CuPy or nvcc) gives "
            "a truer memory peak.")

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
    kernel = bandwidth_run.MECHANISM[chosen] == bandwidth_run.KERNEL
    limitations = [LIMIT_COPY, LIMIT_CLOCKS, LIMIT_ONE_GPU] + ([] if kernel else [LIMIT_CE])
    if theory is None:
        limitations.append(LIMIT_NO_THEORY)
    data = {
        **summary,
        "peak_gbs": summary["median_gbs"],
        "peak_basis": f"median of {len(samples)} timed copies",
        "device": result["device"],
        "method": ("device-to-device copy kernel" if kernel else "device-to-device cudaMemcpy (PyTorch copy_)")
        + ", timed with CUDA events",
        "copy_mechanism": KERNEL_COPY if kernel else CE_COPY,
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


def _cuda_version(driver: str) -> str:
    """', the CUDA driver API version 11.4' for BabelStream's CUDA 'Driver: 11040', else ''."""
    if not driver.isdigit() or len(driver) < 4:
        return ""
    number = int(driver)
    return f", the CUDA driver API version {number // 1000}.{number % 1000 // 10}"


def import_babelstream(archive: Archive, path: Path, context: Context) -> str:
    """Store saved BabelStream output and its ``peak-bandwidth`` record; return the record's id."""
    raw, text = read_text(path, BandwidthOutputError)
    parsed = parse_babelstream(text, str(path))
    copy = next(k for k in parsed["kernels"] if k["function"] == "Copy")
    top = max(k["best_gbs"] for k in parsed["kernels"])
    fastest = {"best_gbs": top, "function": ", ".join(k["function"] for k in parsed["kernels"] if k["best_gbs"] == top)}
    failed = parsed["validation_failed"]
    data = {
        # BabelStream's own figure (its fastest run); its 5-decimal times are too coarse to derive another
        "peak_gbs": copy["best_gbs"],
        "peak_basis": f"BabelStream's own Copy figure (MBytes/sec), from the fastest of {parsed['runs'] or 'its'} runs",
        # "best" is the highest the run measured, of any kernel (Add or Triad can beat Copy)
        "max_gbs": fastest["best_gbs"], "max_kernel": fastest["function"], "median_gbs": None,
        "sample_count": parsed["runs"], "peak_kernel": "Copy",
        "validation": "failed: " + " ".join(failed) if failed else "no failure printed",
        **({"driver": parsed["driver"]} if parsed["driver"] else {}),
        "device": parsed["device"], "method": "BabelStream Copy kernel", "copy_mechanism": KERNEL_COPY,
        "backend": f"{parsed['tool']} {parsed['version']} ({parsed['implementation']}, {parsed['precision']})",
        "convention": CONVENTION + " (BabelStream's own: Copy reads one array and writes another)",
        "array_mb": parsed["array_mb"], "kernels": parsed["kernels"], "theoretical_gbs": None, "samples": [],
        "run_under": [f["tool"] for f in parsed["run_under"]],
    }
    driver = parsed["driver"]
    known = (f"clocks and other processes are not known; the driver is as BabelStream printed it "
             f"(Driver: {driver}{_cuda_version(driver)})" if driver else "clocks, driver and other processes are not known")
    limitations = [*([f"BabelStream reported that the run failed its own validation ({failed[0]}): its kernels did "
                      "not compute what they should, so these figures cannot be trusted as a peak."] if failed else []),
                   LIMIT_COPY, f"Imported from saved BabelStream output: {known}.",
                   "BabelStream's figure is its fastest run: typical runs are slower, and its printed times (5 "
                   "decimals) are too coarse to say by how much.", LIMIT_IMPORT_NO_THEORY,
                   *run_wrappers.limitations(parsed["run_under"], "BabelStream")]
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
    per_gpu = [{**x, "gbs": round(2 * x["counted_once_gbs"], 1)} for x in local]
    values = [x["gbs"] for x in per_gpu]
    # the median of the figures as nvbandwidth printed them, doubled, then rounded once
    median = round(statistics.median(2 * x["counted_once_gbs"] for x in local), 1)
    devices = sorted({x["device"] for x in per_gpu if x["device"]})
    data = {
        "peak_gbs": median,
        "peak_basis": f"median over {len(values)} GPU(s) of nvbandwidth device_local_copy, doubled to read+write",
        "max_gbs": max(values), "median_gbs": median, "sample_count": len(values),
        "device": devices[0] if len(devices) == 1 else ", ".join(devices) or None,
        "method": "nvbandwidth device_local_copy", "copy_mechanism": CE_COPY,
        "backend": f"nvbandwidth {parsed['version']}",
        "convention": CONVENTION + " (nvbandwidth counts the copied size once: its figures are doubled here)",
        "per_gpu": per_gpu, "theoretical_gbs": None, "samples": [],
        "link_tests_not_imported": sorted(t["name"] for t in parsed["tests"] if t["name"] != "device_local_copy"),
    }
    # a server's GPUs are boards of one model: their median is the peak, and the spread is said
    several_gpus = [f"The peak is the median over the {len(values)} GPUs of one machine that nvbandwidth measured "
                    f"({min(values):,.1f} to {max(values):,.1f} GB/s read + write); another board of the model "
                    "can differ."] if len(values) > 1 else []
    json_output = parsed["output"] == "json"
    if json_output and parsed.get("driver"):
        data["driver"] = str(parsed["driver"])
    limitations = [LIMIT_COPY, LIMIT_CE, *several_gpus,
                   "Imported from saved nvbandwidth output: clocks and other processes are not known.",
                   "nvbandwidth reports one figure per GPU (the mean of its loop), so run-to-run spread is not known.",
                   LIMIT_IMPORT_NO_THEORY, *run_wrappers.limitations(parsed["run_under"], "nvbandwidth")]
    if data["link_tests_not_imported"]:
        limitations.append("The file's link testcases (PCIe, NVLink) measure links, not device memory, and were not imported.")
    blob = archive.put_blob(raw)
    return _record(
        archive, context, title=f"Peak memory bandwidth (nvbandwidth): {data['device'] or 'GPU'}",
        gpu=data["device"],
        method={"tool": "nvbandwidth", "tool_version": parsed["version"], "command": None,
                "options": {"output": "json (-j)"} if json_output else {},
                "how": "imported from saved nvbandwidth " + ("JSON output" if json_output else "output")},
        data=data, limitations=limitations,
        sources=[{"role": "nvbandwidth-output", "id": blob, "size": len(raw),
                  "media_type": "application/json" if json_output else "text/plain", "name": path.name}],
    )


def import_bandwidthtest(archive: Archive, path: Path, context: Context) -> str:
    """Store saved CUDA samples bandwidthTest output and its ``peak-bandwidth`` record (its
    device-to-device figures, already read + write); return the record's id."""
    raw, text = read_text(path, BandwidthOutputError)
    parsed = parse_bandwidthtest(text, str(path))
    block = device_to_device(parsed, str(path))
    rows = sorted(block["rows"], key=lambda r: r["bytes"])
    largest, best = rows[-1], max(rows, key=lambda r: (r["gbs"], -r["bytes"]))
    transfers = [{"buffer_bytes": r["bytes"], "gbs": round(r["gbs"], 1)} for r in rows]
    failed = parsed["result"] not in (None, "PASS")  # bandwidthTest checks its copies and prints PASS or FAIL
    data = {
        # the largest transfer is the one least served from L2: bandwidthTest's figure, as printed
        "peak_gbs": round(largest["gbs"], 1),
        "peak_basis": f"bandwidthTest's device-to-device figure at its largest transfer ({largest['bytes']:,} bytes)",
        "max_gbs": round(best["gbs"], 1), "max_kernel": f"a {best['bytes']:,}-byte transfer",
        "median_gbs": None, "sample_count": len(rows),
        "device": parsed["device"], "method": "CUDA samples bandwidthTest, device to device (cudaMemcpy)",
        "copy_mechanism": CE_COPY, "backend": "bandwidthTest" + (f" ({parsed['mode']} mode)" if parsed["mode"] else ""),
        "convention": CONVENTION + " (bandwidthTest's own: it counts 2 x the size, a read and a write, and is "
                                   "stored as printed)",
        "transfers": transfers, "memory": block["memory"], "theoretical_gbs": None, "samples": [],
        "validation": ("failed: " if failed else "") + f"bandwidthTest printed Result = {parsed['result']}"
        if parsed["result"] else "no result printed",
    }
    limitations = [*(["bandwidthTest reported that its run failed (Result = FAIL): its copies did not all check "
                      "out, so these figures cannot be trusted as a peak."] if failed else []), LIMIT_COPY, LIMIT_CE, "Imported from saved bandwidthTest output: clocks, driver and other "
                   "processes are not known.",
                   "bandwidthTest reports one figure per transfer size (the mean of its repeated copies), so "
                   "run-to-run spread is not known.", LIMIT_IMPORT_NO_THEORY]
    if best["bytes"] != largest["bytes"]:
        limitations.append(f"A smaller transfer ({best['bytes']:,} bytes, {fmt_gbs(best['gbs'])}) measured more than "
                           "the largest: a copy that small is served partly from the L2 cache, so it is shown only "
                           "as the best figure, not as the memory peak.")
    if parsed["device"] is None:  # no stated GPU: no page ties it to a model, and the record says so
        limitations.append("The output does not name the GPU (bandwidthTest's 'Device N:' line is not in it): the "
                           + ("model is as the importer stated it." if context.gpu else
                              "model is not known (no --gpu was given), so no kernel is set against this peak."))
    blob = archive.put_blob(raw)
    gpu = parsed["device"]
    return _record(
        archive, context, title=f"Peak memory bandwidth (bandwidthTest): {context.gpu or gpu or 'GPU'}", gpu=gpu,
        method={"tool": "bandwidthTest (CUDA samples)", "tool_version": None, "command": None,
                "options": {"mode": parsed["mode"], "memory": block["memory"]},
                "how": "imported from saved bandwidthTest output"},
        data=data, limitations=limitations,
        sources=[{"role": "bandwidthtest-output", "id": blob, "size": len(raw), "media_type": "text/plain",
                  "name": path.name}],
    )
