"""A real S3 API on localhost for the tests: moto's server mode (``moto[server]``), started once
per session on a free port, with fake credentials in the environment and AWS_ENDPOINT_URL
pointing at it, as a team points ikreport at an S3-compatible store. Tests import the fixtures
(``from s3server import s3_endpoint, bucket_url``); each test gets a bucket of its own.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator

import pytest

AWS_ENV = {
    "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1",
    # never the machine's own AWS set-up, nor the instance metadata service
    "AWS_CONFIG_FILE": os.devnull, "AWS_SHARED_CREDENTIALS_FILE": os.devnull, "AWS_EC2_METADATA_DISABLED": "true",
}


def forget_filesystems() -> None:
    """fsspec keeps one filesystem per set of options in a process; after the environment
    changes (credentials, endpoint), the next one must read it afresh."""
    import fsspec

    fsspec.AbstractFileSystem.clear_instance_cache()
    fsspec.filesystem("s3").clear_instance_cache()


@pytest.fixture(scope="session")
def s3_endpoint() -> Iterator[str]:
    """The URL of a moto S3 server on a free localhost port, in AWS_ENDPOINT_URL for the session."""
    server_mod = pytest.importorskip("moto.server")
    server = server_mod.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    saved = {k: os.environ.get(k) for k in (*AWS_ENV, "AWS_ENDPOINT_URL")}
    os.environ.update(AWS_ENV, AWS_ENDPOINT_URL=endpoint)
    forget_filesystems()
    try:
        yield endpoint
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        forget_filesystems()
        server.stop()


@pytest.fixture
def bucket_url(s3_endpoint: str) -> str:
    """``s3://NEW-BUCKET/evidence``: an archive prefix in a fresh, empty bucket."""
    import boto3

    name = f"ik-{secrets.token_hex(6)}"
    boto3.client("s3", endpoint_url=s3_endpoint).create_bucket(Bucket=name)
    return f"s3://{name}/evidence"
