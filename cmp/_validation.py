"""Validation of parsed data: version routing, then the schema of the routed version.

A compiled builder (:mod:`cmp._compiler`) decides "valid"; only a packet it rejects is
explained by :mod:`cmp._explain`. Verdicts are identical by construction and by test.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping

from cmp._compiler import compile_builder
from cmp._intake import data_findings
from cmp._messages import QUOTE_LIMIT, capped, withheld
from cmp.findings import MAX_FINDINGS, Finding
from cmp.model import CONFORMING, SCHEMA_CLASSES, Packet
from cmp.schema import SUPPORTED_VERSIONS, load_schema

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def route(obj: Mapping[str, Any]) -> str | Finding:
    """The declared version when supported, else the finding that refuses it. Never trims or
    coerces: ``" 0.2"``, ``"v0.2"`` and ``"0.2.0"`` are unsupported. Unlike the reference's,
    a ``version-missing`` message says which of its three cases it is."""
    version: Any = obj.get("ltm_version", _ABSENT)
    if not isinstance(version, str) or version == "":
        return Finding("version-missing", "$.ltm_version", _missing_message(version))
    if version not in SUPPORTED_VERSIONS:
        hidden = withheld(version)
        if hidden is not None:
            shown = f"({hidden})"
        else:
            shown = json.dumps(version[:QUOTE_LIMIT], ensure_ascii=False)
            if len(version) > QUOTE_LIMIT:
                shown += "…"
        listed = ", ".join(SUPPORTED_VERSIONS)
        return Finding("version-unsupported", "$.ltm_version", f"unsupported ltm_version {shown} (supported: {listed})")
    return version


_ABSENT = object()


def _missing_message(version: Any) -> str:
    if version is _ABSENT:
        return "missing required field 'ltm_version'"
    if version == "":
        return 'ltm_version is empty; it must name a version such as "0.2"'
    if version is None or isinstance(version, bool):
        found = json.dumps(version)
    elif isinstance(version, int) and version.bit_length() > 4000:  # str() of a huge int is refused
        found = f"a number of about {int(version.bit_length() * 0.30103)} digits"
    elif isinstance(version, (int, float)):
        text = json.dumps(version)
        found = "the number " + (text if len(text) <= QUOTE_LIMIT else text[:QUOTE_LIMIT] + "…")
    else:
        kinds: dict[type, str] = {dict: "an object", list: "an array"}
        found = kinds.get(type(version), f"a {type(version).__name__}")
    return f'ltm_version must be a string such as "0.2", found {found}'


def validate(obj: Any) -> list[Finding]:
    """Findings for a packet the caller already parsed into Python data (empty when valid).
    It is first checked for what JSON text cannot hold (non-string names, cycles, lone surrogates).
    """
    if not isinstance(obj, dict):
        return [Finding("not-object", "$", "packet must be a JSON object")]
    structural, surrogates = data_findings(obj)
    if structural:
        return capped(structural)
    routed = route(obj)
    if isinstance(routed, Finding):
        return [routed]
    # The schema findings take what room the surrogate findings leave; their truncated
    # finding, if any, counts what is left of both.
    schema = schema_findings(obj, routed, listed_before=len(surrogates))
    if not schema:
        return capped(surrogates)
    return [*surrogates[:MAX_FINDINGS], *schema]


@functools.cache
def builder(version: str) -> Callable[[Any], tuple[Packet, int] | None]:
    """The compiled builder of ``version``: (packet, strings counted) or None."""
    return compile_builder(load_schema(version), SCHEMA_CLASSES, {"_known": CONFORMING})


def schema_findings(obj: Mapping[str, Any], version: str, *, listed_before: int = 0) -> list[Finding]:
    """The schema violations of ``obj`` against ``version``, sorted by path (empty when valid),
    capped so that with ``listed_before`` findings ahead the report stays at 100."""
    if builder(version)(obj) is not None:
        return []
    from cmp._explain import explain

    return explain(obj, version, listed_before=listed_before)
