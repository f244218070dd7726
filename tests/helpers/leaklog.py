#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# leaklog.py OUT SECONDS BASE_GIB RATE_GIB_PER_MIN - writes OUT.csv and
# OUT.procs.csv, a `vramz log --procs` recording at 1 Hz of one 140 GiB
# H200 (the fake NVML's row layout, taken from a real `vramz log` run
# through $VRAMZ_BIN) on which pid 4300101 holds BASE_GIB and grows
# RATE_GIB_PER_MIN: the leak of issue 40's slope tests (top, the report).
import csv, datetime, os, subprocess, sys, tempfile

out, secs, base, rate = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
GiB = 1 << 30
d = tempfile.mkdtemp()
scn = os.path.join(d, "one.scn")
open(scn, "w").write(
    "driver 580.159.04\n"
    'gpu 0 name="NVIDIA H200" uuid=GPU-8f3a61c2-5be4-4d0e-9a71-2c6f0e4b7d19 mem_total=143771MiB '
    "mem_reserved=616MiB mem_used=auto util=50 temp=41 power=318000 power_limit=700000\n"
    "proc gpu=0 pid=4300101 used=2GiB type=compute sm=50\n")
env = dict(os.environ, FAKE_NVML_SCENARIO=scn)
subprocess.run([os.environ["VRAMZ_BIN"], "log", "-o", d + "/tpl.csv", "--procs", "-i", "50ms",
                "--duration", "100ms"], env=env, check=True, stderr=subprocess.DEVNULL)

def rows(p):
    r = list(csv.DictReader(open(p, newline="")))
    return r, list(r[0].keys())

g, gcols = rows(d + "/tpl.csv")
p, pcols = rows(d + "/tpl.procs.csv")
gt, pt = g[0], p[0]
start = datetime.datetime(2026, 11, 30, 1, 0, 0)
with open(out + ".csv", "w", newline="") as gf, open(out + ".procs.csv", "w", newline="") as pf:
    gw = csv.DictWriter(gf, gcols, lineterminator="\n"); gw.writeheader()
    pw = csv.DictWriter(pf, pcols, lineterminator="\n"); pw.writeheader()
    for s in range(secs):
        t = (start + datetime.timedelta(seconds=s)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
        used = int((base + rate * s / 60) * GiB)
        r = dict(pt); r["time"] = t; r["used_bytes"] = str(used); pw.writerow(r)
        r = dict(gt); r["time"] = t; r["mem_used_bytes"] = str(used)
        r["mem_free_bytes"] = str(int(r["mem_total_bytes"]) - int(r["mem_reserved_bytes"]) - used)
        gw.writerow(r)
