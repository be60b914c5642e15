"""Every committed vector through the command line: ``check --format json --show-found`` and
``fmt --write --allow-unredacted`` give the answer each vector expects.

The answer is made from the CLI's output as a command-line implementation's adapter makes
it (examples/node-adapter/adapter.mjs, which the integration tests run on a vector of every
kind): the report's ``conforming``, each error's code, path and keyword, each redaction's
text, and the canonical bytes fmt writes, less the file's final newline. Here the files go
to two processes in all, not one or two a vector.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

from cmp.conformance import compare, vector_input
from tests.support.cli import run_cli
from tests.support.vectors import committed_vectors


def answer_of(result: dict[str, Any], written: bytes | None) -> dict[str, Any]:
    """The protocol's answer from one result of check's JSON report and the bytes fmt wrote."""
    assert result["error"] is None, result["error"]
    canonical = None if written is None else written.removesuffix(b"\n")
    return {
        "conforming": result["conforming"],
        "errors": [{key: error[key] for key in ("code", "path", "keyword")} for error in result["errors"]],
        "redactions": [redaction["text"] for redaction in result["redactions"]],
        "canonical_base64": None if canonical is None else base64.b64encode(canonical).decode("ascii"),
    }


def test_every_vector_gets_its_answer_from_check_and_fmt(tmp_path: Path) -> None:
    vectors = committed_vectors()
    judged, formatted = tmp_path / "judged", tmp_path / "formatted"
    judged.mkdir()
    formatted.mkdir()
    # Zero-padded names: a folder is checked in sorted order, which is then the vectors' order.
    names = [f"{index:04}.json" for index in range(len(vectors))]
    for name, vector in zip(names, vectors, strict=True):
        (judged / name).write_bytes(vector_input(vector))

    checked = run_cli("check", "--format", "json", "--show-found", str(judged))
    assert checked.returncode == 1, checked.stderr  # some vectors are refused
    results = json.loads(checked.stdout)["results"]
    assert [Path(result["file"]).name for result in results] == names

    conforming = [name for name, result in zip(names, results, strict=True) if result["conforming"]]
    assert conforming and len(conforming) < len(names)
    for name in conforming:
        (formatted / name).write_bytes((judged / name).read_bytes())
    written = run_cli(
        "fmt", "--write", "--allow-unredacted", "--quiet", *(str(formatted / name) for name in conforming)
    )
    assert written.returncode == 0, written.stderr

    problems = {}
    for name, vector, result in zip(names, vectors, results, strict=True):
        canonical = (formatted / name).read_bytes() if result["conforming"] else None
        found = compare(vector, answer_of(result, canonical))
        if found:
            problems[vector["id"]] = found
    assert problems == {}
