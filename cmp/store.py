"""The local store: a folder of packet files, one canonical ``<id>.json`` per packet.

A plain folder, so people can read, diff and version it; each file is the canonical bytes
and a line feed (specification 9.8). Ids must be ULIDs, so every name is a plain file name
and no id names a path outside the folder. It promises:

- A file is never overwritten, rewritten or deleted: a save writes and syncs a temporary
  file, then links it in under its name, which fails if the name is taken. Two writers of
  one packet both succeed; of different packets under one id, exactly one does.
- Reading never changes anything in the folder; a file the store cannot serve is reported
  by :meth:`Store.problems` and left where it is.
- Reading a large store does not read every file: an index in the user's cache folder
  (``cmp._store_index``) records what each packet file held, and counts only while the
  file's inode, size and time stamps are unchanged. Every other file is read, so a file
  added, removed or edited by hand or by another process is seen.
- No read takes more than 32,769 bytes of a file, and no message quotes a redaction
  match: hits are named by field and category only.
"""

from __future__ import annotations

import builtins
import errno
import itertools
import json
import os
import re
import secrets
import stat
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from cmp import _store_index as index
from cmp._canonical import dumps, file_bytes
from cmp._chain import _cycles
from cmp._display import describe, display_name, visible
from cmp._files import link_new, sync_folder, write_synced
from cmp._intake import MAX_PACKET_BYTES
from cmp._messages import quote, withheld
from cmp._pipeline import check, redact
from cmp._redaction._hit import Redaction, RedactionError
from cmp._resume import ResumeBlock, Style, resume_block
from cmp._timestamps import instant
from cmp.findings import PacketError, first_of
from cmp.model import Packet

TYPE_CHECKING = False
if TYPE_CHECKING:
    from cmp._redaction._rules import RuleSetName

# A ULID: 26 characters of upper-case Crockford base32, the first at most 7 (128 bits).
_ULID = re.compile(r"[0-7][0-9A-HJKMNP-TV-Z]{25}")
_SUFFIX = ".json"
_PACKET_FILE = re.compile(r"[0-7][0-9A-HJKMNP-TV-Z]{25}\.json")
# A save's temporary file. One older than STALE_AFTER was left by a writer that stopped
# mid-write (no save takes that long); a younger one may be in flight and is passed over.
_TEMPORARY = re.compile(r"\.cmp-store-[0-7][0-9A-HJKMNP-TV-Z]{25}-[0-9a-f]{16}\.tmp")
STALE_AFTER = 15 * 60
# Files version control or a desktop leaves beside packets: passed over in silence.
_KEEP_FILES = frozenset({".gitkeep", ".gitignore", ".gitattributes", ".keep", ".DS_Store"})
# One byte past the limit is enough to know a file is too large to be a packet.
_READ_LIMIT = MAX_PACKET_BYTES + 1
STORE_VARIABLE = "CMP_STORE"
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)


class StoreError(Exception):
    """A store that cannot be read or written, or a packet it will not take; one line for the user."""


class PacketNotFound(StoreError, LookupError):
    """No packet with that id is stored."""


class PacketConflict(StoreError):
    """A different packet with the same id is already stored; nothing was written."""


class UnredactedPacket(StoreError, RedactionError):
    """The redaction rules found something and ``allow_unredacted`` was not given.

    ``redactions`` lists the hits; the message names each by field and category only.
    """

    def __init__(self, redactions: Sequence[Redaction]) -> None:
        RedactionError.__init__(self, redactions)
        # Where and what kind, never the text, not even a key's public prefix: it may be a secret.
        named = [f"{hit.field}: {hit.category} found" for hit in redactions]
        self.args = (f"not stored: {first_of(named)}; cmp.scrub replaces it, allow_unredacted=True stores it as it is",)


@dataclass(frozen=True, slots=True)
class SaveResult:
    """What a save did: ``id``, ``path``, and whether this save ``written`` it (False: already stored)."""

    id: str
    path: Path
    written: bool


@dataclass(frozen=True, slots=True)
class StoreProblem:
    """A file in the store's folder that the store does not serve, and why (``message``, one line)."""

    path: Path
    message: str

    def __str__(self) -> str:
        return f"{visible(display_name(str(self.path)))}: {self.message}"


def is_store_id(text: str) -> bool:
    """Whether ``text`` is an id the store can hold: a ULID in its canonical upper-case text."""
    return _ULID.fullmatch(text) is not None


def _working_directory() -> Path:
    try:
        return Path(os.getcwd())
    except OSError as exc:  # the working directory was removed under us
        raise StoreError(f"cannot find the store: the working directory cannot be read: {describe(exc)}") from None


def project_folder(cwd: str | os.PathLike[str] | None = None) -> Path:
    """The nearest folder from ``cwd`` (default: the working directory) up that holds a
    ``.cmp`` folder, else the nearest that holds ``.git``, else ``cwd``."""
    start = (_working_directory() if cwd is None else Path(cwd)).absolute()
    for marker in (".cmp", ".git"):
        for folder in (start, *start.parents):
            found = folder / marker
            # .git may be a file (a worktree, a submodule); .cmp must be the folder itself.
            if found.is_dir() or (marker == ".git" and found.exists()):
                return folder
    return start


def default_store_path(cwd: str | os.PathLike[str] | None = None, environ: Mapping[str, str] | None = None) -> Path:
    """Where the store is when none is named: ``CMP_STORE`` (relative to ``cwd``; empty is
    unset), else ``.cmp/packets`` in the :func:`project_folder` of ``cwd``.
    :class:`StoreError` if the working directory is gone."""
    start = (_working_directory() if cwd is None else Path(cwd)).absolute()
    named = (os.environ if environ is None else environ).get(STORE_VARIABLE)
    if named:
        return start / named
    return project_folder(start) / ".cmp" / "packets"


def _entry(packet: Packet, key: index.Key) -> index.Entry:
    """What the index keeps of a served packet: its order and parent, and no text a redaction pattern matches."""
    return index.Entry(
        key,
        instant(packet.created_at) or 0,
        packet.parent_id if is_store_id(packet.parent_id) else "",  # no other parent_id names a stored packet
        None if any(withheld(tag) for tag in packet.tags) else packet.tags,
        None if withheld(packet.goal) else json.dumps(packet.goal),
    )


class Store:
    """A folder of canonical ``<id>.json`` packet files; ``path`` None is :func:`default_store_path`.

    Nothing is read or made until a method is called.
    """

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = default_store_path() if path is None else Path(path)
        # The index as the last read left it, and the folder (device, inode) it is of.
        self._known: tuple[tuple[int, int], dict[str, index.Entry]] | None = None
        try:
            os.fsencode(self.path)
        except UnicodeEncodeError:  # a lone surrogate: no file system has such a name
            raise StoreError(f"no store can be at {self._shown()}: the path is no file name") from None

    def __repr__(self) -> str:
        return f"Store({str(self.path)!r})"

    def _shown(self) -> str:
        return visible(display_name(str(self.path)))  # one line, whatever the path holds

    def _unreadable(self, exc: OSError) -> StoreError:
        why = "it is not a folder" if exc.errno == errno.ENOTDIR else describe(exc)
        return StoreError(f"cannot read store {self._shown()}: {why}")

    def _file(self, id: str) -> Path:
        if not isinstance(id, str):
            raise TypeError(f"a packet id is a str, not {type(id).__name__}")
        if not is_store_id(id):
            # Checked before the id goes near a path: "../x", "/etc/passwd" and "a/b" are no ULIDs.
            raise PacketNotFound(f"no packet {quote(id)} in store {self._shown()}: a stored packet's id is a ULID")
        return self.path / (id + _SUFFIX)

    def save(self, packet_or_bytes: Packet | bytes | str, *, allow_unredacted: bool = False) -> SaveResult:
        """Store a :class:`cmp.Packet`, or its bytes or text (judged by :func:`cmp.check`).

        Raises :class:`cmp.PacketError` for a packet that does not conform,
        :class:`UnredactedPacket` for redaction hits, a credential in any of its strings
        included (the writer's rule; unless ``allow_unredacted``),
        :class:`PacketConflict` when another packet with the id is stored, and
        :class:`StoreError` for an id that is no ULID or a folder that cannot be written.
        """
        if isinstance(packet_or_bytes, Packet):
            packet = packet_or_bytes
            canonical = dumps(packet)
            found = redact(packet, writer=True)
            if found and not allow_unredacted:
                raise UnredactedPacket(found)
        elif isinstance(packet_or_bytes, (bytes, str)):
            report = check(packet_or_bytes, allow_unredacted=True, writer=True)
            if report.packet is None or report.errors:
                raise PacketError(report.errors)
            if report.redactions and not allow_unredacted:
                raise UnredactedPacket(report.redactions)
            packet = report.packet
            canonical = dumps(packet)
        else:
            raise TypeError(f"save() takes a cmp.Packet, bytes or str, not {type(packet_or_bytes).__name__}")
        if not is_store_id(packet.id):
            raise StoreError(
                f"not stored: the packet's id {quote(packet.id)} is not a ULID, and a stored packet's file "
                "is named for its id (Packet.new makes ULIDs)"
            )
        return self._publish(packet.id, canonical)

    def _publish(self, id: str, canonical: bytes) -> SaveResult:
        final = self.path / (id + _SUFFIX)
        data = file_bytes(canonical)
        if os.path.lexists(final):
            return self._same_or_conflict(id, final, canonical)
        try:
            os.makedirs(self.path, exist_ok=True)
        except FileExistsError:  # a name there that is no folder: a file, or a link to none or to itself
            try:
                os.stat(self.path)
                why = "it is not a folder"
            except OSError as exc:
                why = describe(exc)
            raise StoreError(f"cannot save to store {self._shown()}: {why}") from None
        except OSError as exc:
            raise StoreError(f"cannot save to store {self._shown()}: {describe(exc)}") from None
        temporary = self.path / f".cmp-store-{id}-{secrets.token_hex(8)}.tmp"
        try:
            try:
                self._write_temporary(temporary, data)
                linked = link_new(temporary, final)
            except FileExistsError:
                return self._same_or_conflict(id, final, canonical)
            except OSError as exc:
                raise StoreError(f"cannot save to store {self._shown()}: {describe(exc)}; nothing was stored") from None
        finally:
            try:
                os.unlink(temporary)
            except OSError:
                pass
        if not linked:  # no hard links here: written in place, never over an existing file
            return self._create_in_place(id, final, data, canonical)
        sync_folder(self.path)
        return SaveResult(id, final, True)

    @staticmethod
    def _write_temporary(temporary: Path, data: bytes) -> None:
        write_synced(os.open(temporary, _CREATE, 0o666), data)  # the umask decides, as for any file the user makes

    def _create_in_place(self, id: str, final: Path, data: bytes, canonical: bytes) -> SaveResult:
        """Without hard links: create the file exclusively and write it. A reader may see it
        part-written for an instant; a failed write removes the file, which is this save's."""
        try:
            fd = os.open(final, _CREATE, 0o666)
        except FileExistsError:
            return self._same_or_conflict(id, final, canonical)
        except OSError as exc:
            raise StoreError(f"cannot save to store {self._shown()}: {describe(exc)}; nothing was stored") from None
        try:
            write_synced(fd, data)
        except OSError as exc:
            try:
                os.unlink(final)
            except OSError:
                pass
            raise StoreError(f"cannot save to store {self._shown()}: {describe(exc)}; nothing was stored") from None
        sync_folder(self.path)
        return SaveResult(id, final, True)

    def _same_or_conflict(self, id: str, final: Path, canonical: bytes) -> SaveResult:
        try:
            stored, _ = _read(final)
        except OSError as exc:
            raise StoreError(
                f"cannot save: {display_name(str(final))} is already there and cannot be read: {describe(exc)}"
            ) from None
        if stored in (canonical, file_bytes(canonical)):
            return SaveResult(id, final, False)
        held, problem, _ = _judged(id, stored)
        if held is None:  # a hand edit, a file cut short: kept as it is, for someone to look at
            raise PacketConflict(
                f"not stored: {display_name(str(final))} is already there and is not served: {problem}"
            )
        raise PacketConflict(
            f"not stored: a different packet with id {id} is already stored at {display_name(str(final))}"
        )

    def get(self, id: str) -> Packet:
        """The stored packet with this id; :class:`PacketNotFound` if there is none (or the id
        is no ULID), :class:`StoreError` if its file is not one the store serves (naming why)."""
        path = self._file(id)
        try:
            data, _ = _read(path)
        except FileNotFoundError:
            raise PacketNotFound(f"no packet {id} in store {self._shown()}") from None
        except OSError as exc:
            if exc.errno == errno.ELOOP and path.is_symlink():
                raise StoreError(f"{display_name(str(path))}: not served: a symbolic link") from None
            if exc.errno in (errno.ENOTDIR, errno.ELOOP, errno.EACCES) and not os.path.lexists(path):
                raise self._unreadable(exc) from None
            raise StoreError(f"{display_name(str(path))}: cannot read: {describe(exc)}") from None
        packet, problem, _ = _judged(id, data)
        if packet is None:
            raise StoreError(f"{display_name(str(path))}: not served: {problem}")
        return packet

    def _listing(self) -> Iterator[os.DirEntry[str]]:
        """The folder's entries, one at a time; :class:`StoreError` if it cannot be read."""
        try:
            with os.scandir(self.path) as listing:
                yield from listing
        except FileNotFoundError:
            return  # a store that does not exist yet holds nothing
        except OSError as exc:
            raise self._unreadable(exc) from None

    def _survey(self) -> tuple[dict[str, index.Entry], builtins.list[StoreProblem]]:
        """What each served file holds (by packet id), and every file the store does not serve
        (in file-name order). A file the index knows unchanged is not read; the index is
        written again when it no longer says what the files hold."""
        try:
            folder = os.stat(self.path)
        except OSError:
            folder = None  # the listing says why, if it is anything but a store not made yet
        where = None if folder is None else (folder.st_dev, folder.st_ino)
        if self._known is not None and self._known[0] == where:
            known = self._known[1]
        else:
            known = {} if folder is None or not stat.S_ISDIR(folder.st_mode) else index.load(folder)
        served: dict[str, index.Entry] = {}
        recorded: dict[str, index.Entry] = {}  # what the index will say: entries that still hold, settled reads
        read = 0  # settled files read, which the index did not know
        problems: builtins.list[StoreProblem] = []
        misnamed: builtins.list[tuple[Path, str]] = []  # files holding a packet under another name
        now = time.time_ns()
        for entry in self._listing():
            message = _foreign(entry, now / 1e9)
            if message == "":
                continue  # a save in flight
            if message is None:
                id = entry.name[: -len(_SUFFIX)]
                held = known.get(id)
                if held is not None and held.key == index.key_of(entry.stat(follow_symlinks=False)):
                    served[id] = recorded[id] = held
                    continue
                try:
                    data, info = _read(entry.path)
                except FileNotFoundError:
                    continue  # gone since the listing: nothing to serve, nothing to report
                except OSError as exc:
                    message = f"cannot read: {describe(exc)}"
                else:
                    packet, message, other = _judged(id, data)
                    if packet is not None:
                        served[id] = _entry(packet, index.key_of(info))
                        if index.settled(info, now):
                            recorded[id] = served[id]
                            read += 1
                        continue
                    if other is not None:  # said once every file is read: it may be a duplicate
                        misnamed.append((self.path / entry.name, other))
                        continue
            problems.append(StoreProblem(self.path / entry.name, message))
        for path, other in misnamed:
            also = f", which {other}.json holds too" if other in served else ""
            problems.append(StoreProblem(path, f"holds the packet with id {other}{also}: the file name is not its id"))
        problems.sort(key=lambda problem: problem.path.name)
        if folder is not None and where is not None:
            if read or len(recorded) != len(known):
                index.save(folder, recorded)
            self._known = (where, recorded)
        return served, problems

    def _served(self, id: str) -> Packet | None:
        """The packet the file of ``id`` holds now, if the store serves it (None: gone or changed since)."""
        try:
            data, _ = _read(self._file(id))
        except OSError:
            return None
        return _judged(id, data)[0]

    def packets(self, *, tag: str | None = None, text: str | None = None) -> Iterator[Packet]:
        """The packets :meth:`list` gives, newest first, read one at a time as they are asked for:
        memory holds one packet, not the store. The folder is listed when this is called; a file
        removed or made unservable before its turn is passed over."""
        wanted = None if text is None else text.casefold()
        served, _ = self._survey()
        order = sorted(
            (
                (entry.order, id)
                for id, entry in served.items()
                if (tag is None or entry.tags is None or tag in entry.tags)
                and (wanted is None or (goal := index.goal_of(entry)) is None or wanted in goal.casefold())
            ),
            reverse=True,
        )
        return (
            packet
            for _, id in order
            if (packet := self._served(id)) is not None
            and (tag is None or tag in packet.tags)
            and (wanted is None or wanted in packet.goal.casefold())
        )

    def list(self, *, tag: str | None = None, text: str | None = None, limit: int | None = None) -> list[Packet]:
        """The stored packets, newest first (created_at as an instant, then id, both descending).

        ``tag``: only packets with that tag; ``text``: only those whose goal holds it, ignoring
        case; ``limit``: at most that many. Files that :meth:`problems` reports are left out.
        Only the packets returned are read whole (:meth:`packets` gives them one at a time).
        """
        if limit is not None and limit < 0:
            raise ValueError(f"limit is a count, not {limit}")
        return [*itertools.islice(self.packets(tag=tag, text=text), limit)]

    # Below Store.list, "list" in the class body names that method: hence builtins.list.
    def problems(self) -> builtins.list[StoreProblem]:
        """Every file in the folder the store does not serve, and why, in file-name order; and
        each packet of a parent_id cycle (served, but never a head). Nothing is changed."""
        served, problems = self._survey()
        ids = [*served]
        position = {id: number for number, id in enumerate(ids)}
        for cycle in _cycles([position.get(served[id].parent_id) for id in ids], ids):
            for number in cycle:
                problems.append(
                    StoreProblem(
                        self._file(ids[number]),
                        f"its parent_id chain comes back to it (a cycle of {len(cycle)} packet"
                        f"{'s' if len(cycle) != 1 else ''}): no head, so no resume, ever picks it",
                    )
                )
        return sorted(problems, key=lambda problem: problem.path.name)

    def _heads(self) -> Iterator[Packet]:
        served, _ = self._survey()
        named = {entry.parent_id for entry in served.values()}
        order = sorted(((entry.order, id) for id, entry in served.items() if id not in named), reverse=True)
        return (packet for _, id in order if (packet := self._served(id)) is not None)

    def heads(self) -> builtins.list[Packet]:
        """The packets no stored packet continues (:func:`cmp.chain`'s heads), newest first."""
        return [*self._heads()]

    def latest(self) -> Packet | None:
        """The newest head (:meth:`heads`), or None for a store with none. Reads one packet file
        (and those the index does not know unchanged)."""
        return next(self._heads(), None)

    def resume(
        self,
        id: str | None = None,
        *,
        style: Style = "markdown",
        max_chars: int | None = None,
        allow_unredacted: bool = False,
        rule_set: RuleSetName = "default",
    ) -> ResumeBlock:
        """The resume block (:func:`cmp.resume_block`) of the packet ``id``, or of :meth:`latest`.

        :class:`PacketNotFound` for an id not held or an empty store; else raises as
        :func:`cmp.resume_block` does.
        """
        packet = self.get(id) if id is not None else self.latest()
        if packet is None:
            raise PacketNotFound(f"store {self._shown()} holds no packet to resume")
        return resume_block(
            packet, style=style, max_chars=max_chars, allow_unredacted=allow_unredacted, rule_set=rule_set
        )


def _read(path: str | os.PathLike[str]) -> tuple[bytes, os.stat_result]:
    """At most 32,769 bytes of the regular file ``path``, not following a link, never blocking on a
    FIFO; and the file's status before the read (what the index records of what was read)."""
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags)
    with os.fdopen(fd, "rb") as stream:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
        os.set_blocking(fd, True)
        return stream.read(_READ_LIMIT), info


def _judged(id: str, data: bytes) -> tuple[Packet | None, str, str | None]:
    """(the packet, "", None) when ``data`` is what the store writes for packet ``id``, else
    (None, why not, and the id of the packet it holds when that is the only fault: its name)."""
    if len(data) > MAX_PACKET_BYTES:
        return None, f"over {MAX_PACKET_BYTES:,} bytes, longer than any packet", None
    report = check(data, allow_unredacted=True)
    if report.packet is None or report.errors:
        return None, f"not a conforming packet: {first_of(report.errors)}", None
    packet = report.packet
    canonical = dumps(packet)
    if data not in (canonical, file_bytes(canonical)):
        return None, "not in canonical form (a hand edit?): `fmt FILE` shows the canonical bytes", None
    if packet.id != id:
        held = packet.id if is_store_id(packet.id) else quote(packet.id)
        return None, f"holds the packet with id {held}: the file name is not its id", held
    return packet, "", None


def _foreign(entry: os.DirEntry[str], now: float) -> str | None:
    """Why an entry is no packet file by its name or kind: None for a ``<ULID>.json`` regular
    file, to be read; "" for a temporary file of a save in flight, to be passed over."""
    name = entry.name
    try:
        info = entry.stat(follow_symlinks=False)
    except OSError as exc:
        return f"cannot read: {describe(exc)}"
    if stat.S_ISREG(info.st_mode) and _PACKET_FILE.fullmatch(name):
        return None  # most entries: one test first
    if _TEMPORARY.fullmatch(name) and stat.S_ISREG(info.st_mode):
        # A minute's slack for a clock set back.
        if -60 <= now - info.st_mtime <= STALE_AFTER:
            return ""  # a save in flight, most likely
        return f"a temporary file left by a save that stopped (older than {STALE_AFTER // 60} minutes); safe to remove"
    if name in _KEEP_FILES and stat.S_ISREG(info.st_mode):
        return ""  # what version control keeps in a folder: no packet, and no problem
    if stat.S_ISLNK(info.st_mode):
        return "a symbolic link: the store serves only the files in its folder"
    if stat.S_ISDIR(info.st_mode):
        return "a folder: the store holds only <ULID>.json files"
    if not (name.endswith(_SUFFIX) and is_store_id(name[: -len(_SUFFIX)])):
        return "not a packet file: the store holds only <ULID>.json files"
    if not stat.S_ISREG(info.st_mode):
        return "not a regular file"
    return None


__all__ = [
    "STALE_AFTER",
    "PacketConflict",
    "PacketNotFound",
    "SaveResult",
    "Store",
    "StoreError",
    "StoreProblem",
    "UnredactedPacket",
    "default_store_path",
    "is_store_id",
]
