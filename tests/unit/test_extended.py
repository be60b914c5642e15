"""The extended rule set (cmp._redaction._extended): each rule's hits and near misses, the benign
corpus, the extra fields, and the default profile left exactly as it was.

Every secret here is synthetic and assembled at run time from parts (``_j``), with
obviously fake bodies (``EXAMPLE``, repeated characters); checksummed ones get their
checksum computed here, so no scanner mistakes this file for a leak.
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
import sys
import uuid
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cmp
from cmp import _extended_patterns
from cmp._extended_patterns import EXTENDED_CATEGORIES, EXTENDED_PATTERNS, base62_crc32
from cmp._matcher import anchored
from cmp._redaction import _extended
from cmp._redaction._extended import scan
from cmp.conformance import vector_input
from tests.support.cli import run_cli
from tests.support.examples import examples
from tests.support.packets import encode, full, put
from tests.support.strategies import packets
from tests.support.vectors import committed_vectors

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
import corpus  # noqa: E402


def _j(*parts: str) -> str:
    return "".join(parts)


def _classic(prefix: str, body: str = "EXAMPLE" * 4 + "Ab") -> str:
    """A GitHub classic or npm token shape: prefix, 30 characters, their base62 CRC32."""
    assert len(body) == 30
    return _j(prefix, body, base62_crc32(body))


def _bad_checksum(token: str) -> str:
    last = token[-1]
    return token[:-1] + ("0" if last != "0" else "1")


_B64 = "EXAMPLEexample012"
_AWS_SECRET = _j("wJalrXUtnFEMI/K7MDENG/", "bPxRfiCYEXAMPLEKEY")  # AWS documentation's example

# category -> (hits, near misses). A hit is found in a field on its own, at either edge,
# and between non-ASCII letters; a near miss is never found.
RULES: dict[str, tuple[list[str], list[str]]] = {
    "github-token": (
        [_classic(p) for p in ("ghp_", "gho_", "ghu_", "ghs_", "ghr_")],
        [
            _bad_checksum(_classic("ghp_")),
            _j("ghp_", "a1B2" * 9),  # the benchmark's dirty look-alike: 36 characters, no checksum
            _classic("ghp_")[:-1],
            _classic("ghx_"),
        ],
    ),
    "github-fine-grained-token": (
        [_j("github_pat_", "11EXAMPLE" + "0" * 13, "_", ("EXAMPLE" * 9)[:59])],
        [_j("github_pat_", "11EXAMPLE", "_", "EXAMPLE"), _j("github_pat_", "A" * 22, "A" * 60)],
    ),
    "openai-key": (
        [
            _j("sk-proj-", "EXAMPLE" * 4, "T3Blbk", "FJ", "example" * 4),
            _j("sk-", "A" * 20, "T3Blbk", "FJ", "B" * 20),
            _j("sk-svcacct-", "E_x-" * 6, "T3Blbk", "FJ", "Z" * 22),
        ],
        [_j("sk-", "A" * 48), _j("sk-proj-", "EXAMPLE" * 10), _j("sk-", "A" * 19, "T3Blbk", "FJ", "B" * 20)],
    ),
    "anthropic-key": (
        [_j("sk-ant-", "api03-", "EXAMPLE" * 13), _j("sk-ant-", "oat01-", "E-x_" * 10)],
        [_j("sk-ant-", "api03-", "EXAMPLE"), _j("sk-ant-", "key03-", "EXAMPLE" * 13), _j("sk-ant-", "api3-", "E" * 40)],
    ),
    "huggingface-token": (
        [_j("hf_", ("Example" * 5)[:34])],
        [_j("hf_", "a" * 34), _j("hf_", ("Example" * 5)[:33]), _j("hf_", ("Example" * 5)[:35]), "hf_hub_download"],
    ),
    "gitlab-token": (
        [_j("glpat-", "EXAMPLE_example-1234"), _j("gldt-", "E" * 20), _j("glrt-", "t1_", "EXAMPLE" * 3)],
        [_j("glpat-", "E" * 19), _j("glxyz-", "E" * 20), "glpat-"],
    ),
    "npm-token": ([_classic("npm_")], [_bad_checksum(_classic("npm_")), _j("npm_", "config_cache")]),
    "pypi-token": (
        [_j("pypi-", "AgEIcHlwaS5vcmc", "E" * 60), _j("pypi-", "AgENdGVzdC5weXBpLm9yZw", "x_-" * 20)],
        [_j("pypi-", "AgEIcHlwaS5vcmc", "E" * 20), _j("pypi-", "AgEXZXhhbXBsZS5vcmc", "E" * 60), "pypi-AgE"],
    ),
    "slack-app-token": (
        [_j("xapp-", "1-", "A0EXAMPLE01-", "1234567890123-", "0a" * 32)],
        [_j("xapp-", "1-", "abc"), _j("xapp-", "1-", "A0EXAMPLE01-", "12-", "0a" * 32)],
    ),
    "slack-config-token": (
        [_j("xoxe.", "xoxp-", "1-", "E" * 60), _j("xoxe-", "1-", "E-x" * 20)],
        [_j("xoxe-", "1-", "short"), _j("xoxe.", "xoxz-", "1-", "E" * 60)],
    ),
    "slack-webhook": (
        [_j("https://", "hooks.slack.com/services/", "T00000000/", "B00000000/", "X" * 24)],
        [
            "https://hooks.slack.com/services/",
            _j("https://", "hooks.slack.com/services/", "T00000000/", "B00000000/", "X" * 8),
            "https://api.slack.com/apps",
        ],
    ),
    "discord-webhook": (
        [_j("https://", "discord.com/api/webhooks/", "1" * 18, "/", "E-x_" * 17)],
        ["https://discord.com/api/webhooks/123/abc", "https://discord.com/channels/1234"],
    ),
    "pem-private-key": (
        [
            _j("-----BEGIN ", kind, "PRIVATE KEY", tail, "-----")
            for kind, tail in (
                ("DSA ", ""),
                ("EC ", ""),
                ("RSA ", ""),
                ("OPENSSH ", ""),
                ("ENCRYPTED ", ""),
                ("", ""),
                ("PGP ", " BLOCK"),
            )
        ],
        [
            "-----BEGIN PUBLIC KEY-----",
            "-----BEGIN CERTIFICATE-----",
            "-----BEGIN private key-----",
            "----BEGIN PRIVATE KEY-----",
            "-----BEGIN PGP PUBLIC KEY BLOCK-----",
        ],
    ),
    "putty-private-key": (
        [_j("PuTTY-User-Key-File-", "3: ssh-ed25519")],
        ["PuTTY-User-Key-File: x", "PuTTY is a client"],
    ),
    "ssh-public-key-ecdsa": (
        [_j("ecdsa-sha2-", "nistp256 ", "AAAA", "E2VjZHNh" * 4), _j("ecdsa-sha2-", "nistp521\t", "AAAA", "B" * 30)],
        ["ecdsa-sha2-nistp256", _j("ecdsa-sha2-", "nistp999 ", "AAAA", "B" * 30), _j("ecdsa-sha2-nistp256 AAAA", "B")],
    ),
    "ssh-public-key-sk": (
        [
            _j("sk-ssh-ed25519", "@openssh.com ", "AAAA", "B" * 30),
            _j("sk-ecdsa-sha2-nistp256", "@openssh.com ", "AAAA", "B" * 30),
        ],
        ["sk-ssh-ed25519@openssh.com", _j("sk-ssh-ed25519", "@example.com ", "AAAA", "B" * 30)],
    ),
    "url-credentials": (
        [
            _j("postgres://app:", "hunter2", "@db.example.com/x"),
            _j("https://bot:", "EXAMPLE-pw", "@git.example.com"),
            _j("redis://:", "EXAMPLEpw", "@10.0.0.5:6379"),
        ],
        [
            "https://example.com/a:b@c",
            "https://user@example.com/x",
            "https://user:${PASSWORD}@example.com",
            "https://user:password@example.com",
            "https://user:<password>@example.com",
            "https://user:***@example.com",
            "https://user:xxxx@example.com",
            "git@github.com:org/repo.git",
            "http://localhost:8080/health",
            "mailto:someone@example.com",
        ],
    ),
    "aws-secret-key": (
        [
            _j("aws_secret_access_key = ", _AWS_SECRET),
            _j("AWS_SECRET_ACCESS_KEY=", _AWS_SECRET),
            _j('SecretAccessKey: "', _AWS_SECRET),
        ],
        [
            _j("aws_secret_access_key = ", _AWS_SECRET, "X"),
            _j("aws_secret_access_key = ", "A" * 40),
            _j("aws_secret_access_key = ", "${AWS_SECRET_ACCESS_KEY}"),
            _AWS_SECRET,
            _j("secret = ", _AWS_SECRET),
        ],
    ),
    "google-oauth-secret": ([_j("GOCSPX-", "EXAMPLE" * 4)], [_j("GOCSPX-", "short"), _j("GOCSPY-", "EXAMPLE" * 4)]),
    "google-oauth-token": ([_j("ya29.", "a0EXAMPLE" * 4)], [_j("ya29.", "short"), "ya29"]),
    "sendgrid-key": (
        [_j("SG.", "E" * 22, ".", "x-_" * 14, "x")],
        [_j("SG.", "E" * 21, ".", "x" * 43), "SG.1 release"],
    ),
    "digitalocean-token": (
        [_j("dop_v1_", "0" * 64), _j("dor_v1_", "ab" * 32)],
        [_j("dop_v1_", "0" * 63), _j("dop_v1_", "AB" * 32), _j("dop_v2_", "0" * 64)],
    ),
    "dockerhub-token": ([_j("dckr_pat_", ("EXAMPLE" * 4)[:27])], [_j("dckr_pat_", "short")]),
    "shopify-token": (
        [_j("shpat_", "0" * 32), _j("shpss_", "aF" * 16)],
        [_j("shpat_", "g" * 32), _j("shpat_", "0" * 31)],
    ),
    "age-secret-key": (
        [_j("AGE-SECRET-KEY-", "1", "Q" * 58)],
        [_j("AGE-SECRET-KEY-", "1", "B" * 58), _j("AGE-SECRET-KEY-", "1", "Q" * 57), "AGE-SECRET-KEY-1"],
    ),
    "azure-storage-key": (
        [_j("AccountKey=", "E" * 86, "==")],
        [_j("AccountKey=", "E" * 85, "=="), "AccountKey=;"],
    ),
}

# Hits still found after a word character: no boundary at the pattern's start (key
# headers, any URL scheme), or the pattern starts after the URL's scheme (webhooks).
_UNBOUNDED_START = {"pem-private-key", "url-credentials", "slack-webhook", "discord-webhook"}
# Patterns that end in a boundary: a word character right after the match is a near miss.
_BOUNDED_END = {
    "github-token",
    "github-fine-grained-token",
    "huggingface-token",
    "npm-token",
    "digitalocean-token",
    "shopify-token",
    "age-secret-key",
}


def _found(text: str) -> list[tuple[str, str]]:
    return [(r.category, r.found) for r in scan([("goal", text)])]


def test_every_rule_has_hits_and_near_misses() -> None:
    assert list(RULES) == list(EXTENDED_CATEGORIES)
    assert all(hits and misses for hits, misses in RULES.values())


@pytest.mark.parametrize(("category", "hit"), [(c, hits[0]) for c, (hits, _) in RULES.items()])
def test_every_extended_category_shows_its_public_prefix_and_no_more(category: str, hit: str) -> None:
    from cmp._redaction._hit import pattern_of

    pattern = pattern_of(category)
    assert pattern is not None and pattern.prefix is not None
    (redaction,) = scan([("goal", hit)])
    assert redaction.prefix and redaction.found.startswith(redaction.prefix)
    at = hit.index(redaction.found) if redaction.found in hit else 0  # a webhook's match starts at its host
    assert str(redaction) == f"goal/{category}: {redaction.prefix}… ({redaction.length} chars) at {at}"
    secret_part = hit[at + len(redaction.prefix) :]
    assert secret_part[:8] not in str(redaction) + repr(redaction) + json.dumps(redaction.to_json())


def _cases() -> list[Any]:
    return [pytest.param(c, h, id=f"{c}-{i}") for c, (hits, _) in RULES.items() for i, h in enumerate(hits)]


@pytest.mark.parametrize(("category", "hit"), _cases())
def test_a_hit_is_found_alone_at_either_edge_and_by_non_ascii(category: str, hit: str) -> None:
    mask = next(p.mask for p in EXTENDED_PATTERNS if p.category == category)
    for text in (hit, f"é{hit}", f"{hit} é", f"Use é{hit}é now", f"日本{hit}。"):
        found = _found(text)
        assert [c for c, _ in found] == [category], text
        if mask is None:
            assert hit.startswith(found[0][1]) or found[0][1] in hit, (text, found)
        else:
            assert found[0][1] == mask


@pytest.mark.parametrize(("category", "hit"), _cases())
def test_a_hit_inside_a_longer_word(category: str, hit: str) -> None:
    found = [c for c, _ in _found(f"x{hit}")]
    assert found == ([category] if category in _UNBOUNDED_START else [])
    if category in _BOUNDED_END:
        assert _found(f"{hit}x") == []
        assert _found(f"{hit}_") == []


@pytest.mark.parametrize(
    ("category", "miss"), [pytest.param(c, m, id=f"{c}-{i}") for c, (_, ms) in RULES.items() for i, m in enumerate(ms)]
)
def test_a_near_miss_is_not_found(category: str, miss: str) -> None:
    for text in (miss, f"é{miss}é", f"see {miss} here"):
        assert _found(text) == [], (category, text)


def test_the_checksum_alphabet_and_scheme_match_githubs_published_example() -> None:
    # The entropy and checksum parts of the example in GitHub's token-format write-up
    # (no prefix here: alone, these are not a token).
    assert base62_crc32("zQWBuTSOoRi4A9spHcVY5ncnsDkxkJ") == "0mLq17"


def test_checksum_look_alikes_are_refused() -> None:
    rng = random.Random(15)
    alphabet = _extended_patterns.BASE62
    refused = 0
    for _ in range(500):
        body = "".join(rng.choice(alphabet) for _ in range(36))
        for prefix in ("ghp_", "npm_"):
            token = prefix + body
            assert _found(token) == [] or base62_crc32(body[:30]) == body[30:]
            refused += not _found(token)
    assert refused == 1000


def test_one_finding_per_field_and_rule_the_leftmost() -> None:
    first, second = _classic("ghp_"), _classic("ghp_", "B" * 30)
    assert _found(f"{_bad_checksum(first)} {second} {first}") == [("github-token", second)]


def test_no_pattern_or_screen_is_anchored() -> None:
    assert not [p.category for p in EXTENDED_PATTERNS if anchored(p.regex) or anchored(p.screened_by)]


def test_every_screen_matches_wherever_its_pattern_does() -> None:
    import re2

    for pattern in EXTENDED_PATTERNS:
        for hit in RULES[pattern.category][0]:
            assert re2.search(pattern.screened_by, hit), pattern.category


# Hits and near misses of both tables, the pieces the combined screen is tried on.
_BOTH_TABLES = [
    *(text for hits, misses in RULES.values() for text in (*hits, *misses)),
    "AKIAIOSFODNN7EXAMPLE",
    "C:\\Users\\me",
    "/home/me/x",
    "ghp_" + "a1B2" * 9,
]


@settings(max_examples=examples(300))
@given(st.lists(st.sampled_from([*_BOTH_TABLES, "", " ", "é", "\n", "x", "_"]), max_size=6).map("".join))
def test_one_pass_with_both_screens_matches_exactly_when_either_table_does(text: str) -> None:
    """The quick path's one pass over a packet's text with both rule sets (cmp._extended_patterns.matches_either)."""
    from cmp._extended_patterns import SET, matches_either
    from cmp._patterns import SCREEN

    either = bool(SCREEN._set.Match(text)) or bool(SET.Match(text))
    assert matches_either(text) is either
    assert matches_either(text.encode()) is either


def test_placeholders_match_no_pattern() -> None:
    from cmp._redaction._scan import CATEGORIES
    from cmp._scrub import placeholder

    for category in (*CATEGORIES, *EXTENDED_CATEGORIES):
        assert not _extended_patterns.matches_anywhere(placeholder(category))


# --- the benign corpus ---------------------------------------------------------------------------


def benign_texts() -> list[str]:
    rng = random.Random(2026)
    out: list[str] = []
    for i in range(300):
        out.append(hashlib.sha1(str(i).encode()).hexdigest())  # commit SHAs
        out.append(f"commit {hashlib.sha1(str(i).encode()).hexdigest()[:12]}")
        out.append(str(uuid.UUID(int=rng.getrandbits(128), version=4)))
        out.append("sha256:" + hashlib.sha256(str(i).encode()).hexdigest())
        out.append("".join(rng.choice("0123456789ABCDEFGHJKMNPQRSTVWXYZ") for _ in range(26)))  # ULIDs
    sentences = [
        "Get GPU video encoding working for replay captures.",
        "The nightly export must finish in two hours on the old hardware.",
        "Retry the batched writer with smaller pages and measure again.",
        "Risk-free rollout: ship behind the flag, then ask the task-list owner.",
        "Installed sk-learn and the hf_hub_download helper; npm_config_cache is set.",
    ]
    for sentence in sentences:
        for size in (1, 2, 3, 5, 8):
            out.append(base64.b64encode((sentence * size).encode()).decode())
            out.append(base64.urlsafe_b64encode((sentence * size).encode()).decode())
        out.append(sentence)
    out += [
        "v1.2.3",
        "1.0.0-rc.1+build.5",
        "python3.11",
        "node@20.11.1",
        "mesa 25.0.2",
        "go1.22.3 linux/amd64",
        "https://github.com/example/replay-capture/pull/123",
        "https://docs.python.org/3/library/re.html#re.search",
        "http://localhost:8080/health",
        "https://example.com/search?q=a:b@c",
        "https://user@example.com/repo.git",
        "git@github.com:example/replay-capture.git",
        "ssh://git@example.com:2222/repo.git",
        "s3://bucket/key/with:colon",
        "src/cmp/_extended.py",
        "tests/test_extended.py::test_benign",
        "benchmarks/run.py --quick",
        "Dockerfile.prod",
        "package-lock.json",
        "id_ed25519.pub",
        "The PEM file starts with -----BEGIN CERTIFICATE-----.",
        "ssh-keygen -t ecdsa-sha2-nistp256 was not the right flag",
        "aws_secret_access_key is read from the environment",
        "AccountKey is set in the connection string",
        "glpat tokens rotate monthly",
        "ya29 is the prefix of a Google access token",
        "SG. rules in the spreadsheet",
        "AGE-SECRET-KEY-1 is where the key would go",
    ]
    return out


def test_the_benign_corpus_gives_no_extended_finding() -> None:
    texts = benign_texts()
    assert len(texts) > 1500
    for text in texts:
        assert _found(text) == [], text
        assert _found(f"{text} {text}") == [], text


def _extended_only(report: cmp.Report) -> list[cmp.Redaction]:
    return [r for r in report.redactions if r.profile == "extended"]


def test_the_shipped_examples_give_no_extended_finding() -> None:
    paths = sorted((ROOT / "examples").rglob("*.json"))
    assert len(paths) >= 5
    for path in paths:
        if "node-adapter" in path.parts:
            continue
        report = cmp.check(path.read_bytes(), rule_set="extended", lenient=True)
        assert _extended_only(report) == [], path


def test_the_benchmark_corpus_gives_no_extended_finding_but_the_dirty_key_header() -> None:
    for name, raw in corpus.build().items():
        report = cmp.check(raw, rule_set="extended", lenient=True)
        expected = ["pem-private-key"] if name == "dirty" else []
        assert [r.category for r in _extended_only(report)] == expected, name


@pytest.mark.slow
@settings(max_examples=examples(200))
@given(packets())
def test_generated_packets_give_no_extended_finding(packet: cmp.Packet) -> None:
    assert _extended.redact_extended(packet) == []


# --- fields, profiles and verdicts ---------------------------------------------------------------

_URL = _j("https://bot:", "EXAMPLE-pw", "@git.example.com")


@pytest.mark.parametrize(
    ("path", "name"),
    [
        ("project.name", "project.name"),
        ("project.ref", "project.ref"),
        ("provenance.author_model", "provenance.author_model"),
        ("provenance.author_human", "provenance.author_human"),
        ("goal", "goal"),
        ("decisions[0].why", "decisions[0].why"),
    ],
)
def test_the_extra_fields_are_scanned_by_the_extended_rules_only(path: str, name: str) -> None:
    raw = encode(put(full(), path, f"see {_URL}"))
    default = cmp.check(raw)
    assert default.ok and default.redactions == ()
    report = cmp.check(raw, rule_set="extended")
    assert not report.ok and report.conforming and report.policy.rule_set == "extended"
    assert [(r.field, r.category, r.profile) for r in report.redactions] == [(name, "url-credentials", "extended")]
    assert cmp.check(raw, rule_set="extended", allow_unredacted=True).ok


def test_tags_and_method_names_are_read_in_extended_mode() -> None:
    obj = full()
    obj["tags"] = ["gpu", _j("dop_v1_", "0" * 64)]
    obj["methods"][0]["name"] = _j("glpat-", "EXAMPLE_example-1234")
    found = [(r.field, r.category) for r in _extended.redact_extended(obj)]
    assert found == [("methods[0].name", "gitlab-token"), ("tags[1]", "digitalocean-token")]


def test_default_findings_come_first_and_unchanged() -> None:
    raw = encode(put(full(), "goal", _j("key AKIAIOSFODNN7EXAMPLE and ", "-----BEGIN EC PRIVATE KEY-----")))
    default = cmp.check(raw)
    extended = cmp.check(raw, rule_set="extended")
    count = len(default.redactions)
    assert extended.redactions[:count] == default.redactions
    assert [(r.category, r.profile) for r in extended.redactions[count:]] == [("pem-private-key", "extended")]
    assert [r.to_json(show_found=True) for r in default.redactions] == [
        {"field": "goal", "category": c, "found": f, "at": at, "length": n, "text": f"goal/{c}: {f}"}
        for c, f, at, n in (("aws-key", "AKIAIOSFODNN7EXAMPLE", 4, 20), ("private-key", "-----BEGIN …", 29, 30))
    ]
    assert extended.redactions[-1].to_json()["profile"] == "extended"
    assert "rule_set" not in default.to_json() and extended.to_json()["rule_set"] == "extended"
    assert "profile" in repr(extended.redactions[-1]) and "profile" not in repr(default.redactions[0])


def test_lenient_extended_mode_reads_every_string_and_member_name() -> None:
    obj = put(full(), "tags[0]", "Bad")  # a schema error: the long way, lenient
    token = _classic("ghp_")
    obj["x_unknown"] = {"nested": [token]}
    obj[_j("npm_", "config")] = 1
    obj["provenance"]["oops"] = {_j("hf_", ("Example" * 5)[:34]): "v"}
    report = cmp.check(encode(obj), lenient=True, rule_set="extended")
    found = [(r.field, r.category) for r in _extended_only(report)]
    assert ("x_unknown.nested[0]", "github-token") in found
    assert ("provenance.oops.(member name)", "huggingface-token") in found
    assert not report.accepted and report.schema_only
    # The default rules read every string of a packet lenient mode keeps, for their credentials.
    default = cmp.check(encode(obj), lenient=True)
    assert [(r.field, r.category) for r in default.redactions] == [("x_unknown.nested[0]", "gh-token")]
    assert not default.accepted


@pytest.mark.slow
def test_the_default_profile_is_unchanged_on_every_vector() -> None:
    found_by_extended = 0
    for vector in committed_vectors():
        data = vector_input(vector)
        for lenient in (False, True):
            default = cmp.check(data, lenient=lenient)
            extended = cmp.check(data, lenient=lenient, rule_set="extended")
            assert extended.errors == default.errors and extended.version == default.version
            assert [r for r in extended.redactions if r.profile == "default"] == list(default.redactions)
            extra = _extended_only(extended)
            found_by_extended += bool(extra)
            if not extra:
                assert (extended.ok, extended.accepted) == (default.ok, default.accepted), vector["id"]
                shown = extended.to_json()
                assert shown.pop("rule_set") == "extended" and "rule_set" not in default.to_json()
                assert json.dumps(shown) == json.dumps(default.to_json())
    assert found_by_extended < 40  # key headers and tokens the vectors plant in default fields


def test_unknown_rules_are_refused() -> None:
    with pytest.raises(ValueError, match="rule_set must be one of"):
        cmp.check(encode(full()), rule_set="strict")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="rule_set must be one of"):
        cmp.redact(cmp.loads(encode(full())), rule_set="all")  # type: ignore[arg-type]


def test_redact_with_extended_rules() -> None:
    packet = cmp.loads(encode(put(full(), "project.ref", _URL)))
    assert cmp.redact(packet) == []
    assert [r.category for r in cmp.redact(packet, rule_set="extended")] == ["url-credentials"]


def test_scrub_with_extended_rules_replaces_extended_matches_in_every_field() -> None:
    packet = cmp.loads(encode(put(put(full(), "project.ref", _URL), "goal", _j("Use ", _classic("npm_"), " now."))))
    same, none = cmp.scrub(packet)
    assert same == packet and none == []
    clean, replaced = cmp.scrub(packet, rule_set="extended")
    assert [(r.field, r.category, r.profile) for r in replaced] == [
        ("goal", "npm-token", "extended"),
        ("project.ref", "url-credentials", "extended"),
    ]
    assert clean.goal == "Use [redacted:npm-token] now."
    assert cmp.redact(clean, rule_set="extended") == []


_cli = partial(run_cli, cwd=ROOT)


def test_cli_check_rules_extended_in_and_out_of_workers(tmp_path: Path) -> None:
    leaky = encode(put(full(), "project.ref", _URL))
    path = tmp_path / "p.json"
    path.write_bytes(leaky)
    assert _cli("check", str(path)).returncode == 0
    text = _cli("check", "--rule-set", "extended", str(path))
    assert text.returncode == 1
    assert text.stdout.decode().startswith(
        f"{path}:1:252: redaction (extended) project.ref/url-credentials: https://… ("
    )
    lines = tmp_path / "p.jsonl"
    lines.write_bytes(
        encode(json.loads(leaky)).replace(b"\n", b"") + b"\n" + encode(full()).replace(b"\n", b"") + b"\n"
    )
    result = _cli("check", "--rule-set", "extended", "--jobs", "2", "--format", "json", "--jsonl", str(lines))
    document = json.loads(result.stdout)
    assert result.returncode == 1
    assert [r["accepted"] for r in document["results"]] == [False, True]
    assert document["results"][0]["redactions"][0]["profile"] == "extended"
    assert document["results"][0]["rule_set"] == "extended"


def test_cli_scrub_rules_extended(tmp_path: Path) -> None:
    path = tmp_path / "p.json"
    path.write_bytes(encode(put(full(), "project.ref", _URL)))
    result = _cli("scrub", "--rule-set", "extended", str(path))
    assert result.returncode == 0
    assert json.loads(result.stdout)["project"]["ref"] == "[redacted:url-credentials]"
    assert b"project.ref: url-credentials replaced by [redacted:url-credentials]" in result.stderr


@pytest.mark.slow
@settings(max_examples=examples(200))
@given(packets())
def test_the_fast_clean_rule_reads_the_same_texts_as_the_named_walk(packet: cmp.Packet) -> None:
    named = [text for _, text in _extended.extended_texts(packet)]
    assert sorted(t for t in _extended._typed_values(packet) if t) == sorted(t for t in named if t)


def test_a_hand_built_model_with_odd_values_takes_the_careful_walk() -> None:
    from tests.support.packets import hand_built

    packet = hand_built(goal=_j("see ", _URL, " \ud800"), next_step="n")
    assert [(r.field, r.category) for r in _extended.redact_extended(packet)] == [("goal", "url-credentials")]
    object.__setattr__(packet, "tags", (1, "gpu"))  # past the constructor's type checks
    assert [(r.field, r.category) for r in _extended.redact_extended(packet)] == [("goal", "url-credentials")]
