"""Issue 27, item 14: every network operation has an overall deadline. ``verify --site`` against
a server that trickles a byte at a time, and an object store that takes a request and never
answers (all of them, or only the writes or reads of objects mid-sync), end at the deadline in
one line that names what was waited for. IKREPORT_NETWORK_DEADLINE makes the deadline short
enough for a test; the servers are on 127.0.0.1."""

from __future__ import annotations

import functools
import http.client
import http.server
import json
import os
import shutil
import socketserver
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from conftest import FIXTURES, ROOT
from ikreport.commands import verify_files
from ikreport.commands.verify_site import verify_site
from ikreport.errors import SiteManifestError
from ikreport.store.archive import Archive
from s3server import AWS_ENV, bucket_url, forget_filesystems, s3_endpoint  # noqa: F401  (fixtures)

SITE = ROOT / "site"
SMI_TABLE = FIXTURES / "nvidia-smi" / "smi_table_evaldataset_h100x2.txt"
RAW_PMPP = FIXTURES / "ncu" / "ncu_raw_pmpp_06_gtx1650ti_preamble.csv"
IK = [sys.executable, "-m", "ikreport"]
DEADLINE = 2  # seconds, through IKREPORT_NETWORK_DEADLINE
SOON = 30  # seconds: well past the deadline, long before any timeout the libraries have of their own
TRICKLE_S = 0.5  # seconds between two bytes: each wait is far inside a socket's timeout


# -- verify --site against a server that trickles ---------------------------------------------

class _Trickling(http.server.SimpleHTTPRequestHandler):
    """Serves a folder; the file ``slow_body`` a byte at a time after honest headers, and for
    ``slow_head`` even the status line a byte at a time."""

    slow_body = slow_head = ""
    stop: threading.Event

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 (the stdlib's name)
        pass

    def _drip(self, data: bytes) -> None:
        for byte in data:
            if self.stop.wait(TRICKLE_S):
                return
            self.wfile.write(bytes([byte]))
            self.wfile.flush()

    def do_GET(self) -> None:  # noqa: N802 (the stdlib's name)
        rel = self.path.lstrip("/")
        if rel == self.slow_head:
            self._drip(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n" * 1000)
        elif rel == self.slow_body:
            data = (Path(self.directory) / rel).read_bytes()
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self._drip(data)
        else:
            super().do_GET()


@contextmanager
def trickling(site: Path, slow_body: str = "", slow_head: str = "") -> Iterator[str]:
    stop = threading.Event()
    handler = type("Handler", (_Trickling,), {"slow_body": slow_body, "slow_head": slow_head, "stop": stop})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(handler, directory=str(site)))
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        stop.set()
        server.shutdown()
        server.server_close()


def in_time(work: Callable[[], object]) -> tuple[object, float]:
    """What ``work`` returns or raises, and the seconds it took; the test fails if it is still
    waiting after SOON seconds (it is left to run in a daemon thread)."""
    done: list[object] = []

    def run() -> None:
        try:
            done.append(work())
        except Exception as exc:  # noqa: BLE001 - the test looks at it
            done.append(exc)

    start = time.monotonic()
    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(timeout=SOON)
    assert done, f"still waiting after {SOON} s"
    return done[0], time.monotonic() - start


WAITED = (f"not received whole within {DEADLINE} s (the server stalled or sends too slowly); check the address and "
          "the network, or allow longer with IKREPORT_NETWORK_DEADLINE=SECONDS")


@pytest.fixture
def site(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("IKREPORT_NETWORK_DEADLINE", str(DEADLINE))
    shutil.copytree(SITE, tmp_path / "site")
    return tmp_path / "site"


def test_verify_site_gives_up_a_file_the_server_trickles_at_its_deadline(site):
    """The file is named, and the files after it are not waited for one by one: the server is
    what stalls, and a deadline for each file left would take hours on a big site."""
    manifest = json.loads((site / "manifest.json").read_text())
    files = [f"e/{rid}.json" for rid in manifest["records"]] + [blob["path"] for blob in manifest["blobs"]]
    with trickling(site, slow_body=files[1]) as url:
        got, took = in_time(lambda: verify_site(url))
    assert got == (len(manifest["records"]), [
        f"{url}{files[1]}: {WAITED}",
        # every file the manifest lists is checked (pages against their sha256): those after the second wait
        f"{url}: {len(manifest['files']) - 2} files not checked, as the server stopped answering in time; verify again when it "
        "answers"])
    assert took < DEADLINE + SOON / 3


def test_verify_site_gives_up_a_manifest_whose_headers_trickle(site):
    with trickling(site, slow_head="manifest.json") as url:
        got, took = in_time(lambda: verify_site(url))
    assert isinstance(got, SiteManifestError)
    assert str(got).startswith(f"{url}manifest.json: cannot read it ({WAITED})")
    assert took < DEADLINE + SOON / 3


@pytest.mark.parametrize("value", ["soon", "0", "-5", "nan", "inf", "1e9"])
def test_a_deadline_that_is_no_number_of_seconds_is_refused(monkeypatch, value, run):
    monkeypatch.setenv("IKREPORT_NETWORK_DEADLINE", value)
    result = run("verify", "--site", "http://127.0.0.1:9/")
    assert result.exit_code == 1
    assert result.output == (f"Error: IKREPORT_NETWORK_DEADLINE={value!r}: not a number of seconds; give one above 0 "
                             "(unset, it is 120)\n")


# -- an object store that stalls ----------------------------------------------------------------

class _Proxy(socketserver.StreamRequestHandler):
    """Passes each request to the S3 server at ``upstream``, except the ones ``stalls`` picks
    (method, path), which it reads and never answers."""

    upstream: tuple[str, int] | None
    stalls: Callable[[str, str], bool]
    stop: threading.Event

    def handle(self) -> None:
        while True:
            line = self.rfile.readline()
            if not line:
                return
            method, target, _ = line.decode("latin-1").split(" ", 2)
            headers = []
            while (header := self.rfile.readline()) not in (b"\r\n", b"\n", b""):
                name, value = header.decode("latin-1").split(":", 1)
                headers.append((name.strip(), value.strip()))
            named = {name.lower(): value for name, value in headers}
            if named.get("expect", "").lower() == "100-continue":
                self.wfile.write(b"HTTP/1.1 100 Continue\r\n\r\n")
            body = self.rfile.read(int(named.get("content-length", 0)))
            if self.upstream is None or self.stalls(method, target):
                self.stop.wait()  # took the request; never answers
                return
            upstream = http.client.HTTPConnection(*self.upstream, timeout=30)
            upstream.putrequest(method, target, skip_host=True, skip_accept_encoding=True)
            for name, value in headers:
                if name.lower() not in ("expect", "connection"):
                    upstream.putheader(name, value)
            upstream.endheaders(body)
            response = upstream.getresponse()
            data = response.read()
            out = [f"HTTP/1.1 {response.status} {response.reason}"]
            for name, value in response.getheaders():
                if name.lower() not in ("transfer-encoding", "connection", "content-length"):
                    out.append(f"{name}: {value}")
            length = response.getheader("Content-Length") if method == "HEAD" else str(len(data))
            out.append(f"Content-Length: {length or 0}")
            self.wfile.write(("\r\n".join(out) + "\r\n\r\n").encode("latin-1") + data)
            upstream.close()


@contextmanager
def stalling(upstream: str | None, stalls: Callable[[str, str], bool] = lambda method, target: True) -> Iterator[str]:
    """An S3 endpoint on 127.0.0.1 in front of ``upstream`` (None: nothing is ever answered)."""
    stop = threading.Event()
    host_port = None if upstream is None else (upstream.split("//")[1].split(":")[0], int(upstream.rsplit(":", 1)[1]))
    handler = type("Handler", (_Proxy,), {"upstream": host_port, "stalls": staticmethod(stalls), "stop": stop})
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        stop.set()
        server.shutdown()
        server.server_close()


def ikreport(args: list[object], endpoint: str) -> tuple[subprocess.CompletedProcess[str], float]:
    """The command, run as a user runs it against the storage at ``endpoint``, and its seconds."""
    env = {**os.environ, **AWS_ENV, "AWS_ENDPOINT_URL": endpoint, "IKREPORT_NETWORK_DEADLINE": str(DEADLINE),
           "SOURCE_DATE_EPOCH": "1796169600"}
    start = time.monotonic()
    done = subprocess.run([*IK, *map(str, args)], capture_output=True, text=True, env=env, timeout=SOON * 3)
    return done, time.monotonic() - start


@pytest.fixture
def box(tmp_path) -> Path:
    folder = tmp_path / "box"
    for args in (["env", "--from-nvidia-smi", SMI_TABLE], ["ncu", "--from-csv", RAW_PMPP]):
        done, _ = ikreport(["collect", *args, "-a", folder], "http://127.0.0.1:9")
        assert done.returncode == 0, done.stderr
    return folder


def waited(doing: str) -> str:
    return (f": no answer from the storage within {DEADLINE} s (asked to {doing} it); check the endpoint "
            "(AWS_ENDPOINT_URL) and the network, or allow longer with IKREPORT_NETWORK_DEADLINE=SECONDS")


@pytest.mark.parametrize("command", ["sync up", "sync down", "list", "verify", "build"])
def test_a_store_that_never_answers_is_given_up_at_the_deadline(box, tmp_path, command):
    url = "s3://stalled/evidence"
    args = {"sync up": ["sync", box, url], "sync down": ["sync", url, tmp_path / "down"],
            "list": ["list", "-a", url], "verify": ["verify", url],
            "build": ["build", url, "-o", tmp_path / "site", "--cache-dir", tmp_path / "cache"]}[command]
    with stalling(None) as endpoint:
        done, took = ikreport(args, endpoint)
    assert done.returncode == 1
    assert done.stderr == f"Error: {url}{waited('reach')}\n"
    assert took < DEADLINE + SOON / 2
    assert not (tmp_path / "down").exists() and not (tmp_path / "site").exists()


def _object(method: str, target: str) -> bool:
    """A request for one object (not a listing, which asks the bucket with a query)."""
    return "/records/" in target or "/blobs/" in target and "list-type" not in target


def test_sync_gives_up_a_write_that_is_never_answered(box, bucket_url, s3_endpoint):
    with stalling(s3_endpoint, lambda method, target: method == "PUT" and _object(method, target)) as endpoint:
        done, took = ikreport(["sync", box, bucket_url], endpoint)
    assert done.returncode == 1
    assert done.stdout == ""
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"Error: {bucket_url}/blobs/")  # blobs go first
    assert line.endswith(waited("write to"))
    assert took < DEADLINE + SOON / 2


@pytest.mark.parametrize("command", ["sync down", "verify"])
def test_reads_that_are_never_answered_are_given_up_at_the_deadline(box, tmp_path, bucket_url, s3_endpoint, command):
    done, _ = ikreport(["sync", box, bucket_url], s3_endpoint)
    assert done.returncode == 0, done.stderr
    args = ["sync", bucket_url, tmp_path / "down"] if command == "sync down" else ["verify", bucket_url]
    with stalling(s3_endpoint, lambda method, target: method == "GET" and _object(method, target)) as endpoint:
        done, took = ikreport(args, endpoint)
    assert done.returncode == 1
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"Error: {bucket_url}/") and line.endswith(waited("read"))
    assert took < DEADLINE + SOON / 2


def test_verify_s_worker_processes_ask_no_object_for_its_size(box, bucket_url, s3_endpoint, monkeypatch):
    """A worker is given the sizes the survey's listing saw: one request an object, as before
    reads were bounded by size, never a HEAD before each GET."""
    done, _ = ikreport(["sync", box, bucket_url], s3_endpoint)
    assert done.returncode == 0, done.stderr
    archive = Archive.open(bucket_url)
    files = [(path, name, area, False) for path, name, area in archive.survey([]).files]
    job = (bucket_url, files, verify_files._sizes(archive, files))  # as check_files hands a worker its batch
    asked: list[tuple[str, str]] = []
    with stalling(s3_endpoint, lambda method, target: asked.append((method, target)) and False) as endpoint:
        monkeypatch.setenv("AWS_ENDPOINT_URL", endpoint)
        forget_filesystems()  # a worker process makes its filesystem afresh
        try:
            checked = verify_files.check_batch(job)
        finally:
            monkeypatch.undo()
            forget_filesystems()
    assert [problem for problem, _, _ in checked] == [None] * len(files)
    assert sorted(method for method, _ in asked) == ["GET"] * len(files)
