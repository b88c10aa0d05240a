"""The first released patch after GOOD whose values differ from GOOD's, for the cases asked for
(issue 44 item 4): ``make bisect CASE=KB-6 GOOD=1.36.2 BAD=1.36.3``, or across minors
``make bisect CASE=KB-8 GOOD=1.35.4 BAD=1.36.2``.

    .venv/bin/python hack/patch_bisect.py --case IDS --good 1.M.P --bad 1.N.Q [--reports DIR] [--state DIR]
                                    [--lock FILE] [--make CMD]

The patches are those from GOOD to BAD inclusive, in version order, that the offline build can
make: each patch number is asked of ``hack/offline/k8s-version.sh 1.M.N`` (the one home of that
rule: a minor of hack/offline/versions.env, pinned or served by the Go module proxy, asked without
``direct``), so a number it refuses is left out (listed with its reason). GOOD and BAD of one
minor: the numbers between them. Of two minors: GOOD's minor up to its last patch, each minor
between from ``.0`` to its last, BAD's minor from ``.0`` to BAD; a minor's last patch is found by
asking the numbers after its pinned one (``k8s-version.sh 1.M`` prints it: the newest the proxy
served when versions.env was written) until the first it refuses (at most :data:`PATCH_CAP`).

Each version it needs is run so (its reports in ``DIR/<version>``, e.g. ``reports-bisect/1.36.3``)::

    make prepare K8S_VERSION=<v> OFFLINE=1 REPORTS=DIR/<v>     (builds only what is not cached)
    make e2e K8S_VERSION=<v> OFFLINE=1 E2E_MARKERS= PYTEST_ARGS='--case IDS' REPORTS=DIR/<v> E2E_STATE_DIR=STATE
    make clean REPORTS=DIR/<v> E2E_STATE_DIR=STATE

(``E2E_MARKERS`` empty: pytest's ``-m ""`` deselects nothing, so exactly the tests of the cases
asked for run, whatever their markers: ``slow`` KB-8 too), the last two holding ``--lock`` (an
exclusive flock(2), as flock(1) takes it) when given. GOOD runs first, then BAD, then the middle of
what is left (binary search), assuming one flip between GOOD and BAD (KB-8, absent on 1.35, present
on 1.36.0–1.36.2, fixed in 1.36.3, flips twice from 1.35.4 to 1.36.3: BAD does not differ).

A version *differs* from GOOD when ``python -m e2e.cli.compare DIR/GOOD DIR/<v>`` has a row that
counts (:func:`counts`): an ``unexplained`` row (a failed or errored test, a value failing its
expectation, a value gone or new while its test ran), an ``outcome changed`` row, a changed
known-bug state (``known bug: A → B``), or a value whose verdict changed while compare calls it
``same`` or ``documented change`` (a fail in GOOD that holds in B). Never counted: ``same`` (any
change inside the band: timing jitter), ``not run``, ``inconclusive``, ``holds now``, ``flake``,
``race: …`` (a race is never a fix), ``set aside``, ``undocumented``, ``unverified (carried
forward)``, ``documented change`` with the same verdict, an unchanged known-bug state.

Prints the first differing patch and ``make compare``'s text of the pair (the patch before it → it),
writes ``DIR/bisect.json`` (with the refused numbers). Exit 0: found; 1: BAD does not differ from
GOOD; 2: bad input, with its reason, nothing built (not 1.MINOR.PATCH, GOOD not before BAD, GOOD or
BAD or a minor between them refused by k8s-version.sh, no last patch of a minor found); 3: a
version's run left no new measurements (its cluster or build failed: see its make output).
"""

from __future__ import annotations

import argparse
import fcntl
import json
import re
import shlex
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
K8S_VERSION_SH = ROOT / "hack" / "offline" / "k8s-version.sh"
PATCH = re.compile(r"^v?(1)\.(\d+)\.(\d+)$")
# the highest patch number asked of a minor while looking for its last: well above the patches a
# supported minor gets; a minor whose every number up to it is accepted is refused (its answers are
# not releases)
PATCH_CAP = 30
# compare's classes (e2e.cli.compare, e2e.base.verdicts) that make a version differ, and the value
# classes under which a changed verdict counts
COUNTED = ("unexplained", "outcome changed")
VERDICT_CHANGE_COUNTS_IN = ("same", "documented change")


class BadInput(ValueError):
    """Refused before anything is built (exit 2)."""


class RunFailed(RuntimeError):
    """A version's run left no new measurements (exit 3)."""


def parse_patch(text: str) -> tuple[int, int, int]:
    """``(1, 36, 2)`` of ``1.36.2`` or ``v1.36.2``; :class:`BadInput` otherwise."""
    m = PATCH.match(text.strip())
    if not m:
        raise BadInput(f"'{text}' is not a released patch: give 1.MINOR.PATCH (e.g. 1.36.2)")
    return int(m[1]), int(m[2]), int(m[3])


def name(v: tuple[int, int, int]) -> str:
    return ".".join(map(str, v))


def ask(v: str) -> tuple[str | None, str]:
    """What ``hack/offline/k8s-version.sh v`` answers: the release it prints (``v1.36.3``; of a
    minor ``1.36``: its pinned patch) and ``""``, or ``None`` and its reason when refused."""
    r = subprocess.run([str(K8S_VERSION_SH), v], capture_output=True, text=True)
    if r.returncode == 0:
        return r.stdout.strip(), ""
    return None, r.stderr.strip().removeprefix("pod-lifecycle-e2e: error: ")


def patches_between(good: str, bad: str, k8s_version: Callable[[str], tuple[str | None, str]] = ask
                    ) -> tuple[list[str], dict[str, str]]:
    """The patches from ``good`` to ``bad`` inclusive, in version order, that ``k8s_version(v) ->
    (release | None, reason)`` (:func:`ask`) accepts, and the numbers it refused with their reasons:
    ``(["1.35.4", "1.35.5", "1.36.0", …, "1.36.3"], {"1.35.6": "k8s.io/kubernetes v1.35.6 cannot be
    had from the Go module proxy …"})``. Asked: each number after ``good`` up to the last patch of
    its minor, then each later minor's from ``.0``, up to ``bad``; a refused number is left out. A
    minor's last patch: the numbers after its pinned one (``k8s_version("1.M")``: versions.env's
    newest the proxy served when pinned) are asked until the first refused. :class:`BadInput`
    (nothing built): not 1.MINOR.PATCH, ``good`` not before ``bad`` (nothing asked), ``good`` or
    ``bad`` refused or a minor between them not supported (with its reason, before any other patch
    is asked), every number of a minor up to :data:`PATCH_CAP` accepted."""
    g, b = parse_patch(good), parse_patch(bad)
    if g >= b:
        raise BadInput(f"GOOD {name(g)} must be an earlier patch than BAD {name(b)}")
    for v, role in ((g, "GOOD"), (b, "BAD")):
        release, reason = k8s_version(name(v))
        if release is None:
            raise BadInput(f"{role} {name(v)}: {reason}")
    pinned: dict[int, int] = {}
    for minor in range(g[1], b[1]):  # the minors whose last patch is needed
        release, reason = k8s_version(f"1.{minor}")
        if release is None:
            raise BadInput(f"1.{minor}, between GOOD {name(g)} and BAD {name(b)}: {reason}")
        pinned[minor] = parse_patch(release)[2]
    patches = [name(g)]
    refused: dict[str, str] = {}
    for minor in range(g[1], b[1] + 1):
        first = g[2] + 1 if minor == g[1] else 0
        for n in range(first, b[2] if minor == b[1] else PATCH_CAP + 1):
            patch = f"1.{minor}.{n}"
            release, reason = k8s_version(patch)
            if release:
                patches.append(patch)
                continue
            refused[patch] = reason
            if minor < b[1] and n > pinned[minor]:
                break  # past the minor's last patch
        else:
            if minor < b[1]:
                raise BadInput(f"k8s-version.sh accepts every patch of 1.{minor} up to 1.{minor}.{PATCH_CAP}, "
                               f"more than a minor has: no last patch of 1.{minor} found")
    return [*patches, name(b)], refused


def counts(row: dict) -> bool:
    """Whether a row of compare's JSON makes B differ from A (module doc)."""
    change = row["change"]
    if change in COUNTED:
        return True
    if change.startswith("known bug: ") and " → " in change:
        return True
    return (row["name"] != "outcome" and change in VERDICT_CHANGE_COUNTS_IN
            and row["verdict_a"] != row["verdict_b"])


def search_order(patches: list[str], differs) -> tuple[str | None, list[str]]:
    """Binary search over ``patches`` (GOOD first, BAD last) with ``differs(v) -> bool`` (GOOD's is
    never asked): the first differing patch (None when BAD does not differ) and the versions asked,
    in order. Assumes one flip: once a patch differs, every later one does."""
    asked = [patches[-1]]
    if not differs(patches[-1]):
        return None, asked
    lo, hi = 0, len(patches) - 1  # lo: same as GOOD; hi: differs
    while hi - lo > 1:
        mid = (lo + hi) // 2
        asked.append(patches[mid])
        if differs(patches[mid]):
            hi = mid
        else:
            lo = mid
    return patches[hi], asked


@contextmanager
def held(lock: str | None) -> Iterator[None]:
    """An exclusive flock(2) on ``lock`` (flock(1)'s) while inside; nothing when None."""
    if not lock:
        yield
        return
    with open(lock, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def run_ids(reports: Path) -> list[str]:
    try:
        return [m["run_id"] for m in json.loads((reports / "measurements.json").read_text())["measurements"]]
    except (OSError, ValueError, KeyError, TypeError):
        return []


class Bisect:
    def __init__(self, args: argparse.Namespace):
        self.args = args
        self.reports = Path(args.reports)
        self.make = shlex.split(args.make)

    def dir(self, v: str) -> Path:
        return self.reports / v

    def sh(self, *argv: str) -> int:
        print("+ " + shlex.join(argv), flush=True)
        return subprocess.run(argv).returncode

    def run(self, v: str) -> None:
        """prepare, e2e, clean for ``v``; :class:`RunFailed` when it measured nothing new."""
        d, state = self.dir(v), self.args.state
        before = set(run_ids(d))
        common = [f"K8S_VERSION={v}", "OFFLINE=1", f"REPORTS={d}"]
        if self.sh(*self.make, "prepare", *common) != 0:
            raise RunFailed(f"{v}: make prepare failed (its output above): nothing run")
        with held(self.args.lock):
            st = [f"E2E_STATE_DIR={state}"] if state else []
            # E2E_MARKERS empty: pytest's -m "" deselects nothing, so --case alone chooses (slow ones too)
            self.sh(*self.make, "e2e", *common, "E2E_MARKERS=", f"PYTEST_ARGS=--case {self.args.case}",
                    *st)  # a failed test is a result: compared below
            self.sh(*self.make, "clean", f"REPORTS={d}", *st)  # its profile.env: the kind that made the cluster
        if not set(run_ids(d)) - before:
            raise RunFailed(f"{v}: make e2e left no new measurements in {d} (its output above)")

    def compare(self, a: str, b: str, out: Path) -> tuple[str, list[dict]]:
        """compare's text and JSON rows of ``a`` → ``b``."""
        r = subprocess.run([sys.executable, "-m", "e2e.cli.compare", str(self.dir(a)), str(self.dir(b)),
                            "--json", str(out)], capture_output=True, text=True, cwd=ROOT)
        if r.returncode == 2:
            raise RunFailed(f"compare {a} → {b}: {r.stderr.strip()}")
        return r.stdout, json.loads(out.read_text())["rows"]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="hack/patch_bisect.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--case", required=True, help="case IDs, as pytest's --case takes them (KB-6 or KB-6,KB-4)")
    p.add_argument("--good", required=True, help="a patch without the change (1.36.2)")
    p.add_argument("--bad", required=True, help="a later patch with it, of the same or a later minor (1.36.3)")
    p.add_argument("--reports", default="reports-bisect", help="each version's reports in REPORTS/<version>")
    p.add_argument("--state", default=None, help="E2E_STATE_DIR of the runs (default: the suite's)")
    p.add_argument("--lock", default=None, help="a flock(1) file held over each e2e and clean")
    p.add_argument("--make", default="make", help="the make command")
    args = p.parse_args(argv)
    try:
        patches, refused = patches_between(args.good, args.bad)
    except BadInput as e:
        print(f"bisect: {e}", file=sys.stderr)
        return 2
    good = patches[0]
    print(f"bisect {args.case}: {len(patches)} patches {patches[0]} … {patches[-1]} ({', '.join(patches)})"
          + "".join(f"\n  k8s-version.sh refused {v}: {reason.splitlines()[0]}" for v, reason in refused.items()), flush=True)
    b = Bisect(args)
    b.reports.mkdir(parents=True, exist_ok=True)
    runs: dict[str, dict] = {}

    def differs(v: str) -> bool:
        b.run(v)
        _, rows = b.compare(good, v, b.dir(v) / f"compare-{good}.json")
        counted = [r for r in rows if counts(r)]
        runs[v] = {"reports": str(b.dir(v)), "differs": bool(counted), "rows": counted}
        print(f"bisect: {v} {'differs from' if counted else 'same as'} {good}"
              + "".join(f"\n  {r['case']} {r['name']}: {r['change']}" for r in counted), flush=True)
        return bool(counted)

    try:
        b.run(good)
        first, asked = search_order(patches, differs)
    except RunFailed as e:
        print(f"bisect: {e}", file=sys.stderr)
        return 3
    result: dict = {"case": args.case, "good": good, "bad": patches[-1], "patches": patches,
                    "refused": refused,
                    "asked": [good, *asked], "runs": runs, "first_differing": first}
    if first is None:
        print(f"\nbisect: {patches[-1]} does not differ from {good} for {args.case}: nothing to name")
    else:
        before = patches[patches.index(first) - 1]
        text, _ = b.compare(before, first, b.reports / "compare.json")
        result |= {"previous": before, "compare": str(b.reports / "compare.json")}
        print(f"\nbisect: the first patch whose values differ from {good}'s: {first}\n\n"
              f"make compare A={b.dir(before)} B={b.dir(first)}:\n{text}")
    (b.reports / "bisect.json").write_text(json.dumps(result, indent=1))
    print(f"bisect: {b.reports / 'bisect.json'}")
    return 0 if first is not None else 1


if __name__ == "__main__":
    sys.exit(main())
