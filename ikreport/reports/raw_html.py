"""markdown-it-py plugin: note where a report holds raw HTML, so its Markdown twin can escape it.

The HTML page parses a report with raw HTML off, so ``<img onerror=…>`` is text there. GitHub
reads the twin with raw HTML on. The plugin's inline rule sits where markdown-it would try raw
HTML (code spans and autolinks have already taken their text) and notes each ``<`` it reaches;
``escape_raw_html`` puts a backslash before each of those in the source lines, so the twin
shows them as text, as the page does. Once every such ``<`` is escaped, raw HTML on or off
parses the twin the same way.
"""

from __future__ import annotations

import re
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.rules_inline import StateInline
from markdown_it.token import Token

NOTED = "ikreport_lt"  # env key: inline text -> ordinals of the '<' in it that raw HTML could take
COUNTED = "ikreport_lt_counted"  # env key: inline text -> (position, '<' before it) last noted
# A '<' first on a line (after quote markers) opens an HTML block when raw HTML is on, even
# inside a code span that spans lines or a link reference definition: blocks are read first.
LINE_START_LT = re.compile(r"^[ \t>]*<")
AUTOLINK = re.compile(r"<[A-Za-z][A-Za-z0-9.+-]{1,31}:[^<>\x00-\x20]*>|<[^<>@\s\\]+@[^<>\s\\]+>")


def _note_lt(state: StateInline, silent: bool) -> bool:
    if state.src[state.pos] == "<":
        # the '<' before pos, counted on from the last one noted in this text (counted from its
        # start each time, a report made of '<' took time growing as its size squared)
        at, before = state.env.setdefault(COUNTED, {}).get(state.src, (0, 0))
        before = before + state.src.count("<", at, state.pos) if at <= state.pos else state.src.count("<", 0, state.pos)
        state.env[COUNTED][state.src] = (state.pos, before)
        # keyed by the text itself: the inline parse of equal texts is equal, whichever token
        state.env.setdefault(NOTED, {}).setdefault(state.src, set()).add(before)
    return False  # only notes; the next rules parse the '<' as the page does


def raw_html_plugin(md: MarkdownIt) -> None:
    md.inline.ruler.before("html_inline", "ev_note_lt", _note_lt)


def escape_raw_html(lines: list[str], parses: list[tuple[list[Token], dict[str, Any]]]) -> list[str]:
    """``lines`` (the report, 0-based as token maps count) with a backslash before every '<'
    that raw HTML could take in any of ``parses`` (tokens and env of one parse each: readers
    with and without GFM tables see different blocks in the same lines)."""
    escape: set[tuple[int, int]] = set()
    for tokens, env in parses:
        escape |= _raw_html_at(lines, tokens, env.get(NOTED, {}))
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


def _raw_html_at(lines: list[str], tokens: list[Token], noted: dict[str, set[int]]) -> set[tuple[int, int]]:
    """(line, column) of each '<' one parse noted. The inline text of a token holds the same
    '<' in the same order as its source lines (only indentation, quote and list markers,
    table pipes and heading marks are stripped), so the n-th '<' of the text is the n-th not
    yet claimed in its lines."""
    claimed: dict[int, int] = {}  # line -> first column not yet matched to a token
    escape: set[tuple[int, int]] = set()
    verbatim = {i for t in tokens if t.type in ("fence", "code_block", "front_matter") and t.map for i in range(*t.map)}
    for i, line in enumerate(lines):
        m = LINE_START_LT.match(line)
        if m and i not in verbatim and not AUTOLINK.match(line, m.end() - 1):
            escape.add((i, m.end() - 1))
    for token in tokens:
        if token.type != "inline" or not token.map:
            continue
        first, end = token.map
        pool = [(i, col) for i in range(first, end) for col in _lt_columns(lines[i], claimed.get(i, 0))]
        count = token.content.count("<")
        if len(pool) < count:  # cannot happen by the rule above; if it does, escape them all
            escape.update(pool)
            continue
        wanted = noted.get(token.content, set())
        for n, (i, col) in enumerate(pool[:count]):
            claimed[i] = col + 1
            if n in wanted:
                escape.add((i, col))
    return escape


def _lt_columns(line: str, start: int) -> list[int]:
    return [col for col, ch in enumerate(line) if ch == "<" and col >= start]


def _escaped(line: str, col: int) -> bool:
    """True when an odd run of backslashes already escapes the character at ``col``."""
    run = 0
    while run < col and line[col - 1 - run] == "\\":
        run += 1
    return run % 2 == 1
