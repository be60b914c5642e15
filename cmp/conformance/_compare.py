"""An implementation's answer against a vector's expectation: what differs, in one line each.

Every one of ``errors`` must be reported, each of ``optional_errors`` may be (at most once),
at least one of each group of ``error_choices`` must be (each at most once), nothing else.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from cmp._display import short
from cmp.conformance._protocol import answer_error, strict_b64decode

ErrorKey = tuple[str, str, str]


def error_key(error: Any) -> ErrorKey:
    """A finding's code, path and keyword as JSON texts: comparable and sortable whatever the
    answer holds (JSON keeps null and "None" apart)."""
    if not isinstance(error, dict):
        return ('"?"', '"?"', short(error, 40))
    return (short(error.get("code"), 80), short(error.get("path"), 80), short(error.get("keyword"), 80))


def show_errors(keys: Iterable[ErrorKey], limit: int = 240) -> str:
    """Error keys as one JSON list of [code, path, keyword] lists, cut like short()."""
    text = "[" + ", ".join("[" + ", ".join(key) + "]" for key in keys) + "]"
    return text if len(text) <= limit else text[:limit] + "…"


def _list_member(response: dict[str, Any], name: str) -> list[Any] | None:
    """A list member of an answer; absent and null both mean the empty list (a Go nil slice)."""
    value = response.get(name)
    if value is None:
        return []
    return value if isinstance(value, list) else None


def _compare_errors(expect: dict[str, Any], got_errors: list[Any]) -> list[str]:
    """Reported findings against the required, optional and choice findings of a vector
    (the loader made sure no finding is in two of these places)."""
    required = Counter(error_key(e) for e in expect.get("errors", []))
    optional = {error_key(e) for e in expect.get("optional_errors", [])}
    choices = [[error_key(e) for e in group] for group in expect.get("error_choices", [])]
    once = optional.union(*choices)
    got = Counter(error_key(e) for e in got_errors)
    missing = sorted((required - got).elements())
    unexpected = sorted((Counter({k: n for k, n in got.items() if k not in once}) - required).elements())
    repeated = sorted(k for k, n in got.items() if k in once and n > 1)
    problems = []
    if missing:
        problems.append(f"errors: missing required {show_errors(missing)}")
    if unexpected:
        problems.append(f"errors: unexpected {show_errors(unexpected)}")
    if repeated:
        problems.append(f"errors: reported more than once, allowed at most once {show_errors(repeated)}")
    for group in choices:
        if not any(got[k] for k in group):
            problems.append(f"errors: none of the choice {show_errors(group)}, one of which is required")
    return problems


def compare(vector: dict[str, Any], response: Any) -> list[str]:
    """What differs between a vector's expectation and an implementation's response (values shown as JSON)."""
    if not isinstance(response, dict):
        return [f"response is not a JSON object: {short(response)}"]
    error = answer_error(response)
    if error is not None:
        return [f"the implementation answered with an error: {error}"]
    expect = vector["expect"]
    problems: list[str] = []
    if response.get("conforming") is not expect["conforming"]:
        problems.append(f"conforming: expected {short(expect['conforming'])}, got {short(response.get('conforming'))}")
    got_errors = _list_member(response, "errors")
    if got_errors is None:
        problems.append(f"errors: expected a list, got {short(response.get('errors'))}")
    else:
        problems.extend(_compare_errors(expect, got_errors))
    if "redactions" in expect:
        got_redactions = _list_member(response, "redactions")
        if got_redactions != expect["redactions"]:
            shown = short(response.get("redactions") if got_redactions is None else got_redactions)
            problems.append(f"redactions: expected {short(expect['redactions'])}, got {shown}")
    if "canonical" in expect:
        got_b64 = response.get("canonical_base64")
        got_bytes = strict_b64decode(got_b64)
        if not isinstance(got_b64, str):
            problems.append(f"canonical_base64: expected a string, got {short(got_b64)}")
        elif got_bytes is None:
            problems.append(
                "canonical_base64: not base64 (RFC 4648 standard alphabet, = padding, no line breaks): "
                + short(got_b64, 80)
            )
        elif got_bytes != expect["canonical"].encode("utf-8"):
            problems.append(_canonical_difference(expect["canonical"].encode("utf-8"), got_bytes))
    return problems


# Bytes shown on each side of the first difference between canonical forms.
_CONTEXT_BYTES = 40


def _canonical_difference(want: bytes, got: bytes) -> str:
    """Where two canonical forms first differ, with a little of each around that byte
    (they usually differ late: their starts would look identical)."""
    at = next((i for i, (a, b) in enumerate(zip(want, got, strict=False)) if a != b), min(len(want), len(got)))
    start = max(at - _CONTEXT_BYTES, 0)

    def window(data: bytes) -> str:
        piece = data[start : at + _CONTEXT_BYTES].decode("utf-8", "backslashreplace")
        return (
            ("…" if start else "") + short(piece, 4 * _CONTEXT_BYTES) + ("…" if at + _CONTEXT_BYTES < len(data) else "")
        )

    return (
        f"canonical: {len(got)} bytes where {len(want)} were expected, first different at byte {at}: "
        f"expected {window(want)}, got {window(got)}"
    )
