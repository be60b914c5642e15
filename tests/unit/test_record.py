"""Records (cmp._record) against dataclasses.

A record must behave as ``dataclasses.dataclass(slots=True, ...)`` with the same options
does: the class shapes below are generated, each made both ways from one body, and every
behaviour a caller can see is compared. (tests/unit/test_precompiled.py holds the
precompiled methods to their texts.)
"""

from __future__ import annotations

import copy
import dataclasses
import importlib
import inspect
import pickle
import pkgutil
import subprocess
import sys
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cmp
from cmp import _record
from cmp._precompiled import RECORD_METHODS
from cmp._record import field, is_dataclass_like, is_record, record, replace
from tests.support.examples import examples

ROOT = Path(__file__).resolve().parents[2]


def _package_records() -> list[type]:
    for module in pkgutil.walk_packages(cmp.__path__, "cmp."):
        if not module.name.startswith("cmp.integrations"):
            importlib.import_module(module.name)
    found = []
    for module_name, qualname in sorted(key for key in _record.MADE if key[0].split(".")[0] == "cmp"):
        target: Any = sys.modules[module_name]
        for part in qualname.split("."):
            target = getattr(target, part)
        found.append(target)
    return found


PACKAGE_RECORDS = _package_records()


@pytest.mark.parametrize("cls", PACKAGE_RECORDS, ids=lambda cls: f"{cls.__module__}.{cls.__qualname__}")
def test_each_record_of_the_package_is_the_dataclass_its_body_says(cls: type) -> None:
    twin = _twin(cls)
    assert dataclasses.is_dataclass(cls) and is_record(cls)
    assert _described(dataclasses.fields(cls)) == _described(dataclasses.fields(twin))
    assert _signature(cls) == _signature(twin)
    assert cls.__match_args__ == twin.__match_args__  # type: ignore[attr-defined]
    assert cls.__slots__ == tuple(f.name for f in dataclasses.fields(twin))  # type: ignore[attr-defined]
    assert (cls.__hash__ is None) == (twin.__hash__ is None)
    assert cls.__dataclass_params__.frozen == twin.__dataclass_params__.frozen  # type: ignore[attr-defined]


def _twin(cls: type) -> type:
    """``cls`` as dataclasses makes it from the same fields and options (slotted)."""
    body: dict[str, Any] = {"__module__": cls.__module__, "__qualname__": cls.__qualname__, "__annotations__": {}}
    for member in _record.fields(cls):
        body["__annotations__"][member.name] = member.type
        body[member.name] = dataclasses.field(
            default=dataclasses.MISSING if member.default is _record.MISSING else member.default,
            default_factory=dataclasses.MISSING
            if member.default_factory is _record.MISSING
            else member.default_factory,
            init=member.init,
            repr=member.repr,
            compare=member.compare,
            kw_only=bool(member.kw_only),
        )
    options = cls.__dict__["__record_options__"]
    return dataclasses.dataclass(slots=True, **options)(type(cls.__name__, (), body))  # type: ignore[no-any-return]


def _described(members: tuple[dataclasses.Field[Any], ...]) -> list[tuple[Any, ...]]:
    return [(m.name, m.type, m.default, m.default_factory, m.init, m.repr, m.compare, m.kw_only) for m in members]


def _signature(cls: type) -> list[tuple[str, Any, str]]:
    parameters = inspect.signature(cls.__init__).parameters.values()  # type: ignore[misc]
    return [(p.name, p.kind, repr(p.default)) for p in parameters]


# ---------------------------------------------------------------- generated shapes

NAMES = ["alpha", "beta", "gamma", "delta", "epsilon"]
DEFAULTS = st.one_of(st.integers(-3, 3), st.text(max_size=3), st.none(), st.tuples(st.integers(0, 2)))
VALUES = st.one_of(st.integers(-3, 3), st.text(max_size=3), st.none(), st.lists(st.integers(0, 2), max_size=2))


@st.composite
def shapes(draw: st.DrawFn) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    eq = draw(st.booleans())
    options = {
        "frozen": draw(st.booleans()),
        "eq": eq,
        "order": eq and draw(st.booleans()),
        "repr": draw(st.booleans()),
        "kw_only": draw(st.booleans()),
    }
    members = []
    for name in NAMES[: draw(st.integers(0, len(NAMES)))]:
        kind = draw(st.sampled_from(["none", "default", "factory"]))
        members.append(
            {
                "name": name,
                "kind": kind,
                "default": draw(DEFAULTS) if kind == "default" else None,
                "factory": draw(st.sampled_from([list, tuple, dict])) if kind == "factory" else None,
                "init": draw(st.booleans()) if kind != "none" else True,
                "repr": draw(st.booleans()),
                "compare": draw(st.booleans()),
                "kw_only": draw(st.sampled_from([None, True, False])),
            }
        )
    return options, members


def _member(name: str, *, default: Any = None, init: bool = True) -> dict[str, Any]:
    """A field of a shape with a default, as :func:`shapes` draws them."""
    return {"name": name, "kind": "default", "default": default, "factory": None, "init": init} | {
        "repr": True,
        "compare": True,
        "kw_only": None,
    }


def _build(options: dict[str, Any], members: list[dict[str, Any]], *, ours: bool) -> type:
    make_field = field if ours else dataclasses.field
    body: dict[str, Any] = {"__module__": __name__, "__qualname__": "Shape", "__doc__": "A generated shape."}
    body["__annotations__"] = {m["name"]: "Any" for m in members}
    for m in members:
        more: dict[str, Any] = {"init": m["init"], "repr": m["repr"], "compare": m["compare"]}
        if m["kw_only"] is not None:
            more["kw_only"] = m["kw_only"]
        if m["kind"] == "default":
            body[m["name"]] = make_field(default=m["default"], **more)
        elif m["kind"] == "factory":
            body[m["name"]] = make_field(default_factory=m["factory"], **more)
        elif more != {"init": True, "repr": True, "compare": True}:
            body[m["name"]] = make_field(**more)
    cls = type("Shape", (), body)
    if ours:
        return record(**options)(cls)
    return dataclasses.dataclass(slots=True, **options)(cls)  # type: ignore[no-any-return]


def _outcome(action: Any) -> tuple[str, Any]:
    try:
        return "value", action()
    except Exception as exc:
        return "raised", type(exc)


def _calls(members: list[dict[str, Any]]) -> st.SearchStrategy[tuple[list[Any], dict[str, Any]]]:
    return st.tuples(
        st.lists(VALUES, max_size=len(members) + 1),
        st.dictionaries(st.sampled_from([*NAMES, "zeta"]), VALUES, max_size=3),
    )


@settings(max_examples=examples(300))
@given(shape=shapes(), data=st.data())
def test_a_record_behaves_as_the_dataclass_of_the_same_body(
    shape: tuple[dict[str, Any], list[dict[str, Any]]], data: st.DataObject
) -> None:
    options, members = shape
    made = {ours: _outcome(lambda ours=ours: _build(options, members, ours=ours)) for ours in (True, False)}
    if made[True][0] == "raised" or made[False][0] == "raised":
        assert made[True] == made[False]  # the same refusal (TypeError, ValueError) at class creation
        return
    ours, theirs = made[True][1], made[False][1]
    assert _described(dataclasses.fields(ours)) == _described(dataclasses.fields(theirs))
    assert _signature(ours) == _signature(theirs)
    assert ours.__match_args__ == theirs.__match_args__
    assert ours.__slots__ == theirs.__slots__
    assert (ours.__hash__ is None) == (theirs.__hash__ is None)

    instances = []
    for _ in range(2):
        args, kwargs = data.draw(_calls(members))
        mine, other = _outcome(partial(ours, *args, **kwargs)), _outcome(partial(theirs, *args, **kwargs))
        assert mine[0] == other[0] and (mine[0] == "value" or mine == other), (args, kwargs)
        if mine[0] == "value":
            instances.append((mine[1], other[1]))
    for a, b in instances:
        if options["repr"]:
            assert repr(a) == repr(b)
        if options["eq"]:  # else both hash by identity
            assert _outcome(lambda a=a: hash(a)) == _outcome(lambda b=b: hash(b))
        assert dataclasses.asdict(a) == dataclasses.asdict(b)
        assert copy.copy(a) == a if options["eq"] else copy.copy(a) is not a
        changes = {m["name"]: 1 for m in members[:1] if m["init"]}
        assert dataclasses.asdict(replace(a, **changes)) == dataclasses.asdict(dataclasses.replace(b, **changes))
        assert dataclasses.asdict(dataclasses.replace(a, **changes)) == dataclasses.asdict(replace(a, **changes))
        if hasattr(theirs, "__replace__"):  # copy.replace, 3.13
            assert dataclasses.asdict(a.__replace__(**changes)) == dataclasses.asdict(b.__replace__(**changes))
        for m in members:
            assignment = _outcome(lambda a=a, m=m: setattr(a, m["name"], 2))
            assert assignment[0] == _outcome(lambda b=b, m=m: setattr(b, m["name"], 2))[0]
            if options["frozen"]:
                assert assignment == ("raised", dataclasses.FrozenInstanceError)
    if len(instances) == 2:
        (a1, b1), (a2, b2) = instances
        operators = ["__eq__", "__ne__"] + (["__lt__", "__le__", "__gt__", "__ge__"] if options["order"] else [])
        for name in operators:
            assert _outcome(partial(getattr(a1, name), a2)) == _outcome(partial(getattr(b1, name), b2)), name
        if options["eq"] and options["frozen"]:
            assert _outcome(lambda: hash(a1) == hash(a2)) == _outcome(lambda: hash(b1) == hash(b2))


# ---------------------------------------------------------------- what the generated shapes cannot show


@record
class Sample:
    """A module-level record (so pickle finds its class)."""

    name: str
    count: int = 0
    tags: tuple[str, ...] = field(default_factory=tuple)


def test_a_frozen_record_pickles_copies_and_refuses_new_attributes() -> None:
    sample = Sample("a", 2, ("x",))
    assert pickle.loads(pickle.dumps(sample)) == sample
    assert copy.deepcopy(sample) == sample and copy.copy(sample) == sample
    with pytest.raises(dataclasses.FrozenInstanceError):
        sample.other = 1  # type: ignore[attr-defined]
    with pytest.raises(dataclasses.FrozenInstanceError):
        del sample.name
    assert not hasattr(sample, "__dict__")


def test_a_record_that_repeats_itself_in_its_repr_shows_dots() -> None:
    @record(frozen=False)
    class Node:
        """A mutable record that can hold itself."""

        child: Any = None

    node = Node()
    node.child = node
    assert repr(node) == "test_a_record_that_repeats_itself_in_its_repr_shows_dots.<locals>.Node(child=...)"


def test_a_record_refuses_what_it_would_not_honour() -> None:
    with pytest.raises(TypeError, match="no docstring"):
        record(type("Bare", (), {"__annotations__": {"a": "int"}, "__module__": __name__}))
    with pytest.raises(TypeError, match="__eq__"):
        record(type("Own", (), {"__doc__": "d", "__eq__": lambda self, other: True, "__module__": __name__}))
    with pytest.raises(TypeError, match="ClassVar"):
        record(type("Var", (), {"__doc__": "d", "__annotations__": {"a": "ClassVar[int]"}, "__module__": __name__}))
    with pytest.raises(ValueError, match="init=False"):
        replace(_build({}, [_member("alpha", default=1, init=False)], ours=True)(), alpha=2)


def test_records_load_dataclasses_only_when_asked_as_dataclasses() -> None:
    probe = (
        "import sys, cmp.model\n"
        "assert 'dataclasses' not in sys.modules\n"
        "import dataclasses\n"
        "print(dataclasses.is_dataclass(cmp.model.Packet), len(dataclasses.fields(cmp.model.Packet)))\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert result.stdout.split() == ["True", str(len(_record.fields(cmp.model.Packet)))]


def test_is_dataclass_like_needs_no_dataclasses_for_a_record() -> None:
    assert is_dataclass_like(Sample("a")) and is_dataclass_like(Sample)
    assert is_dataclass_like(dataclasses.make_dataclass("Plain", ["a"])(1))
    assert not is_dataclass_like({"a": 1}) and not is_dataclass_like("text")


def test_a_record_not_in_the_generated_module_is_compiled_and_the_same() -> None:
    made = _build({"frozen": True}, [_member("alpha", default=1)], ours=True)
    assert _record.MADE[__name__, "Shape"] not in RECORD_METHODS
    assert repr(made()) == "Shape(alpha=1)" and made(2) == made(alpha=2)
