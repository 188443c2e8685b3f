"""Which blobs a site publishes, under what file name, and their bytes, checked.

A blob is published as the archive stores it (compressed: ``b/ID.csv.gz``), never recompressed,
so a reader can check it with ``gunzip -c b/ID.csv.gz | sha256sum``; the writer re-hashes what it
copies. The suffix is its media type's, except that a CSV holding cells a spreadsheet would run
as formulas is offered as ``.txt`` (an export is kept verbatim, so it cannot be neutralised). That
answer never changes for a blob, so the build cache keeps it: a rebuild reads no blob it published.
"""

from __future__ import annotations

import hashlib
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import NamedTuple

import orjson

from ikreport import csv_cells
from ikreport.csv_cells import has_formula_cells
from ikreport.errors import IntegrityError
from ikreport.store.archive import Archive
from ikreport.store.cache import Cache
from ikreport.store.compression import GZ, inflate

MEDIA_EXT = {"text/csv": ".csv", "text/plain": ".txt", "application/json": ".json"}
SUFFIXES = {"", *MEDIA_EXT.values()}
FEW = 4  # new blobs up to this many are looked at in the builder's thread (a rebuild's few)
# the rule's own code names what is kept: another rule looks at every blob again
SPACE = f"offered as JSON {hashlib.sha256(Path(csv_cells.__file__).read_bytes()).hexdigest()[:16]}"


class Published(NamedTuple):  # a tuple: a build makes one for every blob it publishes
    """A blob as the site publishes it."""

    suffix: str  # the file name's, after the id: ".csv", ".txt.gz" …
    size: int  # bytes as stored, which the site holds
    stored_sha256: str | None  # of the stored bytes, when this build read and checked them


def published_blobs(archive: Archive, blobs: list[tuple[str, str]], stored: dict[str, tuple[str, int]],
                    cache: Cache) -> dict[str, Published]:
    """How the site publishes each of ``blobs`` ((id, media type), each in the archive, stored
    as ``stored`` says: (form, size))."""
    keys = [f"{blob_id} {media_type}" for blob_id, media_type in blobs]  # the answer follows from both
    kept = cache.get_runs(SPACE, keys, lambda suffix: isinstance(suffix, str) and suffix in SUFFIXES)
    todo = [(key, *item) for key, item in zip(keys, blobs) if key not in kept]
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:  # threads start only when asked for
        apply = pool.map if len(todo) > FEW else map  # for a few, starting threads cost more than they saved
        looked = dict(zip([key for key, _, _ in todo], apply(lambda item: _look(archive, stored[item[1]][0], *item[1:]), todo)))
    cache.put_many(SPACE, [(key, suffix) for key, (suffix, _) in looked.items()])
    out = {}  # a blob cited as two media types: the last, in the order given, names its file
    for key, (blob_id, _) in zip(keys, blobs):
        form, size = stored[blob_id]
        suffix, digest = looked[key] if key in looked else (kept[key], None)
        out[blob_id] = Published(suffix + form, size, digest)
    return out


def _look(archive: Archive, form: str, blob_id: str, media_type: str) -> tuple[str, str]:
    """(suffix, sha256 of the stored bytes) of a blob stored as ``form``, read once and checked."""
    data = archive.backend.read("blobs", blob_id + form)
    where = archive.backend.where("blobs", blob_id + form)
    content = inflate(data, where) if form == GZ else data
    if hashlib.sha256(content).hexdigest() != blob_id:
        raise IntegrityError(f"{where}: the bytes do not hash to the file's name; restore it from a good copy")
    suffix = MEDIA_EXT.get(media_type, "")
    if suffix == ".csv" and has_formula_cells(content):
        suffix = ".txt"
    return suffix, hashlib.sha256(data).hexdigest()


def stored_bytes(archive: Archive, blob_id: str, published: Published) -> bytes:
    """The blob's stored bytes, for the site: as this build checked them, or checked now."""
    if published.stored_sha256 is None:
        return archive.stored_blob(blob_id)[1]
    form = published.suffix[-len(GZ):] if published.suffix.endswith(GZ) else ""
    data = archive.backend.read("blobs", blob_id + form)
    if hashlib.sha256(data).hexdigest() != published.stored_sha256:
        raise IntegrityError(f"{archive.backend.where('blobs', blob_id + form)}: changed while the site was built; "
                             "build again")
    return data
