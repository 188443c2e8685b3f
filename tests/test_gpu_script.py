"""scripts/gpu/run.sh, the one script a session lent a GPU runs there, against the stand-in
tools: it must leave a verifiable archive with all three kinds of record, profile only the
NVTX range with the clocks unlocked, and retry without the FLOP counters if ncu refuses them."""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
from pathlib import Path

from conftest import ROOT
from ikreport.store.archive import Archive
from ikreport.commands.verify import verify_archive

STANDINS = ROOT / "tests" / "standins"


def run_script(tmp_path: Path, **extra: str) -> tuple[subprocess.CompletedProcess, Path]:
    out = tmp_path / "out"
    env = {**os.environ, "PATH": f"{STANDINS}{os.pathsep}{os.environ['PATH']}", "PYTHON": sys.executable,
           "OUT": str(out), "IK_STANDIN_LOG": str(tmp_path / "ncu-args.log"),
           "WHEELS": str(tmp_path / "no-wheels"), **extra}  # wheels fetched for the GPU machine's Python stay out
    done = subprocess.run(["bash", str(ROOT / "scripts" / "gpu" / "run.sh")], env=env, capture_output=True,
                          text=True, timeout=120)
    return done, out


def unpack(out: Path, tmp_path: Path) -> Archive:
    with tarfile.open(out / "evidence.tar.gz") as tar:
        tar.extractall(tmp_path / "unpacked", filter="data")
    return Archive.open(tmp_path / "unpacked" / "evidence")


def test_gpu_script_leaves_a_verifiable_archive_of_a_real_run(tmp_path):
    done, out = run_script(tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (out / "log.txt").read_text().count("== ") >= 4
    archive = unpack(out, tmp_path)
    assert verify_archive(archive) == []
    kinds = {}
    for rid in archive.record_ids():
        record = archive.load(rid)
        kinds.setdefault(record["kind"], []).append(record)
        assert any("a real run" in item for item in record["limitations"]), record["kind"]
    assert sorted(kinds) == ["environment", "ncu-profile", "peak-bandwidth"]
    assert len(kinds["environment"]) >= 2  # collect env's, and the snapshots around the profile
    profile = kinds["ncu-profile"][0]
    assert profile["subject"]["engine"].startswith("PyTorch ")
    ncu_args = next(line for line in (tmp_path / "ncu-args.log").read_text().splitlines() if "--export" in line)
    assert "--clock-control none" in ncu_args and "--nvtx-include measure/" in ncu_args
    assert "sm__ops_path_tensor_src_bf16_dst_fp32.sum" in ncu_args


def test_gpu_script_profiles_again_without_flop_counters_when_ncu_refuses(tmp_path):
    done, out = run_script(tmp_path, IK_STANDIN_NCU_FAIL="section")
    assert done.returncode == 1  # the stand-in refuses both times: the failure is reported
    log = (out / "log.txt").read_text()
    assert "ncu again, without the FLOP counters" in log
    runs = [line for line in (tmp_path / "ncu-args.log").read_text().splitlines() if "--export" in line]
    assert len(runs) == 2 and "--metrics" in runs[0] and "--metrics" not in runs[1]
