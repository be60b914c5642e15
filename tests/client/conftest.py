"""The client under test: our own team server on SQLite over HTTP on 127.0.0.1 (one for the whole
session, as tests/server starts it), users made straight in its database, and small raw socket
servers for what a real server never does (garbage, a dropped connection, silence, 10 MB)."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.support.extras import require

require("httpx")
require("sqlalchemy")

from tests.server.conftest import ROOT, Running, cli, free_port, wait_until_up  # noqa: E402


@pytest.fixture(scope="session")
def team_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Running]:
    from cmp.server import Storage

    db = str(tmp_path_factory.mktemp("server") / "server.db")
    token = cli("server", "init", "--db", db).stdout.strip()
    port = free_port()
    log = tmp_path_factory.mktemp("log") / "server.log"
    with log.open("wb") as stderr:
        process = subprocess.Popen(
            [sys.executable, "-m", "cmp", "server", "--db", db, "--addr", f"127.0.0.1:{port}"],
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
        )
    storage = Storage(db)
    running = Running("sqlite", db, f"http://127.0.0.1:{port}", storage, token, log)
    try:
        wait_until_up(running.base, process, log)
        yield running
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        storage.close()


def new_user(server: Running, name: str = "user") -> str:
    """A token of a new user of the server (made in its database: one insert, no process)."""
    user_id = server.storage.create_user(f"{name}-{uuid.uuid4().hex[:6]}")
    token: str = server.storage.issue_token(user_id, name)
    return token


@dataclass
class RawServer:
    """A socket on 127.0.0.1 that answers each connection with ``answer(connection, request)``.

    ``requests`` holds each request's head (what arrived before the blank line; ``b""`` for a
    connection closed before one); ``sent`` what each answer managed to write."""

    answer: Callable[[socket.socket, bytes], int]
    greet: bytes = b""  # written on connect, before reading (a plain-text server to a TLS client)
    requests: list[bytes] = field(default_factory=list)
    sent: list[int] = field(default_factory=list)
    port: int = 0

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def serve(self, listener: socket.socket) -> None:
        while True:
            try:
                connection, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=self._one, args=(connection,), daemon=True).start()

    def _one(self, connection: socket.socket) -> None:
        with connection:
            try:
                if self.greet:
                    connection.sendall(self.greet)
                head = b""
                while b"\r\n\r\n" not in head and len(head) < 1 << 16:
                    chunk = connection.recv(4096)
                    if not chunk:
                        break
                    head += chunk
                self.requests.append(head)
                self.sent.append(self.answer(connection, head))
            except OSError:
                pass


@pytest.fixture
def raw_server() -> Iterator[Callable[..., RawServer]]:
    """Start raw servers: ``raw_server(answer, greet=b"")``; all closed after the test."""
    listeners: list[socket.socket] = []

    def start(answer: Callable[[socket.socket, bytes], int], greet: bytes = b"") -> RawServer:
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen(16)
        listeners.append(listener)
        made = RawServer(answer, greet, port=listener.getsockname()[1])
        threading.Thread(target=made.serve, args=(listener,), daemon=True).start()
        return made

    yield start
    for listener in listeners:
        listener.close()


def http_answer(status: str, body: bytes, headers: str = "Content-Type: application/json\r\n") -> bytes:
    return f"HTTP/1.1 {status}\r\n{headers}Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode() + body


def config_env(folder: Path, **more: str) -> dict[str, str]:
    """An environment whose config folders are under ``folder`` (ours and ltm's), nothing else configured."""
    import os

    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("CMP_SERVER", "CMP_TOKEN", "LTM_HOST", "LTM_CONFIG_DIR", "CMP_CONFIG_DIR", "CMP_STORE")
    }
    env.update(
        XDG_CONFIG_HOME=str(folder / "config-home"),
        HOME=str(folder / "home"),
        CMP_CONFIG_DIR=str(folder / "cmp-config"),
        LTM_CONFIG_DIR=str(folder / "ltm-config"),
        **more,
    )
    return env
