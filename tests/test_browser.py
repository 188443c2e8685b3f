"""The site in a real browser: Debian's Chromium driven by Playwright (no browser download).

Served on 127.0.0.1 under a sub-path, as GitHub Pages serves a project site, and opened from
file://. Every request that would leave 127.0.0.1 is blocked and recorded. Screenshots go to
tests/artifacts/.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path
from urllib.parse import urldefrag, urljoin

import pytest
from playwright.sync_api import sync_playwright

from conftest import ROOT
from siteserver import serve

SITE = ROOT / "site"
ARTIFACTS = ROOT / "tests" / "artifacts"
CHROMIUM = os.environ.get("IKREPORT_CHROMIUM", "/usr/bin/chromium")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run", "--disable-quic"]


@pytest.fixture(scope="module")
def browser():
    assert Path(CHROMIUM).exists(), f"{CHROMIUM} is missing: run scripts/setup_system.sh (make test does)"
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


class Visit:
    """A browser context that blocks and records every request leaving 127.0.0.1, and every
    console error and page error."""

    def __init__(self, browser):
        self.context = browser.new_context(viewport={"width": 1300, "height": 900})
        self.left: list[str] = []
        self.errors: list[str] = []
        self.dialogs: list[str] = []
        self.context.route("**/*", self._route)
        self.page = self.context.new_page()
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("dialog", lambda d: (self.dialogs.append(d.message), d.dismiss()))

    def _route(self, route):
        url = route.request.url
        if url.startswith(("http://127.0.0.1:", "file://", "data:", "about:")):
            route.continue_()
        else:
            self.left.append(url)
            route.abort()

    def close(self):
        self.context.close()


@pytest.fixture
def visit(browser):
    v = Visit(browser)
    yield v
    v.close()
    assert v.left == [], f"requests left 127.0.0.1: {v.left}"
    assert v.errors == [], f"console errors: {v.errors}"


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    with serve(SITE, tmp_path_factory.mktemp("srv")) as url:
        yield url


def hash_status(page) -> str:
    # (a selector, not wait_for_function: the pages' CSP rightly forbids evaluating strings)
    page.wait_for_selector("#hash-check.hash-ok, #hash-check.hash-bad", timeout=10_000)
    return page.inner_text("#hash-check .hash-status")


def test_from_index_to_claim_to_record_to_raw_json(visit, served):
    page = visit.page
    page.goto(served + "index.html")
    page.click("ul.reports a")  # the sample report
    assert "/ikreport/r/" in page.url
    claim = page.locator("p.claim").first
    assert claim.is_visible()
    claim.locator("a.cite").first.click()
    assert "/ikreport/e/" in page.url
    record_id = page.url.rsplit("/", 1)[1].removesuffix(".html")
    assert hash_status(page).startswith("verified: the sha256 of ")
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "record.png"), full_page=True)
    json_href = page.get_attribute("text=record JSON", "href")
    body = page.request.get(urljoin(page.url, json_href)).body()
    assert hashlib.sha256(body).hexdigest() == record_id
    page.goto(served + "index.html")
    page.screenshot(path=str(ARTIFACTS / "index.png"), full_page=True)


def test_hash_check_says_mismatch_for_a_tampered_copy(visit, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(SITE, copy)
    victim = next((copy / "e").glob("*.json"))
    os.chmod(victim, 0o644)
    victim.write_bytes(victim.read_bytes().replace(b'"kind":', b'"kind" :'))
    with serve(copy, tmp_path) as url:
        visit.page.goto(url + f"e/{victim.stem}.html")
        status = hash_status(visit.page)
    assert status.startswith("mismatch: the sha256 of ") and "This copy was changed." in status


def test_from_file_url_the_page_checks_its_embedded_copy(visit):
    page = visit.page
    page.goto((SITE / "index.html").as_uri())
    page.locator("table a").first.click()
    assert page.url.startswith("file://") and "/e/" in page.url
    assert hash_status(page).startswith("verified: the sha256 of the copy of the record in this page")


def test_charts_are_visible(visit, served):
    page = visit.page
    page.goto(served + "index.html")
    page.locator("table a").first.click()
    box = page.locator("figure.chart svg").first.bounding_box()
    assert box and box["width"] > 200 and box["height"] > 50


def test_every_link_on_every_page_resolves(visit, served):
    page = visit.page
    todo, seen, checked = [served + "index.html"], set(), 0
    while todo:
        url = todo.pop()
        if url in seen:
            continue
        seen.add(url)
        page.goto(url)
        hrefs = page.eval_on_selector_all(
            "a[href], link[href], script[src], svg a",
            "els => els.map(e => e.getAttribute('href') || e.getAttribute('src') || e.getAttribute('xlink:href'))")
        for href in hrefs:
            target, fragment = urldefrag(urljoin(url, href))
            assert target.startswith(served), f"{url}: {href} leaves the site"
            response = page.request.get(target)
            assert response.status == 200, f"{url}: {href} -> {response.status}"
            checked += 1
            if fragment:
                assert page.request.get(target).text().count(f'id="{fragment}"') == 1, f"{url}: #{fragment}"
            if target.endswith(".html") and target not in seen:
                todo.append(target)
    assert len(seen) >= 10 and checked > 100


def test_sortable_tables(visit, served):
    page = visit.page
    page.goto(served + "index.html")
    page.locator("text=PMPP chapter 6").first.click()
    kernels = page.locator("table.kernels")
    kernels.locator("th button", has_text="total").click()
    assert kernels.locator("th").nth(3).get_attribute("aria-sort") == "ascending"  # after "#", kernel, launches
    cells = kernels.locator("tbody tr td:nth-child(4)").all_inner_texts()
    units = {"µs": 1, "ms": 1e3, "s": 1e6}
    values = [float(c.split()[0]) * units[c.split()[1]] for c in cells]
    assert values == sorted(values)


def test_accessibility_has_no_serious_violations(visit, served):
    from axe_playwright_python.sync_playwright import Axe

    axe = Axe()
    page = visit.page
    found = []
    for path in ("index.html", "r/what-the-sample-shows.html", "changes.html"):
        page.goto(served + path)
        found += [(path, v["id"]) for v in axe.run(page).response["violations"] if v["impact"] in ("serious", "critical")]
    page.goto(served + "index.html")
    page.locator("table a").first.click()
    found += [("record", v["id"]) for v in axe.run(page).response["violations"] if v["impact"] in ("serious", "critical")]
    assert found == []


EVIL = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2; alert(2)">'


@pytest.fixture(scope="module")
def hostile_site(tmp_path_factory):
    """A site built from hostile input: kernel name, title, limitation and report."""
    from ikreport.store.archive import Archive
    from ikreport.collect.context import Context
    from ikreport.collect.ncu_import import import_csv
    from ikreport.commands.build import build_site

    tmp = tmp_path_factory.mktemp("hostile")
    archive = Archive.create(tmp / "arch")
    export = tmp / "evil.csv"
    name = EVIL.replace('"', '""')
    export.write_text('"ID","Kernel Name","Section Name","Metric Name","Metric Unit","Metric Value"\n'
                      f'"0","{name}","GPU Speed Of Light Throughput","Duration","usecond","5"\n')
    rid = import_csv(archive, [export], Context(title=EVIL + " {{ 7*7 }}", gpu='<svg onload="alert(3)">',
                                                limitations=('<a href="javascript:alert(4)">click</a>',)))
    (tmp / "arch" / "reports").mkdir()
    (tmp / "arch" / "reports" / "evil.md").write_text(
        f"---\ntitle: '<script>alert(5)</script>'\n---\n{EVIL} [ev:{rid[:8]} title]\n\n"
        "[click me](javascript:alert(6)) <iframe src=\"javascript:alert(7)\"></iframe> {{ 7*7 }} {% raw %}\n")
    build_site(archive, tmp / "site", cache_dir=tmp / "cache")
    return tmp / "site", rid


@pytest.mark.parametrize("how", ["served", "file"])
def test_injected_markup_never_runs(browser, hostile_site, tmp_path, how):
    site, rid = hostile_site
    visit = Visit(browser)
    try:
        with serve(site, tmp_path) as url:
            base = url if how == "served" else site.as_uri() + "/"
            for path in ("index.html", f"e/{rid}.html", "r/evil.html"):
                visit.page.goto(base + path)
                visit.page.wait_for_load_state("load")
                assert visit.page.evaluate("() => window.__pwned") is None
                for link in visit.page.locator("a").all():
                    assert not (link.get_attribute("href") or "").startswith("javascript:")
            assert "{{ 7*7 }}" in visit.page.inner_text("main")  # template syntax is text
            assert "<script>window.__pwned = 1</script>" in visit.page.inner_text("main")
    finally:
        visit.close()
    assert visit.dialogs == []
    # the markup stayed text: no image "x" was even requested, so nothing failed to load
    assert visit.errors == [] and visit.left == []


def test_the_published_branch_serves_the_site_from_a_sub_path(visit, tmp_path, monkeypatch):
    """ikreport build && ikreport publish --remote <bare repo>: what lands on gh-pages works."""
    import subprocess
    import tarfile

    from click.testing import CliRunner

    from ikreport.cli.main import cli

    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"}
    work, bare = tmp_path / "work", tmp_path / "pages.git"
    work.mkdir()
    for args, cwd in ((["init", "-q", "-b", "main"], work), (["init", "-q", "--bare", str(bare)], tmp_path)):
        subprocess.run(["git", *args], cwd=cwd, check=True, env=env)
    shutil.copytree(SITE, work / "site")
    for key, value in env.items():
        if key.startswith("GIT_"):
            monkeypatch.setenv(key, value)
    result = CliRunner().invoke(cli, ["publish", str(work / "site"), "--remote", str(bare)])
    assert result.exit_code == 0, result.output
    archive = tmp_path / "gh-pages.tar"
    subprocess.run(["git", "--git-dir", str(bare), "archive", "-o", str(archive), "gh-pages"], check=True)
    landed = tmp_path / "landed"
    with tarfile.open(archive) as tar:
        tar.extractall(landed)
    assert (landed / ".nojekyll").exists()
    with serve(landed, tmp_path, subpath="repo") as url:
        page = visit.page
        page.goto(url + "index.html")
        page.locator("table a").first.click()
        assert "/repo/e/" in page.url
        assert hash_status(page).startswith("verified: ")
        assert page.request.get(url + "no-such-page.html").status == 404
