#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# internal-api.sh - the tool (src/) sees only the library's public headers
# (include/vramz/) and its internal API (lib/internal/, a prose header
# each); the rest of lib/ is the library's own.  The build enforces it with
# include paths (src/CMakeLists.txt names lib/internal, not lib); this
# catches what include paths cannot: a relative path out of src/
# ("../../lib/backend.h").  Lists each offending include as FILE:LINE and
# exits 1; ctest runs it as lint.internal_api.
set -eu
cd "$(dirname "$0")/.."
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for f in $(find src -name '*.[ch]'); do
	dir=$(dirname "$f")
	grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f" | while IFS= read -r line; do
		n=${line%%:*}
		inc=$(printf '%s\n' "$line" | sed 's/.*include[[:space:]]*"\([^"]*\)".*/\1/')
		case "$inc" in *..*)
			echo "$f:$n: #include \"$inc\" reaches out of src/ (use lib/internal/ or include/)"
			echo bad; continue ;;
		esac
		# a header the build generates is named as an OUTPUT in src/CMakeLists.txt
		[ -f "$dir/$inc" ] || [ -f "src/$inc" ] || [ -f "lib/internal/$inc" ] || [ -f "include/$inc" ] ||
			grep -q "OUTPUT.*$inc" src/CMakeLists.txt ||
			{ echo "$f:$n: #include \"$inc\" is not in src/, lib/internal/ or include/"; echo bad; }
	done
done >"$out"
if grep -q '^bad$' "$out"; then
	grep -v '^bad$' "$out"
	exit 1
fi
echo "src/ includes only include/, lib/internal/ and its own headers"
