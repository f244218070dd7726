# SPDX-License-Identifier: Apache-2.0
"""proc_cpu.py LABEL PID - CPU time of a running process as a share of one
core since it started, and its RSS, from /proc (for a process not started
by cpu_of.py, such as vramz top inside tmux)."""
import os, sys

label, pid = sys.argv[1], sys.argv[2]
f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
hz = os.sysconf("SC_CLK_TCK")
cpu = (int(f[11]) + int(f[12])) / hz
start = int(f[19]) / hz
up = float(open("/proc/uptime").read().split()[0])
rss = [l for l in open(f"/proc/{pid}/status") if l.startswith("VmRSS")][0].split()[1]
print(f"{label}: cpu_s={cpu:.3f} wall_s={up - start:.1f} core_pct={100 * cpu / (up - start):.3f} rss_kib={rss}")
