"""Serving benchmarks and Nsight Systems kernel summaries as records (issue 30): the importers on
real public outputs and on small cases, refusals, and the claim across ncu and nsys records."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import FIXTURES
from ikreport.analysis import serving, sniff
from ikreport.analysis.nsys_stats import parse_stats_csv
from ikreport.cli.main import cli
from ikreport.commands.verify import verify_archive
from ikreport.errors import NsysStatsError, ServingOutputError
from ikreport.kinds.engine import claims_for
from ikreport.kinds.serving_benchmark import serving_claims
from ikreport.store import recordset
from ikreport.store.archive import Archive
from ikreport.commands.build import build_site

NSYS = FIXTURES / "nsys" / "nsys_kern_sum_llmperfopt_dsocr_allstage_rtx5090.csv"
SGLANG = FIXTURES / "serving" / "sglang_h200bench_llama33_70b_online_6runs.jsonl"
SGLANG_INF = FIXTURES / "serving" / "sglang_h200bench_deepseek_dpmla_inf_rate.jsonl"
AIPERF = FIXTURES / "serving" / "aiperf_example_run1_gptoss20b_profile_export_aiperf.csv"
NCU_GEMM = FIXTURES / "ncu" / "ncu_details_llmperfopt_k0003_cmdline_plus_sections.csv"
VLLM_DETAILS = FIXTURES / "serving" / "vllm_lambdalabs_sep2024_llama3_8b_h100_10req_details.json"
VLLM_NIGHTLY = FIXTURES / "serving" / "vllm_ascend_nightly_llama3_8b_qps_inf_no_throughput.json"
VLLM_SWEEP = FIXTURES / "serving" / "vllm_er0080_v0.25.1_sweep_opt125m_c2_run0.json"
VLLM_ALL_FAILED = FIXTURES / "serving" / "vllm_er0080_v0.25.1_all_requests_failed.json"
AIPERF_JSON = FIXTURES / "serving" / "aiperf_example_run1_gptoss20b_profile_export_aiperf.json"
AIPERF_JSON_13 = FIXTURES / "serving" / "aiperf_akamas_v0.11_qwen3_4b_c16_profile_export_aiperf.json"
VLLM = {"date": "20250530-203806", "backend": "vllm", "model_id": "m/x", "num_prompts": 4, "request_rate": "inf",
        "max_concurrency": 2, "completed": 3, "request_throughput": 2.5, "output_throughput": 80.0,
        "mean_ttft_ms": 120.0, "median_ttft_ms": 110.0, "p99_ttft_ms": 150.0, "p99.9_ttft_ms": 151.0,
        "mean_tpot_ms": 20.0, "ttfts": [0.1, 0.12, 0.0, 0.15], "itls": [[0.02, 0.02], [0.02], [], [0.03]],
        "input_lens": [8, 8, 8, 8], "output_lens": [3, 2, 0, 2], "errors": ["", "", "timeout", ""]}


def invoke(*args: str):
    return CliRunner().invoke(cli, list(args))


def test_the_real_nsys_summary_keeps_every_kernel_largest_first():
    parsed = parse_stats_csv(NSYS.read_text("utf-8"), str(NSYS))
    kernels = parsed["kernels"]
    assert parsed["report"] == "cuda_gpu_kern_sum" and len(kernels) == 113
    assert kernels[0].total_ns == 1231822285 and kernels[0].instances == 329035 and kernels[0].med_ns == 3712.0
    assert "gemvx::kernel" in kernels[0].name and kernels[0].nvtx_range is None
    assert [k.total_ns for k in kernels] == sorted((k.total_ns for k in kernels), reverse=True)


def test_a_gpu_trace_is_summarised_per_kernel_and_nvtx_ranges_are_kept_apart():
    trace = ("Start (ns),Duration (ns),CorrId,GrdX,GrdY,GrdZ,BlkX,BlkY,BlkZ,Name\n"
             "10,100,1,4,1,1,128,1,1,[decode]gemm_k\n20,300,2,4,1,1,128,1,1,[decode]gemm_k\n"
             "30,50,3,,,,,,,[CUDA memcpy HtoD]\n40,200,4,1,1,1,32,1,1,add_k\n")
    kernels = parse_stats_csv(trace, "t.csv")["kernels"]
    assert [(k.name, k.nvtx_range, k.total_ns, k.instances, k.med_ns) for k in kernels] == [
        ("gemm_k", "decode", 400.0, 2, 200.0), ("add_k", None, 200.0, 1, 200.0)]


def test_a_cut_nsys_row_is_refused_with_its_line():
    text = NSYS.read_text("utf-8").splitlines()
    with pytest.raises(NsysStatsError, match=r"^x\.csv:3: 4 fields"):
        parse_stats_csv("\n".join(text[:2] + ["6.1,302283088,37853,7985.7"]), "x.csv")


def test_sglang_runs_keep_unknowns_as_unknown_and_an_unbounded_rate():
    runs = serving.parse_sglang(SGLANG.read_text("utf-8"), str(SGLANG))
    assert len(runs) == 7 and [r["line"] for r in runs] == list(range(1, 8))
    first = runs[0]
    assert first["settings"]["request_rate"] == 1.0 and first["settings"]["max_concurrency"] is None
    assert first["figures"]["median_ttft_ms"] == pytest.approx(85.745, abs=1e-3)
    assert "mean_ttft_ms" not in first["figures"] and first["settings"]["failed"] is None  # never 0
    inf = serving.parse_sglang(SGLANG_INF.read_text("utf-8"), str(SGLANG_INF))[0]
    assert inf["settings"]["request_rate"] == "inf"


def test_sglang_random_lengths_are_a_most_and_a_sharegpt_run_has_none(tmp_path):
    """SGLang draws a random dataset's lengths between random_range_ratio x the length and the
    length: with 0.0 the page said "1024 in, 1024 out" for requests of about 510; and it writes
    random_input_len for a sharegpt run too, whose prompts are the dataset's (a review helper
    found both)."""
    runs = serving.parse_sglang(SGLANG.read_text("utf-8"), str(SGLANG))
    drawn = [r["settings"] for r in runs if r["settings"]["dataset"] == "random"]
    shared = [r["settings"] for r in runs if r["settings"]["dataset"] == "sharegpt"]
    assert drawn and all(s["length_range_ratio"] == 0.0 and s["input_len"] == 1024 for s in drawn)
    assert shared and all(s["input_len"] is None and s["output_len"] is None and "length_range_ratio" not in s
                          for s in shared)
    fixed = serving.parse_sglang(SGLANG_INF.read_text("utf-8"), str(SGLANG_INF))[0]["settings"]  # ratio 1.0
    assert "length_range_ratio" not in fixed and (fixed["input_len"], fixed["output_len"]) == (1, 512)
    result = invoke("collect", "serving", "--from-sglang", str(SGLANG), "-a", str(tmp_path / "a"))
    assert result.exit_code == 0, result.output
    build_site(Archive.open(tmp_path / "a"), tmp_path / "site", cache_dir=tmp_path / "c")
    first = (tmp_path / "site" / "e" / f"{result.output.strip().split(',')[0]}.md").read_text("utf-8")
    d = drawn[0]
    assert (f"**tokens per request**: up to 1024 in, up to 1024 out (each request's drawn at random from 0% of these "
            f"up; {d['total_input_tokens'] / d['completed']:.0f} in, {d['total_output_tokens'] / d['completed']:.0f} "
            "out on average)") in first


def test_aiperf_csv_blocks_give_percentiles_and_failed_requests():
    run = serving.parse_aiperf(AIPERF.read_text("utf-8"), str(AIPERF))
    f = run["figures"]
    assert (f["mean_ttft_ms"], f["p99_ttft_ms"], f["median_itl_ms"]) == (2343.22, 3833.39, 27.62)
    assert (f["request_throughput"], run["settings"]["completed"], run["settings"]["failed"]) == (9.55, 89, 11)


def test_aiperf_json_reads_the_same_figures_and_its_settings():
    doc = {"records": {"ttft": {"unit": "ms", "avg": 10.0, "p50": 9.0, "p99": 20.0},
                       "request_count": {"avg": 5.0}, "request_throughput": {"avg": 2.0}},
           "input_config": {"endpoint": {"model_names": ["m"], "type": "chat"}, "loadgen": {"concurrency": 4}}}
    run = serving.parse_aiperf(json.dumps(doc), "a.json")
    assert run["figures"]["median_ttft_ms"] == 9.0 and run["settings"]["max_concurrency"] == 4
    assert run["settings"]["model"] == "m" and run["figures"]["output_throughput"] is None


def test_vllm_per_request_samples_leave_out_failed_and_tokenless_requests():
    run = serving.parse_vllm(json.dumps(VLLM), "v.json")
    assert run["samples"]["ttft_ms"] == [100.0, 120.0, 150.0] and run["samples"]["errored"] == 1
    assert run["figures"]["p99_9_ttft_ms"] == 151.0  # a dot would cut a citation's path
    assert run["settings"]["request_rate"] == "inf" and run["settings"]["failed"] == 1


def test_a_cut_json_file_and_a_cut_jsonl_line_are_refused_with_file_and_line(tmp_path):
    with pytest.raises(ServingOutputError, match=r"^v\.json:1: not complete JSON"):
        serving.parse_vllm(json.dumps(VLLM)[:50], "v.json")
    lines = SGLANG.read_text("utf-8").splitlines()
    cut = tmp_path / "cut.jsonl"
    cut.write_text("\n".join(lines[:2] + [lines[2][:40]] + lines[3:]) + "\n", "utf-8")
    archive = tmp_path / "a"
    result = invoke("collect", "serving", "--from-sglang", str(cut), "-a", str(archive))
    assert result.exit_code == 1 and f"{cut}:3: not complete JSON" in result.output
    assert not list((archive / "records").rglob("*.json"))  # nothing half-written


def test_the_wrong_file_for_an_option_is_named_as_what_it_is(tmp_path):
    result = invoke("collect", "serving", "--from-vllm", str(AIPERF), "-a", str(tmp_path / "a"))
    assert result.output.strip().endswith("this is an AIPerf profile export; give it to 'collect serving --from-aiperf'")
    result = invoke("collect", "nsys", "--from-csv", str(SGLANG), "-a", str(tmp_path / "a"))
    assert "this is SGLang bench_serving output; give it to 'collect serving --from-sglang'" in result.output
    result = invoke("collect", "serving", "--from-aiperf", str(NSYS), "-a", str(tmp_path / "a"))
    assert "this is nsys stats CSV output; give it to 'collect nsys --from-csv'" in result.output
    assert sniff.identify(NCU_GEMM.read_text("utf-8")) == "ncu-csv"


def test_imported_serving_records_verify_and_say_what_the_numbers_do_not_show(tmp_path):
    archive = tmp_path / "a"
    vllm = tmp_path / "v.json"
    vllm.write_text(json.dumps(VLLM), "utf-8")
    result = invoke("collect", "serving", "--from-vllm", str(vllm), "-a", str(archive), "--gpu", "H100")
    assert result.exit_code == 0, result.output
    ids = invoke("collect", "serving", "--from-sglang", str(SGLANG), "-a", str(archive)).output.strip().split(",")
    assert len(ids) == 7
    records = recordset.load(Archive.open(archive))
    record = records.records[result.output.strip()]
    assert record["data"]["mean_ttft_ms"] == 120.0 and record["subject"]["engine"] == "vllm"
    limits = " ".join(record["limitations"])
    assert "Client-side timing" in limits and "One run" in limits and "1 requests failed" in limits
    assert "keeps each request's latencies" in limits
    assert "does not say how many requests failed" in " ".join(records.records[ids[0]]["limitations"])
    assert verify_archive(Archive.open(archive)) == []


def _archive_with(tmp_path: Path, nsys_gpu: str, ncu_gpu: str, workload: str = "OCR, 64 new tokens") -> recordset.RecordSet:
    archive = tmp_path / "a"
    for args in (("nsys", "--from-csv", str(NSYS), "--gpu", nsys_gpu),
                 ("ncu", "--from-csv", str(NCU_GEMM), "--gpu", ncu_gpu)):
        result = invoke("collect", *args, "-a", str(archive), "--workload", workload, "--model", "DeepSeek-OCR")
        assert result.exit_code == 0, result.output
    return recordset.load(Archive.open(archive))


def _beside(records: recordset.RecordSet):
    (nsys_id,) = records.by_kind["nsys-kernel-summary"]
    return [c for c in claims_for(nsys_id, records.records[nsys_id], records) if c.rule == "nsys-beside-ncu"]


def test_a_kernel_ncu_calls_memory_bound_is_given_its_share_of_real_kernel_time(tmp_path):
    records = _archive_with(tmp_path, "NVIDIA GeForce RTX 5090", "nvidia geforce rtx 5090")
    (claim,) = _beside(records)
    assert claim.text.startswith("cutlass::Kernel2<…> takes 6.1% of kernel time in this real run (rank 3 of 113")
    assert "ncu calls it memory-bound at 61.8% of peak memory throughput" in claim.text
    assert len(claim.cites) == 2 and len(claim.limitations) == 2  # both records' limitations beside it


def test_no_claim_across_kinds_when_the_gpu_or_workload_differ(tmp_path):
    assert _beside(_archive_with(tmp_path / "g", "NVIDIA GeForce RTX 5090", "NVIDIA GeForce RTX 4090")) == []
    records = _archive_with(tmp_path / "w", "NVIDIA GeForce RTX 5090", "NVIDIA GeForce RTX 5090")
    assert len(_beside(records)) == 1
    other = tmp_path / "w2"
    invoke("collect", "nsys", "--from-csv", str(NSYS), "-a", str(other), "--gpu", "NVIDIA GeForce RTX 5090",
           "--workload", "prefill only")
    invoke("collect", "ncu", "--from-csv", str(NCU_GEMM), "-a", str(other), "--gpu", "NVIDIA GeForce RTX 5090",
           "--workload", "decode only")
    assert _beside(recordset.load(Archive.open(other))) == []


def _import(tmp_path: Path, option: str, path: Path) -> dict:
    archive = tmp_path / "a"
    result = invoke("collect", "serving", option, str(path), "-a", str(archive))
    assert result.exit_code == 0, result.output
    record = recordset.load(Archive.open(archive)).records[result.output.strip()]
    assert verify_archive(Archive.open(archive)) == []
    return record


def test_a_real_2024_vllm_result_keeps_its_figures_settings_and_per_request_samples(tmp_path):
    saved = json.loads(VLLM_DETAILS.read_text("utf-8"))
    record = _import(tmp_path, "--from-vllm", VLLM_DETAILS)
    d = record["data"]
    assert (d["median_ttft_ms"], d["p99_tpot_ms"], d["median_itl_ms"]) == (
        saved["median_ttft_ms"], saved["p99_tpot_ms"], saved["median_itl_ms"])
    assert d["mean_e2el_ms"] == saved["mean_latency_ms"]  # the 2024 name of the end-to-end latency
    assert (d["model"], d["request_rate"], d["num_prompts"], d["completed"]) == (
        "meta-llama/Meta-Llama-3-8B-Instruct", "inf", 10, 10)
    assert d["max_concurrency"] is None  # the file has no such key: unknown, not 0
    assert d["failed"] == 0 and d["run_date"] == "20240907-082731"  # errors all "": none failed
    samples = d["samples"]
    assert len(samples["ttft_ms"]) == 10 and samples["ttft_ms"][0] == 63.3895
    assert sum(samples["ttft_ms"]) / 10 == pytest.approx(saved["mean_ttft_ms"], abs=1e-3)
    # a chunk holds several tokens here (120 tokens in 13 chunks): the per-request TPOT is the time
    # after the first token over the tokens after it, near vLLM's median, not the 72 ms chunk gap
    tpots = sorted(samples["tpot_ms"])
    assert len(tpots) == 10 and (tpots[4] + tpots[5]) / 2 == pytest.approx(saved["median_tpot_ms"], rel=0.02)
    assert " ".join(record["limitations"]).count("keeps each request's latencies") == 1
    assert "(10 requests that gave a first token)" in " ".join(record["limitations"])


def test_a_real_vllm_result_without_throughput_or_counts_leaves_them_unknown(tmp_path):
    record = _import(tmp_path, "--from-vllm", VLLM_NIGHTLY)
    d = record["data"]
    assert d["median_ttft_ms"] == 14025.211746804416 and d["p99_itl_ms"] == 137.1021644771099
    assert d["request_rate"] == "inf" and d["num_prompts"] == 200 and d["run_date"] == "20250227-025338"
    for key in ("request_throughput", "output_throughput", "completed", "failed", "duration_s", "max_concurrency"):
        assert d.get(key) is None, key  # never 0
    assert d["samples"] is None
    limits = " ".join(record["limitations"])
    assert "does not say how many requests failed" in limits and "keeps no per-request latencies" in limits


def test_a_real_vllm_sweep_run_keeps_concurrency_and_end_to_end_latency(tmp_path):
    record = _import(tmp_path, "--from-vllm", VLLM_SWEEP)
    d = record["data"]
    assert (d["max_concurrency"], d["request_rate"], d["num_prompts"], d["completed"], d["failed"]) == (
        2, "inf", 8, 8, 0)
    assert d["model"] == "facebook/opt-125m" and d["median_ttft_ms"] == 44.92285849846667
    assert d["p99_e2el_ms"] == 876.8009717071254 and d["request_throughput"] == 5.859229976904171
    assert d.get("request_goodput") is None  # null in the file
    assert "concurrency 2" in record["title"] and "rate inf" in record["title"]


def test_a_real_vllm_run_where_every_request_failed_shows_no_latency_not_zero(tmp_path):
    saved = json.loads(VLLM_ALL_FAILED.read_text("utf-8"))
    assert saved["completed"] == 0 and saved["median_ttft_ms"] == 0.0  # what vLLM writes
    record = _import(tmp_path, "--from-vllm", VLLM_ALL_FAILED)
    d = record["data"]
    latencies = {k: v for k, v in d.items() if k.endswith("_ms")}
    assert latencies and all(v is None for v in latencies.values())
    assert (d["completed"], d["failed"], d["request_throughput"]) == (0, 8, 0.0)
    assert "No request completed (8 failed)" in " ".join(record["limitations"])
    records = recordset.load(Archive.open(tmp_path / "a"))
    (record_id,) = records.by_kind["serving-benchmark"]
    (claim,) = serving_claims(record_id, record, records)
    assert claim.text.startswith("vLLM benchmark_serving recorded no latency figure for this run.")
    build_site(Archive.open(tmp_path / "a"), tmp_path / "site", cache_dir=tmp_path / "c")
    for ext in ("md", "html"):  # a table of headers and no rows read as a page cut short
        page = (tmp_path / "site" / "e" / f"{record_id}.{ext}").read_text("utf-8")
        heading = "## {}" if ext == "md" else "<h2>{}</h2>"
        latency = page[page.index(heading.format("Latency")):page.index(heading.format("Throughput"))]
        assert "The file records no latency (no request completed, or the tool saved none)." in latency
        assert "p99" not in latency and "<table" not in latency


def test_the_real_aiperf_json_agrees_with_the_csv_of_the_same_run_and_keeps_its_load(tmp_path):
    run = serving.parse_aiperf(AIPERF_JSON.read_text("utf-8"), str(AIPERF_JSON))
    csv_run = serving.parse_aiperf(AIPERF.read_text("utf-8"), str(AIPERF))
    for key, value in csv_run["figures"].items():
        assert run["figures"][key] == pytest.approx(value, abs=0.006), key  # the CSV rounds to 2 places
    s = run["settings"]
    assert (s["model"], s["max_concurrency"], s["num_prompts"], s["completed"], s["failed"]) == (
        "openai/gpt-oss-20b", 100, 100, 89, 11)
    assert s["request_rate"] is None and s["output_len"] == 250 and "--request-cancellation-rate 10" in s["command"]
    assert run["figures"]["median_ttft_ms"] == 2369.317693 and run["samples"] is None
    record = _import(tmp_path, "--from-aiperf", AIPERF_JSON)  # its command line is one string: kept as words
    assert record["method"]["command"][:4] == ["aiperf", "profile", "-m", "openai/gpt-oss-20b"]
    assert record["data"]["command"] == s["command"]


def test_a_real_aiperf_schema_1_3_json_is_read_with_its_version_model_and_concurrency(tmp_path):
    text = AIPERF_JSON_13.read_text("utf-8")
    assert sniff.identify(text) == "aiperf-export"
    result = invoke("collect", "serving", "--from-vllm", str(AIPERF_JSON_13), "-a", str(tmp_path / "x"))
    assert result.output.strip().endswith("give it to 'collect serving --from-aiperf'")
    record = _import(tmp_path, "--from-aiperf", AIPERF_JSON_13)
    d = record["data"]
    assert record["method"]["tool_version"] == "0.11.0" and record["sources"][0]["media_type"] == "application/json"
    assert (d["median_ttft_ms"], d["p99_ttft_ms"], d["p50_itl_ms"]) == (26.7700945, 66.76023583999999,
                                                                         8.731694873219372)
    assert d["median_e2el_ms"] == 2191.4849815 and d["output_throughput"] == 1792.2310692134672
    assert (d["model"], d["max_concurrency"], d["completed"], d["failed"]) == ("qwen3-4b", 16, 2044, 0)
    assert d["num_prompts"] is None and d["request_rate"] is None  # a 300 s run at a fixed concurrency
    assert d["duration_s"] == 299.935655192 and "--concurrency '16,32" in d["command"]
    assert "--concurrency" in record["method"]["command"] and "16,32,64,96,128,192,256,320,384,512,640,768" in \
        record["method"]["command"]


def test_a_client_api_is_not_taken_for_the_serving_engine(tmp_path):
    """vLLM's 'openai' backend and AIPerf's endpoint type ('chat') name the API the client spoke:
    pages showed them as the engine, and series and comparisons grouped by them (a review helper)."""
    akamas = FIXTURES / "serving" / "aiperf_akamas_v0.11_qwen3_4b_c16_profile_export_aiperf.json"
    for option, path, engine in (("--from-vllm", VLLM_SWEEP, None), ("--from-aiperf", akamas, None),
                                 ("--from-vllm", VLLM_DETAILS, "vllm")):
        assert (_import(tmp_path / option / path.stem, option, path)["subject"].get("engine")) == engine, path.name
    stated = invoke("collect", "serving", "--from-vllm", str(VLLM_SWEEP), "-a", str(tmp_path / "s"), "--engine", "vLLM 0.6")
    assert recordset.load(Archive.open(tmp_path / "s")).records[stated.output.strip()]["subject"]["engine"] == "vLLM 0.6"
