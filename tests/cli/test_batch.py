"""Batch checking: JSON Lines input, per-line results, worker processes, the progress line."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from cmp.cli import main
from cmp.cli._batch import merged, runner_for
from cmp.cli._judge import CheckOptions, check_share, judge
from cmp.cli._progress import Progress
from cmp.cli._render import Block
from cmp.cli._sources import Source, Unreadable, read_jsonl, shares_of
from tests.support.packets import encode, full, put

GOOD = encode(full())
BAD = encode(put(full(), "tags[0]", "Bad"))
LEAKY = encode(put(full(), "goal", "AKIAIOSFODNN7EXAMPLE"))
PLAIN = CheckOptions()


@pytest.fixture
def jsonl(tmp_path: Path) -> Path:
    path = tmp_path / "packets.jsonl"
    path.write_bytes(b"\n".join([GOOD, BAD, b"", b"  ", LEAKY, b"{", GOOD]) + b"\r\n")
    return path


def test_read_jsonl_numbers_lines_and_skips_blank_ones(jsonl: Path) -> None:
    with open(jsonl, "rb") as stream:
        sources = list(read_jsonl(stream, "p.jsonl"))
    assert [source.line for source in sources] == [1, 2, 5, 6, 7]
    assert sources[-1].data == GOOD  # CRLF stripped
    assert sources[0].name == "p.jsonl:1"


# Over-long lines measured less their line end, LF or CRLF, wherever the CR falls among
# the reads that skip the line (32,770 bytes first, then 65,536 at a time).
@pytest.mark.parametrize(
    ("length", "end"),
    [(40_000, b"\n"), (40_000, b"\r\n"), (32_770 + 65_535, b"\r\n"), (32_770 + 65_536, b"\r\n"), (32_769, b"\r\n")],
)
def test_over_long_line_is_cut_and_measured(length: int, end: bytes) -> None:
    stream = io.BytesIO(b" " * (length - 1) + b"x" + end + GOOD + b"\n")
    sources = list(read_jsonl(stream, "s"))
    assert [(source.line, len(source.data), source.size) for source in sources] == [
        (1, 32_770, length),  # enough to know it is too large
        (2, len(GOOD), len(GOOD)),
    ]


def test_jsonl_text_output(jsonl: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--jsonl", str(jsonl)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"{jsonl}:1: ok"
    # FILE:LINE:COLUMN of the file itself: a packet's line is the JSON Lines file's line.
    assert out[1].startswith(f"{jsonl}:2:596: $.tags[0]: 'Bad' does not match")
    assert out[2] == f"{jsonl}:5:107: redaction goal/aws-key: AKIA… (20 chars) at 0"
    assert out[3].startswith(f"{jsonl}:6:2: $: invalid json")
    assert out[4] == f"{jsonl}:7: ok"


def test_jsonl_json_output_has_line_numbers(jsonl: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--format", "json", "--jsonl", str(jsonl)]) == 1
    results = json.loads(capsys.readouterr().out)["results"]
    assert [(r["line"], r["ok"]) for r in results] == [(1, True), (2, False), (5, False), (6, False), (7, True)]


def test_jsonl_from_stdin() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "cmp", "check", "--jsonl", "-"],
        input=GOOD + b"\n" + GOOD,
        capture_output=True,
        timeout=60,
    )
    assert (result.returncode, result.stdout) == (0, b"-:1: ok\n-:2: ok\n")


def test_workers_give_the_same_results_in_order(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "many.jsonl"
    lines = [GOOD, BAD, LEAKY] * 700  # more than one batch
    path.write_bytes(b"\n".join(lines))
    assert main(["check", "--jsonl", str(path)]) == 1
    single = capsys.readouterr().out
    assert main(["check", "--jobs", "2", "--jsonl", str(path)]) == 1
    assert capsys.readouterr().out == single
    assert single.count(": ok\n") == 700


def judged(items: list[Source | Unreadable], options: CheckOptions, workers: int) -> list[Block | Unreadable]:
    shares = shares_of(items, one_by_one=workers == 1)
    return list(merged(shares, check_share, options, runner_for(workers)))


def test_shares_keep_their_order_across_processes() -> None:
    sources = [Source("f", i, GOOD if i % 3 else BAD, None) for i in range(1, 301)]
    blocks = judged(sources, PLAIN, 2)
    assert all(isinstance(block, Block) for block in blocks)
    one_by_one = [judge(source, PLAIN) for source in sources]
    expected = "".join(text + "\n" for verdict in one_by_one for _, text in verdict.output)
    assert b"".join(block.output for block in blocks if isinstance(block, Block)).decode() == expected
    assert sum(block.failed for block in blocks if isinstance(block, Block)) == 100


@pytest.mark.parametrize("workers", [1, 2])
def test_unreadable_sources_keep_their_place(workers: int) -> None:
    items = [Source("f", i, GOOD, None) if i % 50 else Unreadable(f"u{i}", "cannot open: gone") for i in range(1, 501)]
    out = judged(items, PLAIN, workers)
    order = [line.split(": ")[0] for o in out if isinstance(o, Block) for line in o.output.decode().splitlines()]
    unreadable = [o.file for o in out if isinstance(o, Unreadable)]
    assert order == [f"f:{i}" for i in range(1, 501) if i % 50]
    assert unreadable == [f"u{i}" for i in range(50, 501, 50)]
    # Each unreadable source comes after exactly the packets before it.
    seen = 0
    for o in out:
        if isinstance(o, Unreadable):
            assert seen == int(o.file[1:]) - int(o.file[1:]) // 50
        else:
            seen += o.packets


def test_json_blocks_carry_their_entries_as_document_text() -> None:
    as_json = CheckOptions(format="json")
    (block,) = judged([Source("f", 7, BAD, None)], as_json, 1)
    assert isinstance(block, Block) and block.entries == 1
    entry = json.loads(block.output)
    assert (entry["file"], entry["line"], entry["ok"]) == ("f", 7, False)


def test_missing_jsonl_file_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--jsonl", str(tmp_path / "none.jsonl")]) == 2
    assert "cannot open" in capsys.readouterr().err


@pytest.mark.parametrize("jobs", ["-1", "257", "100000"])
def test_bad_jobs_value(jobs: str, capsys: pytest.CaptureFixture[str]) -> None:
    """A negative count, or one that would fork a process per number, is a usage error."""
    assert main(["check", "--jobs", jobs, "x"]) == 2
    assert capsys.readouterr().err == "cmp: --jobs must be 0 (all cores) to 256\n"


def test_lenient_text_output_warns_for_a_truncated_schema_report(tmp_path: Path) -> None:
    path = tmp_path / "many.json"
    path.write_bytes(encode({**full(), "tags": ["Bad"] * 120}))
    result = subprocess.run(
        [sys.executable, "-m", "cmp", "check", "--lenient", str(path)], capture_output=True, timeout=60
    )
    lines = result.stdout.decode().splitlines()
    assert result.returncode == 0
    assert lines[-2].startswith(f"{path}:1:1: warning: $: ") and "more findings not listed" in lines[-2]
    assert lines[-1] == f"{path}: accepted (not conforming)"


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_only_on_a_terminal_and_only_when_slow(monkeypatch: pytest.MonkeyPatch) -> None:
    import cmp.cli._progress as progress_module

    clock = iter([0.0] + [0.5] * 3 + [2.0 + i for i in range(10)])
    monkeypatch.setattr(progress_module.time, "monotonic", lambda: next(clock))
    terminal = FakeTerminal()
    progress = Progress(100, terminal)
    for _ in range(6):
        progress.step()
    progress.close()
    shown = terminal.getvalue()
    assert "cmp: 4/100 packets" in shown and shown.endswith("\r\033[K")
    assert "cmp: 1/100" not in shown  # nothing in the first second

    piped = io.StringIO()
    quiet = Progress(100, piped)
    for _ in range(5):
        quiet.step()
    quiet.close()
    assert piped.getvalue() == ""


def test_jsonl_directory_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--jsonl", str(tmp_path)]) == 2
    assert capsys.readouterr().err == f"cmp: {tmp_path}: cannot read: is a directory\n"


def test_jobs_zero_means_every_core(jsonl: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--jobs", "0", "--jsonl", str(jsonl)]) == 1
    assert capsys.readouterr().out.count(": ok\n") == 2
