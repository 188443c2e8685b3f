"""Where ikreport keeps what it can always recompute (validated ids and summaries, page
caches, charts, site state): ``$XDG_CACHE_HOME/ikreport``, else ``~/.cache/ikreport``.
Deleting it loses nothing, so a file that cannot be kept only costs time."""

from __future__ import annotations

import os
import secrets
from pathlib import Path


def default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "ikreport"


def keep(path: Path, text: str) -> bool:
    """Write a cache file whole or not at all (a temp file beside it, then a rename, so
    concurrent builds never read half a file). False when it could not be written."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}")
        tmp.write_text(text, "utf-8")
        os.replace(tmp, path)
        return True
    except OSError:
        return False
