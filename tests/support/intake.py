"""The example intake app (examples/intake-app): loaded from its folder, called as an ASGI
app with a hand-built request, or served by a real uvicorn on 127.0.0.1.

``served()`` binds a free port on 127.0.0.1 here and hands the listening socket to a child
process, ``python -m tests.support.intake --fd N``, which runs uvicorn on it with its
default logging (errors on stderr, the access log on stdout); both go to one file, so a
test can read what the server logged once it has been stopped. ``raw_request`` speaks
HTTP/1.1 over a plain socket, for what a client library will not do: stop mid-body, send
a byte at a time, or keep talking after the answer.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import http.client
import importlib.util
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "intake-app" / "app.py"


def load_example_app() -> ModuleType:
    """examples/intake-app/app.py as a module (it is a folder of its own, not a package)."""
    spec = importlib.util.spec_from_file_location("intake_app", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["intake_app"] = module
    spec.loader.exec_module(module)
    return module


# --- an ASGI call without a server ---------------------------------------------------------------


@dataclass(frozen=True)
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes


def call_asgi(
    app: Any, path: str, headers: Sequence[tuple[bytes, bytes]], chunks: Sequence[bytes], *, more_body: bool = False
) -> Answer:
    """POST ``chunks`` to ``path`` by calling ``app`` as an ASGI server would, with exactly
    ``headers``: a header no HTTP client would send (``Content-Length: ²``) reaches the app
    as it came, as it can through servers less strict than uvicorn. ``more_body`` says
    the last chunk is not the end: the client then goes away (``http.disconnect``)."""
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": list(headers),
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
    }
    messages = [
        {"type": "http.request", "body": chunk, "more_body": more_body or i < len(chunks) - 1}
        for i, chunk in enumerate(chunks)
    ]
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return messages.pop(0) if messages else {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    asyncio.run(app(scope, receive, send))
    start = next(message for message in sent if message["type"] == "http.response.start")
    body = b"".join(message.get("body", b"") for message in sent if message["type"] == "http.response.body")
    return Answer(start["status"], {k.decode("latin-1"): v.decode("latin-1") for k, v in start["headers"]}, body)


# --- a real uvicorn ------------------------------------------------------------------------------


@dataclass
class Server:
    address: tuple[str, int]
    log_file: Path
    process: subprocess.Popen[bytes]

    def stop(self) -> str:
        """Stop the server as an operator would (SIGTERM: uvicorn finishes what it has in
        hand) and return everything it logged."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        return self.log_file.read_text(encoding="utf-8", errors="replace")


@contextlib.contextmanager
def served(log_file: Path, *, body_deadline: float | None = None) -> Iterator[Server]:
    """The example app under a real uvicorn on 127.0.0.1, ready when yielded (it has
    answered a request). ``body_deadline`` builds the app with that deadline; without
    it the child serves the module's own ``app``."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    command = [sys.executable, "-m", "tests.support.intake", "--fd", str(listener.fileno())]
    if body_deadline is not None:
        command += ["--body-deadline", str(body_deadline)]
    with log_file.open("wb") as log:
        process = subprocess.Popen(
            command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, pass_fds=[listener.fileno()]
        )
    server = Server(listener.getsockname(), log_file, process)
    listener.close()  # the child holds its own copy
    try:
        _wait_until_it_answers(server)
        yield server
    finally:
        server.stop()


def _wait_until_it_answers(server: Server) -> None:
    """One GET, retried while the child starts (the kernel queues the connection meanwhile)."""
    for _ in range(300):
        if server.process.poll() is not None:
            raise AssertionError("the server ended:\n" + server.log_file.read_text(errors="replace"))
        connection = http.client.HTTPConnection(*server.address, timeout=30)
        try:
            connection.request("GET", "/packets/ready")
            connection.getresponse().read()
            return
        except OSError:
            time.sleep(0.1)
        finally:
            connection.close()
    raise AssertionError("the server never answered:\n" + server.log_file.read_text(errors="replace"))


@dataclass(frozen=True)
class RawResponse:
    status: int
    headers: dict[str, str]
    body: bytes


def request_head(path: str, headers: dict[str, str]) -> bytes:
    lines = [f"POST {path} HTTP/1.1", "Host: 127.0.0.1", *(f"{name}: {value}" for name, value in headers.items())]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def read_response(sock: socket.socket, already: bytes = b"") -> RawResponse:
    """One response (with a Content-Length) read from ``sock``; AssertionError if the
    connection ends first."""
    data = already
    while b"\r\n\r\n" not in data:
        data += _recv_some(sock)
    head, _, data = data.partition(b"\r\n\r\n")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in header_lines:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    length = int(headers["content-length"])
    while len(data) < length:
        data += _recv_some(sock)
    return RawResponse(int(status_line.split()[1]), headers, data[:length])


def _recv_some(sock: socket.socket) -> bytes:
    chunk = sock.recv(65536)
    if not chunk:
        raise AssertionError("the server closed the connection before its answer was complete")
    return chunk


# --- the child -----------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> None:
    import uvicorn

    parser = argparse.ArgumentParser(description="serve the example intake app on an inherited socket")
    parser.add_argument("--fd", type=int, required=True)
    parser.add_argument("--body-deadline", type=float)
    args = parser.parse_args(argv)
    module = load_example_app()
    app = module.app if args.body_deadline is None else module.make_app(body_deadline=args.body_deadline)
    sock = socket.socket(fileno=args.fd)
    uvicorn.Server(uvicorn.Config(app, log_level="info")).run(sockets=[sock])


if __name__ == "__main__":
    main()
