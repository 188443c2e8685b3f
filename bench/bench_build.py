"""Build benchmarks on a big archive: full build, incremental build, start-up, verify.

    .venv/bin/python bench/bench_build.py [--profiles 1000] [--launches 1000] [--rebuilds 5]
                                          [--verify-only] [--repeat 1]

Goals (issue 7, issue 18): full build >= 20 record pages/s on this machine's cores (issue 18:
>= 60); largest page <= 2 MB; after adding one record, a rebuild takes <= 2% of the full build
(issue 7: 5%; the median of --rebuilds rebuilds, each after one more record) and gives the
same bytes as a clean build; `ikreport --help` within 0.3 s; `ikreport verify` at least half
the speed of reading and hashing the same files.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from inputs import WORK, big_archive, linked_archive, one_more_profile, tree_equal  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profiles", type=int, default=1000)
    parser.add_argument("--launches", type=int, default=1000)
    parser.add_argument("--verify-only", action="store_true", help="time only verify against reading and hashing")
    parser.add_argument("--repeat", type=int, default=1, help="times each verify is run (min/median/max)")
    parser.add_argument("--rebuilds", type=int, default=5, help="rebuilds timed, each after one new record")
    args = parser.parse_args()
    from ikreport.store.archive import Archive
    from ikreport.cli.main import one_pass
    from ikreport.site.build import build_site as library_build

    def build_site(*args: Any, **kwargs: Any) -> Any:  # as 'ikreport build' runs it: the CLI entry's gc settings
        with one_pass():
            return library_build(*args, **kwargs)

    t = time.perf_counter()
    source = big_archive(args.profiles, args.launches)
    made = time.perf_counter() - t
    with tempfile.TemporaryDirectory(dir=WORK) as tmp:
        work = Path(tmp)
        archive_dir = linked_archive(source, work / "archive")
        archive = Archive.open(archive_dir)
        records = len(archive.record_ids())
        site, cache = work / "site", work / "cache"
        if args.verify_only:
            verify_rows(archive_dir, cache, args.repeat)
            return

        t = time.perf_counter()
        full = build_site(archive, site, cache_dir=cache)
        full_s = time.perf_counter() - t
        largest = max((p for p in site.rglob("*.html")), key=lambda p: p.stat().st_size)
        largest_name, largest_size = largest.name, largest.stat().st_size

        incs, rendered = [], []
        for n in range(args.rebuilds):  # one new record each time: a rebuild's time spreads by a quarter
            one_more_profile(archive, n + 1)
            t = time.perf_counter()
            rendered.append(build_site(archive, site, cache_dir=cache).pages_rendered)
            incs.append(time.perf_counter() - t)
        inc_s = statistics.median(incs)
        clean = work / "clean"
        build_site(archive, clean, cache_dir=work / "cache2")
        same = tree_equal(site, clean)

        ikreport = str(Path(sys.executable).with_name("ikreport"))
        helps = []
        for _ in range(5):
            t = time.perf_counter()
            subprocess.run([ikreport, "--help"], check=True, stdout=subprocess.DEVNULL)
            helps.append(time.perf_counter() - t)
        verify_lines = verify_timings(archive_dir, cache, args.repeat)
    print(f"archive: {args.profiles} profiles x {args.launches} launches + environment and bandwidth records "
          f"({records} records, generated in {made:.0f} s); {os.cpu_count()} cores")
    rows = [
        ("full build", f"{full_s:.1f} s", f"{full.pages_rendered / full_s:.1f} record pages/s", ">= 20 pages/s"),
        ("largest page", f"{largest_size / 1e6:.2f} MB", largest_name[:20] + "…", "<= 2 MB"),
        ("incremental (+1 record)", f"{inc_s:.2f} s", f"{100 * inc_s / full_s:.1f}% of full (median of {len(incs)}: "
         f"{min(incs):.2f} to {max(incs):.2f} s), {max(rendered)} page(s) rendered", "<= 2%"),
        ("incremental == clean", "yes" if same else "NO", "byte for byte", "yes"),
        ("ikreport --help", f"{statistics.median(helps):.3f} s", "median of 5", "<= 0.3 s"),
        *verify_lines,
    ]
    for name, value, detail, goal in rows:
        print(f"{name:26} {value:>10}   {detail:52} goal {goal}")


def verify_timings(archive_dir: Path, cache: Path, repeat: int) -> list[tuple[str, str, str, str]]:
    """Rows for ``verify`` with no cache and with records validated before (the cache filled by
    the first): each run against reading and hashing the same files in the same process right
    after it, ``repeat`` times, as min / median / max of the ratio."""
    from ikreport.cli.main import one_pass
    from ikreport.commands.verify import verify_archive
    from ikreport.store.archive import Archive
    from ikreport.store.validated import Validated

    runs: dict[str, list[tuple[float, float]]] = {"no cache": [], "validated before": []}
    total = 0
    for _ in range(repeat):
        for label, validated in (("no cache", Validated(None)), ("validated before", Validated(cache / "validated"))):
            t = time.perf_counter()
            with one_pass():
                problems = verify_archive(Archive.open(archive_dir), validated=validated)  # in process, like the loop below
            seconds = time.perf_counter() - t
            assert problems == [], problems[:3]
            t = time.perf_counter()
            total = 0
            for path in sorted(archive_dir.rglob("*")):
                if path.is_file():
                    data = path.read_bytes()
                    hashlib.sha256(data).hexdigest()
                    total += len(data)
            runs[label].append((seconds, time.perf_counter() - t))
    rows = []
    for label, pairs in runs.items():
        ratios = sorted(h / v for v, h in pairs)
        spread = "/".join(f"{x:.2f}" for x in (ratios[0], statistics.median(ratios), ratios[-1]))
        rows.append((f"verify ({label})", f"{statistics.median(v for v, _ in pairs):.2f} s",
                     f"read+hash {statistics.median(h for _, h in pairs):.2f} s ({total / 1e6:.0f} MB): {spread}x"
                     + (" (min/median/max)" if len(pairs) > 1 else ""), ">= 0.5x"))
    return rows


def verify_rows(archive_dir: Path, cache: Path, repeat: int) -> None:
    """Print only the verify rows (``--verify-only``: no build). A first verify fills the cache
    of validated records and starts the worker processes' server, as the build does otherwise."""
    from ikreport.cli.main import one_pass
    from ikreport.commands.verify import verify_archive
    from ikreport.store.archive import Archive
    from ikreport.store.validated import Validated

    with one_pass():
        verify_archive(Archive.open(archive_dir), validated=Validated(cache / "validated"))
    for name, value, detail, goal in verify_timings(archive_dir, cache, repeat):
        print(f"{name:26} {value:>10}   {detail:52} goal {goal}")


if __name__ == "__main__":
    main()
