#!/bin/sh
# A host of kind rxe-vm (fixtures/mixed.fabric's V, docs/mixed-fabric.md): rdmaemud binds
# vm-V-eth0.sock beside its socket and makes V's port the VM's NIC. vm_nic_probe plays QEMU's
# socket netdev: its ARP request for E's address goes on the wire at V's port, and the
# emulated host E's answer comes back to the probe's own path; a second probe on another path
# (the VM started again) is answered at its path; the capture holds the four frames; the
# status line counts them; no process may attach to V (EREMOTE), and V's kind shows in
# `rdmaemu fabric show`.
set -u
b=${RDMAEMU_TOP_BUILDDIR:-.}
s=${RDMAEMU_TOP_SRCDIR:-.}
probe="$b/emu/daemon/tests/vm_nic_probe"
. "$s/emu/daemon/tests/daemon_test_env.sh"
unset RDMAEMU_SHM RDMAEMU_TRACE
mixed="$s/fixtures/mixed.fabric"

"$rdmaemu" fabric show "$mixed" | sed -n '/^host V$/,/^host /p' | grep -qx '  kind rxe-vm' ||
	{ echo "FAIL: fabric show has no 'kind rxe-vm' for V"; fail=1; }
printf 'host X kind=vm\n' >"$t/bad.fabric"
err=$("$rdmaemu" fabric show "$t/bad.fabric" 2>&1)
case $err in
*"expected 'emulated' or 'rxe-vm' after 'kind=', got 'vm'"*) ;;
*) echo "FAIL: kind=vm: $err"; fail=1 ;;
esac

"$rdmaemu" daemon start --fabric "$mixed" --pcap "$t/cap" || { echo "daemon start failed"; exit 1; }
sock=$t/vm-V-eth0.sock
[ -S "$sock" ] || { echo "FAIL: no $sock"; ls -l "$t"; exit 1; }
[ "$(stat -c %a "$sock")" = 600 ] || { echo "FAIL: $sock mode $(stat -c %a "$sock")"; fail=1; }
"$rdmaemu" daemon status | grep '^vm ' >"$t/st0"
grep -qx "vm V/eth0: no guest, 0 to the wire, 0 from it, 0 dropped, socket $sock" "$t/st0" ||
	{ echo "FAIL: status before a guest:"; cat "$t/st0"; fail=1; }

for n in 1 2; do
	out=$(timeout 20 "$probe" "$sock" "$t/nic$n.sock" 02:00:00:00:03:02 192.0.2.82 192.0.2.81)
	echo "probe $n: $out"
	[ "$out" = "reply: 192.0.2.81 is at 02:00:00:00:03:01, to 02:00:00:00:03:02" ] ||
		{ echo "FAIL: probe $n"; fail=1; }
done
"$rdmaemu" daemon status | grep '^vm ' >"$t/st1"
cat "$t/st1"
grep -qx "vm V/eth0: guest attached, 2 to the wire, 2 from it, 0 dropped, socket $sock" "$t/st1" ||
	{ echo "FAIL: status after two requests"; fail=1; }

out=$("$rdmaemu" run --no-sandbox --fabric "$mixed" --node V -- ibv_devices 2>&1)
rc=$?
echo "run --node V -- ibv_devices: exit $rc: $out"
[ $rc -eq 1 ] || { echo "FAIL: a process attached to the VM host V"; fail=1; }
case $out in
*"refused host 'V' of fabric '"*"mixed.fabric': Object is remote"*) ;;
*) echo "FAIL: the process was not told EREMOTE"; fail=1 ;;
esac
grep -q 'host V, a VM (kind=rxe-vm): refused' "$t/rdmaemud.log" ||
	{ echo "FAIL: the daemon did not say why"; fail=1; }

"$rdmaemu" daemon stop >/dev/null 2>&1
[ ! -e "$sock" ] || { echo "FAIL: $sock left behind"; fail=1; }
if command -v tshark >/dev/null 2>&1; then
	tshark -r "$t/cap-eth.pcap" -T fields -e eth.src -e arp.opcode -e arp.dst.proto_ipv4 \
		2>/dev/null >"$t/frames"
	cat >"$t/want" <<'WANT'
02:00:00:00:03:02	1	192.0.2.81
02:00:00:00:03:01	2	192.0.2.82
02:00:00:00:03:02	1	192.0.2.81
02:00:00:00:03:01	2	192.0.2.82
WANT
	diff -u "$t/want" "$t/frames" || { echo "FAIL: the capture"; fail=1; }
fi
exit $fail
