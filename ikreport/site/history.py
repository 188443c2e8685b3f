"""History pages: one per series of records of one kind and the same GPU and workload (and engine
and model, where recorded, and whatever else the kind says its series share), the regression
tracking asv gives benchmark suites, for this evidence.

Which kinds form series, and what their pages show, is the kind's ``history`` (kinds/base.py
``History``: per kernel for ncu profiles, kinds/ncu_profile/history.py; per latency figure for
serving benchmarks, kinds/serving_history.py). This module finds the series and orders them.
Records collected in the same second have no known order (records carry collection time to the
second): they are listed by id, no change is marked between two of them, and each is compared with
the records of the time before, a change marked only when it is one against every one of them.
A superseded record is left out; the record that corrects it stands at its place (its collection
time), and the page says so.
"""

from __future__ import annotations

import hashlib
import itertools
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ikreport import links
from ikreport.formatting import plural, short
from ikreport.kinds.base import History, SeriesContext
from ikreport.kinds.registry import KINDS
from ikreport.charts.render import ChartRenderer
from ikreport.site.model import Page
from ikreport.store.cache import Cache
from ikreport.store.recordset import RecordSet

_SECOND = re.compile(r":\d\dZ$")
SERIES_KEYS = ("gpu", "workload", "engine", "model")
LABELS = {"gpu": "GPU"}  # subject fields as readers write them


@dataclass(frozen=True)
class Series:
    """Records of one kind sharing GPU, workload, engine and model, in order of collection."""

    subject: dict[str, str]  # the shared subject fields that are recorded, then what the kind adds
    records: tuple[str, ...]
    when: tuple[str, ...] = ()  # each record's place in time: its collection time, or that of what it corrects
    corrects: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (record, the superseded records it stands for)
    kind: str = ""

    def at(self, n: int) -> str:
        """The time the ``n``-th record stands at ('' when unknown)."""
        return self.when[n] if self.when else ""

    @property
    def history(self) -> History:
        """What the series' kind says of its history page."""
        found = KINDS[self.kind].history
        assert found is not None, self.kind  # find_series makes series only of kinds with a history
        return found

    @property
    def path(self) -> str:
        """The page's path: a readable slug and a hash of the subject, unique per series."""
        text = " ".join(self.subject[k] for k in SERIES_KEYS if k in self.subject)
        slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:48].strip("-")
        # The slug is the same for many subjects (punctuation drops out, and it is cut), so the
        # hash alone keeps pages apart. 128 bits: two subjects of one name take a search of 2^64
        # hashes; 32 bits (8 digits) took 85,000 tries, and one such pair stopped every build.
        digest = hashlib.sha256(repr(sorted(self.subject.items())).encode()).hexdigest()[:32]
        return links.history_page(f"{slug}-{digest}")

    @property
    def title(self) -> str:
        """'decode attention on NVIDIA B200 (PyTorch, Llama)'; what else the kind's series share
        follows the engine and model ('…; request rate 4 requests/s')."""
        extra = ", ".join(self.subject[k] for k in ("engine", "model") if k in self.subject)
        shared = "; ".join(f"{k} {v}" for k, v in self.subject.items() if k not in SERIES_KEYS)
        inside = "; ".join(x for x in (extra, shared) if x)
        return f"{self.subject['workload']} on {self.subject['gpu']}" + (f" ({inside})" if inside else "")


def find_series(records: RecordSet) -> list[Series]:
    """Every series of two or more current records of a kind with a history that name their GPU
    and workload: the kinds in the registry's order, each's series by subject."""
    out = []
    for name, kind in KINDS.items():
        if kind.history is not None:
            out += _series_of(records, name, kind.history)
    return out


def _series_of(records: RecordSet, name: str, history: History) -> list[Series]:
    members = records.by_kind.get(name, [])
    corrects = _corrected(records, members)
    rows = []
    heads = records.heads()
    for rid in members:
        subject = heads[rid]["subject"]
        if subject.get("gpu") and subject.get("workload") and records.superseded_by(rid) is None:
            # a correction stands where the record it corrects stood, not at the later time it was made
            when = min([heads[r]["collected_at"] or "" for r in (rid, *corrects.get(rid, ()))])
            key = (tuple(subject.get(k) or "" for k in SERIES_KEYS), tuple(history.shared(records.records[rid]).items()))
            # a time to the second sorts before the milliseconds of that second (it was truncated),
            # never after; the id only makes the order of records of the same second reproducible
            rows.append((key, when[:-1] + ".000Z" if _SECOND.search(when) else when, rid, when))
    out = []
    for (key, shared), group in itertools.groupby(sorted(rows), key=lambda row: row[0]):
        found = list(group)
        if len(found) >= 2:
            ids = tuple(row[2] for row in found)
            out.append(Series({**{k: v for k, v in zip(SERIES_KEYS, key) if v}, **dict(shared)}, ids,
                              tuple(row[3] for row in found), tuple((r, corrects[r]) for r in ids if r in corrects),
                              name))
    return out


def _corrected(records: RecordSet, members: list[str]) -> dict[str, tuple[str, ...]]:
    """Current record -> the superseded records it finally replaces (following chains)."""
    out: dict[str, list[str]] = {}
    for rid in members:
        last, seen = rid, {rid}
        while (new := records.superseded_by(last)) is not None and new not in seen:  # a cycle is IK109's business
            last = new
            seen.add(new)
        if last != rid:
            out.setdefault(last, []).append(rid)
    return {k: tuple(sorted(v)) for k, v in out.items()}


def history_key(series: Series, records: RecordSet, templates: str) -> str:
    """A digest of everything a series' page shows: the series, the titles and times of its
    records and of those they correct, the supersessions that correct them, the templates and
    ikreport's code (what the page computes follows from the records, whose ids name their bytes)."""
    from ikreport.site.page_cache import code_digest  # a leaf module, imported here to keep history.py below it

    olds = [old for _, group in series.corrects for old in group]
    edges = [(old, getattr(records.supersession_of(old), "by", None)) for old in olds]
    deps = (series.history.version, series, [(rid, records.records[rid]["title"], records.records[rid]["collected_at"])
                                             for rid in (*series.records, *olds)],
            [(old, by, records.facts(by).get("reason") if by else None) for old, by in edges], templates, code_digest())
    return hashlib.sha256(repr(deps).encode()).hexdigest()


def history_page(series: Series, records: RecordSet, read_blob: Callable[[str], bytes],
                 charts: ChartRenderer, cache: Cache | None = None) -> Page:
    """A series' page: its records, and per measure the kind gives (a kernel's duration, a
    latency figure) a chart, a table and the changes found."""
    path = series.path
    history = series.history

    def link(rid: str) -> dict[str, str]:
        return {"short": short(rid), "title": records.records[rid]["title"], **links.twins(links.record_page(rid), path)}

    context = SeriesContext(records, series.records, series.when, path, read_blob, cache or Cache(None), charts, link)
    sections = history.sections(context)
    return Page(path=path, template="history", title=f"History: {series.title}", root="../", context={
        "series": series.title, "note": history.note, "members": history.members,
        "members_title": history.members.capitalize(), "no_change": history.no_change,
        "subject": [(LABELS.get(k, k), v) for k, v in _subject_order(series.subject)],
        "order_notes": _order_notes(series, records),
        "records": [{"n": f"#{i + 1}", **link(rid), "when": records.records[rid]["collected_at"] or ""}
                    for i, rid in enumerate(series.records)],
        "sections": sections, "changes": [c for k in sections for c in k["changes"]],
    })


def _subject_order(subject: dict[str, str]) -> list[tuple[str, str]]:
    """The subject fields GPU first, as SERIES_KEYS lists them, then what the kind adds."""
    return [(k, subject[k]) for k in SERIES_KEYS if k in subject] + [
        (k, v) for k, v in subject.items() if k not in SERIES_KEYS]


def _order_notes(series: Series, records: RecordSet) -> list[str]:
    """What the order of the series rests on: records of the same second, and corrections."""
    one = series.history.member
    notes = []
    for when, tied in itertools.groupby(range(len(series.records)), key=series.at):  # the series is in order of time
        if len(at := list(tied)) > 1:
            notes.append(f"#{at[0] + 1} to #{at[-1] + 1} share the collection time {when or '(none)'}: their order "
                         "is not known (they are listed by record id), so no change is marked between them; each is "
                         f"compared with every {one} of the time before.")
    place = {rid: i for i, rid in enumerate(series.records)}
    for rid, olds in series.corrects:
        for old in olds:
            edge = records.supersession_of(old)
            reason = records.facts(edge.by).get("reason") if edge is not None else None
            notes.append(f"#{place[rid] + 1} [{short(rid)}] corrects [{short(old)}], collected "
                         f"{records.records[old]['collected_at'] or '(no time)'}, which is superseded"
                         + (f" ({reason})" if reason else "") + ": it stands at that place in the series, and the "
                         f"superseded {one} is left out.")
    return notes


def series_links(series: list[Series], page: str) -> list[dict[str, str]]:
    """The index's list of series: title, record count and the links to its history page."""
    return [{"title": s.title, "count": plural(len(s.records), s.history.member, s.history.members),
             **links.twins(s.path, page)} for s in series]
