"""``--format json``: one document ``{"version": 1, "results": [...]}`` a run, written as
results arrive (:class:`JsonResults`)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from cmp.cli._output import Output
from cmp.cli._render import file_line, where
from cmp.findings import Position

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from cmp.cli._policy import Judged
    from cmp.cli._render import Line, Tone
    from cmp.cli.reporters import Audited, Reporter, Sink
    from cmp.findings import Finding

# Changes only when a member's meaning changes or one is removed (schema:
# cmp/cli/schemas/check-report.schema.json).
RESULTS_VERSION = 1


def json_entry(result: dict[str, Any]) -> str:
    """One result as the JSON text the document holds for it (two-space indent)."""
    return json.dumps(result, ensure_ascii=False, indent=2)


def error_result(file: str, line: int | None, message: str, **more: Any) -> dict[str, Any]:
    """The result of a source that could not be judged: a judged one's members (``more``
    adds a command's own), with ``error`` saying why."""
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


def report_json(judged: Judged, *, show_found: bool = False) -> dict[str, Any]:
    """The JSON result of one judged report (:meth:`cmp.Report.to_json`'s members): its
    redactions are the run's hits, each with ``"stage": "refused"`` when found in a refused
    packet and ``"baseline"`` when a baseline is in use; ``ok`` and ``accepted`` are the run's."""
    report = judged.report
    result = report.to_json(show_found=show_found)
    result["ok"] = report.conforming and judged.accepted
    result["accepted"] = judged.accepted
    redactions = []
    for hit in judged.hits:
        entry = hit.redaction.to_json(show_found=show_found)
        if hit.refused:
            entry["stage"] = "refused"
        if hit.baseline is not None:
            entry["baseline"] = hit.baseline
        redactions.append(entry)
    result["redactions"] = redactions
    return result


def _tone(accepted: bool) -> Tone:
    return "ok" if accepted else "fail"


class Json:
    def check(self, file: str, jsonl_line: int | None, judged: Judged, *, show_found: bool) -> list[Line]:
        result = report_json(judged, show_found=show_found)
        if jsonl_line is not None:  # a JSON Lines packet: its positions on the file's own lines
            for item in (*result["errors"], *result["redactions"], *result.get("warnings", ())):
                if "line" in item:
                    item["line"] = file_line(file, jsonl_line, Position(item["line"], item["column"]))
        entry = {**where(file, jsonl_line), **result, "error": None}
        return [(_tone(judged.accepted), json_entry(entry))]

    def lint(self, file: str, judged: Judged, findings: list[Finding], advice: Tone, *, show_found: bool) -> list[Line]:
        result = report_json(judged, show_found=show_found)
        result.pop("warnings", None)  # lint's findings begin with them
        lint = [finding.to_json() for finding in findings]
        return [(_tone(judged.accepted), json_entry({**where(file, None), **result, "lint": lint, "error": None}))]

    def audit(self, item: Audited, *, show_found: bool) -> list[Line]:
        found = [finding.to_json() for finding in item.found]
        return [("fail", json_entry({**item.about, **item.report.to_json(show_found=show_found), "audit": found}))]

    def fragment(self, pieces: Sequence[Line], *, colour: bool) -> tuple[bytes, int]:
        return JsonResults.fragment([entry for _, entry in pieces]), len(pieces)

    def begin(self, out: Output) -> Sink:
        return JsonResults(out)


class JsonResults:
    """``{"version": 1, "results": [...]}`` written one entry at a time, as results arrive:
    the bytes ``json.dumps(..., indent=2)`` writes for the whole document."""

    def __init__(self, out: Output) -> None:
        self.out = out
        self.entries = 0
        out.write(f'{{\n  "version": {RESULTS_VERSION},\n  "results": ['.encode())

    _INDENT = "\n    "

    @classmethod
    def fragment(cls, entries: list[str]) -> bytes:
        """Entries as they stand in the document, less the separator before the first: what a
        worker renders, so that the parent only writes it (:meth:`add`)."""
        # JSON text holds no raw newline inside a string, so every newline is indentation.
        text = ("," + cls._INDENT).join(entry.replace("\n", cls._INDENT) for entry in entries)
        return text.encode("utf-8", "backslashreplace")

    def add(self, fragment: bytes, entries: int) -> None:
        """``entries`` entries rendered by :meth:`fragment`."""
        if entries:
            separator = "," + self._INDENT if self.entries else self._INDENT
            self.out.write(separator.encode() + fragment)
            self.entries += entries

    def unreadable(self, file: str, jsonl_line: int | None, message: str, members: Mapping[str, Any]) -> None:
        """A source that could not be read or checked: a result of its own, in its place."""
        self.add(self.fragment([json_entry(error_result(file, jsonl_line, message, **members))]), 1)

    def close(self, after: Mapping[str, Any]) -> None:
        """End the document; ``after`` are members written after the results (``"baseline"``)."""
        members = "".join(
            f',\n  "{name}": ' + json.dumps(value, ensure_ascii=False, indent=2).replace("\n", "\n  ")
            for name, value in after.items()
        )
        self.out.write(("\n  ]" if self.entries else "]").encode() + members.encode("utf-8", "backslashreplace"))
        self.out.write(b"\n}\n")


REPORTER: Reporter = Json()
