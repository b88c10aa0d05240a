"""Reading stamps (:mod:`e2e.evidence.stamps`) from the cluster: the containers' logs through the
API, every stamp of a pod so far (its logs and the termination messages the recorder saw), and a
watch that reads a container's log until an event shows (before the kubelet deletes it)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Sequence

from kubernetes.client.exceptions import ApiException

from ..record.pods import container_statuses, ever_started
from .stamps import Stamp, event_times, merge, parse, stamps_from_changes

if TYPE_CHECKING:
    from ..run.scenario import Scenario


def stamps_from_logs(sc: "Scenario", pod: str, containers: Sequence[str] = ()) -> list[Stamp]:
    """The stamps in the current (and, after a restart, previous) logs of the containers of ``pod``
    (``containers``, or all); none of a container not started yet or already gone (its
    termination message has them: :func:`stamps_from_changes`)."""
    found: list[Stamp] = []
    for name, cs in container_statuses(sc.pod(pod)).items():
        if containers and name not in containers:
            continue
        for previous in (False, True) if cs.get("restartCount") else (False,):
            try:
                found.extend(parse(sc.kube.logs(sc.namespace, pod, name, previous=previous)))
            except ApiException:
                pass
    return merge(found)


def stamps_of(sc: "Scenario", pod: str | None) -> list[Stamp]:
    """Every stamp of ``pod`` seen so far: its containers' logs and the termination messages the
    recorder saw (also of a deleted pod); none for ``pod`` None."""
    if pod is None:
        return []
    return merge(stamps_from_changes(sc.recorder.changes("Pod"), pod), stamps_from_logs(sc, pod))


class StampWatch:
    """Reads the log of ``container`` of ``pod`` (at most every ``interval_s`` seconds, once it has started) until it shows
    ``event``: the kubelet deletes an evicted pod's containers, and their logs, as soon as the pod
    is terminal (kubelet.go cleanUpContainersInPod), so the stamps are read while it runs.
    :attr:`times` is ``{event: epoch s}`` (:func:`event_times`)."""

    def __init__(self, sc: "Scenario", pod: str, container: str, event: str, interval_s: float = 0.5):
        self.sc, self.pod, self.container, self.event, self.interval_s = sc, pod, container, event, interval_s
        self.times: dict[str, float] = {}
        self._asked = 0.0

    def poll(self) -> None:
        """Read the log once, unless ``event`` was seen or it was read less than ``interval_s`` ago
        (call it from a wait's check)."""
        now = time.time()
        if self.event in self.times or now - self._asked < self.interval_s:
            return
        self._asked = now
        if ever_started(self.sc.recorder.changes("Pod", self.pod), self.container):
            self.times.update(event_times(stamps_from_logs(self.sc, self.pod, [self.container])))
