"""A Model Context Protocol server for an agent that writes packets (``core-memory-packet mcp``).

Built on the official MCP Python SDK (the ``mcp`` extra), imported on first use: its
low-level ``Server``, so that this module states each tool's ``inputSchema``,
``outputSchema`` and annotations itself and checks the arguments itself (the SDK's
signature-derived validation echoes a refused value into its message), over the
bounded transport of :mod:`cmp.integrations._mcp_stdio`.

Tools: ``check``, ``lint``, ``scrub``, ``format``, ``migrate`` take the packet as its JSON
text or as a JSON object; an object is judged as the text ``json.dumps`` writes of it
(so the size cap applies to that text), and its findings carry paths but no line or
column (there is no text of the caller's to point into). ``new`` takes the whole packet
as its arguments: its ``inputSchema`` is the draft schema (:func:`cmp.draft_schema`)
with ``parent`` and ``version`` beside it, made a packet by :meth:`cmp.Packet.from_draft`.
``example`` and ``schema`` give a version's example and annotated schema. None writes
anything anywhere: all are read-only and idempotent, and reach nothing outside.

A call a tool cannot take (an argument it does not have or of the wrong type, a packet
that is not JSON, over 32 KB, of an unknown version, with a schema finding or a
redaction hit, an unknown tool) is a tool error whose text is exactly one JSON
document: a summary and every finding with its path, position (when the packet was
text) and message, redaction hits masked. An argument's value is never quoted, and
every string of a JSON answer passes through the redaction patterns (a schema finding
may quote a short value), so a secret is not echoed into the agent's context.

Resources: the annotated and the draft schema of each version and its example packet
(:data:`RESOURCES` names the URIs). A prompt, ``write_packet``, asks the agent to write
the packet of the session it is ending and give it to ``new``.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import cmp
from cmp._example import example_packet
from cmp._lint import RULES
from cmp._redaction._rules import checked_rules, placeholder
from cmp._redaction._scan import replace_matches, scan
from cmp.schema import annotated_schema

if TYPE_CHECKING:
    from mcp.server.lowlevel import Server

_INSTRUCTIONS = (
    "Tools for writing Core Memory Packets: small JSON documents that carry the intent of a work "
    "session (goal, decisions, attempts, next step) to the next agent. Write a packet with `new` "
    "(its arguments are the packet's members; the prompt `write_packet` says what goes in each), "
    "or `check` a draft (a tool error lists each finding with its path), fix what it names, "
    "`lint` for the writing rules, `scrub` to replace secrets, `format` for the canonical text. "
    "Never put credentials, absolute paths or machine-local state in a packet."
)

_VERSIONS = list(cmp.SUPPORTED_VERSIONS)
_RULE_SETS = ["default", "extended"]

# The URIs of the resources, each with what it is, its media type and how it is made.
RESOURCES: dict[str, tuple[str, str, Callable[[], str]]] = {}
for _version in _VERSIONS:
    RESOURCES[f"cmp://schema/{_version}/annotated"] = (
        f"The JSON Schema of a version {_version} packet, with a description and examples for every member.",
        "application/schema+json",
        functools.partial(lambda v: json.dumps(annotated_schema(v), ensure_ascii=False, indent=2), _version),
    )
    RESOURCES[f"cmp://schema/{_version}/draft"] = (
        f"The draft schema of a version {_version} packet (strict structured output): what `new` takes.",
        "application/schema+json",
        functools.partial(lambda v: json.dumps(cmp.draft_schema(v), ensure_ascii=False, indent=2), _version),
    )
    RESOURCES[f"cmp://example/{_version}"] = (
        f"A complete example packet of version {_version}, as canonical text.",
        "application/json",
        functools.partial(lambda v: cmp.dumps(example_packet(v)).decode("utf-8"), _version),
    )


class _Refused(Exception):
    """What a tool answers a call it cannot take with: one JSON document."""

    def __init__(self, summary: str, **document: Any) -> None:
        super().__init__(summary)
        self.document = {"summary": summary, **document}


@dataclass(frozen=True)
class _Answer:
    """A tool's answer: its text blocks and, for a tool with an output schema, the structured content."""

    texts: list[str]
    structured: dict[str, Any] | None = None


def _packet_argument(description: str) -> dict[str, Any]:
    return {
        "type": ["string", "object"],
        "description": f"{description} Its JSON text, or the packet as a JSON object (judged as the "
        "text json.dumps writes of it: findings then carry paths but no line or column).",
    }


_PACKET = _packet_argument("The packet.")
_RULES = {
    "type": "string",
    "enum": _RULE_SETS,
    "description": "The redaction rules: default, or extended (more credential patterns).",
}


def _object(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")


def _named(name: str) -> str:
    """An argument's name as a refusal may show it: never a credential, never anything long."""
    if _IDENTIFIER.fullmatch(name) and not scan([("argument", name)]):
        return name
    return "(a name not shown: it is not a short identifier, or looks like a credential)"


_JSON_TYPES: dict[str, Callable[[Any], bool]] = {
    "string": lambda value: isinstance(value, str),
    "boolean": lambda value: isinstance(value, bool),
    "object": lambda value: isinstance(value, dict),
    "array": lambda value: isinstance(value, list),
    "null": lambda value: value is None,
}


def _json_type(value: Any) -> str:
    for name, test in _JSON_TYPES.items():
        if test(value):
            return name
    return "number"


def _checked_arguments(schema: Mapping[str, Any], arguments: Mapping[str, Any]) -> None:
    """Refuse arguments the tool's schema does not have, lacks, or types otherwise; no value is quoted."""
    properties: Mapping[str, Any] = schema["properties"]
    errors: list[dict[str, Any]] = []
    for name in arguments:
        if name not in properties:
            shown = _named(name)
            errors.append(
                {
                    "code": "argument",
                    "path": f"$.{shown}",
                    "message": f"unknown argument {shown}: the arguments are {', '.join(properties)}",
                }
            )
    for name in schema["required"]:
        if name not in arguments:
            errors.append({"code": "argument", "path": f"$.{name}", "message": f"missing argument {name}"})
    for name, value in arguments.items():
        node = properties.get(name)
        if node is None:
            continue
        kinds = node["type"] if isinstance(node["type"], list) else [node["type"]]
        if not any(_JSON_TYPES.get(kind, lambda _: False)(value) for kind in kinds):
            errors.append(
                {
                    "code": "argument",
                    "path": f"$.{name}",
                    "message": f"expected {' or '.join(kinds)}, got {_json_type(value)}",
                }
            )
        elif "enum" in node and value not in node["enum"]:
            choices = ", ".join("null" if choice is None else str(choice) for choice in node["enum"])
            errors.append({"code": "argument", "path": f"$.{name}", "message": f"must be one of {choices}"})
    if errors:
        raise _Refused(f"bad arguments: {errors[0]['message']}", errors=errors)


def _judged(packet: str | dict[str, Any], *, lenient: bool = False, rules: str = "default") -> cmp.Report:
    if isinstance(packet, dict):
        # Positions would point into a text the caller never saw: paths only.
        return cmp.check(json.dumps(packet, ensure_ascii=False), lenient=lenient, rules=checked_rules(rules))
    return cmp.check(packet, lenient=lenient, rules=checked_rules(rules)).located()


def _refuse_report(report: cmp.Report) -> _Refused:
    first = report.errors[0] if report.errors else None
    summary = (
        f"not accepted: {first}"
        if first is not None
        else f"not accepted: {len(report.redactions)} redaction finding(s)"
    )
    return _Refused(summary, **report.to_json())


def _accepted(packet: str | dict[str, Any], *, rules: str = "default") -> cmp.Packet:
    report = _judged(packet, rules=rules)
    if not report.ok or report.packet is None:
        raise _refuse_report(report)
    return report.packet


def _text(packet: cmp.Packet) -> str:
    return cmp.dumps(packet).decode("utf-8")


def _masked(value: Any) -> Any:
    """``value`` (a refusal's document) with any credential left in its strings replaced:
    a last guard, as a finding's message may name a member the caller wrote."""
    if isinstance(value, str):
        return replace_matches(value, lambda pattern, match, at: placeholder(pattern.category))
    if isinstance(value, dict):
        return {_masked(key): _masked(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_masked(item) for item in value]
    return value


def _document(value: Any) -> str:
    """A tool's JSON answer: findings' messages may quote a value (a pattern's), so masked."""
    return json.dumps(_masked(value), ensure_ascii=False, indent=2)


# -- the tools -------------------------------------------------------------------------


def _check(arguments: Mapping[str, Any]) -> _Answer:
    report = _judged(
        arguments["packet"], lenient=arguments.get("lenient", False), rules=arguments.get("rules", "default")
    )
    if not report.accepted:
        raise _refuse_report(report)
    return _Answer([_document(report.to_json())])


def _lint(arguments: Mapping[str, Any]) -> _Answer:
    packet = arguments["packet"]
    report = _judged(packet)
    if report.packet is None:
        raise _refuse_report(report)
    advice = cmp.lint(report.packet)
    if isinstance(packet, str):
        advice = cmp.locate(packet, advice)
    return _Answer(
        [_document({"ok": report.ok, "lint": [finding.to_json() for finding in advice], **report.to_json()})]
    )


def _scrub(arguments: Mapping[str, Any]) -> _Answer:
    rules = arguments.get("rules", "default")
    report = _judged(arguments["packet"], rules=rules)
    if report.packet is None:
        raise _refuse_report(report)
    clean, replaced = cmp.scrub(report.packet, rules=checked_rules(rules))
    return _Answer([_document({"packet": _text(clean), "replaced": [hit.to_json() for hit in replaced]})])


def _format(arguments: Mapping[str, Any]) -> _Answer:
    return _Answer([_text(_accepted(arguments["packet"]))])


def _migrate(arguments: Mapping[str, Any]) -> _Answer:
    packet = _accepted(arguments["packet"])
    return _Answer([_text(cmp.migrate(packet, arguments["to"], drop=arguments.get("drop", False)))])


def _example(arguments: Mapping[str, Any]) -> _Answer:
    return _Answer([_text(example_packet(arguments.get("version", "0.2")))])


def _schema(arguments: Mapping[str, Any]) -> _Answer:
    return _Answer([_document(annotated_schema(arguments.get("version", "0.2")))])


def _new_schema() -> dict[str, Any]:
    schema = cmp.draft_schema("0.2")
    schema["properties"]["parent"] = _packet_argument(
        "The packet this one continues (its id becomes parent_id); omit or null for a first packet."
    )
    schema["properties"]["parent"]["type"] = ["string", "object", "null"]
    schema["properties"]["version"] = {
        "type": "string",
        "enum": _VERSIONS,
        "description": "The version of the packet to write (default 0.2; 0.1 has no decisions' "
        "consequences, methods, attempts' confidence or provenance).",
    }
    return schema


_NEW_OUTPUT = _object(
    {
        "text": {"type": "string", "description": "The packet's canonical text: what to store and send."},
        "packet": {"type": "object", "description": "The packet (the canonical text, parsed)."},
        "lint": {
            "type": "array",
            "items": {"type": "object"},
            "description": "Advice on the writing rules (cmp lint), each with its path: worth fixing, never a verdict.",
        },
    },
    ["text", "packet", "lint"],
)


_BESIDE_THE_DRAFT = ("parent", "version")  # new's arguments that are not members of the packet


def _new(arguments: Mapping[str, Any]) -> _Answer:
    draft = {name: value for name, value in arguments.items() if name not in _BESIDE_THE_DRAFT}
    version = arguments.get("version", "0.2")
    parent = arguments.get("parent")
    parent_packet = _accepted(parent) if parent else None
    fresh = cmp.Packet.from_draft(draft, version=version, parent=parent_packet)
    hits = cmp.redact(fresh)
    if hits:
        raise _Refused(
            f"the packet would hold {len(hits)} redaction finding(s): remove them",
            errors=[],
            redactions=[hit.to_json() for hit in hits],
        )
    text = _text(fresh)
    advice = [finding.to_json() for finding in cmp.locate(text, cmp.lint(fresh))]
    return _Answer([text, _document({"lint": advice})], {"text": text, "packet": json.loads(text), "lint": advice})


@dataclass(frozen=True)
class _Tool:
    name: str
    description: str
    input_schema: dict[str, Any]
    run: Callable[[Mapping[str, Any]], _Answer]
    output_schema: dict[str, Any] | None = None
    # new: the arguments are a draft beside _BESIDE_THE_DRAFT. The draft schema lists every
    # member as required (strict mode); a member left out is taken as null.
    draft: bool = False


def _guidance(version: str = "0.2") -> str:
    """What the agent writes, one line a member: the draft schema's members (not those the
    writer fills), each with its description; "(required)" where it may not be null."""
    lines = []
    for name, member in cmp.draft_schema(version)["properties"].items():
        required = "" if "anyOf" in member else " (required)"  # the draft writes an optional member as anyOf with null
        lines.append(f"- {name}{required}: {member['description']}")
    return "\n".join(lines)


def _tools() -> list[_Tool]:
    refusal = (
        "A call it cannot take is a tool error: one JSON document with a summary and every finding "
        "(code, path, keyword, message; line and column for a packet given as text), redaction hits masked."
    )
    version = {"type": "string", "enum": _VERSIONS, "description": "The packet version (default 0.2)."}
    return [
        _Tool(
            "check",
            "Validate a packet and run the redaction pre-flight. Returns the report (ok, conforming, accepted, "
            f"version, errors, redactions). {refusal}",
            _object(
                {
                    "packet": _PACKET,
                    "lenient": {
                        "type": "boolean",
                        "description": "Accept schema findings as warnings (default false).",
                    },
                    "rules": _RULES,
                },
                ["packet"],
            ),
            _check,
        ),
        _Tool(
            "lint",
            f"Advice on the writing rules for a packet that conforms (never a verdict). {refusal}",
            _object({"packet": _PACKET}, ["packet"]),
            _lint,
        ),
        _Tool(
            "scrub",
            "Replace every redaction match with a [redacted:category] placeholder; returns the packet's "
            f"canonical text and what was replaced. {refusal}",
            _object({"packet": _PACKET, "rules": _RULES}, ["packet"]),
            _scrub,
        ),
        _Tool(
            "format",
            f"The packet's canonical text (what the format stores and sends). {refusal}",
            _object({"packet": _PACKET}, ["packet"]),
            _format,
        ),
        _Tool(
            "new",
            "Write a new packet from its members, given as the arguments (the draft schema: every member, "
            "null or left out where the session has nothing to say); the server fills in ltm_version, id, "
            "created_at and parent_id. Returns the canonical text, then the lint advice; structured content "
            f"has both. An argument the schema does not have is refused. {refusal}\n\n"
            f"What to write:\n{_guidance()}",
            _new_schema(),
            _new,
            _NEW_OUTPUT,
            draft=True,
        ),
        _Tool(
            "example",
            "A complete example packet of a version, as canonical text.",
            _object({"version": version}, []),
            _example,
        ),
        _Tool(
            "migrate",
            f"The packet as another version; `drop` leaves out what that version lacks. {refusal}",
            _object(
                {
                    "packet": _PACKET,
                    "to": {"type": "string", "enum": _VERSIONS, "description": "The version to migrate to."},
                    "drop": {
                        "type": "boolean",
                        "description": "Leave out members the target version lacks (default false: refuse).",
                    },
                },
                ["packet", "to"],
            ),
            _migrate,
        ),
        _Tool(
            "schema",
            "The JSON Schema of a version with a description and examples for every member (for writing packets).",
            _object({"version": version}, []),
            _schema,
        ),
    ]


def _called(tool: _Tool, arguments: Mapping[str, Any]) -> _Answer:
    if tool.draft:
        # The draft's members are from_draft's to judge: it names every finding at once
        # (an unknown member, a wrong type, a broken bound), each with its path.
        own = tool.input_schema["properties"]
        _checked_arguments(
            _object({name: own[name] for name in _BESIDE_THE_DRAFT}, []),
            {name: value for name, value in arguments.items() if name in _BESIDE_THE_DRAFT},
        )
    else:
        _checked_arguments(tool.input_schema, arguments)
    try:
        return tool.run(arguments)
    except cmp.PacketError as exc:
        first = exc.findings[0] if exc.findings else None
        raise _Refused(
            f"not a conforming packet: {first}" if first is not None else "not a conforming packet",
            errors=[finding.to_json() for finding in exc.findings],
        ) from None


_PROMPT = """You are ending a work session. Write its Core Memory Packet: the intent of the session, for the \
next agent, who starts with nothing else. Call the tool `new` with the packet's members as arguments.

What each member is for:
{guidance}

The writing rules (the `lint` advice `new` answers with names them by id):
{rules}
- One sentence a field where a field takes one; state facts and decisions, not the conversation.
- Never a credential, a token, an absolute or home path, a local URL or port, an environment variable.
- A decision is a statement, not a question; a locked decision says its consequences.
- An attempt says what was learned (and how confident you are); a success criterion is observable.

If `new` answers a tool error, read each finding's path and message, fix those members, and call `new` again.
"""


def build_server() -> Server[Any]:
    """The server, its tools, resources and prompt (the SDK imported here, on first use)."""
    import mcp_types as types
    from mcp.server.lowlevel import Server
    from mcp.shared.exceptions import MCPError

    tools = {tool.name: tool for tool in _tools()}

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(
            tools=[
                types.Tool(
                    name=tool.name,
                    description=tool.description,
                    input_schema=tool.input_schema,
                    output_schema=tool.output_schema,
                    annotations=types.ToolAnnotations(
                        read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
                    ),
                )
                for tool in tools.values()
            ]
        )

    def refused(document: dict[str, Any]) -> types.CallToolResult:
        return types.CallToolResult(content=[types.TextContent(type="text", text=_document(document))], is_error=True)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        tool = tools.get(params.name)
        if tool is None:
            return refused({"summary": "unknown tool", "tools": list(tools)})
        try:
            answer = _called(tool, params.arguments or {})
        except _Refused as exc:
            return refused(exc.document)
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=text) for text in answer.texts],
            structured_content=answer.structured,
            is_error=False,
        )

    async def list_resources(ctx: Any, params: Any) -> types.ListResourcesResult:
        return types.ListResourcesResult(
            resources=[
                types.Resource(uri=uri, name=uri.removeprefix("cmp://"), description=description, mime_type=mime)
                for uri, (description, mime, _) in RESOURCES.items()
            ]
        )

    async def read_resource(ctx: Any, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        resource = RESOURCES.get(params.uri)
        if resource is None:
            # The URI is the caller's text: not quoted.
            raise MCPError(
                code=types.INVALID_PARAMS, message="unknown resource; the resources are " + ", ".join(RESOURCES)
            )
        _, mime, contents = resource
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=params.uri, mime_type=mime, text=contents())]
        )

    prompt = types.Prompt(
        name="write_packet",
        description="Ask the agent to write the packet for the session it is ending, and to give it to `new`.",
        arguments=[],
    )

    async def list_prompts(ctx: Any, params: Any) -> types.ListPromptsResult:
        return types.ListPromptsResult(prompts=[prompt])

    async def get_prompt(ctx: Any, params: types.GetPromptRequestParams) -> types.GetPromptResult:
        if params.name != prompt.name:
            raise MCPError(code=types.INVALID_PARAMS, message="unknown prompt; the prompt is write_packet")
        rules = "\n".join(f"- {rule.id}: {rule.summary}" for rule in RULES)
        text = _PROMPT.format(guidance=_guidance(), rules=rules)
        return types.GetPromptResult(
            description=prompt.description,
            messages=[types.PromptMessage(role="user", content=types.TextContent(type="text", text=text))],
        )

    return Server(
        "core-memory-packet",
        version=cmp.__version__,
        instructions=_INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_read_resource=read_resource,
        on_list_prompts=list_prompts,
        on_get_prompt=get_prompt,
    )


def serve_stdio(server: Server[Any]) -> None:
    """Serve ``server`` over stdin and stdout until the client closes the connection."""
    import anyio

    from cmp.integrations._mcp_stdio import serve

    anyio.run(serve, server)
