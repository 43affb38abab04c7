/* Variants: the settings a set of cases runs in besides the default one.
 *
 * IB   the connection-manager rows on an InfiniBand link layer (spec §15 rows of CH, ID, MIG,
 *      BIND, RADDR, RROUTE, LISTEN, CONN, REQ, ACC, REJ, DISC, NOTIFY, OPT, QP, DEV that do
 *      not name RoCE). Emulator: the IB fabric of emu_fabrics.h (SM/SA, IPoIB), the cases on
 *      ib-a. System target: runs when port 1 of the first device is InfiniBand, with --local
 *      naming its IPoIB address.
 * 2N   the connection rows with the two ends on two hosts: the active side on A, the listener
 *      on B of rxe-ref2 (fixtures/rxe-ref2.fabric, the two-VM reference). The emulator plays
 *      both hosts in the case's process (rdmaemu_ctl_open_host_devices, rdmaemu_ctl_cm_host).
 *
 * A variant names its cases by id globs; a case is in a variant only where its expected
 * values hold there unchanged (rows about RoCE GIDs, the rxe-ref second port, or a fabric of
 * their own are not). The copies run after every plain case, grouped per variant and area.
 */
#include "config.h"

#include <errno.h>
#include <fnmatch.h>
#include <string.h>
#include <infiniband/verbs.h>

#include "conformance/emu_fabrics.h"
#include "conformance/runner.h"

/* Cases that need a device and do not name the link layer. Left out: the device-independent
 * rows (dummy ids, fd -1: the library rejects them before any device is involved), rows that
 * attach a fabric of their own (the no-device and fault rows, the *e rows), need the rxe-ref
 * host's second port, silent address or plain netdev (BIND-122, RADDR-134/139b, QP-233,
 * RROUTE-141s), or assert RoCE facts (RROUTE-141: path GIDs ::ffff:IP; RROUTE-143: the
 * ENODEV of cma_resolve_iboe_route; MC-221/226: RoCE multicast without an SA, the IB join is
 * MC-221e). */
static const char *const ib_cases[] = {
	"CH-10[3456]", "ID-10[789]", "ID-110", "ID-111", "MIG-19[678]", "WEV-10[01]", "EVT-262",
	"BIND-11[89]", "BIND-12[013456789]", "RADDR-13[2357]", "RADDR-136", "RADDR-139a",
	"RROUTE-140", "LISTEN-14[5-8]", "CONN-15[12]", "ACC-174", "REJ-184", "DISC-186",
	"NOTIFY-192", "OPT-20*", "MC-220", "QP-229", "QP-23[0-24-6]", "QP-231i", "DEV-26[01]",
	"CONN-15[3-9]*", "CONN-16[0-3]*", "ACC-17[3-9]*", "REJ-18[0-3]*", "NOTIFY-191",
	"ID-112c", "ID-11[34]", "ID-172", "RS-90b", NULL,
};

/* The rows with a peer: one listener on B, one active id on A. */
static const char *const two_node_cases[] = {
	"CONN-15[3-9]*", "CONN-16[0-2]*", "ACC-173", "ACC-17[5-7]*", "REJ-18[0-3]*",
	"NOTIFY-191", "ID-11[34]", "ID-172", NULL,
};

static const struct conf_variant variant_ib = {
	.name = "IB",
	.what = "InfiniBand link layer (IPoIB, SM/SA): ",
	.fabric = EMU_FABRIC_IB,
	.node = EMU_FABRIC_IB_NODE,
	.local = EMU_FABRIC_IB_ADDR,
	.link_layer = IBV_LINK_LAYER_INFINIBAND,
	.cases = ib_cases,
};

static const struct conf_variant variant_2n = {
	.name = "2N",
	.what = "two nodes (active on A, listener on B of rxe-ref2): ",
	.fabric = EMU_FABRIC_REF2,
	.node = EMU_FABRIC_REF2_NODE,
	.peer_node = EMU_FABRIC_REF2_PEER_NODE,
	.local = EMU_FABRIC_REF2_ADDR,
	.peer = EMU_FABRIC_REF2_PEER_ADDR,
	.cases = two_node_cases,
};

const struct conf_variant *const conf_variants[] = { &variant_ib, &variant_2n, NULL };

bool conf_variant_has(const struct conf_variant *v, const char *id)
{
	for (const char *const *g = v->cases; *g; g++)
		if (!fnmatch(*g, id, 0))
			return true;
	return false;
}

static int first_port_link_layer(void)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_port_attr pa;
	struct ibv_context *ctx;
	int ll = -1;

	if (!list)
		return -1;
	ctx = list[0] ? ibv_open_device(list[0]) : NULL;
	if (ctx && !ibv_query_port(ctx, 1, &pa))
		ll = pa.link_layer;
	if (ctx)
		ibv_close_device(ctx);
	ibv_free_device_list(list);
	return ll;
}

void conf_variant_enter(const struct conf_variant *v)
{
	if (conf_target() == TARGET_EMU) {
		int (*attach)(const char *, const char *) =
			(int (*)(const char *, const char *))conf_ctl_sym("rdmaemu_ctl_attach_text");
		int (*open_host)(const char *) =
			(int (*)(const char *))conf_ctl_sym("rdmaemu_ctl_open_host_devices");

		if (!attach || !open_host)
			conf_fatal("%s: the emulator's control API is missing", v->name);
		if (attach(v->fabric, v->node))
			conf_fatal("%s: rdmaemu_ctl_attach_text failed: %s", v->name,
				   conf_errno_name(errno));
		if (v->peer_node && open_host(v->peer_node))
			conf_fatal("%s: rdmaemu_ctl_open_host_devices(%s) failed: %s", v->name,
				   v->peer_node, conf_errno_name(errno));
		return;
	}
	/* The system target: this machine is one node; its link layer decides. Two-node cases
	 * run their active half here against --peer, or with --passive their passive half. */
	if (v->peer_node && !conf_passive() && !conf_peer_addr())
		conf_notrun("two-node case: needs --peer ADDR, a host running the passive side "
			    "(rdmaemu-conformance --passive --local ADDR)");
	if (!v->peer_node && conf_passive())
		conf_notrun("--passive runs only the two-node cases");
	if (v->link_layer) {
		int ll = first_port_link_layer();

		if (ll < 0)
			conf_notrun("no RDMA device on this system");
		if (ll != v->link_layer)
			conf_notrun("needs an %s port (port 1 of the first device is %s)",
				    v->link_layer == IBV_LINK_LAYER_INFINIBAND ? "InfiniBand" : "Ethernet",
				    ll == IBV_LINK_LAYER_INFINIBAND ? "InfiniBand" : "Ethernet");
		if (!conf_local_addr())
			conf_notrun("needs --local ADDR (the IPv4 address of the %s port's netdev)",
				    v->name);
	}
}
