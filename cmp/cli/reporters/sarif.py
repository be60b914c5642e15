"""``--format sarif``: one SARIF 2.1.0 log for the whole run, for code scanning and editors.

The driver lists every rule of :mod:`cmp.cli._catalog`. Every result in a file has a
region with ``startLine`` and ``startColumn``: code scanning refuses results without them.
Unreadable sources are tool execution notifications. The log is written as results
arrive (:class:`SarifLog`), so a long run holds one result at a time.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import quote

from cmp import Report, __version__
from cmp.cli._catalog import PROJECT_URL, CatalogRule, advice_rule_id, catalog
from cmp.cli._output import Output
from cmp.cli._policy import Judged, as_judged
from cmp.cli._render import file_line, redaction_text, tones
from cmp.findings import Finding, Position

TYPE_CHECKING = False
if TYPE_CHECKING:
    from cmp.cli._render import Line, Tone
    from cmp.cli.reporters import Audited, Reporter, Sink

SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
TOOL_NAME = "core-memory-packet"
_LEVEL: dict[Tone, str] = {"fail": "error", "warn": "warning", "ok": "note"}

# Lint's results are advice.
_DEFAULT_LEVEL: dict[str, str] = {"lint": "warning"}


def _driver_rule(rule: CatalogRule) -> dict[str, Any]:
    """A catalog rule as a SARIF reportingDescriptor."""
    return {
        "id": rule.id,
        "shortDescription": {"text": rule.description},
        "fullDescription": {"text": rule.help},
        "help": {"text": rule.help},
        "helpUri": rule.help_uri,
        "defaultConfiguration": {"level": _DEFAULT_LEVEL.get(rule.kind, "error")},
        "properties": {"tags": [rule.kind]},
    }


@functools.cache
def rules() -> tuple[dict[str, Any], ...]:
    """The driver's rules: the catalog's, in its order."""
    return tuple(_driver_rule(rule) for rule in catalog())


@functools.cache
def _rule_index() -> dict[str, int]:
    return {rule["id"]: index for index, rule in enumerate(rules())}


def artifact_uri(file: str) -> str:
    """A file name as a URI reference: relative paths stay relative, in ``/`` form, percent-encoded."""
    path = file.replace(os.sep, "/")
    if os.path.isabs(file):
        return "file://" + quote(path if path.startswith("/") else "/" + path)
    return quote(path)


def _result(
    rule: str,
    tone: Tone,
    message: str,
    file: str,
    jsonl_line: int | None,
    position: Position | None,
    logical: str | None = None,
    **more: Any,
) -> dict[str, Any]:
    """One result: in a file, at its position or the start; a packet in a store (``logical``,
    its id) has no lines, so it is located by name."""
    physical: dict[str, Any] = {"artifactLocation": {"uri": artifact_uri(file)}}
    location: dict[str, Any] = {"physicalLocation": physical}
    if logical is None:
        line = file_line(file, jsonl_line, position) or 1
        physical["region"] = {"startLine": line, "startColumn": 1 if position is None else position.column}
    else:
        location["logicalLocations"] = [{"name": logical, "fullyQualifiedName": f"packets/{logical}"}]
    return {
        "ruleId": rule,
        "ruleIndex": _rule_index()[rule],
        "level": _LEVEL[tone],
        "message": {"text": message},
        "locations": [location],
        "properties": more,
    }


def report_results(
    file: str, jsonl_line: int | None, report: Report | Judged, *, show_found: bool = False, logical: str | None = None
) -> list[str]:
    """The SARIF results of one report, each as JSON text (none for a packet that passes)."""
    return [
        json.dumps(result, ensure_ascii=False, indent=2)
        for result in _report_results(file, jsonl_line, report, show_found=show_found, logical=logical)
    ]


def audit_results(
    file: str,
    jsonl_line: int | None,
    report: Report,
    found: list[Finding],
    logical: str | None,
    *,
    show_found: bool = False,
) -> list[str]:
    """The SARIF results of one audited packet: its report's, then what its row or file disagrees on."""
    out = _report_results(file, jsonl_line, report, show_found=show_found, logical=logical)
    for finding in found:
        out.append(
            _result(
                "audit",
                "fail",
                str(finding),
                file,
                jsonl_line,
                None,
                logical,
                path=finding.path,
                keyword=finding.keyword,
            )
        )
    return [json.dumps(result, ensure_ascii=False, indent=2) for result in out]


def lint_results(file: str, jsonl_line: int | None, findings: list[Finding], tone: Tone) -> list[str]:
    """The SARIF results of a packet's located lint findings, each on its rule ``lint/<keyword>``."""
    return [
        json.dumps(
            _result(
                advice_rule_id(finding),
                tone,
                str(finding),
                file,
                jsonl_line,
                finding.position,
                path=finding.path,
                keyword=finding.keyword,
            ),
            ensure_ascii=False,
            indent=2,
        )
        for finding in findings
    ]


def _report_results(
    file: str, jsonl_line: int | None, report: Report | Judged, *, show_found: bool, logical: str | None
) -> list[dict[str, Any]]:
    judged = as_judged(report)
    report = judged.report
    out: list[dict[str, Any]] = []
    error_tone, hit_tone = tones(report)
    for finding in report.errors:
        out.append(
            _result(
                finding.code,
                error_tone,
                str(finding),
                file,
                jsonl_line,
                finding.position,
                logical,
                path=finding.path,
                keyword=finding.keyword,
            )
        )
    for hit in judged.hits:
        found = hit.redaction
        tone = "warn" if hit.known else hit_tone
        more: dict[str, Any] = {"field": found.field}
        if hit.refused:
            more["stage"] = "refused"
        result = _result(
            hit.rule,
            tone,
            redaction_text(found, show_found=show_found),
            file,
            jsonl_line,
            found.position,
            logical,
            **more,
        )
        if hit.baseline is not None:
            result["baselineState"] = hit.baseline
            if hit.known:
                result["suppressions"] = [{"kind": "external", "justification": "in the baseline"}]
        out.append(result)
    for finding in report.warnings:
        out.append(
            _result(
                finding.code,
                "warn",
                str(finding),
                file,
                jsonl_line,
                finding.position,
                logical,
                path=finding.path,
                keyword=finding.keyword,
            )
        )
    return out


_MARK = '"results": []'


def _log_halves(notifications: list[dict[str, Any]]) -> tuple[str, str]:
    """The dump of the log with no results, cut around its empty results list."""
    log = {
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": TOOL_NAME,
                        "informationUri": PROJECT_URL,
                        "version": __version__,
                        "semanticVersion": __version__,
                        "rules": list(rules()),
                    }
                },
                "columnKind": "unicodeCodePoints",
                "results": [],
                "invocations": [
                    {
                        "executionSuccessful": not notifications,
                        "toolExecutionNotifications": notifications,
                    }
                ],
            }
        ],
    }
    text = json.dumps(log, ensure_ascii=False, indent=2)
    head, mark, tail = text.partition(_MARK)
    assert mark, "the empty results list is in the log"
    return head, tail


@functools.lru_cache(maxsize=1)
def _results_indent() -> str:
    """The newline and indentation before each result."""
    head, _ = _log_halves([])
    return "\n" + " " * (len(head.rsplit("\n", 1)[1]) + 2)


class SarifLog:
    """The log written as it grows: the head at once, each result as it comes, the invocation at the end.
    Its bytes are those ``json.dumps(log, indent=2)`` writes for the whole log (a test holds them to it)."""

    def __init__(self, out: Output) -> None:
        self.out = out
        self.results = 0
        self.notifications: list[dict[str, Any]] = []
        self._indent = _results_indent()
        head, _ = _log_halves(self.notifications)
        out.write((head + '"results": [').encode("utf-8", "backslashreplace"))

    @staticmethod
    def fragment(results: list[str]) -> bytes:
        """Results as they stand in the log: a worker renders them, the parent writes them (:meth:`add`)."""
        indent = _results_indent()
        text = ("," + indent).join(result.replace("\n", indent) for result in results)
        return text.encode("utf-8", "backslashreplace")

    def add(self, fragment: bytes, results: int) -> None:
        """``results`` results rendered by :meth:`fragment`."""
        if results:
            separator = "," if self.results else ""
            self.out.write((separator + self._indent).encode() + fragment)
            self.results += results

    def unreadable(self, file: str, jsonl_line: int | None, message: str, members: Mapping[str, Any]) -> None:
        """A source that could not be read or checked: a notification, and the run not successful."""
        physical: dict[str, Any] = {"artifactLocation": {"uri": artifact_uri(file)}}
        if jsonl_line is not None:
            physical["region"] = {"startLine": jsonl_line}
        location = {"physicalLocation": physical}
        self.notifications.append({"level": "error", "message": {"text": message}, "locations": [location]})

    def close(self, after: Mapping[str, Any]) -> None:
        _, tail = _log_halves(self.notifications)
        closer = self._indent[:-2] + "]" if self.results else "]"
        self.out.write((closer + tail + "\n").encode("utf-8", "backslashreplace"))


class Sarif:
    """Each result's SARIF results as JSON text, in a log the parent streams (:class:`SarifLog`)."""

    def check(self, file: str, jsonl_line: int | None, judged: Judged, *, show_found: bool) -> list[Line]:
        return _pieces(report_results(file, jsonl_line, judged, show_found=show_found))

    def lint(self, file: str, judged: Judged, findings: list[Finding], advice: Tone, *, show_found: bool) -> list[Line]:
        # check's results only for a file check refuses, as in every format.
        checked = report_results(file, None, judged, show_found=show_found) if not judged.accepted else []
        return _pieces([*checked, *lint_results(file, None, findings, advice)])

    def audit(self, item: Audited, *, show_found: bool) -> list[Line]:
        # A row of a store has no lines: its results are placed on the packet's id in the store.
        logical = None if item.file_line is not None or "id" not in item.about else item.about["id"]
        found = audit_results(item.file, item.file_line, item.report, item.found, logical, show_found=show_found)
        return _pieces(found)

    def fragment(self, pieces: Sequence[Line], *, colour: bool) -> tuple[bytes, int]:
        return SarifLog.fragment([result for _, result in pieces]), len(pieces)

    def begin(self, out: Output) -> Sink:
        return SarifLog(out)


def _pieces(results: list[str]) -> list[Line]:
    # A result's level is in its JSON; the tone beside it is only what a Line carries.
    return [("fail", result) for result in results]


REPORTER: Reporter = Sarif()
