"""Read ncu's session page: how a report was made, as ncu itself recorded it.

Accepts the text of ``ncu --import REPORT.ncu-rep --csv --page session``: blocks of two-column
tables, each opened by a title row (``"Launch Settings"``, ``"Session"``, ``"Device
Attributes"``, with or without a second cell) and holding ``"name","value"`` rows. Lines that
do not start with a quote (``==PROF==`` lines, blank lines between blocks) are passed over; a
UTF-8 BOM is allowed; a page cut short or with quoting that does not close is refused with
its line. Names are matched without regard to case, spaces or underscores, and a
device attribute may be spelled with the raw page's ``device__attribute_`` prefix.

What it reads: the ncu version that profiled, the profiler's command line, ``--clock-control``,
``--cache-control`` and ``--replay-mode`` (from their own rows, else from the command line),
the driver version, and the device's name and top SM clock. A session page has no ``"ID",...,"Kernel Name"`` header,
which is how ``is_session_page`` tells it from a raw or details page, whatever its file name, and
rows that ``sniff`` (which holds the page's words) recognises.
"""

from __future__ import annotations

import csv
import re
import shlex
from dataclasses import dataclass

from ikreport.analysis.ncu.export import HEADER_RX
from ikreport.analysis import sniff
from ikreport.analysis.sniff import BLOCKS, COMMAND_KEYS, OPTION_KEYS, VERSION_KEYS
from ikreport.analysis.units import parse_number
from ikreport.errors import NcuExportError, TruncatedExportError

# the session page's words for each option -> the value ncu's command line takes
OPTION_VALUES = {
    "clock_control": {"base": "base", "none": "none", "off": "none", "control off": "none", "reset": "reset"},
    "cache_control": {"all": "all", "flush all": "all", "none": "none", "flush none": "none", "off": "none"},
    "replay_mode": {"kernel": "kernel", "application": "application", "app": "application", "range": "range",
                    "app range": "app-range", "app-range": "app-range", "application range": "app-range"},
}
FLAGS = {"--clock-control": "clock_control", "--cache-control": "cache_control", "--replay-mode": "replay_mode"}
FIX = "export it again with 'ncu --import REPORT --csv --page session'"


@dataclass(frozen=True)
class Session:
    """What a session page says about the run: values as ncu wrote them, options normalised to
    the words ncu's command line takes."""

    name: str
    version: str | None
    command: tuple[str, ...] | None
    options: tuple[tuple[str, str], ...]  # (clock_control | cache_control | replay_mode, value), sorted
    device: str | None
    max_sm_khz: float | None
    driver: str | None
    entries: tuple[tuple[str, str, str], ...]  # (block, name, value) in file order


def _check_whole(text: str, name: str) -> None:
    """Refuse a page cut short or with broken quoting, naming the line: ncu quotes every cell,
    writes no line end inside one and ends every row with one, so a cut last value ("575.5
    of "575.57.08") is never read as if whole."""
    lines = text.split("\n")
    for number, line in enumerate(lines, 1):
        line = line.rstrip("\r")
        if line.startswith('"') and line.count('"') % 2:
            raise TruncatedExportError(f"{name}:{number}: a quoted field does not close on this line: the session "
                                       f"page is cut short or broken; {FIX}")
    last = text.rstrip("\r\n").rsplit("\n", 1)[-1]
    if not text.endswith("\n") and last.startswith('"') and not last.endswith('"'):
        raise TruncatedExportError(f"{name}:{len(lines)}: the last row ends without a closing quote or a line end: "
                                   f"the session page is cut short; {FIX}")


def is_session_page(data: bytes | str) -> bool:
    """True for a session page: no raw/details header, and rows that name session settings."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    if HEADER_RX.search(raw) is not None:
        return False
    return sniff.is_session_page(data)


def _option(key: str, value: str, name: str) -> str:
    word = " ".join(value.lower().split())
    known = OPTION_VALUES[key]
    if word not in known:
        raise NcuExportError(f"{name}: {key.replace('_', ' ')} is {value!r}, which ikreport does not know "
                             f"(expected one of {', '.join(sorted(set(known.values())))}); {FIX}")
    return known[word]


def _from_command(command: tuple[str, ...]) -> dict[str, str]:
    """The options a command line states: '--clock-control none' and '--clock-control=none'."""
    out = {}
    for i, arg in enumerate(command):
        flag, eq, value = arg.partition("=")
        if flag in FLAGS:
            if not eq:
                value = command[i + 1] if i + 1 < len(command) else ""
            out[FLAGS[flag]] = value
    return out


VERSION = re.compile(r"\b\d{4}\.\d+(?:\.\d+)*\b")


def parse_session(data: bytes | str, name: str) -> Session:
    """The settings one session page holds; NcuExportError naming ``name`` when it holds none."""
    _check_whole(sniff.session_text(data), name)
    block = ""
    entries: list[tuple[str, str, str]] = []
    try:
        page = sniff.session_rows(data)
    except csv.Error as exc:
        raise NcuExportError(f"{name}: not a CSV file ncu wrote ({exc}); {FIX}") from exc
    for row in page:
        cells = [c.strip() for c in row]
        title = sniff.session_key(cells[0])
        if title in BLOCKS and (len(cells) == 1 or not cells[1] or title == "device attributes"):
            block = cells[0]
            continue
        if len(cells) >= 2 and cells[0]:
            entries.append((block, cells[0], cells[1]))
    values = {sniff.session_key(k): v for _, k, v in entries}
    # "2025.2.1.0 (build 35987062) (public-release)", "Nsight Compute 2024.3.1" -> the dotted number
    version = next((found[0] for k in VERSION_KEYS if (found := VERSION.search(values.get(k, "")))), None)
    line = next((values[k] for k in COMMAND_KEYS if values.get(k)), None)
    try:
        command = tuple(shlex.split(line)) if line else None
    except ValueError:  # unbalanced quotes: keep the line whole rather than guess
        command = (line,) if line else None
    stated = _from_command(command or ())
    stated.update({key: values[k] for k, key in OPTION_KEYS.items() if values.get(k)})
    options = tuple(sorted((key, _option(key, value, name)) for key, value in stated.items()))
    device = values.get("display name") or None
    top = values.get("max gpu frequency khz") or values.get("clock rate")
    max_sm_khz = parse_number(top) if top else None
    if max_sm_khz is not None and not max_sm_khz > 0:
        max_sm_khz = None
    if not (version or command or options or device):
        raise NcuExportError(f"{name}: a session page with no ncu version, command line, settings or device; {FIX}")
    return Session(name=name, version=version, command=command, options=options, device=device,
                   max_sm_khz=max_sm_khz, driver=values.get("driver version") or None, entries=tuple(entries))
