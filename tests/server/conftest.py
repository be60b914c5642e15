"""The team server under test: one real server per engine for the whole session, over HTTP on 127.0.0.1.

Each engine's server is ``python -m cmp server`` in a subprocess, on a database that ``server init``
made: SQLite in a temporary folder, and a real PostgreSQL that this file starts itself (``initdb``
and ``pg_ctl`` from PATH or /usr/lib/postgresql/*/bin; PostgreSQL refuses to run as root, so as
root it runs as the ``postgres`` user). Without PostgreSQL its tests skip, and under CI they fail.
Tests are isolated by fresh users and teams, made through :class:`cmp.server.Storage` on the same
database (a user with a token is one insert, where ``server issue-token`` is a process start).
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

pytest.importorskip("sqlalchemy")
from cmp.server import Storage

ROOT = Path(__file__).resolve().parents[2]
ENGINES = ("sqlite", "postgresql")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def cli(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, "-m", "cmp", *args], capture_output=True, text=True, timeout=60, cwd=ROOT, check=False
    )
    if check and done.returncode != 0:
        raise AssertionError(f"cmp {' '.join(args)} exited {done.returncode}: {done.stderr}")
    return done


def wait_until_up(base: str, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"the server exited {process.returncode}: {log.read_text(errors='replace')}")
        try:
            if httpx.get(base + "/v1/healthz", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            time.sleep(0.1)
    raise AssertionError("the server did not answer within 30 s")


def _postgres_binaries() -> Path | None:
    found = shutil.which("initdb")
    if found:
        return Path(found).resolve().parent
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    return Path(versions[-1]).parent if versions else None


@dataclass
class Postgres:
    url: str
    folder: Path
    bin: Path
    user: str | None

    def new_database(self) -> str:
        """The URL of a new, empty database on this PostgreSQL."""
        name = "cmp_" + uuid.uuid4().hex[:12]
        admin = Storage(self.url)
        try:
            with admin.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
                conn.exec_driver_sql(f"CREATE DATABASE {name}")
        finally:
            admin.close()
        return self.url.rsplit("/", 1)[0] + "/" + name

    def stop(self) -> None:
        command = [str(self.bin / "pg_ctl"), "-D", str(self.folder / "data"), "-m", "immediate", "stop"]
        subprocess.run(_as(self.user, command), capture_output=True, timeout=60, check=False)
        shutil.rmtree(self.folder, ignore_errors=True)


def _as(user: str | None, command: list[str]) -> list[str]:
    return command if user is None else ["runuser", "-u", user, "--", *command]


def start_postgres() -> Postgres:
    """A PostgreSQL of its own: initdb into a temporary folder, started on a free port; pytest.skip
    (pytest.fail under CI) when the machine has none."""
    binaries = _postgres_binaries()
    if binaries is None:
        message = "PostgreSQL is not installed (initdb not found): .ci/run installs it"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    user = None
    folder = Path(tempfile.mkdtemp(prefix="cmp-pg-"))
    if os.geteuid() == 0:  # PostgreSQL refuses to run as root
        user = "postgres"
        try:
            account = pwd.getpwnam(user)
        except KeyError:
            pytest.fail("running as root and there is no postgres user to run PostgreSQL as")
        os.chown(folder, account.pw_uid, account.pw_gid)
    port = free_port()
    data = folder / "data"
    subprocess.run(
        _as(user, [str(binaries / "initdb"), "-D", str(data), "-U", "cmp", "-A", "trust", "-E", "UTF8", "--no-sync"]),
        capture_output=True,
        check=True,
        timeout=120,
    )
    options = f"-p {port} -k {folder} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=100"
    subprocess.run(
        _as(user, [str(binaries / "pg_ctl"), "-D", str(data), "-o", options, "-l", str(folder / "log"), "-w", "start"]),
        capture_output=True,
        check=True,
        timeout=120,
    )
    return Postgres(f"postgresql://cmp@127.0.0.1:{port}/postgres", folder, binaries, user)


@dataclass
class Running:
    """One engine's server: its base URL, its database, and a way to make users."""

    engine: str
    db: str
    base: str
    storage: Storage
    root_token: str
    log: Path
    clients: list[httpx.Client] = field(default_factory=list)

    def user(self, name: str = "user") -> httpx.Client:
        """A client authenticated as a new user of its own (``client.user_id`` its id)."""
        user_id = self.storage.create_user(f"{name}-{uuid.uuid4().hex[:6]}")
        return self.client(self.storage.issue_token(user_id, name), user_id)

    def client(self, token: str | None = None, user_id: str | None = None) -> httpx.Client:
        headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
        made = httpx.Client(base_url=self.base, headers=headers, timeout=30)
        made.user_id = user_id  # type: ignore[attr-defined]
        self.clients.append(made)
        return made


@pytest.fixture(scope="session")
def postgres() -> Iterator[Postgres]:
    started = start_postgres()
    try:
        yield started
    finally:
        started.stop()


@pytest.fixture(scope="session", params=ENGINES)
def server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Running]:
    if request.param == "sqlite":
        db = str(tmp_path_factory.mktemp("server") / "server.db")
    else:  # a database of its own: pytest may make this fixture again when test order switches engines
        db = request.getfixturevalue("postgres").new_database()
    token = cli("server", "init", "--db", db).stdout.strip()
    port = free_port()
    log = tmp_path_factory.mktemp("log") / "server.log"
    with log.open("wb") as stderr:  # a file, not a pipe: nobody reads a pipe while the tests run
        process = subprocess.Popen(
            [sys.executable, "-m", "cmp", "server", "--db", db, "--addr", f"127.0.0.1:{port}"],
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
        )
    base = f"http://127.0.0.1:{port}"
    storage = Storage(db)
    running = Running(request.param, db, base, storage, token, log)
    try:
        wait_until_up(base, process, log)
        yield running
    finally:
        for client in running.clients:
            client.close()
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        storage.close()
