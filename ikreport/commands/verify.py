"""``ikreport verify``: re-hash every file of an archive and check every reference.

One line per problem, ``PATH: what is wrong; what to do``, sorted, so two runs agree.
"""

from __future__ import annotations

from dataclasses import dataclass

from ikreport.commands import supersede
from ikreport.store.archive import Archive
from ikreport.store.cache import default_cache_dir
from ikreport.store import recordset
from ikreport.store.recordset import RecordSet
from ikreport.formatting import plural
from ikreport.progress import Progress
from ikreport.reports.source import folder_problems
from ikreport.store.summaries import Summary
from ikreport.store.validated import Validated
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
    problems = verify_archive(archive, progress, notes=notes,
                              validated=Validated(default_cache_dir() / "validated" if use_cache else None))
    return Verified(archive.location, tuple(problems), tuple(notes), len(archive.record_ids()), len(archive.blob_ids()))


def verify_archive(archive: Archive, progress: Progress | None = None, notes: list[str] | None = None,
                   validated: Validated | None = None) -> list[str]:
    """Problems found in ``archive`` (empty when all is well). Leftovers of interrupted writes
    (``.tmp-*`` files, which can never be taken for a record) go to ``notes``, not problems.
    Every file is re-hashed; records already validated (``validated``) are not parsed again."""
    return _verify(archive, progress, notes, validated)


def _verify(archive: Archive, progress: Progress | None, notes: list[str] | None,
            validated: Validated | None) -> list[str]:
    """verify_archive's work: walk the folder, check each file, then what records say together."""
    validated = validated or Validated(None)
    notes = notes if notes is not None else []
    found = archive.survey(notes)
    order, files, sizes = found.order, found.files, found.sizes
    # Reports are read into the site too: the same rules as build's (no links, no FIFOs).
    if archive.folder is not None:
        order.extend(folder_problems(archive.folder / "reports"))
    checked = check_files(archive, validated, files, progress)
    problems: list[str] = []
    records_ok: dict[str, Summary] = {}
    blobs_ok: set[str] = set()
    for slot in order:
        if isinstance(slot, str):
            problems.append(slot)
            continue
        (_path, file_id, is_record), (problem, summary) = files[slot], checked[slot]
        if problem:
            problems.append(problem)
        elif is_record and summary is not None:  # a good record has one
            records_ok[file_id] = summary
        else:
            blobs_ok.add(file_id)
    if found.writable:
        # The hashes, not the mode bits, are what guarantee integrity, and git checkouts do
        # not keep read-only modes: a note, not a problem.
        notes.append(f"{archive.root}: {plural(found.writable, 'file is', 'files are')} writable (ikreport writes them read-only; a git "
                     f"checkout does not keep that); 'chmod -R a-w {archive.root}/records {archive.root}/blobs' "
                     "restores it")
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
