# The diagnoses: `vramz analyze` (logs) and `vramz watch` (live).
list(APPEND VRAMZ_TOOL_SOURCES cmd-analyze.c analyze_procs.c cmd-watch.c diagconf.c cmd-demo.c logset.c)
list(APPEND VRAMZ_TOOL_DEFS VRAMZ_DATADIR="${CMAKE_INSTALL_FULL_DATADIR}/vramz")
install(FILES ${PROJECT_SOURCE_DIR}/examples/h200-leak.csv ${PROJECT_SOURCE_DIR}/examples/h200-leak.procs.csv
        DESTINATION ${CMAKE_INSTALL_DATADIR}/vramz/examples)
list(APPEND VRAMZ_TOOL_DEFS VRAMZ_HAVE_DIAGNOSE)
# analyze needs the log reader (lib/log); until it is built in, it says so.
if(EXISTS ${PROJECT_SOURCE_DIR}/lib/log/sources.cmake)
  list(APPEND VRAMZ_TOOL_DEFS VRAMZ_HAVE_LOG_READER)
endif()
