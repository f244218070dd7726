# `vramz serve`: the Prometheus exporter, built only when the top-level
# CMakeLists found libmicrohttpd (HAVE_SERVE, MHD_* from pkg-config).
if(HAVE_SERVE)
  list(APPEND VRAMZ_TOOL_SOURCES cmd-serve.c serve_http.c)
  list(APPEND VRAMZ_TOOL_DEFS VRAMZ_HAVE_SERVE)
  list(APPEND VRAMZ_TOOL_LIBS ${MHD_LINK_LIBRARIES})
  include_directories(${MHD_INCLUDE_DIRS})
endif()
