"""The index at scale (issue 18 item 4): with 10,000 records, the index, every listing page and
every piece of the search index stay under 2 MB.

    .venv/bin/python bench/bench_scale.py [--profiles 10000] [--launches 20] [--full]

Generates (once, into bench/work/) an archive of ``--profiles`` profiles through the importer's
own functions (bench/inputs.py), then makes the pages about the whole archive as the build
makes them (index, listing pages, changelog, the search index) and prints the biggest of each
kind. ``--full`` runs the whole build instead (every record page too: minutes) and prints the
biggest file of the site. Record pages do not grow with the archive; these pages do.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from inputs import WORK, cli_archive  # noqa: E402

LIMIT = 2 * 1000 * 1000  # bytes: issue 18's 2 MB


def archive_pages(archive_dir: Path) -> dict[str, int]:
    """Path -> size of every page and search file about the whole archive, as build_site makes them."""
    from ikreport.commands.check import check
    from ikreport.site.history import find_series, series_links
    from ikreport.site.listing import paginate
    from ikreport.site.pages import changelog_page, index_page
    from ikreport.site.render import environment, render
    from ikreport.site.search_index import archive_docs, search_files
    from ikreport.store.archive import Archive

    checked = check(Archive.open(archive_dir))
    env = environment(None)
    sizes = {}
    links_to_history = series_links(find_series(checked.records), "index")  # as the build's index has them
    for page in [*paginate(index_page(checked.records, checked.reports, links_to_history)), changelog_page(checked.records)]:
        for ext, text in zip(("html", "md"), render(env, page)):
            sizes[f"{page.path}.{ext}"] = len(text.encode("utf-8"))
    for path, text in search_files(archive_docs(checked.records, checked.reports)).items():
        sizes[path] = len(text.encode("utf-8"))
    return sizes


def site_files(archive_dir: Path) -> dict[str, int]:
    """Path -> size of every file of a full build."""
    from ikreport.commands.build import build_site
    from ikreport.store.archive import Archive

    with tempfile.TemporaryDirectory(dir=WORK) as tmp:
        site = Path(tmp) / "site"
        build_site(Archive.open(archive_dir), site, cache_dir=Path(tmp) / "cache")
        return {str(p.relative_to(site)): p.stat().st_size for p in site.rglob("*") if p.is_file()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profiles", type=int, default=10_000)
    parser.add_argument("--launches", type=int, default=20)
    parser.add_argument("--full", action="store_true", help="build the whole site (every record page)")
    args = parser.parse_args()
    t = time.perf_counter()
    archive_dir = cli_archive(args.profiles, args.launches)
    records = sum(1 for p in (archive_dir / "records").rglob("*") if p.is_file())
    print(f"archive: {records} records ({args.profiles} profiles of {args.launches} launches), "
          f"ready in {time.perf_counter() - t:.0f} s")
    t = time.perf_counter()
    sizes = site_files(archive_dir) if args.full else archive_pages(archive_dir)
    print(f"{'full build' if args.full else 'archive-wide pages and search index'} in {time.perf_counter() - t:.1f} s")
    groups: dict[str, list[tuple[int, str]]] = {}
    for path, size in sizes.items():
        group = ("search index" if path.startswith("search/") else "listing pages" if path.startswith("l/")
                 else "record pages" if path.startswith("e/") else "other")
        groups.setdefault(group, []).append((size, path))
    for group, found in sorted(groups.items()):
        size, path = max(found)
        print(f"{group:14} {len(found):6} files, biggest {path} {size / 1e6:.2f} MB, total {sum(s for s, _ in found) / 1e6:.1f} MB")
    size, path = max((s, p) for p, s in sizes.items() if not p.startswith(("b/", "e/")) or p.endswith(".html"))
    print(f"biggest page or index piece: {path} {size / 1e6:.2f} MB (goal <= {LIMIT / 1e6:.0f} MB): "
          f"{'met' if size <= LIMIT else 'NOT met'}")


if __name__ == "__main__":
    main()
