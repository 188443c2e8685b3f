"""What a record page depends on, and the rendered pages kept in the build cache by it.

Records are immutable, so a record page is a pure function of what ``record_page_key`` hashes:
a page whose key is unchanged need not be rendered again.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

import orjson

from ikreport import __version__
from ikreport.kinds.registry import kind
from ikreport.site.pages import listed_as
from ikreport.store.cache import Cache, key_bytes
from ikreport.errors import IntegrityError
from ikreport.site.record_pages import RenderedPage
from ikreport.store.compression import inflate
from ikreport.store.recordset import RecordSet

META, HTML, MD = "page", "page.html.gz", "page.md.gz"  # the cache's spaces: a page's meta, and its two files


@lru_cache(maxsize=1)
def code_digest() -> str:
    """A digest of ikreport's own source: a new rule or view invalidates every kept page."""
    suffixes = (".py", ".json", ".js", ".css", ".html", ".md")
    return _digest(hashlib.sha256(__version__.encode()), [str(Path(__file__).resolve().parents[1])], suffixes)


def templates_digest(dirs: list[str]) -> str:
    """A digest of every file in the template folders (names and bytes)."""
    return _digest(hashlib.sha256(), dirs)


def _digest(h: Any, dirs: list[str], suffixes: tuple[str, ...] | None = None) -> str:
    for base in dirs:
        for path in sorted(Path(base).rglob("*")):
            if (suffixes is None or path.suffix in suffixes) and path.is_file():
                data = path.read_bytes()  # each name and content known by its length: no two folders alike
                h.update(f"{path.relative_to(base)}\0{len(data)}\0".encode() + data)
    return h.hexdigest()


def record_page_key(record_id: str, records: RecordSet, published: Mapping[str, str], templates: str) -> str:
    """The cache key of a record page: a digest of all it depends on (the record, those it refers
    to and that refer to it, what else its kind reads, its successor, its published blobs, the
    templates and ikreport's code)."""
    record = records.records[record_id]
    page_inputs = kind(record["kind"]).page_inputs  # e.g. the peak a profile's roofline and claims use
    newer = records.supersession_of(record_id)
    refs = sorted({ref for _, ref in records.references(record_id)})
    cited_by = records.cited_by(record_id)
    inputs = page_inputs(record, records) if page_inputs is not None else None
    read = [rid for rid in (inputs if isinstance(inputs, list) else [inputs]) if isinstance(rid, str) and rid in records.records]
    deps = (
        # the page names these records by their shown titles and marks those superseded (by the
        # replacement's shown title): those it refers to and that refer to it, and those its kind
        # reads, which its claims cite
        [(listed_as(records, rid), getattr(records.supersession_of(rid), "by", None))
         for rid in sorted({record_id, *refs, *cited_by, *read})],
        record_id, refs, cited_by, inputs,
        newer.by if newer else None,
        sorted((s["id"], published[s["id"]]) for s in record["sources"] if s["id"] in published),
        templates, code_digest(),
    )
    return hashlib.sha256(key_bytes(deps)).hexdigest()


def keep_page(cache: Cache, key: str, page: RenderedPage) -> dict[str, Any]:
    """Keep a rendered page's files, gzipped as it comes; returns its meta: the size and sha256
    of each of its files and charts, and its claim count."""
    meta = {"claims": page.claims, "html": [page.html.size, page.html.sha256], "md": [page.md.size, page.md.sha256],
            "charts": {k: _stamp(svg.encode("utf-8")) for k, svg in page.charts.items()}}
    cache.put_rows([(HTML, key, page.html.gz), (MD, key, page.md.gz), (META, key, orjson.dumps(meta))])
    return meta


def kept_file(cache: Cache, space: str, key: str) -> bytes | None:
    """A kept page's file (``space`` HTML or MD); None when it is gone or damaged."""
    kept = cache.get(space, key)
    try:
        return inflate(kept, "") if kept is not None else None
    except IntegrityError:
        return None


def _stamp(data: bytes) -> list[Any]:
    return [len(data), hashlib.sha256(data).hexdigest()]


def is_meta(meta: Any) -> bool:
    """Whether ``meta`` has the shape ``keep_page`` gives a page's meta."""
    return (isinstance(meta, dict) and type(meta.get("claims")) is int and _is_stamp(meta.get("html"))
            and _is_stamp(meta.get("md")) and isinstance(meta.get("charts"), dict)
            and all(isinstance(k, str) and _is_stamp(v) for k, v in meta["charts"].items()))


def _is_stamp(value: Any) -> bool:
    return (isinstance(value, list) and len(value) == 2 and type(value[0]) is int and value[0] >= 0
            and isinstance(value[1], str) and len(value[1]) == 64)
