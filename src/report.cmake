# `vramz report`: a log as one self-contained HTML page (docs/report.md).
# Needs the diagnosis part (analyze's engine settings, diagconf.c, logset.c).
if(EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/diagnose.cmake)
  list(APPEND VRAMZ_TOOL_SOURCES
    cmd-report.c
    report/reduce.c
    report/svg.c
    report/page.c
    report/sha256.c
  )
  list(APPEND VRAMZ_TOOL_DEFS VRAMZ_HAVE_REPORT)
endif()
