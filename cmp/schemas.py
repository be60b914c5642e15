"""The JSON Schemas of each version, shipped in the package, and the validation entry point.

Validation is two-speed: a compiled acceptor (:mod:`cmp.fastpath`) decides "valid" for
the common case; only a packet it rejects goes through jsonschema (:mod:`cmp.explain`)
to be explained, finding by finding. Verdicts are identical by construction and by test.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from cmp.findings import Finding

if TYPE_CHECKING:
    from cmp.model import Packet

SCHEMA_VERSIONS = ("0.1", "0.2")


@functools.cache
def load_schema(version: str) -> dict[str, Any]:
    """The packaged JSON Schema document of ``version`` (shared: do not mutate it)."""
    # A plain file read: importlib.resources would double check()'s start-up time,
    # and the schemas always ship as files inside the package.
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "schema", f"core-memory.v{version}.json")
    with open(path, encoding="utf-8") as stream:
        schema: dict[str, Any] = json.load(stream)
    return schema


@functools.cache
def acceptor(version: str) -> Callable[[Any], bool]:
    """The compiled fast-path acceptor of ``version``."""
    from cmp.fastpath import compile_acceptor

    return compile_acceptor(load_schema(version))


@functools.cache
def builder(version: str) -> Callable[[Any], tuple[Packet, int] | None]:
    """The compiled fast-path builder of ``version``: (packet, strings counted) or None."""
    from cmp.fastpath import compile_builder
    from cmp.model import SCHEMA_CLASSES

    return compile_builder(load_schema(version), SCHEMA_CLASSES, {"_conforming": True})


def schema_findings(obj: Mapping[str, Any], version: str, *, listed_before: int = 0) -> list[Finding]:
    """The schema violations of ``obj`` against ``version``, sorted by path (empty when valid).

    Capped: with ``listed_before`` findings of another kind ahead of them in a report,
    only as many as keep the report at 100 are listed, then a ``truncated`` finding
    counting the rest of the report.
    """
    if acceptor(version)(obj):
        return []
    from cmp.explain import explain

    return explain(obj, version, listed_before=listed_before)
