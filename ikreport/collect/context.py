"""What a collect command is told about the measurement (title, subject, extra limitations),
and the clock, which only collectors read."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Context:
    title: str | None = None
    gpu: str | None = None
    engine: str | None = None
    model: str | None = None
    workload: str | None = None
    limitations: tuple[str, ...] = field(default_factory=tuple)

    def subject(self, gpu: str | None = None) -> dict[str, str | None]:
        return {"gpu": self.gpu or gpu, "engine": self.engine, "model": self.model, "workload": self.workload}


def utc_now() -> str:
    """Now, as RFC 3339 UTC to the second; SOURCE_DATE_EPOCH wins, for reproducible records."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    seconds = int(epoch) if epoch and epoch.isdigit() else int(time.time())
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))
