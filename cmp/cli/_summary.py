"""The one line that ends a run of ``check``, ``fmt`` or ``lint``: what was done, counted.

It goes to stderr (as ``cmp: check: 3 packets, 2 accepted, 1 not accepted``), never to
stdout: stdout holds the results a program reads (and, for ``fmt`` without --check or
--write, the packet's own bytes), and a count among them would be a result line that is
none. It is left out for the whole-document formats (json, sarif), whose readers often
capture stderr with stdout, with -q/--quiet, and for a run of one source.
"""

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
    """What one run did, counted by outcome as it goes, then said once (:meth:`say`).

    ``noun`` is what is counted (``packet``, ``file``); ``outcomes`` name the outcomes in
    the order the line gives them (one not in the run is left out of the line). Sources
    that could not be read are counted apart (:meth:`unreadable`): they are files, and no
    outcome of the command's.
    """

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
        """The line on stderr, unless -q/--quiet, a whole-document --format (json, sarif),
        results that were not all written (nobody read them: the counts would mislead), a run
        cut short (:attr:`complete`), or a run of one source (its own line and the exit status
        already say all a count would)."""
        if getattr(args, "quiet", False) or is_document(getattr(args, "format", None)):
            return
        if out.lost or not self.complete:
            return
        if sum(self.counts.values()) + self.unread < 2:  # one source: its own line says it all
            return
        error_line(self.line())
