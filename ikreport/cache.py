"""Where ikreport keeps what it can always recompute (validated ids, page caches, site state):
``$XDG_CACHE_HOME/ikreport``, else ``~/.cache/ikreport``. Deleting it loses nothing."""

from __future__ import annotations

import os
from pathlib import Path


def default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "ikreport"
