# SPDX-License-Identifier: Apache-2.0
"""The per-GPU sample fields in the order and with the names of
lib/fields.c's table (JSON key, validity bit, struct member): what
`vramz status --json` prints for each GPU.  A ctest compares this
package's snapshot with the tool's JSON, so the two cannot drift apart
unnoticed.  TORCH_FIGURES, at the end, is the PyTorch agent's figures."""

F_MEM, F_MEM_RESERVED, F_UTIL, F_TEMP, F_POWER, F_POWER_LIMIT = 1, 2, 4, 8, 16, 32
F_CLK_SM, F_CLK_MEM, F_THROTTLE, F_PCIE_LINK, F_PCIE_TPUT = 64, 128, 256, 512, 1024
F_ENERGY, F_FAN, F_PROCS, F_TEMP_MEM, F_UNATTRIBUTED = 2048, 4096, 8192, 16384, 32768
F_ECC_MODE, F_ECC_VOL, F_ECC_AGG, F_REMAP = 1 << 16, 1 << 17, 1 << 18, 1 << 19
F_RETIRED, F_RETIRED_PENDING, F_PCIE_REPLAY, F_XID = 1 << 20, 1 << 21, 1 << 22, 1 << 23

GPU_FIELDS = (
    ("mem_total_bytes", F_MEM, "mem_total_bytes"),
    ("mem_reserved_bytes", F_MEM_RESERVED, "mem_reserved_bytes"),
    ("mem_used_bytes", F_MEM, "mem_used_bytes"),
    ("mem_free_bytes", F_MEM, "mem_free_bytes"),
    ("unattributed_bytes", F_UNATTRIBUTED, "unattributed_bytes"),
    ("util_gpu_pct", F_UTIL, "util_gpu_pct"),
    ("util_mem_pct", F_UTIL, "util_mem_pct"),
    ("temp_c", F_TEMP, "temp_c"),
    ("temp_mem_c", F_TEMP_MEM, "temp_mem_c"),
    ("power_mw", F_POWER, "power_mw"),
    ("power_limit_mw", F_POWER_LIMIT, "power_limit_mw"),
    ("clock_sm_mhz", F_CLK_SM, "clock_sm_mhz"),
    ("clock_mem_mhz", F_CLK_MEM, "clock_mem_mhz"),
    ("throttle_reasons", F_THROTTLE, "throttle_reasons"),
    ("pcie_gen", F_PCIE_LINK, "pcie_gen"),
    ("pcie_width", F_PCIE_LINK, "pcie_width"),
    ("pcie_tx_bytes_per_s", F_PCIE_TPUT, "pcie_tx_bytes_per_s"),
    ("pcie_rx_bytes_per_s", F_PCIE_TPUT, "pcie_rx_bytes_per_s"),
    ("energy_mj", F_ENERGY, "energy_mj"),
    ("fan_pct", F_FAN, "fan_pct"),
    # VRAM health (docs/health.md)
    ("ecc_mode", F_ECC_MODE, "ecc_mode"),
    ("ecc_corrected_volatile", F_ECC_VOL, "ecc_corrected_volatile"),
    ("ecc_uncorrected_volatile", F_ECC_VOL, "ecc_uncorrected_volatile"),
    ("ecc_corrected_aggregate", F_ECC_AGG, "ecc_corrected_aggregate"),
    ("ecc_uncorrected_aggregate", F_ECC_AGG, "ecc_uncorrected_aggregate"),
    ("remap_correctable_rows", F_REMAP, "remap_correctable_rows"),
    ("remap_uncorrectable_rows", F_REMAP, "remap_uncorrectable_rows"),
    ("remap_pending", F_REMAP, "remap_pending"),
    ("remap_failure", F_REMAP, "remap_failure"),
    ("retired_sbe_pages", F_RETIRED, "retired_sbe_pages"),
    ("retired_dbe_pages", F_RETIRED, "retired_dbe_pages"),
    ("retired_pending", F_RETIRED_PENDING, "retired_pending"),
    ("pcie_replays", F_PCIE_REPLAY, "pcie_replays"),
    ("xid_events", F_XID, "xid_events"),
    ("xid_last", F_XID, "xid_last"),
    ("xid_time_ms", F_XID, "xid_time_ms"),
)

# The PyTorch agent's figures of a process, in the order of lib/torchfigs.h
# (the one list in C): (key under "torch", VRAMZ_T_* bit, a column of the
# log's process file).  tests/python/test_fields.py reads lib/torchfigs.h
# and checks this list equal to it.
TORCH_FIGURES = (
    ("allocated_bytes", 1 << 0, True),
    ("reserved_bytes", 1 << 1, True),
    ("active_bytes", 1 << 2, False),
    ("inactive_split_bytes", 1 << 3, True),
    ("peak_allocated_bytes", 1 << 4, False),
    ("alloc_retries", 1 << 5, True),
    ("ooms", 1 << 6, True),
    ("allocations", 1 << 7, False),
)

# The parts of the memory outside the allocator (issue 37), in the order of
# lib/procfields.c's outside_PART_bytes rows (JSON's "outside_parts", the
# exporter's part label); "other" is the rest, never measured as such.
OUTSIDE_PARTS = ("context", "libraries", "nccl", "other")
