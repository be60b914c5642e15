"""The extended rule set's patterns: what each matches, the checks that rule look-alikes
out, and the one-pass screen over them (:mod:`cmp._redaction._extended` walks packets with them).

They live at the bottom of the import layers, beside the default table
(:mod:`cmp._patterns`), so that every module that writes a message can ask whether an
extended pattern matches a text before quoting it (:func:`cmp._messages.quote`): a
credential the extended rules know is no more quoted in a message than one the default
rules know. Loaded on first use: a default check of a good packet never pays for it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator

import re2

from cmp._matcher import compile_set, without_lone_surrogates
from cmp._memo import remembered
from cmp._patterns import PATTERNS, Pattern, credential_like_forms

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing stays unloaded: a message that quotes a long text loads this table
    from typing import Any

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
    import zlib  # here: only a candidate token gets this far

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

SET = compile_set([p.screened_by for p in EXTENDED_PATTERNS])
JOIN = "\n"


@functools.cache
def _searches() -> tuple[Any, ...]:
    """Compiled per-pattern searches, built when a text first needs them."""
    return tuple(re2.compile(p.regex) for p in EXTENDED_PATTERNS)


def screen(text: str | bytes) -> list[int]:
    """Indices into EXTENDED_PATTERNS of the screens that match somewhere in ``text``, ascending."""
    found = SET.Match(text)
    return sorted(found) if found else []


def matches_anywhere(text: str | bytes) -> bool:
    """Whether any extended screen matches somewhere in ``text``: False rules every field
    in it clean (the quick path's fact 3; a screen matches wherever its pattern does)."""
    return bool(SET.Match(text))


# The default table's screens and this table's in one set: a set reports every pattern
# of it that matches, so it matches a text exactly when one of the two sets does. The
# quick path with the extended rules reads a packet's text once with it, not twice.
@functools.cache
def _either() -> Any:
    # Compiled on first use (about 1 ms): masking a file name, which every check does, reads
    # the two sets of this table alone, and only the quick path with the extended rules and
    # messages read this one.
    return compile_set([*(p.screened_by for p in PATTERNS), *(p.screened_by for p in EXTENDED_PATTERNS)])


def matches_either(text: str | bytes) -> bool:
    """Whether any default or extended screen matches somewhere in ``text``: False rules
    it clean for both rule sets (the quick path's fact 3)."""
    return bool(_either().Match(text))


def matches(index: int, text: str) -> Iterator[Any]:
    """The matches of pattern ``index`` in ``text`` that pass its check, leftmost first."""
    check = CHECKS.get(EXTENDED_PATTERNS[index].category)
    for match in _searches()[index].finditer(text):
        if check is None or check(text, match.start(), match.end()):
            yield match


@remembered
def first_category(text: str) -> str | None:
    """The first extended category, in table order, whose pattern (and check) matches
    somewhere in ``text``, or None. Any text: lone surrogates cannot match, so U+FFFD
    stands in for them."""
    try:
        flagged = screen(text)
    except UnicodeEncodeError:
        text = without_lone_surrogates(text)
        flagged = screen(text)
    return next((EXTENDED_PATTERNS[i].category for i in flagged if next(matches(i, text), None) is not None), None)


# Every extended category is a credential; each pattern's credential-like form, its checks
# left out, decides what masking withholds (see cmp._patterns, "what masking reads").
_CREDENTIAL_LIKE_FORMS = credential_like_forms(EXTENDED_PATTERNS)
_CREDENTIAL_LIKE = compile_set([regex for _, regex in _CREDENTIAL_LIKE_FORMS])


@remembered
def credential_like(text: str) -> str | None:
    """The first extended category (in table order) whose credential-like form matches
    somewhere in ``text``, or None. Any text: U+FFFD stands in for a lone surrogate."""
    try:
        found = _CREDENTIAL_LIKE.Match(text)
    except UnicodeEncodeError:
        found = _CREDENTIAL_LIKE.Match(without_lone_surrogates(text))
    return _CREDENTIAL_LIKE_FORMS[min(found)][0] if found else None
