"""Archives in object storage (issue 17), against moto's S3 server on localhost (s3server.py):
every command on a bucket, write-once under many writers, a tampered object, clean failures,
and ``sync`` between folders and buckets. Inputs are the real exports in tests/fixtures."""

from __future__ import annotations

import filecmp
import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import FIXTURES, ROOT
from ikreport.store.bucket import Bucket, storage_error
from s3server import bucket_url, forget_filesystems, s3_endpoint  # noqa: F401  (fixtures)

SMI_Q = FIXTURES / "nvidia-smi" / "smi_q_gpukernellab_rtx3060laptop.txt"
SMI_TABLE = FIXTURES / "nvidia-smi" / "smi_table_evaldataset_h100x2.txt"
RAW_PMPP = FIXTURES / "ncu" / "ncu_raw_pmpp_06_gtx1650ti_preamble.csv"
RAW_B200 = FIXTURES / "ncu" / "ncu_raw_roofline_decodebench_b200_16kernels_preamble.csv"
BABEL = FIXTURES / "bandwidth" / "babelstream_alcfguide_a100_v4.0_trailingspaces_excerpt.txt"


@pytest.fixture(autouse=True)
def fixed_clock(monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1796169600")  # the same import gives the same record


def new_id(result) -> str:
    assert result.exit_code == 0, result.output
    return result.stdout.strip().splitlines()[-1]


def s3_client(endpoint: str):
    import boto3

    return boto3.client("s3", endpoint_url=endpoint)


def keys(endpoint: str, url: str) -> list[str]:
    bucket, prefix = url[len("s3://"):].split("/", 1)
    pages = s3_client(endpoint).get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
    return sorted(o["Key"][len(prefix) + 1:] for page in pages for o in page.get("Contents", []))


def tree(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())


def same_tree(a: Path, b: Path) -> bool:
    return tree(a) == tree(b) and all(filecmp.cmp(a / f, b / f, shallow=False) for f in tree(a))


def test_a_conditional_put_never_replaces_an_object(bucket_url):
    one, two = Bucket(bucket_url), Bucket(bucket_url)  # two writers, neither knowing the other's writes
    file_id = "ab" * 32
    one.write_once("blobs", file_id, b"first")
    two.write_once("blobs", file_id, b"second")  # the put's precondition fails: no error, nothing replaced
    assert Bucket(bucket_url).read("blobs", file_id) == b"first"
    assert Bucket(bucket_url).ids("blobs") == [file_id]


def test_a_build_reads_through_copies_and_a_damaged_copy_is_only_a_miss(bucket_url, tmp_path):
    data = b"raw export bytes"
    file_id = hashlib.sha256(data).hexdigest()
    Bucket(bucket_url).write_once("blobs", file_id, data)
    reader = Bucket(bucket_url).read_through(tmp_path / "objects")
    reader.fetch("blobs", [file_id])
    copy = tmp_path / "objects" / "blobs" / file_id[:2] / file_id[2:]
    assert copy.read_bytes() == data
    copy.write_bytes(b"damaged")
    assert reader.read("blobs", file_id) == data and copy.read_bytes() == data  # fetched again, copy mended


def test_every_command_works_on_a_bucket(bucket_url, s3_endpoint, tmp_path, run):
    env_id = new_id(run("collect", "env", "--from-nvidia-smi", SMI_Q, "-a", bucket_url))
    a = new_id(run("collect", "ncu", "--from-csv", RAW_B200, "-a", bucket_url, "--title", "before"))
    b = new_id(run("collect", "ncu", "--from-csv", RAW_B200, "-a", bucket_url, "--title", "after"))
    new_id(run("collect", "bandwidth", "--from-babelstream", BABEL, "-a", bucket_url))
    assert f"records/{a[:2]}/{a[2:]}.json" in keys(s3_endpoint, bucket_url)
    listed = run("list", "-a", bucket_url)
    assert listed.exit_code == 0 and len(listed.stdout.splitlines()) == 4
    assert a[:12] in listed.stdout and env_id[:12] in listed.stdout
    shown = run("show", a[:8], "-a", bucket_url)
    assert shown.exit_code == 0 and "before" in shown.stdout
    comparison = new_id(run("compare", a[:8], b[:8], "-a", bucket_url))
    supersession = new_id(run("supersede", a[:8], "--by", b[:8], "--reason", "re-run", "-a", bucket_url))
    assert run("check", bucket_url).exit_code == 0
    verified = run("verify", bucket_url)
    assert verified.exit_code == 0, verified.output
    assert verified.stdout.splitlines()[-1].startswith(f"{bucket_url}: 6 records and ")
    listed = run("list", "-a", bucket_url).stdout
    assert len(listed.splitlines()) == 6 and comparison[:12] in listed and supersession[:12] in listed

    # The site built from the bucket is the site built from a folder holding the same files.
    cache = tmp_path / "cache"
    built = run("build", bucket_url, "-o", tmp_path / "from-bucket", "--cache-dir", cache)
    assert built.exit_code == 0, built.output
    assert run("sync", bucket_url, tmp_path / "copy").exit_code == 0
    assert run("build", tmp_path / "copy", "-o", tmp_path / "from-folder", "--cache-dir", tmp_path / "c2").exit_code == 0
    assert same_tree(tmp_path / "from-bucket", tmp_path / "from-folder")
    # A rebuild reads the objects it fetched before from the cache, and gives the same site.
    assert len(tree(cache / "objects")) == len(keys(s3_endpoint, bucket_url))
    assert run("build", bucket_url, "-o", tmp_path / "again", "--cache-dir", cache).exit_code == 0
    assert same_tree(tmp_path / "from-bucket", tmp_path / "again")


def test_verify_finds_a_tampered_object(bucket_url, s3_endpoint, run):
    rid = new_id(run("collect", "ncu", "--from-csv", RAW_PMPP, "-a", bucket_url))
    assert run("verify", bucket_url).exit_code == 0
    bucket, prefix = bucket_url[len("s3://"):].split("/", 1)
    client = s3_client(s3_endpoint)
    key = f"{prefix}/records/{rid[:2]}/{rid[2:]}.json"
    body = client.get_object(Bucket=bucket, Key=key)["Body"].read()
    client.put_object(Bucket=bucket, Key=key, Body=body.replace(b"NVIDIA", b"NVIDIB"))
    client.put_object(Bucket=bucket, Key=f"{prefix}/records/zz/stray.json", Body=b"{}")
    result = run("verify", bucket_url)
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert f"{bucket_url}/records/{rid[:2]}/{rid[2:]}.json: the bytes do not hash to the file's name" in result.stdout
    assert f"{bucket_url}/records/zz/stray.json: unexpected object in the archive; remove it" in lines
    # a build refuses the damaged record too (IK108), and says where it is
    built = run("build", bucket_url, "-o", Path(os.environ["XDG_CACHE_HOME"]).parent / "site")
    assert built.exit_code == 1 and f"{bucket_url}/records/{rid[:2]}/{rid[2:]}.json: IK108" in built.stderr


def test_many_collectors_into_one_bucket_lose_nothing(bucket_url, run):
    jobs = [["env", "--from-nvidia-smi", SMI_Q], ["env", "--from-nvidia-smi", SMI_TABLE],
            ["ncu", "--from-csv", RAW_PMPP], ["ncu", "--from-csv", RAW_B200],
            ["bandwidth", "--from-babelstream", BABEL], ["ncu", "--from-csv", RAW_PMPP, "--title", "second box"],
            ["ncu", "--from-csv", RAW_B200]]  # the same import on a second box: the same record, written once
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [subprocess.Popen([sys.executable, "-m", "ikreport", "collect", *map(str, job), "-a", bucket_url],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for job in jobs]
    outs = [p.communicate(timeout=240) for p in procs]
    assert [p.returncode for p in procs] == [0] * len(jobs), [err for _, err in outs]
    ids = [out.strip().splitlines()[-1] for out, _ in outs]
    assert ids[3] == ids[6] and len(set(ids)) == 6
    listed = run("list", "-a", bucket_url).stdout
    assert all(rid[:12] in listed for rid in ids) and len(listed.splitlines()) == 6
    assert run("verify", bucket_url, "--no-cache").exit_code == 0


@pytest.fixture
def fresh_filesystems():
    forget_filesystems()
    yield
    forget_filesystems()  # the next test gets a filesystem made with the session's environment


def test_failures_are_one_line_naming_the_url_and_write_nothing(bucket_url, s3_endpoint, monkeypatch,
                                                                 fresh_filesystems, run):
    missing = "s3://ik-no-such-bucket/evidence"
    result = run("collect", "env", "--from-nvidia-smi", SMI_Q, "-a", missing)
    assert (result.exit_code, result.stderr) == (1, f"Error: {missing}: no such bucket; create it, or correct the URL\n")
    assert run("list", "-a", missing).stderr == f"Error: {missing}: no such bucket; create it, or correct the URL\n"
    empty = run("list", "-a", bucket_url)
    assert empty.exit_code == 1 and empty.stderr == (
        f"Error: {bucket_url}: not an ikreport archive (no records/ or blobs/ under it); "
        "collect into it first, or 'ikreport sync' an archive to it\n")

    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    forget_filesystems()
    result = run("collect", "ncu", "--from-csv", RAW_PMPP, "-a", bucket_url)
    assert (result.exit_code, result.stderr) == (1, (
        f"Error: {bucket_url}: no credentials for the storage; set AWS_PROFILE, or AWS_ACCESS_KEY_ID and "
        "AWS_SECRET_ACCESS_KEY (ikreport takes none on its command line)\n"))
    monkeypatch.undo()

    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")  # the discard port: nothing listens
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "1")
    forget_filesystems()
    result = run("collect", "ncu", "--from-csv", RAW_PMPP, "-a", bucket_url)
    assert (result.exit_code, result.stderr) == (1, (
        f"Error: {bucket_url}: cannot connect to the storage endpoint; check AWS_ENDPOINT_URL and the network\n"))
    monkeypatch.undo()
    assert keys(s3_endpoint, bucket_url) == []  # nothing half-written by any of them


def test_a_permission_error_says_what_to_do():
    err = storage_error("s3://team-evidence/gpu", PermissionError("Access Denied"), "write to")
    assert str(err) == ("s3://team-evidence/gpu: access denied; use credentials that may write to this bucket "
                        "(AWS_PROFILE, AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, ~/.aws)")


def test_sync_copies_what_is_missing_both_ways_and_never_a_damaged_object(bucket_url, s3_endpoint, tmp_path, run):
    folder = tmp_path / "box"
    env_id = new_id(run("collect", "env", "--from-nvidia-smi", SMI_TABLE, "-a", folder))
    rid = new_id(run("collect", "ncu", "--from-csv", RAW_PMPP, "-a", folder))
    up = run("sync", folder, bucket_url)
    assert up.exit_code == 0, up.output
    names = up.stdout.splitlines()
    objects = keys(s3_endpoint, bucket_url)
    assert names[:-1] == sorted(names[:-1], key=lambda n: "/records/" in n)  # blobs land before records
    assert sorted(n[len(bucket_url) + 1:] for n in names[:-1]) == objects == tree(folder)
    assert names[-1] == f"{bucket_url}: {len(objects)} objects copied, 0 already there"
    assert run("sync", folder, bucket_url).stdout == (f"{bucket_url}: 0 objects copied, {len(objects)} already there "
                                                      "(sizes compared; --check re-hashes them)\n")

    other = bucket_url.replace("/evidence", "/mirror")
    assert run("sync", bucket_url, other).exit_code == 0
    down = tmp_path / "laptop"
    assert run("sync", other, down).exit_code == 0
    assert same_tree(folder, down)

    # a record whose blob is damaged in SRC is not copied, nor is the blob; the rest is
    blob = next(k for k in tree(folder) if k.startswith("blobs/"))
    damaged = tmp_path / "damaged"
    assert run("sync", folder, damaged).exit_code == 0
    (damaged / blob).chmod(0o644)
    (damaged / blob).write_bytes(b"tampered")
    result = run("sync", damaged, tmp_path / "target")
    assert result.exit_code == 1
    assert f"{damaged / blob}: the bytes do not hash to the file's name" in result.stderr
    citing = env_id if run("show", env_id, "--json", "-a", folder).stdout.count(blob[6:8] + blob[9:]) else rid
    kept = rid if citing == env_id else env_id
    assert f"{citing[:12]}, which" not in result.stderr  # the record is refused for the blob, not reported twice
    assert f"not copied: cites {(blob[6:8] + blob[9:])[:12]}" in result.stderr
    listed = run("list", "-a", tmp_path / "target").stdout
    assert kept[:12] in listed and citing[:12] not in listed
    assert run("verify", tmp_path / "target").exit_code == 0  # what landed is whole: nothing dangles


def test_a_file_url_and_the_environment_variable_name_archives_too(bucket_url, tmp_path, monkeypatch, run):
    rid = new_id(run("collect", "env", "--from-nvidia-smi", SMI_Q, "-a", f"file://{tmp_path / 'box'}"))
    assert (tmp_path / "box" / "records" / rid[:2] / f"{rid[2:]}.json").is_file()  # file:// is the folder
    assert run("sync", f"file://{tmp_path / 'box'}", bucket_url).exit_code == 0
    monkeypatch.setenv("IKREPORT_ARCHIVE", bucket_url)
    shown = run("show", rid[:8])
    assert shown.exit_code == 0 and "environment" in shown.stdout


def test_an_s3_url_without_the_s3_extra_names_the_extra(monkeypatch):
    """s3fs is the `ikreport[s3]` extra: without it an s3:// archive is one line saying what to install."""
    import importlib
    import sys

    from ikreport.errors import ArchiveError
    from ikreport.store.bucket import open_filesystem

    monkeypatch.setitem(sys.modules, "s3fs", None)  # import s3fs raises ImportError
    registry = importlib.import_module("fsspec.registry")  # the module: fsspec.registry is its mapping
    monkeypatch.delitem(registry._registry, "s3", raising=False)
    with pytest.raises(ArchiveError) as caught:
        open_filesystem("s3://bucket/evidence")
    assert "pip install 'ikreport[s3]'" in str(caught.value) and "\n" not in str(caught.value)
