"""Bandwidth and nvidia-smi parsers on real saved runs that went wrong in the wild (issue 14
item 11): BabelStream under cuda-gdb and nsys, nvbandwidth pasted indented into docs, a
multinode run, numbers in other locales, and which copy (kernel or copy engine) ran."""

from __future__ import annotations

import pytest

from conftest import FIXTURES
from ikreport.analysis.bandwidth_tools import BandwidthOutputError, parse_babelstream, parse_nvbandwidth
from ikreport.analysis.nvidia_smi import NvidiaSmiError, parse_query
from ikreport.analysis.run_wrappers import run_under
from ikreport.collect.bandwidth import CE_COPY, KERNEL_COPY, LIMIT_CE
from test_collect import NVB, SMI_Q, env, files, load, python_standins  # noqa: F401 - fixtures

BW = FIXTURES / "bandwidth"
GDB = BW / "babelstream_alcfuserguides_a100_v5.0_cudagdb_excerpt.txt"
NSYS = BW / "babelstream_alcfuserguides_a100_v4.0_nsys_excerpt.txt"
MULTINODE = BW / "nvbandwidth_nvidiadocs_gb200_multinode_v0.7_indented_excerpt.txt"
LOCAL = ("nvbandwidth Version: v0.8\nDevice 0: NVIDIA GeForce RTX 3050 Laptop GPU (00000000:01:00)\n\n"
         "Running device_local_copy.\nmemcpy local GPU(column) bandwidth (GB/s)\n           0\n 0     84.33\n\n"
         "SUM device_local_copy 84.33\n")


# -- BabelStream ----------------------------------------------------------------------------

def test_babelstream_figure_is_its_own_mbytes_column_not_one_from_rounded_times(tmp_path, env, run):
    # Under nsys on Polaris: Copy 1368294.603 MB/s, average time printed as 0.00039 s. The
    # old figure, 2 x 268.4 MB / 0.00039 s = 1376.4 GB/s, claimed an average above the best.
    arch = tmp_path / "arch"
    record = load(arch, run("collect", "bandwidth", "--from-babelstream", NSYS, "-a", arch))
    data = record["data"]
    assert data["peak_gbs"] == data["max_gbs"] == 1368.3
    assert 2 * 268.4e6 / 0.00039 / 1e9 > data["peak_gbs"]  # why no figure comes from the times
    assert all(set(k) == {"function", "best_gbs", "min_s", "max_s", "avg_s"} for k in data["kernels"])
    assert data["peak_basis"] == "BabelStream's own Copy figure (MBytes/sec), from the fastest of 100 runs"
    assert data["run_under"] == ["Nsight Systems (nsys)"]
    assert any(x.startswith("BabelStream was run under Nsight Systems (nsys)") for x in record["limitations"])


def test_babelstream_under_cuda_gdb_is_kept_with_a_limitation_naming_the_debugger(tmp_path, env, run):
    arch = tmp_path / "arch"
    record = load(arch, run("collect", "bandwidth", "--from-babelstream", GDB, "-a", arch))
    data = record["data"]
    # the table after the breakpoints: Copy 1176329.522 MB/s, with [New Thread …] lines in the banner
    assert record["subject"]["gpu"] == "NVIDIA A100-SXM4-40GB"
    assert data["peak_gbs"] == 1176.3 and [k["function"] for k in data["kernels"]] == [
        "Copy", "Mul", "Add", "Triad", "Dot"]
    assert data["run_under"] == ["cuda-gdb 12.9"] and data["copy_mechanism"] == KERNEL_COPY
    assert ("BabelStream was run under cuda-gdb 12.9 (its lines are interleaved with the output): a debugger "
            "slows kernels, more so when they are built for it (-G) or stopped at breakpoints, so these figures "
            "are below what the GPU reaches.") in record["limitations"]


def test_older_cuda_gdb_banner_and_plain_gdb_are_named():
    old = "NVIDIA (R) CUDA Debugger\n11.4 release\nPortions Copyright (C) 2007-2021 NVIDIA Corporation\n(cuda-gdb) r\n"
    assert [f["tool"] for f in run_under(old)] == ["cuda-gdb 11.4"]
    assert [f["tool"] for f in run_under("(gdb) run\n[Inferior 1 (process 42) exited normally]\n")] == ["gdb"]
    assert [f["tool"] for f in run_under("==PROF== Connected to process 1\n")] == ["Nsight Compute (ncu)"]
    assert run_under(BW.joinpath("babelstream_alcfguide_a100_v4.0_trailingspaces_excerpt.txt").read_text()) == []


def test_two_babelstream_runs_in_one_file_are_refused_naming_both_lines():
    text = GDB.read_text() + "\n" + NSYS.read_text()
    second = text.split("\n").index("Copy        1368294.603 0.00039     0.00044     0.00039") + 1
    first = text.split("\n").index("Copy        1176329.522 0.00046     0.00052     0.00046") + 1
    with pytest.raises(BandwidthOutputError) as err:
        parse_babelstream(text, "two.txt")
    assert str(err.value) == (f"two.txt:{second}: a second Copy row (the first is on line {first}): the file holds "
                              "more than one run; save each BabelStream run to its own file")


def test_a_babelstream_figure_its_own_minimum_time_does_not_give_is_refused():
    # every real run here agrees with itself within the printed rounding; an edited figure does not
    for fixture in sorted(BW.glob("babelstream_*.txt")):
        parse_babelstream(fixture.read_text(), fixture.name)
    edited = NSYS.read_text().replace("1368294.603", "1468294.603")
    with pytest.raises(BandwidthOutputError) as err:
        parse_babelstream(edited, "n.txt")
    assert "Copy 1.46829e+06 MB/s does not follow from its minimum time 0.00039 s for 2 arrays of 268.4 MB" in str(err.value)


# -- nvbandwidth ----------------------------------------------------------------------------

def test_nvbandwidth_indented_as_pasted_into_docs_parses_the_same():
    plain = parse_nvbandwidth(NVB.read_text(), "n")
    indented = parse_nvbandwidth("\n".join("    " + line for line in NVB.read_text().split("\n")), "n")
    assert indented["tests"] == plain["tests"] and indented["devices"] == plain["devices"]
    local = parse_nvbandwidth("\n".join("      " + line for line in LOCAL.split("\n")), "n")
    assert local["version"] == "v0.8" and local["tests"][0]["cells"][0]["values"] == [84.33]


def test_nvbandwidth_v08_device_line_drops_the_pci_bus(tmp_path, env, run):
    out = tmp_path / "nvb.txt"
    out.write_text(LOCAL)
    record = load(tmp_path / "arch", run("collect", "bandwidth", "--from-nvbandwidth", out, "-a", tmp_path / "arch"))
    assert record["subject"]["gpu"] == "NVIDIA GeForce RTX 3050 Laptop GPU"
    assert record["data"]["peak_gbs"] == 168.7  # 84.33 counted once, doubled to read + write
    # device_local_copy is a cudaMemcpy on a copy engine: the record says so
    assert record["data"]["copy_mechanism"] == CE_COPY and LIMIT_CE in record["limitations"]


def test_nvbandwidth_multinode_run_is_refused_because_it_measures_links(tmp_path, env, run):
    # NVIDIA's GPU Operator docs: a GB200 two-node run, indented 6 spaces in an RST code block
    result = run("collect", "bandwidth", "--from-nvbandwidth", MULTINODE, "-a", tmp_path / "arch")
    assert result.exit_code == 1
    assert result.stderr == (
        f"Error: {MULTINODE}: no device_local_copy testcase; its 1 testcases "
        "(multinode_device_to_device_memcpy_read_ce, …) measure PCIe and NVLink links, not device memory "
        "(multinode testcases measure NVLink between GPUs of different nodes), so they cannot be a "
        "memory-bandwidth peak. Run 'nvbandwidth -t device_local_copy' (v0.5 or later) or "
        "'ikreport collect bandwidth'\n")
    assert files(tmp_path / "arch") == []


def test_a_peer_test_without_its_banner_is_refused_for_what_it_measures():
    # the block a user copies from a log: no 'nvbandwidth Version:' line above it
    peer = NVB.read_text()
    peer = peer[peer.index("Running device_to_device_memcpy_read_ce."):]
    peer = peer[:peer.index("Running", 10)]
    with pytest.raises(BandwidthOutputError) as err:
        parse_nvbandwidth(peer, "peer.txt")
    assert "no 'nvbandwidth Version:' line" not in str(err.value)
    assert "(peer testcases measure NVLink or PCIe between GPUs)" in str(err.value)


# -- the measured copy: a kernel is preferred ------------------------------------------------

def test_collect_bandwidth_prefers_a_kernel_copy_and_says_which_ran(tmp_path, env, python_standins, run):
    arch = tmp_path / "arch"
    record = load(arch, run("collect", "bandwidth", "--size-mib", 256, "--repeats", 2, "-a", arch))
    assert record["method"]["options"]["backend"] == "cupy"  # CuPy runs the shipped kernel
    assert record["data"]["copy_mechanism"] == KERNEL_COPY
    assert record["data"]["method"] == "device-to-device copy kernel, timed with CUDA events"
    assert LIMIT_CE not in record["limitations"]
    torch = load(tmp_path / "t", run("collect", "bandwidth", "--backend", "torch", "--size-mib", 256, "--repeats", 2,
                                     "-a", tmp_path / "t"))
    assert torch["data"]["copy_mechanism"] == CE_COPY and LIMIT_CE in torch["limitations"]
    assert torch["data"]["method"] == "device-to-device cudaMemcpy (PyTorch copy_), timed with CUDA events"


def test_without_cupy_nvcc_is_preferred_to_pytorch(tmp_path, env, python_standins, monkeypatch, run):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "cupy" else real(name, *a))
    arch = tmp_path / "arch"
    record = load(arch, run("collect", "bandwidth", "--size-mib", 256, "--repeats", 2, "-a", arch))
    assert record["method"]["options"]["backend"] == "nvcc"
    assert record["data"]["copy_mechanism"] == KERNEL_COPY


# -- nvidia-smi in other locales -------------------------------------------------------------

def _localised(*pairs: tuple[str, str]) -> str:
    text = SMI_Q.read_text()
    for old, new in pairs:
        assert old in text
        text = text.replace(old, new)
    return text


def test_nvidia_smi_numbers_in_other_locales_are_read_right():
    # the RTX 3060 Laptop dump: max SM clock 2100 MHz, power limit 80.00 W, memory 6144 MiB
    text = _localised((": 2100 MHz", ": 2.100 MHz"), (": 80.00 W", ": 80,00 W"), (": 6144 MiB", ": 6.144 MiB"))
    [gpu] = parse_query(text, "de.txt")["gpus"]
    assert (gpu["max_sm_clock_mhz"], gpu["power_limit_w"], gpu["memory_total_mib"]) == (2100.0, 80.0, 6144)
    [gpu] = parse_query(_localised((": 2100 MHz", ": 2\u202f100 MHz")), "fr.txt")["gpus"]
    assert gpu["max_sm_clock_mhz"] == 2100.0


@pytest.mark.parametrize("spelling", ["2.1 MHz", "2,10 MHz", "2.100,5 MHz"])
def test_nvidia_smi_numbers_that_cannot_be_read_without_guessing_are_refused(spelling):
    with pytest.raises(NvidiaSmiError) as err:
        parse_query(_localised((": 2100 MHz", f": {spelling}")), "odd.txt")
    assert str(err.value).startswith("odd.txt: Max Clocks/SM reads '")
    assert str(err.value).endswith("a number in a locale's format ikreport cannot read without guessing; "
                                   "save the dump again with 'LC_ALL=C nvidia-smi -q'")
