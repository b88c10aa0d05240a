"""CJ-1 — CronJob API defaults and validation (CASES-workloads.md §1.7 W28, W29; §4 CJ-1).

Server dry runs of the seed's cronjob.yaml: without concurrencyPolicy, suspend and history limits
the server defaults them to ``Allow``, false, 3 and 1; ``timeZone: MSK`` is refused ("unknown time
zone MSK"), ``Europe/Moscow`` accepted; a ``TZ=`` prefix in a new object's schedule is refused;
``startingDeadlineSeconds: 5`` is accepted (the docs warn that < 10 s may never schedule).
"""

from __future__ import annotations

import pytest

from e2e.cluster.kube import ApiRefused
from e2e.run.scenario import Scenario

# a workload family (CASES-workloads.md): `make e2e-workloads`, not in the default `make e2e`
pytestmark = pytest.mark.workloads

BASE = dict(name="cj", schedule="0 3 * * *", time_zone="null", concurrency="null", deadline="null", suspend="null",
            successful_limit="null", failed_limit="null", job_sleep_s=1, exit_code=0)


def dry_run(sc: Scenario, **values: object) -> tuple[dict | None, ApiRefused | None]:
    """The CronJob as the server would store it, or its refusal."""
    try:
        (obj,) = sc.apply("cronjob.yaml", dry_run=True, **{**BASE, **values})
    except ApiRefused as e:
        return None, e
    return obj, None


@pytest.mark.case("CJ-1")
def test_cronjob_defaults_and_validation(scenario: Scenario):
    """CJ-1: defaults Allow/false/3/1; MSK and a TZ= schedule refused (422, field, message);
    Europe/Moscow and startingDeadlineSeconds 5 accepted. Server dry runs only."""
    sc = scenario
    obj, err = dry_run(sc)
    sc.require(obj is not None, f"the seed's CronJob is accepted: {err}")
    spec = obj["spec"]
    sc.expect("CJ-1", "defaults", " ".join(str(spec.get(k)) for k in ("concurrencyPolicy", "suspend", "successfulJobsHistoryLimit",
                                                                        "failedJobsHistoryLimit")),
              details={"spec": {k: v for k, v in spec.items() if k != "jobTemplate"}})
    for key, values in (("MSK", {"time_zone": "MSK"}), ("TZ=", {"schedule": "TZ=UTC 0 3 * * *"})):
        obj, err = dry_run(sc, **values)
        body = err.body if err else {}
        causes = (body.get("details") or {}).get("causes") or [{}]
        sc.expect("CJ-1", f"rejected_status[{key}]", err.status if err else 201, details={"body": body or obj})
        sc.expect("CJ-1", f"rejected_field[{key}]", causes[0].get("field"), details={"causes": causes})
        sc.expect("CJ-1", f"rejected_message[{key}]", causes[0].get("message"), details={"causes": causes})
    for key, values in (("Europe/Moscow", {"time_zone": "Europe/Moscow"}), ("deadline=5", {"deadline": 5})):
        obj, err = dry_run(sc, **values)
        sc.expect("CJ-1", f"accepted[{key}]", err is None, details={"error": err.body if err else None})
