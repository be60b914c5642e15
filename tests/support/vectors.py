"""The committed conformance vectors as pytest parameters, one test case per vector."""

from __future__ import annotations

import copy
import functools
import json
import shutil
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from cmp.conformance import SCHEMA_FILE, compare, load_vectors, respond, vector_input

FOLDER = Path(__file__).resolve().parents[2] / "conformance-vectors"


@functools.cache
def _committed() -> tuple[dict[str, Any], ...]:
    # load_vectors checks every file against vectors.schema.json with jsonschema (a third of
    # a second here): read once a process, not once a test module and test.
    return tuple(load_vectors(FOLDER))


def committed_vectors(areas: Iterable[str] = ()) -> list[dict[str, Any]]:
    """``load_vectors(FOLDER, areas)``, read once a process: the committed vectors of these
    areas (all of them for none), in file order, each a copy of its own to change."""
    wanted = set(areas)
    chosen = [vector for vector in _committed() if not wanted or vector["area"] in wanted]
    missing = wanted - {vector["area"] for vector in chosen}
    assert not missing, f"no vectors for area {', '.join(sorted(missing))}"
    return copy.deepcopy(chosen)


def vector_folder(folder: Path, vectors: Iterable[dict[str, Any]]) -> Path:
    """A vector folder made at ``folder``: the committed schema and these vectors, one file
    an area, in the order given (what ``--vectors`` and load_vectors read)."""
    folder.mkdir()
    shutil.copy(FOLDER / SCHEMA_FILE, folder)
    areas: dict[str, list[dict[str, Any]]] = {}
    for vector in vectors:
        areas.setdefault(vector["area"], []).append({k: v for k, v in vector.items() if k != "area"})
    for area, kept in areas.items():
        (folder / f"{area}.json").write_text(json.dumps({"area": area, "vectors": kept}), "utf-8")
    return folder


def params(*areas: str) -> list[Any]:
    return [pytest.param(v, id=v["id"]) for v in committed_vectors(areas)]


def assert_passes(vector: dict[str, Any]) -> None:
    problems = compare(vector, respond(vector_input(vector)))
    assert problems == [], f"{vector['id']}: {vector['description']}: {problems}"


def packet_of(vector: dict[str, Any]) -> dict[str, Any]:
    obj: dict[str, Any] = json.loads(vector_input(vector))
    return obj
