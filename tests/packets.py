"""Packet builders shared by the tests: minimal valid packets and path-based edits."""

from __future__ import annotations

import copy
import itertools
import json
from typing import Any

ULID = "01J9X8K2QZ7N4M0WXYZV3R8ABC"


def minimal(version: str = "0.2") -> dict[str, Any]:
    return {
        "ltm_version": version,
        "id": ULID,
        "created_at": "2026-04-21T10:30:00Z",
        "goal": "Get GPU video encoding working for replay captures.",
        "next_step": "Bring up the encode queue on Fedora.",
    }


def full(version: str = "0.2") -> dict[str, Any]:
    """Every member present once, valid for ``version``."""
    obj = minimal(version)
    obj.update(
        {
            "project": {"name": "replay", "ref": "github.com/example/replay"},
            "constraints": ["Linux only."],
            "decisions": [{"what": "Drop macOS.", "why": "No encode queue.", "locked": True}],
            "attempts": [{"tried": "MoltenVK.", "outcome": "failed", "learned": "Extension absent."}],
            "open_questions": ["AMD fallback?"],
            "tags": ["gpu", "video-encoding"],
            "provenance": {
                "author_model": "model-1",
                "author_human": "someone",
                "source_hash": "sha256:" + "0" * 64,
                "confidence": "high",
            },
        }
    )
    if version == "0.2":
        obj["parent_id"] = "01J9X3K2QZ7N4M0WXYZV3R8Z01"
        obj["success_criteria"] = ["A clip renders in under 2s."]
        obj["decisions"][0]["consequences"] = "Mac cannot test this."
        obj["methods"] = [{"name": "fedora-mesa", "when_applicable": "Need Vulkan video.", "how": "dnf install mesa"}]
        obj["attempts"][0]["confidence"] = "high"
    return obj


def parse_path(path: str) -> list[str | int]:
    """``a.b[0].c`` → ``["a", "b", 0, "c"]``."""
    keys: list[str | int] = []
    for part in path.split("."):
        name, _, rest = part.partition("[")
        if name:
            keys.append(name)
        while rest:
            index, _, rest = rest.partition("]")
            keys.append(int(index))
            rest = rest.removeprefix("[")
    return keys


def put(obj: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    """A deep copy of ``obj`` with ``path`` set to ``value`` (containers created as needed)."""
    out = copy.deepcopy(obj)
    keys = parse_path(path)
    node: Any = out
    for key, following in itertools.pairwise(keys):
        if isinstance(key, int):
            while len(node) <= key:
                node.append({} if isinstance(following, str) else [])
            node = node[key]
        else:
            if key not in node:
                node[key] = [] if isinstance(following, int) else {}
            node = node[key]
    last = keys[-1]
    if isinstance(last, int):
        while len(node) <= last:
            node.append(None)
    node[last] = value
    return out


def drop(obj: dict[str, Any], path: str) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    keys = parse_path(path)
    node: Any = out
    for key in keys[:-1]:
        node = node[key]
    del node[keys[-1]]
    return out


def encode(obj: Any) -> bytes:
    return json.dumps(obj, ensure_ascii=False).encode("utf-8")
