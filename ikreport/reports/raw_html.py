"""markdown-it-py plugin: note where a report holds raw HTML, so its Markdown twin can escape it.

The HTML page parses a report with raw HTML off, so ``<img onerror=…>`` is text there. GitHub
reads the twin with raw HTML on. The plugin's inline rule sits where markdown-it would try raw
HTML (code spans and autolinks have already taken their text) and notes each ``<`` it reaches;
``escape_raw_html`` puts a backslash before each of those in the source lines, so the twin
shows them as text, as the page does. Once every such ``<`` is escaped, raw HTML on or off
parses the twin the same way.

Links are the same story: the page shows as text a link or image whose address markdown-it
refuses (``javascript:``, ``vbscript:``, ``file:``, ``data:`` but images), and a reference
definition of one; a reader of the twin with no such check would link it. The plugin notes the
``[`` that opens each, and the twin has a backslash before it too.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.rules_block import StateBlock, reference
from markdown_it.rules_inline import StateInline, image, link
from markdown_it.token import Token

NOTED = "ikreport_lt"  # env key: (inline text, '<' or '[') -> ordinals of those in it the twin escapes
COUNTED = "ikreport_lt_counted"  # env key: (inline text, char) -> (position, that char before it) last noted
NOTED_DEFINITIONS = "ikreport_refused_definitions"  # env key: lines that open a definition of a refused address
# what an address markdown-it refuses has in it (scheme, or an entity or escape that may spell one)
REFUSABLE_TEXTS = "ikreport_refusable"  # env key: text -> whether REFUSABLE is in it
REFUSABLE = re.compile(r"(?i)script|file|data|[&\\]")
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


def _note_refused_link(state: StateInline, silent: bool) -> bool:
    at = state.pos
    opening = at + 1 if state.src.startswith("![", at) else at
    if state.src[opening] != "[" or not _refusable(state):  # most texts name no such address
        return False
    rule = image if opening > at else link
    if _any_address(state.md, lambda: rule(state, True)):
        state.pos = at
        if not rule(state, True):  # a link only because of its address: the page shows it as text
            _note(state, "[", opening)
    state.pos = at
    return False  # only notes; the next rules parse it as the page does


def _note_refused_definition(state: StateBlock, start: int, end: int, silent: bool) -> bool:
    if _refusable(state) and not reference(state, start, end, True) \
            and _any_address(state.md, lambda: reference(state, start, end, True)):
        state.env.setdefault(NOTED_DEFINITIONS, set()).add(start)
    return False


def _refusable(state: StateInline | StateBlock) -> bool:
    """Whether the text may hold an address markdown-it refuses: looked at once per text."""
    known = state.env.setdefault(REFUSABLE_TEXTS, {})
    if state.src not in known:
        known[state.src] = bool(REFUSABLE.search(state.src))
    return bool(known[state.src])


def _any_address(md: MarkdownIt, parse: Callable[[], bool]) -> bool:
    """What ``parse`` gives when markdown-it takes every address."""
    kept = md.validateLink
    md.validateLink = lambda url: True  # type: ignore[method-assign]
    try:
        return parse()
    finally:
        md.validateLink = kept  # type: ignore[method-assign]


def raw_html_plugin(md: MarkdownIt) -> None:
    md.inline.ruler.before("html_inline", "ev_note_lt", _note_lt)
    md.inline.ruler.before("link", "ev_note_refused_link", _note_refused_link)
    md.block.ruler.before("reference", "ev_note_refused_definition", _note_refused_definition)


def escape_raw_html(lines: list[str], parses: list[tuple[list[Token], dict[str, Any]]]) -> list[str]:
    """``lines`` (the report, 0-based as token maps count) with a backslash before every '<'
    that raw HTML could take in any of ``parses`` (tokens and env of one parse each: readers
    with and without GFM tables see different blocks in the same lines)."""
    escape: set[tuple[int, int]] = set()
    for tokens, env in parses:
        noted = env.get(NOTED, {})
        escape |= _raw_html_at(lines, tokens, {text: n for (text, char), n in noted.items() if char == "<"}, "<")
        escape |= _raw_html_at(lines, tokens, {text: n for (text, char), n in noted.items() if char == "["}, "[")
        escape |= {(i, lines[i].index("[")) for i in env.get(NOTED_DEFINITIONS, ())}
    columns: dict[int, list[int]] = {}
    for i, col in sorted(escape):
        columns.setdefault(i, []).append(col)
    out = list(lines)
    for i, cols in columns.items():  # each line made once, not once per '<' in it
        parts, at = [], 0
        for col in cols:  # a backslash put before a '<' escapes nothing after it: the line as given says
            if not _escaped(lines[i], col):
                parts += [lines[i][at:col], "\\"]
                at = col
        out[i] = "".join(parts) + lines[i][at:]
    return out


def refused_links(env: dict[str, Any]) -> bool:
    """Whether a parse with ``env`` noted a link or definition of a refused address."""
    return bool(env.get(NOTED_DEFINITIONS)) or any(char == "[" for _, char in env.get(NOTED, {}))


def _raw_html_at(lines: list[str], tokens: list[Token], noted: dict[str, set[int]], char: str) -> set[tuple[int, int]]:
    """(line, column) of each ``char`` ('<' or '[') one parse noted. The inline text of a token
    holds the same ``char`` in the same order as its source lines (only indentation, quote and
    list markers, table pipes and heading marks are stripped), so the n-th of the text is the
    n-th not yet claimed in its lines."""
    claimed: dict[int, int] = {}  # line -> first column not yet matched to a token
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
        pool = [(i, col) for i in range(first, end) for col in _columns(lines[i], claimed.get(i, 0), char)]
        count = token.content.count(char)
        if len(pool) < count:  # cannot happen by the rule above; if it does, escape them all
            escape.update(pool)
            continue
        wanted = noted.get(token.content, set())
        for n, (i, col) in enumerate(pool[:count]):
            claimed[i] = col + 1
            if n in wanted:
                escape.add((i, col))
    return escape


def _columns(line: str, start: int, char: str) -> list[int]:
    return [col for col, ch in enumerate(line) if ch == char and col >= start]


def _escaped(line: str, col: int) -> bool:
    """True when an odd run of backslashes already escapes the character at ``col``."""
    run = 0
    while run < col and line[col - 1 - run] == "\\":
        run += 1
    return run % 2 == 1
