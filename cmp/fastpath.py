"""The fast acceptance path: a schema compiled to one plain Python function per version.

It answers only "valid or not", and only for the keywords the CMP schemas use; the
detailed jsonschema path (:mod:`cmp.explain`) runs when it says "not valid", to explain
why. Both read the same schema file, and the tests hold them to identical verdicts over
the conformance vectors and generated packets. A keyword the compiler does not know
makes compilation fail, so a schema change cannot silently weaken the fast path.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from cmp import timestamps
from cmp.patterns import Matcher

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
_PYTHON_TYPES = {"object": "dict", "array": "list", "string": "str", "boolean": "bool"}


class _Compiler:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.names: dict[str, Any] = {"_MISSING": object(), "_is_date_time": timestamps.is_valid}
        self.counter = 0

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

    def node(self, schema: Mapping[str, Any], var: str, indent: int) -> None:
        unknown = set(schema) - _KNOWN
        if unknown:
            raise ValueError(f"fast path cannot compile keywords {sorted(unknown)}")
        kind = schema.get("type")
        if kind not in _PYTHON_TYPES:
            raise ValueError(f"fast path cannot compile type {kind!r}")
        self.emit(indent, f"if type({var}) is not {_PYTHON_TYPES[kind]}: return False")
        if kind == "object":
            self.object(schema, var, indent)
        elif kind == "array":
            if "maxItems" in schema:
                self.emit(indent, f"if len({var}) > {int(schema['maxItems'])}: return False")
            if "items" in schema:
                item = self.variable()
                self.emit(indent, f"for {item} in {var}:")
                self.node(schema["items"], item, indent + 1)
        elif kind == "string":
            self.string(schema, var, indent)

    def object(self, schema: Mapping[str, Any], var: str, indent: int) -> None:
        properties: Mapping[str, Any] = schema.get("properties", {})
        if schema.get("required"):
            self.emit(indent, f"if not {var}.keys() >= {self.constant(frozenset(schema['required']))}: return False")
        if schema.get("additionalProperties", True) is False:
            self.emit(indent, f"if not {var}.keys() <= {self.constant(frozenset(properties))}: return False")
        elif schema.get("additionalProperties", True) is not True:
            raise ValueError("fast path compiles only additionalProperties: false")
        required = set(schema.get("required", ()))
        for name, subschema in properties.items():
            member = self.variable()
            if name in required:  # present: checked above
                self.emit(indent, f"{member} = {var}[{name!r}]")
                self.node(subschema, member, indent)
                continue
            self.emit(indent, f"{member} = {var}.get({name!r}, _MISSING)")
            self.emit(indent, f"if {member} is not _MISSING:")
            self.node(subschema, member, indent + 1)

    def string(self, schema: Mapping[str, Any], var: str, indent: int) -> None:
        if "minLength" in schema or "maxLength" in schema:
            low, high = int(schema.get("minLength", 0)), schema.get("maxLength")
            if high is None:
                self.emit(indent, f"if len({var}) < {low}: return False")
            elif low == 0:
                self.emit(indent, f"if len({var}) > {int(high)}: return False")
            else:
                self.emit(indent, f"if not {low} <= len({var}) <= {int(high)}: return False")
        if "const" in schema:
            self.emit(indent, f"if {var} != {self.constant(schema['const'])}: return False")
        if "enum" in schema:
            self.emit(indent, f"if {var} not in {self.constant(frozenset(schema['enum']))}: return False")
        if "pattern" in schema:
            matches = self.constant(Matcher(schema["pattern"]))
            self.emit(indent, f"if not {matches}({var}): return False")
        if "format" in schema:
            if schema["format"] != "date-time":
                raise ValueError(f"fast path cannot compile format {schema['format']!r}")
            self.emit(indent, f"if not _is_date_time({var}): return False")


def compile_acceptor(schema: Mapping[str, Any]) -> Callable[[Any], bool]:
    """A function that returns True exactly when ``schema`` accepts its argument."""
    compiler = _Compiler()
    compiler.node(schema, "packet", 1)
    # Builtins as defaults: locals are the cheapest names to look up.
    header = "def accept(packet, _MISSING=_MISSING, type=type, len=len, str=str, bool=bool, dict=dict, list=list):\n"
    source = header + "\n".join(compiler.lines) + "\n    return True\n"
    namespace = dict(compiler.names)
    exec(compile(source, "<cmp fast path>", "exec"), namespace)
    accept: Callable[[Any], bool] = namespace["accept"]
    return accept
