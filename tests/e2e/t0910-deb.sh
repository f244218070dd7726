#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# t0910-deb.sh - the Debian packages, as a distribution and an operator
# meet them: tools/build-deb.sh builds vramz, libvramz0, libvramz-dev and
# python3-vramz (and two -dbgsym) from the tree with debhelper; their
# control data, contents, stripping and compression are checked, lintian
# --pedantic finds nothing that is not overridden with a reason; then
# `dpkg -i` on this machine, and each is used as a user would: man vramz,
# completion through bash-completion's loader, zsh's compinit and fish,
# `import vramz` with Debian's python3 (sampling through the installed
# library), examples/embed.c compiled with pkg-config and a find_package
# build; the units installed disabled and verified by systemd; `dpkg -P`
# leaving no file behind.
#
# Needs root (dpkg -i): skipped, saying so, otherwise.  CI runs as root.
# The packages do not depend on the build being tested, so the sanitizer
# build's run skips too (the suite runs it once).
. "$TESTS_SRC/e2e/lib.sh"
if [ "$(id -u)" -ne 0 ]; then
	echo "skip - installing a package needs root; run the suite as root (CI does)"
	exit 0
fi
if [ "${VRAMZ_SANITIZE:-0}" = 1 ]; then
	echo "skip - the packages are built from the tree with Debian's flags; the other build's run checks them"
	exit 0
fi
# one package test at a time on a machine (dpkg's lock would fail the other)
exec 9>/tmp/vramz-deb-test.lock
flock 9
PKGS="vramz libvramz0 libvramz-dev python3-vramz"
for p in $PKGS; do
	if dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
		echo "FAIL - a $p package is already installed here; this test would replace it"
		exit 1
	fi
done
SRC=$TESTS_SRC/..
D=$T/debs
scenario 2gpu-h200.scn
# the version the tree says (include/vramz/vramz.h), which the packages carry
VER=$(sed -n 's/^#define VRAMZ_VERSION_STRING "\(.*\)"$/\1/p' "$SRC/include/vramz/vramz.h")
VRE=${VER//./\\.}-[0-9]+
# none was installed before: whatever a failed step left, purge it
# shellcheck disable=SC2086
cleanup() { dpkg -P $PKGS >/dev/null 2>&1; rm -rf "$T"; }
trap cleanup EXIT
# (a -dbgsym package is a .ddeb on Ubuntu)
deb() { ls "$D/$1"_*.deb "$D/$1"_*.ddeb 2>/dev/null; }
# the files of a package, without the leading "."
files_of() { dpkg-deb -c "$(deb "$1")" | awk '{print substr($6, 2)}'; }

expect_success 'tools/build-deb.sh builds the four packages and two -dbgsym' '
	"$SRC/tools/build-deb.sh" "$D" >build.out 2>&1 || { cat build.out; exit 1; }
	for p in $PKGS vramz-dbgsym libvramz0-dbgsym; do
		test "$(deb $p | wc -l)" = 1 || { echo "no $p"; ls "$D"; exit 1; }
	done &&
	ls "$D"/*deb >all && test "$(wc -l <all)" = 6 &&
	ls "$D"/vramz_*.changes
'

expect_success 'control: versions, a real maintainer, runtime dependencies only' '
	for p in $PKGS; do
		dpkg-deb -f "$(deb $p)" Package Version Maintainer >ctl &&
		has "^Package: $p$" ctl && has "^Version: $VRE$" ctl &&
		has "^Maintainer: [^<]+ <[^@ ]+@[^@ ]+\.[a-z]+>$" ctl && hasnt "localhost" ctl || exit 1
	done &&
	dpkg-deb -f "$(deb vramz)" Depends >dep && cat dep && has "libc6" dep &&
	{ ! grep -q "^  top " <("$VRAMZ_BIN" -h) || has "libncursesw6|libtinfo6" dep; } &&
	{ ! grep -q "^  serve " <("$VRAMZ_BIN" -h) || has "libmicrohttpd12" dep; } &&
	hasnt "cmocka|prometheus|python|tmux|curl|libvramz" dep &&
	dpkg-deb -f "$(deb libvramz-dev)" Depends >dep && has "libvramz0 \(= $VRE\)" dep &&
	dpkg-deb -f "$(deb python3-vramz)" Depends Recommends Architecture >dep &&
	has "^Depends: python3" dep && has "^Recommends: libvramz0" dep && has "^Architecture: all" dep &&
	dpkg-deb -f "$(deb libvramz0)" Section Multi-Arch >dep && has "^Section: libs" dep &&
	has "^Multi-Arch: same" dep
'

expect_success 'libvramz0: every exported symbol in its symbols file, shlibs, the ldconfig trigger' '
	dpkg-deb -e "$(deb libvramz0)" lib.ctl && dpkg-deb -x "$(deb libvramz0)" root &&
	has "^activate-noawait ldconfig$" lib.ctl/triggers &&
	has "^libvramz 0 libvramz0 " lib.ctl/shlibs &&
	has "^libvramz\.so\.0 libvramz0 #MINVER#" lib.ctl/symbols &&
	nm -D --defined-only root/usr/lib/*/libvramz.so.0 | awk "{print \$3}" | sort >exported &&
	test "$(wc -l <exported)" -ge 40 &&
	sed -n "s/^ \([a-z_0-9]*\)@Base .*/\1/p" lib.ctl/symbols | sort >listed &&
	diff exported listed &&
	has "^ vramz_open@Base 0\.1\.0$" lib.ctl/symbols && has "^ vramz_open_abi@Base 0\.2\.0$" lib.ctl/symbols
'

expect_success 'contents: each file in its package; copyright and changelog in each doc dir' '
	for p in $PKGS; do files_of $p >$p.files || exit 1; done &&
	v=vramz.files l=libvramz0.files d=libvramz-dev.files p=python3-vramz.files &&
	for f in /usr/bin/vramz /usr/share/man/man1/vramz.1.gz /usr/share/man/man1/vramz-status.1.gz \
		/usr/share/bash-completion/completions/vramz /usr/share/zsh/vendor-completions/_vramz \
		/usr/share/fish/vendor_completions.d/vramz.fish \
		/usr/share/doc/vramz/README.md /usr/share/doc/vramz/commands.md /usr/share/doc/vramz/api.md \
		/usr/share/vramz/prometheus/prometheus-alerts.yml /usr/share/vramz/grafana/grafana-dashboard.json \
		/usr/share/vramz/examples/h200-leak.csv; do
		grep -qx "$f" $v || { echo "vramz lacks $f"; exit 1; }
	done &&
	for u in serve log daemon; do grep -qE "^(/usr)?/lib/systemd/system/vramz-$u.service$" $v || exit 1; done &&
	grep -qE "^/usr/lib/[^/]+/libvramz\.so\.0$" $l && grep -qE "^/usr/lib/[^/]+/libvramz\.so\.$VER$" $l &&
	for f in "/usr/include/vramz/vramz\.h" "/usr/include/vramz/diagnose\.h" "/usr/lib/[^/]+/libvramz\.a" \
		"/usr/lib/[^/]+/libvramz\.so" "/usr/lib/[^/]+/pkgconfig/vramz\.pc" \
		"/usr/lib/[^/]+/cmake/vramz/vramzConfig\.cmake"; do
		grep -qE "^$f$" $d || { echo "libvramz-dev lacks $f"; exit 1; }
	done &&
	for f in /usr/lib/python3/dist-packages/vramz/__init__.py /usr/lib/python3/dist-packages/vramz/torch/_agent.py \
		/usr/lib/python3/dist-packages/vramz-torch.pth "/usr/lib/python3/dist-packages/vramz-$VER.dist-info/METADATA"; do
		grep -qx "$f" $p || { echo "python3-vramz lacks $f"; exit 1; }
	done &&
	hasnt "libvramz|/include/|python3" $v && hasnt "/include/|\.a$|bin/" $l && hasnt "__pycache__|\.pyc$" $p &&
	hasnt "\.1$" $v &&
	for p in $PKGS; do
		grep -qx "/usr/share/doc/$p/copyright" $p.files &&
		grep -qx "/usr/share/doc/$p/changelog.Debian.gz" $p.files || { echo "$p: no copyright or changelog"; exit 1; }
	done
'

expect_success 'the copyright file is the tree'"'"'s machine-readable one' '
	dpkg-deb --fsys-tarfile "$(deb libvramz-dev)" | tar -xOf - ./usr/share/doc/libvramz-dev/copyright >c &&
	cmp c "$SRC/packaging/debian/copyright" &&
	has "^Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/" c &&
	has "^License: Apache-2.0" c
'

expect_success 'man pages and changelog: gzip -9n (no name, no time, best compression)' '
	dpkg-deb -x "$(deb vramz)" root &&
	ls root/usr/share/man/man1/*.gz root/usr/share/doc/vramz/changelog.Debian.gz >gz &&
	test "$(wc -l <gz)" -ge 10 &&
	while read -r f; do
		# bytes 0-9: magic 1f 8b, method 08, flags (08 = a name), mtime x4, xfl (02 = -9)
		h=$(od -An -tx1 -N10 "$f" | tr -d " \n") &&
		case $h in 1f8b0800000000000203) ;; *) echo "$f: header $h"; exit 1 ;; esac
	done <gz &&
	zcat root/usr/share/man/man1/vramz.1.gz | grep -q "^\.TH VRAMZ 1"
'

expect_success 'binaries stripped, their debug symbols in the -dbgsym packages by build id' '
	dpkg-deb -x "$(deb vramz)" root && dpkg-deb -x "$(deb libvramz0)" root &&
	dpkg-deb -x "$(deb vramz-dbgsym)" dbg && dpkg-deb -x "$(deb libvramz0-dbgsym)" dbg &&
	for b in root/usr/bin/vramz root/usr/lib/*/libvramz.so.0; do
		b=$(readlink -f "$b") &&
		file "$b" >f && has ", stripped" f &&
		! readelf -S "$b" | grep -q "\.debug_info" &&
		id=$(readelf -n "$b" | sed -n "s/.*Build ID: *//p") && test -n "$id" &&
		dbgf=dbg/usr/lib/debug/.build-id/$(echo $id | cut -c1-2)/$(echo $id | cut -c3-).debug &&
		readelf -S "$dbgf" | grep -q "\.debug_info" || { echo "$b: no debug file for $id"; exit 1; }
	done
'

# Each override names its reason: a comment right above the tag line.
expect_success 'lintian --pedantic: no tag but those overridden, each with a reason' '
	for f in "$SRC"/packaging/debian/*.lintian-overrides; do
		awk "/^#/ {c = 1; next} /^[a-z0-9]/ && !c {print FILENAME \": no reason above \" \$0; bad = 1} {c = 0}
			END {exit bad}" "$f" || exit 1
	done &&
	lintian --pedantic --display-info --display-experimental --show-overrides \
		"$D"/vramz_*.changes >lint 2>lint.err || true
	cat lint.err >&2
	! grep -E "^[EWIPX]: " lint || exit 1
	grep -q "^O: " lint
'

expect_success 'dpkg -i the four: a vramz system user, the units there but disabled' '
	dpkg --path-include="/usr/share/man/*" --path-include="/usr/share/doc/*" \
		-i $(deb vramz) $(deb libvramz0) $(deb libvramz-dev) $(deb python3-vramz) >dpkg.log 2>&1 ||
		{ cat dpkg.log; exit 1; }
	getent passwd vramz >pw && has "/usr/sbin/nologin" pw &&
	test "$(id -u vramz)" -lt 1000 &&
	unit=$(dpkg -L vramz | grep "/vramz-serve\.service$") &&
	has "^ExecStart=/usr/bin/vramz serve" "$unit" &&
	! ls /etc/systemd/system/*.wants/vramz-* 2>/dev/null &&
	{ systemctl is-enabled vramz-serve.service 2>&1 || true; } >en && has "disabled" en
'

expect_success 'systemd-analyze verify: the installed units, with the installed binary' '
	systemd-analyze verify --man=no $(dpkg -L vramz | grep "/vramz-[a-z]*\.service$") >out 2>&1 &&
	{ ! test -s out || { cat out; false; }; }
'

expect_success 'vramz --version, vramz demo, man vramz; every document a page names is installed' '
	/usr/bin/vramz --version >v && has "^vramz ${VER//./\\.}" v &&
	LD_LIBRARY_PATH= /usr/bin/vramz demo >demo 2>&1 && has "H200" demo &&
	MANPAGER=cat MANWIDTH=80 man vramz >m 2>merr && has "vramz-status" m && has "EXIT STATUS" m &&
	has "/usr/share/doc/vramz" m &&
	MANPAGER=cat man vramz-status >ms 2>&1 && has "--csv" ms &&
	MANPAGER=cat MANWIDTH=300 man vramz-analyze >ma 2>&1 && has "/usr/share/doc/vramz/diagnoses\.md" ma &&
	for f in $(dpkg -L vramz | grep "/man1/.*\.gz$"); do zcat "$f"; done >all.roff &&
	hasnt "[^/a-z]docs/" all.roff &&
	grep -oE "/usr/share/doc/vramz/[a-z0-9_-]+\.md" all.roff | sort -u >cited &&
	test "$(wc -l <cited)" -ge 5 &&
	while read -r f; do test -s "$f" || { echo "cited, not installed: $f"; exit 1; }; done <cited
'

expect_success 'bash: bash-completion'"'"'s loader finds the completion and it completes' '
	PATH=/usr/bin:/bin bash -c ". /usr/share/bash-completion/bash_completion &&
		! complete -p vramz 2>/dev/null && _completion_loader vramz; complete -p vramz &&
		COMP_WORDS=(vramz ps --so) COMP_CWORD=2 && _vramz && printf \"%s\n\" \"\${COMPREPLY[@]}\"" >c &&
	has "^complete -F _vramz vramz$" c && has "^--sort$" c
'

expect_success 'zsh: compinit finds _vramz in its own fpath, and TAB completes with it' '
	HOME=$T zsh -f -c "autoload -U compinit && compinit -u -D &&
		print -r -- comp=\$_comps[vramz] && autoload +X _vramz && whence -v _vramz" >z 2>&1 ||
		{ cat z; exit 1; }
	has "^comp=_vramz$" z && has "^_vramz is a shell function from /usr/share/zsh/vendor-completions/_vramz$" z &&
	HOME=$T timeout 60 zsh -f "$TESTS_SRC/helpers/zsh-complete.zsh" vramz ps --sort v >line ||
		{ echo "no completion came (zsh-complete.zsh: $?)"; exit 1; }
	has "^vramz ps --sort vram$" line
'

expect_success 'fish: finds its completion on its own' '
	HOME=$T fish -c "complete -C \"vramz ps --so\"" >f 2>&1 && has "^--sort" f &&
	HOME=$T fish -c "complete -C \"vramz sta\"" >f 2>&1 && has "^status" f
'

expect_success 'python3 (Debian'"'"'s): import vramz from dist-packages, sample through libvramz0' '
	env -i PATH=/usr/bin:/bin LD_LIBRARY_PATH="$LD_LIBRARY_PATH" FAKE_NVML_SCENARIO="$FAKE_NVML_SCENARIO" \
		VRAMZ_NO_DAEMON=1 /usr/bin/python3 -I -c "import vramz, json
print(vramz.__file__, vramz.__version__)
d = vramz.snapshot()
print(d[\"source\"], len(d[\"gpus\"]), d[\"gpus\"][0][\"name\"])" >py 2>&1 &&
	has "^/usr/lib/python3/dist-packages/vramz/__init__\.py ${VER//./\\.}$" py &&
	has "^library 2 NVIDIA H200$" py &&
	env -i PATH=/usr/bin:/bin VRAMZ_TORCH=1 /usr/bin/python3 -I -c \
		"import sys; print(\"vramz.torch._autoattach\" in sys.modules)" >pth 2>&1 &&
	has "^True$" pth &&
	env -i PATH=/usr/bin:/bin /usr/bin/python3 -I -c "import importlib.metadata as m; print(m.version(\"vramz\"))" >md &&
	has "^${VER//./\\.}$" md
'

expect_success 'examples/embed.c builds with pkg-config against libvramz-dev and reads the GPUs' '
	cc "$SRC/examples/embed.c" $(env -u PKG_CONFIG_PATH pkg-config --cflags --libs vramz) -o embed &&
	ldd embed >ldd && has "libvramz\.so\.0 => (/usr)?/lib/[^/]+/libvramz\.so\.0" ldd &&
	./embed >out && has "GPU 0 NVIDIA H200: [0-9]+ of 143771 MiB used" out && has "GPU 1 NVIDIA H200" out
'

expect_success 'find_package(vramz) from libvramz-dev builds shared and static' '
	cmake -S "$SRC/tests/install/cmake" -B cm >cm.log 2>&1 && cmake --build cm >>cm.log 2>&1 ||
		{ cat cm.log; exit 1; }
	cm/use_all "$SRC/examples/h200-leak.csv" >out && has "^finding: leak " out &&
	ldd cm/use_all | grep -qE "=> (/usr)?/lib/[^/]+/libvramz\.so\.0" &&
	! ldd cm/use_all_static | grep -q libvramz
'

expect_success 'dpkg -r then dpkg -P: every file and folder of the four is gone' '
	for p in $PKGS; do dpkg -L $p; done | sort -u >list &&
	test "$(wc -l <list)" -ge 60 &&
	dpkg -r $PKGS >r.log 2>&1 || { cat r.log; exit 1; }
	dpkg -P $PKGS >p.log 2>&1 || { cat p.log; exit 1; }
	while read -r f; do
		[ ! -e "$f" ] || [ -d "$f" ] || { echo "left behind: $f"; exit 1; }
	done <list &&
	for d in /usr/share/doc/vramz /usr/lib/python3/dist-packages/vramz /usr/include/vramz \
		/usr/share/vramz /usr/lib/*/cmake/vramz; do
		[ ! -e "$d" ] || { echo "left behind: $d"; find "$d"; exit 1; }
	done &&
	! ls /usr/lib/python3/dist-packages/vramz* 2>/dev/null &&
	for p in $PKGS; do ! dpkg-query -W "$p" 2>/dev/null | grep -q . || exit 1; done
'

finish
