"""cpu_of.py - runs a command for SECONDS (then SIGTERM), and prints its CPU
time as a share of one core, wall time and peak RSS, from wait4's rusage.
usage: cpu_of.py LABEL SECONDS CMD ARGS..."""
import os, signal, sys, time

label, secs, argv = sys.argv[1], float(sys.argv[2]), sys.argv[3:]
t0 = time.time()
# spawn, not fork: a forked python's pages would count in the child's peak RSS
pid = os.posix_spawnp(argv[0], argv, os.environ)
sent = False
while True:
    done, status, ru = os.wait4(pid, os.WNOHANG)
    if done:
        break
    if not sent and time.time() - t0 >= secs:
        os.kill(pid, signal.SIGTERM)
        sent = True
    time.sleep(0.1)
wall = time.time() - t0
cpu = ru.ru_utime + ru.ru_stime
print(f"{label}: cpu_s={cpu:.3f} wall_s={wall:.1f} core_pct={100 * cpu / wall:.3f} "
      f"max_rss_kib={ru.ru_maxrss} exit={os.waitstatus_to_exitcode(status)}", flush=True)
