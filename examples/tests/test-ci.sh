#!/bin/sh
# examples/ci/rdma-tests.yml: the workflow parses as YAML and its steps do what the other
# examples' tests check. examples/tests/ci-steps reads it and prints the `run:` steps after the
# install step (the package install is the one thing not done here); they run in a copy of the
# example against the build tree's rdmaemu on PATH, then every uploaded path must exist with the
# capture and the report in it, and the test's command must be the autotools example's
# LOG_COMPILER line with its environment.
set -u
. "${RDMAEMU_TOP_SRCDIR:-.}/examples/tests/example_env.sh"
python3 -c 'import yaml' 2>/dev/null || { echo "SKIP: python3-yaml is not installed (scripts/bootstrap)"; exit 77; }
ln -s "$s/scripts/conformance-report" "$bin/rdmaemu-conformance-report"
example_copy ci
# the two-host step's programs must run in the hosts' sandboxes (network namespaces)
inside=$(rdmaemu run --fabric two-hosts.fabric --node A -- readlink /proc/self/ns/net 2>/dev/null)
rdmaemu daemon stop >/dev/null 2>&1
if [ -z "$inside" ] || [ "$inside" = "$(readlink /proc/self/ns/net)" ]; then
	echo "SKIP: rdmaemu run has no sandbox (network namespace) here"
	exit 77
fi
python3 "$s/examples/tests/ci-steps" check rdma-tests.yml "$s/examples/autotools/Makefile.am" ||
	exit 1
python3 "$s/examples/tests/ci-steps" steps rdma-tests.yml >"$t/steps.sh" || exit 1
sh -e "$t/steps.sh" >"$t/steps.log" 2>&1 || { cat "$t/steps.sh" "$t/steps.log"; exit 1; }
# `daemon stop` returns before the daemon has closed its capture
i=0
until [ -s captures/cm_ping-eth.pcap ] || [ $i -ge 100 ]; do sleep 0.1; i=$((i + 1)); done
[ -s captures/cm_ping-eth.pcap ] || { echo "FAIL: no capture"; ls -l captures; exit 1; }
if command -v tshark >/dev/null 2>&1; then
	# the connection between A and B: RoCEv2 both ways (the CM's MADs, the send, the reply)
	for src in 192.0.2.65 192.0.2.66; do
		n=$(tshark -r captures/cm_ping-eth.pcap -Y "ip.src == $src && udp.dstport == 4791" 2>/dev/null | wc -l)
		[ "$n" -ge 3 ] || { echo "FAIL: $n RoCEv2 frames from $src in the capture, want >= 3"; exit 1; }
	done
fi
[ "$(grep -cxF 'cm_ping: client received "pong"' "$t/steps.log")" -eq 2 ] || { echo "FAIL: cm_ping did not run"; cat "$t/steps.log"; exit 1; }
for f in conformance.md conformance.json conformance.html; do
	[ -s "report/$f" ] || { echo "FAIL: no report/$f"; exit 1; }
done
grep -q 'Conforms except 2 deviations' report/conformance.html ||
	{ echo "FAIL: the report's verdict is not there"; exit 1; }
for p in $(python3 "$s/examples/tests/ci-steps" uploads rdma-tests.yml); do
	[ -n "$(ls -A "$p" 2>/dev/null)" ] || { echo "FAIL: uploaded path $p is empty or absent"; exit 1; }
done
echo "ok ci: the workflow's steps ran; captures/ and report/ hold what it uploads"
