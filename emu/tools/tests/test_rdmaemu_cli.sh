#!/bin/sh
# `rdmaemu` command line: exit codes (0 ok, 1 fabric error, 2 usage), messages on stderr.
set -u
top=${RDMAEMU_TOP_BUILDDIR:-.}
src=${RDMAEMU_TOP_SRCDIR:-.}
bin="$top/emu/tools/rdmaemu"
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { # expected-rc description command...
	want=$1; what=$2; shift 2
	"$@" >"$tmp/out" 2>"$tmp/err"; rc=$?
	if [ "$rc" != "$want" ]; then
		echo "FAIL: $what: exit $rc, expected $want"; cat "$tmp/err"; fail=1
	else
		echo "ok: $what"
	fi
}
unset RDMAEMU_FABRIC
check 0 "--version" "$bin" --version
grep -Eqx 'rdmaemu [0-9][0-9.]* \(librdmacm personality: rdma-core (44|61), libibverbs: rdma-core 44\)' "$tmp/out" ||
	{ echo "FAIL: version text"; cat "$tmp/out"; fail=1; }
check 0 "--help" "$bin" --help
check 2 "no arguments" "$bin"
check 2 "unknown command" "$bin" frobnicate
grep -q "unknown command 'frobnicate'" "$tmp/err" || { echo "FAIL: unknown command text"; fail=1; }
check 2 "fabric show with two files" "$bin" fabric show a b
check 2 "fabric check without files" "$bin" fabric check
check 0 "fabric show (built-in)" "$bin" fabric show
head -1 "$tmp/out" | grep -qx 'fabric (built-in default)' || { echo "FAIL: built-in header"; fail=1; }
check 0 "fabric show FILE" "$bin" fabric show "$src/fixtures/ib.fabric"
grep -q 'gid 0 fe80::2:c903:0:a01 IB ib0' "$tmp/out" || { echo "FAIL: ib.fabric GID"; fail=1; }
RDMAEMU_FABRIC="$src/fixtures/rxe-ref2.fabric" check 0 "fabric show honours RDMAEMU_FABRIC" "$bin" fabric show
grep -q '^host B$' "$tmp/out" || { echo "FAIL: RDMAEMU_FABRIC not used"; fail=1; }
printf 'host a\nlink a/x/1 none\n' >"$tmp/bad.fabric"
check 1 "fabric show of a bad file" "$bin" fabric show "$tmp/bad.fabric"
grep -qx "rdmaemu: $tmp/bad.fabric:2: host 'a' has no device 'x' (in link)" "$tmp/err" ||
	{ echo "FAIL: error text"; cat "$tmp/err"; fail=1; }
[ -s "$tmp/out" ] && { echo "FAIL: output on error"; fail=1; }
check 1 "missing file" "$bin" fabric show "$tmp/none.fabric"
grep -q "cannot open '$tmp/none.fabric': No such file or directory" "$tmp/err" || { echo "FAIL: ENOENT text"; fail=1; }
check 0 "fabric check of all fixtures" "$bin" fabric check "$src"/fixtures/*.fabric
check 1 "fabric check with one bad file" "$bin" fabric check "$src/fixtures/ib.fabric" "$tmp/bad.fabric"
exit $fail
