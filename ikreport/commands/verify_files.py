"""``verify``'s check of each file on its own: re-hash it, and parse and validate a record
never validated before. Big archives are checked in worker processes as well as in the
calling one.

This module is what a worker process imports, so it imports only the store: a worker started
from a clean interpreter ("forkserver") that imported ``commands/verify.py`` and all it needs
(supersede, the record set, report and site checks) spent about 0.15 s of each worker's start
doing it, more than the work on a 300-profile archive. The calling process checks batches
from one end of the list while a thread feeds the workers from the other, so the time the
workers take to start costs only the share of the work they would have done meanwhile.
"""

from __future__ import annotations

import collections
import gc
import multiprocessing
import os
import threading
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
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


def check_batch(job: Job) -> list[Checked]:
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
    # One queue of batches, taken from both ends: by this process from the back, and from the
    # front by a thread that feeds the worker processes, so neither waits for the other (the
    # first worker can take 0.1 to 0.3 s to start, the forkserver first). This process is one
    # of the checkers, so cpu_count - 1 workers keep every core busy.
    queue = collections.deque(enumerate(jobs))
    workers = (os.cpu_count() or 1) - 1
    failed: list[BaseException] = []
    feeder = None
    if len(files) >= PARALLEL_FROM and workers >= 1 and "forkserver" in multiprocessing.get_all_start_methods():
        feeder = threading.Thread(target=_feed_workers, args=(queue, workers, done, failed), daemon=True)
        feeder.start()
    try:
        while True:
            try:
                i, job = queue.pop()
            except IndexError:
                break
            done[i] = check_batch(job)
            if progress:
                progress.count(sum(len(b) for b in done if b is not None), len(files))
    finally:
        queue.clear()  # on an error here, the feeder stops after the batches it has sent
        if feeder is not None:
            feeder.join()
    if failed:
        raise failed[0]
    if progress:
        progress.count(len(files), len(files))
    return [c for batch in done if batch is not None for c in batch]


def _feed_workers(queue: collections.deque[tuple[int, Job]], workers: int, done: list[list[Checked] | None],
                  failed: list[BaseException]) -> None:
    """Check batches from the front of ``queue`` in ``workers`` processes, each given one batch
    ahead so it never waits for the next; results go into ``done``, an error into ``failed``."""
    try:
        first = queue.popleft()
    except IndexError:
        return  # this process checked everything before a worker was needed
    try:
        # The workers only hash and parse, creating no reference cycles: the collector stays off in them.
        with ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("forkserver"),
                                 initializer=gc.disable) as pool:
            running = {pool.submit(check_batch, first[1]): first[0]}
            while running:
                while len(running) < 2 * workers:
                    try:
                        i, job = queue.popleft()
                    except IndexError:
                        break
                    running[pool.submit(check_batch, job)] = i
                finished, _ = wait(running, return_when=FIRST_COMPLETED)
                for future in finished:
                    done[running.pop(future)] = future.result()
    except BaseException as exc:  # raised again in the calling thread
        queue.clear()
        failed.append(exc)
