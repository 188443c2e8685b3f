"""Fixed formatting for every page and message, so output is deterministic; and the one
way text is made safe for a Markdown twin."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable


def short(record_id: str) -> str:
    """The 8-digit form shown in citations: [ab12cd34]."""
    return record_id[:8]


def plural(n: int, one: str, many: str) -> str:
    """'1 launch', '11 launches'."""
    return f"{n} {one if n == 1 else many}"


def with_article(word: str) -> str:
    """'an environment', 'a comparison', 'an ncu-profile': "an" before a vowel sound, which a word
    spelled as letters (ncu, HBM, FP8) starts with too: f h l m n r x before a consonant."""
    w = word.lower()
    spelled = len(w) > 1 and w[0] in "fhlmnrx" and w[1] not in "aeiouhlrwy"
    return f"{'an' if w[:1] in tuple('aeiou') or spelled else 'a'} {word}"


def as_sentence(text: str) -> str:
    """``text`` ending in one full stop (or the ! or ? it has), whatever its writer ended it with."""
    text = text.rstrip()
    return text if text.endswith((".", "!", "?")) else f"{text}."


def fmt_pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1f}%"


def _sig(value: float, digits: int) -> str:
    """``value`` to ``digits`` significant digits, never in exponent form and never dropping
    integer digits (812.4 to 2 digits is "812")."""
    if value == 0:
        return "0"
    places = max(0, digits - 1 - math.floor(math.log10(abs(value))))
    if places and abs(float(f"{value:.{places}f}")) >= 10 ** (digits - places):  # rounded up a power of ten
        places -= 1  # (99.97 to 3 digits is "100", not "100.0")
    return f"{value:.{places}f}"


def fmt_duration_us(value: float | None, digits: int | None = None) -> str:
    """Microseconds in the unit a reader expects, to 3 significant digits, zeros kept (12.0 µs,
    never 12 µs beside 12.3 µs): 812 ns, 23.4 µs, 2.10 ms, 1.25 s. With ``digits``, that many
    (see distinct_digits)."""
    if value is None:
        return "n/a"
    for scale, unit in ((1e6, "s"), (1e3, "ms"), (1, "µs")):
        if value >= scale:
            return f"{_sig(value / scale, digits or 3)} {unit}"
    return f"{_sig(value * 1e3, digits or 3)} ns"


def fmt_gbs(value: float | None, digits: int | None = None) -> str:
    """GB/s, as TB/s from 1,000 GB/s: 3 significant digits there, one decimal below; with
    ``digits``, that many significant digits in either unit (see distinct_digits)."""
    if value is None:
        return "n/a"
    if digits is not None:
        return f"{_sig(value / 1e3, digits)} TB/s" if value >= 1e3 else f"{_sig(value, digits)} GB/s"
    return f"{value / 1e3:.2f} TB/s" if value >= 1e3 else f"{value:.1f} GB/s"


MAX_DIGITS = 8


def distinct_digits(values: Iterable[float | None], fmt: Callable[[float, int | None], str]) -> int | None:
    """The precision at which ``fmt`` shows every different value of ``values`` differently:
    None (its usual form) when that already does, else the fewest significant digits that do.
    One precision for every value of a page keeps their order: rounding at one precision never
    swaps two values, so a "best" is never shown below an "average"."""
    distinct = sorted({float(v) for v in values if v is not None})
    for digits in (None, *range(4, MAX_DIGITS + 1)):
        if len({fmt(v, digits) for v in distinct}) == len(distinct):
            return digits
    return MAX_DIGITS


def fmt_flops(value: float | None) -> str:
    """FLOP/s to three significant digits in the unit that fits: 54.4 TFLOP/s, 958 GFLOP/s."""
    if value is None:
        return "n/a"
    for scale, unit in ((1e15, "PFLOP/s"), (1e12, "TFLOP/s"), (1e9, "GFLOP/s"), (1e6, "MFLOP/s")):
        if value >= scale:
            return f"{value / scale:.3g} {unit}"
    return f"{value:.3g} FLOP/s"


def fmt_hz(value: float | None) -> str:
    """A clock in Hz as GHz to two decimals (1.10 GHz), MHz below one GHz (877 MHz)."""
    if value is None:
        return "n/a"
    return f"{value / 1e9:.2f} GHz" if value >= 1e9 else f"{value / 1e6:.0f} MHz"


def fmt_number(value: float | None) -> str:
    if value is None:
        return "n/a"
    if float(value).is_integer():
        return f"{int(value):,}"
    return f"{value:,.2f}"


# Every character that can start Markdown or HTML markup mid-line (``&`` starts an entity,
# ``~`` GFM strikethrough), the backslash first so that the escapes added after it stay single;
# and a list marker, which starts markup where a value starts a line.
MD_SPECIAL = "\\`*_[]<>|#&~"
MD_LIST_MARKER = re.compile(r"^(?:([-+])|(\d+)([.)]))(?=\s|$)")
BACKTICKS = re.compile(r"`+")


class Markdown(str):
    """Text already made safe for a Markdown twin (by md_text or md_code): the .md templates'
    finalize passes it through and escapes every other value. A str, not markupsafe.Markup,
    so that it is still HTML-escaped if it ever reaches an .html template."""


def md_text(value: object) -> Markdown:
    """Text safe inside Markdown, on one line: characters that would become markup are
    backslash-escaped (CommonMark renders an escaped ASCII punctuation character as itself)."""
    if isinstance(value, Markdown):
        return value
    text = " ".join(str(value).split())
    for special in MD_SPECIAL:  # str.replace at C speed: a regex's replacement template cost more
        if special in text:
            text = text.replace(special, "\\" + special)
    if text and text[0] in "-+0123456789":
        text = MD_LIST_MARKER.sub(_list_marker, text)
    return Markdown(text)


def _list_marker(m: re.Match[str]) -> str:
    return f"\\{m[1]}" if m[1] else f"{m[2]}\\{m[3]}"


def md_code(value: object, table: bool = True) -> Markdown:
    """A code span for a kernel name. Nothing is interpreted inside a code span, so only its
    end matters: the fence is one backtick longer than the longest run in the text (a span
    closes only on a run of exactly its fence's length), padded with spaces when the text
    starts or ends with a backtick (CommonMark strips one space each side). In a table cell
    pipes are escaped (GFM splits cells before it reads code spans); outside one the escape
    would show, as a backslash in the name."""
    text = " ".join(str(value).split())
    text = text.replace("|", "\\|") if table else text
    if not text:
        return Markdown("")
    fence = "`" * (max((len(run) for run in BACKTICKS.findall(text)), default=0) + 1)
    pad = " " if text[0] == "`" or text[-1] == "`" else ""
    return Markdown(f"{fence}{pad}{text}{pad}{fence}")
