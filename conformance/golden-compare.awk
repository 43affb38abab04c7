# The differential gate's engine, run by conformance/golden-compare (which passes the file
# names as variables). POSIX awk (mawk): no gensub, no interval expressions. Every row of the
# set ends in exactly one place: compared (pinned), by construction, or one-sided (manifest).

# One TAP line -> state (pass, fail, notrun, excluded) and skip message of its row.
function tap(line, which,    id, st, rest, msg) {
	if (line !~ /^(not )?ok [0-9]+ - /)
		return
	st = (line ~ /^not ok/) ? "fail" : "pass"
	rest = line
	sub(/^(not )?ok [0-9]+ - /, "", rest)
	id = rest
	sub(/ .*/, "", id)
	if (id !~ ONLY)
		return
	msg = ""
	if (rest ~ / # SKIP /) {
		msg = rest
		sub(/.* # SKIP /, "", msg)
		st = (msg ~ /^excluded: /) ? "excluded" : "notrun"
	}
	if (which == "ref") { rstate[id] = st; rmsg[id] = msg } else { ostate[id] = st; omsg[id] = msg }
	note(id)
}
function note(id) { if (!(id in seen)) { order[++n] = id; seen[id] = 1 } }

function unescape(s) {
	gsub(/&quot;/, "\"", s); gsub(/&lt;/, "<", s); gsub(/&gt;/, ">", s)
	gsub(/&apos;/, "'", s); gsub(/&amp;/, "\\&", s)
	return s
}
# A JUnit file -> the "observed: " lines of each testcase, joined with " | ".
function junit(file, dest,    l, id, inout, closing, txt) {
	while ((getline l < file) > 0) {
		if (l ~ /<testcase /) {
			id = l; sub(/.* name="/, "", id); sub(/".*/, "", id)
			txt = ""; inout = 0
			continue
		}
		if (l ~ /<system-out>/) { inout = 1; sub(/.*<system-out>/, "", l) }
		if (inout) {
			closing = sub(/<\/system-out>.*/, "", l)
			l = unescape(l)
			if (l ~ /^observed: /) { sub(/^observed: /, "", l); txt = (txt == "" ? l : txt " | " l) }
			if (closing) inout = 0
		}
		if (l ~ /<\/testcase>/ && txt != "") { dest[id] = txt; txt = "" }
	}
	close(file)
}

# "ID reason..." files: comments and blank lines skipped; every entry needs a reason.
function reasons(file, dest,    l, id, why) {
	if (file == "") return
	while ((getline l < file) > 0) {
		if (l ~ /^[ \t]*(#|$)/) continue
		id = l; sub(/^[ \t]*/, "", id); why = id
		sub(/[ \t].*/, "", id); sub(/^[^ \t]+[ \t]*/, "", why)
		if (why == "") { printf "golden-compare: %s: %s has no reason\n", file, id > "/dev/stderr"; bad = 1 }
		dest[id] = why
	}
	close(file)
}

# Normalisation rules: CLASS SIDE ROWS CONTEXT TARGET [REPLACEMENT], tab-separated.
function rules(file,    l, f, k) {
	while ((getline l < file) > 0) {
		if (l ~ /^[ \t]*(#|$)/) continue
		k = split(l, f, "\t")
		if (k < 5 || (f[2] != "ref" && f[2] != "obs" && f[2] != "both")) {
			printf "golden-compare: bad normalisation rule: %s\n", l > "/dev/stderr"; bad = 1; continue
		}
		nr++; rclass[nr] = f[1]; rside[nr] = f[2]; rrows[nr] = f[3]
		rctx[nr] = f[4]; rtgt[nr] = f[5]; rrep[nr] = (k >= 6) ? f[6] : ""
	}
	close(file)
}
# Inside every match of ctx in s, the first match of tgt becomes rep.
function rewrite(s, ctx, tgt, rep,    out, piece) {
	out = ""
	while (s != "" && match(s, ctx)) {
		if (RLENGTH == 0) { out = out substr(s, 1, 1); s = substr(s, 2); continue }
		piece = substr(s, RSTART, RLENGTH)
		sub(tgt, rep, piece)
		out = out substr(s, 1, RSTART - 1) piece
		s = substr(s, RSTART + RLENGTH)
	}
	return out s
}
function normalise(id, s, side,    i) {
	for (i = 1; i <= nr; i++)
		if ((rside[i] == side || rside[i] == "both") && id ~ rrows[i])
			s = rewrite(s, rctx[i], rtgt[i], rrep[i])
	return s
}

# Why a side did not run a row: the class of its skip message.
function klass(st, msg) {
	if (st == "") return "absent"
	if (st == "excluded") return "excluded"
	if (msg ~ /InfiniBand port|IPoIB address/) return "ib"
	if (msg ~ /rdma-core (>=|<) v60/) return "level"
	if (msg ~ /emulator-only/) return "emu-only"
	if (msg ~ /two-node case/) return "two-node"
	if (msg ~ /both ends in one process/) return "no-split"
	if (msg ~ /^no passive half/) return "no-passive"
	if (msg ~ /without (real )?RDMA devices|and no RDMA device/) return "no-device"
	if (msg ~ /\/dev\/infiniband\/rdma_cm/) return "no-rdma-cm"
	if (msg ~ /AF_IB/) return "af-ib"
	if (msg ~ /DNS/) return "dns"
	return "other"
}
function said(st, msg) { return st == "" ? "no such row" : msg }

function onesided(id, r, o,    ran_r, ran_o, side, c, why) {
	ran_r = (r == "pass" || r == "fail"); ran_o = (o == "pass" || o == "fail")
	if (!ran_r && !ran_o) {
		side = "both"; c = klass(r, rmsg[id])
		if (klass(o, omsg[id]) != c) c = c "+" klass(o, omsg[id])
		why = "reference: " said(r, rmsg[id]) "; emulator: " said(o, omsg[id])
	} else if (!ran_r) {
		side = "ref"; c = klass(r, rmsg[id]); why = "reference: " said(r, rmsg[id])
	} else {
		side = "obs"; c = klass(o, omsg[id]); why = "emulator: " said(o, omsg[id])
	}
	nowclass[id] = c; nowside[id] = side
	printf "%s\t%s\t%s\t%s\n", id, c, side, why > NEWONE
	bycount[c]++; onecount++
	if (!(id in mclass)) {
		if (id in pinned) printf "LOST %s pinned as compared, now one-sided (%s, %s side) without a manifest reason\n", id, c, side
		else printf "UNEXPLAINED %s not compared (%s, %s side) and not in the one-sided manifest\n", id, c, side
		failures++; failrows++
	} else if (mclass[id] != c || mside[id] != side) {
		printf "RECLASSED %s not compared as %s (%s side); the manifest says %s (%s side)\n", id, c, side, mclass[id], mside[id]; failures++; failrows++
	} else if (id in pinned) {
		printf "MOVED %s pinned as compared, now one-sided: %s\n", id, mwhy[id]; moved++
	}
}

function observed(id,    r, o, nr_, no_) {
	if (!(id in robs) && !(id in oobs)) { otext_none++; return }
	r = (id in robs) ? robs[id] : "(none)"; o = (id in oobs) ? oobs[id] : "(none)"
	if (r == o) { oequal++; if (id in owhy) ostale = ostale " " id; return }
	nr_ = normalise(id, r, "ref"); no_ = normalise(id, o, "obs")
	if (nr_ == no_) { onorm++; if (id in owhy) ostale = ostale " " id; return }
	if (id in owhy) { olisted++; printf "OBSERVED-DEVIATION %s: %s\n", id, owhy[id]; return }
	odiff++; failures++
	printf "OBSERVED-DIFFERENT %s\n  reference: %s\n  emulator:  %s\n", id, nr_, no_
}

function compared(id, r, o) {
	printf "%s\n", id > NEWPINS
	ncompared++
	if (!(id in pinned)) { printf "UNPINNED %s compared but not pinned\n", id; failures++ }
	if (id in mclass) { printf "STALE %s in the one-sided manifest but compared (remove it)\n", id; failures++ }
	if (r == o) { agree++; if (id in why) stale = stale " " id }
	else if (id in why) { listed++; printf "DEVIATION %-10s reference %s, observed %s: %s\n", id, r, o, why[id] }
	else { unlisted++; printf "DIFFERENT %-10s reference %s, observed %s (not in the deviation manifest)\n", id, r, o }
	if (r == o || (id in why)) observed(id); else verdictbad[id] = 1
}

BEGIN {
	while ((getline l < REF) > 0) tap(l, "ref")
	close(REF)
	while ((getline l < OBS) > 0) tap(l, "obs")
	close(OBS)
	junit(REFX, robs); junit(OBSX, oobs)
	reasons(DEV, why); reasons(ODEV, owhy); reasons(BYC, byc)
	rules(NORM)
	if (PINS != "")
		while ((getline l < PINS) > 0)
			if (l !~ /^[ \t]*(#|$)/ && l ~ ONLY) { pinned[l] = 1; npin++; note(l) }
	if (ONE != "")
		while ((getline l < ONE) > 0) {
			if (l ~ /^[ \t]*(#|$)/) continue
			split(l, f, "\t")
			if (f[1] !~ ONLY) continue
			mclass[f[1]] = f[2]; mside[f[1]] = f[3]; mwhy[f[1]] = f[4]; note(f[1])
		}
	if (bad) exit 2
	printf "" > NEWPINS
	printf "# rows not compared: ID, class, side that did not run it, its words (docs/conformance.md)\n" > NEWONE
	for (i = 1; i <= n; i++) {
		id = order[i]; r = rstate[id]; o = ostate[id]
		if (r == "" && o == "") {
			if (id in mclass) { printf "STALE %s in the one-sided manifest but no longer a row (remove it)\n", id; failures++ }
			if (id in pinned) { printf "LOST %s pinned as compared, no longer a row of either run\n", id; failures++ }
			continue
		}
		ran_r = (r == "pass" || r == "fail"); ran_o = (o == "pass" || o == "fail")
		if (ran_r && ran_o && (id in byc)) {
			nbyc++; byclist = byclist " " id
			if (r != o) { unlisted++; printf "DIFFERENT %-10s reference %s, observed %s (a row that cannot differ by construction)\n", id, r, o }
			if ((id in pinned) || (id in mclass)) { printf "STALE %s pinned or in the one-sided manifest but by construction (remove it)\n", id; failures++ }
			continue
		}
		if (ran_r && ran_o) compared(id, r, o)
		else onesided(id, r, o)
	}
	if (ncompared + 0 < npin - moved) {
		printf "golden-compare: %d rows compared, below the pinned %d\n", ncompared, npin; failures++
	}
	if (stale != "") printf "golden-compare: listed deviations that no longer differ (stale):%s\n", stale
	if (ostale != "") { printf "golden-compare: listed observed deviations that no longer differ (stale, remove them):%s\n", ostale; failures++ }
	if (byclist != "") printf "golden-compare: by construction (compile-time, not counted as agreement):%s\n", byclist
	split("ib level two-node no-split no-passive emu-only no-device no-rdma-cm af-ib dns excluded absent other", cl, " ")
	for (i = 1; i in cl; i++) if (cl[i] in bycount) { per = per sep cl[i] " " bycount[cl[i]]; sep = ", "; done_[cl[i]] = 1 }
	for (c in bycount) if (!(c in done_)) { per = per sep c " " bycount[c]; sep = ", " }
	# the plain line CI tools read: rows that agree or are explained pass; differences and rows
	# that left the comparison unexplained fail; one-sided and by-construction rows are skipped
	printf "golden: %d passed, %d failed, %d skipped\n", agree + listed - odiff, unlisted + odiff + failrows, onecount - failrows + nbyc
	printf "golden-compare: %d rows compared (pinned %d), %d agree, %d listed, %d unexplained; observed: %d equal, %d normalised, %d listed, %d different, %d without text; %d by construction; %d one-sided (manifest%s%s)\n", \
		ncompared, npin, agree, listed, unlisted + failrows, oequal, onorm, olisted, odiff, otext_none, nbyc, onecount, (per == "" ? "" : ": "), per
	if (UPDATE) { for (i = 1; i <= n; i++) if (index(ostale " ", " " order[i] " ")) print order[i] > NEWONE ".ostale"; exit (unlisted + odiff) ? 1 : 0 }
	exit (unlisted || failures) ? 1 : 0
}
