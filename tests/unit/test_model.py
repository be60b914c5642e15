"""The typed model: construction, Packet.new, and the dict views."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import re
from dataclasses import fields
from typing import Any

import pytest
from ulid import ULID

import cmp
from cmp import model
from tests.support.packets import encode, full


def test_packet_new_fills_id_time_and_version() -> None:
    before = dt.datetime.now(dt.timezone.utc)
    packet = cmp.Packet.new(goal="Ship it.", next_step="Write the test.", tags=["a", "b"])
    after = dt.datetime.now(dt.timezone.utc)
    assert packet.ltm_version == "0.2"
    assert str(ULID.from_str(packet.id)) == packet.id and len(packet.id) == 26
    assert packet.created_at.endswith("Z")
    assert before - dt.timedelta(microseconds=1) <= packet.created_at_datetime <= after
    assert packet.tags == ("a", "b")
    assert cmp.loads(cmp.dumps(packet)) == packet


def test_two_new_packets_have_distinct_ids() -> None:
    first = cmp.Packet.new(goal="g", next_step="n")
    second = cmp.Packet.new(goal="g", next_step="n")
    assert first.id != second.id


def test_models_are_frozen_and_slotted() -> None:
    packet = cmp.Packet.new(goal="g", next_step="n")
    with pytest.raises(dataclasses.FrozenInstanceError):
        packet.goal = "x"  # type: ignore[misc]
    assert not hasattr(packet, "__dict__")


@pytest.mark.parametrize("version", ["0.1", "0.2"])
def test_loads_builds_every_member(version: str) -> None:
    obj = full(version)
    packet = cmp.loads(encode(obj))
    assert packet.project == cmp.Project(name="replay", ref="github.com/example/replay")
    assert packet.decisions[0].locked is True
    assert packet.attempts[0].outcome == "failed"
    assert packet.provenance is not None and packet.provenance.confidence == "high"
    assert model.to_obj(packet) == obj


def test_created_at_keeps_its_exact_text() -> None:
    obj = full("0.2")
    obj["created_at"] = "2026-04-21T12:00:00.500000000+00:00"
    assert cmp.loads(encode(obj)).created_at == "2026-04-21T12:00:00.500000000+00:00"


def test_to_obj_leaves_out_empty_members() -> None:
    packet = cmp.Packet(
        ltm_version="0.2",
        id="0123456789",
        created_at="2026-01-01T00:00:00Z",
        goal="g",
        next_step="n",
        project=cmp.Project(),
        decisions=(cmp.Decision(what="w", why="y", consequences="", locked=False),),
        provenance=cmp.Provenance(),
    )
    assert model.to_obj(packet) == {
        "ltm_version": "0.2",
        "id": "0123456789",
        "created_at": "2026-01-01T00:00:00Z",
        "project": {},
        "goal": "g",
        "decisions": [{"what": "w", "why": "y"}],
        "next_step": "n",
        "provenance": {},
    }


# --- Member types: a wrong type is a TypeError at construction, naming class and member ---

AWS = "AKIAIOSFODNN7EXAMPLE"


def _packet(**members: Any) -> cmp.Packet:
    values: dict[str, Any] = {
        "ltm_version": "0.2",
        "id": "0123456789",
        "created_at": "2026-01-01T00:00:00Z",
        "goal": "g",
        "next_step": "n",
    }
    return cmp.Packet(**{**values, **members})


@pytest.mark.parametrize(
    ("build", "message"),
    [
        # the red-team cases
        (lambda: cmp.Decision(what="a", why="b", locked="false"), "Decision.locked must be a bool, not str"),  # type: ignore[arg-type]
        (lambda: cmp.Attempt(tried="t", outcome="failed", learned=0), "Attempt.learned must be a str, not int"),  # type: ignore[arg-type]
        (lambda: cmp.Project(name=None), "Project.name must be a str, not None"),  # type: ignore[arg-type]
        (
            lambda: cmp.Packet.new(goal="g", next_step="n", constraints=AWS),
            "Packet.constraints must be a tuple or list of str, not str",
        ),
        (
            lambda: _packet(decisions=[cmp.Decision("a", "b"), cmp.Decision("c", "d"), {"what": "e", "why": "f"}]),
            "Packet.decisions[2] must be a Decision, not dict",
        ),
        # more of the same
        (lambda: cmp.Method(name=b"m", when_applicable="w", how="h"), "Method.name must be a str, not bytes"),  # type: ignore[arg-type]
        (lambda: cmp.Decision(what="a", why="b", locked=1), "Decision.locked must be a bool, not int"),  # type: ignore[arg-type]
        (lambda: cmp.Decision(what="a", why="b", locked=None), "Decision.locked must be a bool, not None"),  # type: ignore[arg-type]
        (lambda: cmp.Provenance(confidence=True), "Provenance.confidence must be a str, not bool"),  # type: ignore[arg-type]
        (lambda: cmp.Attempt(tried="t", outcome=None), "Attempt.outcome must be a str, not None"),  # type: ignore[arg-type]
        (lambda: _packet(goal=None), "Packet.goal must be a str, not None"),
        (lambda: cmp.Packet.new(goal="g", next_step=b"n"), "Packet.next_step must be a str, not bytes"),  # type: ignore[arg-type]
        (lambda: _packet(created_at=dt.datetime.now()), "Packet.created_at must be a str, not datetime"),
        (lambda: _packet(tags="gpu"), "Packet.tags must be a tuple or list of str, not str"),
        (lambda: _packet(tags=b"gpu"), "Packet.tags must be a tuple or list of str, not bytes"),
        (lambda: _packet(tags={"gpu"}), "Packet.tags must be a tuple or list of str, not set"),
        (lambda: _packet(tags=(t for t in ["gpu"])), "Packet.tags must be a tuple or list of str, not generator"),
        (lambda: _packet(tags=None), "Packet.tags must be a tuple or list of str, not None"),
        (lambda: _packet(tags=("gpu", 1)), "Packet.tags[1] must be a str, not int"),
        (lambda: _packet(open_questions=[None]), "Packet.open_questions[0] must be a str, not None"),
        (
            lambda: _packet(decisions={"what": "a", "why": "b"}),
            "Packet.decisions must be a tuple or list of Decision, not dict",
        ),
        (
            lambda: _packet(attempts=[cmp.Decision("a", "b")]),
            "Packet.attempts[0] must be an Attempt, not Decision",
        ),
        (lambda: _packet(methods=(cmp.Attempt("t", "failed"),)), "Packet.methods[0] must be a Method, not Attempt"),
        (lambda: _packet(project={"name": "x"}), "Packet.project must be a Project or None, not dict"),
        (lambda: _packet(project=cmp.Provenance()), "Packet.project must be a Project or None, not Provenance"),
        (lambda: _packet(provenance=cmp.Project()), "Packet.provenance must be a Provenance or None, not Project"),
        (lambda: _packet(provenance=""), "Packet.provenance must be a Provenance or None, not str"),
    ],
)
def test_wrong_member_types_are_refused(build: Any, message: str) -> None:
    with pytest.raises(TypeError) as caught:
        build()
    assert str(caught.value) == message


def test_a_string_given_for_an_array_is_refused_not_split() -> None:
    """The secret used to be split into 20 one-letter items that no pattern matches; now nothing is built."""
    for array in ("success_criteria", "constraints", "open_questions", "tags"):
        with pytest.raises(TypeError, match=rf"^Packet\.{array} must be a tuple or list of str, not str$") as caught:
            cmp.Packet.new(goal="g", next_step="n", **{array: AWS})
        assert AWS not in str(caught.value)  # the message never quotes the value
    packet = cmp.Packet.new(goal="g", next_step="n", constraints=[AWS])
    assert packet.constraints == (AWS,)
    assert [(hit.field, hit.category) for hit in cmp.redact(packet)] == [("constraints[0]", "aws-key")]


def test_str_subclasses_are_refused() -> None:
    """Exact str, as the schema's compiled checks require; a subclass could show the scan other text."""

    class Text(str):
        pass

    with pytest.raises(TypeError, match=r"^Packet\.goal must be a str, not Text$"):
        cmp.Packet.new(goal=Text("g"), next_step="n")
    with pytest.raises(TypeError, match=r"^Packet\.tags\[0\] must be a str, not Text$"):
        cmp.Packet.new(goal="g", next_step="n", tags=[Text("gpu")])
    with pytest.raises(TypeError, match=r"^Project\.ref must be a str, not Text$"):
        cmp.Project(ref=Text("r"))


def test_replace_and_from_obj_are_checked_too() -> None:
    packet = cmp.loads(encode(full("0.2")))
    with pytest.raises(TypeError, match=r"^Packet\.project must be a Project or None, not dict$"):
        dataclasses.replace(packet, project={"name": "x"})  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^Packet\.tags must be a tuple or list of str, not str$"):
        dataclasses.replace(packet, tags="gpu")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^Decision\.locked must be a bool, not str$"):
        dataclasses.replace(packet.decisions[0], locked="false")  # type: ignore[arg-type]
    obj = full("0.2")
    obj["decisions"][0]["locked"] = "false"
    with pytest.raises(TypeError, match=r"^Decision\.locked must be a bool, not str$"):
        model.from_obj(obj)
    obj = full("0.2")
    obj["goal"] = None
    with pytest.raises(TypeError, match=r"^Packet\.goal must be a str, not None$"):
        model.from_obj(obj)


@pytest.mark.parametrize("version", ["0.1", "0.2"])
def test_packets_read_from_json_pass_the_type_checks(version: str) -> None:
    """check() builds without __init__; what it builds must still satisfy the constructor's checks."""
    packet = cmp.loads(encode(full(version)))
    assert dataclasses.replace(packet) == packet == model.from_obj(full(version))
    for decision in packet.decisions:
        assert dataclasses.replace(decision) == decision
    assert packet.project is not None and dataclasses.replace(packet.project) == packet.project


def test_lists_are_stored_as_tuples() -> None:
    decisions = [cmp.Decision("w", "y", locked=True)]
    tags = ["gpu", "cuda"]
    listed = _packet(tags=tags, decisions=decisions, constraints=[], attempts=[cmp.Attempt("t", "failed")])
    assert listed.tags == ("gpu", "cuda") and type(listed.tags) is tuple
    assert listed.decisions == tuple(decisions) and type(listed.decisions) is tuple
    assert listed.constraints == () and type(listed.attempts) is tuple
    tupled = _packet(tags=tuple(tags), decisions=tuple(decisions), attempts=(cmp.Attempt("t", "failed"),))
    assert listed == tupled and hash(listed) == hash(tupled)
    tags.append("late")  # the caller's list is copied, not kept
    assert listed.tags == ("gpu", "cuda")
    replaced = dataclasses.replace(listed, open_questions=["why?"])  # type: ignore[arg-type]
    assert type(replaced.open_questions) is tuple and replaced.open_questions == ("why?",)
    new = cmp.Packet.new(goal="g", next_step="n", methods=[cmp.Method("m", "w", "h")])
    assert type(new.methods) is tuple


def test_tuples_are_kept_as_given() -> None:
    tags = ("gpu",)
    assert _packet(tags=tags).tags is tags


def test_values_are_left_to_the_schema() -> None:
    """Only types are checked at construction: a bad value builds, and dumps refuses it."""
    packet = _packet(attempts=(cmp.Attempt(tried="t", outcome="bogus", confidence="sure"),), tags=["Bad"], goal="")  # type: ignore[arg-type]
    with pytest.raises(cmp.PacketError) as caught:
        cmp.dumps(packet)
    assert sorted(f.path for f in caught.value.findings) == [
        "$.attempts[0].confidence",
        "$.attempts[0].outcome",
        "$.goal",
        "$.tags[0]",
    ]


def test_dumps_writes_what_was_given() -> None:
    packet = cmp.Packet.new(
        goal="g",
        next_step="n",
        project=cmp.Project(name="p"),
        decisions=[cmp.Decision("w", "y", locked=True), cmp.Decision("v", "z", locked=False)],
        attempts=[cmp.Attempt("t", "failed", learned="l")],
        constraints=["c"],
    )
    obj = json.loads(cmp.dumps(packet))
    assert obj["project"] == {"name": "p"}
    assert obj["decisions"] == [{"what": "w", "why": "y", "locked": True}, {"what": "v", "why": "z"}]
    assert obj["attempts"] == [{"tried": "t", "outcome": "failed", "learned": "l"}]
    assert obj["constraints"] == ["c"]
    assert cmp.loads(cmp.dumps(packet)) == packet


# Every member of every model class, and the type it takes, written out here independently
# of the model: "str", "bool", "X?" (an X or None), "X[]" (a tuple or list of X).
MEMBER_TYPES: dict[type, dict[str, str]] = {
    cmp.Project: {"name": "str", "ref": "str"},
    cmp.Decision: {"what": "str", "why": "str", "consequences": "str", "locked": "bool"},
    cmp.Method: {"name": "str", "when_applicable": "str", "how": "str"},
    cmp.Attempt: {"tried": "str", "outcome": "str", "learned": "str", "confidence": "str"},
    cmp.Provenance: {"author_model": "str", "author_human": "str", "source_hash": "str", "confidence": "str"},
    cmp.Packet: {
        "ltm_version": "str",
        "id": "str",
        "created_at": "str",
        "goal": "str",
        "next_step": "str",
        "parent_id": "str",
        "project": "Project?",
        "success_criteria": "str[]",
        "constraints": "str[]",
        "decisions": "Decision[]",
        "methods": "Method[]",
        "attempts": "Attempt[]",
        "open_questions": "str[]",
        "tags": "str[]",
        "provenance": "Provenance?",
    },
}
VALID_MEMBERS: dict[type, dict[str, Any]] = {
    cmp.Project: {},
    cmp.Decision: {"what": "w", "why": "y"},
    cmp.Method: {"name": "m", "when_applicable": "w", "how": "h"},
    cmp.Attempt: {"tried": "t", "outcome": "failed"},
    cmp.Provenance: {},
    cmp.Packet: {
        "ltm_version": "0.2",
        "id": "0123456789",
        "created_at": "2026-01-01T00:00:00Z",
        "goal": "g",
        "next_step": "n",
    },
}
MODELS = {cls.__name__: cls for cls in MEMBER_TYPES}
SAMPLES: list[Any] = [
    "x",
    "",
    b"x",
    bytearray(b"x"),
    0,
    1,
    1.5,
    True,
    False,
    None,
    {},
    {"what": "w", "why": "y"},
    {"x"},
    frozenset(),
    (),
    [],
    ("x",),
    ["x", "y"],
    ["x", 1],
    [b"x"],
    [None],
    ["x", None],
    range(2),
    *[factory() for factory in (cmp.Project, cmp.Provenance)],
    cmp.Decision("w", "y"),
    cmp.Method("m", "w", "h"),
    cmp.Attempt("t", "failed"),
    [cmp.Decision("w", "y")],
    (cmp.Decision("w", "y"), cmp.Decision("v", "z")),
    [cmp.Decision("w", "y"), {"what": "w", "why": "y"}],
    [cmp.Method("m", "w", "h")],
    (cmp.Attempt("t", "failed"),),
    [cmp.Attempt("t", "failed"), cmp.Decision("w", "y")],
    [cmp.Project()],
]


def _takes(kind: str, value: Any) -> bool:
    if kind == "str":
        return type(value) is str
    if kind == "bool":
        return type(value) is bool
    if kind.endswith("?"):
        return value is None or type(value) is MODELS[kind[:-1]]
    item = str if kind == "str[]" else MODELS[kind[:-2]]
    return type(value) in (tuple, list) and all(type(v) is item for v in value)


def test_member_table_covers_every_field() -> None:
    for cls, members in MEMBER_TYPES.items():
        assert list(members) == [f.name for f in dataclasses.fields(cls) if f.init], cls.__name__


@pytest.mark.parametrize(
    ("cls", "member"), [(cls, member) for cls, members in MEMBER_TYPES.items() for member in members]
)
def test_every_member_takes_exactly_its_type(cls: type, member: str) -> None:
    """Every sample value in every member: built when of the member's type, else a TypeError naming it."""
    kind = MEMBER_TYPES[cls][member]
    accepted = 0
    for value in SAMPLES:
        try:
            built = cls(**{**VALID_MEMBERS[cls], member: value})
        except TypeError as exc:
            assert not _takes(kind, value), (member, value, exc)
            assert re.fullmatch(rf"{cls.__name__}\.{member}(\[\d+\])? must be .+, not \w+", str(exc)), str(exc)
            continue
        assert _takes(kind, value), (member, value)
        stored = getattr(built, member)
        if isinstance(value, list):
            assert type(stored) is tuple and stored == tuple(value)
        else:
            assert stored is value
        accepted += 1
    assert accepted >= 2  # at least two samples of every type are in SAMPLES


EMPTY = {"string": "", "timestamp": "", "boolean": False, "strings": (), "objects": (), "object": None}


def test_the_model_classes_are_the_schemas_objects() -> None:
    """Each class has a field for each member its object may have in any supported version,
    of the member's kind; required members have no default, optional ones default to empty
    (the writer leaves empty members out). The schemas state members; this holds the
    Python types to them."""
    from cmp.schema import members

    assert set(model.SCHEMA_CLASSES) == set(members())
    for location, listed in members().items():
        cls = model.SCHEMA_CLASSES[location]
        fields = {f.name: f for f in dataclasses.fields(cls) if f.init}
        assert set(fields) == {m.name for m in listed}, location
        for member in listed:
            field = fields[member.name]
            if member.required:
                assert field.default is dataclasses.MISSING, (location, member.name)
            else:
                assert field.default == EMPTY[member.kind], (location, member.name)
            nested = model.SCHEMA_CLASSES[member.location].__name__ if member.location else ""
            expected = {
                "string": "str",
                "timestamp": "str",
                "boolean": "bool",
                "strings": "str[]",
                "object": f"{nested}?",
                "objects": f"{nested}[]",
            }[member.kind]
            assert MEMBER_TYPES[cls][member.name] == expected, (location, member.name)


def test_from_obj_and_to_obj_are_inverse_on_canonical_data() -> None:
    for version in ("0.1", "0.2"):
        obj = json.loads(cmp.dumps(cmp.loads(encode(full(version)))))
        assert model.to_obj(model.from_obj(obj)) == obj


@pytest.mark.parametrize("cls", sorted(model.SCHEMA_CLASSES.values(), key=lambda cls: cls.__name__))
def test_every_model_class_has_a_type_rule_for_each_member(cls: type) -> None:
    """What importing cmp.model used to check: each member's annotation has a type rule."""
    rules = dict(model._rules(cls))
    assert set(rules) == {member.name for member in fields(cls) if member.init}
