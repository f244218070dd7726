#!/bin/zsh -f
# SPDX-License-Identifier: Apache-2.0
# zsh-complete.zsh WORDS... - what an interactive zsh makes of a command
# line on TAB: it starts `zsh -f -i` in a pseudo-terminal (zpty), runs
# compinit (so completions come only from zsh's own fpath), types WORDS and
# a TAB, then turns the line into `print` and prints what it held.  A test
# runs it under timeout: a completion that never comes blocks the read.
zmodload zsh/zpty || exit 1
zpty -b z "TERM=vt100 zsh -f -i"
zpty -w z 'PS1="%% "; autoload -U compinit; compinit -u -D; print RE""ADY'
zpty -r z line '*READY*' && zpty -r z line '*% ' || exit 1
# the TAB, then (processed after it) Ctrl-A and a prefix that prints the line
zpty -w -n z "$*"$'\t\C-a print -r -- LI""NE:\n'
zpty -r z line '*LINE:*' && zpty -r z line $'*\n' || exit 1
print -r -- "${${line%%$'\r'*}# }"
zpty -d z
