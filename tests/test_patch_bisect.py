"""hack/patch_bisect.py (issue 44 item 4): the patches it asks the module proxy for (of one minor
and across minors), the binary search's order, its refusals (nothing built), the e2e it runs (every
test of the cases, slow ones too), and which compare rows make a patch differ — with a fake ``make``
(its e2e writes a KB-6 value per version) and a fake ``go``; no cluster."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys

import pytest

from helpers import ROOT, hack_module

SCRIPT = ROOT / "hack" / "patch_bisect.py"
pb = hack_module("patch_bisect")

# the proxy of the fake go, as hack/offline/k8s-version.sh asks it: serves FAKE_SERVED (1.36.3 is
# pinned in versions.env: never asked)
FAKE_GO = """#!/usr/bin/env bash
case "$1 $2 $3" in
  "env GOPROXY "*) echo "https://proxy.example,direct" ;;
  "list -m -f") echo "$GOPROXY" > "$FAKE_LOG.goproxy"
                v=${5#k8s.io/kubernetes@}; case " $FAKE_SERVED " in *" $v "*) echo "$v" ;; *) echo "not found" >&2; exit 1 ;; esac ;;
  *) exit 9 ;;
esac
"""
# make: logs its arguments; e2e writes KB-6's value, the known bug present from FAKE_FLIP on
FAKE_MAKE = """#!/usr/bin/env python3
import json, os, shlex, sys
args = dict(a.split("=", 1) for a in sys.argv[2:] if "=" in a)
with open(os.environ["FAKE_LOG"], "a") as f:
    f.write(shlex.join(sys.argv[1:]) + "\\n")
if sys.argv[1] == "e2e" and sys.argv[2].split("=")[1] not in os.environ.get("FAKE_BROKEN", "").split():
    v = tuple(map(int, args["K8S_VERSION"].split(".")))
    flip = tuple(map(int, os.environ["FAKE_FLIP"].split(".")))
    present = v >= flip
    rep = args["REPORTS"]
    os.makedirs(rep, exist_ok=True)
    m = {"run_id": f"r-{os.getpid()}", "test": "t::test_kb6", "case": "KB-6", "name": "ready_after_delete_s",
         "value": 30.0 if present else 1.9, "unit": "s", "documented": 2, "band": [0, 4],
         "verdict": "bug-present" if present else "absent-as-expected", "kubernetes": "v" + args["K8S_VERSION"]}
    jit = dict(m, name="probe_period_s", value=1.0 + v[2] / 100, verdict="pass")  # jitter inside the band
    with open(rep + "/measurements.json", "w") as f:
        json.dump({"measurements": [m, jit]}, f)
"""


@pytest.fixture
def fakes(tmp_path):
    for name, text in (("go", FAKE_GO), ("make", FAKE_MAKE)):
        (tmp_path / name).write_text(text)
        (tmp_path / name).chmod(0o755)
    log = tmp_path / "log"
    env = {**os.environ, "FAKE_LOG": str(log), "FAKE_SERVED": "v1.36.0 v1.36.1 v1.36.2 v1.36.4 v1.36.5 v1.36.6",
           "FAKE_FLIP": "1.36.5", "PATH": f"{tmp_path}:{os.environ['PATH']}"}  # k8s-version.sh runs the fake go

    def run(*args: str, **extra: str) -> tuple[subprocess.CompletedProcess, list[str]]:
        r = subprocess.run([sys.executable, str(SCRIPT), "--make", str(tmp_path / "make"),
                            "--reports", str(tmp_path / "r"), "--state", str(tmp_path / "st"), *args],
                           capture_output=True, text=True, cwd=ROOT, env={**env, **extra})
        return r, (log.read_text().splitlines() if log.exists() else [])
    return run, tmp_path


def versions_run(log: list[str]) -> list[str]:
    return [a.split("=")[1] for line in log if line.startswith("e2e ") for a in line.split() if a.startswith("K8S_VERSION=")]


def test_binary_search_runs_good_bad_then_the_middle_and_names_the_first_differing_patch(fakes):
    run, tmp = fakes
    r, log = run("--case", "KB-6", "--good", "1.36.0", "--bad", "v1.36.6")
    assert r.returncode == 0, r.stdout + r.stderr
    # patches 1.36.0 … 1.36.6, each one k8s-version.sh accepts; 1.36.5 flips
    assert versions_run(log) == ["1.36.0", "1.36.6", "1.36.3", "1.36.4", "1.36.5"]
    got = json.loads((tmp / "r" / "bisect.json").read_text())
    assert got["patches"] == ["1.36.0", "1.36.1", "1.36.2", "1.36.3", "1.36.4", "1.36.5", "1.36.6"]
    assert (got["first_differing"], got["previous"]) == ("1.36.5", "1.36.4")
    assert [r["name"] for r in got["runs"]["1.36.5"]["rows"]] == ["ready_after_delete_s"]  # not the jitter
    assert "first patch whose values differ from 1.36.0's: 1.36.5" in r.stdout
    assert "known bug: absent on this patch → present" in r.stdout and f"{tmp}/r/1.36.4" in r.stdout  # the pair's compare
    # each version: prepare, e2e with the case and markers, clean, all with the state dir
    assert log[:3] == [f"prepare K8S_VERSION=1.36.0 OFFLINE=1 REPORTS={tmp}/r/1.36.0",
                       f"e2e K8S_VERSION=1.36.0 OFFLINE=1 REPORTS={tmp}/r/1.36.0 E2E_MARKERS= "
                       f"'PYTEST_ARGS=--case KB-6' E2E_STATE_DIR={tmp}/st", f"clean REPORTS={tmp}/r/1.36.0 E2E_STATE_DIR={tmp}/st"]
    assert (tmp / "log.goproxy").read_text().strip() == "https://proxy.example"  # never direct


def test_two_patches_and_no_difference(fakes):
    run, tmp = fakes
    r, log = run("--case", "KB-6", "--good", "1.36.2", "--bad", "1.36.3", FAKE_FLIP="1.36.3")
    assert r.returncode == 0 and versions_run(log) == ["1.36.2", "1.36.3"], r.stdout + r.stderr
    assert json.loads((tmp / "r" / "bisect.json").read_text())["first_differing"] == "1.36.3"
    r, log = run("--case", "KB-6", "--good", "1.36.3", "--bad", "1.36.4", FAKE_FLIP="1.36.9")
    assert r.returncode == 1 and "1.36.4 does not differ from 1.36.3" in r.stdout, r.stdout + r.stderr


def test_across_minors_the_patches_run_to_the_end_of_goods_minor_then_from_the_next_ones_0(fakes):
    run, tmp = fakes
    # 1.35.4 is pinned (never asked of the proxy), 1.35.5 served, 1.35.6 not: the end of 1.35
    served = "v1.35.2 v1.35.3 v1.35.5 v1.36.0 v1.36.1 v1.36.2"
    r, log = run("--case", "KB-6", "--good", "1.35.3", "--bad", "1.36.2", FAKE_SERVED=served, FAKE_FLIP="1.36.1")
    assert r.returncode == 0, r.stdout + r.stderr
    got = json.loads((tmp / "r" / "bisect.json").read_text())
    assert got["patches"] == ["1.35.3", "1.35.4", "1.35.5", "1.36.0", "1.36.1", "1.36.2"]
    assert list(got["refused"]) == ["1.35.6"] and "v1.35.6 cannot be had from the Go module proxy" in got["refused"]["1.35.6"]
    assert "k8s-version.sh refused 1.35.6: k8s.io/kubernetes v1.35.6 cannot be had" in r.stdout
    assert versions_run(log) == ["1.35.3", "1.36.2", "1.35.5", "1.36.0", "1.36.1"]
    assert (got["first_differing"], got["previous"]) == ("1.36.1", "1.36.0")
    assert f"make compare A={tmp}/r/1.36.0 B={tmp}/r/1.36.1" in r.stdout


def fake_k8s_version(served: set[str], pinned: dict[str, str]):
    """k8s-version.sh's answers: a minor of ``pinned`` prints its pinned release; a patch of one is
    accepted when pinned or in ``served``; anything else refused."""
    asked: list[str] = []

    def answer(v: str) -> tuple[str | None, str]:
        asked.append(v)
        minor = ".".join(v.split(".")[:2])
        if minor not in pinned:
            return None, f"Kubernetes version '{v}' is not one the offline build supports"
        if v == minor:
            return pinned[minor], ""
        return ("v" + v, "") if v in served or "v" + v == pinned[minor] else (None, f"v{v} not served")
    return answer, asked


def test_a_minor_between_runs_from_0_to_its_last_patch_past_a_hole_up_to_its_pinned_one():
    answer, asked = fake_k8s_version({"1.34.5", "1.35.0", "1.35.2", "1.35.3", "1.35.5", "1.36.0", "1.36.1"},
                                     {"1.34": "v1.34.4", "1.35": "v1.35.4", "1.36": "v1.36.3"})
    patches, refused = pb.patches_between("1.34.4", "1.36.1", answer)
    # 1.35.1: a hole below the pinned 1.35.4, left out; 1.35.6: past it, the end of 1.35
    assert patches == ["1.34.4", "1.34.5", "1.35.0", "1.35.2", "1.35.3", "1.35.4", "1.35.5", "1.36.0", "1.36.1"]
    assert refused == {"1.34.6": "v1.34.6 not served", "1.35.1": "v1.35.1 not served", "1.35.6": "v1.35.6 not served"}
    assert asked[:4] == ["1.34.4", "1.36.1", "1.34", "1.35"]  # GOOD, BAD and the minors' pinned ones before any other


@pytest.mark.parametrize("pinned, served, says", [
    ({"1.34": "v1.34.4", "1.36": "v1.36.3"}, set(), "1.35, between GOOD 1.34.4 and BAD 1.36.1: Kubernetes version '1.35' is not"),
    ({"1.34": "v1.34.4", "1.35": "v1.35.4", "1.36": "v1.36.3"}, {f"1.35.{n}" for n in range(40)},
     "k8s-version.sh accepts every patch of 1.35 up to 1.35.30"),
])
def test_an_unsupported_minor_between_or_one_without_an_end_is_refused(pinned, served, says):
    answer, _ = fake_k8s_version(served | {"1.36.1"}, pinned)
    with pytest.raises(pb.BadInput, match=says.replace(".", r"\.")):
        pb.patches_between("1.34.4", "1.36.1", answer)


def test_the_e2e_it_runs_collects_every_test_of_the_case_a_slow_one_too(tmp_path):
    """KB-8's test is ``slow``, which ``make e2e``'s default E2E_MARKERS leaves out: the e2e line
    the bisect gives make (``make -n``: its pytest command, not run) collects it."""
    calls: list[tuple[str, ...]] = []

    class Recorded(pb.Bisect):
        def sh(self, *argv: str) -> int:  # the argv only: nothing run
            calls.append(argv)
            return 0

    with pytest.raises(pb.RunFailed, match="left no new measurements"):
        Recorded(argparse.Namespace(case="KB-8", reports=str(tmp_path), state=None, lock=None, make="make")).run("1.36.2")
    (e2e,) = [argv[1:] for argv in calls if argv[1] == "e2e"]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("E2E_", "PYTEST_"))}
    recipe = subprocess.run(["make", "-n", "-s", *e2e], cwd=ROOT, check=True, capture_output=True, text=True, env=env).stdout
    (line,) = [line for line in recipe.splitlines() if "pytest scenarios" in line]
    argv = shlex.split(line)
    assert argv[argv.index("-m") + 1] == "" and argv[-2:] == ["--case", "KB-8"], line
    n = argv.index("-n")
    collect = subprocess.run([sys.executable, "-m", "pytest", *argv[1:n], *argv[n + 2:], "--collect-only", "-q",
                              "-p", "no:xdist", "-p", "no:cacheprovider"], cwd=ROOT, env=env, capture_output=True,
                             text=True, timeout=120)
    assert collect.returncode == 0, collect.stdout[-3000:] + collect.stderr[-3000:]
    ids = [line for line in collect.stdout.splitlines() if "::" in line]
    assert ids == ["scenarios/known_bugs/test_known_bugs.py::test_kubelet_keeps_nothing_per_pod_sync"]


@pytest.mark.parametrize("good, bad, says", [
    ("1.36.3", "1.36.1", "must be an earlier patch"),
    ("1.37.0", "1.36.3", "must be an earlier patch"),
    ("2.36.1", "2.36.3", "'2.36.1' is not a released patch: give 1.MINOR.PATCH"),
    ("1.36.3", "1.36.3", "must be an earlier patch"),
    ("1.36.1", "1.36.9", "BAD 1.36.9: k8s.io/kubernetes v1.36.9 cannot be had from the Go module proxy"),
    ("1.33.1", "1.33.2", "GOOD 1.33.1: Kubernetes version '1.33.1' is not one the offline build supports"),
    ("1.36", "1.36.3", "'1.36' is not a released patch"),
])
def test_bad_input_is_refused_with_exit_2_and_nothing_built(fakes, good, bad, says):
    run, _ = fakes
    r, log = run("--case", "KB-6", "--good", good, "--bad", bad)
    assert (r.returncode, log) == (2, []), r.stdout + r.stderr
    assert says in r.stderr


def test_a_run_that_measured_nothing_stops_the_bisect_with_exit_3(fakes):
    run, _ = fakes
    r, log = run("--case", "KB-6", "--good", "1.36.2", "--bad", "1.36.3", FAKE_BROKEN="1.36.3")
    assert r.returncode == 3 and "1.36.3: make e2e left no new measurements" in r.stderr, r.stdout + r.stderr


def row(change: str, va: str = "pass", vb: str = "pass", name: str = "x_s") -> dict:
    return {"change": change, "verdict_a": va, "verdict_b": vb, "name": name}


@pytest.mark.parametrize("r, counted", [
    (row("unexplained", vb="fail"), True),
    (row("unexplained", "passed", "failed", name="outcome"), True),
    (row("outcome changed", "passed", "skipped", name="outcome"), True),
    (row("known bug: absent on this patch → present", "absent-as-expected", "bug-present"), True),
    (row("same", "fail", "pass"), True),  # GOOD failed, B holds: compare calls it same
    (row("same"), False),  # jitter inside the band
    (row("documented change"), False),
    (row("known bug: present", "bug-present", "bug-present"), False),
    (row("race: happened → did not happen", "bug-present", "bug-fixed"), False),
    (row("inconclusive", vb="inconclusive"), False),
    (row("holds now", "inconclusive", "pass"), False),
    (row("flake", vb="flake"), False),
    (row("not run"), False),
    (row("unverified (carried forward)", vb="unverified-carried-forward"), False),
])
def test_which_compare_rows_make_a_patch_differ(r, counted):
    assert pb.counts(r) is counted


def test_search_order_asks_bad_first_then_halves():
    flip = 6
    asked: list[str] = []
    patches = [f"1.36.{n}" for n in range(10)]
    first, order = pb.search_order(patches, lambda v: asked.append(v) or int(v.split(".")[2]) >= flip)
    assert first == "1.36.6" and order == asked == ["1.36.9", "1.36.4", "1.36.6", "1.36.5"]
