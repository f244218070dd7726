#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# check_exports.sh NM DIR - fails if a fake libnvidia-ml.so.1 under DIR
# exports a function whose name is not NVML's.  Sanitizer builds add their
# own data symbols, so only code symbols (T) are checked.
nm=$1 dir=$2 rc=0
for lib in "$dir"/full/libnvidia-ml.so.1 "$dir"/legacy/libnvidia-ml.so.1 \
	   "$dir"/broken/libnvidia-ml.so.1; do
	bad=$("$nm" -D --defined-only "$lib" | awk '$2 == "T" && $3 !~ /^nvml/ { print $3 }')
	if [ -n "$bad" ]; then
		echo "$lib exports non-NVML symbols: $bad" >&2
		rc=1
	fi
	# the calls every variant has, VRAM health and events among them
	for sym in nvmlInit_v2 nvmlDeviceGetTotalEccErrors nvmlDeviceGetRemappedRows \
		   nvmlDeviceGetRetiredPages_v2 nvmlDeviceGetRetiredPagesPendingStatus \
		   nvmlDeviceGetPcieReplayCounter nvmlDeviceGetSupportedEventTypes \
		   nvmlEventSetCreate nvmlDeviceRegisterEvents nvmlEventSetWait_v2 \
		   nvmlEventSetFree; do
		if ! "$nm" -D --defined-only "$lib" | grep -q " T $sym\$"; then
			echo "$lib does not export $sym" >&2
			rc=1
		fi
	done
done
exit $rc
