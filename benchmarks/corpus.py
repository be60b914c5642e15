"""The benchmark corpus, generated deterministically: python benchmarks/corpus.py DIR writes it out."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Any

WORDS = (
    "encoder queue vulkan mesa fedora capture replay frame driver kernel render latency budget worker cache "
    "invoice session packet schema parser release deploy rollback metric trace buffer thread socket signal"
).split()


def _sentence(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words)).capitalize() + "."


def _packet(rng: random.Random, scale: int) -> dict[str, Any]:
    return {
        "ltm_version": "0.2",
        "id": "01J9X8K2QZ7N4M0WXYZV3R8ABC",
        "parent_id": "01J9X3K2QZ7N4M0WXYZV3R8Z01",
        "created_at": "2026-04-21T10:30:00.250+02:00",
        "project": {"name": "replay-capture", "ref": "github.com/example/replay-capture"},
        "goal": _sentence(rng, 14),
        "success_criteria": [_sentence(rng, 12) for _ in range(min(16, 2 * scale))],
        "constraints": [_sentence(rng, 12) for _ in range(min(32, 2 * scale))],
        "decisions": [
            {"what": _sentence(rng, 10), "why": _sentence(rng, 14), "consequences": _sentence(rng, 10), "locked": True}
            for _ in range(3 * scale)
        ],
        "methods": [
            {"name": f"method-{i}", "when_applicable": _sentence(rng, 10), "how": _sentence(rng, 16)}
            for i in range(scale)
        ],
        "attempts": [
            {"tried": _sentence(rng, 10), "outcome": "failed", "learned": _sentence(rng, 16), "confidence": "high"}
            for _ in range(3 * scale)
        ],
        "open_questions": [_sentence(rng, 12) for _ in range(min(32, 2 * scale))],
        "next_step": _sentence(rng, 14),
        "tags": ["gpu", "vulkan", "video-encoding"],
        "provenance": {
            "author_model": "model-1",
            "author_human": "someone",
            "source_hash": "sha256:" + "ab" * 32,
            "confidence": "high",
        },
    }


def _encode(obj: Any) -> bytes:
    return json.dumps(obj, ensure_ascii=False, indent=2).encode()


def typical() -> bytes:
    obj = _packet(random.Random(1), 1)
    obj["constraints"].append(_sentence(random.Random(8), 12))
    return _encode(obj)


def quoted() -> bytes:
    """The typical packet as people write one: quotes, line breaks, tabs and accents in the text."""
    obj = _packet(random.Random(1), 1)
    obj["constraints"].append(_sentence(random.Random(8), 12))
    obj["goal"] += '\nSee "notes" first.'
    for decision in obj["decisions"]:
        decision["why"] += ' The lead said "no rewrite".'
    for attempt in obj["attempts"]:
        attempt["learned"] += "\n\tRetry on the café runner."
    obj["open_questions"].append('Does the "fast" path\nhold?')
    return _encode(obj)


def big() -> bytes:
    obj = _packet(random.Random(2), 8)
    raw = _encode(obj)
    while len(raw) < 31_000:
        obj["decisions"].append(dict(obj["decisions"][0]))
        raw = _encode(obj)
    return raw


def dirty() -> bytes:
    obj = _packet(random.Random(3), 2)
    obj["goal"] += " Keys: AKIAIOSFODNN7EXAMPLE in /home/dev/.aws/credentials."
    obj["constraints"][0] += " Token ghp_" + "a1B2" * 9 + " must rotate."
    obj["decisions"][1]["why"] += " Slack xoxb-1234567890-abcdef posted it."
    obj["attempts"][0]["learned"] += " C:\\Users\\dev\\secrets.txt held -----BEGIN RSA PRIVATE KEY-----."
    return _encode(obj)


def invalid() -> bytes:
    obj = _packet(random.Random(4), 3)
    obj["tags"] = ["GPU", "video encoding", "x" * 40] + [f"t{i}" for i in range(20)]
    obj["created_at"] = "2026-02-30T10:30:00Z"
    obj["decisions"][0]["locked"] = "yes"
    obj["attempts"][1]["outcome"] = "won"
    obj["methods"][0]["name"] = "Not A Slug"
    obj["provenance"]["source_hash"] = "md5:abc"
    for i in range(20):
        obj[f"extra_{i}"] = i
    return _encode(obj)


def near_miss() -> bytes:
    """Long runs of almost-secrets in every scannable field: the regex engines' worst case."""
    runs = [
        "AKIA" * 250,
        "x/home" * 170,
        "eyJ." * 250,
        "C:" * 500,
        "\\" * 1000,
        "xoxb-123456789 " * 67,
        "ghp_" * 250,
        "-----BEGIN " * 90,
        "ssh-rsa " * 120,
        "sk_live_" * 120,
        "AIza" * 250,
    ]
    obj = _packet(random.Random(5), 0)
    obj["goal"] = runs[0][:1024]
    obj["next_step"] = runs[1][:1024]
    obj["constraints"] = [runs[i % len(runs)][:1000] for i in range(27)]
    raw = _encode(obj)
    assert len(raw) < 32_768, len(raw)
    return raw


def deep() -> bytes:
    """Small but 9,000 levels deep: exercises the iterative parser."""
    return (json.dumps(_packet(random.Random(6), 0))[:-1] + ', "x": ' + "[" * 9000 + "]" * 9000 + "}").encode()


def escapes() -> bytes:
    """Nearly 32 KB of \\u escapes in valid text fields."""
    obj = _packet(random.Random(7), 0)
    del obj["open_questions"]
    text = json.dumps(obj, ensure_ascii=False)
    escaped = "".join(f"\\u{ord(c):04x}" for c in "escape<>&é" * 100)[: 6 * 1000]
    fields = ', "open_questions": [' + ", ".join(f'"{escaped}"' for _ in range(4)) + "]"
    raw = (text[:-1] + fields + "}").encode()
    assert len(raw) < 32_768, len(raw)
    return raw


CORPUS = {
    "typical": typical,
    "quoted": quoted,
    "big": big,
    "dirty": dirty,
    "invalid": invalid,
    "near-miss": near_miss,
    "deep": deep,
    "escapes": escapes,
}


def build() -> dict[str, bytes]:
    return {name: make() for name, make in CORPUS.items()}


if __name__ == "__main__":
    folder = Path(sys.argv[1] if len(sys.argv) > 1 else "benchmark-corpus")
    folder.mkdir(parents=True, exist_ok=True)
    for name, raw in build().items():
        (folder / f"{name}.json").write_bytes(raw)
        print(f"{folder / (name + '.json')}: {len(raw)} bytes")
