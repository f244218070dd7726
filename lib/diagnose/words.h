/* SPDX-License-Identifier: Apache-2.0 */
/* words.h - the small formatters every finding's sentence uses (words.c):
 * an amount, a duration, a finding's subject.  A leaf of lib/diagnose's
 * graph: the words of each kind (advice.c, torch.c, a kind's own file)
 * and the idle rule's reasons (idle.c) use it. */
#ifndef VRAMZ_DIAG_WORDS_H
#define VRAMZ_DIAG_WORDS_H

#include <stddef.h>

#include "vramz/diagnose.h"

/* "880 MiB", "78.6 GiB" */
const char *diag_bytes_str(char *b, size_t n, double v);
/* "45s", "12m", "1h10m", "2d03h" */
const char *diag_dur_str(char *b, size_t n, double ms);
/* "pid 4242 (python) on GPU 0", "job torchrun:abc", "GPU 3", "the machine" */
const char *diag_subject_str(const vramz_finding *f, char *b, size_t n);

/* The parts of a finding's memory outside PyTorch's allocator
 * (VRAMZ_FG_PARTS, issue 37): the largest (OUTSIDE_NONE unknown, or all
 * 0), and all of them in words, largest first, those above 0: "610 MiB
 * CUDA context, 564 MiB in 1 NCCL communicator, 74 MiB CUDA libraries"
 * (0 when unknown, buf then ""). */
enum outside_part_word { OUTSIDE_NONE, OUTSIDE_CONTEXT, OUTSIDE_LIBRARIES, OUTSIDE_NCCL, OUTSIDE_OTHER };
enum outside_part_word outside_largest(const vramz_finding *f);
int outside_parts_words(const vramz_finding *f, char *b, size_t n);

#endif
