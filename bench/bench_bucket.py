"""Build from a bucket against a build from a folder (issue 17): the same 1,000-profile archive
(bench/inputs.py), once in a folder and once in moto's S3 server on localhost.

    .venv/bin/python bench/bench_bucket.py [--profiles 1000] [--launches 1000] [--rounds 2]

The S3 server runs as its own process (``moto_server``), as a real store is not in the
builder's process. Each round builds from the folder and from the bucket with cold caches,
then rebuilds each with its cache warm; both sites must be identical. Goal: a full build from
the bucket within 2x of one from the folder.
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from inputs import WORK, cli_archive, tree_equal  # noqa: E402

ENV = {"AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench", "AWS_DEFAULT_REGION": "us-east-1",
       "AWS_CONFIG_FILE": os.devnull, "AWS_SHARED_CREDENTIALS_FILE": os.devnull, "AWS_EC2_METADATA_DISABLED": "true"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_s3() -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    server = shutil.which("moto_server", path=str(Path(sys.executable).parent)) or "moto_server"
    proc = subprocess.Popen([server, "-H", "127.0.0.1", "-p", str(port)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    endpoint = f"http://127.0.0.1:{port}"
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
            return proc, endpoint
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise SystemExit("moto_server did not start")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profiles", type=int, default=1000)
    parser.add_argument("--launches", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    source = cli_archive(args.profiles, args.launches)
    proc, endpoint = start_s3()
    os.environ.update(ENV, AWS_ENDPOINT_URL=endpoint)
    import boto3

    from ikreport.cli.main import one_pass
    from ikreport.commands.sync import sync
    from ikreport.commands.build import build_site as library_build
    from ikreport.store.archive import Archive

    def build(location: str, site: Path, cache: Path) -> float:  # as 'ikreport build' runs it
        t = time.perf_counter()
        with one_pass():
            library_build(Archive.open(location), site, cache_dir=cache)
        return time.perf_counter() - t

    try:
        boto3.client("s3", endpoint_url=endpoint).create_bucket(Bucket="ik-bench")
        url = "s3://ik-bench/evidence"
        t = time.perf_counter()
        synced = sync(Archive.open(str(source)), Archive.create(url))
        up = time.perf_counter() - t
        print(f"archive: {len(Archive.open(str(source)).record_ids())} records; sync to the bucket: "
              f"{len(synced.copied)} objects in {up:.1f} s; {os.cpu_count()} cores")
        rows: list[tuple[Any, ...]] = []
        with tempfile.TemporaryDirectory(dir=WORK) as tmp:
            work = Path(tmp)
            for n in range(args.rounds):
                times = {}
                for label, location in (("folder", str(source)), ("bucket", url)):
                    site, cache = work / f"{label}-{n}", work / f"cache-{label}-{n}"
                    times[label, "full"] = build(location, site, cache)
                    times[label, "rebuild"] = build(location, site, cache)
                identical = tree_equal(work / f"folder-{n}", work / f"bucket-{n}")
                for kind in ("full", "rebuild"):
                    f, b = times["folder", kind], times["bucket", kind]
                    rows.append((n + 1, kind, f, b, b / f, identical))
        for n, kind, f, b, ratio, identical in rows:
            print(f"round {n} {kind:8} folder {f:6.1f} s   bucket {b:6.1f} s   {ratio:.2f}x   "
                  f"sites identical: {'yes' if identical else 'NO'}")
    finally:
        proc.terminate()
        proc.wait()


if __name__ == "__main__":
    main()
