"""Text from records made safe to print on a terminal (pure).

Record text comes from anyone who hands over an archive. A terminal acts on control
characters: ESC starts sequences that move the cursor, retitle the window or (OSC 52) write
the clipboard, and C1 characters (U+0080 to U+009F) are the same commands in one character.
So every C0 control but tab, DEL and every C1 control is shown as a visible escape
(``\\x1b``, ``\\x9b``) instead; an ESC-less sequence left behind is plain text. A terminal
also reorders text by Unicode's bidirectional controls, so they are shown as ``\\u202e``
(``ikreport/bidi.py``).
"""

from __future__ import annotations

import re

from ikreport.bidi import BIDI_CONTROLS, show_bidi

# C0 but tab, DEL, C1; newline and carriage return too, as one field is printed on one line
# and a line break in a title could forge a line of 'ikreport list'.
_CONTROL = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f]")
# In JSON text every C0 control is already escaped (RFC 8785 does it); DEL, C1 and the
# bidirectional controls are not.
_JSON_UNESCAPED = re.compile(f"[\x7f-\x9f]|{BIDI_CONTROLS.pattern}")


def safe_text(text: object) -> str:
    """``text`` with control characters shown as ``\\xNN`` escapes, bidirectional controls as
    ``\\uNNNN``."""
    return show_bidi(_CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", str(text)))


def safe_json(text: str) -> str:
    """JSON text with DEL, C1 and bidirectional controls written as ``\\uNNNN`` escapes: the
    same JSON value, now safe to print (inside a JSON string, the only place they can be)."""
    return _JSON_UNESCAPED.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
