"""markdown-it-py plugin: ``[ev:ID]`` cites a record; ``[ev:ID path.to.value]`` inserts a value.

ID is a record id or a unique prefix of at least 8 hex digits. A citation renders as a link
``[ab12cd34]`` to the record's page; a value renders formatted with its unit, then the
citation, and a superseded record is marked with the record that replaces it. Every paragraph
that cites records is wrapped with an aside: the first time a record is cited, its limitations
are listed there; later asides link to that list (a page states each limitation once).

Resolution is done by a ``Resolver`` passed in ``env["ikreport"]``; problems are collected
as findings (never raised mid-render) so that ``check`` can list them all.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from html import escape
from typing import Any, Protocol

from markdown_it import MarkdownIt
from markdown_it.rules_core import StateCore
from markdown_it.rules_inline import StateInline
from markdown_it.token import Token

from ikreport.errors import AmbiguousIdError, PathError, UnknownIdError
from ikreport.reports.findings import Finding
from ikreport.formatting import distinct_digits, plural
from ikreport.reports.values import PAGE_PRECISION, precision_unit

CITE_RX = re.compile(r"\[ev:([0-9a-fA-F]{8,64})(?:[ \t]+([A-Za-z0-9_.\-]+))?\]")
OPENING = "[ev:"


@dataclass
class Citation:
    """One ``[ev:…]`` citation as written, and the record (and value) it resolved to."""

    line: int  # 1-based
    source: str  # exactly as written
    record_id: str | None
    path: str | None
    value: str | None = None


@dataclass
class RenderState:
    """What one report's rendering found: citations, cited paragraphs, findings."""

    citations: list[Citation] = field(default_factory=list)
    paragraphs: list[tuple[int, int, list[str]]] = field(default_factory=list)  # (first line, end line, ids)
    findings: list[Finding] = field(default_factory=list)


class Resolver(Protocol):
    """What the citation rules ask of the records: ids, values, links, titles, successors."""

    def resolve(self, prefix: str) -> str: ...  # raises UnknownIdError or AmbiguousIdError
    def raw(self, record_id: str, path: str) -> Any: ...  # raises PathError
    def value(self, record_id: str, path: str, digits: int | None = None) -> str: ...  # raises PathError
    def is_null(self, record_id: str, path: str) -> bool: ...  # the record holds null there
    def href(self, record_id: str) -> str: ...
    def title(self, record_id: str) -> str: ...
    def limitations(self, record_id: str) -> list[str]: ...
    def superseded_by(self, record_id: str) -> str | None: ...


def _inline_rule(state: StateInline, silent: bool) -> bool:
    if not state.src.startswith(OPENING, state.pos):
        return False
    m = CITE_RX.match(state.src, state.pos)
    end = m.end() if m else (state.src.find("]", state.pos) + 1 or len(state.src))
    if not silent:
        token = state.push("ev_cite", "", 0)
        token.meta = {"prefix": m.group(1).lower() if m else None, "path": m.group(2) if m else None,
                      "line_offset": state.src.count("\n", 0, state.pos), "source": state.src[state.pos:end]}
    state.pos = end
    return True


def _core_rule(state: StateCore) -> None:
    env = state.env
    resolver: Resolver = env["ikreport"]
    found: RenderState = env["ikreport_state"]
    line_base = env.get("ikreport_line_base", 0)
    tokens = state.tokens
    valued: list[tuple[Citation, dict[str, Any]]] = []  # values whose precision the page chooses
    for i, token in enumerate(tokens):
        if token.type != "inline" or not token.children:
            continue
        first_line = (token.map[0] if token.map else 0) + line_base
        cited: list[str] = []
        for child in token.children:
            if child.type != "ev_cite":
                continue
            meta = child.meta
            line = first_line + meta["line_offset"] + 1
            citation = Citation(line=line, source=meta["source"], record_id=None, path=meta["path"])
            found.citations.append(citation)
            if meta["prefix"] is None:
                found.findings.append(Finding("IK105", line, f"malformed citation {meta['source']!r}; "
                                              "write [ev:ID] or [ev:ID path.to.value] with an 8+ hex digit ID"))
                continue
            try:
                record_id = resolver.resolve(meta["prefix"])
            except (UnknownIdError, AmbiguousIdError) as exc:
                code = "IK104" if isinstance(exc, AmbiguousIdError) else "IK103"
                found.findings.append(Finding(code, line, str(exc)))
                continue
            citation.record_id = record_id
            meta["id"] = record_id
            if meta["path"]:
                try:
                    citation.value = meta["value"] = resolver.value(record_id, meta["path"])
                    valued.append((citation, meta))
                except PathError as exc:
                    found.findings.append(Finding("IK106", line, str(exc)))
                else:
                    if resolver.is_null(record_id, meta["path"]):
                        found.findings.append(Finding("IK203", line, f"record {record_id[:8]}: {meta['path']} is null "
                                                      "(not measured or not reported), so the page shows n/a"))
            newer = resolver.superseded_by(record_id)
            if newer:
                found.findings.append(Finding("IK201", line, f"cites {record_id[:8]}, which {newer[:8]} supersedes"))
            if record_id not in cited:
                cited.append(record_id)
        if cited and i > 0 and tokens[i - 1].type == "paragraph_open":
            tokens[i - 1].meta["cites"] = cited
            close = next(j for j in range(i + 1, len(tokens)) if tokens[j].type == "paragraph_close")
            tokens[close].meta["cites"] = cited
            span = token.map or [0, 1]
            found.paragraphs.append((span[0] + line_base + 1, span[1] + line_base, cited))
    _one_precision(resolver, valued)


def _one_precision(resolver: Resolver, valued: list[tuple[Citation, dict[str, Any]]]) -> None:
    """Format the page's GB/s values, and its durations, at the one precision at which no two
    different ones read the same: 1,309 and 1,315 GB/s from two records
    are never both "1.31 TB/s" in one report."""
    by_unit: dict[str, list[tuple[Citation, dict[str, Any], float]]] = {}
    for citation, meta in valued:
        raw = resolver.raw(meta["id"], meta["path"])
        unit = precision_unit(meta["path"], raw)
        if unit is not None:
            by_unit.setdefault(unit, []).append((citation, meta, raw))
    for unit, values in by_unit.items():
        digits = distinct_digits([raw for _, _, raw in values], PAGE_PRECISION[unit])
        if digits is None:
            continue
        for citation, meta, _ in values:
            citation.value = meta["value"] = resolver.value(meta["id"], meta["path"], digits)


def _render_cite(self: Any, tokens: list[Token], idx: int, options: Any, env: dict[str, Any]) -> str:
    meta = tokens[idx].meta
    if "id" not in meta:
        return f'<span class="ev-error">{escape(meta["source"])}</span>'
    resolver: Resolver = env["ikreport"]
    rid = meta["id"]
    link = (f'<a class="cite" href="{escape(resolver.href(rid))}" title="{escape(resolver.title(rid))}">'
            f"[{rid[:8]}]</a>")
    newer = resolver.superseded_by(rid)
    if newer:
        link += (f' <span class="superseded">superseded by <a href="{escape(resolver.href(newer))}" '
                 f'title="{escape(resolver.title(newer))}">[{newer[:8]}]</a></span>')
    if meta.get("path"):
        return f'<span class="ev-value">{escape(meta.get("value", "n/a"))}</span> {link}'
    return link


def first_said(said: dict[str, str], record_id: str, items: list[str]) -> tuple[list[str], dict[str, list[str]]]:
    """A record's limitations not yet listed on the page, and the others by the record they were
    first listed for (two profiles from one importer share most of theirs); ``said`` maps each
    limitation listed so far to its record and learns this record's new ones."""
    fresh = [item for item in items if item not in said]
    same: dict[str, list[str]] = {}
    for item in items:
        if item in said:
            same.setdefault(said[item], []).append(item)
    for item in fresh:
        said[item] = record_id
    return fresh, same


def limitations_anchor(record_id: str) -> str:
    """The id of the place on a report page where a record's limitations are listed."""
    return f"lim-{record_id[:8]}"


def paragraph_id(cited: list[str], text_hint: str) -> str:
    """A stable HTML id for a cited paragraph, from its text and the records it cites."""
    return "c-" + hashlib.sha256(("report\x1f" + text_hint + "\x1f" + ",".join(cited)).encode()).hexdigest()[:12]


def _render_paragraph_open(self: Any, tokens: list[Token], idx: int, options: Any, env: dict[str, Any]) -> str:
    token = tokens[idx]
    cited = token.meta.get("cites")
    if not cited:
        return self.renderToken(tokens, idx, options, env)
    hint = tokens[idx + 1].content if idx + 1 < len(tokens) else ""
    return (f'<div class="claim-group"><div class="claims"><p class="claim" id="{paragraph_id(cited, hint)}">')


def _render_paragraph_close(self: Any, tokens: list[Token], idx: int, options: Any, env: dict[str, Any]) -> str:
    cited = tokens[idx].meta.get("cites")
    if not cited:
        return self.renderToken(tokens, idx, options, env)
    resolver: Resolver = env["ikreport"]
    stated: set[str] = env.setdefault("ikreport_stated", set())  # paragraphs render in page order
    parts = ['</p></div><aside class="limitations" aria-label="Limitations of the cited evidence">']
    for rid in cited:
        head = f'What <a href="{escape(resolver.href(rid))}">[{rid[:8]}]</a> does not show'
        if rid in stated:
            parts.append(f'<p class="lim-head">{head}: <a class="lim-see" href="#{limitations_anchor(rid)}">'
                         "listed where it is first cited</a></p>")
            continue
        stated.add(rid)
        fresh, same = first_said(env.setdefault("ikreport_said", {}), rid, resolver.limitations(rid))
        parts.append(f'<p class="lim-head" id="{limitations_anchor(rid)}">{head}</p><ul>')
        parts.extend(f"<li>{escape(item)}</li>" for item in fresh)
        parts.extend(f'<li class="lim-same">{plural(len(items), "limitation", "limitations")} as listed for <a href="#{limitations_anchor(other)}">'
                     f"[{other[:8]}]</a></li>" for other, items in same.items())
        parts.append("</ul>")
    parts.append("</aside></div>\n")
    return "".join(parts)


def citation_plugin(md: MarkdownIt) -> None:
    """Add the citation rules and renderers to ``md`` (a markdown-it plugin)."""
    md.inline.ruler.before("link", "ev_cite", _inline_rule)
    md.core.ruler.after("inline", "ev_resolve", _core_rule)
    md.add_render_rule("ev_cite", _render_cite)
    md.add_render_rule("paragraph_open", _render_paragraph_open)
    md.add_render_rule("paragraph_close", _render_paragraph_close)
