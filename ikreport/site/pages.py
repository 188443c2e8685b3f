"""Gather the pages of a site from the records and their claims (pure: no files)."""

from __future__ import annotations

import base64
from collections import Counter
from collections.abc import Mapping
from functools import partial
from typing import Any

from ikreport.claims.kernel_names import short_title, visible_titles
from ikreport.kinds.base import record_times
from ikreport.kinds.engine import claims_for
from ikreport.kinds.registry import kind
from ikreport.kinds.supersession import NAME as SUPERSESSION
from ikreport.store.compression import GZ
from ikreport.store.recordset import Record, RecordSet
from ikreport.reports.render import RenderedReport
from ikreport.reports.values import field_label, format_value
from ikreport.formatting import as_sentence, plural, short
from ikreport import links
from ikreport.charts.render import ChartRenderer
from ikreport.site.published import MEDIA_EXT
from ikreport.site.model import Page, Row, claim_view

CHANGELOG_TITLE = 48  # the changelog's titles are short, so that its reason column has the width
AS_TEXT_NOTE = "offered as .txt: a spreadsheet would run some of its cells as formulas"


def blob_href(source: Mapping[str, Any], page: str, published: Mapping[str, str] | None = None) -> str:
    """The link from ``page`` to where the site offers a blob; ``published`` maps each published
    blob to its file name suffix (site.build decides it), else the suffix of its media type."""
    suffix = published.get(source["id"]) if published else None
    if suffix is None:
        suffix = MEDIA_EXT.get(source["media_type"], "")
    return links.url(links.blob_file(source["id"], suffix), page)


def shown_titles(records: RecordSet) -> dict[str, str]:
    """Every record's title as pages show it (claims/kernel_names.py visible_titles), worked out
    once per loaded archive: each page shows a few, but which are alike depends on all."""
    return records.once("shown_titles", lambda rs: visible_titles({rid: h["title"] for rid, h in rs.heads().items()}))


def replacement(rid: str, records: RecordSet, page: str) -> dict[str, str] | None:
    """The record that supersedes ``rid`` ({"href", "md_href", "short", "title"}, linked from
    ``page``), or None: every place that shows a superseded record marks it."""
    newer = records.supersession_of(rid)
    if newer is None:
        return None
    return {**_record_link(newer.new, page), "title": shown_titles(records).get(newer.new, "")}


def listed_as(records: RecordSet, rid: str) -> str:
    """All the index and search show of a record that its bytes and the code do not decide (its id and shown
    title, its replacement's id and shown title): the build cache keeps its row and search entry by it."""
    newer, titles = records.supersession_of(rid), shown_titles(records)
    title = titles.get(rid, "")  # a record not in the archive, that a page names, has none
    return f"{rid}\n{title}\n{newer.new}\n{titles.get(newer.new, '')}" if newer else f"{rid}\n{title}"


class _RecordPage:
    """What a kind's view may ask of the record page it fills (kinds/base.py PageContext)."""

    def __init__(self, path: str, records: RecordSet, charts: ChartRenderer, titles: dict[str, str],
                 published: Mapping[str, str] | None) -> None:
        self.path, self.records, self.charts, self.titles, self.published = path, records, charts, titles, published

    def ref(self, rid: str) -> dict[str, Any]:
        """The short id, title and links of another record, as the page shows it."""
        known = rid in self.records.records
        return {"short": short(rid), "id": rid, "title": self.titles.get(rid, "(not in this archive)"),
                "kind": self.records.records[rid]["kind"] if known else "",
                "superseded_by": replacement(rid, self.records, self.path) if known else None,
                **(self.record_link(rid) if known else {"href": "", "md_href": ""})}

    def record_link(self, rid: str) -> dict[str, str]:
        """{"href", "md_href", "short"} of another record's page, from this page."""
        return _record_link(rid, self.path)

    def blob_href(self, source: Mapping[str, Any]) -> str:
        """Where the site offers one of this record's blobs, from this page."""
        return blob_href(source, self.path, self.published)

    def anchor(self, name: str) -> str:
        """A link to a place on this page."""
        return links.anchor(name)


def _record_link(rid: str, page: str) -> dict[str, str]:
    """{"href", "md_href", "short"}: a record's page and its Markdown twin, linked from ``page``."""
    return {**links.twins(links.record_page(rid), page), "short": short(rid)}


def _source_note(source: dict[str, Any], published: Mapping[str, str] | None) -> str:
    suffix = (published.get(source["id"]) or "").removesuffix(GZ) if published else ""  # a CSV offered as .txt
    return AS_TEXT_NOTE if suffix == ".txt" and MEDIA_EXT.get(source["media_type"]) == ".csv" else ""


def record_page(record_id: str, records: RecordSet, charts: ChartRenderer, record_bytes: bytes = b"",
                published: Mapping[str, str] | None = None) -> Page:
    """A record's page: its head, sources, links, claims, and what its kind's view adds."""
    record = records.whole(record_id)
    root = "../"
    titles = shown_titles(records)
    claims = [claim_view(c, root, titles) for c in claims_for(record_id, record, records)]
    page = _RecordPage(links.record_page(record_id), records, charts, titles, published)
    ref = page.ref

    context: dict[str, Any] = {
        "id": record_id,
        "short": short(record_id),
        "record": _record_view(record),
        # the page's own record is named in full in its heading (cut only where an old automatic title was)
        "heading": short_title(record["title"], 200),
        "claim_groups": _groups(claims, record_id),
        "limitations": record["limitations"],
        "sources": [{**s, "short": short(s["id"]), "note": _source_note(s, published),
                     "href": page.blob_href(s) if published is None or s["id"] in published else "",
                     "file": links.blob_file(s["id"], published.get(s["id"], "") if published else "").split("/")[-1],
                     "gz": bool(published and published.get(s["id"], "").endswith(GZ))}
                    for s in record["sources"]],
        # the exact bytes, for the in-browser hash check where the JSON file cannot be fetched (file://)
        "record_b64": base64.b64encode(record_bytes).decode("ascii"),
        "environment": ref(record["environment"]) if record.get("environment") else None,
        "cites": [ref(c) for c in record["cites"]],
        "supersedes": [{**ref(s["id"]), "reason": s["reason"]} for s in record["supersedes"]],
        "cited_by": [ref(c) for c in records.cited_by(record_id)],
        "json_href": links.url(links.record_file(record_id, "json"), page.path),
        "charts": [],
        "profile": None,
        "facts": [],
        "tables": [],
        "superseded_by": None,
        "versus": None,  # a comparison's two sides, linked in its heading
    }
    this = kind(record["kind"])
    if this.view is not None:
        context.update(this.view(record, page))
        _answer(context["claim_groups"], context.pop("answered", {}))
    newer = records.supersession_of(record_id)
    if newer:
        by = records.records[newer.by]
        # the banner ends the reason's sentence itself: one full stop, whatever the reason ends with
        context["superseded_by"] = {**ref(newer.new), "reason": as_sentence(records.facts(newer.by)["reason"]),
                                    "when": by["collected_at"]}
    return Page(path=page.path, template=this.template, title=record["title"], root=root, context=context)


def _groups(claims: list[Any], record_id: str) -> list[dict[str, Any]]:
    """Claims that cite the same records share one list of those records' limitations. A page
    states each record's limitations once: its own record's under
    "Limitations", another's beside the first group citing it; a later group links there."""
    groups: dict[tuple[str, ...], dict[str, Any]] = {}
    for claim in claims:
        key = tuple(c["id"] for c in claim.citations)
        group = groups.setdefault(key, {"limitations": claim.limitations, "claims": []})
        group["claims"].append(claim)
    stated = {record_id: (links.anchor("limitations"), "listed under Limitations")}
    for group in groups.values():
        shown = []
        for lim in group["limitations"]:
            if lim["id"] in stated:
                see, text = stated[lim["id"]]
                shown.append({**lim, "items": [], "see": see, "see_text": text})
            else:
                anchor = f"lim-{short(lim['id'])}"
                stated[lim["id"]] = (links.anchor(anchor), "listed beside the first claim that cites it")
                shown.append({**lim, "anchor": anchor})
        group["limitations"] = _shared_first(shown)
    return list(groups.values())


def _answer(groups: list[dict[str, Any]], answered: Mapping[str, str]) -> None:
    """Mark the cited records' limitations the page's own record answers (a kind's view says
    which), so a page never lists as open what the record itself settles."""
    for group in groups:
        for lim in group["limitations"]:
            lim["items"] = [f"{item} {answered[item]}" if item in answered else item for item in lim["items"]]


def _shared_first(shown: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What every record of a group states alike, listed once for all of them ("What [a] and
    [b] do not show"), then what each states alone; a record left with nothing of its own has
    its anchor in the shared list (two profiles of one importer share most limitations)."""
    full = [lim for lim in shown if lim["items"]]
    common = [i for i in full[0]["items"] if all(i in lim["items"] for lim in full[1:])] if len(full) > 1 else []
    if not common:
        return shown
    own = [{**lim, "items": [i for i in lim["items"] if i not in common]} if lim["items"] else lim for lim in shown]
    shared = {"shared": full, "items": common,
              "anchors": [lim["anchor"] for lim in own if "anchor" in lim and not lim["items"]]}
    return [shared] + [lim for lim in own if lim["items"] or "see" in lim]


def _record_view(record: Record) -> dict[str, Any]:
    subject = [(k, v) for k, v in record["subject"].items() if v]
    method = record["method"]
    method_rows = [("tool", method["tool"] + (f" {method['tool_version']}" if method.get("tool_version") else "")),
                   ("how", method["how"])]
    if method.get("command"):
        method_rows.append(("command", " ".join(method["command"])))
    # options as a reader reads them: "threshold 5%", not threshold_pct 5
    method_rows.extend((field_label(k), format_value(k, v)) for k, v in sorted(method.get("options", {}).items()))
    return {"title": record["title"], "kind": record["kind"], "times": record_times(record),
            "subject": subject, "method": method_rows}


def changelog_page(records: RecordSet) -> Page:
    """Every supersession, newest first: which record replaced which, and why."""
    rows = []
    for rid in records.by_kind.get(SUPERSESSION, []):
        r = records.records[rid]
        facts = records.facts(rid)  # from the summary: a rebuild need not parse every supersession
        old, new = facts["old"], facts["new"]
        rows.append({"when": r["collected_at"] or "", **_record_link(rid, links.CHANGELOG),
                     "old": _changelog_side(old, records), "new": _changelog_side(new, records),
                     "reason": facts["reason"]})
    rows.sort(key=lambda x: (x["when"], x["short"]), reverse=True)
    return Page(path=links.CHANGELOG, template="changes", title="Changelog", root="", context={"changes": rows})


def _changelog_side(rid: str, records: RecordSet) -> dict[str, str]:
    """One side of a supersession as the changelog shows it: its short id, then its title cut
    short (the full one on hover) so that the reason column has the width; the id tells two
    records of one title apart."""
    full = records.records[rid]["title"] if rid in records.records else ""
    return {**_record_link(rid, links.CHANGELOG), "full": full, "title": short_title(full, CHANGELOG_TITLE)}


def report_page(report: RenderedReport, records: RecordSet) -> Page:
    """A report's page: its rendered body and the records it cites, each with its title and kind
    and, when superseded, the record that replaces it."""
    path = links.report_page(report.slug)
    titles = shown_titles(records)
    return Page(path=path, template="report", title=report.title, root="../", context={
        "report": report, "body": report.html, "markdown": report.markdown,
        "cited_paragraphs": report.html.count('<p class="claim"'),
        "cited": [{**_record_link(rid, path), "title": titles[rid], "kind": records.records[rid]["kind"],
                   "superseded_by": replacement(rid, records, path)} for rid in report.cites],
    })


def index_order(records: RecordSet) -> list[str]:
    """Record ids as the index (and search) lists them: by kind, title, id (worked out once per loaded archive: both ask)."""
    heads = records.heads()  # plain dicts: two fields of each record, read as the sort asks
    return records.once("index_order", lambda _: sorted(heads, key=lambda r: (heads[r]["kind"], heads[r]["title"], r)))


def shown_gpu(records: RecordSet, rid: str) -> str:
    """The GPU the index (its filter, and search) names for a record; a comparison across GPUs names both."""
    return records.once("shown_gpus", lambda rs: {r: kind(h["kind"]).gpu_shown(rs.facts(r), h["subject"].get("gpu"))
                                                  or "unnamed GPU" for r, h in rs.heads().items()})[rid]


def _index_row(records: RecordSet, rid: str, page: str) -> dict[str, Any]:
    """A record's row of the index's tables (and its listing pages), linked from ``page``."""
    record = records.heads()[rid]
    row = {**_record_link(rid, page), "title": shown_titles(records)[rid], "superseded_by": replacement(rid, records, page),
           "kind": record["kind"], "gpu": shown_gpu(records, rid), "launches": "", "time": "", "top": ""}
    index_row = kind(record["kind"]).index_row
    return {**row, **index_row(records.facts(rid))} if index_row is not None else row


def index_page(records: RecordSet, reports: list[RenderedReport] | None = None,
               series: list[dict[str, str]] | None = None) -> Page:
    """The archive at a glance; ``series``: the links to history pages (site/history.py)."""
    heads = records.heads()
    rows = [Row(listed_as(records, rid), shown_gpu(records, rid), heads[rid]["kind"], partial(_index_row, records, rid))
            for rid in index_order(records)]
    in_profiles = [kind(row.kind).index_row is not None for row in rows]  # a kind with one: the profiles table
    return Page(path=links.INDEX, template="index", title="Evidence", root="", context={
        "reports": [{"title": r.title, "summary": r.summary, **links.twins(links.report_page(r.slug), links.INDEX),
                     "cites": plural(len(r.cites), "record", "records")} for r in (reports or [])],
        "record_count": len(records.records),
        "kinds": sorted((name, len(ids)) for name, ids in records.by_kind.items()),
        "gpus": sorted(Counter(row.gpu for row in rows).items()),
        "profiles": [row for row, profile in zip(rows, in_profiles) if profile],
        "others": [row for row, profile in zip(rows, in_profiles) if not profile],
        "series": series or [],
    })
