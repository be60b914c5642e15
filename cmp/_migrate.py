"""Migrate: the same packet under another supported version.

Upward (0.1 to 0.2) is additive, so only ``ltm_version`` changes. Downward, members the
older version lacks are refused, naming each, unless the caller asks to drop them.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from cmp._authoring import from_dict
from cmp._messages import path_join, quote
from cmp.findings import Finding, PacketError
from cmp.model import Packet, to_obj
from cmp.schema import SUPPORTED_VERSIONS, Member, layout, load_schema


def migrate(packet: Packet, to: str, *, drop: bool = False) -> Packet:
    """``packet`` as version ``to`` (id, created_at and every member it keeps unchanged).

    Raises :class:`cmp.PacketError` listing members ``to`` lacks (unless ``drop``) or anything
    else that keeps the result from conforming; ValueError for an unsupported version.
    """
    if not isinstance(packet, Packet):
        raise TypeError(f"migrate() takes a cmp.Packet, not {type(packet).__name__}")
    if not isinstance(to, str):
        raise TypeError(f"migrate() takes the version as a str such as '0.2', not {type(to).__name__}")
    if to not in SUPPORTED_VERSIONS:
        raise ValueError(f"cannot migrate to version {quote(to)}; supported: {', '.join(SUPPORTED_VERSIONS)}")
    data = to_obj(packet)
    data["ltm_version"] = to
    lost = list(_lost(data, layout([load_schema(to)]), "$", "$", to))
    if lost and not drop:
        raise PacketError(lost)
    return from_dict(data)


def _lost(
    value: dict[str, Any], objects: dict[str, tuple[Member, ...]], location: str, path: str, version: str
) -> Iterator[Finding]:
    """A finding for each member of ``value``, or below it, that ``objects`` lacks; each is removed."""
    listed = {member.name: member for member in objects[location]}
    for name in list(value):
        member, where = listed.get(name), path_join(path, name)
        if member is None:
            del value[name]
            message = f"version {version} has no member {name!r}; drop=True (--drop) leaves it out"
            yield Finding("schema", where, message, keyword="additionalProperties")
        elif member.kind == "object":
            yield from _lost(value[name], objects, member.location, where, version)
        elif member.kind == "objects":
            for index, item in enumerate(value[name]):
                yield from _lost(item, objects, member.location, path_join(where, index), version)
