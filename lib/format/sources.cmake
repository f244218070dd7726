list(APPEND VRAMZ_LIB_SOURCES format/jsonw.c)
