"""Issue 12, item 9 and the CSV part of item 12: the Markdown twins are as safe as the HTML
pages, and no CSV the site offers reaches a spreadsheet with a formula in it."""

from __future__ import annotations

import csv
import io
import json
from html.parser import HTMLParser
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from ikreport.store.archive import Archive
from ikreport.collect.context import Context
from ikreport.collect.ncu_import import import_csv
from ikreport.commands.build import build_site

HOSTILE_KERNELS = [
    "k`<img src=x onerror=alert(1)>`",
    "``<img src=x onerror=alert(2)>``x",
    '`<a href="javascript:alert(3)">x</a>',
    "a|<img src=x onerror=alert(4)>",
    "a\\|<img src=x onerror=alert(5)>|",
    "- <script>alert(6)</script>",
]
HOSTILE_REPORT = """---
title: <img src=x onerror=alert(11)>
summary: "<a href='javascript:alert(12)'>s</a>"
---
Inline <img src=x onerror=alert(13)> and <a href="javascript:alert(14)">link</a> [ev:{rid}] its title
is [ev:{rid} title].

<div onmouseover="alert(15)">block</div>

<script>alert(16)</script>

`code
<script>alert(17)</script>` after

| a | b |
|---|---|
| <img src=x onerror=alert(18)> | `x` <b onclick=alert(19)>y</b> \\| <i onclick=alert(23)>z</i> |

> quote <img src=x onerror=alert(20)>

- item <details open ontoggle=alert(21)>

[link <img src=x onerror=alert(22)>](https://example.com)

<!-- comment --> and <?php echo 1; ?> <![CDATA[x]]> \\\\<img src=x onerror=alert(24)>

<div
onmouseover="alert(25)"

Autolink <https://example.com/a> stays a link; code `<b>kept</b>` stays code.
"""
# The tags markdown-it makes from Markdown; any other tag came from raw HTML.
MARKDOWN_TAGS = {"p", "a", "img", "code", "pre", "em", "strong", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol",
                 "li", "blockquote", "hr", "br", "table", "thead", "tbody", "tr", "th", "td", "s", "del"}


class Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, {k: v or "" for k, v in attrs}))


def live_markup(html: str, images: tuple[str, ...] = ("../charts/",)) -> list[str]:
    """What in ``html`` could run or did not come from Markdown syntax; an image is suspect
    unless its src starts with one of ``images`` (the twins show only charts)."""
    parser = Tags()
    parser.feed(html)
    bad = []
    for tag, attrs in parser.tags:
        if tag not in MARKDOWN_TAGS:
            bad.append(f"<{tag}>")
        bad += [f"<{tag} {k}>" for k in attrs if k.startswith("on")]
        if tag == "a" and attrs.get("href", "").strip().lower().startswith(("javascript:", "vbscript:", "data:", "file:")):
            bad.append(f"<a href={attrs['href']}>")
        if tag == "img" and not attrs.get("src", "").startswith(images):
            bad.append(f"<img src={attrs.get('src')}>")
    return bad


class CmarkGfm:
    """GitHub's own parser, cmark-gfm, with its extensions (tables, bare-URL autolinks) and raw
    HTML kept: GitHub sanitises what it makes, and a twin must not lean on that (nor on the tag
    filter, which only some readers have). A bare URL's autolink takes a backslash after it into
    the URL, which undid a backslash escape of the '<' behind it."""

    def render(self, text: str) -> str:
        import cmarkgfm
        from cmarkgfm.cmark import Options

        return cmarkgfm.markdown_to_html_with_extensions(text, options=Options.CMARK_OPT_UNSAFE,
                                                         extensions=["table", "autolink", "strikethrough", "tasklist"])


def github_renderers() -> list[MarkdownIt | CmarkGfm]:
    """CommonMark with raw HTML on, as GitHub reads a .md file; with GFM tables too; and GitHub's
    own parser. Each links any address, as a reader with no check of its own would: markdown-it's
    own refuses javascript: and the like, which hid such links in the twins from these tests."""
    renderers: list[MarkdownIt | CmarkGfm] = [MarkdownIt("commonmark", {"html": True}),
                                              MarkdownIt("commonmark", {"html": True}).enable("table"), CmarkGfm()]
    for md in renderers[:2]:
        md.validateLink = lambda url: True  # type: ignore[union-attr]
    return renderers


def hostile_csv(path: Path, kernels: list[str], preamble: str = "") -> Path:
    rows = ['"ID","Kernel Name","Section Name","Metric Name","Metric Unit","Metric Value"']
    for i, name in enumerate(kernels):
        quoted = name.replace('"', '""')
        rows.append(f'"{i}","{quoted}","GPU Speed Of Light Throughput","Duration","ns","{100 + i}"')
    path.write_text(preamble + "\n".join(rows) + "\n", "utf-8")
    return path


@pytest.fixture(scope="module")
def hostile_site(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("hostile")
    arch = Archive.create(tmp / "arch")
    rid = import_csv(arch, [hostile_csv(tmp / "evil.csv", HOSTILE_KERNELS)], Context(
        title="`<img src=x onerror=alert(7)>` [x](javascript:alert(8))",
        gpu='<a href="javascript:alert(9)">gpu</a>',
        limitations=("- <script>alert(10)</script>", "``<img src=x onerror=alert(26)>``")))
    (arch.root / "reports").mkdir()
    (arch.root / "reports" / "evil.md").write_text(HOSTILE_REPORT.replace("{rid}", rid), "utf-8")
    build_site(arch, tmp / "site", cache_dir=tmp / "c")
    return tmp / "site"


def test_every_markdown_twin_of_a_hostile_site_renders_no_live_markup(hostile_site):
    twins = sorted(hostile_site.rglob("*.md"))
    assert len(twins) >= 4  # index, changes, the record, the report
    for twin in twins:
        for md in github_renderers():
            assert live_markup(md.render(twin.read_text("utf-8"))) == [], twin.name


def test_kernel_names_survive_whole_in_their_code_spans(hostile_site):
    """In a table and out of one (a claim's detail line): a pipe escaped outside a table showed
    as a backslash in the name (a review helper found it)."""
    twin = next((hostile_site / "e").glob("*.md")).read_text("utf-8")
    tokens = MarkdownIt("commonmark", {"html": True}).enable("table").parse(twin)
    in_table = {id(t) for n, t in enumerate(tokens) if t.type == "inline" and any(
        o.type == "td_open" for o in tokens[max(0, n - 1):n])}
    codes = {inside: [c.content for t in tokens if t.type == "inline" and (id(t) in in_table) == inside
                      for c in t.children or [] if c.type == "code_inline"] for inside in (True, False)}
    for name in HOSTILE_KERNELS:
        assert " ".join(name.split()) in codes[True], name  # the kernels table lists every one
    piped = "a|<img src=x onerror=alert(4)>"  # the first kernel, shown in a claim's detail line too
    assert piped in codes[False] and piped.replace("|", "\\|") not in codes[False]


def test_a_reports_twin_escapes_raw_html_as_its_page_does_and_keeps_code_and_links(hostile_site):
    twin = (hostile_site / "r" / "evil.md").read_text("utf-8")
    html = MarkdownIt("commonmark", {"html": True}).enable("table").render(twin)
    assert "&lt;img src=x onerror=alert(13)&gt;" in html  # shown as text, as on the page
    assert "<code>&lt;b&gt;kept&lt;/b&gt;</code>" in html  # no backslash crept into code
    assert '<a href="https://example.com/a">https://example.com/a</a>' in html
    assert '<a href="https://example.com">link &lt;img' in html
    page = (hostile_site / "r" / "evil.html").read_text("utf-8")
    assert "&lt;img src=x onerror=alert(13)&gt;" in page


@pytest.mark.parametrize("text", ["a", "a`b", "``x```", "`a", "a`", "` `", "x ```` y", "<img src=x onerror=alert(1)>"])
def test_md_code_fences_longer_than_any_backtick_run(text):
    from ikreport.site.render import md_code

    tokens = MarkdownIt("commonmark", {"html": True}).parseInline(f"before {md_code(text)} after")[0].children
    assert [t.type for t in tokens] == ["text", "code_inline", "text"]
    assert tokens[1].content == text


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=st.sampled_from("amp1 -+.)\\`*_[]<>|#&;~!\"'=:/()é·"), max_size=24))
@example('&amp; &#35; &#x41;')
@example('~~struck~~')
@example('<b>x</b>')
@example('[a](b)')
@example('`code`')
@example('*em* __strong__')
@example('a\\*b')
@example('a | b')
@example('<https://x.y>')
@example('# h')
@example('- x')
@example('1. x')
def test_md_text_reads_back_as_the_text_it_was_given(text):
    """Whatever record text holds, its Markdown twin shows that text, white space folded, and no
    markup: in a line and in a table cell, as the .md templates place values."""
    from ikreport.formatting import md_text

    md = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
    shown = f"value: {' '.join(text.split())}".strip()
    for source in (f"value: {md_text(text)}", f"| value: {md_text(text)} |\n|---|\n"):
        inline = [t for t in md.parse(source) if t.type == "inline"]
        assert len(inline) == 1 and all(c.type == "text" for c in inline[0].children), (text, source)
        assert "".join(c.content for c in inline[0].children).strip() == shown


@pytest.mark.parametrize("text", ["- x", "+ x", "1. x", "2) x", "10. x", "-", "3."])
def test_md_text_starting_a_line_starts_no_list(text):
    from ikreport.formatting import md_text

    tokens = MarkdownIt("commonmark").parse(md_text(text))
    assert [t.type for t in tokens] == ["paragraph_open", "inline", "paragraph_close"]
    assert tokens[1].children[0].content == text


def test_md_templates_escape_every_value_even_without_the_md_filter(tmp_path):
    from ikreport.site.model import Page
    from ikreport.site.render import environment, render

    (tmp_path / "t.md").write_text("- {{ value }} | {{ value | md }} | {{ name | mdcode }}\n")
    (tmp_path / "t.html").write_text("<p>{{ value }}</p>\n")
    page = Page(path="t", template="t", title="t", root="", context={
        "value": '<img src=x onerror=alert(1)> [a](javascript:alert(2))', "name": "a`<b>`"})
    html, md = render(environment(tmp_path), page)
    assert "<img" not in html and "&lt;img src=x" in html  # autoescaped once, no backslashes
    assert "\\\\" not in md and md.count("\\<img") == 2
    assert live_markup(MarkdownIt("commonmark", {"html": True}).render(md)) == []


def test_templates_compiled_before_the_md_finalize_are_not_reused(tmp_path):
    import jinja2

    from ikreport.site.render import environment

    (tmp_path / "t").mkdir()
    (tmp_path / "bc").mkdir()
    (tmp_path / "t" / "x.md").write_text("{{ v }}\n")
    old = jinja2.Environment(loader=jinja2.FileSystemLoader(str(tmp_path / "t")),
                             bytecode_cache=jinja2.FileSystemBytecodeCache(str(tmp_path / "bc")))
    assert old.get_template("x.md").render(v="<b>").strip() == "<b>"  # compiled without finalize, and kept
    assert environment(tmp_path / "t", tmp_path / "bc").get_template("x.md").render(v="<b>") == "\\<b\\>\n"


TRIGGER_NAMES = ["=HYPERLINK(\"http://x\",\"y\")", "+1+cmd|' /C calc'!A0", "-2+3", "@SUM(A1)", "\tTAB",
                 "\rCR", "'quoted", "plain"]


def test_the_launch_table_neutralises_formula_cells_and_reads_back_the_names(tmp_path, monkeypatch):
    import ikreport.kinds.ncu_profile.data as profile_data

    triggers = ("=", "+", "-", "@", "\t", "\r")  # OWASP's list

    monkeypatch.setattr(profile_data, "INLINE_LAUNCHES", 2)  # so the launch table is a blob
    arch = Archive.create(tmp_path / "arch")
    rid = import_csv(arch, [hostile_csv(tmp_path / "k.csv", TRIGGER_NAMES)], Context())
    record = arch.load(rid)
    blob = next(s for s in record["sources"] if s["role"] == profile_data.LAUNCH_TABLE_ROLE)
    rows = list(csv.DictReader(io.StringIO(arch.read_blob(blob["id"]).decode("utf-8"), newline="")))
    assert len(rows) == len(TRIGGER_NAMES)
    for row in rows:
        for cell in row.values():
            assert not cell.startswith(triggers), cell
    assert {r["kernel"] for r in rows} >= {"'=HYPERLINK(\"http://x\",\"y\")", "'-2+3", "''quoted", "plain"}
    names = sorted(k["kernel"] for k in record["data"]["kernels"])
    assert {"=HYPERLINK(\"http://x\",\"y\")", "-2+3", "@SUM(A1)", "'quoted"} <= set(names)
    assert sorted(profile_data.durations_by_kernel(record, arch.read_blob)) == names  # what compare reads


def test_numbers_stay_numbers_in_a_neutralised_table():
    import pyarrow as pa
    import pyarrow.csv as pacsv

    from ikreport.csv_cells import neutralise, restore

    out = io.BytesIO()
    pacsv.write_csv(neutralise(pa.table({"n": [-1.5, 2.0], "s": ["-1.5", "=1+1"]})), out)
    assert out.getvalue().decode().splitlines() == ['"n","s"', "-1.5,\"'-1.5\"", "2,\"'=1+1\""]
    assert [restore(c) for c in ("'-1.5", "'=1+1", "''q", "q")] == ["-1.5", "=1+1", "'q", "q"]


@pytest.mark.parametrize("large", [False, True])
def test_neutralise_prefixes_exactly_the_cells_that_start_with_a_trigger_whatever_the_slice(large):
    # neutralise skips the regex for a column whose cells' first bytes hold no trigger: that
    # look at Arrow's buffers must miss no cell, in a sliced chunk or a large_string column
    import pyarrow as pa

    from ikreport.csv_cells import neutralise

    cells = ["k", None, "=1", "", "'q", "ok", "-2", "\tx", "é", "@a", "+", "plain", "\r", "x=1"]
    kind = pa.large_string() if large else pa.string()
    for lo in range(len(cells)):
        for hi in range(lo, len(cells) + 1):
            column = pa.chunked_array([pa.array(cells, kind).slice(lo, hi - lo), pa.array(["a", "b"], kind)])
            got = neutralise(pa.table({"s": column})).column("s").to_pylist()
            expected = [c if c is None or not c.startswith(("=", "+", "-", "@", "\t", "\r", "'")) else "'" + c
                        for c in cells[lo:hi] + ["a", "b"]]
            assert got == expected, (lo, hi)


def test_an_export_with_formula_cells_is_offered_as_text_and_the_page_says_why(tmp_path):
    arch = Archive.create(tmp_path / "arch")
    evil = import_csv(arch, [hostile_csv(tmp_path / "evil.csv", ["=cmd|' /C calc'!A0"])], Context(title="evil"))
    clean = import_csv(arch, [hostile_csv(tmp_path / "clean.csv", ["k"], preamble="")], Context(title="clean"))
    site = tmp_path / "site"
    build_site(arch, site, cache_dir=tmp_path / "c")
    ids = {rid: next(s["id"] for s in arch.load(rid)["sources"] if s["role"].endswith("-csv")) for rid in (evil, clean)}
    assert (site / "b" / f"{ids[evil]}.txt.gz").is_file() and not (site / "b" / f"{ids[evil]}.csv.gz").exists()
    assert (site / "b" / f"{ids[clean]}.csv.gz").is_file()
    paths = {b["id"]: b["path"] for b in json.loads((site / "manifest.json").read_text())["blobs"]}
    assert paths[ids[evil]] == f"b/{ids[evil]}.txt.gz" and paths[ids[clean]] == f"b/{ids[clean]}.csv.gz"
    for ext in ("html", "md"):
        page = (site / "e" / f"{evil}.{ext}").read_text("utf-8")
        assert f"{ids[evil]}.txt.gz" in page and "formulas" in page
        assert "formulas" not in (site / "e" / f"{clean}.{ext}").read_text("utf-8")
    # a rebuild answers from the cache and gives the same site
    build_site(arch, site, cache_dir=tmp_path / "c")
    assert (site / "b" / f"{ids[evil]}.txt.gz").is_file()


def test_random_reports_never_give_a_twin_with_live_markup():
    """Report Markdown made of the pieces raw HTML, code spans, tables and containers are made
    of; each twin is rendered with and without GFM tables. (Found: a table row that one
    reader reads as an indented code line and the other as paragraph text.)"""
    import random

    from ikreport.claims.model import RecordSet
    from ikreport.reports.render import render_report
    from ikreport.reports.resolver import RecordResolver

    pieces = ["<img src=x onerror=a()>", "<div onclick=a()>", "`", "``", "\\", "|", "\n", "\n\n", "> ", "- ", "1. ",
              "   ", "<!--", "-->", "<script>", "</b>", '<a href="javascript:x">', "[", "](", ")", "<https://e.com>",
              "*", "text", "    code", "```", "\n|---|---|\n", "<", ">", '"', "<b\nonclick=a()>", "&lt;", "#", "\t",
              "<div", "[a]:\n", "[a]: ", "~~~", "<pre>", "<!X", "<?", "<![CDATA[", "<style>", "<textarea>",
              "](javascript:x)", "javascript:x", "[a]", "[a]: javascript:x\n", "![", "](data:text/html,x)", "]: vbscript:y",
              "java&#115;cript:", "<javascript:x>"]
    resolver = RecordResolver(RecordSet.of({}), "../")
    rng = random.Random(12)
    for _ in range(400):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 30)))
        twin = render_report(Path("r.md"), text, resolver).markdown
        for md in github_renderers():
            assert live_markup(md.render(twin), images=("",)) == [], text


def test_a_line_of_many_raw_html_openings_escapes_each_once_and_no_escaped_one_again():
    """The escapes are made a line at a time now (a line of thousands of '<' was remade once per
    '<', and each was counted from the start of its text): each '<' that raw HTML could take is
    written &lt;, one escaped already is left, one after an escaped backslash is written &lt;."""
    from ikreport.claims.model import RecordSet
    from ikreport.reports.render import render_report
    from ikreport.reports.resolver import RecordResolver

    text = "x " + "<a " * 3000 + "\\<b \\\\<c <d\n"
    twin = render_report(Path("r.md"), text, RecordResolver(RecordSet.of({}), "../")).markdown
    assert twin == "x " + "&lt;a " * 3000 + "\\<b \\\\&lt;c &lt;d\n"


@pytest.mark.parametrize(("text", "expected"), [
    # markdown-it breaks lines at \n only: split elsewhere (U+2028, \x85), the escapes missed their lines
    ("a\u2028b\n\n[x]: javascript:alert(1)\n\n[x]\n", "a\u2028b\n\n&#91;x]: javascript:alert(1)\n\n[x]\n"),
    ("a\x85b\n\n[x](javascript:alert(1))\n", "a\x85b\n\n&#91;x](javascript:alert(1))\n"),
    # nested deeper than markdown-it parses, the page shows text where GitHub makes a link
    ("[" * 21 + "a](javascript:x)\n", "&#91;" * 21 + "a](javascript:x)\n"),
    # a refused first definition: another reader takes it, and the first of a name wins
    ("[a]: javascript:x\n\n[a]\n\n[a]: https://ok.example\n", "&#91;a]: javascript:x\n\n[a]\n\n[a]: https://ok.example\n"),
    # a backslash after a bare URL goes into GitHub's autolink, and the '<' behind it was raw
    ("https://e.com<img src=x onerror=a()>\n", "https://e.com&lt;img src=x onerror=a()>\n"),
    # what the page links stays a link, a citation stays one, and the text reads the same
    ("[ok](https://e.com) [ev:abcdef12] [n] data: x\n", "[ok](https://e.com) [ev:abcdef12] &#91;n] data: x\n"),
    # a '[' in a code span or an autolink is no bracket: it was escaped too, and code showed '&#91;'
    ("`a[b]` javascript: x [c](https://ok)\n", "`a[b]` javascript: x [c](https://ok)\n"),
    ("see <https://e.com/[x]> data: 1\n", "see <https://e.com/[x]> data: 1\n"),
])
def test_a_twin_shows_as_text_every_link_the_page_shows_as_text(text, expected):
    """Found by a review helper with GitHub's own parser."""
    from ikreport.claims.model import RecordSet
    from ikreport.reports.render import render_report
    from ikreport.reports.resolver import RecordResolver

    twin = render_report(Path("r.md"), text, RecordResolver(RecordSet.of({}), "../")).markdown
    assert twin == expected
    for md in github_renderers():
        assert live_markup(md.render(twin), images=("",)) == [], md


def test_a_table_row_of_thousands_of_cells_has_each_raw_html_opening_escaped():
    """Each cell is an inline text of its own on one line: the line's '<' were looked for again
    for every cell."""
    from ikreport.claims.model import RecordSet
    from ikreport.reports.render import render_report
    from ikreport.reports.resolver import RecordResolver

    cells = 3000
    text = "|" + "|".join(f"<a{i}" for i in range(cells)) + "|\n|" + "---|" * cells + "\n"
    twin = render_report(Path("r.md"), text, RecordResolver(RecordSet.of({}), "../")).markdown
    assert twin.splitlines()[0] == "|" + "|".join(f"&lt;a{i}" for i in range(cells)) + "|"


def _formula_by_parsing_all(text: str) -> bool:
    """The rule itself, with no shortcut: any text cell that starts with a trigger and is not a number."""
    from ikreport.csv_cells import TRIGGERS, _is_number

    # split as a spreadsheet might: on commas, semicolons (comma-decimal locales), tabs, or what sep= names
    separators = ",;\t" + (text[4] if text.startswith("sep=") and len(text) > 4 else "")
    try:
        return any(cell.startswith(TRIGGERS) and not _is_number(cell) for separator in separators
                   for row in csv.reader(io.StringIO(text, newline=""), delimiter=separator) for cell in row)
    except csv.Error:
        return True


@pytest.mark.parametrize(("text", "formula"), [
    ("k,-1.5,+2e3,-.5\r\nj,-7,3\n", False),  # negative numbers, the launch CSVs' thousands: no parse needed
    ('k,"-1,5"\n', True),  # quoted: a text cell that starts with a minus
    ("k,-1abc\n", True),
    ('k,"-1"\n', False),  # a quoted number is still a number
    ('"a,-1,b",c\n', False),  # a minus inside a quoted cell starts no cell
    ("k,-1\"x\",\n", True),
    ("-inf,x\n", True),  # a number split on commas, but split on semicolons its line is a cell "-inf,x"
    ("-inf\n", False),  # Python's float reads it: the rule's number
    ("k;=1\n", True),  # a semicolon-locale spreadsheet splits here (a review helper found it)
    ("sep=|\nk|=1\n", True),  # Excel splits on what a first line sep=X names
    ("k\t@a\n", True),
])
def test_formula_cells_are_found_past_negative_numbers(text, formula):
    from ikreport.csv_cells import has_formula_cells

    assert has_formula_cells(text.encode()) is formula is _formula_by_parsing_all(text)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.lists(st.sampled_from(["-1", "+2.5e3", "-.5", "1", "x", "-x", "=1", '"-1,5"', '"-2"', "@a", "",
                                          '"a\n-b"', "\t1", "-1e", "+", "'-1"]), min_size=1, max_size=4),
                min_size=1, max_size=5),
       st.sampled_from(["\n", "\r\n", "\r"]))
def test_the_shortcut_never_misses_a_formula_cell(rows, newline):
    from ikreport.csv_cells import has_formula_cells

    text = newline.join(",".join(row) for row in rows) + newline
    assert has_formula_cells(text.encode()) == _formula_by_parsing_all(text)
