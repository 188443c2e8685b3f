"""Shared test helpers. Tests read fixtures from tests/fixtures only (never ../shared)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"
NCU = FIXTURES / "ncu"


def record_path(archive, record_id: str) -> Path:
    """Where a folder archive keeps a record: tests that damage one reach into the layout."""
    return archive.layout.path("records", record_id)


def blob_path(archive, blob_id: str) -> Path:
    """Where a folder archive keeps a blob (compressed unless it was stored as its bytes)."""
    return archive.layout.path("blobs", blob_id + (archive.blob_form(blob_id) or ".gz"))


def ncu_text(name: str) -> str:
    return (NCU / name).read_text("utf-8")


@pytest.fixture
def chart_cache(tmp_path: Path) -> Path:
    return tmp_path / "chart-cache"


@pytest.fixture(autouse=True)
def own_cache(tmp_path, monkeypatch):
    """No test reads or writes the user's ~/.cache/ikreport."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))


def git(*args, cwd):
    """Run git in ``cwd`` and return its stdout; a failing git fails the test."""
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


@pytest.fixture
def git_identity(monkeypatch):
    """Commits made in a test have an author and committer, whatever the machine's git config."""
    for var, value in (("GIT_AUTHOR_NAME", "t"), ("GIT_AUTHOR_EMAIL", "t@example.invalid"),
                       ("GIT_COMMITTER_NAME", "t"), ("GIT_COMMITTER_EMAIL", "t@example.invalid")):
        monkeypatch.setenv(var, value)


@pytest.fixture
def run(monkeypatch):
    """The CLI in process, as a user runs it: pinned collection time, no archive from the
    environment; call it with the command's words, get click's result."""
    from ikreport.cli.main import cli

    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1796169600")
    monkeypatch.delenv("IKREPORT_ARCHIVE", raising=False)
    runner = CliRunner()
    return lambda *args: runner.invoke(cli, [str(a) for a in args], catch_exceptions=False)


def pytest_collection_modifyitems(config, items):
    """The groups `make check` leaves out: tests that drive Chromium (they use the browser
    fixture), crash trials (SIGKILL at random moments) and fuzzing (hypothesis or a mutation
    fuzzer). `make test` runs them all."""
    import pytest

    for item in items:
        if "browser" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.browser)
        if "sigkill" in item.name:
            item.add_marker(pytest.mark.crash)
        if getattr(getattr(item, "obj", None), "is_hypothesis_test", False) or "fuzzer" in item.name:
            item.add_marker(pytest.mark.fuzz)
