"""Listing pages that stay small however big the archive (``bench/bench_scale.py`` measures
them): the index shows the first ``ROWS_PER_PAGE`` rows of each table, and pages ``l/<table>-<n>``
the rest; and the choices of the tables' filters (GPU, kind), which ``assets/search.js`` applies.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ikreport import links
from ikreport.site.model import Page, Row

ROWS_PER_PAGE = 1000  # about 450 kB of HTML for a table of profiles
TABLES = {"profiles": "Profiles", "others": "Other records"}  # the index's tables, as its context names them


def _pager(table: str, number: int, count: int, page: str) -> list[dict[str, Any]]:
    return [{"number": n, **links.twins(links.list_page(table, n), page), "current": n == number}
            for n in range(1, count + 1)]


def filters(rows: list[Row]) -> dict[str, list[str]]:
    """The GPUs and kinds a table's rows have, sorted: the choices of its filters."""
    return {"gpus": sorted({r.gpu for r in rows}), "kinds": sorted({r.kind for r in rows})}


def paginate(index: Page) -> list[Page]:
    """The index with each table cut to its first page, then the pages of the rest."""
    context = dict(index.context)
    extra: list[Page] = []
    for table in TABLES:
        rows = context.get(table) or []
        count = max(1, -(-len(rows) // ROWS_PER_PAGE))
        context[f"{table}_filters"] = filters(rows)
        context[f"{table}_total"] = len(rows)
        context[f"{table}_pages"] = _pager(table, 1, count, links.INDEX) if count > 1 else []
        context[table] = rows[:ROWS_PER_PAGE]
        for number in range(2, count + 1):
            path = links.list_page(table, number)
            first = (number - 1) * ROWS_PER_PAGE
            part = rows[first:first + ROWS_PER_PAGE]  # each row is linked from the page it is on as it is made
            extra.append(Page(path=path, template="list", title=f"{TABLES[table]}, page {number} of {count}", root="../", context={
                "table": table, "heading": TABLES[table], "rows": part, "number": number, "total": len(rows),
                "first": first + 1, "last": first + len(part),
                "filters": filters(part), "pages": _pager(table, number, count, path)}))
    return [replace(index, context=context), *extra]
