"""e2e.base.locks: a lock file removed while held exclusively (the standard pattern) is never
a lock two processes hold at once, because every taker checks, once locked, that the path still
names its file. Threads stand in for processes (a ``flock`` belongs to an open file, so two
descriptors of one process exclude each other); filelock's own check (``FileLock``, the cluster's
creation lock) runs in real processes."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

from e2e.base import locks
from e2e.base.locks import EXCLUSIVE, SHARED, first_free, hold_shared, let_go, remove_unused, take, try_take, unused


def _remove_held(path: Path, fd: int) -> None:
    """The remover's side of the pattern: it holds ``fd`` exclusively, removes the file, lets go."""
    path.unlink()
    os.close(fd)


def naive_take(path: Path, mode: int) -> int:
    """What the suite did before: open and lock, no check of the path."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(fd, mode)
    return fd


def _race(path: Path, taker) -> bool:
    """B waits for the lock A holds; A removes the file under it, and C takes the path at once (a new
    file): True when B and C held their locks at the same time (two holders of one lock)."""
    held: dict[str, tuple[float, float]] = {}

    def hold(name: str, fd: int) -> None:
        start = time.monotonic()
        time.sleep(0.3)
        held[name] = (start, time.monotonic())
        os.close(fd)

    a = take(path, EXCLUSIVE)
    b = threading.Thread(target=lambda: hold("B", taker(path, EXCLUSIVE)))
    b.start()
    time.sleep(0.2)  # B waits on the file A holds
    _remove_held(path, a)
    hold("C", take(path, EXCLUSIVE))
    b.join(5)
    (b_in, b_out), (c_in, c_out) = held["B"], held["C"]
    return b_in < c_out and c_in < b_out


def test_a_waiter_on_a_removed_lock_file_locks_the_path_again(tmp_path):
    assert _race(tmp_path / "a.lock", take) is False
    # the hazard it guards: without the check, the waiter holds the removed file while C holds the new one
    assert _race(tmp_path / "b.lock", naive_take) is True


def test_a_lock_file_is_removed_only_when_nobody_holds_it(tmp_path):
    path = tmp_path / "x.use"
    shared = take(path, SHARED)
    assert not unused(path) and try_take(path, EXCLUSIVE) is None
    assert remove_unused(path) is False and path.exists()  # held: it stays
    threading.Timer(0.3, os.close, (shared,)).start()  # the holder lets go while the remover waits
    assert remove_unused(path, wait_s=3) is True and not path.exists()
    assert remove_unused(path) is True and unused(path)  # gone: nothing to remove, nobody holds it
    assert not path.exists()  # the probe made nothing


def test_the_first_free_slot_is_taken(tmp_path, monkeypatch):
    monkeypatch.setattr(locks, "POLL_S", 0.05)
    slots = [tmp_path / f"create.{i}.lock" for i in range(2)]
    i, first = first_free(slots, EXCLUSIVE)
    j, second = first_free(slots, EXCLUSIVE)
    assert (i, j) == (0, 1)
    threading.Timer(0.2, os.close, (first,)).start()
    assert first_free(slots, EXCLUSIVE)[0] == 0  # waited for slot 0 to be free again
    os.close(second)


FILELOCK_WAITER = """
    import sys, time
    from filelock import FileLock
    print("taking", flush=True)
    with FileLock(sys.argv[1]):
        print("locked", time.time(), flush=True)
"""


def test_filelock_locks_a_file_removed_while_held_again(tmp_path):
    """The cluster's creation lock (``FileLock``) is removed while held by Kind.delete: a process
    waiting on it must not hold the removed file while another holds the new one (filelock ≥ 3.20.4)."""
    path = tmp_path / "ple2e-x.lock"
    holder = take(path, EXCLUSIVE)
    waiter = subprocess.Popen([sys.executable, "-c", textwrap.dedent(FILELOCK_WAITER), str(path)],
                              stdout=subprocess.PIPE, text=True)
    assert waiter.stdout.readline() == "taking\n"
    time.sleep(0.5)  # it waits on the file this process holds
    _remove_held(path, holder)
    c = take(path, EXCLUSIVE)  # a new file, held here for a second
    released = time.time() + 1.0
    time.sleep(1.0)
    os.close(c)
    out, _ = waiter.communicate(timeout=30)
    assert waiter.returncode == 0 and float(out.split()[1]) >= released - 0.05, out  # only once C let go


def test_a_shared_hold_lasts_until_let_go_and_is_taken_once(tmp_path):
    path = tmp_path / "runs" / "r.lock"
    path.parent.mkdir()
    hold_shared(path)
    hold_shared(path)  # held already: no second descriptor to leak
    assert not unused(path) and try_take(path, EXCLUSIVE) is None
    other = try_take(path, SHARED)  # another holder of a shared lock is welcome
    assert other is not None
    os.close(other)
    let_go(path)
    assert unused(path)  # the one hold is gone
    let_go(path)  # nothing held: nothing to do


def test_try_take_waits_at_most_wait_s_for_a_holder_to_let_go(tmp_path, monkeypatch):
    monkeypatch.setattr(locks, "POLL_S", 0.05)
    path = tmp_path / "network.use"
    shared = take(path, SHARED)
    started = time.monotonic()
    assert try_take(path, EXCLUSIVE, wait_s=0.3) is None  # still held after 0.3 s
    assert time.monotonic() - started >= 0.3
    threading.Timer(0.2, os.close, (shared,)).start()  # the holder lets go while it waits
    fd = try_take(path, EXCLUSIVE, wait_s=5, perm=0o666)
    assert fd is not None
    os.close(fd)
