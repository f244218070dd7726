#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# spdx.sh [--fix] - every source file and every script of vramz carries
# the line "SPDX-License-Identifier: Apache-2.0" within its first five
# lines.  A script is any file whose first line is a #! line, whatever its
# name (.ci/run, packaging/debian/rules, tests/helpers/*); data files
# (scenarios, corpora, recordings, images) are covered by REUSE.toml.
# Without --fix it lists the files that do not and exits 1 (ctest runs it
# as lint.spdx); with --fix it adds the line, after a #! line if there is
# one, in the file's comment syntax.  Source files are found with find, not
# git, so a tarball is checked the same way as a clone.  Debian's
# changelog and source/format have formats without comments (copyright
# names the licence in its own fields): they are left out.
set -eu
cd "$(dirname "$0")/.."
fix=0
[ "${1:-}" = --fix ] && fix=1
tag="SPDX-License-Identifier: Apache-2.0"
bad=0
files=$(find include lib src tests tools bench python examples packaging \
	-path '*/__pycache__' -prune -o -type f \( -name '*.[ch]' -o -name '*.py' \
	-o -name '*.sh' -o -name 'CMakeLists.txt' -o -name '*.cmake' -o -name '*.in' \
	-o -name Dockerfile -o -name '*.yml' -o -name '*.yaml' -o -name '*.service' -o -name '*.toml' -o -name '*.pth' -o -path '*/helpers/*' -o -path 'packaging/debian/*' \) -print |
	grep -v -e '/corpus' -e '\.scn$' -e 'packaging/debian/\(copyright\|changelog\|source/format\)$' -e 'packaging/debian/.*\.\(md\|txt\)$' | sort)
# scripts without a known suffix: the first line says #!
scripts=$(find include lib src tests tools bench python examples packaging .ci \
	-path '*/__pycache__' -prune -o -path '*/corpus*' -prune -o -type f \
	-exec awk 'FNR == 1 { if (/^#!/) print FILENAME; nextfile }' {} + | sort)
files=$(printf '%s\n' CMakeLists.txt $files $scripts | sort -u)
for f in $files; do
	head -n 5 "$f" | grep -q "$tag" && continue
	if [ $fix -eq 0 ]; then
		echo "$f: no '$tag' in its first five lines"
		bad=1
		continue
	fi
	case "$f" in
	*.[ch]) line="/* $tag */" ;;
	*) line="# $tag" ;;
	esac
	if head -n 1 "$f" | grep -q '^#!'; then
		{ head -n 1 "$f"; echo "$line"; tail -n +2 "$f"; } >"$f.spdx"
	else
		{ echo "$line"; cat "$f"; } >"$f.spdx"
	fi
	cat "$f.spdx" >"$f" && rm -f "$f.spdx"
done
exit $bad
