/* IPv6 neighbour discovery over IPoIB (emu/net/neigh_mcast.c, docs/neigh.md "IPv6 over IPoIB") on
 * fixtures/ib.fabric (ib-a, ib-b, ib-c behind one switch, the SA on the switch answering after
 * 50 us), checked on the wire and at the SA:
 *  - the first IPv6 use makes every IPoIB netdev join all-nodes and its solicited-node groups
 *    (FullMember), the solicitor joins the target's group send-only (SendOnlyFullMember), the
 *    NS goes to that group's MLID/MGID, the NA comes back unicast once the answerer has the
 *    SA's PathRecord to the solicitor's GID (emu/net/neigh_path.c); exact bytes and counts;
 *  - the send-only join dropped by the SA: -ETIMEDOUT at exactly the timeout, the NS waiting
 *    for the join retried 2 s after the query's 3 s timeout, then delivered, the 3 NAs
 *    waiting together for one PathRecord query;
 *  - the answerer's PathRecord query for its NA dropped by the SA: the NAs waiting for it
 *    dropped at its 1000 ms timeout, the next NA asks again;
 *  - 66 NS waiting for one join: 64 kept, 2 dropped;
 *  - an unknown address: 3 NS 1 s apart to a group nobody listens to, -ETIMEDOUT, FAILED at
 *    3 s;
 *  - address add/del and link down/up join and leave the groups;
 *  - no SM: every NS dropped, nothing retried;
 *  - a multicast destination resolves at once to QPN 0xFFFFFF + the group's MGID. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#include <cmocka.h>

#include "emu/ib/sa.h"
#include "emu/ib/sa_agent.h"
#include "neigh_cap.h"

#define US EMU_NSEC_PER_USEC

static const uint8_t hw_a[20] = { 0x00, 0x00, 0x00, 0x48, 0xfe, 0x80, 0, 0, 0, 0, 0, 0,
				  0x00, 0x02, 0xc9, 0x03, 0x00, 0x00, 0x0a, 0x01 };
static const uint8_t hw_b[20] = { 0x00, 0x00, 0x00, 0x48, 0xfe, 0x80, 0, 0, 0, 0, 0, 0,
				  0x00, 0x02, 0xc9, 0x03, 0x00, 0x00, 0x0b, 0x01 };
/* ib-a's link-local address: fe80:: + the GUID with the U/L bit (addrconf_ifid_infiniband) */
static const uint8_t ll_a[16] = { 0xfe, 0x80, 0, 0, 0, 0, 0, 0,
				  0x02, 0x02, 0xc9, 0x03, 0x00, 0x00, 0x0a, 0x01 };
static const uint8_t ip_b[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0x81, 0, 0, 0, 0, 0, 0, 0, 0x0b };
/* ipv6_ib_mc_map: ff12:601b:ffff + bytes 6..15 of the group address */
static const uint8_t mgid_sn_b[16] = { 0xff, 0x12, 0x60, 0x1b, 0xff, 0xff, 0, 0,
				       0,    0,	   0,	 1,    0xff, 0x00, 0x00, 0x0b };
static const uint8_t mgid_sn_c[16] = { 0xff, 0x12, 0x60, 0x1b, 0xff, 0xff, 0, 0,
				       0,    0,	   0,	 1,    0xff, 0x00, 0x00, 0x0c };
static const uint8_t mgid_all[16] = { 0xff, 0x12, 0x60, 0x1b, 0xff, 0xff, 0, 0,
				      0,    0,	  0,	0,    0,    0,	  0,	1 };
/* solicited-node groups of ib-a's link-local and of 2001:db8:0:81::a */
static const uint8_t mgid_sn_lla[16] = { 0xff, 0x12, 0x60, 0x1b, 0xff, 0xff, 0, 0,
					 0,    0,    0,	   1,	 0xff, 0x00, 0x0a, 0x01 };
static const uint8_t mgid_sn_a[16] = { 0xff, 0x12, 0x60, 0x1b, 0xff, 0xff, 0, 0,
				       0,    0,	   0,	 1,    0xff, 0x00, 0x00, 0x0a };
static const uint8_t *gid_of(const uint8_t *hw)
{
	return hw + 4;
}

static const uint8_t gid_c[16] = { 0xfe, 0x80, 0, 0, 0, 0, 0, 0,
				   0x00, 0x02, 0xc9, 0x03, 0x00, 0x00, 0x0c, 0x01 };

/* The n-th IPoIB IPv6 packet of the capture (SA MADs and ARP skipped): its frame and parse. */
static bool ib6_frame(struct cap *c, size_t n, struct frame *f, struct emu_pkt_info *pi)
{
	for (size_t i = 0; cap_frame(c, i, f); i++) {
		if (emu_pkt_parse(f->b, f->len, EMU_LL_INFINIBAND, pi) || pi->dqpn == 1 ||
		    pi->paylen < 4 || emu_be16_get(f->b + pi->hdr_off[EMU_PKT_H_PAYLOAD]) != 0x86dd)
			continue;
		if (!n--)
			return true;
	}
	return false;
}

static size_t ib6_count(struct cap *c)
{
	struct frame f;
	struct emu_pkt_info pi;
	size_t n = 0;

	while (ib6_frame(c, n, &f, &pi))
		n++;
	return n;
}

static uint64_t sa_requests(struct emu_engine *e)
{
	struct emu_sa_agent_counters ac;

	assert_int_equal(emu_sa_agent_counters(e, &ac), 0);
	return ac.requests;
}

static void test_ib6_resolve(void **state)
{
	struct emu_engine *e = nt_attach("ib.fabric", "ib-a");
	struct emu_sa_agent_counters ac;
	struct emu_neigh_stats sa, sb, sc;
	struct emu_sa *sa_;
	struct cap c;
	struct nt_res o;
	struct frame f;
	struct emu_pkt_info pi;
	const uint8_t *p;
	uint16_t mlid_b = 0, mlid;
	static const uint8_t ns_opt[4] = { 1, 3, 0, 0 }, na_opt[4] = { 2, 3, 0, 0 };

	(void)state;
	assert_non_null(e);
	cap_start(e, &c, EMU_LL_INFINIBAND);
	/* nothing IPv6 has happened on IB yet: no join was made, the SA has not started */
	assert_int_equal(emu_sa_agent_counters(e, &ac), -ENODEV);

	assert_int_equal(nt_resolve(e, 0, "2001:db8:0:81::b", 0, 2000 * MS, SEC, &o), 0);
	assert_int_equal(o.calls, 1);
	assert_int_equal(o.r.status, 0);
	/* no link delays: the NS waited for its join, answered by the SA after 50 us; ib-b has
	 * no path to ib-a's GID, so its unicast NA waits for a PathRecord query (ipoib_start_xmit
	 * -> neigh_add_path -> path_rec_start, as for the IPv4 ARP reply), 50 us more */
	assert_int_equal(o.at, 100 * US);
	assert_int_equal(o.r.hw_len, 20);
	assert_memory_equal(o.r.dst_hw, hw_b, 20);
	assert_memory_equal(o.r.src_hw, hw_a, 20);
	assert_memory_equal(o.r.dgid, gid_of(hw_b), 16);
	assert_int_equal(o.r.network, EMU_NET_IB);

	/* the SA saw 9 listening joins (3 groups x 3 hosts), ib-a's send-only join and ib-b's
	 * PathRecord query for its NA */
	assert_int_equal(emu_sa_agent_counters(e, &ac), 0);
	assert_int_equal(ac.requests, 11);
	assert_int_equal(ac.answered, 11);
	assert_int_equal(ac.dropped, 0);
	sa_ = emu_sa_agent_sa(e);
	assert_non_null(sa_);
	/* the broadcast group + all-nodes + 2 solicited-node groups per host */
	assert_int_equal(emu_sa_mcgroup_count(sa_), 8);
	assert_int_equal(emu_sa_mcgroup_member(sa_, mgid_sn_b, gid_of(hw_b), &mlid_b),
			 EMU_MC_JOIN_FULL);
	assert_int_equal(emu_sa_mcgroup_member(sa_, mgid_sn_b, gid_of(hw_a), NULL),
			 EMU_MC_JOIN_SEND_ONLY_FULL);
	assert_int_equal(emu_sa_mcgroup_member(sa_, mgid_sn_b, gid_c, NULL), 0);
	assert_int_equal(emu_sa_mcgroup_member(sa_, mgid_all, gid_c, &mlid), EMU_MC_JOIN_FULL);
	assert_int_equal(emu_sa_mcgroup_member(sa_, mgid_sn_lla, gid_of(hw_a), NULL),
			 EMU_MC_JOIN_FULL);
	assert_int_equal(emu_sa_mcgroup_member(sa_, mgid_sn_a, gid_of(hw_a), NULL),
			 EMU_MC_JOIN_FULL);
	assert_int_equal(emu_sa_mcgroup_member(sa_, mgid_sn_c, gid_c, NULL), EMU_MC_JOIN_FULL);
	/* the SA hands out MLIDs from 0xC001 in creation order: the all-nodes group came first
	 * (ib-a's joins, host order), ib-b's solicited-node group fourth */
	assert_int_equal(mlid, 0xc001);
	assert_int_equal(mlid_b, 0xc004);

	/* on the wire: the NS on ib-a's link and copied to ib-b's only (ib-c is not in the
	 * group), the NA on ib-b's link and ib-a's (the SA MADs are not counted here) */
	assert_int_equal(ib6_count(&c), 4);
	assert_true(ib6_frame(&c, 0, &f, &pi));
	assert_int_equal(pi.opcode, EMU_OP_UD | EMU_OP_SEND_ONLY);
	assert_int_equal(pi.dqpn, 0xffffff);
	assert_int_equal(emu_be16_get(f.b + 2), mlid_b); /* DLID */
	assert_int_equal(emu_be16_get(f.b + 6), 2);	  /* SLID */
	assert_int_not_equal(pi.grh_off, EMU_PKT_NO_HDR);
	assert_memory_equal(f.b + pi.grh_off + 8, gid_of(hw_a), 16);
	assert_memory_equal(f.b + pi.grh_off + 24, mgid_sn_b, 16);
	assert_int_equal(emu_be32_get(f.b + pi.hdr_off[EMU_PKT_H_DETH]), 0xb1b);
	assert_int_equal(emu_be24_get(f.b + pi.hdr_off[EMU_PKT_H_DETH] + 5), 0x48);
	/* IPoIB header 4 + IPv6 40 + NS 24 + the 24-byte source link-layer option */
	assert_int_equal(pi.paylen, 92);
	p = f.b + pi.hdr_off[EMU_PKT_H_PAYLOAD];
	assert_int_equal(emu_be16_get(p), 0x86dd);
	assert_int_equal(emu_be16_get(p + 2), 0);
	assert_int_equal(emu_be16_get(p + 4 + 4), 48); /* IPv6 payload length */
	assert_int_equal(p[4 + 6], 58);
	assert_int_equal(p[4 + 7], 255);
	assert_memory_equal(p + 4 + 8, ll_a, 16);
	assert_int_equal(p[4 + 24], 0xff);
	assert_int_equal(p[4 + 25], 0x02);
	assert_int_equal(p[4 + 24 + 11], 1);
	assert_int_equal(p[4 + 24 + 12], 0xff);
	assert_int_equal(p[4 + 24 + 15], 0x0b);
	assert_int_equal(p[44], 135);
	assert_memory_equal(p + 44 + 8, ip_b, 16);
	assert_memory_equal(p + 44 + 24, ns_opt, 4);
	assert_memory_equal(p + 44 + 28, hw_a, 20);
	assert_true(ib6_frame(&c, 1, &f, &pi));
	assert_int_equal(emu_be16_get(f.b + 2), mlid_b);
	/* the NA: unicast to ib-a's QPN and the path's DLID, no GRH, from 2001:db8:0:81::b, S and
	 * O, after the path's answer */
	assert_true(ib6_frame(&c, 2, &f, &pi));
	assert_int_equal(f.t, 100 * US);
	assert_int_equal(pi.grh_off, EMU_PKT_NO_HDR);
	assert_int_equal(emu_be16_get(f.b + 2), 2);
	assert_int_equal(emu_be16_get(f.b + 6), 3);
	assert_int_equal(pi.dqpn, 0x48);
	assert_int_equal(pi.paylen, 92);
	p = f.b + pi.hdr_off[EMU_PKT_H_PAYLOAD];
	assert_memory_equal(p + 4 + 8, ip_b, 16);
	assert_memory_equal(p + 4 + 24, ll_a, 16);
	assert_int_equal(p[44], 136);
	assert_int_equal(p[44 + 4], 0x60);
	assert_memory_equal(p + 44 + 8, ip_b, 16);
	assert_memory_equal(p + 44 + 24, na_opt, 4);
	assert_memory_equal(p + 44 + 28, hw_b, 20);

	assert_int_equal(emu_neigh_stats(e, 0, &sa), 0);
	assert_int_equal(emu_neigh_stats(e, 1, &sb), 0);
	assert_int_equal(emu_neigh_stats(e, 2, &sc), 0);
	assert_int_equal(sa.ns_sent, 1);
	assert_int_equal(sa.nd_rcvd, 1);
	assert_int_equal(sb.nd_rcvd, 1);
	assert_int_equal(sb.na_sent, 1);
	assert_int_equal(sc.nd_rcvd, 0);
	assert_int_equal(sa.dropped + sb.dropped + sc.dropped, 0);
	/* one path query, ib-b's; ib-a sent nothing unicast */
	assert_int_equal(sa.path_queries, 0);
	assert_int_equal(sb.path_queries, 1);
	assert_int_equal(sb.path_failed, 0);
	assert_int_equal(state_of(e, 0, 0, "2001:db8:0:81::b", 0), EMU_NUD_REACHABLE);
	assert_int_equal(state_of(e, 1, 0, "fe80::202:c903:0:a01", 0), EMU_NUD_STALE);

	/* ib-c next: one more send-only join (the group exists: ib-c listens to it) and ib-c's
	 * own PathRecord query for its NA */
	assert_int_equal(nt_resolve(e, 0, "2001:db8:0:81::c", 0, 2000 * MS, SEC, &o), 0);
	assert_int_equal(o.r.status, 0);
	assert_int_equal(sa_requests(e), 13);
	assert_int_equal(emu_neigh_stats(e, 2, &sc), 0);
	assert_int_equal(sc.path_queries, 1);
	assert_int_equal(emu_sa_mcgroup_member(sa_, mgid_sn_c, gid_of(hw_a), NULL),
			 EMU_MC_JOIN_SEND_ONLY_FULL);
	assert_int_equal(emu_sa_mcgroup_count(sa_), 8);
	assert_int_equal(ib6_count(&c), 8);
	cap_stop(e, &c);
	nt_detach(e);
}

/* ib.fabric with IPv6 over IPoIB in use: ib-a resolved 2001:db8:0:81::b (10 joins and ib-b's
 * PathRecord query to ib-a's GID), the clock at 1 ms. */
static struct emu_engine *started(void)
{
	struct emu_engine *e = nt_attach("ib.fabric", "ib-a");
	struct nt_res o;

	assert_non_null(e);
	assert_int_equal(nt_resolve(e, 0, "2001:db8:0:81::b", 0, 2000 * MS, SEC, &o), 0);
	assert_int_equal(o.r.status, 0);
	assert_int_equal(emu_engine_now(e), MS);
	assert_int_equal(sa_requests(e), 11);
	return e;
}

static void test_ib6_join_dropped(void **state)
{
	struct emu_engine *e = started();
	struct emu_sa_agent_counters ac;
	struct emu_neigh_stats sa, sc;
	struct nt_res o;
	uint64_t t0 = MS;

	(void)state;
	/* the SA drops the next request: ib-a's send-only join to ib-c's group */
	emu_sa_policy(emu_sa_agent_sa(e))->drop_next = 1;
	assert_int_equal(nt_resolve(e, 0, "2001:db8:0:81::c", 0, 2000 * MS, 3 * SEC, &o), 0);
	assert_int_equal(o.calls, 1);
	assert_int_equal(o.r.status, -ETIMEDOUT);
	assert_int_equal(o.at, t0 + 2000 * MS);
	assert_int_equal(emu_sa_agent_counters(e, &ac), 0);
	assert_int_equal(ac.requests, 12);
	assert_int_equal(ac.dropped, 1);
	/* the 3 solicitations (0, 1, 2 s) wait in the group's queue: none reached ib-c */
	assert_int_equal(emu_neigh_stats(e, 0, &sa), 0);
	assert_int_equal(emu_neigh_stats(e, 2, &sc), 0);
	assert_int_equal(sa.ns_sent, 1 + 3);
	assert_int_equal(sc.nd_rcvd, 0);
	assert_int_equal(emu_sa_mcgroup_member(emu_sa_agent_sa(e), mgid_sn_c, gid_of(hw_a), NULL),
			 0);
	/* the join query times out at 3 s (multicast.c's 3000 ms), the entry is FAILED at 3 s
	 * too; the join is retried after a 2 s backoff, at 5 s, and the queue goes out, 50 us
	 * later; ib-c's 3 NAs wait together for its one PathRecord query to ib-a's GID (3 is
	 * IPOIB_MAX_PATH_REC_QUEUE: none dropped), answered 50 us after that */
	emu_engine_advance(e, t0 + 5 * SEC - 1 - emu_engine_now(e));
	assert_int_equal(state_of(e, 0, 0, "2001:db8:0:81::c", 0), EMU_NUD_FAILED);
	assert_int_equal(sa_requests(e), 12);
	emu_engine_advance(e, 1);
	assert_int_equal(sa_requests(e), 13);
	emu_engine_advance(e, MS);
	assert_int_equal(sa_requests(e), 14);
	assert_int_equal(emu_sa_mcgroup_member(emu_sa_agent_sa(e), mgid_sn_c, gid_of(hw_a), NULL),
			 EMU_MC_JOIN_SEND_ONLY_FULL);
	assert_int_equal(emu_neigh_stats(e, 2, &sc), 0);
	assert_int_equal(sc.nd_rcvd, 3);
	assert_int_equal(sc.na_sent, 3);
	assert_int_equal(sc.path_queries, 1);
	assert_int_equal(sc.dropped, 0);
	assert_int_equal(emu_neigh_stats(e, 0, &sa), 0);
	assert_int_equal(sa.nd_rcvd, 1 + 3);
	/* the solicited NAs update the FAILED entry (neigh_update) */
	assert_int_equal(state_of(e, 0, 0, "2001:db8:0:81::c", 0), EMU_NUD_REACHABLE);
	nt_detach(e);
}

static void test_ib6_unknown(void **state)
{
	struct emu_engine *e;
	struct emu_neigh_stats sa, sb, sc;
	struct cap c;
	struct nt_res o;
	struct frame f;
	struct emu_pkt_info pi;
	uint16_t mlid = 0;
	uint64_t t0 = MS;
	static const uint8_t mgid_sn_99[16] = { 0xff, 0x12, 0x60, 0x1b, 0xff, 0xff, 0, 0,
						0,    0,    0,	  1,	0xff, 0x00, 0x00, 0x99 };

	(void)state;
	e = started();
	cap_start(e, &c, EMU_LL_INFINIBAND);
	assert_int_equal(nt_resolve(e, 0, "2001:db8:0:81::99", 0, 2500 * MS, 4 * SEC, &o), 0);
	assert_int_equal(o.r.status, -ETIMEDOUT);
	assert_int_equal(o.at, t0 + 2500 * MS);
	assert_int_equal(state_of(e, 0, 0, "2001:db8:0:81::99", 0), EMU_NUD_INCOMPLETE);
	/* the send-only join created the group: ib-a is its only member */
	assert_int_equal(emu_sa_mcgroup_member(emu_sa_agent_sa(e), mgid_sn_99, gid_of(hw_a), &mlid),
			 EMU_MC_JOIN_SEND_ONLY_FULL);
	assert_int_equal(sa_requests(e), 12);
	/* 3 NS, on ib-a's link only: the first after the join (50 us), then 1 s apart */
	assert_int_equal(ib6_count(&c), 3);
	for (size_t i = 0; i < 3; i++) {
		assert_true(ib6_frame(&c, i, &f, &pi));
		assert_int_equal(f.t, t0 + (i ? i * SEC : 50 * US));
		assert_int_equal(emu_be16_get(f.b + 2), mlid);
		assert_memory_equal(f.b + pi.grh_off + 24, mgid_sn_99, 16);
	}
	assert_int_equal(emu_neigh_stats(e, 0, &sa), 0);
	assert_int_equal(emu_neigh_stats(e, 1, &sb), 0);
	assert_int_equal(emu_neigh_stats(e, 2, &sc), 0);
	assert_int_equal(sa.ns_sent, 1 + 3);
	assert_int_equal(sb.nd_rcvd, 1);
	assert_int_equal(sc.nd_rcvd, 0);
	emu_engine_advance(e, t0 + 3 * SEC - emu_engine_now(e));
	assert_int_equal(state_of(e, 0, 0, "2001:db8:0:81::99", 0), EMU_NUD_FAILED);
	assert_int_equal(ib6_count(&c), 3);
	cap_stop(e, &c);
	nt_detach(e);
}

/* The NA's path query lost (an SA drop fault on ib-c's PathRecord Get): ipoib drops the NAs
 * waiting for it when it times out (path_rec_completion -> ipoib_del_neighs_by_gid frees the
 * neighbour with its queue), the next NA asks again. ib-a's NS go out at 0, 1 and 2 s (after
 * the send-only join's 50 us for the first); ib-c's query leaves at 50 us, the NA of the 1 s NS
 * joins its queue, both are dropped at the 1000 ms timeout; the 2 s NS draws a new query,
 * answered 50 us later, and ib-a's entry is REACHABLE then. */
static void test_ib6_path_dropped(void **state)
{
	struct emu_engine *e = started();
	struct emu_sa_agent_counters ac;
	struct emu_neigh_stats sa, sc;
	struct sockaddr_storage ss = nt_sa("2001:db8:0:81::c", 0);
	uint64_t t0 = MS;

	(void)state;
	assert_int_equal(emu_neigh_touch(e, 0, 0, (struct sockaddr *)&ss), EMU_NUD_INCOMPLETE);
	emu_engine_advance(e, 10 * US);
	assert_int_equal(sa_requests(e), 12); /* ib-a's send-only join to ib-c's group */
	emu_sa_policy(emu_sa_agent_sa(e))->drop_next = 1;
	emu_engine_advance(e, t0 + SEC - 1 - emu_engine_now(e));
	assert_int_equal(emu_sa_agent_counters(e, &ac), 0);
	assert_int_equal(ac.requests, 13);
	assert_int_equal(ac.dropped, 1);
	assert_int_equal(emu_neigh_stats(e, 2, &sc), 0);
	assert_int_equal(sc.nd_rcvd, 1);
	assert_int_equal(sc.na_sent, 1);
	assert_int_equal(sc.path_queries, 1);
	assert_int_equal(sc.path_failed, 0);
	assert_int_equal(sc.dropped, 0);
	assert_int_equal(sc.ipoib_sent, 0);
	/* the query times out 1000 ms after it left (t0 + 50 us), the 1 s NA waiting with it */
	emu_engine_advance(e, t0 + SEC + 50 * US - 1 - emu_engine_now(e));
	assert_int_equal(emu_neigh_stats(e, 2, &sc), 0);
	assert_int_equal(sc.nd_rcvd, 2);
	assert_int_equal(sc.path_failed, 0);
	emu_engine_advance(e, 1);
	assert_int_equal(emu_neigh_stats(e, 2, &sc), 0);
	assert_int_equal(sc.na_sent, 2);
	assert_int_equal(sc.path_failed, 1);
	assert_int_equal(sc.dropped, 2);
	assert_int_equal(sc.ipoib_sent, 0);
	assert_int_equal(state_of(e, 0, 0, "2001:db8:0:81::c", 0), EMU_NUD_INCOMPLETE);
	/* the third NS at 2 s: a new query, answered after 50 us, the NA delivered */
	emu_engine_advance(e, t0 + 2 * SEC + 50 * US - 1 - emu_engine_now(e));
	assert_int_equal(sa_requests(e), 14);
	assert_int_equal(state_of(e, 0, 0, "2001:db8:0:81::c", 0), EMU_NUD_INCOMPLETE);
	emu_engine_advance(e, 1);
	assert_int_equal(state_of(e, 0, 0, "2001:db8:0:81::c", 0), EMU_NUD_REACHABLE);
	assert_int_equal(emu_neigh_stats(e, 2, &sc), 0);
	assert_int_equal(sc.path_queries, 2);
	assert_int_equal(sc.path_failed, 1);
	assert_int_equal(sc.na_sent, 3);
	assert_int_equal(sc.ipoib_sent, 1);
	assert_int_equal(emu_neigh_stats(e, 0, &sa), 0);
	assert_int_equal(sa.ns_sent, 1 + 3);
	assert_int_equal(sa.nd_rcvd, 1 + 1);
	nt_detach(e);
}

/* 22 neighbours in one solicited-node group (the same low 24 bits), the group's join dropped:
 * their 66 NS wait in the group's queue, which holds 64 (IPOIB_MAX_MCAST_QUEUE), and go out
 * when the join is retried. */
static void test_ib6_queue_bound(void **state)
{
	struct emu_engine *e = started();
	struct emu_neigh_stats sa;
	struct cap c;
	uint64_t t0 = MS;

	(void)state;
	emu_sa_policy(emu_sa_agent_sa(e))->drop_next = 1;
	cap_start(e, &c, EMU_LL_INFINIBAND);
	for (int i = 1; i <= 22; i++) {
		char a[64];
		struct sockaddr_storage ss;

		snprintf(a, sizeof(a), "2001:db8:0:81:%x::99", i);
		ss = nt_sa(a, 0);
		assert_int_equal(emu_neigh_touch(e, 0, 0, (struct sockaddr *)&ss),
				 EMU_NUD_INCOMPLETE);
	}
	emu_engine_advance(e, t0 + 5 * SEC - 1 - emu_engine_now(e));
	assert_int_equal(emu_neigh_stats(e, 0, &sa), 0);
	assert_int_equal(sa.ns_sent, 1 + 66);
	assert_int_equal(sa.dropped, 2);
	assert_int_equal(ib6_count(&c), 0);
	emu_engine_advance(e, MS);
	assert_int_equal(sa_requests(e), 13);
	assert_int_equal(ib6_count(&c), 64);
	assert_int_equal(emu_neigh_stats(e, 0, &sa), 0);
	assert_int_equal(sa.dropped, 2);
	cap_stop(e, &c);
	nt_detach(e);
}

static void test_ib6_membership(void **state)
{
	struct emu_engine *e;
	struct emu_sa *s;
	struct emu_topology *t;
	struct sockaddr_storage a = nt_sa("2001:db8:0:81::1b", 0);
	struct nt_res o;
	uint16_t mlid_all = 0;
	uint8_t ports[8];
	static const uint8_t mgid_sn_1b[16] = { 0xff, 0x12, 0x60, 0x1b, 0xff, 0xff, 0, 0,
						0,    0,    0,	  1,	0xff, 0x00, 0x00, 0x1b };

	(void)state;
	e = started();
	s = emu_sa_agent_sa(e);
	t = emu_engine_topology(e);
	/* an added address: its solicited-node group is joined at once */
	assert_int_equal(emu_neigh_addr_add(e, 1, 0, (struct sockaddr *)&a, 64), 0);
	emu_engine_advance(e, MS);
	assert_int_equal(sa_requests(e), 12);
	assert_int_equal(emu_sa_mcgroup_member(s, mgid_sn_1b, gid_of(hw_b), NULL),
			 EMU_MC_JOIN_FULL);
	assert_int_equal(emu_sa_mcgroup_count(s), 9);
	assert_int_equal(nt_resolve(e, 0, "2001:db8:0:81::1b", 0, 2000 * MS, SEC, &o), 0);
	assert_int_equal(o.r.status, 0);
	assert_memory_equal(o.r.dst_hw, hw_b, 20);
	/* ib-a's send-only join; ib-b's NA uses the path to ib-a's GID it already has */
	assert_int_equal(sa_requests(e), 13);
	/* removed: ib-b leaves (Delete); ib-a's send-only membership keeps the group */
	assert_int_equal(emu_neigh_addr_del(e, 1, 0, (struct sockaddr *)&a, 64), 0);
	emu_engine_advance(e, MS);
	assert_int_equal(sa_requests(e), 14);
	assert_int_equal(emu_sa_mcgroup_member(s, mgid_sn_1b, gid_of(hw_b), NULL), 0);
	assert_int_equal(emu_sa_mcgroup_member(s, mgid_sn_1b, gid_of(hw_a), NULL),
			 EMU_MC_JOIN_SEND_ONLY_FULL);

	/* ib-a down: it leaves its 3 groups and its 2 send-only ones */
	assert_int_equal(emu_sa_mcgroup_member(s, mgid_all, gid_of(hw_a), &mlid_all),
			 EMU_MC_JOIN_FULL);
	assert_int_equal(emu_topology_switch_mcast_ports(t, 0, mlid_all, ports, 8), 3);
	assert_int_equal(emu_neigh_link_set(e, 0, 0, false), 0);
	emu_engine_advance(e, MS);
	assert_int_equal(sa_requests(e), 19);
	assert_int_equal(emu_sa_mcgroup_member(s, mgid_all, gid_of(hw_a), NULL), 0);
	assert_int_equal(emu_sa_mcgroup_member(s, mgid_sn_a, gid_of(hw_a), NULL), -ENOENT);
	assert_int_equal(emu_sa_mcgroup_member(s, mgid_sn_b, gid_of(hw_a), NULL), 0);
	assert_int_equal(emu_sa_mcgroup_member(s, mgid_sn_1b, gid_of(hw_a), NULL), -ENOENT);
	assert_int_equal(emu_topology_switch_mcast_ports(t, 0, mlid_all, ports, 8), 2);
	/* up again: the 3 listening joins */
	assert_int_equal(emu_neigh_link_set(e, 0, 0, true), 0);
	emu_engine_advance(e, MS);
	assert_int_equal(sa_requests(e), 22);
	assert_int_equal(emu_sa_mcgroup_member(s, mgid_all, gid_of(hw_a), NULL), EMU_MC_JOIN_FULL);
	assert_int_equal(emu_sa_mcgroup_member(s, mgid_sn_lla, gid_of(hw_a), NULL),
			 EMU_MC_JOIN_FULL);
	assert_int_equal(emu_topology_switch_mcast_ports(t, 0, mlid_all, ports, 8), 3);
	nt_detach(e);
}

/* A multicast destination on IPoIB resolves at once to QPN 0xFFFFFF + the group's MGID (the
 * kernel's arp_mc_map / ndisc_mc_map for ARPHRD_INFINIBAND), nothing sent. */
static void test_ib_mcast_dst(void **state)
{
	static const uint8_t hw4[20] = { 0x00, 0xff, 0xff, 0xff, 0xff, 0x12, 0x40, 0x1b,
					 0xff, 0xff, 0,	   0,	 0,    0,    0,	   0,
					 0x0f, 0x80, 0x02, 0x01 };
	static const uint8_t hw6[20] = { 0x00, 0xff, 0xff, 0xff, 0xff, 0x12, 0x60, 0x1b,
					 0xff, 0xff, 0,	   0,	 0,    0,    0,	   0,
					 0x00, 0x02, 0x00, 0x01 };
	struct emu_engine *e = nt_attach("ib.fabric", "ib-a");
	struct sockaddr_storage grp = nt_sa("239.128.2.1", 0), src = nt_sa("192.0.2.129", 0),
				grp6 = nt_sa("ff0e::2:1", 0),
				src6 = nt_sa("2001:db8:0:81::a", 0);
	struct emu_neigh_result r;
	struct emu_neigh_stats st;
	struct emu_sa_agent_counters ac;

	(void)state;
	assert_non_null(e);
	assert_int_equal(emu_neigh_resolve_wait(e, 0, (struct sockaddr *)&src,
						(struct sockaddr *)&grp, 1000 * MS, "test", &r),
			 0);
	assert_int_equal(emu_engine_now(e), 0);
	assert_int_equal(r.hw_len, 20);
	/* 239.128.2.1: the low 28 bits (the 0xe nibble of the first byte dropped) */
	assert_memory_equal(r.dst_hw, hw4, 20);
	assert_memory_equal(r.dgid, hw4 + 4, 16);
	assert_int_equal(emu_neigh_resolve_wait(e, 0, (struct sockaddr *)&src6,
						(struct sockaddr *)&grp6, 1000 * MS, "test", &r),
			 0);
	/* ff0e::2:1: scope and P_Key from the broadcast group, bytes 6..15 of the address */
	assert_memory_equal(r.dst_hw, hw6, 20);
	assert_int_equal(emu_neigh_stats(e, 0, &st), 0);
	assert_int_equal(st.arp_req_sent + st.ns_sent + st.ipoib_sent, 0);
	assert_int_equal(emu_sa_agent_counters(e, &ac), -ENODEV);
	nt_detach(e);
}

/* Two IPoIB hosts cabled together with no SM: the joins cannot even be sent (sa_query has no
 * SM address), IPoIB would have no carrier: every NS is dropped, nothing is retried, the
 * resolution times out. */
static const char no_sm_text[] = "seed 1\n"
				 "host a\n"
				 "  device mlx5_0 link=ib\n"
				 "  port 1 lid=2\n"
				 "  netdev ib0 rdma=mlx5_0/1\n"
				 "    addr 2001:db8::a/64\n"
				 "host b\n"
				 "  device mlx5_0 link=ib\n"
				 "  port 1 lid=3\n"
				 "  netdev ib0 rdma=mlx5_0/1\n"
				 "    addr 2001:db8::b/64\n"
				 "link a/mlx5_0/1 b/mlx5_0/1\n"
				 "sm none\n";

static void test_ib6_no_sm(void **state)
{
	char path[] = "/tmp/test_neigh_ib6.XXXXXX";
	int fd = mkstemp(path);
	struct emu_engine *e;
	struct emu_neigh_stats st;
	struct nt_res o;

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(write(fd, no_sm_text, sizeof(no_sm_text) - 1),
			 (ssize_t)sizeof(no_sm_text) - 1);
	close(fd);
	emu_engine_reset();
	emu_process_reset();
	assert_int_equal(rdmaemu_ctl_attach(path, "a"), 0);
	unlink(path);
	e = emu_engine_get();
	assert_non_null(e);
	nt_lock(e);
	assert_int_equal(nt_resolve(e, 0, "2001:db8::b", 0, 1500 * MS, 2 * SEC, &o), 0);
	assert_int_equal(o.r.status, -ETIMEDOUT);
	assert_int_equal(o.at, 1500 * MS);
	emu_engine_advance(e, 20 * SEC);
	assert_int_equal(emu_neigh_stats(e, 0, &st), 0);
	assert_int_equal(st.ns_sent, 3);
	assert_int_equal(st.dropped, 3);
	assert_int_equal(st.ipoib_sent, 0);
	assert_int_equal(state_of(e, 0, 0, "2001:db8::b", 0), EMU_NUD_FAILED);
	nt_detach(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_ib6_resolve, nt_teardown),
		cmocka_unit_test_teardown(test_ib6_join_dropped, nt_teardown),
		cmocka_unit_test_teardown(test_ib6_path_dropped, nt_teardown),
		cmocka_unit_test_teardown(test_ib6_unknown, nt_teardown),
		cmocka_unit_test_teardown(test_ib6_queue_bound, nt_teardown),
		cmocka_unit_test_teardown(test_ib6_membership, nt_teardown),
		cmocka_unit_test_teardown(test_ib6_no_sm, nt_teardown),
		cmocka_unit_test_teardown(test_ib_mcast_dst, nt_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
