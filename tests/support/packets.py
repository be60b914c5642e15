"""Packet builders shared by the tests: minimal valid packets and path-based edits."""

from __future__ import annotations

import copy
import importlib.util
import itertools
import json
from pathlib import Path
from types import ModuleType
from typing import Any


def _generator() -> ModuleType:
    """tools/generate_vectors.py, whose base packets the tests share."""
    path = Path(__file__).resolve().parents[2] / "tools" / "generate_vectors.py"
    spec = importlib.util.spec_from_file_location("cmp_vector_generator", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


GENERATOR = _generator()


def minimal(version: str = "0.2") -> dict[str, Any]:
    """The five required members, valid for ``version``."""
    packet: dict[str, Any] = GENERATOR.minimal(version)
    return packet


def full(version: str = "0.2") -> dict[str, Any]:
    """Every member of ``version`` present once, valid."""
    packet: dict[str, Any] = GENERATOR.full(version)
    return packet


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
    """A deep copy of ``obj`` without the member at ``path``."""
    out: dict[str, Any] = GENERATOR.without(obj, path)
    return out


def encode(obj: Any) -> bytes:
    return json.dumps(obj, ensure_ascii=False).encode("utf-8")


def strings_in(value: Any) -> int:
    """Member names plus string values, counted the slow, obvious way."""
    if isinstance(value, dict):
        return len(value) + sum(strings_in(item) for item in value.values())
    if isinstance(value, list):
        return sum(strings_in(item) for item in value)
    return 1 if isinstance(value, str) else 0


def hand_built(**members: Any) -> Any:
    """A packet made with the model's constructor, which checks types only: values the
    schema refuses get through, as they would in a user's own code (Packet.new refuses them)."""
    import cmp

    identity = {"ltm_version": "0.2", "id": "01HZX0000000000000000000AB", "created_at": "2026-01-01T00:00:00Z"}
    return cmp.Packet(**{**identity, **members})


# Synthetic credentials, never real: AWS's documented example key id, and made-up ones.
AWS = "AKIAIOSFODNN7EXAMPLE"
SLACK_TAG = "xoxb-4815162342-synthetic"  # lowercase: a valid tag
STRIPE = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"
GOOGLE = "AIza" + "SyD3mQ8vX2kL9pR4tW7nB1cF6hJ0gE5uYsZ"


def beyond_the_default_fields() -> dict[str, Any]:
    """A full packet with default credentials only where the format's pre-flight does not
    read: the id, a tag, project.ref and provenance.author_model."""
    packet = put(full(), "id", AWS)
    packet = put(packet, "tags", ["gpu", SLACK_TAG])
    packet = put(packet, "project.ref", STRIPE)
    return put(packet, "provenance.author_model", GOOGLE)
