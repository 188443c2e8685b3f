"""Read one or two ncu CSV exports (any page, any release) into a profile.

The single entry point for importers: ``read_exports({"name.csv": text, ...})`` detects
each export's page, parses it, merges raw with details, and folds the launches into the
profile (analysis/ncu/fold.py). One export alone is folded a block of rows at a time as it is
read, so a big raw export is never whole in memory; a raw and a details page are read whole,
merged, and folded as one block.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from ikreport.analysis.ncu.details import parse_details
from ikreport.analysis.ncu.export import Export, Page, locate
from ikreport.analysis.ncu.fold import ByteSink, Fold, Profile
from ikreport.analysis.ncu.raw import raw_blocks
from ikreport.analysis.ncu.summary import derive
from ikreport.analysis.ncu.table import LaunchTable, check_same_run, merge
from ikreport.errors import NcuExportError

__all__ = ["Profile", "read_exports", "read_page", "summarise"]


def _blocks(export: Export) -> Iterator[LaunchTable]:
    """An export's launches, a block of rows at a time (a details page is one block)."""
    if export.page == "raw":
        yield from raw_blocks(export)
    else:
        yield parse_details(export)


def _no_launches(name: str, page: Page) -> NcuExportError:
    return NcuExportError(f"{name}: the {page} page has a header but no kernel launches")


def _fold(launch_csv: ByteSink | None) -> Fold:
    return Fold() if launch_csv is None else Fold(launch_csv)


def read_page(data: bytes | str | Export, name: str) -> tuple[Page, LaunchTable, tuple[str, ...]]:
    """One export's page, its launches, and ncu's own error and warning lines in it (``data``
    may be an export already located, e.g. a big one streamed from its file)."""
    export = data if isinstance(data, Export) else locate(data, name)
    table = LaunchTable.concat(list(_blocks(export)))
    if table.n == 0:
        raise _no_launches(name, export.page)
    return export.page, table, export.messages


def summarise(table: LaunchTable, pages: dict[str, Page], messages: tuple[str, ...] = (),
              launch_csv: ByteSink | None = None) -> Profile:
    """The profile of one whole table of launches, folded as one block."""
    fold = _fold(launch_csv)
    fold.add(table, derive(table))
    return fold.profile(pages, messages)


def read_exports(texts: Mapping[str, bytes | str | Export], launch_csv: ByteSink | None = None) -> Profile:
    """Parse at most one raw and one details export, as UTF-8 bytes or text or located
    exports (names are used in error messages). The per-launch CSV is written to
    ``launch_csv`` as it is made (kept in memory when none is given)."""
    if len(texts) == 1:  # one page: folded a block of rows at a time, never whole
        [(name, data)] = texts.items()
        export = data if isinstance(data, Export) else locate(data, name)
        fold = _fold(launch_csv)
        for block in _blocks(export):
            fold.add(block, derive(block))
        if not fold.n:
            raise _no_launches(name, export.page)
        return fold.profile({name: export.page}, export.messages)
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
    return summarise(merge(found.get("raw"), found.get("details")), pages, tuple(messages), launch_csv)
