"""The site in a real browser as a reader meets it (issue 16): chart labels, a title that was
cut, the superseded marks, at 1280 px and on a 400 px phone; and screenshots of each page type
at both widths, into tests/artifacts/screens/. Served under a sub-path, as GitHub Pages serves."""

from __future__ import annotations

import pytest

from readers_site import CUTLASS_OLD
from siteserver import serve
from test_browser import ARTIFACTS, Visit, browser  # noqa: F401 (a fixture)
from test_site_readers import site  # noqa: F401 (a fixture)

RODINIA = "34905d719b358238440c18417903adfbb6caba3c30fc8b74bc162aadf358f9dd"
WIDTHS = (1280, 400)


@pytest.fixture(scope="module")
def served_readers(site, tmp_path_factory):  # noqa: F811
    with serve(site["out"], tmp_path_factory.mktemp("srv-readers")) as url:
        yield url, site


@pytest.fixture(params=WIDTHS)
def phone_or_desk(browser, request):  # noqa: F811
    visit = Visit(browser)
    visit.page.set_viewport_size({"width": request.param, "height": 900})
    yield visit, request.param
    visit.close()
    assert visit.left == [] and visit.errors == []


def test_chart_bars_are_labelled_with_kernel_names(phone_or_desk, served_readers):
    (visit, _), (url, _) = phone_or_desk, served_readers
    visit.page.goto(url + f"e/{RODINIA}.html")
    chart = visit.page.locator("figure.chart", has_text="Profiled GPU time by kernel")
    label = chart.locator("svg text", has_text="Kernel2").first
    box, figure = label.bounding_box(), chart.bounding_box()
    assert box and figure and box["width"] > 10
    assert figure["x"] - 1 <= box["x"] and box["x"] + box["width"] <= figure["x"] + figure["width"] + 1
    assert chart.locator("svg text", has_text="profiled GPU time (µs)").count() == 1


def test_a_cut_title_ends_in_an_ellipsis_and_its_page_names_the_kernel(phone_or_desk, served_readers):
    (visit, _), (url, site) = phone_or_desk, served_readers
    page = visit.page
    page.goto(url + "index.html")
    link = page.locator(f'a[href="e/{site["auto"]}.html"]', has_text="ncu profile")
    assert link.inner_text() == "ncu profile: Kernel2<cutlass_80_wmma_tensorop_bf16…>"
    link.click()
    assert page.locator("h1").inner_text() == "ncu profile: Kernel2<cutlass_80_wmma_tensorop_bf16…>"
    assert "Kernel2<cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_32x32_128x2_tn_align8>" in page.inner_text("main")


def test_superseded_marks_lead_to_the_replacement(phone_or_desk, served_readers):
    (visit, _), (url, site) = phone_or_desk, served_readers
    page = visit.page
    page.goto(url + "index.html")
    row = page.locator("tr", has=page.locator(f'a[href="e/{CUTLASS_OLD}.html"]'))
    mark = row.locator(".superseded")
    assert mark.is_visible() and mark.inner_text().startswith(f"superseded by [{site['new'][:8]}]")
    mark.locator("a").click()
    assert page.url.endswith(f"/e/{site['new']}.html") and page.locator(".banner").count() == 0
    page.goto(url + "r/what-the-sample-shows.html")
    assert page.locator(".report .superseded").first.is_visible()
    page.goto(url + f"e/{CUTLASS_OLD}.html")
    assert page.locator(".banner").is_visible()


PAGES = {"index": "index.html", "profile": f"e/{RODINIA}.html", "report": "r/what-the-sample-shows.html",
         "changelog": "changes.html", "superseded": f"e/{CUTLASS_OLD}.html"}


def every_page_type(site) -> dict[str, str]:
    """Page type -> path, with the comparison and the history page of the two B200 imports."""
    return {**PAGES, "comparison": f"e/{site['comparison']}.html", "history": site["history"]}


def test_screenshots_of_each_page_type(phone_or_desk, served_readers):
    (visit, width), (url, site) = phone_or_desk, served_readers
    screens = ARTIFACTS / "screens"
    screens.mkdir(parents=True, exist_ok=True)
    for name, path in every_page_type(site).items():
        visit.page.goto(url + path)
        # nothing wider than the phone's screen but the tables and charts, which scroll inside their box
        overflow = visit.page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 1, f"{name} at {width} px is {overflow} px too wide"
        visit.page.screenshot(path=str(screens / f"{name}-{width}.png"), full_page=True)


def test_accessibility_of_every_page_type(phone_or_desk, served_readers):
    """axe-core at 1280 and 400 px on the index, a profile, a comparison, a report, a superseded
    record, a history page and a changelog that lists a supersession: no serious violation."""
    from axe_playwright_python.sync_playwright import Axe

    (visit, width), (url, site) = phone_or_desk, served_readers
    found = []
    for name, path in every_page_type(site).items():
        visit.page.goto(url + path)
        found += [(name, width, v["id"]) for v in Axe().run(visit.page).response["violations"]
                  if v["impact"] in ("serious", "critical")]
    assert found == []


def test_the_changelog_fits_a_phone_and_stays_a_table(phone_or_desk, served_readers):
    """At 400 px the changelog's table no longer scrolls sideways in its box, and Chromium still
    gives a screen reader a table: one row per supersession, each cell under its column header."""
    (visit, width), (url, site) = phone_or_desk, served_readers
    page = visit.page
    page.goto(url + "changes.html")
    scroll, client = page.locator(".table-wrap").evaluate("e => [e.scrollWidth, e.clientWidth]")
    assert scroll <= client, f"the changelog at {width} px scrolls {scroll - client} px sideways"
    tree = visit.context.new_cdp_session(page).send("Accessibility.getFullAXTree")["nodes"]
    roles = [n["role"]["value"] for n in tree if not n.get("ignored")]
    headers = [n["name"]["value"] for n in tree if n["role"]["value"] == "columnheader"]
    assert "table" in roles and roles.count("row") == 2 and roles.count("cell") == 5
    assert headers == ["when", "replaced", "by", "reason", "record"]
    assert page.get_by_text(site["new"][:8]).first.is_visible()


# The index's profile table and a comparison's kernel table, with the columns a reader has come
# for: each must lie within the screen, not in a box scrolled sideways (issue 27 item 18).
WANTED = {"profiles": ("GPU time",), "kernels": ("A median", "B median", "B/A [95% interval]", "verdict")}


def cells_off_screen(page, table, headers: tuple[str, ...]) -> list[str]:
    """The cells under ``headers`` in ``table`` that are not wholly within the viewport."""
    return table.evaluate("""(t, headers) => {
        const names = [...t.tHead.rows[0].cells].map(th => th.textContent.trim());
        const off = [];
        for (const h of headers) {
            const col = names.indexOf(h);
            if (col < 0) { off.push("no column " + h); continue; }
            for (const row of t.tBodies[0].rows) {
                const r = row.cells[col].getBoundingClientRect();
                if (r.width === 0 || r.left < 0 || r.right > window.innerWidth + 0.5)
                    off.push(h + ": " + row.cells[col].textContent + " at " + r.left + "-" + r.right);
            }
        }
        return off;
    }""", list(headers))


def test_time_ratio_and_verdict_are_on_the_screen_of_a_phone(phone_or_desk, served_readers):
    (visit, _), (url, site) = phone_or_desk, served_readers
    page = visit.page
    page.goto(url + "index.html")
    profiles = page.locator("#table-profiles")
    assert profiles.locator("tbody tr").count() >= 5
    assert cells_off_screen(page, profiles, WANTED["profiles"]) == []
    page.goto(url + f"e/{site['comparison']}.html")
    kernels = page.locator("table", has=page.locator("th", has_text="verdict"))
    assert kernels.locator("tbody tr").count() >= 2
    assert cells_off_screen(page, kernels, WANTED["kernels"]) == []
    overflow = page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 1
