"""Issue 29: ikreport against real NVIDIA tools on a machine without a GPU: CUDA's nvcc compiles
the shipped copy program, a real ncu (Debian's nsight-compute, installed by
scripts/setup_system.sh) accepts the command line 'collect ncu' builds, and exports a real
public .ncu-rep into the record its CSV pages give. Each test is skipped, with the reason,
only where its tool is not installed; the stand-ins of tests/standins are not on PATH here."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from importlib import resources

import pytest

from conftest import FIXTURES
from ikreport.collect.bandwidth_run import ARCHITECTURES
from ikreport.store.archive import Archive

NCU = shutil.which("ncu")
NVCC = shutil.which("nvcc")
needs_ncu = pytest.mark.skipif(NCU is None, reason="ncu is not installed: scripts/setup_system.sh installs Debian's "
                                                   "nsight-compute (non-free) where apt can")
needs_nvcc = pytest.mark.skipif(NVCC is None, reason="nvcc is not installed (the CUDA toolkit)")
REPORT = FIXTURES / "ncu-rep" / "selfjoinmistic_a100pcie_msdnew_1kernel.ncu-rep"
NO_KERNEL = [sys.executable, "-c", "pass"]  # a target that launches no kernel


def _ncu_version() -> str:
    out = subprocess.run(["ncu", "--version"], capture_output=True, text=True, check=False).stdout
    return re.search(r"Version\s+(\S+)", out).group(1)


def _id(result) -> str:
    assert result.exit_code == 0, result.output
    return result.stdout.strip().splitlines()[-1]


# -- nvcc ------------------------------------------------------------------------------------

@needs_nvcc
def test_nvcc_compiles_the_copy_program_for_every_architecture_it_knows(tmp_path):
    known = set(re.findall(r"compute_(\d+)", subprocess.run([NVCC, "--list-gpu-arch"], capture_output=True,
                                                            text=True, check=True).stdout))
    wanted = [arch for arch in ARCHITECTURES if arch.removeprefix("sm_") in known]
    assert len(wanted) >= len(ARCHITECTURES) - 1, (known, ARCHITECTURES)  # CUDA 13 dropped only sm_70
    cuda = resources.files("ikreport").joinpath("collect/cuda")
    for name in ("copy_bandwidth.cu", "copy_kernel.cuh"):
        (tmp_path / name).write_text(cuda.joinpath(name).read_text("utf-8"), "utf-8")
    for arch in wanted:
        cubin = tmp_path / f"copy_{arch}.cubin"
        built = subprocess.run([NVCC, "-O3", f"-arch={arch}", "-cubin", "-o", str(cubin),
                                str(tmp_path / "copy_bandwidth.cu")], capture_output=True, text=True, check=False)
        assert built.returncode == 0, f"{arch}: {built.stderr}"
        assert cubin.read_bytes()[:4] == b"\x7fELF", arch


# -- ncu: the command line collect ncu builds ----------------------------------------------

@needs_ncu
def test_real_ncu_accepts_the_command_line_collect_ncu_builds(tmp_path, run):
    version = _ncu_version()
    variants = [(), ("--clock-control", "base", "--cache-control", "none"), ("--replay-mode", "application"),
                ("--target-processes", "application-only", "--launch-skip", "2", "--launch-count", "1"),
                ("--set", "full"), ("--section", "SpeedOfLight", "--metrics", "dram__bytes.sum"),
                ("--kernel-name", "regex:copy", "--nvtx-include", "step/")]
    for options in variants:
        result = run("collect", "ncu", "--check", *options, "--", *NO_KERNEL)
        assert result.exit_code == 0, (options, result.output)
        # one line: without a GPU ncu cannot reach the driver; with one, the target launches no kernel
        assert re.fullmatch(rf"ncu {re.escape(version)} accepts the command line 'collect ncu' builds; it profiled "
                            r"nothing \(==(ERROR|WARNING)== .*(failed to connect to the CUDA driver|No kernels were "
                            r"profiled).*\): nothing was stored\n", result.stdout), (options, result.stdout)
    assert not list(tmp_path.iterdir())  # nothing written, no archive looked for


@needs_ncu
def test_an_option_newer_than_the_installed_ncu_is_named_as_such(run):
    version = _ncu_version()
    result = run("collect", "ncu", "--check", "--replay-mode", "app-range", "--", *NO_KERNEL)
    if not version.startswith("2022."):
        assert result.exit_code == 0, result.output  # app-range came after 2022.3
        return
    assert result.exit_code == 1
    assert result.output == (f"Error: ncu {version} does not accept '--replay-mode app-range' (ncu said: the argument "
                             "for option '--replay-mode' is invalid): this value of the option is newer than the "
                             "installed Nsight Compute; install a newer release, or leave the option out\n")


@needs_ncu
def test_a_section_the_installed_ncu_lacks_is_one_line(run):
    result = run("collect", "ncu", "--check", "--section", "NoSuchSection", "--", *NO_KERNEL)
    assert result.exit_code == 1
    assert result.output == ("Error: a --section name is unknown to this ncu; 'ncu --list-sections' lists them (ncu "
                             "said: ==ERROR== Option '--section NoSuchSection' did not match any section.)\n")


# -- ncu: --import of a real report --------------------------------------------------------

@needs_ncu
def test_import_of_a_real_report_gives_the_record_its_csv_pages_give(tmp_path, run):
    arch = tmp_path / "arch"
    imported_id = _id(run("collect", "ncu", "--import", REPORT, "-a", arch))
    imported = Archive.open(arch).load(imported_id)
    pages = []
    for page in ("raw", "details"):
        out = tmp_path / f"{page}.csv"
        with out.open("wb") as f:
            subprocess.run(["ncu", "--import", str(REPORT), "--csv", "--page", page], stdout=f, check=True)
        pages.append(out)
    from_csv_id = _id(run("collect", "ncu", "--from-csv", *pages, "-a", arch))
    from_csv = Archive.open(arch).load(from_csv_id)
    assert imported["data"]["launches"] == from_csv["data"]["launches"]
    assert imported["data"]["kernels"] == from_csv["data"]["kernels"]
    assert imported["subject"]["gpu"] == from_csv["subject"]["gpu"] == "NVIDIA A100-PCIE-40GB"
    [launch] = imported["data"]["launches"]
    assert launch["kernel"].startswith("nodeByPoint(double *, double *")
    # the raw page's gpu__time_duration.sum is 8.261907 s
    assert launch["duration_us"] == 8261907
    # the CSV pages the import exported are the blobs the CSV import keeps, byte for byte
    kept = {s["role"]: s["id"] for s in imported["sources"]}
    assert {s["id"] for s in from_csv["sources"] if s["role"].startswith("ncu-")} <= set(kept.values())
    assert kept["ncu-report"] == "0698e86866875a1c75f42ebaaea66ca78738a37f336c316b5906dd0a15f7c2a5"
    version = _ncu_version()
    assert imported["method"]["exported_with"] == version
    if version.startswith("2022."):  # no session page before 2023.1: what it would say is not observed
        assert imported["method"]["tool_version"] is None
        assert imported["method"]["how"].endswith(f"the installed ncu ({version}) has no session page, so the ncu "
                                                  "version, command and options the report was made with are not "
                                                  "observed")


@needs_ncu
def test_a_report_the_installed_ncu_cannot_load_is_one_line(tmp_path, run):
    cut = tmp_path / "cut.ncu-rep"
    cut.write_bytes(REPORT.read_bytes()[:100_000])  # ncu exits 0 on it, having loaded nothing
    result = run("collect", "ncu", "--import", cut, "-a", tmp_path / "arch")
    assert result.exit_code == 1
    assert result.output == (f"Error: {cut}: the installed ncu could not load the report: a newer Nsight Compute made "
                             "it, or the file is damaged; export its raw and details pages with the ncu that made it "
                             "('ncu --import REPORT --csv --page raw', then '--page details') and import them with "
                             f"--from-csv (ncu said: ==ERROR== Failed to load report file '{cut}'.)\n")
    assert not (tmp_path / "arch" / "records").exists() or not any((tmp_path / "arch" / "records").rglob("*.json"))
