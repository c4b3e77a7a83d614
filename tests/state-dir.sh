#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The daemon keeps its state only where no one else can reach it:
#  - a missing state directory is created 0700;
#  - a directory that is writable by its group or by everyone, or that
#    belongs to another user (root only: chown), makes it refuse to start
#    (exit 78) and leave the directory as it was;
#  - a symlink at the state path is not followed: the file it points to is
#    neither read nor written, and the first save replaces the link.
# Each start is one --once cycle with the default configuration.
#
# Exit status: 0 pass, 1 fail, 77 skipped (daemon not built).

set -u

top_builddir=${top_builddir:-$(pwd)}
preload="$top_builddir/src/preload"
[ -x "$preload" ] || { echo "SKIP: $preload is not built"; exit 77; }

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
failed=0
fail() {
	echo "FAIL: $*"
	failed=1
}

# once STATE: one cycle; the exit status, the log in $tmp/log.
once() {
	timeout 120 "$preload" --once -c '' -l '' -s "$1" > "$tmp/log" 2>&1
}

# 1. A missing directory is made 0700, the state saved in it 0600.
once "$tmp/new/preload/state"
status=$?
[ $status = 0 ] || fail "missing directory: exit status $status ($(cat "$tmp/log"))"
mode=$(stat -c %a "$tmp/new/preload" 2>/dev/null)
[ "$mode" = 700 ] || fail "missing directory: created with mode $mode, not 700"
[ -f "$tmp/new/preload/state" ] || fail "missing directory: no state saved"

# 2. Writable by others: refused at start, nothing written there.
for m in 777 1777 775; do
	dir="$tmp/shared-$m"
	mkdir "$dir"
	: > "$dir/state"
	chmod "$m" "$dir"
	once "$dir/state"
	status=$?
	[ $status = 78 ] || fail "mode $m: exit status $status, not 78"
	grep -q "refusing to use it" "$tmp/log" || fail "mode $m: no refusal in the log ($(cat "$tmp/log"))"
	[ "$(stat -c %a "$dir")" = "$m" ] || fail "mode $m: the directory's mode was changed"
	[ ! -s "$dir/state" ] || fail "mode $m: the state file was written"
	[ "$(ls "$dir")" = state ] || fail "mode $m: files were made there: $(ls "$dir")"
done

# 3. Another user's directory (root can make one to test with).
if [ "$(id -u)" = 0 ]; then
	dir="$tmp/theirs"
	mkdir -m 700 "$dir"
	chown 65534:65534 "$dir"
	once "$dir/state"
	status=$?
	[ $status = 78 ] || fail "another user's directory: exit status $status, not 78"
	grep -q "belongs to uid 65534" "$tmp/log" || fail "another user's directory: no refusal ($(cat "$tmp/log"))"
	[ -z "$(ls "$dir")" ] || fail "another user's directory: files were made there"
else
	echo "SKIP: another user's directory: needs root to chown"
fi

# 4. A symlink at the state path: the target, a good state of another
#    model, is not loaded and not changed; the save replaces the link.
mkdir -m 700 "$tmp/own"
once "$tmp/own/target"
[ -s "$tmp/own/target" ] || fail "symlink: no target state to point at"
cp "$tmp/own/target" "$tmp/target.before"
ln -s "$tmp/own/target" "$tmp/own/state"
once "$tmp/own/state"
status=$?
[ $status = 0 ] || fail "symlink: exit status $status"
grep -q "a symbolic link, not followed" "$tmp/log" || fail "symlink: followed ($(cat "$tmp/log"))"
cmp -s "$tmp/own/target" "$tmp/target.before" || fail "symlink: the target was changed"
[ -L "$tmp/own/state" ] && fail "symlink: the save did not replace the link"
[ -f "$tmp/own/state" ] || fail "symlink: no state saved in its place"

[ $failed = 0 ] && echo "PASS: state directory and path"
exit $failed
