"""The ``supersession`` kind: a record saying a newer record replaces an older one. Its schema
part names the successor key that store/recordset.py follows; its rules (one successor, same
kind, no cycle) live in commands/supersede.py; the changelog page lists them."""

from __future__ import annotations

from ikreport.kinds.base import Kind

NAME = "supersession"

KIND = Kind(NAME)
