"""Every link the site makes: where each thing lives in the site, and the link to it from a
page (as mkdocs' ``get_relative_url``). Pages and templates receive finished URLs made here.

Paths are from the site root, without a leading slash: a page is ``index``, ``changes``,
``e/<record id>``, ``r/<report slug>``, ``h/<series slug>`` or ``l/<table>-<n>`` (its .html and .md
twin share the path); a record's bytes are ``e/<id>.json``; a blob is ``b/<id><suffix>``; a chart
``charts/<key>.svg``; the search index's pieces ``search/<folder>/<name>``.
"""

from __future__ import annotations

import re

SEARCH_META = "search/meta.json"  # the search index's entry: it names the folder of its pieces
INDEX, CHANGELOG, NOT_FOUND = "index", "changes", "404"  # the pages at the root


def page_file(page: str, ext: str = "html") -> str:
    """The file of a page (``html`` or ``md``: a page and its Markdown twin share the path)."""
    return f"{page}.{ext}"


def record_page(record_id: str) -> str:
    """The path of a record's page (no extension: the .html and the .md share it)."""
    return f"e/{record_id}"


def record_file(record_id: str, ext: str = "html") -> str:
    """The path of a record's page (``html``, ``md``) or of its bytes (``json``)."""
    return page_file(record_page(record_id), ext)


def report_page(slug: str) -> str:
    """The path of a report's page (no extension)."""
    return f"r/{slug}"


def report_file(slug: str, ext: str = "html") -> str:
    """The path of a report's page, ``html`` or ``md``."""
    return page_file(report_page(slug), ext)


def history_page(slug: str) -> str:
    """The path of a series' history page (no extension)."""
    return f"h/{slug}"


def list_page(table: str, number: int) -> str:
    """The path of the index's table's page ``number`` (1 is the index itself)."""
    return INDEX if number == 1 else f"l/{table}-{number}"


def blob_file(blob_id: str, suffix: str) -> str:
    """The path of a published blob; ``suffix`` is the file name suffix the build chose for it."""
    return f"b/{blob_id}{suffix}"


BLOB_FILE_RX = re.compile(r"^b/([0-9a-f]{64})(\.[A-Za-z0-9]{1,16})?(\.gz)?$")  # what blob_file gives: group 1 the id


def chart_file(key: str) -> str:
    """The path of a chart's SVG (the Markdown twins show charts as images)."""
    return f"charts/{key}.svg"


def search_file(folder: str, name: str) -> str:
    """The path of one piece of the search index, in the folder its meta names."""
    return f"search/{folder}/{name}"


def twins(target: str, page: str) -> dict[str, str]:
    """{"href", "md_href"}: the links from ``page`` to the page ``target`` and its Markdown twin."""
    return {"href": url(page_file(target), page), "md_href": url(page_file(target, "md"), page)}


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
