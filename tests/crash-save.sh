#!/bin/bash
# Kill-during-save: a process saving a large model over and over (two
# models, A and B, in turn) is killed with SIGKILL at random moments,
# ITERATIONS times; after each kill the state file must load as exactly A
# or exactly B (never an error, a mix or nothing), with at most one
# temporary file beside it. See tests/helpers/save-victim.c.
#
#   tests/crash-save.sh [ITERATIONS [EXES [SEED]]]
#
# `make check` runs 200 kills of a 60-executable model (1770 chains,
# about 0.4 MB); a longer run: tests/crash-save.sh 2000 200.
set -eu

iterations=${1:-200}
exes=${2:-60}
seed=${3:-$(date +%s)}
builddir=${top_builddir:-$(cd "$(dirname "$0")/.." && pwd)}
victim=$builddir/tests/helpers/save-victim

if [ ! -x "$victim" ]; then
	echo "crash-save: $victim not built (make check builds it)" >&2
	exit 99
fi

dir=$(mktemp -d "${TMPDIR:-/tmp}/preload-crash-save.XXXXXX")
trap 'rm -rf "$dir"' EXIT
state=$dir/state

"$victim" init "$state" "$exes"
echo "crash-save: $iterations kills of a saver of $exes executables (seed $seed)"
if ! "$victim" torture "$state" "$exes" "$iterations" "$seed"; then
	echo "crash-save: FAILED; rerun with: $0 $iterations $exes $seed" >&2
	exit 1
fi

# A fresh process (not the one that ran the loop) reads the result too.
"$victim" check "$state" "$exes"
