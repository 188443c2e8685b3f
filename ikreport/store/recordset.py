"""The loaded archive: every record by id, and the questions asked of the whole set.

One object answers "which record does this prefix name", "what does this record point at",
"what cites it" and "what supersedes it", so that ``check``, ``verify``, the build, its
workers and report citations all get the same answer.

Loading re-hashes every record; one whose summary the cache keeps is known by it (a
LazyRecord). The successor rule lives here too (``of_record``, ``chosen``); commands/supersede.py
states what makes a set of supersessions broken (IK109) on top of it.
"""

from __future__ import annotations

import bisect
import hashlib
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import lru_cache, partial
from importlib import resources
from typing import Any, TypeVar

from ikreport.errors import AmbiguousIdError, IkreportError, StalledError, UnknownIdError
from ikreport.store import records as record_codec, rehash
from ikreport.store.archive import Archive, references as record_references
from ikreport.store.cache import Cache
from ikreport.store.schema_parts import digest_input, record_facts, successor_key

Record = Mapping[str, Any]  # a dict, or a LazyRecord known by its summary
LATER_BELOW = 64  # new records; with fewer, load's ``later`` re-hashes the kept ones meanwhile
Summary = dict[str, Any]  # {"head": every field but data, "facts": the kind's facts}
T = TypeVar("T")


@lru_cache(maxsize=1)
def summary_space() -> str:
    """Where the cache keeps the summaries of valid records: named after what "valid" and a
    summary mean (the schema, the checks records.py makes, each kind's part, this file), so
    that a change to any of them starts anew."""
    package = resources.files("ikreport")
    digest = hashlib.sha256(digest_input())
    for name in ("schema/record-1.json", "store/records.py", "store/recordset.py"):
        digest.update(package.joinpath(name).read_bytes())
    return f"summary {digest.hexdigest()[:16]}"


def summarize(record: Mapping[str, Any]) -> Summary:
    """The record's head (every field but ``data``) and its facts."""
    return {"head": {k: v for k, v in record.items() if k != "data"}, "facts": record_facts(record)}


def as_summary(value: Any) -> Summary | None:
    """A kept summary, when ``value`` has the shape ``summarize`` gives; None otherwise."""
    if isinstance(value, dict) and isinstance(value.get("head"), dict) and isinstance(value.get("facts"), dict) \
            and isinstance(value["head"].get("kind"), str):
        return value
    return None


class LazyRecord(Mapping[str, Any]):
    """A record known by its summary; ``load`` gives the whole record when ``data`` is asked for."""

    __slots__ = ("head", "facts", "_load", "_whole")

    def __init__(self, summary: Summary, load: Callable[[], dict[str, Any]]) -> None:
        self.head: dict[str, Any] = summary["head"]  # every field but data: asked of every record, unread
        self.facts: dict[str, Any] = summary["facts"]
        self._load = load
        self._whole: dict[str, Any] | None = None

    def whole(self) -> dict[str, Any]:
        """The whole record, loaded (and checked) the first time it is asked for."""
        if self._whole is None:
            self._whole = self._load()
        return self._whole

    def __getitem__(self, key: str) -> Any:
        return self.whole()["data"] if key == "data" else self.head[key]

    def get(self, key: str, default: Any = None) -> Any:
        """``Mapping.get`` in one call (it takes three: thousands of times a build)."""
        return self.whole().get("data", default) if key == "data" else self.head.get(key, default)

    def __iter__(self) -> Iterator[str]:
        yield from self.head
        yield "data"

    def __len__(self) -> int:
        return len(self.head) + 1


@dataclass(frozen=True)
class Supersession:
    """``by`` (a supersession record) says ``new`` replaces ``old``."""

    by: str
    old: str
    new: str


def of_record(record_id: str, record: Mapping[str, Any]) -> list[Supersession]:
    """The replacements a record states: none unless its kind's part names a successor key
    (store/schema_parts.py), then one per record it supersedes."""
    key = successor_key(record["kind"])
    if key is None:
        return []
    # a record known by its summary names its successor among its facts (the kind's part lists
    # the key there too), so a rebuild need not parse every supersession
    facts = getattr(record, "facts", None)
    data = facts if isinstance(facts, Mapping) and key in facts else record["data"]
    new = data.get(key) if isinstance(data, Mapping) else None
    if not isinstance(new, str):
        return []  # the schema's business; nothing to follow
    return [Supersession(record_id, old["id"], new) for old in record["supersedes"]]


def chosen(edges: Iterable[Supersession]) -> dict[str, Supersession]:
    """old id -> the supersession that replaces it: the first supersession record (by id) when
    an archive gives a record two (IK109), so every reader names the same successor."""
    out: dict[str, Supersession] = {}
    for edge in sorted(edges, key=lambda e: (e.old, e.by, e.new)):
        out.setdefault(edge.old, edge)
    return out


@dataclass(frozen=True)
class RecordSet:
    """Every record of the archive, loaded once per command, for the questions asked of the
    whole set (claim rules, citations, pages)."""

    records: dict[str, Record]
    by_kind: dict[str, list[str]] = field(default_factory=dict)
    # each record file's size as loading read it, so a build need not stat every record again
    sizes: dict[str, int] = field(default_factory=dict, repr=False, compare=False)
    # waits until every record is re-hashed (load's ``later``); a damaged one goes to load's ``failed``
    finish: Callable[[], None] = field(default=lambda: None, repr=False, compare=False)
    # Worked out on first use (a frozen value's caches: same inputs, same answers).
    _index: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def of(cls, records: dict[str, Record], sizes: dict[str, int] | None = None,
           finish: Callable[[], None] | None = None) -> RecordSet:
        """The set of ``records`` (id -> record), with their ids grouped by kind, and the sizes of
        their files where loading read them."""
        by_kind: dict[str, list[str]] = {}
        order = sorted(records)
        heads = _heads(records)
        for record_id in order:
            by_kind.setdefault(heads[record_id]["kind"], []).append(record_id)
        return cls(records=records, by_kind=by_kind, sizes={} if sizes is None else sizes,
                   finish=finish or (lambda: None), _index={"sorted": order, "heads": heads})

    def whole(self, record_id: str) -> dict[str, Any]:
        """The record as a plain dict, read from the archive if only its summary was loaded."""
        record = self.records[record_id]
        if isinstance(record, LazyRecord):
            return record.whole()
        return record if isinstance(record, dict) else dict(record)

    def facts(self, record_id: str) -> dict[str, Any]:
        """The few values of a record's data that pages about the whole archive show."""
        record = self.records[record_id]
        return record.facts if isinstance(record, LazyRecord) else record_facts(record)

    def limitations(self, record_ids: Iterable[str]) -> tuple[tuple[str, tuple[str, ...]], ...]:
        """(record id, its limitations) for each of ``record_ids``, in order."""
        return tuple((rid, tuple(self.records[rid]["limitations"])) for rid in record_ids)

    def resolve(self, prefix: str) -> str:
        """The one loaded record id starting with ``prefix``; UnknownIdError or AmbiguousIdError otherwise."""
        prefix = prefix.lower()
        ids = self.once("sorted", _sorted)
        at = bisect.bisect_left(ids, prefix)  # the ids that start with it are all together, from there
        hits = [rid for rid in ids[at:at + 3] if rid.startswith(prefix)]
        if not hits:
            raise UnknownIdError(f"no record starts with {prefix}; 'ikreport list' lists the records")
        if len(hits) > 1:
            raise AmbiguousIdError(f"{prefix} names several records ({', '.join(h[:12] for h in hits)}); give more digits")
        return hits[0]

    def references(self, record_id: str) -> list[tuple[str, str]]:
        """("blob"|"record", id) for everything the record points at, in record order (read from
        its head: a summarised record is not loaded for this)."""
        return self.once("references", _references)[record_id]

    def heads(self) -> dict[str, Mapping[str, Any]]:
        """Each record's fields but its data, by id: a summarised record's are its summary's, so
        the questions asked of every record (kind, references, sources) read plain dicts."""
        return self.once("heads", lambda records: _heads(records.records))

    def dangling(self, blobs: Collection[str]) -> list[tuple[str, str, str]]:
        """(record id, "blob"|"record", id) for each reference to a record not in the set or a
        blob not in ``blobs``, by record id and then in record order."""
        refs = self.once("references", _references)
        return [(rid, what, ref) for rid in self.once("sorted", _sorted) for what, ref in refs[rid]
                if ref not in (blobs if what == "blob" else self.records)]

    def cited_blobs(self) -> set[str]:
        """The ids of the blobs the records name as sources."""
        return {source["id"] for head in self.heads().values() for source in head["sources"]}

    def wrong_sizes(self, size_of: Callable[[str], int | None], modulo: int = 0) -> list[tuple[str, str]]:
        """(record id, what is wrong) for each source whose declared size is not its blob's;
        ``size_of`` gives a blob's size (modulo ``modulo``, when given), or None for a blob not
        to be judged (absent, damaged)."""
        out, heads = [], self.heads()
        for rid in self.once("sorted", _sorted):
            for source in heads[rid]["sources"]:
                size = size_of(source["id"])
                if size is not None and size != (source["size"] % modulo if modulo else source["size"]):
                    out.append((rid, f"declares blob {source['id'][:12]} as {source['size']} bytes, but it is "
                                     f"{size}; the record is wrong about its source: re-collect it"))
        return out

    def cited_by(self, record_id: str) -> list[str]:
        """The ids of the records that point at ``record_id`` (cite, environment, supersede), sorted."""
        return list(self.once("cited_by", _citing).get(record_id, ()))

    def supersession_of(self, record_id: str) -> Supersession | None:
        """The one supersession that replaces ``record_id`` (see :func:`chosen`), if any."""
        return self.once("chosen", lambda records: chosen(records.supersessions())).get(record_id)

    def superseded_by(self, record_id: str) -> str | None:
        """The id of the record that replaces ``record_id``, if any."""
        edge = self.supersession_of(record_id)
        return edge.new if edge is not None else None

    def supersessions(self) -> list[Supersession]:
        """Every replacement the set's records state (broken ones too), by record id."""
        stating = sorted(rid for kind, ids in self.by_kind.items() if successor_key(kind) for rid in ids)
        return [edge for rid in stating for edge in of_record(rid, self.records[rid])]

    def once(self, name: str, make: Callable[[RecordSet], T]) -> T:
        """``make(self)``, worked out on first use and kept with the set, which never changes:
        what every page asks of the whole archive (titles told apart, each GPU's peak) is
        worked out once per build, and let go with the set rather than kept by a module."""
        if name not in self._index:
            self._index[name] = make(self)
        return self._index[name]

    def kinds(self) -> dict[str, str]:
        """Each record's kind, by id."""
        return {rid: head["kind"] for rid, head in self.heads().items()}


def _heads(records: Mapping[str, Record]) -> dict[str, Mapping[str, Any]]:
    # a LazyRecord's own dict: asking it for each field is a Python call a field, thousands a build
    return {rid: record.head if isinstance(record, LazyRecord) else record for rid, record in records.items()}


def _references(records: RecordSet) -> dict[str, list[tuple[str, str]]]:
    # worked out once for the build's two passes over them (dangling, cited_by)
    return {rid: record_references(head) for rid, head in records.heads().items()}


def _sorted(records: RecordSet) -> list[str]:
    return sorted(records.records)


def _citing(records: RecordSet) -> dict[str, dict[str, None]]:
    """Record id -> the ids of the records that point at it, in order (ordered sets: a record
    every profile cites has thousands)."""
    index: dict[str, dict[str, None]] = {}
    for rid in records.once("sorted", _sorted):
        for what, ref in records.references(rid):
            if what == "record":
                index.setdefault(ref, {})[rid] = None
    return index


def load(archive: Archive, cache: Cache | None = None, failed: Callable[[str, IkreportError], None] | None = None,
         ids: list[str] | None = None, later: bool | rehash.Look = False) -> RecordSet:
    """Every record of ``archive``, each re-hashed against its id. A record whose summary
    ``cache`` keeps is not parsed (a LazyRecord reads it when its data is asked for); the rest
    are parsed, validated, and their summaries kept. A record that does not load goes to
    ``failed`` and is left out; without ``failed`` the error is raised. ``ids``: the archive's
    record ids, when the caller has just listed them. ``later``: when few records are new, the
    kept ones are re-hashed by a child process (rehash.py) while the caller goes on, until the
    set's ``finish`` (a damaged one goes to ``failed`` then but stays in the set, which must
    not be used); a ``rehash.Look`` has the child look at those files too."""
    cache = cache or Cache(None)
    ids = archive.record_ids() if ids is None else ids
    space = summary_space()
    loaded: dict[str, Record] = {}
    sizes: dict[str, int] = {}
    new: list[tuple[str, Summary]] = []
    look = later if isinstance(later, rehash.Look) else None  # the child hashes all, from before the summaries are read
    known = cache.count(space)  # summaries kept, of any archive: a first build (none) starts no child
    elsewhere = rehash.start(archive, ids, look) if later and known and len(ids) - known < LATER_BELOW else None
    kept = cache.get_runs(space, ids, lambda value: as_summary(value) is not None)

    def take(rid: str, data: bytes | int | IkreportError | None) -> None:
        try:
            if isinstance(data, IkreportError):
                raise data
            if data is not None:  # None: a kept record, hashed later
                sizes[rid] = data if isinstance(data, int) else len(data)
            if rid in kept:
                if rid not in loaded:  # taken again when its hash is known
                    loaded[rid] = LazyRecord(kept[rid], partial(archive.load, rid, known_valid=True))
                return
            assert isinstance(data, bytes)
            record = record_codec.decode(data, archive.where(rid))
            new.append((rid, summarize(record)))
            loaded[rid] = record
        except IkreportError as exc:
            if failed is None or isinstance(exc, StalledError):  # the storage's fault: one deadline, not one each
                raise
            failed(rid, exc)

    def finish(pending: Iterable[tuple[str, bytes | int | IkreportError]]) -> None:
        for rid, data in pending:  # read as taken, so a stalled store stops the reading
            take(rid, data)
        cache.put_many(space, new)  # later runs need not parse them
        new.clear()  # finish may be called again

    if elsewhere is None:
        finish((rid, rehash.checked(archive, rid)) for rid in ids)
        return RecordSet.of(loaded, sizes)
    for rid in ids:  # the new ones read now, in order
        take(rid, None if rid in kept else rehash.checked(archive, rid))
    return RecordSet.of(loaded, sizes, partial(finish, ((rid, got) for rid, got in zip(ids, elsewhere) if rid in kept)))


def summaries(records: RecordSet) -> dict[str, Summary]:
    """Each record's summary (its head and facts), by id: what ``from_summaries`` needs."""
    return {rid: {"head": r.head, "facts": r.facts} if isinstance(r, LazyRecord) else summarize(r)
            for rid, r in records.records.items()}


def from_summaries(archive: Archive, known: Mapping[str, Summary]) -> RecordSet:
    """The set of records already loaded and checked elsewhere (a build's worker processes get
    them from the builder): each a LazyRecord, whose data is read, and re-hashed, when asked for."""
    return RecordSet.of({rid: LazyRecord(summary, partial(archive.load, rid, known_valid=True))
                         for rid, summary in known.items()})
