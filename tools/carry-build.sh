#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# carry-build.sh - builds what the GPU machine runs into .carry/: vramz and
# the benchmarks, Release, without the parts whose libraries that machine
# lacks unless they are carried too (see docs/validation.md).
set -eu
cd "$(dirname "$0")/.."
mkdir -p .carry
cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=Release -DVRAMZ_TESTS=ON -DVRAMZ_TUI=AUTO -DVRAMZ_SERVE=AUTO >/dev/null
cmake --build build-dev -j"$(nproc)" --target vramz_tool bench_tick unit_sandbox >/dev/null
cp build-dev/vramz build-dev/bench/bench_tick build-dev/tests/unit_sandbox .carry/
# nvtop to measure side by side (bench/bench_top.sh): NVTOP=path/to/nvtop, e.g.
# from Debian contrib's nvtop .deb (dpkg-deb -x); it needs only libncursesw6
[ -n "${NVTOP:-}" ] && cp "$NVTOP" .carry/
gcc -O2 -std=c11 bench/peakrss.c -o .carry/peakrss
gcc -O2 -std=c11 -D_GNU_SOURCE bench/wakefloor.c -o .carry/wakefloor
gcc -O2 -std=c11 -Ilib bench/oneshot_ref.c -o .carry/oneshot_ref -ldl
gcc -O2 -std=c11 -D_GNU_SOURCE -Ilib bench/nvml_callcost.c -o .carry/callcost -ldl
rm -rf .carry/bench-ref && cp -r ../shared/bench-ref .carry/bench-ref
# serve dlopen()s libmicrohttpd by soname (src/serve/mhd_dl.h): carry that file
so=$(sed -n 's/^VRAMZ_MHD_SONAME:INTERNAL=//p' build-dev/CMakeCache.txt)
dir=$(dirname "$(sed -n 's/^_lib_microhttpd:FILEPATH=//p' build-dev/CMakeCache.txt)")
[ -n "$so" ] && [ -e "$dir/$so" ] && cp -L "$dir/$so" ".carry/$so"
ls .carry
