"""Ctrl-C and SIGTERM held back around what must not be cut half-way (e2e.base.interrupts), and the
namespace create request among them: make interrupt-check's run 6 (SIGTERM to pytest 7.8 s in, a
kept cluster) left the interrupted test's namespace behind — a create request cut after it was
sent can land after the cleanup's delete found nothing."""

from __future__ import annotations

import os
import signal
from types import SimpleNamespace

import pytest

from e2e.cluster.kube import Kube
from e2e.base.interrupts import signals_deferred


@pytest.fixture
def stopping():
    """The suite's handler for both signals (e2e.plugin.signals): raise KeyboardInterrupt, saying which."""
    seen: list[int] = []

    def handler(signum, frame):
        seen.append(signum)
        raise KeyboardInterrupt

    previous = {s: signal.signal(s, handler) for s in (signal.SIGINT, signal.SIGTERM)}
    yield seen
    for s, h in previous.items():
        signal.signal(s, h)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_is_held_back_and_delivered_after(stopping, signum):
    done = []
    with pytest.raises(KeyboardInterrupt):
        with signals_deferred():
            os.kill(os.getpid(), signum)
            done.append("the rest ran")
    assert done == ["the rest ran"] and stopping == [signum]


def test_an_ignored_signal_stays_ignored():
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with signals_deferred():
            os.kill(os.getpid(), signal.SIGINT)
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, previous)


def test_the_namespace_create_request_is_not_cut_by_sigterm(stopping):
    sent = []

    def create_namespace(body):
        os.kill(os.getpid(), signal.SIGTERM)  # arrives while the request is in flight
        sent.append(body.metadata.name)  # the answer is read: the namespace is known to exist

    kube = Kube.__new__(Kube)
    kube.core = SimpleNamespace(create_namespace=create_namespace)
    with pytest.raises(KeyboardInterrupt):
        kube.create_namespace("e2e-x", {"run": "r"})
    assert sent == ["e2e-x"] and stopping == [signal.SIGTERM]
