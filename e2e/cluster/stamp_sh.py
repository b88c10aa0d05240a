"""The shell functions every busybox container and exec probe of the suite gets, through the
manifest placeholder ``${stamp_sh}`` (filled for every manifest by
:meth:`e2e.run.scenario.Scenario.manifests`, like the workload images of :mod:`e2e.cluster.images`).
``stamp EVENT [key=value ...]`` writes one line of the suite's stamp shape; its parser and what
the families do with stamps are :mod:`e2e.evidence.stamps`, which names this constant too."""

# The shell functions of every busybox container and exec probe (one line, so that it can fill
# a ``${stamp_sh}`` placeholder inside a YAML block scalar). ``stamp EVENT [key=value ...]``
# writes "<now> EVENT key=value..." to stdout and appends it to /dev/termination-log.
# ``time.tv_usec`` is in nanoseconds while the kernel clock's status has STA_NANO (0x2000, 8192:
# set by whatever last called adjtimex with ADJ_NANO, an NTP daemon for one; a container shares the
# host's clock): then it is divided by 1000 — a shard run here wrote "1796192395.109179895", no
# stamp at all to the parser, and every family that reads stamps failed.
STAMP_SH = (
    "now() { adjtimex | awk '/status:/{n=int($2/8192)%2} /tv_sec/{s=$2} /tv_usec/{u=$2} "
    "END{if (n) u=int(u/1000); printf \"%d.%06d\", s, u}'; }; "
    "stamp() { l=\"$(now) $*\"; echo \"$l\"; echo \"$l\" >> /dev/termination-log; }"
)
