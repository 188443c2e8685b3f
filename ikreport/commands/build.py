"""``ikreport build``: archive -> records -> claims -> pages -> files -> site folder.

Everything is gathered and rendered first (kept in the build cache, which a rebuild takes
unchanged pages from); the writer then writes what changed. Output is deterministic: sorted
iteration, no clock, fixed formatting. Blobs are published as the archive stores them.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ikreport.store.archive import Archive
from ikreport.store.recordset import RecordSet
from ikreport.store.rehash import Look
from ikreport.store.cache import Cache, default_cache_dir
from ikreport.commands.check import Checked, check
from ikreport.site.manifest import inside_site, manifest_json
from ikreport.errors import BuildError, IntegrityError
from ikreport.progress import Progress
from ikreport import links
from ikreport.charts.render import SVG, ChartRenderer
from ikreport.site.history import Series, find_series, history_key, history_page, series_links
from ikreport.site.page_cache import HTML, META, MD, code_digest, is_meta, keep_page, kept_file, record_page_key, templates_digest
from ikreport.site.record_pages import OBJECTS, SERIAL_BELOW, Job, Packed, RenderedPage, render_record_pages, start_early
from ikreport.site.listing import paginate
from ikreport.site.search_index import archive_docs, search_files
from ikreport.site.pages import changelog_page, index_page, report_page
from ikreport.site.published import published_blobs, stored_bytes
from ikreport.site.render import asset, environment, render
from ikreport.site.model import Page
from ikreport.site.writer import Site, SiteFiles, all_inside_site, open_site

ASSETS = ("assets/style.css", "assets/site.js", "assets/search.css", "assets/search.js")
MiB = 1 << 20
DEFAULT_MAX_BLOB_MB = 20.0  # larger blobs (as stored: a .ncu-rep) stay in the archive; the page keeps their hash
WARN_FILE_MB = 50  # GitHub warns at 50 MB a file and refuses at 100 MB
WARN_SITE_MB = 800  # Pages sites should stay under about 1 GB


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


def build_site(archive: Archive, output: Path, *, templates: Path | None = None, cache_dir: Path | None = None,
               reports_dir: Path | None = None, strict: bool = False, max_blob_mb: float = DEFAULT_MAX_BLOB_MB,
               workers: int | None = None, progress: Progress | None = None) -> BuildResult:
    """Gather every page and file, then write the site once (see the module docstring)."""
    folder = cache_dir or default_cache_dir()
    cache = Cache(folder)
    try:
        with open_site(output) as site:  # this build's turn at the folder, from its start to the last file
            archive = archive.read_through(folder / OBJECTS)
            ids = archive.record_ids()
            archive.fetch("records", ids)  # a bucket's objects are fetched once, then kept
            if len(ids) - cache.count(HTML) >= SERIAL_BELOW:  # enough new pages for a pool, likely: start its server now
                start_early(len(ids), workers)
            recheck = functools.partial(check, archive, reports_dir, cache=cache, ids=ids)
            # the records kept by summary are re-hashed while pages are made, then the site's files looked at
            later = Look(f"{site.output}/", _lookable(site.previous.sha256), site.previous.written, site.still) \
                if site.previous else True
            try:
                checked = recheck(later=later)
                _stop_on(checked, strict)
                return _build(archive, checked, site, cache, folder, templates, max_blob_mb, workers, progress)
            except IntegrityError:  # a damaged record kept by summary can trip a report or page before its hash is
                _stop_on(recheck(), strict)  # known: the error is then check's, in its words
                raise
    finally:
        cache.close()


def _lookable(listed: dict[str, Any]) -> list[str]:
    """The files the previous manifest lists with a digest, for the re-hash child to look at: only
    paths inside the site (a hostile manifest's '..' would have it look outside, a NUL stop it)."""
    paths = list(listed)  # JSON keys: text
    return paths if all_inside_site(paths) else [p for p in paths if inside_site(p)]


def _stop_on(checked: Checked, strict: bool) -> None:
    failures = checked.failures(strict)
    if failures:  # one line, as every error: 'ikreport check' lists them all
        more = f" (and {len(failures) - 1} more: 'ikreport check' lists them)" if len(failures) > 1 else ""
        raise BuildError(f"{failures[0]}{more}")


def _build(archive: Archive, checked: Checked, site: Site, cache: Cache, folder: Path, templates: Path | None,
           max_blob_mb: float, workers: int | None, progress: Progress | None) -> BuildResult:
    records = checked.records
    sources = sorted({(src["id"], src["media_type"]) for r in records.heads().values() for src in r["sources"]})
    stored = checked.blobs
    offered = [(blob_id, media_type) for blob_id, media_type in sources if stored[blob_id][1] <= max_blob_mb * MiB]
    archive.fetch("blobs", [blob_id + stored[blob_id][0] for blob_id, _ in offered])
    blobs = published_blobs(archive, offered, stored, cache)
    published = {blob_id: blob.suffix for blob_id, blob in blobs.items()}
    env = environment(templates, folder / "jinja")
    digest = templates_digest(env.loader.searchpath)  # type: ignore[union-attr]
    files = SiteFiles()

    # Record pages: reuse what a key says is unchanged, render the rest in worker processes,
    # while this process makes the pages about the whole archive.
    keys = {rid: record_page_key(rid, records, published, digest) for rid in sorted(records.records)}
    metas = cache.get_runs(META, list(keys.values()), is_meta)  # a damaged one is a miss
    todo = [rid for rid, key in keys.items() if key not in metas]
    job = Job(archive.location, records, published, templates, folder)
    env.build_cache, env.rows_space = cache, f"row {hashlib.sha256((digest + code_digest()).encode()).hexdigest()[:16]}"
    series = find_series(records)
    charts_shown: dict[str, tuple[str, list[Any]]] = {}  # chart key -> (a record whose page shows it, its stamp)
    claims = [0]  # the archive pages' cited paragraphs, added to while the workers render
    fresh: dict[str, tuple[Packed, Packed]] = {}
    chart_svgs: dict[str, str] = {}
    meanwhile = functools.partial(_archive_pages, archive, checked, series, env, digest, cache, files, charts_shown, claims)
    for page in render_record_pages(job, todo, cache, workers, progress, meanwhile):
        metas[keys[page.record_id]] = keep_page(cache, keys[page.record_id], page)
        fresh[page.record_id] = (page.html, page.md)
        chart_svgs.update(page.charts)
    again = functools.partial(_render_again, job, cache, {})
    record_charts: dict[str, tuple[str, list[Any]]] = {}
    for rid, key in keys.items():
        meta = metas[key]
        claims[0] += meta["claims"]
        for chart, stamp in meta["charts"].items():
            record_charts.setdefault(chart, (rid, stamp))
        for n, (ext, space) in enumerate((("html", HTML), ("md", MD))):
            if rid in fresh:
                files.add_lazy(links.record_file(rid, ext), fresh[rid][n].data, *meta[ext])
            else:
                files.add_lazy(links.record_file(rid, ext), functools.partial(
                    _kept_or, functools.partial(kept_file, cache, space, key), again, rid, n), *meta[ext])
    for key, (rid, stamp) in sorted(record_charts.items()):  # the Markdown twins show charts as images
        if key in charts_shown:
            continue  # a history page's chart too: written once
        if key in chart_svgs:
            files.add(links.chart_file(key), chart_svgs[key])
        else:
            files.add_lazy(links.chart_file(key), functools.partial(
                _kept_or, functools.partial(cache.get, SVG, key), again, rid, key), *stamp)
    manifest_blobs = []
    for blob_id, blob in sorted(blobs.items()):  # as stored, checked (site/published.py)
        path = links.blob_file(blob_id, blob.suffix)
        files.add_lazy(path, functools.partial(stored_bytes, archive, blob_id, blob), blob.size, blob_id)
        manifest_blobs.append({"id": blob_id, "path": path})
    for name in ASSETS:
        files.add(name, asset(env, name))
    (html_404,) = render(env, Page(path=links.NOT_FOUND, template="404", title="Not found", root=""), ("html",))
    files.add(links.page_file(links.NOT_FOUND), html_404)
    files.add(".nojekyll", b"")
    found = len(checked.findings)
    records.finish()  # every record re-hashed, before their sizes are asked for and anything is written
    if len(checked.findings) > found:
        raise IntegrityError("a record changed while the site was built; build again")
    for rid in keys:  # the exact bytes, re-read and re-hashed when they are written
        files.add_lazy(links.record_file(rid, "json"), functools.partial(archive.record_bytes, rid),
                       records.sizes.get(rid) or archive.backend.size("records", rid) or 0, rid)
    warnings = budget_warnings(files)
    site.write(files, functools.partial(manifest_json, sorted(records.records), manifest_blobs))
    pages = sum(1 for path in files.entries if path.endswith(".html") and path != links.page_file(links.NOT_FOUND))
    return BuildResult(pages, len(records.records), claims[0], tuple(warnings),
                       len({blob_id for blob_id, _ in sources}) - len(published), pages_rendered=len(todo),
                       findings=tuple(str(f) for f in checked.findings))  # warnings only: errors stopped it


def _archive_pages(archive: Archive, checked: Checked, series: list[Series], env: Any, digest: str, cache: Cache,
                   files: SiteFiles, charts_shown: dict[str, tuple[str, list[Any]]], claims: list[int]) -> None:
    """The pages about the whole archive, into ``files``: always rendered (they list every
    record), but for a series' history page, which the cache keeps, as it keeps record pages,
    as long as its series is the same."""
    records = checked.records
    charts = ChartRenderer(cache)
    keys = [history_key(s, records, digest) for s in series]
    metas = cache.get_runs(META, keys, is_meta)
    for s, key in zip(series, keys):
        again = functools.partial(_history_again, s, records, archive, env, {})
        paths = links.page_file(s.path), links.page_file(s.path, "md")
        meta = metas.get(key)
        if meta is None:
            page = history_page(s, records, archive.read_blob, charts, cache)
            html, md = render(env, page)
            svgs = {k["chart"].key: k["chart"].svg for k in page.context["sections"]}
            meta = keep_page(cache, key, RenderedPage("", Packed.of(html), Packed.of(md), svgs, 0))
            files.add(paths[0], html)
            files.add(paths[1], md)
        else:  # read from the cache when written, if it must be
            for n, (path, space) in enumerate(zip(paths, (HTML, MD))):
                files.add_lazy(path, functools.partial(_kept_or, functools.partial(kept_file, cache, space, key),
                                                       again, "", n), *meta[("html", "md")[n]])
        for chart, stamp in sorted(meta["charts"].items()):
            if chart not in charts_shown:  # one chart on two pages is written once
                charts_shown[chart] = ("", stamp)
                files.add_lazy(links.chart_file(chart), functools.partial(
                    _kept_or, functools.partial(cache.get, SVG, chart), again, "", chart), *stamp)
    index, *listings = paginate(index_page(records, checked.reports, series_links(series, "index")))
    pages = [index, changelog_page(records)] + [report_page(r, records) for r in checked.reports]
    for page in pages + listings:  # listings: the later rows of the index's tables
        html, md = render(env, page)
        files.add(links.page_file(page.path), html)
        files.add(links.page_file(page.path, "md"), md)
        claims[0] += page.context.get("cited_paragraphs", 0)
    docs = archive_docs(records, checked.reports, [(f"History: {s.title}", links.page_file(s.path)) for s in series])
    for path, text in search_files(docs, cache).items():
        files.add(path, text)


def _history_again(series: Series, records: RecordSet, archive: Archive, env: Any, done: dict[int | str, bytes],
                   record_id: str, part: int | str) -> bytes:
    """Part of a history page made again (once per page), when the cache lost it since it was
    looked up: 0 its html, 1 its Markdown, a chart key that chart's SVG (``record_id`` is
    _kept_or's, unused here)."""
    if not done:
        page = history_page(series, records, archive.read_blob, ChartRenderer(Cache(None)), Cache(None))
        html, md = render(env, page)
        done.update({0: html.encode("utf-8"), 1: md.encode("utf-8"),
                     **{k["chart"].key: k["chart"].svg.encode("utf-8") for k in page.context["sections"]}})
    return done[part]


def _kept_or(kept: Callable[[], bytes | None], again: Callable[[str, int | str], bytes], record_id: str,
             part: int | str) -> bytes:
    """What the cache kept, or, when it is gone or damaged since it was looked up, the same
    bytes made again (``again(record_id, part)``): a cache entry is never an error."""
    found = kept()
    return found if found is not None else again(record_id, part)


def _render_again(job: Job, cache: Cache, done: dict[str, dict[int | str, bytes]], record_id: str, part: int | str) -> bytes:
    """Part of a record page rendered again in this process (once per record): 0 its html,
    1 its Markdown, a chart key that chart's SVG."""
    if record_id not in done:
        (page,) = render_record_pages(job, [record_id], cache, workers=1)
        done[record_id] = {0: page.html.data(), 1: page.md.data(),
                           **{k: svg.encode("utf-8") for k, svg in page.charts.items()}}
    return done[record_id][part]


def budget_warnings(files: SiteFiles) -> list[str]:
    """Warnings for files and a site too big for GitHub Pages."""
    out = [f"{path}: {size / MiB:.0f} MB; GitHub refuses files over 100 MB (use --max-blob-mb)"
           for path, size in sorted((p, e.size) for p, e in files.entries.items() if e.size > WARN_FILE_MB * MiB)]
    total = sum(entry.size for entry in files.entries.values())
    if total > WARN_SITE_MB * MiB:
        out.append(f"the site is {total / MiB:.0f} MB; GitHub Pages sites should stay under about 1 GB")
    return out
