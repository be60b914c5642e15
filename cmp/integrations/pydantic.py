"""cmp.Packet as a pydantic type (and so as a FastAPI body).

pydantic asks a type for its schema through the two hooks on :class:`cmp.Packet`, which
import this module on first use: the library never imports pydantic itself (the
``pydantic`` extra installs it).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pydantic_core import PydanticCustomError, core_schema

import cmp
from cmp._messages import quote
from cmp.findings import first_of
from cmp.schema import SUPPORTED_VERSIONS, load_schema


def pydantic_core_schema() -> Any:
    """A pydantic-core schema that validates through this library: a mapping becomes a
    conforming Packet (:meth:`cmp.Packet.from_dict`), a Packet is judged as it is, and it
    must pass the redaction pre-flight too (what check calls ok). Anything else is one
    ``cmp_packet`` error whose context lists every finding (code, path, keyword, message)
    and every redaction hit (masked), its message the first of them."""
    return core_schema.no_info_plain_validator_function(
        _pydantic_validate,
        serialization=core_schema.plain_serializer_function_ser_schema(_pydantic_dump, when_used="always"),
    )


def _pydantic_dump(packet: cmp.Packet) -> dict[str, Any]:
    return packet.to_dict()


# pydantic names a validation error after this function ("function-plain[_pydantic_validate()]"):
# its name is part of what a user reads.
def _pydantic_validate(value: Any) -> cmp.Packet:
    hits: list[cmp.Redaction] = []
    if isinstance(value, cmp.Packet):
        found = value.validate()
        packet = value if not found else None
    elif isinstance(value, Mapping):
        packet = None
        try:
            packet = cmp.Packet.from_dict(value)
            found = []
        except cmp.PacketError as exc:
            found = list(exc.findings)
        except TypeError as exc:  # a member name that is not a string, say
            found = [cmp.Finding("json", "$", f"invalid json: {quote(str(exc), 200)}")]
    else:
        packet = None
        found = [cmp.Finding("not-object", "$", f"packet must be a JSON object, not {type(value).__name__}")]
    if packet is not None:
        # A Packet field takes what check calls ok: a packet that holds what must not
        # travel is refused as check refuses it (its hits masked).
        hits = cmp.redact(packet)
        if not hits:
            return packet
    if found:
        first = str(cmp.PacketError(found))  # the first finding, and how many more
    else:
        first = "redaction " + first_of(hits)
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
    return {
        "title": "Core Memory Packet",
        "description": "A Core Memory Packet of any supported version (docs/specification.md).",
        "oneOf": [json.loads(json.dumps(load_schema(version))) for version in SUPPORTED_VERSIONS],
    }
