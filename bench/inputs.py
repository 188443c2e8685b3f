"""Generate realistic benchmark inputs from the real fixtures (never committed; made on demand).

big_raw_export(n): the B200 raw export's own preamble, header and units rows, then its 16
launch rows repeated (IDs renumbered) to n launches, so every quirk of the real file is kept.
"""

from __future__ import annotations

import csv
import filecmp
import io
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
B200 = ROOT / "tests" / "fixtures" / "ncu" / "ncu_raw_roofline_decodebench_b200_16kernels_preamble.csv"
WORK = ROOT / "bench" / "work"


def big_raw_export(n: int, path: Path | None = None) -> Path:
    path = path or WORK / f"raw_{n}.csv"
    if path.exists():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = B200.read_text("utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith('"ID",'))
    preamble, header, units, rows = lines[:start], lines[start], lines[start + 1], lines[start + 2:]
    parsed = list(csv.reader(rows))
    with path.open("w", encoding="utf-8", newline="") as f:
        f.write("\n".join([*preamble, header, units]) + "\n")
        out = io.StringIO()
        writer = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n")
        for i in range(n):
            row = list(parsed[i % len(parsed)])
            row[0] = str(i)
            writer.writerow(row)
            if i % 1000 == 999:
                f.write(out.getvalue())
                out.seek(0)
                out.truncate()
        f.write(out.getvalue())
    return path


def big_archive(profiles: int, launches: int, path: Path | None = None) -> Path:
    """An archive of ``profiles`` ncu-profile records of ``launches`` launches each (made from
    the real B200 export, with kernel names spread over 25 variants and durations scaled per
    profile so no two records or charts are alike), plus one environment and one
    peak-bandwidth record for the B200. Made through the importer's own functions."""
    import os

    from ikreport.store import records
    from ikreport.analysis.ncu import read_page, summarise
    from ikreport.store.archive import Archive
    from ikreport.collect.context import Context
    from ikreport.collect.env import write_env_record
    from ikreport.collect.ncu_import import LIMIT_IMPORTED, launch_table_source, profile_limitations
    from ikreport.store.profile_data import profile_data

    path = path or WORK / f"archive_{profiles}x{launches}"
    if (path / "records").is_dir():
        return path
    os.environ.setdefault("SOURCE_DATE_EPOCH", "1796169600")
    archive = Archive.create(path)
    smi = ROOT / "tests" / "fixtures" / "nvidia-smi" / "smi_table_evaldataset_h100x2.txt"
    from ikreport.analysis.nvidia_smi import parse_nvidia_smi

    env = write_env_record(archive, smi.read_bytes(), parse_nvidia_smi(smi.read_text(), "smi"),
                           Context(title="Bench environment", limitations=("Benchmark input.",)), imported="smi.txt")
    peak = records.new_record(
        "peak-bandwidth", "Bench peak bandwidth (B200)", collected_at="2026-12-02T00:00:00Z",
        subject={"gpu": "NVIDIA B200"}, method={"tool": "bench", "tool_version": None, "command": None,
                                                "options": {}, "how": "generated for the benchmark"},
        data={"peak_gbs": 6500.0, "peak_basis": "generated", "max_gbs": 6600.0, "convention": "read+write",
              "samples": []},
        limitations=["Generated for the benchmark: not a measurement."], environment=env, cites=[env])
    archive.put_record(peak)
    page, table, _ = read_page(big_raw_export(launches).read_bytes(), "b200.csv")
    table.kernels = [f"{k}_v{i % 25}" for i, k in enumerate(table.kernels)]
    original = table.fields["duration_ns"].copy()
    for n in range(profiles):
        scale = 1.0 + n / profiles
        table.fields["duration_ns"] = original * scale
        profile = summarise(table, {"b200.csv": page})
        sources = launch_table_source(archive, profile)
        record = records.new_record(
            "ncu-profile", f"Bench profile {n:04d}", collected_at="2026-12-02T00:00:00Z",
            subject={"gpu": "NVIDIA B200", "workload": f"bench {n}"},
            method={"tool": "ncu", "tool_version": None, "command": None, "options": {}, "how": "generated"},
            data=profile_data(profile), sources=sources, environment=env, cites=[env],
            limitations=[x for x in profile_limitations(profile, "NVIDIA B200") if x != LIMIT_IMPORTED]
            + ["Generated for the benchmark from a real B200 export: not a measurement."])
        archive.put_record(record)
    return path


def tree_equal(a: Path, b: Path) -> bool:
    """Whether two folders hold the same files, byte for byte (two builds of one site)."""
    left = sorted(str(p.relative_to(a)) for p in a.rglob("*") if p.is_file())
    right = sorted(str(p.relative_to(b)) for p in b.rglob("*") if p.is_file())
    return left == right and all(filecmp.cmp(a / f, b / f, shallow=False) for f in left)


def linked_archive(source: Path, to: Path) -> Path:
    """A copy of the archive ``source`` at ``to``, its files hard links (records are
    read-only), made a settled while before the build that follows: linking gives every file a
    new ctime, and a build re-hashes a file changed within SETTLED_NS of the build that hashed
    it, so a fresh copy would be hashed again by its first rebuild, as no archive written
    before it is built would be."""
    import os
    import shutil
    import time

    from ikreport.store.stat_index import SETTLED_NS

    shutil.copytree(source, to, copy_function=os.link)
    time.sleep(SETTLED_NS / 1e9 + 0.1)
    return to


def one_more_profile(archive: object, n: int) -> None:
    """Import the B200 export into ``archive`` as one more profile (the ``n``-th), then sync the
    disk, so that what the builds wrote is not written back during the rebuild being timed."""
    import os

    from ikreport.collect.context import Context
    from ikreport.collect.ncu_import import import_csv

    import_csv(archive, [B200], Context(title=f"one more profile {n}", gpu="NVIDIA B200"))  # type: ignore[arg-type]
    os.sync()
