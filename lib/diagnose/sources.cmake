# SPDX-License-Identifier: Apache-2.0
list(APPEND VRAMZ_LIB_SOURCES diagnose/ring.c diagnose/stats.c diagnose/leak.c
     diagnose/engine.c diagnose/kinds.c diagnose/detect.c diagnose/advice.c
     diagnose/words.c diagnose/jobkey.c diagnose/idle.c diagnose/oom.c diagnose/time.c
     diagnose/torch.c diagnose/health.c diagnose/agentrec.c diagnose/rise.c diagnose/findings.c
     diagnose/comm.c diagnose/gpuwatch.c)
