"""The canonical writer, generated from the schemas' members as one straight-line Python
function, so it cannot drift from the schemas. The escaping is :mod:`cmp._canonical`'s.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace

from cmp._codegen import define
from cmp._timestamps import canonical as canonical_time
from cmp.model import Packet
from cmp.schema import Member, members

# The members the state digest leaves out (specification 9.7).
_IDENTITY = frozenset({"id", "created_at"})
_QUOTE, _NEWLINE = '"', "\n"
_NEXT = ",\n"  # what follows every member but an object's or array's last


@dataclass(frozen=True, slots=True)
class _State:
    """The layout written since the last string, as far as the generator knows it: ``p``
    (when ``runtime``) and ``suffix``, or with an ``alternative`` (condition, text) that text
    when the condition holds. ``started``: a member of the innermost object was surely written.
    """

    runtime: bool
    suffix: str
    started: bool = False
    alternative: tuple[str, str] | None = None

    def code(self, more: str = "") -> str:
        """A Python expression for this layout followed by ``more``."""
        text = self.suffix + more
        if self.alternative is not None:
            condition, other = self.alternative
            return f"({other + more!r} if {condition} else {text!r})"
        if not self.runtime:
            return repr(text)
        return f"p + {text!r}" if text else "p"

    def then(self, more: str) -> _State:
        alternative = self.alternative and (self.alternative[0], self.alternative[1] + more)
        return replace(self, suffix=self.suffix + more, alternative=alternative)

    def known(self) -> bool:
        """Whether the text is a constant (or a choice of two), known while generating."""
        return not self.runtime

    def held(self) -> bool:
        """Whether ``p`` holds all of it."""
        return self.runtime and not self.suffix


class _WriterSource:
    """The canonical writer's source: pieces alternating layout and string, the layout between
    two strings one constant wherever it is known while generating (else kept in ``p``).
    """

    def __init__(self, objects: Mapping[str, tuple[Member, ...]]) -> None:
        self.objects = objects  # the members of each object, by location (cmp.schema.layout)
        self.lines: list[str] = []
        self.counter = 0

    def emit(self, level: int, line: str) -> None:
        self.lines.append("    " * level + line)

    def variable(self, stem: str) -> str:
        self.counter += 1
        return f"{stem}{self.counter}"

    def object(self, location: str, value: str, indent: str, state: _State, level: int, trail: str) -> _State:
        """Write the object ``value``, whose ``{\n`` ends ``state``; the state after its ``}`` and ``trail``."""
        outer = state.started
        state = replace(state, started=False)
        for member in self.objects[location]:
            access = f"{value}.{member.name}"
            if member.required and not (location == "$" and member.name in _IDENTITY):
                state = replace(self.member(member, access, indent + "  ", state, level), started=True)
                continue
            condition = access
            if location == "$" and member.name in _IDENTITY:
                condition = "identity"
            elif member.kind in ("object", "objects", "strings"):  # used again inside: read once
                held = self.variable("v")
                condition, access = f"({held} := {access})", held
                if member.kind == "object":
                    condition += " is not None"
            state = self.optional(member, condition, access, indent + "  ", state, level)
        return replace(self.close(state, indent, "}", trail, level), started=outer)

    def optional(self, member: Member, condition: str, access: str, indent: str, state: _State, level: int) -> _State:
        """Write ``member`` under ``if condition:``: a state that holds whichever way the ``if`` went."""
        if state.alternative is not None or (state.runtime and state.suffix):
            self.emit(level, f"p = {state.code()}")
            state = _State(True, "", state.started)
        mark = len(self.lines)
        self.emit(level, f"if {condition}:")
        after = self.member(member, access, indent, state, level + 1)
        if after.known() and state.known():
            if after.suffix == state.suffix:
                return state  # the same layout either way
            if len(self.lines) == mark + 1 and after.alternative is None:  # only layout: choose where used
                self.lines.pop()
                return replace(state, alternative=(condition, after.suffix))
        if state.known():
            self.lines.insert(mark, "    " * level + f"p = {state.code()}")
        if not after.held():
            self.emit(level + 1, f"p = {after.code()}")
        return _State(True, "", state.started)

    def member(self, member: Member, access: str, indent: str, state: _State, level: int) -> _State:
        """Write ``member`` (its value is ``access``) at ``indent``, unconditionally."""
        head = f'{indent}"{member.name}": '
        if member.required and member.kind not in ("string", "timestamp"):
            raise ValueError(f"the canonical writer has no rule for a required {member.kind} ({member.name})")
        if member.kind in ("string", "timestamp"):
            text = f"_time({access})" if member.kind == "timestamp" else access
            self.emit(level, f"out += ({state.code(head + _QUOTE)}, {text})")
            return _State(False, _QUOTE + _NEXT, state.started)
        if member.kind == "boolean":  # optional: written only when true
            return state.then(head + "true" + _NEXT)
        if member.kind == "strings":
            item, between = self.variable("s"), _QUOTE + _NEXT + indent + "  " + _QUOTE
            self.emit(level, f"out += ({state.code(head + '[' + _NEWLINE + indent + '  ' + _QUOTE)}, {access}[0])")
            self.emit(level, f"for {item} in {access}[1:]:")
            self.emit(level + 1, f"out += ({between!r}, {item})")
            return _State(False, _QUOTE + _NEWLINE + indent + "]" + _NEXT, state.started)
        if member.kind == "object":
            return self.object(member.location, access, indent, state.then(head + "{" + _NEWLINE), level, _NEXT)
        # objects: each item's layout is known only at run time, so it is kept in p
        item = self.variable("o")
        self.emit(level, f"p = {state.code(head + '[' + _NEWLINE)}")
        self.emit(level, f"for {item} in {access}:")
        after = self.object(
            member.location, item, indent + "  ", _State(True, indent + "  {" + _NEWLINE), level + 1, _NEXT
        )
        if not after.held():
            self.emit(level + 1, f"p = {after.code()}")
        return replace(self.close(_State(True, "", True), indent, "]", _NEXT, level), started=state.started)

    def close(self, state: _State, indent: str, bracket: str, trail: str, level: int) -> _State:
        """The state after an object's or array's closing ``bracket`` and ``trail``."""
        end = _NEWLINE + indent + bracket + trail

        def closed(text: str) -> str:
            if text.endswith(_NEXT):  # a member was written last
                return text[: -len(_NEXT)] + end
            return text[: -len(_NEWLINE)] + bracket + trail  # nothing was written: {} on one line

        if state.known():
            alternative = state.alternative and (state.alternative[0], closed(state.alternative[1]))
            return replace(state, suffix=closed(state.suffix), alternative=alternative)
        if state.suffix:
            return replace(state, suffix=closed(state.suffix))
        if state.started:
            self.emit(level, f"p = p[:{-len(_NEXT)}] + {end!r}")
        else:
            empty = bracket + trail
            self.emit(level, f"p = p[:{-len(_NEXT)}] + {end!r} if p[-2] == ',' else p[:-1] + {empty!r}")
        return _State(True, "")


@functools.cache
def shipped_writer() -> Callable[[Packet, bool], list[str]]:
    """The canonical writer of the shipped schemas, generated once (on the first packet written)."""
    return compile_writer(members())


def compile_writer(objects: Mapping[str, tuple[Member, ...]]) -> Callable[[Packet, bool], list[str]]:
    """A canonical writer ``write(packet, identity)`` returning the text's pieces (``identity``
    False: without the members the digest leaves out). ValueError for a member no rule covers.
    """
    source = _WriterSource(objects)
    end = source.object("$", "packet", "", _State(False, "{" + _NEWLINE), 1, trail="")
    lines = ["def write(packet, identity, _time=_time):", "    out = []", *_one_extend_each(source.lines)]
    lines += [f"    out.append({end.code()})", "    return out"]
    write: Callable[[Packet, bool], list[str]] = define(
        "write", "canonical writer", "\n".join(lines) + "\n", {"_time": canonical_time}
    )
    return write


_EXTEND = "out += ("


def _one_extend_each(lines: list[str]) -> list[str]:
    """``lines`` with each run of ``out += (...)`` lines at one indent written as one
    (adjacent lines at the same indent are in the same block): one extend instead of two.
    """
    joined: list[str] = []
    for line in lines:
        body = line.lstrip(" ")
        if joined and body.startswith(_EXTEND):
            last = joined[-1]
            if last.lstrip(" ").startswith(_EXTEND) and len(last) - len(last.lstrip(" ")) == len(line) - len(body):
                joined[-1] = f"{last[:-1]}, {body[len(_EXTEND) :]}"
                continue
        joined.append(line)
    return joined
