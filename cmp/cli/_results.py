"""Where a run's results go, in its format: written as blocks arrive, problems in their place."""

from __future__ import annotations

from cmp.cli._output import JsonResults, Output, error_line
from cmp.cli._progress import Progress
from cmp.cli._render import Block, error_entry

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from cmp.cli._render import Format
    from cmp.cli._sarif import SarifLog


class Results:
    """Where the results of ``check`` and ``audit`` go: lines (text, github), or the streamed
    JSON document or SARIF log; and what could not be read, in each of those."""

    def __init__(self, out: Output, progress: Progress, *, format: Format) -> None:
        self.out = out
        self.progress = progress
        self.format = format
        self.document = JsonResults(out) if format == "json" else None
        self.log: SarifLog | None = None
        if format == "sarif":
            from cmp.cli._sarif import SarifLog

            self.log = SarifLog(out)

    def block(self, block: Block) -> None:
        """A share's results, rendered where it was judged, written as they are."""
        sink = self.document or self.log
        if sink is not None:
            sink.add_fragment(block.output, block.entries)
        elif block.output:
            self.out.write(block.output)

    def error(self, file: str, line: int | None, message: str) -> None:
        """One line on stderr and, in a document or on GitHub, its own entry in the source's place."""
        self.progress.clear()
        error_line(f"{file if line is None else f'{file}:{line}'}: {message}")
        if self.document is not None:
            self.document.add(error_entry(file, line, message))
        elif self.log is not None:
            self.log.not_checked(file, line, message)
        elif self.format == "github":
            from cmp.cli._github import unreadable_command

            self.out.line(unreadable_command(file, line, message))

    def close(self, **after: Any) -> None:
        """End the document or log; ``after`` are the JSON document's members after its results."""
        if self.document is not None:
            self.document.close(**after)
        if self.log is not None:
            self.log.close()
