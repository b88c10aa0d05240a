"""hack/last-night.sh: the nightly's carry-over comes from the newest earlier night that kept the
artifact, not only from the last run (a night that failed before its merge kept nothing of its
minor, and the values history then restarted from zero). Run with a ``gh`` on PATH that answers
as the GitHub CLI does: ``run list`` prints the run ids, ``run download`` fails for a run
without the artifact."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

GH = """#!/usr/bin/env bash
# gh as the script calls it: run list … --jq …; run download RUN --name NAME --dir DIR
echo "gh $*" >> "$GH_LOG"
if [ "$1 $2" = "run list" ]; then printf '%s\\n' $RUNS; exit 0; fi
run=$3 name=$5 dir=$7
if [ -f "$KEPT/$run/$name" ]; then mkdir -p "$dir"; cp "$KEPT/$run/$name" "$dir/values-history.jsonl"; exit 0; fi
echo "no valid artifacts found to download" >&2; exit 1
"""


def last_night(tmp_path: Path, runs: str, kept: dict[str, str]) -> subprocess.CompletedProcess:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "gh").write_text(GH)
    (bin_dir / "gh").chmod(0o755)
    for run, name in kept.items():
        (tmp_path / "kept" / run).mkdir(parents=True, exist_ok=True)
        (tmp_path / "kept" / run / name).write_text(f'{{"run_id": "night of run {run}"}}\n')
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "RUNS": runs, "KEPT": str(tmp_path / "kept"),
           "GH_LOG": str(tmp_path / "gh.log"), "GITHUB_REF_NAME": "main", "GITHUB_RUN_ID": "99"}
    return subprocess.run([str(ROOT / "hack" / "last-night.sh"), "reports-1.37", str(tmp_path / "previous")],
                          env=env, capture_output=True, text=True, timeout=30)


def test_a_night_that_kept_nothing_is_passed_over_for_the_one_before(tmp_path):
    done = last_night(tmp_path, "98 97 96", {"97": "reports-1.37", "96": "reports-1.37"})
    assert done.returncode == 0 and done.stdout == "reports-1.37: from nightly run 97\n"
    assert (tmp_path / "previous" / "values-history.jsonl").read_text() == '{"run_id": "night of run 97"}\n'
    log = (tmp_path / "gh.log").read_text().splitlines()
    assert log[0].startswith("gh run list --workflow nightly.yml --branch main --status completed --limit 10")
    assert "select(. != 99)" in log[0]  # not this night's own run
    assert [line.split()[3] for line in log[1:]] == ["98", "97"]  # newest first, stops at the first that kept it


def test_no_night_that_kept_it_is_exit_1(tmp_path):
    done = last_night(tmp_path, "98 97", {})
    assert done.returncode == 1 and "reports-1.37: kept by none of the last 10 nights" in done.stderr
    assert not (tmp_path / "previous").exists()
