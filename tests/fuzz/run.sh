#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# run.sh - build and run a fuzz target with libFuzzer (needs clang).
#   tests/fuzz/run.sh [TARGET] [SECONDS] [extra libFuzzer args]
# TARGET: logread (default; the CSV log reader), jsonr (the JSON reader of
# `run --compare`), config (the config file parser), segment (the daemon's
# shared-memory segment reader; its seed is a segment a `vramz daemon` of
# build/ publishes with the fake NVML, so build first), amdgpu (the amdgpu
# backend's sysfs and fdinfo parsers, seeded from tests/helpers/amd-fixture),
# events (a log's events file: the PyTorch agents' rows analyze reads),
# auth (serve's Authorization header parser: what any client sends),
# webconf (serve's --web-config reader, on the installed libyaml);
# SECONDS default 120.
# New inputs that widen coverage land in a scratch copy of the corpus;
# add the interesting ones to the corpus by hand (keep it small).
# Every build also runs each target over its corpus plus fixed mutations
# without libFuzzer: ctest -R fuzz (smoke_main.c), as CI does.
# AFL++: afl-clang-fast the same sources with smoke_main.c, then
#   afl-fuzz -i tests/fuzz/corpus -o out -- ./fuzz_logread @@
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
target=logread
case "${1:-}" in logread|jsonr|config|segment|amdgpu|events|auth|webconf) target=$1; shift ;; esac
secs=${1:-120}
[ $# -gt 0 ] && shift
out=${FUZZ_OUT:-/tmp/vramz-fuzz}/$target
dict=""
defs=""
case $target in
logread)
	corpus=corpus; dict="-dict=$here/logread.dict"
	srcs="$(ls "$root"/lib/*.c "$root"/lib/backend/*.c \
		"$root"/lib/diagnose/*.c "$root"/lib/log/*.c)" ;;
jsonr)
	corpus=corpus-jsonr
	srcs="$root/src/format/jsonr.c" ;;
config)
	corpus=corpus-config
	# the parser, the option parser it shares with the command line, and
	# the library they call into
	srcs="$root/src/analyze/diagconf.c $root/src/cli.c $root/src/format/fmt.c $root/src/format/jsonw.c \
		$(ls "$root"/lib/*.c "$root"/lib/backend/*.c "$root"/lib/diagnose/*.c \
		"$root"/lib/log/*.c)" ;;
segment)
	corpus=""
	srcs="$(ls "$root"/lib/*.c "$root"/lib/backend/*.c \
		"$root"/lib/diagnose/*.c "$root"/lib/log/*.c)" ;;
amdgpu)
	corpus=""
	srcs="$root/lib/backend/amdgpu_parse.c" ;;
webconf)
	corpus=corpus-webconf
	# libyaml through serve's loader, by the sonames Debian's packages have
	defs="-DVRAMZ_MHD_SONAME=\"libmicrohttpd.so.12\" -DVRAMZ_Z_SONAME=\"libz.so.1\"
		-DVRAMZ_CRYPT_SONAME=\"libcrypt.so.1\" -DVRAMZ_GNUTLS_SONAME=\"libgnutls.so.30\"
		-DVRAMZ_YAML_SONAME=\"libyaml-0.so.2\""
	srcs="$root/src/serve/webconf.c $root/src/serve/mhd_dl.c" ;;
auth)
	corpus=corpus-auth
	srcs="$root/src/serve/authparse.c" ;;
events)
	corpus=corpus-events
	srcs="$(ls "$root"/lib/*.c "$root"/lib/backend/*.c \
		"$root"/lib/diagnose/*.c "$root"/lib/log/*.c)" ;;
esac
mkdir -p "$out/corpus"
[ -n "$corpus" ] && cp "$here/$corpus"/* "$out/corpus/"
if [ "$target" = segment ]; then
	# a real segment: a daemon of build/ with the fake NVML, for a second
	b=${BUILD:-$root/build}
	run=$(mktemp -d)
	LD_LIBRARY_PATH=$b/tests/fake-nvml/full FAKE_NVML_SCENARIO=$root/tests/scenarios/2gpu-h200.scn \
		VRAMZ_RUNTIME_DIR=$run timeout -s TERM 2 "$b/vramz" daemon -i 100ms --procs 2>/dev/null &
	sleep 1.5
	cp "$run/segment" "$out/corpus/seed-2gpu" 2>/dev/null ||
		echo "run.sh: no seed segment (is $b/vramz built?); fuzzing from nothing" >&2
	wait
	rm -rf "$run"
fi
if [ "$target" = amdgpu ]; then
	# every file of the fixture trees: sysfs values, pp_dpm tables, fdinfo
	fx=$(mktemp -d)
	for k in mi300x radeon broken; do bash "$root/tests/helpers/amd-fixture" $k "$fx/$k"; done
	i=0
	for f in $(find "$fx" -type f -size -8k); do # mktemp's names: no spaces
		i=$((i + 1)); cp "$f" "$out/corpus/seed-$i"
	done
	rm -rf "$fx"
fi
# shellcheck disable=SC2086
clang -std=c11 -D_GNU_SOURCE -DVRAMZ_STATIC $defs -g -O1 -fsanitize=fuzzer,address,undefined \
	-fno-sanitize-recover=all -I"$root/include" -I"$root/lib" -I"$root/lib/internal" -I"$root/src" \
	"$here/fuzz_$target.c" $srcs -o "$out/fuzz_$target" -ldl -lpthread -lm
cd "$out"
# shellcheck disable=SC2086
exec ./fuzz_$target -max_total_time="$secs" -max_len=65536 -timeout=10 $dict "$@" corpus
