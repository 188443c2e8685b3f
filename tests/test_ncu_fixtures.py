"""The ncu parser on every real export in tests/fixtures/ncu, values checked by hand.

Expected numbers come from reading each export (see tests/fixtures/SOURCES.md); where ncu
printed its own verdict in a rule row, the test checks that ikreport's agrees.
"""

from __future__ import annotations

import pytest

from conftest import NCU, ncu_text
from ikreport.analysis.ncu.read import read_exports
from ikreport.errors import MismatchedExportsError, NcuExportError


def profile(name: str):
    return read_exports({name: ncu_text(name)})


def rule_text(launch: dict, rule: str) -> str:
    return " ".join(r["description"] for r in launch["ncu_rules"] if r["rule"] == rule)


def test_every_fixture_is_covered():
    names = {p.name for p in NCU.iterdir()}
    tested = {
        "ncu_details_llmperfopt_k0001_metrics.csv", "ncu_details_llmperfopt_k0003_cmdline_plus_sections.csv",
        "ncu_details_nsightful_copy_blocked_base_units.csv", "ncu_details_polyfhe_stallreason_opt_sm89_62kernels.csv",
        "ncu_details_xplacer_bfs_v100_2020_kerneltime.csv", "ncu_raw_pmpp_06_gtx1650ti_preamble.csv",
        "ncu_raw_roofline_decodebench_b200_16kernels_preamble.csv", "other_llmperfopt_raw_error_only.csv",
        "session_constructed_b200.csv",  # tests/test_ncu_session.py
        "ncu_details_llmperfopt_k0001_section_memoryworkload.csv",  # tests/test_peak_fill.py
        # tests/test_unseen_exports.py (issue 32)
        "ncu_details_llmperfopt_k0005_cutlass_bf16_smfreq_memthroughput.csv",
        "ncu_details_llmperfopt_k0005_roofline_cutlass_bf16_tensorop_rtx5090.csv",
        "ncu_details_llmperfopt_k0018_reduce_smallgrid_58blocks.csv",
        "ncu_details_xplacer_bfs_lassen_v100_2020_smallgrid.csv",
        "ncu_details_cudaroofline_a100pcie_cmdline_cycles_no_duration.csv",
        "ncu_details_cudaroofline_v100pcie_cmdline_cycles_no_duration.csv",
        "ncu_details_learningnote_a100pcie_smsp_cycles_printfp.csv",
        "ncu_details_learningnote_a100pcie_smsp_cycles_printfp_profile_error.csv",
        # tests/test_measured_peak_pairs.py (issue 29)
        "ncu_details_llmperfopt_k0008_bf16_copy_rtx5090.csv", "ncu_details_llmperfopt_k0009_fmha_cutlass_bf16_rtx5090.csv",
    }
    assert names == tested


def test_k0001_details_with_raw_metric_names_and_short_rows():
    p = profile("ncu_details_llmperfopt_k0001_metrics.csv")
    assert list(p.pages.values()) == ["details"]
    [s] = p.launches
    assert s["kernel"].startswith("enable_if<!T7, void>::type kernel<int, int, __nv_bfloat16")
    assert s["kernel"].endswith("float>>(T13)")  # commas and <> inside the quoted name survive
    assert s["duration_us"] == pytest.approx(6.75)  # 'us'
    # 2.33 Mbyte read + 0 byte written in 6.75 us, to the three digits "2.33" holds (issue 32 item 7)
    assert (s["dram_gbs"], s["dram_gbs_derived"]) == (345, True)
    assert (s["dram_pct"], s["sm_pct"]) == (19.66, 9.15)
    assert s["bound"] == "latency-bound"
    assert "too small to fill the available resources" in rule_text(s, "SOLBottleneck")  # ncu agrees: idle
    assert (s["grid"], s["block"]) == (224, 128)  # from "(224, 1, 1)" and "(32, 4, 1)"
    assert s["cc"] == "12.0"
    assert s["unparsed_units"] == []  # 'n/a' with an empty unit is absent, not unreadable


def test_k0003_memory_bound_on_l2_as_ncu_says():
    [s] = profile("ncu_details_llmperfopt_k0003_cmdline_plus_sections.csv").launches
    assert s["duration_us"] == pytest.approx(23.42)
    # ncu's own Memory Workload Analysis says 143.20 Gbyte/s: shown as printed, not the 143.0 that
    # 3.35 Mbyte over 23.42 us gives (issue 32 item 7)
    assert s["dram_gbs"] == pytest.approx(143.2) and "dram_gbs_derived" not in s
    assert (s["dram_pct"], s["mem_pct"], s["sm_pct"]) == (8.13, 61.83, 41.49)
    assert s["bound"] == "memory-bound"
    assert s["memory_level"] == "l2"  # ncu: "L2 bottleneck"; L2 61.83% is the busiest level
    assert "Memory is more heavily utilized than Compute" in rule_text(s, "SOLBottleneck")
    assert "L2 bottleneck" in rule_text(s, "SOLBottleneck")
    assert s["occupancy_limiter"] == "shared memory"  # limits: registers 5, smem 2, warps 12, SM 24
    assert "limited by the required amount of shared memory" in rule_text(s, "TheoreticalOccupancy")
    assert (s["occupancy_theoretical_pct"], s["occupancy_achieved_pct"]) == (16.67, 15.18)
    assert s["l2_hit_pct"] == 95.4
    # ncu wrapped "achieved  close": the description keeps the words, not the double space
    assert all("  " not in r["description"] for r in s["ncu_rules"])


def test_nsightful_base_units_and_thousands_separators_in_decimals():
    [s] = profile("ncu_details_nsightful_copy_blocked_base_units.csv").launches
    assert s["duration_us"] == pytest.approx(21058.944)  # "21,058,944" ns
    assert s["dram_gbs"] == pytest.approx(196.5)  # "196,456,177,859.63" byte/s
    assert s["bound"] == "memory-bound" and s["memory_level"] == "dram"
    assert "identify the DRAM bottleneck" in rule_text(s, "SOLBottleneck")
    # block limits SM 16, registers 8, smem 16, warps 4: warps allow the fewest blocks, but at a
    # theoretical occupancy of 100% nothing limits it (issue 14 item 3: never "limited by warps")
    assert s["occupancy_theoretical_pct"] == 100 and s["occupancy_limiter"] is None
    assert (s["registers"], s["grid"], s["block"], s["waves"]) == (32, 1024, 256, 6.4)
    assert s["kernel"].startswith("copy_blocked[v1,")
    assert s["unparsed_units"] == []  # 'hz' frequencies are not read into any field


def test_polyfhe_stall_reasons_from_pct_metrics():
    p = profile("ncu_details_polyfhe_stallreason_opt_sm89_62kernels.csv")
    assert len(p.launches) == 62
    first = p.launches[0]
    assert first["kernel"] == "Mult_4_iNTTPhase2_131(Params *, int, int, unsigned long *, unsigned long *, unsigned long *)"
    reasons = [s["reason"] for s in first["top_stalls"]]
    assert reasons == ["long_scoreboard", "wait", "short_scoreboard", "math_pipe_throttle"]
    assert "selected" not in reasons  # issuing is a warp state, not a stall
    # ncu's smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct is 63.07: % of warp-active cycles
    assert first["top_stalls"][0]["share_pct"] == 63.1
    assert {s["source"] for s in first["top_stalls"]} == {"pct"}
    assert first["bound"] == "unknown" and first["duration_us"] is None
    assert max(len(s["kernel"]) for s in p.launches) > 400  # long fused names kept whole


def test_polyfhe_zero_printed_two_ways():
    p = profile("ncu_details_polyfhe_stallreason_opt_sm89_62kernels.csv")
    by_id = {s["id"]: s for s in p.launches}
    assert "42" in by_id  # 'misc' is "0" here and "0.00" elsewhere: both read, neither a problem
    assert all(s["unparsed_units"] == [] for s in p.launches)


def test_xplacer_2020_layout_after_program_output():
    p = profile("ncu_details_xplacer_bfs_v100_2020_kerneltime.csv")
    assert len(p.launches) == 13
    first = p.launches[0]
    assert first["kernel"] == "Kernel2(bool*,bool*,bool*,bool*,int)"
    assert first["duration_us"] == pytest.approx(3.2)  # 3200 nsecond
    assert (first["dram_pct"], first["sm_pct"], first["mem_pct"]) == (1.33, 0.28, 1.33)  # SOL FB, SM [%], Memory [%]
    assert first["bound"] == "latency-bound"
    assert (first["registers"], first["grid"], first["block"]) == (16, 8, 512)
    assert first["occupancy_theoretical_pct"] == 100 and first["occupancy_limiter"] is None  # full: nothing limits
    assert [(k["kernel"].split("(")[0], k["launches"]) for k in p.kernels] == [("Kernel", 6), ("Kernel2", 7)]
    assert sum(k["share_pct"] for k in p.kernels) == pytest.approx(100.0, abs=0.1)


def test_pmpp_raw_page_after_prose_preamble():
    p = profile("ncu_raw_pmpp_06_gtx1650ti_preamble.csv")
    assert list(p.pages.values()) == ["raw"]
    assert len(p.launches) == 11
    assert p.devices == ["NVIDIA GeForce GTX 1650 Ti"] and p.compute_capabilities == ["7.5"]
    s = p.launches[0]
    assert s["kernel"] == "void window_kernel<0>(int, int, const float4 *, float *)"
    assert s["duration_us"] == pytest.approx(2104.704)  # "2,104,704" ns
    assert (s["registers"], s["grid"], s["block"], s["waves"]) == (27, 4096, 128, 32)
    # blocks 16, registers 16, smem 16, warps 8, but theoretical occupancy is 100%: nothing limits it
    assert s["occupancy_theoretical_pct"] == 100 and s["occupancy_limiter"] is None
    assert s["occupancy_theoretical_pct"] == 100
    assert s["bound"] == "unknown"  # no throughput metrics in this export: no label is invented


def test_b200_raw_wide_header_and_template_commas():
    p = profile("ncu_raw_roofline_decodebench_b200_16kernels_preamble.csv")
    assert len(p.launches) == 16 and p.devices == ["NVIDIA B200"]
    names = [k["kernel"] for k in p.kernels]
    assert names[0].startswith("void flash_fwd_splitkv_kernel<Flash_fwd_kernel_traits<128, 64, 128, 4, 0, 0,")
    assert [k["launches"] for k in p.kernels] == [8, 8]
    first = p.launches[0]
    assert first["duration_us"] == pytest.approx(12.768)
    assert first["registers"] == 38 and first["occupancy_limiter"] == "registers"
    assert first["occupancy_theoretical_pct"] == 75
    assert p.kernels[0]["share_pct"] == pytest.approx(89.7)


def test_error_only_export_quotes_ncu():
    with pytest.raises(NcuExportError) as err:
        profile("other_llmperfopt_raw_error_only.csv")
    assert str(err.value) == (
        "other_llmperfopt_raw_error_only.csv: no CSV in this file; ncu said: "
        "==ERROR== Option '--section .*SpeedOfLight.*' did not match any section."
    )


def test_raw_and_details_of_different_runs_are_refused_naming_the_launch():
    # Two real exports of different programs share launch IDs 0..10: merged by ID, the BFS
    # run's SM % landed on the PMPP run's kernels (issue 14 item 10). Now refused, in one line.
    raw = ncu_text("ncu_raw_pmpp_06_gtx1650ti_preamble.csv")
    details = ncu_text("ncu_details_xplacer_bfs_v100_2020_kerneltime.csv")
    with pytest.raises(MismatchedExportsError) as caught:
        read_exports({"raw.csv": raw, "details.csv": details})
    message = str(caught.value)
    assert message.startswith("details.csv: launch ID 11 is not in raw.csv; the two are not one run")
    assert "\n" not in message


def test_flops_from_tensor_counters_and_unknown_without_sass_counters():
    [gemm] = profile("ncu_details_llmperfopt_k0003_cmdline_plus_sections.csv").launches
    assert gemm["flops"] == 1_275_068_416  # sm__ops_path_tensor_src_bf16_dst_fp32.sum "1,275,068,416"
    assert gemm["flops_per_s"] == pytest.approx(1_275_068_416 / 23.42e-6, rel=1e-9)
    assert gemm["arithmetic_intensity"] == pytest.approx(1_275_068_416 / 3.35e6, rel=1e-4)
    # the GEMV's tensor counters read 0 and "n/a", and no SASS FP counters were collected:
    # its FLOPs are unknown, not zero
    [gemv] = profile("ncu_details_llmperfopt_k0001_metrics.csv").launches
    assert gemv["flops"] is None and gemv["arithmetic_intensity"] is None


def test_collect_refuses_exports_of_two_runs_and_writes_nothing(tmp_path):
    from click.testing import CliRunner

    from ikreport.cli.main import cli

    raw, details = NCU / "ncu_raw_pmpp_06_gtx1650ti_preamble.csv", NCU / "ncu_details_xplacer_bfs_v100_2020_kerneltime.csv"
    result = CliRunner().invoke(cli, ["collect", "ncu", "--from-csv", str(raw), str(details), "--archive", str(tmp_path / "a")])
    assert result.exit_code == 1
    assert result.output.startswith(f"Error: {details}: launch ID 11 is not in {raw}; the two are not one run")
    assert not [p for p in (tmp_path / "a").rglob("*") if p.is_file()]


def test_the_busiest_memory_level_is_named_from_each_levels_own_throughput():
    # issue 14 item 2: L2 at 61.83% (L1/TEX 49.23%, DRAM 8.13%) is "L2", not "L1/L2"
    [s] = profile("ncu_details_llmperfopt_k0003_cmdline_plus_sections.csv").launches
    assert (s["memory_level"], s["l1_pct"], s["l2_pct"], s["dram_pct"]) == ("l2", 49.23, 61.83, 8.13)
    [dram] = profile("ncu_details_nsightful_copy_blocked_base_units.csv").launches
    assert dram["memory_level"] == "dram"  # DRAM 61.84% is the top; L1 18.29%, L2 8.38%
    from ikreport.kinds.ncu_profile.claims import _bound_text

    kernel = {"bound": "memory-bound", "launches": 1}
    assert "memory 61.8% of peak (L2 cache; DRAM 8.1%)" in _bound_text("k", kernel, s)
