"""``ikreport supersede OLD --by NEW --reason TEXT``: a record saying a correction replaces a
record. Nothing is rewritten: the old record keeps its page, which then points to the new one.

The rules of supersession live here, once: a record has at most one successor, of its own
kind, and following successors never comes back to where it started. ``verify``, ``check``
(IK109) and ``supersede`` itself all apply :func:`problems`. Which successor a record has is
store/recordset.py's to say (:func:`~ikreport.store.recordset.chosen`), for every reader.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping

from ikreport.store import records, recordset
from ikreport.store.archive import Archive
from ikreport.store.recordset import Supersession, chosen
from ikreport.collect.context import utc_now
from ikreport.errors import RecordError, SupersessionError
from ikreport.formatting import with_article
from ikreport.kinds.supersession import NAME as KIND


def problems(edges: Iterable[Supersession], kinds: Mapping[str, str]) -> list[tuple[str, str]]:
    """(supersession record id, what is wrong) for every broken rule, sorted. ``kinds`` maps
    each record id present to its kind; supersessions naming absent records are left to the
    dangling-reference checks."""
    present = [e for e in set(edges) if e.old in kinds and e.new in kinds]
    found: set[tuple[str, str]] = set()
    first_of = chosen(present)
    for edge in present:
        if kinds[edge.old] != kinds[edge.new]:
            found.add((edge.by, f"replaces {kinds[edge.old]} record {edge.old[:12]} by {kinds[edge.new]} record "
                                f"{edge.new[:12]}; a correction must be of the same kind: supersede it by {with_article(kinds[edge.old])} record"))
        first = first_of[edge.old]
        if edge.old == edge.new:
            found.add((edge.by, f"says record {edge.old[:12]} replaces itself; remove this supersession"))
        elif first is not edge and first.new != edge.new:
            found.add((edge.by, f"gives record {edge.old[:12]} a second successor, {edge.new[:12]} "
                                f"({first.by[:12]} names {first.new[:12]}); supersede the newer record instead"))
        elif first is not edge:
            found.add((edge.by, f"repeats supersession {first.by[:12]} of record {edge.old[:12]}; "
                                "a record has one successor: remove one"))
    found.update(_cycles(first_of))
    return sorted(found)


def _cycles(chosen: Mapping[str, Supersession]) -> Iterator[tuple[str, str]]:
    """Each supersession on a cycle of successors (old -> new -> ... -> old). Each record has
    one successor here, so one walk from each record finds every cycle, in linear time."""
    walked: dict[str, str] = {}  # record -> the walk that reached it first
    for start in sorted(chosen):
        path: list[str] = []
        node = start
        while node in chosen and node not in walked and chosen[node].new != node:
            walked[node] = start
            path.append(node)
            node = chosen[node].new
        if walked.get(node) == start and node in path:
            loop = path[path.index(node):]
            names = " -> ".join(n[:12] for n in [*loop, node])
            for member in loop:
                yield chosen[member].by, f"is part of a supersession cycle ({names}); remove one of these supersessions"


def supersede(archive: Archive, old: str, new: str, reason: str) -> str:
    """Write the ``supersession`` record saying ``new`` replaces ``old``; return its id."""
    old_id, new_id = archive.resolve(old), archive.resolve(new)
    if old_id == new_id:
        raise RecordError(f"{old}: a record cannot supersede itself; give the corrected record with --by")
    if not reason.strip():
        raise RecordError("--reason: say why the record is replaced")
    old_rec, new_rec = archive.load(old_id), archive.load(new_id)
    edges, kinds = _archive_supersessions(archive)
    edge = Supersession("~new", old_id, new_id)  # "~" sorts after hex: the existing supersession stays first
    refused = [why for by, why in problems([*edges, edge], kinds) if by == edge.by]
    if refused:
        raise SupersessionError(f"{old}: cannot supersede: this supersession {refused[0]}")
    record = records.new_record(
        KIND,
        f"{new_rec['title']} replaces {old_rec['title']}",
        collected_at=utc_now(),
        subject=new_rec["subject"],
        method={"tool": "ikreport supersede", "tool_version": None, "command": None, "options": {},
                "how": "a correction recorded by hand"},
        data={"old": old_id, "new": new_id, "reason": reason.strip()},
        limitations=[],
        cites=[new_id],
        supersedes=[{"id": old_id, "reason": reason.strip()}],
    )
    return archive.put_record(record)


def _archive_supersessions(archive: Archive) -> tuple[list[Supersession], dict[str, str]]:
    """Every supersession in the archive and every record's kind (a record that does not load
    is left out: 'ikreport verify' reports it)."""
    loaded = recordset.load(archive, failed=lambda rid, exc: None)
    return loaded.supersessions(), loaded.kinds()
