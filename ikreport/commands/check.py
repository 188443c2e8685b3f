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
  IK203 null value             a report asks for a value the record holds as null (shown n/a)
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

from ikreport.commands import supersede
from ikreport.store import recordset
from ikreport.store.archive import Archive
from ikreport.store.recordset import RecordSet
from ikreport.errors import IkreportError
from ikreport.reports.render import RenderedReport, render_report
from ikreport.reports.resolver import RecordResolver
from ikreport.reports.source import read_reports
from ikreport.store.validated import Validated

RULES = {
    "IK101": "dangling citation", "IK102": "missing blob", "IK103": "unknown citation",
    "IK104": "ambiguous citation", "IK105": "malformed citation", "IK106": "bad value path",
    "IK107": "bad front matter", "IK108": "damaged record", "IK109": "bad supersession",
    "IK201": "superseded citation",
    "IK202": "report cites nothing", "IK203": "null value",
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


def default_reports_dir(archive: Archive) -> Path | None:
    """Where an archive keeps its reports: ARCHIVE/reports; None for one in object storage,
    whose reports come from a folder (--reports)."""
    return archive.folder / "reports" if archive.folder is not None else None


def check(archive: Archive, reports_dir: Path | None = None, root: str = "../",
          validated: Validated | None = None, ids: list[str] | None = None) -> Checked:
    """Load every record and render every report without writing anything; return what was
    found. With a ``validated`` cache (a build's), a record file unchanged since a build hashed
    it is trusted unread (store/stat_index.py). ``ids``: the archive's record ids, when the
    caller has just listed them."""
    findings: list[CheckFinding] = []

    def damaged(rid: str, exc: IkreportError) -> None:
        findings.append(CheckFinding(archive.where(rid), None, "IK108", _after_path(str(exc))))

    records = recordset.load(archive, validated or Validated(None), damaged, trust_unchanged=True, ids=ids)
    # each cited blob's size, from one lstat (no listing of blobs/): a blob it lacks is missing
    sizes = archive.blob_sizes(records.cited_blobs())
    for rid, what, ref in records.dangling(sizes):
        code = "IK102" if what == "blob" else "IK101"
        findings.append(CheckFinding(archive.where(rid), None, code,
                                     f"cites {what} {ref[:12]}, which is not in the archive; copy it in"))
    sized = records.wrong_sizes(sizes.get)  # a missing blob is IK102's, not a wrong size too
    findings += [CheckFinding(archive.where(rid), None, "IK108", why) for rid, why in sized]
    findings += _supersessions(archive, records)
    reports = []
    folder = reports_dir if reports_dir is not None else default_reports_dir(archive)
    if reports_dir is not None and not folder.is_dir():
        raise IkreportError(f"{folder}: no such reports folder")
    # A folder given with --reports is the user's choice and may be a link; ARCHIVE/reports
    # came with the archive and may not (nothing outside the archive is read into a site).
    sources = read_reports(folder, followed=reports_dir is not None) if folder is not None else []
    if sources:
        resolver = RecordResolver(records, root)
        for source in sources:
            report = render_report(source.path, source.text, resolver)
            reports.append(report)
            findings += [CheckFinding(str(source.path), f.line, f.code, f.message) for f in report.findings]
    return Checked(records, reports, findings)


def _supersessions(archive: Archive, records: RecordSet) -> list[CheckFinding]:
    """IK109 for each supersession that breaks supersede.py's rules."""
    return [CheckFinding(archive.where(by), None, "IK109", why)
            for by, why in supersede.problems(records.supersessions(), records.kinds())]


def _after_path(message: str) -> str:
    # archive errors start with the path, which the finding already names
    return message.split(": ", 1)[1] if ": " in message else message
