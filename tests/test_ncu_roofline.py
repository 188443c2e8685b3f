"""ncu's roofline (issue 14 item 4, and item 1's memory side filled from ncu's roofline peak):
the details page's roofline sections, FLOPs weighted as ncu's section files weight them, and
the claims and limitations that follow. Real exports where they have the data, small cases
written from the labels of ncu's section files where no public export has it."""

from __future__ import annotations

from pathlib import Path

import pytest

from ikreport.analysis.ncu.read import read_exports
from ikreport.analysis.ncu.roofline import flop_term
from ikreport.collect.ncu_import import LIMIT_NO_SOL, profile_limitations
from ikreport.errors import ImplausibleValueError
from ikreport.kinds.ncu_profile.claims import _bound_text
from ikreport.kinds.ncu_profile.roofline import roofline_text

NCU = Path(__file__).parent / "fixtures" / "ncu"
HEADER = '"ID","Kernel Name","Section Name","Body Item Label","Metric Name","Metric Unit","Metric Value"'
CHART = "GPU Speed Of Light Roofline Chart"


def row(section: str, item: str, name: str, unit: str, value: str) -> str:
    return f'"0","saxpy(float *)","{section}","{item}","{name}","{unit}","{value}"'


def roofline_rows(sm_freq: tuple[str, str] = ("Ghz", "1.50")) -> list[str]:
    """The rows ncu's SpeedOfLight_RooflineChart section exports, labelled as its section file
    labels them: the FP32 and FP64 rooflines (peaks) and achieved values."""
    out = []
    for precision, letter, peak in (("Single", "F", "16,384"), ("Double", "D", "256")):
        roof, got = f"{precision} Precision Roofline", f"{precision} Precision Achieved Value"
        out += [
            row(CHART, roof, f"Theoretical Predicated-On {letter}FMA Operations", "inst", peak),
            row(CHART, roof, "SM Frequency", *sm_freq),
            row(CHART, roof, "Theoretical DRAM Bytes Accessible", "Kbyte/cycle", "0.18"),
            row(CHART, roof, "DRAM Frequency", "Ghz", "7.50"),
            row(CHART, got, f"Predicated-On {letter}ADD Thread Instructions Executed Per Cycle", "inst/cycle",
                "512" if letter == "F" else "0"),
            row(CHART, got, f"Predicated-On {letter}MUL Thread Instructions Executed Per Cycle", "inst/cycle",
                "256" if letter == "F" else "0"),
            row(CHART, got, f"Predicated-On {letter}FMA Operations Per Cycle", "inst/cycle",
                "2,048" if letter == "F" else "2"),
            row(CHART, got, "SM Frequency", *sm_freq),
            row(CHART, got, "DRAM Bandwidth", "Gbyte/s", "958.09"),
        ]
    return out


def export(*rows: str) -> str:
    return "\n".join([HEADER, *rows]) + "\n"


def sol(name: str, unit: str, value: str) -> str:
    return row("GPU Speed Of Light Throughput", "", name, unit, value)


def test_the_roofline_section_is_imported_not_dropped():
    text = export(sol("Duration", "usecond", "10.00"), *roofline_rows())
    [s] = read_exports({"x.csv": text}).launches
    assert s["dram_gbs"] == 958.1  # "DRAM Bandwidth 958.09 Gbyte/s", no longer dropped
    assert s["dram_peak_gbs"] == 1350.0  # 0.18 Kbyte/cycle at 7.50 GHz
    # ncu's own weights: FADD 512 + FMUL 256 + FFMA operations 2,048 (already x2) per cycle at 1.5 GHz
    # per cycle at 1.5 GHz, plus the FP64 DFMA operations (2 per cycle)
    assert s["precision_flops_per_s"] == pytest.approx(2816 * 1.5e9)
    assert s["flops_per_s"] == pytest.approx(2818 * 1.5e9)
    assert s["flop_precision"] == "fp32"  # far more FP32 than FP64 work: the FP32 roof
    assert s["peak_flops_per_s"] == pytest.approx(16384 * 1.5e9)
    assert s["flops"] == pytest.approx(2818 * 1.5e9 * 10e-6)
    assert s["arithmetic_intensity"] == pytest.approx(2818 * 1.5 / 958.09, rel=1e-3)  # DRAM bytes = rate x time


def test_memory_side_is_filled_from_ncus_roofline_peak_and_says_so():
    text = export(sol("Duration", "usecond", "10.00"), sol("Compute (SM) Throughput", "%", "22.30"), *roofline_rows())
    profile = read_exports({"x.csv": text})
    [s] = profile.launches
    assert (s["memory_source"], s["memory_level"], s["bound"]) == ("ncu-roofline", "dram", "memory-bound")
    assert s["memory_pct"] == pytest.approx(100 * 958.09 / 1350)
    assert s["dram_pct"] is None  # ncu's own DRAM % is still absent: the record does not invent it
    claim = _bound_text("saxpy", {"bound": s["bound"], "launches": 1}, s)
    assert claim == ("saxpy is memory-bound by ncu's SOLBottleneck thresholds: DRAM 958.1 GB/s = 71.0% of the "
                     "1.35 TB/s peak ncu's roofline section uses, SM 22.3% of peak (first launch).")


def test_memory_filled_but_sm_missing_names_what_is_known():
    text = export(sol("Duration", "usecond", "10.00"), *roofline_rows())
    [s] = read_exports({"x.csv": text}).launches
    assert s["bound"] == "unknown"
    assert _bound_text("saxpy", {"bound": "unknown", "launches": 1}, s) == (
        "saxpy: DRAM 958.1 GB/s = 71.0% of the 1.35 TB/s peak ncu's roofline section uses; SM throughput not "
        "captured, so no bound is named (first launch).")


def test_roofline_claim_uses_the_roof_of_the_kernels_data_type():
    [s] = read_exports({"x.csv": export(sol("Duration", "usecond", "10.00"), *roofline_rows())}).launches
    assert roofline_text("saxpy", s) == (
        "saxpy runs at 4.23 TFLOP/s, most of it fp32 (4.22 TFLOP/s); that is 17.2% of the 24.6 TFLOP/s fp32 peak "
        "ncu's roofline section uses; 4.41 FLOP per DRAM byte (first launch).")


def test_frequency_units_of_every_release():
    for unit, value in (("hz", "1,500,000,000"), ("cycle/nsecond", "1.50"), ("cycle/second", "1500000000")):
        [s] = read_exports({"x.csv": export(*roofline_rows(sm_freq=(unit, value)))}).launches
        assert s["flops_per_s"] == pytest.approx(2818 * 1.5e9), unit


def test_a_gbs_export_without_percent_never_gets_the_no_dram_limitation():
    # DRAM GB/s from Memory Workload Analysis, no % of peak and no roofline peak
    text = export(sol("Duration", "usecond", "10.00"), row("Memory Workload Analysis", "", "Memory Throughput",
                                                            "Gbyte/s", "607.20"))
    profile = read_exports({"x.csv": text})
    limits = profile_limitations(profile, "NVIDIA A100")
    assert LIMIT_NO_SOL not in limits
    assert ("The export has no memory or SM throughput as a % of peak (it has DRAM bytes per second, but no DRAM "
            "peak to divide them by), so no kernel can be called memory- or compute-bound.") in limits
    # with ncu's roofline peak the memory side is known: only SM is said to be missing
    profile = read_exports({"x.csv": export(sol("Duration", "usecond", "10.00"), *roofline_rows())})
    assert ("The export has no SM throughput as a % of peak, so no kernel can be called memory- or "
            "compute-bound.") in profile_limitations(profile, "NVIDIA A100")


def test_an_export_with_no_throughput_at_all_keeps_the_plain_limitation():
    profile = read_exports({"x.csv": export(sol("Duration", "usecond", "10.00"))})
    assert LIMIT_NO_SOL in profile_limitations(profile, "NVIDIA A100")


@pytest.mark.parametrize("metric,term", [
    ("smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", ("flops_fp32", 2.0)),
    ("smsp__sass_thread_inst_executed_op_fadd_pred_on.sum", ("flops_fp32", 1.0)),
    ("smsp__sass_thread_inst_executed_op_dfma_pred_on.sum", ("flops_fp64", 2.0)),
    ("smsp__sass_thread_inst_executed_op_dmul_pred_on.sum", ("flops_fp64", 1.0)),
    ("smsp__sass_thread_inst_executed_op_hfma_pred_on.sum", ("flops_fp16", 4.0)),  # packed HFMA2
    ("smsp__sass_thread_inst_executed_op_hadd_pred_on.sum", ("flops_fp16", 2.0)),
    ("sm__ops_path_tensor_src_bf16_dst_fp32.sum", ("flops_tensor", 1.0)),
    ("sm__ops_path_tensor_src_int8.sum", ("int_ops", 1.0)),  # integer math, not FLOPs
    ("sm__ops_path_tensor_src_fp16_sparsity_on.sum", None),  # splits the same ops again
    ("smsp__sass_thread_inst_executed_op_ffma_pred_on.sum.per_cycle_elapsed", None),
])
def test_instruction_weights_follow_ncus_roofline_sections(metric, term):
    assert flop_term(metric) == term


def test_integer_tensor_ops_are_kept_apart_and_dram_bytes_sum_feeds_intensity():
    metrics = "Command line profiler metrics"
    text = export(
        row(metrics, "", "gpu__time_duration.sum", "usecond", "10"),
        row(metrics, "", "dram__bytes.sum", "Mbyte", "4"),
        row(metrics, "", "dram__bytes_read.sum", "Mbyte", "1"),
        row(metrics, "", "sm__ops_path_tensor_src_int8.sum", "", "9,000,000"),
        row(metrics, "", "smsp__sass_thread_inst_executed_op_hfma_pred_on.sum", "inst", "1,000,000"),
    )
    [s] = read_exports({"x.csv": text}).launches
    assert s["flops"] == 4_000_000 and s["flop_precision"] == "fp16"  # int8 ops are not FLOPs
    assert s["int_ops"] == 9_000_000
    assert s["arithmetic_intensity"] == 1.0  # over dram__bytes.sum (4 MB), not bytes read (1 MB)
    assert roofline_text("k", s).endswith("; plus 9,000,000 integer tensor ops, not counted as FLOPs (first launch).")


def test_a_flop_rate_no_gpu_reaches_is_refused_naming_the_line():
    rows = [r.replace('"2,048"', '"2,048,000,000,000"') for r in roofline_rows()]
    with pytest.raises(ImplausibleValueError) as caught:
        read_exports({"x.csv": export(*rows)})
    assert str(caught.value).startswith("x.csv:2: roofline_flops_per_s_fp32 is ")
    assert "FLOP/s, above 1e+18 FLOP/s" in str(caught.value)


def test_real_tensor_gemm_keeps_its_tensor_type_and_datasheet_roof():
    # llm-perf-opt kernel 3: sm__ops_path_tensor_src_bf16_dst_fp32.sum 1,275,068,416 over 23.42 us,
    # dram__bytes_read.sum 3.35 MB (no dram__bytes.sum); ncu's roofline rows are not in this export
    [gemm] = read_exports({"k3.csv": (NCU / "ncu_details_llmperfopt_k0003_cmdline_plus_sections.csv").read_bytes()}).launches
    assert gemm["flop_precision"] == "tensor"
    assert gemm.get("peak_flops_per_s") is None and gemm.get("memory_source") is None
    assert roofline_text("gemm", gemm) == "gemm runs at 54.4 TFLOP/s (tensor); 381 FLOP per DRAM byte (first launch)."


def test_real_exports_without_flop_data_get_no_roofline_claim():
    for name in ("ncu_details_nsightful_copy_blocked_base_units.csv", "ncu_details_llmperfopt_k0001_metrics.csv"):
        [s] = read_exports({name: (NCU / name).read_bytes()}).launches
        assert s["flops_per_s"] is None and s.get("flop_precision") is None and roofline_text("k", s) is None
        assert s.get("memory_source") is None  # these have ncu's own memory %: nothing is filled


def test_the_site_draws_ncus_roofs_and_states_their_source(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from ikreport.cli.main import cli
    from ikreport.commands.build import build_site
    from ikreport.store.archive import Archive

    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1796169600")
    export_file = tmp_path / "saxpy.csv"
    export_file.write_text(export(sol("Duration", "usecond", "10.00"), sol("Compute (SM) Throughput", "%", "22.30"),
                                  *roofline_rows()))
    result = CliRunner().invoke(cli, ["collect", "ncu", "--from-csv", str(export_file), "-a", str(tmp_path / "a"),
                                      "--gpu", "NVIDIA H200"])
    assert result.exit_code == 0, result.output
    record_id = result.stdout.strip().splitlines()[-1]
    build_site(Archive.open(tmp_path / "a"), tmp_path / "site", cache_dir=tmp_path / "cache")
    page = (tmp_path / "site" / "e" / f"{record_id}.md").read_text("utf-8")
    assert ("saxpy is memory-bound by ncu's SOLBottleneck thresholds: DRAM 958.1 GB/s = 71.0% of the 1.35 TB/s peak "
            "ncu's roofline section uses") in page
    assert "the memory side is ncu's DRAM bandwidth over the DRAM peak ncu's roofline section uses" in page
    assert "Memory roof: the 1.35 TB/s DRAM peak ncu's roofline section uses (theoretical" in page
    # the kernel is FP32: its roof is ncu's FP32 peak, never the H200's BF16 tensor datasheet figure
    assert "Compute roof: 24.6 TFLOP/s fp32, the peak ncu's roofline section uses" in page
    assert "dense BF16" not in page
    assert "No DRAM" not in page and "no DRAM" not in page


def test_roofline_rows_printed_with_metric_names():
    # ncu --print-metric-name name: the metrics behind the labels (the section files' Name fields)
    named = {
        "Theoretical Predicated-On FFMA Operations": "derived__sm__sass_thread_inst_executed_op_ffma_pred_on_x2",
        "Theoretical Predicated-On DFMA Operations": "derived__sm__sass_thread_inst_executed_op_dfma_pred_on_x2",
        "Theoretical DRAM Bytes Accessible": "dram__bytes.sum.peak_sustained",
        "DRAM Frequency": "dram__cycles_elapsed.avg.per_second",
        "Predicated-On FADD Thread Instructions Executed Per Cycle":
            "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum.per_cycle_elapsed",
        "Predicated-On FMUL Thread Instructions Executed Per Cycle":
            "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum.per_cycle_elapsed",
        "Predicated-On FFMA Operations Per Cycle": "derived__smsp__sass_thread_inst_executed_op_ffma_pred_on_x2",
        "DRAM Bandwidth": "dram__bytes.sum.per_second",
    }
    by_name = [r for r in roofline_rows() if "Double" not in r]
    for label, name in named.items():
        by_name = [r.replace(f'"{label}"', f'"{name}"') for r in by_name]
    by_name = [r.replace('"SM Frequency"', '"sm__cycles_elapsed.avg.per_second"') for r in by_name]
    # --print-metric-name label-name: "label (metric)"
    both = [r.replace('"DRAM Bandwidth"', '"DRAM Bandwidth (dram__bytes.sum.per_second)"')
            for r in roofline_rows() if "Double" not in r]
    for rows in (by_name, both):
        [s] = read_exports({"x.csv": export(sol("Duration", "usecond", "10.00"), *rows)}).launches
        assert (s["dram_gbs"], s["dram_peak_gbs"], s["flop_precision"]) == (958.1, 1350.0, "fp32")
        assert s["flops_per_s"] == pytest.approx(2816 * 1.5e9)
        assert s["peak_flops_per_s"] == pytest.approx(16384 * 1.5e9)


def test_a_raw_page_with_dram_bytes_per_second_has_dram_gbs_and_no_false_limitation():
    header = '"ID","Kernel Name","gpu__time_duration.sum","dram__bytes.sum.per_second","sm__throughput.avg.pct_of_peak_sustained_elapsed"'
    text = "\n".join([header, '"","","usecond","Gbyte/second","%"', '"0","saxpy","10","607.20","22.30"']) + "\n"
    profile = read_exports({"raw.csv": text})
    [s] = profile.launches
    assert s["dram_gbs"] == 607.2 and s["bound"] == "unknown"
    limits = profile_limitations(profile, "NVIDIA A100")
    assert LIMIT_NO_SOL not in limits
    assert ("The export has no memory throughput as a % of peak (it has DRAM bytes per second, but no DRAM peak to "
            "divide them by), so no kernel can be called memory- or compute-bound.") in limits


def test_a_raw_page_of_set_full_gives_ncus_roofline_peaks():
    # the metrics behind the roofline sections' labels, as columns of a raw page
    names = ["gpu__time_duration.sum", "dram__bytes.sum.per_second", "dram__bytes.sum.peak_sustained",
             "dram__cycles_elapsed.avg.per_second", "sm__cycles_elapsed.avg.per_second",
             "smsp__cycles_elapsed.avg.per_second", "derived__sm__sass_thread_inst_executed_op_ffma_pred_on_x2",
             "derived__smsp__sass_thread_inst_executed_op_ffma_pred_on_x2",
             "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum.per_cycle_elapsed",
             "sm__ops_path_tensor_src_fp16_dst_fp32.sum.per_cycle_elapsed",
             "sm__ops_path_tensor_src_tf32_dst_fp32.sum.per_cycle_elapsed"]
    units = ["usecond", "Gbyte/second", "byte/cycle", "cycle/nsecond", "cycle/nsecond", "cycle/nsecond", "inst", "inst/cycle",
             "inst/cycle", "inst/cycle", "inst/cycle"]
    values = ["10", "958.09", "180", "7.50", "1.50", "1.50", "16,384", "2,048", "512", "100", "50"]
    quote = lambda cells: ",".join(f'"{c}"' for c in cells)  # noqa: E731
    text = "\n".join([quote(["ID", "Kernel Name", *names]), quote(["", "", *units]), quote(["0", "k", *values])]) + "\n"
    [s] = read_exports({"raw.csv": text}).launches
    assert (s["dram_gbs"], s["dram_peak_gbs"], s["memory_source"]) == (958.1, 1350.0, "ncu-roofline")
    assert s["flop_precision"] == "fp32" and s["peak_flops_per_s"] == pytest.approx(16384 * 1.5e9)
    # FP32 (2,048 + 512) plus the two tensor source types (100 + 50), each counted once, per cycle at 1.5 GHz
    assert s["flops_per_s"] == pytest.approx((2048 + 512 + 150) * 1.5e9)


def test_raw_page_roofline_peak_agrees_with_ncus_own_dram_percent():
    # Values and units copied from the first launch of a real --set full raw page (elvispolimi/muDock,
    # roofline.csv at b947f98b52ac15c7bb563059642726eafc82bdef, GTX 1650, CC 7.5; 1.8 MB, too big to
    # keep whole): 32 byte/cycle at 3,510,932,224.84 hz is the DRAM peak, and 55,150,962,625.03 byte/s
    # over it must give the 49.09% ncu itself printed for gpu__dram_throughput. The derived FFMA
    # operation counts come in unit "thread".
    names = ["gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed", "dram__bytes.sum.peak_sustained",
             "dram__bytes.sum.per_second", "dram__cycles_elapsed.avg.per_second",
             "derived__sm__sass_thread_inst_executed_op_ffma_pred_on_x2",
             "derived__smsp__sass_thread_inst_executed_op_ffma_pred_on_x2",
             "derived__smsp__sass_thread_inst_executed_op_hadd_pred_on_x2", "sm__cycles_elapsed.avg.per_second"]
    units = ["%", "byte/cycle", "byte/s", "hz", "thread", "thread", "thread", "hz"]
    values = ["49.09", "32", "55,150,962,625.03", "3,510,932,224.84", "2,048", "26.80", "no data", "1,288,588,260.30"]
    quote = lambda cells: ",".join(f'"{c}"' for c in cells)  # noqa: E731
    text = "\n".join([quote(["ID", "Kernel Name", *names]), quote(["", "", *units]), quote(["0", "k", *values])]) + "\n"
    [s] = read_exports({"raw.csv": text}).launches
    assert (s["dram_gbs"], s["dram_pct"], s["dram_peak_gbs"]) == (55.2, 49.09, 112.3)
    assert s.get("memory_source") is None  # ncu's own % is there: nothing is filled
    assert s["flop_precision"] == "fp32" and s["peak_flops_per_s"] == pytest.approx(2048 * 1288588260.30)
    # without ncu's %, the memory side filled from its roofline peak is the same 49.09%
    without = text.replace('"gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",', "").replace('"%",', "", 1)
    without = without.replace('"49.09",', "")
    [filled] = read_exports({"raw.csv": without}).launches
    assert filled["memory_source"] == "ncu-roofline" and filled["memory_pct"] == pytest.approx(49.09, abs=0.005)


def test_a_lone_kernel_with_no_roof_gets_no_roofline_chart_and_its_claim_says_so(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from ikreport.cli.main import cli
    from ikreport.kinds.ncu_profile.roofline import NO_CHART
    from ikreport.commands.build import build_site
    from ikreport.store.archive import Archive

    # the real llm-perf-opt tensor GEMM: one kernel with FLOP data, no ncu roofline peaks, and no GPU named
    # (so no measured peak and no datasheet roof)
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1796169600")
    result = CliRunner().invoke(cli, ["collect", "ncu", "--from-csv",
                                      str(NCU / "ncu_details_llmperfopt_k0003_cmdline_plus_sections.csv"),
                                      "-a", str(tmp_path / "a")])
    assert result.exit_code == 0, result.output
    record_id = result.stdout.strip().splitlines()[-1]
    build_site(Archive.open(tmp_path / "a"), tmp_path / "site", cache_dir=tmp_path / "cache")
    page = (tmp_path / "site" / "e" / f"{record_id}.md").read_text("utf-8")
    assert f"381 FLOP per DRAM byte (first launch). {NO_CHART}" in page
    assert "Log-log roofline" not in page and "No memory roof" not in page
