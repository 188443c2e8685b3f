"""What a record page depends on, and a cache of rendered pages keyed by it.

Records are immutable, so a record page is a pure function of: the record, the records it
refers to and that refer to it, the peak-bandwidth record its claims use, whether a
supersession replaces it, which of its blobs are published, the templates, and ikreport's
own code. Hash those ids and digests and a page whose key is unchanged need not be rendered
again (issue: builds of big archives are incremental).
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
from ikreport.archive import references
from ikreport.cache import keep
from ikreport.claims.gpus import measured_peak_for
from ikreport.claims.model import RecordSet


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
    h = hashlib.sha256()
    for base in dirs:
        for path in sorted(Path(base).rglob("*")):
            if path.is_file():
                h.update(str(path.relative_to(base)).encode())
                h.update(path.read_bytes())
    return h.hexdigest()


def record_page_key(record_id: str, records: RecordSet, cited_by: dict[str, list[str]], published: Mapping[str, str],
                    templates: str) -> str:
    record = records.records[record_id]
    deps: dict[str, Any] = {
        "record": record_id,
        "refs": sorted({ref for _, ref in references(record)}),
        "cited_by": sorted(cited_by.get(record_id, [])),
        "peak": measured_peak_for(record, records) if record["kind"] == "ncu-profile" else None,
        "superseded_by": sorted(r for r in records.by_kind.get("supersession", [])
                                if any(s["id"] == record_id for s in records.records[r]["supersedes"])),
        "published": sorted(s["id"] for s in record["sources"] if s["id"] in published),
        "templates": templates,
        "code": code_digest(),
    }
    return hashlib.sha256(json.dumps(deps, sort_keys=True).encode()).hexdigest()


class PageCache:
    """Rendered record pages on disk: <key>.html, <key>.md and <key>.json (chart keys, claims)."""

    def __init__(self, root: Path | None) -> None:
        self.root = root

    def get(self, key: str) -> dict[str, Any] | None:
        """The page's meta, with "sizes" {ext: bytes} of its files; None unless the page is whole."""
        if self.root is None:
            return None
        base = os.path.join(self.root, key)
        try:
            with open(base + ".json", encoding="utf-8") as f:
                found = json.load(f)
            found["sizes"] = {ext: os.stat(f"{base}.{ext}").st_size for ext in ("html", "md")}
        except (OSError, ValueError, TypeError):
            return None
        return dict(found)

    def read(self, key: str, ext: str) -> bytes:
        assert self.root is not None
        return (self.root / f"{key}.{ext}").read_bytes()

    def put(self, key: str, html: str, md: str, meta: dict[str, Any]) -> None:
        if self.root is None:
            return
        for ext, text in (("html", html), ("md", md), ("json", json.dumps(meta, sort_keys=True))):
            if not keep(self.root / f"{key}.{ext}", text):  # the .json last: a page is whole or absent
                return
