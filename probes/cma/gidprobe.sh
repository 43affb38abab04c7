#!/bin/sh
# The reference VM's RoCE GID table through address and link changes (docs/neigh.md "GID table"):
#   scripts/rxe-vm run --copy probes/cma/gidprobe.sh -- /opt/rdmaemu/gidprobe.sh
P=/sys/class/infiniband/rxe0/ports/1
show() { echo "== $1"; for i in 0 1 2 3 4 5; do g=$(cat $P/gids/$i 2>&1); t=$(cat $P/gid_attrs/types/$i 2>&1); n=$(cat $P/gid_attrs/ndevs/$i 2>&1); echo "$i $g [$t] [$n]"; done; }
show initial
ip addr add 192.0.2.2/28 dev d0; sleep 1; show "add 192.0.2.2"
ip addr add 2001:db8::1/64 dev d0; sleep 1; show "add 2001:db8::1"
ip addr del 192.0.2.1/28 dev d0; sleep 1; show "del 192.0.2.1"
ip addr add 192.0.2.3/28 dev d0; sleep 1; show "add 192.0.2.3"
ip link set d0 address 02:00:00:00:01:99; sleep 1; show "mac 02:00:00:00:01:99"
ip link set d0 down; sleep 1; show "d0 down"
ip link set d0 up; sleep 1; show "d0 up"
ibv_devinfo -v -d rxe0 | grep -i gid
