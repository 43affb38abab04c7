#!/bin/sh
# golden-sets.sh check|update|live DIR: the differential gate over every golden set. The
# emulator's results (conformance/emu.tap and emu.xml, written by emu.test) against the real
# stack's golden results recorded by `scripts/rxe-vm record`: the one-VM run (fixtures/golden/rxe)
# and the two-VM run of the two-node cases (`record --two`: rxe2/A with the active halves, rxe2/B
# with the passive halves). Each set's pins, one-sided manifest, observed-value deviations and
# normalisation rules live in fixtures/conformance/golden-gate (docs/conformance.md).
# `update` rewrites the pins and manifests from this run and prints what moved; `live DIR`
# checks a fresh one-VM recording in DIR (make check-rxe) against the rxe set's files.
top_builddir=${RDMAEMU_TOP_BUILDDIR:-$(cd "$(dirname "$0")/.." && pwd)}
top_srcdir=${RDMAEMU_TOP_SRCDIR:-$top_builddir}
golden=$top_srcdir/fixtures/golden
# set name, golden TAP, the set's rows (ERE on row IDs)
sets='rxe rxe/system.tap .
rxe2-A rxe2/A/system.tap @2N$
rxe2-B rxe2/B/system.tap @2N$'
upd=
case ${1:-check} in
check) ;;
update) upd=--update ;;
live) [ $# -eq 2 ] || { echo "usage: golden-sets.sh live DIR" >&2; exit 2; }
	golden=$2 sets='rxe system.tap .' ;;
*) echo "usage: golden-sets.sh check|update|live DIR" >&2; exit 2 ;;
esac
g=$top_srcdir/fixtures/conformance/golden-gate
rc=0
while read -r name tap only; do
	norm=
	[ -r "$g/$name.normalise" ] && norm="--normalise $g/$name.normalise"
	echo "golden: $tap"
	# shellcheck disable=SC2086 # $upd and $norm are option lists
	sh "$top_srcdir/conformance/golden-compare" $upd --only "$only" \
		--pins "$g/$name.compared" --one-sided "$g/$name.one-sided" \
		--by-construction "$g/by-construction" \
		--deviations "$top_srcdir/fixtures/conformance/golden-rxe.deviations" \
		--observed-deviations "$g/$name.observed-deviations" \
		--normalise "$g/observed.normalise" $norm \
		"$golden/$tap" "$top_builddir/conformance/emu.tap" </dev/null || rc=1
done <<EOF
$sets
EOF
exit $rc
