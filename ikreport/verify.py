"""``ikreport verify``: re-hash every file of an archive and check every reference.

One line per problem, ``PATH: what is wrong; what to do``, sorted, so two runs agree.
"""

from __future__ import annotations

import functools
import multiprocessing
import os
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from ikreport import supersede
from ikreport.archive import ID_RX, RECORD_SUFFIX, SHARD_RX, TEMP_PREFIX, Archive, sha256
from ikreport.errors import IkreportError
from ikreport.records import bulk_loading
from ikreport.reports.source import folder_problems
from ikreport.summaries import LazyRecord, Summary
from ikreport.validated import Refs, Validated, checked_entry
from ikreport.verify_site import verify_site

__all__ = ["verify_archive", "verify_site"]  # verify_site's home is verify_site.py; kept here for callers

Progress = Callable[[int], None]


def verify_archive(archive: Archive, progress: Progress | None = None, notes: list[str] | None = None,
                   validated: Validated | None = None) -> list[str]:
    """Problems found in ``archive`` (empty when all is well). Leftovers of interrupted writes
    (``.tmp-*`` files, which can never be taken for a record) go to ``notes``, not problems.
    Every file is re-hashed; records already validated (``validated``) are not parsed again."""
    with bulk_loading():
        return _verify(archive, progress, notes, validated)


PARALLEL_FROM = 512  # files: below this, starting worker processes costs more than it saves
BATCH = 64
Checked = tuple[str | None, Refs | None, Summary | None]  # (problem, a good record's references and summary)


def _check_files(job: tuple[str, str | None, list[tuple[str, str, bool]]]) -> list[Checked]:
    """Check (path, id, is_record) files: re-hash each; parse and validate records never
    validated before. Runs in a worker process for big archives."""
    root, validated_root, files = job
    archive = Archive(Path(root))
    validated = Validated(Path(validated_root) if validated_root else None)
    out: list[Checked] = []
    with bulk_loading():
        for path, file_id, is_record in files:
            try:
                if is_record:
                    out.append((None, *checked_entry(archive, file_id, validated)))
                elif sha256(Path(path).read_bytes()) != file_id:
                    out.append((f"{path}: content does not hash to its name (truncated or tampered); restore it", None, None))
                else:
                    out.append((None, None, None))
            except (IkreportError, OSError) as exc:
                out.append((str(exc), None, None))
    return out


def _check_all(archive: Archive, validated: Validated, files: list[tuple[str, str, bool]],
               progress: Progress | None) -> list[Checked]:
    """Every file's check, in order: in worker processes when there are many (hashing and
    parsing are CPU-bound), started from a clean process ("forkserver"), never by forking."""
    base = str(validated.base) if validated.base is not None else None
    jobs = [(str(archive.root), base, files[i:i + BATCH]) for i in range(0, len(files), BATCH)]
    workers = os.cpu_count() or 1
    results: list[Checked] = []

    def take(batches: Iterable[list[Checked]]) -> list[Checked]:
        for batch in batches:
            results.extend(batch)
            if progress:
                progress(len(batch))
        return results

    if len(files) < PARALLEL_FROM or workers <= 1 or "forkserver" not in multiprocessing.get_all_start_methods():
        return take(map(_check_files, jobs))
    with ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("forkserver")) as pool:
        return take(pool.map(_check_files, jobs))


def _verify(archive: Archive, progress: Progress | None, notes: list[str] | None,
            validated: Validated | None) -> list[str]:
    validated = validated or Validated(None)
    notes = notes if notes is not None else []
    order: list[str | int] = []  # a problem found while scanning, or the index of a file to check
    files: list[tuple[str, str, bool]] = []
    writable = 0
    sizes: dict[str, int] = {}  # blob id -> bytes on disk
    for top, suffix in ((archive.blobs_dir, ""), (archive.records_dir, RECORD_SUFFIX)):
        if top.is_symlink():  # build refuses to read through it, so verify must not pass it
            order.append(f"{top}: symbolic link in the archive; archives hold plain folders and files only")
            continue
        if not top.is_dir():
            continue
        for entry in sorted(os.scandir(top), key=lambda e: e.name):
            if not (SHARD_RX.match(entry.name) and entry.is_dir(follow_symlinks=False)):
                order.append(f"{entry.path}: unexpected entry in the archive; move it out")
                continue
            for item in sorted(os.scandir(entry.path), key=lambda e: e.name):
                name = item.name
                if name.startswith(TEMP_PREFIX):
                    notes.append(f"{item.path}: temporary file left by an interrupted write; safe to delete")
                    continue
                stem = name[: len(name) - len(suffix)] if suffix and name.endswith(suffix) else (None if suffix else name)
                if stem is None or not ID_RX.match(entry.name + stem) or not item.is_file(follow_symlinks=False):
                    what = "symbolic link" if item.is_symlink() else "unexpected file"
                    order.append(f"{item.path}: {what} in the archive; remove it")
                    continue
                st = item.stat(follow_symlinks=False)
                if st.st_mode & 0o222:
                    writable += 1
                if not suffix:
                    sizes[entry.name + stem] = st.st_size
                order.append(len(files))
                files.append((item.path, entry.name + stem, bool(suffix)))
    # Reports are read into the site too: the same rules as build's (no links, no FIFOs).
    order.extend(folder_problems(archive.root / "reports"))
    checked = _check_all(archive, validated, files, progress)
    problems: list[str] = []
    records_ok: dict[str, tuple[Refs, Summary]] = {}
    blobs_ok: set[str] = set()
    for slot in order:
        if isinstance(slot, str):
            problems.append(slot)
            continue
        (_path, file_id, is_record), (problem, refs, summary) = files[slot], checked[slot]
        if problem:
            problems.append(problem)
        elif is_record and refs is not None and summary is not None:  # a good record has both
            records_ok[file_id] = (refs, summary)
        else:
            blobs_ok.add(file_id)
    if writable:
        # The hashes, not the mode bits, are what guarantee integrity, and git checkouts do
        # not keep read-only modes: a note, not a problem.
        notes.append(f"{archive.root}: {writable} files are writable (ikreport writes them read-only; a git "
                     f"checkout does not keep that); 'chmod -R a-w {archive.root}/records {archive.root}/blobs' "
                     "restores it")
    for record_id, (refs, _summary) in sorted(records_ok.items()):
        for what, ref in refs:
            present = ref in blobs_ok if what == "blob" else ref in records_ok
            if not present:
                problems.append(
                    f"{archive.record_path(record_id)}: cites {what} {ref[:12]}, which is missing or damaged; "
                    "copy it from the archive it was collected in"
                )
    problems += _record_problems(archive, records_ok, blobs_ok, sizes)
    return problems


def _record_problems(archive: Archive, records_ok: dict[str, tuple[Refs, Summary]], blobs_ok: set[str],
                     sizes: dict[str, int]) -> list[str]:
    """What sound files can still get wrong together: a source's declared size that is not
    its blob's, and supersessions that break supersede.py's rules."""
    problems = []
    heads = {rid: LazyRecord(summary, functools.partial(archive.load, rid, known_valid=True))
             for rid, (_refs, summary) in records_ok.items()}
    for rid, record in sorted(heads.items()):
        for source in record.get("sources", []):
            blob = source["id"]
            if blob in blobs_ok and sizes.get(blob) != source["size"]:
                problems.append(f"{archive.record_path(rid)}: declares blob {blob[:12]} as {source['size']} bytes, "
                                f"but it is {sizes.get(blob)}; the record is wrong about its source: re-collect it")
    edges = [edge for rid, record in sorted(heads.items()) for edge in supersede.of_record(rid, record)]
    kinds = {rid: record["kind"] for rid, record in heads.items()}
    for by, why in supersede.problems(edges, kinds):
        problems.append(f"{archive.record_path(by)}: {why}")
    return problems
