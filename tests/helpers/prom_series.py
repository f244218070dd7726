#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""prom_series.py METRICS [INSTANCE]: a /metrics body captured from
`vramz serve --once` as the input_series of a `promtool test rules` file,
one scrape target (instance INSTANCE, default gpu-node-7:9963, job vramz)
whose every series stays flat for 16 intervals.  Used by the tests of
packaging/prometheus-recording.yml (t4006, t1130)."""
import re
import sys

instance = sys.argv[2] if len(sys.argv) > 2 else "gpu-node-7:9963"
for line in open(sys.argv[1]):
    m = re.match(r"^(vramz_[a-z_]+)(\{(.*)\})? (\S+)$", line.strip())
    if not m:
        continue
    labels = (m.group(3) + "," if m.group(3) else "") + \
        'instance="%s",job="vramz"' % instance
    print("      - series: %r" % ("%s{%s}" % (m.group(1), labels)))
    print("        values: %r" % ("%s+0x10" % m.group(4)))
