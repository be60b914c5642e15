"""The MCP server's stdio transport, byte for byte: lines the SDK cannot take (over the
frame cap, not JSON, a lone surrogate, params a string, an object id, nesting 100,000
deep) each get a JSON-RPC error answer, and the server answers the next request."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO, Any

import pytest

from tests.support.extras import require

require("mcp")  # the test extra installs it; skipped without it, failed under CI

ROOT = Path(__file__).resolve().parents[2]
HANG_GUARD = 120  # seconds: only so a broken server fails the test instead of hanging it
AWS = "AKIA" + "IOSFODNN7EXAMPLE"


class Wire:
    """`python -m cmp mcp` in a subprocess, spoken to in raw lines."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "cmp", "mcp"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=ROOT,
        )
        self.send(
            b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18",'
            b'"capabilities":{},"clientInfo":{"name":"wire-test","version":"1"}}}'
        )
        assert self.answer()["id"] == 0
        self.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')

    def send(self, line: bytes, newline: bool = True) -> None:
        stdin: IO[bytes] = self.process.stdin  # type: ignore[assignment]
        stdin.write(line + (b"\n" if newline else b""))
        stdin.flush()

    def answer(self) -> dict[str, Any]:
        found: list[bytes] = []
        reader = threading.Thread(target=lambda: found.append(self.process.stdout.readline()))  # type: ignore[union-attr]
        reader.start()
        reader.join(HANG_GUARD)
        assert found and found[0], "no answer from the server"
        answer: dict[str, Any] = json.loads(found[0])
        return answer

    def still_answering(self, request_id: int) -> None:
        self.send(json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "ping"}).encode())
        assert self.answer() == {"jsonrpc": "2.0", "id": request_id, "result": {}}

    def close(self) -> None:
        self.process.stdin.close()  # type: ignore[union-attr]
        assert self.process.wait(HANG_GUARD) == 0


@pytest.fixture
def wire() -> Any:
    server = Wire()
    yield server
    server.close()


CALL = b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"check","arguments":%s}}'
BAD_LINES = {
    "not JSON": (b'{"jsonrpc":"2.0","id":1,"method":', -32700, None),
    "not UTF-8": (b'{"jsonrpc":"2.0","id":1,"method":"ping","x":"\xff"}', -32700, None),
    "lone surrogate": (b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"\\ud800"}}', -32700, None),
    "params a string": (b'{"jsonrpc":"2.0","id":1,"method":"ping","params":"' + AWS.encode() + b'"}', -32600, 1),
    "an object id": (b'{"jsonrpc":"2.0","id":{"k":"' + AWS.encode() + b'"},"method":"ping"}', -32600, None),
    "an array": (b"[1, 2]", -32600, None),
    "nested 100,000 deep": (CALL % (b"[" * 100_000 + b"]" * 100_000), -32700, None),
    "objects nested deep": (CALL % (b'{"a":' * 100_000 + b"1" + b"}" * 100_000), -32700, None),
}


@pytest.mark.parametrize("name", list(BAD_LINES))
def test_a_line_the_sdk_cannot_take_gets_an_error_answer(wire: Wire, name: str) -> None:
    line, code, request_id = BAD_LINES[name]
    wire.send(line)
    answer = wire.answer()
    assert answer["jsonrpc"] == "2.0" and answer["id"] == request_id and answer["error"]["code"] == code
    assert AWS not in json.dumps(answer)
    wire.still_answering(2)


def test_an_unknown_method_is_not_echoed(wire: Wire) -> None:
    wire.send(json.dumps({"jsonrpc": "2.0", "id": 8, "method": AWS}).encode())
    answer = wire.answer()
    assert answer["id"] == 8 and answer["error"]["code"] == -32601 and AWS not in json.dumps(answer)
    wire.still_answering(9)


def test_a_frame_over_the_cap_is_refused_and_dropped(wire: Wire) -> None:
    from cmp.integrations._mcp_stdio import MAX_FRAME_BYTES

    # Written in pieces with no newline until the end: the server must drop it as it comes.
    piece = b" " * (1 << 20)
    wire.send(b'{"jsonrpc":"2.0","id":3,"method":"ping","params":{"x":"', newline=False)
    for _ in range(MAX_FRAME_BYTES // len(piece) + 1):
        wire.send(piece, newline=False)
    answer = wire.answer()  # refused once the cap is passed, before the line ends
    assert answer["id"] is None and answer["error"]["code"] == -32600
    assert str(MAX_FRAME_BYTES) in answer["error"]["message"]
    wire.send(b'"}}')  # the rest of the refused line: dropped, not parsed
    wire.still_answering(4)


def test_a_frame_at_the_cap_is_taken(wire: Wire) -> None:
    from cmp.integrations._mcp_stdio import MAX_FRAME_BYTES

    head = b'{"jsonrpc":"2.0","id":5,"method":"ping","params":{"x":"'
    wire.send(head + b"y" * (MAX_FRAME_BYTES - len(head) - 3) + b'"}}')
    assert wire.answer() == {"jsonrpc": "2.0", "id": 5, "result": {}}


def test_a_last_line_without_a_newline_is_answered(wire: Wire) -> None:
    wire.send(b'{"jsonrpc":"2.0","id":6,"method":"ping"}', newline=False)
    wire.process.stdin.close()  # type: ignore[union-attr]
    assert wire.answer() == {"jsonrpc": "2.0", "id": 6, "result": {}}
    assert wire.process.wait(HANG_GUARD) == 0
    wire.process.stdin = None
    wire.close = lambda: None  # type: ignore[method-assign]
