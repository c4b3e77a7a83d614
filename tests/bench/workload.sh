#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# A repeatable desktop-like workload of real programs for the cost and
# launch benchmarks: "sessions" of two or three applications that run
# together for 30-70 s, chosen by a seeded Markov walk so that some
# applications habitually follow others, with short pauses between.
# Every program stays alive longer than a 20 s cycle so a /proc scanner
# can see it.
#
#   workload.sh SECONDS [SEED]
set -u

duration=${1:?usage: workload.sh SECONDS [SEED]}
RANDOM=${2:-1}

java_src=$(mktemp --suffix=.java)
trap 'rm -f "$java_src"; pkill -P $$ 2>/dev/null' EXIT
cat > "$java_src" <<'JAVA'
public class Sleep { public static void main(String[] a) throws Exception { Thread.sleep(Long.parseLong(a[0]) * 1000); } }
JAVA

app() { # NAME SECONDS: start one application in the background
	local s=$2
	case $1 in
	python) /usr/bin/python3 -c "import email, json, http.client, time; time.sleep($s)" ;;
	perl) /usr/bin/perl -MCPAN -e "sleep $s" ;;
	node) /usr/bin/node -e "setTimeout(() => {}, $s * 1000)" ;;
	java) /usr/bin/java "$java_src" "$s" ;;
	gdb) /usr/bin/gdb -q -batch -ex "shell sleep $s" ;;
	tcl) echo "after ${s}000" | /usr/bin/tclsh ;;
	vim) /usr/bin/vim -es -N -u NONE -c "sleep ${s}" -c 'qa!' ;;
	esac > /dev/null 2>&1 &
}

# Sessions and the sessions that usually follow each one.
sessions=("python perl" "node gdb" "java tcl" "vim python" "perl node gdb")
next=("1 1 2" "2 3 3" "0 0 4" "4 4 1" "0 2 0")

end=$((SECONDS + duration))
s=0
while [ "$SECONDS" -lt "$end" ]; do
	len=$((30 + RANDOM % 41))
	left=$((end - SECONDS))
	[ "$len" -gt "$left" ] && len=$left
	[ "$len" -lt 1 ] && break
	echo "$(date +%T) session $s: ${sessions[$s]} for ${len}s"
	for a in ${sessions[$s]}; do
		app "$a" "$len"
		sleep 2
	done
	wait
	sleep $((5 + RANDOM % 10))
	read -r -a choices <<< "${next[$s]}"
	s=${choices[$((RANDOM % ${#choices[@]}))]}
done
