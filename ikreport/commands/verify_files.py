"""``verify``'s check of each file on its own: re-hash it, and parse and validate a record
never validated before. Big archives are checked in worker processes as well as in the
calling one.

This module is what a worker process imports, so it imports only the store: a worker started
from a clean interpreter ("forkserver") that imported ``commands/verify.py`` and all it needs
(supersede, the record set, report and site checks) spent about 0.15 s of each worker's start
doing it, more than the work on a 300-profile archive. While the workers start, the calling
process checks batches too, from the end of the list, and it takes from the pool any batch no
worker has begun, so how long workers take to start shows only as less of the work done by them.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path

from ikreport.errors import IkreportError
from ikreport.progress import Progress
from ikreport.store.archive import Archive, sha256
from ikreport.store.summaries import Summary
from ikreport.store.validated import Validated, check_record

PARALLEL_FROM = 512  # files: below this, starting worker processes costs more than it saves
BATCH = 16  # files a worker takes at once: small enough that the processes finish together
Checked = tuple[str | None, Summary | None]  # (problem, a good record's summary)
Files = list[tuple[str, str, bool]]  # (path, id, is a record), in the order findings are listed


def check_batch(job: tuple[str, str | None, Files]) -> list[Checked]:
    """Check (path, id, is_record) files of the archive at ``job[0]``: re-hash each; parse and
    validate records never validated before (kept under ``job[1]``). Runs in a worker process
    for big archives."""
    root, validated_root, files = job
    archive = Archive.at(root)
    validated = Validated(Path(validated_root) if validated_root else None)
    out: list[Checked] = []
    for path, file_id, is_record in files:
        try:
            if is_record:
                out.append((None, check_record(archive, file_id, validated)[0]))
            elif sha256(archive.backend.read("blobs", file_id)) != file_id:
                out.append((f"{path}: content does not hash to its name (truncated or tampered); restore it", None))
            else:
                out.append((None, None))
        except (IkreportError, OSError) as exc:
            out.append((str(exc), None))
    return out


def check_files(archive: Archive, validated: Validated, files: Files, progress: Progress | None) -> list[Checked]:
    """Every file's check, in the order of ``files``: in worker processes as well as this one
    when there are many (hashing and parsing are CPU-bound), the workers started from a clean
    process ("forkserver"), never by forking this one."""
    base = str(validated.base) if validated.base is not None else None
    jobs = [(archive.location, base, files[i:i + BATCH]) for i in range(0, len(files), BATCH)]
    done: list[list[Checked] | None] = [None] * len(jobs)
    checked = 0

    def finish(i: int, batch: list[Checked]) -> None:
        nonlocal checked
        done[i] = batch
        checked += len(batch)
        if progress:
            progress.count(checked, len(files))

    # this process is one of the checkers, so cpu_count - 1 workers keep every core busy
    workers = (os.cpu_count() or 1) - 1
    if len(files) < PARALLEL_FROM or workers < 1 or "forkserver" not in multiprocessing.get_all_start_methods():
        for i, job in enumerate(jobs):
            finish(i, check_batch(job))
        return [c for batch in done if batch is not None for c in batch]
    # The workers only hash and parse, creating no reference cycles: the collector stays off in them.
    with ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("forkserver"),
                             initializer=gc.disable) as pool:
        futures: list[Future[list[Checked]]] = [pool.submit(check_batch, job) for job in jobs]
        for i in reversed(range(len(jobs))):
            if not futures[i].cancel():  # a worker has it (or is about to): the rest are theirs
                break
            finish(i, check_batch(jobs[i]))
        for i, future in enumerate(futures):
            if done[i] is None:
                finish(i, future.result())
    return [c for batch in done if batch is not None for c in batch]
