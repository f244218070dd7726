# SPDX-License-Identifier: Apache-2.0
# prom-lib.sh - what the tests that run a real Prometheus share (sourced
# after serve-lib.sh): the skip when it is not installed, a free loopback
# port, and promql QUERY, the instant query's result as sorted "labels
# value" lines without the labels named in $PROMQL_DROP ("instance job"
# unless the test sets it), read from the server on $PPORT.
if ! command -v prometheus >/dev/null; then
	echo "prometheus not installed (apt-get install prometheus): skipped"
	exit 0
fi

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

promql() {
	python3 - "$PPORT" "$1" "${PROMQL_DROP-instance job}" <<'PY'
import json, sys, urllib.parse, urllib.request
port, q, drop = sys.argv[1], sys.argv[2], sys.argv[3].split()
url = "http://127.0.0.1:%s/api/v1/query?%s" % (port, urllib.parse.urlencode({"query": q}))
with urllib.request.urlopen(url, timeout=10) as r:
    d = json.load(r)
assert d["status"] == "success", d
for s in sorted(d["data"]["result"], key=lambda s: sorted(s["metric"].items())):
    m = s["metric"]
    print(",".join("%s=%s" % (k, m[k]) for k in sorted(m) if k not in drop), s["value"][1])
PY
}

# prom_check TSDB CHECK: a Prometheus of prom.yml on $PPORT (its data in
# $T/TSDB, its log prom.log) while CHECK runs, then stopped; CHECK's status
prom_check() {
	local ppid rc=0
	prometheus --config.file=prom.yml --storage.tsdb.path="$T/$1" \
		--web.listen-address=127.0.0.1:$PPORT >prom.log 2>&1 &
	ppid=$!
	"$2" || rc=1
	kill $ppid 2>/dev/null
	wait $ppid 2>/dev/null
	return $rc
}
