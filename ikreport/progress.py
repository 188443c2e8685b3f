"""How long steps report progress: one small protocol, the same for collect, import, build
and verify.

Library code takes a ``Progress | None`` and calls it; it never prints. The CLI passes one
(cli/options.py, backed by ``click.progressbar``) only when stderr is a terminal, so output
that scripts and tests read never holds progress.
"""

from __future__ import annotations

from typing import Protocol


class Progress(Protocol):
    """Where a long step says how far it got."""

    def step(self, text: str) -> None:
        """A step of unknown length begins ("exporting the raw page")."""

    def count(self, done: int, total: int) -> None:
        """``done`` of ``total`` items (pages, files, copies) are finished."""
