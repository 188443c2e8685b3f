"""Build benchmarks on the archive a user gets from `collect ncu --from-csv` (bench/inputs.py
cli_archive): full build, rebuilds after one more record, sizes, start-up, verify.

    .venv/bin/python bench/bench_build.py [--profiles 1000] [--launches 1000] [--full-builds 3]
                                          [--rebuilds 5] [--verify-only] [--repeat 1]

Goals (issue 26): full build >= 60 record pages/s with cold caches (the median of --full-builds
builds, each into a new site with a new cache); a rebuild after one more record <= 2% of it
(the median of --rebuilds rebuilds of each kind, each after one more profile, shared out after
the full builds so that a shared machine's drifting speed weighs on both alike; also printed:
the median of each rebuild against the full build just before it, which such drift moves less),
giving the same bytes as a clean build; the site and the archive each <= 1 GB. The same rebuild run as a
command (`ikreport build`, in a new process) is timed too: what a user waits for, interpreter
start and imports included. Kept from issues 7 and 18: largest page <= 2 MB; `ikreport --help`
within 0.3 s; `ikreport verify` at least half the speed of reading and hashing the same files
(decompressing the blobs too). The disk is synced before each timed build, so that none pays
for what an earlier one wrote.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from inputs import WORK, cli_archive, linked_archive, one_more_profile, tree_equal  # noqa: E402


def size_mb(folder: Path) -> tuple[float, int]:
    """(MB, files) of everything under ``folder``, as the files' sizes add up."""
    files = [p for p in folder.rglob("*") if p.is_file()]
    return sum(p.stat().st_size for p in files) / 1e6, len(files)


def timed_build(archive: Any, site: Path, cache: Path) -> tuple[float, Any]:
    """(seconds, result) of one build as `ikreport build` runs it (the CLI entry's settings),
    after the disk has written back what came before."""
    from ikreport.cli.main import one_pass
    from ikreport.commands.build import build_site

    os.sync()
    start = time.perf_counter()
    with one_pass():
        result = build_site(archive, site, cache_dir=cache)
    return time.perf_counter() - start, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profiles", type=int, default=1000)
    parser.add_argument("--launches", type=int, default=1000)
    parser.add_argument("--verify-only", action="store_true", help="time only verify against reading and hashing")
    parser.add_argument("--repeat", type=int, default=1, help="times each verify is run (min/median/max)")
    parser.add_argument("--full-builds", type=int, default=3,
                        help="full builds timed, each cold (a shared machine's speed varies by a quarter)")
    parser.add_argument("--rebuilds", type=int, default=5, help="rebuilds timed of each kind, each after one new record")
    parser.add_argument("--record", action="store_true", help="append the figures to bench/results.md")
    args = parser.parse_args()
    from ikreport.store.archive import Archive

    start = time.perf_counter()
    source = cli_archive(args.profiles, args.launches)
    made = time.perf_counter() - start
    with tempfile.TemporaryDirectory(dir=WORK) as tmp:
        work = Path(tmp)
        archive_dir = linked_archive(source, work / "archive")
        archive = Archive.open(archive_dir)
        records = len(archive.record_ids())
        archive_mb, archive_files = size_mb(archive_dir)
        site, cache = work / "site", work / "cache"
        if args.verify_only:
            for row in verify_timings(archive_dir, cache, args.repeat, warm_first=True):
                print_row(*row)
            return

        # Full builds and rebuilds take turns, the rebuilds shared out after the full builds, so
        # that a shared machine's drifting speed weighs on both alike.
        fulls: list[float] = []
        rates: list[float] = []
        rebuilds: dict[bool, list[float]] = {False: [], True: []}
        paired: dict[bool, list[float]] = {False: [], True: []}
        rendered: list[int] = []
        kinds = [in_series for _ in range(args.rebuilds) for in_series in (False, True)]
        for n in range(args.full_builds):
            shutil.rmtree(site, ignore_errors=True)
            shutil.rmtree(cache, ignore_errors=True)
            seconds, full = timed_build(archive, site, cache)
            fulls.append(seconds)
            rates.append(full.pages_rendered / seconds)
            if n == 0:
                site_mb, site_files = size_mb(site)
                largest = max(site.rglob("*.html"), key=lambda p: p.stat().st_size)
                largest_name, largest_size = largest.name, largest.stat().st_size
            for k in range(n, len(kinds), args.full_builds):  # one new record each time
                one_more_profile(archive, k, kinds[k])
                seconds, result = timed_build(archive, site, cache)
                rebuilds[kinds[k]].append(seconds)
                paired[kinds[k]].append(seconds / fulls[-1])  # against the full build just before: the same machine state
                rendered.append(result.pages_rendered)
        full_s, rate = statistics.median(fulls), statistics.median(rates)
        ikreport = str(Path(sys.executable).with_name("ikreport"))
        commands = []  # what a user waits for: the same rebuild as a command, process start and imports included
        for n in range(3):
            one_more_profile(archive, 2 * args.rebuilds + n, bool(n % 2))
            start = time.perf_counter()
            subprocess.run([ikreport, "build", str(archive_dir), "-o", str(site), "--cache-dir", str(cache)],
                           check=True, stdout=subprocess.DEVNULL)
            commands.append(time.perf_counter() - start)
        clean = work / "clean"
        timed_build(archive, clean, work / "cache2")
        same = tree_equal(site, clean)

        helps = []
        for _ in range(5):
            start = time.perf_counter()
            subprocess.run([ikreport, "--help"], check=True, stdout=subprocess.DEVNULL)
            helps.append(time.perf_counter() - start)
        verify_rows = verify_timings(archive_dir, cache, args.repeat)
    print(f"archive: {args.profiles} profiles of {args.launches // 2} to {args.launches * 3 // 2} launches imported as "
          f"`collect ncu --from-csv` imports them, + 1 bandwidth record ({records} records, made in {made:.0f} s); "
          f"{os.cpu_count()} cores")
    print_row("archive on disk", f"{archive_mb:.0f} MB", f"{archive_files} files (blobs gzipped)", "<= 1 GB")
    print_row("full build", f"{full_s:.1f} s", f"{rate:.1f} record pages/s, cold cache "
              f"(median of {len(fulls)}: {min(fulls):.1f} to {max(fulls):.1f} s)", ">= 60 pages/s")
    print_row("site", f"{site_mb:.0f} MB", f"{site_files} files", "<= 1 GB")
    print_row("largest page", f"{largest_size / 1e6:.2f} MB", largest_name[:20] + "…", "<= 2 MB")
    for in_series, label in ((False, "rebuild, +1 profile"), (True, "rebuild, +1 in a series")):
        times = rebuilds[in_series]
        median = statistics.median(times)
        print_row(label, f"{median:.2f} s", f"{100 * median / full_s:.2f}% of full (median of {len(times)}: "
                  f"{min(times):.2f} to {max(times):.2f} s), {max(rendered)} page(s) rendered at most; "
                  f"{100 * statistics.median(paired[in_series]):.2f}% as the median of each against the full build "
                  "before it", "<= 2%")
    print_row("rebuild as a command", f"{statistics.median(commands):.2f} s",
              f"`ikreport build`, +1 profile, median of {len(commands)}: process start and imports included", "")
    print_row("incremental == clean", "yes" if same else "NO", "byte for byte", "yes")
    if args.record:
        from record import record

        outside, inside = (statistics.median(rebuilds[k]) for k in (False, True))
        each = [100 * statistics.median(paired[k]) for k in (False, True)]
        record(f"bench_build {args.profiles}x{args.launches}",
               f"archive {archive_mb:.0f} MB; full build {full_s:.1f} s (median of {len(fulls)}) = "
               f"{rate:.0f} record pages/s; site {site_mb:.0f} MB; largest page {largest_size / 1e6:.2f} MB; rebuild +1 "
               f"{outside:.3f} s = {100 * outside / full_s:.2f}%, +1 in a series {inside:.3f} s = "
               f"{100 * inside / full_s:.2f}% (each against the full build before it: {each[0]:.2f}%, {each[1]:.2f}%); "
               f"as a command {statistics.median(commands):.2f} s; incremental == clean: {'yes' if same else 'NO'}")
    print_row("ikreport --help", f"{statistics.median(helps):.3f} s", "median of 5", "<= 0.3 s")
    for row in verify_rows:
        print_row(*row)


def print_row(name: str, value: str, detail: str, goal: str) -> None:
    print(f"{name:26} {value:>10}   {detail:60} goal {goal}")


def verify_timings(archive_dir: Path, cache: Path, repeat: int, warm_first: bool = False) -> list[tuple[str, str, str, str]]:
    """Rows for ``verify`` with no cache and with records validated before: each run against
    reading and hashing the same files (a blob's bytes once decompressed) in the same process
    right after it, ``repeat`` times, as min / median / max of the ratio."""
    from ikreport.cli.main import one_pass
    from ikreport.commands.verify import verify_archive
    from ikreport.store.archive import Archive
    from ikreport.store.cache import Cache
    from ikreport.store.compression import inflate

    if warm_first:
        with one_pass():
            verify_archive(Archive.open(archive_dir), cache=Cache(cache))
    runs: dict[str, list[tuple[float, float]]] = {"no cache": [], "validated before": []}
    total = 0
    for _ in range(repeat):
        for label, kept in (("no cache", None), ("validated before", cache)):
            start = time.perf_counter()
            with one_pass():
                problems = verify_archive(Archive.open(archive_dir), cache=Cache(kept))
            seconds = time.perf_counter() - start
            assert problems == [], problems[:3]
            start = time.perf_counter()
            total = 0
            for path in sorted(archive_dir.rglob("*")):
                if path.is_file():
                    data = path.read_bytes()
                    if path.suffix == ".gz":
                        data = inflate(data, str(path))
                    hashlib.sha256(data).hexdigest()
                    total += len(data)
            runs[label].append((seconds, time.perf_counter() - start))
    rows = []
    for label, pairs in runs.items():
        ratios = sorted(h / v for v, h in pairs)
        spread = "/".join(f"{x:.2f}" for x in (ratios[0], statistics.median(ratios), ratios[-1]))
        rows.append((f"verify ({label})", f"{statistics.median(v for v, _ in pairs):.2f} s",
                     f"read(+gunzip)+hash {statistics.median(h for _, h in pairs):.2f} s ({total / 1e6:.0f} MB): "
                     f"{spread}x" + (" (min/median/max)" if len(pairs) > 1 else ""), ">= 0.5x"))
    return rows


if __name__ == "__main__":
    main()
