"""The one error hierarchy. The CLI turns every IkreportError into a one-line message.

Messages name the file (and row, where there is one) and say what to do.
"""

from __future__ import annotations


class IkreportError(Exception):
    """Base of every error ikreport reports to the user."""


class NcuExportError(IkreportError):
    """An ncu CSV export that cannot be read (no CSV, wrong layout, ncu's own error)."""


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


class RecordError(IkreportError):
    """A record that does not match the schema, or has an unknown schema version."""


class BuildError(IkreportError):
    """A site that cannot be built (dangling citation, unwritable output, bad template)."""


# safety: writer
class NotASiteError(BuildError):
    """An output folder that an ikreport build did not write, which a build will not replace."""
