"""Issue 29: measured peaks from the CUDA samples' bandwidthTest and nvbandwidth's JSON output,
on real runs of the GPU models that public ncu exports profile (RTX 5090, A100 PCIe), and a
kernel's DRAM throughput as a share of them."""

from __future__ import annotations

import json

import pytest

from conftest import FIXTURES, NCU
from ikreport.analysis.bandwidth_tools import BandwidthOutputError, parse_nvbandwidth
from ikreport.analysis.bandwidthtest import device_to_device, parse_bandwidthtest
from ikreport.collect.bandwidth import CE_COPY, LIMIT_CE
from ikreport.kinds.engine import claims_for
from ikreport.kinds.peak_bandwidth import CAVEAT_OTHER_MACHINE
from ikreport.store.archive import Archive
from ikreport.store.recordset import load as load_records
from test_collect import env, files, load  # noqa: F401 - fixtures

BW = FIXTURES / "bandwidth"
DELLA = BW / "bandwidthtest_jdh4_della_a100_cuda11.3_range_dtod_excerpt.txt"
TWO_RUNS = BW / "bandwidthtest_jdh4_tiger_della_two_runs_excerpt.txt"
NVB_JSON = BW / "nvbandwidth_wubh576_rtx5090x4_v0.8.json"
BABEL_PCIE = BW / "babelstream_yoolatbec_a100pcie_v4.0_validation_failed_excerpt.txt"
K0008 = NCU / "ncu_details_llmperfopt_k0008_bf16_copy_rtx5090.csv"
K0009 = NCU / "ncu_details_llmperfopt_k0009_fmha_cutlass_bf16_rtx5090.csv"
A100_PCIE = NCU / "ncu_details_cudaroofline_a100pcie_cmdline_cycles_no_duration.csv"
QUICK = """[CUDA Bandwidth Test] - Starting...
Running on...

 Device 0: NVIDIA A100-SXM4-40GB
 Quick Mode

 Host to Device Bandwidth, 1 Device(s)
 PINNED Memory Transfers
   Transfer Size (Bytes)\tBandwidth(GB/s)
   32000000\t\t\t12.3

 Device to Device Bandwidth, 1 Device(s)
 PINNED Memory Transfers
   Transfer Size (Bytes)\tBandwidth(GB/s)
   32000000\t\t\t1157.5

Result = PASS
"""


# -- bandwidthTest ---------------------------------------------------------------------------

def test_bandwidthtest_peak_is_the_largest_transfer_as_printed_and_l2_sizes_only_best(tmp_path, env, run):
    arch = tmp_path / "arch"
    record = load(arch, run("collect", "bandwidth", "--from-bandwidthtest", DELLA, "-a", arch,
                            "--gpu", "NVIDIA A100-PCIE-40GB"))
    d = record["data"]
    # bandwidthTest already counts 2 x the size (read + write): stored as printed, not doubled
    assert d["peak_gbs"] == 1251.4 and "largest transfer (1,000,000,000 bytes)" in d["peak_basis"]
    assert d["max_gbs"] == 1602.7 and d["max_kernel"] == "a 10,000,000-byte transfer"
    assert [t["buffer_bytes"] for t in d["transfers"]] == [1_000_000, 10_000_000, 100_000_000, 1_000_000_000]
    assert "stored as printed" in d["convention"] and d["copy_mechanism"] == CE_COPY
    assert LIMIT_CE in record["limitations"]
    assert any("10,000,000 bytes" in x and "L2 cache" in x for x in record["limitations"])
    assert any("does not name the GPU" in x and "as the importer stated it" in x for x in record["limitations"])
    assert record["subject"]["gpu"] == "NVIDIA A100-PCIE-40GB"
    # with no --gpu, no model was stated: it said "as the importer stated it" all the same (a review helper)
    unnamed = load(arch, run("collect", "bandwidth", "--from-bandwidthtest", DELLA, "-a", arch))
    assert unnamed["subject"].get("gpu") is None
    assert any("model is not known (no --gpu was given)" in x for x in unnamed["limitations"])
    assert not any("as the importer stated it" in x for x in unnamed["limitations"])


def test_bandwidthtest_quick_mode_names_its_device_and_result():
    parsed = parse_bandwidthtest(QUICK, "q.txt")
    assert (parsed["device"], parsed["mode"], parsed["result"]) == ("NVIDIA A100-SXM4-40GB", "quick", "PASS")
    assert device_to_device(parsed, "q.txt")["rows"] == [{"bytes": 32000000, "gbs": 1157.5, "line": 15}]


def test_bandwidthtest_that_failed_its_own_check_says_so_first(tmp_path, env, run):
    failed = tmp_path / "fail.txt"
    failed.write_text(QUICK.replace("Result = PASS", "Result = FAIL"))
    record = load(tmp_path / "arch", run("collect", "bandwidth", "--from-bandwidthtest", failed, "-a", tmp_path / "arch"))
    assert record["data"]["validation"] == "failed: bandwidthTest printed Result = FAIL"
    assert record["limitations"][0].startswith("bandwidthTest reported that its run failed (Result = FAIL)")
    assert record["subject"]["gpu"] == "NVIDIA A100-SXM4-40GB"  # its Device 0 line


def test_bandwidthtest_old_mb_figures_are_mebibytes():
    old = QUICK.replace("Bandwidth(GB/s)", "Bandwidth(MB/s)").replace("1157.5", "286102.3").replace("12.3", "6000.0")
    [row] = device_to_device(parse_bandwidthtest(old, "old.txt"), "old.txt")["rows"]
    assert round(row["gbs"], 1) == 300.0  # 286102.3 x 2^20 bytes


def test_bandwidthtest_two_runs_in_one_file_are_refused_naming_both_blocks():
    with pytest.raises(BandwidthOutputError) as err:
        device_to_device(parse_bandwidthtest(TWO_RUNS.read_text(), "two.txt"), "two.txt")
    assert str(err.value) == ("two.txt:46: a second device-to-device block (the first is on line 20): the file "
                              "holds more than one run; save each bandwidthTest run to its own file")


def test_bandwidthtest_without_device_to_device_measures_pcie_and_is_refused(tmp_path, env, run):
    host_only = tmp_path / "htod.txt"
    host_only.write_text(QUICK.split(" Device to Device")[0])
    result = run("collect", "bandwidth", "--from-bandwidthtest", host_only, "-a", tmp_path / "arch")
    assert result.exit_code == 1
    assert result.output == (f"Error: {host_only}: no device-to-device block, only host to device: those measure "
                             "PCIe between CPU and GPU, not device memory, so they cannot be a memory-bandwidth peak; "
                             "run 'bandwidthTest --dtod' (or its default quick mode)\n")
    assert files(tmp_path / "arch") == []


def test_bandwidthtest_summed_over_gpus_is_refused():
    text = QUICK.replace("Device to Device Bandwidth, 1 Device(s)", "Device to Device Bandwidth, 2 Device(s)")
    with pytest.raises(BandwidthOutputError, match=r"summed over 2 GPUs \(--device=all\).*--device=0"):
        device_to_device(parse_bandwidthtest(text, "all.txt"), "all.txt")


def test_other_tools_output_is_named_by_each_reader(tmp_path, env, run):
    arch = tmp_path / "arch"
    cases = [("--from-babelstream", DELLA, "this is the CUDA samples' bandwidthTest output; give it to "
              "'collect bandwidth --from-bandwidthtest'"),
             ("--from-nvbandwidth", DELLA, "this is the CUDA samples' bandwidthTest output; give it to "
              "'collect bandwidth --from-bandwidthtest'"),
             ("--from-babelstream", NVB_JSON, "this is nvbandwidth output; give it to 'collect bandwidth "
              "--from-nvbandwidth'"),
             ("--from-bandwidthtest", NVB_JSON, "this is nvbandwidth output; give it to 'collect bandwidth "
              "--from-nvbandwidth'"),
             ("--from-bandwidthtest", BABEL_PCIE, "this is BabelStream output; give it to 'collect bandwidth "
              "--from-babelstream'")]
    for option, path, said in cases:
        result = run("collect", "bandwidth", option, path, "-a", arch)
        assert (result.exit_code, result.output) == (1, f"Error: {path}: {said}\n"), option
    assert files(arch) == []


# -- nvbandwidth JSON ------------------------------------------------------------------------

def test_nvbandwidth_json_peak_is_the_median_over_the_servers_gpus_doubled(tmp_path, env, run):
    arch = tmp_path / "arch"
    record = load(arch, run("collect", "bandwidth", "--from-nvbandwidth", NVB_JSON, "-a", arch))
    d = record["data"]
    assert record["subject"]["gpu"] == "NVIDIA GeForce RTX 5090"  # bus and host dropped from the device list
    assert [g["counted_once_gbs"] for g in d["per_gpu"]] == [760.777, 761.047, 761.047, 760.912]
    # nvbandwidth counts each copied byte once: median 760.9795 x 2, rounded once
    assert d["peak_gbs"] == 1522.0 and d["driver"] == "570.86.16"
    assert d["backend"] == "nvbandwidth v0.8" and record["method"]["options"] == {"output": "json (-j)"}
    assert record["sources"][0]["media_type"] == "application/json"
    assert any("median over the 4 GPUs of one machine" in x and "1,521.6 to 1,522.1 GB/s" in x
               for x in record["limitations"])
    assert "device_to_host_memcpy_ce" in d["link_tests_not_imported"]
    assert "device_to_device_memcpy_read_ce" not in d["link_tests_not_imported"]  # waived: never ran


def test_nvbandwidth_json_reads_as_its_text_output_would():
    parsed = parse_nvbandwidth(NVB_JSON.read_text(), "r.json")
    local = next(t for t in parsed["tests"] if t["name"] == "device_local_copy")
    assert parsed["version"] == "v0.8" and parsed["devices"][3] == "NVIDIA GeForce RTX 5090"
    assert local["cells"][0]["values"] == [760.777, 761.047, 761.047, 760.912]
    assert local["sum_gbs"] == pytest.approx(3043.78253173)


def test_nvbandwidth_json_without_device_local_copy_is_refused_as_links(tmp_path):
    body = json.loads(NVB_JSON.read_text())
    body["nvbandwidth"]["testcases"] = [t for t in body["nvbandwidth"]["testcases"] if t["name"] != "device_local_copy"]
    links = tmp_path / "links.json"
    links.write_text(json.dumps(body))
    from ikreport.analysis.bandwidth_tools import nvbandwidth_local_copies
    with pytest.raises(BandwidthOutputError, match="measure PCIe and NVLink links, not device memory"):
        nvbandwidth_local_copies(parse_nvbandwidth(links.read_text(), str(links)), str(links))


def test_nvbandwidth_json_failed_or_damaged_says_what_to_do():
    body = json.loads(NVB_JSON.read_text())
    local = next(t for t in body["nvbandwidth"]["testcases"] if t["name"] == "device_local_copy")
    local.update(status="Error", error="out of memory")
    with pytest.raises(BandwidthOutputError) as err:
        parse_nvbandwidth(json.dumps(body), "e.json")
    assert str(err.value) == ("e.json: nvbandwidth reports testcase device_local_copy as Error: out of memory; it "
                              "gave no figure to import: run it again")
    with pytest.raises(BandwidthOutputError, match=r"^cut\.json:\d+: not valid JSON"):
        parse_nvbandwidth(NVB_JSON.read_text()[:3000], "cut.json")
    local.update(status="Passed", bandwidth_matrix=[["760.777", "fast"]])
    with pytest.raises(BandwidthOutputError, match="testcase device_local_copy, matrix row 0: 'fast' is not a bandwidth"):
        parse_nvbandwidth(json.dumps(body), "f.json")


# -- the pairs: a kernel's DRAM throughput as a share of the measured peak ---------------------

def _of_peak(arch, profile: str) -> list:
    records = load_records(Archive.open(arch))
    return [c for c in claims_for(profile, records.records[profile], records) if c.rule == "kernel-of-measured-peak"]


def test_rtx5090_copy_kernel_against_nvbandwidth_of_another_server(tmp_path, env, run):
    arch = tmp_path / "arch"
    profile_id = _id(run("collect", "ncu", "--from-csv", K0008, "-a", arch, "--gpu", "NVIDIA GeForce RTX 5090"))
    peak_id = _id(run("collect", "bandwidth", "--from-nvbandwidth", NVB_JSON, "-a", arch))
    [claim] = _of_peak(arch, profile_id)
    assert claim.cites == (profile_id, peak_id)
    # the export's own Memory Throughput, 864.78 GB/s, over 2 x 760.98 GB/s
    assert claim.text == ("vectorized_elementwise_kernel<…> moves 864.8 GB/s to and from DRAM, 56.8% of the measured "
                          "peak of 1.52 TB/s on this GPU model (first launch).")
    assert CAVEAT_OTHER_MACHINE in claim.caveats


def test_rtx5090_attention_kernel_reads_its_own_memory_throughput(tmp_path, env, run):
    arch = tmp_path / "arch"
    record = load(arch, run("collect", "ncu", "--from-csv", K0009, "-a", arch, "--gpu", "NVIDIA GeForce RTX 5090"))
    [launch] = record["data"]["launches"]
    assert launch["kernel"].startswith("fmha_cutlassF_bf16_aligned_64x64_rf_sm80(AttentionKernel<bfloat16_t, Sm80,")
    # Memory Workload Analysis: 657.28 GB/s; SpeedOfLight: memory 37.26 %, SM 36.75 %, 160.74 us
    assert (launch["dram_gbs"], launch["memory_pct"], launch["sm_pct"], launch["duration_us"]) == (657.3, 37.26, 36.75,
                                                                                                  160.74)


def test_a100_pcie_profile_against_bandwidthtest(tmp_path, env, run):
    arch = tmp_path / "arch"
    profile_id = _id(run("collect", "ncu", "--from-csv", A100_PCIE, "-a", arch, "--gpu", "NVIDIA A100-PCIE-40GB"))
    peak_id = _id(run("collect", "bandwidth", "--from-bandwidthtest", DELLA, "-a", arch,
                      "--gpu", "NVIDIA A100-PCIE-40GB"))
    claims = _of_peak(arch, profile_id)
    for claim in claims:
        assert claim.cites == (profile_id, peak_id) and CAVEAT_OTHER_MACHINE in claim.caveats
    # the CUTLASS GEMM's dram__bytes.sum over sm__cycles_elapsed.avg / its .per_second (no duration row)
    assert claims[0].text == ("cutlass::Kernel<…> moves 1.12 TB/s to and from DRAM, 89.5% of the measured peak of "
                              "1.25 TB/s on this GPU model (first launch).")


def _id(result) -> str:
    assert result.exit_code == 0, result.output
    return result.stdout.strip().splitlines()[-1]
