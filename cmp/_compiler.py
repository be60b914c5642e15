"""Each schema compiled to one plain Python function, its builder.

The builder answers "valid or not" while building the typed model and counting the
document's strings, in one walk; the rule walker (:mod:`cmp._explain`) explains a "not
valid". The tests hold both to identical verdicts. A keyword the compiler does not know
makes compilation fail, so a schema change cannot silently weaken it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import MISSING, fields, is_dataclass

from cmp import _timestamps
from cmp._codegen import define, draft_class
from cmp._matcher import Matcher

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_IGNORED = {"$schema", "$id", "title", "description"}
_KNOWN = _IGNORED | {
    "type",
    "properties",
    "additionalProperties",
    "required",
    "minLength",
    "maxLength",
    "maxItems",
    "items",
    "pattern",
    "enum",
    "const",
    "format",
}
# Names each compiled function binds as parameter defaults.
_LOCALS = ("_MISSING", "_new", "type", "len", "str", "bool", "dict", "list", "tuple")
_PYTHON_TYPES = {"object": "dict", "array": "list", "string": "str", "boolean": "bool"}


class _Compiler:
    """Emits the checks of a schema as straight-line Python; each checked value is rebound to
    its model form (``classes``), and strings are counted in ``n``."""

    def __init__(self, classes: Mapping[str, type], root_marks: Mapping[str, Any] | None = None) -> None:
        self.lines: list[str] = []
        self.names: dict[str, Any] = {
            "_MISSING": object(),
            "_is_date_time": _timestamps.is_valid,
            "_new": object.__new__,
        }
        self.counter = 0
        self.classes = classes
        self.root_marks = dict(root_marks or {})
        self.fail = "return None"

    def constant(self, value: Any) -> str:
        self.counter += 1
        name = f"_c{self.counter}"
        self.names[name] = value
        return name

    def variable(self) -> str:
        self.counter += 1
        return f"v{self.counter}"

    def emit(self, indent: int, line: str) -> None:
        self.lines.append("    " * indent + line)

    def node(self, schema: Mapping[str, Any], var: str, indent: int, where: str) -> None:
        unknown = set(schema) - _KNOWN
        if unknown:
            raise ValueError(f"the schema compiler cannot compile keywords {sorted(unknown)}")
        kind = schema.get("type")
        if kind not in _PYTHON_TYPES:
            raise ValueError(f"the schema compiler cannot compile type {kind!r}")
        if kind == "string":  # the commonest node: one test, joined with `or`
            tests = " or ".join([f"type({var}) is not str", *self.string(schema, var)])
            self.emit(indent, f"if {tests}: {self.fail}")
            return
        self.emit(indent, f"if type({var}) is not {_PYTHON_TYPES[kind]}: {self.fail}")
        if kind == "object":
            self.object(schema, var, indent, where)
        elif kind == "array":
            self.array(schema, var, indent, where)

    def array(self, schema: Mapping[str, Any], var: str, indent: int, where: str) -> None:
        if "maxItems" in schema:
            self.emit(indent, f"if len({var}) > {int(schema['maxItems'])}: {self.fail}")
        items = schema.get("items")
        if items is None:
            raise ValueError(f"the schema compiler cannot build {where}: its items have no schema")
        item = self.variable()
        built = self.variable() if items.get("type") in ("object", "array") else None
        if built is not None:
            self.emit(indent, f"{built} = []")
        self.emit(indent, f"for {item} in {var}:")
        self.node(items, item, indent + 1, where + "[]")
        if built is not None:
            self.emit(indent + 1, f"{built}.append({item})")
            self.emit(indent, f"{var} = tuple({built})")
        else:
            if items.get("type") == "string":
                self.emit(indent, f"n += len({var})")
            self.emit(indent, f"{var} = tuple({var})")

    def object(self, schema: Mapping[str, Any], var: str, indent: int, where: str) -> None:
        properties: Mapping[str, Any] = schema.get("properties", {})
        # A required member is read by subscript: a KeyError when missing makes the function
        # answer None (see function()), so no key test is spent on it.
        unread = set(schema.get("required", ())) - set(properties)
        if unread:
            raise ValueError(f"the schema compiler reads required members from properties: {sorted(unread)} at {where}")
        # With additionalProperties false, the members read are counted down as optional ones
        # turn out absent: the object holds no other member exactly when its length is that
        # count (its keys are distinct).
        known = None
        if schema.get("additionalProperties", True) is False:
            known = self.variable()
            self.emit(indent, f"{known} = {len(properties)}")
        elif schema.get("additionalProperties", True) is not True:
            raise ValueError("the schema compiler compiles only additionalProperties: false")
        cls = self.model_class(where, properties)
        required = set(schema.get("required", ()))
        # Each member is a name and, when a string, a string value too; optional members of
        # other types are taken off where they turn up. The count relies on every required
        # member of the CMP schemas being a string.
        if any(properties[name].get("type") != "string" for name in required):
            raise ValueError(f"the builder counts strings assuming required members at {where} are strings")
        self.emit(indent, f"n += 2 * len({var})")
        members: dict[str, str] = {}
        for name, subschema in properties.items():
            member = members[name] = self.variable()
            if name in required:  # read by subscript: a KeyError if missing (function())
                self.emit(indent, f"{member} = {var}[{name!r}]")
                self.node(subschema, member, indent, f"{where}.{name}")
                continue
            self.emit(indent, f"{member} = {var}.get({name!r}, _MISSING)")
            self.emit(indent, f"if {member} is not _MISSING:")
            if subschema.get("type") != "string":
                self.emit(indent + 1, "n -= 1")
            self.node(subschema, member, indent + 1, f"{where}.{name}")
            self.emit(indent, "else:")
            self.emit(indent + 1, f"{member} = {self.constant(_default(cls, name))}")
            if known is not None:
                self.emit(indent + 1, f"{known} -= 1")
        if known is not None:
            self.emit(indent, f"if len({var}) != {known}: {self.fail}")
        self.construct(cls, members, var, indent, self.root_marks if where == "$" else {})

    def model_class(self, where: str, properties: Mapping[str, Any]) -> type:
        cls = self.classes.get(where)
        if cls is None:
            raise ValueError(f"the schema compiler has no model class for {where}")
        if not is_dataclass(cls):
            raise ValueError(f"the schema compiler builds dataclasses, and {cls.__name__} is none")
        names = {f.name for f in fields(cls)}
        stray = set(properties) - names
        if stray:
            raise ValueError(f"{cls.__name__} has no field for {sorted(stray)} of {where}")
        return cls

    def construct(self, cls: type, members: Mapping[str, str], var: str, indent: int, marks: Mapping[str, Any]) -> None:
        draft = self.constant(draft_class(cls))
        built = self.variable()
        self.emit(indent, f"{built} = _new({draft})")
        for field in fields(cls):
            if field.name in members:
                value = members[field.name]
            elif field.name in marks:
                value = self.constant(marks[field.name])
            else:
                value = self.constant(_default(cls, field.name))
            self.emit(indent, f"{built}.{field.name} = {value}")
        self.emit(indent, f"{built}.__class__ = {self.constant(cls)}")
        self.emit(indent, f"{var} = {built}")

    def string(self, schema: Mapping[str, Any], var: str) -> list[str]:
        tests = []
        if "minLength" in schema or "maxLength" in schema:
            low, high = int(schema.get("minLength", 0)), schema.get("maxLength")
            if high is None:
                tests.append(f"len({var}) < {low}")
            elif low == 0:
                tests.append(f"len({var}) > {int(high)}")
            else:
                tests.append(f"not {low} <= len({var}) <= {int(high)}")
        if "const" in schema:
            tests.append(f"{var} != {self.constant(schema['const'])}")
        if "enum" in schema:
            tests.append(f"{var} not in {self.constant(frozenset(schema['enum']))}")
        if "pattern" in schema:
            tests.append(f"not {self.constant(Matcher(schema['pattern']).matches)}({var})")
        if "format" in schema:
            if schema["format"] != "date-time":
                raise ValueError(f"the schema compiler cannot compile format {schema['format']!r}")
            tests.append(f"not _is_date_time({var})")
        return tests

    def function(self, name: str, label: str, first: str, last: str) -> Callable[..., Any]:
        # Builtins as defaults: locals are the cheapest names to look up.
        defaults = ", ".join(f"{local}={local}" for local in _LOCALS)
        header = f"def {name}(packet, {defaults}):\n    try:\n"
        body = ["    " + first, *self.lines, "    " + last]
        # Only a required member's subscript raises KeyError in the body (every other
        # member is read with get(), every set test is `in`): it is missing.
        missing = ["    except KeyError:", f"        {self.fail}"]
        source = header + "\n".join(["    " + line for line in body] + missing) + "\n"
        return define(name, label, source, self.names)


def _default(cls: type, name: str) -> Any:
    for field in fields(cls):
        if field.name == name:
            if field.default is MISSING:
                raise ValueError(f"{cls.__name__}.{name} is optional in the schema but has no default")
            return field.default
    raise ValueError(f"{cls.__name__} has no field {name}")


def compile_builder(
    schema: Mapping[str, Any], classes: Mapping[str, type], root_marks: Mapping[str, Any] | None = None
) -> Callable[[Any], tuple[Any, int] | None]:
    """A function that returns None when ``schema`` refuses its argument, else (model, strings).
    ``classes`` maps each object's schema location (``$.decisions[]``) to its dataclass.
    ``root_marks`` sets root fields that are not members (``_known``). ``strings`` counts
    member names plus string values: against the source's quotes it tells whether the
    parser dropped a duplicate member.
    """
    compiler = _Compiler(classes, root_marks)
    compiler.node(schema, "packet", 1, "$")
    label = f"builder of {schema.get('$id', 'a schema')}"
    build: Callable[[Any], tuple[Any, int] | None] = compiler.function("build", label, "n = 0", "return packet, n")
    return build


def most_strings(schema: Mapping[str, Any]) -> int | None:
    """The most strings (member names and string values) a value ``schema`` admits can hold, as the
    builder counts them; None when unbounded (an array without maxItems, any member allowed)."""
    kind = schema.get("type")
    if kind == "string":
        return 1
    if kind == "boolean":
        return 0
    if kind == "array":
        inner = most_strings(schema.get("items", {}))
        return None if inner is None or "maxItems" not in schema else int(schema["maxItems"]) * inner
    if kind == "object" and schema.get("additionalProperties", True) is False:
        total = 0
        for subschema in schema.get("properties", {}).values():
            inner = most_strings(subschema)
            if inner is None:
                return None
            total += 1 + inner  # the name, and what its value holds
        return total
    return None
