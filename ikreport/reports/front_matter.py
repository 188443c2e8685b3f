"""Limits on a report's YAML front matter, checked on the YAML event stream (pure).

Input: the YAML text between a report's opening ``---`` line (line 1 of the file) and its
closing ``---``. Front matter holds a title, a summary and a list of record ids, so it needs
no anchors, no aliases and little nesting. Checking events (``yaml.parse``) comes before any
object is built: an alias bomb ("billion laughs") is refused at its first alias, before it
can expand, and deep nesting before the recursive composer sees it.
"""

from __future__ import annotations

import yaml

MAX_FRONT_MATTER_BYTES = 64 * 1024
MAX_DEPTH = 8  # mappings and lists inside one another; real front matter uses 2
FIRST_LINE = 2  # YAML's line 0 is the file's line 2, after the opening '---'

_OPEN = (yaml.MappingStartEvent, yaml.SequenceStartEvent)
_CLOSE = (yaml.MappingEndEvent, yaml.SequenceEndEvent)


def front_matter_problem(text: str) -> tuple[int, str] | None:
    """(file line, what is wrong) for the first thing in ``text`` over the limits, or None.
    Raises yaml.YAMLError where the text is not YAML (the caller reports that)."""
    size = len(text.encode("utf-8"))
    if size > MAX_FRONT_MATTER_BYTES:
        return FIRST_LINE, (f"front matter is {size:,} bytes, over the limit of {MAX_FRONT_MATTER_BYTES:,}; "
                            "keep it to title, summary and records")
    depth = 0
    for event in yaml.parse(text, Loader=yaml.SafeLoader):
        line = (event.start_mark.line if event.start_mark else 0) + FIRST_LINE
        anchor = getattr(event, "anchor", None)  # only scalars and collections carry one
        if isinstance(event, yaml.AliasEvent):
            return line, f"front matter uses a YAML alias (*{anchor}); write the value out instead"
        if anchor is not None:
            return line, f"front matter uses a YAML anchor (&{anchor}); write the value out instead"
        if isinstance(event, _OPEN):
            depth += 1
            if depth > MAX_DEPTH:
                return line, f"front matter is nested more than {MAX_DEPTH} levels deep; flatten it"
        elif isinstance(event, _CLOSE):
            depth -= 1
    return None
