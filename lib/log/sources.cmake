# CSV logs: row formatting, the safe file writer, the streaming reader and
# the replay backend (docs/csv.md, docs/logging.md).
list(APPEND VRAMZ_LIB_SOURCES log/logfmt.c log/logwrite.c log/logread.c log/replay.c)
