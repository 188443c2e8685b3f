"""A finding: one problem a check found, with its rule id, where it is, and what to do.

Reports (a line in a report file) and ``ikreport check`` (a record or report file) both make
them: IK1xx are errors and stop a build, IK2xx are warnings and stop it under ``--strict``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

RULES = {
    "IK101": "dangling citation", "IK102": "missing blob", "IK103": "unknown citation",
    "IK104": "ambiguous citation", "IK105": "malformed citation", "IK106": "bad value path",
    "IK107": "bad front matter", "IK108": "damaged record", "IK109": "bad supersession",
    "IK110": "page name taken",
    "IK201": "superseded citation",
    "IK202": "report cites nothing", "IK203": "null value",
}


@dataclass(frozen=True)
class Finding:
    """One problem: its rule id, its 1-based line where it has one, its message, and the file
    it is in once that is known (a report's rendering knows only the line)."""

    code: str
    line: int | None
    message: str
    file: str = ""

    @property
    def is_error(self) -> bool:
        """True for an error (IK1xx), False for a warning (IK2xx)."""
        return self.code.startswith("IK1")

    def in_file(self, file: str) -> Finding:
        """The same finding, said of ``file``."""
        return replace(self, file=file)

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        return f"{where}: {self.code} {self.message}"

    def as_dict(self) -> dict[str, object]:
        """The finding as the JSON object ``check --json`` prints."""
        return {"file": self.file, "line": self.line, "code": self.code, "message": self.message,
                "rule": RULES[self.code], "severity": "error" if self.is_error else "warning"}
