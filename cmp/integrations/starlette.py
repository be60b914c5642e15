"""Receiving packets over HTTP: a Starlette/FastAPI dependency that judges the raw body.

A typed body is judged after the framework parsed the JSON, when a duplicated member is
gone and the size can no longer be told. So this dependency reads the body itself, at most
32,769 bytes (413 beyond), and runs :func:`cmp.check` on exactly those bytes::

    from fastapi import Depends, FastAPI
    from cmp.integrations.starlette import Received, install, packet_intake

    app = FastAPI()
    install(app)  # refusals as application/problem+json; validation errors without the body

    @app.post("/packets")
    async def receive(received: Received = Depends(packet_intake())):
        ...

A refused packet is answered 422 with an RFC 9457 problem document, hits masked.
``require_json=True`` refuses other Content-Types with 415: a page on another origin can
post ``text/plain`` without a CORS preflight, never ``application/json``.
"""

import json
import math
from collections.abc import Awaitable, Callable
from contextlib import aclosing
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cmp import MAX_PACKET_BYTES, Finding, Packet, Report, check
from cmp.findings import first_of

try:  # the `server` extra; FastAPI brings it too (and Starlette brings anyio)
    import anyio
    from starlette.datastructures import Headers
    from starlette.requests import ClientDisconnect, Request
    from starlette.responses import Response
except ImportError as exc:  # pragma: no cover - the extra is installed where this is tested
    raise ImportError(
        "cmp.integrations.starlette needs Starlette (the starlette extra): pip install 'starlette>=0.37'"
    ) from exc

if TYPE_CHECKING:
    from cmp._toolkit import RuleSetName

PROBLEM_TYPE = "application/problem+json"
# Seconds a whole body may take: 32 KB in 10 s is a poor mobile link, and it bounds how
# long a client that sends a byte now and then holds a connection.
BODY_DEADLINE = 10.0
# nginx's number for a request its client closed: never sent, but what a logging middleware sees.
CLIENT_CLOSED = 499
_ASCII_DIGITS = frozenset("0123456789")
_OWS = " \t"  # the whitespace HTTP allows around a field value and its list items


@dataclass(frozen=True, slots=True)
class Received:
    """A packet the intake accepted: the bytes as they came, and the report that judged them.
    One lenient mode let in has no ``packet``, ``conforming`` False and its findings as ``warnings``."""

    body: bytes
    report: Report

    @property
    def packet(self) -> Packet | None:
        return self.report.packet

    @property
    def conforming(self) -> bool:
        return self.report.conforming

    @property
    def warnings(self) -> tuple[Finding, ...]:
        return self.report.errors


class PacketRejected(Exception):
    """The request is not a packet the intake takes: ``status`` and the problem document.
    ``body_unread``: the answer closes the connection, or the server would read on to the body's end."""

    def __init__(self, status: int, problem: dict[str, Any], *, body_unread: bool = False) -> None:
        super().__init__(problem["title"])
        self.status = status
        self.problem = problem
        self.body_unread = body_unread


def _problem(status: int, title: str, detail: str, *, body_unread: bool = False, **members: Any) -> PacketRejected:
    return PacketRejected(
        status,
        {"type": "about:blank", "title": title, "status": status, "detail": detail, **members},
        body_unread=body_unread,
    )


async def read_body(
    request: Request, limit: int = MAX_PACKET_BYTES, *, deadline: float | None = BODY_DEADLINE
) -> bytes:
    """The request body, read as a stream; :class:`PacketRejected` 400 for a bad or
    mismatched Content-Length, 413 past ``limit`` bytes (the rest never read), 408 past
    ``deadline`` seconds (None: none), 499 when the client went away.
    """
    _check_deadline(deadline)
    declared = declared_length(request.headers, limit)
    if declared is not None and declared > limit:  # said up front: nothing need be read
        raise _too_large(limit)
    body = bytearray()
    with anyio.move_on_after(math.inf if deadline is None else deadline) as waited:
        try:
            # aclosing: a stream cancelled mid-receive is closed here, not by the garbage collector.
            async with aclosing(request.stream()) as chunks:
                async for chunk in chunks:
                    body += chunk
                    if len(body) > limit:
                        raise _too_large(limit)
        except ClientDisconnect:
            # Left to propagate, it is a traceback per dropped connection, which anyone can cause.
            raise _problem(
                CLIENT_CLOSED,
                "Client closed the request",
                "the client went away before the body's end",
                body_unread=True,
            ) from None
    if waited.cancelled_caught:
        assert deadline is not None
        raise _problem(
            408,
            "Body too slow",
            f"the body did not arrive within {deadline:g} seconds",
            body_unread=True,
            deadline=deadline,
        )
    if declared is not None and len(body) != declared:
        raise _bad_length(f"the body has {len(body):,} bytes where its Content-Length declares {declared:,}")
    return bytes(body)


def declared_length(headers: Headers, limit: int = MAX_PACKET_BYTES) -> int | None:
    """The length the Content-Length header declares, None without one; :class:`PacketRejected`
    400 unless it is one decimal number of ASCII digits (``str.isdigit`` takes ``²``), or
    several that agree (RFC 9112, 6.3). Past ``limit`` it is ``limit + 1`` (``int`` refuses long ones)."""
    items = [item.strip(_OWS) for field in headers.getlist("content-length") for item in field.split(",")]
    if not items:
        return None
    if not all(item and set(item) <= _ASCII_DIGITS for item in items):
        raise _bad_length("the Content-Length is not a decimal number of ASCII digits")
    numbers = {item.lstrip("0") or "0" for item in items}
    if len(numbers) > 1:
        raise _bad_length("the request has several Content-Length values that disagree")
    (number,) = numbers
    return limit + 1 if len(number) > len(str(limit)) else int(number)


def _bad_length(detail: str) -> PacketRejected:
    return _problem(400, "Bad Content-Length", detail, body_unread=True)


def _too_large(limit: int) -> PacketRejected:
    return _problem(
        413,
        "Packet too large",
        f"the body passes {limit:,} bytes, the most a packet may have",
        body_unread=True,
        limit=limit,
    )


def _check_deadline(deadline: float | None) -> None:
    if deadline is None:
        return
    if isinstance(deadline, bool) or not isinstance(deadline, (int, float)) or not 0 < deadline < math.inf:
        raise ValueError("the body deadline is a number of seconds above 0 (or None for none)")


def check_content_type(headers: Headers) -> None:
    """:class:`PacketRejected` 415 unless the one Content-Type field is ``application/json``
    (any case); a ``charset`` parameter must be UTF-8, other parameters are let be."""
    fields = headers.getlist("content-type")
    if not fields:
        raise _unsupported("the request has no Content-Type: send a packet as application/json")
    if len(fields) > 1:
        raise _unsupported("the request has several Content-Type fields: send one, application/json")
    media_type, *parameters = fields[0].split(";")
    if media_type.strip(_OWS).lower() != "application/json":
        raise _unsupported("the body must be sent as application/json")
    for parameter in parameters:
        name, equals, value = parameter.strip(_OWS).partition("=")
        if not name and not equals:  # an empty item: "application/json;"
            continue
        if not name or not equals:
            raise _unsupported("the Content-Type's parameters are malformed: send application/json")
        if name.strip(_OWS).lower() == "charset" and _unquoted(value.strip(_OWS)).lower() != "utf-8":
            raise _unsupported("a packet is UTF-8: send application/json with no charset or charset=utf-8")


def _unquoted(value: str) -> str:
    return value[1:-1] if len(value) >= 2 and value[0] == value[-1] == '"' else value


def _unsupported(detail: str) -> PacketRejected:
    return _problem(415, "Unsupported media type", detail, body_unread=True, expected="application/json")


def packet_intake(
    *,
    lenient: bool = False,
    rule_set: "RuleSetName" = "default",
    allow_unredacted: bool = False,
    require_json: bool = False,
    body_deadline: float | None = BODY_DEADLINE,
) -> Callable[[Request], Awaitable[Received]]:
    """A dependency that reads the body and judges it: a :class:`Received`, or
    :class:`PacketRejected` (422 for a packet refused; :func:`read_body` says the rest).

    ``lenient``, ``rule_set`` and ``allow_unredacted`` are :func:`cmp.check`'s; ``require_json``
    applies :func:`check_content_type`; ``body_deadline`` is in seconds (None for none)."""
    _check_deadline(body_deadline)

    async def intake(request: Request) -> Received:
        if require_json:
            check_content_type(request.headers)
        body = await read_body(request, deadline=body_deadline)
        report = check(body, lenient=lenient, allow_unredacted=allow_unredacted, rule_set=rule_set)
        if not report.accepted:
            located = report.located()
            raise _problem(
                422,
                "Packet refused",
                _summary(located),
                conforming=located.conforming,
                errors=[finding.to_json() for finding in located.errors],
                redactions=[hit.to_json() for hit in located.redactions],
            )
        return Received(body, report)

    return intake


def _summary(report: Report) -> str:
    if report.errors:
        return first_of(report.errors, more="more findings")
    hits = len(report.redactions)
    return f"{hits} redaction finding{'s' if hits != 1 else ''}: the packet holds what must not travel"


async def problem_response(request: Request, exc: Exception) -> Response:
    """The exception handler that answers :class:`PacketRejected` with its problem document."""
    assert isinstance(exc, PacketRejected)
    body = json.dumps(exc.problem, ensure_ascii=False).encode("utf-8")
    headers = {"connection": "close"} if exc.body_unread else None
    return Response(body, status_code=exc.status, media_type=PROBLEM_TYPE, headers=headers)


async def validation_response(request: Request, exc: Exception) -> Response:
    """FastAPI's answer to a request that failed validation, without each error's ``input``:
    for a typed packet body that is the whole body, secrets and all."""
    from fastapi.encoders import jsonable_encoder

    errors = [{key: value for key, value in error.items() if key != "input"} for error in exc.errors()]  # type: ignore[attr-defined]
    body = json.dumps({"detail": jsonable_encoder(errors)}, ensure_ascii=False).encode("utf-8", "backslashreplace")
    return Response(body, status_code=422, media_type="application/json")


def install(app: Any) -> None:
    """Register :func:`problem_response` for :class:`PacketRejected` on a Starlette or FastAPI
    app, and on a FastAPI app :func:`validation_response` for its request validation errors."""
    app.add_exception_handler(PacketRejected, problem_response)
    try:
        from fastapi.exceptions import RequestValidationError
    except ImportError:  # Starlette alone: no typed bodies to validate
        return
    app.add_exception_handler(RequestValidationError, validation_response)


__all__ = [
    "BODY_DEADLINE",
    "PROBLEM_TYPE",
    "PacketRejected",
    "Received",
    "check_content_type",
    "declared_length",
    "install",
    "packet_intake",
    "read_body",
]
