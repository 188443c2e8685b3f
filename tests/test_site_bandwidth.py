"""Bandwidth and environment on the site: their pages, and each kernel's DRAM throughput as
a share of the measured peak of the same GPU model, cited to both records."""

from __future__ import annotations

import os

import pytest
from click.testing import CliRunner

from conftest import FIXTURES, NCU, ROOT
from ikreport.store.archive import Archive
from ikreport.claims.gpus import gpu_key
from ikreport.cli.main import cli
from ikreport.commands.build import build_site

STANDINS = ROOT / "tests" / "standins"


def run(*args):
    result = CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.stdout.strip().splitlines()[-1]


def profile_and_peak(arch, monkeypatch, profile_gpu: str, peak_gpu: str) -> tuple[str, str]:
    """The k0003 GEMM profile and a (stand-in) bandwidth measurement, each under a GPU name."""
    monkeypatch.setenv("PATH", f"{STANDINS}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1796169600")
    profile = run("collect", "ncu", "--from-csv", NCU / "ncu_details_llmperfopt_k0003_cmdline_plus_sections.csv",
                  "-a", arch, "--gpu", profile_gpu)
    peak = run("collect", "bandwidth", "--backend", "nvcc", "--size-mib", 256, "--repeats", 3, "--warmup", 0,
               "-a", arch, "--gpu", peak_gpu)
    return profile, peak


@pytest.fixture
def site(tmp_path, monkeypatch):
    """A profile and a bandwidth measurement of the same GPU model, plus one of another."""
    arch = tmp_path / "arch"
    profile, peak = profile_and_peak(arch, monkeypatch, "NVIDIA RTX 5090", "nvidia  RTX 5090")
    other = run("collect", "bandwidth", "--from-babelstream",
                FIXTURES / "bandwidth" / "babelstream_alcfguide_a100_v4.0_trailingspaces_excerpt.txt", "-a", arch)
    out = tmp_path / "site"
    build_site(Archive.open(arch), out, cache_dir=tmp_path / "cache")
    return Archive.open(arch), out, profile, peak, other


def test_gpu_model_matching():
    assert gpu_key("NVIDIA H200") == gpu_key("nvidia  h200") == "h200"
    assert gpu_key("2x NVIDIA H100 80GB HBM3") == "h100 80gb hbm3"
    assert gpu_key(None) is None and gpu_key("NVIDIA H100") != gpu_key("NVIDIA H200")


def test_kernel_share_of_measured_peak_cites_both_records(site):
    archive, out, profile, peak, other = site
    html = (out / "e" / f"{profile}.html").read_text("utf-8")
    peak_gbs = archive.load(peak)["data"]["peak_gbs"]
    gbs = archive.load(profile)["data"]["launches"][0]["dram_gbs"]
    sentence = (f"Kernel2&lt;…&gt; moves {gbs:.1f} GB/s to and from DRAM, {100 * gbs / peak_gbs:.1f}% of the "
                f"measured peak of {peak_gbs / 1e3:.2f} TB/s on this GPU model (first launch).")
    assert sentence in html
    group = html.split(sentence)[1].split('<div class="claim-group">')[0]
    assert f'href="../e/{profile}.html"' in html.split(sentence)[1].split("</p>")[0]
    assert f'href="../e/{peak}.html"' in html.split(sentence)[1].split("</p>")[0]
    for limitation in archive.load(peak)["limitations"]:
        assert limitation.replace("'", "&#39;") in group  # the bandwidth record's limitations sit beside it too
    assert other not in html  # an A100 measurement is never the peak of an RTX 5090


def test_bandwidth_and_environment_pages(site):
    archive, out, profile, peak, other = site
    record = archive.load(peak)
    html = (out / "e" / f"{peak}.html").read_text("utf-8")
    assert "Measured peak memory bandwidth:" in html and "read+write" in html
    assert html.count("<svg") == 1  # samples by size
    assert "Every timed copy" in html
    env_id = record["environment"]
    env_html = (out / "e" / f"{env_id}.html").read_text("utf-8")
    assert "NVIDIA GeForce RTX 3060 Laptop GPU" in env_html and "GPU-20606811-3bb2-e6b5-ec74-b477d9c1d1d8" in env_html
    assert f'href="{peak}.html"' in env_html  # cited by
    babel = (out / "e" / f"{other}.md").read_text("utf-8")
    assert "| Copy | 1.39 TB/s | 0.00038 | 0.00039 | 0.00039 |" in babel  # BabelStream's figure, its times as printed


def test_sample_site_has_bandwidth_and_environment_pages():
    archive = Archive.open(ROOT / "sample_evidence")
    kinds = {archive.load(r)["kind"] for r in archive.record_ids()}
    assert kinds == {"ncu-profile", "peak-bandwidth", "environment", "comparison", "serving-benchmark",
                     "nsys-kernel-summary"}


def test_roofline_roofs_are_cited_or_labelled(tmp_path, monkeypatch):
    arch = tmp_path / "arch"
    profile, peak = profile_and_peak(arch, monkeypatch, "NVIDIA H200", "NVIDIA H200")
    build_site(Archive.open(arch), tmp_path / "site", cache_dir=tmp_path / "cache")
    html = (tmp_path / "site" / "e" / f"{profile}.html").read_text("utf-8")
    figure = html[html.index("<figcaption>Roofline</figcaption>"):].split("</figure>")[0]
    peak_gbs = Archive.open(arch).load(peak)["data"]["peak_gbs"]
    assert f'Memory roof: the measured peak of {peak_gbs / 1e3:.2f} TB/s <a class="cite" href="{peak}.html">' in figure
    assert "Compute roof: 989 TFLOP/s dense BF16, a datasheet value, not measured." in figure
    assert '<a xlink:href="#k-1">' in figure  # the kernel's point links to its row
    assert "vega.github.io" not in html
