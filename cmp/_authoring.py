"""Writing packets: values in, a conforming packet out, or every reason it is not.

The typed model's validating methods (:meth:`Packet.new`, :meth:`Packet.from_dict`,
:meth:`Packet.replace`, :meth:`Packet.validate`) are a facade over this module, which sits above the validation
and the canonical writer it needs. A packet this module returns is known to conform,
with its canonical bytes already written, so :func:`cmp.dumps` returns them at once.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import hashlib
import json
from collections.abc import Mapping
from typing import Any

from cmp._canonical import judged
from cmp._messages import quote
from cmp._validation import validate
from cmp.findings import Finding, PacketError
from cmp.model import Known, Packet, build, from_obj

NEW_VERSION = "0.2"  # what Packet.new writes unless told otherwise: the version that has every member


def conforming(packet: Packet) -> Packet:
    """``packet``, now known to conform; or :class:`PacketError` listing every finding."""
    findings, data = judged(packet)
    if data is None:
        raise PacketError(findings)
    object.__setattr__(packet, "_known", Known(conforming=True, canonical=data))
    return packet


def findings(packet: Packet) -> list[Finding]:
    """See :meth:`Packet.validate`."""
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
    return conforming(build(values, "Packet"))


def replace(packet: Packet, changes: Mapping[str, Any]) -> Packet:
    """See :meth:`Packet.replace`."""
    # The whole packet built again from its members with the changes over them: nested
    # mappings are converted and unknown names refused exactly as in new().
    current = {f.name: getattr(packet, f.name) for f in dataclasses.fields(packet) if f.init}
    return conforming(build({**current, **changes}, "Packet"))


def from_dict(obj: Mapping[str, Any]) -> Packet:
    """See :meth:`Packet.from_dict`."""
    if not isinstance(obj, Mapping):
        raise TypeError(f"from_dict() takes a mapping (parsed JSON data), not {type(obj).__name__}")
    findings = validate(obj)
    if findings:
        raise PacketError(findings)
    return conforming(from_obj(obj))


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


# --- pydantic: cmp.Packet as a pydantic type (and so as a FastAPI body) --------------------------
# pydantic asks a type for its schema through the two hooks on Packet, which import these
# on first use: the library never imports pydantic itself (the `pydantic` extra installs it).


def pydantic_core_schema() -> Any:
    """A pydantic-core schema that validates through this library: a mapping becomes a
    conforming Packet (:func:`from_dict`), a Packet is judged as it is, and it must pass
    the redaction pre-flight too (what check calls ok). Anything else is one
    ``cmp_packet`` error whose context lists every finding (code, path, keyword, message)
    and every redaction hit (masked), its message the first of them."""
    from pydantic_core import core_schema

    return core_schema.no_info_plain_validator_function(
        _pydantic_validate,
        serialization=core_schema.plain_serializer_function_ser_schema(_pydantic_dump, when_used="always"),
    )


def _pydantic_dump(packet: Packet) -> dict[str, Any]:
    return packet.to_dict()


def _pydantic_validate(value: Any) -> Packet:
    from pydantic_core import PydanticCustomError

    from cmp._redaction._scan import redact

    hits: list[Any] = []
    if isinstance(value, Packet):
        found = findings(value)
        packet = value if not found else None
    elif isinstance(value, Mapping):
        packet = None
        try:
            packet = from_dict(value)
            found = []
        except PacketError as exc:
            found = list(exc.findings)
        except TypeError as exc:  # a member name that is not a string, say
            found = [Finding("json", "$", f"invalid json: {quote(str(exc), 200)}")]
    else:
        packet = None
        found = [Finding("not-object", "$", f"packet must be a JSON object, not {type(value).__name__}")]
    if packet is not None:
        # A Packet field takes what check calls ok: a packet that holds what must not
        # travel is refused as check refuses it (its hits masked).
        hits = redact(packet)
        if not hits:
            return packet
    if found:
        first = str(PacketError(found))  # the first finding, and how many more
    else:
        first = f"redaction {hits[0]}" + (f" (and {len(hits) - 1} more)" if len(hits) > 1 else "")
    raise PydanticCustomError(
        "cmp_packet",
        "not a conforming packet: {first}",
        {
            "first": first,
            "findings": [finding.to_json() for finding in found],
            "redactions": [hit.to_json() for hit in hits],
        },
    )


def pydantic_json_schema() -> dict[str, Any]:
    """The JSON Schema pydantic (and FastAPI's OpenAPI) shows for a Packet: the shipped
    schema of each supported version, one of which a packet conforms to."""
    from cmp.schema import SUPPORTED_VERSIONS, load_schema

    return {
        "title": "Core Memory Packet",
        "description": "A Core Memory Packet of any supported version (docs/specification.md).",
        "oneOf": [json.loads(json.dumps(load_schema(version))) for version in SUPPORTED_VERSIONS],
    }
