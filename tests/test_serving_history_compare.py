"""Serving benchmarks over time and side by side (issue 30): runs of one GPU, engine, model,
workload and load form a history series on the site, and ``compare`` takes two runs, with an
interval over requests when both kept per-request latencies and UNDECIDED with the reason when
not. vLLM results are written here (the fixtures' vLLM-shaped files keep no per-request lists);
the SGLang file is the real one from tests/fixtures/serving."""

from __future__ import annotations

import json
import re

import pytest

from conftest import FIXTURES
from ikreport.store.archive import Archive

SGLANG = FIXTURES / "serving" / "sglang_h200bench_llama33_70b_online_6runs.jsonl"
NCU_GEMM = FIXTURES / "ncu" / "ncu_details_llmperfopt_k0003_cmdline_plus_sections.csv"
DAY = 86400


def vllm_result(ttft_ms: float, requests: int = 40, samples: bool = True, rate: float = 4.0,
                model: str = "meta-llama/Llama-3.1-8B-Instruct") -> dict:
    """A vLLM --save-result file: TTFTs spread ±5% around ``ttft_ms``, four 10 ms gaps a request."""
    ttfts = [ttft_ms * (1 + 0.01 * ((i * 7) % 11 - 5)) / 1e3 for i in range(requests)]
    result = {"backend": "vllm", "model_id": model, "num_prompts": requests, "request_rate": rate,
              "max_concurrency": 8, "completed": requests, "request_throughput": 3.9, "output_throughput": 512.0,
              "mean_ttft_ms": ttft_ms, "median_ttft_ms": ttft_ms, "p99_ttft_ms": ttft_ms * 1.05,
              "mean_tpot_ms": 10.0, "median_tpot_ms": 10.0, "random_input_len": 512, "random_output_len": 128}
    if samples:
        result.update(ttfts=ttfts, itls=[[0.01 * (1 + 0.001 * (i % 5))] * 4 for i in range(requests)],
                      errors=[""] * requests, input_lens=[512] * requests, output_lens=[5] * requests)
    return result


@pytest.fixture
def collect(tmp_path, monkeypatch, run):
    """Import a vLLM result on a given day into tmp_path/arch; returns its record id."""
    arch = tmp_path / "arch"

    def collect_one(day: int, result: dict, gpu: str = "NVIDIA H100", workload: str = "chat, 512 in") -> str:
        monkeypatch.setenv("SOURCE_DATE_EPOCH", str(1796169600 + day * DAY))
        path = tmp_path / f"v{len(list(tmp_path.glob('v*.json')))}.json"
        path.write_text(json.dumps(result), "utf-8")
        out = run("collect", "serving", "--from-vllm", path, "-a", arch, "--gpu", gpu, "--workload", workload)
        assert out.exit_code == 0, out.output
        return out.stdout.strip()
    return collect_one


def build(run, tmp_path):
    out = run("build", tmp_path / "arch", "-o", tmp_path / "site", "--cache-dir", tmp_path / "c")
    assert out.exit_code == 0, out.output
    return tmp_path / "site"


def test_serving_runs_of_one_load_form_a_history_with_a_change_and_links_to_each_run(collect, run, tmp_path):
    ids = [collect(day, vllm_result(ttft, samples=day != 3)) for day, ttft in enumerate((100.0, 101.0, 130.0, 131.0))]
    other = collect(4, vllm_result(100.0, rate=8.0))  # another request rate: another workload, not a change
    site = build(run, tmp_path)
    index = (site / "index.md").read_text()
    (link,) = re.findall(r"\[chat, 512 in on NVIDIA H100 \(vllm, [^\n]*request rate 4 requests/s[^\n]*\]"
                         r"\((h/[a-z0-9-]+\.md)\) \(4 runs\)", index)
    page = (site / link).read_text()
    for rid in ids:
        assert f"[`{rid[:8]}`](../e/{rid}.md)" in page
    assert other[:8] not in page
    assert ("- median time to first token: SLOWER from \\#2 to \\#3, B/A 1.287 \\[" in page
            and f"first record after the change: [\\[{ids[2][:8]}\\]](../e/{ids[2]}.md)" in page)
    assert page.count("SLOWER (B/A") == 1  # #4 kept no per-request latencies: no change is marked beside it
    assert re.search(rf"\| \\#4 \| \[`{ids[3][:8]}`\][^\n]* \| 131 ms \| not kept \|  \|", page)
    assert "## Output throughput" in page and "| 512 tokens/s | 40 |" in page
    svg = re.search(r"\(\.\./charts/([0-9a-f]{64})\.svg\)", page).group(1)
    assert f'href="../e/{ids[0]}.html"' in (site / "charts" / f"{svg}.svg").read_text()  # points link to runs
    html = (site / link).with_suffix(".html").read_text()
    assert f'href="../e/{ids[2]}.html"' in html and "<h2>Runs</h2>" in html


def test_sglang_lines_at_different_loads_form_no_series(run, tmp_path):
    out = run("collect", "serving", "--from-sglang", SGLANG, "-a", tmp_path / "arch", "--gpu", "NVIDIA H200",
              "--workload", "online")
    assert out.exit_code == 0, out.output
    site = build(run, tmp_path)  # rates 8 and 4 come twice, but once on the random and once on the sharegpt dataset
    assert not (site / "h").exists() and "## History" not in (site / "index.md").read_text()


def records_in(arch) -> list[str]:
    return sorted(p.name for p in (arch / "records").rglob("*.json"))


def test_compare_of_two_runs_with_per_request_latencies_gives_a_verdict_with_its_interval(collect, run, tmp_path):
    from ikreport.commands.verify import verify_archive

    a, b = collect(0, vllm_result(100.0)), collect(1, vllm_result(130.0))
    out = run("compare", a[:10], b, "-a", tmp_path / "arch")
    assert out.exit_code == 0, out.output
    lines = out.stdout.splitlines()
    (ttft,) = [x for x in lines if x.startswith("| time to first token |")]
    assert re.fullmatch(r"\| time to first token \| 40 \| 40 \| 100 \| 130 \| 1\.300 \[1\.2\d\d, 1\.3\d\d\] \| SLOWER \|",
                        ttft), ttft
    assert "| time per output token | 40 | 40 | 10.02 | 10.02 | 1.000 [" in out.stdout and "| SAME |" in out.stdout
    assert "One run a side: the interval is over the requests of one run" in out.stdout
    made = lines[-1]
    archive = Archive.open(tmp_path / "arch")
    record = archive.load(made)
    assert record["data"]["unit"] == "request" and record["cites"] == sorted([a, b])
    assert any(x.startswith("Client-side timing") for x in record["limitations"])
    assert verify_archive(archive) == []  # the comparison schema takes it
    again = run("compare", a, b, "-a", tmp_path / "arch")
    assert again.stdout.splitlines()[-1] == made  # a fixed seed and no clock: the same record
    page = (build(run, tmp_path) / "e" / f"{made}.md").read_text()
    assert "## Latencies" in page and "| time to first token | 40 | 40 | 100 ms | 130 ms | 1.300 \\[" in page
    assert "Time to first token: 130 ms in B against 100 ms in A (median of 40 requests in A and 40 in B" in page


def test_a_run_without_per_request_latencies_leaves_the_comparison_undecided_and_says_why(collect, run, tmp_path):
    a, b = collect(0, vllm_result(100.0)), collect(1, vllm_result(130.0, samples=False))
    out = run("compare", a, b, "-a", tmp_path / "arch")
    assert out.exit_code == 0, out.output
    assert "| time to first token | 40 | 0 | 100 | 130 | 1.300 | UNDECIDED |" in out.stdout
    # B completed its requests: the 0 counts latencies kept, which the column says (it said "B requests")
    assert "| latency | A latencies kept | B latencies kept | A median (ms) |" in out.stdout
    assert (f"- time to first token: UNDECIDED: record {b[:12]} kept no per-request latencies; the tool's percentiles "
            "cannot give an interval" in out.stdout)
    record = Archive.open(tmp_path / "arch").load(out.stdout.splitlines()[-1])
    assert {m["verdict"] for m in record["data"]["metrics"]} == {"UNDECIDED"}
    assert f"Record {b[:12]} kept no per-request latencies; the tool's percentiles cannot give an interval." in \
        record["limitations"]


def test_the_real_sglang_runs_kept_no_latencies_and_differ_in_load(run, tmp_path):
    arch = tmp_path / "arch"
    out = run("collect", "serving", "--from-sglang", SGLANG, "-a", arch, "--gpu", "NVIDIA H200")
    first, second = out.stdout.strip().split(",")[:2]
    out = run("compare", first, second, "-a", arch, "--no-record")
    assert out.exit_code == 0, out.output
    assert (f"records {first[:12]} and {second[:12]} kept no per-request latencies; the tool's percentiles cannot "
            "give an interval") in out.stdout
    assert "**Not like-for-like: no difference is called.**" in out.stdout
    assert "- request rate: A 1, B 2 (differs)" in out.stdout.splitlines()
    assert "- model: not recorded for A or B" in out.stdout.splitlines()  # the file names no model: state it
    assert "- Re-import A stating how it was made: `--model VALUE` (VALUE: what it ran with)" in out.stdout


def test_runs_of_another_model_or_gpu_are_not_like_for_like(collect, run, tmp_path):
    a = collect(0, vllm_result(100.0))
    other_model = collect(1, vllm_result(130.0, model="Qwen/Qwen2.5-7B"))
    other_gpu = collect(2, vllm_result(130.0), gpu="NVIDIA H200")
    out = run("compare", a, other_model, "-a", tmp_path / "arch", "--no-record")
    assert "- model: A meta-llama/Llama-3.1-8B-Instruct, B Qwen/Qwen2.5-7B (differs)" in out.stdout
    assert "| time to first token | 40 | 40 | 100 | 130 | 1.300 [" in out.stdout and "| SLOWER |" not in out.stdout
    assert out.stdout.count("| UNDECIDED |") == 2 and "- Model differs: compare runs made the same way." in out.stdout
    out = run("compare", a, other_gpu, "-a", tmp_path / "arch", "--no-record")
    assert "- gpu: A NVIDIA H100, B NVIDIA H200 (differs)" in out.stdout and out.stdout.count("| UNDECIDED |") == 2


def test_compare_refuses_an_ncu_profile_against_a_serving_run_in_one_line(collect, run, tmp_path):
    serving = collect(0, vllm_result(100.0))
    arch = tmp_path / "arch"
    profile = run("collect", "ncu", "--from-csv", NCU_GEMM, "-a", arch, "--gpu", "NVIDIA H100").stdout.strip()
    before = records_in(arch)
    for a, b in ((profile, serving), (serving, profile)):
        out = run("compare", a, b, "-a", arch)
        assert out.exit_code == 1 and out.stdout == ""
        (line,) = out.stderr.splitlines()
        kinds = {a: "an ncu-profile", b: "a serving-benchmark"} if a == profile else {
            a: "a serving-benchmark", b: "an ncu-profile"}
        assert line == (f"Error: {a[:12]} is {kinds[a]} record and {b[:12]} is {kinds[b]} record; compare takes "
                        "records of one kind")
    assert records_in(arch) == before


def test_sglang_runs_with_random_and_fixed_lengths_are_not_like_for_like(run, tmp_path):
    """'up to 1024' and 'exactly 1024' tokens a request are different loads: the ratio is compared."""
    arch = tmp_path / "arch"
    line = SGLANG.read_text("utf-8").splitlines()[0]
    assert '"random_range_ratio": 0.0' in line
    ids = []
    for name, ratio in (("drawn", "0.0"), ("fixed", "1.0")):
        (tmp_path / f"{name}.jsonl").write_text(line.replace('"random_range_ratio": 0.0', f'"random_range_ratio": {ratio}')
                                                + "\n")
        out = run("collect", "serving", "--from-sglang", tmp_path / f"{name}.jsonl", "-a", arch, "--gpu", "NVIDIA H200",
                  "--model", "Llama")
        assert out.exit_code == 0, out.output
        ids.append(out.stdout.strip())
    out = run("compare", *ids, "-a", arch, "--no-record")
    assert out.exit_code == 0, out.output
    assert "**Not like-for-like: no difference is called.**" in out.stdout
    # the ratio of 1.0 is no draw: its lengths are fixed, which its file does say
    assert "- token lengths: A drawn at random from 0% of the most up, B fixed (differs)" in out.stdout.splitlines(), \
        out.stdout


def test_review_of_the_serving_changes_holds():
    """What a review helper found in the first version of these changes: a series' name changed
    ('1024 in' for '1,024 in', so its page moved); a record imported before, whose engine is the
    API 'openai', read as an engine stated; SGLang's random-ids dataset lost its lengths."""
    from ikreport.analysis import serving
    from ikreport.commands.like_for_like import serving_fields
    from ikreport.kinds.serving_history import shared

    assert shared({"data": {"tool": "t", "input_len": 1024, "output_len": 128}})["tokens per request"] == \
        "1,024 in, 128 out"
    old = {"subject": {"engine": "openai", "model": "m"}, "data": {"backend": "openai", "model": "m", "tool": "vLLM"}}
    assert serving_fields(old)["engine"] == (None, "missing")
    line = SGLANG.read_text("utf-8").splitlines()[0].replace('"dataset_name": "random"', '"dataset_name": "random-ids"')
    (run,) = serving.parse_sglang(line + "\n", "r.jsonl")
    assert (run["settings"]["input_len"], run["settings"]["length_range_ratio"]) == (1024, 0.0)
