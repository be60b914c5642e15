"""The fast acceptance path and the detailed jsonschema path must give the same verdicts."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cmp import _intake as intake
from cmp import _validation as versions
from cmp import model
from cmp._compiler import compile_builder
from cmp._explain import explain
from cmp._validation import builder
from cmp.conformance import vector_input
from cmp.findings import Finding
from cmp.schema import layout, load_schema
from tests.support.examples import examples
from tests.support.packets import drop, full, put, strings_in
from tests.support.strategies import packets
from tests.support.vectors import committed_vectors


def routed_objects() -> list[tuple[str, dict[str, Any], str]]:
    out = []
    for vector in committed_vectors():
        obj, _ = intake.parse_packet(vector_input(vector))
        if obj is None:
            continue
        version = versions.route(obj)
        if not isinstance(version, Finding):
            out.append((vector["id"], obj, version))
    return out


def assert_builder_agrees(obj: Any, version: str) -> None:
    """The builder refuses what the rule walker refuses, and otherwise builds what from_obj builds."""
    built = builder(version)(obj)
    assert (built is not None) == (explain(obj, version) == [])
    if built is None:
        return
    packet, strings = built
    assert packet == model.from_obj(obj)
    # Fresh from the builder, a packet knows it conforms and nothing more (cmp._quick relies on it).
    assert type(packet) is model.Packet and packet._known == model.CONFORMING
    assert all(type(d) is model.Decision for d in packet.decisions)
    assert all(type(a) is model.Attempt for a in packet.attempts)
    assert all(type(m) is model.Method for m in packet.methods)
    assert packet.project is None or type(packet.project) is model.Project
    assert packet.provenance is None or type(packet.provenance) is model.Provenance
    assert isinstance(packet.tags, tuple) and isinstance(packet.decisions, tuple)
    assert strings == strings_in(obj)


def test_same_verdict_on_every_conformance_vector() -> None:
    objects = routed_objects()
    assert len(objects) > 700
    for vector_id, obj, version in objects:
        assert (builder(version)(obj) is not None) == (explain(obj, version) == []), vector_id


def test_builder_agrees_on_every_conformance_vector() -> None:
    built = 0
    for _, obj, version in routed_objects():
        assert_builder_agrees(obj, version)
        built += builder(version)(obj) is not None
    assert built > 300


def test_built_packets_are_frozen_and_hashable() -> None:
    built = builder("0.2")(full("0.2"))
    assert built is not None
    packet = built[0]
    with pytest.raises(dataclasses.FrozenInstanceError):
        packet.goal = "changed"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        packet.decisions[0].what = "changed"  # type: ignore[misc]
    assert hash(packet) == hash(model.from_obj(full("0.2")))
    assert dataclasses.replace(packet, goal="other").goal == "other"


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


def edited(obj: dict[str, Any], edits: list[tuple[str, Any]]) -> dict[str, Any]:
    """``obj`` with each (path, value) put in turn; an edit the shape no longer has is skipped."""
    for path, value in edits:
        try:
            obj = put(obj, path, value)
        except (TypeError, KeyError, IndexError, AttributeError):
            continue
    return obj


@pytest.mark.slow
@settings(max_examples=examples(500))
@given(st.sampled_from(["0.1", "0.2"]), st.lists(st.tuples(st.sampled_from(PATHS), JSON_VALUES), max_size=3))
def test_same_verdict_on_mutated_packets(version: str, edits: list[tuple[str, Any]]) -> None:
    obj = edited(full(version), edits)
    assert_builder_agrees(obj, version)


@pytest.mark.slow
@settings(max_examples=examples(200))
@given(packets())
def test_generated_packets_pass_both(packet: Any) -> None:
    obj = model.to_obj(packet)
    assert builder(packet.ltm_version)(obj) is not None
    assert explain(obj, packet.ltm_version) == []
    assert_builder_agrees(obj, packet.ltm_version)
    built = builder(packet.ltm_version)(obj)
    assert built is not None and built[0] == packet


def test_subclasses_are_left_to_the_detailed_path() -> None:
    class Text(str):
        pass

    obj = full("0.2")
    obj["goal"] = Text("a goal")
    assert builder("0.2")(obj) is None  # stricter than needed: the explanation decides
    assert explain(obj, "0.2") == []


@pytest.mark.parametrize("keyword", [{"minItems": 1}, {"uniqueItems": True}, {"oneOf": []}, {"format": "email"}])
def test_unknown_keywords_refuse_to_compile(keyword: dict[str, Any]) -> None:
    schema = {"type": "array" if "Items" in next(iter(keyword)) else "string", **keyword}
    with pytest.raises(ValueError):
        compile_builder(schema, {"$": model.Project})


def test_builder_refuses_to_compile_without_a_class_for_each_object() -> None:
    classes = {k: v for k, v in model.SCHEMA_CLASSES.items() if k != "$.decisions[]"}
    with pytest.raises(ValueError, match=r"no model class for \$\.decisions\[\]"):
        compile_builder(load_schema("0.2"), classes)


def test_builder_refuses_a_member_the_class_has_no_field_for() -> None:
    schema = {"type": "object", "properties": {"name": {"type": "string"}, "colour": {"type": "string"}}}
    with pytest.raises(ValueError, match="colour"):
        compile_builder(schema, {"$": model.Project})


def test_builder_refuses_a_class_it_cannot_fill_in() -> None:
    @dataclasses.dataclass(frozen=True)
    class Unslotted:
        name: str = ""

    with pytest.raises(ValueError, match="Unslotted"):
        compile_builder({"type": "object", "properties": {"name": {"type": "string"}}}, {"$": Unslotted})


def test_builder_refuses_an_optional_member_without_a_default() -> None:
    schema = {"type": "object", "properties": {"what": {"type": "string"}, "why": {"type": "string"}}}
    with pytest.raises(ValueError, match="no default"):
        compile_builder(schema, {"$": model.Decision})


def test_compiled_from_the_shipped_schemas() -> None:
    for version in ("0.1", "0.2"):
        build = compile_builder(load_schema(version), model.SCHEMA_CLASSES)
        assert build(full(version)) is not None
        assert build(put(full(version), "tags[0]", "Bad")) is None


def test_the_builders_generated_source_can_be_read_back() -> None:
    """Tracebacks, inspect and debuggers show the generated lines, kept in linecache."""
    import inspect
    import linecache

    shipped = builder("0.2")
    assert shipped.__code__.co_filename.startswith("<cmp compiled builder of ")
    assert inspect.getsource(shipped).lstrip().startswith("def build(packet, ")
    schema = {"type": "object", "properties": {"name": {"type": "string", "maxLength": 9}}}
    build = compile_builder(schema, {"$": model.Project})
    source = inspect.getsource(build)
    assert source.startswith("def build(packet, ")
    assert "len(" in source and "return packet, n" in source
    filename = build.__code__.co_filename
    assert filename.startswith("<cmp compiled builder of ")
    linecache.checkcache()  # an entry without a file must survive the cache check
    assert linecache.getline(filename, 1).startswith("def build(packet, ")
    assert compile_builder(schema, {"$": model.Project}).__code__.co_filename != filename  # one name per compilation


def test_a_required_member_that_is_not_a_string_refuses_to_compile() -> None:
    """The string count assumes it; the assumption is checked, not silently relied on."""
    schema = {"type": "object", "required": ["locked"], "properties": {"locked": {"type": "boolean"}}}
    with pytest.raises(ValueError, match="required members"):
        compile_builder(schema, {"$": model.Decision})


# Each object the 0.2 schema builds, and the path of one such object in full("0.2").
_OBJECTS = {"$": "", "$.project": "project.", "$.provenance": "provenance."} | {
    f"$.{array}[]": f"{array}[0]." for array in ("decisions", "methods", "attempts")
}


def _members(location: str) -> tuple[list[str], set[str]]:
    """The member names and the required ones of the 0.2 schema's object at ``location``."""
    found = layout([load_schema("0.2")])[location]
    return [member.name for member in found], {member.name for member in found if member.required}


@pytest.mark.parametrize("location", sorted(_OBJECTS))
def test_an_unknown_member_is_refused_whichever_optional_members_are_absent(location: str) -> None:
    """The builder counts the members it reads down as optional ones turn out absent, and
    refuses an object of any other length: an unknown member beside any set of absent
    optional members, one for each absent or as well as all of them, is still refused."""
    names, required = _members(location)
    optional = sorted(set(names) - required)
    prefix = _OBJECTS[location]
    for absent in [[], *([name] for name in optional), optional]:
        obj = full("0.2")
        for name in absent:
            obj = drop(obj, prefix + name)
        assert_builder_agrees(obj, "0.2")
        assert builder("0.2")(obj) is not None, (location, absent)
        for extras in (["extra"], [f"extra{i}" for i in range(len(absent) + 1)]):
            unknown = obj
            for extra in extras:
                unknown = put(unknown, prefix + extra, "x")
            assert builder("0.2")(unknown) is None, (location, absent, extras)
            assert_builder_agrees(unknown, "0.2")


@pytest.mark.parametrize("location", sorted(_OBJECTS))
def test_a_missing_required_member_is_refused(location: str) -> None:
    """A required member is read by subscript; its KeyError is the builder's None."""
    _, required = _members(location)
    prefix = _OBJECTS[location]
    for name in sorted(required):
        obj = drop(full("0.2"), prefix + name)
        assert builder("0.2")(obj) is None, (location, name)
        assert_builder_agrees(obj, "0.2")
        # An unknown member in its place gives the object the length counted: the subscript still refuses it.
        assert builder("0.2")(put(obj, prefix + "extra", "x")) is None, (location, name)


def test_a_required_member_without_a_schema_refuses_to_compile() -> None:
    """The builder finds a missing required member by reading it: one it would never read is refused."""
    schema = {"type": "object", "required": ["what"], "properties": {"why": {"type": "string"}}}
    with pytest.raises(ValueError, match=r"required members from properties: \['what'\]"):
        compile_builder(schema, {"$": model.Decision})
