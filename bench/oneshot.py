# SPDX-License-Identifier: Apache-2.0
"""oneshot.py - wall time and peak RSS of one-shot commands, each run N times
as a fresh process (exec included), median and p90, plus the ratio to the
first command given (the reference).  usage:
  oneshot.py N 'label=cmd args' 'label=cmd args' ..."""
import os, shlex, statistics, sys, time

n = int(sys.argv[1])
res = []
for spec in sys.argv[2:]:
    label, cmd = spec.split("=", 1)
    argv = shlex.split(cmd)
    walls, rss = [], 0
    for _ in range(n):
        t0 = time.perf_counter()
        pid = os.posix_spawnp(argv[0], argv, os.environ,
                              file_actions=[(os.POSIX_SPAWN_OPEN, 1, "/dev/null", os.O_WRONLY, 0)])
        _, status, ru = os.wait4(pid, 0)
        walls.append((time.perf_counter() - t0) * 1e3)
        rss = max(rss, ru.ru_maxrss)
        if os.waitstatus_to_exitcode(status) != 0:
            print(f"{label}: exit {os.waitstatus_to_exitcode(status)}", file=sys.stderr)
    walls.sort()
    res.append((label, statistics.median(walls), walls[int(0.9 * (n - 1))], rss))
ref = res[0][1]
print(f"{'command':<28} {'median_ms':>10} {'p90_ms':>8} {'ratio':>6} {'max_rss_kib':>11}")
for label, med, p90, rss in res:
    print(f"{label:<28} {med:>10.1f} {p90:>8.1f} {med / ref:>6.2f} {rss:>11}")
