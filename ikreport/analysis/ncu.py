"""Read one or two ncu CSV exports (any page, any release) into launch summaries.

The single entry point for importers: ``read_exports({"name.csv": text, ...})`` detects
each export's page, parses it, merges raw with details, and summarises.
"""

from __future__ import annotations

from dataclasses import dataclass

from ikreport.analysis.ncu_details import parse_details
from ikreport.analysis.ncu_export import Page, locate
from ikreport.analysis.ncu_launch import Launch
from ikreport.analysis.ncu_raw import parse_raw
from ikreport.analysis.ncu_summary import Summary, by_kernel, summarize
from ikreport.errors import NcuExportError


@dataclass(frozen=True)
class Profile:
    """What a set of exports says: pages read, per-launch and per-kernel summaries."""

    pages: dict[str, Page]  # export name -> page
    launches: list[Summary]
    kernels: list[Summary]
    devices: list[str]  # GPU names the exports name, sorted
    compute_capabilities: list[str]


def read_page(text: str, name: str) -> tuple[Page, list[Launch]]:
    export = locate(text, name)
    launches = parse_raw(export) if export.page == "raw" else parse_details(export)
    if not launches:
        raise NcuExportError(f"{name}: the {export.page} page has a header but no kernel launches")
    return export.page, launches


def read_exports(texts: dict[str, str], peak_gbs: float | None = None) -> Profile:
    """Parse at most one raw and one details export (names are used in error messages)."""
    pages: dict[str, Page] = {}
    found: dict[Page, list[Launch]] = {}
    for name, text in texts.items():
        page, launches = read_page(text, name)
        if page in found:
            other = next(n for n, p in pages.items() if p == page)
            raise NcuExportError(f"{name}: a second {page} page (the first is {other}); give one raw and/or one details export")
        pages[name] = page
        found[page] = launches
    launches = summarize(found.get("raw", []), found.get("details", []), peak_gbs)
    return Profile(
        pages=pages,
        launches=launches,
        kernels=by_kernel(launches),
        devices=sorted({s["device"] for s in launches if s["device"]}),
        compute_capabilities=sorted({s["cc"] for s in launches if s["cc"]}),
    )
