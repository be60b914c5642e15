"""Found secrets are never printed: issue #15, part 1.

One synthetic secret of each category is planted everywhere a packet can hold text (every
scanned field, the unscanned members, an unknown member, member names, the version, a
duplicate name, the id) and run through every command that prints and every text the
library returns. No output may hold 8 consecutive characters of a secret beyond its
public prefix, unless ``--show-found`` asks for the format's echo, which must then appear.
Paths (abs-path) are not credentials: their echo is shown as before.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import cmp
from cmp._messages import member_step, quote, withheld
from cmp._patterns import PATTERNS, PUBLIC_PREFIXES
from cmp._redaction._hit import public_prefix
from cmp._redaction._scan import scan
from tests.support.cli import run_main
from tests.support.packets import encode, full

# Synthetic, never real: AWS's documented example key id, and made-up ones of each format.
AWS = "AKIAIOSFODNN7EXAMPLE"
GH = "ghp_" + "R7kQ2mW9xT4vB8nL3cY6pZ1sD5fH0jG2aE7u"
JWT = "eyJhbGciOiJub25lIn0.eyJzdWIiOiJ0ZXN0In0.c3ludGhldGlj"
PRIVATE = "-----BEGIN OPENSSH PRIVATE KEY-----"
GOOGLE = "AIza" + "SyD3mQ8vX2kL9pR4tW7nB1cF6hJ0gE5uYsZ"
SLACK = "xoxb-4815162342-synthetic-token"
STRIPE = "sk_test_" + "51SynthEticKeyT3stOnly0xyz"
SSH = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAISyntheticKeyBody"
PATH = "/home/alice/project/notes.txt"

# (category, secret, its public prefix)
SECRETS: tuple[tuple[str, str, str], ...] = (
    ("aws-key", AWS, "AKIA"),
    ("gh-token", GH, "ghp_"),
    ("jwt", JWT, "eyJ"),
    ("private-key", PRIVATE, "-----BEGIN "),
    ("google-api-key", GOOGLE, "AIza"),
    ("slack-token", SLACK, "xoxb-"),
    ("stripe-key", STRIPE, "sk_test_"),
    ("ssh-public-key", SSH, "ssh-ed25519 "),
)
CREDENTIALS = [pytest.param(*secret, id=secret[0]) for secret in SECRETS]
WINDOW = 8


def leaks(output: str, secret: str, prefix: str) -> list[str]:
    """The runs of WINDOW characters of ``secret`` that reach past its public prefix and appear in ``output``."""
    runs = {secret[i : i + WINDOW] for i in range(len(secret) - WINDOW + 1) if i + WINDOW > len(prefix)}
    return sorted(run for run in runs if run in output)


def test_the_secrets_are_what_they_claim() -> None:
    for category, secret, prefix in SECRETS:
        assert [hit.category for hit in scan([("goal", secret)])] == [category], category
        assert public_prefix(category, secret) == prefix
        assert len(secret) <= 64  # it fits an id too
    assert {category for category, _, _ in SECRETS} | {"abs-path"} == set(cmp.REDACTION_CATEGORIES)


# Every alternative each pattern allows, with the prefix a finding shows for it.
PREFIX_CASES: tuple[tuple[str, str], ...] = (
    *((p + "IOSFODNN7EXAMPLE", p) for p in "AKIA ASIA AGPA AIDA AROA AIPA ANPA ANVA ABIA ACCA".split()),
    *((f"gh{kind}_" + "a1" * 18, f"gh{kind}_") for kind in "pousr"),
    ("eyJa.b.c", "eyJ"),
    *((f"-----BEGIN {kind}PRIVATE KEY-----", "-----BEGIN ") for kind in ("", "RSA ", "EC ", "OPENSSH ")),
    ("AIza" + "b" * 35, "AIza"),
    *((f"xox{kind}-1234567890", f"xox{kind}-") for kind in "baprs"),
    *((f"{kind}_{mode}_" + "a" * 20, f"{kind}_{mode}_") for kind in ("sk", "rk") for mode in ("live", "test")),
    ("whsec_" + "a" * 32, "whsec_"),
    *(
        (f"ssh-{kind}{space}AAAA" + "b" * 20, f"ssh-{kind}{space[0]}")
        for kind in ("rsa", "ed25519", "dss", "ecdsa")
        for space in (" ", "\t\t", "\n")
    ),
)


@pytest.mark.parametrize(("text", "prefix"), PREFIX_CASES)
def test_each_pattern_shows_only_its_public_prefix(text: str, prefix: str) -> None:
    (hit,) = scan([("goal", "see " + text)])
    assert hit.prefix == prefix and hit.at == 4 and hit.length == len(text)
    assert str(hit) == f"goal/{hit.category}: {prefix}… ({len(text)} chars) at 4"
    assert hit.line(show_found=True) == f"goal/{hit.category}: {hit.echo}"


def test_every_pattern_has_a_prefix_case_and_every_category_a_prefix_rule() -> None:
    covered = {hit.category for text, _ in PREFIX_CASES for hit in scan([("goal", text)])}
    assert covered == {p.category for p in PATTERNS} - {"abs-path"}
    assert PUBLIC_PREFIXES["abs-path"] is None
    assert public_prefix("not-a-category", AWS) == "" and public_prefix("aws-key", "nothing") == ""


def test_an_absolute_path_shows_its_echo_and_offset() -> None:
    (hit,) = scan([("goal", f"in {PATH}")])
    assert str(hit) == f"goal/abs-path: {PATH} at 3" and hit.to_json()["found"] == PATH


@pytest.mark.parametrize(
    ("text", "hidden"),
    [
        (f"Keys at /home/me/{AWS} are rotated.", AWS[4:]),
        (f"Config is in C:/deploy key {AWS} for prod.", AWS[4:]),
        (f"See /opt/x/{GH} here.", GH[4:]),
    ],
)
def test_a_path_that_holds_a_credential_is_masked_like_one(text: str, hidden: str) -> None:
    """A path's characters take in most tokens: its echo is shown only when it holds none."""
    hits = scan([("goal", text)])
    (path,) = [hit for hit in hits if hit.category == "abs-path"]
    assert not path.shows_echo
    shown = str(path) + repr(path) + json.dumps(path.to_json())
    assert not leaks(shown, hidden, ""), shown
    assert str(path) == f"goal/abs-path: … ({path.length} chars) at {path.at}"
    assert path.line(show_found=True) == f"goal/abs-path: {path.echo}", "--show-found still shows the echo"


def test_offsets_count_code_points() -> None:
    (hit,) = scan([("goal", f"é😀 {AWS}")])
    assert (hit.at, str(hit)) == (3, "goal/aws-key: AKIA… (20 chars) at 3")


def test_a_hand_built_redaction_of_another_rule_set_shows_no_text() -> None:
    hit = cmp.Redaction("goal", "some-new-category", "secretsecretsecret")
    assert str(hit) == "goal/some-new-category: … (18 chars) at 0" and "secret" not in repr(hit)


def test_quote_withholds_text_a_pattern_matches() -> None:
    assert quote(f"key {AWS}") == "(not shown: 24 characters matching aws-key)"
    assert quote("x" * 40 + GH) == f"(not shown: {40 + len(GH)} characters matching gh-token)"
    assert quote("plain") == "'plain'"
    assert quote("8080", within=f"{GH} on localhost:8080") == "(not shown: 4 characters of a text matching gh-token)"
    assert quote("8080", within=f"{PATH} on localhost:8080") == "'8080'"  # a path is no credential
    assert member_step(AWS) == "[<not shown: 20 characters matching aws-key>]"
    assert withheld("plain") is None and member_step("goal") == ".goal"


# ---------------------------------------------------------------------------------------
# The planted packets


def planted(secret: str) -> dict[str, str]:
    """Packet texts named by file, each holding ``secret`` wherever it can."""
    text = f"Rotate {secret} now."
    conforming = full()
    conforming["id"] = secret  # an id is never scanned; chain prints ids
    conforming["parent_id"] = secret  # its own parent: chain finds a cycle and names it
    conforming["project"]["name"] = secret
    for name in ("goal", "next_step"):
        conforming[name] = text
    for name in ("success_criteria", "constraints", "open_questions"):
        conforming[name] = [text]
    for decision in conforming["decisions"]:
        decision.update(what=text, why=text, consequences=text)
    for method in conforming["methods"]:
        method.update(when_applicable=text, how=text)
    for attempt in conforming["attempts"]:
        attempt.update(tried=text, learned=text)
    conforming["goal"] = f"Rotate {secret} and {PATH}."

    refused: dict[str, Any] = json.loads(json.dumps(conforming))
    refused["tags"] = [secret]
    refused["methods"][0]["name"] = secret
    refused["attempts"][0]["outcome"] = secret
    refused["attempts"][0]["confidence"] = secret
    refused["provenance"]["source_hash"] = secret
    refused["provenance"]["confidence"] = secret
    refused["created_at"] = secret
    refused["note"] = secret  # an unknown member
    refused[secret] = "an unknown member whose name is the secret"
    refused["decisions"][0][secret] = {secret: [secret]}  # a member name under a scanned member

    version = full()
    version["ltm_version"] = secret
    version["decisions"][0]["what"] = text

    duplicate = encode(full())[:-1] + b", " + json.dumps(secret).encode() + b": 1, " + json.dumps(secret).encode()
    duplicate += b": 2, " + json.dumps({"a": secret})[1:-1].encode() + b"}"
    return {
        "conforming.json": encode(conforming).decode(),
        "refused.json": encode(refused).decode(),
        "version.json": encode(version).decode(),
        "duplicate.json": duplicate.decode(),
    }


def _run(capsys: pytest.CaptureFixture[bytes], *args: str) -> tuple[str, str]:
    _, out, err = run_main(capsys, *args)
    return _without_the_rule_catalog(out.decode("utf-8")), err.decode("utf-8")


def _without_the_rule_catalog(out: str) -> str:
    """A SARIF log less its driver's rules: the project's own text about each rule, the same in
    every log (it names the shapes the rules match, ``-----BEGIN … PRIVATE KEY-----``), and
    never any of the packet's. Everything else of the log is kept and scanned."""
    if not out.startswith('{\n  "$schema": "https://docs.oasis-open.org/sarif/'):
        return out
    log = json.loads(out)
    for run in log["runs"]:
        run["tool"]["driver"].pop("rules")
    return json.dumps(log, ensure_ascii=False, indent=2)


def _is_packet(out: str) -> bool:
    try:
        return isinstance(json.loads(out), dict)
    except ValueError:
        return False


def command_outputs(
    capsys: pytest.CaptureFixture[bytes], files: dict[str, Path], secret: str, *, show: tuple[str, ...] = ()
) -> Iterator[tuple[str, str]]:
    """(command, everything it printed that is not a packet) for every command that prints."""
    packets = [str(files[name]) for name in ("conforming.json", "refused.json", "version.json", "duplicate.json")]
    jsonl = str(files["all.jsonl"])
    runs: list[tuple[str, ...]] = [
        ("check", *packets),
        ("check", "--format", "json", *packets),
        ("check", "--jsonl", jsonl),
        ("check", "--jsonl", jsonl, "--format", "json"),
        ("check", "--lenient", *packets),
        ("check", "--lenient", "--format", "json", *packets),
        ("check", "--allow-unredacted", *packets),
        ("check", "--allow-unredacted", "--lenient", "--format", "json", *packets),
        ("lint", *packets),
        ("lint", "--strict", "--format", "json", *packets),
        ("fmt", packets[0]),
        ("fmt", "--check", *packets),
        ("fmt", "--diff", *packets),
        ("fmt", "--diff", "--allow-unredacted", *packets),
        ("gate", *packets),
        ("gate", "--strict", "--rule-set", "extended", *packets),
        ("chain", *packets),
        ("chain", "--jsonl", jsonl, "--format", "json"),
    ]
    for args in runs:
        if args[0] in ("check", "lint", "fmt", "gate"):
            args = (*args, *show)
        yield " ".join(args[:3]), "".join(_run(capsys, *args))
    for path in packets:
        # A packet these print on stdout is the data itself, not a report about it: only
        # the rest of what they print is checked.
        for args in (("scrub", path), ("migrate", path, "--to", "0.1"), ("migrate", path, "--to", "0.2")):
            out, err = _run(capsys, *args)
            yield " ".join(args), err + ("" if _is_packet(out) else out)
    for name in ("conforming.json", "refused.json"):  # the --write forms, on copies
        copy = files[name].with_name("copy-" + name)
        for args in (("fmt", "--write"), ("scrub", "--write"), ("migrate", "--to", "0.1", "--write")):
            shutil.copyfile(files[name], copy)
            yield " ".join(args), "".join(_run(capsys, *args, str(copy)))
    text = f"Rotate {secret} now."
    new = ("new", "--goal", text, "--next-step", text, "--constraint", text, "--tag", secret, "--open-question", text)
    yield "new", "".join(_run(capsys, *new))
    yield "new (clean tag)", "".join(_run(capsys, *new[:7], "--tag", "ok"))


def library_outputs(files: dict[str, Path]) -> Iterator[tuple[str, str]]:
    """(what, text) for every text the library returns about the planted packets."""
    for name in ("conforming.json", "refused.json", "version.json", "duplicate.json"):
        data = files[name].read_bytes()
        for lenient in (False, True):
            report = cmp.check(data, lenient=lenient)
            yield f"{name} report", repr(report) + str(report) + json.dumps(report.to_json(), ensure_ascii=False)
            for item in (*report.errors, *report.redactions):
                yield f"{name} {type(item).__name__}", str(item) + repr(item) + json.dumps(item.to_json())
            if report.packet is not None:
                yield f"{name} lint", repr(cmp.lint(report.packet))
                _, replaced = cmp.scrub(report.packet)
                yield f"{name} scrub", repr(replaced)
        try:
            cmp.loads(data)
        except cmp.PacketError as exc:
            yield f"{name} PacketError", str(exc) + repr(exc) + repr(exc.findings)
        try:
            obj = json.loads(data)
        except ValueError:
            continue
        yield f"{name} validate", repr(cmp.validate(obj))
        try:
            cmp.Packet.from_dict(obj)
        except (TypeError, ValueError) as exc:
            yield f"{name} from_dict", str(exc) + repr(exc)
        for member in ("decisions", "tags"):
            try:
                cmp.Packet.from_dict({**obj, member: obj.get(member)})
            except (TypeError, ValueError) as exc:
                yield f"{name} from_dict {member}", str(exc)


@pytest.fixture
def secret_files(tmp_path: Path, category: str, secret: str) -> dict[str, Path]:
    paths = {}
    texts = planted(secret)
    for name, text in texts.items():
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        paths[name] = path
    lines = tmp_path / "all.jsonl"
    lines.write_text("".join(text.replace("\n", " ") + "\n" for text in texts.values()), "utf-8")
    paths["all.jsonl"] = lines
    return paths


@pytest.mark.parametrize(("category", "secret", "prefix"), CREDENTIALS)
def test_no_command_prints_a_planted_secret(
    capsysbinary: pytest.CaptureFixture[bytes], secret_files: dict[str, Path], category: str, secret: str, prefix: str
) -> None:
    printed = ""
    for command, output in command_outputs(capsysbinary, secret_files, secret):
        assert not leaks(output, secret, prefix), (command, leaks(output, secret, prefix), output)
        printed += output
    # The packets did reach the places that quote: masked findings, withheld quotes and names.
    assert f"{category}: {prefix}… (" in printed
    assert f"(not shown: {len(secret)} characters matching {category})" in printed
    assert f"[<not shown: {len(secret)} characters matching {category}>]" in printed


@pytest.mark.parametrize(("category", "secret", "prefix"), CREDENTIALS)
def test_no_library_text_holds_a_planted_secret(
    secret_files: dict[str, Path], category: str, secret: str, prefix: str
) -> None:
    for what, text in library_outputs(secret_files):
        assert not leaks(text, secret, prefix), (what, leaks(text, secret, prefix), text)


@pytest.mark.parametrize(("category", "secret", "prefix"), CREDENTIALS)
def test_show_found_prints_the_echo(
    capsysbinary: pytest.CaptureFixture[bytes], secret_files: dict[str, Path], category: str, secret: str, prefix: str
) -> None:
    echo = secret if category != "private-key" else "-----BEGIN …"
    echo = echo if len(echo) <= 32 else echo[:32] + "…"
    path = str(secret_files["conforming.json"])
    text = f"conforming.json: redaction next_step/{category}: {echo}"
    out, _ = _run(capsysbinary, "check", path, "--show-found")
    assert re.search(rf"^{re.escape(path)}:1:\d+: redaction next_step/{category}: {re.escape(echo)}$", out, re.M)
    out, _ = _run(capsysbinary, "check", path, "--show-found", "--format", "json")
    found = [hit for hit in json.loads(out)["results"][0]["redactions"] if hit["field"] == "next_step"]
    assert [(hit["found"], hit["at"], hit["length"]) for hit in found] == [(echo, 7, len(secret))]
    out, _ = _run(capsysbinary, "lint", path, "--show-found")
    assert text.split(": ", 1)[1] in out
    out, _ = _run(capsysbinary, "fmt", path, "--show-found")
    assert f"redaction next_step/{category}: {echo} (use --allow-unredacted" in out
    out, _ = _run(capsysbinary, "check", path)
    assert f"redaction next_step/{category}: {prefix}… ({len(secret)} chars) at 7\n" in out


def test_each_place_that_quotes_packet_text_withholds_a_secret() -> None:
    hidden = "(not shown: 20 characters matching aws-key)"
    (version,) = cmp.check(encode({**full(), "ltm_version": AWS})).errors
    assert version.message == f"unsupported ltm_version {hidden} (supported: 0.1, 0.2)"
    (tag,) = cmp.check(encode({**full(), "tags": [AWS]})).errors
    assert (tag.path, tag.message) == ("$.tags[0]", f"{hidden} does not match ^[a-z0-9][a-z0-9-]{{0,31}}$")
    (member,) = cmp.check(encode({**full(), AWS: 1})).errors
    assert (member.path, member.message) == (f"$[<{hidden[1:-1]}>]", f"unexpected member {hidden}")
    duplicate = encode(full())[:-1] + f', "{AWS}": 1, "{AWS}": 2}}'.encode()
    (twice,) = cmp.check(duplicate).errors
    assert (twice.code, twice.path, twice.message) == (
        "duplicate-key",
        f"$[<{hidden[1:-1]}>]",
        f"member {hidden} appears more than once",
    )
    with pytest.raises(cmp.PacketError, match=r"unexpected member \(not shown: 20 characters matching aws-key\)"):
        cmp.Packet.from_dict({**full(), AWS: 1})
    with pytest.raises(TypeError, match=r"has no member \(not shown: 20 characters matching aws-key\)"):
        cmp.Packet.new(goal="g", next_step="n", decisions=[{"what": "w", "why": "y", AWS: 1}])


def test_lint_withholds_a_snippet_of_a_field_that_holds_a_credential() -> None:
    clean = cmp.Packet.new(goal="Serve it on localhost:8080 today.", next_step="n")
    leaky = clean.replace(goal=f"Serve {GH} on localhost:8080 today.")
    assert [f.message for f in cmp.lint(clean)] == [
        "names a local address 'localhost:8080'; the packet is read on other machines (writing rule 3)"
    ]
    assert [f.message for f in cmp.lint(leaky)] == [
        "names a local address (not shown: 14 characters of a text matching gh-token); the packet is read on "
        "other machines (writing rule 3)"
    ]


def test_chain_withholds_an_id_that_a_pattern_matches(
    tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    path = tmp_path / "a.json"
    path.write_bytes(encode({**full(), "id": AWS, "parent_id": GH}))
    out, _ = _run(capsysbinary, "chain", str(path))
    hidden = "(not shown: 20 characters matching aws-key)"
    assert (
        out.splitlines()[0].startswith(f"{hidden}  ") and "(parent (not shown: 40 characters matching gh-token)" in out
    )
    out, _ = _run(capsysbinary, "chain", str(path), "--format", "json")
    assert json.loads(out)["roots"][0]["id"] == hidden


# ---------------------------------------------------------------------------------------
# The extended rules' credentials: masked in every format, and never quoted in a message,
# whichever rule set a command runs with.


def _extended_secrets() -> list[Any]:
    """(category, secret, what its finding shows, the public part of the secret) per extended category.

    A webhook's match starts at its host, so ``https://`` and the host are public too.
    """
    from cmp._redaction._extended import scan as scan_extended
    from tests.unit.test_extended import RULES

    cases = []
    for category, (hits, _) in RULES.items():
        secret = min((hit for hit in hits if "\t" not in hit and "\n" not in hit), key=len)
        (hit,) = scan_extended([("goal", secret)])
        public = secret[: hit.at + len(hit.prefix)]
        cases.append(pytest.param(category, secret, hit.prefix, public, id=category))
    return cases


EXTENDED_CREDENTIALS = _extended_secrets()


@pytest.mark.parametrize(("category", "secret", "prefix", "public"), EXTENDED_CREDENTIALS)
def test_no_command_prints_a_planted_extended_secret_in_any_format(
    capsysbinary: pytest.CaptureFixture[bytes],
    secret_files: dict[str, Path],
    category: str,
    secret: str,
    prefix: str,
    public: str,
) -> None:
    packets = [
        str(secret_files[name]) for name in ("conforming.json", "refused.json", "version.json", "duplicate.json")
    ]
    printed = ""
    for rules in ("default", "extended"):
        for args in (
            ("check", "--lenient", *packets),
            ("check", "--format", "json", "--lenient", *packets),
            ("check", "--format", "github", "--lenient", *packets),
            ("check", "--format", "sarif", "--lenient", *packets),
            ("check", "--format", "github", "--allow-unredacted", *packets),
            ("lint", *packets),
            ("fmt", "--check", *packets),
            ("fmt", "--diff", "--allow-unredacted", *packets),
            ("gate", *packets),
            ("chain", *packets),
        ):
            output = "".join(_run(capsysbinary, *args, *(("--rule-set", rules) if args[0] != "chain" else ())))
            assert not leaks(output, secret, public), (rules, args[:3], leaks(output, secret, public), output)
            printed += output
    assert f"{category}: {prefix}… (" in printed, "the extended rules found it, masked"
    # A message withheld it (naming the first category that matches: gh-token for a classic token).
    assert re.search(rf"\(not shown: {len(secret)} characters matching [a-z0-9-]+\)", printed)


@pytest.mark.parametrize(("category", "secret", "prefix", "public"), EXTENDED_CREDENTIALS)
def test_no_library_text_holds_a_planted_extended_secret(
    secret_files: dict[str, Path], category: str, secret: str, prefix: str, public: str
) -> None:
    for what, text in library_outputs(secret_files):
        assert not leaks(text, secret, public), (what, leaks(text, secret, public), text)


# --- a credential glued to a word character (issue #26, A3) ------------------------------------
# No pattern finds these (each ends in \b), so they are no findings; but they are as much
# keys, and every surface that may show text withholds them.
GLUED_STRIPE = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"
GLUED = [
    pytest.param(f"Read /home/al/{GLUED_STRIPE}_bak first.", GLUED_STRIPE, "sk_live_", id="stripe-in-a-path"),
    pytest.param(f"Ask /home/al/{AWS}_v2 owner.", AWS, "AKIA", id="aws-in-a-path"),
    pytest.param(f"See /opt/{GOOGLE}x now.", GOOGLE, "AIza", id="google-in-a-path"),
]


@pytest.mark.parametrize(("goal", "secret", "prefix"), GLUED)
def test_a_path_holding_a_credential_glued_to_a_word_character_is_masked(goal: str, secret: str, prefix: str) -> None:
    report = cmp.check(encode({**full(), "goal": goal}))
    (path,) = report.redactions
    assert path.category == "abs-path" and not path.shows_echo
    shown = str(path) + repr(path) + json.dumps(path.to_json()) + repr(report) + json.dumps(report.to_json())
    assert not leaks(shown, secret, prefix), shown
    assert str(path) == f"goal/abs-path: … ({path.length} chars) at {path.at}"


def test_a_glued_credential_is_no_finding_of_its_own() -> None:
    """Verdicts keep the exact patterns: only masking reads the credential-like forms."""
    for text in (f"Rotate {AWS}_v2 today.", f"Rotate {GLUED_STRIPE}_bak today.", f"Rotate {AWS}X today."):
        assert cmp.check(encode({**full(), "goal": text})).ok, text
        assert cmp.check(encode({**full(), "goal": text}), rule_set="extended").ok, text


def test_lint_withholds_a_path_holding_a_glued_credential() -> None:
    packet = cmp.Packet.new(goal="g", next_step=f"Ask /tmp/{AWS}_v2 owner.")
    (finding,) = cmp.lint(packet)
    assert finding.keyword == "local-path"
    assert not leaks(finding.message + repr(finding), AWS, "AKIA"), finding.message
    assert "(not shown: 28 characters matching aws-key)" in finding.message


def test_quote_and_paths_withhold_a_glued_credential() -> None:
    assert quote(f"{AWS}_v2") == "(not shown: 23 characters matching aws-key)"
    assert member_step(f"x{AWS}") == "[<not shown: 21 characters matching aws-key>]"
    assert withheld("AKIA_v2") is None, "a public prefix alone is no credential"


@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "github"])
def test_no_output_format_shows_a_glued_credential(
    capsysbinary: pytest.CaptureFixture[bytes], tmp_path: Path, fmt: str
) -> None:
    path = tmp_path / "glued.json"
    path.write_text(encode({**full(), "goal": f"Read /home/al/{GLUED_STRIPE}_bak first."}).decode(), "utf-8")
    status, out, err = run_main(capsysbinary, "check", str(path), "--format", fmt)
    assert status == 1
    printed = (out + err).decode()
    assert "abs-path" in printed
    assert not leaks(printed, GLUED_STRIPE, "sk_live_"), printed
