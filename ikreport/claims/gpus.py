"""Which GPU names are the same GPU model (pure)."""

from __future__ import annotations

import re
from functools import lru_cache


@lru_cache(maxsize=1024)  # every page and key asks for a handful of names, thousands of times
def gpu_key(name: str | None) -> str | None:
    """'NVIDIA H200' and 'nvidia  h200' are one model; '2x NVIDIA H100 80GB HBM3' is the H100 80GB HBM3."""
    if not name:
        return None
    s = re.sub(r"^\d+x\s+", "", name.strip().lower())
    s = re.sub(r"^nvidia\s+", "", s)
    return " ".join(s.split()) or None

