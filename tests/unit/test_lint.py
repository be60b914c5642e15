"""Lint: each rule's hits and near misses, clean packets clean, the one-pass screen exact, the command."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import sys
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cmp
from cmp import _lint
from cmp._messages import QUOTE_LIMIT, capped
from cmp.cli import main
from cmp.findings import Finding
from tests.support import strategies
from tests.support.cli import run_cli
from tests.support.examples import examples
from tests.support.packets import encode, put

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
TYPICAL: dict[str, Any] = json.loads((EXAMPLES / "typical-v0.2.json").read_text(encoding="utf-8"))
sys.path.insert(0, str(ROOT / "benchmarks"))
import corpus  # noqa: E402


def packet_with(path: str, text: str, base: dict[str, Any] | None = None) -> cmp.Packet:
    """The typical example with the text at ``path`` (``decisions[0].why``) replaced, read by cmp.loads."""
    return cmp.loads(encode(put(base or TYPICAL, path, text)))


def rules_at(packet: cmp.Packet, path: str) -> set[str]:
    return {f.keyword or "" for f in cmp.lint(packet) if f.path == "$." + path}


# (field, text, the rule ids lint reports at that field). Each rule has hits and near
# misses; the near misses are the texts a careless pattern would flag.
CASES: list[tuple[str, str, set[str]]] = [
    # sentences (rule 1): goal and next_step take one, other prose fields two, how any number.
    ("goal", "Fix the encoder. Then ship the release.", {"sentences"}),
    ("next_step", "Rebuild the cache! Then rerun the suite.", {"sentences"}),
    ("goal", "Is the encoder broken? Check the logs first.", {"sentences"}),
    ("goal", "Ship it.\nThen tell the team.", {"sentences"}),
    ("goal", 'He said "stop." Then he left.', {"sentences"}),
    ("goal", "He said \u201cstop.\u201d \u201cThen\u201d he left, caf\u00e9 closed.", {"sentences"}),
    ("goal", "Le caf\u00e9 ferme. \u00c9t\u00e9 suit.", set()),  # RE2's [A-Z] is ASCII: \u00c9 starts none
    ("constraints[0]", "Linux only. Fedora preferred. Mesa must be recent.", {"sentences"}),
    ("attempts[0].learned", 'It failed. The driver said "no". Retrying did not help.', {"sentences"}),
    ("open_questions[0]", "Why? Which driver? Whose box?", {"sentences"}),
    ("goal", "Use e.g. Fedora for the build.", set()),
    ("goal", "Pick one, i.e. The fastest encoder wins.", set()),
    ("goal", "Upgrade to Python 3.11 before the v0.2 release.", set()),
    ("goal", "Ship v0.2. Then rest.", set()),  # a word holding a full stop never ends a sentence
    ("goal", "Pin version 1.2.3 of the encoder at 16:9 and 10:30 on 2026-04-21T10:30:00Z.", set()),
    ("goal", "Ask Dr. Smith about the U.S. Army contract.", set()),
    ("goal", "Compare A vs. B under load, approx. Ten runs.", set()),
    ("goal", "Steps: 1. Build the encoder.", set()),
    ("goal", "Ship it. then tell the team.", set()),
    ("goal", "Ship it . Then tell the team.", set()),
    ("constraints[0]", "Linux only. Fedora preferred.", set()),
    ("decisions[0].consequences", "Mac cannot test this. Contributors need Linux or CI.", set()),
    ("methods[0].how", "Install mesa. Reboot. Run vulkaninfo. Check the queue.", set()),
    # transcript (rule 1)
    ("constraints[0]", "User: make it faster\nAssistant: done", {"transcript"}),
    ("goal", "Human: hi\n**AI:** hello", {"transcript"}),
    ("goal", "User: sessions must survive a restart.", set()),
    ("constraints[0]", "The system: one queue per user, agent: none", set()),
    # code (rule 2); a method's how may be one command line
    ("next_step", "Run ```make test``` first.", {"code"}),
    ("attempts[0].tried", "Patched it with if (x) { y(); }", {"code"}),
    ("attempts[0].learned", "def encode(frame):\n    return frame", {"code"}),
    ("decisions[0].why", "function init(opts) { return 1 }", {"code"}),
    ("goal", "Keep #include <vulkan/vulkan.h> first", {"code"}),
    ("open_questions[0]", "Should we keep items.map(x => { return x })?", {"code"}),
    ("methods[0].how", "Add a hook:\nfunc init() {\n  register()\n}", {"code"}),
    ("methods[0].how", "Add:\nfn main() -> Result<()> { run() }", {"code"}),
    ("methods[0].how", "```sh\nmake test\n```", {"code"}),
    ("methods[0].how", "awk '{ n++; } END { print n }' frames.log", set()),
    ("methods[0].how", "vulkaninfo | grep VK_KHR_video_encode_queue && make -j4", set()),
    ("goal", "Call ApiClient.sendEventToApi once per frame.", set()),
    ("constraints[0]", "Must run on Linux; the target is Fedora.", set()),
    ("decisions[0].why", "The function parse() is too slow.", set()),
    ("goal", 'Store the config as {"a": 1} in the packet.', set()),
    ("goal", "Define the fn field before the def field.", set()),
    # local-url (rule 3)
    ("goal", "Open http://localhost:8080/healthz after the build.", {"local-url"}),
    ("goal", "Point it at https://build-box.local/api today.", {"local-url"}),
    ("constraints[0]", "Bind to 127.0.0.1 only.", {"local-url"}),
    ("next_step", "Query db.internal:5432 for the counts.", {"local-url"}),
    ("goal", "Serve on [::1] for now.", {"local-url"}),
    ("goal", "Ask my-laptop.local for the frames.", {"local-url"}),
    ("goal", "Read file:///srv/frames first.", {"local-url"}),
    ("goal", "Ping localhost:3000 again.", {"local-url"}),
    ("goal", "Keep overrides in settings.local.json and .env.local files.", set()),
    ("goal", "Tests run against localhost only.", set()),
    ("goal", "Use https://example.com/docs and http://localhost.example.com/x for details.", set()),
    ("goal", "Build 127.0.0.1000 failed.", set()),
    ("goal", "Copy it with a[::1] in the script.", set()),
    # private-ip (rule 3)
    ("goal", "Deploy to 192.168.1.20 tonight.", {"private-ip"}),
    ("constraints[0]", "Only 10.0.0.0/8 may reach the encoder.", {"private-ip"}),
    ("goal", "Fetch from http://172.16.4.2:9000/x today.", {"private-ip"}),
    ("goal", "The box at 169.254.10.10 answers.", {"private-ip"}),
    ("goal", "Public 8.8.8.8 resolves it.", set()),
    ("goal", "Upgrade from 10.2.1 to 10.3.0 first.", set()),
    ("goal", "Build 10.0.19041.1 is broken, and 1.10.0.0.1 too.", set()),
    ("goal", "Address 172.32.0.1 is public space.", set()),
    # host-port (rule 3)
    ("goal", "Connect to api.example.com:8443 for the stream.", {"host-port"}),
    ("goal", "Listen on :8080 during tests.", {"host-port"}),
    ("goal", "The relay at 8.8.4.4:53 drops packets.", {"host-port"}),
    ("goal", "Upload to https://example.com:8443/upload now.", {"host-port"}),
    ("goal", "Render 16:9 frames at 10:30 daily, 10:30-11:45 too.", set()),
    ("goal", "See main.go:42 and README.md:7 for the cause.", set()),
    ("goal", "The run at 2026-04-21T10:30:00Z failed.", set()),
    ("goal", "Upgrade to Python 3.11 and run the postgres:16 image.", set()),
    ("goal", "Clone git@github.com:org/repo.git with sha256:abc first.", set()),
    ("goal", "Verse 3:16 and ratio 4:3 apply.", set()),
    ("goal", "Open cmp.model:Packet and pkg.mod:42 first.", set()),
    # local-path (rule 3), besides the redaction's abs-path
    ("goal", "Frames land in ~/captures/today.", {"local-path"}),
    ("goal", "Copy /tmp/frames.bin before reboot.", {"local-path"}),
    ("constraints[0]", "The disk at /Volumes/Scratch must stay mounted.", {"local-path"}),
    ("goal", "Mount /mnt/data first.", {"local-path"}),
    ("goal", "Clear /private/var/folders/x first.", {"local-path"}),
    ("project.ref", "~/src/replay", {"local-path"}),
    ("project.ref", "/srv/git/replay", {"local-path"}),
    ("project.ref", "../replay", {"local-path"}),
    ("project.ref", "C:\\src\\replay", {"local-path"}),
    ("project.ref", "file:///srv/replay", {"local-path", "local-url"}),
    ("goal", "Write to ./tmp/cache inside the repo.", set()),
    ("goal", "See https://example.com/tmp/x for logs.", set()),
    ("goal", "Keep about ~20/s throughput under build/tmp/out.", set()),
    ("goal", "Use /tmp for scratch files.", set()),
    ("project.ref", "github.com/example/replay", set()),
    ("project.ref", "https://github.com/example/replay", set()),
    ("project.ref", "git@github.com:example/replay.git", set()),
    # env-var (rule 3)
    ("goal", "Read the key from $HOME before start.", {"env-var"}),
    ("methods[0].how", "export PATH=$PATH:~/bin", {"env-var", "local-path"}),
    ("goal", "Set ${CUDA_HOME} first.", {"env-var"}),
    ("goal", "Default ${OUT_DIR:-build} is used.", {"env-var"}),
    ("goal", "Look in %APPDATA% for the cache.", {"env-var"}),
    ("goal", "Read $env:USERPROFILE first.", {"env-var"}),
    ("goal", "It costs $5 or $3.50 a month.", set()),
    ("goal", "Grew 10% then 20% today, 5%OFF% too.", set()),
    ("goal", "Use make -j$(nproc) and escape $$ in the template.", set()),
    ("goal", "Format with %d and %s only.", set()),
    # unobservable-criterion (rule 8): success criteria only
    ("success_criteria[0]", "The encoder feels fast.", {"unobservable-criterion"}),
    ("success_criteria[0]", "The output looks good on the target box.", {"unobservable-criterion"}),
    ("success_criteria[0]", "The API seems stable.", {"unobservable-criterion"}),
    ("success_criteria[0]", "The settings page is intuitive.", {"unobservable-criterion"}),
    ("success_criteria[1]", "Latency is good enough for gameplay.", {"unobservable-criterion"}),
    ("success_criteria[0]", "/healthz returns 200 within 2s.", set()),
    ("success_criteria[0]", "Feedback form submissions reach the queue.", set()),
    ("success_criteria[0]", "The cache looks up keys in under 1 ms.", set()),
    ("goal", "Make the encoder feel fast.", set()),
]


@pytest.mark.parametrize(("field", "text", "expected"), CASES, ids=[f"{f}:{t[:40]}" for f, t, _ in CASES])
def test_rule_cases(field: str, text: str, expected: set[str]) -> None:
    packet = packet_with(field, text)
    assert cmp.check(cmp.dumps(packet)).ok, "a case must be a packet check accepts"
    assert rules_at(packet, field) == expected
    # Nothing else in the packet changed, so nothing else is reported.
    assert {f.path for f in cmp.lint(packet)} <= {"$." + field}


def test_every_text_rule_has_hits_and_near_misses() -> None:
    hits = {rule for _, _, expected in CASES for rule in expected}
    assert hits == {rule.rule for rule in _lint._TEXT_RULES}
    for rule in hits:
        # A near miss of a rule: a case in a field the rule reads, expecting none of it.
        misses = [text for field, text, expected in CASES if not expected and _SCREENS[rule].search(text)]
        assert misses, f"{rule} has no near miss that its screen flags"


def _python_pattern(regex: str) -> re.Pattern[str]:
    # RE2's \x{201D} is \u201d in Python's re; the screens use nothing else Python lacks.
    return re.compile(re.sub(r"\\x\{([0-9A-Fa-f]{4})\}", r"\\u\1", regex), re.ASCII)


_SCREENS = {rule.rule: _python_pattern(rule.screen) for rule in _lint._TEXT_RULES}


# The rules about members, not text.


def test_an_attempt_without_learned() -> None:
    attempt = {"tried": "Cached the frames.", "outcome": "failed"}
    packet = cmp.loads(encode(put(TYPICAL, "attempts[0]", attempt)))
    assert [(f.path, f.keyword) for f in cmp.lint(packet)] == [("$.attempts[0].learned", "missing-learned")]
    assert rules_at(packet_with("attempts[0].learned", "   "), "attempts[0].learned") == {"missing-learned"}
    assert rules_at(packet_with("attempts[0].learned", "Hits were rare."), "attempts[0].learned") == set()


@pytest.mark.parametrize(
    ("version", "locked", "consequences", "expected"),
    [
        ("0.2", True, "", ["missing-consequences"]),
        ("0.2", True, " ", ["missing-consequences"]),
        ("0.2", True, "Mac cannot test this.", []),
        ("0.2", False, "", []),  # an unlocked decision may well have none
        ("0.1", True, "", []),  # v0.1 has no consequences member to write
    ],
)
def test_a_locked_decision_without_consequences(
    version: str, locked: bool, consequences: str, expected: list[str]
) -> None:
    decision = cmp.Decision(what="Drop macOS.", why="No encode queue.", consequences=consequences, locked=locked)
    packet = cmp.Packet(
        ltm_version=version,
        id="01J9X8K2QZ7N4M0WXYZV3R8ABC",
        created_at="2026-04-21T10:30:00Z",
        goal="Ship the encoder.",
        next_step="Build it.",
        decisions=(decision,),
    )
    assert [f.keyword for f in cmp.lint(packet)] == expected
    assert all(f.path == "$.decisions[0].consequences" for f in cmp.lint(packet))


def test_a_decision_that_is_a_question() -> None:
    assert rules_at(packet_with("decisions[0].what", "Drop macOS?"), "decisions[0].what") == {"decision-question"}
    assert rules_at(packet_with("decisions[0].what", "Drop macOS? "), "decisions[0].what") == {"decision-question"}
    near = packet_with("decisions[0].what", "Dropped the 'why?' prompt from the UI.")
    assert rules_at(near, "decisions[0].what") == set()


# Clean packets are clean.


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.json")), ids=lambda p: p.name)
def test_the_shipped_examples_have_no_lint_finding(path: Path) -> None:
    report = cmp.check(path.read_bytes())
    assert report.packet is not None
    assert cmp.lint(report.packet) == []


@pytest.mark.parametrize("name", ["typical", "big", "near-miss", "escapes"])
def test_the_benchmark_corpus_has_no_lint_finding(name: str) -> None:
    packet = cmp.check(corpus.CORPUS[name]()).packet
    assert packet is not None
    assert cmp.lint(packet) == []


@pytest.mark.parametrize("name", ["quoted", "dirty"])
def test_the_corpus_packets_with_a_second_sentence_in_goal(name: str) -> None:
    """These two add a sentence to goal on purpose (quotes, secrets); that, and only that, is reported."""
    packet = cmp.check(corpus.CORPUS[name]()).packet
    assert packet is not None
    assert [(f.path, f.keyword) for f in cmp.lint(packet)] == [("$.goal", "sentences")]


_WORDS = (
    "encoder queue vulkan mesa fedora capture replay frame driver kernel render latency budget worker cache "
    "invoice session packet schema parser release deploy rollback metric trace buffer thread socket signal"
).split()
# What real packets hold that a careless rule would flag: versions, times, ratios, dates,
# file positions, abbreviations, amounts, symbols, repository names.
_TOKENS = [
    "Python 3.11",
    "16:9",
    "10:30",
    "4:3",
    "1.2.3",
    "v0.2",
    "e.g.",
    "i.e.",
    "etc.",
    "vs.",
    "Dr. Smith",
    "U.S. teams",
    "2026-04-21",
    "2026-04-21T10:30:00Z",
    "+02:00",
    "H.264",
    "60 fps",
    "1%",
    "$5",
    "50%",
    "main.go:42",
    "README.md:7",
    "ApiClient.sendEventToApi",
    "github.com/example/replay",
    "x86_64",
    "sha256:abc",
    "postgres:16",
    "node 18",
    "10.2.1",
    "8.8.8.8",
    "./tmp/cache",
    "build/tmp/out",
    "~20/s",
    "settings.local.json",
    "a; b",
    "f(x)",
    "{a: 1}",
    "C++",
    "Node.js",
    "localhost",
    "MoltenVK 1.2.x",
]
_PHRASE = st.lists(st.one_of(st.sampled_from(_WORDS), st.sampled_from(_TOKENS)), min_size=3, max_size=12)


def _sentence(words: list[str]) -> str:
    text = " ".join(words)
    return text[0].upper() + text[1:] + "."


_ONE = _PHRASE.map(_sentence)
_TWO = st.lists(_ONE, min_size=1, max_size=2).map(" ".join)
_COMMAND = st.sampled_from(
    [
        "pip install -e . && pytest -q",
        "vulkaninfo | grep VK_KHR_video_encode_queue",
        "make -j$(nproc) check",
        "awk '{ n++; } END { print n }' frames.log",
        "git bisect run ./test.sh",
    ]
)


@st.composite
def realistic_packets(draw: st.DrawFn) -> cmp.Packet:
    """Packets as a careful writer writes them: one sentence where one belongs, every rule kept."""
    decisions = tuple(
        cmp.Decision(what=draw(_ONE), why=draw(_TWO), consequences=draw(_TWO), locked=draw(st.booleans()))
        for _ in range(draw(st.integers(0, 3)))
    )
    attempts = tuple(
        cmp.Attempt(tried=draw(_ONE), outcome="failed", learned=draw(_TWO)) for _ in range(draw(st.integers(0, 3)))
    )
    methods = tuple(
        cmp.Method(name=f"method-{i}", when_applicable=draw(_ONE), how=draw(_COMMAND | _TWO))
        for i in range(draw(st.integers(0, 2)))
    )
    return cmp.Packet(
        ltm_version="0.2",
        id="01J9X8K2QZ7N4M0WXYZV3R8ABC",
        created_at="2026-04-21T10:30:00Z",
        project=cmp.Project(name="replay", ref=draw(st.sampled_from(["", "github.com/example/replay"]))),
        goal=draw(_ONE),
        success_criteria=tuple(draw(st.lists(_ONE, max_size=3))),
        constraints=tuple(draw(st.lists(_TWO, max_size=3))),
        decisions=decisions,
        methods=methods,
        attempts=attempts,
        open_questions=tuple(draw(st.lists(_ONE, max_size=2))),
        next_step=draw(_ONE),
    )


@pytest.mark.slow
@settings(max_examples=examples(300), deadline=None)
@given(realistic_packets())
def test_realistic_packets_have_no_lint_finding(packet: cmp.Packet) -> None:
    assert cmp.check(cmp.dumps(packet)).ok
    assert cmp.lint(packet) == []


# The one-pass screen never hides a finding: lint equals every rule run on every field.


def _unscreened(packet: cmp.Packet) -> list[Finding]:
    found = []
    for text, (path, kind) in zip(_lint._texts(packet), _lint._places(packet), strict=True):
        data = text.encode("utf-8", "surrogatepass").decode("utf-8", "replace").encode("utf-8")
        for rule in _lint._TEXT_RULES:
            message = rule.find(data, kind)
            if message is not None:
                found.append(_lint._finding(rule.rule, path, message))
    found += _lint._structure(packet)
    order = [path for path, _ in _lint._places(packet)]
    found.sort(key=lambda f: (order.index(f.path), _lint.RULE_IDS.index(f.keyword or "")))
    return capped(found)


_FRAGMENTS = st.sampled_from(
    [text for _, text, _ in CASES]
    + _TOKENS
    + ["\x00", "\n", " ", ". ", "? ", "A", "a", ":", "8080", "/", "~", "$", "%", "{", "}", ";", "\ud800", "é", "."]
)
_MIXED = st.lists(_FRAGMENTS, max_size=6).map("".join)


@pytest.mark.slow
@settings(max_examples=examples(300), deadline=None)
@given(strategies.packets(version="0.2"), st.lists(_MIXED, min_size=5, max_size=5), st.booleans())
def test_the_screen_hides_nothing(packet: cmp.Packet, texts: list[str], with_ref: bool) -> None:
    decisions = tuple(dataclasses.replace(d, why=texts[2]) for d in packet.decisions)
    packet = dataclasses.replace(
        packet,
        goal=texts[0] or "x",
        constraints=(*packet.constraints, texts[1]),
        decisions=decisions,
        project=cmp.Project(name="x", ref=texts[3]) if with_ref else packet.project,
        success_criteria=(texts[4],),
    )
    assert cmp.lint(packet) == _unscreened(packet)


@pytest.mark.slow
@settings(max_examples=examples(200), deadline=None)
@given(strategies.packets())
def test_lint_takes_any_packet_and_quotes_little(packet: cmp.Packet) -> None:
    for finding in cmp.lint(packet):
        assert finding.code == "lint" and finding.keyword in _lint.RULE_IDS
        assert finding.path.startswith("$.") and "\n" not in finding.message


def test_messages_quote_at_most_the_limit() -> None:
    long = "a" * 100
    for field, text in [
        ("goal", f"Copy ~/{long} first."),
        ("goal", f"Open http://{long}.local now."),
        ("constraints[0]", f"Use ${long.upper()} here."),
        ("goal", f"Connect to {long}.com:8443 now."),
    ]:
        (finding,) = [f for f in cmp.lint(packet_with(field, text)) if f.path == "$." + field]
        assert "a" * (QUOTE_LIMIT + 1) not in finding.message.lower(), finding
        assert "…" in finding.message


@pytest.mark.parametrize(
    ("text", "quoted"),
    [
        ("Read ~/notes.txt.", "'~/notes.txt'"),  # the sentence's full stop is not the path's
        ("Copy /tmp/frames.bin... then reboot.", "'/tmp/frames.bin'"),
        ("Frames land in ~/captures/today.", "'~/captures/today'"),
        ("Keep ~/.cache/x as it is.", "'~/.cache/x'"),
        ("Open ~/a.b/c.d now.", "'~/a.b/c.d'"),
    ],
)
def test_local_path_quotes_the_path_without_the_sentences_punctuation(text: str, quoted: str) -> None:
    (finding,) = [f for f in cmp.lint(packet_with("goal", text)) if f.keyword == "local-path"]
    assert finding.message == f"names a path on this machine {quoted} (writing rule 3)"


def test_findings_come_in_field_order_then_rule_order_and_cite_their_rule() -> None:
    packet = packet_with("goal", "Open http://localhost:8080 now. Then copy ~/x to $HOME.")
    packet = dataclasses.replace(packet, next_step="Run it. Then stop. Then rest.")
    found = cmp.lint(packet)
    assert [(f.path, f.keyword) for f in found] == [
        ("$.goal", "sentences"),
        ("$.goal", "local-url"),
        ("$.goal", "local-path"),
        ("$.goal", "env-var"),
        ("$.next_step", "sentences"),
    ]
    assert found[-1].message == "holds more than one sentence; more reads as a transcript (writing rule 1)"
    for finding in found:
        assert finding.message.endswith(f"(writing rule {_lint._NUMBER[finding.keyword or '']})")


def test_a_packet_with_more_than_100_findings_is_capped() -> None:
    items = tuple(f"Copy ~/x{i} now." for i in range(60))
    packet = dataclasses.replace(packet_with("goal", "Ok."), constraints=items, open_questions=items)
    found = cmp.lint(packet)
    assert len(found) == 101 and found[-1].code == "truncated"
    assert found[-1].message.startswith("20 more findings")


def test_a_rule_weighs_the_first_16_candidates_of_a_field() -> None:
    """Text of nothing but near misses costs a bounded time: past 16 of them, a rule gives up."""
    hit = "example.com:8443"
    assert rules_at(packet_with("goal", "a.go:1 " * 15 + hit), "goal") == {"host-port"}
    assert rules_at(packet_with("goal", "a.go:1 " * 16 + hit), "goal") == set()
    # "e.g. A" is a candidate the sentence rule passes over; "One. Two. Three." holds two breaks.
    assert rules_at(packet_with("constraints[0]", "e.g. A " * 14 + "One. Two. Three."), "constraints[0]") == {
        "sentences"
    }
    assert rules_at(packet_with("constraints[0]", "e.g. A " * 15 + "One. Two. Three."), "constraints[0]") == set()


def test_lint_takes_only_a_packet() -> None:
    with pytest.raises(TypeError, match=r"lint takes a cmp\.Packet, not dict"):
        cmp.lint(TYPICAL)  # type: ignore[arg-type]


def test_lint_never_changes_the_verdict() -> None:
    raw = encode(put(TYPICAL, "goal", "Open http://localhost:8080 now. Then copy ~/x."))
    before = cmp.check(raw)
    assert before.packet is not None and cmp.lint(before.packet)
    assert repr(cmp.check(raw)) == repr(before) and before.ok


# The specification's table is the code's.


def test_the_specification_lists_the_rules() -> None:
    text = (ROOT / "docs" / "specification.md").read_text(encoding="utf-8")
    section = text[text.index("\n## 14 ") :]
    section = section[: section.find("\n## ", 1) if "\n## " in section[1:] else len(section)]
    rows = [line.split("|") for line in section.splitlines() if line.startswith("| `")]
    listed = [(re.match(r" `([a-z-]+)` ", row[1]).group(1), int(row[2])) for row in rows]  # type: ignore[union-attr]
    assert listed == [(rule.id, rule.writing_rule) for rule in _lint.RULES]
    for number in {rule.writing_rule for rule in _lint.RULES}:
        assert re.search(rf"^{number}\. ", section, re.MULTILINE), f"writing rule {number} is not stated"


# The command.


def _packet_file(tmp_path: Path, name: str, obj: dict[str, Any]) -> Path:
    path = tmp_path / name
    path.write_bytes(encode(obj))
    return path


@pytest.fixture
def clean(tmp_path: Path) -> Path:
    return _packet_file(tmp_path, "clean.json", TYPICAL)


@pytest.fixture
def linty(tmp_path: Path) -> Path:
    return _packet_file(tmp_path, "linty.json", put(TYPICAL, "goal", "Open http://localhost:8080 now. Then rest."))


def test_cli_text_output_and_exit_statuses(clean: Path, linty: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["lint", str(clean), str(linty)]) == 0
    assert capsys.readouterr().out == (
        f"{clean}: ok\n"
        f"{linty}:1:232: $.goal: holds more than one sentence; more reads as a transcript (writing rule 1)"
        " [sentences]\n"
        f"{linty}:1:232: $.goal: names a local address 'http://localhost'; the packet is read on other machines"
        " (writing rule 3) [local-url]\n"
    )
    assert main(["lint", "--strict", str(clean)]) == 0
    assert main(["lint", "--strict", str(clean), str(linty)]) == 1
    assert main(["check", str(linty)]) == 0  # lint findings never fail check


def test_cli_a_file_check_refuses_fails_with_checks_findings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = _packet_file(tmp_path, "bad.json", put(TYPICAL, "tags[0]", "Bad"))
    leaky = _packet_file(tmp_path, "leaky.json", put(TYPICAL, "goal", "Copy /home/me/x and ~/y now."))
    assert main(["lint", str(bad)]) == 1
    assert capsys.readouterr().out == f"{bad}:1:1561: $.tags[0]: 'Bad' does not match ^[a-z0-9][a-z0-9-]{{0,31}}$\n"
    assert main(["lint", str(leaky)]) == 1
    assert capsys.readouterr().out.splitlines() == [
        f"{leaky}:1:238: redaction goal/abs-path: /home/me/x at 5",
        f"{leaky}:1:232: $.goal: names a path on this machine '~/y' (writing rule 3) [local-path]",
    ]


def test_cli_json_output(clean: Path, linty: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "missing.json"
    assert main(["lint", "--format", "json", str(clean), str(linty), str(missing)]) == 2
    captured = capsys.readouterr()
    first, second, third = json.loads(captured.out)["results"]
    assert main(["check", "--format", "json", str(clean)]) == 0
    checked = json.loads(capsys.readouterr().out)["results"][0]
    assert first == {**{k: v for k, v in checked.items() if k != "error"}, "lint": [], "error": None}
    assert list(first) == list(second) == list(third)
    assert second["ok"] is True and [f["keyword"] for f in second["lint"]] == ["sentences", "local-url"]
    assert second["lint"][1] == {
        "code": "lint",
        "path": "$.goal",
        "keyword": "local-url",
        "message": "names a local address 'http://localhost'; the packet is read on other machines (writing rule 3)",
        "line": 1,
        "column": 232,
    }
    assert third["error"].startswith("cannot open: ") and third["lint"] == [] and third["ok"] is False
    assert captured.err == f"cmp: {missing}: {third['error']}\n"


_run = partial(run_cli, cwd=ROOT)


def test_cli_stdin_usage_errors_and_help() -> None:
    result = _run("lint", "-", input=encode(put(TYPICAL, "next_step", "Read $HOME first.")))
    assert result.returncode == 0 and result.stdout.decode().endswith("[env-var]\n")
    assert result.stdout.decode().startswith("-:1:1451: $.next_step: ")
    for args in (["lint"], ["lint", "--format", "xml", "x.json"], ["lint", "--stric", "x.json"]):
        result = _run(*args)
        assert result.returncode == 2 and result.stdout == b"", args
        assert (
            result.stderr.count(b"\n") == 1 and result.stderr.startswith(b"cmp: ") and b"Traceback" not in result.stderr
        )
    result = _run("lint", "--help", env={**os.environ, "COLUMNS": "80"})
    text = result.stdout.decode()
    assert result.returncode == 0 and max(len(line) for line in text.splitlines()) <= 80
    assert "python -m cmp lint --strict" in text and "check packet" not in text


def test_cli_escapes_quoted_text(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _packet_file(tmp_path, "odd.json", put(TYPICAL, "goal", "Copy ~/x\x1b[2J now."))
    assert main(["lint", str(path)]) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and "\x1b" not in out and "[local-path]" in out
