#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# serve.sh - runs bench_serve against the fake NVML (8 GPUs, 200 processes)
# from a build directory: `bench/serve.sh [BUILD_DIR] [bench_serve options]`.
# On a GPU machine: `BUILD/bench/bench_serve BUILD/vramz --real --cpu 60`.
set -eu
b=${1:-build}
[ $# -gt 0 ] && shift
LD_LIBRARY_PATH="$b/tests/fake-nvml/full${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
	exec "$b/bench/bench_serve" "$b/vramz" "$@"
