"""Screenshots of each page type of the committed sample site, at 1280 px and on a 400 px
phone, into docs/screenshots/ (the README shows one). Run by `make screenshots`.

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
sys.path.insert(0, str(ROOT / "tests"))
from siteserver import serve  # noqa: E402

SITE, OUT = ROOT / "site", ROOT / "docs" / "screenshots"
CHROMIUM = os.environ.get("IKREPORT_CHROMIUM", "/usr/bin/chromium")
WIDTHS = (1280, 400)
# page type -> the kind of record whose page shows it (the first such record by id)
RECORD_PAGES = {"profile": "ncu-profile", "comparison": "comparison", "bandwidth": "peak-bandwidth",
                "environment": "environment", "supersession": "supersession"}


def pages() -> dict[str, str]:
    """Page type -> its path in the site."""
    found = {"index": "index.html", "changelog": "changes.html",
             "report": next(p.relative_to(SITE).as_posix() for p in sorted((SITE / "r").glob("*.html")))}
    found.update({"history": p.relative_to(SITE).as_posix() for p in sorted((SITE / "h").glob("*.html"))[:1]})
    by_kind: dict[str, str] = {}
    for path in sorted((SITE / "e").glob("*.json")):
        by_kind.setdefault(json.loads(path.read_bytes())["kind"], f"e/{path.stem}.html")
    found.update({name: by_kind[k] for name, k in RECORD_PAGES.items() if k in by_kind})
    return found


def main() -> None:
    from playwright.sync_api import sync_playwright

    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp, serve(SITE, Path(tmp)) as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        for width in WIDTHS:
            context = browser.new_context(viewport={"width": width, "height": 900})
            context.route("**/*", lambda route: route.continue_() if route.request.url.startswith(url)
                          else route.abort())
            page = context.new_page()
            for name, path in pages().items():
                page.goto(url + path)
                page.wait_for_load_state("load")
                page.screenshot(path=str(OUT / f"{name}-{width}.png"))
                print(f"docs/screenshots/{name}-{width}.png  {path}")
            page.goto(url + "index.html")  # the search box answering a query
            page.fill("#search-q", "deepseek")
            page.wait_for_selector('.search-results[data-query="deepseek"]', state="attached")
            page.locator("#search").scroll_into_view_if_needed()
            page.screenshot(path=str(OUT / f"search-{width}.png"))
            context.close()
        browser.close()


if __name__ == "__main__":
    main()
