"""What the audit finds in one stored packet: what ``check`` finds in its body, and what its
row (a store's) or its file (an export's) disagrees on, as findings of code ``audit``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cmp._audit.reference_db import Row
from cmp._canonical import dumps, file_bytes
from cmp._intake import size_finding
from cmp._messages import quote, unquoted
from cmp._pipeline import Policy, Report, judge
from cmp._timestamps import instant
from cmp.findings import Finding

# How much of a row's id, owner or team a line shows (after the redaction screen).
NAME_LIMIT = 128


def label(value: str | None) -> str | None:
    """A row's id, owner or team as output shows it: withheld when a redaction pattern matches
    in it (``(not shown: …)``), cut at NAME_LIMIT code points."""
    if value is None:
        return None
    shown = unquoted(value)
    return shown if len(shown) <= NAME_LIMIT else shown[:NAME_LIMIT] + "…"


def audit_finding(keyword: str, path: str, message: str) -> Finding:
    """A finding of the audit's own (code ``audit``); ``keyword`` says which."""
    return Finding("audit", path, message, keyword)


@dataclass(frozen=True, slots=True)
class Audited:
    """One packet judged: where it is, its report, and what its row or file disagrees on."""

    where: str  # how a text line names it: store[id], file, file:line
    file: str  # the store or file it is in
    file_line: int | None  # its line in a JSON Lines export
    report: Report
    found: list[Finding]
    about: dict[str, Any]  # what names it in JSON output (id, owner, team; or file, line)
    group: dict[str, str | None]  # what --by counts it under

    @property
    def flagged(self) -> bool:
        """Whether the audit reports the packet: anything check or the audit found in it."""
        return not self.report.ok or bool(self.found)

    def kinds(self) -> list[str]:
        """What the summary line counts of it: each finding by its keyword (or code), each
        redaction hit as ``redaction CATEGORY``."""
        kinds = [finding.keyword or finding.code for finding in (*self.report.errors, *self.found)]
        return kinds + [f"redaction {hit.category}" for hit in self.report.redactions]


_NO_GROUP: dict[str, str | None] = {"owner": None, "team": None}


def audited_row(store: str, row: Row, policy: Policy) -> Audited:
    """A row of ``store`` (its name as shown) judged: its body's report (a body that holds no
    packet's bytes, or too many of them, is refused for it), and what its columns are wrong about."""
    ident, owner, team = label(row.id), label(row.owner_id), label(row.team_id)
    about = {"id": ident, "owner_id": owner, "team_id": team, "deleted": row.deleted}
    group = {"owner": owner, "team": team}
    where = f"{store}[{ident}]"
    if row.body is None:
        if row.body_kind == "bytes":  # more than a packet holds: its length is known, its bytes were not read
            why = size_finding(row.body_size)
        else:
            why = audit_finding("row-body", "$", f"the body is {row.body_kind}, not the packet's bytes")
        report = Report.refused(policy, None, [why])
        return Audited(where, store, None, report, row_findings(row, report), about, group)
    report = judge(row.body, policy).located()
    return Audited(where, store, None, report, row_findings(row, report), about, group)


def row_findings(row: Row, report: Report) -> list[Finding]:
    """What is wrong with the row's columns (one not UTF-8 is named, never quoted), and what
    the row and a body that conforms disagree on."""
    found = [audit_finding("row-text", "$", f"the row's {name} is not UTF-8 text") for name in row.not_text]
    packet = report.packet
    if packet is None:
        return found
    if dumps(packet) != row.body:
        found.append(audit_finding("not-canonical", "$", "the body is not the packet's canonical bytes"))
    if "id" not in row.not_text and row.id != packet.id:
        found.append(audit_finding("row-id", "$.id", f"the row's id is {quote(row.id)}, the body's {quote(packet.id)}"))
    if "goal" not in row.not_text and row.goal != packet.goal:
        found.append(audit_finding("row-goal", "$.goal", "the row's goal is not the body's"))
    if "created_at" not in row.not_text and instant(row.created_at) != instant(packet.created_at):
        message = f"the row's created_at {quote(row.created_at)} is not the body's {quote(packet.created_at)}"
        found.append(audit_finding("row-created_at", "$.created_at", message))
    return found


def exported_file(file: str, report: Report, data: bytes) -> Audited:
    """A packet file of an export, judged (``report``): it should hold the packet's canonical
    bytes and a final newline, as fmt writes it."""
    found = []
    if report.packet is not None and file_bytes(dumps(report.packet)) != data:
        found.append(audit_finding("not-canonical", "$", "the file is not the packet's canonical bytes"))
    return Audited(file, file, None, report, found, {"file": file}, _NO_GROUP)


def exported_line(where: str, file: str, line: int | None, report: Report) -> Audited:
    """A packet on line ``line`` of an export's JSON Lines file, judged: no canonical form fits
    on a line, so it is only checked."""
    return Audited(where, file, line, report, [], {"file": file, "line": line}, _NO_GROUP)
