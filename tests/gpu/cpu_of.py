# SPDX-License-Identifier: Apache-2.0
"""cpu_of.py - runs a command for SECONDS (then SIGTERM), and prints its CPU
time as a share of one core, wall time and peak RSS, from wait4's rusage
(core_pct: the whole run, start-up included), and the steady share alone
(steady_pct: utime+stime from /proc/PID/stat between WARMUP seconds, 5 by
default, and the end; clock ticks, so runs of a minute or more).
usage: cpu_of.py LABEL SECONDS CMD ARGS...   (env WARMUP=seconds)"""
import os, signal, sys, time

label, secs, argv = sys.argv[1], float(sys.argv[2]), sys.argv[3:]
warmup = float(os.environ.get("WARMUP", "5"))
hz = os.sysconf("SC_CLK_TCK")


def ticks(pid):
    try:
        f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
        return int(f[11]) + int(f[12])
    except OSError:
        return None


t0 = time.time()
# spawn, not fork: a forked python's pages would count in the child's peak RSS
pid = os.posix_spawnp(argv[0], argv, os.environ)
sent = False
w0 = w1 = None
while True:
    done, status, ru = os.wait4(pid, os.WNOHANG)
    if done:
        break
    now = time.time()
    if w0 is None and now - t0 >= warmup:
        w0 = (now, ticks(pid))
    if not sent and now - t0 >= secs:
        w1 = (now, ticks(pid))
        os.kill(pid, signal.SIGTERM)
        sent = True
    time.sleep(0.1)
wall = time.time() - t0
cpu = ru.ru_utime + ru.ru_stime
steady = ""
if w0 and w1 and w0[1] is not None and w1[1] is not None and w1[0] > w0[0]:
    steady = f" steady_pct={100 * (w1[1] - w0[1]) / hz / (w1[0] - w0[0]):.3f} steady_s={w1[0] - w0[0]:.0f}"
print(f"{label}: cpu_s={cpu:.3f} wall_s={wall:.1f} core_pct={100 * cpu / wall:.3f}{steady} "
      f"max_rss_kib={ru.ru_maxrss} exit={os.waitstatus_to_exitcode(status)}", flush=True)
