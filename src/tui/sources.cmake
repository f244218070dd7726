# SPDX-License-Identifier: Apache-2.0
# The ncurses dashboard (`vramz top`), included by src/CMakeLists.txt only
# when the wide-character ncurses was found (HAVE_TUI).
list(APPEND VRAMZ_TOOL_SOURCES
  tui/top.c
  tui/model.c
  tui/sampler.c
  tui/findpanel.c
  tui/kill.c
  tui/term.c
  tui/fb.c
  tui/render.c
  tui/draw.c
  tui/gpus.c
  tui/chart.c
  tui/table.c
  tui/procpage.c
  tui/host.c
  tui/input.c
  tui/prefs.c
)
# NCURSES_WIDECHAR: the wide API (get_wch, addnwstr) whatever the feature macros
list(APPEND VRAMZ_TOOL_DEFS VRAMZ_HAVE_TUI NCURSES_WIDECHAR=1)
list(APPEND VRAMZ_TOOL_LIBS ${NCURSESW_LIBRARIES} Threads::Threads)
include_directories(${NCURSESW_INCLUDE_DIRS})
