# `vramz log` and `vramz replay` (docs/logging.md); the format lives in lib/log.
list(APPEND VRAMZ_TOOL_SOURCES cmd-log.c cmd-replay.c)
list(APPEND VRAMZ_TOOL_DEFS VRAMZ_HAVE_LOG)
