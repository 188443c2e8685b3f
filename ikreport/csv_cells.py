"""CSV cells that a spreadsheet would run as formulas (CSV injection), as OWASP describes it.

A cell that starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return can be read as a
formula by Excel, LibreOffice or Google Sheets. CSVs ikreport writes prefix such a text cell
with a single quote (OWASP's remedy; spreadsheets show the cell as text and hide the quote),
and a text cell that already starts with a quote gets one more, so ``restore`` gives back
exactly what was written. Numbers are typed columns, written bare: -1.5 stays a number.
Exports kept verbatim cannot be changed (their name is their hash): ``has_formula_cells``
tells the site to offer such a file as text rather than as a spreadsheet. It splits cells as
any spreadsheet might: on commas, on semicolons (Excel in a locale whose decimal mark is a
comma), on tabs, and on what a first line ``sep=X`` names.
"""

from __future__ import annotations

import codecs
import csv
import io
import re
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    import pyarrow as pa

TRIGGERS = ("=", "+", "-", "@", "\t", "\r")
# RE2 (pyarrow) syntax; the quote itself is prefixed too, so that restore is exact
_PREFIX_RE2 = r"^([=+\-@\t\r'])"
# The cheap test before parsing, passing every file a formula cell could be in: each trigger
# byte is found at memchr speed (most files hold few), and only one that follows a delimiter
# (comma, quote, line break) or opens the file can start a cell. There a plain number that ends
# its cell (-1.5, +2e3, "-1.5") is a number to every parser; any other start sends the file to
# the parse. A cold build asks this of every CSV it publishes, thousands of launch tables and
# exports, so it works on the bytes instead of decoding them for a regex.
# A spreadsheet splits a CSV on commas, but on semicolons in locales whose decimal mark is a
# comma, and on what a first line "sep=X" names (Excel): a cell may start after any of them.
SEPARATORS = ",;\t"
_SEP_LINE = re.compile(rb"\A(?:\xef\xbb\xbf)?sep=(.)", re.S)
_NUMBER = rb"[+\-](?:\d+\.?\d*|\.\d+)(?:[eE][+\-]?\d+)?"
_LINE_ENDS = b"\n\r"
# a line that starts with a sign, quoted or not, found from the line end before it (a literal first
# character is searched for at memchr speed; a MULTILINE ^ is tried at every byte, ten times slower)
_SIGNED_LINE = (re.compile(rb'\n"?[+\-]'), re.compile(rb'\r"?[+\-]'))


def _separators(utf8: bytes) -> str:
    """The characters a spreadsheet might split ``utf8`` on: SEPARATORS and a sep= line's."""
    named = _SEP_LINE.match(utf8)
    return SEPARATORS + (named.group(1).decode("latin-1") if named and named.group(1).decode("latin-1") not in SEPARATORS else "")


def _scan(utf8: bytes, separator: str = ",") -> tuple[bool, bool]:
    """(whether a cell of this UTF-8 text, split on ``separator``, may start with a trigger;
    whether a line starts with a sign or a tab, quoted or not): False only when none can. The
    second is what splitting on a character the file does not hold changes: each line is then
    one cell, and "-1,-1" is no number (nor "\t1,2", which float() reads as 1 once split)."""
    utf8 = utf8.removeprefix(codecs.BOM_UTF8)
    end = re.escape(separator.encode("latin-1"))
    number = {False: re.compile(_NUMBER + rb"(?=" + end + rb"|\r|\n|\Z)"),
              True: re.compile(_NUMBER + rb'"(?=' + end + rb"|\r|\n|\Z)")}
    delimiters = separator.encode("latin-1") + b'"' + _LINE_ENDS
    signed = False
    for trigger in "".join(TRIGGERS).encode():
        at = utf8.find(trigger)
        while at != -1:
            before = utf8[at - 1] if at else 0x0A
            if before in delimiters:
                quoted = before == 0x22  # after a quote the cell is the number only if a quote closes it
                if trigger not in b"+-" or not number[quoted].match(utf8, at):  # the rest unscanned: looked for
                    head = b"\n" + utf8[:2]
                    return True, b"\t" in utf8 or any(rx.search(head) or rx.search(utf8) for rx in _SIGNED_LINE)
                opens = at - 1 if quoted else at
                signed = signed or opens == 0 or utf8[opens - 1] in _LINE_ENDS
            at = utf8.find(trigger, at + 1)
    return False, signed


def neutralise(table: pa.Table) -> pa.Table:
    """``table`` with every text cell that starts with a trigger (or a quote) quote-prefixed."""
    import pyarrow as pa  # only writers need pyarrow; readers of this module stay light

    for i, field in enumerate(table.schema):
        if (pa.types.is_string(field.type) or pa.types.is_large_string(field.type)) and _may_start(table.column(i)):
            import pyarrow.compute as pc  # only when a cell needs it: its import is slow

            column = pc.replace_substring_regex(table.column(i), pattern=_PREFIX_RE2, replacement=r"'\1")
            table = table.set_column(i, field, column)
    return table


def _may_start(column: pa.ChunkedArray) -> bool:
    """Whether a cell of a string column may start with a trigger or a quote, from each cell's
    first byte in Arrow's buffers: the regex replace costs a pass over the whole column even
    when, as nearly always, no cell needs it. (A null cell may count: then the replace runs anyway.)"""
    import numpy as np
    import pyarrow as pa

    first_bytes = np.frombuffer("".join(TRIGGERS).encode() + b"'", dtype=np.uint8)
    width = np.int64 if pa.types.is_large_string(column.type) else np.int32
    for chunk in column.chunks:
        _, offsets, data = chunk.buffers()
        if not len(chunk) or data is None:
            continue
        ends = cast("np.ndarray[Any, np.dtype[np.signedinteger[Any]]]", np.frombuffer(
            offsets, dtype=width, count=chunk.offset + len(chunk) + 1)[chunk.offset:])
        starts = ends[:-1][ends[1:] > ends[:-1]]  # of the cells that are not empty
        if np.isin(np.frombuffer(data, dtype=np.uint8)[starts], first_bytes).any():
            return True
    return False


def restore(cell: str) -> str:
    """A text cell as it was before ``neutralise``."""
    return cell[1:] if cell.startswith("'") else cell


def has_formula_cells(data: bytes) -> bool:
    """Whether a spreadsheet opening ``data`` as CSV would find a text cell it could run as
    a formula. A file that cannot be read as CSV counts as having one."""
    utf8 = data.decode("utf-16", errors="replace").encode("utf-8") if data.startswith(
        (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)) else data
    comma = _scan(utf8)  # before decoding: most files end here, for every separator
    try:
        for separator in _separators(utf8.removeprefix(codecs.BOM_UTF8)):
            if separator == "," or separator.encode("latin-1") not in utf8:
                hold = comma[0] if separator == "," else comma[1]  # none in the file: each line is one cell
            else:
                hold = _scan(utf8, separator)[0]
            if not hold:
                continue
            text = io.TextIOWrapper(io.BytesIO(utf8), encoding="utf-8-sig", errors="replace", newline="")
            for row in csv.reader(text, delimiter=separator):  # an export whose preamble starts "==PROF==" ends here
                for cell in row:
                    if cell.startswith(TRIGGERS) and not _is_number(cell):
                        return True
    except csv.Error:
        return True
    return False


def _is_number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True
