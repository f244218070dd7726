# SPDX-License-Identifier: Apache-2.0
"""compare_core.py - compares vramz status/ps/info/topo JSON with nvidia-smi's
queries taken at the same moment.  Prints a table of field, vramz, nvidia-smi,
agree; exits 1 on any disagreement.  usage: compare_core.py VRAMZ_BIN"""
import json, subprocess, sys

vz = sys.argv[1]
def run(*a):
    return subprocess.run(a, capture_output=True, text=True, check=True).stdout

q = "index,uuid,name,pci.bus_id,memory.total,memory.reserved,memory.used,memory.free,power.limit,pcie.link.gen.max,pcie.link.width.max,persistence_mode,ecc.mode.current,mig.mode.current"
smi = [l.split(", ") for l in run("nvidia-smi", f"--query-gpu={q}", "--format=csv,noheader,nounits").strip().splitlines()]
apps = [l.split(", ") for l in run("nvidia-smi", "--query-compute-apps=pid,gpu_uuid,used_memory", "--format=csv,noheader,nounits").strip().splitlines() if l.strip()]
st = json.loads(run(vz, "status", "--json"))
ps = json.loads(run(vz, "ps", "--json"))
info = json.loads(run(vz, "info", "--json"))
topo = json.loads(run(vz, "topo", "--json"))
MiB = 1024 * 1024
rows, bad, raw = [], 0, []
def mib(b):
    return (b + MiB - 1) // MiB
def check(name, a, b, tol=0):
    global bad
    ok = (a == b) if tol == 0 else (a is not None and b is not None and abs(a - b) <= tol)
    bad += not ok
    rows.append((name, a, b, "yes" if ok else "NO"))

for s in smi:
    i = int(s[0]); g = st["gpus"][i]; inf = info["gpus"][i]
    check(f"gpu{i}.uuid", g["uuid"], s[1])
    check(f"gpu{i}.name", g["name"], s[2])
    check(f"gpu{i}.pci_bus_id", g["pci_bus_id"].upper(), s[3].upper())
    # nvidia-smi rounds bytes up to whole MiB (reserved 644939776 B, i.e.
    # 615.06 MiB, prints as 616); memory moves between the two reads by a
    # few pages at most, so used/free get 1 MiB of slack
    check(f"gpu{i}.total_mib", mib(g["mem_total_bytes"]), int(s[4]))
    check(f"gpu{i}.reserved_mib", mib(g["mem_reserved_bytes"]), int(s[5]))
    check(f"gpu{i}.used_mib", mib(g["mem_used_bytes"]), int(s[6]), tol=1)
    check(f"gpu{i}.free_mib", mib(g["mem_free_bytes"]), int(s[7]), tol=1)
    raw.append(f"gpu{i} bytes: total {g['mem_total_bytes']} reserved {g['mem_reserved_bytes']} used {g['mem_used_bytes']} free {g['mem_free_bytes']}")
    check(f"gpu{i}.power_limit_w", round(g["power_limit_mw"] / 1000), round(float(s[8])))
    check(f"gpu{i}.pcie_max_gen", inf["pcie_max_gen"], int(s[9]))
    check(f"gpu{i}.pcie_max_width", inf["pcie_max_width"], int(s[10]))
    check(f"gpu{i}.persistence", inf["persistence_mode"], s[11] == "Enabled")
    check(f"gpu{i}.ecc", inf["ecc_enabled"], s[12] == "Enabled")
    check(f"gpu{i}.mig", inf["mig_enabled"], s[13] == "Enabled")
for a in apps:
    pid, uuid, smi_mib = int(a[0]), a[1], int(a[2])
    m = [p for p in ps["processes"] if p["pid"] == pid and p["gpu_uuid"] == uuid]
    check(f"proc{pid}@{uuid[:12]}.used_mib", mib(m[0]["used_bytes"]) if m else None, smi_mib)
check("process_rows", len([p for p in ps["processes"]]), len(apps))
links = {(l["a"], l["b"]): l["link"] for l in topo["links"]}
tm = run("nvidia-smi", "topo", "-m")
for (a, b), l in links.items():
    line = [x for x in tm.splitlines() if x.startswith(f"GPU{a}")][0].split()
    check(f"topo{a}-{b}", l, line[1 + b])
w = max(len(r[0]) for r in rows)
for r in rows:
    print(f"{r[0]:<{w}}  {str(r[1]):>40}  {str(r[2]):>40}  {r[3]}")
print("\n".join(raw))
print(f"{len(rows) - bad} agree, {bad} disagree")
sys.exit(1 if bad else 0)
