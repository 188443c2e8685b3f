"""Records re-hashed in a child process while the caller goes on.

A rebuild re-hashes every record it knows by a kept summary while it makes its pages. Threads
of the builder's own process would share its interpreter lock with the page making: each read
and each hash hands the lock back and forth, and on two cores that cost the builder more time
than the hashing itself. A child process has a lock of its own. It reopens the archive, checks
each record as ``Archive.record_bytes`` does, and answers with each one's size or the error
why not, in order. Only a folder archive is hashed so (a bucket's objects are read through
the builder's copies); when no child can be had or it dies, the caller hashes in its process.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

from ikreport import errors
from ikreport.errors import IkreportError
from ikreport.store.archive import Archive

Answer = int | IkreportError  # a record's size, or why it is not whole
# the child: ikreport from the folder this process has it from, then serve()
_CHILD = "import sys; sys.path.insert(0, sys.argv[1]); from ikreport.store.rehash import serve; serve(sys.argv[2])"


def start(archive: Archive, record_ids: list[str]) -> Iterator[Answer] | None:
    """Start re-hashing ``record_ids`` in a child process; returns the answers (one per id, in
    order), which wait for the child when first asked for. None when the archive is not a
    folder or no child can be started."""
    if archive.folder is None or not record_ids or not sys.executable:
        return None
    import subprocess  # here, not above: the child imports this module and needs neither
    import threading

    package_parent = str(Path(__file__).resolve().parents[2])
    try:
        child = subprocess.Popen([sys.executable, "-c", _CHILD, package_parent, archive.location],
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    except OSError:
        return None
    out: list[bytes] = []
    # a thread feeds the ids (more than a pipe holds) while the child starts, and reads its answer
    talk = threading.Thread(target=lambda: out.append(child.communicate("\n".join(record_ids).encode())[0]),
                            daemon=True)
    talk.start()

    def answers() -> Iterator[Answer]:
        talk.join()
        try:
            found = json.loads(out[0]) if out and child.returncode == 0 else None
        except ValueError:
            found = None
        if not isinstance(found, list) or len(found) != len(record_ids):
            yield from _in_process(archive, record_ids)  # the child died or was killed: hash here
        else:
            yield from map(_answer, found)
    return answers()


def _answer(item: object) -> Answer:
    if isinstance(item, int):
        return item
    name, message = item if isinstance(item, list) and len(item) == 2 else ("", str(item))
    kind = getattr(errors, str(name), None)
    return (kind if isinstance(kind, type) and issubclass(kind, IkreportError) else IkreportError)(str(message))


def _in_process(archive: Archive, record_ids: list[str]) -> list[Answer]:
    out: list[Answer] = []
    for record_id in record_ids:
        try:
            out.append(len(archive.record_bytes(record_id)))
        except IkreportError as exc:
            out.append(exc)
    return out


def serve(location: str) -> None:
    """The child: the ids on standard input, one a line; on standard output, a JSON list of each
    one's size, or [error class, message]."""
    archive = Archive.at(Path(location))
    ids = sys.stdin.read().split()
    answers = [a if isinstance(a, int) else [type(a).__name__, str(a)] for a in _in_process(archive, ids)]
    sys.stdout.write(json.dumps(answers))
