"""The suite's liveness locks: ``flock`` locks on empty files (in the state directory, or the
host's lock directory of e2e.cluster.egress), taken so that a file may be removed while nobody
holds it. The only module of the suite that calls ``fcntl.flock``: hold shared for the life of
the process (:func:`hold_shared`, :func:`let_go`), take shared or exclusive (:func:`take`), try
exclusive, at once or within seconds (:func:`try_take`), probe whether a file is in use
(:func:`unused`), take the first free of several slots (:func:`first_free`), remove a file nobody
holds (:func:`remove_unused`).

Standard library only: ``filelock`` (a dependency, used for the cluster's creation lock) has no
shared ``flock`` lock — its ``ReadWriteLock`` (4.x) holds SQLite transactions, which neither
exclude the ``flock`` locks that other runs of the suite hold on the same files nor separate
open files of one process — and no probe that leaves nothing behind.

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

A lock file is opened read-only (``flock`` needs no more), so a process may lock a file another
user made (the host's lock directory is shared, mode 1777).

Errors: ``OSError`` of ``open``/``flock`` other than a lock held elsewhere (a directory that
cannot be written, a file system without ``flock``).
"""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path

# Seconds between two attempts on a lock held elsewhere (first_free, try_take's and remove_unused's wait)
POLL_S = 0.5
# The two modes of a lock: shared with other holders of a shared lock, or held alone
SHARED = fcntl.LOCK_SH
EXCLUSIVE = fcntl.LOCK_EX
# Mode bits of a lock file this module makes (the process's umask applies)
PERM = 0o644

_held: dict[Path, int] = {}  # path -> this process's open descriptor holding a shared lock on it (hold_shared)


def _names(path: Path, fd: int) -> bool:
    """Whether ``path`` still names the file open as ``fd`` (not removed, nor replaced, meanwhile)."""
    try:
        return os.path.samestat(os.fstat(fd), os.stat(path))
    except FileNotFoundError:
        return False


def take(path: Path, mode: int, perm: int = PERM) -> int:
    """Lock ``path`` (created with ``perm`` when missing) with ``mode`` (:data:`SHARED` or
    :data:`EXCLUSIVE`), waiting for any holder of a conflicting lock; returns the open descriptor
    that holds the lock (closing it drops the lock). A file removed while this process waited is
    not the lock any more: the path is locked again (module doc)."""
    fd = _take(path, mode, perm)
    assert fd is not None  # a waiting flock returns only once it holds the lock
    return fd


def try_take(path: Path, mode: int, wait_s: float = 0.0, perm: int = PERM) -> int | None:
    """:func:`take` without waiting, or waiting at most ``wait_s`` seconds (polling every
    :data:`POLL_S` s): the descriptor, or None when another process still holds a conflicting
    lock on ``path``."""
    deadline = time.monotonic() + wait_s
    while True:
        fd = _take(path, mode | fcntl.LOCK_NB, perm)
        if fd is not None or time.monotonic() >= deadline:
            return fd
        time.sleep(POLL_S)


def hold_shared(path: Path, perm: int = PERM) -> None:
    """Hold a shared lock on ``path`` for the life of this process, or until :func:`let_go`
    (waiting for an exclusive holder); once per path: holding it already, nothing more."""
    if path not in _held:
        _held[path] = take(path, SHARED, perm)


def let_go(path: Path) -> None:
    """Drop this process's lock of :func:`hold_shared` on ``path``, if it holds one."""
    fd = _held.pop(path, None)
    if fd is not None:
        os.close(fd)


def _take(path: Path, flags: int, perm: int, create: bool = True) -> int | None:
    """The descriptor holding ``flags`` on the file now at ``path`` (a file replaced meanwhile is
    locked again), None when a non-blocking lock is held elsewhere; ``FileNotFoundError`` when
    ``path`` is missing and not to be created."""
    while True:
        fd = os.open(path, os.O_RDONLY | os.O_CREAT, perm) if create else os.open(path, os.O_RDONLY)
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
    try:
        fd = _take(path, EXCLUSIVE | fcntl.LOCK_NB, PERM, create=False)
    except FileNotFoundError:
        return True
    if fd is None:
        return False
    os.close(fd)  # closing drops the probe's lock
    return True


def remove_unused(path: Path, wait_s: float = 0.0) -> bool:
    """Remove the lock file ``path`` once no process holds a lock on it, waiting at most
    ``wait_s`` seconds for holders to let go (e.g. exiting xdist workers); True when it is gone
    (or was never there), False when a holder kept it. Removed while this process holds it
    exclusively (module doc)."""
    deadline = time.monotonic() + wait_s
    while True:
        try:
            fd = _take(path, EXCLUSIVE | fcntl.LOCK_NB, PERM, create=False)
        except FileNotFoundError:
            return True
        if fd is not None:
            try:
                path.unlink()
            finally:
                os.close(fd)
            return True
        if time.monotonic() >= deadline:
            return False
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
