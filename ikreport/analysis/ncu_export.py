"""Find the CSV inside an ncu export and tell which page it is.

Accepts the text printed by ``ncu --csv`` or ``ncu --import R.ncu-rep --csv [--page raw|
details]``, as saved by users: the program's own output and ``==PROF==``/``==WARNING==``
lines may come before (or between) the CSV lines; CRLF or LF line ends; a UTF-8 BOM. The
header row starts with ``"ID"``. A details page has ``Metric Name``/``Metric Value`` columns;
a raw page has one column per metric, with a units row under the header.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from typing import Literal

from ikreport.errors import NcuExportError

Page = Literal["raw", "details"]
DETAILS_COLUMNS = ("ID", "Kernel Name", "Section Name", "Metric Name", "Metric Unit", "Metric Value")


@dataclass(frozen=True)
class Export:
    """The CSV part of one export: its page, header, and CSV lines with their line numbers."""

    name: str
    page: Page
    header: tuple[str, ...]
    lines: tuple[str, ...]  # CSV lines after the header; tool chatter removed
    line_numbers: tuple[int, ...]  # 1-based line number in the file of each of ``lines``
    header_line: int


def _is_header(line: str) -> bool:
    return line.startswith('"ID",') and '"Kernel Name"' in line


def _tool_error(lines: list[str]) -> str | None:
    for line in lines:
        s = line.strip()
        if s.startswith("==ERROR==") or "No kernels were profiled" in s:
            return s
    return None


def locate(text: str, name: str = "<export>") -> Export:
    """Split ``text`` into header and CSV lines; raise NcuExportError naming ``name`` if it
    holds no ncu CSV."""
    if "\x00" in text[:65536]:
        raise NcuExportError(f"{name}: not a text file; give the CSV from 'ncu --import REPORT --csv'")
    all_lines = text.lstrip("\ufeff").splitlines()
    start = next((i for i, ln in enumerate(all_lines) if _is_header(ln)), None)
    if start is None:
        said = _tool_error(all_lines)
        if said:
            raise NcuExportError(f"{name}: no CSV in this file; ncu said: {said}")
        if not text.strip():
            raise NcuExportError(f"{name}: the file is empty; export a report with 'ncu --import REPORT --csv'")
        raise NcuExportError(
            f'{name}: no ncu CSV header ("ID",...,"Kernel Name",...) found; '
            "export with 'ncu --import REPORT --csv --page raw' or '--page details'"
        )
    header = tuple(next(csv.reader([all_lines[start]])))
    page: Page = "details" if all(c in header for c in DETAILS_COLUMNS) else "raw"
    # ncu quotes every CSV field, so a CSV line starts with a quote; anything else is chatter
    # (==PROF== lines, program output) that ncu interleaves with the CSV.
    keep = [i for i in range(start + 1, len(all_lines)) if all_lines[i].startswith('"')]
    return Export(
        name=name,
        page=page,
        header=header,
        lines=tuple(all_lines[i] for i in keep),
        line_numbers=tuple(i + 1 for i in keep),
        header_line=start + 1,
    )
