"""``ikreport supersede OLD --by NEW --reason TEXT``: a record saying a correction replaces a
record. Nothing is rewritten: the old record keeps its page, which then points to the new one."""

from __future__ import annotations

from ikreport import records
from ikreport.archive import Archive
from ikreport.collect.context import utc_now
from ikreport.errors import RecordError


def supersede(archive: Archive, old: str, new: str, reason: str) -> str:
    old_id, new_id = archive.resolve(old), archive.resolve(new)
    if old_id == new_id:
        raise RecordError(f"{old}: a record cannot supersede itself; give the corrected record with --by")
    if not reason.strip():
        raise RecordError("--reason: say why the record is replaced")
    old_rec, new_rec = archive.load(old_id), archive.load(new_id)
    record = records.new_record(
        "supersession",
        f"{new_rec['title']} replaces {old_rec['title']}",
        collected_at=utc_now(),
        subject=new_rec["subject"],
        method={"tool": "ikreport supersede", "tool_version": None, "command": None, "options": {},
                "how": "a correction recorded by hand"},
        data={"old": old_id, "new": new_id, "reason": reason.strip()},
        limitations=[],
        cites=[new_id],
        supersedes=[{"id": old_id, "reason": reason.strip()}],
    )
    return archive.put_record(record)
