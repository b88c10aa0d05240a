"""IM — image pulls against a real registry (CASES-workloads.md §4 IM-1 … IM-4).

Every pull goes to the suite's own CNCF distribution registry — on the kind network, or a pod on a
``--kubeconfig`` cluster (the ``registry`` / ``registries`` fixtures, conftest.py) — whose access log
is the registry's side of it:
each manifest and blob request with its status and time. The catalogue's loopback target (§3.2:
``127.0.0.1:5999`` inside the node, nothing listening) stays as the no-registry baseline. Values and
sources: :mod:`e2e.documented.images`.
"""

from __future__ import annotations

import json
import time

import pytest

from e2e.cluster import gates
from e2e.cluster.images import APP, BUSYBOX, normalize
from e2e.cluster.registry import Registry, Request, summary
from e2e.documented import images as doc
from e2e.measure.images import pull_gaps, serial_pulls, waited_s
from e2e.measure.values import expect_all
from e2e.record.pods import container_status
from e2e.run.scenario import Scenario
from e2e.base.waiting import WAIT_SLACK_S

# a workload family (CASES-workloads.md): `make e2e-workloads`, not in the default `make e2e`;
# on a cluster of its own (profiles/image-pulls.yaml: a pulled preloaded image ID poisons the node
# for every later test that runs it under imagePullPolicy Never). Serial: the kubelet pulls one image at
# a time per node (serializeImagePulls, pkg/kubelet/images/puller.go serialImagePuller) and sends its
# "Pulling" event before the queue (image_manager.go pullImage), so a pull of another test on the node
# delays this test's pull at the registry. Seen with rooms and 3 workers (2026-12-08, 25a861a): IM-1's
# pull_gap_s[1] 40 s against [10, 27] — its second pull reached the registry 29 s after its Pulling event,
# behind test_registry_stopped_mid_pull's pull that hangs 30 s.
pytestmark = [pytest.mark.workloads, pytest.mark.profile("image-pulls"), pytest.mark.serial]

# §3.2: a registry address inside the node's own network namespace where nothing listens
LOOPBACK_REFUSED = "127.0.0.1:5999"


def waiting(sc: Scenario, pod: str) -> dict:
    return (container_status(sc.pod(pod), "app").get("state") or {}).get("waiting") or {}


def running(sc: Scenario, pod: str) -> bool:
    return bool((container_status(sc.pod(pod), "app").get("state") or {}).get("running"))


def waiting_reasons(sc: Scenario, pod: str) -> list[tuple[float, str, str]]:
    """Every change of the container's waiting reason after ``ContainerCreating`` (the pod's own
    start): ``(receive time, reason, message)``."""
    out: list[tuple[float, str, str]] = []
    for ch in sc.recorder.changes("Pod", pod):
        w = (container_status(ch.obj, "app").get("state") or {}).get("waiting") or {}
        if w.get("reason") and w["reason"] != "ContainerCreating" and (not out or (out[-1][1], out[-1][2]) != (w["reason"], w.get("message", ""))):
            out.append((ch.received_at, w["reason"], w.get("message", "")))
    return out


def node_pulls(reqs: list[Request], repo: str, tag: str) -> list[list[Request]]:
    """The node's pull attempts of ``repo:tag`` as the registry saw them: manifest requests for the
    tag from a client other than the host (its pushes come through the published port: Docker's
    gateway address), grouped into one attempt when less than 2 s apart (containerd's HEAD, then GET)."""
    mine = [r for r in reqs if r.what == "manifest" and r.path == f"/v2/{repo}/manifests/{tag}" and r.agent.startswith("containerd")]
    attempts: list[list[Request]] = []
    for r in mine:
        if attempts and r.at - attempts[-1][-1].at < 2.0:
            attempts[-1].append(r)
        else:
            attempts.append([r])
    return attempts


def ensure_secret_pulled_images(sc: Scenario) -> bool | None:
    """The kubelet's live ``KubeletEnsureSecretPulledImages`` gate (noted on the test)."""
    live = gates.kubelet(sc.kube, sc.default_node()) if sc.kind else None  # the kubelet of its pods (a room: a worker)
    gate = live.enabled("KubeletEnsureSecretPulledImages") if live and "KubeletEnsureSecretPulledImages" in live else None
    sc.note("KubeletEnsureSecretPulledImages (kubelet /metrics)", gate)
    return gate


def node_tag(sc: Scenario, ref: str, source: str = BUSYBOX) -> None:
    """Give the node's containerd the preloaded image ``source`` under the name ``ref`` (no pull)."""
    sc.node_exec("ctr", "-n", "k8s.io", "images", "tag", "--force", normalize(source), ref)


# -- IM-3 -------------------------------------------------------------------------------------------


@pytest.mark.case("IM-3")
def test_pull_policy_matrix(scenario: Scenario, registry: Registry):
    """IM-3: the policy decides before any pull. (a) a present image under IfNotPresent runs with
    "already present on machine" and no request to the registry; (b) Always pulls although present
    (the registry sees the manifest request, ``Pulled`` "Successfully pulled…"); (b') Always with the
    image present under the loopback name of §3.2: refused, ``ErrImagePull``; (c) Never with an
    absent image: ``ErrImageNeverPull``, no request; (d) an upper-case name: ``InvalidImageName``;
    (e) the API's default policy: Always for ``:latest``, IfNotPresent for a fixed tag."""
    sc = scenario
    reg = registry
    # (a): in the registry and on the node, as the preloaded lifecycle-app — an image ID the kubelet
    # never pulled (with KubeletEnsureSecretPulledImages on, one it pulled under another name, as
    # busybox by (b) at the same moment, would be pulled again: IM-2 retagged)
    present_a = reg.push(APP, "suite/present", "1")
    node_tag(sc, present_a, source=APP)
    present = reg.ref("suite/busybox", "1")               # (b): in the registry and on the node
    node_tag(sc, present)
    loopback = f"{LOOPBACK_REFUSED}/suite/present:1"
    node_tag(sc, loopback)                                # (b'): on the node, nothing listens at its registry
    absent = reg.ref("suite/absent", "1")
    invalid = "Busybox:UPPER"
    t_start = time.time()
    sc.apply("pod-app.yaml", name="ifnotpresent", image=present_a, policy="IfNotPresent")
    sc.apply("pod.yaml", name="always", image=present, policy="Always")
    sc.apply("pod.yaml", name="loopback-always", image=loopback, policy="Always")
    sc.apply("pod.yaml", name="never", image=absent, policy="Never")
    sc.apply("pod.yaml", name="invalid", image=invalid, policy="IfNotPresent")

    sc.wait_for("ifnotpresent and always running", lambda: running(sc, "ifnotpresent") and running(sc, "always"), WAIT_SLACK_S * 2)
    sc.wait_for("a Failed event of loopback-always", lambda: [e for e in sc.events("Failed", "loopback-always")
                                                           if e.obj["message"].startswith("Failed to pull")], WAIT_SLACK_S)
    def decided(pod: str) -> bool:  # the kubelet's own reason, past the pod's ContainerCreating
        return waiting(sc, pod).get("reason") not in (None, "ContainerCreating")

    sc.wait_for("never and invalid waiting with the kubelet's reason", lambda: decided("never") and decided("invalid"), WAIT_SLACK_S)

    reqs = reg.requests(since=t_start)
    sc.add_file("registry-requests.txt", summary(reqs, t_start))
    node_reqs = [r for r in reqs if r.agent.startswith("containerd")]
    # (a)
    pulled_a = [e.obj["message"] for e in sc.events("Pulled", "ifnotpresent")]
    gate = ensure_secret_pulled_images(sc)
    sc.expect("IM-3", "ifnotpresent_pulled_message", pulled_a[0] if pulled_a else None, image=present_a,
              details={"events": pulled_a, "KubeletEnsureSecretPulledImages (live)": gate})
    sc.expect("IM-3", "ifnotpresent_registry_requests", len([r for r in node_reqs if r.path.startswith("/v2/suite/present/")]),
              details={"pulling_events": len(sc.events("Pulling", "ifnotpresent"))})
    always_pulls = node_pulls(reqs, "suite/busybox", "1")
    # (b)
    sc.expect("IM-3", "always_state", "running" if running(sc, "always") else str(waiting(sc, "always")))
    sc.expect("IM-3", "always_manifest_requests", sum(len(a) for a in always_pulls),
              details={"requests": [r.line(t_start) for a in always_pulls for r in a]})
    pulled_b = [e.obj["message"] for e in sc.events("Pulled", "always")]
    sc.expect("IM-3", "always_pulled_message", pulled_b[0] if pulled_b else None, image=present, details={"events": pulled_b})
    # (b')
    failed = [e.obj["message"] for e in sc.events("Failed", "loopback-always") if e.obj["message"].startswith("Failed to pull")]
    sc.expect("IM-3", "loopback_always_failed_message", failed[0], image=loopback)
    reasons = waiting_reasons(sc, "loopback-always")
    sc.expect("IM-3", "loopback_always_reason", reasons[0][1] if reasons else None,
              details={"reasons": [(round(t - t_start, 3), r, m) for t, r, m in reasons]})
    # (c)
    w = waiting(sc, "never")
    sc.expect("IM-3", "never_reason", w.get("reason"))
    sc.expect("IM-3", "never_message", w.get("message"), image=absent)
    sc.expect("IM-3", "never_registry_requests", len([r for r in node_reqs if r.path.startswith("/v2/suite/absent/")]))
    # (d)
    w = waiting(sc, "invalid")
    sc.expect("IM-3", "invalid_reason", w.get("reason"))
    sc.expect("IM-3", "invalid_message", w.get("message"), image=invalid)
    inspect = [e.obj.get("reason") for e in sc.recorder.changes("Event")
               if (e.obj.get("involvedObject") or {}).get("name") == "invalid" and e.obj.get("type") == "Warning"]
    sc.expect("IM-3", "invalid_event_reason", inspect[0] if inspect else None, details={"warnings": inspect})
    # (e)
    latest = sc.apply("pod-default-policy.yaml", dry_run=True, name="default-latest", image=reg.ref("suite/busybox", "latest"))
    fixed = sc.apply("pod-default-policy.yaml", dry_run=True, name="default-fixed", image=present)
    sc.expect("IM-3", "default_policy_latest", latest[0]["spec"]["containers"][0].get("imagePullPolicy"))
    sc.expect("IM-3", "default_policy_fixed_tag", fixed[0]["spec"]["containers"][0].get("imagePullPolicy"))
    sc.add_file("waiting-reasons.json", json.dumps({p: waiting_reasons(sc, p) for p in ("loopback-always", "never", "invalid")},
                                                   indent=1))


# -- IM-1 -------------------------------------------------------------------------------------------

def pull_starts(sc: Scenario, reg: Registry, repo: str, tag: str, since: float) -> list[float]:
    """When each of the node's pulls of ``repo:tag`` reached the registry (its first request)."""
    return [a[0].at for a in node_pulls(reg.requests(since=since), repo, tag)]


def im1_absent_tag(sc: Scenario, reg: Registry, pulls: int) -> None:
    """IM-1 with ``pulls`` pulls of an absent tag (``pulls - 1`` gaps judged)."""
    repo, tag = "suite/busybox", "absent"
    image = reg.ref(repo, tag)
    # the registry's own answer, asked from the host through 127.0.0.1
    status, _, body = reg.answer("GET", f"/v2/{repo}/manifests/{tag}")
    t_start = time.time()
    sc.apply("pod.yaml", name="missing", image=image, policy="IfNotPresent")
    delays = doc.backoff_delays(pulls - 1)
    budget = sum(delays) + pulls * doc.GAP_SLACK_S + WAIT_SLACK_S
    sc.wait_for(f"{pulls} pulls of {image} at the registry", lambda: len(pull_starts(sc, reg, repo, tag, t_start)) >= pulls, budget,
                interval_s=1.0)
    time.sleep(2.0)  # the last pull's Failed event and status
    reqs = reg.requests(since=t_start)
    attempts = node_pulls(reqs, repo, tag)[:pulls]
    starts = [a[0].at for a in attempts]
    for i, t in enumerate(starts, start=1):
        sc.mark(t, f"pull {i} at the registry")
    sc.add_file("registry-requests.txt", summary(reqs, t_start))
    statuses = sorted({r.status for a in attempts for r in a})
    code = (json.loads(body).get("errors") or [{}])[0].get("code") if body.startswith("{") else body[:80]
    details = {"host_answer": {"status": status, "body": body.strip()}, "node_statuses": statuses,
               "requests_per_pull": [len(a) for a in attempts]}
    sc.expect("IM-1", "registry_manifest_status", statuses[0] if len(statuses) == 1 else str(statuses), details=details)
    sc.expect("IM-1", "registry_error_code", code, details=details)
    reasons = waiting_reasons(sc, "missing")
    sc.add_file("waiting-reasons.txt", "\n".join(f"{t - t_start:8.3f} s  {r}: {m}" for t, r, m in reasons))
    sc.expect("IM-1", "first_reason", reasons[0][1] if reasons else None,
              details={"reasons": [(round(t - t_start, 3), r) for t, r, _ in reasons]})
    backoff = next(((r, m) for _, r, m in reasons if r != "ErrImagePull"), (None, None))
    sc.expect("IM-1", "backoff_reason", backoff[0])
    sc.expect("IM-1", "backoff_message", backoff[1], image=image)
    failed = [e.obj["message"] for e in sc.events("Failed", "missing") if e.obj["message"].startswith("Failed to pull")]
    sc.expect("IM-1", "failed_message", failed[0] if failed else None, image=image)
    err = next((m for _, r, m in reasons if r == "ErrImagePull"), None)
    sc.expect("IM-1", "err_image_pull_message", err, image=image)
    pulling = [e for e in sc.events("Pulling", "missing") if e.received_at <= attempts[-1][-1].at + 2.0]
    counts = {"pulling_events": len(pulling), "registry_pulls": len(attempts), "pulling_counts": [e.obj.get("count") for e in pulling]}
    if pulls <= doc.EVENTS_COMPLETE_PULLS:
        sc.expect("IM-1", "pulls_equal_pulling_events", int(len(pulling) == len(attempts)), details=counts)
    else:  # the kubelet's event spam filter drops events of a long back-off (doc.EVENTS_COMPLETE_PULLS)
        sc.note("pulling events / registry pulls (events spam-filtered beyond the first pulls)", counts)
    expect_all(sc.expect, pull_gaps(starts, delays))


@pytest.mark.case("IM-1")
def test_absent_tag_first_backoff_gaps(scenario: Scenario, registry: Registry):
    """IM-1, the default run's part: an absent tag of an existing repository — the registry answers
    404 MANIFEST_UNKNOWN; ``ErrImagePull`` then ``ImagePullBackOff``; the first two gaps between
    pulls (10 s, 20 s back-off), measured at the registry."""
    im1_absent_tag(scenario, registry, pulls=3)


@pytest.mark.slow
@pytest.mark.case("IM-1")
def test_absent_tag_full_backoff(scenario: Scenario, registry: Registry):
    """IM-1, the full tail (``slow``, ≈ 15 min): gaps 10, 20, 40, 80, 160, 300, 300 s."""
    im1_absent_tag(scenario, registry, pulls=8)


# -- IM-2 -------------------------------------------------------------------------------------------


@pytest.mark.case("IM-2")
def test_recovery_once_the_image_exists(scenario: Scenario, registry: Registry):
    """IM-2: three pods fail on absent tags (IfNotPresent); after their third failed pull (back-off
    now 40 s) the image appears — for ``tagged`` on the node (``ctr images tag`` of the preloaded
    lifecycle-app), for ``pushed`` in the registry, for ``retagged`` on the node too, but as the
    busybox image ID the kubelet itself pulled before (pod ``seed``, under another name).
    ``tagged`` starts at the next pod-worker retry without a pull (the policy check comes before the
    back-off check); ``pushed`` is pulled only when its back-off has expired. ``retagged``: with
    ``KubeletEnsureSecretPulledImages`` (beta, on from 1.35) an image ID the kubelet pulled is
    "pulled by the kubelet", and a name without a credential record for it must be pulled again
    (pullmanager MustAttemptImagePull, policy NeverVerifyPreloadedImages): it waits for the back-off
    and asks the registry; on 1.34 (gate off) it starts like ``tagged``."""
    sc = scenario
    reg = registry
    gate = ensure_secret_pulled_images(sc)
    seed = reg.ref("suite/busybox", "1")
    sc.apply("pod.yaml", name="seed", image=seed, policy="Always")  # the kubelet pulls busybox's image ID once
    sc.wait_for("seed running", lambda: running(sc, "seed"), WAIT_SLACK_S)
    t_start = time.time()
    images = {"tagged": ("suite/tagged", "1"), "pushed": ("suite/pushed", "1"), "retagged": ("suite/retagged", "1")}
    sc.apply("pod-app.yaml", name="tagged", image=reg.ref(*images["tagged"]), policy="IfNotPresent")
    sc.apply("pod.yaml", name="pushed", image=reg.ref(*images["pushed"]), policy="IfNotPresent")
    sc.apply("pod.yaml", name="retagged", image=reg.ref(*images["retagged"]), policy="IfNotPresent")
    budget = sum(doc.backoff_delays(2)) + 3 * doc.GAP_SLACK_S + WAIT_SLACK_S
    sc.wait_for("3 failed pulls of each pod", lambda: all(len(pull_starts(sc, reg, r, t, t_start)) >= 3 for r, t in images.values()),
                budget, interval_s=0.5)
    # the third failure of the last pod: all are in their 40 s back-off
    third = max(pull_starts(sc, reg, r, t, t_start)[2] for r, t in images.values())
    time.sleep(max(0.0, third + 1.0 - time.time()))
    t_fix = time.time()
    node_tag(sc, reg.ref(*images["tagged"]), source=APP)
    node_tag(sc, reg.ref(*images["retagged"]), source=seed)  # the image ID the kubelet pulled for seed
    reg.push(BUSYBOX, *images["pushed"])
    t_fixed = time.time()
    sc.mark(t_fix, "image appears (node tags, registry push)")
    sc.wait_for("tagged and pushed running", lambda: running(sc, "tagged") and running(sc, "pushed"),
                doc.backoff_delays(3)[2] + doc.GAP_SLACK_S + WAIT_SLACK_S)
    sc.wait_for("retagged running or pulled again", lambda: running(sc, "retagged") or
                [a for a in node_pulls(reg.requests(since=t_start), *images["retagged"]) if a[0].at > t_fix],
                doc.backoff_delays(3)[2] + doc.GAP_SLACK_S + WAIT_SLACK_S)

    def running_at(pod: str) -> float | None:
        return next((ch.received_at for ch in sc.recorder.changes("Pod", pod)
                     if (container_status(ch.obj, "app").get("state") or {}).get("running")), None)

    reqs = reg.requests(since=t_start)
    sc.add_file("registry-requests.txt", summary(reqs, t_start))
    tagged_pulls = node_pulls(reqs, *images["tagged"])
    retagged_pulls = node_pulls(reqs, *images["retagged"])
    pushed_starts = [a[0].at for a in node_pulls(reqs, *images["pushed"])]
    details = {"fix_took_s": round(t_fixed - t_fix, 3), "KubeletEnsureSecretPulledImages (live)": gate,
               "running_after_fix_s": {p: None if running_at(p) is None else round(running_at(p) - t_fix, 3) for p in images},
               "pushed_pull_starts": [round(t - t_start, 3) for t in pushed_starts],
               "pulls_after_fix": {p: len([a for a in node_pulls(reqs, *images[p]) if a[0].at > t_fix]) for p in images}}
    ra = running_at("tagged")
    sc.expect("IM-2", "tagged_running_after_tag_s", None if ra is None else ra - t_fix, details=details)
    sc.expect("IM-2", "tagged_pulls_after_tag", len([a for a in tagged_pulls if a[0].at > t_fix]), details=details)
    pulled = [e.obj["message"] for e in sc.events("Pulled", "tagged")]
    sc.expect("IM-2", "tagged_pulled_message", pulled[0] if pulled else None, image=reg.ref(*images["tagged"]))
    after = [t for t in pushed_starts if t > t_fixed]
    sc.expect("IM-2", "pushed_pull_after_last_failure_s", after[0] - pushed_starts[2] if after and len(pushed_starts) > 2 else None,
              details=details)
    rp = running_at("pushed")
    sc.expect("IM-2", "pushed_running_after_pull_s", None if rp is None or not after else rp - after[0], details=details)
    sc.expect("IM-2", "retagged_pulls_after_tag", len([a for a in retagged_pulls if a[0].at > t_fix]), details=details)


# -- IM-1 variants: a registry that says no ---------------------------------------------------------


@pytest.mark.case("IM-1")
def test_repository_behind_htpasswd(scenario: Scenario, registries):
    """IM-1 against the htpasswd variant: the registry answers 401 UNAUTHORIZED with its basic-auth
    challenge; the kubelet, with no credentials, gets ``ErrImagePull`` with containerd's text of it,
    then ``ImagePullBackOff``; two pulls 10 s of back-off apart."""
    sc = scenario
    reg = registries(auth=True)
    repo, tag = "suite/busybox", "1"
    image = reg.ref(repo, tag)
    status, headers, body = reg.answer("GET", f"/v2/{repo}/manifests/{tag}")
    t_start = time.time()
    sc.apply("pod.yaml", name="auth", image=image, policy="IfNotPresent")
    budget = doc.backoff_delays(1)[0] + 2 * doc.GAP_SLACK_S + WAIT_SLACK_S
    sc.wait_for(f"2 pulls of {image} at the registry", lambda: len(pull_starts(sc, reg, repo, tag, t_start)) >= 2, budget, interval_s=1.0)
    time.sleep(2.0)
    reqs = reg.requests(since=t_start)
    sc.add_file("registry-requests.txt", summary(reqs, t_start))
    attempts = node_pulls(reqs, repo, tag)
    statuses = sorted({r.status for a in attempts for r in a})
    details = {"host_answer": {"status": status, "www_authenticate": headers.get("Www-Authenticate"), "body": body.strip()},
               "node_statuses": statuses, "requests_per_pull": [len(a) for a in attempts]}
    sc.expect("IM-1", "auth_registry_status", statuses[0] if len(statuses) == 1 else str(statuses), details=details)
    sc.expect("IM-1", "auth_registry_challenge", headers.get("Www-Authenticate"), details=details)
    sc.expect("IM-1", "auth_registry_error_code", (json.loads(body).get("errors") or [{}])[0].get("code"), details=details)
    failed = [e.obj["message"] for e in sc.events("Failed", "auth") if e.obj["message"].startswith("Failed to pull")]
    sc.expect("IM-1", "auth_failed_message", failed[0] if failed else None, image=image, details={"events": failed})
    reasons = waiting_reasons(sc, "auth")
    sc.add_file("waiting-reasons.txt", "\n".join(f"{t - t_start:8.3f} s  {r}: {m}" for t, r, m in reasons))
    sc.expect("IM-1", "first_reason", reasons[0][1] if reasons else None)
    starts = [a[0].at for a in attempts]
    sc.expect("IM-1", "pull_gap_s[1]", starts[1] - starts[0], around=starts[1], details={"backoff_s": 10})


def blob_gets(reqs: list[Request], repo: str) -> list[Request]:
    return [r for r in reqs if r.what == "blob" and r.path.startswith(f"/v2/{repo}/") and r.agent.startswith("containerd")]


@pytest.mark.case("IM-1")
@pytest.mark.node_faults("registry_throttled", case="IM-1", node="first")
@pytest.mark.node_faults("registry_stopped", case="IM-1", window_s=doc.STOP_WINDOW_S, node="first")
def test_registry_stopped_mid_pull(scenario: Scenario, registry: Registry, payload_image):
    """IM-1 with a registry that goes away during the transfer: the registry is throttled so the pull
    of the image's own 1 MiB layer lasts ~30 s, then stopped (``docker stop``) 3 s after it served
    the manifest, for 20 s, and started again (the fault's undo). Nothing fails while it is stopped:
    the registry's close sits in the throttle's queue and dies with its network namespace, and the
    node, only receiving, sends nothing — the pull hangs — until containerd's keepalive probe 30 s
    after the last byte, which the restarted registry (same address) resets: ``Failed`` "… connection
    reset by peer"; the pull after the 10 s back-off succeeds. A registry pod (``--kubeconfig``) is
    not stopped but goes dark (:func:`e2e.faults.registry.registry_stopped`): its queue is dropped,
    its connections aborted unseen, and the same address resets the probe after the start."""
    from e2e.faults.registry import registry_stopped, registry_throttled

    sc = scenario
    reg = registry
    repo, tag = "suite/payload", "1"
    image = reg.push(payload_image(doc.PAYLOAD_KIB), repo, tag)
    t_start = time.time()
    ip_before = reg.address()
    with registry_throttled(sc, reg, doc.THROTTLE_RATE):
        sc.apply("pod.yaml", name="cut", image=image, policy="IfNotPresent")
        manifest = sc.wait_for("the manifest served to the node",
                               lambda: [r for a in node_pulls(reg.requests(since=t_start), repo, tag) for r in a if r.status == 200],
                               WAIT_SLACK_S, interval_s=0.2)[0]
        time.sleep(max(0.0, manifest.at + doc.CUT_AFTER_MANIFEST_S - time.time()))
        reqs_before = reg.requests(since=t_start)

        def failed_events() -> list:
            return [e for e in sc.events("Failed", "cut") if e.obj["message"].startswith("Failed to pull")]

        with registry_stopped(sc, reg) as window:
            during = sc.first_within(doc.STOP_WINDOW_S, "a Failed event while the registry is stopped", failed_events)
    ip_after = reg.address()
    failed = sc.wait_for("the pull's Failed event", failed_events, doc.CUT_FAILED_WAIT_S)
    t_failed = failed[0].received_at
    sc.wait_for("cut running", lambda: running(sc, "cut"), doc.backoff_delays(1)[0] + doc.GAP_SLACK_S + WAIT_SLACK_S)
    reqs = reqs_before + reg.requests(since=window.undone_at or t_start)  # the log of the stopped container stays
    sc.add_file("registry-requests.txt", summary(reqs, t_start))
    details = {"stopped_after_manifest_s": round((window.injected_at or 0) - manifest.at, 3),
               "failed_during_stop": bool(during), "stop_window_s": doc.STOP_WINDOW_S,
               "failed_after_stop_s": round(t_failed - (window.injected_at or 0), 3),
               "failed_after_restart_s": round(t_failed - (window.undone_at or 0), 3),
               "registry_ip": [ip_before, ip_after],
               "blob_gets_before_stop": [r.line(t_start) for r in blob_gets(reqs_before, repo)]}
    sc.note("cut: failed after the restart (s)", details["failed_after_restart_s"])
    sc.expect("IM-1", "cut_failed_during_stop", int(bool(during)), details=details)
    sc.expect("IM-1", "cut_failed_after_stop_s", t_failed - (window.injected_at or 0), details=details)
    sc.expect("IM-1", "cut_failed_message", failed[0].obj["message"], image=image, port=reg.host.rpartition(":")[2],
              details=details)
    pulled = [e.obj["message"] for e in sc.events("Pulled", "cut")]
    sc.expect("IM-1", "cut_pulled_after_restart", pulled[0] if pulled else None, image=image, details=details)
    sc.expect("IM-1", "cut_pulls", len(sc.events("Pulling", "cut")), details=details)


# -- IM-4 -------------------------------------------------------------------------------------------


@pytest.mark.case("IM-4")
@pytest.mark.node_faults("registry_throttled", case="IM-4", node="first")
def test_serial_pulls_behind_a_slow_one(scenario: Scenario, registries, payload_image):
    """IM-4: with ``serializeImagePulls`` (default) a pull waits behind a slow one. Pod A pulls its own
    1 MiB layer from a throttled registry; 3 s later pod B pulls from a second, unthrottled one.
    B's ``Pulling`` event comes at once (pullImage emits it before handing the pull to the serial
    puller — not after A, as the catalogue had it); B's first request reaches its registry only when
    A's pull returned (A's ``Pulled``); B's ``Pulled`` "(… including waiting)" is that queue time.
    A's last blob is logged by its registry long before A's pull ends: the registry's handler returns
    once the bytes are in the socket buffer and the throttle's queue, not when the node has them."""
    from e2e.faults.registry import registry_throttled

    sc = scenario
    slow, fast = registries(), registries()
    a_image = slow.push(payload_image(doc.PAYLOAD_KIB), "suite/slow", "1")
    b_image = fast.push(payload_image(doc.PAYLOAD_KIB), "suite/fast", "1")
    t_start = time.time()
    with registry_throttled(sc, slow, doc.THROTTLE_RATE):
        sc.apply("pod.yaml", name="a-slow", image=a_image, policy="IfNotPresent")
        sc.wait_for("A's pull started at its registry", lambda: node_pulls(slow.requests(since=t_start), "suite/slow", "1"),
                    WAIT_SLACK_S, interval_s=0.2)
        time.sleep(doc.IM4_B_AFTER_S)
        t_b = time.time()
        sc.apply("pod.yaml", name="b-fast", image=b_image, policy="IfNotPresent")
        sc.wait_for("A and B running", lambda: running(sc, "a-slow") and running(sc, "b-fast"), doc.IM4_WAIT_S, interval_s=0.5)
    a_reqs = slow.requests(since=t_start)
    b_reqs = fast.requests(since=t_b)
    sc.add_file("registry-requests.txt", "slow (A):\n" + summary(a_reqs, t_start) + "\n\nfast (B):\n" + summary(b_reqs, t_start))
    a_first = min(r.at for r in a_reqs if r.agent.startswith("containerd"))
    b_first = min(r.at for r in b_reqs if r.agent.startswith("containerd"))
    a_pulled = sc.events("Pulled", "a-slow")
    b_pulled = sc.events("Pulled", "b-fast")
    b_pulling = [e.received_at for e in sc.events("Pulling", "b-fast")]
    a_end = a_pulled[0].received_at if a_pulled else None
    b_msg = b_pulled[0].obj["message"] if b_pulled else ""
    b_wait = waited_s(b_msg)
    details = {"a_first_request_s": round(a_first - t_start, 3), "a_pulled_event_s": None if a_end is None else round(a_end - t_start, 3),
               "b_applied_s": round(t_b - t_start, 3), "b_pulling_event_s": [round(t - t_start, 3) for t in b_pulling],
               "b_first_request_s": round(b_first - t_start, 3), "b_waited_s (Pulled message)": b_wait,
               "a_pulled": [e.obj["message"] for e in a_pulled], "b_pulled": b_msg}
    if a_end:
        sc.mark(a_end, "A's Pulled (its PullImage returned)")
    sc.mark(b_first, "B's first request at its registry")
    sc.note("a_pull_s (throttled, no documented value)", round((a_end or a_first) - a_first, 3))
    expect_all(sc.expect, serial_pulls(details))  # from the times to the ms, as details keeps them
    sc.expect("IM-4", "b_pulled_message", b_pulled[0].obj["message"] if b_pulled else None, image=b_image, details=details)
