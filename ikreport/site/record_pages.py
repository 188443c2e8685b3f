"""Render record pages, in worker processes when there are many.

Workers start from a clean process ("forkserver"), never by forking the builder: the builder
has threads (pyarrow's pool) by then, and a forked child of a threaded process can deadlock,
as vl-convert did here. Each worker knows the records by the builder's summaries, reads the
data of those its pages show from the archive, and renders whole pages (claims, charts,
templates), sending back finished text. The output does not depend on how many workers there are.
"""

from __future__ import annotations

import gc
import hashlib
import os
import select
import threading
import time
from collections.abc import Callable
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Any, NamedTuple

from ikreport.store import recordset
from ikreport.store.archive import Archive
from ikreport.store.cache import Cache
from ikreport.store.compression import compress, inflate
from ikreport.store.recordset import RecordSet
from ikreport.errors import BuildError
from ikreport.progress import Progress
from ikreport import workers as workers_
from ikreport.charts.render import ChartRenderer
from ikreport.site.pages import record_page
from ikreport.site.render import environment, render

SERIAL_BELOW = 16  # a pool costs more than it saves for a few pages


@dataclass(frozen=True)
class RenderedPage:
    """One record page rendered: its HTML and Markdown twin (each gzipped, as the build cache
    keeps them, with its size and sha256), chart SVGs and claim count."""

    record_id: str
    html: Packed
    md: Packed
    charts: dict[str, str]  # chart key -> svg
    claims: int


class Packed(NamedTuple):
    """A page file gzipped (a tenth of the bytes to send between processes and keep), with the
    size and sha256 of what it holds."""

    gz: bytes
    size: int
    sha256: str

    @classmethod
    def of(cls, text: str) -> Packed:
        data = text.encode("utf-8")
        return cls(compress(data), len(data), hashlib.sha256(data).hexdigest())

    def data(self) -> bytes:
        return inflate(self.gz, "a rendered page")


@dataclass(frozen=True)
class Job:
    """What rendering record pages needs, small enough to send to worker processes."""

    archive: str  # its folder or URL (Archive.at)
    records: RecordSet | None  # None in a worker until it has made them from the summaries
    published: dict[str, str]  # blob id -> the file name suffix the site offers it under
    templates: Path | None
    cache: Path | None  # the build's cache folder (the cache file, jinja/ and objects/ in it)
    summaries: dict[str, Any] | None = None  # what a worker knows the records by (recordset.summaries)


OBJECTS = "objects"  # under the build's cache: local copies of objects read from storage


def _archive(job: Job) -> Archive:
    archive = Archive.at(job.archive)
    return archive.read_through(job.cache / OBJECTS) if job.cache else archive


_JOB: Job | None = None  # the builder's job in-process; each worker's own copy
_CACHE: Cache | None = None  # the builder's cache in-process; a worker's own connection to it


def _init_worker(job: Job, builder: int) -> None:
    global _JOB, _CACHE
    threading.Thread(target=_exit_with, args=(builder,), name="watch-builder", daemon=True).start()
    assert job.summaries is not None
    # This process lives only as long as the pool: the collector is paused while the records
    # are made and they are then moved out of its reach (gc.freeze), so the many full collections
    # rendering causes never scan them; they hold no cycles, so reference counting frees them.
    # The records come as the builder's summaries, not loaded again: a page reads what it shows.
    gc.disable()
    _JOB = replace(job, records=recordset.from_summaries(_archive(job), job.summaries), summaries=None)
    _CACHE = Cache(job.cache)
    gc.freeze()
    gc.enable()


def _exit_with(builder: int) -> None:
    """End this worker as soon as the builder process is gone. A worker's parent is the
    forkserver, not the builder, and it holds both ends of the pool's queues, so a builder
    killed with SIGKILL would otherwise leave it waiting for work forever."""
    try:
        pidfd = os.pidfd_open(builder)  # readable once the process has exited (Linux 5.3)
    except ProcessLookupError:
        os._exit(1)
    except (AttributeError, OSError):
        pidfd = None
    if pidfd is not None:
        select.select([pidfd], [], [])
        os._exit(1)
    while True:  # no pidfd here: look every half second
        try:
            os.kill(builder, 0)
        except ProcessLookupError:
            os._exit(1)
        except OSError:
            pass  # alive, just not ours to signal
        time.sleep(0.5)


def _render_one(record_id: str) -> RenderedPage:
    job = _JOB
    assert job is not None and job.records is not None
    env = _env(job.templates, job.cache / "jinja" if job.cache else None)
    charts = ChartRenderer(_CACHE)
    page = record_page(record_id, job.records, charts, _archive(job).record_bytes(record_id), job.published)
    html, md = render(env, page)
    claims = sum(len(g["claims"]) for g in page.context.get("claim_groups", []))
    return RenderedPage(record_id, Packed.of(html), Packed.of(md), {c.key: c.svg for c in page.context["charts"]}, claims)


@lru_cache(maxsize=None)  # one per templates and cache folder, for every page a process renders
def _env(templates: Path | None, bytecode_dir: Path | None) -> Any:
    return environment(templates, bytecode_dir)


def _pooled(pages: int, workers: int | None) -> bool:
    """Whether ``pages`` pages are worth a pool of workers."""
    return workers_.count(workers) > 1 and pages >= SERIAL_BELOW and workers_.can_fork_clean()


# The forkserver imports this module (and all a page needs) once, and each worker is a fork of
# it; otherwise each worker imported them while unpickling its initializer, and the builder,
# writing that worker's start-up arguments to it, waited for each in turn.
PRELOAD = [__name__]


def start_early(pages: int, workers: int | None = None) -> None:
    """Start the forkserver now if ``pages`` pages will need a pool: it imports what pages
    need while the builder checks the records, rather than after."""
    if _pooled(pages, workers):
        workers_.start_server(PRELOAD)


def render_record_pages(job: Job, record_ids: list[str], cache: Cache, workers: int | None = None,
                        progress: Progress | None = None,
                        meanwhile: Callable[[], None] | None = None) -> list[RenderedPage]:
    """Render the pages of ``record_ids``, in worker processes when there are many; in order.
    ``cache``: the build's, used in this process (a worker opens its own). ``meanwhile`` is
    called once the workers have the pages to render: this process's own work, done while
    they render rather than before or after."""
    global _JOB, _CACHE
    total = len(record_ids)
    if not _pooled(total, workers):
        if meanwhile is not None:
            meanwhile()
        _JOB, _CACHE = job, cache
        out = []
        try:
            for i, rid in enumerate(record_ids, start=1):
                out.append(_render_one(rid))
                if progress:
                    progress.count(i, total)
        finally:
            _JOB = _CACHE = None  # the build's records go with it: freeing them fell on the next build
        return out
    assert job.records is not None  # the builder's job holds them; a worker's does not
    light = replace(job, records=None, summaries=recordset.summaries(job.records))  # not the records' data
    results = []
    try:
        with workers_.pool(workers_.count(workers), _init_worker, (light, os.getpid()), PRELOAD) as pool:
            rendered = pool.map(_render_one, record_ids, chunksize=8)  # handed to the workers now
            if meanwhile is not None:
                meanwhile()
            for i, page in enumerate(rendered, start=1):
                results.append(page)
                if progress:
                    progress.count(i, total)
    except (BrokenProcessPool, BrokenPipeError) as exc:  # a worker killed from outside (the OOM killer), even as it starts
        raise BuildError(f"{job.archive}: a worker process rendering record pages died; "
                         "build again") from exc
    return results
