"""``ikreport build``: archive -> records -> claims -> pages -> files -> site folder.

Everything is gathered and rendered in memory first; the writer then swaps the finished
folder into place. Output is deterministic: sorted iteration, no clock, fixed formatting.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import orjson

from ikreport.store.archive import Archive
from ikreport.store.cache import default_cache_dir, keep, recall, recall_json, source_digest
from ikreport.commands.check import check
from ikreport.commands.verify_site import MANIFEST_SCHEMA
from ikreport import csv_cells
from ikreport.csv_cells import has_formula_cells
from ikreport.errors import BuildError
from ikreport.progress import Progress
from ikreport import links
from ikreport.site.build_memo import BuildMemo, Table, is_text
from ikreport.site.charts import ChartRenderer
from ikreport.site.history import find_series, history_page, series_links
from ikreport.site.page_cache import PageCache, code_digest, is_meta, record_page_key, templates_digest
from ikreport.site.record_pages import OBJECTS, Job, render_record_pages, start_early
from ikreport.site.listing import paginate
from ikreport.site import search_index
from ikreport.site.search_index import archive_docs, search_files, terms
from ikreport.site.pages import MEDIA_EXT, changelog_page, index_page, report_page
from ikreport.site.render import asset, environment, render
from ikreport.site.model import Page
from ikreport.site.writer import SiteFiles, parse_state, write_site
from ikreport.store.validated import Validated

ASSETS = ("assets/style.css", "assets/site.js", "assets/search.css", "assets/search.js")
MiB = 1 << 20
DEFAULT_MAX_BLOB_MB = 20.0  # larger blobs (a .ncu-rep) stay in the archive; the page keeps their hash
WARN_FILE_MB = 50  # GitHub warns at 50 MB a file and refuses at 100 MB
WARN_SITE_MB = 800  # Pages sites should stay under about 1 GB
# Every path (file or folder) a build writes: a folder holding anything else is not a site
# and is never replaced. Reports' names are slugs (reports/render.py); blobs take MEDIA_EXT.
BUILT_PATHS = re.compile(
    r"(?:index|changes)\.(?:html|md)|404\.html|manifest\.json|\.nojekyll|assets(?:/[\w.-]+)?"
    r"|l(?:/(?:profiles|others)-[0-9]+\.(?:html|md))?|search(?:/meta\.json|/[0-9a-f]{16}(?:/(?:docs|terms)-[0-9]+\.json)?"
    r"|/(?:docs|terms)-[0-9]+\.json)?"  # the pieces' place before search format 2: a rebuild removes them
    r"|e(?:/[0-9a-f]{64}\.(?:html|md|json))?|charts(?:/[0-9a-f]{64}\.svg)?|[rh](?:/[a-z0-9-]+\.(?:html|md))?"
    r"|b(?:/[0-9a-f]{64}(?:" + "|".join(re.escape(ext) for ext in MEDIA_EXT.values()) + r")?)?")


@dataclass(frozen=True)
class BuildResult:
    """What a build made: pages, records, claims, warnings, and what it left out or rendered anew."""

    pages: int
    records: int
    claims: int
    warnings: tuple[str, ...] = ()  # files and a site too big for GitHub Pages
    blobs_left_out: int = 0
    pages_rendered: int = 0  # record pages rendered in this build (the rest were unchanged)
    findings: tuple[str, ...] = ()  # check's warnings (IK2xx) as check prints them; --strict fails on them


def _state_path(cache: Path, output: Path) -> Path:
    return cache / "sites" / (hashlib.sha256(str(output.resolve()).encode()).hexdigest()[:32] + ".json")


def build_site(archive: Archive, output: Path, *, templates: Path | None = None, cache_dir: Path | None = None,
               reports_dir: Path | None = None, strict: bool = False, max_blob_mb: float = DEFAULT_MAX_BLOB_MB,
               workers: int | None = None, progress: Progress | None = None) -> BuildResult:
    """Gather every page and file, then write the site once (see the module docstring)."""
    cache = cache_dir or default_cache_dir()
    archive = archive.read_through(cache / OBJECTS)  # a bucket's objects are fetched once, then kept
    ids = archive.record_ids()
    archive.fetch("records", ids)
    state_file = _state_path(cache, output)
    memo = BuildMemo(state_file.with_suffix(".memo.json"))  # what the last build of this site learnt
    known = memo.table("pages", is_meta)
    # a guess at how many pages need rendering (only time depends on it): this site's last
    # build's pages, else all the cache holds, as a first build of a site may reuse another's
    start_early(len(ids) - (known.kept or PageCache(cache / "pages").count()), workers)
    checked = check(archive, reports_dir, validated=Validated(cache / "validated"), ids=ids)  # the ids fetched
    failures = checked.failures(strict)
    if failures:  # one line, as every error: 'ikreport check' lists them all
        more = f" (and {len(failures) - 1} more: 'ikreport check' lists them)" if len(failures) > 1 else ""
        raise BuildError(f"{failures[0]}{more}")
    records = checked.records
    slugs = [r.slug for r in checked.reports]
    if len(set(slugs)) != len(slugs):
        raise BuildError(f"two reports have the same page name ({sorted(s for s in slugs if slugs.count(s) > 1)[0]}); rename one")
    sources = sorted({(src["id"], src["media_type"], src["size"]) for r in records.heads().values() for src in r["sources"]})
    offered = [(blob_id, media_type) for blob_id, media_type, size in sources if size <= max_blob_mb * MiB]
    archive.fetch("blobs", [blob_id for blob_id, _ in offered])
    suffixes = memo.table(f"offered {source_digest(csv_cells)}", lambda v: v in (".csv", ".txt"))
    published = {blob_id: offered_suffix(archive, blob_id, media_type, cache, suffixes) for blob_id, media_type in offered}
    env = environment(templates, cache / "jinja")
    digest = templates_digest(env.loader.searchpath)  # type: ignore[union-attr]
    # rows of the index's tables, by their values, for these templates and this code
    env.rows = memo.table(f"rows {hashlib.sha256((digest + code_digest()).encode()).hexdigest()[:16]}", is_text)
    files = SiteFiles()

    # Record pages: reuse what a key says is unchanged, render the rest (in parallel).
    page_cache = PageCache(cache / "pages")
    keys = {rid: record_page_key(rid, records, published, digest) for rid in sorted(records.records)}
    # a page or chart gone from the cache since is made again when the writer needs it (_kept_or)
    metas = {rid: known.get(key) or page_cache.get(key) for rid, key in keys.items()}
    chart_dir = cache / "charts"
    todo = [rid for rid, meta in metas.items() if meta is None]
    job = Job(archive.location, records, published, templates, cache)
    chart_svgs: dict[str, str] = {}
    fresh: dict[str, tuple[str, str]] = {}
    for page in render_record_pages(job, todo, workers, progress):
        meta = {"charts": {k: len(svg.encode("utf-8")) for k, svg in page.charts.items()}, "claims": page.claims}
        metas[page.record_id] = page_cache.put(keys[page.record_id], page.html, page.md, meta)
        fresh[page.record_id] = (page.html, page.md)
        chart_svgs.update(page.charts)
    claims = 0
    chart_owner: dict[str, tuple[str, int]] = {}  # chart key -> (a record whose page shows it, its size)
    again = functools.partial(_render_again, job, {})
    for rid, key in keys.items():
        meta = metas[rid]
        assert meta is not None
        known.put(key, meta)
        claims += meta["claims"]
        for chart, size in meta["charts"].items():
            chart_owner.setdefault(chart, (rid, size))
        for n, ext in enumerate(("html", "md")):
            if rid in fresh:
                files.add(links.record_file(rid, ext), fresh[rid][n], key)
            else:
                files.add_lazy(links.record_file(rid, ext), functools.partial(
                    _kept_or, functools.partial(page_cache.read, key, ext), again, rid, n), meta["sizes"][ext], key)
    for key, (rid, size) in sorted(chart_owner.items()):  # the Markdown twins show charts as images
        if key in chart_svgs:
            files.add(f"charts/{key}.svg", chart_svgs[key], key)
        else:  # the kept chart by a string path: a thousand pathlib joins cost 1 ms
            files.add_lazy(f"charts/{key}.svg", functools.partial(
                _kept_or, functools.partial(recall, f"{chart_dir}/{key}.svg"), again, rid, key), size, key)

    # Pages about the whole archive: always rendered (they list every record).
    series = find_series(records)
    charts = ChartRenderer(chart_dir)
    history = [history_page(s, records, archive.read_blob, charts, cache / "history") for s in series]
    for page in history:
        for k in page.context["kernels"]:
            if k["chart"].key not in chart_owner:  # a chart a record page shows too is written once
                chart_owner[k["chart"].key] = ("", 0)
                files.add(f"charts/{k['chart'].key}.svg", k["chart"].svg, k["chart"].key)
    index, *listings = paginate(index_page(records, checked.reports, series_links(series, "index")))
    pages = [index, changelog_page(records)] + [report_page(r, records) for r in checked.reports] + history
    for page in pages + listings:  # listings: the later rows of the index's tables
        html, md = render(env, page)
        files.add(f"{page.path}.html", html)
        files.add(f"{page.path}.md", md)
        claims += page.context.get("cited_paragraphs", 0)
    docs = archive_docs(records, checked.reports, [(p.title, f"{p.path}.html") for p in history])
    terms_known = memo.table(f"terms {source_digest(search_index)}", _is_terms)  # another terms() starts anew
    for path, text in search_files(docs, functools.partial(_kept_terms, terms_known)).items():
        # a piece's folder is a digest of the pieces, so its path names its bytes: not hashed again
        files.add(path, text, None if path == links.SEARCH_META else path)
    for rid in sorted(records.records):  # a size from the lstat check trusted the file by, else a stat now
        size = records.sizes.get(rid) or archive.record_size(rid) or 0  # 0 only if deleted since it was read: that read fails
        files.add_lazy(links.record_file(rid, "json"), functools.partial(archive.record_bytes, rid), size, rid, sha256=rid)
    manifest_blobs = []
    for blob_id, media_type, size in sources:
        if blob_id in published:
            path = links.blob_file(blob_id, published[blob_id])
            files.add_lazy(path, functools.partial(archive.read_blob, blob_id), size, blob_id, sha256=blob_id)
            manifest_blobs.append({"id": blob_id, "path": path})
    for name in ASSETS:
        files.add(name, asset(env, name))
    (html_404,) = render(env, Page(path="404", template="404", title="Not found", root=""), ("html",))
    files.add("404.html", html_404)
    files.add(".nojekyll", b"")
    # Last: its "files" list names every path added above, which is what publish trusts.
    files.add("manifest.json", manifest_json(sorted(records.records), manifest_blobs, sorted(files.entries)))
    warnings = budget_warnings(files)
    state = write_site(files, output, parse_state(recall_json(state_file)), BUILT_PATHS)
    # if it cannot be kept, the next build writes every file again: slower, not wrong
    keep(state_file, orjson.dumps(state))
    memo.save()
    return BuildResult(len(pages) + len(listings) + len(keys), len(records.records), claims, tuple(warnings),
                       len(sources) - len(published), pages_rendered=len(todo),
                       findings=tuple(str(f) for f in checked.findings))  # warnings only: errors stopped it


def _kept_or(kept: Callable[[], bytes | None], again: Callable[[str, int | str], bytes], record_id: str,
             part: int | str) -> bytes:
    """What the cache kept, or, when it is gone or damaged since it was looked up, the same
    bytes made again (``again(record_id, part)``): a cache entry is never an error."""
    found = kept()
    return found if found is not None else again(record_id, part)


def _render_again(job: Job, done: dict[str, dict[int | str, bytes]], record_id: str, part: int | str) -> bytes:
    """Part of a record page rendered again in this process (once per record): 0 its html,
    1 its Markdown, a chart key that chart's SVG."""
    if record_id not in done:
        (page,) = render_record_pages(job, [record_id], workers=1)
        done[record_id] = {0: page.html.encode("utf-8"), 1: page.md.encode("utf-8"),
                           **{k: svg.encode("utf-8") for k, svg in page.charts.items()}}
    return done[record_id][part]


def _kept_terms(known: Table, text: str) -> list[str]:
    """A search document's terms, as the last build worked them out when it had the same text."""
    return known.get_or(text, lambda: sorted(terms(text)))  # type: ignore[no-any-return]


def _is_terms(value: object) -> bool:
    return type(value) is list and set(map(type, value)) <= {str}  # at C speed: 14,000 terms a build


def offered_suffix(archive: Archive, blob_id: str, media_type: str, cache: Path, known: Table) -> str:
    """The file name suffix the site offers a blob under: its media type's, except that a CSV
    holding cells a spreadsheet would run as formulas is offered as .txt. Exports are kept
    verbatim (a blob's name is its hash), so they cannot be neutralised as the CSVs ikreport
    writes are; a .txt opens in a text editor or the browser, not a spreadsheet. The answer
    for a blob never changes, so it is kept in the cache (and in ``known``, the build memo's table)."""
    suffix = MEDIA_EXT.get(media_type, "")
    if suffix != ".csv":
        return suffix
    return known.get_or(blob_id, lambda: _kept_suffix(archive, blob_id, cache))  # type: ignore[no-any-return]


def _kept_suffix(archive: Archive, blob_id: str, cache: Path) -> str:
    memo = cache / "offered" / source_digest(csv_cells) / blob_id  # another rule looks again
    kept = recall(memo)  # None when missing or damaged: looked at again
    if kept in (b".csv", b".txt"):
        return kept.decode()
    found = ".txt" if has_formula_cells(archive.read_blob(blob_id)) else ".csv"
    keep(memo, found)  # if it cannot be kept, the next build looks again
    return found


def manifest_json(record_ids: list[str], blobs: list[dict[str, str]], paths: list[str]) -> bytes:
    """Every record (and published blob) in the site, for 'ikreport verify --site', and every
    file the build wrote but this one (``files``), so that 'ikreport publish' can refuse a
    file nobody built."""
    body = {"schema": MANIFEST_SCHEMA, "records": record_ids, "blobs": blobs, "files": paths}
    # orjson: json.dumps with an indent runs in Python, 6 ms of a rebuild for 5,000 paths
    return orjson.dumps(body, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS | orjson.OPT_APPEND_NEWLINE)


def budget_warnings(files: SiteFiles) -> list[str]:
    """Warnings for files and a site too big for GitHub Pages."""
    out = []
    total = 0
    for path, size in sorted(files.sizes().items()):
        total += size
        if size > WARN_FILE_MB * MiB:
            out.append(f"{path}: {size / MiB:.0f} MB; GitHub refuses files over 100 MB (use --max-blob-mb)")
    if total > WARN_SITE_MB * MiB:
        out.append(f"the site is {total / MiB:.0f} MB; GitHub Pages sites should stay under about 1 GB")
    return out
