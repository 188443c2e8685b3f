"""Reliability: crashes (a few SIGKILL trials; the script runs 100+), concurrent writers,
resource faults, and the documented exit codes."""

from __future__ import annotations

import errno
import os
import resource
import signal
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest
from click.testing import CliRunner

from conftest import NCU, ROOT
from ikreport.store.archive import Archive
from ikreport.cli.main import cli
from ikreport.commands.verify import verify_archive
from reliability import crash_trials

B200 = NCU / "ncu_raw_roofline_decodebench_b200_16kernels_preamble.csv"
IK = [sys.executable, "-m", "ikreport"]


def test_a_few_sigkill_trials_lose_nothing():
    lines: list[str] = []
    assert crash_trials.run(trials=4, seed=3, out=lines.append) == 0, lines


def test_concurrent_collects_into_one_archive_while_a_build_runs(tmp_path):
    arch = tmp_path / "arch"
    exports = [B200, B200, B200, NCU / "ncu_raw_pmpp_06_gtx1650ti_preamble.csv",
               NCU / "ncu_details_xplacer_bfs_v100_2020_kerneltime.csv",
               NCU / "ncu_details_llmperfopt_k0003_cmdline_plus_sections.csv"]
    env = {**os.environ, "SOURCE_DATE_EPOCH": "1796169600"}  # the same export gives the same record

    def collect(path):
        return subprocess.run([*IK, "collect", "ncu", "--from-csv", str(path), "-a", str(arch)],
                              capture_output=True, text=True, env=env)

    subprocess.run([*IK, "collect", "ncu", "--from-csv", str(NCU / "ncu_details_llmperfopt_k0001_metrics.csv"),
                    "-a", str(arch)], check=True, capture_output=True, env=env)
    with ThreadPoolExecutor(max_workers=7) as pool:
        build = pool.submit(subprocess.run, [*IK, "build", str(arch), "-o", str(tmp_path / "site"),
                                             "--cache-dir", str(tmp_path / "c")], capture_output=True, text=True)
        results = list(pool.map(collect, exports))
    assert all(r.returncode == 0 for r in results), [r.stderr for r in results]
    ids = [r.stdout.strip().splitlines()[-1] for r in results]
    assert len(set(ids[:3])) == 1  # three writers of the same record agree on it
    store = Archive.open(arch)
    assert set(ids) <= set(store.record_ids()) and len(store.record_ids()) == 5
    assert verify_archive(store) == []
    built = build.result()
    assert built.returncode == 0, built.stderr  # it saw a consistent set: every record it listed was whole
    assert subprocess.run([*IK, "verify", "--site", str(tmp_path / "site")], capture_output=True).returncode == 0


def _limit_file_size():
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # get EFBIG from write() instead of being killed
    resource.setrlimit(resource.RLIMIT_FSIZE, (4_000, 4_000))  # the export, gzipped, is larger


def test_a_size_limit_mid_write_is_a_clear_error_and_leaves_nothing(tmp_path):
    arch = tmp_path / "arch"
    done = subprocess.run([*IK, "collect", "ncu", "--from-csv", str(B200), "-a", str(arch)],
                          capture_output=True, text=True, preexec_fn=_limit_file_size)
    assert done.returncode == 1
    assert done.stderr.startswith("Error: ") and "cannot write (File too large)" in done.stderr
    assert done.stderr.count("\n") == 1
    assert [p for p in arch.rglob("*") if p.is_file()] == []


@pytest.mark.parametrize("code,words", [(errno.ENOSPC, "No space left on device"),
                                         (errno.EROFS, "Read-only file system")])
def test_disk_full_or_read_only_archive(tmp_path, monkeypatch, code, words):
    real_open = os.open

    def refuse(path, flags, *args, **kwargs):
        if flags & os.O_CREAT:
            raise OSError(code, os.strerror(code), str(path))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", refuse)
    arch = tmp_path / "arch"
    result = CliRunner().invoke(cli, ["collect", "ncu", "--from-csv", str(B200), "-a", str(arch)])
    assert result.exit_code == 1
    assert words in result.stderr and "check that the archive is writable and the disk has space" in result.stderr
    assert [p for p in arch.rglob("*") if p.is_file()] == []


@pytest.mark.parametrize("args,code", [
    (["verify", str(ROOT / "sample_evidence")], 0),
    (["show", "zz", "-a", str(ROOT / "sample_evidence")], 1),
    (["collect", "ncu", "--from-csv", "-a", str(ROOT / "sample_evidence")], 2),
    (["no-such-command"], 2),
])
def test_exit_codes_are_as_documented(args, code):
    assert CliRunner().invoke(cli, args).exit_code == code
