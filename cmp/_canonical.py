"""Canonical bytes: exactly what the reference's encoder writes for a parsed packet.

Written straight from the typed model (never from input bytes): two-space indent, one
member per line, no trailing newline, members in schema order, empty members left out,
strings escaped as Go's encoding/json escapes them (HTML-safe, U+2028/U+2029 escaped).
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable, Mapping
from json.encoder import encode_basestring
from typing import NamedTuple

from cmp._intake import MAX_PACKET_BYTES, size_finding
from cmp._timestamps import canonical as canonical_time
from cmp._validation import validate
from cmp.findings import Finding, PacketError
from cmp.model import Packet, to_obj
from cmp.schema import Member, members

# Python escapes quote, backslash and C0 controls exactly as Go does (short escapes for
# \b \f \n \r \t, lowercase \u00xx for the rest). Go also escapes these five. They can
# only occur inside strings (member names are fixed ASCII), so one pass over the whole
# text at the end is the same as escaping each string. Whether one is there is asked of
# the text (a string of narrow characters cannot hold U+2028: no search at all), and it
# is replaced in the UTF-8 bytes: a character's encoding is found only where the
# character is (UTF-8 synchronises), and bytes.replace skips to a single byte with
# memchr where str.replace reads every character (0.25 against 2 µs on 6.5 KB).
_GO_EXTRA = (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"), ("\u2029", "\\u2029"))
_GO_EXTRA_UTF8 = tuple((char, char.encode(), escape.encode()) for char, escape in _GO_EXTRA)


# The writer lays the text out as pieces that alternate: layout, string, layout, ...,
# layout. Strings go in as they stand; when some need escaping, all of them are escaped
# together in one C call over their join, split apart again at a separator that the
# escaper copies through unchanged and that no escape sequence can contain: DEL. (The
# ASCII-only escaper would write DEL as the six characters \u007f, which an escaped
# backslash followed by the text "u007f" also produces, so it is never used here.)
# When a string itself holds DEL, each string is escaped on its own.
_ESCAPE_SPLIT = "\x7f"

# The members the state digest leaves out (specification 9.7).
_IDENTITY = frozenset({"id", "created_at"})

_QUOTE, _NEWLINE = '"', "\n"
_NEXT = ",\n"  # what follows every member but an object's or array's last


class _State(NamedTuple):
    """The layout written since the last string, as far as the generator knows it.

    The text is the generated function's variable ``p`` when ``runtime``, followed by
    ``suffix``; or, when there is an ``alternative`` (condition, text), that text when the
    condition holds at run time and ``suffix`` when not (an optional boolean, whose
    ``true`` is layout). Between members it always ends with what the next member needs
    before its indent: ``,\n`` after a member, ``{\n`` at the start of an object.
    ``started`` says whether a member of the innermost open object is sure to have been
    written.
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
        return self._replace(suffix=self.suffix + more, alternative=alternative)

    def known(self) -> bool:
        """Whether the text is a constant (or a choice of two), known while generating."""
        return not self.runtime

    def held(self) -> bool:
        """Whether ``p`` holds all of it."""
        return self.runtime and not self.suffix


class _WriterSource:
    """The canonical writer as straight-line Python, generated from :func:`cmp.schema.members`.

    The member order, which members are required and "an optional member is written only
    when it is not empty" come from the schemas, so the writer cannot drift from them.
    The generated function returns the text as pieces that alternate layout and string
    (see ``_ESCAPE_SPLIT``): one ``+=`` per string, the layout between two strings folded
    into one constant wherever it is known while generating. It is not known only after
    an optional member that may or may not have been written; then it is kept in ``p``.
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
        state = state._replace(started=False)
        for member in self.objects[location]:
            access = f"{value}.{member.name}"
            if member.required and not (location == "$" and member.name in _IDENTITY):
                state = self.member(member, access, indent + "  ", state, level)._replace(started=True)
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
        return self.close(state, indent, "}", trail, level)._replace(started=outer)

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
                return state._replace(alternative=(condition, after.suffix))
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
        return self.close(_State(True, "", True), indent, "]", _NEXT, level)._replace(started=state.started)

    def close(self, state: _State, indent: str, bracket: str, trail: str, level: int) -> _State:
        """The state after an object's or array's closing ``bracket`` and ``trail``."""
        end = _NEWLINE + indent + bracket + trail

        def closed(text: str) -> str:
            if text.endswith(_NEXT):  # a member was written last
                return text[: -len(_NEXT)] + end
            return text[: -len(_NEWLINE)] + bracket + trail  # nothing was written: {} on one line

        if state.known():
            alternative = state.alternative and (state.alternative[0], closed(state.alternative[1]))
            return state._replace(suffix=closed(state.suffix), alternative=alternative)
        if state.suffix:
            return state._replace(suffix=closed(state.suffix))
        if state.started:
            self.emit(level, f"p = p[:{-len(_NEXT)}] + {end!r}")
        else:
            empty = bracket + trail
            self.emit(level, f"p = p[:{-len(_NEXT)}] + {end!r} if p[-2] == ',' else p[:-1] + {empty!r}")
        return _State(True, "")


@functools.cache
def _writer() -> Callable[[Packet, bool], list[str]]:
    """The canonical writer of the shipped schemas (made on first use: start-up does not pay)."""
    return compile_writer(members())


def compile_writer(objects: Mapping[str, tuple[Member, ...]]) -> Callable[[Packet, bool], list[str]]:
    """A canonical writer for objects with these members: ``write(packet, identity)`` returns
    the pieces of the text; ``identity`` False leaves out the members the state digest does
    not cover. Raises ValueError for a member the layout rules do not cover.
    """
    from cmp._compiler import define  # on first use: check of a small packet never writes one

    source = _WriterSource(objects)
    end = source.object("$", "packet", "", _State(False, "{" + _NEWLINE), 1, trail="")
    lines = ["def write(packet, identity, _time=_time):", "    out = []", *source.lines]
    lines += [f"    out.append({end.code()})", "    return out"]
    write: Callable[[Packet, bool], list[str]] = define(
        "write", "canonical writer", "\n".join(lines) + "\n", {"_time": canonical_time}
    )
    return write


def _escape_strings(pieces: list[str]) -> None:
    """Escape the strings among ``pieces`` in place, if any of them needs it."""
    strings = pieces[1::2]
    joined = "".join(strings)  # the model's constructors admit only str members
    if '"' not in joined and "\\" not in joined and joined.isprintable():
        return  # isprintable() also balks at some characters that need no escape; harmless
    if _ESCAPE_SPLIT in joined:
        pieces[1::2] = [encode_basestring(text)[1:-1] for text in strings]
    else:
        pieces[1::2] = encode_basestring(_ESCAPE_SPLIT.join(strings))[1:-1].split(_ESCAPE_SPLIT)


# The characters JSON escapes that the layout holds; it holds no other (member names are
# fixed ASCII words). So when the strings' characters to escape are none of these, as in
# a packet read from C:\\Users (cmp._quick, fact 4: only the backslash), each of them
# can be escaped throughout the text at once, backslash first: the escapes of the others
# write backslashes that must stay single. The tests hold the layout to this.
_IN_LAYOUT = frozenset('"\n')


def _render(packet: Packet, identity: bool) -> bytes:
    """The canonical bytes (with ``identity`` False, without the members the digest leaves out)."""
    pieces = _writer()(packet, identity)
    escaped = packet._known.escaped  # what the strings may hold that needs escaping, if known
    throughout = escaped is not None and _IN_LAYOUT.isdisjoint(escaped)
    if not throughout:
        _escape_strings(pieces)
    text = "".join(pieces)
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:
        raise _surrogate_error(text) from None
    if throughout and escaped:
        for char in sorted(escaped, key="\\".__ne__):  # the backslash first
            data = data.replace(char.encode(), encode_basestring(char)[1:-1].encode())
    for char, char_utf8, escape in _GO_EXTRA_UTF8:
        if char in text:
            data = data.replace(char_utf8, escape)
    return data


def _surrogate_error(text: str) -> PacketError:
    """Why a text holding a lone surrogate has no canonical bytes: where it is in the text
    as written, Go's escapes included."""
    for char, escape in _GO_EXTRA:
        text = text.replace(char, escape)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return PacketError([Finding("json", "$", f"invalid json: lone surrogate at index {exc.start}")])
    raise AssertionError("no lone surrogate")  # pragma: no cover - called for one


def encode(packet: Packet) -> bytes:
    """Canonical bytes of a packet, without validating it (see :func:`dumps`)."""
    return _render(packet, identity=True)


def file_bytes(canonical: bytes) -> bytes:
    """A packet's canonical bytes as a file holds them (specification 9.8).

    One final newline, as editors and end-of-file fixers keep text files, except after
    canonical bytes already at the size limit: there the newline would make a file that
    every reader refuses as too large, so the file is the canonical bytes alone.
    """
    return canonical + b"\n" if len(canonical) < MAX_PACKET_BYTES else canonical


# No packet's canonical form is more than this many times the length of the JSON text it
# was read from: the most any byte of that text can become is `<`, `>` or `&` turning
# into a six-byte escape, and every line break and indent the layout adds is paid for by
# quotes, brackets and commas the text had to hold (at worst 2.7 bytes of layout for a
# 3-byte `"",`). So a text of at most 32,768 / 6 bytes never needs measuring; the tests
# hold the bound over generated packets and the worst shapes.
MAX_GROWTH = 6


def growth_finding(packet: Packet, source_bytes: int) -> Finding | None:
    """The ``size`` finding for a packet whose canonical form would exceed 32,768 bytes.

    ``source_bytes`` is the length of the text the packet was read from. A packet may be
    within the limit as written and over it in canonical form (indentation, escapes); the
    reference stores such a packet and then cannot read its own bytes back.
    """
    if source_bytes * MAX_GROWTH <= MAX_PACKET_BYTES:
        return None
    data = encode(packet)
    size = len(data)
    if size <= MAX_PACKET_BYTES:
        if packet._known.conforming:  # dumps will want them: written once, not twice
            object.__setattr__(packet, "_known", packet._known._replace(canonical=data))
        return None
    return Finding(
        "size",
        "$",
        f"canonical form is {size} bytes, max is {MAX_PACKET_BYTES} (the packet as written is {source_bytes} bytes)",
    )


def dumps(packet: Packet) -> bytes:
    """Canonical bytes of a conforming packet.

    Raises :class:`cmp.PacketError` when the packet does not conform to its
    version's schema, or when its canonical form (indented) exceeds 32,768 bytes.
    Normalises as the reference does: empty optional members and ``locked: false``
    are left out, members are put in schema order, and created_at loses trailing
    fraction zeros and writes a zero offset as ``Z``.
    """
    if not isinstance(packet, Packet):
        raise TypeError(f"dumps() takes a cmp.Packet, not {type(packet).__name__}")
    findings, data = judged(packet)
    if data is None:
        raise PacketError(findings)
    return data


def judged(packet: Packet) -> tuple[list[Finding], bytes | None]:
    """(why not, None) for a packet that does not conform, else ([], its canonical bytes).

    What conforming means for a typed packet: its data passes its version's schema (and
    holds no lone surrogate), and its canonical form fits 32,768 bytes.
    """
    known = packet._known
    if known.canonical is not None:
        return [], known.canonical
    if not known.conforming:
        # Construction already refused members of the wrong type; values are judged here.
        findings = validate(to_obj(packet))
        if findings:
            return findings, None
    data = encode(packet)  # validate() reported any lone surrogate, which alone could stop it
    if len(data) > MAX_PACKET_BYTES:
        return [size_finding(len(data))], None
    return [], data


def state_digest(packet: Packet) -> str:
    """``sha256:<hex>`` of the canonical bytes with ``id`` and ``created_at`` left out.

    Two emissions of the same session state compare equal (specification 9.7: idempotent
    modulo id and created_at).
    """
    if not isinstance(packet, Packet):
        raise TypeError(f"state_digest() takes a cmp.Packet, not {type(packet).__name__}")
    return "sha256:" + hashlib.sha256(_render(packet, identity=False)).hexdigest()
