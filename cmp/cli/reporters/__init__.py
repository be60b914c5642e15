"""Every output format of the result commands (check, lint, gate, audit), by name: :data:`REPORTERS`.

A format is one module here, named as the format, whose ``REPORTER`` renders results, and one line in
:data:`REPORTERS`, which holds no code: it is read at every start-up, and a format's module is imported
only by a run that prints it.

A reporter renders where a source is judged (perhaps a worker): results become :data:`Line` pieces, and
a share's pieces the output's bytes (:meth:`Reporter.fragment`), which the parent writes in input order
into what :meth:`Reporter.begin` opened.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from cmp.cli._output import Output, coloured_line

# typing stays unloaded in a plain check (tests/cli/test_startup.py): these are for the type checker alone.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Protocol

    from cmp import Report
    from cmp.cli._policy import Judged
    from cmp.cli._render import Line, Tone
    from cmp.findings import Finding, Position

    # Why a file gate accepts is not its packet's canonical file form: where it first differs
    # (None: the whole file) and what to say; empty for a canonical file.
    Form = Sequence[tuple[Position | None, str]]

    class Audited(Protocol):
        """What a reporter reads of one audited packet (cmp._audit's record of it)."""

        @property
        def where(self) -> str: ...  # how a text line names it: store[id], file, file:line
        @property
        def file(self) -> str: ...  # the store or file it is in
        @property
        def file_line(self) -> int | None: ...  # its line in a JSON Lines export
        @property
        def report(self) -> Report: ...
        @property
        def found(self) -> list[Finding]: ...  # what its row or file disagrees on
        @property
        def about(self) -> dict[str, Any]: ...  # what names it in JSON output (id, owner, team; or file, line)

    class Sink(Protocol):
        """Where a run's results go in one format, opened by :meth:`Reporter.begin`."""

        def add(self, fragment: bytes, entries: int) -> None:
            """Results rendered by :meth:`Reporter.fragment` (``entries`` document entries), written as they are."""

        def unreadable(self, file: str, jsonl_line: int | None, message: str, members: Mapping[str, Any]) -> None:
            """A source that could not be read or checked, in the format's own terms where it has
            them; ``members``: those a JSON result of the command has beyond check's (lint's ``lint``)."""

        def close(self, after: Mapping[str, Any]) -> None:
            """The end of the output; ``after``: a JSON document's members after its results (check's ``baseline``)."""

    class Reporter(Protocol):
        """One output format: each command's results as pieces (a line, or a document's entry as JSON text,
        with its tone), rendered where the source was judged; pieces as bytes; and where they go."""

        def check(self, file: str, jsonl_line: int | None, judged: Judged, *, show_found: bool) -> list[Line]:
            """One source's check results (``jsonl_line``: its line in a JSON Lines file)."""
            ...

        def lint(
            self, file: str, judged: Judged, findings: list[Finding], advice: Tone, *, show_found: bool
        ) -> list[Line]:
            """One file's lint results: check's (when check refuses it) and its lint findings, at ``advice``."""
            ...

        def gate(
            self, file: str, judged: Judged, form: Form, findings: list[Finding], advice: Tone, *, show_found: bool
        ) -> list[Line]:
            """One file's gate results: lint's, and where an accepted packet's file is not its canonical form."""
            ...

        def audit(self, item: Audited, *, show_found: bool) -> list[Line]:
            """One audited packet with findings (an audit prints nothing of the others)."""
            ...

        def fragment(self, pieces: Sequence[Line], *, colour: bool) -> tuple[bytes, int]:
            """Pieces as the output's bytes, and how many document entries those hold (0 for lines)."""
            ...

        def begin(self, out: Output) -> Sink:
            """Open the run's output on ``out`` (a document writes its head)."""
            ...


@dataclass(frozen=True, slots=True)
class Format:
    """One output format: ``help`` is what it prints, ``phrase`` the same in a few words; ``document``
    formats print one document a run (readers often capture stderr with it: no summary line)."""

    name: str
    help: str
    phrase: str
    document: bool
    commands: frozenset[str]


_RESULTS = frozenset(("check", "lint", "gate", "audit"))

# Every format, in the order --format lists them; a new one needs a line here and a module beside this one.
REPORTERS: Mapping[str, Format] = {
    format.name: format
    for format in (
        Format(
            "text",
            "one line per finding or redaction hit, 'FILE:LINE:COLUMN: ...', or 'FILE: ok'",
            "text lines",
            False,
            _RESULTS,
        ),
        Format(
            "json",
            'one document {"version": 1, "results": [...]} with one result object per packet or unreadable source',
            'one document {"version": 1, "results": [...]}',
            True,
            _RESULTS,
        ),
        # Not audit's: an annotation needs a file and line in the checkout, and an audited row has neither.
        Format(
            "github",
            "one GitHub Actions workflow command (an annotation) per finding",
            "GitHub workflow commands",
            False,
            frozenset(("check", "lint", "gate")),
        ),
        Format("sarif", "one SARIF 2.1.0 log for code scanning", "a SARIF 2.1.0 log", True, _RESULTS),
    )
}


def offered(command: str) -> tuple[str, ...]:
    """The formats ``command`` offers, in the table's order (--format's choices)."""
    return tuple(name for name, format in REPORTERS.items() if command in format.commands)


def choices_help(command: str) -> str:
    """--format's help for ``command``: each format it offers, with what it prints."""
    parts = [f"{name}{' (default)' if name == 'text' else ''}: {REPORTERS[name].help}" for name in offered(command)]
    return "; ".join(parts)


def phrases_help(command: str) -> str:
    """--format's help for ``command`` in a few words: "text lines (default), …, or a SARIF 2.1.0 log"."""
    phrases = [REPORTERS[name].phrase + (" (default)" if name == "text" else "") for name in offered(command)]
    return ", ".join(phrases[:-1]) + ", or " + phrases[-1] if len(phrases) > 1 else "".join(phrases)


def is_document(name: str | None) -> bool:
    """Whether format ``name`` prints one document a run (False for a name no reporter has: junit)."""
    format = REPORTERS.get(name or "text")
    return format is not None and format.document


_LOADED: dict[str, Reporter] = {}


def reporter(name: str) -> Reporter:
    """The reporter of format ``name``, its module imported on first use (in a worker too)."""
    found = _LOADED.get(name)
    if found is None:
        if name not in REPORTERS:
            raise KeyError(f"no output format {name!r}")
        found = _LOADED[name] = importlib.import_module(f"{__name__}.{name}").REPORTER
    return found


class LineReporter:
    """What the line formats share: each piece a line of stdout, escaped, nothing before or after."""

    # Only plain text is ever coloured: a workflow command must start its line.
    coloured = False

    def fragment(self, pieces: Sequence[Line], *, colour: bool) -> tuple[bytes, int]:
        tinted = colour and self.coloured
        return b"".join(coloured_line(text, tone if tinted else None) for tone, text in pieces), 0

    def begin(self, out: Output) -> Sink:
        return _Lines(out, self)

    def unreadable_line(self, file: str, jsonl_line: int | None, message: str) -> str | None:
        """A source that could not be read, as a line of its own on stdout; None: the line on stderr says it."""
        return None


class _Lines:
    """Lines written to stdout as they come."""

    def __init__(self, out: Output, reporter: LineReporter) -> None:
        self.out, self.reporter = out, reporter

    def add(self, fragment: bytes, entries: int) -> None:
        if fragment:
            self.out.write(fragment)

    def unreadable(self, file: str, jsonl_line: int | None, message: str, members: Mapping[str, Any]) -> None:
        line = self.reporter.unreadable_line(file, jsonl_line, message)
        if line is not None:
            self.out.line(line)

    def close(self, after: Mapping[str, Any]) -> None:
        pass
