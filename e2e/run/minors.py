"""Tests that make sense on some Kubernetes minors only (``@pytest.mark.k8s_minors(34)``), decided
before any cluster is made.

A profile that turns feature gates on is valid only on the minors whose components know those gates
(a gate name unknown to a version, or set against a gate locked to its default, makes the component
refuse to start: component-base ``featuregate`` ``unsafeSetFromMap``, "unrecognized feature gate",
"cannot set feature gate … locked to …"). A test on such a profile says so with
``@pytest.mark.k8s_minors(34, reason="…")``:

- with ``--node-image`` the minor is read from the image's tag (``kindest/node:v1.34.4``, the
  offline build's ``pod-lifecycle-e2e/kind-node:v1.34.4-<hash>``): on another minor the test is
  skipped at collection (:func:`off_minor`), so its profile's cluster is neither in the plan's
  clusters made ahead (e2e.run.plan) nor made on first use;
- when the tag names no version, or with ``--kubeconfig``, the minor is known once the cluster is:
  the test is skipped at its setup, as ``min_k8s`` does (e2e.plugin.fixtures).

The reason reads ``environment: …`` (the suite's environment skip: the cluster cannot run it).

A case of one's own, outside the catalogue, claims with the same marker as its module's
``pytestmark`` the minors whose source was read for it: ``make test`` holds its documented values
to those minors only, and its tests run on them only (README "Write your own case").
"""

from __future__ import annotations

import re

import pytest

from ..judge.expectations import version_minor

MARKER = "k8s_minors"
# the version in a kind node image's tag: v1.<minor>.<patch>, maybe followed by -<anything>
_TAG_VERSION = re.compile(r"(v1\.\d+\.\d+)(?:[-+].*)?")


def image_version(node_image: str | None) -> tuple[str, int] | None:
    """The Kubernetes version and minor a kind node image's tag names
    (``kindest/node:v1.34.4@sha256:…`` → ``("v1.34.4", 34)``, ``pod-lifecycle-e2e/kind-node:v1.35.4-3f2a…``
    → ``("v1.35.4", 35)``); None when the tag names none."""
    if not node_image:
        return None
    name = node_image.partition("@")[0]
    if name.rfind(":") <= name.rfind("/"):
        return None
    m = _TAG_VERSION.fullmatch(name.rsplit(":", 1)[1])
    return (m.group(1), version_minor(m.group(1))) if m else None


def minors_of(item: pytest.Item) -> tuple[tuple[int, ...], str] | None:
    """The minors ``item``'s ``k8s_minors`` marker allows and its reason; None without the marker.
    ``pytest.UsageError`` for a marker without minors or with one that is not a number."""
    marker = item.get_closest_marker(MARKER)
    if marker is None:
        return None
    args = marker.args
    if not args or not all(isinstance(m, int) and not isinstance(m, bool) for m in args):
        raise pytest.UsageError(f"{item.nodeid}: @pytest.mark.{MARKER} takes the minors it runs on (34, 35), got {args!r}")
    return tuple(args), str(marker.kwargs.get("reason", ""))


def off_minor(item: pytest.Item, minor: int, version: str) -> str | None:
    """Why ``item`` does not run on Kubernetes ``1.<minor>`` (``version`` as the reason names it),
    or None when it does (or has no ``k8s_minors`` marker)."""
    allowed = minors_of(item)
    if allowed is None or minor in allowed[0]:
        return None
    minors, why = allowed
    return (f"environment: runs on Kubernetes {', '.join(f'1.{m}' for m in minors)} only"
            f"{f' ({why})' if why else ''}; this cluster is {version}")
