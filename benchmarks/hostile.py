"""Hostile inputs: every one at most 32,768 bytes, each timed with cmp.check against json.loads.

    python benchmarks/hostile.py                 # every input (minutes on slow code)
    python benchmarks/hostile.py --quick         # fewer rounds, shorter turns
    python benchmarks/hostile.py --only deep-10000 odd-secrets
    python benchmarks/hostile.py --list          # names, sizes and what each one is
    python benchmarks/hostile.py --write DIR     # write the inputs out, one file each
    python benchmarks/hostile.py --located       # check + located() as well (the HTTP intake's 422)

The yardstick is the issue's: every input of at most 32,768 bytes checked within 100x
the time ``json.loads`` takes on a typical 32 KB conforming packet (``big`` from
corpus.py), with less than 20 MB of extra memory. Times are medians over rounds in
which cmp.check, json.loads of the same bytes and json.loads of ``big`` each take their
turn, and every ratio is taken within a round, as run.py does: this machine's speed
drifts. An input whose single check takes seconds gets fewer rounds (see ROUNDS_*).

Memory is measured in a child process per input, which first warms up (imports, the
compiled schema builders, jsonschema, the RE2 searches: one-time costs of any process),
then builds the input, resets the kernel's peak-RSS mark (``5`` into
/proc/self/clear_refs), reads VmRSS, runs one check and reads VmHWM. That catches
every allocation, RE2's C++ DFA caches and the decoder's C buffers included, which
tracemalloc cannot see; the same child then runs the check once more under
tracemalloc, whose peak counts Python's own allocations exactly, down to objects that
come and go faster than a page. The table shows both; the target uses the larger.

To add an input, write a builder returning bytes and add a Case to CASES.
"""

from __future__ import annotations

import argparse
import gc
import itertools
import json
import random
import statistics
import subprocess
import sys
import time
import tracemalloc
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import corpus  # noqa: E402
from run import machine, table  # noqa: E402

import cmp  # noqa: E402

LIMIT = 32_768
DEPTH_LIMIT = 10_000
TARGET_RATIO = 100.0  # x json.loads of the 32 KB packet
TARGET_MB = 20.0
ROUNDS_SLOW = 3  # rounds for an input whose one check takes more than SLOW seconds
ROUNDS_VERY_SLOW = 1  # ... more than VERY_SLOW seconds
SLOW = 3.0
VERY_SLOW = 30.0

# Synthetic secrets only (the AWS documentation's example key, made-up tokens).
AWS_KEY = "AKIAIOSFODNN7EXAMPLE"
GH_TOKEN = "ghp_" + "a1B2c3D4e5" * 4
STRIPE_KEY = "sk_live_" + "0123456789abcdefABCD" * 2
ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"


# --- building blocks -------------------------------------------------------------------


def _compact(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def _base(**extra: Any) -> dict[str, Any]:
    """A small valid v0.2 packet; ``extra`` members are added or replaced."""
    obj: dict[str, Any] = {
        "ltm_version": "0.2",
        "id": "01J9X8K2QZ7N4M0WXYZV3R8ABC",
        "created_at": "2026-04-21T10:30:00.250+02:00",
        "goal": "Ship the hostile benchmark.",
        "next_step": "Measure it.",
    }
    obj.update(extra)
    return obj


def _fill(
    head: str, items: Iterator[str], tail: str, sep: str = ",", limit: int = LIMIT, most: int | None = None
) -> bytes:
    """``head`` + as many of ``items`` (joined by ``sep``) as fit in ``limit`` bytes + ``tail``.

    ``most`` caps the count (an array's maxItems).
    """
    size = len(head.encode()) + len(tail.encode())
    parts: list[str] = []
    for item in items:
        grow = len(item.encode()) + (len(sep) if parts else 0)
        if size + grow > limit or len(parts) == most:
            break
        parts.append(item)
        size += grow
    return (head + sep.join(parts) + tail).encode()


def _repeat(item: str) -> Iterator[str]:
    while True:
        yield item


def _names() -> Iterator[str]:
    """Distinct member names, shortest first: a..9, then aa..99, ..."""
    length = 1
    while True:
        count = len(ALNUM) ** length
        for number in range(count):
            name = ""
            for _ in range(length):
                number, digit = divmod(number, len(ALNUM))
                name = ALNUM[digit] + name
            yield name
        length += 1


def _open_object(obj: dict[str, Any]) -> str:
    """The compact text of ``obj`` without its closing brace, ready for more members."""
    return _compact(obj)[:-1] + ","


# Where _text_packet puts texts, in order, with each field's maxItems.
_TEXT_SLOTS: tuple[tuple[str, int], ...] = (
    ("goal", 1),
    ("next_step", 1),
    ("constraints", 32),
    ("success_criteria", 16),
    ("open_questions", 32),
)


def _indented(obj: Any) -> bytes:
    return json.dumps(obj, ensure_ascii=False, indent=2).encode()


def _text_packet(make: Callable[[int], str], length: int = 1000, base: dict[str, Any] | None = None) -> bytes:
    """A valid v0.2 packet whose scanned texts come from ``make(length)`` until 32 KB is full.

    Written with a two-space indent, as the canonical form is, so that the packet and
    its canonical form both fit the limit (for texts without ``<``, ``>`` and ``&``). The
    last text is made shorter to fit; ``make`` is always asked for the length it must write.
    """
    obj = dict(base or _base())
    for name, count in _TEXT_SLOTS:
        for _ in range(count):
            # A new text costs its bytes, quotes, a comma, indents and perhaps `"name": [...]`.
            room = LIMIT - len(_indented(obj)) - len(name) - 24
            if room < 64:
                return _indented(obj)
            text = make(min(length, room))
            while True:
                trial = dict(obj)
                trial[name] = text if count == 1 else [*obj.get(name, []), text]
                over = len(_indented(trial)) - LIMIT
                if over <= 0:
                    break
                text = make(len(text) - over - 1)
            obj = trial
    return _indented(obj)


# --- the inputs ------------------------------------------------------------------------


def deep_surrogates(depth: int = 9_990) -> bytes:
    """``depth`` arrays around as many lone-surrogate escapes as fit."""
    return _fill("[" * depth, _repeat('"\\ud800"'), "]" * depth)


def deep_duplicates(depth: int = 9_990) -> bytes:
    """``depth`` arrays around one object whose distinct names each appear twice."""
    pairs = (f'"{name}":0,"{name}":0' for name in _names())
    return _fill("[" * depth + "{", pairs, "}" + "]" * depth)


def empty_attempts() -> bytes:
    """A valid-looking v0.2 packet whose attempts array holds as many ``{}`` as fit."""
    return _fill(_open_object(_base()) + '"attempts":[', _repeat("{}"), "]}")


def nesting(depth: int = DEPTH_LIMIT) -> bytes:
    """Bare nesting: ``depth`` arrays, nothing else."""
    return ("[" * depth + "]" * depth).encode()


def flat_duplicates(distinct: bool = False) -> bytes:
    """A flat object of repeated members: one name over and over, or each name twice."""
    if distinct:
        return _fill("{", (f'"{name}":1,"{name}":1' for name in _names()), "}")
    return _fill("{", _repeat('"a":1'), "}")


def unknown_members() -> bytes:
    """A valid packet plus as many distinct unknown members as fit (additionalProperties)."""
    base = _base()
    return _fill(_open_object(base), (f'"{name}":0' for name in _names() if name not in base), "}")


def bad_tags() -> bytes:
    """tags holding as many strings that break its pattern as fit (and maxItems)."""
    return _fill(_open_object(_base()) + '"tags":[', _repeat('"A"'), "]}")


def bad_decisions() -> bytes:
    """decisions full of items that each break type, required and additionalProperties."""
    return _fill(_open_object(_base()) + '"decisions":[', _repeat('{"what":0,"x":0}'), "]}")


def near_miss_mix(seed: int = 7) -> bytes:
    """Almost-secrets of every pattern interleaved in every scanned text, up to 32 KB.

    AKIA + 15 characters, ghp_ + 35, eyJa. repeated, -----BEGIN repeated, C:\\ and
    /home/ followed by long runs of the characters their patterns allow.
    """
    rng = random.Random(seed)
    upper = ALNUM[:26] + ALNUM[52:]

    def pieces() -> Iterator[str]:
        while True:
            choice = rng.randrange(8)
            if choice == 0:
                yield " AKIA" + "".join(rng.choice(upper) for _ in range(15)) + " "
            elif choice == 1:
                yield "ghp_" + "".join(rng.choice(ALNUM) for _ in range(35)) + " "
            elif choice == 2:
                yield "eyJa." * rng.randint(1, 8)
            elif choice == 3:
                yield "-----BEGIN " * rng.randint(1, 4)
            elif choice == 4:
                yield " C:\\" + "".join(rng.choice(ALNUM + " _.-") for _ in range(rng.randint(20, 80)))
            elif choice == 5:
                yield "x/home/" + "/".join(rng.choice(ALNUM + "._-") * rng.randint(1, 9) for _ in range(8))
            elif choice == 6:
                yield "-AIza" + "".join(rng.choice(ALNUM + "_-") for _ in range(rng.randint(0, 30)))
            else:
                yield " xoxb-" + "".join(rng.choice(ALNUM) for _ in range(rng.randint(0, 9))) + " "

    def make(length: int) -> str:
        out = ""
        for piece in pieces():
            if len(out) + len(piece) > length:
                break
            out += piece
        return out + "." * (length - len(out))

    return _text_packet(make)


def _overlapping_keys(rng: random.Random, length: int, clean: bool) -> str:
    """Text of ``-AIza``, ``a`` and ``-`` at random: many google-api-key starts in one window.

    ``\\bAIza[0-9A-Za-z_-]{35}\\b`` starts afresh after every ``-`` and its class takes
    ``-`` too, so up to eight starts are alive in any 39 characters; a DFA state must
    remember which, and random spacing makes nearly every state new. With ``clean``,
    the character that would end a match keeps the wordness of the one before it (no
    ``\\b``, so no match) and no key starts near the end of the text.
    """
    window = 4 + 35
    out: list[str] = []
    ends: set[int] = set()
    while len(out) < length:
        at = len(out)
        if clean and at in ends:
            out.append("a" if out[at - 1].isalnum() else "-")
            continue
        token = rng.choice(("-AIza", "a", "-"))
        if clean and len(token) > 1 and (at + window + 2 >= length or any(i in ends for i in range(at, at + 5))):
            token = rng.choice("a-")
        if len(token) > 1:
            ends.add(at + 1 + window)
        out.extend(token)
    return "".join(out[:length])


def dfa_thrash(clean: bool = True, seed: int = 1) -> bytes:
    """Every scanned text written to blow up the RE2 set's DFA (see _overlapping_keys)."""
    rng = random.Random(seed)
    return _text_packet(lambda length: _overlapping_keys(rng, length, clean))


def canonical_growth(count: int = 6, length: int = 1_024) -> bytes:
    """A compact packet of ``count`` constraints of ``length`` ``<``: each becomes ``\\u003c``."""
    return _compact(_base(constraints=["<" * length] * count)).encode()


def escaped_created_at() -> bytes:
    """The typical packet with created_at's dot written as ``\\u002e``."""
    raw = corpus.typical()
    stamp = b'"created_at": "2026-04-21T10:30:00.250+02:00"'
    assert stamp in raw
    return raw.replace(stamp, b'"created_at": "2026-04-21T10:30:00\\u002e250+02:00"')


def _escaped(text: str) -> str:
    """Every character of ``text`` as a JSON ``\\u`` escape (surrogate pairs above the BMP)."""
    out = []
    for char in text:
        code = ord(char)
        if code > 0xFFFF:
            code -= 0x10000
            out.append(f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}")
        else:
            out.append(f"\\u{code:04x}")
    return "".join(out)


def escape_heavy(length: int = 80) -> bytes:
    """Every scanned text written entirely in ``\\u`` escapes, astral pairs included, to 32 KB."""
    sample = "Queue é <frame> & \U0001f600 replay; " * (length // 8)
    texts = (_escaped(sample[i % 7 : i % 7 + length]) for i in range(10**6))
    head = _compact(_base(goal="g", next_step="n")).split('"goal"')[0]
    head += f'"goal":"{next(texts)}","next_step":"{next(texts)}","constraints":["'
    head += '","'.join(next(texts) for _ in range(32)) + '"],"open_questions":["'
    return _fill(head, texts, '"]}', sep='","', most=32)


def odd_secrets() -> bytes:
    """Secrets only in scanned members of the wrong shape, then nested arrays of tokens to 32 KB.

    No secret sits where a conforming packet would hold text, so a scan that reads only
    the expected shapes reports none of them.
    """
    obj = _base(
        constraints=AWS_KEY,
        goal=[f"Rotate {AWS_KEY}"],
        next_step={"text": GH_TOKEN},
        success_criteria=[{"what": STRIPE_KEY}],
        open_questions=[[f"/home/dev/{AWS_KEY}"]],
        attempts=[{"tried": [GH_TOKEN], "outcome": "failed"}, [STRIPE_KEY]],
    )
    return _fill(_open_object(obj) + '"decisions":[', _repeat(f'["{GH_TOKEN}"]'), "]}")


def deep_objects(depth: int = 5_400) -> bytes:
    """``depth`` objects, each the one member of the object around it."""
    return ('{"a":' * depth + "0" + "}" * depth).encode()


def deep_pairs(depth: int = 8_000) -> bytes:
    """``depth`` arrays, each holding a number and the next array."""
    return ("[0," * depth + "0" + "]" * depth).encode()


def deep_spaced(depth: int = 8_000) -> bytes:
    """``depth`` arrays written with a space after each opener and before each closer."""
    return ("[ " * depth + " ]" * depth).encode()


def duplicate_among_many() -> bytes:
    """As many empty objects as fit, in an object whose first member is written twice."""
    return _fill('{"a":1,"a":2,"x":[', _repeat("{}"), "]}")


def clean_decisions() -> bytes:
    """A packet whose decisions hold as many valid items as fit: one finding (maxItems)."""
    return _fill(_open_object(_base()) + '"decisions":[', _repeat('{"what":"w","why":"y"}'), "]}")


def mixed_items(seed: int = 3) -> bytes:
    """constraints holding as many items of every JSON type, in random turn, as fit."""
    rng = random.Random(seed)
    kinds = ("0", '"x"', "{}", "[]", "null", "true", "1.5", '"' + "y" * 1025 + '"')
    return _fill(_open_object(_base()) + '"constraints":[', (rng.choice(kinds) for _ in itertools.count()), "]}")


def fresh_tags(seed: int = 0) -> bytes:
    """tags holding as many distinct strings that break its pattern as fit (new ones per seed)."""
    rng = random.Random(seed)
    return _fill(_open_object(_base()) + '"tags":[', (f'"T{rng.getrandbits(30)}"' for _ in itertools.count()), "]}")


def fresh_duplicates(seed: int = 0) -> bytes:
    """A flat object of distinct random names, each written twice (new ones per seed)."""
    rng = random.Random(seed)

    def pairs() -> Iterator[str]:
        while True:
            name = "".join(rng.choice(ALNUM) for _ in range(6))
            yield f'"{name}":1,"{name}":1'

    return _fill("{", pairs(), "}")


@dataclass(frozen=True)
class Case:
    name: str
    build: Callable[..., bytes]
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    lenient: bool = False
    # Time a new input (another seed) at every call: RE2 keeps the DFA states one text
    # made, so checking the same bytes again hides what a stream of fresh inputs costs.
    fresh: bool = False


CASES: tuple[Case, ...] = (
    Case("deep-surrogates", deep_surrogates, {"depth": 9_990}),
    Case("deep-duplicates", deep_duplicates, {"depth": 9_990}),
    Case("empty-attempts", empty_attempts),
    Case("empty-attempts", empty_attempts, lenient=True),
    Case("deep-10000", nesting, {"depth": DEPTH_LIMIT}),
    Case("deep-10001", nesting, {"depth": DEPTH_LIMIT + 1}),
    Case("flat-dup-same", flat_duplicates),
    Case("flat-dup-pairs", flat_duplicates, {"distinct": True}),
    Case("unknown-members", unknown_members),
    Case("unknown-members", unknown_members, lenient=True),
    Case("bad-tags", bad_tags),
    Case("bad-tags", bad_tags, lenient=True),
    Case("bad-decisions", bad_decisions),
    Case("near-miss-mix", near_miss_mix),
    Case("dfa-thrash-clean", dfa_thrash, {"clean": True}),
    Case("dfa-thrash-hits", dfa_thrash, {"clean": False}),
    Case("dfa-thrash-clean", dfa_thrash, {"clean": True}, fresh=True),
    Case("dfa-thrash-hits", dfa_thrash, {"clean": False}, fresh=True),
    Case("canonical-growth", canonical_growth),
    Case("escaped-created-at", escaped_created_at),
    Case("escape-heavy", escape_heavy),
    Case("odd-secrets", odd_secrets),
    Case("odd-secrets", odd_secrets, lenient=True),
    Case("deep-objects", deep_objects),
    Case("deep-pairs", deep_pairs),
    Case("deep-spaced", deep_spaced),
    Case("dup-among-many", duplicate_among_many),
    Case("clean-decisions", clean_decisions),
    Case("mixed-items", mixed_items),
    Case("fresh-tags", fresh_tags, fresh=True),
    Case("fresh-dup-pairs", fresh_duplicates, fresh=True),
)


FRESH_INPUTS = 200


def label(case: Case) -> str:
    return case.name + (" (lenient)" if case.lenient else "") + (" (fresh)" if case.fresh else "")


def fresh_inputs(case: Case) -> list[bytes]:
    """FRESH_INPUTS variants of a seeded input, one per seed."""
    return [build(Case(case.name, case.build, {**case.kwargs, "seed": 1000 + seed})) for seed in range(FRESH_INPUTS)]


def build(case: Case) -> bytes:
    raw = case.build(**case.kwargs)
    assert len(raw) <= LIMIT, (case.name, len(raw))
    return raw


# --- measuring -------------------------------------------------------------------------


def verdict(raw: bytes, lenient: bool) -> str:
    report = cmp.check(raw, lenient=lenient)
    if report.conforming:
        out = "conforming"
    else:
        codes = Counter(f.code for f in report.errors)
        count = len(report.errors)
        out = f"{count:,} finding{'s' * (count != 1)} (" + ", ".join(f"{n:,} {c}" for c, n in codes.most_common()) + ")"
    if report.redactions or lenient:
        out += f", {len(report.redactions)} redactions"
    if lenient:
        out += ", accepted" if report.accepted else ", refused"
    if report.packet is not None:
        try:
            cmp.dumps(report.packet)
        except cmp.PacketError as exc:
            out += f"; dumps refuses: {exc.findings[0].code}"
    return out


def _parses(raw: bytes) -> bool:
    try:
        json.loads(raw)
    except (ValueError, RecursionError):
        return False
    return True


def _timed(func: Callable[[], object], number: int) -> float:
    start = time.perf_counter()
    for _ in range(number):
        func()
    return (time.perf_counter() - start) / number


def rounds(funcs: dict[str, Callable[[], object]], repeat: int, budget: float) -> dict[str, list[float]]:
    """Seconds per call of each function in each round; every function takes a turn per round.

    The first call of each (a warm-up) sets how many calls fill ``budget`` seconds. The
    rounds drop to ROUNDS_SLOW or ROUNDS_VERY_SLOW when one call takes that long.
    """
    first = {name: _timed(func, 1) for name, func in funcs.items()}
    slowest = max(first.values())
    if slowest > VERY_SLOW:
        repeat = min(repeat, ROUNDS_VERY_SLOW)
    elif slowest > SLOW:
        repeat = min(repeat, ROUNDS_SLOW)
    numbers = {name: max(1, int(budget / max(seconds, 1e-7))) for name, seconds in first.items()}
    out: dict[str, list[float]] = {name: [] for name in funcs}
    for _ in range(repeat):
        for name, func in funcs.items():
            out[name].append(_timed(func, numbers[name]))
    return out


def paired(top: list[float], bottom: list[float]) -> float:
    return statistics.median(t / b for t, b in zip(top, bottom, strict=True))


@dataclass
class Row:
    case: Case
    size: int
    verdict: str
    check_ms: float
    vs_same: float | None
    vs_big: float
    big_us: float
    rounds: int
    rss_mb: float | None
    heap_mb: float | None
    # check, then located() (what the HTTP intake does with a refused packet), if timed
    located_ms: float | None = None
    located_vs_big: float | None = None

    @property
    def memory_mb(self) -> float | None:
        known = [mb for mb in (self.rss_mb, self.heap_mb) if mb is not None]
        return max(known) if known else None

    @property
    def meets(self) -> bool:
        """Within the target; on time alone when memory was not measured (--no-memory)."""
        memory = self.memory_mb
        return self.vs_big <= TARGET_RATIO and (memory is None or memory < TARGET_MB)


def _status(key: str) -> int:
    """A VmXXX line of /proc/self/status, in kB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    raise KeyError(key)


def _warm_up() -> None:
    """The one-time costs of a process that checks packets: imports, compiled builders, caches."""
    for raw in corpus.build().values():
        for lenient in (False, True):
            report = cmp.check(raw, lenient=lenient)
            if report.packet is not None:
                cmp.dumps(report.packet)


def memory_child(index: int) -> dict[str, float | None]:
    """Peak extra memory of one check of CASES[index], in MB: RSS high-water mark and tracemalloc."""
    case = CASES[index]
    _warm_up()
    raw = build(case)
    gc.collect()
    try:
        Path("/proc/self/clear_refs").write_text("5")  # the peak RSS mark restarts from here
        reset = True
    except OSError:
        reset = False
    before = _status("VmRSS") if reset else _status("VmHWM")
    report = cmp.check(raw, lenient=case.lenient)
    # RSS counters are page-grained and updated in batches: about ±0.25 MB of noise.
    rss = max(0, _status("VmHWM") - before) / 1024
    del report
    gc.collect()
    tracemalloc.start()
    report = cmp.check(raw, lenient=case.lenient)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del report
    # Without the reset, a peak below an earlier one (the warm-up) reads as 0: say "unknown".
    return {"rss_mb": rss if reset or rss > 0 else None, "heap_mb": peak / 2**20}


def memory(index: int) -> dict[str, float | None]:
    result = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--memory-child", str(index)],
        capture_output=True,
        text=True,
        check=False,
        cwd=HERE.parent,
    )
    if result.returncode != 0:
        print(f"memory child for {label(CASES[index])} failed:\n{result.stderr}", file=sys.stderr)
        return {"rss_mb": None, "heap_mb": None}
    measured: dict[str, float | None] = json.loads(result.stdout.strip().splitlines()[-1])
    return measured


def measure(index: int, big: bytes, repeat: int, budget: float, with_memory: bool, located: bool = False) -> Row:
    case = CASES[index]
    raw = build(case)
    lenient = case.lenient
    funcs: dict[str, Callable[[], object]] = {"check": lambda: cmp.check(raw, lenient=lenient)}
    if located:
        funcs["located"] = lambda: cmp.check(raw, lenient=lenient).located()
    if case.fresh:
        pool = itertools.cycle(fresh_inputs(case))
        funcs["check"] = lambda: cmp.check(next(pool), lenient=lenient)
        if located:
            funcs["located"] = lambda: cmp.check(next(pool), lenient=lenient).located()
    if _parses(raw):
        funcs["loads"] = lambda: json.loads(raw)
    funcs["big"] = lambda: json.loads(big)
    timed = rounds(funcs, repeat, budget)
    mem: dict[str, float | None] = memory(index) if with_memory else {"rss_mb": None, "heap_mb": None}
    return Row(
        case=case,
        size=len(raw),
        verdict=verdict(raw, lenient),
        check_ms=statistics.median(timed["check"]) * 1e3,
        vs_same=paired(timed["check"], timed["loads"]) if "loads" in timed else None,
        vs_big=paired(timed["check"], timed["big"]),
        big_us=statistics.median(timed["big"]) * 1e6,
        rounds=len(timed["check"]),
        rss_mb=mem["rss_mb"],
        heap_mb=mem["heap_mb"],
        located_ms=statistics.median(timed["located"]) * 1e3 if located else None,
        located_vs_big=paired(timed["located"], timed["big"]) if located else None,
    )


def _mb(value: float | None) -> str:
    return "–" if value is None else f"{value:.1f}"


def _ratio(value: float | None) -> str:
    return "fails" if value is None else f"{value:,.1f}x"


def _ms(value: float) -> str:
    return f"{value:,.3f}" if value < 1 else f"{value:,.1f}"


def render(rows: list[Row]) -> str:
    header = [
        "input",
        "bytes",
        "verdict",
        "check ms",
        "rounds",
        "vs json.loads (same bytes)",
        "vs json.loads (32 KB)",
        "json.loads 32 KB µs",
        "peak RSS MB",
        "py heap MB",
        "target",
    ]
    cells = [
        [
            label(r.case),
            f"{r.size:,}",
            r.verdict,
            _ms(r.check_ms),
            str(r.rounds),
            _ratio(r.vs_same),
            _ratio(r.vs_big),
            f"{r.big_us:.0f}",
            _mb(r.rss_mb),
            _mb(r.heap_mb),
            ("meets" if r.meets else "**misses**") + (" (time only)" if r.memory_mb is None else ""),
        ]
        for r in rows
    ]
    if any(r.located_ms is not None for r in rows):
        header[4:4] = ["check + located() ms", "located vs json.loads (32 KB)"]
        for row, cell in zip(rows, cells, strict=True):
            cell[4:4] = ["–" if row.located_ms is None else _ms(row.located_ms), _ratio(row.located_vs_big)]
    meets = [label(r.case) for r in rows if r.meets]
    misses = []
    for r in rows:
        if r.meets:
            continue
        why = []
        if r.vs_big > TARGET_RATIO:
            why.append(f"{r.vs_big:,.0f}x")
        memory_mb = r.memory_mb
        if memory_mb is not None and memory_mb >= TARGET_MB:
            why.append(f"{memory_mb:.0f} MB")
        misses.append(f"{label(r.case)} ({', '.join(why)})")
    target = f"≤{TARGET_RATIO:.0f}x json.loads of a 32 KB packet and <{TARGET_MB:.0f} MB extra memory"
    lines = [
        table(cells, header),
        "",
        f"Meet the target ({target}): " + (", ".join(meets) or "none") + ".",
        "Miss it: " + (", ".join(misses) or "none") + ".",
        "",
        "Memory: peak RSS is VmHWM minus VmRSS around one check in a warmed-up child process, the peak",
        "mark reset through /proc/self/clear_refs (C and C++ allocations included, ±0.25 MB); py heap is",
        "the tracemalloc peak of a second check there (Python objects only, exact).",
    ]
    return "\n".join(lines)


def report(quick: bool = False, only: list[str] | None = None, with_memory: bool = True, located: bool = False) -> str:
    """The hostile table, as Markdown (run.py --hostile prints it too)."""
    repeat, budget = (3, 0.02) if quick else (9, 0.1)
    big = corpus.big()
    picked = [i for i, case in enumerate(CASES) if not only or case.name in only or label(case) in only]
    rows = []
    for index in picked:
        print(f"  {label(CASES[index])} ...", file=sys.stderr, flush=True)
        rows.append(measure(index, big, repeat, budget, with_memory, located))
    return render(rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 rounds of about 20 ms per function")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="these inputs only")
    parser.add_argument("--no-memory", action="store_true", help="skip the child processes that measure memory")
    parser.add_argument(
        "--located", action="store_true", help="time check + located() too, as the HTTP intake answers a refusal"
    )
    parser.add_argument("--list", action="store_true", help="list the inputs and exit")
    parser.add_argument("--write", metavar="DIR", help="write the inputs to DIR and exit")
    parser.add_argument("--memory-child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.memory_child is not None:
        print(json.dumps(memory_child(args.memory_child)))
        return 0
    if args.list or args.write:
        folder = Path(args.write) if args.write else None
        if folder is not None:
            folder.mkdir(parents=True, exist_ok=True)
        for case in CASES:
            if case.lenient:
                continue
            raw = build(case)
            doc = (case.build.__doc__ or "").strip().splitlines()[0]
            print(f"{case.name:20} {len(raw):>6,} bytes  {doc}")
            if folder is not None:
                (folder / f"{case.name}.json").write_bytes(raw)
        return 0
    print(f"Machine: {machine()}\n")
    print(report(args.quick, args.only, not args.no_memory, args.located))
    return 0


if __name__ == "__main__":
    sys.exit(main())
