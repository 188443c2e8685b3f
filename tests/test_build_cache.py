"""The one build cache (store/cache.py), as a user meets it: a record changed since it was
kept is refused, and what was kept under other rules, or by a verify, gives the site a clean
build gives. A rebuild after a new record is test_site.py's
test_incremental_build_equals_a_clean_build, a damaged cache test_safety_writer.py's; how much
a warm cache saves is for bench/ to measure."""

from __future__ import annotations

import json
import os
import shutil

import pytest
from click.testing import CliRunner

from conftest import ROOT, record_path
from ikreport.cli.main import cli
from ikreport.store.archive import Archive
from ikreport.store.cache import FILE
from ikreport.errors import BuildError
from ikreport.commands.build import build_site
from test_site import tree

SAMPLE = ROOT / "sample_evidence"


@pytest.fixture
def arch(tmp_path):
    shutil.copytree(SAMPLE, tmp_path / "arch")
    return Archive.open(tmp_path / "arch")


def clean_site(arch, tmp_path):
    """What a build into a new folder with an empty cache makes."""
    build_site(arch, tmp_path / "clean", cache_dir=tmp_path / "empty-cache")
    return tree(tmp_path / "clean")


def test_a_tampered_record_is_caught_although_its_summary_is_kept(arch, tmp_path):
    out, cache = tmp_path / "site", tmp_path / "cache"
    build_site(arch, out, cache_dir=cache)
    victim = record_path(arch, arch.record_ids()[0])
    os.chmod(victim, 0o644)
    data = victim.read_bytes()
    victim.write_bytes(data.replace(b'"title":"', b'"title":"X', 1))
    with pytest.raises(BuildError, match="IK108 the bytes do not hash to the file's name"):
        build_site(arch, out, cache_dir=cache)


@pytest.mark.parametrize("victim_at", [0, -1])
def test_a_tampered_record_no_page_reads_stops_the_build_and_changes_nothing(arch, tmp_path, victim_at):
    """A record known by its kept summary is re-hashed while the pages are made; one found
    damaged then stops the build with check's words before anything is written."""
    out, cache, reports = tmp_path / "site", tmp_path / "cache", tmp_path / "no-reports"
    reports.mkdir()
    build_site(arch, out, cache_dir=cache, reports_dir=reports)
    before = tree(out)
    victim = record_path(arch, arch.record_ids()[victim_at])
    os.chmod(victim, 0o644)
    data = bytearray(victim.read_bytes())  # one letter changed: the same size, so no page is written anew
    at = data.index(b'"title":"') + len(b'"title":"')
    data[at] = ord("X") if data[at] != ord("X") else ord("Y")
    victim.write_bytes(bytes(data))
    with pytest.raises(BuildError, match="IK108 the bytes do not hash to the file's name"):
        build_site(arch, out, cache_dir=cache, reports_dir=reports)
    assert tree(out) == before

def test_summaries_kept_under_other_rules_are_not_used(arch, tmp_path):
    """A summary is kept under the digest of what makes it (the schema, the checks, each kind's
    part, the summary code): one kept under other rules, here with a title no record has, is
    never read, and the site is the one a clean build makes."""
    import sqlite3

    out, cache = tmp_path / "site", tmp_path / "cache"
    build_site(arch, out, cache_dir=cache)
    with sqlite3.connect(cache / FILE) as db:  # as another ikreport release might have left it
        rows = db.execute("SELECT space, key, value FROM kept WHERE space LIKE 'summary %'").fetchall()
        assert rows  # something to plant
        db.execute("DELETE FROM kept WHERE space LIKE 'summary %'")
        for space, key, value in rows:
            entry = json.loads(value)
            if not isinstance(entry, dict):
                continue  # a run of summaries (Cache.get_runs), deleted with them
            entry["head"]["title"] = "a title no record has"
            db.execute("INSERT INTO kept VALUES (?, ?, ?)", ("summary another", key, json.dumps(entry).encode()))
    build_site(arch, out, cache_dir=cache)
    site = tree(out)
    assert not [name for name, data in site.items() if b"a title no record has" in data]
    assert site == clean_site(arch, tmp_path)


def test_a_cache_a_verify_filled_gives_the_clean_site_and_vouches_for_no_changed_record(arch, tmp_path):
    """One cache: what a verify learnt, a build uses, with the same site as a clean build; a
    record changed after the verify is still refused."""
    from ikreport.commands.verify import verify_archive
    from ikreport.store.cache import Cache

    cache = Cache(tmp_path / "cache")
    assert verify_archive(arch, cache=cache) == []
    cache.close()
    build_site(arch, tmp_path / "site", cache_dir=tmp_path / "cache")
    assert tree(tmp_path / "site") == clean_site(arch, tmp_path)
    victim = record_path(arch, arch.record_ids()[-1])
    os.chmod(victim, 0o644)
    victim.write_bytes(victim.read_bytes().replace(b'"title":"', b'"title":"X', 1))
    with pytest.raises(BuildError, match="IK108 the bytes do not hash to the file's name"):
        build_site(arch, tmp_path / "site", cache_dir=tmp_path / "cache")


def test_a_summarised_record_answers_as_the_whole_record(arch):
    """A LazyRecord gives what the record itself gives for every field, with ``[]`` and
    ``get`` alike (its own ``get``, one call a field), and loads its data only when asked."""
    from ikreport.store.recordset import LazyRecord, summarize

    for rid in arch.record_ids():
        whole = arch.load(rid)
        loads: list[str] = []
        lazy = LazyRecord(summarize(whole), lambda loads=loads, rid=rid, whole=whole: loads.append(rid) or whole)
        for key in [*whole, "no-such-field"]:
            if key != "data":
                assert lazy.get(key) == whole.get(key) and lazy.get(key, "x") == whole.get(key, "x")
        assert loads == []
        assert lazy.get("data") == whole["data"] and lazy["data"] == whole["data"] and loads == [rid]
        assert dict(lazy) == whole


def test_a_row_added_to_a_long_table_is_the_only_one_rendered_and_the_table_reads_as_anew(tmp_path, monkeypatch):
    """A table's rows are kept one by one and in runs: after a row is added in the middle of a
    long table, only that row is made and rendered again, the table is what a build without a
    cache gives (every row in order, one line each), and the next build finds it run by run."""
    from ikreport.site import render as render_module
    from ikreport.site.model import Page, Row
    from ikreport.store.cache import Cache

    (tmp_path / "_rows.html").write_text('{% macro t(row) %}<tr><td>{{ row.n }}</td></tr>{% endmacro %}', "utf-8")
    (tmp_path / "page.html").write_text("{{ rows | rows('t') }}", "utf-8")
    rendered, asked = [], []
    real_get = Cache.get_many
    monkeypatch.setattr(Cache, "get_many", lambda self, space, keys: asked.extend(keys) or real_get(self, space, keys))

    def table(rows, folder=tmp_path / "cache"):  # one build's: its cache opened, and closed after
        env = render_module.environment(tmp_path)
        env.build_cache, env.rows_space = Cache(folder), "row test"
        rendered.clear()
        asked.clear()
        try:
            return env.get_template("page.html").render(rows=rows, page=Page("index", "page", "", ""))
        finally:
            env.build_cache.close()

    def lines(rows):
        return "".join(f"<tr><td>{r.key}</td></tr>\n" for r in rows)

    def row(n):  # its values made only when its text is rendered anew
        return Row(f"row {n}", "", "", lambda page: rendered.append(f"row {n}") or {"n": f"row {n}"})

    rows = [row(n) for n in range(0, 2000, 2)]
    assert table(rows) == lines(rows)
    grown = rows[:500] + [row(999)] + rows[500:]
    assert table(grown) == lines(grown) and rendered == ["row 999"]
    assert table(grown, None) == lines(grown) and rendered == [r.key for r in grown]  # a build without a cache
    assert table(grown) == lines(grown) and rendered == []
    assert len(asked) < len(grown) / 10  # found by the run, not row by row


def test_kept_values_are_found_run_by_run_and_a_damaged_or_invalid_one_is_a_miss(tmp_path, monkeypatch):
    """get_runs gives what get_many would, value by value: after one build has asked, the next
    finds a thousand values in a few dozen look-ups; a key added in the middle costs its run
    only; a value that is not valid, or a run entry that is damaged, is a miss, never a wrong
    answer."""
    from ikreport.store.cache import Cache

    cache = Cache(tmp_path / "cache")
    keys = [f"{n:064x}" for n in range(0, 2000, 2)]
    cache.put_many("s", [(k, {"n": int(k, 16)}) for k in keys])
    cache.put("s", keys[7], b"[1]")  # JSON, but not what the space holds
    valid = lambda v: isinstance(v, dict) and type(v.get("n")) is int  # noqa: E731
    want = {k: {"n": int(k, 16)} for k in keys if k != keys[7]}
    assert cache.get_runs("s", keys, valid) == want  # the first: value by value, runs kept at close
    cache.close()
    cache = Cache(tmp_path / "cache")
    asked = []
    real = Cache.get_many
    monkeypatch.setattr(Cache, "get_many", lambda self, space, ks: asked.extend(ks) or real(self, space, ks))
    assert cache.get_runs("s", keys, valid) == want
    assert len(asked) < 150  # the runs, and the one run whose invalid value kept it from being kept

    grown = sorted([*keys, f"{999:064x}"])
    asked.clear()
    assert cache.get_runs("s", grown, valid) == want  # the new key has no value yet
    assert len(asked) < 200
    cache.put("s", f"{999:064x}", b'{"n": 999}')  # now it has: its run is kept at close
    cache.close()
    cache = Cache(tmp_path / "cache")
    asked.clear()
    assert cache.get_runs("s", grown, valid) == {**want, f"{999:064x}": {"n": 999}} and len(asked) < 150
    for space, key, value in cache._db.execute("SELECT space, key, value FROM kept WHERE space = 's'").fetchall():
        if key not in keys:  # every run entry: damaged
            cache.put("s", key, value[:-3])
    assert cache.get_runs("s", keys, valid) == want


def test_one_blob_cited_as_two_media_types_is_offered_as_a_clean_build_offers_it(arch, tmp_path):
    """The same file imported as a vLLM result (JSON) and as an SGLang one (JSON lines): the site
    offers the blob under one name, which a rebuild chose as a clean build does (the kept name is
    keyed by blob and media type), neither page calls it a CSV with formulas, and the build does
    not count it among the blobs left out."""
    run = tmp_path / "run.json"
    run.write_text('{"request_throughput": 4.5, "output_throughput": 512.0, "completed": 100}\n')
    out, cache = tmp_path / "site", tmp_path / "cache"

    def invoke(*args):
        result = CliRunner().invoke(cli, [*args])
        assert result.exit_code == 0, result.output
        return result.output

    ids = [invoke("collect", "serving", "--from-vllm", str(run), "-a", str(arch.location)).split()[-1]]
    invoke("build", str(arch.location), "-o", str(out), "--cache-dir", str(cache))
    ids.append(invoke("collect", "serving", "--from-sglang", str(run), "-a", str(arch.location)).split()[-1])
    said = invoke("build", str(arch.location), "-o", str(out), "--cache-dir", str(cache))
    assert "left out" not in said
    assert tree(out) == clean_site(arch, tmp_path)
    (blob,) = {source["id"] for rid in ids for source in arch.load(rid)["sources"]}
    assert [p.name for p in (out / "b").glob(f"{blob}*")] == [f"{blob}.gz"]  # as the later media type (none) names it
    assert not any("formulas" in (out / "e" / f"{rid}.md").read_text() for rid in ids)
