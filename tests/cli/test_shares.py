"""Shares: a JSON Lines file read in parts by whoever judges them gives what one reading gives,
and a run spread over workers prints what a run in one process prints, byte for byte."""

from __future__ import annotations

import io
import itertools
import json
import os
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cmp._intake import MAX_PACKET_BYTES
from cmp.cli import main
from cmp.cli._batch import COUNTED_TOGETHER, SMALLEST_SHARE_BYTES, ProcessPool, jsonl_shares, merged, share_starts
from cmp.cli._judge import CheckOptions, check_share
from cmp.cli._render import Block
from cmp.cli._sources import SHARE_BYTES, JsonlShare, Source, SourceError, newline_counts, newlines_in, read_jsonl
from tests.support.examples import examples
from tests.support.packets import encode, full, minimal, put
from tests.support.running import under_way

GOOD = encode(full())
BAD = encode(put(full(), "tags[0]", "Bad"))
LEAKY = encode(put(full(), "goal", "AKIAIOSFODNN7EXAMPLE"))
# A packet with more than a hundred findings: its JSON result is about a hundred times its size.
NOISY = json.dumps({"ltm_version": "0.2", **{f"x{i}": i for i in range(150)}}).encode()

# Lines of every kind the reader tells apart: packets, blank and white lines, CRLF ends,
# a line over the read limit, bytes that are no JSON.
LINE_KINDS = st.sampled_from(
    [GOOD, BAD, b"", b"  \t", b"{", b"x" * (MAX_PACKET_BYTES + 5), b"y" * MAX_PACKET_BYTES, b"\r", b"a\rb"]
)


def whole(path: Path) -> list[Source]:
    with path.open("rb") as stream:
        return list(read_jsonl(stream, "f"))


def in_shares(path: Path, cuts: list[int]) -> list[Source]:
    """The file read share by share, cut at ``cuts``, each share's line numbers from counting the ones before."""
    size = path.stat().st_size
    bounds = sorted({0, *(cut for cut in cuts if 0 < cut < size)})
    counts = newline_counts(str(path), (*bounds, size))
    sources: list[Source] = []
    lines_before = 0
    for index, start in enumerate(bounds):
        end = bounds[index + 1] if index + 1 < len(bounds) else None
        reader = JsonlShare(str(path), "f", start, end, lines_before).open()
        with reader.stream:
            sources.extend(reader)
        lines_before += counts[index]
    return sources


@settings(max_examples=examples(150))
@given(
    lines=st.lists(LINE_KINDS, max_size=12),
    crlf=st.lists(st.booleans(), min_size=12, max_size=12),
    final_newline=st.booleans(),
    cuts=st.lists(st.integers(min_value=0, max_value=200_000), max_size=8),
)
def test_shares_read_what_one_reading_reads(
    tmp_path_factory: pytest.TempPathFactory, lines: list[bytes], crlf: list[bool], final_newline: bool, cuts: list[int]
) -> None:
    ends = [b"\r\n" if wide else b"\n" for wide in crlf]
    data = b"".join(line + ends[i] for i, line in enumerate(lines))
    if not final_newline and data:
        data = data[: -len(ends[len(lines) - 1])]
    path = tmp_path_factory.mktemp("shares") / "p.jsonl"
    path.write_bytes(data)
    # Cuts anywhere: inside lines, on newlines, between CR and LF, in over-long lines.
    assert in_shares(path, [*cuts, len(data) // 2, len(data) - 1]) == whole(path)


@settings(max_examples=examples(60))
@given(lines=st.lists(LINE_KINDS, min_size=1, max_size=10), stop_after=st.integers(min_value=1, max_value=10))
def test_a_share_picked_up_where_it_stopped_reads_on_the_same(
    tmp_path_factory: pytest.TempPathFactory, lines: list[bytes], stop_after: int
) -> None:
    path = tmp_path_factory.mktemp("rest") / "p.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    share = JsonlShare(str(path), "f", 0, None, 0)
    sources: list[Source] = []
    while True:  # read a few packets, stop between two, pick up the rest: as check_share does
        reader = share.open()
        with reader.stream:
            taken = [source for _, source in zip(range(stop_after), reader, strict=False)]
        sources.extend(taken)
        if len(taken) < stop_after or not reader.more():
            break
        share = share.rest(reader)
    assert sources == whole(path)


def test_newline_counts_count_each_range(tmp_path: Path) -> None:
    path = tmp_path / "p.jsonl"
    path.write_bytes(b"a\nb\r\n\n" * 1000)
    assert newline_counts(str(path), (0, path.stat().st_size)) == [3000]
    assert newline_counts(str(path), (1, 2)) == [1]
    assert newline_counts(str(path), (2, 2)) == [0]
    assert newline_counts(str(path), (0, 1, 2, 3, 6000)) == [0, 1, 0, 2999]
    # Ranges longer than the one buffer the counting reads into.
    long_lines = b"".join(b"x" * (length % 5000) + b"\n" for length in range(0, 3_000_000, 4999))
    path.write_bytes(long_lines)
    bounds = (0, 5, 1_500_000, 1_500_001, len(long_lines))
    assert newline_counts(str(path), bounds) == [long_lines.count(b"\n", a, b) for a, b in itertools.pairwise(bounds)]


# Lines of every length about the point where newlines_in stops finding and counts.
LINE_LENGTHS = st.lists(st.integers(min_value=0, max_value=3000), max_size=400)


@settings(max_examples=examples(200))
@given(lengths=LINE_LENGTHS, cut=st.integers(min_value=0, max_value=10**6), trailing=st.binary(max_size=40))
def test_newlines_in_counts_what_bytes_count_counts(lengths: list[int], cut: int, trailing: bytes) -> None:
    data = b"".join(b"x" * length + b"\n" for length in lengths) + trailing
    end = min(cut, len(data))
    assert newlines_in(data, end) == data.count(b"\n", 0, end)
    assert newlines_in(bytearray(data), len(data)) == data.count(b"\n")


def test_newlines_in_counts_dense_newlines_at_one_go() -> None:
    # A million newlines: found one by one, this takes a million Python calls.
    data = b"\n" * 1_000_000 + b"x" * 5000 + b"\n"
    assert newlines_in(data, len(data)) == 1_000_001


@settings(max_examples=examples(200))
@given(
    size=st.integers(min_value=0, max_value=200 * SHARE_BYTES),
    largest=st.sampled_from([SMALLEST_SHARE_BYTES, SHARE_BYTES, ProcessPool.share_bytes, 16 * SHARE_BYTES]),
    in_flight=st.integers(min_value=1, max_value=64),
)
def test_share_starts_cover_the_file_with_shares_that_shrink_toward_its_end(
    size: int, largest: int, in_flight: int
) -> None:
    starts = share_starts(size, largest, in_flight)
    assert starts[0] == 0 and all(a < b for a, b in itertools.pairwise(starts)) and starts[-1] < max(size, 1)
    steps = [b - a for a, b in itertools.pairwise(starts)]
    assert all(SMALLEST_SHARE_BYTES <= step <= largest for step in steps)
    assert steps == sorted(steps, reverse=True)
    for start, step in zip(starts, steps, strict=False):
        assert step in (largest, SMALLEST_SHARE_BYTES) or step == (size - start) // (2 * in_flight)
    # However large the shares before it, the last one is small: no worker is left with much.
    assert size - starts[-1] <= SMALLEST_SHARE_BYTES


class _Fetched:
    """A finished result that, like a cluster's, may not be fetchable the first time it is asked for."""

    def __init__(self, value: Any, *, fetchable_at_once: bool) -> None:
        self.value, self.asked = value, int(fetchable_at_once)

    def done(self) -> bool:
        return True

    def result(self, timeout: float | None = None) -> Any:
        self.asked += 1
        if self.asked == 1:
            raise TimeoutError("not fetched yet")
        return self.value


class _RunsHere:
    """A runner of the workers' kind (parallel) that runs what it is handed here, keeps
    what that was, and hands back :class:`_Fetched` results (unless ``fetchable_at_once``,
    not fetchable the first time, as a cluster's may not be)."""

    parallel = True
    in_flight = 4
    share_bytes = SHARE_BYTES
    share_rows = 1000

    def __init__(self, *, fetchable_at_once: bool) -> None:
        self.fetchable_at_once = fetchable_at_once
        self.handed: list[tuple[Any, ...]] = []

    def submit(self, fn: Any, *args: Any) -> _Fetched:
        self.handed.append((fn, *args))
        return _Fetched(fn(*args), fetchable_at_once=self.fetchable_at_once)

    def result(self, future: _Fetched) -> Any:
        return future.result()

    def close(self, *, completed: bool) -> None:
        pass


def test_the_shares_of_a_file_know_their_line_numbers_from_few_counts(tmp_path: Path) -> None:
    path = tmp_path / "p.jsonl"
    lines = [GOOD, b"", b"{", BAD] * (12 * SHARE_BYTES // (len(GOOD) + len(BAD)))
    path.write_bytes(b"\n".join(lines) + b"\n")
    data = path.read_bytes()
    runner = _RunsHere(fetchable_at_once=True)
    shares = list(jsonl_shares(str(path), "f", len(data), runner))
    assert all(isinstance(share, JsonlShare) for share in shares)
    starts = [share.start for share in shares if isinstance(share, JsonlShare)]
    assert starts == share_starts(len(data), SHARE_BYTES, 4) and len(starts) > 2 * COUNTED_TOGETHER
    assert [share.lines_before for share in shares if isinstance(share, JsonlShare)] == [
        data.count(b"\n", 0, start) for start in starts
    ]
    # One task counts COUNTED_TOGETHER shares; the last share's newlines are never needed.
    assert len(runner.handed) == -(-(len(starts) - 1) // COUNTED_TOGETHER)


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Several shares of every kind of line; noisy packets make some shares stop early on output."""
    lines = [GOOD, BAD, b"", LEAKY, b"{", GOOD + b"\r", b"z" * (MAX_PACKET_BYTES + 10)] * 300
    lines += [NOISY] * 400 + [GOOD, LEAKY] * 600
    path = tmp_path_factory.mktemp("mixed") / "mixed.jsonl"
    path.write_bytes(b"\n".join(lines))
    assert path.stat().st_size > 4 * SHARE_BYTES
    return path


@pytest.mark.parametrize("format", ["text", "json", "github", "sarif"])
def test_workers_print_what_one_process_prints(
    mixed: Path, format: str, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    outputs = []
    for jobs in ("1", "2"):
        assert main(["check", "--format", format, "--jobs", jobs, "--jsonl", str(mixed)]) == 1
        outputs.append(capsysbinary.readouterr())
    (single, single_err), (spread, spread_err) = outputs
    assert spread == single and spread_err == single_err
    if format == "json":
        lines = [result["line"] for result in json.loads(single)["results"]]
        assert lines == sorted(lines) and len(lines) == 300 * 6 + 400 + 1200
    if format == "text":
        text = io.StringIO(single.decode())
        assert sum(1 for line in text if line.endswith(": ok\n")) == 300 * 2 + 600


def test_a_share_of_a_file_that_changed_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "p.jsonl"
    path.write_bytes(b"\n".join([GOOD] * (3 * SHARE_BYTES // len(GOOD))))
    inode = path.stat().st_ino
    share = JsonlShare(str(path), "p.jsonl", SHARE_BYTES, 2 * SHARE_BYTES, 0, inode)
    with open(path, "r+b") as stream:
        stream.truncate(len(GOOD))  # the same file, now ending before the share starts
    with pytest.raises(SourceError, match=r"^changed while it was read: it was cut short$"):
        share.open()
    with pytest.raises(SourceError, match=r"^changed while it was read: it was cut short$"):
        newline_counts(str(path), (0, SHARE_BYTES), inode)
    other = tmp_path / "other.jsonl"
    other.write_bytes(b"\n".join([GOOD] * (3 * SHARE_BYTES // len(GOOD))))
    os.replace(other, path)  # another file under the name
    with pytest.raises(SourceError, match=r"^changed while it was read: another file took its name$"):
        share.open()
    path.unlink()
    with pytest.raises(SourceError, match=r"^cannot open: No such file"):
        share.open()


@pytest.mark.parametrize("inside_a_line", [True, False], ids=["inside-a-line", "at-a-line-end"])
def test_a_file_cut_short_inside_a_share_being_read_is_refused_not_judged(tmp_path: Path, inside_a_line: bool) -> None:
    # The part of a line left at the file's new end was judged as a packet (invalid JSON).
    path = tmp_path / "p.jsonl"
    path.write_bytes(b"\n".join([GOOD] * (3 * SHARE_BYTES // len(GOOD))) + b"\n")
    share = JsonlShare(str(path), "p.jsonl", 0, 2 * SHARE_BYTES, 0, path.stat().st_ino)
    reader = share.open()
    whole_lines = SHARE_BYTES // (len(GOOD) + 1)
    try:
        os.truncate(path, whole_lines * (len(GOOD) + 1) + (len(GOOD) // 2 if inside_a_line else 0))
        read = []
        with pytest.raises(SourceError, match=r"^changed while it was read: it was cut short$"):
            read.extend(reader)
    finally:
        reader.stream.close()
    assert [source.data for source in read] == [GOOD] * whole_lines


def test_a_share_stops_early_once_its_output_is_large_and_its_rest_reads_on(tmp_path: Path) -> None:
    path = tmp_path / "noisy.jsonl"
    path.write_bytes(b"\n".join([NOISY] * 400))
    as_json = CheckOptions(format="json")
    share: object = JsonlShare(str(path), "n", 0, None, 0)
    blocks = []
    while share is not None:
        assert isinstance(share, JsonlShare)
        blocks.append(check_share(share, as_json))
        share = blocks[-1].rest
    assert len(blocks) > 3  # far less input than SHARE_BYTES, but output past it
    assert all(len(block.output) < 2 * SHARE_BYTES for block in blocks)
    assert sum(block.packets for block in blocks) == 400
    entries = json.loads("[" + ",".join(block.output.decode() for block in blocks) + "]")
    assert [entry["line"] for entry in entries] == list(range(1, 401))


@pytest.mark.parametrize("jobs", ["1", "2"])
@pytest.mark.parametrize(
    ("change", "message"),
    [("replace", "another file took its name"), ("truncate", "it was cut short")],
)
def test_a_file_changed_under_the_run_is_named_not_mixed(tmp_path: Path, jobs: str, change: str, message: str) -> None:
    path = tmp_path / "live.jsonl"
    line = encode(minimal())
    path.write_bytes(b"\n".join([line] * (8 * SHARE_BYTES // len(line))) + b"\n")
    run, first = under_way("check", "--jobs", jobs, "--jsonl", str(path))
    try:
        time.sleep(0.5)  # the unread pipe fills and holds the run up mid-file
        if change == "replace":
            other = tmp_path / "other.jsonl"
            other.write_bytes(b'{"another": "file"}\n' * 200_000)
            os.replace(other, path)
        else:
            os.truncate(path, SHARE_BYTES // 2)
        rest, err = run.communicate(timeout=120)
    finally:
        run.kill()
        run.wait()
    assert run.returncode == 2
    lines = (first + rest).decode().splitlines()
    # What was printed is the first file's results, in order, and nothing of the other's.
    assert lines == [f"{path}:{number}: ok" for number in range(1, len(lines) + 1)]
    assert len(lines) < 8 * SHARE_BYTES // len(line)
    # Said once, not once for each share of the file left (workers fail each the same way).
    said, summary = err.decode().splitlines()
    assert said == f"cmp: {path}: changed while it was read: {message}"
    assert summary == f"cmp: check: {len(lines):,} packets, {len(lines):,} accepted; 1 file not read"


def test_a_rest_is_never_lost_when_a_result_is_not_fetchable_at_first(tmp_path: Path) -> None:
    path = tmp_path / "noisy.jsonl"
    path.write_bytes(b"\n".join([NOISY] * 400))
    as_json = CheckOptions(format="json")
    shares = [JsonlShare(str(path), "n", 0, None, 0)]
    blocks = list(merged(shares, check_share, as_json, _RunsHere(fetchable_at_once=False)))
    assert len(blocks) > 3 and sum(block.packets for block in blocks if isinstance(block, Block)) == 400
