list(APPEND VRAMZ_LIB_SOURCES format/jsonw.c)
list(APPEND VRAMZ_LIB_SOURCES format/prom.c)
