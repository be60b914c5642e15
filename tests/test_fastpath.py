"""The fast acceptance path and the detailed jsonschema path must give the same verdicts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cmp import intake, model, versions
from cmp.conformance import load_vectors, vector_input
from cmp.explain import explain
from cmp.fastpath import compile_acceptor
from cmp.findings import Finding
from cmp.schemas import acceptor, load_schema
from tests.packets import full, put
from tests.strategies import packets

VECTORS = Path(__file__).resolve().parent.parent / "conformance-vectors"


def routed_objects() -> list[tuple[str, dict[str, Any], str]]:
    out = []
    for vector in load_vectors(VECTORS):
        obj, _ = intake.parse_packet(vector_input(vector))
        if obj is None:
            continue
        version = versions.route(obj)
        if not isinstance(version, Finding):
            out.append((vector["id"], obj, version))
    return out


def test_same_verdict_on_every_conformance_vector() -> None:
    objects = routed_objects()
    assert len(objects) > 700
    for vector_id, obj, version in objects:
        assert acceptor(version)(obj) == (explain(obj, version) == []), vector_id


JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False)
    | st.text(max_size=40)
    | st.sampled_from(["low", "failed", "gpu", "2026-04-21T10:30:00Z", "sha256:" + "a" * 64, "x" * 1025]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=6,
)
PATHS = [
    "ltm_version",
    "id",
    "parent_id",
    "created_at",
    "project",
    "project.name",
    "goal",
    "success_criteria",
    "success_criteria[0]",
    "constraints[1]",
    "decisions[0]",
    "decisions[0].what",
    "decisions[0].locked",
    "decisions[0].extra",
    "methods[0].name",
    "methods[0].how",
    "attempts[0].outcome",
    "attempts[0].confidence",
    "open_questions",
    "tags[0]",
    "tags",
    "provenance.source_hash",
    "provenance.confidence",
    "provenance",
    "extra",
]


@settings(max_examples=500, deadline=None)
@given(st.sampled_from(["0.1", "0.2"]), st.lists(st.tuples(st.sampled_from(PATHS), JSON_VALUES), max_size=3))
def test_same_verdict_on_mutated_packets(version: str, edits: list[tuple[str, Any]]) -> None:
    obj = full(version)
    obj["ltm_version"] = version
    for path, value in edits:
        try:
            obj = put(obj, path, value)
        except (TypeError, KeyError, IndexError, AttributeError):
            continue
    assert acceptor(version)(obj) == (explain(obj, version) == [])


@settings(max_examples=200, deadline=None)
@given(packets())
def test_generated_packets_pass_both(packet: Any) -> None:
    obj = model.to_obj(packet)
    assert acceptor(packet.ltm_version)(obj)
    assert explain(obj, packet.ltm_version) == []


def test_subclasses_are_left_to_the_detailed_path() -> None:
    class Text(str):
        pass

    obj = full("0.2")
    obj["goal"] = Text("a goal")
    assert not acceptor("0.2")(obj)  # stricter than needed: the explanation decides
    assert explain(obj, "0.2") == []


@pytest.mark.parametrize("keyword", [{"minItems": 1}, {"uniqueItems": True}, {"oneOf": []}, {"format": "email"}])
def test_unknown_keywords_refuse_to_compile(keyword: dict[str, Any]) -> None:
    schema = {"type": "array" if "Items" in next(iter(keyword)) else "string", **keyword}
    with pytest.raises(ValueError):
        compile_acceptor(schema)


def test_compiled_from_the_shipped_schemas() -> None:
    for version in ("0.1", "0.2"):
        accept = compile_acceptor(load_schema(version))
        assert accept(full(version))
        assert not accept(put(full(version), "tags[0]", "Bad"))
