"""What ``check`` prints for one result: text lines, or one JSON entry of the ``--format json`` document."""

from __future__ import annotations

import json
from typing import Any

from cmp._pipeline import Report
from cmp._redaction import Redaction


def json_entry(result: dict[str, Any]) -> str:
    """One result as the JSON text ``--format json`` prints for it (two-space indent)."""
    return json.dumps(result, ensure_ascii=False, indent=2)


def where(file: str, line: int | None) -> dict[str, Any]:
    """The members that say which source a result is for: file, and line for --jsonl."""
    return {"file": file} if line is None else {"file": file, "line": line}


def error_entry(file: str, line: int | None, message: str) -> str:
    """The JSON entry of a source that could not be judged (see :func:`error_result`)."""
    return json_entry(error_result(file, line, message))


def error_result(file: str, line: int | None, message: str, **more: Any) -> dict[str, Any]:
    """The result of a source that could not be judged.

    It has the members of a judged one (nothing conforming, accepted or found; ``more``
    adds a command's own, such as lint's), so a consumer reads every result alike;
    ``error`` says why, where a judged one has null.
    """
    return {
        **where(file, line),
        "ok": False,
        "conforming": False,
        "accepted": False,
        "version": None,
        "errors": [],
        "redactions": [],
        **more,
        "error": message,
    }


def redaction_text(redaction: Redaction, *, show_found: bool = False) -> str:
    """A redaction hit as text lines show it: masked unless ``show_found``, and marked
    ``(extended)`` when the extended rules found it."""
    mark = "" if redaction.profile == "default" else f"({redaction.profile}) "
    return mark + redaction.line(show_found=show_found)


def report_lines(name: str, report: Report, *, show_found: bool = False) -> list[str]:
    """The text output of one report, one result per line (escaped for printing by the CLI).

    Redaction hits are masked (``AKIA… (20 chars) at 0``) unless ``show_found`` (--show-found).
    """
    lines = []
    error_prefix = "warning: " if report.lenient and report.schema_only else ""
    for finding in report.errors:
        lines.append(f"{name}: {error_prefix}{finding}")
    redaction_prefix = "warning: redaction " if report.allow_unredacted else "redaction "
    for redaction in report.redactions:
        lines.append(f"{name}: {redaction_prefix}{redaction_text(redaction, show_found=show_found)}")
    if report.accepted:
        lines.append(f"{name}: ok" if report.ok else f"{name}: accepted (not conforming)")
    return lines
