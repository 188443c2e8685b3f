"""The site model: every page's finished data, gathered before anything is rendered.

Templates only format: every value here is already a display string or a list of them,
and every link is already a relative href.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from ikreport.claims.model import Claim
from ikreport import links


@dataclass(frozen=True)
class Page:
    """One page of the site, complete: where it goes, its template and its finished context."""
    path: str  # "index" or "e/<id>": the .html and .md files share it
    template: str  # base name: <template>.html and <template>.md in the templates folder
    title: str
    root: str  # relative path from the page to the site root ("" or "../")
    context: dict[str, Any] = field(default_factory=dict)


class Row(NamedTuple):
    """A row of the index's tables, whose values (``make``, linked from the page given) are made only when the
    build cache lacks its text, which ``key`` (pages.py listed_as), the page, the templates and the code decide."""

    key: str
    gpu: str
    kind: str
    make: Callable[[str], dict[str, Any]]


@dataclass(frozen=True)
class ClaimView:
    """A claim as a page shows it."""

    id: str
    text: str
    detail: str | None
    citations: list[dict[str, str]]  # {"short", "href", "md_href", "title"}
    caveats: list[str]
    limitations: list[dict[str, Any]]  # {"short", "href", "md_href", "items": [...]}


def claim_view(claim: Claim, root: str, titles: dict[str, str]) -> ClaimView:
    """A claim as a record page shows it, its citations and their limitations linked through ``root``."""
    def link(record_id: str) -> dict[str, str]:
        return {"id": record_id, "short": record_id[:8], "href": links.via_root(links.record_file(record_id), root),
                "md_href": links.via_root(links.record_file(record_id, "md"), root), "title": titles.get(record_id, "")}

    return ClaimView(id=claim.id, text=claim.text, detail=claim.detail, citations=[link(c) for c in claim.cites],
                     caveats=list(claim.caveats),
                     limitations=[{**link(rid), "items": list(items)} for rid, items in claim.limitations])
