"""``ikreport verify``: re-hash every file of an archive and check every reference.

One line per problem, ``PATH: what is wrong; what to do``, sorted, so two runs agree.
"""

from __future__ import annotations

from dataclasses import dataclass

from ikreport.commands import supersede
from ikreport.store.archive import Archive
from ikreport.store.cache import Cache, default_cache_dir, loads
from ikreport.store.local import Survey
from ikreport.store import recordset
from ikreport.store.recordset import RecordSet, Summary, as_summary, summary_space
from ikreport.formatting import plural
from ikreport.progress import Progress
from ikreport.reports.source import folder_problems
from ikreport.commands.verify_files import check_files
from ikreport.commands.verify_site import verify_site

__all__ = ["Verified", "verify", "verify_archive", "verify_site"]  # verify_site's home is verify_site.py; kept here for callers


@dataclass(frozen=True)
class Verified:
    """What ``ikreport verify`` found: problems (none when all is well), notes, and what it checked."""

    root: str  # the archive's folder or URL
    problems: tuple[str, ...]
    notes: tuple[str, ...]
    records: int
    blobs: int


def verify(archive: Archive, *, use_cache: bool = True, progress: Progress | None = None) -> Verified:
    """Verify ``archive``, skipping the parse of records validated before unless ``use_cache`` is False."""
    notes: list[str] = []
    found = archive.survey(notes)
    problems = verify_archive(archive, progress, notes=notes, cache=Cache(default_cache_dir() if use_cache else None),
                              found=found)
    files = found.files  # counted as verify saw them: a link is a problem here, not an error
    return Verified(archive.location, tuple(problems), tuple(notes), sum(area == "records" for _, _, area in files),
                    len({name[:64] for _, name, area in files if area == "blobs"}))


def verify_archive(archive: Archive, progress: Progress | None = None, notes: list[str] | None = None,
                   cache: Cache | None = None, found: Survey | None = None) -> list[str]:
    """Problems found in ``archive`` (empty when all is well). Leftovers of interrupted writes
    (``.tmp-*`` files, which can never be taken for a record) go to ``notes``, not problems.
    Every file is re-hashed; records whose summary ``cache`` keeps are not parsed again.
    ``found``: the archive's survey, when the caller has made it (its notes went to ``notes``)."""
    cache = cache or Cache(None)
    notes = notes if notes is not None else []
    found = found if found is not None else archive.survey(notes)
    order = found.order
    # Reports are read into the site too: the same rules as build's (no links, no FIFOs).
    if archive.folder is not None:
        order.extend(folder_problems(archive.folder / "reports"))
    space = summary_space()
    kept = {rid: summary for rid, value in cache.get_many(space, [n for _, n, area in found.files if area == "records"]).items()
            if (summary := as_summary(loads(value))) is not None}
    checked = check_files(archive, [(path, name, area, name in kept) for path, name, area in found.files], progress)
    problems: list[str] = []
    records_ok: dict[str, Summary] = {}
    blobs_ok: set[str] = set()
    sizes: dict[str, int] = {}
    for slot in order:
        if isinstance(slot, str):
            problems.append(slot)
            continue
        (_path, name, area), (problem, summary, size) = found.files[slot], checked[slot]
        if problem:
            problems.append(problem)
        elif area == "records":
            records_ok[name] = summary if summary is not None else kept[name]
        else:
            blobs_ok.add(name[:64])
            sizes[name[:64]] = size or 0
    cache.put_many(space, [(rid, summary) for rid, summary in records_ok.items() if rid not in kept])
    if found.writable:
        # The hashes, not the mode bits, are what guarantee integrity, and git checkouts do
        # not keep read-only modes: a note, not a problem.
        notes.append(f"{archive.root}: {plural(found.writable, 'file is', 'files are')} writable (ikreport writes them read-only; a git "
                     f"checkout does not keep that); 'find {archive.root}/records {archive.root}/blobs -type f "
                     "-exec chmod a-w {} +' restores it (files only: a folder made read-only stops the next import)")
    heads = recordset.from_summaries(archive, records_ok)
    for record_id, what, ref in heads.dangling(blobs_ok):
        problems.append(f"{archive.where(record_id)}: cites {what} {ref[:12]}, which is missing or damaged; "
                        "copy it from the archive it was collected in")
    problems += _record_problems(archive, heads, blobs_ok, sizes)
    return problems


def _record_problems(archive: Archive, heads: RecordSet, blobs_ok: set[str], sizes: dict[str, int]) -> list[str]:
    """What sound files can still get wrong together: a source's declared size that is not
    its blob's, and supersessions that break supersede.py's rules."""
    problems = [f"{archive.where(rid)}: {why}"
                for rid, why in heads.wrong_sizes(lambda blob: sizes.get(blob) if blob in blobs_ok else None)]
    for by, why in supersede.problems(heads.supersessions(), heads.kinds()):
        problems.append(f"{archive.where(by)}: {why}")
    return problems
