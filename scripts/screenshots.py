"""Screenshots of each page type of the committed sample site, at 1280 px and on a 400 px
phone, into docs/screenshots/ (docs/development.md shows two). Run by `make screenshots`.

The sample has no history series and no supersession, so the history page and the changelog are
shot from the site tests/readers_site.py builds in a temporary folder (a copy of the sample with
real exports from tests/fixtures added: two imports of one GPU and workload, one supersession);
sample_evidence is never written.

Debian's Chromium through Playwright (scripts/setup_system.sh installs it); the site is served on
127.0.0.1 under a sub-path, as GitHub Pages serves it, and nothing else is reached. Each shot is
the first screen of the page (not the whole page), so the files stay small.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]  # this tree's ikreport, and the tests' helpers
from readers_site import build_readers_site  # noqa: E402
from siteserver import serve  # noqa: E402

from ikreport.kinds import comparison, environment, ncu_profile, peak_bandwidth, supersession  # noqa: E402

SITE, OUT = ROOT / "site", ROOT / "docs" / "screenshots"
CHROMIUM = os.environ.get("IKREPORT_CHROMIUM", "/usr/bin/chromium")
WIDTHS = (1280, 400)
# the time the records added for the history page and changelog carry (2026-01-01T00:00:00Z), so
# that a rerun gives the same screenshots
EPOCH = 1767225600
# page type -> the kind of record whose page shows it (the first such record by id)
RECORD_PAGES = {"profile": ncu_profile.NAME, "comparison": comparison.NAME, "bandwidth": peak_bandwidth.NAME,
                "environment": environment.NAME, "supersession": supersession.NAME}


def pages() -> dict[str, str]:
    """Page type -> its path in the committed sample site."""
    found = {"index": "index.html",
             "report": next(p.relative_to(SITE).as_posix() for p in sorted((SITE / "r").glob("*.html")))}
    by_kind: dict[str, str] = {}
    for path in sorted((SITE / "e").glob("*.json")):
        by_kind.setdefault(json.loads(path.read_bytes())["kind"], f"e/{path.stem}.html")
    found.update({name: by_kind[k] for name, k in RECORD_PAGES.items() if k in by_kind})
    return found


def shoot(page, url: str, shots: dict[str, str], width: int) -> None:
    """The first screen of each page, as docs/screenshots/<name>-<width>.png."""
    for name, path in shots.items():
        page.goto(url + path)
        page.wait_for_load_state("load")
        page.screenshot(path=str(OUT / f"{name}-{width}.png"))
        print(f"docs/screenshots/{name}-{width}.png  {path}")


def main() -> None:
    from playwright.sync_api import sync_playwright

    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as p:
        readers = build_readers_site(Path(tmp) / "readers", EPOCH)
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        with serve(SITE, Path(tmp) / "sample") as url, serve(readers["out"], Path(tmp) / "readers-www") as url2:
            for width in WIDTHS:
                context = browser.new_context(viewport={"width": width, "height": 900})
                context.route("**/*", lambda route: route.continue_() if route.request.url.startswith((url, url2))
                              else route.abort())
                page = context.new_page()
                shoot(page, url, pages(), width)
                shoot(page, url2, {"history": readers["history"], "changelog": "changes.html"}, width)
                page.goto(url + "index.html")  # the search box answering a query
                page.fill("#search-q", "deepseek")
                page.wait_for_selector('.search-results[data-query="deepseek"]', state="attached")
                page.locator("#search").scroll_into_view_if_needed()
                page.screenshot(path=str(OUT / f"search-{width}.png"))
                context.close()
        browser.close()


if __name__ == "__main__":
    main()
