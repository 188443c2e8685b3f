"""Read one or two ncu CSV exports (any page, any release) into a profile.

The single entry point for importers: ``read_exports({"name.csv": text, ...})`` detects
each export's page, parses it, merges raw with details, and derives the summaries.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from ikreport.analysis.ncu_details import parse_details
from ikreport.analysis.ncu_export import Export, Page, locate
from ikreport.analysis.ncu_raw import parse_raw
from ikreport.analysis.ncu_summary import Derived, Summary, by_kernel, derive, launch_csv, launch_summary
from ikreport.analysis.ncu_table import LaunchTable, check_same_run, merge
from ikreport.errors import NcuExportError


@dataclass(frozen=True)
class Profile:
    """What a set of exports says, as columns plus the per-kernel summaries."""

    pages: dict[str, Page]  # export name -> page
    table: LaunchTable
    derived: Derived
    kernels: list[Summary]
    devices: list[str]  # GPU names the exports name, sorted
    compute_capabilities: list[str]
    messages: tuple[str, ...] = ()  # ncu's ==ERROR==/==WARNING== lines in the exports
    _cache: dict[str, object] = field(default_factory=dict, compare=False)

    @property
    def launch_count(self) -> int:
        return self.table.n

    @property
    def profiled_time_us(self) -> float | None:
        times = self.derived.duration_us
        return round(float(np.nansum(times)), 3) if (~np.isnan(times)).any() else None

    def launch(self, i: int) -> Summary:
        return launch_summary(self.table, self.derived, i)

    @cached_property
    def launches(self) -> list[Summary]:
        """Every launch's summary (builds one dict per launch: for small profiles and tests)."""
        return [self.launch(i) for i in range(self.table.n)]

    def longest(self, n: int) -> list[int]:
        """Rows of the ``n`` longest launches, in profiling order."""
        times = np.where(np.isnan(self.derived.duration_us), -1.0, self.derived.duration_us)
        order = np.lexsort((np.arange(self.table.n), -times))[:n]
        return sorted(int(i) for i in order)

    def csv(self) -> bytes:
        return launch_csv(self.table, self.derived)


def read_page(data: bytes | str | Export, name: str) -> tuple[Page, LaunchTable, tuple[str, ...]]:
    """One export's page, its launches, and ncu's own error and warning lines in it (``data``
    may be an export already located, e.g. a big one streamed from its file)."""
    export = data if isinstance(data, Export) else locate(data, name)
    table = parse_raw(export) if export.page == "raw" else parse_details(export)
    if table.n == 0:
        raise NcuExportError(f"{name}: the {export.page} page has a header but no kernel launches")
    return export.page, table, export.messages


def read_exports(texts: Mapping[str, bytes | str | Export]) -> Profile:
    """Parse at most one raw and one details export, as UTF-8 bytes or text or located
    exports (names are used in error messages)."""
    pages: dict[str, Page] = {}
    found: dict[Page, LaunchTable] = {}
    messages: list[str] = []
    for name, text in texts.items():
        page, table, said = read_page(text, name)
        messages += [m for m in said if m not in messages]
        if page in found:
            other = next(n for n, p in pages.items() if p == page)
            raise NcuExportError(f"{name}: a second {page} page (the first is {other}); give one raw and/or one details export")
        pages[name] = page
        found[page] = table
    if "raw" in found and "details" in found:
        by_page = {p: n for n, p in pages.items()}
        check_same_run(found["raw"], found["details"], by_page["raw"], by_page["details"])
    table = merge(found.get("raw"), found.get("details"))
    derived = derive(table)
    return Profile(
        pages=pages, table=table, derived=derived, kernels=by_kernel(table, derived),
        devices=sorted({d for d in table.text["device"] if d}),
        compute_capabilities=sorted({c for c in table.text["cc"] if c}),
        messages=tuple(messages),
    )
