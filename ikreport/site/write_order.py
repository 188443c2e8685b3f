"""In what order an in-place update renames its new files into the site, so that every link of
every page resolves at every moment: a build killed between two renames leaves a site whose
pages are each the old or the new version, and none links to a file not there yet.

A file waits for the new files (not yet in the site) its HTML links to; among those ready,
leaves go first (record pages and files, blobs, charts, reports, history pages under ``e/ b/
charts/ r/ h/``), then the listings, search index and assets, then the top-level pages, and
``manifest.json``, which names every file, last of all. Files that replace one of the same
name need no wait: the old one answers until then.
"""

from __future__ import annotations

import heapq
import posixpath
import re
from collections import defaultdict
from urllib.parse import unquote, urlsplit

from ikreport.commands.verify_site import MANIFEST
from ikreport.links import SEARCH_META

LEAVES = frozenset({"e", "b", "charts", "r", "h"})
# two patterns, each found by its literal start at C speed: one alternation reads an index of
# 1,000 rows in 1.3 ms, these two in 0.5 (a src=" inside an href's value is one more link, harmless)
_LINKS = (re.compile(rb'href="([^"]*)"'), re.compile(rb'src="([^"]*)"'))
_PLAIN = re.compile(rb"[A-Za-z0-9_.-][A-Za-z0-9_./-]*")  # no scheme, query, fragment, escape or leading slash
_MD_LINK = re.compile(rb"\]\(([^)\s]+)\)")  # [text](target) and ![alt](target), as the twins write them


def links_in(page: str, data: bytes) -> set[str]:
    """The site paths the page at ``page`` (a site path: an HTML page or its Markdown twin)
    links to by relative links; absolute URLs, fragments and links out of the site are left out."""
    folder = posixpath.dirname(page)
    found = set()
    for raw in set(_MD_LINK.findall(data) if page.endswith(".md") else _LINKS[0].findall(data) + _LINKS[1].findall(data)):
        if _PLAIN.fullmatch(raw):  # most links of a page (e/<id>.html): a path and nothing else
            path = raw.decode("ascii")
            if not folder and b"//" not in raw and b"./" not in raw and raw[-1] not in b"/.":
                found.add(path)  # no empty, "." or ".." part: the path already (an index's 2,000 cost 2 ms)
                continue
        else:
            parts = urlsplit(raw.decode("utf-8", "replace").replace("&amp;", "&"))
            if parts.scheme or parts.netloc or not parts.path or parts.path.startswith("/"):
                continue
            path = unquote(parts.path)
        target = posixpath.normpath(posixpath.join(folder, path))
        if not target.startswith("../") and target not in (".", ".."):
            found.add(target)
    return found


def rank(path: str) -> int:
    """Which group ``path`` is renamed in: 0 leaves, 1 listings, search and assets, 2 the
    top-level pages, 3 the manifest."""
    if path == MANIFEST:
        return 3
    if path == SEARCH_META:  # it names the folder of the search index's pieces: after them
        return 2
    top, sep, _ = path.partition("/")
    if not sep:
        return 2
    return 0 if top in LEAVES else 1


def rename_order(staged: dict[str, set[str]], present: set[str] | dict[str, bool]) -> list[str]:
    """Every path of ``staged`` (path -> the site paths its page links to), in the order to
    rename them into a site that already holds ``present``: each after the new files it links
    to, then by :func:`rank` and path. Pages that link to each other and are all new (two new
    records, each naming the other) cannot all find the other there; the first in that order
    goes first, and the others follow at once; a page already in the site that links to them
    waits for them all. The search index's meta.json, which names its pieces and, through them,
    pages, waits for every new leaf and piece, as the manifest waits for every new file."""
    waits = {p: {q for q in links if q in staged and q not in present and q != p} for p, links in staged.items()}
    if MANIFEST in staged:
        waits[MANIFEST] = set(staged) - {MANIFEST}
    if SEARCH_META in staged:  # its documents name pages (and it its pieces): after every new leaf and piece
        waits[SEARCH_META] = {p for p in staged if rank(p) < rank(SEARCH_META) and p not in present}
    users: dict[str, list[str]] = defaultdict(list)
    for path, targets in waits.items():
        for target in targets:
            users[target].append(path)
    pending = {p: len(targets) for p, targets in waits.items()}
    ready = [(rank(p), p) for p, n in pending.items() if n == 0]
    heapq.heapify(ready)
    order = []
    while pending:
        if not ready:  # a cycle of new pages: break it at a new one, which nothing in the site links to yet
            ready.append(min(((rank(p), p) for p in pending if p not in present), default=min((rank(p), p) for p in pending)))
        _, path = heapq.heappop(ready)
        if path not in pending:
            continue
        del pending[path]
        order.append(path)
        for user in users[path]:
            if user in pending:
                pending[user] -= 1
                if pending[user] == 0:
                    heapq.heappush(ready, (rank(user), user))
    return order
