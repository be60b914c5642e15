"""Findings: the one error type every stage reports, and the exception that carries them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

TYPE_CHECKING = False

# Stable finding codes: renaming one breaks the CLI's JSON output, the conformance vectors
# and other implementations' harnesses. A Literal to mypy only, so a check loads no typing
# (tests/unit/test_type_only.py holds CODES to it).
if TYPE_CHECKING:
    from typing import Literal

    Code = Literal[
        "size", "json", "duplicate-key", "not-object", "version-missing", "version-unsupported", "schema", "truncated"
    ]

CODES: dict[Code, str] = {
    "size": "the raw packet is longer than 32,768 bytes",
    "json": "the bytes are not strict RFC 8259 JSON in UTF-8",
    "duplicate-key": "an object holds the same member name twice",
    "not-object": "the top-level JSON value is not an object",
    "version-missing": "ltm_version is absent, not a string, or empty",
    "version-unsupported": "ltm_version names a version this library does not know",
    "schema": "the packet breaks its version's JSON Schema (see keyword)",
    "truncated": "stands for the findings past the first 100 of a report, and says how many there were",
}

# Codes of advice beyond the format, which never change check's verdict; ``keyword`` names the rule.
if TYPE_CHECKING:
    AdviceCode = Literal["lint", "chain", "audit", "credential"]
ADVICE_CODES: dict[AdviceCode, str] = {
    "lint": "the packet breaks a writing rule (see keyword); advice, not a verdict",
    "chain": "packets do not link up through parent_id as a chain should (see keyword)",
    "audit": "a stored packet's row or body is not what the store should hold (see keyword)",
    "credential": "a credential pattern matches a string the pre-flight does not read (keyword: its category); "
    "a warning to readers, a redaction finding to writers",
}

# The echo cut (specification 8.5): a finding's echo holds at most this many code points.
# Messages quote no more of a packet's text, and none a redaction pattern matches.
ECHO_LIMIT = 32

MAX_FINDINGS = 100


@dataclass(frozen=True, slots=True, order=True)
class Position:
    """Where in a packet's source text a finding is: 1-based ``line`` and ``column``. Lines end at
    LF (as in Python's and Go's JSON decoders); columns count code points, the same in every encoding."""

    line: int
    column: int

    def __str__(self) -> str:
        return f"{self.line}:{self.column}"


@dataclass(frozen=True, slots=True)
class Finding:
    """One reason a packet is not conforming, or one piece of advice about it.

    ``code`` is one of :data:`CODES` or :data:`ADVICE_CODES`; ``path`` a JSONPath (``$``
    for the whole); ``keyword`` the schema keyword or advice rule, else None; ``message``
    one line; ``position`` None until located (:meth:`cmp.Report.located`).
    """

    code: Code | AdviceCode
    path: str
    message: str
    keyword: str | None = None
    position: Position | None = None

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"

    def to_json(self) -> dict[str, str | int | None]:
        """``code``, ``path``, ``keyword``, ``message``, and ``line`` and ``column`` once located."""
        out: dict[str, str | int | None] = {
            "code": self.code,
            "path": self.path,
            "keyword": self.keyword,
            "message": self.message,
        }
        if self.position is not None:
            out["line"] = self.position.line
            out["column"] = self.position.column
        return out


def first_of(items: Sequence[object], *, more: str = "more") -> str:
    """The first of ``items`` as one line, and how many follow it: ``$.goal: … (and 2 more)``; "" for none."""
    if not items:
        return ""
    rest = len(items) - 1
    return str(items[0]) + (f" (and {rest} {more})" if rest > 0 else "")


class PacketError(ValueError):
    """Raised by :func:`cmp.loads` and :func:`cmp.dumps`; ``findings`` says why."""

    def __init__(self, findings: Sequence[Finding]) -> None:
        self.findings: tuple[Finding, ...] = tuple(findings)
        super().__init__(first_of(self.findings) or "invalid packet")


if not TYPE_CHECKING:  # (mypy reads the Literals above, and no module __getattr__)

    def __getattr__(name: str) -> object:
        """``Code`` and ``AdviceCode`` as values, made on first use: importing this loads no typing."""
        table = {"Code": CODES, "AdviceCode": ADVICE_CODES}.get(name)
        if table is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        from typing import Literal

        value = globals()[name] = Literal[tuple(table)]
        return value


__all__ = [
    "ADVICE_CODES",
    "CODES",
    "ECHO_LIMIT",
    "MAX_FINDINGS",
    "AdviceCode",
    "Code",
    "Finding",
    "PacketError",
    "Position",
    "first_of",
]
