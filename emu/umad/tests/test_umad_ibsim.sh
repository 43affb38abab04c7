#!/bin/sh
# infiniband-diags on the emulated fabric against the same commands on OpenSM and ibsim
# (scripts/ibsim-ref, fixtures/golden/ibsim: the reference for fixtures/ib.fabric's subnet):
# every command of fixtures/golden/ibsim/commands runs from host ib-a on the emulated
# libibumad.so.3, and each line that differs from the reference's output is a failure unless
# fixtures/conformance/ibsim-tools.deviations lists its field for that command with a reason.
# A listed field that no longer differs fails too (the list only shrinks by editing it). And a
# fabric loaded from the reference's ibnetdiscover output must discover as that very file.
#   deviations: PATTERN<TAB>FIELD<TAB>REASON; PATTERN shell patterns of command names (several
#   separated by commas), FIELD
#   the text before a line's dots or colon ('*': every field, for a command whose answer the
#   emulator does not give yet).
# Closing line: ibsim-tools: N commands, E equal, L differ in listed fields only, U unexplained
set -u
b=${RDMAEMU_TOP_BUILDDIR:-.}
s=${RDMAEMU_TOP_SRCDIR:-.}
ref=$s/fixtures/golden/ibsim
dev=$s/fixtures/conformance/ibsim-tools.deviations
. "$s/emu/umad/tests/umad_test_env.sh"

tab=$(printf '\t')
: >"$tmp/fields"
while IFS="$tab" read -r name cmd; do
	case $name in ''|'#'*) continue ;; esac
	echo "$name" >>"$tmp/names"
	sh -c "$cmd" >"$tmp/$name.out" 2>/dev/null </dev/null
	# the fields of the differing lines; an indented line without a field (CapMask's flag
	# names) belongs to the field above it
	diff -U0 "$ref/$name.out" "$tmp/$name.out" | awk -v N="$name" '
		/^@@/ { last = ""; next }
		/^(---|\+\+\+)/ { next }
		/^[-+]/ {
			l = substr($0, 2); sub(/^[ \t]+/, "", l); k = l
			if (match(k, /\.\.|:/)) k = substr(k, 1, RSTART - 1)
			else if (last != "") k = last
			last = k
			print N "\t" k
		}' | sort -u >>"$tmp/fields"
done <"$s/fixtures/golden/ibsim/commands"

# a fabric built from the reference's own ibnetdiscover output: ibnetdiscover on it prints
# that file again, line for line
rc=0
fx=$(cd "$s/fixtures" && pwd)
sed -e "s|^topology .*|topology $fx/golden/ibsim/ibnetdiscover.out|" \
	-e "s|^hosts-data \([^/].*\)|hosts-data $fx/\1|" "$fx/ib.fabric" \
	>"$tmp/from-ibnd.fabric"
RDMAEMU_FABRIC="$tmp/from-ibnd.fabric" ibnetdiscover 2>&1 |
	sed '/^#.Topology.file:.generated.on/d' >"$tmp/again.out"
if diff -u "$ref/ibnetdiscover.out" "$tmp/again.out"; then
	echo "ok: a fabric loaded from OpenSM/ibsim's ibnetdiscover output discovers as that file"
else
	echo "FAIL: ibnetdiscover of a fabric loaded from $ref/ibnetdiscover.out differs from it"
	rc=1
fi

awk -F'\t' -v DEV="$dev" -v NAMES="$tmp/names" '
function glob2re(p) {
	gsub(/[.+^$(){}|\\]/, "\\\\&", p)
	gsub(/\*/, ".*", p); gsub(/\?/, ".", p)
	return "^" p "$"
}
function globs2re(l,    n, g, i, r) {
	n = split(l, g, ",")
	for (i = 1; i <= n; i++) r = r (i > 1 ? "|" : "") glob2re(g[i])
	return r
}
BEGIN {
	while ((getline l < DEV) > 0) {
		if (l ~ /^[ \t]*(#|$)/) continue
		split(l, f, "\t")
		if (f[3] == "") { print "ibsim-tools: " DEV ": no reason for " f[1] " " f[2]; bad = 1 }
		nd++; pat[nd] = globs2re(f[1]); fld[nd] = f[2]; txt[nd] = f[1] "\t" f[2]
	}
	while ((getline l < NAMES) > 0) { nn++; order[nn] = l }
}
{
	diffs[$1] = 1
	ok = 0
	for (i = 1; i <= nd; i++)
		if ($1 ~ pat[i] && (fld[i] == "*" || fld[i] == $2)) { used[i] = 1; ok = 1 }
	if (!ok) { print "UNEXPLAINED " $1 ": field " $2 " differs from OpenSM/ibsim"; unexpl[$1] = 1 }
}
END {
	for (i = 1; i <= nd; i++)
		if (!used[i]) { print "STALE deviation " txt[i] ": no longer differs"; bad = 1 }
	for (i = 1; i <= nn; i++) {
		n = order[i]
		if (!(n in diffs)) eq++
		else if (n in unexpl) u++
		else listed++
	}
	printf "ibsim-tools: %d commands, %d equal, %d differ in listed fields only, %d unexplained\n", nn, eq, listed, u
	exit (u || bad) ? 1 : 0
}' "$tmp/fields" || rc=1
exit $rc
