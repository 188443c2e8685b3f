"""Append one row of figures to bench/results.md: the table bench/README.md points to.

    .venv/bin/python bench/record.py BENCH "figure=value; figure=value; ..."

Each bench script calls this with --record; the row gets the date, the commit and the machine,
so figures are never typed by hand and history stays in git.
"""

from __future__ import annotations

import datetime
import os
import platform
import subprocess
import sys
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results.md"
HEADER = ("# Benchmark results\n\nWritten by the bench scripts' `--record` (bench/record.py); newest last. "
          "Figures are what each script prints, on the machine named.\n\n"
          "| date | commit | machine | bench | figures |\n|---|---|---|---|---|\n")


def machine() -> str:
    """Cores, memory and CPU model of this machine, in a few words."""
    memory = ""
    try:
        kb = int(next(line for line in Path("/proc/meminfo").read_text().splitlines()
                      if line.startswith("MemTotal")).split()[1])
        memory = f", {kb / 2**20:.0f} GiB"
    except (OSError, StopIteration, ValueError):
        pass
    model = platform.processor() or platform.machine()
    try:
        model = next(line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                     if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return f"{os.cpu_count()} cores{memory}, {model}"


def record(bench: str, figures: str) -> None:
    """Append a row for ``bench`` with ``figures`` (a short "name=value; …" text)."""
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                cwd=RESULTS.parent, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], capture_output=True,
                               text=True, cwd=RESULTS.parent, check=True).stdout.strip()
        commit += "+changes" if dirty else ""
    except (OSError, subprocess.CalledProcessError):
        commit = "unknown"
    if not RESULTS.exists():
        RESULTS.write_text(HEADER, "utf-8")
    row = f"| {datetime.date.today().isoformat()} | {commit} | {machine()} | {bench} | {figures} |\n"
    with RESULTS.open("a", encoding="utf-8") as f:
        f.write(row)


if __name__ == "__main__":
    record(sys.argv[1], sys.argv[2])
