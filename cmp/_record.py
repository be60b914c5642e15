"""Records: the house's frozen, slotted data classes, with the methods ``dataclasses`` would
write, at a fraction of its cost when a module is loaded.

``@record`` takes a class body of annotated fields (``name: type = default``, or
``name: type = field(...)``) and gives it ``__init__``, ``__repr__``, ``__eq__``,
``__hash__``, the frozen ``__setattr__``/``__delattr__``, ``__slots__``, pickling and
``__match_args__``, as ``@dataclasses.dataclass(frozen=True, slots=True)`` does. To the
standard library a record is a dataclass: ``dataclasses.fields``, ``replace``, ``asdict``
and ``is_dataclass`` work on it, through ``__dataclass_fields__``, made on first use.

Why not ``dataclasses`` itself: a one-file ``check`` defines about 40 such classes before
it reads a byte. ``dataclasses`` writes each class's methods as source text and compiles
it, about 1 ms a class here, and its import (inspect, ast, dis, tokenize) about 10 ms:
most of what a check's start-up cost. A record writes the same kind of source text
(cheap), and takes its compiled form from :mod:`cmp._precompiled`, a module generated
from these very texts (``python tools/generate_precompiled.py``), whose bytecode
Python caches as it does any module's.

The invariant: the methods a record gets are always the compiled form of exactly the
source text made for it here. A text is looked up by equality, never by a digest; a text
the generated module lacks (a record changed since it was generated) is compiled here,
correct and only slower, and a test fails until the module is generated again.
tests/unit/test_record.py holds records to ``dataclasses`` over generated class shapes.

One deliberate difference: assigning a name that is not a field to a frozen record raises
``FrozenInstanceError``, where a frozen slotted dataclass (3.11) raises a ``TypeError``
from ``super()``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from reprlib import recursive_repr

from cmp._precompiled import RECORD_METHODS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TypeVar, overload

    from typing_extensions import dataclass_transform

    T = TypeVar("T")
else:
    # What mypy reads above, without loading typing (a one-file check's start-up).
    def dataclass_transform(**_: object) -> object:
        return lambda decorator: decorator


class _Missing:
    """No default given (as ``dataclasses.MISSING``)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


class _FactoryDefault:
    """The default of a parameter whose field has a default factory: the factory is called
    when the parameter keeps it."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<factory>"


_FACTORY: Any = _FactoryDefault()


class Field:
    """One field of a record: what ``field(...)`` said of it, and its name and annotation."""

    __slots__ = ("compare", "default", "default_factory", "init", "kw_only", "name", "repr", "type")

    def __init__(
        self,
        default: Any,
        default_factory: Any,
        init: bool,
        repr: bool,
        compare: bool,
        kw_only: bool | None,
    ) -> None:
        if default is not MISSING and default_factory is not MISSING:
            raise ValueError("cannot specify both default and default_factory")
        self.name = ""
        self.type: Any = None
        self.default = default
        self.default_factory = default_factory
        self.init = init
        self.repr = repr
        self.compare = compare
        self.kw_only = kw_only

    def __repr__(self) -> str:
        return f"Field(name={self.name!r}, type={self.type!r}, default={self.default!r})"


def field(
    *,
    default: Any = MISSING,
    default_factory: Any = MISSING,
    init: bool = True,
    repr: bool = True,
    compare: bool = True,
    kw_only: bool | None = None,
) -> Any:
    """A field with more said of it than a default, as ``dataclasses.field`` (the options it has)."""
    return Field(default, default_factory, init, repr, compare, kw_only)


if TYPE_CHECKING:

    @overload
    def record(cls: type[T], /) -> type[T]: ...

    @overload
    def record(
        *, frozen: bool = True, eq: bool = True, order: bool = False, repr: bool = True, kw_only: bool = False
    ) -> Callable[[type[T]], type[T]]: ...


@dataclass_transform(frozen_default=True, field_specifiers=(field,))
def record(
    cls: type[T] | None = None,
    /,
    *,
    frozen: bool = True,
    eq: bool = True,
    order: bool = False,
    repr: bool = True,
    kw_only: bool = False,
) -> type[T] | Callable[[type[T]], type[T]]:
    """Make ``cls`` a record: ``@record``, or ``@record(frozen=False, order=True, ...)``.

    The options are those of ``dataclasses.dataclass`` (frozen by default), always slotted.
    """

    def wrap(cls: type[T]) -> type[T]:
        return _make(cls, frozen=frozen, eq=eq, order=order, repr=repr, kw_only=kw_only)

    return wrap if cls is None else wrap(cls)


def fields(cls_or_record: Any) -> tuple[Field, ...]:
    """A record's fields, in order (its class's, or its own)."""
    cls = cls_or_record if isinstance(cls_or_record, type) else type(cls_or_record)
    try:
        return cls.__dict__["__record_fields__"]  # type: ignore[no-any-return]
    except KeyError:
        raise TypeError(f"{cls.__qualname__} is not a record") from None


def is_record(value: Any) -> bool:
    """Whether ``value`` is a record or a record class."""
    cls = value if isinstance(value, type) else type(value)
    return "__record_fields__" in cls.__dict__


def is_dataclass_like(value: Any) -> bool:
    """``dataclasses.is_dataclass(value)``, without loading dataclasses for a record or for a
    program that never loaded it (no class can be a dataclass before dataclasses is loaded)."""
    if is_record(value):
        return True
    loaded = sys.modules.get("dataclasses")
    return loaded is not None and bool(loaded.is_dataclass(value))


def replace(obj: T, /, **changes: Any) -> T:
    """A copy of record ``obj`` with ``changes``, as ``dataclasses.replace``."""
    for member in fields(obj):
        if not member.init:
            if member.name in changes:
                raise ValueError(f"field {member.name} is declared with init=False, it cannot be given to replace()")
        elif member.name not in changes:
            changes[member.name] = getattr(obj, member.name)
    return type(obj)(**changes)


def frozen_error(verb: str, name: str) -> AttributeError:
    """What assigning to (or deleting) an attribute of a frozen record raises:
    ``dataclasses.FrozenInstanceError``, the one that callers already catch."""
    from dataclasses import FrozenInstanceError

    return FrozenInstanceError(f"cannot {verb} field {name!r}")


class _AsDataclass:
    """``__dataclass_fields__`` and ``__dataclass_params__`` of a record class, made on first
    use by ``dataclasses`` itself from a twin class of the same fields."""

    __slots__ = ("attribute",)

    def __init__(self, attribute: str) -> None:
        self.attribute = attribute

    def __get__(self, instance: Any, owner: type) -> Any:
        import dataclasses

        body: dict[str, Any] = {"__module__": owner.__module__, "__qualname__": owner.__qualname__}
        body["__annotations__"] = {member.name: member.type for member in fields(owner)}
        for member in fields(owner):
            body[member.name] = dataclasses.field(
                default=dataclasses.MISSING if member.default is MISSING else member.default,
                default_factory=dataclasses.MISSING if member.default_factory is MISSING else member.default_factory,
                init=member.init,
                repr=member.repr,
                compare=member.compare,
                kw_only=dataclasses.MISSING if member.kw_only is None else member.kw_only,
            )
        options = owner.__dict__["__record_options__"]
        twin: Any = dataclasses.dataclass(**options)(type(owner.__name__, (), body))
        type.__setattr__(owner, "__dataclass_fields__", twin.__dataclass_fields__)
        type.__setattr__(owner, "__dataclass_params__", twin.__dataclass_params__)
        return owner.__dict__[self.attribute]


# What a record's body may not define itself (a dataclass would keep some of them, and
# then not be what its options say).
_GIVEN = frozenset(
    {"__init__", "__eq__", "__hash__", "__setattr__", "__delattr__", "__getstate__", "__setstate__"}
    | {"__lt__", "__le__", "__gt__", "__ge__", "__slots__", "__match_args__"}
)

# Every source text made in this process, by module and class, for the generator.
MADE: dict[tuple[str, str], str] = {}


def _make(cls: type[T], *, frozen: bool, eq: bool, order: bool, repr: bool, kw_only: bool) -> type[T]:
    if not cls.__doc__:
        raise TypeError(f"record {cls.__qualname__} has no docstring: say what it is")
    own = cls.__dict__
    members: list[Field] = []
    for name, annotation in own.get("__annotations__", {}).items():
        text = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", "")
        if text.partition("[")[0].rpartition(".")[2] in ("ClassVar", "InitVar", "KW_ONLY"):
            raise TypeError(f"record {cls.__qualname__}.{name}: {text} is not supported")
        given = own.get(name, MISSING)
        member = given if isinstance(given, Field) else Field(given, MISSING, True, True, True, None)
        member.name, member.type = name, annotation
        if member.kw_only is None:
            member.kw_only = kw_only
        if type(member.default).__hash__ is None:
            raise ValueError(f"mutable default {type(member.default)} for field {name}: use default_factory")
        members.append(member)
    given = sorted(_GIVEN & set(own))
    if given:
        raise TypeError(f"record {cls.__qualname__} defines {given}: a record is given those")

    # The class again, with a slot a field and no class attributes of the same names.
    body = {name: value for name, value in own.items() if name not in ("__dict__", "__weakref__")}
    for member in members:
        body.pop(member.name, None)
    body["__slots__"] = tuple(member.name for member in members)
    metaclass: Any = type(cls)
    made: Any = metaclass(cls.__name__, cls.__bases__, body)
    made.__qualname__ = cls.__qualname__

    source, values = _source(made, members, frozen=frozen, eq=eq, order=order, repr=repr and "__repr__" not in own)
    MADE[made.__module__, made.__qualname__] = source
    factory = RECORD_METHODS.get(source)
    if factory is None:  # a record changed since cmp/_precompiled.py was generated
        namespace: dict[str, Any] = {}
        exec(compile(source, f"<record {made.__qualname__}>", "exec"), {}, namespace)
        factory = namespace["_make"]
    for name, method in factory(**values).items():
        if name == "__repr__":
            method = recursive_repr()(method)
        method.__qualname__ = f"{made.__qualname__}.{name}"
        method.__module__ = made.__module__
        type.__setattr__(made, name, method)
    if eq and not frozen:
        made.__hash__ = None  # mutable and compared by value: unhashable, as a dataclass is
    type.__setattr__(made, "__match_args__", tuple(m.name for m in members if m.init and not m.kw_only))
    made.__replace__ = replace  # copy.replace (3.13), as a dataclass has it
    made.__record_fields__ = tuple(members)
    made.__record_options__ = {"frozen": frozen, "eq": eq, "order": order, "repr": repr, "kw_only": kw_only}
    made.__dataclass_fields__ = _AsDataclass("__dataclass_fields__")
    made.__dataclass_params__ = _AsDataclass("__dataclass_params__")
    return made  # type: ignore[no-any-return]


def _source(
    cls: type, members: list[Field], *, frozen: bool, eq: bool, order: bool, repr: bool
) -> tuple[str, dict[str, Any]]:
    """The source text of a function that makes ``cls``'s methods, and its arguments.

    The text names no value: defaults, factories and the class come in as arguments, so a
    text depends only on the shape of the class (its field names and options).
    """
    values: dict[str, Any] = {"_cls": cls, "_object": object, "_factory": _FACTORY, "_frozen_error": frozen_error}
    values["_names"] = frozenset(member.name for member in members)
    for member in members:
        if member.default is not MISSING:
            values[f"_d_{member.name}"] = member.default
        if member.default_factory is not MISSING:
            values[f"_f_{member.name}"] = member.default_factory
    positional: list[str] = []
    keyword: list[str] = []
    for member in members:
        if not member.init:
            continue
        if member.default is not MISSING:
            parameter = f"{member.name}=_d_{member.name}"
        elif member.default_factory is not MISSING:
            parameter = f"{member.name}=_factory"
        else:
            if not member.kw_only and any("=" in earlier for earlier in positional):
                raise TypeError(f"non-default argument {member.name!r} follows default argument")
            parameter = member.name
        (keyword if member.kw_only else positional).append(parameter)
    parameters = ", ".join(["self", *positional, *(["*", *keyword] if keyword else [])])
    lines = [f"def _make({', '.join(sorted(values))}):", f"    def __init__({parameters}):"]
    for member in members:
        name = member.name
        if member.init:
            value = f"_f_{name}() if {name} is _factory else {name}" if member.default_factory is not MISSING else name
        elif member.default is not MISSING:
            value = f"_d_{name}"
        elif member.default_factory is not MISSING:
            value = f"_f_{name}()"
        else:
            continue
        store = f"_object.__setattr__(self, {name!r}, {value})" if frozen else f"self.{name} = {value}"
        lines.append("        " + store)
    if "__post_init__" in cls.__dict__:
        lines.append("        self.__post_init__()")
    lines.append("        return None")
    made = ["__init__"]
    if repr:
        shown = ", ".join(f"{m.name}={{self.{m.name}!r}}" for m in members if m.repr)
        lines += ["    def __repr__(self):", f'        return f"{{self.__class__.__qualname__}}({shown})"']
        made.append("__repr__")
    compared = "".join(f"self.{m.name}, " for m in members if m.compare)
    other = compared.replace("self.", "other.")
    comparisons = {"__eq__": "=="} if eq else {}
    if order:
        comparisons.update({"__lt__": "<", "__le__": "<=", "__gt__": ">", "__ge__": ">="})
    for name, operator in comparisons.items():
        lines += [
            f"    def {name}(self, other):",
            "        if other.__class__ is self.__class__:",
            f"            return ({compared}) {operator} ({other})",
            "        return NotImplemented",
        ]
        made.append(name)
    if eq and frozen:
        lines += ["    def __hash__(self):", f"        return hash(({compared}))"]
        made.append("__hash__")
    if frozen:
        for name, verb, signature, parent in (
            ("__setattr__", "assign to", "name, value", "name, value"),
            ("__delattr__", "delete", "name", "name"),
        ):
            lines += [
                f"    def {name}(self, {signature}):",
                "        if type(self) is _cls or name in _names:",
                f"            raise _frozen_error({verb!r}, name)",
                f"        super(_cls, self).{name}({parent})",
            ]
            made.append(name)
        state = "".join(f"self.{m.name}, " for m in members)
        lines += [
            "    def __getstate__(self):",
            f"        return [{state}]",
            "    def __setstate__(self, state):",
            f"        for name, value in zip(({''.join(f'{m.name!r}, ' for m in members)}), state):",
            "            _object.__setattr__(self, name, value)",
        ]
        made += ["__getstate__", "__setstate__"]
    lines.append(f"    return {{{', '.join(f'{name!r}: {name}' for name in made)}}}")
    return "\n".join(lines) + "\n", values
