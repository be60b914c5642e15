"""Lint: the format's writing rules as advice on a typed packet (docs/specification.md, clause 14).

Lint never changes what :func:`cmp.check` decides. A rule flags only what it is sure of
(its near misses are in the tests beside its hits). One RE2 set pass over the joined text
rules a clean packet clean; a flagged rule is confirmed only on the fields its screen matches.
"""

from __future__ import annotations

import bisect
import functools
import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Literal

import re2

from cmp._matcher import compile_set
from cmp._messages import capped, quote
from cmp.findings import Finding
from cmp.model import Packet
from cmp.schema import SUPPORTED_VERSIONS, load_schema


@dataclass(frozen=True, slots=True)
class Rule:
    """One lint rule: its stable id (a finding's ``keyword``) and its writing rule's number in clause 14."""

    id: str
    writing_rule: int
    summary: str


# Renaming an id is a breaking change: findings and the JSON output key on it.
# docs/specification.md, clause 14, lists the same table (a test holds them together).
RULES: tuple[Rule, ...] = (
    Rule("sentences", 1, "more sentences than the field takes"),
    Rule("transcript", 1, "speaker turns, as in a pasted conversation"),
    Rule("code", 2, "a code fence or a pasted code body"),
    Rule("local-url", 3, "an address of this machine or its local network names"),
    Rule("private-ip", 3, "a private or link-local IPv4 address"),
    Rule("host-port", 3, "a port number after a host, or on its own"),
    Rule("local-path", 3, "a home, temporary or mounted path, or a local project.ref"),
    Rule("env-var", 3, "an environment variable"),
    Rule("decision-question", 5, "a decision whose what is a question"),
    Rule("missing-learned", 6, "an attempt without learned"),
    Rule("unobservable-criterion", 8, "a success criterion worded as a feeling or impression"),
    Rule("missing-consequences", 9, "a locked decision without consequences (v0.2)"),
)
RULE_IDS: tuple[str, ...] = tuple(rule.id for rule in RULES)
_NUMBER = {rule.id: rule.writing_rule for rule in RULES}

# "one": goal, next_step (one sentence); "item": other prose (at most two); "criterion": a
# success criterion (an item that must be observable); "how": a method's how (any length,
# a one-line command allowed); "ref": project.ref (read only for local state).
Kind = Literal["one", "item", "criterion", "how", "ref"]
_SENTENCE_LIMIT: dict[Kind, int] = {"one": 1, "item": 2, "criterion": 2}
_OVER_LIMIT = {1: "more than one sentence", 2: "more than two sentences"}


def _finding(rule: str, path: str, text: str) -> Finding:
    return Finding("lint", path, f"{text} (writing rule {_NUMBER[rule]})", rule)


# Patterns. RE2 throughout: `\b`, `\d`, `\s` are ASCII, as in the redaction patterns.

_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
_IPV4 = r"\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}"
_PATH_CHARS = r"[A-Za-z0-9._/-]"

# A sentence ends at . ! or ? (closing quotes and brackets may follow), then whitespace,
# then (after opening quotes or brackets) an upper-case letter starts the next one.
_SENTENCE_END = re2.compile(r"[.!?][\"')\]\x{201D}\x{2019}]*[ \t\r\n]+[\"'(\[\x{201C}\x{2018}]*[A-Z]")
# Words whose full stop ends no sentence (lower case). Neither does a word holding a full
# stop of its own (e.g., v0.2.), nor a single letter or digit.
_ABBREVIATIONS = frozenset(
    "al approx art avg ca cf ch co corp dept dr eds ed eq esp est etc fig figs inc incl jr "
    "ltd max min misc mr mrs ms no nos op pp prof ref refs resp rev sec sr st ver viz vol vs".split()
)

_SPEAKER_TURN = re2.compile(
    r"(?im)^[ \t>*-]*(?:user|assistant|human|ai|system|model|claude|chatgpt|gpt|bot|agent)[ \t*_]*:"
)

_CODE_SIGNS = re2.compile(
    "|".join(
        (
            r"```",  # a fence
            r";[ \t\r\n]*\}",  # a statement closing a block
            r"\{[ \t\r]*\n",  # a block opened at the end of a line
            r"\bdef[ \t]+[A-Za-z_][A-Za-z0-9_]*[ \t]*\([^)\n]*\)[^:\n]*:",  # def name(args):
            r"\bfunction[ \t]*[A-Za-z_$]?[A-Za-z0-9_$]*[ \t]*\([^)\n]*\)[ \t]*\{",  # function f(x) {
            r"\bfunc[ \t]+(?:\([^)\n]*\)[ \t]*)?[A-Za-z_][A-Za-z0-9_]*[ \t]*\([^)\n]*\)[^{}\n]*\{",  # Go
            r"\bfn[ \t]+[A-Za-z_][A-Za-z0-9_]*[ \t]*(?:<[^>\n]*>)?[ \t]*\([^)\n]*\)[^{};\n]*\{",  # Rust
            r"=>[ \t\r\n]*\{",  # an arrow function's body
            r"#include[ \t]*[<\"]",
        )
    )
)

# Hosts that name this machine or its local network: in a URL, or (localhost) with a port.
_LOCAL_HOST = (
    r"(?:localhost|127\.\d{1,3}\.\d{1,3}\.\d{1,3}|\[::1\]|0\.0\.0\.0|"
    rf"(?:{_LABEL}\.)+(?:localhost|local|internal|lan|home\.arpa))"
)
_LOCAL_URL = re2.compile(
    "|".join(
        (
            rf"(?i:\b[a-z][a-z0-9+.-]*://)(?:[A-Za-z0-9._~%!$&'()*+,;=:-]*@)?{_LOCAL_HOST}",
            r"(?i:\bfile:/)" + _PATH_CHARS + "*",  # a file URL names this machine's files
            rf"\b(?:localhost|(?:{_LABEL}\.)+(?:localhost|internal|lan|home\.arpa)):\d{{1,5}}\b",  # with a port
            r"\b127\.\d{1,3}\.\d{1,3}\.\d{1,3}\b",  # loopback, bare
            r"\[::1\]",
            rf"\b(?:{_LABEL}\.)+local\b",  # an mDNS name, bare (my-laptop.local)
        )
    )
)
_PRIVATE_IP = re2.compile(rf"\b{_IPV4}\b")
# host:port, for a dotted host name or an IPv4 address; or a port alone after a space.
_HOST_PORT = re2.compile(rf"\b((?:{_LABEL}\.)+[A-Za-z]{{2,63}}|{_IPV4}):(\d{{1,5}})\b|(?:^|[ \t\r\n(\[])(:\d{{2,5}})\b")
_LOCAL_PATH = re2.compile(r"(?:\B~|\B/(?:tmp|private|Volumes|mnt|media))/" + _PATH_CHARS + "+")
_ENV_VAR = re2.compile(
    r"\$\{[A-Za-z_][A-Za-z0-9_]*[}:#%/?=+-]|\$[A-Z_][A-Z0-9_]+\b|(?i:\$env:)[A-Za-z_][A-Za-z0-9_]*"
    r"|%[A-Za-z_][A-Za-z0-9_]+%"
)
_UNOBSERVABLE = re2.compile(
    r"(?i)\b(?:feels?|felt|feeling|seems?|seemed|(?:looks?|looking)[ \t]+(?:good|right|fine|better|ok|okay|nice|great)"
    r"|sounds?[ \t]+(?:good|right)|good[ \t]+enough|intuitive|lgtm)\b"
)

# The last label of a host name that takes a port: a two-letter country code, or one of
# these. A file name (main.go:42, README.md:3) is a place in code, not a host.
_TOP_LEVEL = frozenset(
    "com net org io dev app ai cloud edu gov mil int info biz xyz tech site online local internal lan test example "
    "invalid localhost arpa corp home".split()
)
_FILE_EXTENSIONS = frozenset(
    "py pyi go js jsx ts tsx rs rb md rst txt json yaml yml toml ini cfg conf sh c h cc cpp hpp cs java kt kts "
    "swift m mm php pl lua sql html htm css scss vue svelte ex exs erl hs ml fs dart scala clj zig nim jl log "
    "xml csv lock gradle proto tf mk cmake bat ps1".split()
)

# The last labels of host names local-url reports (with home.arpa).
_LOCAL_NAMES = frozenset(("localhost", "local", "internal", "lan"))


def _private(octets: tuple[int, ...]) -> bool:
    first, second = octets[0], octets[1]
    return (
        first == 10
        or (first == 172 and 16 <= second <= 31)
        or (first == 192 and second == 168)
        or (first == 169 and second == 254)
    )


def _octets(text: str) -> tuple[int, ...] | None:
    parts = tuple(int(part) for part in text.split("."))
    return parts if all(part <= 255 for part in parts) else None


# Finders read UTF-8 bytes, so RE2 need not map offsets back to characters. A byte of a
# multi-byte character is no word character, as for RE2's \b.
_WORD = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
_DIGITS = frozenset(b"0123456789")


def _alone(data: bytes, start: int, end: int, before: bytes = b".") -> bool:
    """Whether data[start:end] is not part of a longer token (1.10.0.0.1, a.b.local.json, app/x.local)."""
    if start > 0 and data[start - 1] in before:
        return False
    if end < len(data):
        after = data[end]
        if after in _WORD or after in b"_-":
            return False
        if after == ord(".") and end + 1 < len(data) and data[end + 1] in _WORD:
            return False
    return True


def _shown(found: bytes, data: bytes) -> str:
    """Matched bytes quoted for a message; not quoted when a redaction pattern matches the field."""
    return quote(found.decode("utf-8", "replace").strip(), within=data.decode("utf-8", "replace"))


# A finder returns the message for one field (UTF-8 bytes) of a kind, or None. It looks
# at no more than _CANDIDATES matches, so text crafted of near misses costs bounded steps.
_CANDIDATES = 16


def _candidates(pattern: Any, data: bytes) -> Iterator[Any]:
    return itertools.islice(pattern.finditer(data), _CANDIDATES)


_OPENERS = "\"'([\u201c\u2018"


def _sentences(data: bytes, kind: Kind) -> str | None:
    limit = _SENTENCE_LIMIT.get(kind)
    if limit is None:
        return None
    count = 1
    for match in _candidates(_SENTENCE_END, data):
        at = match.start()
        before = data[max(0, at - 40) : at]
        if not before or before[-1:].isspace():
            continue  # nothing before the mark: no sentence ends there
        if data[at] == ord("."):
            word = before.split()[-1].decode("utf-8", "ignore").lstrip(_OPENERS)
            if len(word) < 2 or "." in word or word.lower() in _ABBREVIATIONS:
                continue  # an abbreviation, an initial, a list number, a version
        count += 1
        if count > limit:
            return f"holds {_OVER_LIMIT[limit]}; more reads as a transcript"
    return None


def _transcript(data: bytes, kind: Kind) -> str | None:
    if kind == "ref":
        return None
    turns = [match.group() for match in _candidates(_SPEAKER_TURN, data)]
    if len(turns) < 2:
        return None
    return f"reads as a transcript: {len(turns)} speaker turns, the first {_shown(turns[0], data)}"


def _code(data: bytes, kind: Kind) -> str | None:
    if kind == "ref":
        return None
    match = _CODE_SIGNS.search(data)
    if match is None:
        return None
    # A method's how may be one command line; only a fence or several lines of code count there.
    if kind == "how" and b"\n" not in data and b"```" not in data:
        return None
    return f"holds code ({_shown(match.group(), data)}); name the file or symbol instead of pasting it"


def _local_url(data: bytes, kind: Kind) -> str | None:
    for match in _candidates(_LOCAL_URL, data):
        found = match.group()
        start, end = match.span()
        if found.startswith(b"["):
            if start > 0 and (data[start - 1] in _WORD or data[start - 1] in b"_])"):
                continue  # a slice, a[::1]
        elif not _alone(data, start, end, b"./\\-_~@"):
            continue  # settings.local.json, .env.local, http://db.internal.example.com
        elif found[0] in _DIGITS and _octets(found.decode()) is None:
            continue
        return f"names a local address {_shown(found, data)}; the packet is read on other machines"
    return None


def _private_ip(data: bytes, kind: Kind) -> str | None:
    for match in _candidates(_PRIVATE_IP, data):
        octets = _octets(match.group().decode())
        if octets is None or not _private(octets) or not _alone(data, match.start(), match.end()):
            continue
        return f"names a private network address {_shown(match.group(), data)}"
    return None


def _host_port(data: bytes, kind: Kind) -> str | None:
    for match in _candidates(_HOST_PORT, data):
        host, port, bare = match.group(1), match.group(2), match.group(3)
        if bare is not None:
            start, end, number = match.start(3), match.end(3), int(bare[1:])
        else:
            start, end, number = match.start(), match.end(), int(port)
            name = host.decode().lower()
            if name.replace(".", "").isdigit():
                octets = _octets(name)
                if octets is None or octets[0] == 127 or _private(octets):
                    continue  # not an address, or local-url or private-ip says so
            else:
                last = name.rsplit(".", 1)[1]
                if last in _LOCAL_NAMES or name.endswith(".home.arpa"):
                    continue  # local-url says so
                if last in _FILE_EXTENSIONS or not (len(last) == 2 or last in _TOP_LEVEL):
                    continue  # main.go:42 is a place in code
        if not 0 < number <= 65535:
            continue
        if end + 1 < len(data) and data[end] in b":." and data[end + 1] in _DIGITS:
            continue  # 10:30:00, file:12:5
        return f"names a port {_shown(data[start:end], data)}"
    return None


def _local_path(data: bytes, kind: Kind) -> str | None:
    if kind == "ref":
        ref = data.decode("utf-8", "replace")
        if _local_ref(ref):
            return f"is a path on this machine {quote(ref)}; a ref names a repository or URL"
    for match in _candidates(_LOCAL_PATH, data):
        if match.start() > 0 and data[match.start() - 1] in b"./~-\\":
            continue  # ./tmp/x is relative to the project
        # A path that ends a sentence does not take in its full stop: "~/notes.txt." names ~/notes.txt.
        return f"names a path on this machine {_shown(match.group().rstrip(b'.') or match.group(), data)}"
    return None


def _local_ref(ref: str) -> bool:
    """Whether a project.ref is a local path rather than a repository or URL."""
    if ref.startswith(("/", "~", "./", "../", "\\")) or ref.lower().startswith("file:"):
        return True
    return len(ref) > 2 and ref[0].isascii() and ref[0].isalpha() and ref[1] == ":" and ref[2] in "\\/"


def _env_var(data: bytes, kind: Kind) -> str | None:
    for match in _candidates(_ENV_VAR, data):
        found = match.group()
        if found.startswith(b"%") and match.start() > 0 and data[match.start() - 1] in _WORD:
            continue  # 5%OFF%
        return f"names an environment variable {_shown(found, data)}"
    return None


def _unobservable(data: bytes, kind: Kind) -> str | None:
    if kind != "criterion":
        return None
    match = _UNOBSERVABLE.search(data)
    if match is None:
        return None
    return f"is not observable ({_shown(match.group(), data)}); say what a reader can check without asking"


@dataclass(frozen=True, slots=True)
class _TextRule:
    """A lint rule that reads the packet's text."""

    rule: str
    # Matches wherever the rule can find something; its DFA stays small; never matches _JOIN.
    screen: str
    find: Callable[[bytes, Kind], str | None]


_TEXT_RULES: tuple[_TextRule, ...] = (
    _TextRule("sentences", r"[.!?][\"')\]\x{201D}\x{2019}]*[ \t\r\n]+[\"'(\[\x{201C}\x{2018}]*[A-Z]", _sentences),
    _TextRule(
        "transcript",
        r"(?i)\b(?:user|assistant|human|ai|system|model|claude|chatgpt|gpt|bot|agent)[ \t*_]*:",
        _transcript,
    ),
    _TextRule("code", r"```|;[ \t\r\n]*\}|\{[ \t\r]*\n|\bdef[ \t]|\bfunc|\bfn[ \t]|=>|#include", _code),
    _TextRule(
        "local-url",
        r"(?i)localhost|\b127\.\d|\[::1\]|0\.0\.0\.0|\.(?:local|internal|lan)\b|home\.arpa|file:/",
        _local_url,
    ),
    _TextRule("private-ip", r"\b(?:10|172|192|169)\.\d{1,3}\.\d{1,3}\.\d", _private_ip),
    _TextRule("host-port", r":\d", _host_port),
    _TextRule("local-path", r"~/|/(?:tmp|private|Volumes|mnt|media)/", _local_path),
    _TextRule("env-var", r"\$[A-Za-z_{]|%[A-Za-z_][A-Za-z0-9_]+%", _env_var),
    _TextRule("unobservable-criterion", _UNOBSERVABLE.pattern, _unobservable),
)
assert [r.rule for r in _TEXT_RULES] == [r for r in RULE_IDS if r in {t.rule for t in _TEXT_RULES}]
_LOCAL_PATH_RULE = [r.rule for r in _TEXT_RULES].index("local-path")

# No screen matches NUL and it is no word character: no match spans two fields.
_JOIN = "\x00"

_SCREEN = compile_set([rule.screen for rule in _TEXT_RULES])
_SCREEN_SEARCHES = tuple(re2.compile(rule.screen) for rule in _TEXT_RULES)


# The packet's text fields, in canonical order.


def _texts(packet: Packet) -> list[str]:
    out: list[str] = []
    if packet.project is not None:
        out.append(packet.project.ref)
    out.append(packet.goal)
    out.extend(packet.success_criteria)
    out.extend(packet.constraints)
    for decision in packet.decisions:
        out += (decision.what, decision.why, decision.consequences)
    for method in packet.methods:
        out += (method.when_applicable, method.how)
    for attempt in packet.attempts:
        out += (attempt.tried, attempt.learned)
    out.extend(packet.open_questions)
    out.append(packet.next_step)
    return out


def _places(packet: Packet) -> list[tuple[str, Kind]]:
    """The path and kind of each text of :func:`_texts`."""
    out: list[tuple[str, Kind]] = []
    if packet.project is not None:
        out.append(("$.project.ref", "ref"))
    out.append(("$.goal", "one"))
    out += [(f"$.success_criteria[{i}]", "criterion") for i in range(len(packet.success_criteria))]
    out += [(f"$.constraints[{i}]", "item") for i in range(len(packet.constraints))]
    for i in range(len(packet.decisions)):
        out += [(f"$.decisions[{i}].{member}", "item") for member in ("what", "why", "consequences")]
    for i in range(len(packet.methods)):
        out += [(f"$.methods[{i}].when_applicable", "item"), (f"$.methods[{i}].how", "how")]
    for i in range(len(packet.attempts)):
        out += [(f"$.attempts[{i}].tried", "item"), (f"$.attempts[{i}].learned", "item")]
    out += [(f"$.open_questions[{i}]", "item") for i in range(len(packet.open_questions))]
    out.append(("$.next_step", "one"))
    return out


def _utf8(text: str) -> bytes:
    """``text`` as UTF-8; a lone surrogate (only in a hand-built model, and no pattern names it) becomes U+FFFD."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass").decode("utf-8", "replace").encode("utf-8")


def _flagged(fields: list[bytes], joined: bytes, hits: list[int]) -> dict[int, list[int]]:
    """For each field index whose text a screen matches, those screens (one search per
    field over the joined text: no screen match spans the separator)."""
    starts = list(itertools.accumulate((len(data) + 1 for data in fields[:-1]), initial=0))
    flagged: dict[int, list[int]] = {}
    for index in hits:
        search, at = _SCREEN_SEARCHES[index].search, 0
        while (match := search(joined, at)) is not None:
            field = bisect.bisect_right(starts, match.start()) - 1
            flagged.setdefault(field, []).append(index)
            if field + 1 == len(starts):
                break
            at = starts[field + 1]  # on to the next field: one match per field is enough
    return flagged


@functools.cache
def _has_consequences(version: str) -> bool:
    """Whether the decisions of ``version`` have a consequences member (v0.2 on; not v0.1)."""
    if version not in SUPPORTED_VERSIONS:
        return False
    decision = load_schema(version).get("properties", {}).get("decisions", {}).get("items", {})
    return "consequences" in decision.get("properties", {})


def lint(packet: Packet) -> list[Finding]:
    """Lint findings (code ``lint``, ``keyword`` the rule id) for a typed :class:`cmp.Packet`,
    in canonical field order, then rule order; past 100, one ``truncated`` finding counts the rest."""
    if not isinstance(packet, Packet):
        raise TypeError(f"lint takes a cmp.Packet, not {type(packet).__name__}")
    found: list[Finding] = []
    texts = _texts(packet)
    joined = _utf8(_JOIN.join(texts))
    hits = _SCREEN.Match(joined)
    ref_local = packet.project is not None and _local_ref(packet.project.ref)
    places: list[tuple[str, Kind]] = []
    if hits or ref_local:
        places = _places(packet)
        fields = [_utf8(text) for text in texts]
        flagged = _flagged(fields, joined, sorted(hits or ()))
        if ref_local:  # project.ref's own local-path test needs no screen (it is the first text)
            flagged[0] = sorted({*flagged.get(0, ()), _LOCAL_PATH_RULE})
        for field in sorted(flagged):
            path, kind = places[field]
            for index in flagged[field]:
                rule = _TEXT_RULES[index]
                message = rule.find(fields[field], kind)
                if message is not None:
                    found.append(_finding(rule.rule, path, message))
    found += _structure(packet)
    if len(found) > 1:
        order = {path: n for n, (path, _) in enumerate(places or _places(packet))}
        found.sort(key=lambda f: (order[f.path], RULE_IDS.index(f.keyword or "")))
    return capped(found)


def _structure(packet: Packet) -> list[Finding]:
    """The rules about members rather than text: what a decision and an attempt hold."""
    out: list[Finding] = []
    consequences = _has_consequences(packet.ltm_version)
    for i, decision in enumerate(packet.decisions):
        if decision.what.rstrip().endswith("?"):
            out.append(
                _finding(
                    "decision-question",
                    f"$.decisions[{i}].what",
                    "is a question; a choice still open belongs in open_questions",
                )
            )
        if consequences and decision.locked and not decision.consequences.strip():
            out.append(
                _finding(
                    "missing-consequences",
                    f"$.decisions[{i}].consequences",
                    "a locked decision has no consequences; say what breaks if it is revisited",
                )
            )
    for i, attempt in enumerate(packet.attempts):
        if not attempt.learned.strip():
            out.append(
                _finding(
                    "missing-learned",
                    f"$.attempts[{i}].learned",
                    "an attempt has no learned; what it taught is the packet's payload",
                )
            )
    return out
