"""A kernel's DRAM throughput as a share of a measured peak says when the two numbers come from
different machines of the GPU model (issue 14 item 12), and not when one machine made both."""

from __future__ import annotations

from conftest import NCU
from ikreport.kinds.engine import claims_for
from ikreport.kinds.peak_bandwidth import CAVEAT_OTHER_MACHINE, same_machine
from ikreport.store.archive import Archive
from ikreport.store.recordset import RecordSet, load as load_records
from test_collect import env  # noqa: F401 - fixtures

# the nsightful Numba copy: 196.5 GB/s of DRAM traffic in its first launch
COPY = NCU / "ncu_details_nsightful_copy_blocked_base_units.csv"
BABEL_T4 = ("BabelStream\nVersion: 4.0\nImplementation: CUDA\nRunning kernels 100 times\nPrecision: double\n"
            "Array size: 268.4 MB (=0.3 GB)\nTotal size: 805.3 MB (=0.8 GB)\nUsing CUDA device Tesla T4\n"
            "Driver: 11040\nFunction    MBytes/sec  Min (sec)   Max         Average     \n"
            "Copy        250000.000  0.00215     0.00220     0.00217     \n")


def _claim(arch, profile: str) -> object:
    records = load_records(Archive.open(arch))
    [claim] = [c for c in claims_for(profile, records.records[profile], records) if c.rule == "kernel-of-measured-peak"]
    return claim


def _id(result) -> str:
    assert result.exit_code == 0, result.output
    return result.stdout.strip().splitlines()[-1]


def test_an_imported_profile_and_an_imported_peak_are_two_machines(tmp_path, env, run):
    arch = tmp_path / "arch"
    babel = tmp_path / "t4.txt"
    babel.write_text(BABEL_T4)
    profile = _id(run("collect", "ncu", "--from-csv", COPY, "-a", arch, "--gpu", "Tesla T4"))
    peak = _id(run("collect", "bandwidth", "--from-babelstream", babel, "-a", arch))
    claim = _claim(arch, profile)
    assert claim.cites == (profile, peak)
    assert claim.text.endswith("196.5 GB/s to and from DRAM, 78.6% of the measured peak of 250.0 GB/s on this GPU "
                               "model (first launch).")
    assert CAVEAT_OTHER_MACHINE in claim.caveats


def test_one_machine_is_shown_by_a_shared_environment_record_or_gpu_uuid():
    def env_record(*uuids: str) -> dict:
        return {"kind": "environment", "data": {"gpus": [{"uuid": u} for u in uuids]}}

    records = RecordSet.of({
        "env-a": env_record("GPU-1"), "env-b": env_record("GPU-2", "GPU-1"), "env-c": env_record("GPU-3"),
        "peak-a": {"kind": "peak-bandwidth", "environment": "env-a"},
        "peak-b": {"kind": "peak-bandwidth", "environment": "env-b"},
        "peak-none": {"kind": "peak-bandwidth", "environment": None},
    })
    assert same_machine({"environment": "env-a"}, "peak-a", records)  # the same snapshot
    assert same_machine({"environment": "env-a"}, "peak-b", records)  # another snapshot naming the GPU's UUID
    assert not same_machine({"environment": "env-c"}, "peak-b", records)
    assert not same_machine({"environment": None}, "peak-a", records)  # an import says nothing of its machine
    assert not same_machine({"environment": "env-a"}, "peak-none", records)


def test_a_later_run_that_failed_validation_or_ran_under_a_debugger_is_not_the_peak(tmp_path, env, run, monkeypatch):
    """The latest peak-bandwidth record of the model was taken whatever it was: a run whose own
    validation failed, or one under cuda-gdb, whose pages say their figures are not the GPU's
    best, became the peak kernels were shown as a share of (a review helper found both)."""
    arch = tmp_path / "arch"
    profile = _id(run("collect", "ncu", "--from-csv", COPY, "-a", arch, "--gpu", "Tesla T4"))
    clean = tmp_path / "clean.txt"
    clean.write_text(BABEL_T4)
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1796169600")
    peak = _id(run("collect", "bandwidth", "--from-babelstream", clean, "-a", arch))
    failed, debugged = tmp_path / "failed.txt", tmp_path / "gdb.txt"
    failed.write_text(BABEL_T4.replace("Driver: 11040\n", "Driver: 11040\nValidation failed on sum. Error 2.4e-06\n")
                      .replace("250000.000  0.00215     0.00220     0.00217", "400000.000  0.001342    0.00140     0.00137"))
    debugged.write_text("NVIDIA (R) cuda-gdb 12.9\n(cuda-gdb) run\n"
                        + BABEL_T4.replace("250000.000  0.00215     0.00220     0.00217", "120000.000  0.004473    0.00450     0.00449")
                        + "[Inferior 1 (process 7) exited normally]\n")
    for n, bad in enumerate((failed, debugged), start=1):
        monkeypatch.setenv("SOURCE_DATE_EPOCH", str(1796169600 + n * 86400))  # each later than the clean run
        _id(run("collect", "bandwidth", "--from-babelstream", bad, "-a", arch))
        claim = _claim(arch, profile)
        assert claim.cites == (profile, peak), bad.name
        assert "of the measured peak of 250.0 GB/s" in claim.text


def test_the_caveat_says_where_the_kernel_s_dram_rate_came_from(tmp_path, env, run):
    """It said 'bytes read + written over the kernel's duration' of a rate ncu printed itself (a
    review helper found it). The nsightful copy's export prints its DRAM rate; the learningnote
    export gives bytes and cycles, from which the rate is derived."""
    from ikreport.kinds.ncu_profile.claims import CAVEAT_OF_PEAK, CAVEAT_OF_PEAK_PRINTED

    arch = tmp_path / "arch"
    babel = tmp_path / "t4.txt"
    babel.write_text(BABEL_T4)
    printed = _id(run("collect", "ncu", "--from-csv", COPY, "-a", arch, "--gpu", "Tesla T4"))
    derived = _id(run("collect", "ncu", "--from-csv", NCU / "ncu_details_learningnote_a100pcie_smsp_cycles_printfp.csv",
                      "-a", arch, "--gpu", "Tesla T4"))
    _id(run("collect", "bandwidth", "--from-babelstream", babel, "-a", arch))
    records = load_records(Archive.open(arch))
    for profile, caveat, not_it in ((printed, CAVEAT_OF_PEAK_PRINTED, CAVEAT_OF_PEAK), (derived, CAVEAT_OF_PEAK, CAVEAT_OF_PEAK_PRINTED)):
        claims = [c for c in claims_for(profile, records.records[profile], records) if c.rule == "kernel-of-measured-peak"]
        assert claims and all(caveat in c.caveats and not_it not in c.caveats for c in claims), profile
