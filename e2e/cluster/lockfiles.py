"""The suite's lock files: ``flock`` locks on empty files in the state directory, taken so that a
file may be removed while nobody holds it.

A run's processes hold locks for as long as they live (a run's liveness, a cluster's users) or
for a step (a node's turnstile, a creation slot); the kernel drops them when the process dies,
SIGKILL included. The files themselves would stay: a run removes those it made once nobody
holds them (:func:`remove_unused`), by the standard pattern — lock the file exclusively without
waiting, remove it while holding that lock — which is safe because every taker checks, once it
has its lock, that the path still names the file it locked, and locks the path again when not
(:func:`take`): a process that waited on a file removed meanwhile never holds a lock nobody else
can see. ``filelock.FileLock`` (the cluster's creation lock, e2e.cluster.kind) does the same
check since filelock 3.20.4 (``st_nlink == 0``: the inode was unlinked), so its files may be
removed while held as well.

Errors: ``OSError`` of ``open``/``flock`` other than a lock held elsewhere (a directory that
cannot be written, a file system without ``flock``).
"""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path

# Seconds between two attempts on a lock held elsewhere (first_free, remove_unused's wait)
POLL_S = 0.5


def _names(path: Path, fd: int) -> bool:
    """Whether ``path`` still names the file open as ``fd`` (not removed, nor replaced, meanwhile)."""
    try:
        return os.path.samestat(os.fstat(fd), os.stat(path))
    except FileNotFoundError:
        return False


def take(path: Path, mode: int) -> int:
    """Lock ``path`` (created when missing) with ``mode`` (``fcntl.LOCK_SH`` or ``LOCK_EX``),
    waiting for any holder of a conflicting lock; returns the open descriptor that holds the lock
    (closing it drops the lock). A file removed while this process waited is not the lock any
    more: the path is locked again (module doc)."""
    fd = _take(path, mode)
    assert fd is not None  # a waiting flock returns only once it holds the lock
    return fd


def try_take(path: Path, mode: int) -> int | None:
    """:func:`take` without waiting: the descriptor, or None when another process holds a
    conflicting lock on ``path``."""
    return _take(path, mode | fcntl.LOCK_NB)


def _take(path: Path, flags: int) -> int | None:
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, flags)
        except BlockingIOError:
            os.close(fd)
            return None
        except BaseException:
            os.close(fd)
            raise
        if _names(path, fd):
            return fd
        os.close(fd)


def unused(path: Path) -> bool:
    """True when no process holds a lock on ``path`` (a missing file: nobody does). A probe: it
    creates nothing, and holds nothing once it returns."""
    while True:
        try:
            fd = os.open(path, os.O_RDWR)
        except FileNotFoundError:
            return True
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        else:
            if _names(path, fd):
                return True
        finally:
            os.close(fd)  # closing drops the probe's lock


def remove_unused(path: Path, wait_s: float = 0.0) -> bool:
    """Remove the lock file ``path`` once no process holds a lock on it, waiting at most
    ``wait_s`` seconds for holders to let go (e.g. exiting xdist workers); True when it is gone
    (or was never there), False when a holder kept it. Removed while this process holds it
    exclusively (module doc)."""
    deadline = time.monotonic() + wait_s
    while True:
        try:
            fd = os.open(path, os.O_RDWR)
        except FileNotFoundError:
            return True
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            if _names(path, fd):
                path.unlink()
                return True
            continue  # removed (and maybe made again) by another process meanwhile: look again
        except BlockingIOError:
            if time.monotonic() >= deadline:
                return False
        finally:
            os.close(fd)
        time.sleep(POLL_S)


def first_free(paths: list[Path], mode: int) -> tuple[int, int]:
    """Lock the first of ``paths`` that is free with ``mode`` (a slot: a lane, a creation, a
    heavy test), polling every :data:`POLL_S` s until one is; returns its index and the
    descriptor that holds it (closing it drops the lock)."""
    while True:
        for i, path in enumerate(paths):
            fd = try_take(path, mode)
            if fd is not None:
                return i, fd
        time.sleep(POLL_S)
