"""Search and the tables' filters in a real browser (issue 16 item 13): served under a
sub-path as GitHub Pages serves a project site, and opened from file://, where the box says
that search needs the site served. Every request that would leave 127.0.0.1 is refused."""

from __future__ import annotations

import json

import pytest

from conftest import ROOT
from siteserver import serve
from test_browser import SITE, browser, served, visit  # noqa: F401 (fixtures)
from test_browser_readers import RODINIA
from test_site_readers import CUTLASS_TITLE, site  # noqa: F401 (a fixture: the sample with a supersession)


def search(page, query: str) -> list[str]:
    page.fill("#search-q", query)
    page.wait_for_selector(f'.search-results[data-query="{query}"]', state="attached")
    return page.locator(".search-results li a").all_inner_texts()


def test_search_finds_a_profile_by_kernel_name_from_a_sub_path(visit, served):  # noqa: F811
    page = visit.page
    page.goto(served + "index.html")
    assert "/ikreport/" in page.url
    found = search(page, "Kernel2")  # a kernel of the Rodinia BFS export, in no title
    assert "Rodinia BFS on a V100 (ncu 2020.1)" in found
    page.locator(".search-results li a", has_text="Rodinia BFS").click()
    assert page.url == served + f"e/{RODINIA}.html"


def test_search_by_gpu_engine_model_and_workload_narrows_with_each_word(visit, served):  # noqa: F811
    page = visit.page
    page.goto(served + "index.html")
    assert search(page, "gtx 1650") == ["PMPP chapter 6 case study kernels on a GTX 1650 Ti"]
    records = [json.loads(p.read_bytes()) for p in sorted((SITE / "e").glob("*.json"))]
    # the model: every record of DeepSeek-OCR, and the report whose summary names it
    deepseek = {r["title"] for r in records if r["subject"]["model"] == "DeepSeek-OCR"}
    assert len(deepseek) >= 3 and set(search(page, "deepseek")) == deepseek | {"What the sample profiles show, and what they cannot"}
    cutlass = set(search(page, "deepseek cutlass"))  # the CUTLASS profile and the comparisons naming it
    assert "DeepSeek-OCR: CUTLASS bf16 WMMA GEMM (kernel 3)" in cutlass and cutlass < deepseek
    assert "DeepSeek-OCR: cuBLAS bf16 GEMV (kernel 1)" not in cutlass
    assert search(page, "numba") == ["Numba blocked copy kernel (nsightful test export, base units)"]  # the engine
    assert "Rodinia BFS on a V100 (ncu 2020.1)" in search(page, "graph4096")  # the workload
    assert search(page, "what the sample") == ["What the sample profiles show, and what they cannot"]  # a report
    assert search(page, "zzzz") == []
    assert page.inner_text("#search-status") == "Nothing found."


def test_search_marks_a_superseded_record(visit, site, tmp_path):  # noqa: F811
    # the sample keeps no supersession (its script cannot make one), so this site adds one
    with serve(site["out"], tmp_path) as url:
        page = visit.page
        page.goto(url + "index.html")
        search(page, "deepseek cutlass")
        notes = page.locator(".search-results .superseded-note").all_inner_texts()
    assert len(notes) == 1 and notes[0].startswith(f" superseded by {CUTLASS_TITLE}")


def test_search_from_a_file_says_it_needs_the_site_served(visit):  # noqa: F811
    page = visit.page
    page.goto((SITE / "index.html").as_uri())
    assert page.inner_text("#search-status").startswith("Search needs the site served")
    assert page.is_disabled("#search-q")


def test_tables_filter_by_gpu_and_kind(visit, served):  # noqa: F811
    page = visit.page
    page.goto(served + "index.html")
    profiles = page.locator("#table-profiles tbody tr")
    page.select_option("form[data-table=table-profiles] select[name=gpu]", "NVIDIA B200")
    assert profiles.evaluate_all("rows => rows.filter(r => !r.hidden).length") == 1
    assert page.locator("#table-profiles tbody tr:not([hidden]) td").nth(2).inner_text() == "NVIDIA B200"
    others = "form[data-table=table-others]"
    page.select_option(f"{others} select[name=kind]", "peak-bandwidth")
    shown = page.locator("#table-others tbody tr:not([hidden]) td:nth-child(2)").all_inner_texts()
    peaks = sum(json.loads(p.read_bytes())["kind"] == "peak-bandwidth" for p in (SITE / "e").glob("*.json"))
    assert peaks >= 1 and shown == ["peak-bandwidth"] * peaks
    assert page.inner_text(f"{others} output") == f"{peaks} of {page.locator('#table-others tbody tr').count()} rows shown"
    page.select_option(f"{others} select[name=gpu]", "2x NVIDIA H100 80GB HBM3")
    assert page.locator("#table-others tbody tr:not([hidden])").count() == 0


@pytest.fixture(scope="module")
def in_pieces(tmp_path_factory):
    """The sample built with tiny pieces: many term shards, two documents a chunk, three rows a
    page, so that every piece search.js loads and every listing page is exercised."""
    from ikreport.site import listing, search_index
    from ikreport.commands.build import build_site
    from ikreport.store.archive import Archive

    tmp = tmp_path_factory.mktemp("pieces")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(search_index, "SHARD_BYTES", 300)
        mp.setattr(search_index, "DOCS_PER_CHUNK", 2)
        mp.setattr(listing, "ROWS_PER_PAGE", 3)
        build_site(Archive.open(ROOT / "sample_evidence"), tmp / "site", cache_dir=tmp / "cache")
    with serve(tmp / "site", tmp) as url:
        yield url, tmp / "site"


def test_search_loads_only_the_pieces_it_needs(visit, in_pieces):  # noqa: F811
    url, site = in_pieces
    shards = len(list((site / "search").glob("*/terms-*.json")))
    docs = len(list((SITE / "e").glob("*.json"))) + len(list((SITE / "r").glob("*.html")))  # records, reports
    assert shards > 5 and len(list((site / "search").glob("*/docs-*.json"))) == -(-docs // 2)
    fetched: list[str] = []
    visit.page.on("request", lambda r: fetched.append(r.url.rsplit("/", 1)[1]) if "/search/" in r.url else None)
    visit.page.goto(url + "index.html")
    assert search(visit.page, "Kernel2 rodinia") == ["Rodinia BFS on a V100 (ncu 2020.1)"]
    terms = [f for f in fetched if f.startswith("terms-")]
    assert fetched[0] == "meta.json" and len(terms) == 2 and len([f for f in fetched if f.startswith("docs-")]) == 1
    assert search(visit.page, "gtx 1650 pmpp") == ["PMPP chapter 6 case study kernels on a GTX 1650 Ti"]
    assert "DeepSeek-OCR: CUTLASS bf16 WMMA GEMM (kernel 3)" in search(visit.page, "deepseek cutlass")


def test_listing_pages_carry_the_rest_of_each_table(visit, in_pieces):  # noqa: F811
    url, site = in_pieces
    page = visit.page
    page.goto(url + "index.html")
    assert page.locator("#table-profiles tbody tr").count() == 3
    pager = page.locator("#profiles ~ nav.pager").first
    profiles = [p for p in (SITE / "e").glob("*.json") if json.loads(p.read_bytes())["kind"] == "ncu-profile"]
    count = -(-len(profiles) // 3)
    assert count >= 3 and pager.inner_text().startswith(f"{len(profiles)} rows, {count} pages:")
    pager.locator("a", has_text=str(count)).click()
    assert page.url == url + f"l/profiles-{count}.html"
    assert page.locator("#table-profiles tbody tr").count() == len(profiles) - 3 * (count - 1)
    page.locator("#table-profiles tbody tr td:nth-child(2) a").first.click()  # a record page, through ../
    assert "/e/" in page.url and page.locator("h1").is_visible()


def test_search_results_filters_and_listing_pages_pass_axe(visit, served, in_pieces):  # noqa: F811
    """axe-core (bundled by axe-playwright-python) on the index with results and filters shown,
    on phone and desk widths, and on a listing page: no serious or critical violation."""
    from axe_playwright_python.sync_playwright import Axe

    axe, page, found = Axe(), visit.page, []
    for width in (1280, 400):
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(served + "index.html")
        search(page, "deepseek")
        page.select_option("form[data-table=table-others] select[name=kind]", "comparison")
        found += [(width, v["id"]) for v in axe.run(page).response["violations"] if v["impact"] in ("serious", "critical")]
    page.goto(in_pieces[0] + "l/others-2.html")
    found += [("listing", v["id"]) for v in axe.run(page).response["violations"] if v["impact"] in ("serious", "critical")]
    assert found == []


def test_every_page_type_passes_axe(visit, served):  # noqa: F811
    """axe-core on each page type scripts/screenshots.py shoots from the sample site (index,
    profile, comparison, report, bandwidth, environment, supersession when the sample has one),
    at 1280 and 400 px: no serious or critical violation. The history page and the changelog it
    shoots from the readers' site are checked in test_browser_readers.py."""
    import sys

    from axe_playwright_python.sync_playwright import Axe

    sys.path.insert(0, str(ROOT / "scripts"))
    from screenshots import pages

    kinds = pages()
    assert {"index", "profile", "comparison", "report", "bandwidth", "environment"} <= set(kinds)
    axe, page, found = Axe(), visit.page, []
    for width in (1280, 400):
        page.set_viewport_size({"width": width, "height": 900})
        for name, path in sorted(kinds.items()):
            page.goto(served + path)
            response = axe.run(page).response
            assert response["passes"], f"axe checked nothing on {path}"
            found += [(name, width, v["id"]) for v in response["violations"] if v["impact"] in ("serious", "critical")]
    assert found == []


def test_the_script_still_reads_an_index_of_the_old_layout(visit, tmp_path):  # noqa: F811
    # a site updated in place gets the new search.js before the meta.json that names the new
    # index's folder: meanwhile it must read the format-1 index, whose pieces lie in search/
    import shutil

    site = tmp_path / "site"
    shutil.copytree(SITE, site)
    meta = json.loads((site / "search" / "meta.json").read_text())
    for piece in (site / "search" / meta.pop("dir")).iterdir():
        piece.rename(site / "search" / piece.name)
    (site / "search" / "meta.json").write_text(json.dumps({**meta, "format": 1}))
    with serve(site, tmp_path) as url:
        visit.page.goto(url + "index.html")
        assert "Rodinia BFS on a V100 (ncu 2020.1)" in search(visit.page, "Kernel2")
