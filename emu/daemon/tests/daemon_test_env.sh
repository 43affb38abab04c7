# Sourced by every emu/daemon/tests/test_daemon_*.sh after it has set b (the build directory):
# what each of them needs before its first `rdmaemu run`.
#   - rdmaemu: the build tree's tool (an absolute path: some tests run it from elsewhere);
#   - a runtime directory of the test's own (RDMAEMU_RUNTIME_DIR, also $t for scratch files),
#     so that its daemon is nobody else's, removed at exit with the daemon stopped;
#   - none of the caller's RDMAEMU_* settings that would send the programs to another fabric,
#     node, daemon or capture (RDMAEMU_SHM and RDMAEMU_TRACE are cleared by the tests whose
#     expectations depend on them: the others may be run with RDMAEMU_SHM=0 on purpose);
#   - the ASan runtime preloaded when the libraries were built with it (rdma-core's programs
#     are not, and ASan must come first in the process);
#   - cleanup on exit: SIGTERM, then SIGKILL, to the programs listed in $lpids (those a
#     failed check leaves running), `rdmaemu daemon stop`, the runtime directory removed; a
#     daemon log saying that a posted command did otherwise than its process answered, or a
#     sanitizer report of the daemon, fails the test;
#   - daemon_test_sandboxed FABRIC NODE: true when `rdmaemu run --node NODE` runs its program
#     in a sandbox of its own (another network namespace): only then may a test send IP to a
#     fabric address, which outside a sandbox is this machine's real network;
#   - daemon_test_sandbox_start FABRIC NODE DIR: starts rdmaemud on FABRIC with its capture
#     under DIR/cap, then exits 77 (skipped) where the machine permits no sandbox and 1 where
#     `rdmaemu run --node NODE` runs outside one all the same;
#   - daemon_test_wait_status REGEX [SECONDS]: until a line of `rdmaemu daemon status` matches
#     REGEX (e.g. '^rdma_cm file .* listen [1-9]': a server's id listens), 60 s at most: a
#     server started in the background is ready for its client only then, which on a loaded
#     machine may take far longer than any fixed sleep;
#   - daemon_test_ports BASE: $port set to a band of 20 TCP ports of this test's own, below the
#     ephemeral range, for the side channels on 127.0.0.1 (daemon tests run in parallel under
#     make -j and must never pick the same port: each script has its own BASE).
# shellcheck shell=sh
rdmaemu=$(cd "$b/emu/tools" && pwd)/rdmaemu
RDMAEMU_RUNTIME_DIR=$(mktemp -d) || exit 99
export RDMAEMU_RUNTIME_DIR
unset RDMAEMU_FABRIC RDMAEMU_NODE RDMAEMU_DAEMON RDMAEMU_PCAP RXEVM_NODE RXEVM_PEER
asan=$(ldd "$b/emu/verbs/.libs/libibverbs.so.1" 2>/dev/null | awk '/libasan/ {print $3}')
if [ -n "$asan" ]; then
	export LD_PRELOAD="$asan"
	export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
fi
fail=0
t=$RDMAEMU_RUNTIME_DIR
lpids=
cleanup() {
	# SIGTERM first: a program run under timeout(1) is timeout itself after `rdmaemu run`
	# exec'd it, and timeout passes SIGTERM on to its command, where SIGKILL would leave the
	# command running with no one to end it
	# shellcheck disable=SC2086
	if [ -n "$lpids" ]; then
		kill -TERM $lpids 2>/dev/null
		sleep 0.3
		kill -KILL $lpids 2>/dev/null
	fi
	"$rdmaemu" daemon stop >/dev/null 2>&1
	if grep 'rdma_cm file [0-9]*: posted ' "$t/rdmaemud.log" 2>/dev/null; then
		echo "FAIL: a posted command did otherwise than answered (docs/daemon.md)"
		rm -rf "$t"
		exit 1
	fi
	# a sanitizer build's daemon reports into its log, which goes with the directory
	if grep -E 'runtime error:|ERROR: (Address|Leak)Sanitizer' "$t/rdmaemud.log" 2>/dev/null
	then
		echo "FAIL: the daemon's sanitizer report above"
		rm -rf "$t"
		exit 1
	fi
	rm -rf "$t"
}
trap cleanup EXIT

daemon_test_sandboxed() {
	inside=$("$rdmaemu" run --fabric "$1" --node "$2" -- readlink /proc/self/ns/net 2>/dev/null)
	[ -n "$inside" ] && [ "$inside" != "$(readlink /proc/self/ns/net)" ]
}

daemon_test_sandbox_start() {
	"$rdmaemu" daemon start --fabric "$1" --pcap "$3/cap" ||
		{ echo "daemon start failed"; cat "$3/rdmaemud.log"; exit 1; }
	"$rdmaemu" run --fabric "$1" --node "$2" -- true 2>"$3/first.err"
	if grep -q "^rdmaemu: no sandbox for host $2 (not permitted here" "$3/first.err"; then
		cat "$3/first.err"
		echo "no sandbox here: skipped"
		exit 77
	fi
	daemon_test_sandboxed "$1" "$2" || { echo "FAIL: no sandbox"; cat "$3/first.err"; exit 1; }
}

daemon_test_wait_status() {
	i=0
	until "$rdmaemu" daemon status 2>/dev/null | grep -Eq "$1"; do
		[ $i -ge $((${2:-60} * 10)) ] && return 1
		sleep 0.1; i=$((i + 1))
	done
}

daemon_test_ports() {
	port=$(($1 + ($$ % 220) * 20))
}
