"""What fails a CI run over files a repository already holds: redaction rules left out (``--ignore``),
findings already known (``--baseline``), and the credential scan of a packet refused at intake or schema.

None of it changes what :func:`cmp.check` answers, and it is only about reporting on files, never about
sending a packet (the format forbids overriding the push decision per pattern).

A refused packet gets no scan from the library, yet a key in its text is a leak (a first fix of the
schema error would commit it): the CLI scans it as lenient mode scans raw data, or its whole text when
it is not JSON, and reports those hits as stage ``refused``.

A baseline holds fingerprints, never the text: SHA-256 of the category and of the scrypt hash, under the
baseline's own random salt (no guess table serves every baseline), of every match of it in the file's
text. Every match, not the hit's own: a finding names only the leftmost match in its field, so a second
key written beside a known one would hide behind it. scrypt, not a plain keyed hash: the salt sits beside
the fingerprints, so whoever reads a baseline can test guesses at a weak password offline, and each guess
must cost what a password hash costs (docs/ci-policy.md gives the parameters and what they cost).
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace

from cmp import Redaction, Report
from cmp._toolkit import EXTENDED, RuleSet, display_name, finder, quote, short, unquoted, withheld

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Literal

    Known = Literal["new", "unchanged"]

BASELINE_VERSION = 2  # 1 kept HMAC-SHA256 fingerprints, which a guess list tests at a microsecond a guess
BASELINE_TOOL = "core-memory-packet"
_SALT_BYTES = 16
# scrypt's interactive-login parameters (its paper's, and Python's hashlib documentation's): 16 MiB and some
# 40 ms a hash on a 2020s core, memory that makes guessing on graphics cards and custom chips dear too. A run
# hashes each distinct match once (_match_print), so a baseline of hundreds of findings costs seconds at most.
SCRYPT_N, SCRYPT_R, SCRYPT_P = 2**14, 8, 1
# A few hundred thousand entries, far past any repository's: bounds what a path to /dev/zero costs.
MAX_BASELINE_BYTES = 64 * 2**20


def redaction_rule_id(category: str, rules: RuleSet) -> str:
    """``redaction/aws-key`` for the format's rules; ``redaction/extended/openai-key`` for the extended ones."""
    return f"redaction/{category}" if rules.named is None else f"redaction/{rules.named}/{category}"


def redaction_rule_ids() -> tuple[str, ...]:
    """Every redaction rule's id, the format's first (SARIF's rule ids, --ignore's values)."""
    return tuple(redaction_rule_id(category, rules) for rules in EXTENDED.tables for category in rules.categories)


class PolicyError(Exception):
    """A policy that cannot be used (an unknown rule, an unreadable baseline): one line, exit 2."""


def shown_value(value: object) -> str:
    """A value a message names (an option's, a setting's, a file's member): a string quoted (:func:`quote`),
    anything else as JSON text; either withheld when a redaction rule matches in it."""
    if isinstance(value, str):
        return quote(value)
    text = short(value, MAX_BASELINE_BYTES)  # whole: a cut could end inside a credential that no rule then matches
    hidden = withheld(text)
    return short(value) if hidden is None else f"({hidden})"


@dataclass(frozen=True, slots=True)
class Hit:
    """A redaction hit as the CLI reports it: ``redaction`` (placed where the text allows), its ``rule``
    id, whether it was found in a ``refused`` packet, and whether a baseline knows it (``"unchanged"``)."""

    redaction: Redaction
    rule: str
    refused: bool = False
    baseline: Known | None = None

    @property
    def known(self) -> bool:
        return self.baseline == "unchanged"


@dataclass(frozen=True, slots=True)
class Judged:
    """A report and what the CLI makes of its hits: ``hits`` (none left out by --ignore), ``accepted``
    (known hits do not fail it), and ``matched``: the keys of the baseline entries its hits were."""

    report: Report
    hits: tuple[Hit, ...]
    accepted: bool
    matched: tuple[tuple[str, str, str], ...] = ()


def as_judged(report: Report | Judged) -> Judged:
    """``report`` with its own hits and verdict, as a command without a policy reports it."""
    if isinstance(report, Judged):
        return report
    report = report.located()
    hits = tuple(Hit(hit, redaction_rule_id(hit.category, finder(hit))) for hit in report.redactions)
    return Judged(report, hits, report.accepted)


def fingerprint(salt: bytes, category: str, matches: Iterable[str]) -> str:
    """What a baseline keeps of a hit: a hash of its category and of the scrypt hash of every
    match of that category in its file (see the module's docstring), never a match."""
    import hashlib  # hashing is for baselines alone: a check without one does not load it

    prints = sorted({_match_print(salt, match) for match in matches})
    return hashlib.sha256("\0".join((category, *prints)).encode("ascii")).hexdigest()


@functools.lru_cache(maxsize=4096)  # a key written in many files is hashed once a run
def _match_print(salt: bytes, match: str) -> str:
    """The scrypt hash of one match under ``salt``: what an offline guess must compute."""
    import hashlib

    secret = match.encode("utf-8", "surrogatepass")
    digest = hashlib.scrypt(secret, salt=salt, n=SCRYPT_N, r=SCRYPT_R, p=SCRYPT_P, maxmem=64 * 2**20, dklen=32)
    return digest.hex()


def matches_by_category(report: Report, hits: Iterable[Hit]) -> dict[str, set[str]]:
    """Every match of each category in the text of ``report``'s source, by every table of
    its rule set, and each hit's own (a match written with JSON escapes is in no raw text)."""
    from cmp._toolkit import source_text

    found: dict[str, set[str]] = {}
    text = source_text(report.source) if report.source is not None else ""
    for table in report.policy.rules.tables:
        for category, match in table.every_match(text):
            found.setdefault(category, set()).add(match)
    for hit in hits:
        found.setdefault(hit.redaction.category, set()).add(hit.redaction.found)
    return found


@dataclass(frozen=True, slots=True)
class Entry:
    """One baseline finding: the file (relative to the baseline's folder, ``/``-separated),
    the field, category, rule and fingerprint of the hit."""

    file: str
    field: str
    category: str
    rule: str
    fingerprint: str

    @property
    def key(self) -> tuple[str, str, str]:
        # The field is not part of it: a key moved to another field of the file is the same key.
        return (self.file, self.rule, self.fingerprint)

    def to_json(self) -> dict[str, str]:
        return {member.name: getattr(self, member.name) for member in fields(self)}


@dataclass(frozen=True, slots=True)
class Baseline:
    """The findings a repository already holds: read from (or to be written to) ``location``."""

    location: str
    salt: bytes
    entries: tuple[Entry, ...] = ()
    _keys: frozenset[tuple[str, str, str]] = field(init=False, repr=False, compare=False)
    _places: frozenset[tuple[str, str]] = field(init=False, repr=False, compare=False)  # (file, rule) of each

    def __post_init__(self) -> None:
        object.__setattr__(self, "_keys", frozenset(entry.key for entry in self.entries))
        object.__setattr__(self, "_places", frozenset((entry.file, entry.rule) for entry in self.entries))

    @property
    def path(self) -> str:
        """The file as messages and reports name it: a part of it named for a credential withheld."""
        return display_name(self.location)

    @property
    def folder(self) -> str:
        return os.path.dirname(os.path.abspath(self.location))

    def file_name(self, file: str) -> str:
        """``file`` as the baseline names it: relative to its folder, ``/``-separated (stdin: ``-``)."""
        if file == "-":
            return file
        return os.path.relpath(os.path.abspath(file), self.folder).replace(os.sep, "/")

    def entries_of(self, file: str, judged: Judged) -> list[Entry]:
        """The entries of a judged report's hits (of ``file``), in their order."""
        return [entry for entry in self._entries(file, judged, known_only=False) if entry is not None]

    def known_keys(self, file: str, judged: Judged) -> list[tuple[str, str, str] | None]:
        """For each of a judged report's hits (of ``file``), the key of the entry that knows it, else None.
        A hit whose file and rule no entry has is new whatever it matched: its matches are not hashed."""
        return [
            entry.key if entry is not None and entry.key in self._keys else None
            for entry in self._entries(file, judged, known_only=True)
        ]

    def _entries(self, file: str, judged: Judged, *, known_only: bool) -> list[Entry | None]:
        if not judged.hits:
            return []
        name = self.file_name(file)
        hashed = [not known_only or (name, hit.rule) in self._places for hit in judged.hits]
        if not any(hashed):
            return [None] * len(judged.hits)
        matches = matches_by_category(judged.report, judged.hits)
        return [
            Entry(name, hit.redaction.field, hit.redaction.category, hit.rule, self._print(hit, matches))
            if wanted
            else None
            for hit, wanted in zip(judged.hits, hashed, strict=True)
        ]

    def _print(self, hit: Hit, matches: Mapping[str, set[str]]) -> str:
        return fingerprint(self.salt, hit.redaction.category, matches[hit.redaction.category])

    def keys(self) -> frozenset[tuple[str, str, str]]:
        return self._keys

    def to_json(self) -> dict[str, Any]:
        return {
            "version": BASELINE_VERSION,
            "tool": BASELINE_TOOL,
            "salt": self.salt.hex(),
            "findings": [entry.to_json() for entry in self.entries],
        }

    def stale(self, files: Iterable[str], matched: Iterable[tuple[str, str, str]]) -> list[Entry]:
        """The entries for ``files`` (as the baseline names them) that no hit of this run matched."""
        seen, found = frozenset(files), frozenset(matched)
        return [entry for entry in self.entries if entry.file in seen and entry.key not in found]

    def stale_line(self, entry: Entry) -> str:
        """What a run says of a stale entry (on stderr: it fails nothing)."""
        return f"{self.path}: stale: {entry.rule} in {entry.file} ({entry.field}) is no longer found"


class OldBaseline(PolicyError):
    """A baseline of version 1: its fingerprints can be guessed offline, so it is written anew, never read."""


def new_baseline(path: str) -> Baseline:
    """An empty baseline for ``path`` (``-``: stdout) with the salt of the one there (unchanged findings
    keep their fingerprints), else a fresh one (over a version 1 baseline too); :class:`PolicyError` if
    a file there is no baseline."""
    try:
        if path != "-" and os.path.lexists(path):
            return replace(read_baseline(path), entries=())
    except OldBaseline:
        pass
    except PolicyError as exc:
        raise PolicyError(f"{exc}; it is not overwritten (remove it, or write the baseline elsewhere)") from None
    import secrets  # for a new baseline's salt alone

    return Baseline(path, secrets.token_bytes(_SALT_BYTES))


def read_baseline(path: str) -> Baseline:
    """The baseline file at ``path``; :class:`PolicyError` (one line) when it cannot be used."""
    shown = display_name(path)
    try:
        if not os.path.isfile(path) and os.path.exists(path):
            raise PolicyError(f"{shown}: not a baseline: not a regular file")  # a FIFO, a device: it never ends
        with open(path, "rb") as stream:
            data = stream.read(MAX_BASELINE_BYTES + 1)
        if len(data) > MAX_BASELINE_BYTES:
            raise PolicyError(f"{shown}: not a baseline: larger than {MAX_BASELINE_BYTES // 2**20} MiB")
        data = json.loads(data.decode("utf-8"))
    except FileNotFoundError:
        raise PolicyError(f"{shown}: no such baseline (the baseline command writes one)") from None
    except OSError as exc:
        raise PolicyError(f"{shown}: cannot read: {exc.strerror or exc}") from None
    except (UnicodeDecodeError, ValueError, RecursionError):  # RecursionError: nested past the decoder's depth
        raise PolicyError(f"{shown}: not a baseline: not JSON") from None
    if not isinstance(data, dict) or data.get("tool") != BASELINE_TOOL:
        raise PolicyError(f"{shown}: not a baseline of {BASELINE_TOOL}")
    version = data.get("version")
    if type(version) is int and version == 1:
        raise OldBaseline(
            f"{shown}: a baseline of version 1, whose fingerprints can be guessed offline: write it again "
            f"with the baseline command (-o {shown}), then commit it"
        )
    if type(version) is not int or version != BASELINE_VERSION:  # not True, not 2.0
        raise PolicyError(f"{shown}: baseline version {shown_value(version)} is not {BASELINE_VERSION}, the one read")
    unknown = sorted(set(data) - {"version", "tool", "salt", "findings"})
    if unknown:
        listed = ", ".join(unquoted(name) for name in unknown)
        raise PolicyError(f"{shown}: not a baseline: it has members a baseline has not ({listed})")
    try:
        if not isinstance(data.get("salt"), str) or not isinstance(data.get("findings"), list):
            raise TypeError
        salt = bytes.fromhex(data["salt"])
        entries = tuple(Entry(**_entry_members(item)) for item in data["findings"])
    except (KeyError, TypeError, ValueError):
        raise PolicyError(f"{shown}: not a baseline: its salt or findings are malformed") from None
    return Baseline(path, salt, entries)


def _entry_members(item: object) -> dict[str, str]:
    names = {member.name for member in fields(Entry)}
    if not isinstance(item, dict) or set(item) != names or not all(isinstance(v, str) for v in item.values()):
        raise ValueError(item)
    return item


def checked_rules(named: Sequence[str], where: str, *, lint: bool = False) -> tuple[str, ...]:
    """``named`` (--ignore's or --select's) when each names a redaction rule or a prefix of
    some; with ``lint``, a lint rule (``lint/sentences``) or a prefix of some too."""
    if not named:  # nothing to look up: a run without --select or --ignore never loads the extended table
        return ()
    known = (*redaction_rule_ids(), *lint_rule_ids()) if lint else redaction_rule_ids()
    kind = "rule" if lint else "redaction rule"
    for rule in named:
        if not any(_names(rule, known_id) for known_id in known):
            raise PolicyError(f"{where}: no {kind} {quote(rule)} (core-memory-packet rules lists them)")
    return tuple(named)


def lint_rule_ids() -> tuple[str, ...]:
    """Every lint rule's id as the catalog and --ignore name it (``lint/sentences``)."""
    from cmp._toolkit import LINT_RULE_IDS as RULE_IDS

    return tuple(f"lint/{rule}" for rule in RULE_IDS)


def _names(rule: str, rule_id: str) -> bool:
    return rule_id == rule or rule_id.startswith(rule.rstrip("/") + "/")


@dataclass(frozen=True, slots=True)
class RunPolicy:
    """How the CLI reports hits (it travels to worker processes): only the rules ``select`` names, if any,
    less those ``ignore`` names; ``baseline`` marks hits as known; ``scan_refused`` scans refused packets."""

    ignore: tuple[str, ...] = ()
    baseline: Baseline | None = None
    scan_refused: bool = True
    select: tuple[str, ...] = ()  # when given, only these rules' hits are reported

    def judge(self, report: Report, file: str) -> Judged:
        """``report`` (of ``file``) as the run reports it."""
        refused, placed = refused_hits(report) if self.scan_refused else ([], True)
        if refused and not placed:
            # Placed with the report's own findings: the text is mapped once for both.
            both = replace(report, redactions=(*report.redactions, *refused)).located()
            kept = len(report.redactions)
            report, refused = replace(both, redactions=both.redactions[:kept]), list(both.redactions[kept:])
        else:
            report = report.located()
        found = [Hit(hit, redaction_rule_id(hit.category, finder(hit))) for hit in report.redactions]
        found += [Hit(hit, redaction_rule_id(hit.category, finder(hit)), refused=True) for hit in refused]
        if self.select:
            found = [hit for hit in found if any(_names(rule, hit.rule) for rule in self.select)]
        if self.ignore:
            found = [hit for hit in found if not any(_names(rule, hit.rule) for rule in self.ignore)]
        matched: list[tuple[str, str, str]] = []
        if self.baseline is not None and found:
            known = self.baseline.known_keys(file, Judged(report, tuple(found), False))
            matched = [key for key in known if key is not None]
            found = [
                replace(hit, baseline="new" if key is None else "unchanged")
                for hit, key in zip(found, known, strict=True)
            ]
        hits = tuple(found)
        # A refused packet is not accepted whatever its hits; else the library's verdict over the hits that count.
        counted = tuple(hit.redaction for hit in hits if not hit.known and not hit.refused)
        accepted = report.accepted if counted == report.redactions else replace(report, redactions=counted).accepted
        return Judged(report, hits, accepted, tuple(matched))


def refused_hits(report: Report) -> tuple[list[Redaction], bool]:
    """The redaction hits in the text of a packet the library refused without scanning it, and whether
    they are placed: lenient mode's in its parsed JSON (not placed), else each table's in its text."""
    if report.packet is not None or report.redactions or report.source is None:
        return [], True
    if report.policy.lenient and report.schema_only:
        return [], True  # lenient mode scanned it already, and found nothing
    from cmp._toolkit import located_in_text, parse_packet, source_text

    rules = report.policy.rules
    data = report.source
    parsed = parse_packet(data)[0] if isinstance(data, bytes) else None
    if isinstance(parsed, Mapping):
        return rules.redact_obj(parsed), False
    text = source_text(data)
    found = [hit for table in rules.tables for hit in table.scan([("$", text)])]
    return located_in_text(data, found), True


DEFAULT_RUN = RunPolicy()  # no rule left out, no baseline, refused packets scanned


def ignored_lint_rules(policy: RunPolicy) -> frozenset[str]:
    """The lint rules (as cmp.lint's findings name them: ``sentences``) that --ignore names."""
    return frozenset(
        rule.removeprefix("lint/")
        for rule in lint_rule_ids()
        if any(_names(ignored, rule) for ignored in policy.ignore)
    )


def run_policy(args: Any, *, baseline: bool, lint: bool = False) -> RunPolicy:
    """A command's policy from ``args`` (settings filled in): --select, --ignore (with ``lint``, lint
    rules too) and, with ``baseline``, --baseline; :class:`PolicyError` when they cannot be used."""
    origins: dict[str, str] = getattr(args, "origins", {})
    select = checked_rules(args.select or (), origins.get("select", "--select"))
    ignore = checked_rules(args.ignore or (), origins.get("ignore", "--ignore"), lint=lint)
    known = read_baseline(args.baseline) if baseline and args.baseline else None
    return RunPolicy(ignore, known, select=select)
