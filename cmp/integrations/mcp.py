"""A Model Context Protocol server for an agent that writes packets (``core-memory-packet mcp``).

Built on the MCP SDK's low-level ``Server`` (the ``mcp`` extra), so that this module checks
the arguments itself: the SDK's own validation echoes a refused value into its message.
``save`` alone writes (to a :class:`cmp.Store`, never replacing a file). A refused call is
a tool error whose text is one JSON document. No argument's value is quoted, and every
string the agent receives is masked as the CLI's ``ls`` and ``show`` mask (:func:`_masked`),
so no secret is echoed. The tools list their input schemas in the strict subset of
docs/drafts.md (:func:`_strict`); the server takes a little more (a packet as an object,
an optional argument left out).
"""

from __future__ import annotations

import functools
import json
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import cmp
from cmp import Redaction
from cmp._toolkit import (
    EXTENDED,
    STYLES,
    checked_rule_set,
    display_name,
    escaped_line,
    estimate_tokens,
    example_packet,
    placeholder,
    unquoted,
    visible,
    withheld,
)
from cmp._toolkit import LINT_RULES as RULES
from cmp.integrations._mcp_remote import RemoteRefused, RemoteTool, remote_tools
from cmp.schema import annotated_schema
from cmp.store import PacketConflict, PacketNotFound, is_store_id

if TYPE_CHECKING:
    from mcp.server.lowlevel import Server

_INSTRUCTIONS = (
    "Tools for writing Core Memory Packets: small JSON documents that carry the intent of a work "
    "session (goal, decisions, attempts, next step) to the next agent. Write a packet with `new` "
    "(its arguments are the packet's members; the prompt `write_packet` says what goes in each), "
    "or `check` a draft (a tool error lists each finding with its path), fix what it names, "
    "`lint` for the writing rules, `scrub` to replace secrets, `format` for the canonical text. "
    "Store it with `save`; `ls` lists the stored packets, `show` gives one, and `resume` (or the "
    "prompt `resume`) gives the block a new session starts from, the newest packet's by default. "
    "Never put credentials, absolute paths or machine-local state in a packet."
)

_VERSIONS = list(cmp.SUPPORTED_VERSIONS)
_RULE_SETS = ["default", "extended"]

# URI -> (description, media type, maker).
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
    # Listed as a string (_strict lists a type list's first): a strict mode takes no open object.
    return {
        "type": ["string", "object"],
        "description": f"{description} Its JSON text; the packet as a JSON object is taken too (judged "
        "as the text json.dumps writes of it: findings then carry paths but no line or column).",
    }


_PACKET = _packet_argument("The packet.")
_RULE_SET = {
    "type": "string",
    "enum": _RULE_SETS,
    "description": "The redaction rule set: default, or extended (more credential patterns).",
}


def _object(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")


def _named(name: str) -> str:
    """An argument's name as a refusal may show it: never a credential, never anything long."""
    if _IDENTIFIER.fullmatch(name) and withheld(name) is None:
        return name
    return "(a name not shown: it is not a short identifier, or looks like a credential)"


_JSON_TYPES: dict[str, Callable[[Any], bool]] = {
    "string": lambda value: isinstance(value, str),
    "boolean": lambda value: isinstance(value, bool),
    "integer": lambda value: isinstance(value, int) and not isinstance(value, bool),
    "object": lambda value: isinstance(value, dict),
    "array": lambda value: isinstance(value, list),
    "null": lambda value: value is None,
}


def _json_type(value: Any) -> str:
    for name, test in _JSON_TYPES.items():
        if test(value):
            return name
    return "number"


def _strict(schema: Mapping[str, Any]) -> dict[str, Any]:
    """``schema`` as a tool lists it, in docs/drafts.md's strict subset: every member in ``required``,
    an optional one nullable (anyOf with null), a type list as its first type (the description
    names the others), no bounds (the description states them)."""
    properties: dict[str, Any] = {}
    for name, node in schema["properties"].items():
        if "anyOf" in node:  # new's optional draft members are nullable already
            properties[name] = node
            continue
        value = {key: item for key, item in node.items() if key not in ("minimum", "maximum")}
        if isinstance(value["type"], list):
            value["type"] = value["type"][0]
        if name not in schema["required"]:
            description = value.pop("description")
            value = {"anyOf": [value, {"type": "null"}], "description": description}
        properties[name] = value
    return {**schema, "properties": properties, "required": list(properties)}


def _given(schema: Mapping[str, Any], arguments: Mapping[str, Any]) -> dict[str, Any]:
    """``arguments`` without an optional one given as null, which means left out (a strict mode gives every one)."""
    return {
        name: value
        for name, value in arguments.items()
        if value is not None or name in schema["required"] or name not in schema["properties"]
    }


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
                    "message": f"{name}: expected {' or '.join(kinds)}, got {_json_type(value)}",
                }
            )
        elif "enum" in node and value not in node["enum"]:
            choices = ", ".join("null" if choice is None else str(choice) for choice in node["enum"])
            errors.append({"code": "argument", "path": f"$.{name}", "message": f"{name} must be one of {choices}"})
        elif isinstance(value, int) and not isinstance(value, bool) and not _within(node, value):
            errors.append({"code": "argument", "path": f"$.{name}", "message": f"{name} must be {_bounds(node)}"})
    if errors:
        raise _Refused(f"bad arguments: {errors[0]['message']}", errors=errors)


def _within(node: Mapping[str, Any], value: int) -> bool:
    return bool(node.get("minimum", value) <= value <= node.get("maximum", value))


def _bounds(node: Mapping[str, Any]) -> str:
    low, high = node.get("minimum"), node.get("maximum")
    if low is not None and high is not None:
        return f"an integer from {low} to {high}"
    return f"an integer of at least {low}" if low is not None else f"an integer of at most {high}"


def _judged(
    packet: str | dict[str, Any],
    *,
    lenient: bool = False,
    rule_set: str = "default",
    allow_unredacted: bool = False,
    writer: bool = False,
) -> cmp.Report:
    judge = functools.partial(
        cmp.check,
        lenient=lenient,
        rule_set=checked_rule_set(rule_set),
        allow_unredacted=allow_unredacted,
        writer=writer,
    )
    if isinstance(packet, dict):
        # Positions would point into a text the caller never saw: paths only.
        return judge(json.dumps(packet, ensure_ascii=False))
    return judge(packet).located()


def _refuse_report(report: cmp.Report) -> _Refused:
    first = report.errors[0] if report.errors else None
    summary = (
        f"not accepted: {first}"
        if first is not None
        else f"not accepted: {len(report.redactions)} redaction finding(s)"
    )
    return _Refused(summary, **report.to_json())


def _accepted(packet: str | dict[str, Any], *, rule_set: str = "default") -> cmp.Packet:
    report = _judged(packet, rule_set=rule_set)
    if not report.ok or report.packet is None:
        raise _refuse_report(report)
    return report.packet


def _text(packet: cmp.Packet) -> str:
    return cmp.dumps(packet).decode("utf-8")


def _masked(value: Any) -> Any:
    """``value`` with each match of either rule set in its strings replaced by its placeholder, and a
    string in which a credential-like form still matches (a key glued to a word character) withheld
    whole, as the CLI's ``ls`` and ``show`` withhold it: a finding may name what the caller wrote."""
    if isinstance(value, str):
        for rules in EXTENDED.tables:  # the default rules, then the extended ones
            value = rules.replacer()(value, lambda pattern, match, at: placeholder(pattern.category))
        return unquoted(value)
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
        arguments["packet"], lenient=arguments.get("lenient", False), rule_set=arguments.get("rule_set", "default")
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
    rule_set = arguments.get("rule_set", "default")
    report = _judged(arguments["packet"], rule_set=rule_set)
    if report.packet is None:
        raise _refuse_report(report)
    clean, replaced = cmp.scrub(report.packet, rule_set=checked_rule_set(rule_set))
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
    schema["properties"]["parent"] = {
        "type": ["string", "object"],
        "description": "The packet this one continues (its id becomes parent_id): a stored packet's id, "
        "latest (the store's newest head; in an empty store, none), or the packet, as its JSON text or a "
        "JSON object. Null for a first packet.",
    }
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
        "note": {"type": "string", "description": "What became of parent latest in a store with no packet."},
    },
    ["text", "packet", "lint"],
)


_BESIDE_THE_DRAFT = ("parent", "version")  # new's arguments that are not members of the packet


def _of_argument(name: str, refused: _Refused, what: str) -> _Refused:
    """``refused``, a refusal of the packet given as argument ``name``, with each path and field in it."""
    document = dict(refused.document)
    summary = document.pop("summary")
    errors = [{**error, "path": f"$.{name}{error['path'][1:]}"} for error in document.get("errors", [])]
    hits = [{**hit, "field": f"{name}.{hit['field']}"} for hit in document.get("redactions", [])]
    said = f"{errors[0]['path']}: {errors[0]['message']}" if errors else summary
    return _Refused(f"{name} is not {what}: {said}", **{**document, "errors": errors, "redactions": hits})


def _argument_refused(name: str, message: str) -> _Refused:
    return _Refused(f"{name}: {message}", errors=[{"code": "argument", "path": f"$.{name}", "message": message}])


def _parent(store: cmp.Store, given: Any) -> tuple[cmp.Packet | None, str | None]:
    """The packet ``new``'s ``parent`` names, and what the answer says of it (None: nothing)."""
    try:
        if given == "latest":
            latest = store.latest()
            if latest is None:
                return None, "parent latest: the store holds no packet yet, so this packet has no parent."
            return latest, None
        if isinstance(given, str) and is_store_id(given):
            return store.get(given), None
    except PacketNotFound:
        raise _argument_refused("parent", f"no packet {given} in the store: `ls` lists the stored packets") from None
    except cmp.StoreError as exc:
        raise _argument_refused("parent", str(exc)) from None
    try:
        return _accepted(given), None
    except _Refused as exc:
        raise _of_argument("parent", exc, "a stored packet's id, latest or a packet") from None


def _new(store: cmp.Store, arguments: Mapping[str, Any]) -> _Answer:
    draft = {name: value for name, value in arguments.items() if name not in _BESIDE_THE_DRAFT}
    version = arguments.get("version", "0.2")
    parent_packet, note = _parent(store, arguments["parent"]) if "parent" in arguments else (None, None)
    fresh = cmp.Packet.from_draft(draft, version=version, parent=parent_packet)
    hits = cmp.redact(fresh, writer=True)  # the writer's rule: a credential in any string
    if hits:
        raise _Refused(
            f"the packet would hold {len(hits)} redaction finding(s): remove them",
            errors=[],
            redactions=[hit.to_json() for hit in hits],
        )
    text = _text(fresh)
    advice = [finding.to_json() for finding in cmp.locate(text, cmp.lint(fresh))]
    said: dict[str, Any] = {"lint": advice} if note is None else {"lint": advice, "note": note}
    return _Answer([text, _document(said)], {"text": text, "packet": json.loads(text), **said})


# -- the store's tools -----------------------------------------------------------------

LS_LIMIT = 20  # what ls lists when no limit is given
LS_MAX = 200  # the most ls lists in one answer
LISTED_PACKETS = 100  # the stored packets resources/list names, newest first
PACKET_URI = "cmp://packet/"


def _served(packet: cmp.Packet) -> tuple[str, dict[str, Any]]:
    """A stored packet's canonical text and members, or its masked members as indented JSON."""
    text = _text(packet)
    data: dict[str, Any] = json.loads(text)
    masked: dict[str, Any] = _masked(data)
    if masked == data:
        return text, data
    return json.dumps(masked, ensure_ascii=False, indent=2), masked


def _line(text: str) -> str:
    """A field's text on one line of an answer, masked."""
    masked: str = _masked(escaped_line(text))
    return masked


def _stored(store: cmp.Store, packet_id: Any) -> cmp.Packet:
    """The stored packet with this id, or the newest head for None; refused in one sentence."""
    if packet_id is None:
        latest = store.latest()
        if latest is None:
            if store.problems():
                raise _Refused("the store serves no packets, only files it does not serve: `ls` says why")
            raise _Refused("the store holds no packets yet: write one with `new` and store it with `save`")
        return latest
    if not is_store_id(packet_id):
        # The caller's text is not quoted: it may be anything.
        raise _Refused("that is not a stored packet's id: an id is a ULID of 26 characters, as `ls` lists them")
    try:
        return store.get(packet_id)
    except PacketNotFound:
        raise _Refused(f"no packet {packet_id} in the store: `ls` lists the stored packets") from None


def _save(store: cmp.Store, arguments: Mapping[str, Any]) -> _Answer:
    allow = arguments.get("allow_unredacted", False)
    report = _judged(arguments["packet"], allow_unredacted=allow, writer=True)
    if not report.ok or report.packet is None:
        raise _refuse_report(report)
    try:
        saved = store.save(report.packet, allow_unredacted=allow)
    except PacketConflict:
        raise _Refused(
            f"not stored: a different packet with id {report.packet.id} is already stored, and a stored "
            "packet is never replaced; write a new packet with `new` (its parent this one) instead",
            id=report.packet.id,
        ) from None
    redactions = [hit.to_json() for hit in report.redactions]
    said = (
        f"Stored packet {saved.id}."
        if saved.written
        else f"Packet {saved.id} was already stored, byte for byte: nothing was written."
    )
    if redactions:
        said += f" It holds {len(redactions)} redaction finding(s), stored as they are (allow_unredacted)."
    structured = {"id": saved.id, "path": saved.path.name, "written": saved.written, "redactions": redactions}
    return _Answer([_masked(said)], _masked(structured))


def _summary(packet: cmp.Packet) -> dict[str, Any]:
    return {
        "id": packet.id,
        "created_at": packet.created_at,
        "goal": _line(packet.goal),
        "tags": [_line(tag) for tag in packet.tags],
        "parent_id": packet.parent_id or None,
    }


def _ls(store: cmp.Store, arguments: Mapping[str, Any]) -> _Answer:
    limit = arguments.get("limit", LS_LIMIT)
    found = store.list(tag=arguments.get("tag"), text=arguments.get("text"))
    # A file's name is the folder's: undecodable bytes and line breaks shown as escapes, as the CLI shows them.
    problems = [{"file": display_name(problem.path.name), "message": problem.message} for problem in store.problems()]
    shown = found[:limit]
    lines = [
        f"{packet.id}  {packet.created_at}  {_line(packet.goal)}"
        + (f"  [{', '.join(_line(tag) for tag in packet.tags)}]" if packet.tags else "")
        for packet in shown
    ]
    filtered = "tag" in arguments or "text" in arguments
    if not found:
        lines.append("No stored packet matches." if filtered else "The store holds no packets yet.")
    else:
        lines.insert(0, f"{len(found)} stored packet(s){' matching' if filtered else ''}, newest first:")
    more = len(found) - len(shown)
    if more:
        lines.append(f"{more} more not shown: give a higher limit (at most {LS_MAX}), a tag or a text.")
    if problems:
        lines.append(f"{len(problems)} file(s) in the store's folder not served:")
        lines += [visible(f"- {problem['file']}: {problem['message']}") for problem in problems]
    structured = {"packets": [_summary(packet) for packet in shown], "more": more, "problems": problems}
    return _Answer([_masked("\n".join(lines))], _masked(structured))


def _counted(counts: list[tuple[int, str, str]]) -> list[str]:
    """``3 attempts``, ``1 attempt``: each (count, singular, plural) that is not 0."""
    return [f"{count} {one if count == 1 else many}" for count, one, many in counts if count]


def _described(packet: cmp.Packet) -> str:
    """What ``show`` says of a packet before its text: the gist, one line each."""
    locked = sum(1 for decision in packet.decisions if decision.locked)
    counts = [
        (len(packet.success_criteria), "success criterion", "success criteria"),
        (len(packet.constraints), "constraint", "constraints"),
        (len(packet.decisions), f"decision ({locked} locked)", f"decisions ({locked} locked)"),
        (len(packet.methods), "method", "methods"),
        (len(packet.attempts), "attempt", "attempts"),
        (len(packet.open_questions), "open question", "open questions"),
    ]
    lines = [
        f"Packet {packet.id} (version {packet.ltm_version}), created {packet.created_at}"
        + (f", continuing {packet.parent_id}." if packet.parent_id else "."),
        f"Goal: {_line(packet.goal)}",
        f"Next step: {_line(packet.next_step)}",
        "Holds: " + (", ".join(_counted(counts)) or "nothing more") + ".",
    ]
    if packet.tags:
        lines.append(f"Tags: {', '.join(_line(tag) for tag in packet.tags)}.")
    lines.append("Its text follows; `resume` gives it as the block a new session starts from.")
    return "\n".join(lines)


def _show(store: cmp.Store, arguments: Mapping[str, Any]) -> _Answer:
    packet = _stored(store, arguments["id"])
    text, data = _served(packet)
    return _Answer([_masked(_described(packet)), text], {"id": packet.id, "packet": data})


def _rendered(store: cmp.Store, arguments: Mapping[str, Any]) -> tuple[cmp.Packet, cmp.ResumeBlock, str]:
    """The packet ``resume`` is asked for, its block, and the block's text as answered (masked)."""
    packet = _stored(store, arguments.get("id"))
    try:
        block = cmp.resume_block(
            packet,
            style=arguments.get("style", "markdown"),
            max_chars=arguments.get("max_chars"),
            allow_unredacted=arguments.get("allow_unredacted", False),
        )
    except cmp.RedactionError as exc:
        hits = [hit.to_json() for hit in exc.redactions if isinstance(hit, Redaction)]
        raise _Refused(
            f"packet {packet.id} holds {len(hits)} redaction finding(s): call resume again with "
            "allow_unredacted true for its block with each match replaced by its placeholder",
            redactions=hits,
        ) from None
    except ValueError as exc:  # a max_chars the block cannot fit in: resume_block says how many it needs
        raise _Refused(str(exc)) from None
    text: str = _masked(block.text)
    return packet, block, text


def _resume(store: cmp.Store, arguments: Mapping[str, Any]) -> _Answer:
    packet, block, text = _rendered(store, arguments)
    structured = {
        "id": packet.id,
        "style": block.style,
        "chars": len(text),
        "tokens": estimate_tokens(text),
        "dropped": list(block.dropped),
        "replaced": [hit.to_json() for hit in block.replaced],
        "text": text,
    }
    return _Answer([text], structured)


_SAVE_OUTPUT = _object(
    {
        "id": {"type": "string", "description": "The packet's id: what show, resume and cmp://packet/{id} take."},
        "path": {"type": "string", "description": "The packet's file, relative to the store's folder."},
        "written": {
            "type": "boolean",
            "description": "Whether this call wrote the file (false: the same packet was already stored).",
        },
        "redactions": {
            "type": "array",
            "items": {"type": "object"},
            "description": "The redaction findings stored with the packet (allow_unredacted), masked; else empty.",
        },
    },
    ["id", "path", "written", "redactions"],
)

_LS_OUTPUT = _object(
    {
        "packets": {
            "type": "array",
            "description": "The packets listed, newest first.",
            "items": _object(
                {
                    "id": {"type": "string"},
                    "created_at": {"type": "string"},
                    "goal": {"type": "string", "description": "On one line: a line break written \\n."},
                    "tags": {"type": "array", "items": {"type": "string"}},
                    "parent_id": {"type": ["string", "null"], "description": "The packet it continues, or null."},
                },
                ["id", "created_at", "goal", "tags", "parent_id"],
            ),
        },
        "more": {"type": "integer", "description": "How many more packets match than the limit let through."},
        "problems": {
            "type": "array",
            "description": "Files in the store's folder it does not serve (not packets, hand-edited, ...), and why.",
            "items": _object({"file": {"type": "string"}, "message": {"type": "string"}}, ["file", "message"]),
        },
    },
    ["packets", "more", "problems"],
)

_SHOW_OUTPUT = _object(
    {
        "id": {"type": "string"},
        "packet": {"type": "object", "description": "The stored packet (redaction matches replaced, if any)."},
    },
    ["id", "packet"],
)

_RESUME_OUTPUT = _object(
    {
        "id": {"type": "string", "description": "The id of the packet the block is of."},
        "style": {"type": "string", "enum": list(STYLES)},
        "chars": {"type": "integer", "description": "The block's length in characters."},
        "tokens": {"type": "integer", "description": "An estimate of its tokens."},
        "dropped": {
            "type": "array",
            "items": {"type": "string"},
            "description": "The sections max_chars made the block leave out, by key.",
        },
        "replaced": {
            "type": "array",
            "items": {"type": "object"},
            "description": "The redaction findings shown as placeholders (allow_unredacted), masked; else empty.",
        },
        "text": {"type": "string", "description": "The block (the tool's text content)."},
    },
    ["id", "style", "chars", "tokens", "dropped", "replaced", "text"],
)


@dataclass(frozen=True)
class _Tool:
    name: str
    description: str
    input_schema: dict[str, Any]
    run: Callable[[Mapping[str, Any]], _Answer]
    output_schema: dict[str, Any] | None = None
    # new: the draft schema lists every member as required (strict mode); one left out is null.
    draft: bool = False
    read_only: bool = True  # save alone writes (to the store)
    open_world: bool = False  # push, pull, teams talk to the team server


def _guidance(version: str = "0.2") -> str:
    """The draft schema's members, one line each with its description and "(required)"."""
    lines = []
    for name, member in cmp.draft_schema(version)["properties"].items():
        required = "" if "anyOf" in member else " (required)"  # the draft writes an optional member as anyOf with null
        lines.append(f"- {name}{required}: {member['description']}")
    return "\n".join(lines)


def _tools(store: cmp.Store) -> list[_Tool]:
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
                    "rule_set": _RULE_SET,
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
            _object({"packet": _PACKET, "rule_set": _RULE_SET}, ["packet"]),
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
            functools.partial(_new, store),
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
        *_store_tools(store, refusal),
        *(_remote(tool) for tool in remote_tools()),
    ]


def _remote(tool: RemoteTool) -> _Tool:
    """A team server tool (cmp.integrations._mcp_remote), its refusal a tool error of one line."""

    def run(arguments: Mapping[str, Any]) -> _Answer:
        try:
            return _Answer(*tool.run(arguments))
        except RemoteRefused as exc:
            raise _Refused(str(exc)) from None

    return _Tool(
        tool.name,
        tool.description,
        tool.input_schema,
        run,
        tool.output_schema,
        read_only=tool.read_only,
        open_world=True,
    )


def _store_tools(store: cmp.Store, refusal: str) -> list[_Tool]:
    packet_id = {"type": "string", "description": "A stored packet's id (a ULID, as `ls` lists it)."}
    return [
        _Tool(
            "save",
            "Store a packet in the local store (a folder of one canonical <id>.json file a packet), "
            "e.g. the packet `new` answered (its text, or its structured content's `packet`). Saving the "
            "same packet again writes nothing (written: false); a different packet under a stored id is "
            "refused, as a stored packet is never replaced. A packet with a redaction hit is refused "
            f"unless allow_unredacted. {refusal}",
            _object(
                {
                    "packet": _PACKET,
                    "allow_unredacted": {
                        "type": "boolean",
                        "description": "Store a packet with redaction findings as it is (default false: refuse "
                        "it; `scrub` replaces them instead). Never shown unmasked by this server.",
                    },
                },
                ["packet"],
            ),
            functools.partial(_save, store),
            _SAVE_OUTPUT,
            read_only=False,
        ),
        _Tool(
            "ls",
            "List the stored packets, newest first: id, created_at, goal (one line each) and tags. Files in "
            "the store's folder that are not packets it serves are listed too, with why.",
            _object(
                {
                    "limit": {
                        "type": "integer",
                        "minimum": 1,
                        "maximum": LS_MAX,
                        "description": f"The most packets to list: from 1 to {LS_MAX} (default {LS_LIMIT}).",
                    },
                    "tag": {"type": "string", "description": "Only the packets with this tag."},
                    "text": {
                        "type": "string",
                        "description": "Only the packets whose goal holds this text (ignoring case).",
                    },
                },
                [],
            ),
            functools.partial(_ls, store),
            _LS_OUTPUT,
        ),
        _Tool(
            "show",
            "A stored packet: what it holds in a few lines, then its canonical text; structured content has "
            "the packet (what `new` takes as `parent`).",
            _object({"id": packet_id}, ["id"]),
            functools.partial(_show, store),
            _SHOW_OUTPUT,
        ),
        _Tool(
            "resume",
            "The resume block of a stored packet: the context a new session starts from (goal, locked "
            "decisions, what failed, the first action), framed as an earlier session's record. Without an "
            "id, the newest packet that no stored packet continues.",
            _object(
                {
                    "id": {**packet_id, "description": packet_id["description"] + " Default: the newest head."},
                    "style": {
                        "type": "string",
                        "enum": list(STYLES),
                        "description": "markdown (headings and lists, the default) or xml (one tagged section each).",
                    },
                    "max_chars": {
                        "type": "integer",
                        "minimum": 1,
                        "description": "The most characters the block may have, at least 1: background sections "
                        "are left out until it fits (dropped names them). Default: no limit.",
                    },
                    "allow_unredacted": {
                        "type": "boolean",
                        "description": "For a packet with redaction findings: the block with each match "
                        "replaced by its placeholder (default false: refuse).",
                    },
                },
                [],
            ),
            functools.partial(_resume, store),
            _RESUME_OUTPUT,
        ),
    ]


def _called(tool: _Tool, arguments: Mapping[str, Any]) -> _Answer:
    if tool.draft:
        # The draft's members are from_draft's to judge: it names every finding at once.
        own = tool.input_schema["properties"]
        beside = _object({name: own[name] for name in _BESIDE_THE_DRAFT}, [])
        arguments = _given(beside, arguments)
        _checked_arguments(beside, {name: value for name, value in arguments.items() if name in _BESIDE_THE_DRAFT})
    else:
        arguments = _given(tool.input_schema, arguments)
        _checked_arguments(tool.input_schema, arguments)
    try:
        return tool.run(arguments)
    except cmp.PacketError as exc:
        first = exc.findings[0] if exc.findings else None
        raise _Refused(
            f"not a conforming packet: {first}" if first is not None else "not a conforming packet",
            errors=[finding.to_json() for finding in exc.findings],
        ) from None
    except cmp.StoreError as exc:
        raise _Refused(str(exc)) from None


_PROMPT = """You are ending a work session. Write its Core Memory Packet: the intent of the session, for the \
next agent, who starts with nothing else. Call the tool `new` with the packet's members as arguments. \
If this session went on from a stored packet (the one `resume` gave, or the newest `ls` lists), give its \
id as `new`'s `parent` (or `latest`, the store's newest head), so that the packets form a chain.

What each member is for:
{guidance}

The writing rules (the `lint` advice `new` answers with names them by id):
{rules}
- One sentence a field where a field takes one; state facts and decisions, not the conversation.
- Never a credential, a token, an absolute or home path, a local URL or port, an environment variable.
- A decision is a statement, not a question; a locked decision says its consequences.
- An attempt says what was learned (and how confident you are); a success criterion is observable.

If `new` answers a tool error, read each finding's path and message, fix those members, and call `new` again.
Then store the packet: call `save` with the packet `new` answered (its text, or its structured content's `packet`).
"""

_RESUME_PROMPT = """You are starting a work session that goes on from an earlier one. Below is the resume \
block of its Core Memory Packet {id}: what that session left for you. Read it first and begin with its \
first action.

When this session ends, write its own packet with `new`, giving this one's id, {id}, as `parent` (`show` \
with id {id} gives the packet), and store it with `save`.

{block}"""


def build_server(store: cmp.Store | str | os.PathLike[str] | None = None) -> Server[Any]:
    """The server, its tools, resources and prompts (the SDK imported here, on first use).

    ``store``: a :class:`cmp.Store`, its folder, or None for the one :class:`cmp.Store` finds.
    Nothing is read or made until a call needs it.
    """
    import mcp_types as types
    from mcp.server.lowlevel import Server
    from mcp.shared.exceptions import MCPError

    if not isinstance(store, cmp.Store):
        store = cmp.Store(store)
    tools = {tool.name: tool for tool in _tools(store)}

    def failed(code: int, message: str) -> MCPError:
        # A protocol error's message reaches the agent too: masked as every answer is.
        return MCPError(code=code, message=_masked(message))

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(
            tools=[
                types.Tool(
                    name=tool.name,
                    description=tool.description,
                    input_schema=_strict(tool.input_schema),
                    output_schema=tool.output_schema,
                    annotations=types.ToolAnnotations(
                        read_only_hint=tool.read_only,
                        destructive_hint=False,  # save adds a file and never replaces one
                        idempotent_hint=True,
                        open_world_hint=tool.open_world,
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
        listed = [
            types.Resource(uri=uri, name=uri.removeprefix("cmp://"), description=description, mime_type=mime)
            for uri, (description, mime, _) in RESOURCES.items()
        ]
        try:
            packets = store.list(limit=LISTED_PACKETS)
        except cmp.StoreError:
            packets = []  # a store that cannot be read lists no packets; `ls` says why
        for packet in packets:
            goal = _line(packet.goal)
            listed.append(
                types.Resource(
                    uri=PACKET_URI + packet.id,
                    name=packet.id,
                    title=goal,
                    description=f"A stored packet, created {packet.created_at}: {goal}",
                    mime_type="application/json",
                )
            )
        return types.ListResourcesResult(resources=listed)

    template = types.ResourceTemplate(
        name="packet",
        uri_template=PACKET_URI + "{id}",
        description=f"A stored packet by its id (a ULID), as its canonical JSON text; resources/list names the "
        f"newest {LISTED_PACKETS}, `ls` lists them all. A packet with redaction findings is served with each match "
        "replaced by its placeholder.",
        mime_type="application/json",
    )

    async def list_resource_templates(ctx: Any, params: Any) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(resource_templates=[template])

    def packet_resource(uri: str) -> str:
        packet_id = uri.removeprefix(PACKET_URI)
        if not is_store_id(packet_id):
            raise failed(
                types.INVALID_PARAMS, f"unknown resource: a packet's URI is {template.uri_template}, its id a ULID"
            )
        try:
            packet = store.get(packet_id)
        except PacketNotFound:
            raise failed(types.INVALID_PARAMS, f"no packet {packet_id} in the store: `ls` lists them") from None
        except cmp.StoreError as exc:
            raise failed(types.INTERNAL_ERROR, str(exc)) from None
        return _served(packet)[0]

    async def read_resource(ctx: Any, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        uri = str(params.uri)
        if uri.startswith(PACKET_URI):
            text, mime = packet_resource(uri), "application/json"
        else:
            resource = RESOURCES.get(uri)
            if resource is None:
                # The URI is the caller's text: not quoted.
                raise failed(
                    types.INVALID_PARAMS,
                    "unknown resource; the resources are " + ", ".join([*RESOURCES, template.uri_template]),
                )
            _, mime, contents = resource
            text = contents()
        return types.ReadResourceResult(contents=[types.TextResourceContents(uri=uri, mime_type=mime, text=text)])

    write_packet = types.Prompt(
        name="write_packet",
        description="Ask the agent to write the packet for the session it is ending, to give it to `new`, "
        "and to store it with `save`.",
        arguments=[],
    )
    resume = types.Prompt(
        name="resume",
        description="Start a session from a stored packet: its resume block, framed for the agent.",
        arguments=[
            types.PromptArgument(
                name="id", description="The stored packet's id (default: the newest head).", required=False
            ),
            types.PromptArgument(
                name="style",
                description=f"The block's style: {' or '.join(STYLES)} (default markdown).",
                required=False,
            ),
        ],
    )

    async def list_prompts(ctx: Any, params: Any) -> types.ListPromptsResult:
        return types.ListPromptsResult(prompts=[write_packet, resume])

    def resumed(arguments: Mapping[str, str]) -> types.GetPromptResult:
        known = [argument.name for argument in resume.arguments or []]
        for name in arguments:
            if name not in known:
                raise failed(
                    types.INVALID_PARAMS, f"unknown argument {_named(name)}: the arguments are {', '.join(known)}"
                )
        style = arguments.get("style") or "markdown"
        if style not in STYLES:
            raise failed(types.INVALID_PARAMS, f"style must be one of {', '.join(STYLES)}")
        try:
            packet, _, block = _rendered(store, {"id": arguments.get("id") or None, "style": style})
        except _Refused as exc:
            if "redactions" in exc.document:  # the tool's way out is an argument the prompt does not have
                raise failed(
                    types.INVALID_PARAMS,
                    f"{len(exc.document['redactions'])} redaction finding(s) in the packet: the tool resume "
                    "with allow_unredacted gives its block with each match replaced by its placeholder",
                ) from None
            raise failed(types.INVALID_PARAMS, str(exc)) from None
        except cmp.StoreError as exc:
            raise failed(types.INTERNAL_ERROR, str(exc)) from None
        text = _RESUME_PROMPT.format(id=packet.id, block=block)
        return types.GetPromptResult(
            description=f"Resume from packet {packet.id}",
            messages=[types.PromptMessage(role="user", content=types.TextContent(type="text", text=text))],
        )

    async def get_prompt(ctx: Any, params: types.GetPromptRequestParams) -> types.GetPromptResult:
        if params.name == resume.name:
            return resumed(params.arguments or {})
        if params.name != write_packet.name:
            raise failed(types.INVALID_PARAMS, "unknown prompt; the prompts are write_packet, resume")
        rules = "\n".join(f"- {rule.id}: {rule.summary}" for rule in RULES)
        text = _PROMPT.format(guidance=_guidance(), rules=rules)
        return types.GetPromptResult(
            description=write_packet.description,
            messages=[types.PromptMessage(role="user", content=types.TextContent(type="text", text=text))],
        )

    return Server(
        "core-memory-packet",
        version=cmp.__version__,
        instructions=_INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_list_resource_templates=list_resource_templates,
        on_read_resource=read_resource,
        on_list_prompts=list_prompts,
        on_get_prompt=get_prompt,
    )


def serve_stdio(server: Server[Any]) -> None:
    """Serve ``server`` over stdin and stdout until the client closes the connection."""
    import anyio

    from cmp.integrations._mcp_stdio import serve

    anyio.run(serve, server)


__all__ = ["LISTED_PACKETS", "LS_LIMIT", "LS_MAX", "PACKET_URI", "RESOURCES", "build_server", "serve_stdio"]


def __dir__() -> list[str]:
    return sorted(__all__)
