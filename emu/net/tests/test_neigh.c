/* The neighbour layer (emu/net/neigh.h): address resolution as rdma_resolve_addr's kernel half does
 * it, with the exchanges on the wire checked byte for byte and at exact virtual times:
 *  - ARP between rxe-ref2's A and B (request, reply, the entries' states), cache reuse;
 *  - rxe-ref: 192.0.2.30 unanswered (3 broadcast requests 1 s apart, -ETIMEDOUT at exactly the
 *    caller's timeout, FAILED at 3 s, restart on the next use), 203.0.113.9 ENETUNREACH at
 *    once, the NOARP dummy d0 resolving at once, loopback;
 *  - IPv6 neighbour discovery (link-local and added global addresses);
 *  - IPoIB ARP on ib.fabric through the switch's multicast forwarding, the replier's SA
 *    PathRecord query (once per destination GID; a dropped query drops the reply; at most
 *    3 frames wait behind it);
 *  - address and link changes: listeners, routes, the control API. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "emu/ib/sa_agent.h"
#include "neigh_cap.h"

/* the frames of rxe-ref2 (MACs 02:00:00:00:02:01 / :02, 192.0.2.65 / .66) */
static const uint8_t arp_req_a[60] = {
	0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0x00, 0x00, 0x00, 0x02, 0x01, 0x08, 0x06,
	0x00, 0x01, 0x08, 0x00, 0x06, 0x04, 0x00, 0x01, /* Ethernet, IPv4, 6, 4, request */
	0x02, 0x00, 0x00, 0x00, 0x02, 0x01, 192,  0,	2,    65, /* sender */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 192,  0,	2,    66, /* target: unknown MAC */
};
static const uint8_t arp_rep_b[60] = {
	0x02, 0x00, 0x00, 0x00, 0x02, 0x01, 0x02, 0x00, 0x00, 0x00, 0x02, 0x02, 0x08, 0x06,
	0x00, 0x01, 0x08, 0x00, 0x06, 0x04, 0x00, 0x02, /* reply */
	0x02, 0x00, 0x00, 0x00, 0x02, 0x02, 192,  0,	2,    66,
	0x02, 0x00, 0x00, 0x00, 0x02, 0x01, 192,  0,	2,    65,
};

/* ---------- ARP ---------- */

static void test_arp_two_hosts(void **state)
{
	struct emu_engine *e = nt_attach("rxe-ref2.fabric", "A");
	struct cap c;
	struct nt_res o;
	struct emu_neigh_stats sa, sb;
	static const uint8_t mac_b[6] = { 2, 0, 0, 0, 2, 2 };
	static const uint8_t gid_a[16] = { [10] = 0xff, [11] = 0xff, 192, 0, 2, 65 };
	static const uint8_t gid_b[16] = { [10] = 0xff, [11] = 0xff, 192, 0, 2, 66 };

	(void)state;
	assert_non_null(e);
	set_delay(e, 0, 10 * EMU_NSEC_PER_USEC);
	cap_start(e, &c, EMU_LL_ETHERNET);

	assert_int_equal(nt_resolve(e, 0, "192.0.2.66", 0, 2000 * MS, 3 * SEC, &o), 0);
	/* request out at 0, at B at 10 us, reply back at 20 us: resolved then */
	assert_int_equal(o.calls, 1);
	assert_int_equal(o.at, 20 * EMU_NSEC_PER_USEC);
	assert_int_equal(o.r.status, 0);
	assert_int_equal(o.r.netdev, 0);
	assert_int_equal(o.r.device, 0);
	assert_int_equal(o.r.port, 1);
	assert_int_equal(o.r.hw_len, 6);
	assert_memory_equal(o.r.dst_hw, mac_b, 6);
	assert_false(o.r.loopback);
	assert_false(o.r.gateway);
	assert_int_equal(o.r.network, EMU_NET_IB);
	assert_memory_equal(o.r.sgid, gid_a, 16);
	assert_memory_equal(o.r.dgid, gid_b, 16);
	assert_int_equal(((struct sockaddr_in *)&o.r.src)->sin_addr.s_addr, htonl(0xc0000241));

	assert_int_equal(cap_count(&c), 2);
	assert_frame(&c, 0, 0, arp_req_a, 60);
	assert_frame(&c, 1, 10 * EMU_NSEC_PER_USEC, arp_rep_b, 60);
	/* A confirmed B (REACHABLE); B learnt A from the request (STALE, neigh_event_ns) */
	assert_int_equal(state_of(e, 0, 0, "192.0.2.66", 0), EMU_NUD_REACHABLE);
	assert_int_equal(state_of(e, 1, 0, "192.0.2.65", 0), EMU_NUD_STALE);
	assert_int_equal(emu_neigh_stats(e, 0, &sa), 0);
	assert_int_equal(emu_neigh_stats(e, 1, &sb), 0);
	assert_int_equal(sa.arp_req_sent, 1);
	assert_int_equal(sa.arp_rcvd, 1);
	assert_int_equal(sb.arp_rep_sent, 1);
	assert_int_equal(sb.arp_rcvd, 1);

	/* cache reuse: the second resolution sends nothing and completes at the same instant
	 * (nt_resolve ran the clock on to 1 ms) */
	assert_int_equal(emu_engine_now(e), MS);
	assert_int_equal(nt_resolve(e, 0, "192.0.2.66", 0, 2000 * MS, SEC, &o), 0);
	assert_int_equal(o.calls, 1);
	assert_int_equal(o.at, MS);
	assert_int_equal(o.r.status, 0);
	assert_memory_equal(o.r.dst_hw, mac_b, 6);
	assert_int_equal(cap_count(&c), 2);

	/* B resolves A from its STALE entry: valid, so nothing is sent either */
	assert_int_equal(nt_resolve(e, 1, "192.0.2.65", 0, 2000 * MS, SEC, &o), 0);
	assert_int_equal(o.r.status, 0);
	assert_int_equal(cap_count(&c), 2);

	/* reachable_time is drawn in [15 s, 45 s): by 45 s the entry is STALE, still used
	 * without a frame (addr.c reads a valid entry without neigh_event_send) */
	emu_engine_advance(e, 45 * SEC);
	assert_int_equal(state_of(e, 0, 0, "192.0.2.66", 0), EMU_NUD_STALE);
	assert_int_equal(nt_resolve(e, 0, "192.0.2.66", 0, 2000 * MS, SEC, &o), 0);
	assert_int_equal(o.r.status, 0);
	assert_int_equal(cap_count(&c), 2);
	cap_stop(e, &c);
	nt_detach(e);
}

static void test_arp_timeout(void **state)
{
	struct emu_engine *e = nt_attach("rxe-ref.fabric", "rxe-ref");
	struct cap c;
	struct nt_res o;
	struct frame f;
	struct emu_neigh_stats st;
	(void)state;
	assert_non_null(e);
	/* rxe-ref's ports are cabled to nothing: tap the frames at the sender instead */
	cap_start(e, &c, EMU_LL_ETHERNET);
	assert_int_equal(nt_resolve(e, 0, "192.0.2.30", 0, 2000 * MS, 10 * SEC, &o), 0);
	assert_int_equal(o.calls, 1);
	assert_int_equal(o.r.status, -ETIMEDOUT);
	assert_int_equal(o.at, 2000 * MS); /* exactly the caller's timeout */
	assert_int_equal(o.r.netdev, 1); /* s0 */
	assert_int_equal(emu_neigh_stats(e, 0, &st), 0);
	/* requests at 0 s and 1 s; the third goes at 2 s after the request ended */
	assert_int_equal(st.arp_req_sent, 3);
	assert_int_equal(state_of(e, 0, 1, "192.0.2.30", 0), EMU_NUD_INCOMPLETE);
	emu_engine_advance(e, 999 * MS);
	assert_int_equal(state_of(e, 0, 1, "192.0.2.30", 0), EMU_NUD_INCOMPLETE);
	emu_engine_advance(e, 1 * MS); /* 3 s: max probes, FAILED */
	assert_int_equal(state_of(e, 0, 1, "192.0.2.30", 0), EMU_NUD_FAILED);
	emu_engine_advance(e, 10 * SEC);
	assert_int_equal(emu_neigh_stats(e, 0, &st), 0);
	assert_int_equal(st.arp_req_sent, 3);
	/* rxe-ref's links are `none`: the wire refuses the frames, so none is captured; the
	 * counted solicitations are those the kernel sends (what s0's tx_packets shows) */
	assert_false(cap_frame(&c, 0, &f));

	/* the next use restarts resolution from FAILED: a new broadcast at once */
	assert_int_equal(nt_resolve(e, 0, "192.0.2.30", 0, 500 * MS, 10 * SEC, &o), 0);
	assert_int_equal(o.r.status, -ETIMEDOUT);
	assert_int_equal(o.at, 13 * SEC + 500 * MS);
	assert_int_equal(emu_neigh_stats(e, 0, &st), 0);
	assert_int_equal(st.arp_req_sent, 4);
	assert_int_equal(state_of(e, 0, 1, "192.0.2.30", 0), EMU_NUD_INCOMPLETE);
	cap_stop(e, &c);
	nt_detach(e);
}

static void test_arp_timeout_bytes(void **state)
{
	/* the unanswered requests' bytes and times on rxe-ref2's wire, for an address of A's
	 * subnet that nobody has */
	struct emu_engine *e = nt_attach("rxe-ref2.fabric", "A");
	struct cap c;
	struct nt_res o;
	static const uint8_t req[60] = {
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0x00, 0x00, 0x00, 0x02, 0x01, 0x08, 0x06,
		0x00, 0x01, 0x08, 0x00, 0x06, 0x04, 0x00, 0x01, 0x02, 0x00, 0x00, 0x00, 0x02, 0x01,
		192,  0,    2,	  65,	0,    0,    0,	  0,	0,    0,    192,  0,	2,    77,
	};

	(void)state;
	assert_non_null(e);
	cap_start(e, &c, EMU_LL_ETHERNET);
	/* 192.0.2.77 is in A's /28 and nobody has it */
	assert_int_equal(nt_resolve(e, 0, "192.0.2.77", 0, 5000 * MS, 10 * SEC, &o), 0);
	assert_int_equal(o.r.status, -ETIMEDOUT);
	assert_int_equal(o.at, 5 * SEC);
	/* 0, 1, 2 s; FAILED at 3 s; the request's last look at 5 s restarts it (4th at 5 s) */
	assert_int_equal(cap_count(&c), 4);
	assert_frame(&c, 0, 0, req, 60);
	assert_frame(&c, 1, 1 * SEC, req, 60);
	assert_frame(&c, 2, 2 * SEC, req, 60);
	assert_frame(&c, 3, 5 * SEC, req, 60);
	cap_stop(e, &c);
	nt_detach(e);
}

static void test_unreachable_noarp_loopback(void **state)
{
	struct emu_engine *e = nt_attach("rxe-ref.fabric", "rxe-ref");
	struct nt_res o;
	struct emu_neigh_stats st;
	static const uint8_t mac_d0[6] = { 2, 0, 0, 0, 1, 1 };

	(void)state;
	assert_non_null(e);
	/* no route: synchronous, no callback, nothing sent */
	assert_int_equal(nt_resolve(e, 0, "203.0.113.9", 0, 2000 * MS, 3 * SEC, &o), -ENETUNREACH);
	assert_int_equal(o.calls, 0);
	assert_int_equal(nt_resolve(e, 0, "2001:db8::1", 0, 2000 * MS, 3 * SEC, &o), -ENETUNREACH);

	/* d0 is a dummy (NOARP): a silent address resolves at once, with no frame */
	assert_int_equal(nt_resolve(e, 0, "192.0.2.5", 0, 2000 * MS, 3 * SEC, &o), 0);
	assert_int_equal(o.calls, 1);
	assert_int_equal(o.at, 0);
	assert_int_equal(o.r.status, 0);
	assert_int_equal(o.r.netdev, 0);
	/* the destination MAC is d0's own (measured on the reference VM through the RoCE path
	 * record of rdma_resolve_route to 192.0.2.5: see docs/cma.md) */
	assert_memory_equal(o.r.dst_hw, mac_d0, 6);
	/* addr_resolve_neigh() does not even look a neighbour up on a NOARP netdev */
	assert_int_equal(state_of(e, 0, 0, "192.0.2.5", 0), -1);

	/* an own address: loopback, at once, the netdev that holds it */
	assert_int_equal(nt_resolve(e, 0, "192.0.2.17", 0, 2000 * MS, 3 * SEC, &o), 0);
	assert_int_equal(o.r.status, 0);
	assert_true(o.r.loopback);
	assert_int_equal(o.r.netdev, 1);
	assert_int_equal(((struct sockaddr_in *)&o.r.src)->sin_addr.s_addr, htonl(0xc0000211));
	assert_int_equal(nt_resolve(e, 0, "192.0.2.1", 0, 2000 * MS, 3 * SEC, &o), 0);
	assert_true(o.r.loopback);
	assert_memory_equal(o.r.dst_hw, mac_d0, 6);
	/* 127.0.0.1: loopback without a netdev (rdma_cm binds it to a device itself) */
	assert_int_equal(nt_resolve(e, 0, "127.0.0.1", 0, 2000 * MS, 3 * SEC, &o), 0);
	assert_true(o.r.loopback);
	assert_int_equal(o.r.netdev, -1);
	assert_int_equal(emu_neigh_stats(e, 0, &st), 0);
	assert_int_equal(st.arp_req_sent, 0);
	nt_detach(e);
}

static void test_route_source(void **state)
{
	struct emu_engine *e = nt_attach("rxe-ref.fabric", "rxe-ref");
	struct emu_neigh_result r;
	struct sockaddr_storage d = nt_sa("192.0.2.20", 0), s = nt_sa("192.0.2.1", 0),
				bad = nt_sa("192.0.2.2", 0), d6 = nt_sa("fe80::1", 3);

	(void)state;
	assert_non_null(e);
	/* the source the connected route gives, then a bound one (any local address) */
	assert_int_equal(emu_neigh_route(e, 0, NULL, (struct sockaddr *)&d, &r), 0);
	assert_int_equal(r.netdev, 1);
	assert_int_equal(((struct sockaddr_in *)&r.src)->sin_addr.s_addr, htonl(0xc0000211));
	assert_int_equal(emu_neigh_route(e, 0, (struct sockaddr *)&s, (struct sockaddr *)&d, &r), 0);
	assert_int_equal(r.netdev, 1);
	assert_int_equal(((struct sockaddr_in *)&r.src)->sin_addr.s_addr, htonl(0xc0000201));
	/* a source that is not the host's: EINVAL (ip_route_output_key) */
	assert_int_equal(emu_neigh_route(e, 0, (struct sockaddr *)&bad, (struct sockaddr *)&d, &r),
			 -EINVAL);
	/* families differ */
	assert_int_equal(emu_neigh_route(e, 0, (struct sockaddr *)&s, (struct sockaddr *)&d6, &r),
			 -EINVAL);
	/* a link-local destination goes out of its scope's netdev (ifindex 3 = s0), from s0's
	 * link-local address */
	assert_int_equal(emu_neigh_route(e, 0, NULL, (struct sockaddr *)&d6, &r), 0);
	assert_int_equal(r.netdev, 1);
	{
		struct sockaddr_storage want = nt_sa("fe80::ff:fe00:102", 0);

		assert_memory_equal(&((struct sockaddr_in6 *)&r.src)->sin6_addr,
				    &((struct sockaddr_in6 *)&want)->sin6_addr, 16);
	}
	nt_detach(e);
}

static void test_gateway_route(void **state)
{
	/* a route through a gateway: the neighbour resolved is the gateway's (B), the result is
	 * RoCEv2 IPv4 (copy_src_l2_addr) */
	static const char fabric[] =
		"seed 1\n"
		"host A\n"
		"  device rxe0 link=eth\n"
		"  netdev eth0 mac=02:00:00:00:02:01 rdma=rxe0/1\n"
		"    addr 192.0.2.65/28\n"
		"  route 198.51.100.0/24 via 192.0.2.66\n"
		"host B\n"
		"  device rxe0 link=eth\n"
		"  netdev eth0 mac=02:00:00:00:02:02 rdma=rxe0/1\n"
		"    addr 192.0.2.66/28\n"
		"link A/rxe0/1 B/rxe0/1\n";
	struct emu_engine *e;
	struct nt_res o;
	static const uint8_t mac_b[6] = { 2, 0, 0, 0, 2, 2 };

	(void)state;
	emu_engine_reset();
	emu_process_reset();
	assert_int_equal(rdmaemu_ctl_attach_text(fabric, "A"), 0);
	e = emu_engine_get();
	assert_non_null(e);
	nt_lock(e);
	assert_int_equal(nt_resolve(e, 0, "198.51.100.7", 0, 2000 * MS, SEC, &o), 0);
	assert_int_equal(o.r.status, 0);
	assert_true(o.r.gateway);
	assert_int_equal(o.r.network, EMU_NET_IPV4);
	assert_memory_equal(o.r.dst_hw, mac_b, 6);
	assert_int_equal(state_of(e, 0, 0, "192.0.2.66", 0), EMU_NUD_REACHABLE);
	assert_int_equal(state_of(e, 0, 0, "198.51.100.7", 0), -1);
	assert_int_equal(nt_resolve(e, 0, "198.51.101.7", 0, 2000 * MS, SEC, &o), -ENETUNREACH);
	nt_detach(e);
}

static void test_ipoib_gateway(void **state)
{
	/* IPoIB behind a gateway: the kernel asks ibacm over netlink; nobody listens */
	static const char fabric[] =
		"seed 1\n"
		"host x\n"
		"  device mlx5_0 link=ib\n"
		"  netdev ib0 rdma=mlx5_0/1\n"
		"    addr 192.0.2.129/26\n"
		"  route 198.51.100.0/24 via 192.0.2.130\n"
		"host y\n"
		"  device mlx5_0 link=ib\n"
		"  netdev ib0 rdma=mlx5_0/1\n"
		"    addr 192.0.2.130/26\n"
		"link x/mlx5_0/1 y/mlx5_0/1\n";
	struct emu_engine *e;
	struct nt_res o;

	(void)state;
	emu_engine_reset();
	emu_process_reset();
	assert_int_equal(rdmaemu_ctl_attach_text(fabric, "x"), 0);
	e = emu_engine_get();
	assert_non_null(e);
	nt_lock(e);
	assert_int_equal(nt_resolve(e, 0, "198.51.100.7", 0, 2000 * MS, SEC, &o), -EADDRNOTAVAIL);
	assert_int_equal(o.calls, 0);
	nt_detach(e);
}

/* ---------- IPv6 ---------- */

/* RFC 1071 over the ICMPv6 pseudo-header, written here independently of the layer's */
static uint16_t csum6(const uint8_t *ip6, const uint8_t *icmp, size_t len)
{
	uint32_t s = 0;
	uint8_t ph[40];

	memcpy(ph, ip6 + 8, 32);
	ph[32] = ph[33] = 0;
	ph[34] = (uint8_t)(len >> 8);
	ph[35] = (uint8_t)len;
	ph[36] = ph[37] = ph[38] = 0;
	ph[39] = 58;
	for (size_t i = 0; i < 40; i += 2)
		s += (uint32_t)ph[i] << 8 | ph[i + 1];
	for (size_t i = 0; i < len; i += 2)
		s += (uint32_t)icmp[i] << 8 | (i + 1 < len ? icmp[i + 1] : 0);
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)s;
}

static void test_nd(void **state)
{
	struct emu_engine *e = nt_attach("rxe-ref2.fabric", "A");
	struct cap c;
	struct nt_res o;
	struct frame f;
	static const uint8_t mac_b[6] = { 2, 0, 0, 0, 2, 2 };
	/* NS from A's link-local fe80::ff:fe00:201 to ff02::1:ff00:202 for fe80::ff:fe00:202 */
	static const uint8_t ns[86] = {
		0x33, 0x33, 0xff, 0x00, 0x02, 0x02, 0x02, 0x00, 0x00, 0x00, 0x02, 0x01, 0x86, 0xdd,
		0x60, 0, 0, 0, 0x00, 0x20, 58, 255, /* version 6, payload 32, ICMPv6, hop 255 */
		0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xfe, 0x00, 0x02, 0x01,
		0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01, 0xff, 0x00, 0x02, 0x02,
		135, 0, 0, 0, /* checksum checked apart */ 0, 0, 0, 0,
		0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xfe, 0x00, 0x02, 0x02,
		1, 1, 0x02, 0x00, 0x00, 0x00, 0x02, 0x01, /* source link-layer address */
	};
	static const uint8_t na[86] = {
		0x02, 0x00, 0x00, 0x00, 0x02, 0x01, 0x02, 0x00, 0x00, 0x00, 0x02, 0x02, 0x86, 0xdd,
		0x60, 0, 0, 0, 0x00, 0x20, 58, 255,
		0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xfe, 0x00, 0x02, 0x02,
		0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xfe, 0x00, 0x02, 0x01,
		136, 0, 0, 0, 0x60, 0, 0, 0, /* solicited, override */
		0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xfe, 0x00, 0x02, 0x02,
		2, 1, 0x02, 0x00, 0x00, 0x00, 0x02, 0x02, /* target link-layer address */
	};

	(void)state;
	assert_non_null(e);
	cap_start(e, &c, EMU_LL_ETHERNET);
	assert_int_equal(nt_resolve(e, 0, "fe80::ff:fe00:202", 2, 1000 * MS, 2 * SEC, &o), 0);
	assert_int_equal(o.r.status, 0);
	assert_int_equal(o.at, 0);
	assert_memory_equal(o.r.dst_hw, mac_b, 6);
	assert_int_equal(cap_count(&c), 2);
	for (int i = 0; i < 2; i++) {
		const uint8_t *want = i ? na : ns;
		uint8_t got[86];

		assert_true(cap_frame(&c, (size_t)i, &f));
		assert_int_equal(f.len, 86);
		assert_int_equal(csum6(f.b + 14, f.b + 54, 32), 0xffff);
		memcpy(got, f.b, 86);
		got[56] = got[57] = 0;
		assert_memory_equal(got, want, 86);
	}
	assert_int_equal(state_of(e, 0, 0, "fe80::ff:fe00:202", 0), EMU_NUD_REACHABLE);
	assert_int_equal(state_of(e, 1, 0, "fe80::ff:fe00:201", 0), EMU_NUD_STALE);

	/* global addresses added with the control API: a connected /64 to resolve in */
	nt_unlock(e);
	assert_int_equal(rdmaemu_ctl_addr_add("A", "eth0", "2001:db8::65/64"), 0);
	assert_int_equal(rdmaemu_ctl_addr_add("B", "eth0", "2001:db8::66/64"), 0);
	nt_lock(e);
	assert_int_equal(nt_resolve(e, 0, "2001:db8::66", 0, 1000 * MS, 2 * SEC, &o), 0);
	assert_int_equal(o.r.status, 0);
	assert_memory_equal(o.r.dst_hw, mac_b, 6);
	{
		struct sockaddr_storage want = nt_sa("2001:db8::65", 0);

		assert_memory_equal(&((struct sockaddr_in6 *)&o.r.src)->sin6_addr,
				    &((struct sockaddr_in6 *)&want)->sin6_addr, 16);
	}
	/* the NS still comes from the link-local address (ndisc_solicit without an skb) */
	assert_int_equal(cap_count(&c), 4);
	assert_true(cap_frame(&c, 2, &f));
	assert_memory_equal(f.b + 22, ns + 22, 16);
	/* unanswered: 3 multicast solicitations, -ETIMEDOUT at the timeout */
	assert_int_equal(nt_resolve(e, 0, "2001:db8::99", 0, 2500 * MS, 5 * SEC, &o), 0);
	assert_int_equal(o.r.status, -ETIMEDOUT);
	assert_int_equal(o.at, 2500 * MS);
	assert_int_equal(cap_count(&c), 7);
	assert_true(cap_frame(&c, 6, &f));
	assert_int_equal(f.t, 2 * SEC);
	cap_stop(e, &c);
	nt_detach(e);
}

/* ---------- IPoIB ---------- */

static void test_ipoib_arp(void **state)
{
	struct emu_engine *e = nt_attach("ib.fabric", "ib-a");
	struct emu_topology *t;
	struct cap c;
	struct nt_res o;
	struct frame f;
	struct emu_pkt_info pi;
	struct emu_neigh_stats sb, sc;
	struct emu_sa_agent_counters ac;
	uint8_t ports[8];
	static const uint8_t hw_b[20] = { 0x00, 0x00, 0x00, 0x48, 0xfe, 0x80, 0, 0, 0, 0, 0, 0,
					  0x00, 0x02, 0xc9, 0x03, 0x00, 0x00, 0x0b, 0x01 };
	static const uint8_t hw_a[20] = { 0x00, 0x00, 0x00, 0x48, 0xfe, 0x80, 0, 0, 0, 0, 0, 0,
					  0x00, 0x02, 0xc9, 0x03, 0x00, 0x00, 0x0a, 0x01 };
	/* IPoIB header + ARP request (hardware type 32, 20-byte addresses) */
	static const uint8_t arp[60] = {
		0x08, 0x06, 0x00, 0x00, 0x00, 0x20, 0x08, 0x00, 20, 4, 0x00, 0x01,
		0x00, 0x00, 0x00, 0x48, 0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x00, 0x02, 0xc9, 0x03,
		0x00, 0x00, 0x0a, 0x01, 192, 0, 2, 129,
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 192, 0, 2, 130,
	};

	(void)state;
	assert_non_null(e);
	t = emu_engine_topology(e);
	assert_int_equal(emu_neigh_get(e) != NULL, 1);
	/* every IPoIB port joined the broadcast group: the switch sends it out of all three */
	assert_int_equal(emu_topology_switch_mcast_ports(t, 0, EMU_IPOIB_BCAST_MLID, ports, 8), 3);
	assert_int_equal(ports[0], 1);
	assert_int_equal(ports[1], 2);
	assert_int_equal(ports[2], 3);
	for (int l = 0; l < 3; l++)
		set_delay(e, l, 1 * EMU_NSEC_PER_USEC);
	cap_start(e, &c, EMU_LL_INFINIBAND);
	assert_int_equal(nt_resolve(e, 0, "192.0.2.130", 0, 2000 * MS, SEC, &o), 0);
	assert_int_equal(o.r.status, 0);
	/* ib-a -> switch (1 us) -> ib-b (2 us); ib-b's reply is unicast, so it first asks the SA
	 * (the switch's port 0, LID 1) for the path to ib-a's GID: query at 2 us, at the SM at
	 * 3 us, answered 50 us later (response-delay) at 53 us, at ib-b at 54 us; the reply
	 * ib-b -> switch -> ib-a (56 us) */
	assert_int_equal(o.at, 56 * EMU_NSEC_PER_USEC);
	assert_int_equal(o.r.hw_len, 20);
	assert_memory_equal(o.r.dst_hw, hw_b, 20);
	assert_memory_equal(o.r.src_hw, hw_a, 20);
	assert_memory_equal(o.r.sgid, hw_a + 4, 16);
	assert_memory_equal(o.r.dgid, hw_b + 4, 16);
	assert_int_equal(o.r.network, EMU_NET_IB);

	/* on the wire: the request on ib-a's link, copied to ib-b's and ib-c's (not back to
	 * ib-a), ib-b's PathRecord query and its answer on ib-b's link, the reply on ib-b's link
	 * and ib-a's */
	assert_int_equal(cap_count(&c), 7);
	assert_true(cap_frame(&c, 0, &f));
	assert_int_equal(f.t, 0);
	assert_int_equal(emu_pkt_parse(f.b, f.len, EMU_LL_INFINIBAND, &pi), 0);
	assert_int_equal(pi.opcode, EMU_OP_UD | EMU_OP_SEND_ONLY);
	assert_int_equal(pi.dqpn, 0xffffff);
	assert_int_equal(emu_be16_get(f.b + 2), 0xc000); /* DLID */
	assert_int_equal(emu_be16_get(f.b + 6), 2);	 /* SLID */
	assert_memory_equal(f.b + pi.grh_off + 24, emu_ipoib_bcast_mgid, 16);
	assert_memory_equal(f.b + pi.grh_off + 8, hw_a + 4, 16);
	assert_int_equal(emu_be32_get(f.b + pi.hdr_off[EMU_PKT_H_DETH]), 0xb1b);
	assert_int_equal(emu_be24_get(f.b + pi.hdr_off[EMU_PKT_H_DETH] + 5), 0x48);
	assert_int_equal(pi.paylen, 60);
	assert_memory_equal(f.b + pi.hdr_off[EMU_PKT_H_PAYLOAD], arp, 60);
	for (int i = 1; i <= 2; i++) {
		assert_true(cap_frame(&c, (size_t)i, &f));
		assert_int_equal(f.t, EMU_NSEC_PER_USEC);
		assert_int_equal(emu_be16_get(f.b + 2), 0xc000);
	}
	/* ipoib's path_rec_start(): SA PathRecord Get to QP1 of the SM, component mask
	 * DGID | SGID | TRAFFIC_CLASS | NUMB_PATH | PKEY, DGID ib-a's GID, SGID ib-b's */
	assert_true(cap_frame(&c, 3, &f));
	assert_int_equal(f.t, 2 * EMU_NSEC_PER_USEC);
	assert_int_equal(emu_pkt_parse(f.b, f.len, EMU_LL_INFINIBAND, &pi), 0);
	assert_int_equal(emu_be16_get(f.b + 2), 1); /* DLID: the SM */
	assert_int_equal(emu_be16_get(f.b + 6), 3);
	assert_int_equal(pi.dqpn, 1);
	{
		const uint8_t *m = f.b + pi.hdr_off[EMU_PKT_H_PAYLOAD];

		assert_int_equal(m[1], 0x03);			 /* SubnAdm */
		assert_int_equal(m[3], 0x01);			 /* Get */
		assert_int_equal(emu_be16_get(m + 16), 0x0035); /* PathRecord */
		/* after the RMPP (24) and SA (SM_Key, AttributeOffset) headers */
		assert_int_equal(emu_be32_get(m + 48), 0);
		assert_int_equal(emu_be32_get(m + 52), 0x340c);
		assert_memory_equal(m + 56 + 8, hw_a + 4, 16);	/* DGID */
		assert_memory_equal(m + 56 + 24, hw_b + 4, 16); /* SGID */
	}
	assert_true(cap_frame(&c, 4, &f));
	assert_int_equal(f.t, 53 * EMU_NSEC_PER_USEC);
	assert_int_equal(emu_pkt_parse(f.b, f.len, EMU_LL_INFINIBAND, &pi), 0);
	assert_int_equal(emu_be16_get(f.b + 2), 3);
	assert_int_equal(f.b[pi.hdr_off[EMU_PKT_H_PAYLOAD] + 3], 0x81); /* GetResp */
	assert_true(cap_frame(&c, 5, &f));
	assert_int_equal(f.t, 54 * EMU_NSEC_PER_USEC);
	assert_int_equal(emu_pkt_parse(f.b, f.len, EMU_LL_INFINIBAND, &pi), 0);
	assert_int_equal(pi.grh_off, EMU_PKT_NO_HDR); /* unicast: no GRH */
	assert_int_equal(emu_be16_get(f.b + 2), 2);
	assert_int_equal(emu_be16_get(f.b + 6), 3);
	assert_int_equal(pi.dqpn, 0x48);
	{
		const uint8_t *p = f.b + pi.hdr_off[EMU_PKT_H_PAYLOAD];

		assert_int_equal(emu_be16_get(p + 10), 2);	/* reply */
		assert_memory_equal(p + 12, hw_b, 20);	/* sender: ib-b */
		assert_memory_equal(p + 36, hw_a, 20);	/* target: ib-a */
	}
	assert_int_equal(emu_neigh_stats(e, 1, &sb), 0);
	assert_int_equal(emu_neigh_stats(e, 2, &sc), 0);
	assert_int_equal(sb.arp_rep_sent, 1);
	assert_int_equal(sb.path_queries, 1);
	assert_int_equal(sb.path_failed, 0);
	assert_int_equal(sc.arp_rcvd, 1); /* ib-c saw the broadcast and kept quiet */
	assert_int_equal(sc.arp_rep_sent, 0);
	assert_int_equal(sc.path_queries, 0);
	assert_int_equal(emu_sa_agent_counters(e, &ac), 0);
	assert_int_equal(ac.requests, 1);
	assert_int_equal(ac.answered, 1);
	assert_int_equal(state_of(e, 1, 0, "192.0.2.129", 0), EMU_NUD_STALE);
	assert_int_equal(state_of(e, 2, 0, "192.0.2.129", 0), -1);

	/* a second resolution is served from the cache */
	assert_int_equal(nt_resolve(e, 0, "192.0.2.130", 0, 2000 * MS, SEC, &o), 0);
	assert_int_equal(o.r.status, 0);
	assert_int_equal(cap_count(&c), 7);
	/* without ib-a's entry it asks again, and ib-b's reply takes the cached path: no SA
	 * query, 4 us (the clock is at 1 ms, nt_resolve's step) */
	assert_int_equal(emu_engine_now(e), MS);
	assert_int_equal(emu_neigh_flush(e, 0, -1), 1);
	assert_int_equal(nt_resolve(e, 0, "192.0.2.130", 0, 2000 * MS, SEC, &o), 0);
	assert_int_equal(o.r.status, 0);
	assert_int_equal(o.at, MS + 4 * EMU_NSEC_PER_USEC);
	assert_int_equal(cap_count(&c), 12);
	assert_int_equal(emu_neigh_stats(e, 1, &sb), 0);
	assert_int_equal(sb.path_queries, 1);
	assert_int_equal(emu_sa_agent_counters(e, &ac), 0);
	assert_int_equal(ac.requests, 1);
	/* unanswered on IB: -ETIMEDOUT at the timeout (the clock is at 2 ms) */
	assert_int_equal(emu_engine_now(e), 2 * MS);
	assert_int_equal(nt_resolve(e, 0, "192.0.2.150", 0, 1500 * MS, 3 * SEC, &o), 0);
	assert_int_equal(o.r.status, -ETIMEDOUT);
	assert_int_equal(o.at, 2 * MS + 1500 * MS);
	cap_stop(e, &c);
	nt_detach(e);
}

/* ipoib's path query failing: the SA drops ib-b's PathRecord Get, so its ARP reply to ib-c
 * waits in the path's queue until the query times out 1000 ms after it started, and is
 * dropped with it; the next unicast frame to that GID asks again. */
static void test_ipoib_path_fail(void **state)
{
	struct emu_engine *e = nt_attach("ib.fabric", "ib-a");
	struct emu_neigh_stats sb, sb0;
	struct emu_sa_agent_counters ac;
	struct nt_res o;

	(void)state;
	assert_non_null(e);
	for (int l = 0; l < 3; l++)
		set_delay(e, l, 1 * EMU_NSEC_PER_USEC);
	assert_int_equal(emu_sa_agent_start(e), 0);
	emu_sa_policy(emu_sa_agent_sa(e))->drop_next = 1;
	assert_int_equal(emu_neigh_stats(e, 1, &sb0), 0);
	/* ib-c's request reaches ib-b at 2 us; ib-b's query (dropped) leaves at 2 us */
	assert_int_equal(nt_resolve(e, 2, "192.0.2.130", 0, 900 * MS, SEC, &o), 0);
	assert_int_equal(o.r.status, -ETIMEDOUT);
	assert_int_equal(o.at, 900 * MS);
	/* ib-c stops probing (its next broadcast would reach ib-b at the very instant the
	 * query times out) */
	assert_int_equal(emu_neigh_flush(e, 2, -1), 1);
	assert_int_equal(emu_neigh_stats(e, 1, &sb), 0);
	assert_int_equal(sb.path_queries, 1);
	assert_int_equal(sb.path_failed, 0);
	assert_int_equal(sb.arp_rep_sent, 1);
	assert_int_equal(sb.ipoib_sent, sb0.ipoib_sent); /* the reply waits */
	assert_int_equal(emu_engine_advance(e, 100 * MS + 2 * EMU_NSEC_PER_USEC - 1), 0);
	assert_int_equal(emu_neigh_stats(e, 1, &sb), 0);
	assert_int_equal(sb.path_failed, 0);
	assert_int_equal(emu_engine_advance(e, 1), 0);
	assert_int_equal(emu_neigh_stats(e, 1, &sb), 0);
	assert_int_equal(sb.path_failed, 1);
	assert_int_equal(sb.dropped - sb0.dropped, 1);
	assert_int_equal(sb.ipoib_sent, sb0.ipoib_sent);
	assert_int_equal(emu_sa_agent_counters(e, &ac), 0);
	assert_int_equal(ac.requests, 1);
	assert_int_equal(ac.dropped, 1);
	assert_int_equal(ac.answered, 0);
	/* ib-c again: the path is known but has no answer, so ib-b asks once more, and this
	 * time the reply leaves (56 us after the start, as in test_ipoib_arp) */
	assert_int_equal(emu_engine_now(e), 1000 * MS + 2 * EMU_NSEC_PER_USEC);
	assert_int_equal(nt_resolve(e, 2, "192.0.2.130", 0, 2000 * MS, SEC, &o), 0);
	assert_int_equal(o.r.status, 0);
	assert_int_equal(o.at, 1000 * MS + 58 * EMU_NSEC_PER_USEC);
	assert_int_equal(emu_neigh_stats(e, 1, &sb), 0);
	assert_int_equal(sb.path_queries, 2);
	assert_int_equal(sb.path_failed, 1);
	assert_int_equal(sb.ipoib_sent - sb0.ipoib_sent, 1);
	assert_int_equal(emu_sa_agent_counters(e, &ac), 0);
	assert_int_equal(ac.requests, 2);
	assert_int_equal(ac.answered, 1);
	nt_detach(e);
}

/* ipoib's path queue: while ib-b's query for ib-a's GID is under way (the SA answers after
 * 900 ms here), ib-b's replies to ib-a wait behind it, at most IPOIB_MAX_PATH_REC_QUEUE (3):
 * ib-a resolves four addresses of ib-b at once, one query leaves, three replies wait and go
 * with the answer, the fourth is dropped and its resolution completes from ib-a's next probe,
 * 1 s later, which then finds the path. */
static void test_ipoib_path_queue(void **state)
{
	struct emu_engine *e = nt_attach("ib.fabric", "ib-a");
	static const char *const dst[4] = { "192.0.2.130", "192.0.2.140", "192.0.2.141",
					    "192.0.2.142" };
	struct emu_neigh_stats sb, sb0;
	struct emu_sa_agent_counters ac;
	struct nt_res o[4];

	(void)state;
	assert_non_null(e);
	for (int l = 0; l < 3; l++)
		set_delay(e, l, 1 * EMU_NSEC_PER_USEC);
	assert_int_equal(emu_sa_agent_start(e), 0);
	emu_sa_policy(emu_sa_agent_sa(e))->response_delay_ns = 900 * MS;
	for (int i = 1; i < 4; i++) {
		struct sockaddr_storage a = nt_sa(dst[i], 0);

		assert_int_equal(emu_neigh_addr_add(e, 1, 0, (struct sockaddr *)&a, 26), 0);
	}
	assert_int_equal(emu_neigh_stats(e, 1, &sb0), 0);
	for (int i = 0; i < 4; i++) {
		struct sockaddr_storage d = nt_sa(dst[i], 0);

		memset(&o[i], 0, sizeof(o[i]));
		o[i].e = e;
		assert_int_equal(emu_neigh_resolve(e, 0, NULL, (struct sockaddr *)&d, 2 * SEC,
						   nt_cb, &o[i], NULL),
				 0);
	}
	assert_int_equal(emu_engine_advance(e, 2 * SEC), 0);
	/* the query leaves at 2 us, the SM answers 900 ms after it got it (3 us), ib-b sends
	 * the three queued replies at 900 ms + 4 us, at ib-a 2 us later */
	for (int i = 0; i < 3; i++) {
		assert_int_equal(o[i].calls, 1);
		assert_int_equal(o[i].r.status, 0);
		assert_int_equal(o[i].at, 900 * MS + 6 * EMU_NSEC_PER_USEC);
	}
	/* the fourth reply was dropped; ib-a's second request (1 s) is answered at once */
	assert_int_equal(o[3].calls, 1);
	assert_int_equal(o[3].r.status, 0);
	assert_int_equal(o[3].at, SEC + 4 * EMU_NSEC_PER_USEC);
	assert_int_equal(emu_neigh_stats(e, 1, &sb), 0);
	assert_int_equal(sb.path_queries, 1);
	assert_int_equal(sb.path_failed, 0);
	assert_int_equal(sb.dropped - sb0.dropped, 1);
	assert_int_equal(sb.arp_rep_sent - sb0.arp_rep_sent, 5);
	assert_int_equal(emu_sa_agent_counters(e, &ac), 0);
	assert_int_equal(ac.requests, 1);
	assert_int_equal(ac.answered, 1);
	nt_detach(e);
}

/* ---------- changes ---------- */

struct evlog {
	int n;
	struct emu_neigh_event ev[8];
};

static void on_event(void *ctx, const struct emu_neigh_event *ev)
{
	struct evlog *l = ctx;

	if (l->n < 8)
		l->ev[l->n] = *ev;
	l->n++;
}

static void test_events(void **state)
{
	struct emu_engine *e = nt_attach("rxe-ref2.fabric", "A");
	struct evlog log = { 0 };
	struct nt_res o;
	struct sockaddr_storage ss[4];
	uint8_t pl[4];

	(void)state;
	assert_non_null(e);
	assert_int_equal(emu_neigh_listen(e, on_event, &log), 0);
	nt_unlock(e);
	assert_int_equal(rdmaemu_ctl_addr_add("B", "eth0", "192.0.2.67/28"), 0);
	assert_int_equal(rdmaemu_ctl_addr_add("B", "eth0", "192.0.2.67/28"), -1);
	assert_int_equal(errno, EEXIST);
	assert_int_equal(rdmaemu_ctl_addr_add("B", "eth9", "192.0.2.67/28"), -1);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(rdmaemu_ctl_addr_add("B", "eth0", "192.0.2.67"), -1);
	assert_int_equal(errno, EINVAL);
	nt_lock(e);
	assert_int_equal(log.n, 1);
	assert_int_equal(log.ev[0].type, EMU_NEIGH_EV_ADDR_ADD);
	assert_int_equal(log.ev[0].host, 1);
	assert_int_equal(log.ev[0].netdev, 0);
	assert_int_equal(log.ev[0].prefixlen, 28);
	assert_int_equal(((struct sockaddr_in *)&log.ev[0].addr)->sin_addr.s_addr, htonl(0xc0000243));
	assert_int_equal(emu_neigh_addrs(e, 1, 0, ss, pl, 4), 3); /* .66, fe80::, .67 */
	/* B answers for the new address */
	assert_int_equal(nt_resolve(e, 0, "192.0.2.67", 0, 1000 * MS, 2 * SEC, &o), 0);
	assert_int_equal(o.r.status, 0);

	/* A loses its address: the connected route goes with it */
	nt_unlock(e);
	assert_int_equal(rdmaemu_ctl_addr_del("A", "eth0", "192.0.2.65/28"), 0);
	assert_int_equal(rdmaemu_ctl_addr_del("A", "eth0", "192.0.2.65/28"), -1);
	assert_int_equal(errno, EADDRNOTAVAIL);
	nt_lock(e);
	assert_int_equal(log.n, 2);
	assert_int_equal(log.ev[1].type, EMU_NEIGH_EV_ADDR_DEL);
	assert_int_equal(log.ev[1].host, 0);
	assert_int_equal(nt_resolve(e, 0, "192.0.2.66", 0, 1000 * MS, 2 * SEC, &o), -ENETUNREACH);
	nt_unlock(e);
	assert_int_equal(rdmaemu_ctl_addr_add(NULL, "eth0", "192.0.2.65/28"), 0);
	/* B's link goes down: its entries go, it answers nothing; A's request times out */
	assert_int_equal(rdmaemu_ctl_link_set("B", "eth0", 0), 0);
	assert_int_equal(rdmaemu_ctl_link_set("B", "eth0", 0), 0); /* unchanged: no event */
	assert_int_equal(rdmaemu_ctl_neigh_flush("A", NULL), 1); /* .67 */
	nt_lock(e);
	assert_int_equal(log.n, 4);
	assert_int_equal(log.ev[2].type, EMU_NEIGH_EV_ADDR_ADD);
	assert_int_equal(log.ev[3].type, EMU_NEIGH_EV_LINK_DOWN);
	assert_int_equal(log.ev[3].host, 1);
	assert_false(emu_neigh_link_up(e, 1, 0));
	assert_int_equal(state_of(e, 1, 0, "192.0.2.65", 0), -1);
	{
		uint64_t t0 = emu_engine_now(e);

		assert_int_equal(nt_resolve(e, 0, "192.0.2.66", 0, 1000 * MS, 2 * SEC, &o), 0);
		assert_int_equal(o.r.status, -ETIMEDOUT);
		assert_int_equal(o.at, t0 + 1000 * MS);
	}
	/* a down netdev has no route either */
	assert_int_equal(nt_resolve(e, 1, "192.0.2.65", 0, 1000 * MS, 2 * SEC, &o), -ENETUNREACH);
	nt_unlock(e);
	assert_int_equal(rdmaemu_ctl_link_set("B", "eth0", 1), 0);
	nt_lock(e);
	assert_int_equal(log.n, 5);
	assert_int_equal(log.ev[4].type, EMU_NEIGH_EV_LINK_UP);
	/* the entry A keeps for .66 is INCOMPLETE (or FAILED): B answers the next probe and the
	 * pending request completes when the neighbour becomes valid */
	assert_int_equal(nt_resolve(e, 0, "192.0.2.66", 0, 3000 * MS, 4 * SEC, &o), 0);
	assert_int_equal(o.r.status, 0);
	assert_int_equal(emu_neigh_unlisten(e, on_event, &log), 0);
	assert_int_equal(emu_neigh_unlisten(e, on_event, &log), -ENOENT);
	nt_detach(e);
}

static void test_cancel_and_kick(void **state)
{
	struct emu_engine *e = nt_attach("rxe-ref2.fabric", "A");
	struct nt_res o1, o2;
	struct emu_neigh_req *q;
	struct sockaddr_storage d1 = nt_sa("192.0.2.66", 0), d2 = nt_sa("192.0.2.77", 0);

	(void)state;
	assert_non_null(e);
	set_delay(e, 0, 100 * EMU_NSEC_PER_USEC);
	memset(&o1, 0, sizeof(o1));
	memset(&o2, 0, sizeof(o2));
	o1.e = o2.e = e;
	/* a cancelled request never calls back */
	assert_int_equal(emu_neigh_resolve(e, 0, NULL, (struct sockaddr *)&d1, SEC, nt_cb, &o1, &q),
			 0);
	emu_neigh_cancel(e, q);
	/* a pending request for an unanswered address is looked at again when another
	 * neighbour becomes valid (addr.c's netevent), and keeps waiting */
	assert_int_equal(emu_neigh_resolve(e, 0, NULL, (struct sockaddr *)&d2, SEC, nt_cb, &o2, NULL),
			 0);
	assert_int_equal(emu_neigh_resolve(e, 0, NULL, (struct sockaddr *)&d1, SEC, nt_cb, &o1, NULL),
			 0);
	emu_engine_advance(e, 200 * EMU_NSEC_PER_USEC);
	assert_int_equal(o1.calls, 1);
	assert_int_equal(o1.at, 200 * EMU_NSEC_PER_USEC);
	assert_int_equal(o2.calls, 0);
	emu_engine_advance(e, SEC);
	assert_int_equal(o1.calls, 1);
	assert_int_equal(o2.calls, 1);
	assert_int_equal(o2.r.status, -ETIMEDOUT);
	assert_int_equal(o2.at, SEC);
	assert_string_equal(emu_nud_name(EMU_NUD_INCOMPLETE), "INCOMPLETE");
	assert_string_equal(emu_nud_name(EMU_NUD_FAILED), "FAILED");
	assert_string_equal(emu_nud_name(EMU_NUD_NONE), "NONE");
	assert_string_equal(emu_nud_name((enum emu_nud)3), "?");
	nt_detach(e);
}

/* IP traffic through a STALE entry: DELAY, then unicast probes (PROBE), confirmed or FAILED */
static void test_delay_probe(void **state)
{
	struct emu_engine *e = nt_attach("rxe-ref2.fabric", "A");
	struct sockaddr_storage b = nt_sa("192.0.2.66", 0);
	struct cap c;
	struct nt_res o;
	struct frame f;
	uint64_t t1, t2;
	/* arp_solicit's unicast probe: to B's MAC, target hardware address still zero */
	static const uint8_t probe[60] = {
		0x02, 0x00, 0x00, 0x00, 0x02, 0x02, 0x02, 0x00, 0x00, 0x00, 0x02, 0x01, 0x08, 0x06,
		0x00, 0x01, 0x08, 0x00, 0x06, 0x04, 0x00, 0x01, 0x02, 0x00, 0x00, 0x00, 0x02, 0x01,
		192,  0,    2,	  65,	0,    0,    0,	  0,	0,    0,    192,  0,	2,    66,
	};

	(void)state;
	assert_non_null(e);
	set_delay(e, 0, 10 * EMU_NSEC_PER_USEC);
	assert_int_equal(nt_resolve(e, 0, "192.0.2.66", 0, 2000 * MS, SEC, &o), 0);
	assert_int_equal(o.r.status, 0);
	emu_engine_advance(e, 45 * SEC);
	assert_int_equal(state_of(e, 0, 0, "192.0.2.66", 0), EMU_NUD_STALE);
	cap_start(e, &c, EMU_LL_ETHERNET);
	t1 = emu_engine_now(e);
	assert_int_equal(emu_neigh_touch(e, 0, 0, (struct sockaddr *)&b), EMU_NUD_DELAY);
	assert_int_equal(emu_neigh_touch(e, 0, 0, (struct sockaddr *)&b), EMU_NUD_DELAY);
	emu_engine_advance(e, 5 * SEC - 1);
	assert_int_equal(state_of(e, 0, 0, "192.0.2.66", 0), EMU_NUD_DELAY);
	assert_int_equal(cap_count(&c), 0);
	emu_engine_advance(e, 1); /* delay_first_probe_time: PROBE, a unicast request */
	assert_int_equal(state_of(e, 0, 0, "192.0.2.66", 0), EMU_NUD_PROBE);
	emu_engine_advance(e, 20 * EMU_NSEC_PER_USEC);
	assert_int_equal(state_of(e, 0, 0, "192.0.2.66", 0), EMU_NUD_REACHABLE);
	assert_int_equal(cap_count(&c), 2);
	assert_frame(&c, 0, t1 + 5 * SEC, probe, 60);
	assert_true(cap_frame(&c, 1, &f));
	assert_int_equal(f.t, t1 + 5 * SEC + 10 * EMU_NSEC_PER_USEC);
	assert_memory_equal(f.b, arp_rep_b, 60);

	/* again, with B gone: 3 unicast probes 1 s apart (ucast_solicit), FAILED after */
	emu_engine_advance(e, 45 * SEC);
	assert_int_equal(state_of(e, 0, 0, "192.0.2.66", 0), EMU_NUD_STALE);
	nt_unlock(e);
	assert_int_equal(rdmaemu_ctl_link_set("B", "eth0", 0), 0);
	nt_lock(e);
	t2 = emu_engine_now(e);
	assert_int_equal(emu_neigh_touch(e, 0, 0, (struct sockaddr *)&b), EMU_NUD_DELAY);
	emu_engine_advance(e, 8 * SEC - 1);
	assert_int_equal(state_of(e, 0, 0, "192.0.2.66", 0), EMU_NUD_PROBE);
	emu_engine_advance(e, 1);
	assert_int_equal(state_of(e, 0, 0, "192.0.2.66", 0), EMU_NUD_FAILED);
	assert_int_equal(cap_count(&c), 5);
	for (int i = 0; i < 3; i++)
		assert_frame(&c, 2 + (size_t)i, t2 + (5 + (uint64_t)i) * SEC, probe, 60);
	/* a FAILED entry: the next use broadcasts again */
	assert_int_equal(emu_neigh_touch(e, 0, 0, (struct sockaddr *)&b), EMU_NUD_INCOMPLETE);
	assert_int_equal(cap_count(&c), 6);
	assert_frame(&c, 5, t2 + 8 * SEC, arp_req_a, 60);
	cap_stop(e, &c);
	nt_detach(e);
}

/* The neighbour generation (emu_neigh_gen, what rdmaemud's processes keep MACs by): it moves
 * when a result could change, never on a resolution or a valid-to-valid transition. */
static uint32_t gen_calls, gen_last_host, gen_last;

static void gen_hook(void *ctx, size_t host, uint32_t gen)
{
	(void)ctx;
	gen_calls++;
	gen_last_host = (uint32_t)host;
	gen_last = gen;
}

static void test_generation(void **state)
{
	struct emu_engine *e = nt_attach("rxe-ref2.fabric", "A");
	struct sockaddr_storage b = nt_sa("192.0.2.66", 0);
	struct nt_res o;

	(void)state;
	assert_non_null(e);
	gen_calls = 0;
	emu_neigh_set_gen_hook(e, gen_hook, NULL);
	set_delay(e, 0, 10 * EMU_NSEC_PER_USEC);
	assert_int_equal(emu_neigh_gen(e, 0), 1);
	assert_int_equal(emu_neigh_gen(e, 1), 1);
	/* resolving (INCOMPLETE -> REACHABLE on A, STALE on B), ageing (REACHABLE -> STALE):
	 * every answer given before stays right */
	assert_int_equal(nt_resolve(e, 0, "192.0.2.66", 0, 2000 * MS, SEC, &o), 0);
	assert_int_equal(o.r.status, 0);
	emu_engine_advance(e, 45 * SEC);
	assert_int_equal(state_of(e, 0, 0, "192.0.2.66", 0), EMU_NUD_STALE);
	assert_int_equal(gen_calls, 0);
	assert_int_equal(emu_neigh_gen(e, 0), 1);
	/* STALE -> DELAY -> PROBE -> REACHABLE: valid throughout */
	assert_int_equal(emu_neigh_touch(e, 0, 0, (struct sockaddr *)&b), EMU_NUD_DELAY);
	emu_engine_advance(e, 5 * SEC + 20 * EMU_NSEC_PER_USEC);
	assert_int_equal(state_of(e, 0, 0, "192.0.2.66", 0), EMU_NUD_REACHABLE);
	assert_int_equal(gen_calls, 0);
	/* B's link goes down: its entry for A is flushed (neigh_ifdown), then the link event:
	 * B's generation moves twice, A's not yet */
	emu_engine_advance(e, 45 * SEC);
	nt_unlock(e);
	assert_int_equal(rdmaemu_ctl_link_set("B", "eth0", 0), 0);
	nt_lock(e);
	assert_int_equal(gen_calls, 2);
	assert_int_equal(gen_last_host, 1);
	assert_int_equal(gen_last, 3);
	assert_int_equal(emu_neigh_gen(e, 0), 1);
	/* A's entry: STALE -> DELAY -> PROBE (valid) -> FAILED (not): A's moves, once */
	assert_int_equal(emu_neigh_touch(e, 0, 0, (struct sockaddr *)&b), EMU_NUD_DELAY);
	emu_engine_advance(e, 8 * SEC - 1);
	assert_int_equal(state_of(e, 0, 0, "192.0.2.66", 0), EMU_NUD_PROBE);
	assert_int_equal(gen_calls, 2);
	emu_engine_advance(e, 1);
	assert_int_equal(state_of(e, 0, 0, "192.0.2.66", 0), EMU_NUD_FAILED);
	assert_int_equal(gen_calls, 3);
	assert_int_equal(gen_last_host, 0);
	assert_int_equal(gen_last, 2);
	/* a flush that drops an entry moves it; one with nothing to drop does not */
	assert_int_equal(emu_neigh_flush(e, 0, -1), 1);
	assert_int_equal(emu_neigh_gen(e, 0), 3);
	assert_int_equal(emu_neigh_flush(e, 0, -1), 0);
	assert_int_equal(emu_neigh_gen(e, 0), 3);
	/* addresses and links: what the route lookup reads (A's link down flushes nothing now:
	 * only its event moves the generation) */
	nt_unlock(e);
	assert_int_equal(rdmaemu_ctl_addr_add("A", "eth0", "198.51.100.1/24"), 0);
	assert_int_equal(rdmaemu_ctl_addr_del("A", "eth0", "198.51.100.1/24"), 0);
	assert_int_equal(rdmaemu_ctl_link_set("A", "eth0", 0), 0);
	assert_int_equal(rdmaemu_ctl_link_set("A", "eth0", 1), 0);
	assert_int_equal(rdmaemu_ctl_link_set("A", "eth0", 1), 0); /* unchanged: no event */
	nt_lock(e);
	assert_int_equal(emu_neigh_gen(e, 0), 7);
	assert_int_equal(gen_calls, 8);
	assert_int_equal(gen_last_host, 0);
	assert_int_equal(gen_last, 7);
	emu_neigh_set_gen_hook(e, NULL, NULL);
	nt_detach(e);
}

/* the blocking form, as an AH creation would use it: virtual time runs while it waits */
static void test_resolve_wait(void **state)
{
	struct emu_engine *e = nt_attach("rxe-ref.fabric", "rxe-ref");
	struct sockaddr_storage silent = nt_sa("192.0.2.30", 0), far = nt_sa("203.0.113.9", 0),
				own = nt_sa("192.0.2.17", 0);
	struct emu_neigh_result r;

	(void)state;
	assert_non_null(e);
	assert_int_equal(emu_neigh_resolve_wait(e, 0, NULL, (struct sockaddr *)&silent, 1000 * MS,
						"test", &r),
			 -ETIMEDOUT);
	assert_int_equal(emu_engine_now(e), 1000 * MS);
	assert_int_equal(r.status, -ETIMEDOUT);
	assert_int_equal(emu_neigh_resolve_wait(e, 0, NULL, (struct sockaddr *)&far, 1000 * MS,
						"test", &r),
			 -ENETUNREACH);
	assert_int_equal(emu_neigh_resolve_wait(e, 0, NULL, (struct sockaddr *)&own, 1000 * MS,
						"test", &r),
			 0);
	assert_true(r.loopback);
	assert_int_equal(emu_engine_now(e), 1000 * MS);
	nt_detach(e);
}

/* A multicast destination (rdma_resolve_addr of mckey's group from its bound address): no
 * route is needed with a local source, the packet leaves the source's netdev (the kernel's
 * ip_route_output_key), and the MAC is the group's (arp_mc_map), at once with no ARP; with
 * no source and no route: ENETUNREACH, as on a host without a default route. */
static void test_resolve_mcast(void **state)
{
	static const uint8_t mac_grp[6] = { 0x01, 0x00, 0x5e, 0x00, 0x02, 0x01 };
	static const uint8_t mac6[6] = { 0x33, 0x33, 0x00, 0x02, 0x00, 0x01 };
	struct emu_engine *e = nt_attach("rxe-ref2.fabric", "A");
	struct sockaddr_storage grp = nt_sa("239.128.2.1", 0), src = nt_sa("192.0.2.65", 0),
				grp6 = nt_sa("ff0e::2:1", 0), src6 = nt_sa("fe80::ff:fe00:201", 2);
	struct emu_neigh_result r;
	struct emu_neigh_stats st;

	(void)state;
	assert_non_null(e);
	assert_int_equal(emu_neigh_resolve_wait(e, 0, NULL, (struct sockaddr *)&grp, 1000 * MS,
						"test", &r),
			 -ENETUNREACH);
	assert_int_equal(emu_neigh_resolve_wait(e, 0, (struct sockaddr *)&src,
						(struct sockaddr *)&grp, 1000 * MS, "test", &r),
			 0);
	assert_int_equal(emu_engine_now(e), 0);
	assert_false(r.loopback);
	assert_int_equal(r.netdev, 0);
	/* 239.128.2.1: the low 23 bits only (the 0x80 of the second byte is dropped) */
	assert_memory_equal(r.dst_hw, mac_grp, 6);
	assert_int_equal(((struct sockaddr_in *)&r.src)->sin_addr.s_addr, htonl(0xc0000241));
	/* IPv6: 33:33 and the group's low 32 bits */
	assert_int_equal(emu_neigh_resolve_wait(e, 0, (struct sockaddr *)&src6,
						(struct sockaddr *)&grp6, 1000 * MS, "test", &r),
			 0);
	assert_memory_equal(r.dst_hw, mac6, 6);
	assert_int_equal(emu_neigh_stats(e, 0, &st), 0);
	assert_int_equal(st.arp_req_sent, 0);
	nt_detach(e);
}

/* ---------- multicast forwarding on a looped fabric ---------- */

/* Two switches cabled twice (a loop): a multicast frame must reach every other member once. */
static const char loop_text[] =
	"seed 3\n"
	"switch s1 ports=4 lid=1\n"
	"switch s2 ports=4 lid=2\n"
	"host a\n"
	"  device mlx5_0 link=ib\n"
	"  port 1 lid=4\n"
	"host b\n"
	"  device mlx5_0 link=ib\n"
	"  port 1 lid=8\n"
	"link a/mlx5_0/1 s1/2\n"
	"link s1/4 s2/3\n"
	"link s1/3 s2/4\n"
	"link b/mlx5_0/1 s2/1\n"
	"sm lid=1\n";

static void count_rx(void *ctx, const uint8_t *frame, size_t len, uint64_t now)
{
	(void)frame;
	(void)len;
	(void)now;
	(*(int *)ctx)++;
}

static void test_mcast_loop(void **state)
{
	struct emu_error err;
	struct emu_fabric *f = emu_fabric_load_text(loop_text, "loop.fabric", ".", &err);
	struct emu_clock clk;
	struct emu_topology *t;
	struct emu_topology_switch_counters c1;
	uint8_t ports[4], lrh[16] = { 0 };
	int a, b, na = 0, nb = 0;

	(void)state;
	assert_non_null(f);
	emu_clock_init(&clk, 0);
	t = emu_topology_build(f, &clk, NULL, NULL);
	assert_non_null(t);
	a = emu_topology_port_endpoint(t, 0, 0, 1);
	b = emu_topology_port_endpoint(t, 1, 0, 1);
	assert_int_equal(emu_topology_set_rx(t, a, count_rx, &na), 0);
	assert_int_equal(emu_topology_set_rx(t, b, count_rx, &nb), 0);
	assert_int_equal(emu_topology_mcast_attach(t, 0xc001, a), 0);
	assert_int_equal(emu_topology_mcast_attach(t, 0xc001, b), 0);
	assert_int_equal(emu_topology_mcast_attach(t, 0xc001, b), 0); /* already: no change */
	assert_int_equal(emu_topology_mcast_attach(t, 0xbfff, b), -EINVAL);
	assert_int_equal(emu_topology_mcast_attach(t, 0xc001, 4), -EINVAL); /* a switch port */
	/* the tree uses one cable (s1/3 -- s2/4, the first the search meets) */
	assert_int_equal(emu_topology_switch_mcast_ports(t, 0, 0xc001, ports, 4), 2);
	assert_int_equal(ports[0], 2);
	assert_int_equal(ports[1], 3);
	assert_int_equal(emu_topology_switch_mcast_ports(t, 1, 0xc001, ports, 4), 2);
	assert_int_equal(ports[0], 1);
	assert_int_equal(ports[1], 4);
	lrh[0] = 0; /* VL 0, LVer 0 */
	lrh[2] = 0xc0;
	lrh[3] = 0x01;
	lrh[7] = 4;
	assert_int_equal(emu_wire_send(emu_topology_wire(t), a, lrh, sizeof(lrh)), 0);
	lrh[7] = 8;
	assert_int_equal(emu_wire_send(emu_topology_wire(t), b, lrh, sizeof(lrh)), 0);
	assert_int_equal(emu_clock_run_idle(&clk, 1000, NULL), 0);
	assert_int_equal(na, 1); /* b's frame, once; never its own */
	assert_int_equal(nb, 1);
	/* b leaves: s1 has nowhere to send a's frames but back, so it drops them */
	assert_int_equal(emu_topology_mcast_detach(t, 0xc001, b), 0);
	assert_int_equal(emu_topology_mcast_detach(t, 0xc001, b), -ENOENT);
	assert_int_equal(emu_topology_switch_mcast_ports(t, 0, 0xc001, ports, 4), 1);
	lrh[7] = 4;
	assert_int_equal(emu_wire_send(emu_topology_wire(t), a, lrh, sizeof(lrh)), 0);
	assert_int_equal(emu_clock_run_idle(&clk, 1000, NULL), 0);
	assert_int_equal(nb, 1);
	assert_int_equal(emu_topology_switch_counters(t, 0, &c1), 0);
	assert_int_equal(c1.dropped_mcast, 1);
	/* a group nobody joined */
	lrh[3] = 0x02;
	assert_int_equal(emu_wire_send(emu_topology_wire(t), a, lrh, sizeof(lrh)), 0);
	assert_int_equal(emu_clock_run_idle(&clk, 1000, NULL), 0);
	assert_int_equal(emu_topology_switch_counters(t, 0, &c1), 0);
	assert_int_equal(c1.dropped_mcast, 2);
	assert_int_equal(emu_topology_free(t), 0);
	emu_clock_fini(&clk);
	emu_fabric_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_arp_two_hosts, nt_teardown),
		cmocka_unit_test_teardown(test_arp_timeout, nt_teardown),
		cmocka_unit_test_teardown(test_arp_timeout_bytes, nt_teardown),
		cmocka_unit_test_teardown(test_unreachable_noarp_loopback, nt_teardown),
		cmocka_unit_test_teardown(test_route_source, nt_teardown),
		cmocka_unit_test_teardown(test_gateway_route, nt_teardown),
		cmocka_unit_test_teardown(test_ipoib_gateway, nt_teardown),
		cmocka_unit_test_teardown(test_nd, nt_teardown),
		cmocka_unit_test_teardown(test_ipoib_arp, nt_teardown),
		cmocka_unit_test_teardown(test_ipoib_path_fail, nt_teardown),
		cmocka_unit_test_teardown(test_ipoib_path_queue, nt_teardown),
		cmocka_unit_test_teardown(test_events, nt_teardown),
		cmocka_unit_test_teardown(test_cancel_and_kick, nt_teardown),
		cmocka_unit_test_teardown(test_delay_probe, nt_teardown),
		cmocka_unit_test_teardown(test_generation, nt_teardown),
		cmocka_unit_test_teardown(test_resolve_wait, nt_teardown),
		cmocka_unit_test_teardown(test_resolve_mcast, nt_teardown),
		cmocka_unit_test_teardown(test_mcast_loop, nt_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
