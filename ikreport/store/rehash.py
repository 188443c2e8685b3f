"""Records re-hashed against their ids: by the caller, or in a child process meanwhile.

A rebuild re-hashes the records it knows by kept summaries in a child while it makes its pages
(threads would trade the interpreter lock with the page making), given every record as it starts
before the summaries are read. The child is the standard library only, so it hashes at once; it
answers the size of each whole record file and leaves the rest to the caller, which reads them
itself and so words every error one way (``checked``); if the child cannot start or dies, the
caller hashes them all. Once done, the child can look at other files too (``Look``: a build's site).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import TYPE_CHECKING, NamedTuple

from ikreport.errors import IkreportError

if TYPE_CHECKING:
    from ikreport.store.archive import Archive

Answer = bytes | int | IkreportError  # a record's bytes or size, or why it is not whole
WATCH_EVERY = 64  # records the child hashes between looks at whether the builder is still there
# The child (workers.lean_child). Given "id file" lines, an answer for each: the file's size when
# it is a regular file no bigger than a record can be (not a link, nor in a folder that is one)
# whose bytes hash to the id, else "-". Then, after a blank line, a Look's root, since and paths:
# a line of an answer for each (a size, or -1). It stops once its builder is gone.
_CHILD = """# ikreport: records re-hashed for a build
import hashlib, os, stat, sys
most, builder, plain, out, seen, room = int(sys.argv[1]), int(sys.argv[2]), set(), [], [], memoryview(b"")
records, _, look = sys.stdin.buffer.read().partition(b"\\n\\n")
for n, line in enumerate(records.split(b"\\n")):
    if n % WATCH_EVERY == 0 and os.getppid() != builder:  # orphans are given a new parent
        sys.exit(1)
    rid, path = line.split(b" ", 1)
    folders = [os.path.dirname(path), os.path.dirname(os.path.dirname(path))]
    try:
        for folder in folders:  # its shard and area folder, each looked at once
            if folder not in plain and not os.path.islink(folder):
                plain.add(folder)
        if all(folder in plain for folder in folders):
            with open(os.open(path, os.O_RDONLY | os.O_NOFOLLOW), "rb", buffering=0) as f:
                info = os.fstat(f.fileno())
                if stat.S_ISREG(info.st_mode) and 0 < (size := info.st_size) <= most:
                    if len(room) < size:  # read into one buffer: faster than a new one or a map each time
                        room = memoryview(bytearray(size))
                    if f.readinto(room[:size]) == size and hashlib.sha256(room[:size]).hexdigest().encode() == rid:
                        out.append(str(size))
                        continue
    except OSError:
        pass
    out.append("-")
root, since, *paths = look.split(b"\\n") if look else (b"", b"0")
since = int(since)
for path in paths:  # site/writer.py _left's rule
    try:
        info = os.lstat(root + path)
        seen.append(str(info.st_size) if stat.S_ISREG(info.st_mode) and info.st_ctime_ns <= since else "-1")
    except OSError:
        seen.append("-1")
sys.stdout.write(" ".join(out) + "\\n" + " ".join(seen))
sys.stdout.flush()
os._exit(0)  # the builder waits for the exit: the interpreter's tidying up would be on its time
""".replace("WATCH_EVERY", str(WATCH_EVERY))


def checked(archive: Archive, record_id: str, whole: bool = True) -> Answer:
    """A record's bytes (their size, unless ``whole``) checked against its id, or the error why not."""
    try:
        data = archive.record_bytes(record_id)
    except IkreportError as exc:
        return exc
    return data if whole else len(data)


class Look(NamedTuple):
    """Files the child looks at once the records are hashed: ``found`` gets, for each of ``paths`` (under ``root``),
    its size if a regular file (not a link) whose inode changed no later than ``since`` (ns), else -1; none if the child fails."""

    root: str
    paths: list[str]
    since: int
    found: dict[str, int]


def start(archive: Archive, record_ids: list[str], look: Look | None = None) -> Iterator[Answer] | None:
    """Start re-hashing ``record_ids`` (then ``look``) in a child; returns each one's size or
    error, in order, waiting for the child when first asked. None for an archive not in a
    folder, or no child."""
    from ikreport import workers
    from ikreport.store.archive import MAX_RECORD

    if archive.folder is None or not record_ids:
        return None
    asked = b"\n".join(os.fsencode(f"{rid} {archive.layout.file('records', rid)}") for rid in record_ids)
    if look is not None:
        asked += b"\n\n" + os.fsencode("\n".join([look.root, str(look.since), *look.paths]))
    answer = workers.lean_child(_CHILD, [str(MAX_RECORD), str(os.getpid())], asked)
    if answer is None:
        return None

    def answers() -> Iterator[Answer]:
        sizes, _, seen = (answer() or b"").partition(b"\n")
        found = sizes.split()
        if len(found) != len(record_ids):  # the child died or was killed: all are hashed here
            found = [b"-"] * len(record_ids)
        if look is not None and len(seen.split()) == len(look.paths):  # a path holding a line break: none
            look.found.update(zip(look.paths, map(int, seen.split())))
        for rid, size in zip(record_ids, found):
            yield int(size) if size.isdigit() else checked(archive, rid, whole=False)
    return answers()
