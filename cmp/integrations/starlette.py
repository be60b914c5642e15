"""Receiving packets over HTTP: a Starlette/FastAPI dependency that judges the raw body.

A typed body (``packet: cmp.Packet`` in a FastAPI route) is judged after the framework
parsed the JSON, when a duplicated member is already gone and the size limit can no
longer be told: only the bytes can say. So this dependency reads the body itself, as a
stream, at most 32,769 bytes of it (413 beyond that, the rest never read), and runs
:func:`cmp.check` on exactly those bytes::

    from fastapi import Depends, FastAPI
    from cmp.server import Received, install, packet_intake

    app = FastAPI()
    install(app)  # refusals as application/problem+json; validation errors without the body

    @app.post("/packets")
    async def receive(received: Received = Depends(packet_intake())):
        ...

A refused packet is answered 422 with an RFC 9457 problem document listing every finding
(code, path, keyword, message, line, column) and every redaction hit, masked as
everywhere. In lenient mode a packet whose only findings are schema findings is
accepted and flagged (``Received.conforming`` is False, its findings are in
``Received.warnings``), as the specification's clause 10 asks of a lenient reader.

Needs Starlette (FastAPI brings it): the ``server`` extra. Its public name is
:mod:`cmp.server`, which re-exports it.
"""

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cmp import MAX_PACKET_BYTES, Finding, Packet, Report, check
from cmp.findings import first_of

try:  # the `server` extra; FastAPI brings it too
    from starlette.requests import Request
    from starlette.responses import Response
except ImportError as exc:  # pragma: no cover - the extra is installed where this is tested
    raise ImportError("cmp.server needs Starlette: pip install 'core-memory-packet[server]'") from exc

if TYPE_CHECKING:
    from cmp._redaction._rules import Rules

PROBLEM_TYPE = "application/problem+json"


@dataclass(frozen=True, slots=True)
class Received:
    """A packet the intake accepted: the bytes as they came, and the report that judged them.

    ``packet`` is the typed packet of a conforming one. A packet lenient mode let in has
    none (it does not fit the schema): ``conforming`` is False, its schema findings are
    ``warnings``, and a lenient server stores ``body`` as it came.
    """

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
    """The body is not a packet the intake takes: ``status`` (413 or 422) and the problem document."""

    def __init__(self, status: int, problem: dict[str, Any]) -> None:
        super().__init__(problem["title"])
        self.status = status
        self.problem = problem


def _problem(status: int, title: str, detail: str, **members: Any) -> PacketRejected:
    return PacketRejected(
        status, {"type": "about:blank", "title": title, "status": status, "detail": detail, **members}
    )


async def read_body(request: Request, limit: int = MAX_PACKET_BYTES) -> bytes:
    """The request body, read as a stream; :class:`PacketRejected` (413) as soon as it
    passes ``limit`` bytes, without reading the rest."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:  # said up front: nothing need be read
        raise _too_large(limit)
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise _too_large(limit)
    return bytes(body)


def _too_large(limit: int) -> PacketRejected:
    return _problem(
        413, "Packet too large", f"the body passes {limit:,} bytes, the most a packet may have", limit=limit
    )


def packet_intake(
    *, lenient: bool = False, rules: "Rules" = "default", allow_unredacted: bool = False
) -> Callable[[Request], Awaitable[Received]]:
    """A dependency that reads the body and judges it: a :class:`Received`, or
    :class:`PacketRejected` (413 for a body over the limit, 422 for a packet refused).

    ``lenient`` accepts a packet whose only findings are schema findings (flagged);
    ``rules="extended"`` adds the extended redaction rules; ``allow_unredacted`` lets a
    packet with redaction hits through (the whole-packet override).
    """

    async def intake(request: Request) -> Received:
        body = await read_body(request)
        report = check(body, lenient=lenient, allow_unredacted=allow_unredacted, rules=rules)
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
    return Response(body, status_code=exc.status, media_type=PROBLEM_TYPE)


async def validation_response(request: Request, exc: Exception) -> Response:
    """FastAPI's answer to a request that failed validation, without the ``input`` pydantic
    puts in each error: for a typed packet body that is the whole body, secrets and all,
    and it may not even be JSON text (a lone surrogate, NaN). Our ``cmp_packet`` errors
    carry the findings, masked, in their context."""
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


__all__ = ["PROBLEM_TYPE", "PacketRejected", "Received", "install", "packet_intake", "read_body"]
