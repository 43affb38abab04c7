#!/bin/sh
# The RDMA sysfs files through address, link and device changes on kernel rxe (one VM):
#   scripts/rxe-vm run --copy probes/host/sysfs-changes.sh --out DIR -- sh /opt/rdmaemu/sysfs-changes.sh
# DIR/changes.txt has the port's state, phys_state, rate and first GID entries after each step.
O=${RXEVM_OUT:-/out}
P=/sys/class/infiniband/rxe0/ports/1
snap() {
	echo "== $1"
	for f in state phys_state rate gids/0 gids/1 gids/2 gids/3 gids/4 gid_attrs/types/0 gid_attrs/types/1 gid_attrs/types/2 gid_attrs/types/3 gid_attrs/types/4 gid_attrs/ndevs/0 gid_attrs/ndevs/1 gid_attrs/ndevs/2 gid_attrs/ndevs/3 gid_attrs/ndevs/4; do
		printf '%s: ' "$f"; cat $P/$f 2>&1 | sed 's/^cat: .*: //'
	done
	echo "classes: $(ls /sys/class/infiniband /sys/class/infiniband_verbs /sys/class/infiniband_mad /dev/infiniband | tr '\n' ' ')"
}
{
snap initial
ip addr add 198.51.100.7/24 dev d0; sleep 1; snap "ip addr add 198.51.100.7/24 dev d0"
ip addr add 2001:db8::7/64 dev d0 nodad; sleep 1; snap "ip addr add 2001:db8::7/64 dev d0 nodad"
ip addr del 192.0.2.1/28 dev d0; sleep 1; snap "ip addr del 192.0.2.1/28 dev d0"
ip addr add 192.0.2.1/28 dev d0; sleep 1; snap "ip addr add 192.0.2.1/28 dev d0"
ip link set d0 down; sleep 1; snap "ip link set d0 down"
ip link set d0 up; sleep 2; snap "ip link set d0 up"
ip link set s0 down; sleep 1; echo "rxe1 state after s0 down: $(cat /sys/class/infiniband/rxe1/ports/1/state) / $(cat /sys/class/infiniband/rxe1/ports/1/phys_state)"
ls -la /dev/infiniband
rdma link delete rxe0; sleep 1; echo "== rdma link delete rxe0"
echo "classes: $(ls /sys/class/infiniband /sys/class/infiniband_verbs /sys/class/infiniband_mad /dev/infiniband | tr '\n' ' ')"
ls -la /sys/class/infiniband_verbs /sys/class/infiniband_mad /dev/infiniband
cat /sys/class/infiniband_verbs/uverbs1/ibdev /sys/class/infiniband_mad/umad1/ibdev
rdma link add rxe0 type rxe netdev d0; sleep 1; echo "== rdma link add rxe0 type rxe netdev d0"
ls -la /sys/class/infiniband /sys/class/infiniband_verbs /sys/class/infiniband_mad /dev/infiniband
for f in /sys/class/infiniband_verbs/uverbs*/ibdev /sys/class/infiniband_verbs/uverbs*/dev /sys/class/infiniband_mad/*/ibdev /sys/class/infiniband_mad/*/dev; do echo "$f: $(cat $f)"; done
snap "re-added"
rdma link add rxe9 type rxe netdev s0 2>&1; echo "rxe9 on s0 (already rxe1): rc=$?"
} > $O/changes.txt 2>&1
