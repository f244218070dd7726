#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# test.sh - every test: a warnings-as-errors build and an ASan/UBSan build,
# each running the ctest suite (unit tests, the fake NVML, end-to-end tests
# of the real binary; in the first build also the tests that run once, whose
# time is Chromium's, Python's, pip's or dpkg's: CONTRIBUTING.md lists them).
# Prints ctest's summary for each.
set -eu
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)
run() {
	dir=$1; shift
	cmake -S . -B "$dir" -DVRAMZ_WERROR=ON "$@" >"$dir.configure.log" 2>&1 ||
		{ cat "$dir.configure.log"; exit 1; }
	cmake --build "$dir" -j"$jobs" >"$dir.build.log" 2>&1 ||
		{ tail -60 "$dir.build.log"; exit 1; }
	ctest --test-dir "$dir" --output-on-failure -j"$jobs" --timeout 600
}
mkdir -p build-test build-asan
run build-test -DCMAKE_BUILD_TYPE=RelWithDebInfo
run build-asan -DCMAKE_BUILD_TYPE=Debug -DVRAMZ_SANITIZE=ON
