"""The words of ncu's session page, and the cheap test that a text is one (pure).

Accepts any text (or UTF-8 bytes). A session page (``ncu --import REPORT --csv --page session``)
is blocks of quoted one- or two-cell rows, opened by titles such as ``"Launch Settings"`` and
``"Session"`` and holding rows such as ``"Profiler Version","2025.2.1.0"``. ``marked`` is true
when a row of at most two cells names one of those titles or settings.

This is the one home of the page's vocabulary: ``ncu_session`` parses with it and ``sniff``
names a session page given to another reader with it. It imports nothing of ikreport, since
``ncu_export`` imports ``sniff`` and ``ncu_session`` imports ``ncu_export``.
"""

from __future__ import annotations

import csv
import re

BLOCKS = ("launch settings", "session", "device attributes", "process", "system", "profiler")
# every spelling of the profiling ncu's version, the one that ran on the target first: the
# host's version is the one that wrote the export, which may be newer
VERSION_KEYS = ("nsight compute target", "nsight compute target version", "target version", "profiler version",
                "ncu version", "nsight compute version", "nsight compute", "version", "nsight compute host",
                "nsight compute host version", "host version")
COMMAND_KEYS = ("command line", "profiler command line", "command")
OPTION_KEYS = {"clock control": "clock_control", "cache control": "cache_control", "replay mode": "replay_mode"}
MARKERS = {*BLOCKS, *VERSION_KEYS, *COMMAND_KEYS, *OPTION_KEYS}


def key(text: str) -> str:
    """'Clock_Control ' -> 'clock control'; 'device__attribute_display_name' -> 'display name'."""
    text = re.sub(r"^device__attribute_", "", text.strip(), flags=re.IGNORECASE)
    return " ".join(text.replace("_", " ").lower().split())


def text_of(data: bytes | str) -> str:
    """The page as text, without a UTF-8 BOM."""
    return data.decode("utf-8-sig", "replace") if isinstance(data, bytes) else data.lstrip("\ufeff")


def rows(data: bytes | str) -> list[list[str]]:
    """The CSV rows of the lines that start with a quote: ncu's ``==PROF==`` lines and the blank
    lines between blocks are not part of the page. Raises csv.Error on a line csv cannot read
    (a cell over its 128 kB limit, say)."""
    return [row for row in csv.reader(ln for ln in text_of(data).splitlines() if ln.startswith('"')) if row]


def marked(data: bytes | str) -> bool:
    """True when a row of at most two cells names a session-page title or setting. A raw or
    details export's rows have many cells, but a caller that may hold one tests its header first.
    A text csv cannot read is no session page (this test runs on any file a reader was given)."""
    try:
        return any(key(row[0]) in MARKERS for row in rows(data) if len(row) <= 2)
    except csv.Error:
        return False
