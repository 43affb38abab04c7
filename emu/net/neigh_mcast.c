/* IPv6 multicast over IPoIB, as Linux 6.1's drivers/infiniband/ulp/ipoib/ipoib_multicast.c
 * does it (docs/neigh.md "IPv6 over IPoIB"):
 *   - an IPv6 multicast address maps to the MGID ff1<scope>:601b:<P_Key> + bytes 6..15 of the
 *     address (include/net/if_inet6.h ipv6_ib_mc_map), hardware address QPN 0xFFFFFF + MGID;
 *   - a netdev is a full member of the groups it listens to (all-nodes ff02::1, the
 *     solicited-node group of each IPv6 address: net/ipv6/mcast.c, addrconf.c), joined with an
 *     MCMemberRecord Set to the SA over the wire (the SA client, emu/ib/sa_client.h);
 *   - a packet to a group the netdev is not in waits for a send-only join (ipoib_mcast_send,
 *     at most IPOIB_MAX_MCAST_QUEUE = 64 packets; more are dropped), goes out when the SA
 *     answers; a failed join is retried after a backoff of 2 s, doubling to 16 s
 *     (__ipoib_mcast_schedule_join_thread), packets waiting meanwhile, except that a send-only
 *     group gives up at its second failure: its packets are dropped and the next packet to it
 *     starts a new join (ipoib_mcast_join_complete);
 *   - an address removed or the link down leaves the groups (MCMemberRecord Delete).
 * A joined group's MLID goes into the topology's multicast table for the port (the SM's MFT
 * programming), so the switches forward the group's packets to the members.
 *
 * The group record's parameters are the IPv4 broadcast group's (RFC 4391: "the MGID MUST use the
 * same P_Key, Q_Key, SL, MTU, and HopLimit as those used in the broadcast-GID"), as emu/ib/sa.c
 * creates it: Q_Key 0x0B1B, MTU 2048 (4), rate 10 Gb/s (3), the SM's SL, traffic class, flow
 * label and hop limit 0. ipoib_mcast_join sends them all, "exactly" selectors.
 *
 * The send-only JoinState is SendOnlyFullMember (0x08): ipoib_mcast_join sets
 * SENDONLY_FULLMEMBER_JOIN for a send-only group (when the SM supports it, as OpenSM does), so
 * the SA creates a group nobody listens to yet, as an Ethernet multicast send would not need
 * one either.
 *
 * RDMAEMU_TRACE=neigh prints one line per group transition:
 *   neigh <ns> ib-a/ib0 ff12:601b:ffff::1:ff00:b (send-only): IDLE --join--> JOINING
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "emu/sim/engine.h"
#include "emu/net/neigh_priv.h"
#include "emu/hca/pkt.h"
#include "emu/ib/sa_client.h"
#include "emu/sim/topology.h"
#include "util/failcall.h"

#define IPOIB_MCAST_QPN 0xffffffu
#define IPOIB_MAX_BACKOFF_S 16
/* drivers/infiniband/core/multicast.c send_join: the MCMemberRecord query's timeout */
#define IPOIB_JOIN_TIMEOUT_MS 3000
/* the broadcast group's record (emu/ib/sa.c add_ipoib_broadcast) */
#define IPOIB_BCAST_MTU 4
#define IPOIB_BCAST_RATE 3
#define IPOIB_PKEY 0xffff
#define IPOIB_SCOPE 2

static const char *const mc_names[] = {
	[NEIGH_MC_IDLE] = "IDLE",
	[NEIGH_MC_JOINING] = "JOINING",
	[NEIGH_MC_JOINED] = "JOINED",
	[NEIGH_MC_FAILED] = "FAILED",
};

const char *emu_neigh_mcast_name(enum neigh_mc_state s)
{
	return (unsigned)s < sizeof(mc_names) / sizeof(*mc_names) ? mc_names[s] : "?";
}

void emu_neigh_ib6_mgid(const uint8_t ip6[16], uint16_t pkey, uint8_t scope, uint8_t mgid[16])
{
	mgid[0] = 0xff;
	mgid[1] = (uint8_t)(0x10 | (scope & 0xf));
	mgid[2] = 0x60; /* the IPv6 signature */
	mgid[3] = 0x1b;
	emu_be16_put(mgid + 4, pkey);
	memcpy(mgid + 6, ip6 + 6, 10);
}

static struct emu_engine *eng_of(const struct neigh_dev *d)
{
	return d->host->n->e;
}

static void set_state(struct neigh_mcast *mc, enum neigh_mc_state s, const char *why)
{
	char buf[INET6_ADDRSTRLEN];

	if (emu_neigh_trace_on())
		emu_neigh_trace("%llu %s/%s %s%s: %s --%s--> %s",
				(unsigned long long)emu_engine_now(eng_of(mc->dev)),
				mc->dev->host->h->name, mc->dev->nd->name,
				emu_neigh_ntop(AF_INET6, mc->mgid, buf, sizeof(buf)),
				mc->sendonly ? " (send-only)" : "", emu_neigh_mcast_name(mc->state),
				why, emu_neigh_mcast_name(s));
	mc->state = s;
}

static struct neigh_mcast *mc_find(const struct neigh_dev *d, const uint8_t mgid[16])
{
	for (struct neigh_mcast *mc = d->mcasts; mc; mc = mc->next)
		if (!memcmp(mc->mgid, mgid, 16))
			return mc;
	return NULL;
}

bool emu_neigh_ib6_listens(const struct neigh_dev *d, const uint8_t mgid[16])
{
	const struct neigh_mcast *mc = mc_find(d, mgid);

	return mc && !mc->sendonly && mc->state == NEIGH_MC_JOINED;
}

static void queue_drop(struct neigh_mcast *mc)
{
	while (mc->qhead) {
		struct neigh_mc_pkt *p = mc->qhead;

		mc->qhead = p->next;
		free(p);
		mc->dev->host->st.dropped++;
	}
	mc->qtail = &mc->qhead;
	mc->qlen = 0;
}

static void mc_send_now(struct neigh_mcast *mc, const uint8_t *payload, size_t len)
{
	emu_neigh_ipoib_send(mc->dev, mc->mlid, mc->sl, IPOIB_MCAST_QPN, mc->mgid, payload,
			     len);
}

static void mc_attach(struct neigh_mcast *mc, bool on)
{
	struct emu_topology *t = emu_engine_topology(eng_of(mc->dev));

	if (on == mc->attached || mc->dev->ep < 0 || !mc->mlid)
		return;
	if (on ? emu_topology_mcast_attach(t, mc->mlid, mc->dev->ep)
	       : emu_topology_mcast_detach(t, mc->mlid, mc->dev->ep))
		return;
	mc->attached = on;
}

static struct emu_sa_client_port from_of(const struct neigh_dev *d)
{
	struct emu_sa_client_port p = { d->host->idx, (size_t)d->nd->device, d->nd->port };

	return p;
}

static void join(struct neigh_mcast *mc);

static void retry_fn(struct emu_clock *clk, struct emu_timer *t, void *arg)
{
	struct neigh_mcast *mc = arg;

	(void)clk, (void)t;
	/* the join task takes a send-only group only when packets wait for it */
	if (mc->state != NEIGH_MC_FAILED)
		return;
	if (mc->sendonly && !mc->qhead)
		set_state(mc, NEIGH_MC_IDLE, "idle");
	else
		join(mc);
}

/* ipoib_mcast_join_complete */
static void join_done(struct emu_sa_query *q, int status, uint16_t mad_status, const void *recs,
		      size_t nrecs, size_t rec_size, void *ctx)
{
	struct neigh_mcast *mc = ctx;
	const struct emu_sa_mcmember_rec *r = recs;

	(void)q, (void)rec_size;
	mc->q = NULL;
	if (status == -EINTR)
		return; /* cancelled by a leave: its caller decides */
	if (!status && nrecs) {
		mc->mlid = r->mlid;
		mc->sl = r->sl;
		mc->backoff = 1;
		set_state(mc, NEIGH_MC_JOINED, "joined");
		mc_attach(mc, true);
		/* the queued packets go out, in order */
		while (mc->qhead) {
			struct neigh_mc_pkt *p = mc->qhead;

			mc->qhead = p->next;
			mc_send_now(mc, p->data, p->len);
			free(p);
		}
		mc->qtail = &mc->qhead;
		mc->qlen = 0;
		return;
	}
	emu_neigh_trace("%llu %s/%s: multicast join failed: %d (MAD status 0x%x)",
			(unsigned long long)emu_engine_now(eng_of(mc->dev)),
			mc->dev->host->h->name, mc->dev->nd->name, status, mad_status);
	if (mc->sendonly && mc->backoff >= 2) {
		/* "We only retry sendonly joins once before we drop the packet": the group stays,
		 * unjoined, until the next packet to it */
		mc->backoff = 1;
		set_state(mc, NEIGH_MC_IDLE, "failed");
		queue_drop(mc);
		return;
	}
	/* __ipoib_mcast_schedule_join_thread(priv, mcast, 1): the backoff doubles first */
	mc->backoff = mc->backoff * 2 > IPOIB_MAX_BACKOFF_S ? IPOIB_MAX_BACKOFF_S : mc->backoff * 2;
	set_state(mc, NEIGH_MC_FAILED, "failed");
	emu_timer_arm_in(emu_engine_clock(eng_of(mc->dev)), &mc->retry,
			 (uint64_t)mc->backoff * EMU_NSEC_PER_SEC);
}

/* ipoib_mcast_join: MCMemberRecord Set with the broadcast group's parameters. */
static void join(struct neigh_mcast *mc)
{
	struct neigh_dev *d = mc->dev;
	struct emu_sa_client_port from = from_of(d);
	struct emu_sa_query_opts opts = { IPOIB_JOIN_TIMEOUT_MS, 0 };
	struct emu_sa_mcmember_rec rec;
	int err = 0;

	memset(&rec, 0, sizeof(rec));
	memcpy(rec.mgid, mc->mgid, 16);
	memcpy(rec.port_gid, d->gid, 16);
	rec.pkey = IPOIB_PKEY;
	rec.join_state = mc->sendonly ? EMU_MC_JOIN_SEND_ONLY_FULL : EMU_MC_JOIN_FULL;
	rec.qkey = EMU_IPOIB_QKEY;
	rec.mtu_selector = EMU_SA_SEL_EQ;
	rec.mtu = IPOIB_BCAST_MTU;
	rec.rate_selector = EMU_SA_SEL_EQ;
	rec.rate = IPOIB_BCAST_RATE;
	rec.sl = d->host->n->f->sm.sl;
	set_state(mc, NEIGH_MC_JOINING, "join");
	mc->q = emu_sa_mcmember_join(
		eng_of(d), &from, &rec,
		EMU_MCR_COMP_MGID | EMU_MCR_COMP_PORT_GID | EMU_MCR_COMP_PKEY |
			EMU_MCR_COMP_JOIN_STATE | EMU_MCR_COMP_QKEY | EMU_MCR_COMP_MTU_SELECTOR |
			EMU_MCR_COMP_MTU | EMU_MCR_COMP_TCLASS | EMU_MCR_COMP_RATE_SELECTOR |
			EMU_MCR_COMP_RATE | EMU_MCR_COMP_SL | EMU_MCR_COMP_FLOW_LABEL |
			EMU_MCR_COMP_HOP_LIMIT,
		&opts, join_done, mc, &err);
	if (mc->q)
		return;
	if (err == -ENODEV || err == -EAGAIN) {
		/* no SM on the port (or not an IB port): IPoIB would not even have joined its
		 * broadcast group and kept its carrier off; nothing is sent, nothing retried */
		set_state(mc, NEIGH_MC_IDLE, "no SM");
		queue_drop(mc);
		return;
	}
	join_done(NULL, err ? err : -ENOMEM, 0, NULL, 0, 0, mc); /* the same backoff */
}

static struct neigh_mcast *mc_new(struct neigh_dev *d, const uint8_t mgid[16], bool sendonly)
{
	struct neigh_mcast *mc = emu_calloc(1, sizeof(*mc));

	if (!mc)
		return NULL;
	mc->dev = d;
	memcpy(mc->mgid, mgid, 16);
	mc->sendonly = sendonly;
	mc->backoff = 1;
	mc->qtail = &mc->qhead;
	emu_timer_init(&mc->retry, retry_fn, mc);
	mc->next = d->mcasts;
	d->mcasts = mc;
	return mc;
}

/* ipoib_mcast_leave + free: Delete at the SA when joined, out of the tree, queue dropped. */
static void mc_remove(struct neigh_mcast *mc, bool tell_sa)
{
	struct neigh_dev *d = mc->dev;
	struct neigh_mcast **pp;

	if (mc->q) {
		struct emu_sa_query *q = mc->q;

		mc->q = NULL;
		emu_sa_query_cancel(q);
	}
	emu_timer_cancel(emu_engine_clock(eng_of(d)), &mc->retry);
	if (tell_sa && mc->state == NEIGH_MC_JOINED) {
		struct emu_sa_client_port from = from_of(d);
		struct emu_sa_query_opts opts = { IPOIB_JOIN_TIMEOUT_MS, 0 };
		struct emu_sa_mcmember_rec rec;

		memset(&rec, 0, sizeof(rec));
		memcpy(rec.mgid, mc->mgid, 16);
		memcpy(rec.port_gid, d->gid, 16);
		rec.join_state = mc->sendonly ? EMU_MC_JOIN_SEND_ONLY_FULL : EMU_MC_JOIN_FULL;
		emu_sa_mcmember_leave(eng_of(d), &from, &rec,
				      EMU_MCR_COMP_MGID | EMU_MCR_COMP_PORT_GID |
					      EMU_MCR_COMP_JOIN_STATE,
				      &opts, NULL, NULL, NULL);
	}
	mc_attach(mc, false);
	set_state(mc, NEIGH_MC_IDLE, "leave");
	queue_drop(mc);
	for (pp = &d->mcasts; *pp; pp = &(*pp)->next)
		if (*pp == mc) {
			*pp = mc->next;
			break;
		}
	free(mc);
}

void emu_neigh_ib6_mcast_send(struct neigh_dev *d, const uint8_t ip6[16], const uint8_t *payload,
			      size_t paylen)
{
	uint8_t mgid[16];
	struct neigh_mcast *mc;
	struct neigh_mc_pkt *p;

	emu_neigh_ib6_mgid(ip6, IPOIB_PKEY, IPOIB_SCOPE, mgid);
	mc = mc_find(d, mgid);
	if (mc && mc->state == NEIGH_MC_JOINED) {
		mc_send_now(mc, payload, paylen);
		return;
	}
	if (!mc) {
		mc = mc_new(d, mgid, true);
		if (!mc) {
			d->host->st.dropped++;
			return;
		}
	}
	if (mc->qlen >= NEIGH_IPOIB_MAX_MCAST_QUEUE || !(p = emu_malloc(sizeof(*p) + paylen))) {
		d->host->st.dropped++;
	} else {
		p->next = NULL;
		p->len = paylen;
		memcpy(p->data, payload, paylen);
		*mc->qtail = p;
		mc->qtail = &p->next;
		mc->qlen++;
	}
	/* a group waiting for its backoff is joined again when the retry timer fires */
	if (mc->state == NEIGH_MC_IDLE)
		join(mc);
}

/* Whether d listens to mgid: all-nodes, or the solicited-node group of one of its addresses. */
static bool wants(const struct neigh_dev *d, const uint8_t mgid[16])
{
	static const uint8_t all_nodes[16] = { 0xff, 0x02, 0, 0, 0, 0, 0, 0,
					       0,    0,    0, 0, 0, 0, 0, 1 };
	uint8_t m[16], sn[16];

	emu_neigh_ib6_mgid(all_nodes, IPOIB_PKEY, IPOIB_SCOPE, m);
	if (!memcmp(m, mgid, 16))
		return true;
	for (size_t i = 0; i < d->naddrs; i++) {
		if (d->addrs[i].family != AF_INET6)
			continue;
		emu_neigh_solicited_node(d->addrs[i].addr.v6.s6_addr, sn);
		emu_neigh_ib6_mgid(sn, IPOIB_PKEY, IPOIB_SCOPE, m);
		if (!memcmp(m, mgid, 16))
			return true;
	}
	return false;
}

/* Joins mgid as a full member unless it is one already; a send-only group becomes a full one
 * (ipoib_mcast_restart_task drops the send-only entry and joins anew). */
static void want_full(struct neigh_dev *d, const uint8_t mgid[16])
{
	struct neigh_mcast *mc = mc_find(d, mgid);

	if (mc && !mc->sendonly)
		return;
	if (mc)
		mc_remove(mc, true);
	mc = mc_new(d, mgid, false);
	if (mc)
		join(mc);
	else
		d->host->st.dropped++;
}

void emu_neigh_ib6_sync(struct neigh_dev *d)
{
	static const uint8_t all_nodes[16] = { 0xff, 0x02, 0, 0, 0, 0, 0, 0,
					       0,    0,    0, 0, 0, 0, 0, 1 };
	uint8_t m[16], sn[16];
	bool has_v6 = false;

	if (!d->ipoib || !d->host->n->ib6_on || d->nd->device < 0)
		return;
	if (!d->up) {
		/* ipoib_mcast_dev_flush on ipoib_stop: every group left */
		while (d->mcasts)
			mc_remove(d->mcasts, true);
		return;
	}
	/* full members that are no longer wanted leave (the address went away) */
	for (struct neigh_mcast *mc = d->mcasts, *next; mc; mc = next) {
		next = mc->next;
		if (!mc->sendonly && !wants(d, mc->mgid))
			mc_remove(mc, true);
	}
	for (size_t i = 0; i < d->naddrs; i++)
		has_v6 |= d->addrs[i].family == AF_INET6;
	if (!has_v6)
		return; /* no IPv6 on the netdev (disable_ipv6): it joins no IPv6 group */
	emu_neigh_ib6_mgid(all_nodes, IPOIB_PKEY, IPOIB_SCOPE, m);
	want_full(d, m);
	for (size_t i = 0; i < d->naddrs; i++) {
		if (d->addrs[i].family != AF_INET6)
			continue;
		emu_neigh_solicited_node(d->addrs[i].addr.v6.s6_addr, sn);
		emu_neigh_ib6_mgid(sn, IPOIB_PKEY, IPOIB_SCOPE, m);
		want_full(d, m);
	}
}

void emu_neigh_ib6_start(struct emu_neigh *n)
{
	if (n->ib6_on)
		return;
	n->ib6_on = true;
	emu_neigh_trace("IPv6 over IPoIB in use: the IPoIB netdevs join their groups");
	for (size_t h = 0; h < n->nhosts; h++)
		for (size_t i = 0; i < n->hosts[h].ndevs; i++)
			emu_neigh_ib6_sync(&n->hosts[h].devs[i]);
}

void emu_neigh_ib6_free(struct neigh_dev *d)
{
	while (d->mcasts) {
		struct neigh_mcast *mc = d->mcasts;

		d->mcasts = mc->next;
		/* the MAD layer went first (engine teardown): its queries are gone with it */
		emu_timer_cancel(emu_engine_clock(eng_of(d)), &mc->retry);
		while (mc->qhead) {
			struct neigh_mc_pkt *p = mc->qhead;

			mc->qhead = p->next;
			free(p);
		}
		free(mc);
	}
}
