"""An S3-compatible bucket as a store, through boto3.

The endpoint, region and credentials are found the standard AWS way (`AWS_ENDPOINT_URL`,
`AWS_REGION`, `AWS_ACCESS_KEY_ID`/`AWS_SECRET_ACCESS_KEY`, `AWS_PROFILE`, the shared config and
credentials files), each overridable by the command's flags. An immutable object is created with
`If-None-Match: *`, so two publishers racing cannot both win; a store that ignores the header is
still caught by the HEAD before it, though not a writer racing between the two. Each object
carries the SHA-256 of its bytes as metadata: an object found at a key whose metadata names the
bytes being published is taken as them without downloading it (a publish killed and run again
finds its own objects so); any other object is downloaded and hashed before it is called a
conflict, and `--check` downloads and hashes every object, since metadata is whatever the last
writer said.
"""

from __future__ import annotations

import hashlib
import os
import sys
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from generator.core.object_kinds import Headers
from generator.publish.store import Conflict, StoreError

_CHUNK = 1 << 20
# One PUT carries up to 5 GiB; a bigger object (a large site's archive) goes in parts. Objects
# up to _IN_MEMORY are read once into memory, hashed and sent; bigger ones are hashed, then
# streamed from the file, so memory stays bounded whatever the site holds.
_SINGLE_PUT_LIMIT = 5 << 30
_IN_MEMORY = 8 << 20
SHA_META = "sha256"


def parse_url(url: str) -> tuple[str, str]:
    """(bucket, prefix) of `s3://BUCKET[/PREFIX]`; the prefix without slashes at either end."""
    parsed = urllib.parse.urlsplit(url)
    if parsed.scheme != "s3" or not parsed.netloc:
        raise ValueError(f"{url}: expected s3://BUCKET or s3://BUCKET/PREFIX")
    if parsed.query or parsed.fragment:
        raise ValueError(f"{url}: an S3 address has no query or fragment")
    return parsed.netloc, parsed.path.strip("/")


class S3Store:
    def __init__(
        self,
        url: str,
        *,
        endpoint_url: str | None = None,
        region: str | None = None,
        profile: str | None = None,
        cors: bool = True,
    ) -> None:
        try:  # only publishing to a bucket needs boto3: an optional dependency, imported here
            import boto3
            from botocore.config import Config
        except ImportError as e:
            raise StoreError(
                f"publishing to S3 needs the boto3 package, which cannot be imported ({e}); install it with: "
                f"{sys.executable} -m pip install 'boto3>=1.35', or in a checkout of transparency, "
                "pip install -e '.[s3]' (README, \"Install\")"
            ) from None

        self.bucket, self.prefix = parse_url(url)
        self.description = url
        self.cors = cors
        from botocore.exceptions import BotoCoreError

        # Kept-alive connections, as many as the publisher's threads; retries with backoff
        # for the store's transient errors.
        config = Config(max_pool_connections=32, retries={"max_attempts": 5, "mode": "standard"})
        try:
            session = boto3.session.Session(profile_name=profile, region_name=region)
            self.client: Any = session.client("s3", endpoint_url=endpoint_url, config=config)
        except (BotoCoreError, ValueError) as e:
            raise StoreError(f"{url}: {e}") from None

    def _key(self, key: str) -> str:
        return f"{self.prefix}/{key}" if self.prefix else key

    def _error(self, key: str, e: Exception) -> StoreError:
        response = getattr(e, "response", None) or {}
        code = response.get("Error", {}).get("Code") or type(e).__name__
        message = response.get("Error", {}).get("Message") or str(e)
        return StoreError(f"s3://{self.bucket}/{self._key(key)}: {code}: {message}")

    def _code(self, e: Exception) -> str:
        response = getattr(e, "response", None) or {}
        return str(response.get("Error", {}).get("Code", ""))

    def _head(self, key: str) -> dict[str, Any] | None:
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            return dict(self.client.head_object(Bucket=self.bucket, Key=self._key(key)))
        except ClientError as e:
            if self._code(e) in ("404", "NoSuchKey", "NotFound"):
                return None
            raise self._error(key, e) from None
        except BotoCoreError as e:
            raise self._error(key, e) from None

    def _put(self, key: str, source: Path, sha256: str, headers: Headers, *, only_if_absent: bool) -> None:
        from boto3.exceptions import S3UploadFailedError
        from botocore.exceptions import BotoCoreError, ClientError

        extra: dict[str, Any] = {
            "ContentType": headers.content_type,
            "CacheControl": headers.cache_control,
            "Metadata": {SHA_META: sha256},
        }
        if only_if_absent:
            extra["IfNoneMatch"] = "*"
        try:
            # One open file, hashed then sent from its start: what is sent is what was hashed,
            # whatever happens to the path meanwhile (a build swapping the site in).
            with source.open("rb") as f:
                size = os.fstat(f.fileno()).st_size
                if size > _SINGLE_PUT_LIMIT and only_if_absent:
                    raise StoreError(f"{key}: {size} bytes, more than one conditional PUT may carry")
                body: Any = f.read() if size <= _IN_MEMORY else None
                found = (
                    hashlib.sha256(body).hexdigest()
                    if body is not None
                    else hashlib.file_digest(f, "sha256").hexdigest()
                )
                if found != sha256:
                    raise StoreError(f"{source}: SHA-256 {found}, not the {sha256} the site's list names")
                if body is None:
                    f.seek(0)
                    body = f
                if size > _SINGLE_PUT_LIMIT:
                    extra.pop("IfNoneMatch", None)
                    self.client.upload_fileobj(body, self.bucket, self._key(key), ExtraArgs=extra)
                else:
                    self.client.put_object(Bucket=self.bucket, Key=self._key(key), Body=body, **extra)
        except ClientError as e:
            if only_if_absent and self._code(e) in ("PreconditionFailed", "412"):
                raise _Exists() from None
            raise self._error(key, e) from None
        except (BotoCoreError, S3UploadFailedError) as e:
            raise self._error(key, e) from None

    def create(self, key: str, source: Path, sha256: str, headers: Headers) -> bool:
        head = self._head(key)
        if head is not None:
            if head.get("Metadata", {}).get(SHA_META) == sha256 and head.get("ContentLength") == source.stat().st_size:
                return False
            return self._same(key, sha256)
        try:
            self._put(key, source, sha256, headers, only_if_absent=True)
        except _Exists:
            return self._same(key, sha256)
        return True

    def _same(self, key: str, sha256: str) -> bool:
        there = self.digest(key)
        if there != sha256:
            raise Conflict(f"{key}: already published with other bytes (SHA-256 {there}, this release's {sha256})")
        return False

    def replace(self, key: str, source: Path, sha256: str, headers: Headers) -> None:
        self._put(key, source, sha256, headers, only_if_absent=False)

    def delete(self, key: str) -> None:
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            self.client.delete_object(Bucket=self.bucket, Key=self._key(key))
        except (ClientError, BotoCoreError) as e:
            raise self._error(key, e) from None

    def _body(self, key: str) -> Any:
        """The streamed bytes at `key`, or None if there is no object."""
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            return self.client.get_object(Bucket=self.bucket, Key=self._key(key))["Body"]
        except ClientError as e:
            if self._code(e) in ("404", "NoSuchKey", "NotFound"):
                return None
            raise self._error(key, e) from None
        except BotoCoreError as e:
            raise self._error(key, e) from None

    def fetch(self, key: str, limit: int) -> bytes | None:
        body = self._body(key)
        if body is None:
            return None
        try:
            data = body.read(limit + 1)
        finally:
            body.close()
        if len(data) > limit:
            raise StoreError(f"s3://{self.bucket}/{self._key(key)}: more than {limit} bytes")
        return bytes(data)

    def digest(self, key: str) -> str | None:
        body = self._body(key)
        if body is None:
            return None
        h = hashlib.sha256()
        try:
            for chunk in body.iter_chunks(_CHUNK):
                h.update(chunk)
        finally:
            body.close()
        return h.hexdigest()

    def keys(self) -> Iterator[str]:
        from botocore.exceptions import BotoCoreError, ClientError

        prefix = f"{self.prefix}/" if self.prefix else ""
        found: list[str] = []
        try:
            for page in self.client.get_paginator("list_objects_v2").paginate(Bucket=self.bucket, Prefix=prefix):
                found.extend(obj["Key"][len(prefix) :] for obj in page.get("Contents", ()))
        except (ClientError, BotoCoreError) as e:
            raise self._error("", e) from None
        yield from sorted(found, key=lambda k: k.encode())

    def prepare(self) -> None:
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            self.client.head_bucket(Bucket=self.bucket)
        except ClientError as e:
            # Credentials scoped to a prefix may not list the bucket: the first write will tell.
            if self._code(e) not in ("403", "AccessDenied", "Forbidden"):
                raise StoreError(f"s3://{self.bucket}: the bucket cannot be reached: {self._error('', e)}") from None
        except BotoCoreError as e:
            raise StoreError(f"s3://{self.bucket}: the bucket cannot be reached: {self._error('', e)}") from None
        if not self.cors:
            return
        # The read path is public: any page may fetch the JSON and the tiles (an auditor's
        # in-browser check, another site's monitor), so GET and HEAD from any origin. The rule is
        # added beside the bucket's others, never in their place (another prefix may have its own).
        rule = {
            "AllowedMethods": ["GET", "HEAD"],
            "AllowedOrigins": ["*"],
            "AllowedHeaders": ["*"],
            "MaxAgeSeconds": 86400,
        }
        try:
            try:
                rules = list(self.client.get_bucket_cors(Bucket=self.bucket).get("CORSRules", []))
            except ClientError as e:
                if self._code(e) != "NoSuchCORSConfiguration":
                    raise
                rules = []
            if any(_covers(r, rule) for r in rules):
                return
            self.client.put_bucket_cors(Bucket=self.bucket, CORSConfiguration={"CORSRules": [*rules, rule]})
        except (ClientError, BotoCoreError) as e:
            raise StoreError(
                f"s3://{self.bucket}: could not add the CORS rule for reading ({self._error('', e)}); "
                "add a rule allowing GET and HEAD from any origin yourself and publish with --no-cors"
            ) from None

    def identity(self) -> str:
        """What names this store for the record of what was published to it: the endpoint as
        well as the bucket, so that one URL on two stores is two targets."""
        return f"{self.client.meta.endpoint_url} {self.description}"


def _covers(rule: dict[str, object], wanted: dict[str, object]) -> bool:
    def values(r: dict[str, object], key: str) -> set[str]:
        v = r.get(key)
        return {str(x) for x in v} if isinstance(v, list) else set()

    return values(rule, "AllowedOrigins") >= {"*"} and values(rule, "AllowedMethods") >= {"GET", "HEAD"}


class _Exists(Exception):
    """The store refused a conditional create: something is at the key."""
