"""Issue 27 item 9: bidirectional controls in record text (kernel names, titles, GPU names,
workloads, reports) never reorder what a page, a Markdown twin, a chart or the terminal shows.
A right-to-left override in a kernel name made a claim's "8.1% … 112 ns" read "%1.8 … sn 211"
and its citation [72ffaf61] read [16faff27] in Chromium."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from ikreport.bidi import BIDI_CONTROLS
from ikreport.collect.context import Context
from ikreport.collect.ncu_import import import_csv
from ikreport.commands.build import build_site
from ikreport.commands.compare import compare_records
from ikreport.store.archive import Archive
from siteserver import serve
from test_browser import Visit, browser  # noqa: F401 (a fixture)
from test_safety_twins import hostile_csv

# the whole class: embeddings, overrides, their POP, isolates, their POP, and the three marks
CONTROLS = ["\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2067", "\u2068", "\u2069",
            "\u200e", "\u200f", "\u061c"]
EVIL = "evil\u202ekernel"  # its claim: "evil…kernel takes 8.1% of profiled GPU time: 112 ns over 1 launch."
KERNELS = [*(f"k{n}{c}tail" for n, c in enumerate(CONTROLS)), EVIL]  # the last takes longest
TITLE = "decode \u202eon B200"
REPORT = """---
title: "What \u2067 the archive shows"
---
A sentence whose override \u202e would run on through the citation [ev:{rid}] and the title
[ev:{rid} title] to the end of the paragraph.
"""


def escapes(text: str) -> str:
    return BIDI_CONTROLS.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


@pytest.fixture(scope="module")
def bidi_site(tmp_path_factory) -> dict:
    """Two profiles of one GPU and workload (a history page), compared; a report citing one."""
    tmp = tmp_path_factory.mktemp("bidi")
    arch = Archive.create(tmp / "arch")
    context = Context(title=TITLE, gpu="NVIDIA \u2067B200", workload="wl\u202ex",
                      limitations=("a limitation \u202ewith an override",))
    a = import_csv(arch, [hostile_csv(tmp / "a.csv", KERNELS)], context)
    b = import_csv(arch, [hostile_csv(tmp / "b.csv", KERNELS + ["extra"])], context)
    comparison, _ = compare_records(arch, [a], [b], 5.0, 1)
    (arch.root / "reports").mkdir()
    (arch.root / "reports" / "evil.md").write_text(REPORT.replace("{rid}", a), "utf-8")
    build_site(Archive.open(arch.root), tmp / "site", cache_dir=tmp / "c")
    return {"out": tmp / "site", "a": a, "b": b, "comparison": comparison, "tmp": tmp}


def shown_files(site: Path) -> list[Path]:
    """Every file of the site that shows text: all but the records' and blobs' own bytes."""
    return [p for p in site.rglob("*") if p.is_file() and not (p.parent.name == "e" and p.suffix == ".json")
            and p.parent.name != "b"]


def test_no_page_twin_chart_or_search_file_holds_a_bidi_control(bidi_site):
    site = bidi_site["out"]
    files = shown_files(site)
    kinds = {p.suffix for p in files}
    assert {".html", ".md", ".svg", ".json"} <= kinds and any(p.parent.name == "h" for p in files)
    held = [p.relative_to(site).as_posix() for p in files if BIDI_CONTROLS.search(p.read_text("utf-8"))]
    assert held == []
    page = (site / "e" / f"{bidi_site['a']}.html").read_text("utf-8")
    for name in KERNELS:
        assert escapes(name) in page  # shown, as an escape, in the claims and tables
    assert escapes(TITLE) in page and "wl\\u202ex" in page and "NVIDIA \\u2067B200" in page
    charts = " ".join(p.read_text("utf-8") for p in (site / "charts").glob("*.svg"))
    assert "evil\\u202ekernel" in charts  # a label of the time-by-kernel bars


def test_twins_show_the_controls_as_escapes_on_github(bidi_site):
    site = bidi_site["out"]
    md = MarkdownIt("commonmark", {"html": True}).enable("table")
    record = md.render((site / "e" / f"{bidi_site['a']}.md").read_text("utf-8"))
    assert "evil\\u202ekernel takes 8.1% of profiled GPU time: 112 ns" in record  # a claim: text, not an escape
    assert f"<code>{escapes(KERNELS[5])}</code>" in record  # in a code span, as written
    report = md.render((site / "r" / "evil.md").read_text("utf-8"))
    assert "override \\u202e would run on" in report and "What \\u2067 the archive shows" in report
    assert not BIDI_CONTROLS.search(record + report)


def test_search_shows_titles_gpus_and_kernels_with_escapes(bidi_site):
    site = bidi_site["out"]
    meta = json.loads((site / "search" / "meta.json").read_text())
    docs = json.loads((site / "search" / meta["dir"] / "docs-0.json").read_text())
    shown = [d for d in docs if d["u"] == f"e/{bidi_site['a']}.html"][0]
    assert shown["t"].startswith(escapes(TITLE)) and shown["g"] == "NVIDIA \\u2067B200"
    assert "evil\\u202ekernel" in shown["w"] and "wl\\u202ex" in shown["w"]


# Each character's box, left to right: an override reverses them.
CHAR_BOXES = """(el, needle) => {
  const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
  let node;
  while ((node = walker.nextNode())) {
    const at = node.data.indexOf(needle);
    if (at < 0) continue;
    const boxes = [];
    for (let k = 0; k < needle.length; k++) {
      const range = document.createRange();
      range.setStart(node, at + k);
      range.setEnd(node, at + k + 1);
      const box = range.getBoundingClientRect();
      boxes.push([box.top, box.left]);
    }
    return boxes;
  }
  return null;
}"""


def reads_in_order(element, needle: str) -> bool:
    boxes = element.evaluate(CHAR_BOXES, needle)
    assert boxes, f"{needle!r} is not in {element.inner_text()!r}"
    return boxes == sorted(boxes)


def test_a_claims_numbers_and_citation_read_in_order_in_chromium(browser, bidi_site):  # noqa: F811
    visit = Visit(browser)
    try:
        with serve(bidi_site["out"], bidi_site["tmp"] / "srv") as url:
            page = visit.page
            page.goto(url + f"e/{bidi_site['a']}.html")
            claim = page.locator("p.claim", has_text="evil").first
            assert "takes 8.1% of profiled GPU time: 112 ns" in claim.inner_text()
            for needle in ("8.1%", "GPU time", "112", f"[{bidi_site['a'][:8]}]"):
                assert reads_in_order(claim, needle), needle
            page.goto(url + "r/evil.html")
            paragraph = page.locator("main p", has_text="override").first
            assert reads_in_order(paragraph, f"[{bidi_site['a'][:8]}]")
            assert reads_in_order(paragraph, "to the end of the paragraph")
            page.goto(url + "index.html")
            row = page.locator("#table-profiles tr", has=page.locator(f'a[href="e/{bidi_site["a"]}.html"]'))
            assert reads_in_order(row, "on B200") and reads_in_order(row, "1.38")
    finally:
        visit.close()
    assert visit.left == [] and visit.errors == []


@pytest.fixture
def bidi_archive(tmp_path) -> tuple[Archive, str, str]:
    arch = Archive.create(tmp_path / "arch")
    context = Context(title=TITLE, gpu="NVIDIA \u2067B200", workload="wl\u202ex")
    a = import_csv(arch, [hostile_csv(tmp_path / "a.csv", KERNELS)], context)
    b = import_csv(arch, [hostile_csv(tmp_path / "b.csv", KERNELS)], context)
    return arch, a, b


def test_the_terminal_shows_the_controls_as_escapes(bidi_archive, run):
    arch, a, b = bidi_archive
    for args in (("list",), ("show", a[:12]), ("compare", a, b)):
        out = run(*args, "--archive", arch.root).output
        assert not BIDI_CONTROLS.search(out), (args, out)
        assert escapes(TITLE) in out or "evil\\u202ekernel" in out, args
    shown = run("show", a[:12], "--archive", arch.root).output
    assert "evil\\u202ekernel" in shown and escapes(TITLE) in shown
    raw = run("show", a, "--json", "--archive", arch.root).output
    assert not BIDI_CONTROLS.search(raw) and json.loads(raw)["title"] == TITLE  # the same JSON value


def test_an_error_line_quoting_user_text_shows_the_controls_as_escapes(bidi_archive, run):
    result = run("check", bidi_archive[0].root, "--reports", "reports\u202edlrow")
    assert result.exit_code == 1 and not BIDI_CONTROLS.search(result.output)
    assert "reports\\u202edlrow" in result.output


@pytest.mark.parametrize("control", CONTROLS)
def test_every_control_of_the_class_is_shown_as_its_code_point(control):
    from ikreport.site.model import Page
    from ikreport.site.render import environment, render
    from ikreport.terminal import safe_json, safe_text

    shown = f"\\u{ord(control):04x}"
    assert safe_text(f"a{control}b") == f"a{shown}b"
    assert safe_json(json.dumps(f"a{control}b", ensure_ascii=False)) == f'"a{shown}b"'
    (html,) = render(environment(None), Page(path="404", template="404", title=f"x{control}y", root=""), ("html",))
    assert control not in html and f"x{shown}y" in html
