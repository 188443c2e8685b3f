"""The one error hierarchy. The CLI turns every IkreportError into a one-line message.

Messages name the file (and row, where there is one) and say what to do.
"""

from __future__ import annotations


class IkreportError(Exception):
    """Base of every error ikreport reports to the user."""


class NcuExportError(IkreportError):
    """An ncu CSV export that cannot be read (no CSV, wrong layout, ncu's own error)."""


class ToolError(IkreportError):
    """An external tool that is missing or failed."""


class BandwidthOutputError(IkreportError):
    """Saved bandwidth-tool output that cannot be read, or does not measure device memory."""


class NvidiaSmiError(IkreportError):
    """Saved nvidia-smi output that cannot be read."""


class NsysStatsError(IkreportError):
    """An nsys stats CSV that cannot be read."""


class ServingOutputError(IkreportError):
    """A saved serving-benchmark result (vLLM, SGLang, AIPerf) that cannot be read."""


class ArchiveError(IkreportError):
    """An archive that is missing, unreadable, or unwritable."""


class UnknownIdError(ArchiveError):
    """An id or prefix that names no record."""


class AmbiguousIdError(ArchiveError):
    """A prefix that names more than one record."""


class BadIdError(ArchiveError):
    """An id or prefix that is not 8 to 64 lowercase hex digits."""


class IntegrityError(ArchiveError):
    """A stored file whose bytes no longer hash to its name (truncated or tampered)."""


class StalledError(ArchiveError):
    """Object storage that gave no answer within the network deadline (IKREPORT_NETWORK_DEADLINE)."""


class SettingError(IkreportError):
    """An IKREPORT_* environment variable whose value ikreport cannot use."""


class RecordError(IkreportError):
    """A record that does not match the schema, or has an unknown schema version."""


class PathError(IkreportError):
    """A value path in a citation that does not lead to a value in the record."""


class BuildError(IkreportError):
    """A site that cannot be built (dangling citation, unwritable output, bad template)."""


# safety: publish
class PublishError(IkreportError):
    """A site that cannot be published (no git repository, push refused, not a site)."""


class UnsafeSiteError(PublishError):
    """A site folder holding a link, a special file, or a file its manifest.json does not list."""


class BranchHoldsWorkError(PublishError):
    """A publish that would overwrite a checked-out branch or one holding commits that are not site commits."""


class RepositoryLinkError(PublishError):
    """A path init-pages would write in a repository that is, or passes through, a symbolic link."""


class WorkflowValueError(PublishError):
    """An init-pages option value that cannot go into a workflow safely (a line break, a ${{ expression)."""


# safety: reports
class ReportFileError(IkreportError):
    """A report file or reports folder that is a link, not a regular file, too big, or not UTF-8."""


# safety: parsers
class TruncatedExportError(NcuExportError):
    """An ncu export cut short or with broken rows: a field that never closes, a row of the wrong width."""


class MismatchedExportsError(NcuExportError):
    """A raw and a details export given together that do not come from one profiling run."""


class ImplausibleValueError(IkreportError):
    """A number no hardware can measure (negative, NaN, a percent far above 100, a bandwidth above the bound)."""


# safety: verify
class NonCanonicalRecordError(RecordError):
    """A record whose bytes are not the RFC 8785 form of their value (pretty-printed, duplicate keys)."""


class SupersessionError(RecordError):
    """A supersession that would give a record two successors, one of another kind, or a cycle."""


class SiteManifestError(IkreportError):
    """A site whose manifest.json cannot be read or is not an ikreport manifest."""


class UnreadableSiteFileError(Exception):
    """A file of a site that verify cannot check; caught there and reported as one line."""


class SiteStalledError(UnreadableSiteFileError):
    """A file of a site on the web not received whole within the network deadline; verify stops there."""


# safety: writer
class NotASiteError(BuildError):
    """An output folder that an ikreport build did not write, which a build will not replace."""


class CompareError(IkreportError):
    """A comparison that cannot be made as asked (the same record on both sides)."""
