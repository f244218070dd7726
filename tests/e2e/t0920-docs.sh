#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# t0920-docs.sh - the man pages and shell completions the build generates
# from the option tables (src/gendoc.c), as a user meets them: every page
# renders with `man -l` without a warning and names every option its
# command's -h lists; bash completes commands, options, sort keys, GPU
# indices and run's command; zsh and fish accept their files; and
# `cmake --install` puts them, the units (ExecStart from the prefix,
# verified by systemd), rules and dashboard where they belong.
. "$TESTS_SRC/e2e/lib.sh"
scenario 2gpu-h200.scn
GEN=$TESTS_BIN/../gen
BUILD=$TESTS_BIN/..
cmds() { vramz -h | sed -n '/^commands:/,/^$/p' | awk 'NF > 1 && $1 != "help" {print $1}'; }
# the option names -h prints: "  -g, --gpus LIST  ..." -> -g --gpus
opts_of() { vramz "$1" -h | sed -n '/^options:/,$p' | grep -oE '^  (-[a-zA-Z], )?--?[a-z][a-z0-9-]*|^      --[a-z][a-z0-9-]*' | grep -oE -- '--?[a-z][a-z0-9-]*'; }
# bash completion of a command line (the last word is completed)
complete_bash() {
	PATH="$(dirname "$VRAMZ_BIN"):$PATH" bash -c '
		. "$1"; shift
		COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
		_vramz; printf "%s\n" "${COMPREPLY[@]}"' _ "$GEN/vramz.bash" "$@"
}

expect_success 'a page per command and vramz.1, each rendering with no warning' '
	test -s "$GEN/man/vramz.1" &&
	for c in $(cmds); do
		test -s "$GEN/man/vramz-$c.1" || { echo "no page for $c"; exit 1; }
		MANWIDTH=80 man --warnings -l "$GEN/man/vramz-$c.1" >page 2>err &&
		{ ! test -s err || { echo "$c:"; cat err; exit 1; }; } &&
		has "^NAME" page && has "vramz-$c +- " page || exit 1
	done &&
	MANWIDTH=80 man --warnings -l "$GEN/man/vramz.1" >main 2>err && ! test -s err &&
	for c in $(cmds); do has "vramz-$c\(1\)" main || exit 1; done &&
	has "EXIT STATUS" main && has "^ +3 +a +finding" main
'

expect_success 'every option -h lists is in the man page (they cannot drift)' '
	n=0 &&
	for c in $(cmds); do
		MANWIDTH=200 man -l "$GEN/man/vramz-$c.1" 2>/dev/null >page &&
		for o in $(opts_of $c); do
			grep -qF -- "$o" page || { echo "vramz-$c(1) lacks $o"; exit 1; }
			n=$((n + 1))
		done
	done && echo "$n options" && test $n -ge 100
'

expect_success 'the comparison is real: a page without an option fails it' '
	MANWIDTH=200 man -l "$GEN/man/vramz-status.1" 2>/dev/null | grep -v -- "--csv" >page &&
	! grep -qF -- "--csv" page && opts_of status | grep -qx -- "--csv"
'

expect_success 'bash: commands, options, sort keys, GPU indices, run'"'"'s command' '
	complete_bash vramz st >c && has "^status$" c && has "^stat" c &&
	complete_bash vramz ps --so >c && has "^--sort$" c &&
	complete_bash vramz ps --sort v >c && has "^vram$" c &&
	complete_bash vramz top --sort "" >c && has "^idle$" c && has "^job$" c &&
	complete_bash vramz status -g "" >c && has "^0$" c && has "^1$" c && test "$(wc -l <c)" = 2 &&
	complete_bash vramz status --csv --fie >c && has "^--fields$" c &&
	complete_bash vramz run pytho >c && grep -q "^python" c &&
	complete_bash vramz "" >c && has "^pick$" c && has "^--version$" c
'

expect_success 'zsh and fish read their files (when installed)' '
	if command -v zsh >/dev/null; then zsh -n "$GEN/_vramz"; else echo "no zsh here"; fi &&
	if command -v fish >/dev/null; then fish --no-execute "$GEN/vramz.fish"; else echo "no fish here"; fi &&
	has "^#compdef vramz" "$GEN/_vramz" && has "__fish_seen_subcommand_from status.* -l csv" "$GEN/vramz.fish"
'

expect_success 'cmake --install: pages, completions, units from the prefix, rules, dashboard' '
	DESTDIR="$T/root" cmake --install "$BUILD" >inst.log 2>&1 || { cat inst.log; exit 1; }
	prefix=$(sed -n "s/^CMAKE_INSTALL_PREFIX:PATH=//p" "$BUILD/CMakeCache.txt") &&
	R="$T/root$prefix" &&
	test -s "$R/share/man/man1/vramz.1" && test -s "$R/share/man/man1/vramz-status.1" &&
	test -s "$R/share/bash-completion/completions/vramz" &&
	test -s "$R/share/zsh/site-functions/_vramz" &&
	test -s "$R/share/fish/vendor_completions.d/vramz.fish" &&
	test -s "$R/share/vramz/prometheus/prometheus-alerts.yml" &&
	test -s "$R/share/vramz/prometheus/prometheus-recording.yml" &&
	test -s "$R/share/vramz/grafana/grafana-dashboard.json" &&
	test -s "$R/share/vramz/k8s/Dockerfile" &&
	test -s "$R/share/vramz/examples/h200-leak.csv" &&
	for u in "$R"/lib/systemd/system/vramz-*.service; do
		has "^ExecStart=$prefix/bin/vramz " "$u" || exit 1
	done &&
	mkdir -p root/usr/lib/systemd && cp -r /lib/systemd/system root/usr/lib/systemd/ &&
	systemd-analyze verify --root="$T/root" --man=no \
		$(cd root && ls ."$prefix"/lib/systemd/system/vramz-*.service | sed "s|^\.||") >out 2>&1 &&
	{ ! test -s out || { cat out; false; }; }
'

finish
