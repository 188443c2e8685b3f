"""Authored reports: the citation plugin on fixture files (input Markdown, expected HTML and
findings), the build and check around it."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conftest import FIXTURES, ROOT
from ikreport.claims.model import RecordSet
from ikreport.reports.render import render_report
from ikreport.reports.resolver import RecordResolver
from ikreport.reports.values import format_value

CASES = FIXTURES / "reports"
A = "a" * 64
B = "b" * 64
AMBIGUOUS = ("abababab" + "0" * 56, "abababab" + "1" * 56)


def record(title: str, data: dict, limitations: list[str]) -> dict:
    return {"kind": "peak-bandwidth", "title": title, "subject": {}, "data": data, "limitations": limitations,
            "supersedes": [], "cites": [], "collected_at": None}


def resolver() -> RecordResolver:
    records = {
        A: record("Peak <H200>", {"peak_gbs": 4312.25, "kernels": [1, 2]}, ["One GPU only.", "Clocks unlocked."]),
        B: record("Profile", {"kernels": [{"total_us": 1234.5, "share_pct": 87.25}]}, ["One run."]),
        AMBIGUOUS[0]: record("x", {}, ["l"]), AMBIGUOUS[1]: record("y", {}, ["l"]),
    }
    return RecordResolver(RecordSet.of(records), "../")


@pytest.mark.parametrize("name", sorted(p.stem for p in CASES.glob("*.md")))
def test_plugin_fixture(name):
    """tests/fixtures/reports/NAME.md renders to NAME.html, with the findings in NAME.findings."""
    source = CASES / f"{name}.md"
    report = render_report(source, source.read_text("utf-8"), resolver())
    assert report.html == (CASES / f"{name}.html").read_text("utf-8")
    findings = [f"{f.line}: {f.code} {f.message}" for f in report.findings]
    expected = CASES / f"{name}.findings"
    assert findings == (expected.read_text("utf-8").splitlines() if expected.exists() else [])


def test_markdown_twin_resolves_citations_and_lists_limitations():
    source = CASES / "values.md"
    report = render_report(source, source.read_text("utf-8"), resolver())
    assert report.markdown.splitlines()[0] == (
        f"Peak 4.31 TB/s [\\[aaaaaaaa\\]](../e/{A}.md) and time 1.23 ms [\\[bbbbbbbb\\]](../e/{B}.md) at "
        f"87.2% [\\[bbbbbbbb\\]](../e/{B}.md).")
    assert f"> **What [\\[aaaaaaaa\\]](../e/{A}.md) does not show**" in report.markdown
    assert "> - Clocks unlocked." in report.markdown
    assert report.title == "Values" and report.cites == [A, B]


@pytest.mark.parametrize("path,value,shown", [
    ("data.peak_gbs", 4312.25, "4.31 TB/s"), ("data.x_gbs", 143.04, "143.0 GB/s"), ("a.duration_us", 6.75, "6.75 µs"),
    ("a.total_us", 21058.944, "21.1 ms"), ("a.share_pct", 89.66, "89.7%"), ("a.max_memory_clock_mhz", 2619.0, "2,619 MHz"),
    ("a.registers", 38, "38"), ("a.bound", "memory-bound", "memory-bound"), ("a.x", None, "n/a"),
    # every unit-bearing suffix a record kind writes has its unit (issue 27 item 7: _hz printed bare)
    ("data.clocks.sm_hz", 1099255000, "1.10 GHz"), ("data.clocks.dram_hz", 877000000, "877 MHz"),
    ("data.clocks.max_sm_khz", 1965000, "1.97 GHz"), ("data.rows.0.avg_s", 0.00123, "1.23 ms"),
    ("a.flops_per_s", 5.44e13, "54.4 TFLOP/s"), ("a.precision_flops_per_s", 9.58e11, "958 GFLOP/s"),
    ("data.request_throughput", 9.55, "9.55 requests/s"), ("data.output_throughput", 2320.72, "2,320.72 tokens/s"),
    ("a.flops", 1.2e12, "1.2 TFLOP"), ("a.arithmetic_intensity", 12.345, "12.3 FLOP/byte"),
])
def test_values_are_formatted_by_their_field_name(path, value, shown):
    assert format_value(path, value) == shown


def test_every_numeric_field_of_the_sample_records_has_a_unit_or_is_a_count():
    """The class behind item 7: each numeric field name in the sample archive either formats
    with a unit or is one of the counts and ratios that have none (a comparison's verdicts are
    counted by their names)."""
    unitless = {"ONLY IN A", "ONLY IN B", "FASTER", "SLOWER", "SAME", "UNDECIDED", "a_launches", "b_launches", "block", "bound_launches", "completed", "failed", "instances",
                "total_input_tokens", "total_output_tokens", "first_index", "gpu_count", "gpu_index", "grid", "index",
                "kernel_count", "launch_count", "launches", "min_samples", "n_a", "n_b", "registers", "runs", "sms",
                "blocks_per_sm",
                "sample_count", "size", "value", "version", "waves"}
    names: set[str] = set()

    def walk(node, key=None):
        if isinstance(node, dict):
            for k, v in node.items():
                walk(v, k)
        elif isinstance(node, list):
            for v in node:
                walk(v, key)
        elif isinstance(node, (int, float)) and not isinstance(node, bool) and key:
            names.add(key)
    for path in (Path(__file__).parents[1] / "sample_evidence" / "records").glob("*/*"):
        walk(json.loads(path.read_bytes()))
    bare = sorted(n for n in names - unitless if format_value(n, 1234.5) in ("1,234.50", "1,234"))
    assert bare == []


# -- build and check on a real archive ------------------------------------------------------

@pytest.fixture
def archive(tmp_path):
    """A copy of the sample archive, so reports and new records can be added."""
    import shutil

    dest = tmp_path / "arch"
    shutil.copytree(ROOT / "sample_evidence", dest, ignore=shutil.ignore_patterns("reports"))
    for p in dest.rglob("*"):
        if p.is_file():
            os.chmod(p, 0o444)
    (dest / "reports").mkdir()
    return dest


def sample_id(run, archive: Path, title_start: str) -> str:
    out = run("list", "-a", archive).stdout.splitlines()
    return next(line.split()[0] for line in out if title_start in line
                and line.split()[1] not in ("comparison", "supersession"))


def test_a_report_with_two_citations_and_three_values(archive, tmp_path, run):
    gemm = sample_id(run, archive, "GEMM (kernel 3)")
    babel = "04d263543dee"  # the A100 BabelStream record (its figure: BabelStream's own)
    (archive / "reports" / "gemm.md").write_text(
        f"---\ntitle: GEMM\n---\nThe GEMM takes [ev:{gemm} data.launches.0.duration_us] at "
        f"[ev:{gemm} data.launches.0.memory_pct] memory; the A100 copies at [ev:{babel} data.peak_gbs].\n")
    result = run("build", archive, "-o", tmp_path / "site", "--cache-dir", tmp_path / "c")
    assert result.exit_code == 0, result.output
    html = (tmp_path / "site" / "r" / "gemm.html").read_text()
    assert '<span class="ev-value">23.4 µs</span>' in html
    assert '<span class="ev-value">61.8%</span>' in html
    assert '<span class="ev-value">1.39 TB/s</span>' in html
    assert html.count('class="cite"') == 3 and html.count('class="lim-head"') == 2
    assert "<li>Real tool output from a public repository" in html
    index = (tmp_path / "site" / "index.html").read_text()
    assert 'href="r/gemm.html"' in index


def test_an_unknown_hash_fails_the_build_with_file_and_line(archive, tmp_path, run):
    report = archive / "reports" / "bad.md"
    report.write_text("---\ntitle: Bad\n---\n\nFine so far.\n\nBut [ev:0123abcd] is unknown.\n")
    result = run("build", archive, "-o", tmp_path / "site", "--cache-dir", tmp_path / "c")
    assert result.exit_code == 1
    assert result.stderr == (f"Error: {report}:7: IK103 no record starts with 0123abcd; "
                             "'ikreport list' lists the records\n")
    assert not (tmp_path / "site").exists()


def test_check_lists_findings_with_rule_ids_and_json(archive, run):
    (archive / "reports" / "empty.md").write_text("# Nothing cited\n")
    (archive / "reports" / "bad.md").write_text("x [ev:zz]\n")
    result = run("check", archive)
    assert result.exit_code == 1
    assert result.stdout.splitlines() == [
        f"{archive / 'reports' / 'bad.md'}:1: IK105 malformed citation '[ev:zz]'; write [ev:ID] or "
        "[ev:ID path.to.value] with an 8+ hex digit ID",
        f"{archive / 'reports' / 'empty.md'}:1: IK202 the report cites no record",
    ]
    rows = [json.loads(line) for line in run("check", archive, "--json").stdout.splitlines()]
    assert rows[1] == {"code": "IK202", "file": str(archive / "reports" / "empty.md"), "line": 1,
                       "message": "the report cites no record", "rule": "report cites nothing", "severity": "warning"}
    (archive / "reports" / "bad.md").unlink()
    assert run("check", archive).exit_code == 0  # a warning alone passes
    assert run("check", archive, "--strict").exit_code == 1


def test_check_finds_a_damaged_record(archive, run):
    victim = next((archive / "records").rglob("*.json"))
    os.chmod(victim, 0o644)
    victim.write_bytes(victim.read_bytes()[:-1])
    result = run("check", archive)
    assert result.exit_code == 1
    assert f"{victim}: IK108 the bytes do not hash to the file's name" in result.stdout


def test_supersede_banner_changelog_and_strict_warning(archive, tmp_path, run):
    old = sample_id(run, archive, "GEMV (kernel 1)")
    new = sample_id(run, archive, "GEMM (kernel 3)")
    result = run("supersede", old, "--by", new, "--reason", "wrong kernel exported", "-a", archive)
    assert result.exit_code == 0, result.output
    (archive / "reports" / "r.md").write_text(f"Cites the old one [ev:{old}].\n")
    strict = run("build", archive, "-o", tmp_path / "s1", "--strict", "--cache-dir", tmp_path / "c")
    assert strict.exit_code == 1 and "IK201 cites" in strict.stderr and "supersedes" in strict.stderr
    assert run("build", archive, "-o", tmp_path / "site", "--cache-dir", tmp_path / "c").exit_code == 0
    page = (tmp_path / "site" / "e" / f"{run('show', old, '-a', archive).stdout.splitlines()[1].split()[-1]}.html")
    html = page.read_text()
    assert '<p class="banner" role="note"><strong>Superseded.</strong>' in html and "wrong kernel exported" in html
    changes = (tmp_path / "site" / "changes.html").read_text()
    assert "wrong kernel exported" in changes and old[:8] in changes
    assert run("supersede", old, "--by", old, "--reason", "x", "-a", archive).exit_code == 1


def test_a_report_page_states_each_limitation_once():
    """A record cited again links to its first list; a limitation two records share is listed
    for the first and counted for the second, on the page and in its twin (issue 16 item 8)."""
    shared = ["Clocks unlocked.", "One run."]
    records = {A: record("A", {"x": 1}, shared + ["Only A."]), B: record("B", {"x": 2}, shared)}
    text = f"First [ev:{A[:8]}].\n\nSecond [ev:{B[:8]}].\n\nAgain [ev:{A[:8]}].\n"
    report = render_report(Path("r.md"), text, RecordResolver(RecordSet.of(records), "../"))
    for item in shared + ["Only A."]:
        assert report.html.count(f"<li>{item}</li>") == 1 and report.markdown.count(f"> - {item}") == 1
    assert '<li class="lim-same">2 limitations as listed for <a href="#lim-aaaaaaaa">[aaaaaaaa]</a></li>' in report.html
    assert report.html.count('id="lim-aaaaaaaa"') == 1
    assert 'does not show: <a class="lim-see" href="#lim-aaaaaaaa">listed where it is first cited</a>' in report.html
    assert f"> - 2 limitations as listed for [\\[aaaaaaaa\\]](../e/{A}.md)" in report.markdown


def test_a_report_never_shows_two_different_values_alike():
    """1,309 and 1,315 GB/s from two records both read "1.31 TB/s" alone; in one report they
    are shown at the precision that tells them apart, on the page and in its twin (issue 16
    item 12). A lone value keeps the usual form."""
    records = {A: record("A", {"peak_gbs": 1309.0}, ["l"]), B: record("B", {"peak_gbs": 1315.0}, ["l"])}
    resolver_ = RecordResolver(RecordSet.of(records), "../")
    both = render_report(Path("r.md"), f"[ev:{A[:8]} data.peak_gbs] and [ev:{B[:8]} data.peak_gbs].\n", resolver_)
    assert '<span class="ev-value">1.309 TB/s</span>' in both.html and '<span class="ev-value">1.315 TB/s</span>' in both.html
    assert both.markdown.startswith("1.309 TB/s ")
    alone = render_report(Path("r.md"), f"[ev:{A[:8]} data.peak_gbs].\n", resolver_)
    assert '<span class="ev-value">1.31 TB/s</span>' in alone.html


def test_two_reports_with_one_page_name_are_a_check_finding_naming_both(tmp_path, run):
    """'a b.md' and 'a-b.md' both make r/a-b: build stopped, naming neither file, while check,
    'the build's checks', passed them."""
    import shutil

    from conftest import ROOT

    archive = tmp_path / "ev"
    shutil.copytree(ROOT / "sample_evidence", archive)
    rid = next((archive / "records").rglob("*.json")).parent.name + next((archive / "records").rglob("*.json")).stem
    for name in ("a b.md", "a-b.md"):
        (archive / "reports" / name).write_text(f"---\ntitle: A\n---\n[ev:{rid[:12]}]\n")
    expected = (f"{archive}/reports/a-b.md: IK110 its page name, r/a-b, is {archive}/reports/a b.md's too; "
                "rename one of the two files")
    checked = run("check", archive)
    assert checked.exit_code == 1 and expected in checked.stdout.splitlines()
    built = run("build", archive, "-o", tmp_path / "site", "--cache-dir", tmp_path / "c")
    assert built.exit_code == 1 and built.stderr == f"Error: {expected}\n"
