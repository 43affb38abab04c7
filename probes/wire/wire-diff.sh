#!/bin/sh
# wire-diff.sh KERNEL.pcap EMULATOR.pcap RULES [REPORT]: the RoCEv2 frames (UDP port 4791) of
# two captures of the same exchange, compared field by field as tshark dissects them: frame N
# of one against frame N of the other, every field in order, the frames numbered per sender
# (first every frame of the lower source address in the order it went out, then the other's):
# how two sides' frames interleave is timing, not protocol. A field that differs fails
# unless RULES names it (FIELD<TAB>RULE<TAB>REASON):
#   ignore          not compared (a value no two runs share: the IP ID, the ICRC, times; or a
#                   header's whole bytes, whose fields are compared one by one)
#   rename:CLASS    any values, as long as one value of one capture always stands for the same
#                   value of the other, across every field of the class (QPNs, keys, ports)
#   offset:CLASS[:MOD]
#                   numbers that differ by one constant across the class (modulo MOD): PSNs
#                   from random initial PSNs, addresses of buffers
# CLASS may end in @FIELD: the class is split by that field's value in the same frame
# (infiniband.bth.psn with offset:psn@infiniband.bth.destqp: one PSN space per destination QP).
# REPORT gets one line per field name: occurrences, equal, normalised (by which rule), ignored.
# Last line: "wire-diff: F frames, N fields: E equal, R normalised, I ignored, D differ";
# exit 1 when D > 0 or the frames do not pair up.
set -u
[ $# -ge 3 ] || { echo "usage: wire-diff.sh KERNEL.pcap EMULATOR.pcap RULES [REPORT]" >&2; exit 2; }
TSHARK=${TSHARK:-tshark}
command -v "$TSHARK" >/dev/null 2>&1 || { echo "tshark not found: skipped"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/wire-diff.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
WIRESHARK_CONFIG_DIR=$tmp/wsconf
export WIRESHARK_CONFIG_DIR
mkdir -p "$WIRESHARK_CONFIG_DIR"
report=${4:-/dev/null}

# FRAME<TAB>FIELD<TAB>VALUE for every named field of the RoCEv2 frames, in dissection order.
# rpcordma would reassemble the payloads as RPC-over-RDMA.
fields() {
	"$TSHARK" -n --disable-protocol rpcordma -r "$1" -Y 'udp.port == 4791' -T pdml 2>"$tmp/err" |
		awk '
		/<packet>/ { n++ }
		/<field name="[^"]/ {
			match($0, /name="[^"]*"/); nm = substr($0, RSTART + 6, RLENGTH - 7)
			v = ""
			if (match($0, / show="[^"]*"/)) v = substr($0, RSTART + 7, RLENGTH - 8)
			if (nm ~ /^(frame|geninfo|num|len|caplen|timestamp)(\.|$)/) next
			print n "\t" nm "\t" v
		}' >"$tmp/f" || { cat "$tmp/err" >&2; exit 1; }
	# numbered per sender: each side's frames in the order it sent them, the lower source
	# address first. The order of one side's frames is the protocol's; how the two sides'
	# frames interleave on the wire is the timing of two machines (or two processes), which
	# no two runs of the real stack share either.
	awk -F'\t' '
		{ line[NR] = $0; pk[NR] = $1 }
		$2 == "ip.src" && !($1 in src) { src[$1] = $3 }
		END {
			for (i = 1; i <= NR; i++) if (!(pk[i] in seen)) { seen[pk[i]] = 1; order[++np] = pk[i] }
			for (i = 1; i <= np; i++) s[src[order[i]]] = 1
			ns = 0
			for (a in s) sl[++ns] = a
			for (i = 2; i <= ns; i++)	# a handful of senders: insertion sort
				for (j = i; j > 1 && sl[j - 1] > sl[j]; j--) { x = sl[j]; sl[j] = sl[j - 1]; sl[j - 1] = x }
			m = 0
			for (k = 1; k <= ns; k++)
				for (i = 1; i <= np; i++) if (src[order[i]] == sl[k]) renum[order[i]] = ++m
			for (i = 1; i <= NR; i++) { sub(/^[^\t]*/, renum[pk[i]], line[i]); print line[i] }
		}' "$tmp/f" | sort -t '	' -k1,1n -s
}
fields "$1" >"$tmp/k" || exit 1
fields "$2" >"$tmp/e" || exit 1

awk -F'\t' -v K="$tmp/k" -v RULES="$3" -v REPORT="$report" '
function num(s,    i, c, v, h) {
	if (s ~ /^0x/) {
		v = 0; h = "0123456789abcdef"; s = tolower(substr(s, 3))
		for (i = 1; i <= length(s); i++) v = v * 16 + index(h, substr(s, i, 1)) - 1
		return v
	}
	return s + 0
}
function class_of(r, f,    c, at, k) {
	c = r; sub(/^[a-z]+:/, "", c); sub(/:[0-9]+$/, "", c)
	at = index(c, "@")
	if (at) {
		k = substr(c, at + 1)
		c = substr(c, 1, at - 1) "@" ((f SUBSEP k) in frameval ? frameval[f, k] : "")
	}
	return c
}
BEGIN {
	while ((getline l < RULES) > 0) {
		if (l ~ /^[ \t]*(#|$)/) continue
		split(l, p, "\t")
		if (p[3] == "") { print "wire-diff: " RULES ": no reason for " p[1]; bad = 1 }
		rule[p[1]] = p[2]
	}
	while ((getline l < K) > 0) { nk++; kl[nk] = l }
}
{ ne++; el[ne] = $0 }
END {
	if (nk != ne) {
		print "wire-diff: the captures dissect into " nk " and " ne " fields"
	}
	# frame values for the @FIELD classes, from the kernel capture (the same fields pair up)
	for (i = 1; i <= nk; i++) { split(kl[i], a, "\t"); frameval[a[1], a[2]] = a[3] }
	n = nk < ne ? nk : ne
	for (i = 1; i <= n; i++) {
		split(kl[i], a, "\t"); split(el[i], b, "\t")
		if (a[1] != b[1] || a[2] != b[2]) {
			print "FAIL: frame " a[1] " field " a[2] " pairs with frame " b[1] " field " b[2] \
				": the frames differ in structure"
			exit 1
		}
		f = a[1]; nm = a[2]; kv = a[3]; ev = b[3]
		if (f > frames) frames = f
		occ[nm]++; total++
		r = (nm in rule) ? rule[nm] : ""
		if (r == "ignore") { ign[nm]++; ignored++; continue }
		if (kv == ev && r !~ /^offset:/) { eq[nm]++; equal++; continue }
		if (r ~ /^rename:/) {
			c = class_of(r, f)
			if (((c, kv) in fwd && fwd[c, kv] != ev) || ((c, ev) in bwd && bwd[c, ev] != kv)) {
				print "DIFF frame " f " " nm ": " kv " | " ev " (breaks the " c " renaming)"
				dif[nm]++; differ++; continue
			}
			fwd[c, kv] = ev; bwd[c, ev] = kv
			norm[nm]++; normalised++; continue
		}
		if (r ~ /^offset:/) {
			c = class_of(r, f); mod = 0
			if (r ~ /:[0-9]+$/) { mod = r; sub(/.*:/, "", mod); mod += 0 }
			d = num(ev) - num(kv)
			if (mod) d = (d % mod + mod) % mod
			if ((c in off) && off[c] != d) {
				print "DIFF frame " f " " nm ": " kv " | " ev " (offset " d " against " off[c] " in " c ")"
				dif[nm]++; differ++; continue
			}
			off[c] = d
			if (kv == ev) { eq[nm]++; equal++ } else { norm[nm]++; normalised++ }
			continue
		}
		print "DIFF frame " f " " nm ": kernel " kv " | emulator " ev
		dif[nm]++; differ++
	}
	for (nm in occ)
		printf "%-48s %5d occurrences: %5d equal, %5d normalised%s, %5d ignored, %d differ\n", \
			nm, occ[nm], eq[nm], norm[nm], (nm in rule && rule[nm] != "ignore") ? " (" rule[nm] ")" : "", \
			ign[nm], dif[nm] > REPORT
	printf "wire-diff: %d frames, %d fields: %d equal, %d normalised, %d ignored, %d differ\n", \
		frames, total, equal, normalised, ignored, differ
	exit (differ || bad || nk != ne) ? 1 : 0
}' "$tmp/e"
