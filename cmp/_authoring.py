"""Writing packets: values in, a conforming packet out, or every reason it is not (under the
typed model's validating methods). A packet returned is known to conform, its canonical bytes written."""

from __future__ import annotations

import datetime as _dt
import hashlib
from collections.abc import Mapping
from dataclasses import fields
from typing import Any

from cmp import schema as _schemas
from cmp._canonical import judged
from cmp._messages import quote
from cmp._validation import validate
from cmp.findings import Finding, PacketError
from cmp.model import Known, Packet, build, from_obj, to_obj
from cmp.schema import SUPPORTED_VERSIONS, WRITER_FILLED, load_schema

NEW_VERSION = "0.2"  # what Packet.new writes unless told otherwise: the version that has every member


def certified(packet: Packet) -> Packet:
    """``packet``, now known to conform; or :class:`PacketError` listing every finding."""
    findings, data = judged(packet)
    if data is None:
        raise PacketError(findings)
    object.__setattr__(packet, "_known", Known(conforming=True, canonical=data))
    return packet


def findings(packet: Packet) -> list[Finding]:
    """See :meth:`Packet.findings`."""
    return judged(packet)[0]


def new(*, goal: str, next_step: str, parent: Packet | None, members: Mapping[str, Any]) -> Packet:
    """See :meth:`Packet.new`."""
    values: dict[str, Any] = {"ltm_version": NEW_VERSION, "id": new_id(), "created_at": now()}
    if parent is not None:
        if type(parent) is not Packet:
            raise TypeError(f"parent must be a cmp.Packet, not {type(parent).__name__}")
        if "parent_id" in members:
            raise TypeError("give parent or parent_id, not both")
        values["parent_id"] = parent.id
    values.update(members)
    values.update(goal=goal, next_step=next_step)
    return certified(build(values, "Packet"))


def replace(packet: Packet, changes: Mapping[str, Any]) -> Packet:
    """See :meth:`Packet.replace`."""
    # Built again from its members: nested mappings converted, unknown names refused, as in new().
    current = {f.name: getattr(packet, f.name) for f in fields(packet) if f.init}
    return certified(build({**current, **changes}, "Packet"))


def from_dict(obj: Mapping[str, Any]) -> Packet:
    """See :meth:`Packet.from_dict`."""
    if not isinstance(obj, Mapping):
        raise TypeError(f"from_dict() takes a mapping (parsed JSON data), not {type(obj).__name__}")
    # Any mapping is an object (MappingProxyType, ChainMap), at the top or below: one of
    # another type than dict is judged as dicts (below the top, only once a plain judgement fails).
    plain = obj if type(obj) is dict else as_dicts(obj)
    data: Mapping[str, Any] = dict(obj) if plain is None else plain  # a cycle: the validator names it
    findings = validate(data)
    if findings and data is obj and (plain := as_dicts(obj)) is not None:
        data, findings = plain, validate(plain)
    if findings:
        raise PacketError(findings)
    return certified(from_obj(data))


def from_draft(
    obj: Mapping[str, Any],
    *,
    version: str,
    parent: Packet | str | None,
    id: str | None,
    created_at: str | None,
) -> Packet:
    """See :meth:`Packet.from_draft`."""
    if not isinstance(obj, Mapping):
        raise TypeError(f"from_draft() takes a mapping (a draft's parsed JSON), not {type(obj).__name__}")
    schema = load_schema(_supported(version))
    for name, value in (("id", id), ("created_at", created_at)):
        if value is not None and not isinstance(value, str):
            raise TypeError(f"{name} must be a string, not {type(value).__name__}")
    if isinstance(parent, Packet):
        parent_id: str | None = parent.id
    elif parent is None or isinstance(parent, str):
        parent_id = parent
    else:
        raise TypeError(f"parent must be a cmp.Packet or its id, not {type(parent).__name__}")
    draft = obj if type(obj) is dict else as_dicts(obj)
    if draft is None:
        draft = dict(obj)  # a container that appears twice: the validator names what it can
    found = [
        Finding("schema", f"$.{name}", f"unexpected member {name!r}: the writer fills it in", "additionalProperties")
        for name in WRITER_FILLED
        if name in draft
    ]
    values: dict[str, Any] = {
        "ltm_version": version,
        "id": new_id() if id is None else id,
        "created_at": now() if created_at is None else created_at,
    }
    if parent_id:
        values["parent_id"] = parent_id
    values.update(_present(draft, schema, top=True))
    found.extend(validate(values))
    if found:
        raise PacketError(sorted(found, key=lambda finding: finding.path))
    return certified(from_obj(values))


# The types whose empty value means absent. An empty object stays: the canonical form
# writes `"project": {}`, another packet than one without.
_EMPTIED = (str, list)


def _present(draft: Mapping[str, Any], schema: Mapping[str, Any], *, top: bool = False) -> dict[str, Any]:
    """The members of one object of a draft that say something (an optional member null or
    empty is absent); what the schema does not know is kept, for the validator to name."""
    properties: Mapping[str, Any] = schema.get("properties", {})
    required = schema.get("required", ())
    present: dict[str, Any] = {}
    for name, value in draft.items():
        if top and name in WRITER_FILLED:
            continue  # named as a finding; the writer's own value stands
        node = properties.get(name)
        if node is not None:
            if type(value) is dict and node.get("type") == "object":
                value = _present(value, node)
            elif type(value) is list and node.get("type") == "array" and node["items"].get("type") == "object":
                value = [_present(item, node["items"]) if type(item) is dict else item for item in value]
            if name not in required and (value is None or value is False or (type(value) in _EMPTIED and not value)):
                continue
        present[name] = value
    return present


def draft_schema(version: str = "0.2") -> dict[str, Any]:
    """A fresh JSON Schema for a model to fill through strict structured output or tool use:
    a draft of a ``version`` packet for :meth:`cmp.Packet.from_draft`. No writer-filled member
    (``ltm_version``, ``id``, ``created_at``, ``parent_id``); every property required, an optional
    one nullable; bounds in descriptions."""
    return _schemas.draft_schema(_supported(version))


def _supported(version: object) -> str:
    """``version`` when it is a supported version; else TypeError or ValueError, naming it as
    every message names a value (a key passed for the version must not reach a log)."""
    if not isinstance(version, str):
        raise TypeError(f"version must be a string, not {type(version).__name__}")
    if version not in SUPPORTED_VERSIONS:
        raise ValueError(f"no schema for version {quote(version)}; supported: {', '.join(SUPPORTED_VERSIONS)}")
    return version


def to_draft(packet: Packet) -> dict[str, Any]:
    """See :meth:`Packet.to_draft`."""
    if type(packet) is not Packet:
        raise TypeError(f"to_draft() takes a cmp.Packet, not {type(packet).__name__}")
    draft: dict[str, Any] = _drafted(to_obj(packet), _schemas.draft_schema(packet.ltm_version))
    return draft


def _drafted(value: Any, node: Mapping[str, Any]) -> Any:
    """``value`` (plain data) as the draft schema's ``node`` writes it: every member, null for none."""
    if value is None:
        return None
    node = node["anyOf"][0] if "anyOf" in node else node  # a nullable member: the value's own schema
    if "properties" in node:
        return {name: _drafted(value.get(name), member) for name, member in node["properties"].items()}
    if "items" in node:
        return [_drafted(item, node["items"]) for item in value]
    return value


def as_dicts(obj: Mapping[str, Any]) -> dict[str, Any] | None:
    """``obj`` with every mapping in it, itself included, a dict, without recursion; None when
    a container appears twice (a cycle, or a shared one): such data is judged as it is."""
    top: dict[str, Any] = {}
    stack: list[tuple[Any, Any]] = [(obj, top)]
    seen = {id(obj)}
    while stack:
        source, copy = stack.pop()
        for key, value in source.items() if type(copy) is dict else enumerate(source):
            if isinstance(value, (Mapping, list)):
                if id(value) in seen:
                    return None
                seen.add(id(value))
            if isinstance(value, Mapping):
                value_copy: Any = {}
                stack.append((value, value_copy))
            elif type(value) is list:
                value_copy = []
                stack.append((value, value_copy))
            else:
                value_copy = value
            if type(copy) is dict:
                copy[key] = value_copy
            else:
                copy.append(value_copy)
    return top


def new_id() -> str:
    """A fresh ULID: 26 characters, sortable by creation time."""
    from ulid import ULID  # only writers need it; check() should not pay for the import

    return str(ULID())


def now() -> str:
    """The current time in UTC as a canonical created_at (no trailing fraction zeros, ``Z``)."""
    moment = _dt.datetime.now(_dt.timezone.utc)
    fraction = f"{moment.microsecond:06d}".rstrip("0")
    return moment.strftime("%Y-%m-%dT%H:%M:%S") + ("." + fraction if fraction else "") + "Z"


def source_hash(data: bytes | str) -> str:
    """``sha256:<64 hex digits>`` of ``data`` (text as UTF-8), for ``provenance.source_hash``."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    elif not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"source_hash() takes bytes or str, not {type(data).__name__}")
    return "sha256:" + hashlib.sha256(data).hexdigest()
