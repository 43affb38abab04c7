# Sourced by each examples/tests/test-*.sh: the example projects run against the build tree's
# rdmaemu as they would against an installed one, through `rdmaemu` on PATH:
#   - $bin: rdmaemu and rdmaemu-conformance, links to the build tree's, first on PATH;
#   - a runtime directory of the test's own (RDMAEMU_RUNTIME_DIR, also $t for scratch files),
#     so that the rdmaemud its `rdmaemu run` starts is nobody else's; at exit the daemon is
#     stopped and the directory removed;
#   - the ASan runtime preloaded when the libraries were built with it (the examples' programs
#     are not, and ASan must come first in the process);
#   - example_copy NAME: the example project copied to $t/NAME (links resolved, as a user
#     would copy it), the current directory then.
# shellcheck shell=sh
b=$(cd "${RDMAEMU_TOP_BUILDDIR:-.}" && pwd)
s=$(cd "${RDMAEMU_TOP_SRCDIR:-.}" && pwd)
unset RDMAEMU_FABRIC RDMAEMU_NODE RDMAEMU_DAEMON RDMAEMU_PCAP
# the example builds with its own make: none of the enclosing make check's settings
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES
RDMAEMU_RUNTIME_DIR=$(mktemp -d) || exit 99
export RDMAEMU_RUNTIME_DIR
t=$RDMAEMU_RUNTIME_DIR
bin=$t/bin
mkdir -p "$bin"
ln -s "$b/emu/tools/rdmaemu" "$bin/rdmaemu"
ln -s "$b/conformance/rdmaemu-conformance" "$bin/rdmaemu-conformance"
PATH=$bin:$PATH
asan=$(ldd "$b/emu/verbs/.libs/libibverbs.so.1" 2>/dev/null | awk '/libasan/ {print $3}')
if [ -n "$asan" ]; then
	export LD_PRELOAD="$asan"
	export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
fi
export PATH
example_cleanup() {
	rdmaemu daemon stop >/dev/null 2>&1
	cd / && rm -rf "$t"
}
trap example_cleanup EXIT

example_copy() {
	cp -rL "$s/examples/$1" "$t/$1" && cd "$t/$1" || exit 99
}
