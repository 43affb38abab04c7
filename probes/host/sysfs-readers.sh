#!/bin/sh
# What the RDMA sysfs readers print and which files they open, on kernel rxe in the reference
# VM. Run as (the programs and strace copied in with their libraries, UCX's transport modules
# beside libucs):
#   scripts/rxe-vm run --copy probes/host/sysfs-dump.sh --copy probes/host/sysfs-readers.sh \
#     --copy /usr/lib/x86_64-linux-gnu/ucx --copy /usr/sbin/ibstat --copy /usr/sbin/ibstatus \
#     --copy /usr/bin/ucx_info --copy /usr/bin/fi_info --copy /usr/bin/strace --out DIR \
#     -- sh /opt/rdmaemu/sysfs-readers.sh
# DIR/tree-<node>.txt is the listing of sysfs-dump.sh, DIR/out-<node>.txt what each program
# printed, DIR/strace-<node>-<program>.txt its file calls.
set -u
O=${RXEVM_OUT:-/out}
H=/opt/rdmaemu
mkdir -p "$O"
sh $H/sysfs-dump.sh > "$O/tree-$RXEVM_NODE.txt" 2>&1
mkdir -p /usr/lib/x86_64-linux-gnu/ucx && cp $H/ucx/* /usr/lib/x86_64-linux-gnu/ucx/
for t in "ibstat" "ibstat -l" "ibstatus" "ucx_info -d" "fi_info -p verbs" "ibv_devinfo -v" \
	"ibv_devices" "rdma link show" "rdma dev show"; do
	n=$(echo "$t" | tr ' ' '_')
	case $t in ibstatus) c="sh $H/ibstatus" ;; rdma*|ibv_*) c="$t" ;; *) c="$H/$t" ;; esac
	echo "== $t" >> "$O/out-$RXEVM_NODE.txt"
	$c >> "$O/out-$RXEVM_NODE.txt" 2>&1
	echo "rc=$?" >> "$O/out-$RXEVM_NODE.txt"
	$H/strace -f -e trace=%file,readlink -o "$O/strace-$RXEVM_NODE-$n.txt" $c >/dev/null 2>&1
done
