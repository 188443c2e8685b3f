"""Serve a folder on 127.0.0.1 (never another address) under a sub-path, for tests."""

from __future__ import annotations

import functools
import http.server
import shutil
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 (the stdlib's name)
        pass


@contextmanager
def serve(site: Path, tmp: Path, subpath: str = "ikreport") -> Iterator[str]:
    """Copy ``site`` to ``tmp/<subpath>`` and serve ``tmp``; yields the site's base URL."""
    root = tmp / "www"
    shutil.copytree(site, root / subpath)
    handler = functools.partial(_Quiet, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/{subpath}/"
    finally:
        server.shutdown()
        server.server_close()
