#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The launch benchmark's namespace set, built but not run
# (tests/bench/launch.sh -s ns -T, root): perl's tree in an overlay and
# python3's in a squashfs image are made from copies of this host's files,
# each program runs in its own, the manifests name the files where they
# lie here and the host's files of the same names apart, and everything
# mounted is gone afterwards. No daemon runs, nothing is timed and the
# page cache is not dropped: a few seconds, so that the benchmark's set
# cannot rot between runs.
#
# Exit status: 0 pass, 1 fail, 77 skipped (not root, or no strace,
# squashfs-tools, overlayfs, python3 or perl).

set -u

top_builddir=${top_builddir:-$(pwd)}
top_srcdir=${top_srcdir:-$top_builddir}

[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (mounts, chroot)"; exit 77; }

out=$(mktemp -d "$top_builddir/launch-ns.XXXXXX")
trap 'rm -rf "$out"' EXIT INT TERM

fail() {
	echo "FAIL: $*"
	echo "---- launch.sh ----"
	cat "$out/log"
	exit 1
}

top_builddir=$top_builddir "$top_srcdir/tests/bench/launch.sh" -s ns -T -o "$out" > "$out/log" 2>&1
rc=$?
if [ "$rc" = 77 ]; then
	echo "SKIP: $(tail -n 1 "$out/log")"
	exit 77
fi
[ "$rc" = 0 ] || fail "launch.sh -s ns -T exited $rc"
root="$out/root"

# The programs by their files here: perl's in the overlay's merged
# directory, python3's in the squashfs mount.
py=$(grep -m 1 "^$root/sq/usr/bin/python3" "$out/exes") ||
	fail "python3 is not among the executables: $(cat "$out/exes")"
grep -qx "mmap 0 $py" "$out/python-squashfs.manifest" || fail "python3's manifest lacks $py"
grep -qx "mmap 0 $root/ov/merged/usr/bin/perl" "$out/perl-overlay.manifest" ||
	fail "perl's manifest lacks $root/ov/merged/usr/bin/perl"
# Every file of a manifest lies in its tree.
for m in perl-overlay python-squashfs; do
	n=$(grep -c . "$out/$m.manifest")
	[ "$n" -ge 20 ] || fail "$m: only $n files in its manifest"
	outside=$(grep -v -c -e " $root/ov/merged/" -e " $root/sq/" "$out/$m.manifest")
	[ "$outside" = 0 ] || fail "$m: $outside files outside the trees"
	h=$(grep -c . "$out/$m.host")
	[ "$h" -ge 10 ] || fail "$m: only $h host files of the same names"
done
hostpy=${py#"$root/sq"}
grep -qx "mmap 0 $hostpy" "$out/python-squashfs.host" || fail "python3's host files lack $hostpy"
# python3 runs in a private namespace, where it sees /usr/bin/python3.N:
# that name is admitted too. perl is chrooted here, where its path is the
# tree's.
grep -qx "$hostpy" "$out/exes" || fail "$hostpy is not admitted"
grep -q "^/usr/bin/perl" "$out/exes" && fail "the host's perl is admitted"
# Each program ran in its tree (launch.sh checks the exit status), and
# nothing stays mounted or attached.
grep -q " $out/" /proc/mounts && fail "still mounted: $(grep " $out/" /proc/mounts)"
[ -z "$(losetup -j "$out/python.sqfs")" ] || fail "the image's loop device is still attached"
echo "ok - namespace set built: $(grep -c . "$out/perl-overlay.manifest") files for perl (overlay), $(grep -c . "$out/python-squashfs.manifest") for python3 (squashfs), none the host's"
echo "launch-ns: 1 passed, 0 failed"
