#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# t0910-deb.sh - the Debian package, as an operator meets it: built from
# the tree with CPack (prefix /usr), its runtime dependencies right and
# nothing for tests, `dpkg -i` on this machine, then vramz --version,
# vramz demo, man vramz and a bash completion from the installed files,
# the units installed disabled and verified by systemd, the vramz user, and
# `dpkg -r` / `dpkg -P` leaving no file behind.
#
# Needs root (dpkg -i): skipped, saying so, otherwise.  CI runs as root.
. "$TESTS_SRC/e2e/lib.sh"
if [ "$(id -u)" -ne 0 ]; then
	echo "skip - installing a package needs root; run the suite as root (CI does)"
	exit 0
fi
# one package test at a time on a machine (dpkg's lock would fail the other)
exec 9>/tmp/vramz-deb-test.lock
flock 9
if dpkg-query -W -f='${Status}' vramz 2>/dev/null | grep -q "ok installed"; then
	echo "FAIL - a vramz package is already installed here; this test would replace it"
	exit 1
fi
B=$T/build
# none was installed before: whatever a failed step left, purge it
# the version the tree says (include/vramz/vramz.h), which the package carries
VER=$(sed -n 's/^#define VRAMZ_VERSION_STRING "\(.*\)"$/\1/p' "$TESTS_SRC/../include/vramz/vramz.h")
cleanup() { dpkg -P vramz >/dev/null 2>&1; rm -rf "$T"; }
trap cleanup EXIT

expect_success 'cpack builds one .deb from the tree (prefix /usr, no tests)' '
	cmake -S "$TESTS_SRC/.." -B "$B" -DCMAKE_INSTALL_PREFIX=/usr -DVRAMZ_TESTS=OFF \
		-DCMAKE_BUILD_TYPE=RelWithDebInfo >cfg.log 2>&1 || { tail -20 cfg.log; exit 1; }
	cmake --build "$B" -j"$(nproc)" >build.log 2>&1 || { tail -30 build.log; exit 1; }
	(cd "$B" && cpack -G DEB >cpack.log 2>&1) || { tail -30 "$B/cpack.log"; exit 1; }
	ls "$B"/vramz_*.deb >debs && test "$(wc -l <debs)" = 1
'
DEB=$(ls "$B"/vramz_*.deb 2>/dev/null | head -1)

expect_success 'control: the runtime libraries, the scripts, nothing a test needs' '
	dpkg-deb -f "$DEB" Package Version Depends >ctl && cat ctl &&
	has "^Package: vramz$" ctl && has "^Version: ${VER//./\\.}$" ctl &&
	has "libc6" ctl &&
	{ ! grep -q "^  top " <("$B/vramz" -h) || has "libncursesw6|libtinfo6" ctl; } &&
	{ ! grep -q "^  serve " <("$B/vramz" -h) || has "libmicrohttpd12" ctl; } &&
	hasnt "cmocka|prometheus|python|tmux|curl" ctl &&
	dpkg-deb -I "$DEB" >info && has "postinst" info && has "prerm" info
'

expect_success 'contents: binary, man pages, completions, units, rules, dashboard, examples' '
	dpkg-deb -c "$DEB" | awk "{print \$6}" >files &&
	for f in ./usr/bin/vramz ./usr/share/man/man1/vramz.1 ./usr/share/man/man1/vramz-status.1 \
		./usr/share/bash-completion/completions/vramz ./usr/share/zsh/site-functions/_vramz \
		./usr/share/fish/vendor_completions.d/vramz.fish \
		./usr/lib/systemd/system/vramz-serve.service ./usr/lib/systemd/system/vramz-log.service \
		./usr/share/vramz/prometheus/prometheus-alerts.yml \
		./usr/share/vramz/prometheus/prometheus-recording.yml \
		./usr/share/vramz/grafana/grafana-dashboard.json ./usr/share/vramz/examples/h200-leak.csv; do
		grep -qx "$f" files || { echo "missing $f"; exit 1; }
	done
'

expect_success 'dpkg -i: installed, a vramz system user, the units there but disabled' '
	dpkg --path-include="/usr/share/man/*" -i "$DEB" >dpkg.log 2>&1 || { cat dpkg.log; exit 1; }
	getent passwd vramz >pw && has "/usr/sbin/nologin" pw &&
	test "$(id -u vramz)" -lt 1000 &&
	has "^ExecStart=/usr/bin/vramz serve" /usr/lib/systemd/system/vramz-serve.service &&
	! ls /etc/systemd/system/*.wants/vramz-* 2>/dev/null &&
	{ systemctl is-enabled vramz-serve.service 2>&1 || true; } >en && has "disabled" en
'

expect_success 'systemd-analyze verify: the installed units, with the installed binary' '
	systemd-analyze verify --man=no /usr/lib/systemd/system/vramz-serve.service \
		/usr/lib/systemd/system/vramz-log.service >out 2>&1 &&
	{ ! test -s out || { cat out; false; }; }
'

expect_success 'installed: vramz --version, vramz demo, man vramz, a bash completion' '
	/usr/bin/vramz --version >v && has "^vramz ${VER//./\\.}" v &&
	LD_LIBRARY_PATH= NO_COLOR=1 /usr/bin/vramz demo >demo 2>&1 &&
	has "H200" demo &&
	MANPAGER=cat MANWIDTH=80 man vramz >m 2>merr && has "vramz-status" m && has "EXIT STATUS" m &&
	MANPAGER=cat man vramz-status >ms 2>&1 && has "--csv" ms &&
	bash -c ". /usr/share/bash-completion/completions/vramz &&
		COMP_WORDS=(vramz ps --so) COMP_CWORD=2 && _vramz && echo \"\${COMPREPLY[*]}\"" >c &&
	has "^--sort$" c
'

expect_success 'dpkg -r then dpkg -P: every file of the package is gone' '
	dpkg -L vramz >list &&
	dpkg -r vramz >r.log 2>&1 || { cat r.log; exit 1; }
	dpkg -P vramz >p.log 2>&1 || { cat p.log; exit 1; }
	while read -r f; do
		[ ! -f "$f" ] || { echo "left behind: $f"; exit 1; }
	done <list &&
	! dpkg-query -W vramz 2>/dev/null | grep -q .
'

finish
