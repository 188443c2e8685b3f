"""markdown-it-py plugin: note where a report holds raw HTML, so its Markdown twin can escape it.

The HTML page parses a report with raw HTML off, so ``<img onerror=…>`` is text there. GitHub
reads the twin with raw HTML on. The plugin's inline rule sits where markdown-it would try raw
HTML (code spans and autolinks have already taken their text) and notes each ``<`` it reaches;
``escape_raw_html`` writes each of those as ``&lt;`` in the source lines, so the twin
shows them as text, as the page does. Once every such ``<`` is escaped, raw HTML on or off
parses the twin the same way.

Links are nearly so: the page shows as text a link or image whose address markdown-it refuses
(``javascript:``, ``vbscript:``, ``file:``, ``data:`` but images), and brackets nested deeper
than markdown-it parses, where another reader may find a link. In a text that could hold such
an address, the plugin notes each ``[`` it reaches (code spans and autolinks have taken theirs)
that opens no link or image on the page, and the twin has those as ``&#91;``: it shows the same
text, and no reader makes a link the page did not. So has a reference definition of a refused
address: another reader would take it, and the first definition of a name wins.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.rules_block import StateBlock, reference
from markdown_it.rules_inline import StateInline, image, link
from markdown_it.token import Token

NOTED = "ikreport_lt"  # env key: (inline text, '<' or '[') -> ordinals of that char in it the twin escapes
COUNTED = "ikreport_lt_counted"  # env key: (inline text, char) -> (position, that char before it) last noted
NOTED_DEFINITIONS = "ikreport_refused_definitions"  # env key: lines that open a definition of a refused address
REFUSABLE_TEXTS = "ikreport_refusable"  # env key: text -> whether REFUSABLE is in it
# what a text holding an address markdown-it refuses has in it: a scheme's end, or an entity or
# escape that may spell one (a refusable scheme's letters cannot be escapes)
REFUSABLE = re.compile(r"(?i)(?:script|file|data)\s*(?::|\\:|&colon;)|&#")
CITATION = "[ev:"  # a citation's opening: never escaped (the twin resolves it)
# what an escaped character becomes: an entity, not a backslash, which GFM's bare-URL autolinks
# take into the URL before it (https://e.com\\<img …> left the '<' raw)
ENTITY = {"<": "&lt;", "[": "&#91;"}
# A '<' first on a line (after quote markers) opens an HTML block when raw HTML is on, even
# inside a code span that spans lines or a link reference definition: blocks are read first.
LINE_START_LT = re.compile(r"^[ \t>]*<")
AUTOLINK = re.compile(r"<[A-Za-z][A-Za-z0-9.+-]{1,31}:[^<>\x00-\x20]*>|<[^<>@\s\\]+@[^<>\s\\]+>")


def _note(state: StateInline, char: str, pos: int) -> None:
    """Note the ``char`` at ``pos`` of the inline text by its ordinal among the text's ``char``."""
    # counted on from the last one noted in this text (counted from its start each time, a
    # report made of '<' took time growing as its size squared)
    at, before = state.env.setdefault(COUNTED, {}).get((state.src, char), (0, 0))
    before = before + state.src.count(char, at, pos) if at <= pos else state.src.count(char, 0, pos)
    state.env[COUNTED][(state.src, char)] = (pos, before)
    # keyed by the text itself: the inline parse of equal texts is equal, whichever token
    state.env.setdefault(NOTED, {}).setdefault((state.src, char), set()).add(before)


def _note_lt(state: StateInline, silent: bool) -> bool:
    if state.src[state.pos] == "<":
        _note(state, "<", state.pos)
    return False  # only notes; the next rules parse the '<' as the page does


def _note_link(state: StateInline, silent: bool) -> bool:
    at = state.pos
    opening = at + 1 if state.src.startswith("![", at) else at
    if state.src[opening] != "[" or not _refusable(state):  # most texts name no such address
        return False
    if not (image if opening > at else link)(state, True):  # no link here on the page: none in the twin
        _note(state, "[", opening)
    state.pos = at
    return False  # only notes; the next rules parse it as the page does


def _note_refused_definition(state: StateBlock, start: int, end: int, silent: bool) -> bool:
    if _refusable(state) and not reference(state, start, end, True) and _any_address(state.md, lambda: reference(state, start, end, True)):
        # another reader takes it, and the first definition of a name wins: a later one the page took would not
        state.env.setdefault(NOTED_DEFINITIONS, set()).add(start)
    return False


def _any_address(md: MarkdownIt, parse: Callable[[], bool]) -> bool:
    """What ``parse`` gives when markdown-it takes every address."""
    kept = md.validateLink
    md.validateLink = lambda url: True  # type: ignore[method-assign]
    try:
        return parse()
    finally:
        md.validateLink = kept  # type: ignore[method-assign]


def _refusable(state: StateInline | StateBlock) -> bool:
    """Whether the text may hold an address markdown-it refuses: looked at once per text."""
    known = state.env.setdefault(REFUSABLE_TEXTS, {})
    if state.src not in known:
        known[state.src] = bool(REFUSABLE.search(state.src))
    return bool(known[state.src])


def raw_html_plugin(md: MarkdownIt) -> None:
    md.inline.ruler.before("html_inline", "ev_note_lt", _note_lt)
    md.inline.ruler.before("link", "ev_note_link", _note_link)
    md.block.ruler.before("reference", "ev_note_refused_definition", _note_refused_definition)


def escape_raw_html(lines: list[str], parses: list[tuple[list[Token], dict[str, Any]]]) -> list[str]:
    """``lines`` (the report, 0-based as token maps count) with an entity for every '<'
    that raw HTML could take in any of ``parses`` (tokens and env of one parse each: readers
    with and without GFM tables see different blocks in the same lines)."""
    escape: set[tuple[int, int]] = set()
    for tokens, env in parses:
        noted = env.get(NOTED, {})
        escape |= _raw_html_at(lines, tokens, {text: n for (text, char), n in noted.items() if char == "<"}, "<")
        escape |= _raw_html_at(lines, tokens, {text: n for (text, char), n in noted.items() if char == "["}, "[")
        escape |= {(i, lines[i].find("[")) for i in env.get(NOTED_DEFINITIONS, ()) if "[" in lines[i]}
    columns: dict[int, list[int]] = {}
    for i, col in sorted(escape):
        columns.setdefault(i, []).append(col)
    out = list(lines)
    for i, cols in columns.items():  # each line made once, not once per '<' in it
        parts, at = [], 0
        for col in cols:  # the backslash that escapes one already goes too: the entity says the same
            parts += [lines[i][at:col - 1 if _escaped(lines[i], col) else col], ENTITY[lines[i][col]]]
            at = col + 1
        out[i] = "".join(parts) + lines[i][at:]
    return out


def refusable(env: dict[str, Any]) -> bool:
    """Whether a parse with ``env`` met a text that could hold a refused address."""
    return any(env.get(REFUSABLE_TEXTS, {}).values())


def _raw_html_at(lines: list[str], tokens: list[Token], noted: dict[str, set[int]], char: str) -> set[tuple[int, int]]:
    """(line, column) of each '<' or '[' one parse noted (never a citation's '['). The inline
    text of a token holds the same
    ``char`` in the same order as its source lines (only indentation, quote and list markers,
    table pipes and heading marks are stripped), so the n-th of the text is the n-th not yet
    claimed in its lines."""
    claimed: dict[int, int] = {}  # line -> first column not yet matched to a token
    found: dict[int, list[int]] = {}  # line -> the columns of char in it
    escape: set[tuple[int, int]] = set()
    verbatim = {i for t in tokens if t.type in ("fence", "code_block", "front_matter") and t.map for i in range(*t.map)}
    for i, line in enumerate(lines):
        m = LINE_START_LT.match(line)
        if char == "<" and m and i not in verbatim and not AUTOLINK.match(line, m.end() - 1):
            escape.add((i, m.end() - 1))
    for token in tokens:
        if token.type != "inline" or not token.map:
            continue
        first, end = token.map
        count = token.content.count(char)
        if not count:
            continue
        pool: list[tuple[int, int]] = []  # the next count of char in its lines (one line, a table row, has many cells)
        for i in range(first, end):
            if i not in found:
                found[i] = [col for col, ch in enumerate(lines[i]) if ch == char]
            at = bisect.bisect_left(found[i], claimed.get(i, 0))
            pool += [(i, col) for col in found[i][at:at + count - len(pool)]]
            if len(pool) == count:
                break
        if len(pool) < count:  # cannot happen by the rule above; if it does, escape them all
            escape.update(pool)
            continue
        picked = noted.get(token.content, set())
        for n, (i, col) in enumerate(pool):
            claimed[i] = col + 1
            if n in picked and not lines[i].startswith(CITATION, col):
                escape.add((i, col))
    return escape


def _escaped(line: str, col: int) -> bool:
    """True when an odd run of backslashes already escapes the character at ``col``."""
    run = 0
    while run < col and line[col - 1 - run] == "\\":
        run += 1
    return run % 2 == 1
