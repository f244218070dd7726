#!/bin/sh
# run.sh - build and run a fuzz target with libFuzzer (needs clang).
#   tests/fuzz/run.sh [TARGET] [SECONDS] [extra libFuzzer args]
# TARGET: logread (default; the CSV log reader), jsonr (the JSON reader of
# `run --compare`), config (the config file parser); SECONDS default 120.
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
case "${1:-}" in logread|jsonr|config) target=$1; shift ;; esac
secs=${1:-120}
[ $# -gt 0 ] && shift
out=${FUZZ_OUT:-/tmp/vramz-fuzz}/$target
dict=""
case $target in
logread)
	corpus=corpus; dict="-dict=$here/logread.dict"
	srcs="$root/lib/log/logread.c $root/lib/log/logfmt.c $root/lib/fields.c" ;;
jsonr)
	corpus=corpus-jsonr
	srcs="$root/src/jsonr.c" ;;
config)
	corpus=corpus-config
	# the parser, the option parser it shares with the command line, and
	# the library they call into
	srcs="$root/src/diagconf.c $root/src/cli.c $root/src/fmt.c $(ls "$root"/lib/*.c \
		"$root"/lib/backend/*.c "$root"/lib/format/*.c "$root"/lib/diagnose/*.c \
		"$root"/lib/log/*.c)" ;;
esac
mkdir -p "$out/corpus"
cp "$here/$corpus"/* "$out/corpus/"
# shellcheck disable=SC2086
clang -std=c11 -D_GNU_SOURCE -DVRAMZ_STATIC -g -O1 -fsanitize=fuzzer,address,undefined \
	-fno-sanitize-recover=all -I"$root/include" -I"$root/lib" -I"$root/src" \
	"$here/fuzz_$target.c" $srcs -o "$out/fuzz_$target" -ldl -lpthread -lm
cd "$out"
# shellcheck disable=SC2086
exec ./fuzz_$target -max_total_time="$secs" -max_len=65536 -timeout=10 $dict "$@" corpus
