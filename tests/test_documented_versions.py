"""Every measurement the registry knows is documented on every minor of the upgrade path (the
versions the offline build supports, hack/offline/versions.env ``K8S_VERSIONS``) and, where its
entries are keyed by cgroup version, on both cgroup versions: a value, or a documented absence
(e.g. DR-3 ``terminating_replicas`` "absent" on 1.34) — never a hole that makes a run on that
version "undocumented" (issue 15). And every entry that applies to a version of the upgrade path
was read in that version's source (``Expectation.verified_in``, issue 25 item 4): adding a
release to versions.env fails here, naming each entry to read in it. The registry holds
e2e/documented's families and what the case folders register themselves (``scenarios/``,
``examples/``, a user's own: ``make test CASES=…``, tests/case_dirs.py). A case of one's own
outside the catalogue is held to the minors its module claims instead
(``pytestmark = pytest.mark.k8s_minors(37, reason=…)``, :func:`case_dirs.claimed_minors`)."""

from __future__ import annotations

import re
from pathlib import Path

import e2e.documented  # noqa: F401  (registers every family's expectations)
from case_dirs import case_dirs, claimed_minors, import_cases
from e2e.judge.expectations import REGISTRY, NotDocumented, Registry, version_minor

VERSIONS_ENV = Path(__file__).resolve().parents[1] / "hack" / "offline" / "versions.env"
import_cases(case_dirs())  # and those of the case folders' own modules (tests/case_dirs.py)


def upgrade_path(text: str) -> list[str]:
    """The releases of ``K8S_VERSIONS="v1.37.2 v1.36.3 …"`` in a versions.env text, as
    ``verified_in`` spells them (``"1.37.2"``), oldest first."""
    m = re.search(r'^K8S_VERSIONS="([^"]+)"', text, re.M)
    assert m, "versions.env has no K8S_VERSIONS line"
    return sorted((v.removeprefix("v") for v in m.group(1).split()), key=lambda v: tuple(map(int, v.split("."))))


def upgrade_path_minors(text: str) -> list[int]:
    """The minors of ``K8S_VERSIONS="v1.37.2 v1.36.3 …"`` in a versions.env text, ascending."""
    return sorted({version_minor(v) for v in upgrade_path(text)})


def unverified(versions: list[str], registry: Registry = REGISTRY) -> list[str]:
    """``"case name (1.35–newer): 1.38.0"`` for every registered entry that applies to some of
    ``versions`` (by its minor, any cgroup) without having been read in it (``verified_in``);
    for an entry whose module claims minors (:func:`case_dirs.claimed_minors`), those of
    ``versions`` of a claimed minor, and ``"1.38 (a release of it)"`` for a claimed minor none of
    ``versions`` is of."""
    out = []
    for e in registry.entries:
        claim = claimed_minors(e, registry)
        missing = [v for v in versions if e.applies_to(version_minor(v)) and v not in e.verified_in
                   and (claim is None or version_minor(v) in claim)]
        missing += [f"1.{m} (a release of it)" for m in claim or () if e.applies_to(m) and not e.verified_for(m)
                    and m not in {version_minor(v) for v in versions}]
        if missing:
            out.append(f"{e.case} {e.name} ({e.versions()}): {', '.join(missing)}")
    return out


def holes(minors: list[int], registry: Registry = REGISTRY) -> list[str]:
    """``"case name: 1.35, 1.36 cgroup v2"`` for every (case, name) with nothing documented on
    some of ``minors`` (and cgroup version, where the name's entries are keyed by it); where
    every entry of the name was registered by a module that claims minors
    (:func:`case_dirs.claimed_minors`), on the minors they claim instead."""
    out = []
    for case, name in sorted({(e.case, e.name) for e in registry.entries}):
        entries = [e for e in registry.entries if (e.case, e.name) == (case, name)]
        keyed = any(e.cgroup is not None for e in entries)
        claims = [claimed_minors(e, registry) for e in entries]
        missing = []
        for minor in sorted(set().union(*claims)) if all(c is not None for c in claims) else minors:
            for cgroup in (1, 2) if keyed else (None,):
                try:
                    registry.lookup(case, name, minor, cgroup)
                except NotDocumented:
                    missing.append(f"1.{minor}" + (f" cgroup v{cgroup}" if cgroup else ""))
        if missing:
            out.append(f"{case} {name}: {', '.join(missing)}")
    return out


def test_the_upgrade_path_is_read_from_the_offline_build():
    text = 'X=1\nK8S_VERSIONS="v1.37.2 v1.36.3 v1.35.4 v1.34.10"\n'
    assert upgrade_path(text) == ["1.34.10", "1.35.4", "1.36.3", "1.37.2"]
    assert upgrade_path_minors(text) == [34, 35, 36, 37]
    assert {34, 35, 36, 37} <= set(upgrade_path_minors(VERSIONS_ENV.read_text()))


def test_every_measurement_is_documented_on_every_minor_of_the_upgrade_path():
    found = holes(upgrade_path_minors(VERSIONS_ENV.read_text()))
    assert not found, ("nothing documented (document the value, or its absence, read from that version's source; "
                       "a case outside scenarios/ may claim only the minors read instead: "
                       "pytestmark = pytest.mark.k8s_minors(37, reason=...) in the module that registers it):\n  "
                       + "\n  ".join(found))


def test_a_minor_outside_the_documented_ranges_is_a_hole():
    # DR-1's 1.34 text is keyed (34, 34) and the 1.35 one (35, None): 1.33 is read by neither
    found = holes([33])
    assert "DR-1 second_cause_message[max-unavailable]: 1.33" in found
    assert not any(h.startswith("CL-2 phase_while_waiting:") for h in found)  # documented for all versions


def test_every_entry_was_read_in_each_release_of_the_upgrade_path_it_applies_to():
    found = unverified(upgrade_path(VERSIONS_ENV.read_text()))
    assert not found, (f"{len(found)} entries apply to a release of hack/offline/versions.env whose source was not read "
                       "for them (read it, then add the release to the entry's or its family's verified_in):\n  "
                       + "\n  ".join(found))


def test_a_new_release_on_the_upgrade_path_names_every_entry_not_read_in_it():
    path = upgrade_path('K8S_VERSIONS="v1.38.0 v1.37.2 v1.36.3 v1.35.4 v1.34.4"')
    found = [line for line in unverified(path) if line.endswith("1.38.0")]
    # every open-ended entry, and only those (of a case that claims minors: only if it claims 1.38)
    open_ended = [e for e in REGISTRY.entries if e.minors[1] is None and 38 in (claimed_minors(e, REGISTRY) or [38])]
    assert len(found) == len(open_ended) > 400
    assert "CL-1 restart_gap[1] (1.35–newer): 1.38.0" in found
    assert not any(line.startswith("DR-1 second_cause_message[max-unavailable] (1.34)") for line in found)  # keyed to 1.34
