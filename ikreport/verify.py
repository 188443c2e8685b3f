"""``ikreport verify``: re-hash every file of an archive and check every reference.

One line per problem, ``PATH: what is wrong; what to do``, sorted, so two runs agree.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from ikreport.archive import ID_RX, RECORD_SUFFIX, SHARD_RX, TEMP_PREFIX, Archive, sha256
from ikreport.errors import IkreportError
from ikreport.records import bulk_loading
from ikreport.validated import Refs, Validated, checked_refs

Progress = Callable[[int], None]


def verify_archive(archive: Archive, progress: Progress | None = None, notes: list[str] | None = None,
                   validated: Validated | None = None) -> list[str]:
    """Problems found in ``archive`` (empty when all is well). Leftovers of interrupted writes
    (``.tmp-*`` files, which can never be taken for a record) go to ``notes``, not problems.
    Every file is re-hashed; records already validated (``validated``) are not parsed again."""
    with bulk_loading():
        return _verify(archive, progress, notes, validated)


def _verify(archive: Archive, progress: Progress | None, notes: list[str] | None,
            validated: Validated | None) -> list[str]:
    validated = validated or Validated(None)
    problems: list[str] = []
    notes = notes if notes is not None else []
    writable = 0
    records_ok: dict[str, Refs] = {}
    blobs_ok: set[str] = set()
    for top, suffix in ((archive.blobs_dir, ""), (archive.records_dir, RECORD_SUFFIX)):
        if not top.is_dir():
            continue
        for entry in sorted(os.scandir(top), key=lambda e: e.name):
            if not (SHARD_RX.match(entry.name) and entry.is_dir(follow_symlinks=False)):
                problems.append(f"{entry.path}: unexpected entry in the archive; move it out")
                continue
            for item in sorted(os.scandir(entry.path), key=lambda e: e.name):
                path = Path(item.path)
                name = item.name
                if name.startswith(TEMP_PREFIX):
                    notes.append(f"{path}: temporary file left by an interrupted write; safe to delete")
                    continue
                stem = name[: len(name) - len(suffix)] if suffix and name.endswith(suffix) else (None if suffix else name)
                if stem is None or not ID_RX.match(entry.name + stem) or not item.is_file(follow_symlinks=False):
                    what = "symbolic link" if item.is_symlink() else "unexpected file"
                    problems.append(f"{path}: {what} in the archive; remove it")
                    continue
                file_id = entry.name + stem
                try:
                    if suffix:
                        records_ok[file_id] = checked_refs(archive, file_id, validated)
                    else:
                        data = path.read_bytes()
                        if sha256(data) != file_id:
                            problems.append(f"{path}: content does not hash to its name (truncated or tampered); restore it")
                            continue
                        blobs_ok.add(file_id)
                except (IkreportError, OSError) as exc:
                    problems.append(str(exc))
                    continue
                if item.stat().st_mode & 0o222:
                    writable += 1
                if progress:
                    progress(1)
    if writable:
        # The hashes, not the mode bits, are what guarantee integrity, and git checkouts do
        # not keep read-only modes: a note, not a problem.
        notes.append(f"{archive.root}: {writable} files are writable (ikreport writes them read-only; a git "
                     f"checkout does not keep that); 'chmod -R a-w {archive.root}/records {archive.root}/blobs' "
                     "restores it")
    for record_id, refs in sorted(records_ok.items()):
        for what, ref in refs:
            present = ref in blobs_ok if what == "blob" else ref in records_ok
            if not present:
                problems.append(
                    f"{archive.record_path(record_id)}: cites {what} {ref[:12]}, which is missing or damaged; "
                    "copy it from the archive it was collected in"
                )
    return problems


def verify_site(where: str, fetch: Callable[[str], bytes] | None = None) -> tuple[int, list[str]]:
    """Re-check a built or published site against its manifest.json: every record listed is
    there and hashes to its id. ``where`` is a folder or an http(s) URL. Returns (records
    checked, problems)."""
    import json
    import urllib.error
    import urllib.request

    base = where.rstrip("/") + "/"
    remote = where.startswith(("http://", "https://"))

    def get(rel: str) -> bytes:
        if fetch is not None:
            return fetch(base + rel)
        if remote:
            with urllib.request.urlopen(base + rel, timeout=30) as response:  # noqa: S310 (the user's URL)
                return response.read()
        return (Path(where) / rel).read_bytes()

    try:
        manifest = json.loads(get("manifest.json"))
    except (OSError, urllib.error.URLError, ValueError) as exc:
        raise IkreportError(f"{base}manifest.json: cannot read it ({exc}); build the site with ikreport 0.1 or later") from exc
    if not isinstance(manifest, dict) or manifest.get("schema") != "ikreport.manifest/1":
        raise IkreportError(f"{base}manifest.json: not an ikreport manifest (schema ikreport.manifest/1)")
    problems = []
    for record_id in manifest["records"]:
        rel = f"e/{record_id}.json"
        try:
            data = get(rel)
        except (OSError, urllib.error.URLError) as exc:
            problems.append(f"{base}{rel}: missing ({exc})")
            continue
        if sha256(data) != record_id:
            problems.append(f"{base}{rel}: does not hash to its name (tampered or damaged); compare with the archive")
    for blob in manifest.get("blobs", []):
        try:
            data = get(blob["path"])
        except (OSError, urllib.error.URLError):
            problems.append(f"{base}{blob['path']}: missing")
            continue
        if sha256(data) != blob["id"]:
            problems.append(f"{base}{blob['path']}: does not hash to {blob['id'][:12]} (tampered or damaged)")
    return len(manifest["records"]), problems
