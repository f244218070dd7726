# Job tools: vramz run, fit, pick, kill (docs/jobs.md).
list(APPEND VRAMZ_TOOL_SOURCES
  cmd-run.c
  cmd-fit.c
  cmd-pick.c
  cmd-kill.c
  jobrun.c
  proctree.c
  safekill.c
  jsonr.c
)
list(APPEND VRAMZ_TOOL_DEFS VRAMZ_HAVE_JOBS)
