"""Read a report (front matter + Markdown) and render it: HTML through the citation plugin,
and a Markdown twin in which each citation is resolved the same way."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from markdown_it import MarkdownIt
from mdit_py_plugins.front_matter import front_matter_plugin

from ikreport.errors import AmbiguousIdError, UnknownIdError
from ikreport.formatting import Markdown, md_text, plural
from ikreport.reports.citation_plugin import RenderState, citation_plugin, first_said
from ikreport.reports.findings import Finding
from ikreport.reports.front_matter import front_matter_problem
from ikreport.reports.raw_html import escape_raw_html, raw_html_plugin, refusable
from ikreport.reports.resolver import RecordResolver

SLUG_RX = re.compile(r"[^a-z0-9]+")
NEWLINE = re.compile(r"\r\n?|\n")  # where markdown-it breaks lines (str.splitlines breaks at U+2028, \x0c, \x85 too)


@dataclass(frozen=True)
class RenderedReport:
    """A report rendered for the site: its HTML, Markdown twin, citations and findings."""

    source: str  # the file, as given
    slug: str
    title: str
    summary: str
    html: str
    markdown: str
    cites: list[str]  # every record id cited, in order of first citation
    findings: list[Finding]


def markdown_parser(tables: bool = True) -> MarkdownIt:
    """The Markdown parser reports are read with: CommonMark, raw HTML off, citations on."""
    # Raw HTML in a report is shown as text, never passed through (reports may come from anyone);
    # raw_html_plugin notes where it is, so the Markdown twin shows it as text too.
    md = MarkdownIt("commonmark", {"html": False})
    if tables:
        md.enable("table")
    return md.use(front_matter_plugin).use(citation_plugin).use(raw_html_plugin)


def slug_of(path: Path) -> str:
    """The page name of a report file: its lowercased stem, with runs of other characters as '-'."""
    return SLUG_RX.sub("-", path.stem.lower()).strip("-") or "report"


def render_report(path: Path, text: str, resolver: RecordResolver) -> RenderedReport:
    """Render one report's text against the records; return its HTML, twin and findings."""
    md = markdown_parser()
    state = RenderState()
    env: dict[str, Any] = {"ikreport": resolver, "ikreport_state": state}
    tokens = md.parse(text, env)
    meta, front_end = _front_matter(tokens, state)
    html = md.renderer.render(tokens, md.options, env)
    # GitHub reads the twin with GFM tables, a plain CommonMark reader without; the two see
    # different blocks in some texts (a table row vs. an indented code line), so what either
    # could take as raw HTML is escaped.
    plain_env: dict[str, Any] = {"ikreport": resolver, "ikreport_state": RenderState()}
    plain = markdown_parser(tables=False).parse(text, plain_env)
    lines = _twin_lines(NEWLINE.split(text), [(tokens, env), (plain, plain_env)], resolver)
    for rid in meta["records"]:
        try:
            resolver.resolve(rid)
        except (UnknownIdError, AmbiguousIdError) as exc:
            state.findings.append(Finding("IK107", 1, f"front matter 'records': {exc}"))
    cites: list[str] = []
    for c in state.citations:
        if c.record_id and c.record_id not in cites:
            cites.append(c.record_id)
    if not cites and not any(f.is_error for f in state.findings):
        state.findings.append(Finding("IK202", 1, "the report cites no record"))
    return RenderedReport(
        source=str(path), slug=slug_of(path), title=meta["title"] or path.stem, summary=meta["summary"],
        html=html, markdown=_twin(lines, front_end, state, resolver), cites=cites,
        findings=sorted(state.findings, key=lambda f: (f.line, f.code)),
    )


def _twin_lines(lines: list[str], parses: list[tuple[list[Any], dict[str, Any]]], resolver: RecordResolver) -> list[str]:
    """``lines`` with raw HTML and links to refused addresses escaped (raw_html.py). A '[' escaped
    can let another pair of brackets make a link that no parse saw, so while '[' are escaped the
    twin is parsed again, both ways, until nothing more is."""
    escaped = escape_raw_html(lines, parses)
    while escaped != lines and any(refusable(env) for _, env in parses):
        lines, again = escaped, "\n".join(escaped)
        envs: list[dict[str, Any]] = [{"ikreport": resolver, "ikreport_state": RenderState()} for _ in range(2)]
        parses = [(markdown_parser(tables=tables).parse(again, e), e) for tables, e in zip((True, False), envs)]
        escaped = escape_raw_html(lines, parses)
    return escaped


def _front_matter(tokens: list[Any], state: RenderState) -> tuple[dict[str, Any], int]:
    meta: dict[str, Any] = {"title": None, "summary": "", "records": []}
    token = next((t for t in tokens if t.type == "front_matter"), None)
    if token is None:
        return meta, 0
    try:
        # Limits first, on the event stream: an alias bomb must never reach safe_load.
        over = front_matter_problem(token.content)
        if over is not None:
            state.findings.append(Finding("IK107", *over))
            return meta, token.map[1] if token.map else 0
        data = yaml.safe_load(token.content) or {}
    except yaml.YAMLError as exc:
        line = getattr(getattr(exc, "problem_mark", None), "line", 0) + 2
        state.findings.append(Finding("IK107", line, f"front matter is not valid YAML ({getattr(exc, 'problem', exc)})"))
        return meta, token.map[1] if token.map else 0
    except ValueError as exc:  # an integer of thousands of digits: past Python's int conversion limit
        state.findings.append(Finding("IK107", 2, f"front matter is not valid YAML ({exc})"))
        return meta, token.map[1] if token.map else 0
    if not isinstance(data, dict):
        state.findings.append(Finding("IK107", 2, "front matter must be a mapping (title: …, summary: …)"))
        data = {}
    # title and summary are text and records a list of ids. YAML reads `2024` or `37478998` as a
    # number, which is taken as its digits; a list or mapping would be shown as Python wrote it
    # (title: [1, 2] as the page title "[1, 2]") and an integer of thousands of digits cannot
    # be written at all, so those are refused.
    for key in ("title", "summary"):
        value = data.get(key)
        if value is not None and _text(value) is None:
            state.findings.append(Finding("IK107", 2, f"front matter {key!r} must be text; quote it"))
        elif value:
            meta[key] = _text(value)
    records = data.get("records")
    ids = [_text(r) for r in records] if isinstance(records, list) else None
    if records is not None and (ids is None or None in ids):
        state.findings.append(Finding("IK107", 2, "front matter 'records' must be a list of record ids (quoted)"))
    elif ids:
        meta["records"] = ids
    return meta, token.map[1] if token.map else 0


def _text(value: Any) -> str | None:
    """A front matter scalar as text: a string, or a number YAML read from digits; else None."""
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() < 64:
        return str(value)
    if isinstance(value, float):
        return repr(value)
    return None


def _twin(lines: list[str], front_end: int, state: RenderState, resolver: RecordResolver) -> Markdown:
    """The Markdown source (raw HTML escaped) with each citation the plugin found resolved, and
    each citing paragraph followed by the limitations of what it cites. Values and limitations
    are record text, escaped as the templates escape it."""
    cursor: dict[int, int] = {}
    for c in state.citations:
        if c.record_id is None:
            continue
        i = c.line - 1
        at = lines[i].find(c.source, cursor.get(i, 0))
        if at < 0:
            continue
        link = f"[\\[{c.record_id[:8]}\\]]({resolver.md_href(c.record_id)})"
        newer = resolver.superseded_by(c.record_id)
        if newer:
            link += f" (superseded by [\\[{newer[:8]}\\]]({resolver.md_href(newer)}))"
        new = f"{md_text(c.value)} {link}" if c.path else link
        lines[i] = lines[i][:at] + new + lines[i][at + len(c.source):]
        cursor[i] = at + len(new)
    inserts: dict[int, list[str]] = {}
    stated: set[str] = set()  # each record's limitations once: where it is first cited
    said: dict[str, str] = {}  # and each limitation once, for the first record that has it
    for _first, end, cited in state.paragraphs:
        block = [""]
        for rid in cited:
            head = f"> **What [\\[{rid[:8]}\\]]({resolver.md_href(rid)}) does not show**"
            if rid in stated:
                block += [f"{head}: listed where it is first cited.", ""]
                continue
            stated.add(rid)
            fresh, same = first_said(said, rid, resolver.limitations(rid))
            block += [head, ">"]
            block += [f"> - {md_text(item)}" for item in fresh]
            block += [f"> - {plural(len(items), 'limitation', 'limitations')} as listed for [\\[{other[:8]}\\]]({resolver.md_href(other)})"
                      for other, items in same.items()]
            block.append("")
        inserts.setdefault(end, []).extend(block)
    out = []
    for n, line in enumerate(lines, start=1):
        if n > front_end:
            out.append(line)
        out.extend(inserts.get(n, []))
    return Markdown("\n".join(out).strip("\n") + "\n")
