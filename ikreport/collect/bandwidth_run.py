"""Measure peak device-memory bandwidth with a device-to-device copy.

Buffers far larger than L2 (several sizes), warm-up copies, then repeated copies timed with
CUDA events. Backends, first available wins unless one is asked for: CuPy, PyTorch, or the
CUDA C++ program shipped in ``cuda/copy_bandwidth.cu`` compiled with ``nvcc``.
"""

from __future__ import annotations

import importlib.util
import tempfile
from importlib import resources
from pathlib import Path
from typing import Any

from ikreport.collect import tools
from ikreport.progress import Progress

MiB = 1 << 20
DEFAULT_SIZES_MIB = (256, 512, 1024)  # H200 L2 is 60 MiB (B200: 126 MiB): every size is far beyond it
BACKENDS = ("cupy", "torch", "nvcc")
IMPORT_INSTEAD = "or import saved output with --from-babelstream FILE or --from-nvbandwidth FILE"
NO_GPU_HINT = f"a live measurement needs an NVIDIA GPU and its driver; {IMPORT_INSTEAD}"


def available_backend(wanted: str | None) -> str:
    """The backend to measure with: ``wanted`` if it is usable here, else the first of CuPy, PyTorch, nvcc."""
    if wanted:
        if wanted in ("cupy", "torch") and importlib.util.find_spec(wanted) is None:
            raise tools.ToolError(f"--backend {wanted}: {wanted} is not installed in this Python")
        if wanted == "nvcc":
            tools.find("nvcc")
        return wanted
    for name in ("cupy", "torch"):
        if importlib.util.find_spec(name) is not None:
            return name
    tools.find("nvcc", f"install CuPy, PyTorch or the CUDA toolkit on the GPU machine, {IMPORT_INSTEAD}")
    return "nvcc"


def measure(backend: str, sizes: list[int], warmup: int, repeats: int,
            progress: Progress | None = None) -> dict[str, Any]:
    """{"backend", "backend_version", "device", "samples": [{"buffer_bytes", "seconds"}]}."""
    if backend == "nvcc":
        return _nvcc(sizes, warmup, repeats, progress)
    return _python(backend, sizes, warmup, repeats, progress)


def _python(backend: str, sizes: list[int], warmup: int, repeats: int, progress: Progress | None) -> dict[str, Any]:
    samples = []
    total = len(sizes) * repeats
    if backend == "torch":
        import torch

        device = torch.cuda.get_device_name(0)
        version = torch.__version__
        for size in sizes:
            src = torch.ones(size, dtype=torch.uint8, device="cuda")
            dst = torch.empty_like(src)
            start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            for i in range(warmup + repeats):
                start.record()
                dst.copy_(src)
                stop.record()
                stop.synchronize()
                if i >= warmup:
                    samples.append({"buffer_bytes": size, "seconds": start.elapsed_time(stop) / 1e3})
                    if progress:
                        progress.count(len(samples), total)
            del src, dst
            torch.cuda.empty_cache()
    else:
        import cupy

        name = cupy.cuda.runtime.getDeviceProperties(0)["name"]  # bytes in CuPy 13 and 14
        device = name.decode() if isinstance(name, bytes) else str(name)
        version = cupy.__version__
        for size in sizes:
            src = cupy.ones(size, dtype=cupy.uint8)
            dst = cupy.empty_like(src)
            start, stop = cupy.cuda.Event(), cupy.cuda.Event()
            for i in range(warmup + repeats):
                start.record()
                dst[...] = src
                stop.record()
                stop.synchronize()
                if i >= warmup:
                    samples.append({"buffer_bytes": size, "seconds": cupy.cuda.get_elapsed_time(start, stop) / 1e3})
                    if progress:
                        progress.count(len(samples), total)
            del src, dst
            cupy.get_default_memory_pool().free_all_blocks()
    return {"backend": backend, "backend_version": version, "device": device, "samples": samples}


def _nvcc(sizes: list[int], warmup: int, repeats: int, progress: Progress | None) -> dict[str, Any]:
    source = resources.files("ikreport").joinpath("collect/cuda/copy_bandwidth.cu").read_text("utf-8")
    with tempfile.TemporaryDirectory(prefix="ikreport-bw-") as tmp:
        src = Path(tmp) / "copy_bandwidth.cu"
        exe = Path(tmp) / "copy_bandwidth"
        src.write_text(source, "utf-8")
        built = tools.run(["nvcc", "-O3", "-o", str(exe), str(src)], timeout=600)
        if built.returncode != 0 or not exe.exists():
            first = (built.stderr or built.stdout).strip().splitlines()
            raise tools.ToolError(f"nvcc could not compile the bandwidth program: {first[0] if first else 'no output'}")
        version = tools.run(["nvcc", "--version"], timeout=60).stdout.strip().splitlines()
        ran = tools.run([str(exe), str(warmup), str(repeats), *map(str, sizes)], timeout=1800)
    if ran.returncode != 0:
        said = (ran.stderr or ran.stdout).strip().splitlines()
        raise tools.ToolError(f"the bandwidth program failed (exit {ran.returncode}): {said[0] if said else 'no output'}")
    device, samples = None, []
    lines = ran.stdout.splitlines()
    if not lines or lines[0].strip() != "ikbw 1":
        raise tools.ToolError("the bandwidth program printed an unknown format; reinstall ikreport")
    for line in lines[1:]:
        parts = line.split()
        if line.startswith("device "):
            device = line[len("device "):].strip()
        elif parts[:1] == ["sample"] and len(parts) == 3:
            try:
                samples.append({"buffer_bytes": int(parts[1]), "seconds": float(parts[2])})
            except ValueError as exc:
                raise tools.ToolError(f"the bandwidth program printed {line.strip()!r}, not a sample; "
                                      "reinstall ikreport") from exc
    if progress:
        progress.count(len(samples), len(sizes) * repeats)
    return {"backend": "nvcc", "backend_version": version[-1] if version else None, "device": device, "samples": samples}
