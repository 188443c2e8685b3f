"""``collect nsys``: an ``nsys-kernel-summary`` record from ``nsys stats`` CSV output, imported
or made here by running ``nsys profile`` and ``nsys stats`` on a command. The CSV (and a live
run's report) is kept as a blob."""

from __future__ import annotations

import shlex
import tempfile
from pathlib import Path
from typing import Any

from ikreport.analysis import nsys_stats, sniff
from ikreport.collect import tools
from ikreport.collect.context import Context, utc_now
from ikreport.collect.textfile import read_text
from ikreport.errors import NsysStatsError, ToolError
from ikreport.kinds.nsys_kernel_summary import NAME as NSYS_KERNEL_SUMMARY
from ikreport.store import records
from ikreport.store.archive import Archive

LIMIT_IMPORT = ("Imported from saved nsys stats output: how the run was profiled (trace options, sampling, CUDA graph "
                "tracing) and the clocks it ran at are not known beyond what the record states.")
LIMIT_SHARE = ("Shares are of the time kernels ran on the GPU, summed over streams: kernels that overlap on several "
               "streams count in full, and copies, idle time and CPU time are not in it.")
LIMIT_ONE_RUN = "One profiled run: run-to-run variance is not captured."
LIMIT_OVERHEAD = ("Nsight Systems traces every launch: its overhead is small per kernel but adds up for very short "
                  "kernels, so a run without it can differ.")
# every option of 'nsys profile' that changes what the report holds, stated on the command line
NSYS_OPTIONS = ("--trace=cuda,nvtx,osrt", "--sample=none", "--cpuctxsw=none", "--cuda-graph-trace=node",
                "--force-overwrite=true")


def summarise(parsed: dict[str, Any]) -> dict[str, Any]:
    """The record's data from a parsed report: each kernel with its share of all kernel time."""
    kernels = parsed["kernels"]
    total = sum(k.total_ns for k in kernels)
    rows = [{"kernel": k.name, "nvtx_range": k.nvtx_range, "grid": k.grid, "block": k.block, "total_ns": k.total_ns,
             "instances": k.instances, "share_pct": round(100 * k.total_ns / total, 2) if total else 0.0,
             "avg_ns": k.avg_ns, "median_ns": k.med_ns, "min_ns": k.min_ns, "max_ns": k.max_ns, "std_ns": k.std_ns}
            for k in kernels]
    return {"report": parsed["report"], "kernels": rows, "kernel_time_ns": total, "kernel_count": len(rows),
            "launch_count": sum(k.instances for k in kernels),
            "nvtx_ranges": sorted({k.nvtx_range for k in kernels if k.nvtx_range})}


def _record(archive: Archive, context: Context, data: dict[str, Any], limitations: list[str],
            sources: list[dict[str, Any]], method: dict[str, Any]) -> str:
    title = context.title or f"nsys kernel summary ({data['report']}): {data['kernel_count']} kernels"
    record = records.new_record(NSYS_KERNEL_SUMMARY, title, collected_at=utc_now(), subject=context.subject(),
                                method=method, data=data, limitations=limitations + list(context.limitations),
                                sources=sources)
    return archive.put_record(record)


def import_csv(archive: Archive, path: Path, context: Context) -> str:
    """Store saved ``nsys stats --format csv`` output and its record; return the record's id."""
    raw, text = read_text(path, NsysStatsError)
    other = sniff.other_tool(text, str(path), "nsys-stats")
    if other:
        raise NsysStatsError(other)
    data = summarise(nsys_stats.parse_stats_csv(text, str(path)))
    blob = archive.put_blob(raw)
    return _record(archive, context, data, [LIMIT_IMPORT, LIMIT_SHARE, LIMIT_ONE_RUN, LIMIT_OVERHEAD],
                   [{"role": "nsys-stats-csv", "id": blob, "size": len(raw), "media_type": "text/csv", "name": path.name}],
                   {"tool": "nsys stats", "tool_version": None, "command": None, "options": {"report": data["report"]},
                    "how": "imported from saved nsys stats output"})


def profile(archive: Archive, command: list[str], context: Context) -> str:
    """Run ``nsys profile`` on ``command`` with every option that changes results stated, then
    ``nsys stats``; keep the report and the CSV; return the record's id."""
    hint = "install Nsight Systems, or import saved 'nsys stats' output with --from-csv FILE"
    version = tools.run(["nsys", "--version"], hint=hint).stdout.strip() or None
    with tempfile.TemporaryDirectory(prefix="ikreport-nsys-") as tmp:
        out = Path(tmp) / "run"
        argv = ["nsys", "profile", *NSYS_OPTIONS, "-o", str(out), *command]
        done = tools.run(argv, hint=hint)
        report = out.with_suffix(".nsys-rep")
        if done.returncode != 0 or not report.is_file():
            tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
            raise ToolError(f"nsys profile failed (exit {done.returncode}): {tail[0]}")
        stats = tools.run(["nsys", "stats", "--report", "cuda_gpu_kern_sum", "--format", "csv",
                           "--force-export=true", "--output", "-", str(report)], hint=hint)
        if stats.returncode != 0:
            raise ToolError(f"nsys stats failed (exit {stats.returncode}): {(stats.stderr or 'no output').strip()[:200]}")
        data = summarise(nsys_stats.parse_stats_csv(stats.stdout, "nsys stats output"))
        raw_csv = stats.stdout.encode("utf-8")
        raw_rep = report.read_bytes()
    csv_blob, rep_blob = archive.put_blob(raw_csv), archive.put_blob(raw_rep)
    data["command"] = shlex.join(command)
    data["nsys_options"] = {"profile": list(NSYS_OPTIONS), "stats": "--report cuda_gpu_kern_sum --format csv"}
    return _record(archive, context, data, [LIMIT_SHARE, LIMIT_ONE_RUN, LIMIT_OVERHEAD,
                                            "Clocks were not locked: the run is at whatever clocks the GPU ran."],
                   [{"role": "nsys-stats-csv", "id": csv_blob, "size": len(raw_csv), "media_type": "text/csv",
                     "name": "cuda_gpu_kern_sum.csv"},
                    {"role": "nsys-report", "id": rep_blob, "size": len(raw_rep),
                     "media_type": "application/octet-stream", "name": "run.nsys-rep"}],
                   {"tool": "nsys", "tool_version": version, "command": shlex.join(["nsys", "profile", *NSYS_OPTIONS,
                                                                                      *command]),
                    "options": {"profile": list(NSYS_OPTIONS)}, "how": "measured on this machine"})
