"""Import benchmark: `ikreport collect ncu --from-csv` of a 20,000-launch raw export against
`pyarrow.csv.read_csv` of the same file, in the same run.

    .venv/bin/python bench/bench_import.py [--launches 20000] [--repeat 3] [--memory-only]

Goal (issue 7): import at most 2x pyarrow's time, peak memory at most 3x the file size.
Goal (issue 18): 200,000 launches in at most 350 MB, in no more time than pyarrow's read.
Both are measured two ways: as whole commands in fresh processes (what a user waits for,
interpreter start and imports included) and warm, in this process (the work alone).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from inputs import ROOT, big_raw_export  # noqa: E402

PYARROW_READ = "import sys, pyarrow.csv as c; c.read_csv(sys.argv[1], read_options=c.ReadOptions(skip_rows=2))"


def timed_process(argv: list[str]) -> tuple[float, float]:
    """(seconds, peak RSS in MB) of a command run to completion in a fresh process."""
    code = ("import resource, subprocess, sys, time; t = time.perf_counter(); "
            "subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL); "
            "print(time.perf_counter() - t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024)")
    out = subprocess.run([sys.executable, "-c", code, *argv], check=True, capture_output=True, text=True).stdout
    seconds, rss = out.split()
    return float(seconds), float(rss)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--launches", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--record", action="store_true", help="append the figures to bench/results.md")
    parser.add_argument("--memory-only", action="store_true",
                        help="only the import's time and peak memory, in a fresh process (pyarrow's "
                             "whole-file read of 2,000,000 launches would need about 23 GB)")
    args = parser.parse_args()
    export = big_raw_export(args.launches)
    size_mb = export.stat().st_size / 1e6
    ikreport = str(Path(sys.executable).with_name("ikreport"))
    if args.memory_only:
        with tempfile.TemporaryDirectory() as tmp:
            seconds, rss = timed_process([ikreport, "collect", "ncu", "--from-csv", str(export), "-a", f"{tmp}/a"])
        print(f"{args.launches} launches, {size_mb:.0f} MB: {seconds:.1f} s, peak RSS {rss:.0f} MB "
              f"({rss / size_mb:.2f}x the file, {rss * 1e3 / args.launches:.2f} KB per launch)")
        if args.record:
            from record import record

            record(f"bench_import {args.launches} --memory-only", f"{size_mb:.0f} MB export: {seconds:.1f} s, "
                   f"peak RSS {rss:.0f} MB")
        return

    rows = []
    cold_py, cold_ik = [], []
    for _ in range(args.repeat):  # in turn, so that a spell of a busy disk or CPU falls on both,
        os.sync()  # and each after the disk took what the last one wrote: neither pays the other's writeback
        cold_py.append(timed_process([sys.executable, "-c", PYARROW_READ, str(export)]))
        with tempfile.TemporaryDirectory() as tmp:
            os.sync()
            cold_ik.append(timed_process([ikreport, "collect", "ncu", "--from-csv", str(export), "-a", f"{tmp}/a"]))
    pairs = sorted(ik / py for (py, _), (ik, _) in zip(cold_py, cold_ik))
    rows.append(("fresh process (s)", statistics.median(t for t, _ in cold_py), statistics.median(t for t, _ in cold_ik)))
    rows.append(("peak RSS (MB)", max(m for _, m in cold_py), max(m for _, m in cold_ik)))

    import pyarrow.csv as pacsv

    from ikreport.store.archive import Archive
    from ikreport.collect.context import Context
    from ikreport.collect.ncu_import import import_csv
    from ikreport.cli.main import one_pass

    warm_py, warm_ik = [], []
    for _ in range(args.repeat):
        t = time.perf_counter()
        pacsv.read_csv(export, read_options=pacsv.ReadOptions(skip_rows=2))
        warm_py.append(time.perf_counter() - t)
        with tempfile.TemporaryDirectory() as tmp:
            t = time.perf_counter()
            with one_pass():  # as 'ikreport collect' runs it: the CLI entry's gc settings
                import_csv(Archive.create(Path(tmp) / "a"), [export], Context())
            warm_ik.append(time.perf_counter() - t)
    rows.append(("warm, in process (s)", statistics.median(warm_py), statistics.median(warm_ik)))

    print(f"import of {export.relative_to(ROOT)}: {args.launches} launches, {size_mb:.1f} MB, median of {args.repeat}")
    print(f"{'':24} {'pyarrow':>10} {'ikreport':>10} {'ratio':>7}   goal")
    for name, py, ik in rows:
        goal = "<= 2x pyarrow" if "s)" in name else ""
        print(f"{name:24} {py:10.2f} {ik:10.2f} {ik / py:6.2f}x   {goal}")
    rss = rows[1][2]
    print(f"{'peak RSS / file size':24} {'':10} {rss / size_mb:10.2f} {'':7}   <= 3x")
    print(f"fresh processes run in turn, each pair's ratio: min {pairs[0]:.2f}x, median {statistics.median(pairs):.2f}x, "
          f"max {pairs[-1]:.2f}x")
    if args.record:
        from record import record

        (_, py_cold, ik_cold), (_, _, rss), (_, py_warm, ik_warm) = rows
        record(f"bench_import {args.launches}", f"{size_mb:.0f} MB export: fresh {ik_cold:.2f} s against pyarrow's "
               f"{py_cold:.2f} s (pairs' median {statistics.median(pairs):.2f}x), warm {ik_warm:.2f} s against "
               f"{py_warm:.2f} s ({ik_warm / py_warm:.2f}x), peak RSS {rss:.0f} MB ({rss / size_mb:.2f}x the file)")


if __name__ == "__main__":
    main()
