"""The checks a build makes, without writing a site: every finding has a rule id.

Errors (IK1xx) stop a build; warnings (IK2xx) stop it under --strict.

  IK101 dangling citation      a record cites a record that is not in the archive
  IK102 missing blob           a record's source blob is not in the archive
  IK103 unknown citation       a report cites an id no record has
  IK104 ambiguous citation     a report cites a prefix several records share
  IK105 malformed citation     a report has [ev:…] that is not [ev:ID] or [ev:ID path]
  IK106 bad value path         a report asks for a value the record does not have
  IK107 bad front matter       a report's front matter is not YAML, lists an unknown record, or is over
                               the limits (64 KiB, no anchors or aliases, 8 levels deep)
  IK108 damaged record         a record whose bytes do not hash to its name, not of the schema, not
                               canonical JSON, or declaring a source size its blob does not have
  IK109 bad supersession       a record given two successors, one of another kind, or a cycle
  IK201 superseded citation    a report cites a record a supersession replaces
  IK202 report cites nothing   a report with no citation
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ikreport.commands import supersede
from ikreport.store.archive import Archive, references
from ikreport.claims.model import RecordSet
from ikreport.errors import IkreportError
from ikreport.reports.render import RenderedReport, render_report
from ikreport.reports.resolver import RecordResolver
from ikreport.reports.source import read_reports
from ikreport.store.summaries import LazyRecord, summarize
from ikreport.store.validated import Validated

RULES = {
    "IK101": "dangling citation", "IK102": "missing blob", "IK103": "unknown citation",
    "IK104": "ambiguous citation", "IK105": "malformed citation", "IK106": "bad value path",
    "IK107": "bad front matter", "IK108": "damaged record", "IK109": "bad supersession",
    "IK201": "superseded citation",
    "IK202": "report cites nothing",
}


@dataclass(frozen=True)
class CheckFinding:
    """One finding of ``ikreport check``: where, its rule id (IK1xx error, IK2xx warning) and message."""

    file: str
    line: int | None
    code: str
    message: str

    @property
    def is_error(self) -> bool:
        """True for an error (IK1xx), False for a warning (IK2xx)."""
        return self.code.startswith("IK1")

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        return f"{where}: {self.code} {self.message}"

    def as_dict(self) -> dict[str, object]:
        """The finding as the JSON object ``check --json`` prints."""
        return {**asdict(self), "rule": RULES[self.code], "severity": "error" if self.is_error else "warning"}


@dataclass(frozen=True)
class Checked:
    """What check loaded and found: the records, the rendered reports and every finding."""

    records: RecordSet
    reports: list[RenderedReport]
    findings: list[CheckFinding]

    def failures(self, strict: bool) -> list[CheckFinding]:
        """The findings that fail: errors, and with ``strict`` warnings too."""
        return [f for f in self.findings if f.is_error or strict]


def default_reports_dir(archive: Archive) -> Path:
    """Where an archive keeps its reports: ARCHIVE/reports."""
    return archive.root / "reports"


def check(archive: Archive, reports_dir: Path | None = None, root: str = "../",
          validated: Validated | None = None) -> Checked:
    """Load every record and render every report without writing anything; return what was found."""
    findings: list[CheckFinding] = []
    loaded = {}
    validated = validated or Validated(None)
    for rid in archive.record_ids():
        try:
            kept = validated.entry(rid)
            if kept is not None and kept[1] is not None:
                archive.record_bytes(rid)  # always re-hashed: the id is the promise
                loaded[rid] = LazyRecord(kept[1], functools.partial(archive.load, rid, known_valid=True))
                continue
            record = archive.load(rid, known_valid=kept is not None)
            validated.put(rid, references(record), summarize(record))  # later builds need not parse it
            loaded[rid] = record
        except IkreportError as exc:
            findings.append(CheckFinding(str(archive.record_path(rid)), None, "IK108", _after_path(str(exc))))
    blobs = set(archive.blob_ids())
    for rid, record in sorted(loaded.items()):
        for what, ref in references(record):
            if what == "blob" and ref not in blobs:
                findings.append(CheckFinding(str(archive.record_path(rid)), None, "IK102",
                                             f"cites blob {ref[:12]}, which is not in the archive; copy it in"))
            elif what == "record" and ref not in loaded:
                findings.append(CheckFinding(str(archive.record_path(rid)), None, "IK101",
                                             f"cites record {ref[:12]}, which is not in the archive; copy it in"))
    findings += _source_sizes(archive, loaded, blobs) + _supersessions(archive, loaded)
    records = RecordSet.of(loaded)
    reports = []
    folder = reports_dir if reports_dir is not None else default_reports_dir(archive)
    if reports_dir is not None and not folder.is_dir():
        raise IkreportError(f"{folder}: no such reports folder")
    # A folder given with --reports is the user's choice and may be a link; ARCHIVE/reports
    # came with the archive and may not (nothing outside the archive is read into a site).
    sources = read_reports(folder, followed=reports_dir is not None)
    if sources:
        resolver = RecordResolver(records, root)
        for source in sources:
            report = render_report(source.path, source.text, resolver)
            reports.append(report)
            findings += [CheckFinding(str(source.path), f.line, f.code, f.message) for f in report.findings]
    return Checked(records, reports, findings)


def _source_sizes(archive: Archive, loaded: Mapping[str, Mapping[str, Any]], blobs: set[str]) -> list[CheckFinding]:
    """IK108 for a source whose declared size is not its blob's: the page would state it."""
    out = []
    for rid, record in sorted(loaded.items()):
        for source in record["sources"]:
            try:
                size = os.stat(archive.blob_path(source["id"]), follow_symlinks=False).st_size
            except OSError:
                continue  # a missing blob is IK102's
            if source["id"] in blobs and size != source["size"]:
                out.append(CheckFinding(str(archive.record_path(rid)), None, "IK108",
                                        f"declares blob {source['id'][:12]} as {source['size']} bytes, but it is "
                                        f"{size}; the record is wrong about its source: re-collect it"))
    return out


def _supersessions(archive: Archive, loaded: Mapping[str, Mapping[str, Any]]) -> list[CheckFinding]:
    edges = [edge for rid, record in sorted(loaded.items()) for edge in supersede.of_record(rid, record)]
    kinds = {rid: record["kind"] for rid, record in loaded.items()}
    return [CheckFinding(str(archive.record_path(by)), None, "IK109", why)
            for by, why in supersede.problems(edges, kinds)]


def _after_path(message: str) -> str:
    # archive errors start with the path, which the finding already names
    return message.split(": ", 1)[1] if ": " in message else message
