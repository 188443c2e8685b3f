"""``ikreport build``: archive -> records -> claims -> pages -> files -> site folder.

Everything is gathered and rendered in memory first; the writer then swaps the finished
folder into place. Output is deterministic: sorted iteration, no clock, fixed formatting.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ikreport.archive import Archive, references
from ikreport.check import check
from ikreport.claims.model import RecordSet
from ikreport.errors import BuildError
from ikreport.site.charts import ChartRenderer
from ikreport.site.pages import MEDIA_EXT, changelog_page, index_page, record_page, report_page
from ikreport.site.render import asset, environment, render
from ikreport.site.model import Page
from ikreport.site.writer import SiteFiles, write_site

ASSETS = ("assets/style.css", "assets/site.js")
MiB = 1 << 20
DEFAULT_MAX_BLOB_MB = 20.0  # larger blobs (a .ncu-rep) stay in the archive; the page keeps their hash
WARN_FILE_MB = 50  # GitHub warns at 50 MB a file and refuses at 100 MB
WARN_SITE_MB = 800  # Pages sites should stay under about 1 GB


@dataclass(frozen=True)
class BuildResult:
    pages: int
    records: int
    claims: int
    charts_rendered: int
    charts_cached: int
    warnings: tuple[str, ...] = ()
    blobs_left_out: int = 0


def default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "ikreport" / "charts"


def load_records(archive: Archive) -> RecordSet:
    """Every record, hash-checked and validated, with every reference resolved."""
    checked = check(archive, reports_dir=None)
    problems = [f for f in checked.findings if f.code in ("IK101", "IK102", "IK108")]
    if problems:
        raise BuildError(str(problems[0]) + " ('ikreport check' lists every problem)")
    return checked.records


def build_site(archive: Archive, output: Path, *, templates: Path | None = None, cache_dir: Path | None = None,
               reports_dir: Path | None = None, strict: bool = False,
               max_blob_mb: float = DEFAULT_MAX_BLOB_MB) -> BuildResult:
    checked = check(archive, reports_dir)
    failures = checked.failures(strict)
    if failures:
        more = f" (and {len(failures) - 1} more: 'ikreport check' lists them)" if len(failures) > 1 else ""
        raise BuildError(f"{failures[0]}{more}")
    records = checked.records
    cited_by: dict[str, list[str]] = {}
    for rid, record in sorted(records.records.items()):
        for what, ref in references(record):
            if what == "record" and rid not in cited_by.setdefault(ref, []):
                cited_by[ref].append(rid)
    charts = ChartRenderer(cache_dir or default_cache_dir())
    sources = sorted({(src["id"], src["media_type"], src["size"]) for r in records.records.values() for src in r["sources"]})
    published = {blob_id for blob_id, _media, size in sources if size <= max_blob_mb * MiB}
    pages = [index_page(records, checked.reports), changelog_page(records)] + [report_page(r) for r in checked.reports]
    pages += [record_page(rid, records, cited_by, charts, archive.record_bytes(rid), published)
              for rid in sorted(records.records)]
    slugs = [r.slug for r in checked.reports]
    if len(set(slugs)) != len(slugs):
        raise BuildError(f"two reports have the same page name ({sorted(s for s in slugs if slugs.count(s) > 1)[0]}); rename one")

    env = environment(templates)
    site = {"record_count": len(records.records)}
    files = SiteFiles()
    claims = 0
    for page in pages:
        html, md = render(env, page, site)
        files.add(f"{page.path}.html", html)
        files.add(f"{page.path}.md", md)
        claims += sum(len(g["claims"]) for g in page.context.get("claim_groups", []))
        claims += page.context.get("cited_paragraphs", 0)
    svgs = {chart.key: chart.svg for page in pages for chart in page.context.get("charts", [])}
    for key in sorted(svgs):
        files.add(f"charts/{key}.svg", svgs[key])  # the Markdown twins show charts as images
    for rid in sorted(records.records):
        files.add(f"e/{rid}.json", archive.record_bytes(rid))
    manifest_blobs = []
    for blob_id, media_type, _size in sources:
        if blob_id in published:
            path = f"b/{blob_id}{MEDIA_EXT.get(media_type, '')}"
            files.add(path, archive.read_blob(blob_id))
            manifest_blobs.append({"id": blob_id, "path": path})
    for name in ASSETS:
        files.add(name, asset(env, name))
    (html_404,) = render(env, Page(path="404", template="404", title="Not found", root=""), site, ("html",))
    files.add("404.html", html_404)
    files.add("manifest.json", manifest_json(sorted(records.records), manifest_blobs))
    files.add(".nojekyll", b"")
    warnings = budget_warnings(files)
    write_site(files, output)
    return BuildResult(len(pages), len(records.records), claims, charts.rendered, charts.cached, tuple(warnings),
                       len(sources) - len(published))


def manifest_json(record_ids: list[str], blobs: list[dict[str, str]]) -> bytes:
    """Every record (and published blob) in the site, for 'ikreport verify --site'."""
    import json

    body = {"schema": "ikreport.manifest/1", "records": record_ids, "blobs": blobs}
    return (json.dumps(body, sort_keys=True, indent=1) + "\n").encode("utf-8")


def budget_warnings(files: SiteFiles) -> list[str]:
    out = []
    total = 0
    for path, data in sorted(files.files.items()):
        total += len(data)
        if len(data) > WARN_FILE_MB * MiB:
            out.append(f"{path}: {len(data) / MiB:.0f} MB; GitHub refuses files over 100 MB (use --max-blob-mb)")
    if total > WARN_SITE_MB * MiB:
        out.append(f"the site is {total / MiB:.0f} MB; GitHub Pages sites should stay under about 1 GB")
    return out
