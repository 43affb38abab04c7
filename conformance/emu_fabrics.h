/* Fabric texts (rdmaemu-fabric(5)) that emulator-side preconditions attach to with
 * rdmaemu_ctl_attach_text(). Kept in one place so they follow the fabric format.
 *
 * NODEV: one host with a plain netdev and no RDMA device, the emulator's counterpart of a
 * machine without HCA (spec §3.1: ucma_init fails with ENODEV). Same model as
 * fixtures/nodev.fabric; embedded so that the installed suite needs no fixture file, and with
 * `resolver files` so that no lookup can reach DNS. */
#ifndef CONFORMANCE_EMU_FABRICS_H
#define CONFORMANCE_EMU_FABRICS_H

#define EMU_FABRIC_NODEV_NODE "nodev"
#define EMU_FABRIC_NODEV                                  \
	"seed 1\n"                                        \
	"resolver files\n"                                \
	"host nodev\n"                                    \
	"  netdev eth0 mac=02:00:00:00:05:01 mtu=1500\n"  \
	"    addr 192.0.2.49/28\n"

/* CM_ABI(N): a host with an RDMA device whose kernel reports rdma_cm ABI version N (the
 * host line's cm-abi= attribute); librdmacm accepts 3 and 4 only (spec §3.1, row 34). */
#define EMU_FABRIC_CM_ABI_NODE "abi"
#define EMU_FABRIC_CM_ABI(n)                                           \
	"seed 1\n"                                                     \
	"resolver files\n"                                             \
	"host abi cm-abi=" #n "\n"                                     \
	"  device rxe0 link=eth\n"                                     \
	"  netdev d0 mac=02:00:00:00:06:01 mtu=1500 rdma=rxe0/1\n"     \
	"    addr 192.0.2.1/28\n"

/* PLAIN: an RDMA netdev and a plain netdev (198.51.100.1) without RDMA device, for the bind
 * of an address whose netdev has no device (row 122). */
#define EMU_FABRIC_PLAIN_NODE "plain"
#define EMU_FABRIC_PLAIN_ADDR "198.51.100.1"
#define EMU_FABRIC_PLAIN                                               \
	"seed 1\n"                                                     \
	"resolver files\n"                                             \
	"host plain\n"                                                 \
	"  device rxe0 link=eth\n"                                     \
	"  netdev d0 mac=02:00:00:00:07:01 mtu=1500 rdma=rxe0/1\n"     \
	"    addr 192.0.2.1/28\n"                                      \
	"  netdev e1 mac=02:00:00:00:07:02 mtu=1500\n"                 \
	"    addr " EMU_FABRIC_PLAIN_ADDR "/24\n"

/* IB: an InfiniBand subnet, the link-layer variant of the CM rows (variant.c): two hosts with
 * one single-port CA each behind one switch that also hosts the SM/SA (as fixtures/ib.fabric,
 * without its topology and ibacm files, which an embedded text cannot name). IPoIB ib0 in
 * 192.0.2.128/26; the cases run on ib-a (192.0.2.129). */
#define EMU_FABRIC_IB_NODE "ib-a"
#define EMU_FABRIC_IB_PEER_NODE "ib-b"
#define EMU_FABRIC_IB_ADDR "192.0.2.129"
#define EMU_FABRIC_IB_PEER_ADDR "192.0.2.130"
#define EMU_FABRIC_IB                                                  \
	"seed 1\n"                                                     \
	"resolver files\n"                                             \
	"host ib-a\n"                                                  \
	"  device mlx5_0 link=ib\n"                                    \
	"  netdev ib0 rdma=mlx5_0/1\n"                                 \
	"    addr " EMU_FABRIC_IB_ADDR "/26\n"                         \
	"host ib-b\n"                                                  \
	"  device mlx5_0 link=ib\n"                                    \
	"  netdev ib0 rdma=mlx5_0/1\n"                                 \
	"    addr " EMU_FABRIC_IB_PEER_ADDR "/26\n"                    \
	"switch sw ports=8 lid=1\n"                                    \
	"link ib-a/mlx5_0/1 sw/1\n"                                    \
	"link ib-b/mlx5_0/1 sw/2\n"                                    \
	"sm lid=1 sl=0 packet-lifetime=18 response-delay=50us\n"

/* REF2: fixtures/rxe-ref2.fabric, the two-VM reference (hosts A and B, rxe0 on eth0, wired to
 * each other), for the two-node variant: the active side on A, the listener on B. */
#define EMU_FABRIC_REF2_NODE "A"
#define EMU_FABRIC_REF2_PEER_NODE "B"
#define EMU_FABRIC_REF2_ADDR "192.0.2.65"
#define EMU_FABRIC_REF2_PEER_ADDR "192.0.2.66"
#define EMU_FABRIC_REF2                                                \
	"seed 1\n"                                                     \
	"resolver files\n"                                             \
	"host A\n"                                                     \
	"  device rxe0 link=eth\n"                                     \
	"  netdev eth0 mac=02:00:00:00:02:01 mtu=1500 rdma=rxe0/1\n"   \
	"    addr " EMU_FABRIC_REF2_ADDR "/28\n"                       \
	"host B\n"                                                     \
	"  device rxe0 link=eth\n"                                     \
	"  netdev eth0 mac=02:00:00:00:02:02 mtu=1500 rdma=rxe0/1\n"   \
	"    addr " EMU_FABRIC_REF2_PEER_ADDR "/28\n"                  \
	"link A/rxe0/1 B/rxe0/1\n"

#endif
