"""The one line that ends a run of ``check``, ``fmt`` or ``lint``: what was done, counted.
It goes to stderr, never to stdout: stdout holds the results a program reads."""

from __future__ import annotations

from collections import Counter

from cmp.cli._output import Output, error_line
from cmp.cli.reporters import is_document

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse


def _counted(count: int, noun: str) -> str:
    return f"{count:,} {noun}" + ("" if count == 1 else "s")


class Summary:
    """What one run did, counted by outcome (in the line's order) as it goes, then said once
    (:meth:`say`); unreadable sources are counted apart, as files."""

    def __init__(self, command: str, noun: str, outcomes: tuple[str, ...]) -> None:
        self.command = command
        self.noun = noun
        self.outcomes = outcomes
        self.counts: Counter[str] = Counter()
        self.unread = 0
        self.complete = True  # False: the run was cut short, and says so itself

    def add(self, outcome: str, count: int = 1) -> None:
        if outcome not in self.outcomes:
            raise ValueError(f"{self.command} summary has no outcome {outcome!r}")
        self.counts[outcome] += count

    def unreadable(self, count: int = 1) -> None:
        self.unread += count

    def line(self) -> str:
        """``check: 3 packets, 2 accepted, 1 not accepted; 1 file not read``."""
        parts = [_counted(sum(self.counts.values()), self.noun)]
        parts += [f"{self.counts[outcome]:,} {outcome}" for outcome in self.outcomes if self.counts[outcome]]
        unread = f"; {_counted(self.unread, 'file')} not read" if self.unread else ""
        return f"{self.command}: " + ", ".join(parts) + unread

    def say(self, args: argparse.Namespace, out: Output) -> None:
        """The line on stderr, unless -q/--quiet, a whole-document --format (whose readers often
        capture stderr too), output lost, a run cut short, or a run of one source."""
        if getattr(args, "quiet", False) or is_document(getattr(args, "format", None)):
            return
        if out.lost or not self.complete:
            return
        if sum(self.counts.values()) + self.unread < 2:  # one source: its own line says it all
            return
        error_line(self.line())
