"""A Model Context Protocol server for an agent that writes packets (``core-memory-packet mcp``).

Built on the official MCP Python SDK (the ``mcp`` extra), imported on first use.
The tools are the writer's toolkit: check, lint, scrub, format, new, example, migrate
and schema. Every packet argument is the packet's JSON text, judged by ``check`` as the
CLI judges a file. A packet a tool cannot take (not JSON, over 32 KB, an unknown
version, a schema finding, a redaction hit) is a tool error whose text is one JSON
document listing every finding with its path, position and message, redaction hits
masked: the agent reads what to fix, and a secret is not echoed into its context. The
server answers every call; nothing an agent sends stops it.

Descriptions carry the annotated schema's field guidance (what to write in each member
and its bounds), so an agent can write a valid packet on the first try.
"""

from __future__ import annotations

import functools
import json
from typing import TYPE_CHECKING, Any

import cmp
from cmp._example import example_packet
from cmp._messages import quote
from cmp._redaction._rules import checked_rules
from cmp.schema import annotated_schema

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

_INSTRUCTIONS = (
    "Tools for writing Core Memory Packets: small JSON documents that carry the intent of a work "
    "session (goal, decisions, attempts, next step) to the next agent. Start from `example` or "
    "`new`, `check` every draft (a tool error lists each finding with its path and line), fix what "
    "it names, `lint` for the writing rules, `scrub` to replace secrets, `format` for the canonical "
    "text. Never put credentials, absolute paths or machine-local state in a packet."
)


def _guidance(version: str = "0.2") -> str:
    """The annotated schema's description of each top-level member, one line each."""
    schema = annotated_schema(version)
    lines = []
    for name, member in schema.get("properties", {}).items():
        required = " (required)" if name in schema.get("required", ()) else ""
        lines.append(f"- {name}{required}: {member.get('description', '')}")
    return "\n".join(lines)


class _Refused(Exception):
    """What a tool answers a packet it cannot take with: one JSON document of findings."""

    def __init__(self, summary: str, **document: Any) -> None:
        super().__init__(json.dumps({"summary": summary, **document}, ensure_ascii=False, indent=2))


def _judged(packet: str, *, lenient: bool = False, rules: str = "default") -> cmp.Report:
    if not isinstance(packet, str):
        raise _Refused("the packet must be given as its JSON text (a string)")
    return cmp.check(packet, lenient=lenient, rules=checked_rules(rules)).located()


def _refuse_report(report: cmp.Report) -> _Refused:
    first = report.errors[0] if report.errors else None
    summary = (
        f"not accepted: {first}"
        if first is not None
        else f"not accepted: {len(report.redactions)} redaction finding(s)"
    )
    return _Refused(summary, **report.to_json())


def _accepted(packet: str, *, rules: str = "default") -> cmp.Packet:
    report = _judged(packet, rules=rules)
    if not report.ok or report.packet is None:
        raise _refuse_report(report)
    return report.packet


def _refuse_findings(findings: tuple[cmp.Finding, ...] | list[cmp.Finding]) -> _Refused:
    return _Refused(
        f"not a conforming packet: {findings[0]}" if findings else "not a conforming packet",
        errors=[finding.to_json() for finding in findings],
    )


def _supported(version: str) -> str:
    """``version``, or a refusal naming the versions there are."""
    if version not in cmp.SUPPORTED_VERSIONS:
        raise _Refused(f"version must be one of {', '.join(cmp.SUPPORTED_VERSIONS)}, not {quote(version)}")
    return version


def _text(packet: cmp.Packet) -> str:
    return cmp.dumps(packet).decode("utf-8")


def build_server() -> MCPServer:
    """The server and its tools (the SDK imported here, on first use)."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    # The SDK logs every refused call at INFO on stderr: an agent's drafts are refused
    # often, and a client shows that stream as the server's log; warnings only.
    server = MCPServer(
        name="core-memory-packet", version=cmp.__version__, instructions=_INSTRUCTIONS, log_level="WARNING"
    )

    def tool(function: Any, description: str) -> None:
        @functools.wraps(function)
        def guarded(*args: Any, **kwargs: Any) -> Any:
            try:
                return function(*args, **kwargs)
            except _Refused as exc:
                raise ToolError(str(exc)) from None
            except cmp.PacketError as exc:
                raise ToolError(str(_refuse_findings(exc.findings))) from None
            except (TypeError, ValueError) as exc:
                raise ToolError(str(_Refused(f"bad arguments: {exc}"))) from None

        server.add_tool(guarded, description=description)

    # Each function has its tool's name: the SDK names the tool, its argument and output
    # schemas ("checkArguments") and its argument errors after the function. A tool's
    # `rules` is a plain string (a Literal would put an enum in the schema, and pydantic's
    # message in place of check's), narrowed by checked_rules, which check itself asks.

    def check(packet: str, lenient: bool = False, rules: str = "default") -> dict[str, Any]:
        report = _judged(packet, lenient=lenient, rules=rules)
        if not report.accepted:
            raise _refuse_report(report)
        return report.to_json()

    def lint(packet: str) -> dict[str, Any]:
        report = _judged(packet)
        if report.packet is None:
            raise _refuse_report(report)
        advice = cmp.locate(packet, cmp.lint(report.packet))
        return {"ok": report.ok, "lint": [finding.to_json() for finding in advice], **report.to_json()}

    def scrub(packet: str, rules: str = "default") -> dict[str, Any]:
        report = _judged(packet, rules=rules)
        if report.packet is None:
            raise _refuse_report(report)
        clean, replaced = cmp.scrub(report.packet, rules=checked_rules(rules))
        return {"packet": _text(clean), "replaced": [hit.to_json() for hit in replaced]}

    def format(packet: str) -> str:
        return _text(_accepted(packet))

    def new(
        goal: str,
        next_step: str,
        constraints: list[str] | None = None,
        success_criteria: list[str] | None = None,
        open_questions: list[str] | None = None,
        tags: list[str] | None = None,
        parent: str = "",
        version: str = "0.2",
    ) -> str:
        members: dict[str, Any] = {"ltm_version": version}
        for name, value in (
            ("constraints", constraints),
            ("success_criteria", success_criteria),
            ("open_questions", open_questions),
            ("tags", tags),
        ):
            if value:
                members[name] = value
        # (A plain string, "" for none: the SDK reads a JSON-looking value of an optional
        # string argument as JSON, and a packet's text is JSON.)
        parent_packet = _accepted(parent) if parent else None
        fresh = cmp.Packet.new(goal=goal, next_step=next_step, parent=parent_packet, **members)
        hits = cmp.redact(fresh)
        if hits:
            raise _Refused(
                f"the packet would hold {len(hits)} redaction finding(s): remove them",
                redactions=[hit.to_json() for hit in hits],
            )
        return _text(fresh)

    def example(version: str = "0.2") -> str:
        return _text(example_packet(_supported(version)))

    def migrate(packet: str, to: str, drop: bool = False) -> str:
        return _text(cmp.migrate(_accepted(packet), to, drop=drop))

    def schema(version: str = "0.2") -> dict[str, Any]:
        return annotated_schema(_supported(version))

    guidance = _guidance()
    packet_help = "`packet` is the packet's JSON text."
    refusal = (
        "A packet it cannot take is a tool error: one JSON document listing every finding "
        "(code, path, keyword, message, line, column) and redaction hits, masked."
    )
    tool(
        check,
        "Validate a packet and run the redaction pre-flight. Returns the report (ok, conforming, "
        f"version, errors, redactions). {packet_help} `lenient` accepts schema findings as warnings; "
        f"`rules` is default or extended (more credential patterns). {refusal}",
    )
    tool(
        lint,
        f"Advice on the writing rules for a packet that conforms (never a verdict). {packet_help} {refusal}",
    )
    tool(
        scrub,
        f"Replace every redaction match with a [redacted:category] placeholder; returns the packet's "
        f"canonical text and what was replaced. {packet_help} {refusal}",
    )
    tool(format, f"The packet's canonical text (what the format stores and sends). {packet_help} {refusal}")
    tool(
        new,
        "Write a new packet: a fresh id and created_at, the members given. Returns its canonical text. "
        f"`parent` is the JSON text of the packet this one continues. {refusal}\n\nWhat to write:\n{guidance}",
    )
    tool(example, "A complete example packet of a version (0.1 or 0.2), as canonical text.")
    tool(
        migrate,
        "The packet as another version (`to`: 0.1 or 0.2); `drop` leaves out what that version lacks. "
        f"{packet_help} {refusal}",
    )
    tool(schema, "The JSON Schema of a version with a description and examples for every member (for writing packets).")
    return server
