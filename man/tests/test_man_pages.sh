#!/bin/sh
# Every installed program has a manual page, and every installed page renders without a
# warning (groff -ww) and has a NAME line mandb can index (lexgrog). The lists come from the
# Makefile (RDMAEMU_BIN_PROGRAMS, RDMAEMU_BIN_SCRIPTS, RDMAEMU_MANS); a page or program added
# there is checked without touching this test.
src=${RDMAEMU_TOP_SRCDIR:?}
fail=0
command -v groff >/dev/null 2>&1 || { echo "SKIP: groff is not installed"; exit 77; }
command -v lexgrog >/dev/null 2>&1 || { echo "SKIP: lexgrog (man-db) is not installed"; exit 77; }
[ -n "${RDMAEMU_MANS:-}" ] || { echo "FAIL: RDMAEMU_MANS is empty"; exit 1; }

for prog in ${RDMAEMU_BIN_PROGRAMS:-} ${RDMAEMU_BIN_SCRIPTS:-}; do
	name=${prog##*/}
	found=
	for m in $RDMAEMU_MANS; do
		[ "${m##*/}" = "$name.1" ] && found=$m
	done
	if [ -n "$found" ]; then
		echo "ok: $name has $found"
	else
		echo "FAIL: the installed program $name has no man/$name.1"
		fail=1
	fi
done

for m in $RDMAEMU_MANS; do
	out=$(LC_ALL=C.UTF-8 groff -ww -z -man -k "$src/$m" 2>&1)
	if [ -n "$out" ]; then
		echo "FAIL: $m: groff warns:"
		printf '%s\n' "$out"
		fail=1
	else
		echo "ok: $m renders without warnings"
	fi
	base=${m##*/}
	if lexgrog "$src/$m" 2>&1 | grep -q ": \"${base%.*} - "; then
		echo "ok: $m has a NAME line for ${base%.*}"
	else
		echo "FAIL: $m: lexgrog finds no NAME line for ${base%.*}:"
		lexgrog "$src/$m" 2>&1
		fail=1
	fi
done
exit $fail
