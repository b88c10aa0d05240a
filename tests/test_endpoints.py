"""e2e.evidence.endpoints: endpoint conditions per pod from EndpointSlice changes."""

from __future__ import annotations

from e2e.evidence import endpoints
from e2e.record.recorder import Change


def slice_change(t: float, name: str, eps: dict[str, tuple], type_: str = "MODIFIED") -> Change:
    obj = {"metadata": {"name": name}, "endpoints": [
        {"targetRef": {"name": pod}, "conditions": {"ready": r, "serving": s, "terminating": term}}
        for pod, (r, s, term) in eps.items()
    ]}
    return Change(t, "EndpointSlice", type_, name, obj)


def test_states_follow_conditions_and_removal():
    changes = [
        slice_change(1.0, "web-a", {"a": (True, True, False)}, "ADDED"),
        slice_change(2.0, "web-a", {"a": (True, True, False), "b": (True, True, False)}),
        Change(2.5, "Pod", "MODIFIED", "a", {}),
        slice_change(3.0, "web-a", {"a": (False, True, True), "b": (True, True, False)}),
        slice_change(4.0, "web-a", {"a": (False, False, True), "b": (True, True, False)}),
        slice_change(5.0, "web-a", {"b": (True, True, False)}),
    ]
    states = endpoints.endpoint_states(changes)
    assert [(s.received_at, s.pod, s.label) for s in states] == [
        (1.0, "a", "ready"),
        (2.0, "b", "ready"),
        (3.0, "a", "terminating, serving"),
        (4.0, "a", "terminating, not serving"),
        (5.0, "a", "removed"),
    ]
    assert endpoints.first(states, "a", terminating=True).received_at == 3.0
    assert endpoints.first(states, "a", after=3.5).received_at == 4.0
    assert endpoints.first(states, "a", present=False).received_at == 5.0
    assert endpoints.first(states, "c") is None
    assert endpoints.pods(states) == ["a", "b"]
    assert endpoints.ready_pods(states) == {"b"}


def test_deleted_slice_removes_its_endpoints():
    changes = [
        slice_change(1.0, "s1", {"a": (True, True, False)}, "ADDED"),
        slice_change(1.0, "s2", {"b": (True, True, False)}, "ADDED"),
        slice_change(2.0, "s1", {}, "DELETED"),
    ]
    states = endpoints.endpoint_states(changes)
    assert states[-1].pod == "a" and not states[-1].present
    assert endpoints.ready_pods(states) == {"b"}


def test_named_waits_on_endpoints():
    changes = [slice_change(1.0, "web-a", {"a": (True, True, False)}, "ADDED"),
               slice_change(2.0, "web-a", {"a": (False, True, True), "b": (True, True, False)})]
    sc = type("Sc", (), {"recorder": type("R", (), {"changes": lambda self, kind=None, name=None: changes})()})()
    assert endpoints.endpoint_ready("a").check(sc).received_at == 1.0
    assert endpoints.endpoint_ready("a", ready=False, after=1.5).check(sc).received_at == 2.0
    assert endpoints.endpoint_ready("c").check(sc) is None
    assert endpoints.ready_count(1).check(sc) == {"b"} and endpoints.ready_count(2).check(sc) is None
    assert endpoints.endpoint_ready("a").what == "endpoint of a ready=true"
