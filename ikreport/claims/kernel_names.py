"""Short, readable forms of C++ kernel names (the full name is always shown beside them), and
of record titles: a long text is cut only at a word or template boundary, with an ellipsis."""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache

MAX_SHORT = 48
MAX_TITLE = 100
PROFILE_TITLE = "ncu profile: "  # the automatic title of an ncu-profile record (collect/ncu_*.py)
# where a cut may fall: after a space, a comma, an underscore, an opening bracket (never inside
# an identifier's letters and digits)
BOUNDARY = re.compile(r"[\s,_<(\[:]")


def cut(text: str, limit: int) -> str:
    """``text`` within ``limit`` characters: as it is when it fits, else cut at the last word
    or template boundary before the limit with "…" (never mid-identifier)."""
    if len(text) <= limit:
        return text
    room = text[: limit - 1]
    ends = [m.end() if m.group().isspace() or m.group() == "," else m.start() for m in BOUNDARY.finditer(room)]
    at = max((e for e in ends if e > 0), default=0)
    head = room[:at].rstrip(" ,_:") if at else room  # one long identifier: nothing better than its start
    return head + "…"


def _strip(name: str) -> str:
    """The name without its return type (``void ``, ``enable_if<…>::type ``)."""
    s = name.strip()
    if s.startswith("void "):
        s = s[5:]
    if s.startswith("enable_if<"):
        depth = 0
        for i, ch in enumerate(s):
            depth += (ch == "<") - (ch == ">")
            if depth == 0 and s.startswith("::type ", i + 1):
                return s[i + len("::type ") + 1:]
    return s


# a page names the same kernels again and again (tables, charts, claims), and so do its neighbours
@lru_cache(maxsize=4096)
def short_kernel(name: str) -> str:
    """'void flash_fwd_kernel<Traits<128, 64>, true>(Params)' -> 'flash_fwd_kernel<…>'."""
    s = _strip(name)
    # Cut the parameter list: the first '(' at template depth 0.
    depth = 0
    out = []
    for ch in s:
        if ch == "<":
            if depth == 0:
                out.append("<…>")
            depth += 1
        elif ch == ">":
            depth = max(0, depth - 1)
        elif depth == 0:
            if ch == "(" and out:
                break
            out.append(ch)
    short = "".join(out).strip() or s
    # Numba mangles a hash into brackets: copy_blocked[v1,cw51cXTLSUwv1sD…]
    if "[" in short and len(short) > 24:
        short = short[: short.index("[")] + "[…]"
    return cut(short, MAX_SHORT)


def first_argument_kernel(name: str, limit: int = MAX_SHORT) -> str:
    """The short name with its first template argument, when that is a plain name or number:
    'Kernel2<cutlass_80_wmma_tensorop_bf16…>', 'window_kernel<1>'. The argument is cut at a
    word boundary to fit ``limit``; a nested template stays '<…>'."""
    short = short_kernel(name)
    if not short.endswith("<…>"):
        return short
    s = _strip(name)
    open_at = s.find("<")
    arg = re.match(r"[A-Za-z0-9_:.\-]+", s[open_at + 1:])
    if open_at < 0 or arg is None:
        return short
    rest = s[open_at + 1 + arg.end():][:1]
    if rest == "<":
        return short
    # more arguments follow, or the name was cut here (titles made before kept 60 characters)
    more = {",": ", …", "": "…", "…": "…"}.get(rest, "")
    head = short[: -len("<…>")]
    room = limit - len(head) - len(more) - 2
    if room < 8:
        return short
    shown = cut(arg.group(), room)
    if shown.endswith("…"):  # one ellipsis says that something is left out
        more = ""
    return f"{head}<{shown.rstrip('_') if more == '…' else shown}{more}>"


def profile_title(kernel: str | None) -> str:
    """The automatic title of a profile: its longest kernel's short name."""
    return PROFILE_TITLE + (first_argument_kernel(kernel) if kernel else "no kernels")


# A chart label's most characters: what a 360 px axis shows whole, so the chart's renderer
# never truncates a label itself (measuring it again and again, the bulk of a chart's cost).
MAX_LABEL = 48


def distinct_kernel_labels(names: list[str]) -> list[str]:
    """Short names for a chart's bars, no two alike and none over MAX_LABEL characters (cut at
    a boundary): the short name, with its first template argument where two short names
    collide, and the rank ('#3') where they still do."""
    labels = [cut(short_kernel(n), MAX_LABEL) for n in names]
    for attempt in ("first argument", "rank"):
        seen: dict[str, int] = {}
        for label in labels:
            seen[label] = seen.get(label, 0) + 1
        labels = [label if seen[label] == 1
                  else cut(first_argument_kernel(names[i]), MAX_LABEL) if attempt == "first argument"
                  else f"{label} #{i + 1}" for i, label in enumerate(labels)]
    return labels


def short_title(title: str, limit: int = MAX_TITLE) -> str:
    """A record's title as pages show it: an automatic profile title from the short kernel name
    (titles made before were cut mid-name at 60 characters), any title cut at a boundary."""
    if title.startswith(PROFILE_TITLE) and any(c in title for c in "(<["):
        title = PROFILE_TITLE + first_argument_kernel(title[len(PROFILE_TITLE):])
    return cut(title, limit)


def visible_titles(titles: Mapping[str, str], limit: int = MAX_TITLE) -> dict[str, str]:
    """Each record's short title; where two records would show the same one, each is followed
    by its short id, so no page shows two records under one title."""
    short = {t: short_title(t, limit) for t in set(titles.values())}  # profiles of one kernel share a title
    shown = {rid: short[t] for rid, t in titles.items()}
    count: dict[str, int] = {}
    for text in shown.values():
        count[text] = count.get(text, 0) + 1
    return {rid: f"{text} ({rid[:8]})" if count[text] > 1 else text for rid, text in shown.items()}


CAST = re.compile(r"\((?:bool|int|unsigned int|long|unsigned long|char|short)\)(?=-?\d)")
QUALIFIER = re.compile(r"\b[A-Za-z_]\w*::(?!type\b)")


@lru_cache(maxsize=4096)
def match_key(name: str) -> str:
    """One kernel's name as two tools print it alike: ncu's 'void Kernel2<…>(Params)' and nsys's
    'void cutlass::Kernel2<…>(T1::Params)' are one kernel. The return type, the parameter list,
    namespace qualifiers, value casts ('(bool)1' is '1') and spaces are left out; the template
    arguments, which tell instances apart, are kept."""
    s = _strip(re.sub(r"^std::", "", name.strip()))
    depth = 0
    for i, ch in enumerate(s):
        depth += (ch == "<") - (ch == ">")
        if ch == "(" and depth == 0 and i > 0:
            s = s[:i]
            break
    s = CAST.sub("", s)
    s = QUALIFIER.sub("", s)
    return "".join(s.split())
