"""The MCP server's stdio transport: bounded, and answering every line it cannot pass on.

The SDK's ``stdio_server`` buffers a line without limit and answers nothing to a line it
cannot parse or validate, so the client waits forever. Here a line over
:data:`MAX_FRAME_BYTES` is dropped as it arrives; a line is parsed with its nesting
measured first and validated as JSON-RPC; a refused line is answered with a JSON-RPC
error whose message never quotes the line, which may hold a secret. Answers go out on
one writer, so error answers and the session's never interleave.
"""

from __future__ import annotations

import io
import json
import sys
from typing import TYPE_CHECKING, Any, BinaryIO

import anyio
import anyio.to_thread

from cmp._toolkit import nesting

if TYPE_CHECKING:
    from mcp.server.lowlevel import Server

# One JSON-RPC message on one line, at most: a packet is at most 32 KB, so no call of
# this server needs more, and a frame at the cap peaks at about six times it in memory.
MAX_FRAME_BYTES = 8 * 1024 * 1024
MAX_FRAME_NESTING = 128  # brackets in a frame; a packet nests about six deep
_CHUNK = 1 << 16

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601


class _Refused(Exception):
    """A line answered with a JSON-RPC error instead of being passed on."""

    def __init__(self, code: int, message: str, request_id: int | str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.request_id = request_id


def _over_the_cap() -> _Refused:
    return _Refused(INVALID_REQUEST, f"Invalid Request: a message over {MAX_FRAME_BYTES} bytes")


def _request_id(message: Any) -> int | str | None:
    """The line's id if it is one JSON-RPC allows (a string or an integer), else None."""
    if isinstance(message, dict):
        value = message.get("id")
        if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)):
            return value
    return None


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def parsed(line: bytes) -> Any:
    """The JSON value of one line, or :class:`_Refused` saying why not (never quoting it)."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        raise _Refused(PARSE_ERROR, "Parse error: the line is not UTF-8") from None
    if nesting(line, MAX_FRAME_NESTING) > MAX_FRAME_NESTING:
        raise _Refused(PARSE_ERROR, f"Parse error: the message nests deeper than {MAX_FRAME_NESTING} levels")
    try:
        value = json.loads(text, parse_constant=_refuse_constant)
    except (ValueError, RecursionError):
        raise _Refused(PARSE_ERROR, "Parse error: the line is not one JSON value") from None
    try:
        # A \\ud800 escape reads as a lone surrogate, which no UTF-8 answer can carry.
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise _Refused(PARSE_ERROR, "Parse error: a string holds a lone surrogate escape") from None
    return value


def _shaped(value: Any) -> None:
    """ValueError unless ``value`` has the outline of one JSON-RPC message: the SDK's
    models take an ``id`` of another type for a notification's extra member, unanswered."""
    if not isinstance(value, dict):
        raise ValueError("not an object")
    if "id" in value and value["id"] is not None and _request_id(value) is None:
        raise ValueError("id")
    if "params" in value and not isinstance(value["params"], dict):
        raise ValueError("params")


def _error_line(code: int, message: str, request_id: int | str | None) -> bytes:
    answer = {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}
    return json.dumps(answer).encode("ascii") + b"\n"


async def serve(server: Server[Any], stdin: io.BufferedIOBase | None = None, stdout: BinaryIO | None = None) -> None:
    """Serve ``server`` over stdin and stdout (their bytes) until stdin closes."""
    import mcp_types
    from mcp.shared.message import SessionMessage

    source: io.BufferedIOBase = stdin if stdin is not None else sys.stdin.buffer  # type: ignore[assignment]
    sink = stdout if stdout is not None else sys.stdout.buffer
    to_session_send, to_session = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    from_session_send, from_session = anyio.create_memory_object_stream[SessionMessage | bytes](0)
    errors_send = from_session_send.clone()
    unanswered: set[int | str] = set()  # the ids of requests passed on and not yet answered
    answered = _Flag()

    async def refuse(exc: _Refused) -> None:
        await errors_send.send(_error_line(exc.code, str(exc), exc.request_id))

    async def take(line: bytes) -> None:
        if not line.strip():
            return
        try:
            value = parsed(line)
            try:
                _shaped(value)
                message = mcp_types.jsonrpc_message_adapter.validate_python(value, by_name=False)
            except ValueError:
                # pydantic's message quotes the input: say only what a message must be.
                raise _Refused(
                    INVALID_REQUEST,
                    'Invalid Request: not a JSON-RPC 2.0 message (an object with jsonrpc "2.0", '
                    "a string or integer id, a method string and params an object)",
                    _request_id(value),
                ) from None
        except _Refused as exc:
            await refuse(exc)
            return
        if isinstance(message, mcp_types.JSONRPCRequest):
            unanswered.add(message.id)
        elif isinstance(message, mcp_types.JSONRPCNotification) and message.method == "notifications/cancelled":
            # A cancelled request is not answered (the protocol says so): not waited for.
            unanswered.discard((message.params or {}).get("requestId"))
        await to_session_send.send(SessionMessage(message))

    async def read() -> None:
        async with to_session_send, errors_send:
            pending = bytearray()
            dropping = False  # inside a line over the cap: its bytes are dropped up to its newline
            while True:
                chunk: bytes = await anyio.to_thread.run_sync(source.read1, _CHUNK)
                if not chunk:
                    break
                start = 0
                while (end := chunk.find(b"\n", start)) != -1:
                    if dropping:
                        dropping = False
                    elif len(pending) + end - start > MAX_FRAME_BYTES:
                        await refuse(_over_the_cap())
                    else:
                        await take(bytes(pending + chunk[start:end]))
                    pending.clear()
                    start = end + 1
                if not dropping:
                    pending += chunk[start:]
                    if len(pending) > MAX_FRAME_BYTES:
                        pending.clear()
                        dropping = True
                        await refuse(_over_the_cap())
            if pending.strip() and not dropping:
                await take(bytes(pending))
            # The session stops at the end of its input, dropping what it has not answered:
            # a client that writes its requests and closes stdin still gets every answer.
            while unanswered:
                answered.clear()
                await answered.wait()

    async def write() -> None:
        async with from_session:
            async for item in from_session:
                if isinstance(item, bytes):
                    data = item
                elif isinstance(item.message, mcp_types.JSONRPCError) and item.message.error.code == METHOD_NOT_FOUND:
                    # The SDK puts the method's name in `data`: the caller's text, not echoed.
                    data = _error_line(METHOD_NOT_FOUND, "Method not found", item.message.id)
                else:
                    data = item.message.model_dump_json(by_alias=True, exclude_unset=True).encode("utf-8") + b"\n"
                await anyio.to_thread.run_sync(_write, sink, data)
                if not isinstance(item, bytes) and isinstance(
                    item.message, (mcp_types.JSONRPCResponse, mcp_types.JSONRPCError)
                ):
                    unanswered.discard(item.message.id)
                    answered.set()

    async with anyio.create_task_group() as group:
        group.start_soon(read)
        group.start_soon(write)
        async with from_session_send:
            await server.run(to_session, from_session_send, server.create_initialization_options())


class _Flag:
    """An event that can be waited on again after it was set (anyio's Event cannot be cleared)."""

    def __init__(self) -> None:
        self._event = anyio.Event()

    def set(self) -> None:
        self._event.set()

    def clear(self) -> None:
        if self._event.is_set():
            self._event = anyio.Event()

    async def wait(self) -> None:
        await self._event.wait()


def _write(sink: BinaryIO, data: bytes) -> None:
    sink.write(data)
    sink.flush()
