"""Bidirectional controls in record text shown as visible escapes (pure).

Unicode's bidirectional controls change the order in which the characters after them are
displayed, not the characters: a right-to-left override (U+202E) in a kernel name made a
claim's "4.9% … 4.176 ms" read "%9.4 … 671.4 sm" and its citation [345ddabe] read [ebadd543],
in a browser, on GitHub and in a terminal alike. An override runs to the end of its paragraph,
so it reaches past the text that holds it into ikreport's own words. No kernel name, title or
workload needs one, so every embedding, override and isolate control, and the three marks
(LRM, RLM, ALM, which reorder the numbers and punctuation beside them), is shown as
``\\u202e`` wherever record text is shown: site pages and their Markdown twins, charts, the
search index, and the terminal.
"""

from __future__ import annotations

import re
from typing import Any

# U+061C ARABIC LETTER MARK, U+200E/U+200F LEFT-TO-RIGHT and RIGHT-TO-LEFT MARK, U+202A-U+202E
# embeddings, overrides and their POP, U+2066-U+2069 isolates and their POP
BIDI_CONTROLS = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_EACH = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"


def _escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def show_bidi(text: str) -> str:
    """``text`` with every bidirectional control shown as a ``\\uNNNN`` escape."""
    # ASCII holds none; in a whole page a look for each control (a C search) costs a fifth of
    # the regex's pass, in a short text more than it
    if text.isascii() or (len(text) > 1024 and not any(c in text for c in _EACH)):
        return text
    return BIDI_CONTROLS.sub(_escape, text)


def show_bidi_in(value: Any) -> Any:
    """``value`` with ``show_bidi`` applied to every string in it (in dicts, lists and tuples)."""
    if isinstance(value, str):
        return show_bidi(value)
    if isinstance(value, dict):
        return {key: show_bidi_in(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(show_bidi_in(item) for item in value)
    return value
