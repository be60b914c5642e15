"""This library behind the conformance harness protocol: ``python -m cmp.adapter``.

It reads one JSON request per line from stdin, ``{"id": str, "input_base64": str}``, and writes one
flushed answer per line: the library's verdict (:func:`cmp.conformance.respond`) under the request's id,
or ``{"id": <the id or null>, "error": "<one line>"}`` (conformance-vectors/README.md).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable
from typing import Any, BinaryIO

from cmp.conformance import respond, strict_b64decode


class BadRequest(ValueError):
    """A request line this adapter cannot read; its message is the answer's error text."""


def _read(line: bytes) -> tuple[str, bytes]:
    """The id and the packet bytes of one request line; BadRequest if it cannot be read."""
    try:
        request = json.loads(line)
    except RecursionError:
        raise BadRequest("bad request: not JSON (nested too deeply)") from None
    except ValueError:  # not JSON, not UTF-8, or a number past the digit limit
        raise BadRequest("bad request: not JSON") from None
    if not isinstance(request, dict):
        raise BadRequest("bad request: not a JSON object")
    vector_id = request.get("id")
    if not isinstance(vector_id, str):
        raise BadRequest("bad request: id is not a string")
    data = strict_b64decode(request.get("input_base64"))
    if data is None:
        raise BadRequest("bad request: input_base64 is not standard padded base64 (RFC 4648)")
    return vector_id, data


def _id_of(line: bytes) -> str | None:
    """The request's id if it has a readable one, so that an error answer can carry it."""
    try:
        request = json.loads(line)
    except (ValueError, RecursionError):
        return None
    vector_id = request.get("id") if isinstance(request, dict) else None
    return vector_id if isinstance(vector_id, str) else None


def answer(line: bytes) -> dict[str, Any]:
    """The answer to one request line. Never raises for anything the line holds."""
    try:
        vector_id, data = _read(line)
    except BadRequest as exc:
        return {"id": _id_of(line), "error": str(exc)}
    return {"id": vector_id, **respond(data)}


def serve(requests: Iterable[bytes], out: BinaryIO) -> None:
    """Answer each request line in order, one flushed line each."""
    for line in requests:
        out.write(json.dumps(answer(line)).encode("ascii") + b"\n")
        out.flush()


def main() -> int:
    try:
        serve(sys.stdin.buffer, sys.stdout.buffer)
    except BrokenPipeError:  # the runner stopped reading: nothing is left to answer
        # Python flushes stdout again at exit, which would print a traceback.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    return 0


__all__ = ["BadRequest", "answer", "main", "serve"]


if __name__ == "__main__":
    sys.exit(main())
