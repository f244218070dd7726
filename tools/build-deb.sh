#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# build-deb.sh [OUTDIR] - the Debian packages of this tree (vramz,
# libvramz0, libvramz-dev, python3-vramz and the -dbgsym packages of the
# first two) into OUTDIR (default build-deb/), with debhelper from
# packaging/debian/.  dpkg-buildpackage wants debian/ at the top of the
# source and writes beside it, so the tree is copied first: the files git
# knows (committed or not) in a clone, else all but build directories.
# Needs what tools/bootstrap.sh installs (debhelper, dh-python); not root.
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$src/build-deb}
mkdir -p "$out"
out=$(cd "$out" && pwd)
ver=$(sed -n 's/^#define VRAMZ_VERSION_STRING "\(.*\)"$/\1/p' "$src/include/vramz/vramz.h")
deb=$(sed -n '1s/^vramz (\([^)-]*\)-.*/\1/p' "$src/packaging/debian/changelog")
if [ "$ver" != "$deb" ]; then
	echo "build-deb: packaging/debian/changelog is at $deb, the tree at $ver: add an entry (dch -v $ver-1)" >&2
	exit 1
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/vramz-deb.XXXXXX")
trap 'rm -rf "$work"' EXIT
tree=$work/vramz-$ver
mkdir -p "$tree"
if git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	(cd "$src" && git ls-files -z --cached --others --exclude-standard |
		xargs -0 sh -c 'for f; do [ -e "$f" ] && printf "%s\0" "$f"; done' _ |
		tar --null -T - -cf -) | tar -C "$tree" -xf -
else
	(cd "$src" && tar --exclude='./build*' --exclude=__pycache__ --exclude=./.git -cf - .) |
		tar -C "$tree" -xf -
fi
cp -r "$tree/packaging/debian" "$tree/debian"
jobs=$(nproc 2>/dev/null || echo 2)
(cd "$tree" && DEB_BUILD_OPTIONS="parallel=$jobs ${DEB_BUILD_OPTIONS:-}" \
	dpkg-buildpackage -b -uc -us) >"$work/build.log" 2>&1 ||
	{ tail -40 "$work/build.log" >&2; echo "build-deb: dpkg-buildpackage failed" >&2; exit 1; }
cp "$work/build.log" "$out/build.log"
for f in "$work"/*.deb "$work"/*.ddeb "$work"/*.changes "$work"/*.buildinfo; do
	[ -e "$f" ] && cp "$f" "$out/"
done
ls "$out"/*.deb
