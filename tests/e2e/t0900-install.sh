#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# t0900-install.sh - `cmake --install` with a prefix and DESTDIR lays out,
# every file under the prefix (the units starting the prefix's binary, the
# documents the man pages cite), the tool, the shared and static library, every public header, a pkg-config
# file and a CMake package that outside programs build against
# (examples/embed.c, tests/install/use_all.c using every header), and those
# programs read the fake GPUs and a recorded log through the installed
# library, with nothing of the source tree on their include path.
. "$TESTS_SRC/e2e/lib.sh"
BUILD=$(dirname "$TESTS_BIN")
SRC=$(dirname "$TESTS_SRC")
scenario 2gpu-h200.scn

expect_success 'install honours --prefix and DESTDIR' '
	DESTDIR=$T/stage cmake --install "$BUILD" --prefix /opt/vz >inst.log &&
	grep "^-- \(Installing\|Up-to-date\):" inst.log >paths && test "$(wc -l <paths)" -ge 30 &&
	! grep -v ": $T/stage/opt/vz/" paths &&
	for u in serve log daemon; do
		has "^ExecStart=/opt/vz/bin/vramz $u" $T/stage/opt/vz/lib/systemd/system/vramz-$u.service || exit 1
	done &&
	test -s $T/stage/opt/vz/share/doc/vramz/commands.md &&
	test -x $T/stage/opt/vz/bin/vramz &&
	ls $T/stage/opt/vz/lib*/libvramz.so.0 &&
	ls $T/stage/opt/vz/lib*/libvramz.a &&
	for h in "$SRC"/include/vramz/*.h; do
		cmp "$h" $T/stage/opt/vz/include/vramz/$(basename "$h") || exit 1
	done &&
	ls $T/stage/opt/vz/include/vramz >hdrs && has "^diagnose.h$" hdrs && has "^log.h$" hdrs &&
	ls $T/stage/opt/vz/lib*/pkgconfig/vramz.pc &&
	ls $T/stage/opt/vz/lib*/cmake/vramz/vramzConfig.cmake $T/stage/opt/vz/lib*/cmake/vramz/vramzConfigVersion.cmake
'

expect_success 'the man pages cite the documents by their installed path, each installed' '
	prefix=$(sed -n "s/^CMAKE_INSTALL_PREFIX:PATH=//p" "$BUILD/CMakeCache.txt") &&
	cat $T/stage/opt/vz/share/man/man1/*.1 >all.roff &&
	hasnt "[^/a-z]docs/" all.roff &&
	grep -oE "$prefix/share/doc/vramz/[a-z0-9_-]+\.md" all.roff | sort -u >cited &&
	test "$(wc -l <cited)" -ge 5 &&
	while read -r f; do
		test -s "$T/stage/opt/vz/${f#$prefix/}" || { echo "cited, not installed: $f"; exit 1; }
	done <cited
'

expect_success 'the shared library exports only vramz_ symbols' '
	so=$(ls $T/stage/opt/vz/lib*/libvramz.so.0) &&
	nm -D --defined-only "$so" | awk "{print \$3}" > syms &&
	has "^vramz_sample$" syms && hasnt "^(proc_|ctx_|field_|jw_|select_)" syms
'

expect_success 'an outside program builds with pkg-config and reads the GPUs' '
	cmake --install "$BUILD" --prefix $T/usr >/dev/null &&
	pc=$(dirname $(ls $T/usr/lib*/pkgconfig/vramz.pc)) &&
	san="" && { [ "${VRAMZ_SANITIZE:-0}" = 1 ] && san="-fsanitize=address,undefined"; true; } &&
	cc $san "$SRC/examples/embed.c" $(PKG_CONFIG_PATH=$pc pkg-config --cflags --libs vramz) \
		-Wl,-rpath,$(dirname $pc) -o embed &&
	./embed > out && has "GPU 0 NVIDIA H200: [0-9]+ of 143771 MiB used" out &&
	has "GPU 1 NVIDIA H200" out && has "pid 4200301 \(not visible here\): 62464 MiB" out
'

expect_success 'a program using every header builds with pkg-config alone and runs' '
	pc=$(dirname $(ls $T/usr/lib*/pkgconfig/vramz.pc)) &&
	san="" && { [ "${VRAMZ_SANITIZE:-0}" = 1 ] && san="-fsanitize=address,undefined"; true; } &&
	cc $san -std=c11 -Wall -Werror "$SRC/tests/install/use_all.c" \
		$(PKG_CONFIG_PATH=$pc pkg-config --cflags --libs vramz) \
		-Wl,-rpath,$(dirname $pc) -o use_all &&
	./use_all "$SRC/examples/h200-leak.csv" >out &&
	has "^log: [0-9]+ ticks, [1-9][0-9]* findings" out && has "^finding: leak " out &&
	has "^backend nvml vendor nvidia driver 580\.159\.04 gpus 0-1$" out &&
	has "^gpu 1 NVIDIA H200 vendor=nvidia backend=nvml$" out &&
	has "^health gpu 1 ecc_mode=on$" out && has "^events: 0 GPUs$" out
'

expect_success 'find_package(vramz) builds the same program, shared and static' '
	san="" && { [ "${VRAMZ_SANITIZE:-0}" = 1 ] && san="-fsanitize=address,undefined"; true; } &&
	cmake -S "$SRC/tests/install/cmake" -B cm -DCMAKE_PREFIX_PATH=$T/usr \
		-DCMAKE_C_FLAGS="$san" -DCMAKE_EXE_LINKER_FLAGS="$san" >cm.log 2>&1 &&
	cmake --build cm >>cm.log 2>&1 &&
	LD_LIBRARY_PATH=$(dirname $(ls $T/usr/lib*/libvramz.so.0)):$LD_LIBRARY_PATH \
		cm/use_all "$SRC/examples/h200-leak.csv" >out &&
	has "^finding: leak " out && has "^gpu 0 NVIDIA H200 vendor=nvidia" out &&
	cm/use_all_static "$SRC/examples/h200-leak.csv" >out2 && cmp out out2 &&
	! ldd cm/use_all_static | grep -q libvramz
'

expect_success 'the runtime version matches the header' '
	$T/usr/bin/vramz --version > v && has "vramz 0\.2\.0 \(library 0\.2\.0\)" v
'
finish
