"""Measure peak device-memory bandwidth with a device-to-device copy.

Buffers far larger than L2 (several sizes), warm-up copies, then repeated copies timed with
CUDA events. A copy *kernel* (the SMs read and write) is preferred: a copy engine, which
cudaMemcpy uses, can stay well under DRAM peak on some parts. Backends, first available wins
unless one is asked for: CuPy (the shipped kernel ``cuda/copy_kernel.cuh`` through
``cupy.RawKernel``), the CUDA C++ program ``cuda/copy_bandwidth.cu`` (the same kernel) compiled
with ``nvcc``, then PyTorch (``Tensor.copy_``, a cudaMemcpy). The result says which ran.
"""

from __future__ import annotations

import importlib.util
import shutil
import tempfile
from importlib import resources
from pathlib import Path
from typing import Any

from ikreport.collect import tools
from ikreport.progress import Progress

MiB = 1 << 20
INT4 = 16  # bytes in the int4 word the copy kernel moves
DEFAULT_SIZES_MIB = (256, 512, 1024)  # H200 L2 is 60 MiB (B200: 126 MiB): every size is far beyond it
BACKENDS = ("cupy", "nvcc", "torch")  # the default order: kernel copies first
KERNEL = "kernel"  # the SMs copy: close to what DRAM can stream
MEMCPY = "cudaMemcpy"  # the driver copies, on a copy engine
MECHANISM = {"cupy": KERNEL, "nvcc": KERNEL, "torch": MEMCPY}
# The GPU architectures the copy program is written for (Volta to Blackwell: the int4 loads and
# CUDA events it uses are in all of them); a test compiles it for each one the installed nvcc
# knows (CUDA 13 dropped sm_70).
ARCHITECTURES = ("sm_70", "sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_120")
IMPORT_INSTEAD = ("or import saved output with --from-babelstream FILE, --from-nvbandwidth FILE or "
                  "--from-bandwidthtest FILE")
NO_GPU_HINT = f"a live measurement needs an NVIDIA GPU and its driver; {IMPORT_INSTEAD}"


def available_backend(wanted: str | None) -> str:
    """The backend to measure with: ``wanted`` if it is usable here, else the first of CuPy, nvcc, PyTorch."""
    if wanted:
        if wanted in ("cupy", "torch") and importlib.util.find_spec(wanted) is None:
            raise tools.ToolError(f"--backend {wanted}: {wanted} is not installed in this Python")
        if wanted == "nvcc":
            tools.find("nvcc")
        return wanted
    if importlib.util.find_spec("cupy") is not None:
        return "cupy"
    if shutil.which("nvcc") is not None or importlib.util.find_spec("torch") is None:
        # raises with an install hint when neither nvcc nor PyTorch is here
        tools.find("nvcc", f"install CuPy, PyTorch or the CUDA toolkit on the GPU machine, {IMPORT_INSTEAD}")
        return "nvcc"
    return "torch"


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
        kernel = cupy.RawKernel(_kernel_source(), "copy_kernel")
        sms = cupy.cuda.runtime.getDeviceProperties(0)["multiProcessorCount"]
        for size in sizes:
            size -= size % INT4  # the kernel moves 16-byte int4 words
            src = cupy.ones(size, dtype=cupy.uint8)
            dst = cupy.empty_like(src)
            start, stop = cupy.cuda.Event(), cupy.cuda.Event()
            for i in range(warmup + repeats):
                start.record()
                # the launch shape of copy_bandwidth.cu, so both kernel backends measure alike
                kernel((sms * 8,), (256,), (src, dst, cupy.uint64(size // INT4)))
                stop.record()
                stop.synchronize()
                if i >= warmup:
                    samples.append({"buffer_bytes": size, "seconds": cupy.cuda.get_elapsed_time(start, stop) / 1e3})
                    if progress:
                        progress.count(len(samples), total)
            del src, dst
            cupy.get_default_memory_pool().free_all_blocks()
    return {"backend": backend, "backend_version": version, "device": device, "samples": samples}


def _kernel_source() -> str:
    return resources.files("ikreport").joinpath("collect/cuda/copy_kernel.cuh").read_text("utf-8")


def _nvcc(sizes: list[int], warmup: int, repeats: int, progress: Progress | None) -> dict[str, Any]:
    source = resources.files("ikreport").joinpath("collect/cuda/copy_bandwidth.cu").read_text("utf-8")
    with tempfile.TemporaryDirectory(prefix="ikreport-bw-") as tmp:
        src = Path(tmp) / "copy_bandwidth.cu"
        exe = Path(tmp) / "copy_bandwidth"
        src.write_text(source, "utf-8")
        (Path(tmp) / "copy_kernel.cuh").write_text(_kernel_source(), "utf-8")
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
