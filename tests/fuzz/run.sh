#!/bin/sh
# run.sh - build and run the log reader's fuzz target with libFuzzer.
#   tests/fuzz/run.sh [SECONDS] [extra libFuzzer args]   (default 120 s)
# Needs clang.  New inputs that widen coverage land in a scratch copy of
# corpus/; add the interesting ones to corpus/ by hand (keep it small).
# AFL++: afl-clang-fast -DFUZZ_AFL_MAIN ... the same sources, then
#   afl-fuzz -i tests/fuzz/corpus -o out -- ./fuzz_logread @@
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
secs=${1:-120}
[ $# -gt 0 ] && shift
out=${FUZZ_OUT:-/tmp/vramz-fuzz}
mkdir -p "$out/corpus"
cp "$here"/corpus/* "$out/corpus/"
clang -std=c11 -D_GNU_SOURCE -DVRAMZ_STATIC -g -O1 -fsanitize=fuzzer,address,undefined \
	-fno-sanitize-recover=all -I"$root/include" -I"$root/lib" \
	"$here/fuzz_logread.c" "$root"/lib/log/logread.c "$root"/lib/log/logfmt.c \
	"$root"/lib/fields.c -o "$out/fuzz_logread"
cd "$out"
exec ./fuzz_logread -max_total_time="$secs" -max_len=65536 -timeout=10 \
	-dict="$here/logread.dict" "$@" corpus
