"""What a rebuild after one new record is made of: its time, and each part of ``build_site``'s.

    .venv/bin/python bench/bench_rebuild.py [--profiles 1000] [--launches 1000] [--rebuilds 7]

A link copy of the bench archive (bench_build.py's) is built once; then each rebuild follows
one more imported profile, the disk synced first, in this process, as ``ikreport build`` runs
(the collector paused). Each function ``build_site`` calls is timed by name (a phase called
twice adds up, one called inside another counts for the outer one); "(the rest)" is the build's
own loops and what no phase covers, the build's objects freed when it returns among them.
Prints the minimum and median of the rebuilds, and the phases by their minimum.
"""

from __future__ import annotations

import argparse
import collections
import functools
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from inputs import WORK, cli_archive, linked_archive, one_more_profile  # noqa: E402


def timed_phases(module: Any, spent: collections.Counter[str]) -> None:
    """Wrap each function ``module`` imported from ikreport (``build_site`` aside) so that its
    time adds to ``spent``; a phase's time inside another's counts for the outer one only."""
    depth = [0]
    for name, value in list(vars(module).items()):
        if (name in ("build_site", "_build") or isinstance(value, type) or not callable(value)
                or not getattr(value, "__module__", "").startswith("ikreport.")):
            continue

        def timed(*args: Any, __f: Any = value, __name: str = name, **kwargs: Any) -> Any:
            depth[0] += 1
            start = time.perf_counter()
            try:
                return __f(*args, **kwargs)
            finally:
                depth[0] -= 1
                if depth[0] == 0:
                    spent[__name] += time.perf_counter() - start
        setattr(module, name, functools.wraps(value)(timed))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profiles", type=int, default=1000)
    parser.add_argument("--launches", type=int, default=1000)
    parser.add_argument("--rebuilds", type=int, default=7)
    args = parser.parse_args()
    import ikreport.commands.build as build
    from ikreport.cli.main import one_pass
    from ikreport.store.archive import Archive

    spent: collections.Counter[str] = collections.Counter()
    timed_phases(build, spent)
    source = cli_archive(args.profiles, args.launches)
    with tempfile.TemporaryDirectory(dir=WORK) as tmp:
        work = Path(tmp)
        archive = Archive.open(linked_archive(source, work / "archive"))
        with one_pass():
            build.build_site(archive, work / "site", cache_dir=work / "cache")
        totals: list[float] = []
        phases: dict[str, list[float]] = collections.defaultdict(list)
        for n in range(args.rebuilds):
            one_more_profile(archive, n + 1)
            spent.clear()
            start = time.perf_counter()
            with one_pass():
                build.build_site(archive, work / "site", cache_dir=work / "cache")
            totals.append(time.perf_counter() - start)
            for name, seconds in spent.items():
                phases[name].append(seconds)
            phases["(the rest)"].append(totals[-1] - sum(spent.values()))
    print(f"rebuild after one more record: min {min(totals) * 1e3:.0f} ms, median {statistics.median(totals) * 1e3:.0f} ms "
          f"({args.rebuilds} rebuilds, {args.profiles} profiles x {args.launches} launches; {os.cpu_count()} cores)")
    for name, seconds in sorted(phases.items(), key=lambda item: -min(item[1])):
        if min(seconds) >= 0.0005:
            print(f"  {name:24} {min(seconds) * 1e3:6.1f} ms")


if __name__ == "__main__":
    main()
