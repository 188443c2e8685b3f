"""Which debugger or profiler a saved benchmark run went through (pure).

Input: the whole text of a saved run (BabelStream, nvbandwidth), as copied from a terminal or
a log. A run started under a tool carries that tool's own lines among the benchmark's:

- cuda-gdb: its banner (``NVIDIA (R) cuda-gdb 12.9``, or ``NVIDIA (R) CUDA Debugger`` then
  ``11.4 release`` in 11.x), ``(cuda-gdb)`` prompts, ``[New Thread …]`` and breakpoint lines;
- gdb: ``(gdb)`` prompts, ``[Inferior 1 (process N) exited …]``;
- compute-sanitizer: ``========= COMPUTE-SANITIZER``;
- Nsight Compute: ``==PROF==`` lines;
- Nsight Systems: ``Collecting data...``, report files ending ``.qdstrm`` or ``.nsys-rep``.

The figures of such a run are real but not the GPU's best: a debugger slows kernels (more so
when they are built with ``-G`` or stopped at breakpoints), and a profiler replays or traces
them. Each tool found gives a limitation that names it, so the record is kept and says so.
"""

from __future__ import annotations

import re

# (tool, what it does to the figures, the lines that show it ran); the first match per tool wins
_DEBUGGER = ("a debugger slows kernels, more so when they are built for it (-G) or stopped at breakpoints, "
             "so these figures are below what the GPU reaches")
_TOOLS: tuple[tuple[str, str, re.Pattern[str]], ...] = (
    ("cuda-gdb", _DEBUGGER, re.compile(r"^\s*(?:NVIDIA \(R\) (?:cuda-gdb|CUDA Debugger)|\(cuda-gdb\))", re.M)),
    ("gdb", _DEBUGGER, re.compile(r"^\s*(?:\(gdb\)|\[Inferior \d+ \(process \d+\))", re.M)),
    ("compute-sanitizer", "a sanitizer instruments every memory access, so these figures are far below what the "
     "GPU reaches", re.compile(r"^\s*========= COMPUTE-SANITIZER", re.M)),
    ("Nsight Compute (ncu)", "ncu replays and serialises the kernels it profiles, so their figures are not "
     "bandwidth and the others may be lowered", re.compile(r"^\s*==PROF== ", re.M)),
    ("Nsight Systems (nsys)", "tracing adds overhead to every launch, so these figures may be slightly low",
     re.compile(r"^\s*Collecting data\.\.\.\s*$|\.qdstrm\b|\.nsys-rep\b", re.M)),
)
_CUDA_GDB_VERSION = re.compile(r"NVIDIA \(R\) cuda-gdb (\S+)|NVIDIA \(R\) CUDA Debugger\s*\n\s*(\S+) release")


def run_under(text: str) -> list[dict[str, str]]:
    """Each debugger or profiler the run went through: ``{"tool", "effect"}``, in a fixed order.

    cuda-gdb's own lines also match gdb's patterns, so gdb is named only without cuda-gdb.
    """
    found: list[dict[str, str]] = []
    for tool, effect, pattern in _TOOLS:
        if not pattern.search(text):
            continue
        if tool == "gdb" and any(f["tool"].startswith("cuda-gdb") for f in found):
            continue
        if tool == "cuda-gdb":
            version = _CUDA_GDB_VERSION.search(text)
            tool = f"cuda-gdb {version.group(1) or version.group(2)}" if version else tool
        found.append({"tool": tool, "effect": effect})
    return found


def limitations(found: list[dict[str, str]], what: str) -> list[str]:
    """One limitation per tool: ``<what> was run under cuda-gdb 12.9 (…): a debugger slows kernels …``."""
    return [f"{what} was run under {f['tool']} (its lines are interleaved with the output): {f['effect']}."
            for f in found]
