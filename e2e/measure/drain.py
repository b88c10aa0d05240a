"""DR-2: kubectl drain against a PodDisruptionBudget, from the command's lines (stream and read
time): how often kubectl retried each refused eviction ("will retry after 5s")."""

from __future__ import annotations

import re
from collections.abc import Iterable

from e2e.evidence.kubectl import Line
from e2e.measure.values import Value

# kubectl drain's line for an eviction the PDB refused (k8s.io/kubectl/pkg/drain/drain.go evictPods)
RETRY = re.compile(r'^error when evicting pods/"(?P<pod>[^"]+)" -n "(?P<ns>[^"]+)" \(will retry after 5s\): ')
# Transcript.to_text's lines: "+s.mmm stream text", after the "$ command" and "# started <epoch>" lines
_TEXT_LINE = re.compile(r"^\s*([+-]\d+\.\d{3}) (stdout|stderr) (.*)$")
_STARTED = re.compile(r"^# started ([\d.]+)", re.M)


def lines_from_text(text: str) -> list[Line]:
    """The lines of a transcript as :meth:`e2e.evidence.kubectl.Transcript.to_text` wrote it (its
    default ``t0``: the start), with their read times (epoch s, to the ms). ValueError when the text
    has no ``# started`` line."""
    started = _STARTED.search(text)
    if started is None:
        raise ValueError(f"not a transcript (no '# started <epoch>' line): {text[:200]!r}")
    t0 = float(started.group(1))
    found = (_TEXT_LINE.match(ln) for ln in text.splitlines()[2:])
    return [Line(t0 + float(m.group(1)), m.group(2), m.group(3)) for m in found if m]


def retry_intervals(lines: Iterable[Line]) -> dict[str, list[float]]:
    """Per pod: the seconds between its consecutive "will retry after 5s" stderr lines (to the ms)."""
    times: dict[str, list[float]] = {}
    for ln in lines:
        m = RETRY.match(ln.text) if ln.stream == "stderr" else None
        if m:
            times.setdefault(m.group("pod"), []).append(ln.at)
    return {pod: [round(b - a, 3) for a, b in zip(ts, ts[1:], strict=False)] for pod, ts in times.items()}


def retry_interval_values(variant: str, intervals: dict[str, list[float]]) -> list[Value]:
    """``DR-2 retry_interval_s[<variant>/<i>/<k>]``: the k-th interval of the i-th pod (pods in name
    order, from 1), s; details: the pod. Source: CASES.md DR-2 (kubectl's 5 s retry)."""
    return [Value("DR-2", f"retry_interval_s[{variant}/{i}/{k}]", gap, details={"pod": pod})
            for i, pod in enumerate(sorted(intervals), 1) for k, gap in enumerate(intervals[pod], 1)]
