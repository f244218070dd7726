#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# t4030-serve-gzip.sh - a scraper that sends Accept-Encoding: gzip (as
# Prometheus does) gets the /metrics body gzipped, with Content-Encoding
# and Vary right, and it decompresses to the very text an identity scrape
# gets; a scraper that does not ask (or refuses gzip with q=0) gets text.
. "$TESTS_SRC/e2e/lib.sh"
. "$TESTS_SRC/e2e/serve-lib.sh"

# one sample an hour: every scrape of this test sees the same body
start() {
	scenario_fleet f.scn 8 100 && export FAKE_NVML_SCENARIO=$T/f.scn &&
	serve_start serve.log --interval 1h --slow-interval 0 --procs "$@" &&
	wait_for scrape /metrics -f -o /dev/null
}

expect_success 'Accept-Encoding: gzip gets a gzip body that decompresses to the identity text' '
	start &&
	scrape /metrics -D plain.h -o plain.txt &&
	scrape /metrics -H "Accept-Encoding: gzip" -D gz.h -o body.gz &&
	serve_stop &&
	has "^HTTP/1.1 200" gz.h && has "^Content-Encoding: gzip" gz.h &&
	has "^Vary: Accept-Encoding" gz.h && has "^Content-Type: text/plain; version=0.0.4" gz.h &&
	hasnt "^Content-Encoding" plain.h && has "^Vary: Accept-Encoding" plain.h &&
	gzip -t body.gz && gzip -dc body.gz >unzipped.txt &&
	cmp unzipped.txt plain.txt &&
	promtool check metrics <unzipped.txt &&
	has "^vramz_process_memory_used_bytes" unzipped.txt &&
	n=$(wc -c <plain.txt) && z=$(wc -c <body.gz) && echo "$n bytes, $z gzipped" &&
	test "$n" -gt 20000 && test $((z * 5)) -lt "$n"
'

expect_success 'curl --compressed (gzip among others) and a later sample: gzip still matches' '
	scenario_fleet f.scn 2 3 && export FAKE_NVML_SCENARIO=$T/f.scn &&
	serve_start serve.log --interval 200ms &&
	wait_for scrape /metrics -f -o /dev/null && sleep 0.5 &&
	scrape /metrics -H "Accept-Encoding: deflate, gzip;q=0.5, br" -D h1 -o b1.gz &&
	sleep 0.5 &&
	scrape /metrics --compressed -D h2 -o b2.txt &&
	serve_stop &&
	has "^Content-Encoding: gzip" h1 && has "^Content-Encoding: gzip" h2 &&
	gzip -dc b1.gz >b1.txt && promtool check metrics <b1.txt && promtool check metrics <b2.txt &&
	s1=$(sed -n "s/^vramz_samples_total //p" b1.txt) && s2=$(sed -n "s/^vramz_samples_total //p" b2.txt) &&
	echo "samples $s1 then $s2" && test "$s2" -gt "$s1"
'

expect_success 'no gzip for a client that refuses it (q=0) or only takes others; none for /health' '
	start &&
	scrape /metrics -H "Accept-Encoding: gzip;q=0, identity" -D h1 -o b1 &&
	scrape /metrics -H "Accept-Encoding: br" -D h2 -o b2 &&
	scrape /metrics -H "Accept-Encoding: *" -D h3 -o b3 &&
	scrape /health -H "Accept-Encoding: gzip" -D h4 -o b4 &&
	serve_stop &&
	hasnt "^Content-Encoding" h1 && hasnt "^Content-Encoding" h2 &&
	has "^Content-Encoding: gzip" h3 && hasnt "^Content-Encoding" h4 &&
	has "^vramz_up 1" b1 && cmp b1 b2 && has "^ok$" b4
'

expect_success 'HEAD with gzip: the headers of the gzip answer, no body' '
	start &&
	scrape /metrics -I -H "Accept-Encoding: gzip" >h &&
	serve_stop &&
	has "^HTTP/1.1 200" h && has "^Content-Encoding: gzip" h
'

serve_cleanup
finish
