"""The site as a reader meets it (issue 16 items 6-12), on the sample archive with real exports
from tests/fixtures added (tests/readers_site.py): a profile imported twice under one title, one
superseding the other, an automatic title, and a comparison of two imports of the B200 export under
one workload, which make a history series."""

from __future__ import annotations

import re

import pytest

from ikreport.store.archive import Archive
from readers_site import B200_WORKLOAD, CUTLASS_OLD, CUTLASS_TITLE, build_readers_site

SAMPLE_COMPARISON = "ca789aafa5c5b1bf38d8f01584a0f9f60a93a043c4b8128d21430e1c06cf895f"  # cites CUTLASS_OLD


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    return build_readers_site(tmp_path_factory.mktemp("readers"))


def page(site, path: str) -> str:
    return (site["out"] / path).read_text("utf-8")


def test_two_records_with_one_title_are_told_apart_on_the_index(site):
    index = page(site, "index.html")
    assert f">{CUTLASS_TITLE} ({CUTLASS_OLD[:8]})</a>" in index
    assert f">{CUTLASS_TITLE} ({site['new'][:8]})</a>" in index


def test_an_automatic_title_is_the_short_kernel_name(site):
    index = page(site, "index.html")
    assert ">ncu profile: Kernel2&lt;cutlass_80_wmma_tensorop_bf16…&gt;</a>" in index
    assert "bf16_s161616gemm_bf16_3" not in index  # never cut mid-identifier


def test_superseded_is_marked_on_the_index_with_its_replacement(site):
    index = page(site, "index.html")
    row = next(r for r in index.split("<tr>") if f"e/{CUTLASS_OLD}.html" in r)
    assert (f'<span class="superseded">superseded by <a href="e/{site["new"]}.html" title="{CUTLASS_TITLE} '
            f'({site["new"][:8]})">[{site["new"][:8]}]</a></span>') in row


def test_a_report_citing_a_superseded_record_marks_it_and_lists_records_with_title_and_kind(site):
    report = page(site, "r/what-the-sample-shows.html")
    assert report.count(f'superseded by <a href="../e/{site["new"]}.html"') >= 2  # in the text and the list
    cited = report.split("<h2>Records cited</h2>", 1)[1]
    assert f"{CUTLASS_TITLE} ({CUTLASS_OLD[:8]})" in cited and "(ncu-profile)" in cited and "(peak-bandwidth)" in cited
    twin = page(site, "r/what-the-sample-shows.md")
    assert f"(superseded by [\\[{site['new'][:8]}\\]](../e/{site['new']}.md)" in twin


def test_the_superseded_mark_is_a_link_in_every_twin_as_github_renders_it(site):
    """Issue 27 item 18: the mark in the index's table, the report's list of records and the
    comparison's heading and citations, rendered as GitHub reads a .md file (tables on)."""
    from markdown_it import MarkdownIt

    new = site["new"]
    for twin, href in (("index.md", f"e/{new}.md"), ("r/what-the-sample-shows.md", f"../e/{new}.md"),
                       (f"e/{SAMPLE_COMPARISON}.md", f"{new}.md")):
        html = MarkdownIt("commonmark", {"html": True}).enable("table").render(page(site, twin))
        marks = re.findall(r"\(superseded by (.*?)\)(?:<| )", html)
        assert marks, twin
        assert all(m == f'<a href="{href}">[{new[:8]}]</a>' for m in marks), (twin, marks)


def test_a_comparison_citing_a_superseded_profile_marks_it(site):
    html = page(site, f"e/{SAMPLE_COMPARISON}.html")
    versus = html.split('<p class="versus">', 1)[1].split("</p>", 1)[0]
    assert f'superseded by <a href="{site["new"]}.html" title=' in versus


def test_the_changelog_keeps_its_width_for_the_reason(site):
    changes = page(site, "changes.html")
    assert '<td class="reason" data-label="reason">the GPU is now named</td>' in changes
    assert f'title="{CUTLASS_TITLE}"' in changes


def test_two_imports_of_one_gpu_and_workload_make_a_history_page(site):
    html = page(site, site["history"])
    assert f"<h1>History: {B200_WORKLOAD} on NVIDIA B200</h1>" in html
    assert f'href="../e/{site["a"]}.html"' in html and f'href="../e/{site["b"]}.html"' in html


def test_a_comparison_page_reads_b_against_a(site):
    html = page(site, f"e/{site['comparison']}.html")
    h1 = re.search(r"<h1>(.*?)</h1>", html, re.S).group(1)
    assert h1 == (f'<a href="{site["b"]}.html">B200 decode, run 2</a> against '
                  f'<a href="{site["a"]}.html">B200 decode, run 1</a>')
    assert "<dt>threshold</dt><dd>5.0%</dd>" in html and "threshold_pct" not in html
    assert "<dt>min samples</dt>" in html
    svg = html.split('<figure class="chart" tabindex="0">', 1)[1]
    assert "1.0 = no change" in svg  # the reference line is labelled, as text in the SVG
    assert ">flash_fwd_splitkv_kernel&lt;…&gt;</text>" in svg  # bars named by kernel, not numbered


def test_limitations_both_profiles_share_are_listed_once_on_a_comparison(site):
    html = page(site, f"e/{site['comparison']}.html")
    archive_limits = Archive.open(site["out"].parent / "arch").load(site["a"])["limitations"]
    for limitation in archive_limits:
        assert html.count(f"<li>{limitation}</li>".replace("'", "&#39;")) == 1


def test_profile_charts_name_kernels_in_the_unit_that_fits(site):
    rodinia = page(site, "e/34905d719b358238440c18417903adfbb6caba3c30fc8b74bc162aadf358f9dd.html")
    time_chart = rodinia.split("Profiled GPU time by kernel", 1)[1].split("</figure>", 1)[0]
    assert "profiled GPU time (µs)" in time_chart
    assert ">Kernel2</text>" in time_chart and "#1" not in time_chart
    assert "Speed of light by kernel" in rodinia


def test_no_chart_of_one_point(site):
    numba = page(site, "e/6af7d11838ad191e3922540601e71f3c949af0d866055eccdd45e3343c35d136.html")
    assert "Memory vs SM throughput" not in numba and "Profiled GPU time by kernel" not in numba
    assert "Speed of light by kernel" in numba  # one kernel's speed-of-light bars still say something


def test_stall_breakdown_where_the_export_has_stalls(site):
    polyfhe = page(site, "e/b2319a85b52c28a8b1ed8ab55833949f3af82489d070c8fd013b93f569d6339e.html")
    chart = polyfhe.split("Warp-stall reasons by kernel", 1)[1].split("</figure>", 1)[0]
    assert ">long_scoreboard</text>" in chart and ">ModDown_115</text>" in chart
    assert ">% of warp-active cycles</text>" in chart  # ncu's unit, as the stall claims give it
