"""The extended rule set's table: each category's pattern, check, public prefix and screen.

It sits at the bottom of the import layers, beside :mod:`cmp._patterns`, so that every
message can ask whether an extended pattern matches a text before quoting it
(:func:`cmp._messages.quote`). Loaded on first use.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator

import re2

from cmp._matcher import compile_set, without_lone_surrogates
from cmp._memo import remembered
from cmp._patterns import BY_CATEGORY, PATTERNS, Pattern, by_category, credential_like_forms

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing stays unloaded: a message loads this table
    from typing import Any

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


# --- the table: one entry per category -----------------------------------------------------------

_B64URL = "[A-Za-z0-9_-]"
_SPACE = "[ \\t\\n\\f\\r]+"  # clause 8.2's whitespace, as the default ssh-public-key has it

EXTENDED_PATTERNS: tuple[Pattern, ...] = (
    Pattern(
        "github-token",
        r"\bgh[pousr]_[A-Za-z0-9]{36}\b",
        description="a classic GitHub token with a valid checksum (ghp_, gho_, ghu_, ghs_, ghr_)",
        prefix=r"gh[pousr]_",
        check=_checksummed,
        screen=r"\bgh[pousr]_",
    ),
    Pattern(
        "github-fine-grained-token",
        r"\bgithub_pat_[A-Za-z0-9]{22}_[A-Za-z0-9]{59}\b",
        description="a fine-grained GitHub personal access token (github_pat_)",
        prefix=r"github_pat_",
        screen=r"\bgithub_pat_",
    ),
    Pattern(
        "openai-key",
        rf"\bsk-(?:(?:proj|svcacct|admin)-)?{_B64URL}{{20,}}T3BlbkFJ{_B64URL}{{20,}}",
        description="an OpenAI API key (sk-…T3BlbkFJ…)",
        prefix=r"sk-(?:(?:proj|svcacct|admin)-)?",
        screen=r"\bsk-",
    ),
    Pattern(
        "anthropic-key",
        rf"\bsk-ant-(?:api|admin|oat|ort)[0-9]{{2}}-{_B64URL}{{32,}}",
        description="an Anthropic API key (sk-ant-api03-…)",
        prefix=r"sk-ant-(?:api|admin|oat|ort)[0-9]{2}-",
        screen=r"\bsk-ant-",
    ),
    Pattern(
        "huggingface-token",
        r"\bhf_[A-Za-z0-9]{34}\b",
        description="a Hugging Face access token (hf_)",
        prefix=r"hf_",
        check=_mixed_case,
        screen=r"\bhf_",
    ),
    Pattern(
        "gitlab-token",
        rf"\bgl(?:pat|dt|rt|ptt|oas|ft|cbt|imt|agent|soat|ffct)-{_B64URL}{{20,}}",
        description="a GitLab token (glpat-, gldt-, glrt-, …)",
        prefix=r"gl(?:pat|dt|rt|ptt|oas|ft|cbt|imt|agent|soat|ffct)-",
        screen=r"\bgl(?:pat|dt|rt|ptt|oas|ft|cbt|imt|agent|soat|ffct)-",
    ),
    Pattern(
        "npm-token",
        r"\bnpm_[A-Za-z0-9]{36}\b",
        description="an npm access token with a valid checksum (npm_)",
        prefix=r"npm_",
        check=_checksummed,
        screen=r"\bnpm_",
    ),
    Pattern(
        "pypi-token",
        rf"\bpypi-AgE(?:IcHlwaS5vcmc|NdGVzdC5weXBpLm9yZw){_B64URL}{{50,}}",
        description="a PyPI or TestPyPI API token (pypi-AgE…)",
        prefix=r"pypi-",
        screen=r"\bpypi-AgE",
    ),
    Pattern(
        "slack-app-token",
        r"\bxapp-[0-9]+-[A-Z0-9]{8,}-[0-9]{8,}-[A-Za-z0-9]{32,}",
        description="a Slack app-level token (xapp-)",
        prefix=r"xapp-",
        screen=r"\bxapp-",
    ),
    Pattern(
        "slack-config-token",
        r"\bxoxe(?:\.xox[bp])?-[0-9]+-[A-Za-z0-9-]{40,}",
        description="a Slack configuration or refresh token (xoxe-)",
        prefix=r"xoxe(?:\.xox[bp])?-",
        screen=r"\bxoxe[.-]",
    ),
    Pattern(
        "slack-webhook",
        r"\bhooks\.slack\.com/(?:services/T[A-Z0-9]{6,}/B[A-Z0-9]{6,}/[A-Za-z0-9]{20,}"
        r"|(?:workflows|triggers)/T[A-Z0-9]{6,}/[A-Za-z0-9]{6,}/[A-Za-z0-9/]{10,})",
        description="a Slack incoming webhook URL (hooks.slack.com/services/…)",
        prefix=r"hooks\.slack\.com/",
        screen=r"\bhooks\.slack\.com/",
    ),
    Pattern(
        "discord-webhook",
        rf"\bdiscord(?:app)?\.com/api/webhooks/[0-9]{{17,20}}/{_B64URL}{{60,}}",
        description="a Discord webhook URL (discord.com/api/webhooks/…)",
        prefix=r"discord(?:app)?\.com/api/webhooks/",
        screen=r"\bdiscord(?:app)?\.com/api/webhooks/",
    ),
    Pattern(
        "pem-private-key",
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----",
        description="a PEM or OpenPGP private key header (-----BEGIN … PRIVATE KEY-----)",
        prefix=r"-----BEGIN ",
        mask="-----BEGIN …",
        screen=r"-----BEGIN ",
    ),
    Pattern(
        "putty-private-key",
        r"\bPuTTY-User-Key-File-[0-9]+:",
        description="a PuTTY private key file (PuTTY-User-Key-File-)",
        prefix=r"PuTTY-User-Key-File-",
        mask="PuTTY-User-Key-File-…",
    ),
    Pattern(
        "ssh-public-key-ecdsa",
        rf"\becdsa-sha2-nistp(?:256|384|521){_SPACE}AAAA[0-9A-Za-z+/=]{{20,}}",
        description="an ECDSA SSH public key (ecdsa-sha2-nistp256 AAAA…)",
        prefix=r"ecdsa-sha2-nistp(?:256|384|521)[ \t\n\f\r]",
        screen=r"\becdsa-sha2-nistp",
    ),
    Pattern(
        "ssh-public-key-sk",
        rf"\bsk-(?:ecdsa-sha2-nistp256|ssh-ed25519)@openssh\.com{_SPACE}AAAA[0-9A-Za-z+/=]{{20,}}",
        description="a security-key SSH public key (sk-ssh-ed25519@openssh.com AAAA…)",
        prefix=r"sk-(?:ecdsa-sha2-nistp256|ssh-ed25519)@openssh\.com[ \t\n\f\r]",
        screen=r"\bsk-(?:ecdsa|ssh)-",
    ),
    Pattern(
        "url-credentials",
        # scheme://user:password@host (user may be empty); the host starts at once after the @.
        r"\b[A-Za-z][A-Za-z0-9+.-]*://[^\s/?#@:\"'<>`]*:[^\s/?#@\"'<>`]+@[A-Za-z0-9\[][A-Za-z0-9.:\[\]-]*",
        description="a password inside a URL (scheme://user:password@host)",
        prefix=r"[A-Za-z][A-Za-z0-9+.-]*://",  # the scheme: user and password are not shown
        check=_url_password,
    ),
    Pattern(
        "aws-secret-key",
        r"(?i:\b(?:aws_?)?secret_?access_?key|\baws_?secret_?key)[\"']?[ \t]*(?:=|:|=>)[ \t]*[\"']?"
        r"[A-Za-z0-9/+]{40}",
        description="an AWS secret access key next to its name (aws_secret_access_key = …)",
        prefix=r"(?i:(?:aws_?)?secret_?access_?key|aws_?secret_?key)",  # the key's name
        check=_aws_secret,
        screen=r"(?i:secret_?access_?key|aws_?secret_?key)",
    ),
    Pattern(
        "google-oauth-secret",
        rf"\bGOCSPX-{_B64URL}{{28}}",
        description="a Google OAuth client secret (GOCSPX-)",
        prefix=r"GOCSPX-",
        screen=r"\bGOCSPX-",
    ),
    Pattern(
        "google-oauth-token",
        rf"\bya29\.{_B64URL}{{30,}}",
        description="a Google OAuth access token (ya29.)",
        prefix=r"ya29\.",
        screen=r"\bya29\.",
    ),
    Pattern(
        "sendgrid-key",
        rf"\bSG\.{_B64URL}{{22}}\.{_B64URL}{{43}}",
        description="a SendGrid API key (SG.….…)",
        prefix=r"SG\.",
        screen=r"\bSG\.",
    ),
    Pattern(
        "digitalocean-token",
        r"\bdo[por]_v1_[a-f0-9]{64}\b",
        description="a DigitalOcean token (dop_v1_, doo_v1_, dor_v1_)",
        prefix=r"do[por]_v1_",
        screen=r"\bdo[por]_v1_",
    ),
    Pattern(
        "dockerhub-token",
        rf"\bdckr_pat_{_B64URL}{{27}}",
        description="a Docker Hub personal access token (dckr_pat_)",
        prefix=r"dckr_pat_",
        screen=r"\bdckr_pat_",
    ),
    Pattern(
        "shopify-token",
        r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b",
        description="a Shopify access token (shpat_, shpca_, shppa_, shpss_)",
        prefix=r"shp(?:at|ca|pa|ss)_",
        screen=r"\bshp(?:at|ca|pa|ss)_",
    ),
    Pattern(
        "age-secret-key",
        r"\bAGE-SECRET-KEY-1[02-9AC-HJ-NP-Z]{58}\b",
        description="an age secret key (AGE-SECRET-KEY-1…)",
        prefix=r"AGE-SECRET-KEY-1",
        screen=r"\bAGE-SECRET-KEY-1",
    ),
    Pattern(
        "azure-storage-key",
        r"\bAccountKey=[A-Za-z0-9+/]{86}==",
        description="an Azure storage account key (AccountKey=…==)",
        prefix=r"AccountKey=",
        screen=r"\bAccountKey=",
    ),
)

EXTENDED_BY_CATEGORY: dict[str, Pattern] = by_category(EXTENDED_PATTERNS)
EXTENDED_CATEGORIES: tuple[str, ...] = tuple(EXTENDED_BY_CATEGORY)
# Messages and findings rely on both (shows_echo reads the format's table alone).
assert all(p.prefix is not None for p in EXTENDED_PATTERNS), "every extended category is a credential"
assert not set(EXTENDED_CATEGORIES) & set(BY_CATEGORY), "no category is in both tables"

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
    """Whether any extended screen matches in ``text``: False rules it clean (quick path fact 3)."""
    return bool(SET.Match(text))


# Both tables' screens in one set, which matches exactly when one of the two does: the
# quick path with the extended rules reads the text once. Compiled on first use (about
# 1 ms): masking a file name, which every check does, does not read it.
@functools.cache
def _either() -> Any:
    return compile_set([*(p.screened_by for p in PATTERNS), *(p.screened_by for p in EXTENDED_PATTERNS)])


def matches_either(text: str | bytes) -> bool:
    """Whether any default or extended screen matches in ``text``: False rules it clean for both."""
    return bool(_either().Match(text))


def matches(index: int, text: str) -> Iterator[Any]:
    """The matches of pattern ``index`` in ``text`` that pass its check, leftmost first."""
    check = EXTENDED_PATTERNS[index].check
    for match in _searches()[index].finditer(text):
        if check is None or check(text, match.start(), match.end()):
            yield match


@remembered
def first_category(text: str) -> str | None:
    """The first extended category whose pattern (and check) matches in ``text``, or None."""
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
    """The first extended category whose credential-like form matches in ``text``, or None."""
    try:
        found = _CREDENTIAL_LIKE.Match(text)
    except UnicodeEncodeError:
        found = _CREDENTIAL_LIKE.Match(without_lone_surrogates(text))
    return _CREDENTIAL_LIKE_FORMS[min(found)][0] if found else None
