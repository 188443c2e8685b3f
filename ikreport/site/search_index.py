"""The site's search index: made at build time as JSON files that the browser loads in pieces.

No server and no CDN: ``assets/search.js`` fetches these files relative to the index page, so
search works wherever the site is served, a GitHub Pages sub-path included. The index has
three parts, all under ``search/``:

- ``meta.json``: the format, the folder of the other two parts (``dir``, a digest of what they
  hold), how many documents, how many per chunk, how many term shards;
- ``<dir>/docs-<n>.json``: the documents, ``DOCS_PER_CHUNK`` to a file, as ``search_files`` writes them;
- ``<dir>/terms-<n>.json``: term -> document numbers. A term goes to the shard its first two
  characters choose (``shard_of``, which ``search.js`` computes alike), so a query loads one
  shard per word it has, and then only the chunks of the documents it shows.

Terms are lower-case ASCII runs of letters and digits, and the parts of an identifier
(``flash_fwd_splitkv_kernel`` and ``FlashAttention`` give ``flash``, ``fwd``, ``attention`` …);
a query word matches every term it begins.

Document numbers change whenever a record is added, so the pieces of one index must never meet
another's: each index is a folder of its own that only its ``meta.json`` names.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections import defaultdict
from collections.abc import Callable, Iterable
from functools import partial
from typing import Any, NamedTuple

import orjson

from ikreport.bidi import show_bidi
from ikreport.claims.kernel_names import short_kernel
from ikreport.reports.render import RenderedReport
from ikreport.site.page_cache import code_digest
from ikreport.site.pages import index_order, listed_as, replacement, shown_gpu, shown_titles
from ikreport.store.cache import Cache
from ikreport.store.recordset import RecordSet
from ikreport import links

FORMAT = 2  # search.js refuses another, so an old cached script never misreads a new index
DOCS_PER_CHUNK = 500  # about 100 kB a chunk: a result page loads one or two
SHARD_BYTES = 96_000  # the size a term shard aims at; the number of shards grows with the archive
MAX_KERNELS = 40  # a profile's longest kernels that are searchable; the rest are on its page
_RUN = re.compile(r"[a-z0-9]+")
_PARTS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


class SearchDoc(NamedTuple):  # a tuple: a first build makes one for every record
    """One thing search can find: a record or a report."""

    title: str
    path: str  # from the site's root, e.g. "e/<id>.html"
    kind: str  # a record's kind, or "report"
    gpu: str = ""
    words: tuple[str, ...] = ()  # kernel names, engine, model, workload: found, and shown as a line
    superseded_by: str = ""  # the title of the record that replaces this one


def terms(text: str) -> set[str]:
    """The searchable terms of ``text``: its lower-case runs of letters and digits, and the
    camel-case and letter/digit parts of each, at least two characters long."""
    found = set(_RUN.findall(text.lower()))
    for word in re.findall(r"[A-Za-z0-9]+", text):
        found.update(part.lower() for part in _PARTS.findall(word))
    return {t for t in found if len(t) >= 2}


def shard_of(term: str, shards: int) -> int:
    """The shard that holds ``term``: chosen by its first two characters only, so that every
    term a query word begins lies in one shard (search.js has the same function)."""
    return (ord(term[0]) * 131 + ord(term[1])) % shards


def record_doc(records: RecordSet, rid: str) -> SearchDoc:
    """A record as search finds it: its title, GPU and replacement as the index shows them (so
    the search's filters and the index's agree), its kind, subject and, for a profile, its kernels."""
    record, facts = records.heads()[rid], records.facts(rid)
    subject = record["subject"]
    kernels = facts.get("kernel_names") or []  # an ncu-profile's, longest first; other kinds have none
    words = [short_kernel(k) for k in kernels[:MAX_KERNELS] if isinstance(k, str)]
    words += [str(subject[k]) for k in ("engine", "model", "workload") if subject.get(k)]
    newer = replacement(rid, records, links.INDEX)
    return SearchDoc(title=shown_titles(records)[rid], path=links.record_file(rid), kind=str(record["kind"]),
                     gpu=shown_gpu(records, rid), words=tuple(dict.fromkeys(words)),
                     superseded_by=newer["title"] if newer else "")


Listed = tuple[str, Callable[[], SearchDoc]]  # a record's document: pages.py listed_as, and what makes it


def archive_docs(records: RecordSet, reports: Iterable[RenderedReport],
                 histories: Iterable[tuple[str, str]] = ()) -> list[SearchDoc | Listed]:
    """The reports, the history pages ((title, path)), then every record in the index's order
    (kind, title, id), made only if the build cache lacks its entry."""
    docs: list[SearchDoc | Listed] = [SearchDoc(title=r.title, path=links.report_file(r.slug), kind="report",
                                                words=(r.summary,) if r.summary else ()) for r in reports]
    docs += [SearchDoc(title=title, path=path, kind="history") for title, path in histories]
    return docs + [(listed_as(records, rid), partial(record_doc, records, rid)) for rid in index_order(records)]


def _compact(value: object) -> str:
    # orjson writes what json.dumps(sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    # does for strings and small ints, the only values here, in a seventh of the time
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()


def _entry(doc: SearchDoc) -> list[Any]:
    """A document's line of its docs chunk (search.js shows these as text: bidirectional controls
    as escapes, as the pages show them) and its terms."""
    line = _compact({"t": show_bidi(doc.title), "u": doc.path, "k": doc.kind, "g": show_bidi(doc.gpu),
                     "w": show_bidi(" · ".join(doc.words)), "s": show_bidi(doc.superseded_by)})
    return [line, sorted(terms(" ".join((doc.title, doc.kind, doc.gpu, *doc.words))))]


def search_files(docs: Iterable[SearchDoc | Listed], cache: Cache | None = None) -> dict[str, str]:
    """Every file of the index, path under the site root -> JSON text, for the documents in
    the order given (their numbers). A document's entry is a pure function of its key (a
    record's listed_as, another's fields) and the code, kept in the build ``cache`` under a
    digest of them: a rebuild makes only the entries of records it has not shown before."""
    keyed = [(_compact(list(doc)), partial(SearchDoc._make, doc)) if isinstance(doc, SearchDoc) else doc for doc in docs]
    keys = [hashlib.blake2b(key.encode(), digest_size=16).hexdigest() for key, _ in keyed]
    cache, space = cache or Cache(None), f"search {code_digest()[:16]}"
    kept = cache.get_runs(space, keys, lambda found: isinstance(found, list) and len(found) == 2
                          and isinstance(found[0], str) and isinstance(found[1], list))
    new = {key: _entry(make()) for key, (_, make) in zip(keys, keyed) if key not in kept}
    cache.put_many(space, new.items())
    entries = [kept[key] if key in kept else new[key] for key in keys]
    postings: defaultdict[str, list[int]] = defaultdict(list)
    for n, (_, found) in enumerate(entries):
        for term in found:
            postings[term].append(n)
    size = sum(len(t) + 6 * len(ns) for t, ns in postings.items())  # about a posting's JSON bytes
    shards = max(1, math.ceil(size / SHARD_BYTES))
    split: list[dict[str, list[int]]] = [{} for _ in range(shards)]
    for term in sorted(postings):
        split[shard_of(term, shards)][term] = postings[term]
    pieces = {f"terms-{n}.json": _compact(part) for n, part in enumerate(split)}
    for start in range(0, len(entries), DOCS_PER_CHUNK):  # a list of the lines, as _compact writes it
        pieces[f"docs-{start // DOCS_PER_CHUNK}.json"] = f"[{','.join(line for line, _ in entries[start:start + DOCS_PER_CHUNK])}]"
    digest = hashlib.sha256()
    for name, text in sorted(pieces.items()):
        digest.update(f"{name}\n{len(text)}\n{text}".encode())
    folder = digest.hexdigest()[:16]
    files = {links.search_file(folder, name): text for name, text in pieces.items()}
    files[links.SEARCH_META] = _compact({"format": FORMAT, "dir": folder, "docs": len(entries), "per_chunk": DOCS_PER_CHUNK,
                                         "shards": shards})
    return files
