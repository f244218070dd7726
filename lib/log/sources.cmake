# SPDX-License-Identifier: Apache-2.0
# CSV logs: the format (columns, rows, times), the streaming reader (its
# row parser csvrow.c) and the replay backend (docs/csv.md).  The file
# writer is the tool's (src/format/logwrite.c).
list(APPEND VRAMZ_LIB_SOURCES log/logfmt.c log/csvrow.c log/logread.c log/logrows.c log/replay.c
     log/agentrow.c)
