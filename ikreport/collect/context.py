"""What a collect command is told about the measurement (title, subject, extra limitations),
and the clock, which only collectors read."""

from __future__ import annotations

import os
import time
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path

from ikreport.errors import IkreportError

CONTEXT_KEYS = ("title", "gpu", "engine", "model", "workload")
MAX_TITLE = 500  # the record schema's limit
CONTEXT_BYTES = 1 << 20  # a context file is a few lines
# How an imported profile was made, as the importer states it (an export does not say): the
# record keeps these as stated, never as observed.
STATED_KEYS = ("clock_control", "cache_control", "replay_mode", "ncu_version", "driver")
STATED_CHOICES = {"clock_control": ("none", "base", "reset"), "cache_control": ("all", "none"),
                  "replay_mode": ("kernel", "application", "range", "app-range")}


@dataclass(frozen=True)
class Context:
    title: str | None = None
    gpu: str | None = None
    engine: str | None = None
    model: str | None = None
    workload: str | None = None
    limitations: tuple[str, ...] = field(default_factory=tuple)
    stated: tuple[tuple[str, str], ...] = ()  # (key of STATED_KEYS, value), sorted

    def subject(self, gpu: str | None = None) -> dict[str, str | None]:
        return {"gpu": self.gpu or gpu, "engine": self.engine, "model": self.model, "workload": self.workload}


def long_title(title: str, added: int = 0) -> str | None:
    """What to do when ``title`` (with ``added`` characters an importer appends) is too long for a
    record; None when it is not."""
    if len(title) + added <= MAX_TITLE:
        return None
    return f"a record's title is at most {MAX_TITLE}: shorten it" + (f" to {MAX_TITLE - added}" if added else "")


def load_context(path: Path) -> Context:
    """A context file (TOML): title, gpu, engine, model, workload, limitations = [...]."""
    from ikreport.collect.textfile import read_bytes  # here: its imports would slow every command's start

    if not path.exists():
        raise IkreportError(f"{path}: no such context file")
    try:  # as an export is read: a file or a pipe, never a device; a few lines, so at most a MiB
        data = tomllib.loads(read_bytes(path, IkreportError, CONTEXT_BYTES).decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise IkreportError(f"{path}: not valid TOML ({exc})") from exc
    except RecursionError as exc:
        raise IkreportError(f"{path}: not valid TOML (nested too deep to read); a context file holds text values") from exc
    unknown = sorted(set(data) - set(CONTEXT_KEYS) - set(STATED_KEYS) - {"limitations"})
    if unknown:
        raise IkreportError(f"{path}: unknown key {unknown[0]!r}; use {', '.join(CONTEXT_KEYS + STATED_KEYS)}, limitations")
    limitations = data.get("limitations", [])
    if not isinstance(limitations, list) or not all(isinstance(x, str) for x in limitations):
        raise IkreportError(f"{path}: 'limitations' must be a list of strings")
    for key in CONTEXT_KEYS + STATED_KEYS:
        if key in data and not isinstance(data[key], str):
            raise IkreportError(f"{path}: {key!r} must be a string")
    if "title" in data and (too_long := long_title(data["title"])):
        raise IkreportError(f"{path}: 'title' is {len(data['title'])} characters; {too_long}")
    for key, choices in STATED_CHOICES.items():
        if key in data and data[key] not in choices:
            raise IkreportError(f"{path}: {key!r} must be one of {', '.join(choices)}")
    stated = tuple(sorted((k, data[k]) for k in STATED_KEYS if k in data))
    return Context(**{k: data.get(k) for k in CONTEXT_KEYS}, limitations=tuple(limitations), stated=stated)


def merge_context(base: Context, flags: Context) -> Context:
    """Command-line flags win over the context file; limitations add up."""
    values = {k: getattr(flags, k) or getattr(base, k) for k in CONTEXT_KEYS}
    stated = tuple(sorted({**dict(base.stated), **dict(flags.stated)}.items()))
    return replace(base, **values, limitations=base.limitations + flags.limitations, stated=stated)


def utc_now() -> str:
    """Now, as RFC 3339 UTC to the millisecond, so that records made within one second keep their
    order (history pages); SOURCE_DATE_EPOCH wins, to the second, for reproducible records."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if epoch and epoch.isdigit():
        return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(int(epoch)))
    millis = int(time.time() * 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(millis // 1000)) + f".{millis % 1000:03d}Z"
