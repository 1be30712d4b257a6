"""A bucket on the session's moto S3 server (conftest's ``s3_endpoint``), made once per name, and the fsspec
storage options that reach it: what the object-store tests share."""
from __future__ import annotations

from typing import Any, Dict, Tuple


def storage_options(endpoint: str) -> Dict[str, Any]:
    """s3fs's options for moto's server (its fixed test credentials)."""
    return {"key": "testing", "secret": "testing",
            "client_kwargs": {"endpoint_url": endpoint, "region_name": "us-east-1"}}


def make_bucket(endpoint: str, name: str) -> Tuple[Dict[str, Any], Any]:
    """Create bucket ``name`` on moto's server: ``(storage options, s3fs filesystem)``."""
    import boto3
    import s3fs
    boto3.client("s3", endpoint_url=endpoint, aws_access_key_id="testing", aws_secret_access_key="testing",
                 region_name="us-east-1").create_bucket(Bucket=name)
    opts = storage_options(endpoint)
    return opts, s3fs.S3FileSystem(**opts)
