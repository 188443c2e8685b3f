"""Check a big ncu raw export chunk by chunk, so that it is never held whole in memory.

Accepts what ``ncu_export.locate`` accepts, given as line-aligned chunks of the file's bytes
(every chunk but the last ends with a line end): the first chunk must hold the header and
the units row. Each chunk is checked as ``locate`` checks a whole export (UTF-8, quoted fields
that close on their line, a last row that is not cut short), and the rows are then read from
the file itself (``Export.file``), a block at a time, by the page reader.

Only the plain case is streamed: a raw page with no tool chatter after its first chunk.
Anything else (a details page, ``==PROF==`` lines or program output between rows, a header
further in than the first chunk) gives ``None``, and the caller reads the file whole as before.
"""

from __future__ import annotations

from collections.abc import Iterable

from ikreport.analysis.ncu.export import BOM, HEADER_RX, Export, check_lines, check_utf8, locate, scan_lines

# a chunk may start with a row (a quote) or a blank line; anything else is chatter
ROW_STARTS = (b'"', b"\n", b"\r")


def locate_stream(chunks: Iterable[bytes | memoryview], name: str) -> Export | None:
    """The export of a big raw page checked chunk by chunk; ``None`` when it needs reading
    whole (see the module docstring). Consumes ``chunks`` to the end when it streams."""
    it = iter(chunks)
    head = bytes(next(it, b""))
    if HEADER_RX.search(head) is None:
        return None
    export = locate(head, name)
    # the units row must be in the head too: the page reader takes it from there
    if export.page != "raw" or export.filtered or b"\n" not in bytes(export.body[:1 << 20]):
        return None
    offset, lines = len(head), head.count(b"\n")
    for chunk in it:
        check_utf8(chunk, name, offset)
        # one vectorised pass finds the chunk's line ends, chatter and any quote that does not close
        found = scan_lines(chunk)
        if (len(chunk) and bytes(chunk[:1]) not in ROW_STARTS) or found.chatter:
            return None
        # the chunk's lines checked as a body whose first line is file line lines + 1
        check_lines(chunk, 0, len(chunk), name, (lines + 1).__add__, found)
        offset += len(chunk)
        lines += found.ends
    skipped = len(BOM) if head.startswith(BOM) else 0
    return Export(name=name, page="raw", header=export.header, body=export.body, header_line=export.header_line,
                  messages=export.messages, file_offset=skipped + export.body_start)
