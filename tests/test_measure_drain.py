"""e2e.measure.drain: kubectl drain's retries read from its lines, and from its stored transcript."""

from __future__ import annotations

import pytest

from e2e.evidence.kubectl import Line, Transcript
from e2e.measure.drain import lines_from_text, retry_interval_values, retry_intervals

T0 = 1796549000.0


def retry(pod: str) -> str:
    return f'error when evicting pods/"{pod}" -n "ns" (will retry after 5s): Cannot evict pod as it would violate the pod\'s disruption budget.'


LINES = [Line(T0 + 0.1, "stdout", "evicting pod ns/web-b"), Line(T0 + 0.2, "stderr", retry("web-b")),
         Line(T0 + 5.25, "stderr", retry("web-b")), Line(T0 + 5.3, "stderr", retry("web-a")),
         Line(T0 + 10.3, "stdout", retry("web-b")),  # stdout: not kubectl's retry line
         Line(T0 + 10.4, "stderr", retry("web-b")), Line(T0 + 10.5, "stderr", retry("web-a"))]


def test_intervals_per_pod_in_name_order():
    intervals = retry_intervals(LINES)
    assert intervals == {"web-b": [5.05, 5.15], "web-a": [5.2]}
    assert [(v.name, v.value, v.details) for v in retry_interval_values("max-unavailable-1", intervals)] == [
        ("retry_interval_s[max-unavailable-1/1/1]", 5.2, {"pod": "web-a"}),
        ("retry_interval_s[max-unavailable-1/2/1]", 5.05, {"pod": "web-b"}),
        ("retry_interval_s[max-unavailable-1/2/2]", 5.15, {"pod": "web-b"})]


def test_the_stored_transcript_gives_the_same_lines_to_the_ms():
    t = Transcript(["kubectl", "drain", "n1"], T0, T0 + 11, 1, LINES)
    back = lines_from_text(t.to_text())
    assert [(ln.stream, ln.text) for ln in back] == [(ln.stream, ln.text) for ln in LINES]
    assert [ln.at for ln in back] == pytest.approx([ln.at for ln in LINES], abs=0.0005)
    assert retry_intervals(back) == retry_intervals(LINES)


def test_text_that_is_no_transcript_is_a_clear_error():
    with pytest.raises(ValueError, match="not a transcript"):
        lines_from_text("+0.100 stdout evicting pod ns/web-b\n")
