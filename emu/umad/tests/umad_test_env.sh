# Sourced by the emu/umad tests that run infiniband-diags (after b and s are set): the tools
# run from host ib-a of fixtures/ib.fabric on the build's libibumad.so.3 (the ASan runtime
# preloaded when the library was built with it: Debian's tools are not), with a scratch
# directory $tmp removed at exit; skipped where infiniband-diags is not installed.
# shellcheck shell=sh
command -v ibnetdiscover >/dev/null 2>&1 || { echo "infiniband-diags not installed: skipped"; exit 77; }
export RDMAEMU_FABRIC="$s/fixtures/ib.fabric" RDMAEMU_NODE=ib-a
export LD_LIBRARY_PATH="$b/emu/umad/.libs:$b/emu/.libs"
asan=$(ldd "$b/emu/umad/.libs/libibumad.so.3" 2>/dev/null | awk '/libasan/ {print $3}')
if [ -n "$asan" ]; then
	export LD_PRELOAD="$asan"
	export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
fi
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
