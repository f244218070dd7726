# SPDX-License-Identifier: Apache-2.0
# Generated from lib/fields.c's table by tools/pyfields.c: do not edit.
# `cmake --build BUILD --target python_fields` writes it again; the
# ctest python.fields fails while it differs from the table.
"""The per-GPU sample fields of lib/fields.c, for the Python package:
the validity bits (VRAMZ_F_*), each field's JSON key, bit and struct
member in the table's order (JSON key order, CSV column order), every
member of vramz_gpu_sample with its place in the C struct and in the
daemon's segment record (docs/daemon.md), and the record's sizes."""

# VRAMZ_F_*: the bits of a GPU sample's `valid`
F_MEM = 1 << 0
F_MEM_RESERVED = 1 << 1
F_UTIL = 1 << 2
F_TEMP = 1 << 3
F_POWER = 1 << 4
F_POWER_LIMIT = 1 << 5
F_CLK_SM = 1 << 6
F_CLK_MEM = 1 << 7
F_THROTTLE = 1 << 8
F_PCIE_LINK = 1 << 9
F_PCIE_TPUT = 1 << 10
F_ENERGY = 1 << 11
F_FAN = 1 << 12
F_PROCS = 1 << 13
F_TEMP_MEM = 1 << 14
F_UNATTRIBUTED = 1 << 15
F_ECC_MODE = 1 << 16
F_ECC_VOL = 1 << 17
F_ECC_AGG = 1 << 18
F_REMAP = 1 << 19
F_RETIRED = 1 << 20
F_RETIRED_PENDING = 1 << 21
F_PCIE_REPLAY = 1 << 22
F_XID = 1 << 23

# (JSON key, validity bit, struct member), in the table's order
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

# every member of vramz_gpu_sample in struct order: (member, struct
# format, offset in the C struct, offset in the segment's record)
GPU_SAMPLE_MEMBERS = (
    ("index", "I", 0, 0),
    ("valid", "I", 4, 4),
    ("lost", "i", 8, 8),
    ("mem_total_bytes", "Q", 16, 16),
    ("mem_reserved_bytes", "Q", 24, 24),
    ("mem_used_bytes", "Q", 32, 32),
    ("mem_free_bytes", "Q", 40, 40),
    ("unattributed_bytes", "Q", 48, 48),
    ("util_gpu_pct", "I", 56, 56),
    ("util_mem_pct", "I", 60, 60),
    ("temp_c", "i", 64, 64),
    ("temp_mem_c", "i", 68, 68),
    ("power_mw", "I", 72, 72),
    ("power_limit_mw", "I", 76, 76),
    ("clock_sm_mhz", "I", 80, 80),
    ("clock_mem_mhz", "I", 84, 84),
    ("throttle_reasons", "Q", 88, 88),
    ("pcie_gen", "I", 96, 96),
    ("pcie_width", "I", 100, 100),
    ("pcie_tx_bytes_per_s", "Q", 104, 104),
    ("pcie_rx_bytes_per_s", "Q", 112, 112),
    ("energy_mj", "Q", 120, 120),
    ("fan_pct", "I", 128, 12),
    ("proc_first", "I", 132, 128),
    ("proc_count", "I", 136, 132),
    ("ecc_mode", "I", 140, 136),
    ("ecc_corrected_volatile", "Q", 144, 144),
    ("ecc_uncorrected_volatile", "Q", 152, 152),
    ("ecc_corrected_aggregate", "Q", 160, 160),
    ("ecc_uncorrected_aggregate", "Q", 168, 168),
    ("remap_correctable_rows", "I", 176, 140),
    ("remap_uncorrectable_rows", "I", 180, 176),
    ("remap_pending", "I", 184, 180),
    ("remap_failure", "I", 188, 184),
    ("retired_sbe_pages", "I", 192, 188),
    ("retired_dbe_pages", "I", 196, 192),
    ("retired_pending", "I", 200, 196),
    ("pcie_replays", "I", 204, 200),
    ("xid_events", "I", 208, 204),
    ("xid_last", "I", 212, 208),
    ("xid_time_ms", "Q", 216, 216),
)
GPU_SAMPLE_SIZE = 224  # sizeof(vramz_gpu_sample)
# the segment's GPU sample record: its size since layout 1.2, its size
# in 1.0 and 1.1, and where 1.0's members end (a record of the older
# size carries nothing from there on)
SEG_GPU_SAMPLE_SIZE = 256
SEG_GPU_SAMPLE_MIN_SIZE = 192
SEG_GPU_SAMPLE_10_END = 136
