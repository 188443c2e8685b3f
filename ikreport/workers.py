"""Worker processes, made one way: from a clean ``forkserver`` process, never by forking the
caller, which may already hold threads (a fork of a process with threads can deadlock in the
child: vl-convert did). A module named in ``preload`` is imported once by the forkserver, so
each worker starts with it rather than importing it as it unpickles its first task. The
forkserver is started with PYTHONSAFEPATH, so it imports nothing from the folder the command
was run in (a clone of someone's archive may hold a json.py)."""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from typing import Any


def can_fork_clean() -> bool:
    """Whether this platform has the forkserver start method (not Windows)."""
    return "forkserver" in multiprocessing.get_all_start_methods()


def count(asked: int | None) -> int:
    """The workers to use: those asked for, else one per core."""
    return asked or os.cpu_count() or 1


def pool(workers: int, initializer: Callable[..., object] | None = None, initargs: tuple[Any, ...] = (),
         preload: list[str] | None = None) -> ProcessPoolExecutor:
    """A pool of ``workers`` processes started from the forkserver."""
    context = multiprocessing.get_context("forkserver")
    start_server(preload or [])
    return ProcessPoolExecutor(max_workers=workers, mp_context=context, initializer=initializer, initargs=initargs)


def start_server(preload: list[str]) -> None:
    """Start the forkserver now (if it is not running), importing ``preload``, so a pool made
    later need not wait for it."""
    from multiprocessing import forkserver

    multiprocessing.get_context("forkserver").set_forkserver_preload(preload)
    was = os.environ.get("PYTHONSAFEPATH")
    os.environ["PYTHONSAFEPATH"] = "1"
    try:
        with _ctrl_c_ignored():
            forkserver.ensure_running()
    finally:
        if was is None:
            del os.environ["PYTHONSAFEPATH"]
        else:
            os.environ["PYTHONSAFEPATH"] = was


@contextlib.contextmanager
def _ctrl_c_ignored() -> Iterator[None]:
    """Ctrl-C ignored while a server process starts, so that it starts ignoring it (an ignored
    signal stays ignored across exec; a handler does not), as each worker forked from it does:
    Ctrl-C reaches every process of the command's group, and it is the command's to answer, in
    one line. multiprocessing has its server ignore it only after the server's first imports,
    which died of it meanwhile with their traceback. One pressed in the few milliseconds of
    the start is lost. Signals are only the main thread's to set."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    was = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, was)


def lean_child(script: str, args: list[str], given: bytes) -> Callable[[], bytes | None] | None:
    """Run ``script`` in a child with the standard library only (``-I -S``: nothing from the
    environment, the site packages or the folder the command was run in), ``given`` on its
    input, while the caller goes on. Returns a function that waits for the child and gives what
    it wrote, or None when it failed; None at once when no child can be started."""
    import subprocess  # here: most commands start none
    import tempfile

    if not sys.executable:
        return None
    # input and answer in files, not pipes: no thread need feed the child while it starts, and it
    # never waits to write its answer, so it ends even when a failed build never asks for it
    try:
        answer_file = tempfile.TemporaryFile()
        with tempfile.TemporaryFile() as file:
            file.write(given)
            file.seek(0)
            child = subprocess.Popen([sys.executable, "-I", "-S", "-c", script, *args], stdin=file,
                                     stdout=answer_file, stderr=subprocess.DEVNULL)
    except OSError:
        return None  # the answer file, if made, goes with its last reference

    def answer() -> bytes | None:
        code = child.wait()
        with answer_file:
            answer_file.seek(0)
            return answer_file.read() if code == 0 else None
    return answer
