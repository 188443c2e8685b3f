"""``verify``'s check of each file on its own: re-hash it, and parse and validate a record
never validated before. Big archives are checked in worker processes as well as in the
calling one.

This module is what a worker process imports, so it imports only the store: a worker started
from a clean interpreter ("forkserver") that imported ``commands/verify.py`` and all it needs
(supersede, the record set, report and site checks) spent about 0.15 s of each worker's start
doing it, more than the work on a 300-profile archive. The calling process checks batches
from the back of the list while the workers take them from the front, so the time the
workers take to start costs only the share of the work they would have done meanwhile.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import threading
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
Job = tuple[str, str | None, Files]  # (archive location, validated cache folder, files)


_WORKER_VALIDATED: dict[str | None, Validated] = {}  # a worker's, made once: Validated() hashes the schema files


def check_batch(job: Job, validated: Validated | None = None) -> list[Checked]:
    """Check (path, id, is_record) files of the archive at ``job[0]``: re-hash each; parse and
    validate records never validated before (kept in ``validated``, or in a worker process,
    which is given none, under ``job[1]``)."""
    root, validated_root, files = job
    archive = Archive.at(root)
    if validated is None:
        if validated_root not in _WORKER_VALIDATED:
            _WORKER_VALIDATED[validated_root] = Validated(Path(validated_root) if validated_root else None)
        validated = _WORKER_VALIDATED[validated_root]
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

    def check_here(i: int) -> None:
        done[i] = check_batch(jobs[i], validated)
        if progress:
            progress.count(sum(len(b) for b in done if b is not None), len(files))

    # this process is one of the checkers, so cpu_count - 1 workers keep every core busy
    workers = (os.cpu_count() or 1) - 1
    if len(files) < PARALLEL_FROM or workers < 1 or "forkserver" not in multiprocessing.get_all_start_methods():
        for i in range(len(jobs)):
            check_here(i)
        return [c for batch in done if batch is not None for c in batch]
    # Every batch is submitted to the workers, in order, by a thread (the first submit waits for
    # a worker to start, the forkserver first: 0.1 to 0.3 s); this process meanwhile takes
    # batches from the back, each one no worker has begun (a cancelled future) or that was not
    # yet submitted. The workers are fed by the pool's own threads, not by this thread: each
    # hand-over between threads waits for this process's busy thread to let go of the GIL
    # (up to 5 ms), and a feeder taking one batch at a time left the worker idle.
    futures: list[Future[list[Checked]] | None] = [None] * len(jobs)
    lock = threading.Lock()
    limit = [len(jobs)]  # the thread submits only batches below this
    failed: list[BaseException] = []
    # The workers only hash and parse, creating no reference cycles: the collector stays off in them.
    with ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("forkserver"),
                             initializer=gc.disable) as pool:
        submitter = threading.Thread(target=_submit_all, args=(pool, jobs, futures, lock, limit, failed), daemon=True)
        submitter.start()
        try:
            for i in range(len(jobs) - 1, 0, -1):  # batch 0 is always the workers' (_submit_all)
                with lock:
                    future = futures[i]
                    if future is None:
                        limit[0] = i
                    elif not future.cancel():  # a worker has it: those before it are theirs too
                        break
                check_here(i)
        finally:
            with lock:
                limit[0] = 0  # after an error here, submit nothing more
            submitter.join()
        if failed:
            raise failed[0]
        for i, future in enumerate(futures):
            if done[i] is None and future is not None:
                done[i] = future.result()
                if progress:
                    progress.count(sum(len(b) for b in done if b is not None), len(files))
    return [c for batch in done if batch is not None for c in batch]


def _submit_all(pool: ProcessPoolExecutor, jobs: list[Job], futures: list[Future[list[Checked]] | None],
                lock: threading.Lock, limit: list[int], failed: list[BaseException]) -> None:
    """Submit every batch to ``pool`` in order, into ``futures``, up to where the calling
    process has begun taking them (``limit``). The first submit waits until a worker has
    started, so it is made outside the lock, for batch 0, which the calling process never takes."""
    try:
        first = pool.submit(check_batch, jobs[0])
        with lock:
            futures[0] = first
        for i in range(1, len(jobs)):
            with lock:
                if i >= limit[0]:
                    return
                futures[i] = pool.submit(check_batch, jobs[i])
    except BaseException as exc:  # raised again in the calling thread
        failed.append(exc)
