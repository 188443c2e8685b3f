"""The search index and the listing pages, without a browser (tests/test_browser_search.py
drives them in Chromium): terms, shards, chunks, and tables cut into pages."""

from __future__ import annotations

import json

from conftest import ROOT
from ikreport.site import listing, search_index
from ikreport.site.model import Page, Row
from ikreport.site.search_index import SearchDoc, search_files, shard_of, terms

SITE = ROOT / "site"


def test_terms_split_identifiers_as_an_engineer_types_them():
    found = terms("void flash_fwd_splitkv_kernel<Flash_fwd_kernel_traits<128, 64>>(FlashAttentionParams)")
    assert {"flash", "fwd", "splitkv", "kernel", "traits", "128", "64", "flashattentionparams", "attention", "params"} <= found
    assert terms("Kernel2 on a GTX 1650 Ti") == {"kernel2", "kernel", "on", "gtx", "1650", "ti"}  # "a" is too short


def test_every_record_of_the_golden_site_is_found_by_its_title_words_and_gpu():
    meta = json.loads((SITE / "search" / "meta.json").read_text())
    pieces = SITE / "search" / meta["dir"]
    docs = [d for n in range(-(-meta["docs"] // meta["per_chunk"]))
            for d in json.loads((pieces / f"docs-{n}.json").read_text())]
    shards = [json.loads((pieces / f"terms-{n}.json").read_text()) for n in range(meta["shards"])]
    records = {f"e/{p.stem}.html" for p in (SITE / "e").glob("*.json")}
    assert {d["u"] for d in docs if d["k"] != "report"} == records and len(docs) == meta["docs"]
    for n, doc in enumerate(docs):
        for term in terms(doc["t"] + " " + doc["g"]):
            assert n in shards[shard_of(term, meta["shards"])][term], (doc["t"], term)


def test_a_bigger_index_is_split_and_each_term_lies_in_its_shard(monkeypatch):
    monkeypatch.setattr(search_index, "DOCS_PER_CHUNK", 10)
    docs = [SearchDoc(f"profile {n} of kernel_x{n % 7}", f"e/{n:064x}.html", "ncu-profile", f"GPU {n % 3}") for n in range(95)]
    monkeypatch.setattr(search_index, "SHARD_BYTES", 200)
    files = search_files(docs)
    meta = json.loads(files["search/meta.json"])
    assert meta == {"format": 2, "dir": meta["dir"], "docs": 95, "per_chunk": 10, "shards": meta["shards"]}
    assert meta["shards"] > 3
    pieces = f"search/{meta['dir']}/"
    assert len([f for f in files if f.startswith(pieces + "docs-")]) == 10
    assert set(files) == {"search/meta.json"} | {f for f in files if f.startswith(pieces)}
    for n in range(meta["shards"]):
        assert all(shard_of(t, meta["shards"]) == n for t in json.loads(files[f"{pieces}terms-{n}.json"]))
    x3 = json.loads(files[f"{pieces}terms-{shard_of('x3', meta['shards'])}.json"])["x3"]
    assert x3 == [n for n in range(95) if n % 7 == 3]


def test_tables_past_a_page_go_to_listing_pages_linked_from_the_index(monkeypatch):
    monkeypatch.setattr(listing, "ROWS_PER_PAGE", 4)
    rows = [Row(str(n), f"GPU {n % 2}", "ncu-profile", lambda page: {}) for n in range(10)]
    index, *more = listing.paginate(Page("index", "index", "Evidence", "", {"profiles": rows, "others": []}))
    assert index.context["profiles"] == rows[:4] and index.context["profiles_total"] == 10
    assert [p["href"] for p in index.context["profiles_pages"]] == ["index.html", "l/profiles-2.html", "l/profiles-3.html"]
    assert [p.path for p in more] == ["l/profiles-2", "l/profiles-3"]
    last = more[1].context
    assert (last["first"], last["last"], last["total"]) == (9, 10, 10)
    assert last["rows"] == rows[8:] and last["filters"] == {"gpus": ["GPU 0", "GPU 1"], "kinds": ["ncu-profile"]}
    assert [p["href"] for p in last["pages"]] == ["../index.html", "profiles-2.html", "profiles-3.html"]
    assert index.context["profiles_filters"] == {"gpus": ["GPU 0", "GPU 1"], "kinds": ["ncu-profile"]}


def test_a_site_with_listing_pages_has_twins_and_links_that_resolve(tmp_path, monkeypatch):
    """The sample with three rows a page: every listing page has its Markdown twin, and every
    link of both resolves (test_site.py's checks, on this site)."""
    from test_site import (test_every_html_page_has_a_markdown_twin_with_resolving_links as twins,
                           test_every_link_is_relative_and_resolves as resolve)

    from ikreport.commands.build import build_site
    from ikreport.store.archive import Archive

    monkeypatch.setattr(listing, "ROWS_PER_PAGE", 3)
    build_site(Archive.open(ROOT / "sample_evidence"), tmp_path / "site", cache_dir=tmp_path / "cache")
    listed = sorted(p.name for p in (tmp_path / "site" / "l").iterdir())
    assert "profiles-2.html" in listed and "profiles-2.md" in listed and "others-2.md" in listed
    assert "l/profiles-2.md" in (tmp_path / "site" / "index.md").read_text()
    twins(tmp_path / "site")
    resolve(tmp_path / "site")


def test_a_site_built_before_the_search_folders_is_rebuilt_and_its_old_pieces_removed(tmp_path):
    # search format 1 kept docs-<n>.json and terms-<n>.json in search/ itself: a site of that
    # time is still one a build may write into, and the rebuild leaves only the new layout
    from ikreport.commands.build import build_site
    from ikreport.store.archive import Archive

    site = tmp_path / "site"
    build_site(Archive.open(ROOT / "sample_evidence"), site, cache_dir=tmp_path / "c")
    manifest = json.loads((site / "manifest.json").read_text())
    for old in ("docs-0.json", "terms-0.json", "terms-1.json"):
        (site / "search" / old).write_text("[]")
        manifest["files"].append(f"search/{old}")  # as that build's manifest listed them
    del manifest["sha256"]  # which manifests of that time lacked
    (site / "manifest.json").write_text(json.dumps(manifest))
    build_site(Archive.open(ROOT / "sample_evidence"), site, cache_dir=tmp_path / "c")
    meta = json.loads((site / "search" / "meta.json").read_text())
    assert sorted(p.name for p in (site / "search").iterdir()) == sorted([meta["dir"], "meta.json"])


def test_the_pieces_are_the_json_the_standard_library_writes():
    """orjson writes the pieces (a seventh of json.dumps' time): for every code point but the
    surrogates, in a title, the bytes are those of json.dumps(sort_keys, compact, ensure_ascii=False)."""
    text = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000)
    value = [{"t": text, "u": "e/x.html", "k": "ncu-profile", "n": 7}, {"b": [1, 2], "a": ""}]
    assert search_index._compact(value) == json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
