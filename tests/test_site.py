"""The site: golden comparison with the committed site/, determinism, and that every
citation and link resolves."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from conftest import ROOT, blob_path
from ikreport.store.archive import Archive
from ikreport.errors import BuildError
from ikreport.commands.build import build_site

SAMPLE = ROOT / "sample_evidence"
COMMITTED = ROOT / "site"


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("b") / "site"
    build_site(Archive.open(SAMPLE), out, cache_dir=tmp_path_factory.mktemp("cache"))
    return out


def tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_sample_site_matches_the_committed_one(built):
    """If this fails after a deliberate change, rebuild: make site (and commit site/)."""
    got, want = tree(built), tree(COMMITTED)
    assert sorted(got) == sorted(want)
    different = [name for name in got if got[name] != want[name]]
    assert different == []


def test_two_builds_are_byte_identical_with_a_cold_and_a_warm_cache(built, tmp_path):
    out = tmp_path / "again"
    cache = tmp_path / "cache"
    cold = build_site(Archive.open(SAMPLE), out, cache_dir=cache)  # renders every record page
    first = tree(out)
    warm = build_site(Archive.open(SAMPLE), out, cache_dir=cache)  # renders none
    assert cold.pages_rendered == len(Archive.open(SAMPLE).record_ids()) and warm.pages_rendered == 0
    assert tree(out) == first == tree(built)


def test_incremental_build_equals_a_clean_build(tmp_path):
    """Adding a record re-renders only the pages that depend on it; the result is byte for
    byte what a clean build (empty cache, new folder) makes."""
    import shutil

    from ikreport.collect.context import Context
    from ikreport.collect.ncu_import import import_csv
    from conftest import NCU

    arch = tmp_path / "arch"
    shutil.copytree(SAMPLE, arch)
    out, cache = tmp_path / "site", tmp_path / "cache"
    build_site(Archive.open(arch), out, cache_dir=cache)
    import_csv(Archive.open(arch), [NCU / "ncu_details_nsightful_copy_blocked_base_units.csv"],
               Context(title="one more", gpu="NVIDIA GeForce GTX 1650 Ti"))
    again = build_site(Archive.open(arch), out, cache_dir=cache)
    assert again.pages_rendered == 1  # the new record's page; no other page depends on it
    clean = tmp_path / "clean"
    build_site(Archive.open(arch), clean, cache_dir=tmp_path / "fresh-cache")
    assert tree(out) == tree(clean)


def test_titles_shared_and_supersessions_change_other_records_pages_as_a_clean_build_does(tmp_path, monkeypatch):
    """A new record of a title another has (both are then shown with their short ids), a
    supersession of that one, then a record that shares its replacement's title, each change
    what the index, its listing pages, search and other record pages show of a record already
    there, and move rows between pages: each rebuild is byte for byte a clean build."""
    from ikreport.collect.context import Context
    from ikreport.collect.ncu_import import import_csv
    from ikreport.commands.supersede import supersede
    from ikreport.site import listing
    from conftest import NCU

    monkeypatch.setattr(listing, "ROWS_PER_PAGE", 3)
    arch, out, cache = tmp_path / "arch", tmp_path / "site", tmp_path / "cache"
    shutil.copytree(SAMPLE, arch)
    build_site(Archive.open(arch), out, cache_dir=cache)
    old = Archive.open(arch).resolve("ba98cb69600d")  # a profile a comparison and an nsys summary cite
    title = Archive.open(arch).load(old)["title"]  # first among the profiles by title

    def profile(named):
        return import_csv(Archive.open(arch), [NCU / "ncu_details_nsightful_copy_blocked_base_units.csv"],
                          Context(title=named, gpu="NVIDIA GeForce GTX 1650 Ti"))

    twin = profile(title)
    for step in ("shares a title", "superseded", "its replacement shares a title"):
        if step == "superseded":
            newer = profile("measured again")
            supersede(Archive.open(arch), old, newer, "measured again")
        if step == "its replacement shares a title":
            profile("measured again")
        build_site(Archive.open(arch), out, cache_dir=cache)
        clean = tmp_path / step
        build_site(Archive.open(arch), clean, cache_dir=tmp_path / f"{step} cache")
        assert tree(out) == tree(clean), step
        listed = "".join(p.read_text("utf-8") for p in [out / "index.html", *sorted(out.glob("l/*.html"))])
        assert f"{title} ({old[:8]})" in listed and f"{title} ({twin[:8]})" in listed
    search = "".join(p.read_text("utf-8") for p in sorted(out.glob("search/*/docs-*.json")))
    assert f'"s":"measured again ({newer[:8]})","t":"{title} ({old[:8]})"' in search  # superseded, and by which
    assert f"measured again ({newer[:8]})" in (out / "e" / f"{old}.html").read_text("utf-8")  # its banner


def test_every_record_json_hashes_to_its_name(built):
    files = sorted((built / "e").glob("*.json"))
    assert len(files) == len(Archive.open(SAMPLE).record_ids()) > 0
    for f in files:
        assert hashlib.sha256(f.read_bytes()).hexdigest() == f.stem


class Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for key in ("href", "src", "xlink:href"):
            if a.get(key):
                self.hrefs.append(a[key])
        if a.get("id"):
            self.ids.add(a["id"])


def parse(path: Path) -> Links:
    p = Links()
    p.feed(path.read_text("utf-8"))
    return p


def test_every_link_is_relative_and_resolves(built):
    pages = sorted(built.rglob("*.html"))
    assert pages
    for page in pages:
        links = parse(page)
        for href in links.hrefs:
            assert not re.match(r"^[a-z]+:|^/", href), f"{page}: absolute link {href}"
            target, _, anchor = href.partition("#")
            dest = (page.parent / target).resolve() if target else page
            assert dest.is_file(), f"{page.relative_to(built)}: {href} does not resolve"
            if anchor:
                assert anchor in parse(dest).ids, f"{page.relative_to(built)}: #{anchor} not in {target}"


def test_every_html_page_has_a_markdown_twin_with_resolving_links(built):
    for page in built.rglob("*.html"):
        if page.name == "404.html":  # served by Pages for any missing path; no twin to read on GitHub
            continue
        twin = page.with_suffix(".md")
        assert twin.is_file()
        for href in re.findall(r"\]\(([^)\s]+)\)", twin.read_text("utf-8")):
            target = href.partition("#")[0]
            assert (twin.parent / target).resolve().is_file(), f"{twin}: {href}"


def test_each_claim_cites_records_and_its_page_states_their_limitations_once(built):
    """Each claim group's aside names every record its claims cite; each record's limitations
    are listed once on the page (its own under Limitations), and later asides link there."""
    archive = Archive.open(SAMPLE)
    checked = 0
    for rid in archive.record_ids():
        html = (built / "e" / f"{rid}.html").read_text("utf-8")
        for group in html.split('<div class="claim-group">')[1:]:
            claims, aside = group.split('<aside class="limitations"', 1)
            cited = set(re.findall(r'class="cite" href="\.\./e/([0-9a-f]{64})\.html"', claims))
            assert cited, "a claim group without citations"
            for cited_id in cited:
                assert f'href="../e/{cited_id}.html">[{cited_id[:8]}]</a>' in aside.split("</aside>")[0]
            checked += claims.count('<p class="claim"')
        cited_here = set(re.findall(r'class="cite" href="\.\./e/([0-9a-f]{64})\.html"', html)) | {rid}
        stated: dict[str, int] = {}  # two records may say the same thing: at most each says it once
        for cited_id in cited_here:
            for limitation in set(archive.load(cited_id)["limitations"]):
                stated[limitation] = stated.get(limitation, 0) + 1
        for limitation, records in stated.items():
            escaped = limitation.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("'", "&#39;")
            assert 1 <= html.count(f"<li>{escaped}</li>") <= records, (rid, limitation)
    assert checked >= 20


def test_claim_values_come_from_the_record(built):
    archive = Archive.open(SAMPLE)
    [rid] = [r for r in archive.record_ids()
             if archive.load(r)["title"].startswith("DeepSeek-OCR: CUTLASS") and archive.load(r)["kind"] == "ncu-profile"]
    launch = archive.load(rid)["data"]["launches"][0]
    html = (built / "e" / f"{rid}.html").read_text("utf-8")
    # ncu's Memory Throughput is its busiest level, here L2 (l2_pct), not 'L1/L2' as older imports said
    assert launch["memory_pct"] == launch["l2_pct"] > launch["l1_pct"]
    assert f"memory {launch['memory_pct']:.1f}% of peak (L2 cache; DRAM {launch['dram_pct']:.1f}%)" in html
    assert f"occupancy is limited by {launch['occupancy_limiter']}" in html


def test_dangling_citation_fails_the_build(tmp_path):
    arch = tmp_path / "arch"
    for sub in ("records", "blobs"):
        (arch / sub).mkdir(parents=True)
    record = next(r for r in (json.loads(p.read_bytes()) for p in sorted((SAMPLE / "records").rglob("*.json")))
                  if r["kind"] == "ncu-profile")
    record["cites"] = ["0" * 64]
    from ikreport.store import records

    data = records.encode(record)
    rid = hashlib.sha256(data).hexdigest()
    (arch / "records" / rid[:2]).mkdir()
    (arch / "records" / rid[:2] / f"{rid[2:]}.json").write_bytes(data)
    for blob in record["sources"]:
        src = blob_path(Archive.open(SAMPLE), blob["id"])
        (arch / "blobs" / blob["id"][:2]).mkdir(exist_ok=True)
        (arch / "blobs" / blob["id"][:2] / src.name).write_bytes(src.read_bytes())
    with pytest.raises(BuildError, match="cites record 000000000000, which is not in the archive"):
        build_site(Archive.open(arch), tmp_path / "site", cache_dir=tmp_path / "c")
    assert not (tmp_path / "site").exists()


def test_a_failed_build_keeps_the_previous_site(built, tmp_path):
    out = tmp_path / "site"
    build_site(Archive.open(SAMPLE), out, cache_dir=tmp_path / "c")
    before = tree(out)
    broken = tmp_path / "tpl"
    broken.mkdir()
    (broken / "record.html").write_text("{% for x in %}")
    with pytest.raises(BuildError, match="record.html"):
        build_site(Archive.open(SAMPLE), out, templates=broken, cache_dir=tmp_path / "c")
    assert tree(out) == before
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".site.")] == []


def test_templates_override_falls_back_to_shipped_ones(tmp_path):
    tpl = tmp_path / "tpl"
    tpl.mkdir()
    (tpl / "index.md").write_text("custom index of {{ record_count }} records\n")
    build_site(Archive.open(SAMPLE), tmp_path / "site", templates=tpl, cache_dir=tmp_path / "c")
    n = len(Archive.open(SAMPLE).record_ids())
    assert (tmp_path / "site" / "index.md").read_text() == f"custom index of {n} records\n"
    assert "<h1>Evidence</h1>" in (tmp_path / "site" / "index.html").read_text()


def test_another_templates_folder_is_another_build_even_when_its_files_run_together_alike(tmp_path):
    """Two override folders whose files, names and bytes run together, read the same (a page's
    template ending in "zz.txtFooter", or that template and a file zz.txt holding "Footer"): the
    rebuild with the second gives the pages a clean build with it gives."""
    shipped = (ROOT / "templates" / "record.md").read_text()
    first, second = tmp_path / "t1", tmp_path / "t2"
    first.mkdir()
    second.mkdir()
    (first / "record.md").write_text(shipped + "zz.txtFooter: draft\n")
    (second / "record.md").write_text(shipped)
    (second / "zz.txt").write_text("Footer: draft\n")
    build_site(Archive.open(SAMPLE), tmp_path / "site", templates=first, cache_dir=tmp_path / "c")
    build_site(Archive.open(SAMPLE), tmp_path / "site", templates=second, cache_dir=tmp_path / "c")
    build_site(Archive.open(SAMPLE), tmp_path / "clean", templates=second, cache_dir=tmp_path / "c2")
    assert tree(tmp_path / "site") == tree(tmp_path / "clean")
    assert not any("Footer" in p.read_text() for p in (tmp_path / "site" / "e").glob("*.md"))


def test_untrusted_text_is_escaped(tmp_path):
    from ikreport.collect.context import Context
    from ikreport.collect.ncu_import import import_csv

    arch = Archive.create(tmp_path / "arch")
    csv_path = tmp_path / "evil.csv"
    csv_path.write_text('"ID","Kernel Name","Section Name","Metric Name","Metric Unit","Metric Value"\n'
                        '"0","<script>alert(1)</script>k","GPU Speed Of Light Throughput","Duration","ns","100"\n')
    import_csv(arch, [csv_path], Context(title="<img src=x onerror=alert(1)>", limitations=("<b>bold</b>",)))
    build_site(arch, tmp_path / "site", cache_dir=tmp_path / "c")
    for page in (tmp_path / "site").rglob("*.html"):
        text = page.read_text("utf-8")
        assert "<script>" not in text and "<img src=x" not in text and "<b>bold" not in text
    # The Markdown twins, rendered as GitHub would (CommonMark, raw HTML allowed), make no tags
    from markdown_it import MarkdownIt

    for twin in (tmp_path / "site").rglob("*.md"):
        html = MarkdownIt("commonmark").render(twin.read_text("utf-8"))
        assert "<script>" not in html and "<img src=x" not in html and "<b>bold" not in html


def test_large_blobs_are_left_out_with_their_hash_and_the_budget_warns(tmp_path):
    from ikreport.commands.build import budget_warnings
    from ikreport.site.writer import SiteFiles

    limit = 0.005  # MB, as the site would hold the blob: gzipped as the archive stores it
    result = build_site(Archive.open(SAMPLE), tmp_path / "site", cache_dir=tmp_path / "c", max_blob_mb=limit)
    assert result.blobs_left_out > 0
    published = {p.name.split(".")[0] for p in (tmp_path / "site" / "b").iterdir()}
    archive = Archive.open(SAMPLE)
    big = next(s for r in archive.record_ids() for s in archive.load(r)["sources"]
               if blob_path(archive, s["id"]).stat().st_size > limit * 2**20)
    assert big["id"] not in published
    pages = "".join(p.read_text("utf-8") for p in (tmp_path / "site" / "e").glob("*.html"))
    assert f"not published with the site: too large; sha256 <code>{big['id']}</code>" in pages
    files = SiteFiles()
    files.add_lazy("b/huge.ncu-rep", bytes, 60 * 2**20, "x")
    files.add_lazy("b/more", bytes, 790 * 2**20, "y")
    assert budget_warnings(files) == [
        "b/huge.ncu-rep: 60 MB; GitHub refuses files over 100 MB (use --max-blob-mb)",
        "b/more: 790 MB; GitHub refuses files over 100 MB (use --max-blob-mb)",
        "the site is 850 MB; GitHub Pages sites should stay under about 1 GB",
    ]


@pytest.mark.parametrize("path", ["../escape.html", "/etc/passwd", "e//x.html", "e/./x.html", "", "e/../../x", "e/",
                                  "e/..", "e/.", ".", "..", "./x.html", "e/a\nb.html", "e\\..\\x"])
def test_the_writer_refuses_paths_outside_the_site_and_writes_nothing(tmp_path, path):
    from ikreport.site.writer import SiteFiles, open_site

    files = SiteFiles()
    for name in ("index.html", ".nojekyll", "b/x.csv.gz", path, "e/z-1.md"):  # checked among plain ones
        files.add(name, b"x")
    with pytest.raises(BuildError, match="not a relative path inside the site"):
        with open_site(tmp_path / "site") as site:
            site.write(files, lambda _: b"{}")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("path", [".nojekyll", "x/.../y", "e/a b.html", "e/é.html"])
def test_the_writer_takes_odd_but_safe_paths(tmp_path, path):
    from ikreport.site.writer import SiteFiles, open_site

    files = SiteFiles()
    files.add(path, b"x")
    with open_site(tmp_path / "site") as site:
        site.write(files, lambda _: b"{}")
    assert (tmp_path / "site" / path).read_bytes() == b"x"


def test_the_writer_refuses_a_path_given_twice():
    from ikreport.site.writer import SiteFiles

    files = SiteFiles()
    files.add("e/a.html", b"x")
    with pytest.raises(BuildError, match="written twice"):
        files.add("e/a.html", b"y")


def test_worker_processes_give_the_pages_one_process_gives(tmp_path):
    """Workers know the records by the builder's summaries and read each page's data
    themselves: the site must not depend on it."""
    import shutil

    from conftest import FIXTURES
    from ikreport.collect.context import Context
    from ikreport.collect.ncu_import import import_csv
    from ikreport.site.record_pages import SERIAL_BELOW

    shutil.copytree(SAMPLE, tmp_path / "arch")
    arch = Archive.open(tmp_path / "arch")
    for n in range(SERIAL_BELOW - len(arch.record_ids()) + 1):  # enough pages for a pool
        import_csv(arch, [FIXTURES / "ncu" / "ncu_details_nsightful_copy_blocked_base_units.csv"],
                   Context(title=f"copy {n}"))
    one = build_site(arch, tmp_path / "one", cache_dir=tmp_path / "c1", workers=1)
    two = build_site(arch, tmp_path / "two", cache_dir=tmp_path / "c2", workers=2)
    assert one.pages_rendered == two.pages_rendered == len(arch.record_ids()) >= SERIAL_BELOW
    assert tree(tmp_path / "two") == tree(tmp_path / "one")


def test_templates_read_dict_keys_and_dict_methods_as_jinja2_does(tmp_path):
    """The environment looks a dict's key up first (speed), except names a dict has as
    methods: a user's template with ``row.items()`` or ``row.get('x')`` reads the same."""
    from ikreport.site.render import environment

    (tmp_path / "t.html").write_text("{{ r.name }}|{{ r.get('gone', '-') }}|{% for k, v in r.items() %}{{ k }}={{ v }};{% endfor %}"
                                     "|{{ r.missing is defined }}", "utf-8")
    env = environment(tmp_path)
    row = {"name": "<k>", "items": "shadowed", "get": 1}
    assert env.get_template("t.html").render(r=row) == "&lt;k&gt;|-|name=&lt;k&gt;;items=shadowed;get=1;|False"


@pytest.mark.parametrize("stored", ["compressed", "as before"])
def test_the_manifest_gives_every_file_s_sha256_which_sha256sum_confirms(tmp_path, stored):
    """Every file of the site, its sha256 in manifest.json, pages and blobs alike: a blob's is the
    sha256 of what it holds (its id; decompressed when it is published gzipped, as the archive
    stores it), so `gunzip -c b/ID.csv.gz | sha256sum` prints the id. The next build writes again
    only what no longer matches."""
    import gzip

    arch = tmp_path / "arch"
    if stored == "compressed":
        script = ROOT / "scripts" / "make_sample_evidence.sh"
        subprocess.run(["bash", str(script), str(arch)], check=True, capture_output=True,
                       env={**os.environ, "IK": str(Path(sys.executable).with_name("ikreport"))})
    else:  # blobs stored uncompressed, as archives before this kept them
        shutil.copytree(SAMPLE, arch)
        for stored in (arch / "blobs").rglob("*.gz"):
            stored.chmod(0o644)
            stored.with_suffix("").write_bytes(gzip.decompress(stored.read_bytes()))
            stored.unlink()
    build_site(Archive.open(arch), tmp_path / "site", cache_dir=tmp_path / "c")
    manifest = json.loads((tmp_path / "site" / "manifest.json").read_text())
    files = {str(p.relative_to(tmp_path / "site")) for p in (tmp_path / "site").rglob("*") if p.is_file()}
    assert set(manifest["sha256"]) == set(manifest["files"]) == files - {"manifest.json"}
    published = {b["path"] for b in manifest["blobs"]}
    assert published and all(p.endswith(".gz") == (stored == "compressed") for p in published)
    for path, sha in manifest["sha256"].items():
        data = (tmp_path / "site" / path).read_bytes()
        if path.endswith(".gz"):
            data = gzip.decompress(data)
        assert hashlib.sha256(data).hexdigest() == sha, path
    for blob in manifest["blobs"]:
        assert manifest["sha256"][blob["path"]] == blob["id"]


def test_a_profile_whose_launches_are_a_blob_links_its_per_launch_table(tmp_path, monkeypatch):
    """Profiles bigger than the record keeps inline (every big export) store their launches as a
    CSV blob; the page must link it."""
    import ikreport.kinds.ncu_profile.data as profile_data
    from conftest import NCU
    from ikreport.collect.context import Context
    from ikreport.collect.ncu_import import import_csv

    monkeypatch.setattr(profile_data, "INLINE_LAUNCHES", 2)
    arch = Archive.create(tmp_path / "arch")
    rid = import_csv(arch, [NCU / "ncu_raw_pmpp_06_gtx1650ti_preamble.csv"], Context(title="big enough"))
    (blob,) = [s["id"] for s in arch.load(rid)["sources"] if s["role"] == profile_data.LAUNCH_TABLE_ROLE]
    build_site(arch, tmp_path / "site", cache_dir=tmp_path / "c")
    page = (tmp_path / "site" / "e" / f"{rid}.html").read_text("utf-8")
    assert f'<a href="../b/{blob}.csv.gz">the per-launch table (CSV, gzip)</a>' in page
