"""Pictures (PNG, matplotlib): container states over time (:mod:`.states`, every test's
``timeline.png``) and HTTP traffic during a termination (:mod:`.traffic`, PS-4)."""
