"""The shell functions every busybox container and exec probe of the suite gets, through the
manifest placeholder ``${stamp_sh}`` (filled for every manifest by
:meth:`e2e.run.scenario.Scenario.manifests`, like the workload images of :mod:`e2e.cluster.images`).
``stamp EVENT [key=value ...]`` writes one line of the suite's stamp shape; its parser and what
the families do with stamps are :mod:`e2e.evidence.stamps`, which names this constant too."""

# The shell functions of every busybox container and exec probe (one line, so that it can fill
# a ``${stamp_sh}`` placeholder inside a YAML block scalar). ``stamp EVENT [key=value ...]``
# writes "<now> EVENT key=value..." to stdout and appends it to /dev/termination-log.
STAMP_SH = (
    "now() { adjtimex | awk '/tv_sec/{s=$2} /tv_usec/{u=$2} END{printf \"%d.%06d\", s, u}'; }; "
    "stamp() { l=\"$(now) $*\"; echo \"$l\"; echo \"$l\" >> /dev/termination-log; }"
)
