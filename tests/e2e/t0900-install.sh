#!/bin/bash
# t0900-install.sh - `cmake --install` with a prefix and DESTDIR lays out the
# tool, the shared and static library, the header and a pkg-config file that
# an outside program builds against (examples/embed.c), and that program
# reads the fake GPUs through the installed shared library.
. "$TESTS_SRC/e2e/lib.sh"
BUILD=$(dirname "$TESTS_BIN")
SRC=$(dirname "$TESTS_SRC")
scenario 2gpu-h200.scn

expect_success 'install honours --prefix and DESTDIR' '
	DESTDIR=$T/stage cmake --install "$BUILD" --prefix /opt/vz >inst.log &&
	test -x $T/stage/opt/vz/bin/vramz &&
	ls $T/stage/opt/vz/lib*/libvramz.so.0 &&
	ls $T/stage/opt/vz/lib*/libvramz.a &&
	test -f $T/stage/opt/vz/include/vramz/vramz.h &&
	ls $T/stage/opt/vz/lib*/pkgconfig/vramz.pc
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

expect_success 'the runtime version matches the header' '
	$T/usr/bin/vramz --version > v && has "vramz 0\.2\.0 \(library 0\.2\.0\)" v
'
finish
