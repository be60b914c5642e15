"""The harness protocol's messages: a request, this library's answer, and reading another's answer.

One JSON line each way, as conformance-vectors/README.md ("The harness protocol") defines.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from cmp import check, dumps
from cmp._display import one_line, short
from cmp.findings import PacketError


def request_line(vector_id: str, data: bytes) -> bytes:
    """One request, as the line written to the implementation's stdin."""
    request = json.dumps({"id": vector_id, "input_base64": base64.b64encode(data).decode("ascii")}) + "\n"
    return request.encode("ascii")


def respond(data: bytes) -> dict[str, Any]:
    """This library's answer to one input, in the protocol's response shape."""
    report = check(data)
    canonical: str | None = None
    if report.packet is not None:
        try:
            canonical = base64.b64encode(dumps(report.packet)).decode("ascii")
        except PacketError:
            canonical = None
    return {
        "conforming": report.conforming,
        "errors": [{"code": f.code, "path": f.path, "keyword": f.keyword} for f in report.errors],
        # The format's findings, echo and all (specification 8.5): not the masked str().
        "redactions": [r.line(show_found=True) for r in report.redactions],
        "canonical_base64": canonical,
    }


def strict_b64decode(text: Any) -> bytes | None:
    """RFC 4648 base64 exactly as b64encode writes it (standard alphabet, ``=`` padding, no
    line breaks, zero pad bits), decoded; else None."""
    if not isinstance(text, str):
        return None
    try:
        data = base64.b64decode(text, validate=True)
    except ValueError:  # binascii.Error, or a non-ASCII character
        return None
    return data if base64.b64encode(data).decode("ascii") == text else None


def answer_error(response: dict[str, Any]) -> str | None:
    """The text of an error answer (``{"id", "error"}``), or None for an answer."""
    error = response.get("error")
    if error is None:
        return None
    return one_line(error) if isinstance(error, str) else short(error)


def parse_answer(line: bytes) -> tuple[Any, str | None]:
    """(the parsed answer, None) or (None, why it is not JSON); never raises (json.loads raises
    RecursionError for 100,000 "[")."""
    try:
        return json.loads(line), None
    except RecursionError:
        return None, f"answer is not JSON (nested too deeply): {_shown_bytes(line)}"
    except ValueError:
        return None, f"answer is not JSON: {_shown_bytes(line)}"


def _shown_bytes(line: bytes, limit: int = 80) -> str:
    """The start of an answer line as a JSON string (bytes that are not UTF-8 as U+FFFD)."""
    text = line[:limit].decode("utf-8", "replace")
    return json.dumps(text, ensure_ascii=False) + ("…" if len(line) > limit else "")
