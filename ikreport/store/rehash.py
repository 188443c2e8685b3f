"""Records re-hashed against their ids: by the caller, or in a child process meanwhile.

A rebuild re-hashes every record it knows by a kept summary while it makes its pages. Its
threads would share the interpreter lock with the page making, each read and hash handing it
back and forth, which on two cores cost more than the hashing; a child has a lock of its own.
It reopens the (folder) archive and answers, in order, each record's size or the error why not.
When it cannot start or dies, the caller hashes the records itself.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path

from ikreport import errors
from ikreport.errors import IkreportError
from ikreport.store.archive import Archive

Answer = bytes | int | IkreportError  # a record's bytes or size, or why it is not whole
# The child: ikreport from the folder this process has it from, then serve(). -P: no module is
# looked for in the folder the build was started from (an archive's clone may hold a json.py).
_CHILD = "import sys; sys.path.insert(0, sys.argv[1]); from ikreport.store.rehash import serve; serve(*sys.argv[2:])"
WATCH_EVERY = 64  # records the child hashes between looks at whether the builder is still there


def checked(archive: Archive, record_id: str, whole: bool = True) -> Answer:
    """A record's bytes (their size, unless ``whole``) checked against its id, or the error why not."""
    try:
        data = archive.record_bytes(record_id)
    except IkreportError as exc:
        return exc
    return data if whole else len(data)


def start(archive: Archive, record_ids: list[str]) -> Iterator[Answer] | None:
    """Start re-hashing ``record_ids`` in a child; returns each one's size or error, in order,
    waiting for the child when first asked. None for an archive not in a folder, or no child."""
    if archive.folder is None or not record_ids or not sys.executable:
        return None
    import subprocess  # here, not above: the child imports this module and needs neither
    import threading

    try:
        child = subprocess.Popen([sys.executable, "-P", "-c", _CHILD, str(Path(__file__).resolve().parents[2]),
                                  archive.location, str(os.getpid())], stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
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
        if isinstance(found, list) and len(found) == len(record_ids):
            yield from map(_answer, found)
        else:  # the child died or was killed: hash here
            yield from (checked(archive, rid, whole=False) for rid in record_ids)
    return answers()


def _answer(item: object) -> Answer:
    if isinstance(item, int):
        return item
    name, message = item if isinstance(item, list) and len(item) == 2 else ("", str(item))
    kind = getattr(errors, str(name), None)
    return (kind if isinstance(kind, type) and issubclass(kind, IkreportError) else IkreportError)(str(message))


def serve(location: str, builder: str) -> None:
    """The child: the ids on standard input, one a line; on standard output, a JSON list of each
    one's size, or [error class, message]. It stops, answering nothing, once the builder (pid
    ``builder``) is gone: a killed build leaves no child hashing on."""
    archive = Archive.at(Path(location))
    answers = []
    for n, rid in enumerate(sys.stdin.read().split()):
        if n % WATCH_EVERY == 0 and os.getppid() != int(builder):  # orphans are given a new parent
            return
        answer = checked(archive, rid, whole=False)
        answers.append(answer if isinstance(answer, int) else [type(answer).__name__, str(answer)])
    sys.stdout.write(json.dumps(answers))
