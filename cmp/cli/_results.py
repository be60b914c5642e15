"""Where a run's results go, in its format: written as blocks arrive, problems in their place."""

from __future__ import annotations

from cmp.cli._output import Output, error_line
from cmp.cli._progress import Progress
from cmp.cli._render import Block
from cmp.cli.reporters import reporter

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class Results:
    """Where the results of ``check`` and ``audit`` go: the reporter's output of ``format``
    (lines, or a streamed document), and what could not be read, in it and on stderr."""

    def __init__(self, out: Output, progress: Progress, *, format: str) -> None:
        self.progress = progress
        self.sink = reporter(format).begin(out)

    def block(self, block: Block) -> None:
        """A share's results, rendered where it was judged, written as they are."""
        self.sink.add(block.output, block.entries)

    def error(self, file: str, line: int | None, message: str) -> None:
        """One line on stderr and, where the format has a place for it, its own entry in the source's place."""
        self.progress.clear()
        error_line(f"{file if line is None else f'{file}:{line}'}: {message}")
        self.sink.unreadable(file, line, message, {})

    def close(self, **after: Any) -> None:
        """End the output; ``after`` are the JSON document's members after its results."""
        self.sink.close(after)
