#!/bin/bash
# Builds the libFuzzer harnesses against the sources and runs each for
# SECONDS (default 60) of wall time, one after the other.
#
#   tests/fuzz/run.sh [SECONDS] [HARNESS...]     harnesses: state conf proc mountinfo trace
#
# Needs clang with libFuzzer (Debian: clang, libclang-rt-14-dev), GLib and
# libproc2; not part of the normal build, which does not need clang. The
# corpus in tests/fuzz/corpus/<harness>/ is only read: new inputs go to a
# scratch corpus under $FUZZ_WORK (default /tmp/preload-fuzz), kept between
# runs, and a crash leaves its input there as crash-*. Exits 1 if any
# harness crashed, leaked or timed out.
#
# Environment: CC (default clang), FUZZ_WORK, FUZZ_RSS_MB (default 2048).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
seconds=${1:-60}
shift || true
harnesses=("$@")
[ ${#harnesses[@]} -gt 0 ] || harnesses=(state conf proc mountinfo trace)
CC=${CC:-clang}
work=${FUZZ_WORK:-/tmp/preload-fuzz}
rss=${FUZZ_RSS_MB:-2048}

mkdir -p "$work/build"
build=$work/build

# The sources include the configure-generated config.h; the few macros
# they need are written here so that no configure run is needed.
version=$(sed -n 's/^AC_INIT(\[preload\], \[\([^]]*\)\].*/\1/p' "$top/configure.ac")
cat > "$build/config.h.new" <<CONFIG
#define _GNU_SOURCE 1
#define _FILE_OFFSET_BITS 64
#define PACKAGE_NAME "preload"
#define PACKAGE_VERSION "${version:-0}"
#define HAVE_LINUX_FIEMAP_H 1
#define HAVE_LINUX_FS_H 1
CONFIG
cmp -s "$build/config.h.new" "$build/config.h" || mv "$build/config.h.new" "$build/config.h"
rm -f "$build/config.h.new"

pkgs="glib-2.0 libproc2"
cflags="-g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined
	-I$build -I$top/src -I$here $(pkg-config --cflags $pkgs)
	-DSYSCONFDIR=\"/etc\" -DLOCALSTATEDIR=\"/var\" -DPKGLOCALSTATEDIR=\"/var/lib/preload\"
	-DLOGDIR=\"/var/log\" -DG_LOG_DOMAIN=\"preload\" -Wall -Wextra -Wno-unused-parameter"
libs="$(pkg-config --libs $pkgs) -lm"
# Every daemon module but the one holding main(): a list kept by hand fell
# behind each time a module gained a new dependency.
modules=$(cd "$top/src" && for f in *.c; do [ "$f" = preload.c ] || echo "${f%.c}"; done)

echo "== building the harnesses in $build"
objs=()
for m in $modules; do
	# shellcheck disable=SC2086
	$CC $cflags -fsanitize=fuzzer-no-link -c "$top/src/$m.c" -o "$build/$m.o"
	objs+=("$build/$m.o")
done
for h in "${harnesses[@]}"; do
	# shellcheck disable=SC2086
	$CC $cflags -fsanitize=fuzzer "$here/fuzz_$h.c" "${objs[@]}" $libs -o "$build/fuzz_$h"
done

status=0
for h in "${harnesses[@]}"; do
	corpus=$work/corpus/$h
	artifacts=$work/artifacts/$h/
	mkdir -p "$corpus" "$artifacts"
	echo "== fuzz_$h: ${seconds}s, seeds from tests/fuzz/corpus/$h"
	log=$work/fuzz_$h.log
	set +e
	"$build/fuzz_$h" "$corpus" "$here/corpus/$h" \
		-max_total_time="$seconds" -rss_limit_mb="$rss" -timeout=10 \
		-max_len=65536 -artifact_prefix="$artifacts" -print_final_stats=1 \
		> "$log" 2>&1
	rc=$?
	set -e
	grep -E '^stat::number_of_executed_units|^stat::peak_rss_mb|^Done [0-9]+ runs|^#[0-9]+ *DONE' "$log" || true
	if [ $rc -ne 0 ]; then
		status=1
		echo "!! fuzz_$h failed (exit $rc); the end of $log:"
		tail -40 "$log"
		ls -l "$artifacts"
	else
		echo "   fuzz_$h: no crash"
	fi
done
exit $status
