"""The committed conformance vectors as pytest parameters, one test case per vector."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cmp.conformance import compare, load_vectors, respond, vector_input

FOLDER = Path(__file__).resolve().parents[2] / "conformance-vectors"


def params(*areas: str) -> list[Any]:
    return [pytest.param(v, id=v["id"]) for v in load_vectors(FOLDER, areas)]


def assert_passes(vector: dict[str, Any]) -> None:
    problems = compare(vector, respond(vector_input(vector)))
    assert problems == [], f"{vector['id']}: {vector['description']}: {problems}"


def packet_of(vector: dict[str, Any]) -> dict[str, Any]:
    obj: dict[str, Any] = json.loads(vector_input(vector))
    return obj
