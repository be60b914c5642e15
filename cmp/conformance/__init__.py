"""The conformance runner: our vectors against this library or any other implementation.

Protocol for ``--impl COMMAND`` (the full text is conformance-vectors/README.md, "The
harness protocol"): the command is split into words by POSIX shell rules and started
once, without a shell; for each vector the runner writes one JSON line
``{"id", "input_base64"}`` to its stdin and reads one JSON line back:
``{"id", "conforming", "errors": [{"code", "path", "keyword"}], "redactions": [str],
"canonical_base64": str | null}``, or ``{"id", "error": str}`` for a request it cannot
read. A crash, a malformed, late, missing or wrongly labelled answer fails that vector
and the implementation is restarted for the next one; an error answer fails the
vector only.

Findings are compared as the vectors' ``expect`` says: every one of ``errors`` must be
reported, each of ``optional_errors`` may be (at most once), at least one of each group
of ``error_choices`` must be (each at most once), and nothing else may be.

Each concern is one module (the messages, comparing an answer, the vector folder, another
program, the run, its report); their layers are docs/architecture.md's. The
``conformance`` command's options and exit statuses are the CLI's (cmp.cli).
"""

from __future__ import annotations

from cmp.conformance._compare import compare
from cmp.conformance._implementation import MAX_ANSWER_BYTES, Implementation, split_command
from cmp.conformance._protocol import request_line, respond, strict_b64decode
from cmp.conformance._report import junit_lines, report
from cmp.conformance._runner import GIVE_UP_AFTER, VectorResult, run
from cmp.conformance._vectors import (
    MAX_VECTOR_FILE_BYTES,
    SCHEMA_FILE,
    VectorError,
    default_vector_dir,
    load_vectors,
    vector_input,
)

__all__ = [
    "GIVE_UP_AFTER",
    "MAX_ANSWER_BYTES",
    "MAX_VECTOR_FILE_BYTES",
    "SCHEMA_FILE",
    "Implementation",
    "VectorError",
    "VectorResult",
    "compare",
    "default_vector_dir",
    "junit_lines",
    "load_vectors",
    "report",
    "request_line",
    "respond",
    "run",
    "split_command",
    "strict_b64decode",
    "vector_input",
]
