"""Exit statuses: 0 every packet accepted, 1 any not, 2 a usage error or a file that could not be read or written."""

from __future__ import annotations

from dataclasses import dataclass

from cmp.cli._output import error_line

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2


@dataclass
class ExitStatus:
    """The exit status of one command, the worst so far, as sources are read and judged."""

    status: int = EXIT_OK

    def fail(self, code: int) -> None:
        self.status = max(self.status, code)

    def file_error(self, name: str, message: str) -> None:
        """A file that could not be read, or not rewritten: one line on stderr, exit status 2.

        That says nothing of its packet; the other files are still processed.
        """
        self.fail(EXIT_USAGE)
        error_line(f"{name}: {message}")
