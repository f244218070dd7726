# The ncurses dashboard (`vramz top`), included by src/CMakeLists.txt only
# when the wide-character ncurses was found (HAVE_TUI).
list(APPEND VRAMZ_TOOL_SOURCES
  tui/top.c
  tui/model.c
  tui/sampler.c
  tui/findings.c
  tui/kill.c
  tui/term.c
  tui/fb.c
  tui/render.c
  tui/input.c
)
# `k` signals through `vramz kill`'s checks; jobs.cmake may have added them
if(NOT "safekill.c" IN_LIST VRAMZ_TOOL_SOURCES)
  list(APPEND VRAMZ_TOOL_SOURCES safekill.c)
endif()
# NCURSES_WIDECHAR: the wide API (get_wch, addnwstr) whatever the feature macros
list(APPEND VRAMZ_TOOL_DEFS VRAMZ_HAVE_TUI NCURSES_WIDECHAR=1)
# Replay reads logs through vramz/log.h: on when the log area is built.
if(EXISTS ${PROJECT_SOURCE_DIR}/lib/log/sources.cmake)
  list(APPEND VRAMZ_TOOL_DEFS VRAMZ_TUI_REPLAY)
endif()
list(APPEND VRAMZ_TOOL_LIBS ${NCURSESW_LIBRARIES} Threads::Threads)
include_directories(${NCURSESW_INCLUDE_DIRS})
