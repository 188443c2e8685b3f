"""A profile is folded from blocks of launches as pyarrow's streaming reader yields them: the
records and blobs an import stores are the same bytes whatever the blocks (one row each, a
few rows, or the whole page at once), streamed from the file or read whole, and a bad value
is refused naming the same line."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from conftest import NCU
from ikreport.analysis.ncu import raw as ncu_raw
from ikreport.analysis.ncu.read import read_exports
from ikreport.analysis.ncu.clocks import Tally
from ikreport.analysis.ncu.fold import LONGEST_LAUNCHES, Fold
from ikreport.analysis.ncu.summary import derive
from ikreport.analysis.ncu.table import LaunchTable
from ikreport.collect import big_export, ncu_import
from ikreport.collect.context import Context
from ikreport.errors import ImplausibleValueError, TruncatedExportError
from ikreport.store.archive import Archive

B200 = NCU / "ncu_raw_roofline_decodebench_b200_16kernels_preamble.csv"
GTX = NCU / "ncu_raw_pmpp_06_gtx1650ti_preamble.csv"
ONE_BLOCK = 1 << 30
# B200 rows are about 3 KB: one row a block, about three, and pyarrow's blocks of the import
BLOCKS = [4096, 10_000, ncu_raw.BLOCK_BYTES]


def varied(tmp_path: Path, n: int, bad_row: int | None = None) -> Path:
    """The real B200 export's rows repeated to ``n`` launches (IDs renumbered), each duration
    scaled differently, some of them n/a, kernel names in variants (so kernels first launch
    deep in the file), the way bench/inputs.py makes its exports; ``bad_row``: that launch's
    duration made negative."""
    lines = B200.read_text("utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith('"ID",'))
    header = next(csv.reader([lines[start]]))
    rows = list(csv.reader(lines[start + 2:]))
    duration, name = header.index("gpu__time_duration.sum"), header.index("Kernel Name")
    out = io.StringIO()
    writer = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n")
    for i in range(n):
        row = list(rows[i % len(rows)])
        row[0] = str(i)
        scale = 0.5 + (i * 7919 % 1000) / 1000
        row[duration] = "n/a" if i % 97 == 5 else f"{float(row[duration]) * scale:.2f}"
        if i == bad_row:
            row[duration] = "-" + row[duration]
        row[name] += f"_v{i * 31 % 9}" if i % 3 else ""
        writer.writerow(row)
    path = tmp_path / f"varied_{n}_{bad_row}.csv"
    path.write_text("\n".join(lines[:start + 2]) + "\n" + out.getvalue(), "utf-8")
    return path


def imported(tmp_path: Path, paths: list[Path], monkeypatch, block: int, streamed: bool) -> dict:
    """The record (its bytes) and every blob an import stores, read in blocks of ``block``
    bytes, the export streamed from its file or read whole."""
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1796169600")
    monkeypatch.setattr(ncu_raw, "BLOCK_BYTES", block)
    monkeypatch.setattr(ncu_import, "stream_export",
                        lambda p, **kw: big_export.stream_export(p, **kw, threshold=0 if streamed else 1 << 40))
    archive = Archive.create(tmp_path / f"a-{block}-{streamed}-{len(list(tmp_path.iterdir()))}")
    record_id = ncu_import.import_csv(archive, paths, Context(title="t"))
    return {"record": archive.record_bytes(record_id), "blobs": {b: archive.read_blob(b) for b in archive.blob_ids()}}


@pytest.mark.parametrize("streamed", [True, False], ids=["streamed", "read-whole"])
@pytest.mark.parametrize("block", BLOCKS)
@pytest.mark.parametrize("export", ["b200", "gtx1650ti", "b200-varied-700"])
def test_a_profile_folded_in_any_blocks_is_the_one_block_profile_to_the_byte(tmp_path, monkeypatch, export,
                                                                               block, streamed):
    path = {"b200": B200, "gtx1650ti": GTX}.get(export) or varied(tmp_path, 700)
    whole = imported(tmp_path, [path], monkeypatch, ONE_BLOCK, streamed=False)
    assert imported(tmp_path, [path], monkeypatch, block, streamed) == whole
    if export == "b200-varied-700":  # past the inline launches: the launch CSV, the longest 50
        assert len(whole["blobs"]) == 2 and b'"launches_complete":false' in whole["record"]


def details_of(raw: Path) -> bytes:
    """A details page of the same run as the raw export ``raw``: each launch's ID and kernel
    name with one metric the raw page lacks (so the merge fills it)."""
    lines = raw.read_text("utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith('"ID",'))
    rows = list(csv.DictReader(lines[start:]))[1:]
    out = io.StringIO()
    writer = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n")
    writer.writerow(["ID", "Kernel Name", "Section Name", "Metric Name", "Metric Unit", "Metric Value"])
    for i, row in enumerate(rows):
        writer.writerow([row["ID"], row["Kernel Name"], "Occupancy", "Block Limit Barriers", "block", str(8 + i % 3)])
    return out.getvalue().encode("utf-8")


@pytest.mark.parametrize("block", [4096, ONE_BLOCK])
def test_raw_and_details_merged_are_the_same_in_any_blocks(tmp_path, monkeypatch, block):
    raw = varied(tmp_path, 40)
    details = tmp_path / "details.csv"
    details.write_bytes(details_of(raw))
    merged = imported(tmp_path, [raw, details], monkeypatch, block, streamed=True)
    assert merged == imported(tmp_path, [raw, details], monkeypatch, ONE_BLOCK, streamed=False)
    assert b"ncu-details-csv" in merged["record"] and b"ncu-raw-csv" in merged["record"]


@pytest.mark.parametrize("streamed", [True, False], ids=["streamed", "read-whole"])
@pytest.mark.parametrize("block", [4096, ONE_BLOCK])
def test_a_bad_value_deep_in_a_streamed_export_is_refused_naming_its_line(tmp_path, monkeypatch, block, streamed):
    path = varied(tmp_path, 60, bad_row=57)
    line = 1 + path.read_text("utf-8").splitlines().index(next(
        line for line in path.read_text("utf-8").splitlines() if line.startswith('"57",')))
    with pytest.raises(ImplausibleValueError) as caught:
        imported(tmp_path, [path], monkeypatch, block, streamed)
    assert str(caught.value).startswith(f"{path}:{line}: duration_ns is -")
    assert not list(Path(tmp_path).glob("a-*/blobs/*/*"))  # nothing written


@pytest.mark.parametrize("streamed", [True, False], ids=["streamed", "read-whole"])
@pytest.mark.parametrize("block", [4096, ONE_BLOCK])
def test_a_short_row_deep_in_an_export_is_refused_naming_its_line(tmp_path, monkeypatch, block, streamed):
    lines = varied(tmp_path, 60).read_text("utf-8").split("\n")
    at = next(i for i, line in enumerate(lines) if line.startswith('"57",'))
    lines[at] = lines[at][:lines[at].rindex(',"')]  # its last field lost: quotes still close
    path = tmp_path / "short.csv"
    path.write_text("\n".join(lines), "utf-8")
    with pytest.raises(TruncatedExportError) as caught:
        imported(tmp_path, [path], monkeypatch, block, streamed)
    assert str(caught.value).startswith(f"{path}:{at + 1}: a row of ")


def test_the_launches_a_record_keeps_are_the_first_and_the_longest(tmp_path, monkeypatch):
    monkeypatch.setattr(ncu_raw, "BLOCK_BYTES", 4096)
    path = varied(tmp_path, 700)
    profile = read_exports({str(path): path.read_bytes()})
    durations = [float(r["duration_us"]) if r["duration_us"] else -1.0
                 for r in csv.DictReader(io.StringIO(profile.csv().decode("utf-8")))]
    by_sort = sorted(range(len(durations)), key=lambda i: (-durations[i], i))[:LONGEST_LAUNCHES]
    assert profile.longest(LONGEST_LAUNCHES) == sorted(by_sort)
    assert sorted(profile.kept) == sorted(by_sort)  # nothing else kept: the record holds these alone
    assert [profile.launch(i)["index"] for i in by_sort] == by_sort


def blocks_of(kernels: list[str], durations: list[float], cuts: list[int]) -> list[LaunchTable]:
    """A table of launches (kernel names and durations in ns) cut into blocks at ``cuts``."""
    edges = [0, *sorted({c % (len(kernels) + 1) for c in cuts}), len(kernels)]
    return [LaunchTable(ids=[str(i) for i in range(a, b)], kernels=kernels[a:b], text={},
                        fields={"duration_ns": np.array(durations[a:b], dtype=float)})
            for a, b in zip(edges, edges[1:])]


# durations in ns with full mantissas (n / 7), whose sums round differently in another order
DURATIONS = st.integers(1, 10**15).map(lambda n: n / 7) | st.just(float("nan"))


@settings(max_examples=80, deadline=None)
@example([("a", 1e9 / 7), ("a", 1e9 / 7), ("a", 1e9)], [1])  # x + (y + z) is not (x + y) + z here
@given(st.lists(st.tuples(st.sampled_from("abc"), DURATIONS), min_size=1, max_size=80),
       st.lists(st.integers(0, 80), max_size=6))
def test_kernel_sums_folded_block_by_block_are_the_whole_columns_sums(launches, cuts):
    kernels, durations = [k for k, _ in launches], [d for _, d in launches]
    fold = Fold()
    for block in blocks_of(kernels, durations, cuts):
        fold.add(block, derive(block))
    profile = fold.profile({"x.csv": "raw"})
    [whole] = blocks_of(kernels, durations, [])
    d = derive(whole)
    codes = {k: c for c, k in enumerate(dict.fromkeys(kernels))}
    code = np.array([codes[k] for k in kernels])
    times = np.where(np.isnan(d.duration_us), 0.0, d.duration_us)
    totals = np.bincount(code, weights=times)  # as the whole-table summary added them
    assert fold.kernels.total.tobytes() == totals.tobytes()  # to the last bit, before any rounding
    for kernel in profile.kernels:
        has = kernel["total_us"] is not None
        assert kernel["total_us"] == (round(float(totals[codes[kernel["kernel"]]]), 3) if has else None)
        assert kernel["first_launch"]["index"] == kernels.index(kernel["kernel"])
    timed = ~np.isnan(d.duration_us)
    assert profile.profiled_time_us == (round(float(np.nansum(d.duration_us)), 3) if timed.any() else None)


@given(st.lists(st.sampled_from([0.0, -1.0, float("nan"), 1.5e9, 1.59e9, 1.6e9, 2.1e9]) | st.floats(1, 1e10),
                max_size=40),
       st.lists(st.integers(0, 40), max_size=4))
def test_a_clock_median_from_counted_values_is_numpys_median(values, cuts):
    tally = Tally()
    edges = [0, *sorted({c % (len(values) + 1) for c in cuts}), len(values)]
    for a, b in zip(edges, edges[1:]):
        tally.add(np.array(values[a:b], dtype=float))
    known = np.array([v for v in values if v > 0])
    assert tally.median() == (float(np.median(known)) if len(known) else None)
    assert tally.count == len(known)
