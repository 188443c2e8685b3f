"""``ikreport sync SRC DST``: copy into DST every record and blob it lacks from SRC.

Any two archives: folder to bucket, bucket to folder, bucket to bucket. Objects are copied
byte for byte as stored (a record is never re-encoded, a compressed blob never recompressed),
each re-hashed as it is read (a compressed blob once decompressed), so a damaged object is
reported and not copied. A blob is copied a chunk at a time and checked as it passes: the
write is completed only once the last chunk proved the blob whole, so a blob of any size
costs a few chunks of memory. Nothing in DST is ever deleted or replaced. Blobs go first,
then records in order of what they cite, so DST never holds a record whose citations are
missing, even when a copy stops half-way; copies run in threads (the work is waiting on I/O).

A record's content is not trusted: the ids it cites must each be 64 hex digits before one is
looked up (checked_references), and the order of what cites what is worked out without
recursion, so a chain of any length copies.

What DST already holds under a name SRC has is checked too, so a damaged copy is named rather
than counted as there: in a folder each such file is re-hashed (local reads are quick); in
object storage its size, which the listing gives without a request, must equal SRC's (an
object is only ever put whole, after its bytes were hashed), and ``check`` re-hashes each such
object instead (read again, a chunk at a time). SRC and DST must be two archives, neither
inside the other.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import orjson

from ikreport.errors import ArchiveError, IntegrityError, RecordError, UnknownIdError
from ikreport.progress import Progress
from ikreport.store.archive import Archive, checked_references
from ikreport.store.backend import Area

T = TypeVar("T")
R = TypeVar("R")

THREADS = 16  # object stores answer many requests at once; a folder does not mind


@dataclass(frozen=True)
class Synced:
    """What a sync did: where each copied object now is (in DST), how many DST had already,
    and one line per object that could not be copied."""

    copied: tuple[str, ...]
    present: int
    problems: tuple[str, ...]
    rehashed: bool = True  # whether what DST already held was re-hashed (else its sizes were compared)


def open_pair(src: Path | str, dst: Path | str) -> tuple[Archive, Archive]:
    """The archive at ``src`` and the one at ``dst`` (made if absent), once they are known to be
    apart; ArchiveError, before anything is made, when they are one or one holds the other."""
    here, there = _place(src), _place(dst)
    if isinstance(here, Path) and isinstance(there, Path):
        nested = here == there or here in there.parents or there in here.parents
    else:
        nested = isinstance(here, str) and isinstance(there, str) and (
            here == there or there.startswith(here + "/") or here.startswith(there + "/"))
    if nested:
        raise ArchiveError(f"{src} and {dst}: one archive, or one inside the other; sync between two separate archives")
    return Archive.open(src), Archive.create(dst)


def _place(location: Path | str) -> Path | str:
    """Where an archive lies, comparable with another's: its whole folder path, or its URL."""
    archive = Archive.at(location)
    if archive.folder is not None:
        return archive.folder.resolve()
    scheme, rest = archive.location.split("://", 1)
    return f"{scheme.lower()}://{rest.rstrip('/')}"


def sync(src: Archive, dst: Archive, *, check: bool = False, threads: int = THREADS,
         progress: Progress | None = None) -> Synced:
    """Copy what ``dst`` lacks from ``src`` (see the module docstring); ``check`` re-hashes what
    ``dst`` already holds in object storage too (in a folder it always is)."""
    src_blobs, src_records = set(src.blob_ids()), set(src.record_ids())
    blobs = sorted(src_blobs - set(dst.blob_ids()))
    missing = sorted(src_records - set(dst.record_ids()))
    rehash = check or dst.folder is not None
    problems: list[str] = list(_damaged(src, dst, [("blobs", i) for i in sorted(src_blobs - set(blobs))]
                                        + [("records", i) for i in sorted(src_records - set(missing))], rehash, threads))
    present = len(src_blobs) + len(src_records) - len(blobs) - len(missing) - len(problems)
    total, done = len(blobs) + len(missing), 0
    names: list[str] = []

    def land(area: Area, ids: list[str], read: Callable[[str], tuple[str, Iterable[bytes]]]) -> set[str]:
        nonlocal done
        good: set[str] = set()

        def one(file_id: str) -> str | None:
            try:
                form, chunks = read(file_id)
                # checked as it passes: a damaged object raises before its write is completed
                dst.backend.write_once_chunks(area, file_id + form, chunks)
            except (IntegrityError, UnknownIdError) as exc:
                return str(exc)
            return None

        for problem, file_id in zip(_each(one, ids, threads), ids):
            done += 1
            if problem:
                problems.append(problem)
            else:
                good.add(file_id)
                names.append(dst.backend.where(area, file_id + (dst.blob_form(file_id) or "" if area == "blobs" else "")))
            if progress:
                progress.count(done, total)
        return good

    have_blobs = land("blobs", blobs, src.stored_chunks) | (src_blobs - set(blobs))
    held: dict[str, bytes] = {}  # each record is read (and re-hashed) once, to learn what it cites
    levels = _levels(src, missing, held, problems, threads)
    done += len(missing) - sum(len(level) for level in levels)  # unreadable records: counted as done
    for level in levels:
        ready = []
        for rid, refs in level:
            lacking = [ref for what, ref in refs if not (ref in have_blobs if what == "blob"
                                                         else dst.backend.exists("records", ref))]
            if lacking:
                problems.append(f"{src.where(rid)}: not copied: cites {lacking[0][:12]}, which {src.location} "
                                "lacks or holds damaged; repair SRC ('ikreport verify') and sync again")
                done += 1
            else:
                ready.append(rid)
        land("records", ready, lambda rid: ("", [held.pop(rid)]))
    return Synced(tuple(names), present, tuple(sorted(problems)), rehash)


def _each(work: Callable[[T], R], items: list[T], threads: int) -> Iterator[R]:
    """``work`` of each item, in order, in threads. When one raises, the items not yet begun are
    dropped: a stalled store must cost one deadline, not one per object."""
    pool = ThreadPoolExecutor(max_workers=max(1, threads))
    try:
        yield from pool.map(work, items)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _damaged(src: Archive, dst: Archive, held: list[tuple[Area, str]], rehash: bool, threads: int) -> list[str]:
    """One line for each file ``dst`` already holds (of ``held``) that is damaged: re-hashed when
    ``rehash``, else its size compared with SRC's (see the module docstring)."""
    def one(item: tuple[Area, str]) -> str | None:
        area, file_id = item
        name = file_id + (dst.blob_form(file_id) or "" if area == "blobs" else "")
        if not rehash:
            theirs = src.backend.size(area, name)  # None when SRC keeps the blob in the other form
            whole = theirs is None or dst.backend.size(area, name) == theirs
        else:
            try:
                (dst.record_bytes if area == "records" else dst.check_blob)(file_id)  # re-hashed, a chunk at a time
                whole = True
            except IntegrityError:
                whole = False
        return None if whole else (f"{dst.backend.where(area, name)}: damaged in DST (its bytes do not hash to its "
                                   "name); restore it from a good copy, or remove it and sync again")

    return [line for line in _each(one, held, threads) if line]


def _levels(src: Archive, ids: list[str], held: dict[str, bytes], problems: list[str],
            threads: int) -> list[list[tuple[str, list[tuple[str, str]]]]]:
    """The records to copy (their bytes put in ``held``), grouped so each group cites only
    records of earlier groups or already in DST: a record lands after everything it cites."""
    def fetch(rid: str) -> bytes | str:
        try:
            return src.record_bytes(rid)  # re-hashed: a damaged record is not copied
        except (IntegrityError, UnknownIdError) as exc:
            return str(exc)

    refs: dict[str, list[tuple[str, str]]] = {}
    for got, rid in zip(_each(fetch, ids, threads), ids):
        if isinstance(got, str):
            problems.append(got)
            continue
        try:
            # orjson refuses nesting past 1024 levels, where json would recurse out of the stack
            refs[rid] = checked_references(orjson.loads(got), f"{src.where(rid)}: not copied")
            held[rid] = got
        except orjson.JSONDecodeError:
            problems.append(f"{src.where(rid)}: not copied: not a readable record; 'ikreport verify' SRC")
        except RecordError as exc:
            problems.append(str(exc))
    # Kahn's order, by rounds: a round holds the records whose cited records (among those to
    # copy) all landed in earlier rounds. No recursion, however long a chain of citations is.
    cites = {rid: {r for what, r in refs[rid] if what == "record" and r in refs and r != rid} for rid in refs}
    cited_by: dict[str, list[str]] = {}
    for rid, cited in cites.items():
        for r in cited:
            cited_by.setdefault(r, []).append(rid)
    waiting = {rid: len(cited) for rid, cited in cites.items()}
    level = sorted(rid for rid, n in waiting.items() if n == 0)
    levels = []
    while level:
        levels.append([(rid, refs[rid]) for rid in level])
        following = []
        for rid in level:
            del waiting[rid]
            for citing in cited_by.get(rid, []):
                waiting[citing] -= 1
                if waiting[citing] == 0:
                    following.append(citing)
        level = sorted(following)
    if waiting:  # a cycle, which content addressing cannot make: these cite what never lands, and say so
        levels.append([(rid, refs[rid]) for rid in sorted(waiting)])
    return levels
