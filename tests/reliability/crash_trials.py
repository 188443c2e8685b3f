"""Kill `ikreport collect` and `ikreport build` with SIGKILL at random moments, then check
that nothing was lost or left half-written, and that a re-run completes the work.

    .venv/bin/python tests/reliability/crash_trials.py [--trials 100] [--seed 1]

Per collect trial: `verify` passes (leftover .tmp- files are notes, never records), and a
re-run writes the record. Per build trial: the site folder is still the previous complete
site, byte for byte, and a re-run builds it and removes the killed build's leftovers. Prints a table; exits 1 on any failure.
"""

from __future__ import annotations

import argparse
import filecmp
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from ikreport.store.archive import Archive  # noqa: E402
from ikreport.commands.verify import verify_archive  # noqa: E402

EXPORT = ROOT / "tests" / "fixtures" / "ncu" / "ncu_raw_roofline_decodebench_b200_16kernels_preamble.csv"
IKREPORT = [sys.executable, "-m", "ikreport"]


def tree(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def same_tree(a: Path, b: Path) -> bool:
    return tree(a) == tree(b) and all(filecmp.cmp(a / f, b / f, shallow=False) for f in tree(a))


def killed(argv: list[str], delay: float) -> bool:
    """Run argv, SIGKILL it after ``delay`` seconds; True when it was still running then."""
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        process.wait(timeout=delay)
        return False
    except subprocess.TimeoutExpired:
        process.send_signal(signal.SIGKILL)
        process.wait()
        return True


def collect_trial(work: Path, delay: float) -> list[str]:
    archive = work / "archive"
    shutil.rmtree(archive, ignore_errors=True)
    argv = [*IKREPORT, "collect", "ncu", "--from-csv", str(EXPORT), "-a", str(archive), "--gpu", "NVIDIA B200"]
    killed(argv, delay)
    failures = []
    if archive.is_dir():
        failures += [f"after kill: {p}" for p in verify_archive(Archive.open(archive))]
    rerun = subprocess.run(argv, capture_output=True, text=True)
    if rerun.returncode != 0:
        return failures + [f"re-run failed: {rerun.stderr.strip()}"]
    record_id = rerun.stdout.strip().splitlines()[-1]
    store = Archive.open(archive)
    failures += [f"after re-run: {p}" for p in verify_archive(store)]
    if record_id not in store.record_ids():
        failures.append(f"re-run printed {record_id[:12]} but the record is not there")
    return failures


def build_trial(work: Path, archive: Path, good: Path, delay: float) -> list[str]:
    site = work / "site"
    if not site.exists():
        shutil.copytree(good, site)
    argv = [*IKREPORT, "build", str(archive), "-o", str(site), "--cache-dir", str(work / "cache")]
    killed(argv, delay)
    failures = []
    if not site.is_dir() or not same_tree(site, good):
        failures.append("after kill: the site folder is not the previous complete site")
    rerun = subprocess.run(argv, capture_output=True, text=True)
    if rerun.returncode != 0:
        failures.append(f"re-run failed: {rerun.stderr.strip()}")
    elif not same_tree(site, good):
        failures.append("after re-run: the site differs from a clean build")
    else:  # the re-run removes what the killed build left beside the site
        failures += [f"after re-run: {p.name} left beside the site" for p in work.glob(".site.*")]
    return failures


def run(trials: int, seed: int, out=print) -> int:
    rng = random.Random(seed)
    failures: list[str] = []
    kills = {"collect": 0, "build": 0}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        archive = work / "sample"
        shutil.copytree(ROOT / "sample_evidence", archive)
        good = work / "good"
        subprocess.run([*IKREPORT, "build", str(archive), "-o", str(good), "--cache-dir", str(work / "good-cache")],
                       check=True, capture_output=True)
        t = time.perf_counter()
        subprocess.run([*IKREPORT, "collect", "ncu", "--from-csv", str(EXPORT), "-a", str(work / "timing")],
                       check=True, capture_output=True)
        span = time.perf_counter() - t
        for i in range(trials):
            kind = "collect" if i % 2 == 0 else "build"
            delay = rng.uniform(0.05, span * (1.2 if kind == "collect" else 3.0))
            found = collect_trial(work, delay) if kind == "collect" else build_trial(work, archive, good, delay)
            kills[kind] += 1
            failures += [f"trial {i} ({kind}, killed at {delay:.2f} s): {f}" for f in found]
    out(f"{'trials':28} {trials}")
    out(f"{'collect killed and re-run':28} {kills['collect']}")
    out(f"{'build killed and re-run':28} {kills['build']}")
    out(f"{'failures':28} {len(failures)}")
    for f in failures:
        out(f"  {f}")
    return len(failures)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    sys.exit(1 if run(args.trials, args.seed) else 0)


if __name__ == "__main__":
    main()
