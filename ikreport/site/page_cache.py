"""What a record page depends on, and a cache of rendered pages keyed by it.

Records are immutable, so a record page is a pure function of: the record, the records it
refers to and that refer to it, what else its kind reads (a profile: the peak-bandwidth
record its claims use), whether a supersession replaces it, which of its blobs are
published, the templates, and ikreport's own code. Hash those ids and digests and a page
whose key is unchanged need not be rendered again (issue: builds of big archives are
incremental).
"""

from __future__ import annotations

import hashlib
import json
import os
from functools import lru_cache
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ikreport import __version__
from ikreport.store.cache import keep, kept_size, recall, recall_json
from ikreport.kinds.registry import kind
from ikreport.site.pages import shown_titles
from ikreport.store.recordset import RecordSet


@lru_cache(maxsize=1)
def code_digest() -> str:
    """A digest of ikreport's own source: a new rule or view invalidates every cached page."""
    root = Path(__file__).resolve().parents[1]
    h = hashlib.sha256(__version__.encode())
    for path in sorted(root.rglob("*")):
        if path.suffix in (".py", ".json", ".js", ".css", ".html", ".md") and path.is_file():
            h.update(str(path.relative_to(root)).encode())
            h.update(path.read_bytes())
    return h.hexdigest()


def templates_digest(dirs: list[str]) -> str:
    """A digest of every file in the template folders (names and bytes)."""
    h = hashlib.sha256()
    for base in dirs:
        for path in sorted(Path(base).rglob("*")):
            if path.is_file():
                h.update(str(path.relative_to(base)).encode())
                h.update(path.read_bytes())
    return h.hexdigest()


def record_page_key(record_id: str, records: RecordSet, published: Mapping[str, str], templates: str) -> str:
    """The cache key of a record page: a digest of everything the page depends on."""
    record = records.records[record_id]
    page_inputs = kind(record["kind"]).page_inputs  # e.g. the peak a profile's roofline and claims use
    newer = records.supersession_of(record_id)
    refs = sorted({ref for _, ref in records.references(record_id)})
    cited_by = records.cited_by(record_id)
    titles = shown_titles(records)
    deps = (
        # the page names these records by their visible titles and marks those superseded
        [(rid, titles.get(rid), getattr(records.supersession_of(rid), "by", None))
         for rid in sorted({record_id, *refs, *cited_by})],
        record_id, refs, cited_by,
        page_inputs(record, records) if page_inputs is not None else None,
        newer.by if newer else None,
        sorted(s["id"] for s in record["sources"] if s["id"] in published),
        templates, code_digest(),
    )
    # repr of lists, tuples, strings and None is exact and fixed, and costs a third of json.dumps
    return hashlib.sha256(repr(deps).encode()).hexdigest()


class PageCache:
    """Rendered record pages on disk: <key>.html, <key>.md and <key>.json (meta: chart keys
    and sizes, claims, and the sizes of the two pages)."""

    def __init__(self, root: Path | None) -> None:
        self.root = root

    def get(self, key: str) -> dict[str, Any] | None:
        """The page's meta; None unless the page is whole (a damaged entry is a miss)."""
        if self.root is None:
            return None
        meta = recall_json(self.root / f"{key}.json")
        if not is_meta(meta):
            return None
        if any(kept_size(self.root / f"{key}.{ext}") != meta["sizes"][ext] for ext in ("html", "md")):
            return None
        return meta

    def count(self) -> int:
        """How many pages are kept (current or not): a guess at how many a build will reuse."""
        try:
            return sum(1 for entry in os.scandir(self.root) if entry.name.endswith(".json")) if self.root else 0
        except OSError:
            return 0

    def read(self, key: str, ext: str) -> bytes | None:
        """A page's bytes; None when they are gone or damaged since ``get`` (render it again)."""
        assert self.root is not None
        return recall(self.root / f"{key}.{ext}")

    def put(self, key: str, html: str, md: str, meta: dict[str, Any]) -> dict[str, Any]:
        """Keep a page; returns ``meta`` with the pages' sizes added, as ``get`` gives it."""
        pages = {"html": html.encode("utf-8"), "md": md.encode("utf-8")}
        meta = {**meta, "sizes": {ext: len(data) for ext, data in pages.items()}}
        if self.root is None:
            return meta
        for ext, data in (*pages.items(), ("json", json.dumps(meta, sort_keys=True).encode())):
            if not keep(self.root / f"{key}.{ext}", data):  # the .json last: a page is whole or absent
                break
        return meta


def is_meta(meta: Any) -> bool:
    """Whether ``meta`` has the shape ``put`` gives a page's meta."""
    return (isinstance(meta, dict) and isinstance(meta.get("claims"), int) and _sizes(meta.get("charts"))
            and _sizes(meta.get("sizes")) and set(meta["sizes"]) == {"html", "md"})


def _sizes(value: Any) -> bool:
    """A {name: byte count} mapping, as meta keeps them."""
    return isinstance(value, dict) and all(isinstance(k, str) and type(v) is int and v >= 0 for k, v in value.items())
