"""Generate realistic benchmark inputs from the real fixtures (never committed; made on demand).

big_raw_export(n): a raw export of n launches made from the real B200 one, as below.

cli_archive(profiles, launches): the archive a user gets from ``collect ncu --from-csv``, one
export at a time through the importer the command calls (the raw export kept as a blob). The
exports are made from four real ones (two raw pages, two details pages; four GPUs, four kernel
sets), each of between half and one and a half times ``launches`` launches, every launch's
timing cells (times, cycles, rates, percentages) varied by up to 3%, so no two exports are
alike and they compress as real ones do, not as repeated rows would. Profiles of one GPU and
workload form a series whose times step up by 20% for its middle third, as a regression and its
fix would: most neighbours in a series take the same time, two differ.
"""

from __future__ import annotations

import csv
import filecmp
import random
import re
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

ROOT = Path(__file__).resolve().parents[1]
B200 = ROOT / "tests" / "fixtures" / "ncu" / "ncu_raw_roofline_decodebench_b200_16kernels_preamble.csv"
WORK = ROOT / "bench" / "work"
FIXTURES = ROOT / "tests" / "fixtures" / "ncu"
# the cells that differ from one launch of a kernel to the next; byte and instruction counts
# of the same kernel on the same input do not
TIMING = re.compile(r"time|cycles|per_second|pct|throughput|duration|elapsed|active|stall|issue|ratio|rate", re.I)
NUMBER = re.compile(r"^-?[0-9][0-9,]*(?:\.[0-9]+)?$")


def big_raw_export(n: int, path: Path | None = None) -> Path:
    """A raw export of ``n`` launches made from the real B200 one as cli_archive makes its
    exports (its preamble, header and units rows, then its launch rows in turn, renumbered,
    timing cells varied), written once into bench/work."""
    path = path or WORK / f"raw_{n}.csv"
    if path.exists():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".part")
    with partial.open("w", encoding="utf-8", newline="") as f:
        export_makers()[0].write(f, n, random.Random(n), 1.0)
    partial.rename(path)
    return path


def _varied(cell: str, rnd: random.Random, scale: float, percent: bool) -> str:
    """A timing cell scaled and varied by up to 3% (a percentage only lowered, never past
    100), printed as the export prints it (its decimals and thousands separators kept)."""
    if not NUMBER.match(cell) or cell in ("0", "0.00"):
        return cell
    decimals = len(cell.split(".")[1]) if "." in cell else 0
    factor = rnd.uniform(0.94, 1.0) if percent else scale * rnd.uniform(0.97, 1.03)
    value = float(cell.replace(",", "")) * factor
    return f"{value:{',' if ',' in cell else ''}.{decimals}f}"


class _Raw:
    """A raw page (one row per launch): its preamble, header and units rows, then its launch
    rows in turn, renumbered, with the timing columns varied."""

    def __init__(self, name: str, gpu: str | None) -> None:
        lines = (FIXTURES / name).read_text("utf-8").splitlines()
        start = next(i for i, line in enumerate(lines) if line.startswith('"ID",'))
        self.head = "\n".join(lines[: start + 2]) + "\n"
        names = next(csv.reader([lines[start]]))
        self.rows = list(csv.reader(lines[start + 2:]))
        units = next(csv.reader([lines[start + 1]]))
        self.timing = [(i, units[i] == "%") for i, n in enumerate(names)
                       if i > 10 and TIMING.search(n) and not n.startswith(("device__", "launch__"))]
        self.gpu = gpu

    def write(self, f: TextIO, launches: int, rnd: random.Random, scale: float) -> None:
        f.write(self.head)
        out = csv.writer(f, quoting=csv.QUOTE_ALL, lineterminator="\n")
        for i in range(launches):
            row = list(self.rows[i % len(self.rows)])
            row[0] = str(i)
            for c, percent in self.timing:
                row[c] = _varied(row[c], rnd, scale, percent)
            out.writerow(row)


class _Details:
    """A details page (one row per launch and metric): its header, then its launches' rows in
    turn, renumbered, with the timing metrics' values varied."""

    def __init__(self, name: str, gpu: str | None) -> None:
        lines = (FIXTURES / name).read_text("utf-8").splitlines()
        start = next(i for i, line in enumerate(lines) if line.startswith('"ID",'))
        self.head = "\n".join(lines[: start + 1]) + "\n"
        names = next(csv.reader([lines[start]]))
        self.value, self.metric = names.index("Metric Value"), names.index("Metric Name")
        self.unit = names.index("Metric Unit")
        launches: dict[str, list[list[str]]] = {}
        for row in csv.reader(lines[start + 1:]):
            if row and row[0].isdigit():
                launches.setdefault(row[0], []).append(row)
        self.launches = list(launches.values())
        self.gpu = gpu

    def write(self, f: TextIO, launches: int, rnd: random.Random, scale: float) -> None:
        f.write(self.head)
        out = csv.writer(f, quoting=csv.QUOTE_ALL, lineterminator="\n")
        for i in range(launches):
            for row in self.launches[i % len(self.launches)]:
                row = list(row)
                row[0] = str(i)
                if TIMING.search(row[self.metric]) or row[self.metric].endswith(("Duration", "Frequency")):
                    row[self.value] = _varied(row[self.value], rnd, scale, row[self.unit] == "%")
                out.writerow(row)


def export_makers() -> list[_Raw | _Details]:
    """The four real exports the bench's archives are made from (GPU named where the export
    does not name it, as a user would with --gpu)."""
    return [
        _Raw("ncu_raw_roofline_decodebench_b200_16kernels_preamble.csv", None),
        _Raw("ncu_raw_pmpp_06_gtx1650ti_preamble.csv", None),
        _Details("ncu_details_polyfhe_stallreason_opt_sm89_62kernels.csv", "NVIDIA L4"),
        _Details("ncu_details_xplacer_bfs_v100_2020_kerneltime.csv", "Tesla V100-SXM2-16GB"),
    ]


WORKLOADS = 10  # workloads per source: profiles of one GPU and workload form a history series


def cli_archive(profiles: int, launches: int, path: Path | None = None,
                progress: Callable[[int], None] | None = None) -> Path:
    """An archive of ``profiles`` profiles imported as ``collect ncu --from-csv`` imports them
    (see the module docstring), plus one environment and one peak-bandwidth record made from
    real tool output. Made once into bench/work and kept."""
    import os
    import tempfile

    from ikreport.collect.bandwidth import import_babelstream
    from ikreport.collect.context import Context
    from ikreport.collect.ncu_import import import_csv
    from ikreport.store.archive import Archive

    path = path or WORK / f"cli_{profiles}x{launches}"
    if (path / "records").is_dir():
        return path
    os.environ.setdefault("SOURCE_DATE_EPOCH", "1796169600")
    building = path.with_name(path.name + ".part")
    archive = Archive.create(building)
    babelstream = ROOT / "tests" / "fixtures" / "bandwidth" / "babelstream_alcfguide_a100_v4.0_trailingspaces_excerpt.txt"
    import_babelstream(archive, babelstream, Context(title="A100 peak bandwidth (BabelStream)"))
    makers = export_makers()
    rnd = random.Random(profiles * 1_000_003 + launches)
    with tempfile.TemporaryDirectory(dir=WORK) as tmp:
        export = Path(tmp) / "export.csv"
        for n in range(profiles):
            maker = makers[n % len(makers)]
            count = rnd.randint(max(1, launches // 2), max(1, launches * 3 // 2))
            with export.open("w", encoding="utf-8", newline="") as f:
                maker.write(f, count, rnd, 1.2 if profiles // 3 <= n < 2 * profiles // 3 else 1.0)
            workload = f"bench workload {(n // len(makers)) % WORKLOADS}"
            import_csv(archive, [export], Context(gpu=maker.gpu, workload=workload, engine="bench"))
            if progress:
                progress(n + 1)
    building.rename(path)
    return path


def tree_equal(a: Path, b: Path) -> bool:
    """Whether two folders hold the same files, byte for byte (two builds of one site)."""
    left = sorted(str(p.relative_to(a)) for p in a.rglob("*") if p.is_file())
    right = sorted(str(p.relative_to(b)) for p in b.rglob("*") if p.is_file())
    return left == right and all(filecmp.cmp(a / f, b / f, shallow=False) for f in left)


def linked_archive(source: Path, to: Path) -> Path:
    """A copy of the archive ``source`` at ``to``, its files hard links (archive files are
    read-only), so that a bench can add records to it."""
    import os
    import shutil

    shutil.copytree(source, to, copy_function=os.link)
    return to


def one_more_profile(archive: object, n: int, in_series: bool = False) -> None:
    """Import one more profile into ``archive`` as ``collect ncu --from-csv`` would: a B200
    export of a thousand launches made as cli_archive makes them, of a workload no profile has
    (``in_series`` False) or of one whose series it joins; then sync the disk, so that what the
    builds wrote is not written back during the rebuild being timed."""
    import os
    import tempfile

    from ikreport.collect.context import Context
    from ikreport.collect.ncu_import import import_csv

    maker = export_makers()[0]  # the B200 raw export: the series of workload 0 are its
    rnd = random.Random(10_000 + n)
    workload = "bench workload 0" if in_series else f"one more profile {n}"
    with tempfile.TemporaryDirectory(dir=WORK) as tmp:
        export = Path(tmp) / "export.csv"
        with export.open("w", encoding="utf-8", newline="") as f:
            maker.write(f, 1000, rnd, 1.0)
        import_csv(archive, [export], Context(gpu=maker.gpu, workload=workload, engine="bench"))  # type: ignore[arg-type]
    os.sync()
