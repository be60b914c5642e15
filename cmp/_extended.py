"""The extended rule set: opt-in patterns for the credentials agents actually hold.

``rules="extended"`` (``--rules extended``) adds these to the pre-flight. They are this
implementation's extension, not part of the format: the reference's ten patterns
(:mod:`cmp._redaction`) stay the conformance contract, and with the default rules
nothing here runs. With the extended rules:

- the default ten patterns run over the default fields exactly as before, and their
  findings come first, unchanged;
- the patterns below run over the default fields and the members the reference leaves
  out (:data:`EXTRA_FIELDS`), and, for a refused packet in lenient mode, over every
  string and member name anywhere in the document; their findings follow, each marked
  ``profile="extended"``, and block like the default ones.

Precision comes first, since one finding blocks a whole packet: every pattern starts
from a format's public prefix or fixed structure, and where a format carries a
checksum (GitHub's classic tokens and npm's end in a CRC32 of their random part) or a
value must look random, a check in :data:`CHECKS` rules look-alikes out. No rule rests
on entropy alone. The README lists each rule, an example shape and why it is precise.

Each pattern also has a ``screen``: its public prefix, which matches wherever the
pattern does. One RE2 set pass over the screens rules most texts clean; a flagged text
is then searched with the patterns that flagged it, field by field. No pattern or
screen is anchored, so the quick path's fact 2 holds for this table too
(:mod:`cmp._quick` asserts it on import).
"""

from __future__ import annotations

import functools
import zlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import is_dataclass
from typing import TYPE_CHECKING, Any, Literal

import re2

from cmp._matcher import compile_set
from cmp._redaction import PATTERNS, Pattern, Redaction, lenient_texts, texts
from cmp._redaction import redact as redact_default
from cmp._redaction import redact_obj as redact_default_obj
from cmp.findings import BoundedPath

if TYPE_CHECKING:
    from cmp.model import Packet

Rules = Literal["default", "extended"]
RULES: tuple[Rules, ...] = ("default", "extended")
PROFILE = "extended"

# Scanned with the extended patterns after the default fields (cmp._redaction.SCANNED_FIELDS),
# in this order, under these names (`tags[0]`, `methods[1].name`, `provenance.author_model`).
EXTRA_FIELDS: tuple[str, ...] = (
    "project.name",
    "project.ref",
    "methods[].name",
    "tags[]",
    "provenance.author_model",
    "provenance.author_human",
    "provenance.source_hash",
)

_B64URL = "[A-Za-z0-9_-]"
_SPACE = "[ \\t\\n\\f\\r]+"  # clause 8.2's whitespace, as the default ssh-public-key has it

EXTENDED_PATTERNS: tuple[Pattern, ...] = (
    Pattern("github-token", r"\bgh[pousr]_[A-Za-z0-9]{36}\b", screen=r"\bgh[pousr]_"),
    Pattern("github-fine-grained-token", r"\bgithub_pat_[A-Za-z0-9]{22}_[A-Za-z0-9]{59}\b", screen=r"\bgithub_pat_"),
    Pattern(
        "openai-key",
        rf"\bsk-(?:(?:proj|svcacct|admin)-)?{_B64URL}{{20,}}T3BlbkFJ{_B64URL}{{20,}}",
        screen=r"\bsk-",
    ),
    Pattern("anthropic-key", rf"\bsk-ant-(?:api|admin|oat|ort)[0-9]{{2}}-{_B64URL}{{32,}}", screen=r"\bsk-ant-"),
    Pattern("huggingface-token", r"\bhf_[A-Za-z0-9]{34}\b", screen=r"\bhf_"),
    Pattern(
        "gitlab-token",
        rf"\bgl(?:pat|dt|rt|ptt|oas|ft|cbt|imt|agent|soat|ffct)-{_B64URL}{{20,}}",
        screen=r"\bgl(?:pat|dt|rt|ptt|oas|ft|cbt|imt|agent|soat|ffct)-",
    ),
    Pattern("npm-token", r"\bnpm_[A-Za-z0-9]{36}\b", screen=r"\bnpm_"),
    Pattern("pypi-token", rf"\bpypi-AgE(?:IcHlwaS5vcmc|NdGVzdC5weXBpLm9yZw){_B64URL}{{50,}}", screen=r"\bpypi-AgE"),
    Pattern("slack-app-token", r"\bxapp-[0-9]+-[A-Z0-9]{8,}-[0-9]{8,}-[A-Za-z0-9]{32,}", screen=r"\bxapp-"),
    Pattern("slack-config-token", r"\bxoxe(?:\.xox[bp])?-[0-9]+-[A-Za-z0-9-]{40,}", screen=r"\bxoxe[.-]"),
    Pattern(
        "slack-webhook",
        r"\bhooks\.slack\.com/(?:services/T[A-Z0-9]{6,}/B[A-Z0-9]{6,}/[A-Za-z0-9]{20,}"
        r"|(?:workflows|triggers)/T[A-Z0-9]{6,}/[A-Za-z0-9]{6,}/[A-Za-z0-9/]{10,})",
        screen=r"\bhooks\.slack\.com/",
    ),
    Pattern(
        "discord-webhook",
        rf"\bdiscord(?:app)?\.com/api/webhooks/[0-9]{{17,20}}/{_B64URL}{{60,}}",
        screen=r"\bdiscord(?:app)?\.com/api/webhooks/",
    ),
    Pattern(
        "pem-private-key",
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----",
        mask="-----BEGIN …",
        screen=r"-----BEGIN ",
    ),
    Pattern("putty-private-key", r"\bPuTTY-User-Key-File-[0-9]+:", mask="PuTTY-User-Key-File-…"),
    Pattern(
        "ssh-public-key-ecdsa",
        rf"\becdsa-sha2-nistp(?:256|384|521){_SPACE}AAAA[0-9A-Za-z+/=]{{20,}}",
        screen=r"\becdsa-sha2-nistp",
    ),
    Pattern(
        "ssh-public-key-sk",
        rf"\bsk-(?:ecdsa-sha2-nistp256|ssh-ed25519)@openssh\.com{_SPACE}AAAA[0-9A-Za-z+/=]{{20,}}",
        screen=r"\bsk-(?:ecdsa|ssh)-",
    ),
    Pattern(
        "url-credentials",
        # scheme://user:password@host (user may be empty): no space, slash, ?, # or @ in user or password,
        # no colon in user; the host starts at once after the @.
        r"\b[A-Za-z][A-Za-z0-9+.-]*://[^\s/?#@:\"'<>`]*:[^\s/?#@\"'<>`]+@[A-Za-z0-9\[][A-Za-z0-9.:\[\]-]*",
    ),
    Pattern(
        "aws-secret-key",
        r"(?i:\b(?:aws_?)?secret_?access_?key|\baws_?secret_?key)[\"']?[ \t]*(?:=|:|=>)[ \t]*[\"']?"
        r"[A-Za-z0-9/+]{40}",
        screen=r"(?i:secret_?access_?key|aws_?secret_?key)",
    ),
    Pattern("google-oauth-secret", rf"\bGOCSPX-{_B64URL}{{28}}", screen=r"\bGOCSPX-"),
    Pattern("google-oauth-token", rf"\bya29\.{_B64URL}{{30,}}", screen=r"\bya29\."),
    Pattern("sendgrid-key", rf"\bSG\.{_B64URL}{{22}}\.{_B64URL}{{43}}", screen=r"\bSG\."),
    Pattern("digitalocean-token", r"\bdo[por]_v1_[a-f0-9]{64}\b", screen=r"\bdo[por]_v1_"),
    Pattern("dockerhub-token", rf"\bdckr_pat_{_B64URL}{{27}}", screen=r"\bdckr_pat_"),
    Pattern("shopify-token", r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b", screen=r"\bshp(?:at|ca|pa|ss)_"),
    Pattern("age-secret-key", r"\bAGE-SECRET-KEY-1[02-9AC-HJ-NP-Z]{58}\b", screen=r"\bAGE-SECRET-KEY-1"),
    Pattern("azure-storage-key", r"\bAccountKey=[A-Za-z0-9+/]{86}==", screen=r"\bAccountKey="),
)

EXTENDED_CATEGORIES: tuple[str, ...] = tuple(dict.fromkeys(p.category for p in EXTENDED_PATTERNS))

# --- checks: a match counts only if its check (if any) says yes ---------------------------

# The alphabet of GitHub's and npm's base62 checksums: digits, then upper, then lower case.
BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def base62_crc32(body: str) -> str:
    """The six base62 digits of the CRC32 of ``body`` (ASCII), zero-padded on the left."""
    number = zlib.crc32(body.encode("ascii"))
    digits = []
    for _ in range(6):
        number, digit = divmod(number, 62)
        digits.append(BASE62[digit])
    return "".join(reversed(digits))


def _checksummed(text: str, start: int, end: int) -> bool:
    """A 4-character prefix, 30 random characters, then the base62 CRC32 of those 30."""
    token = text[start:end]
    return base62_crc32(token[4:-6]) == token[-6:]


def _mixed_case(text: str, start: int, end: int) -> bool:
    """A random letter body holds both cases (all one case over 34 letters: about 2**-33)."""
    body = text[start:end]
    return any(c.isupper() for c in body) and any(c.islower() for c in body)


_BASE64_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=")


def _aws_secret(text: str, start: int, end: int) -> bool:
    """Exactly 40 characters (not the start of a longer run), random-looking: both cases."""
    if end < len(text) and text[end] in _BASE64_CHARS:
        return False
    value = text[end - 40 : end]
    return any(c.isupper() for c in value) and any(c.islower() for c in value)


# Passwords that say where a password goes rather than being one.
_PLACEHOLDERS = frozenset(
    {"password", "passwd", "pass", "pwd", "secret", "token", "redacted", "apikey", "api_key", "your_password"}
)


def _url_password(text: str, start: int, end: int) -> bool:
    """A password that is not a placeholder (``${DB_PASS}``, ``<password>``, ``***``, ``password``)."""
    match = text[start:end]
    userinfo = match.split("://", 1)[1].rsplit("@", 1)[0]
    password = userinfo.split(":", 1)[1]
    if password[0] in "${<*[%":
        return False
    if set(password) <= set("xX*.•"):
        return False
    return password.lower() not in _PLACEHOLDERS


# Category -> check of (text, match start, match end).
CHECKS: dict[str, Callable[[str, int, int], bool]] = {
    "github-token": _checksummed,
    "npm-token": _checksummed,
    "huggingface-token": _mixed_case,
    "aws-secret-key": _aws_secret,
    "url-credentials": _url_password,
}
assert set(CHECKS) <= set(EXTENDED_CATEGORIES)

# --- the screen and the search -----------------------------------------------------------------

_SET = compile_set([p.screened_by for p in EXTENDED_PATTERNS])
_JOIN = "\n"


@functools.cache
def _searches() -> tuple[Any, ...]:
    """Compiled per-pattern searches, built when a text first needs them."""
    return tuple(re2.compile(p.regex) for p in EXTENDED_PATTERNS)


def _screen(text: str | bytes) -> list[int]:
    found = _SET.Match(text)
    return sorted(found) if found else []


def matches_anywhere(text: str | bytes) -> bool:
    """Whether any extended screen matches somewhere in ``text``: False rules every field
    in it clean (the quick path's fact 3; a screen matches wherever its pattern does)."""
    return bool(_SET.Match(text))


# The default table's screens and this table's in one set: a set reports every pattern
# of it that matches, so it matches a text exactly when one of the two sets does. The
# quick path with the extended rules reads a packet's text once with it, not twice.
_EITHER = compile_set([*(p.screened_by for p in PATTERNS), *(p.screened_by for p in EXTENDED_PATTERNS)])


def matches_either(text: str | bytes) -> bool:
    """Whether any default or extended screen matches somewhere in ``text``: False rules
    it clean for both rule sets (the quick path's fact 3)."""
    return bool(_EITHER.Match(text))


def _matches(index: int, text: str) -> Iterator[Any]:
    """The matches of pattern ``index`` in ``text`` that pass its check, leftmost first."""
    check = CHECKS.get(EXTENDED_PATTERNS[index].category)
    for match in _searches()[index].finditer(text):
        if check is None or check(text, match.start(), match.end()):
            yield match


def scan(fields: list[tuple[str, str]]) -> list[Redaction]:
    """Extended findings for (name, text) pairs: per field, per pattern, the leftmost match."""
    if not fields:
        return []
    try:
        if not _SET.Match(_JOIN.join(text for _, text in fields)):
            return []
    except UnicodeEncodeError:
        # Lone surrogates (hand-built models only) cannot be UTF-8 for RE2; as in the
        # default scan, U+FFFD stands in for them (no pattern matches either).
        return scan([(name, text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")) for name, text in fields])
    found: list[Redaction] = []
    for name, text in fields:
        for index in _screen(text):
            match = next(_matches(index, text), None)
            if match is not None:
                pattern = EXTENDED_PATTERNS[index]
                text_found = pattern.mask or match.group()
                found.append(
                    Redaction(name, pattern.category, text_found, match.start(), len(match.group()), profile=PROFILE)
                )
    return found


# --- the fields ------------------------------------------------------------------------------


def _get(container: Any, name: str) -> Any:
    if isinstance(container, Mapping):
        return container.get(name)
    return getattr(container, name, None)


def extra_texts(packet: Any) -> Iterator[tuple[str, str]]:
    """(name, text) for every string in :data:`EXTRA_FIELDS`, typed packet or parsed JSON alike."""
    for spec in EXTRA_FIELDS:
        if spec.endswith("[]"):
            top = spec[:-2]
            items = _get(packet, top)
            if isinstance(items, (list, tuple)):
                for index, item in enumerate(items):
                    if isinstance(item, str):
                        yield f"{top}[{index}]", item
            continue
        top, _, member = spec.partition("[].") if "[]." in spec else spec.partition(".")
        value = _get(packet, top)
        if "[]." in spec:
            if isinstance(value, (list, tuple)):
                for index, item in enumerate(value):
                    if isinstance(item, Mapping) or is_dataclass(item):
                        text = _get(item, member)
                        if isinstance(text, str):
                            yield f"{top}[{index}].{member}", text
            continue
        if isinstance(value, Mapping) or is_dataclass(value):
            text = _get(value, member)
            if isinstance(text, str):
                yield spec, text


def extended_texts(packet: Any) -> list[tuple[str, str]]:
    """The default scanned fields, then the extra ones: what the extended patterns read."""
    return [*texts(packet), *extra_texts(packet)]


def _typed_values(packet: Packet) -> list[str]:
    """Every text :func:`extended_texts` gives for a typed packet, without names or order:
    enough for one screen pass to rule it clean (the tests hold the two to the same texts)."""
    out = [packet.goal, packet.next_step, *packet.success_criteria, *packet.constraints]
    for decision in packet.decisions:
        out += (decision.what, decision.why, decision.consequences)
    for method in packet.methods:
        out += (method.when_applicable, method.how, method.name)
    for attempt in packet.attempts:
        out += (attempt.tried, attempt.learned)
    out += packet.open_questions
    out += packet.tags
    if packet.project is not None:
        out += (packet.project.name, packet.project.ref)
    if packet.provenance is not None:
        provenance = packet.provenance
        out += (provenance.author_model, provenance.author_human, provenance.source_hash)
    return out


def redact_extended(packet: Packet | Mapping[str, Any]) -> list[Redaction]:
    """The extended findings alone, for a typed packet (or parsed JSON of the schema's shape)."""
    if not isinstance(packet, Mapping):
        try:
            if not _SET.Match(_JOIN.join(_typed_values(packet))):
                return []
        except (UnicodeEncodeError, TypeError, AttributeError):
            pass  # a hand-built model with odd values: the careful walk copes
    return scan(extended_texts(packet))


_ROOT = BoundedPath()


def every_text(obj: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    """Lenient mode's texts: :func:`cmp._redaction.lenient_texts` (every string under a
    scanned member, named the same way), then every other top-level member in document
    order, and every member name in it, with its strings named by path. A top-level
    member name is named ``(member name)``. No recursion: values may nest 10,000 deep.
    """
    yield from lenient_texts(obj)
    done = {name.partition("[")[0] for name in _default_tops()}
    for top in obj:
        if top in done:
            continue
        yield "(member name)", top
        stack: list[tuple[Any, BoundedPath, str | int]] = [(obj[top], _ROOT, top)]
        while stack:
            value, parent, key = stack.pop()
            if type(value) is str:
                yield parent.child(key).text[2:], value
            elif type(value) is dict and value:
                path = parent.child(key)
                for name in value:
                    yield f"{path.text[2:]}.(member name)", name
                stack.extend((value[n], path, n) for n in reversed(list(value)))
            elif type(value) is list and value:
                path = parent.child(key)
                stack.extend((value[i], path, i) for i in range(len(value) - 1, -1, -1))


@functools.cache
def _default_tops() -> frozenset[str]:
    from cmp._redaction import SCANNED_FIELDS

    return frozenset(spec.partition("[")[0] for spec in SCANNED_FIELDS)


def redact_extended_obj(obj: Mapping[str, Any]) -> list[Redaction]:
    """The extended findings for raw parsed JSON in lenient mode: every string and name in it."""
    return scan(list(every_text(obj)))


# --- the public entry points --------------------------------------------------------------------


def checked_rules(rules: object) -> Rules:
    """``rules`` if it names a rule set, else a ValueError (a TypeError for a non-string)."""
    if not isinstance(rules, str):
        raise TypeError(f"rules must be a str, not {type(rules).__name__}")
    if rules == "default":
        return "default"
    if rules == "extended":
        return "extended"
    raise ValueError(f"rules must be one of {', '.join(map(repr, RULES))}, not {rules!r}")


def redact(packet: Packet, *, rules: Rules = "default") -> list[Redaction]:
    """Redaction findings for a typed :class:`cmp.Packet`: the reference's, in its order;
    with ``rules="extended"``, the extended rules' findings after them (``profile="extended"``)."""
    found = redact_default(packet)
    if checked_rules(rules) == "extended":
        found.extend(redact_extended(packet))
    return found


def redact_obj(obj: Mapping[str, Any], *, rules: Rules = "default") -> list[Redaction]:
    """:func:`cmp._redaction.redact_obj`, and with the extended rules every string of ``obj`` too."""
    found = redact_default_obj(obj)
    if checked_rules(rules) == "extended":
        found.extend(redact_extended_obj(obj))
    return found


def replace_matches(text: str, replacement: Callable[[Pattern, str, int], str]) -> str:
    """``text`` with every checked match of every extended pattern replaced, pattern by
    pattern in table order, by ``replacement(pattern, match, offset)``: one pass (scrub repeats it)."""
    for index in _screen(text):
        pattern = EXTENDED_PATTERNS[index]
        pieces: list[str] = []
        done = 0
        for match in list(_matches(index, text)):
            pieces += [text[done : match.start()], replacement(pattern, match.group(), match.start())]
            done = match.end()
        if pieces:
            text = "".join(pieces) + text[done:]
    return text
