"""Short, readable forms of C++ kernel names (the full name is always shown beside them)."""

from __future__ import annotations

MAX_SHORT = 48


def short_kernel(name: str) -> str:
    """'void flash_fwd_kernel<Traits<128, 64>, true>(Params)' -> 'flash_fwd_kernel<…>'."""
    s = name.strip()
    if s.startswith("void "):
        s = s[5:]
    # Cut the parameter list: the first '(' at template depth 0.
    depth = 0
    out = []
    for ch in s:
        if ch == "<":
            if depth == 0:
                out.append("<…>")
            depth += 1
        elif ch == ">":
            depth = max(0, depth - 1)
        elif depth == 0:
            if ch == "(" and out:
                break
            out.append(ch)
    short = "".join(out).strip() or s
    if short.startswith("enable_if<…>::type "):
        short = short[len("enable_if<…>::type "):]
    # Numba mangles a hash into brackets: copy_blocked[v1,cw51cXTLSUwv1sD…]
    if "[" in short and len(short) > 24:
        short = short[: short.index("[")] + "[…]"
    return short if len(short) <= MAX_SHORT else short[: MAX_SHORT - 1] + "…"
