"""cmp.Packet as a pydantic type (and so as a FastAPI body); imported by the hooks on
:class:`cmp.Packet` on first use, so the library never imports pydantic itself.

A refused packet is safe to print: pydantic echoes every error's input, and
``hide_input_in_errors`` only works on the outermost validator, so the error is raised
over a stand-in (:class:`WithheldInput`) and the input never reaches it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from pydantic_core import PydanticCustomError, core_schema

import cmp
from cmp._toolkit import quote
from cmp.findings import first_of
from cmp.schema import SUPPORTED_VERSIONS, load_schema

ERROR_TYPE = "cmp_packet"


class WithheldInput(str):
    """What a refused packet's error reports as its input: ``<dict withheld>``, the type of
    what came and none of its content. It carries the refusal (the error's context), whose
    findings and redaction hits are masked already."""

    def __new__(cls, value: Any, context: dict[str, Any]) -> WithheldInput:
        stand_in = super().__new__(cls, f"<{type(value).__name__} withheld>")
        stand_in.context = context
        return stand_in

    context: dict[str, Any]

    def __repr__(self) -> str:  # pydantic prints repr(input): without quotes it reads as no string
        return str(self)


def pydantic_core_schema() -> Any:
    """A pydantic-core schema that takes a mapping or Packet that check calls ok (redaction
    included); anything else is one ``cmp_packet`` error whose context lists every finding
    and redaction hit (masked), and whose input is a :class:`WithheldInput`."""
    return core_schema.no_info_wrap_validator_function(
        _judge,
        core_schema.no_info_plain_validator_function(_refuse),
        serialization=core_schema.plain_serializer_function_ser_schema(_pydantic_dump, when_used="always"),
    )


def _pydantic_dump(packet: cmp.Packet) -> dict[str, Any]:
    return packet.to_dict()


def _judge(value: Any, refuse: Callable[[Any], Any]) -> cmp.Packet:
    # The refusal goes through the inner validator (``refuse``) so that the error pydantic
    # records has the stand-in as its input, not ``value``.
    verdict = _verdict(value)
    if isinstance(verdict, cmp.Packet):
        return verdict
    refuse(WithheldInput(value, verdict))
    raise AssertionError("_refuse raises for every stand-in")  # pragma: no cover


# pydantic titles a TypeAdapter's error after the outermost validator, which it names
# "function-wrap[<this function's name>()]": the name is what a user reads.
_judge.__name__ = _judge.__qualname__ = "Core Memory Packet"


def _refuse(stand_in: WithheldInput) -> Any:
    # The inner validator: only _judge calls it, and only with a stand-in.
    raise PydanticCustomError(ERROR_TYPE, "not a conforming packet: {first}", stand_in.context)


def _verdict(value: Any) -> cmp.Packet | dict[str, Any]:
    """The packet ``value`` is, or the context of the error that refuses it."""
    hits: list[cmp.Redaction] = []
    if isinstance(value, cmp.Packet):
        found = value.findings()
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
        # What check calls ok: a packet holding what must not travel is refused (hits masked).
        hits = cmp.redact(packet)
        if not hits:
            return packet
    if found:
        first = str(cmp.PacketError(found))  # the first finding, and how many more
    else:
        first = "redaction " + first_of(hits)
    return {
        "first": first,
        "findings": [finding.to_json() for finding in found],
        "redactions": [hit.to_json() for hit in hits],
    }


def pydantic_json_schema() -> dict[str, Any]:
    """The JSON Schema pydantic (and FastAPI's OpenAPI) shows for a Packet: the shipped
    schema of each supported version, one of which a packet conforms to."""
    return {
        "title": "Core Memory Packet",
        "description": "A Core Memory Packet of any supported version (docs/specification.md).",
        "oneOf": [json.loads(json.dumps(load_schema(version))) for version in SUPPORTED_VERSIONS],
    }


__all__ = ["ERROR_TYPE", "WithheldInput", "pydantic_core_schema", "pydantic_json_schema"]
