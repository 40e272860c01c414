#!/bin/sh
# install.sh BUILD_DIR CC - libkmsg as another project uses it once installed.
#
# Installs the build into a temporary prefix (cmake --install --prefix), then
# builds one small program against what was installed, four ways: with the
# flags pkg-config gives for libkmsg (shared; and --static, a program with
# no libkmsg.so to find), and as a CMake project that calls find_package(kmsg)
# and links kmsg::kmsg, then kmsg::kmsg_static.  Each build must run: create
# a log, append a line, read it back, then again from a dump of the log (so
# zlib, a dependency of the static library, is linked in), and name the
# library's version, which must be the one pkg-config, CMake and kmsg
# --version name.  Last, the
# installed libkmsg.so must export kmsg_* symbols only, none of the kmsg__*
# internals, each at a version of lib/libkmsg.map.
set -u
BUILD=$1 CC=$2
T=$(mktemp -d "${TMPDIR:-/tmp}/kmsg-install-XXXXXX")
trap 'rm -rf "$T"' EXIT
failed=0 passed=0
ok()   { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)); printf 'FAIL: %s\n' "$*" >&2; }

if ! cmake --install "$BUILD" --prefix "$T/usr" >"$T/install.log" 2>&1; then
	cat "$T/install.log" >&2
	echo "install.sh: cmake --install failed" >&2
	exit 1
fi
if ! command -v pkg-config >/dev/null; then
	echo "install.sh: pkg-config is not installed (tools/deps installs it)" >&2
	exit 1
fi
version=$("$T/usr/bin/kmsg" --version | sed 's/^kmsg //')

mkdir "$T/src" "$T/logs"
cat >"$T/src/demo.c" <<'C'
#include <kmsg/kmsg.h>

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* prints the text of the first record of log; 1 if it did */
static int print_first(struct kmsg_log *log)
{
	struct kmsg_reader *r;
	struct kmsg_record rec;
	int n = kmsg_reader_new(&r, log, 0);

	if (n < 0)
		return n;
	n = kmsg_reader_next(r, &rec);
	if (n == 1)
		printf(" %.*s", (int)rec.text_len, rec.text);
	kmsg_reader_free(r);
	return n;
}

/* demo LOG TEXT: appends TEXT to a new LOG, reads it back, and again from a
 * dump of LOG (which zlib writes and reads) */
int main(int argc, char **argv)
{
	struct kmsg_log *log = NULL, *dump = NULL;
	char path[4096];
	int fd = -1, n;

	if (argc != 3 || strcmp(kmsg_version(), KMSG_VERSION_STRING) != 0)
		return 2;
	printf("%s %d.%d.%d", kmsg_version(), KMSG_VERSION_MAJOR, KMSG_VERSION_MINOR,
	       KMSG_VERSION_PATCH);
	snprintf(path, sizeof(path), "%s.gz", argv[1]);
	n = kmsg_log_create(&log, argv[1], NULL, 0);
	if (n >= 0)
		n = kmsg_log_print(log, 1, 6, argv[2], strlen(argv[2]));
	if (n >= 0)
		n = print_first(log);
	if (n >= 0) {
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
		n = fd < 0 ? -1 : kmsg_dump_write(NULL, log, fd, -1);
	}
	if (n >= 0)
		n = kmsg_dump_open(&dump, path);
	if (n >= 0)
		n = print_first(dump);
	printf("\n");
	if (n < 0)
		fprintf(stderr, "demo: %s: %s\n", argv[1], kmsg_strerror(n));
	if (fd >= 0)
		close(fd);
	kmsg_log_close(dump);
	kmsg_log_close(log);
	return n == 1 ? 0 : 1;
}
C

# run NAME PROGRAM: the program appends a line to a log of its own and must
# read it back, from the log and from a dump, at the installed version
run() {
	if out=$("$2" "$T/logs/$1" "hello from $1" 2>&1) &&
	   [ "$out" = "$version $version hello from $1 hello from $1" ]; then
		ok
	else
		fail "$1: want [$version $version hello from $1 hello from $1], got [$out]"
	fi
}

# needs_libkmsg_so PROGRAM: whether the program loads a libkmsg.so
needs_libkmsg_so() { readelf -d "$1" | grep -q 'NEEDED.*libkmsg\.so'; }

# ---- pkg-config ------------------------------------------------------------
export PKG_CONFIG_PATH="$T/usr/lib/pkgconfig"
got=$(pkg-config --modversion libkmsg 2>&1)
[ "$got" = "$version" ] && ok || fail "pkg-config --modversion libkmsg: want [$version], got [$got]"

libdir=$(pkg-config --variable=libdir libkmsg)
# shellcheck disable=SC2046 # pkg-config's flags are words
if "$CC" -o "$T/demo-pc" "$T/src/demo.c" $(pkg-config --cflags --libs libkmsg) \
	-Wl,-rpath,"$libdir" 2>"$T/cc.err"; then
	run pkg-config "$T/demo-pc"
	ldd "$T/demo-pc" | grep -q "=> $T/usr/lib/libkmsg\.so" && ok ||
		fail "pkg-config: the program does not load the installed libkmsg.so: $(ldd "$T/demo-pc")"
else
	fail "pkg-config: cc \$(pkg-config --cflags --libs libkmsg): $(head -c 500 "$T/cc.err")"
fi

# The static library alone must link with what --static adds (zlib, threads).
# shellcheck disable=SC2046
if "$CC" -static -o "$T/demo-pc-static" "$T/src/demo.c" \
	$(pkg-config --cflags --libs --static libkmsg) 2>"$T/cc.err"; then
	run pkg-config-static "$T/demo-pc-static"
	needs_libkmsg_so "$T/demo-pc-static" && fail "pkg-config --static: linked libkmsg.so" || ok
else
	fail "pkg-config --static: cc -static \$(pkg-config --cflags --libs --static libkmsg):" \
		"$(head -c 500 "$T/cc.err")"
fi

# ---- CMake -----------------------------------------------------------------
cat >"$T/src/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.18)
project(demo LANGUAGES C)
find_package(kmsg REQUIRED)
add_executable(demo-cmake demo.c)
target_link_libraries(demo-cmake PRIVATE kmsg::kmsg)
add_executable(demo-cmake-static demo.c)
target_link_libraries(demo-cmake-static PRIVATE kmsg::kmsg_static)
file(WRITE ${CMAKE_BINARY_DIR}/kmsg-version "${kmsg_VERSION}")
CMAKE
if cmake -S "$T/src" -B "$T/cmake" -DCMAKE_C_COMPILER="$CC" \
	-DCMAKE_PREFIX_PATH="$T/usr" >"$T/cmake.log" 2>&1 &&
   cmake --build "$T/cmake" >>"$T/cmake.log" 2>&1; then
	expect=$version got=$(cat "$T/cmake/kmsg-version")
	[ "$got" = "$expect" ] && ok || fail "find_package(kmsg): kmsg_VERSION [$got], want [$expect]"
	run cmake "$T/cmake/demo-cmake"
	ldd "$T/cmake/demo-cmake" | grep -q "=> $T/usr/lib/libkmsg\.so" && ok ||
		fail "kmsg::kmsg: the program does not load the installed libkmsg.so"
	run cmake-static "$T/cmake/demo-cmake-static"
	needs_libkmsg_so "$T/cmake/demo-cmake-static" && fail "kmsg::kmsg_static: linked libkmsg.so" || ok
else
	fail "find_package(kmsg): $(tail -c 1000 "$T/cmake.log")"
fi

# ---- the shared library's exports --------------------------------------------
nm -D --defined-only "$T/usr/lib/libkmsg.so" | awk '{ print $3 }' >"$T/syms"
grep -q '^kmsg_version@@KMSG_0\.1$' "$T/syms" && ok ||
	fail "libkmsg.so: no kmsg_version@@KMSG_0.1: $(head -5 "$T/syms" | tr '\n' ' ')"
if grep -v -e '^kmsg_[a-z][a-z0-9_]*@@KMSG_[0-9.]*$' -e '^KMSG_[0-9.]*$' "$T/syms" >"$T/stray"; then
	fail "libkmsg.so exports more than kmsg_*@@KMSG_*: $(head -10 "$T/stray" | tr '\n' ' ')"
else
	ok
fi

# ---- the systemd units -------------------------------------------------------
# Installed, checked by systemd's own verifier where it is, and the dump
# service's command run as systemd runs it (%% is %), on a log of the
# test's own and with the kmsg just installed.
U=$T/usr/lib/systemd/system
if [ -f "$U/kmsg-dump.service" ] && [ -f "$U/kmsg-dump.timer" ]; then ok; else
	fail "no kmsg-dump.service and kmsg-dump.timer in $U"; fi
if [ -f "$U/kmsg-listen.service" ] && [ -f "$U/kmsg-listen.socket" ]; then ok; else
	fail "no kmsg-listen.service and kmsg-listen.socket in $U"; fi
# (the listen service's kmsg is where it will be installed, not yet
# there: the copy verified names the kmsg just installed)
mkdir "$T/units"
cp "$U/kmsg-listen.socket" "$T/units/"
sed "s#^ExecStart=/[^ ]*/kmsg #ExecStart=$T/usr/bin/kmsg #" "$U/kmsg-listen.service" \
	>"$T/units/kmsg-listen.service"
if command -v systemd-analyze >/dev/null; then
	if systemd-analyze verify --man=no "$U/kmsg-dump.service" "$U/kmsg-dump.timer" \
		>"$T/verify.log" 2>&1; then ok; else fail "systemd-analyze verify: $(cat "$T/verify.log")"; fi
	# apart: with $U in the search path, its copy of the service is found
	if systemd-analyze verify --man=no "$T/units/kmsg-listen.socket" \
		"$T/units/kmsg-listen.service" >"$T/verify.log" 2>&1; then ok; else
		fail "systemd-analyze verify: $(cat "$T/verify.log")"; fi
fi
# kmsg-ship@.service: an instance of it verified, its kmsg the one installed
if [ -f "$U/kmsg-ship@.service" ]; then ok; else fail "no kmsg-ship@.service in $U"; fi
sed "s#^ExecStart=/[^ ]*/kmsg #ExecStart=$T/usr/bin/kmsg #" "$U/kmsg-ship@.service" \
	>"$T/units/kmsg-ship@central.service"
if command -v systemd-analyze >/dev/null; then
	if systemd-analyze verify --man=no "$T/units/kmsg-ship@central.service" \
		>"$T/verify.log" 2>&1; then ok; else fail "systemd-analyze verify: $(cat "$T/verify.log")"; fi
fi
# the listen service runs kmsg by its full path, and its socket is not
# the /dev/log that journald owns
if grep -q '^ExecStart=/[^ ]*/kmsg listen$' "$U/kmsg-listen.service"; then ok; else
	fail "kmsg-listen.service's ExecStart: $(grep ExecStart "$U/kmsg-listen.service")"; fi
if grep -q '^ListenDatagram=/dev/log' "$U/kmsg-listen.socket"; then
	fail "kmsg-listen.socket takes /dev/log by default"; else ok; fi
# the kernel's copier: installed, verified (with the kmsg just installed
# in its command), and started early, as kmsg kernel --follow
if [ -f "$U/kmsg-kernel.service" ]; then ok; else fail "no kmsg-kernel.service in $U"; fi
if grep -q '^ExecStart=/[^ ]*/kmsg kernel --follow$' "$U/kmsg-kernel.service" &&
	grep -q '^WantedBy=sysinit.target$' "$U/kmsg-kernel.service"; then ok; else
	fail "kmsg-kernel.service: $(grep -E 'ExecStart|WantedBy' "$U/kmsg-kernel.service")"; fi
sed "s#^ExecStart=/[^ ]*/kmsg #ExecStart=$T/usr/bin/kmsg #" "$U/kmsg-kernel.service" \
	>"$T/units/kmsg-kernel.service"
if command -v systemd-analyze >/dev/null; then
	if systemd-analyze verify --man=no "$T/units/kmsg-kernel.service" >"$T/verify.log" 2>&1
	then ok; else fail "systemd-analyze verify: $(cat "$T/verify.log")"; fi
fi
exec_start=$(sed -n 's/^ExecStart=\/bin\/sh -c //p' "$U/kmsg-dump.service" |
	sed "s/^'//; s/'\$//; s/%%/%/g; s#[^ ]*/kmsg dump#$T/usr/bin/kmsg dump#")
"$T/usr/bin/kmsg" emit -F "$T/logs/unit.kmsg" "kept by the timer"
mkdir "$T/archive"
if KMSG_FILE=$T/logs/unit.kmsg KMSG_ARCHIVE=$T/archive sh -c "$exec_start" 2>"$T/unit.err" &&
	"$T/usr/bin/kmsg" read -t -F "$T"/archive/kmsg-*Z.kmsg.gz >"$T/unit.out" 2>>"$T/unit.err" &&
	[ "$(cat "$T/unit.out")" = "kept by the timer" ]; then ok; else
	fail "kmsg-dump.service's command ($exec_start): $(cat "$T/unit.err")"; fi

printf 'install: %d passed, %d failed\n' "$passed" "$failed"
[ "$failed" = 0 ]
