"""Issue 18 item 3: what a build of a site remembers for its next build, in one kept file
(site/build_memo.py), makes a rebuild read one file where it read one per page and per blob,
and is a cache like the rest: damaged, it is a miss and the site comes out the same."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import ROOT
from ikreport.site import build as build_module
from ikreport.site.build import build_site
from ikreport.site.build_memo import BuildMemo
from ikreport.site.page_cache import PageCache
from ikreport.site.render import default_templates_dir
from ikreport.store.archive import Archive
from ikreport.store.cache import keep, recall_json

SAMPLE = ROOT / "sample_evidence"


def tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def clean() -> dict[str, bytes]:
    return tree(ROOT / "site")


def build(out: Path, cache: Path) -> None:
    build_site(Archive.open(SAMPLE), out, cache_dir=cache)


def memo_file(cache: Path) -> Path:
    (found,) = (cache / "sites").glob("*.memo.json")
    return found


def test_a_rebuild_takes_page_metas_and_blob_suffixes_from_the_memo(tmp_path, monkeypatch, clean):
    cache = tmp_path / "c"
    build(tmp_path / "site", cache)
    kept = recall_json(memo_file(cache))
    assert kept["pages"] and all(any(name.startswith(f"{table} ") and kept[name] for name in kept)
                                 for table in ("offered", "terms", "rows"))
    looked_up: list[str] = []
    monkeypatch.setattr(PageCache, "get", lambda self, key: looked_up.append(key))
    monkeypatch.setattr(build_module, "recall", lambda path: looked_up.append(str(path)))
    build(tmp_path / "site", cache)
    assert looked_up == []  # no per-page meta, no per-blob suffix file was read
    assert tree(tmp_path / "site") == clean


def _wrong(kept: dict) -> dict:
    """Every entry of every table (page metas, blob suffixes, search terms, index rows) in a
    shape no table takes."""
    return {"version": kept["version"], **{name: {key: 5 for key in table} for name, table in kept.items() if name != "version"}}


@pytest.mark.parametrize("damage", ["garbage", "wrong-shapes", "other-version", "empty-tables"])
def test_a_damaged_memo_is_a_miss(tmp_path, damage, clean):
    cache = tmp_path / "c"
    build(tmp_path / "site", cache)
    path = memo_file(cache)
    kept = recall_json(path)
    if damage == "garbage":
        path.write_bytes(b"\xff\x00garbage")
    elif damage == "wrong-shapes":
        keep(path, json.dumps(_wrong(kept)))
    elif damage == "other-version":
        keep(path, json.dumps({**kept, "version": -1}))
    else:
        keep(path, json.dumps({"version": kept["version"], "pages": [], "offered": None}))
    build(tmp_path / "site", cache)
    assert tree(tmp_path / "site") == clean
    assert recall_json(path) == kept  # and the memo is whole again


def test_a_memo_that_cannot_be_kept_costs_only_time(tmp_path):
    memo = BuildMemo(tmp_path / "not-a-folder" / "memo.json")
    (tmp_path / "not-a-folder").write_text("")
    table = memo.table("pages", lambda v: isinstance(v, int))
    table.put("k", 1)
    memo.save()  # nothing kept, no error
    assert BuildMemo(tmp_path / "not-a-folder" / "memo.json").table("pages", lambda v: True).get("k") is None


def test_kept_json_reads_back_as_json_wrote_it(tmp_path):
    # recall_json reads with orjson first; what only json reads (NaN, Infinity) must still read back
    path = tmp_path / "kept.json"
    value = {"ratio": float("inf"), "rows": [1, 2.5, "x", None], "big": 2**70}
    keep(path, json.dumps(value))
    back = recall_json(path)
    assert back == value and isinstance(back["big"], int)
    keep(path, json.dumps({"nan": float("nan")}))
    assert recall_json(path)["nan"] != recall_json(path)["nan"]  # NaN, not None or a miss
    keep(path, "{not json")
    assert recall_json(path) is None


def test_index_rows_kept_for_other_templates_are_not_used(tmp_path):
    cache = tmp_path / "c"
    build(tmp_path / "site", cache)
    mine = tmp_path / "templates"
    mine.mkdir()
    text = (default_templates_dir() / "_rows.html").read_text().replace('<td class="rid">', '<td class="rid mine">')
    (mine / "_rows.html").write_text(text)
    build_site(Archive.open(SAMPLE), tmp_path / "site", cache_dir=cache, templates=mine)
    page = (tmp_path / "site" / "index.html").read_text()
    assert page.count('<td class="rid mine">') == len(Archive.open(SAMPLE).record_ids())


def test_answers_kept_by_other_code_are_not_used(tmp_path, monkeypatch):
    # an upgrade that changes what a search term is: the memo's terms, kept under the digest of
    # the code that worked them out, are not used by the new code (the rebuild equals a clean one)
    cache = tmp_path / "c"
    build(tmp_path / "site", cache)
    real_terms, real_digest = build_module.terms, build_module.source_digest
    monkeypatch.setattr(build_module, "terms", lambda text: {t for t in real_terms(text) if len(t) >= 3})
    monkeypatch.setattr(build_module, "source_digest", lambda module: "upgraded" + real_digest(module))
    build(tmp_path / "site", cache)
    build(tmp_path / "clean", tmp_path / "fresh")
    assert tree(tmp_path / "site") == tree(tmp_path / "clean")
    (shard,) = (tmp_path / "site" / "search").glob("*/terms-0.json")
    terms = json.loads(shard.read_text())
    assert terms and min(len(t) for t in terms) == 3


def test_a_fifo_planted_in_the_cache_is_a_miss_not_a_wait(tmp_path, clean):
    # the site's state, its memo and the archive's stat index are each read with one open: a FIFO
    # there (no writer ever comes) must read as a missing entry, not hang the build
    import os
    import threading

    cache = tmp_path / "c"
    build(tmp_path / "site", cache)
    kept = sorted((cache / "sites").glob("*.json")) + sorted((cache / "validated").rglob("unchanged/*.idx"))
    assert len(kept) == 3
    for path in kept:
        path.unlink()
        os.mkfifo(path)
    done = threading.Event()
    worker = threading.Thread(target=lambda: (build(tmp_path / "site", cache), done.set()), daemon=True)
    worker.start()
    worker.join(60)
    assert done.is_set(), "the build waited on a FIFO"
    assert tree(tmp_path / "site") == clean
