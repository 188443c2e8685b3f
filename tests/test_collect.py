"""Collectors against stand-in ncu, nvidia-smi and nvcc (tests/standins), which replay real
saved outputs from tests/fixtures and fail the way the real tools fail."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import FIXTURES, ROOT
from ikreport.analysis.nvidia_smi import NvidiaSmiError, parse_nvidia_smi
from ikreport.store.archive import Archive
from ikreport.cli.main import cli
from ikreport.commands.verify import verify_archive

STANDINS = ROOT / "tests" / "standins"
SMI_Q = FIXTURES / "nvidia-smi" / "smi_q_gpukernellab_rtx3060laptop.txt"
SMI_TABLE = FIXTURES / "nvidia-smi" / "smi_table_evaldataset_h100x2.txt"
BABEL = FIXTURES / "bandwidth" / "babelstream_alcfguide_a100_v4.0_trailingspaces_excerpt.txt"
NVB = FIXTURES / "bandwidth" / "nvbandwidth_llmaction_h800x8_v0.2_excerpt.txt"


@pytest.fixture
def env(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", f"{STANDINS}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("IK_STANDIN_LOG", str(tmp_path / "ncu-args.log"))
    monkeypatch.setenv("IK_STANDIN_STATE", str(tmp_path))
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1796169600")
    for var in ("IK_STANDIN_NCU_FAIL", "IK_STANDIN_SMI_FAIL", "IK_STANDIN_SMI_CHANGE", "IK_STANDIN_NVCC_FAIL"):
        monkeypatch.delenv(var, raising=False)
    return monkeypatch


def load(arch: Path, result) -> dict:
    assert result.exit_code == 0, result.output
    return Archive.open(arch).load(result.stdout.strip().splitlines()[-1])


def files(arch: Path) -> list[Path]:
    return [p for p in arch.rglob("*") if p.is_file()] if arch.exists() else []


# -- nvidia-smi ------------------------------------------------------------------------------

def test_nvidia_smi_q_dump():
    parsed = parse_nvidia_smi(SMI_Q.read_text(), "q.txt")
    assert (parsed["driver"], parsed["cuda"]) == ("610.88", "13.3")  # KMD / CUDA UMD, not the deprecated keys
    [gpu] = parsed["gpus"]
    assert gpu["name"] == "NVIDIA GeForce RTX 3060 Laptop GPU"
    assert gpu["uuid"] == "GPU-20606811-3bb2-e6b5-ec74-b477d9c1d1d8"
    assert gpu["vbios"] == "94.06.2f.40.02" and gpu["pci_bus"] == "00000000:01:00.0"
    assert (gpu["sm_clock_mhz"], gpu["max_sm_clock_mhz"], gpu["max_memory_clock_mhz"]) == (210.0, 2100.0, 7001.0)
    assert gpu["memory_total_mib"] == 6144 and gpu["power_limit_w"] == 80.0
    assert gpu["ecc_mode"] is None and gpu["mig_mode"] is None  # "N/A" is unknown, not a value
    assert gpu["driver_model"] == "WDDM"


def test_nvidia_smi_table_with_two_gpus():
    parsed = parse_nvidia_smi(SMI_TABLE.read_text(), "t.txt")
    assert (parsed["driver"], parsed["cuda"]) == ("570.133.20", "12.8")
    assert [g["name"] for g in parsed["gpus"]] == ["NVIDIA H100 80GB HBM3"] * 2
    assert [g["pci_bus"] for g in parsed["gpus"]] == ["00000000:AB:00.0", "00000000:BA:00.0"]
    assert [g["power_limit_w"] for g in parsed["gpus"]] == [700.0, 700.0]
    assert {g["mig_mode"] for g in parsed["gpus"]} == {"Disabled"}
    assert parsed["gpus"][0]["memory_total_mib"] == 81559


@pytest.mark.parametrize("cut,message", [
    (lambda t: "\n".join(t.splitlines()[:40]), "the dump is truncated"),
    (lambda t: "\n".join(t.splitlines()[:10]), "no 'GPU 0000…' section found"),
])
def test_truncated_nvidia_smi_q(cut, message):
    with pytest.raises(NvidiaSmiError, match=message):
        parse_nvidia_smi(cut(SMI_Q.read_text()), "q.txt")


def test_truncated_table_is_refused_and_nothing_written(tmp_path, env, run):
    short = tmp_path / "smi.txt"
    short.write_text("\n".join(SMI_TABLE.read_text().splitlines()[:9]) + "\n")
    result = run("collect", "env", "--from-nvidia-smi", short, "-a", tmp_path / "arch")
    assert result.exit_code == 1
    assert result.stderr == f"Error: {short}:10: GPU 0's block is cut short; the table is truncated\n"
    assert files(tmp_path / "arch") == []


def test_collect_env_from_saved_table(tmp_path, env, run):
    arch = tmp_path / "arch"
    record = load(arch, run("collect", "env", "--from-nvidia-smi", SMI_TABLE, "-a", arch))
    assert record["kind"] == "environment" and record["subject"]["gpu"] == "2x NVIDIA H100 80GB HBM3"
    assert record["data"]["gpu_count"] == 2 and record["data"]["host"] is None
    assert any("default nvidia-smi table" in x for x in record["limitations"])
    assert Archive.open(arch).read_blob(record["sources"][0]["id"]) == SMI_TABLE.read_bytes()


def test_collect_env_live(tmp_path, env, run):
    arch = tmp_path / "arch"
    record = load(arch, run("collect", "env", "-a", arch))
    [gpu] = record["data"]["gpus"]
    assert gpu["compute_capability"] == "8.6"
    assert record["data"]["host"]["python"] and isinstance(record["data"]["packages"], dict)
    assert record["method"]["command"] == ["nvidia-smi", "-q"]
    assert verify_archive(Archive.open(arch)) == []


def test_collect_env_driver_failure_and_missing_tool(tmp_path, env, run):
    env.setenv("IK_STANDIN_SMI_FAIL", "1")
    result = run("collect", "env", "-a", tmp_path / "arch")
    assert result.exit_code == 1
    assert result.stderr.startswith("Error: nvidia-smi -q failed (exit 9): NVIDIA-SMI has failed because it "
                                    "couldn't communicate with the NVIDIA driver.")
    env.setenv("PATH", str(tmp_path / "empty"))
    result = run("collect", "env", "-a", tmp_path / "arch")
    assert result.stderr == ("Error: nvidia-smi: not found on PATH; install the NVIDIA driver, or import saved "
                             "output with --from-nvidia-smi FILE\n")
    assert files(tmp_path / "arch") == []


# -- bandwidth --------------------------------------------------------------------------------

def test_bandwidth_measured_through_nvcc(tmp_path, env, run):
    arch = tmp_path / "arch"
    record = load(arch, run("collect", "bandwidth", "--backend", "nvcc", "--size-mib", 256, "--size-mib", 512,
                            "--repeats", 3, "--warmup", 1, "-a", arch, "--gpu", "NVIDIA H200"))
    data = record["data"]
    assert data["sample_count"] == 6 and len(data["samples"]) == 6
    assert data["buffer_sizes_bytes"] == [256 << 20, 512 << 20]
    # the stand-in times copies for 4.3 TB/s (+0%, +1%, +2%); 2 x bytes / time counts read + write
    assert data["max_gbs"] == pytest.approx(4300, abs=1)
    assert data["median_gbs"] == pytest.approx(4300 / 1.01, abs=1)
    assert data["peak_gbs"] == data["median_gbs"]
    assert data["convention"].startswith("read+write")
    assert record["method"]["options"]["backend"] == "nvcc"
    assert record["environment"] and record["cites"] == [record["environment"]]
    assert any("bus width is unknown" in x for x in record["limitations"])
    assert verify_archive(Archive.open(arch)) == []


@pytest.fixture
def python_standins(monkeypatch):
    """Stand-in cupy, torch and pynvml packages (tests/standins/python), gone after the test."""
    monkeypatch.syspath_prepend(str(STANDINS / "python"))
    yield
    for name in ("cupy", "torch", "pynvml", "standin_gpu"):
        sys.modules.pop(name, None)


@pytest.mark.parametrize("backend", ["cupy", "torch"])
def test_bandwidth_measured_through_cupy_or_torch(tmp_path, env, python_standins, backend, run):
    arch = tmp_path / "arch"
    record = load(arch, run("collect", "bandwidth", "--backend", backend, "--size-mib", 256, "--size-mib", 1024,
                            "--repeats", 4, "--warmup", 2, "-a", arch))
    data = record["data"]
    assert record["subject"]["gpu"] == "NVIDIA H200"  # the name the library reports
    assert data["sample_count"] == 8 and data["buffer_sizes_bytes"] == [256 << 20, 1024 << 20]
    # the stand-ins time a copy of N bytes as 2N bytes at 4.3 TB/s
    assert data["peak_gbs"] == pytest.approx(4300, abs=1) and data["max_gbs"] == pytest.approx(4300, abs=1)
    assert record["method"]["options"]["backend"] == backend
    assert backend in data["backend"]
    assert verify_archive(Archive.open(arch)) == []


def test_bandwidth_against_the_theoretical_peak_when_nvml_gives_the_bus_width(tmp_path, env, python_standins, run):
    arch = tmp_path / "arch"
    record = load(arch, run("collect", "bandwidth", "--backend", "cupy", "--size-mib", 256, "--repeats", 2,
                            "-a", arch))
    data = record["data"]
    clock = data["max_memory_clock_mhz"]  # from the stand-in nvidia-smi -q
    assert data["memory_bus_width_bits"] == 6144  # from the stand-in NVML
    assert data["theoretical_gbs"] == pytest.approx(2 * clock * 1e6 * 6144 / 8 / 1e9, rel=1e-3)
    assert not any("bus width is unknown" in x for x in record["limitations"])
    env_record = Archive.open(arch).load(record["environment"])
    assert env_record["data"]["gpus"][0]["memory_bus_width_bits"] == 6144


def test_bandwidth_compile_failure_and_missing_nvcc(tmp_path, env, run):
    env.setenv("IK_STANDIN_NVCC_FAIL", "1")
    result = run("collect", "bandwidth", "--backend", "nvcc", "-a", tmp_path / "arch")
    assert result.exit_code == 1
    assert result.stderr == ('Error: nvcc could not compile the bandwidth program: copy_bandwidth.cu(12): error: '
                             'identifier "cudaEventCreate" is undefined\n')
    env.setenv("PATH", str(tmp_path / "empty"))
    result = run("collect", "bandwidth", "--backend", "nvcc", "-a", tmp_path / "arch2")
    assert result.stderr == ("Error: nvcc: not found on PATH; install the CUDA toolkit, or install CuPy or "
                             "PyTorch so no compiler is needed\n")
    assert files(tmp_path / "arch2") == []


def test_babelstream_import_counts_read_plus_write(tmp_path, env, run):
    arch = tmp_path / "arch"
    record = load(arch, run("collect", "bandwidth", "--from-babelstream", BABEL, "-a", arch))
    data = record["data"]
    assert record["subject"]["gpu"] == "NVIDIA A100-SXM4-40GB"
    # BabelStream's own MBytes/sec figure, 1394571.325 MB/s, not one derived from its 5-decimal times
    assert data["max_gbs"] == data["peak_gbs"] == 1394.6
    assert [k["function"] for k in data["kernels"]] == ["Copy", "Mul", "Add", "Triad", "Dot"]


def test_nvbandwidth_link_tests_are_not_a_memory_peak(tmp_path, env, run):
    arch = tmp_path / "arch"
    result = run("collect", "bandwidth", "--from-nvbandwidth", NVB, "-a", arch)
    assert result.exit_code == 1
    assert "no device_local_copy testcase; its 30 testcases" in result.stderr
    assert "measure PCIe and NVLink links, not device memory" in result.stderr
    assert files(arch) == []


def test_nvbandwidth_matrix_matches_its_sum_line():
    from ikreport.analysis.bandwidth_tools import parse_nvbandwidth

    parsed = parse_nvbandwidth(NVB.read_text(), "n")
    assert len(parsed["tests"]) == 30 and parsed["devices"][7] == "NVIDIA H800"
    for test in parsed["tests"]:
        values = [v for cell in test["cells"] for v in cell["values"] if v is not None]
        # nvbandwidth sums unrounded values; each printed cell is off by at most 0.005
        assert sum(values) == pytest.approx(test["sum_gbs"], abs=0.005 * len(values) + 1e-9), test["name"]


def test_nvbandwidth_device_local_copy_is_doubled(tmp_path, env, run):
    out = tmp_path / "nvb.txt"
    out.write_text("nvbandwidth Version: v0.7\nDevice 0: NVIDIA H100 80GB HBM3\n\nRunning device_local_copy.\n"
                   "memcpy local GPU(column) bandwidth (GB/s)\n           0\n 0   1656.21\n\n"
                   "SUM device_local_copy 1656.21\n")
    arch = tmp_path / "arch"
    record = load(arch, run("collect", "bandwidth", "--from-nvbandwidth", out, "-a", arch))
    assert record["data"]["peak_gbs"] == 3312.4
    assert "counts the copied size once" in record["data"]["convention"]


def test_nvbandwidth_of_another_version_is_refused(tmp_path, env, run):
    other = tmp_path / "nvb.txt"
    other.write_text(NVB.read_text().replace("nvbandwidth Version: v0.2", "nvbandwidth Version: v1.0"))
    result = run("collect", "bandwidth", "--from-nvbandwidth", other, "-a", tmp_path / "arch")
    assert result.exit_code == 1
    assert result.stderr == (f"Error: {other}: nvbandwidth v1.0 is not a version ikreport reads (v0.2 to v0.8); "
                             "import a BabelStream run or measure with 'collect bandwidth'\n")
    assert files(tmp_path / "arch") == []


# -- ncu --------------------------------------------------------------------------------------

def test_collect_ncu_runs_with_every_option_explicit(tmp_path, env, run):
    arch = tmp_path / "arch"
    record = load(arch, run("collect", "ncu", "-a", arch, "--gpu", "NVIDIA H200", "--", "python3", "step.py",
                            "--batch", "32"))
    profile_call = [line for line in (tmp_path / "ncu-args.log").read_text().splitlines() if "--export" in line][0]
    for option in ("--clock-control none", "--cache-control all", "--replay-mode kernel", "--target-processes all",
                   "--launch-skip 0", "--section SpeedOfLight", "--section WarpStateStats"):
        assert option in profile_call
    assert profile_call.endswith("python3 step.py --batch 32")
    assert record["method"]["tool_version"] == "2025.1.0.0"
    assert record["method"]["command"][:3] == ["ncu", "--clock-control", "none"]
    assert sorted(s["role"] for s in record["sources"]) == ["ncu-details-csv", "ncu-raw-csv", "ncu-report"]
    assert record["environment"] in record["cites"]
    assert any(x.startswith("Clocks were not locked (--clock-control none)") for x in record["limitations"])
    assert any(x.startswith("--cache-control all flushes") for x in record["limitations"])
    assert not any(x.startswith("Imported from a CSV") for x in record["limitations"])
    assert record["data"]["launch_count"] == 16 and record["data"]["environment_changes"] == []
    assert verify_archive(Archive.open(arch)) == []


def test_collect_ncu_notices_the_environment_changed(tmp_path, env, run):
    env.setenv("IK_STANDIN_SMI_CHANGE", "1")
    arch = tmp_path / "arch"
    record = load(arch, run("collect", "ncu", "-a", arch, "--", "python3", "step.py"))
    assert record["data"]["environment_changes"] == [{"gpu": 0, "field": "sm_clock_mhz", "before": 210.0,
                                                      "after": 1890.0}]
    assert len(record["cites"]) == 2
    assert any("GPU 0 sm_clock_mhz 210.0 -> 1890.0" in x for x in record["limitations"])


@pytest.mark.parametrize("failure,message", [
    ("perm", "ncu may not read the GPU performance counters (ERR_NVGPUCTRPERM): run as root, or load the driver "
             "with NVreg_RestrictProfilingToAdminUsers=0 (ncu said: ==ERROR== ERR_NVGPUCTRPERM"),
    ("nokernels", "ncu profiled no kernels: check that the command launches CUDA kernels and that --kernel-name, "
                  "--launch-skip and --nvtx-include match some (ncu said: ==WARNING== No kernels were profiled.)"),
    ("section", "a --section name is unknown to this ncu; 'ncu --list-sections' lists them (ncu said: ==ERROR== "
                "Option '--section Bogus' did not match any section.)"),
])
def test_collect_ncu_failures_are_clear_and_write_nothing(tmp_path, env, failure, message, run):
    env.setenv("IK_STANDIN_NCU_FAIL", failure)
    arch = tmp_path / "arch"
    result = run("collect", "ncu", "-a", arch, "--", "python3", "step.py")
    assert result.exit_code == 1
    assert result.stderr.startswith("Error: " + message)
    assert result.stderr.count("\n") == 1
    assert files(arch) == []


def test_collect_ncu_repeat_makes_runs_that_compare_takes_as_its_unit(tmp_path, env, run):
    arch = tmp_path / "arch"
    a = run("collect", "ncu", "--repeat", "3", "-a", arch, "--gpu", "NVIDIA B200", "--", "python3", "step.py")
    b = run("collect", "ncu", "--repeat", "3", "-a", arch, "--gpu", "NVIDIA B200", "--title", "after", "--",
            "python3", "step.py")
    assert a.exit_code == 0 and b.exit_code == 0, a.output + b.output
    a_ids, b_ids = a.stdout.splitlines()[-1].split(","), b.stdout.splitlines()[-1].split(",")
    assert len(set(a_ids)) == 3 and len([x for x in (tmp_path / "ncu-args.log").read_text().splitlines()
                                         if "--export" in x]) == 6
    titles = [Archive.open(arch).load(i)["title"] for i in b_ids]
    assert titles == ["after (run 1 of 3)", "after (run 2 of 3)", "after (run 3 of 3)"]
    out = run("compare", a.stdout.splitlines()[-1], b.stdout.splitlines()[-1], "-a", arch)
    assert out.exit_code == 0 and out.stdout.startswith("A (before) = 3 runs (")
    # the stand-in replays one real export: every run the same, so B equals A within any threshold
    assert "| 3 | 3 | 111.04 | 111.04 | 1.000 [1.000, 1.000] | SAME |" in out.stdout
    refused = run("collect", "ncu", "--repeat", "2", "--from-csv", "x.csv", "-a", arch)
    assert refused.exit_code == 2 and "--repeat makes several live runs" in refused.stderr


def test_collect_ncu_import_report(tmp_path, env, run):
    report = tmp_path / "step.ncu-rep"
    report.write_bytes(b"a report")
    arch = tmp_path / "arch"
    record = load(arch, run("collect", "ncu", "--import", report, "-a", arch))
    method = record["method"]
    assert method["how"] == ("imported from an existing .ncu-rep report; ncu version, command, cache control, "
                             "clock control, driver, replay mode observed from its session page")
    # the ncu that profiled (the session page's), not the stand-in that exported it
    assert (method["tool_version"], method["exported_with"]) == ("2025.2.1.0", "2025.1.0.0")
    assert method["options"] == {"cache_control": "all", "clock_control": "base", "driver": "575.57.08",
                                 "replay_mode": "kernel"}
    assert method["command"][:4] == ["/usr/local/cuda/bin/ncu", "--set", "full", "--clock-control"]
    assert record["limitations"][0].startswith("ncu ran with --clock-control base and --cache-control all "
                                               "(observed from the session page): clocks were locked to base")
    store = Archive.open(arch)
    assert store.read_blob(next(s["id"] for s in record["sources"] if s["role"] == "ncu-report")) == b"a report"
    session = next(s for s in record["sources"] if s["role"] == "ncu-session-csv")
    assert store.read_blob(session["id"]) == SESSION_EXPORT.read_bytes()
    assert "--page session" in (tmp_path / "ncu-args.log").read_text()


def test_missing_ncu(tmp_path, env, run):
    env.setenv("PATH", str(tmp_path / "empty"))
    result = run("collect", "ncu", "-a", tmp_path / "arch", "--", "python3", "x.py")
    assert result.stderr == ("Error: ncu: not found on PATH; install Nsight Compute, or put its folder "
                             "(e.g. /usr/local/cuda/bin) on PATH\n")


def test_context_file_with_flags_winning(tmp_path, env, run):
    ctx = tmp_path / "h200.toml"
    ctx.write_text('gpu = "NVIDIA H200"\nengine = "vLLM 0.6.3"\nlimitations = ["Driver 550 only."]\n')
    arch = tmp_path / "arch"
    record = load(arch, run("collect", "bandwidth", "--from-babelstream", BABEL, "-a", arch, "--context", ctx,
                            "--engine", "SGLang 0.4", "--limitation", "One node."))
    assert record["subject"]["gpu"] == "NVIDIA H200" and record["subject"]["engine"] == "SGLang 0.4"
    assert record["limitations"][-2:] == ["Driver 550 only.", "One node."]
    bad = tmp_path / "bad.toml"
    bad.write_text('gpus = "x"\n')
    result = run("collect", "bandwidth", "--from-babelstream", BABEL, "-a", arch, "--context", bad)
    assert result.stderr == (f"Error: {bad}: unknown key 'gpus'; use title, gpu, engine, model, workload, "
                             "clock_control, cache_control, replay_mode, ncu_version, driver, limitations\n")


@pytest.mark.parametrize("given, says", [
    ("/dev/zero", "not a file (a device or socket); give a saved file"),  # read whole, it filled memory
    ("deep", "not valid TOML (nested too deep to read); a context file holds text values"),  # a RecursionError traceback
    ("big", "2097153 bytes is larger than ikreport reads (1 MiB); give the file it asks for"),
])
def test_a_context_file_is_read_as_an_export_is_and_refused_in_one_line(tmp_path, run, given, says):
    """Found by a review helper: the context file was read with no check of what it was or how big."""
    path = Path(given) if given.startswith("/") else tmp_path / f"{given}.toml"
    if given == "deep":
        path.write_text("x = " + "[" * 100_000 + "]" * 100_000 + "\n")
    elif given == "big":
        path.write_text("#" * (2 << 20) + "\n")
    result = run("collect", "bandwidth", "--from-babelstream", BABEL, "-a", tmp_path / "arch", "--context", path)
    assert result.exit_code == 1
    assert result.stderr == f"Error: {path}: {says}\n"
    assert not (tmp_path / "arch").exists() or not any((tmp_path / "arch" / "records").rglob("*.json"))


def test_babelstream_row_with_a_malformed_number_is_not_read():
    from ikreport.analysis.bandwidth_tools import BandwidthOutputError, parse_babelstream

    broken = BABEL.read_text().replace("1394571.325", "1394571.3.25")  # a regression found by hypothesis
    with pytest.raises(BandwidthOutputError, match="no 'Copy' row"):
        parse_babelstream(broken, "b.txt")


# -- how an imported export was made, as the importer states it (issue 14 item 7) ----------------

RAW_EXPORT = FIXTURES / "ncu" / "ncu_raw_pmpp_06_gtx1650ti_preamble.csv"
SESSION_EXPORT = FIXTURES / "ncu" / "session_constructed_b200.csv"


def test_an_import_records_the_options_the_importer_states_as_stated(tmp_path, run):
    arch = tmp_path / "a"
    record = load(arch, run("collect", "ncu", "--from-csv", RAW_EXPORT, "--archive", arch, "--clock-control", "base",
                            "--cache-control", "all", "--replay-mode", "kernel", "--ncu-version", "2023.2.0",
                            "--driver", "535.104"))
    method = record["method"]
    assert method["tool_version"] == "2023.2.0"
    assert method["options"] == {"cache_control": "all", "clock_control": "base", "driver": "535.104",
                                 "replay_mode": "kernel"}
    assert method["how"] == ("imported from a CSV export (raw page); cache control, clock control, driver, ncu "
                             "version, replay mode as stated by the importer, not observed")
    assert record["limitations"][0] == ("Imported from a CSV export: --clock-control base and --cache-control all "
                                        "are as stated by the importer, not observed.")


def test_an_import_without_stated_options_records_none(tmp_path, run):
    arch = tmp_path / "a"
    record = load(arch, run("collect", "ncu", "--from-csv", RAW_EXPORT, "--archive", arch))
    assert record["method"]["options"] == {} and record["method"]["tool_version"] is None
    assert record["limitations"][0].startswith("Imported from a CSV export, which does not say which --clock-control")


def test_stated_options_can_come_from_the_context_file_and_flags_win(tmp_path, run):
    context = tmp_path / "setup.toml"
    context.write_text('clock_control = "none"\ncache_control = "none"\nncu_version = "2024.1"\n')
    arch = tmp_path / "a"
    record = load(arch, run("collect", "ncu", "--from-csv", RAW_EXPORT, "--archive", arch, "--context", context,
                            "--clock-control", "base"))
    assert record["method"]["options"] == {"cache_control": "none", "clock_control": "base"}
    assert record["method"]["tool_version"] == "2024.1"
    context.write_text('clock_control = "fast"\n')
    result = run("collect", "ncu", "--from-csv", RAW_EXPORT, "--archive", arch, "--context", context)
    assert result.exit_code == 1 and "'clock_control' must be one of none, base, reset" in result.output


def test_ncu_version_and_driver_belong_to_imports_of_csv_exports(env, tmp_path):
    result = CliRunner().invoke(cli, ["collect", "ncu", "--archive", str(tmp_path / "a"), "--ncu-version", "2024.1",
                                      "--", "python", "step.py"])
    assert result.exit_code == 2 and "give them with --from-csv" in result.output


def test_ncu_errors_in_an_export_are_kept_and_the_record_says_it_may_be_partial(tmp_path, run):
    # issue 14 item 9: '==ERROR== Failed to profile' lines were dropped with the other chatter
    export = tmp_path / "partial.csv"
    export.write_text("\n".join([
        "==PROF== Connected to process 4242 (/usr/bin/python3)",
        '==ERROR== Failed to profile "gemm_kernel" in process 4242',
        "==WARNING== Found outstanding GPU clock reset, trying to revert...",
        '"ID","Kernel Name","Section Name","Metric Name","Metric Unit","Metric Value"',
        '"0","copy(float*)","GPU Speed Of Light Throughput","Duration","usecond","10.00"',
        "==PROF== Disconnected from process 4242",
    ]) + "\n")
    arch = tmp_path / "a"
    record = load(arch, run("collect", "ncu", "--from-csv", export, "--archive", arch))
    assert record["data"]["ncu_messages"] == ['==ERROR== Failed to profile "gemm_kernel" in process 4242',
                                              "==WARNING== Found outstanding GPU clock reset, trying to revert..."]
    assert ("ncu reported 1 error while profiling, so the export may be partial: what ncu failed to profile is "
            'missing. First: ==ERROR== Failed to profile "gemm_kernel" in process 4242') in record["limitations"]
    assert "ncu printed 1 warning (kept in the record as ncu_messages)." in record["limitations"]
    clean = load(arch, run("collect", "ncu", "--from-csv", FIXTURES / "ncu" / "ncu_raw_pmpp_06_gtx1650ti_preamble.csv",
                           "--archive", arch))
    assert "ncu_messages" not in clean["data"]
