"""Durable file writes: the bytes on disk before a name points at them, and the name on disk too.

The steps the store and the command line's rewrites share: write and sync a temporary
file, give it its name, then sync the folder so that the name survives a crash.
"""

from __future__ import annotations

import errno
import os

# The errors of a file system that has no hard links (a FAT or SMB mount, some containers).
_NO_LINKS = frozenset({errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EMLINK, errno.ENOSYS})


def write_synced(fd: int, data: bytes) -> None:
    """Write ``data`` to the open file ``fd``, close it, and return once it is on disk."""
    with os.fdopen(fd, "wb") as stream:
        stream.write(data)
        stream.flush()
        os.fsync(stream.fileno())


def link_new(temporary: str | os.PathLike[str], final: str | os.PathLike[str]) -> bool:
    """Give ``temporary`` the new name ``final`` as well: True; FileExistsError if that name
    is taken; False where the file system has no hard links (the caller writes in place)."""
    try:
        os.link(temporary, final)
    except FileExistsError:
        raise
    except OSError as exc:
        if exc.errno in _NO_LINKS:
            return False
        raise
    return True


def sync_folder(folder: str | os.PathLike[str]) -> None:
    """fsync ``folder``, so that a name just made in it survives a crash (best effort)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


__all__ = ["link_new", "sync_folder", "write_synced"]
