"""``verify``'s check of each file on its own: re-hash it (a compressed blob once
decompressed), and parse and validate a record not validated before. Big archives are checked
in worker processes as well as in the calling one.

This module is what a worker process imports, so it imports only the store: a worker started
from a clean interpreter ("forkserver") that imported ``commands/verify.py`` and all it needs
(supersede, the record set, report and site checks) would spend more of each worker's start
doing it than the work on a small archive takes. The calling process checks batches
from the back of the list while the workers take them from the front, so the time the
workers take to start costs only the share of the work they would have done meanwhile.
"""

from __future__ import annotations

import gc
import os
import threading
from concurrent.futures import Future, ProcessPoolExecutor

from ikreport import workers as worker_pool
from ikreport.errors import IkreportError, StalledError
from ikreport.progress import Progress
from ikreport.store.archive import Archive
from ikreport.store.backend import Area
from ikreport.store.bucket import Bucket
from ikreport.store.compression import GZ, content_digest
from ikreport.store.recordset import Summary, summarize

PARALLEL_FROM = 512  # files: below this, starting worker processes costs more than it saves
BATCH = 16  # files a worker takes at once: small enough that the processes finish together
Checked = tuple[str | None, Summary | None, int | None]  # (problem, a new record's summary, a blob's size)
Files = list[tuple[str, str, Area, bool]]  # (path, stored name, area, a record validated before), in order
Sizes = dict[tuple[Area, str], int]  # (area, stored name) -> size, as a bucket's listing gave them
Job = tuple[str, Files, Sizes]  # (archive location, files, their sizes when the archive is a bucket)


def check_batch(job: Job) -> list[Checked]:
    """Check the files of the archive at ``job[0]``: re-hash each (a blob's bytes once
    decompressed); parse and validate each record not validated before, giving its summary;
    give each good blob's size."""
    root, files, sizes = job
    archive = Archive.at(root)
    if isinstance(archive.backend, Bucket):
        # what the survey's listing saw: without it each object would cost a request for its size
        archive.backend.remember(sizes)
    out: list[Checked] = []
    for path, name, area, known in files:
        try:
            if area == "records" and known:
                archive.record_bytes(name)
                out.append((None, None, None))
            elif area == "records":
                out.append((None, summarize(archive.load(name)), None))
            else:
                # a chunk at a time: a blob may be bigger than memory
                digest, size = content_digest(archive.backend.read_chunks("blobs", name), name.endswith(GZ), path)
                problem = None if digest == name[:64] else \
                    f"{path}: content does not hash to its name (truncated or tampered); restore it"
                out.append((problem, None, size))
        except StalledError:
            raise  # the storage, not this file: one line, instead of a deadline's wait for every file
        except (IkreportError, OSError) as exc:
            out.append((str(exc), None, None))
    return out


def check_files(archive: Archive, files: Files, progress: Progress | None) -> list[Checked]:
    """Every file's check, in the order of ``files``: in worker processes as well as this one
    when there are many (hashing and parsing are CPU-bound), the workers started from a clean
    process ("forkserver"), never by forking this one."""
    jobs = [(archive.location, files[i:i + BATCH], _sizes(archive, files[i:i + BATCH]))
            for i in range(0, len(files), BATCH)]
    done: list[list[Checked] | None] = [None] * len(jobs)

    def check_here(i: int) -> None:
        done[i] = check_batch(jobs[i])
        if progress:
            progress.count(sum(len(b) for b in done if b is not None), len(files))

    # this process is one of the checkers, so cpu_count - 1 workers keep every core busy
    workers = (os.cpu_count() or 1) - 1
    if len(files) < PARALLEL_FROM or workers < 1 or not worker_pool.can_fork_clean():
        for i in range(len(jobs)):
            check_here(i)
        return [c for batch in done if batch is not None for c in batch]
    # Every batch is submitted to the workers, in order, by a thread (the first submit waits for
    # a worker to start, the forkserver first); this process meanwhile takes
    # batches from the back, each one no worker has begun (a cancelled future) or that was not
    # yet submitted. The workers are fed by the pool's own threads, not by this thread: each
    # hand-over between threads waits for this process's busy thread to let go of the GIL,
    # and a feeder taking one batch at a time leaves the worker idle.
    futures: list[Future[list[Checked]] | None] = [None] * len(jobs)
    lock = threading.Lock()
    limit = [len(jobs)]  # the thread submits only batches below this
    failed: list[BaseException] = []
    # The workers only hash and parse, creating no reference cycles: the collector stays off in them.
    with worker_pool.pool(workers, gc.disable) as pool:
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


def _sizes(archive: Archive, files: Files) -> Sizes:
    """The sizes of ``files`` that a bucket already knows from its listing (no request); none
    for a folder, where a size costs a stat."""
    if not isinstance(archive.backend, Bucket):
        return {}
    return {(area, name): size for _, name, area, _ in files
            if (size := archive.backend.known_size(area, name)) is not None}


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
