"""A kernel's memory side filled from a measured peak (issue 14 item 1): when the export has no
memory throughput % but has DRAM bytes/s, and the archive holds a peak-bandwidth record of the
same GPU model, the bound is judged by DRAM bytes/s over that peak, the claim says so and cites
both records, and the pages' labels follow the same rule. A real export (the llm-perf-opt
Memory Workload Analysis section, GB/s and no %) and small cases written here."""

from __future__ import annotations

from pathlib import Path

from conftest import NCU
from ikreport.kinds.engine import claims_for
from ikreport.kinds.ncu_profile.measured_peak import CAVEAT_MEASURED_FILL, measured_fill, memory_pct
from ikreport.kinds.ncu_profile.claims import kernel_label
from ikreport.kinds.peak_bandwidth import CAVEAT_OTHER_MACHINE
from ikreport.store.archive import Archive
from ikreport.store.recordset import load as load_records
from test_collect import env  # noqa: F401 - fixtures

# llm-perf-opt's cuBLAS GEMV, its Memory Workload Analysis section alone: 345.14 Gbyte/s, no memory % and no SM %
MWA = NCU / "ncu_details_llmperfopt_k0001_section_memoryworkload.csv"
GPU = "NVIDIA GeForce RTX 5090"
HEADER = '"ID","Kernel Name","Section Name","Metric Name","Metric Unit","Metric Value"'


def babelstream(device: str, copy_mbs: str) -> str:
    """BabelStream 4.0 output as it prints it: only the Copy row is needed for the peak."""
    return ("BabelStream\nVersion: 4.0\nImplementation: CUDA\nRunning kernels 100 times\nPrecision: double\n"
            "Array size: 268.4 MB (=0.3 GB)\nTotal size: 805.3 MB (=0.8 GB)\n"
            f"Using CUDA device {device}\nDriver: 12080\nFunction    MBytes/sec  Min (sec)   Max         Average     \n"
            f"Copy        {copy_mbs} 0.00034     0.00035     0.00034     \n")


def saxpy(tmp_path) -> Path:
    """A details export of one kernel with SM % and DRAM GB/s but no memory %."""
    export = tmp_path / "saxpy.csv"
    export.write_text("\n".join([
        HEADER,
        '"0","saxpy(float *)","GPU Speed Of Light Throughput","Duration","usecond","10.00"',
        '"0","saxpy(float *)","GPU Speed Of Light Throughput","Compute (SM) Throughput","%","22.30"',
        '"0","saxpy(float *)","Memory Workload Analysis","Memory Throughput","Gbyte/s","1,440.00"',
    ]) + "\n")
    return export


def _id(result) -> str:
    assert result.exit_code == 0, result.output
    return result.stdout.strip().splitlines()[-1]


def _archive(run, tmp_path, export, device: str | None = GPU, copy_mbs: str = "1600000.000") -> tuple:
    arch = tmp_path / "arch"
    profile = _id(run("collect", "ncu", "--from-csv", export, "-a", arch, "--gpu", GPU))
    peak = None
    if device:
        babel = tmp_path / "babel.txt"
        babel.write_text(babelstream(device, copy_mbs))
        peak = _id(run("collect", "bandwidth", "--from-babelstream", babel, "-a", arch))
    records = load_records(Archive.open(arch))
    return records, profile, peak


def _bound(records, profile):
    return [c for c in claims_for(profile, records.records[profile], records) if c.rule == "kernel-bound"]


def test_a_real_export_with_gbs_and_no_percent_is_filled_from_the_measured_peak(tmp_path, env, run):
    records, profile, peak = _archive(run, tmp_path, MWA)
    [claim] = _bound(records, profile)
    # 345.1 GB/s (the record's rounding of 345.14) over BabelStream's Copy 1,600,000 MB/s
    assert claim.text == ("kernel<…>: DRAM 345.1 GB/s = 21.6% of the measured peak of 1.60 TB/s on this GPU "
                          "model; SM throughput not captured, so no bound is named (first launch).")
    assert claim.cites == (profile, peak)
    assert CAVEAT_MEASURED_FILL in claim.caveats and CAVEAT_OTHER_MACHINE in claim.caveats
    # both records' limitations show: the import's and the BabelStream record's own
    assert set(records.limitations([profile])) <= set(claim.limitations)
    assert set(records.limitations([peak])) <= set(claim.limitations)


def test_without_a_peak_of_that_model_nothing_is_filled(tmp_path, env, run):
    for device in (None, "Tesla T4"):
        records, profile, _ = _archive(run, tmp_path / str(device), MWA, device)
        # neither side of the speed-of-light pair: no bound claim at all, and no label
        assert _bound(records, profile) == []
        data = records.records[profile]["data"]
        assert kernel_label(data, data["kernels"][0]) == ("unknown", 1, 1)


def test_with_sm_in_the_export_the_filled_side_names_a_bound(tmp_path, env, run):
    export = saxpy(tmp_path)
    records, profile, peak = _archive(run, tmp_path, export)
    [claim] = _bound(records, profile)
    assert claim.text == ("saxpy is memory-bound by ncu's SOLBottleneck thresholds: DRAM 1.44 TB/s = 90.0% of the "
                          "measured peak of 1.60 TB/s on this GPU model, SM 22.3% of peak (first launch).")
    assert claim.cites == (profile, peak)
    data = records.records[profile]["data"]
    # the record keeps what the export says (no memory %): the label is made when read, with the peak
    assert data["launches"][0]["memory_pct"] is None
    assert kernel_label(data, data["kernels"][0]) == ("unknown", 1, 1)
    assert kernel_label(data, data["kernels"][0], 1600.0) == ("memory-bound", 1, 1)


def test_the_fill_never_replaces_a_memory_percent_the_export_has():
    launch = {"memory_pct": 61.8, "dram_gbs": 196.5, "sm_pct": 1.3}
    assert measured_fill(launch, 250.0) is None and memory_pct(launch, 250.0) == 61.8
    assert measured_fill({"memory_pct": None, "dram_gbs": None}, 250.0) is None  # no DRAM rate: still unknown
    assert measured_fill({"memory_pct": None, "dram_gbs": 300.0}, None) is None  # no peak: still unknown
    # a kernel measured above a peak taken on another board is said as it is, not capped
    assert measured_fill({"memory_pct": None, "dram_gbs": 300.0}, 250.0) == 120.0


def test_show_labels_a_kernel_as_its_page_does(tmp_path, env, run):
    """`ikreport show` judges a missing memory side against the archive's measured peak of the
    GPU model, as the record's page and claims do, and says so; without a peak of that model
    it says the bound is unknown, as the page does."""
    export = saxpy(tmp_path)
    records, profile, peak = _archive(run, tmp_path / "with", export)
    shown = run("show", profile, "-a", tmp_path / "with" / "arch")
    assert shown.exit_code == 0, shown.output
    [line] = [x for x in shown.stdout.splitlines() if x.strip().endswith("saxpy(float *)")]
    assert "memory-bound" in line.split()
    assert f"over the measured peak 1.60 TB/s ({peak[:12]})" in shown.stdout
    records, profile, _ = _archive(run, tmp_path / "without", export, device="Tesla T4")
    shown = run("show", profile, "-a", tmp_path / "without" / "arch")
    [line] = [x for x in shown.stdout.splitlines() if x.strip().endswith("saxpy(float *)")]
    assert "unknown" in line.split() and "memory-bound" not in line and "measured peak" not in shown.stdout
