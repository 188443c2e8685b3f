"""Every link the site makes: where each thing lives in the site, and the link to it from a
page (as mkdocs' ``get_relative_url``). Pages and templates receive finished URLs made here.

Paths are from the site root, without a leading slash: a page is ``index``, ``changes``,
``e/<record id>``, ``r/<report slug>`` or ``h/<series slug>`` (its .html and .md twin share the path); a record's
bytes are ``e/<id>.json``; a blob is ``b/<id><suffix>``.
"""

from __future__ import annotations

SEARCH_META = "search/meta.json"  # the search index's entry: it names the folder of its pieces


def record_page(record_id: str) -> str:
    """The path of a record's page (no extension: the .html and the .md share it)."""
    return f"e/{record_id}"


def record_file(record_id: str, ext: str = "html") -> str:
    """The path of a record's page (``html``, ``md``) or of its bytes (``json``)."""
    return f"{record_page(record_id)}.{ext}"


def report_page(slug: str) -> str:
    """The path of a report's page (no extension)."""
    return f"r/{slug}"


def report_file(slug: str, ext: str = "html") -> str:
    """The path of a report's page, ``html`` or ``md``."""
    return f"{report_page(slug)}.{ext}"


def history_page(slug: str) -> str:
    """The path of a series' history page (no extension)."""
    return f"h/{slug}"


def blob_file(blob_id: str, suffix: str) -> str:
    """The path of a published blob; ``suffix`` is the file name suffix the build chose for it."""
    return f"b/{blob_id}{suffix}"


def url(target: str, page: str) -> str:
    """The relative link from ``page`` to ``target`` (both paths from the site root): a file
    beside the page is linked by its name, anything else through the root ("../")."""
    folder = page.rpartition("/")[0]
    if folder and target.startswith(folder + "/"):
        return target[len(folder) + 1:]
    return "../" * page.count("/") + target


def via_root(target: str, root: str) -> str:
    """The link to ``target`` that climbs to the site root first (``root`` is "" or "../"),
    the form a claim's citations have always had on record pages."""
    return f"{root}{target}"


def anchor(name: str) -> str:
    """A link to a place on the same page."""
    return f"#{name}"
