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
  IK110 page name taken        two report files whose names give one page name (a b.md, a-b.md)
  IK201 superseded citation    a report cites a record a supersession replaces
  IK202 report cites nothing   a report with no citation
  IK203 null value             a report asks for a value the record holds as null (shown n/a)
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ikreport.commands import supersede
from ikreport.store import recordset, rehash
from ikreport.store.archive import SIZE_MODULO, Archive
from ikreport.store.cache import Cache
from ikreport.store.recordset import RecordSet
from ikreport.errors import IkreportError
from ikreport.reports.findings import Finding
from ikreport.reports.render import RenderedReport, render_report
from ikreport.reports.resolver import RecordResolver
from ikreport.reports.source import read_reports

SIZE_SPACE = "blob size"  # the build cache's: blob id -> the size of its bytes, modulo 4 GiB

@dataclass(frozen=True)
class Checked:
    """What check loaded and found: the records, the rendered reports, every finding, and the
    (form, stored size) of each blob the records cite that the archive holds."""

    records: RecordSet
    reports: list[RenderedReport]
    findings: list[Finding]
    blobs: dict[str, tuple[str, int]]

    def failures(self, strict: bool) -> list[Finding]:
        """The findings that fail: errors, and with ``strict`` warnings too."""
        return [f for f in self.findings if f.is_error or strict]


def default_reports_dir(archive: Archive) -> Path | None:
    """Where an archive keeps its reports: ARCHIVE/reports; None for one in object storage,
    whose reports come from a folder (--reports)."""
    return archive.folder / "reports" if archive.folder is not None else None


def check(archive: Archive, reports_dir: Path | None = None, root: str = "../",
          cache: Cache | None = None, ids: list[str] | None = None, later: bool | rehash.Look = False) -> Checked:
    """Load every record (each re-hashed; parsed unless ``cache`` keeps its summary) and render
    every report without writing anything; return what was found. ``ids``: the archive's
    record ids, when the caller has just listed them. ``later``: recordset.load's; the
    findings of damaged records kept by summary come with ``records.finish()``."""
    findings: list[Finding] = []

    def damaged(rid: str, exc: IkreportError) -> None:
        findings.append(Finding("IK108", None, _after_path(str(exc)), archive.where(rid)))

    records = recordset.load(archive, cache, damaged, ids=ids, later=later)
    blobs = archive.blob_files(records.cited_blobs())  # a blob it lacks is missing
    for rid, what, ref in records.dangling(blobs):
        code = "IK102" if what == "blob" else "IK101"
        findings.append(Finding(code, None, f"cites {what} {ref[:12]}, which is not in the archive; copy it in",
                                archive.where(rid)))
    sized = records.wrong_sizes(_sizes(archive, records, blobs, cache or Cache(None)).get, SIZE_MODULO)
    # the sizes are the blobs' gzip trailers, read without hashing: a damaged blob says a wrong one too
    findings += [Finding("IK108", None, f"{why} (or the blob is damaged: 'ikreport verify' tells which)", archive.where(rid))
                 for rid, why in sized]
    findings += _supersessions(archive, records)
    reports = []
    folder = reports_dir if reports_dir is not None else default_reports_dir(archive)
    if reports_dir is not None and not reports_dir.is_dir():
        raise IkreportError(f"{reports_dir}: no such reports folder")
    # A folder given with --reports is the user's choice and may be a link; ARCHIVE/reports
    # came with the archive and may not (nothing outside the archive is read into a site).
    sources = read_reports(folder, followed=reports_dir is not None) if folder is not None else []
    if sources:
        resolver = RecordResolver(records, root)
        named: dict[str, str] = {}  # page name -> the report file that has it
        for source in sources:
            report = render_report(source.path, source.text, resolver)
            findings += [f.in_file(str(source.path)) for f in report.findings]
            if report.slug in named:  # its page would take the other's place
                findings.append(Finding("IK110", None, f"its page name, r/{report.slug}, is {named[report.slug]}'s too; "
                                        "rename one of the two files", str(source.path)))
                continue
            named[report.slug] = str(source.path)
            reports.append(report)
    return Checked(records, reports, findings, blobs)


def _sizes(archive: Archive, records: RecordSet, blobs: dict[str, tuple[str, int]], cache: Cache) -> dict[str, int]:
    """The size of each held blob's bytes (modulo 4 GiB), for the check of what records declare.
    A blob's size is a pure function of its id, so one a record's declaration was found to
    match is kept in the cache and not read again; one that does not match is read every time."""
    declared = {source["id"]: source["size"] % SIZE_MODULO for head in records.heads().values() for source in head["sources"]}
    kept = cache.get_runs(SIZE_SPACE, sorted(blobs), lambda value: type(value) is int and value >= 0)
    sizes = {blob: kept[blob] if blob in kept else archive.blob_size(blob, form, stored)
             for blob, (form, stored) in blobs.items()}
    cache.put_many(SIZE_SPACE, [(blob, size) for blob, size in sizes.items()
                                if blob not in kept and declared.get(blob) == size])
    return sizes


def _supersessions(archive: Archive, records: RecordSet) -> list[Finding]:
    """IK109 for each supersession that breaks supersede.py's rules."""
    return [Finding("IK109", None, why, archive.where(by))
            for by, why in supersede.problems(records.supersessions(), records.kinds())]


def _after_path(message: str) -> str:
    # archive errors start with the path, which the finding already names
    return message.split(": ", 1)[1] if ": " in message else message
