"""Shared test helpers. Tests read fixtures from tests/fixtures only (never ../shared)."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"
NCU = FIXTURES / "ncu"


def ncu_text(name: str) -> str:
    return (NCU / name).read_text("utf-8")


@pytest.fixture
def chart_cache(tmp_path: Path) -> Path:
    return tmp_path / "chart-cache"


@pytest.fixture(autouse=True)
def own_cache(tmp_path, monkeypatch):
    """No test reads or writes the user's ~/.cache/ikreport."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))
