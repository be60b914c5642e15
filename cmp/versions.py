"""Version routing: which schema a packet is judged by, from its declared ltm_version."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from cmp.findings import QUOTE_LIMIT, Finding
from cmp.schemas import SCHEMA_VERSIONS

SUPPORTED_VERSIONS: tuple[str, ...] = SCHEMA_VERSIONS


def route(obj: Mapping[str, Any]) -> str | Finding:
    """The declared version when supported, else the finding that refuses it.

    Never trims or coerces: ``" 0.2"``, ``"v0.2"`` and ``"0.2.0"`` are unsupported.
    """
    version = obj.get("ltm_version")
    if not isinstance(version, str) or version == "":
        return Finding("version-missing", "$.ltm_version", "missing required field 'ltm_version'")
    if version not in SUPPORTED_VERSIONS:
        shown = json.dumps(version[:QUOTE_LIMIT], ensure_ascii=False)
        if len(version) > QUOTE_LIMIT:
            shown += "…"
        listed = ", ".join(SUPPORTED_VERSIONS)
        return Finding("version-unsupported", "$.ltm_version", f"unsupported ltm_version {shown} (supported: {listed})")
    return version
