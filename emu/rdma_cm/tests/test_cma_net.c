/* The network half of the emulated rdma_cm (emu/rdma_cm/cma_addr.c, cma_route.c, cma_mcast.c),
 * driven through ucma's command interface as librdmacm drives it, on the fixtures:
 *  - rxe-ref2 (A <-> B): rdma_resolve_addr with the ARP exchange on the wire, source address
 *    selection, the neighbour cache on a second resolution, the RoCE route built locally and
 *    its path record byte for byte, multicast joins on RoCE;
 *  - rxe-ref: ADDR_ERROR -ETIMEDOUT at exactly the caller's timeout (192.0.2.30), -ENETUNREACH
 *    synchronously (203.0.113.9), loopback and own-address resolution, the NOARP netdev;
 *  - ib.fabric: IPoIB ARP, the SA PathRecord query, ROUTE_ERROR -ETIMEDOUT at the exact
 *    virtual time when the SA drops it, multicast joins through the SA; IPv6 over IPoIB
 *    (neighbour discovery through the SA's multicast groups) to ADDR_RESOLVED and the route;
 *  - address removal: no ADDR_CHANGE (Linux 6.1 raises it only on bonding fail-over). */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <arpa/inet.h>
#include <cmocka.h>

#include "emu/sim/engine.h"
#include "emu/ib/mad.h"
#include "emu/net/neigh.h"
#include "emu/sim/process.h"
#include "emu/rdma_cm/ucma.h"
#include "rdmaemu/ctl.h"

#define MS 1000000ull

static struct emu_engine *attach(const char *fixture, const char *node)
{
	char path[1200];
	const char *top = getenv("RDMAEMU_TOP_SRCDIR");

	emu_engine_reset();
	emu_process_reset();
	snprintf(path, sizeof(path), "%s/fixtures/%s", top && *top ? top : RDMAEMU_SRCDIR,
		 fixture);
	assert_int_equal(rdmaemu_ctl_attach(path, node), 0);
	/* virtual time moves only when this thread waits: exact times even under valgrind */
	emu_engine_set_quiesce_ns(emu_engine_get(), 0);
	return emu_engine_get();
}

static int teardown(void **state)
{
	(void)state;
	emu_engine_reset();
	emu_process_reset();
	return 0;
}

/* ---- command helpers ---- */

static int ucmd(int fd, uint32_t op, const void *body, size_t len, size_t out)
{
	uint8_t buf[1024];
	struct rdma_ucm_cmd_hdr h = { .cmd = op, .in = (uint16_t)len, .out = (uint16_t)out };
	ssize_t r;

	memcpy(buf, &h, sizeof(h));
	memcpy(buf + sizeof(h), body, len);
	r = emu_ucma_write(fd, buf, sizeof(h) + len);
	if (r < 0)
		return (int)r;
	assert_int_equal(r, (ssize_t)(sizeof(h) + len));
	return 0;
}

static uint32_t new_id(int fd, uint16_t ps, uint8_t qp_type)
{
	struct rdma_ucm_create_id c = { .uid = 0x1000, .ps = ps, .qp_type = qp_type };
	struct rdma_ucm_create_id_resp r = { 0 };

	c.response = (uintptr_t)&r;
	assert_int_equal(ucmd(fd, RDMA_USER_CM_CMD_CREATE_ID, &c, sizeof(c), sizeof(r)), 0);
	return r.id;
}

static void sa4(struct sockaddr_storage *ss, const char *a, uint16_t port)
{
	struct sockaddr_in *s = (struct sockaddr_in *)ss;

	memset(ss, 0, sizeof(*ss));
	s->sin_family = AF_INET;
	s->sin_port = htons(port);
	assert_int_equal(inet_pton(AF_INET, a, &s->sin_addr), 1);
}

static void sa6(struct sockaddr_storage *ss, const char *a)
{
	struct sockaddr_in6 *s = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	s->sin6_family = AF_INET6;
	assert_int_equal(inet_pton(AF_INET6, a, &s->sin6_addr), 1);
}

static int bind4(int fd, uint32_t h, const char *a, uint16_t port)
{
	struct rdma_ucm_bind c = { .id = h, .addr_size = sizeof(struct sockaddr_in) };
	struct sockaddr_storage ss;

	sa4(&ss, a, port);
	memcpy(&c.addr, &ss, sizeof(struct sockaddr_in));
	return ucmd(fd, RDMA_USER_CM_CMD_BIND, &c, sizeof(c), 0);
}

static int resolve(int fd, uint32_t h, const char *dst, uint32_t timeout_ms)
{
	struct rdma_ucm_resolve_addr c = { .id = h, .timeout_ms = timeout_ms };
	struct sockaddr_storage ss;

	sa4(&ss, dst, 7471);
	memcpy(&c.dst_addr, &ss, sizeof(struct sockaddr_in));
	c.dst_size = sizeof(struct sockaddr_in);
	return ucmd(fd, RDMA_USER_CM_CMD_RESOLVE_ADDR, &c, sizeof(c), 0);
}

static int resolve_route(int fd, uint32_t h, uint32_t timeout_ms)
{
	struct rdma_ucm_resolve_route c = { .id = h, .timeout_ms = timeout_ms };

	return ucmd(fd, RDMA_USER_CM_CMD_RESOLVE_ROUTE, &c, sizeof(c), 0);
}

static int query(int fd, uint32_t h, uint32_t option, void *resp, size_t len)
{
	struct rdma_ucm_query c = { .id = h, .option = option };

	c.response = (uintptr_t)resp;
	return ucmd(fd, RDMA_USER_CM_CMD_QUERY, &c, sizeof(c), len);
}

static int get_event(int fd, struct rdma_ucm_event_resp *r)
{
	struct rdma_ucm_get_event c;

	c.response = (uintptr_t)r;
	return ucmd(fd, RDMA_USER_CM_CMD_GET_EVENT, &c, sizeof(c), sizeof(*r));
}

static int set_opt(int fd, uint32_t h, uint32_t level, uint32_t name, const void *v, uint32_t len)
{
	struct rdma_ucm_set_option c = { .id = h, .level = level, .optname = name, .optlen = len };

	c.optval = (uintptr_t)v;
	return ucmd(fd, RDMA_USER_CM_CMD_SET_OPTION, &c, sizeof(c), 0);
}

static int join(int fd, uint32_t h, const struct sockaddr_storage *ss, uint16_t flags,
		uint32_t *mc)
{
	struct rdma_ucm_join_mcast c = { .id = h, .uid = 0x77, .join_flags = flags };
	struct rdma_ucm_create_id_resp r = { 0 };
	int ret;

	c.addr_size = (uint16_t)emu_cma_addr_size((const struct sockaddr *)ss);
	memcpy(&c.addr, ss, c.addr_size);
	c.response = (uintptr_t)&r;
	ret = ucmd(fd, RDMA_USER_CM_CMD_JOIN_MCAST, &c, sizeof(c), sizeof(r));
	if (mc)
		*mc = r.id;
	return ret;
}

static bool readable(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 0) == 1;
}

static enum emu_cma_state state_of(uint32_t h)
{
	struct emu_engine *e = emu_engine_get();
	enum emu_cma_state s;

	emu_engine_lock(e);
	s = emu_cma_id_lookup(h)->state;
	emu_engine_unlock(e);
	return s;
}

static uint64_t now(void)
{
	return emu_engine_peek_now(emu_engine_get());
}

static struct emu_neigh_stats stats(size_t host)
{
	struct emu_engine *e = emu_engine_get();
	struct emu_neigh_stats s;

	emu_engine_lock(e);
	assert_int_equal(emu_neigh_stats(e, host, &s), 0);
	emu_engine_unlock(e);
	return s;
}

static void gid4(uint8_t gid[16], const char *a)
{
	memset(gid, 0, 16);
	gid[10] = gid[11] = 0xff;
	assert_int_equal(inet_pton(AF_INET, a, gid + 12), 1);
}

struct path_resp {
	struct rdma_ucm_query_path_resp hdr;
	struct ib_path_rec_data p[6];
};

/* The id's single path, unpacked from its 64-byte wire record. */
static void the_path(int fd, uint32_t h, struct emu_sa_path_rec *rec)
{
	struct path_resp pr;

	memset(&pr, 0, sizeof(pr));
	assert_int_equal(query(fd, h, RDMA_USER_CM_QUERY_PATH, &pr, sizeof(pr)), 0);
	assert_int_equal(pr.hdr.num_paths, 1);
	assert_int_equal(pr.p[0].flags, 0x2b);
	emu_mad_record_unpack(&emu_sa_path_rec_desc, (const uint8_t *)pr.p[0].path_rec, rec);
}

static uint16_t src_port(int fd, uint32_t h)
{
	struct rdma_ucm_query_addr_resp q;

	assert_int_equal(query(fd, h, RDMA_USER_CM_QUERY_ADDR, &q, sizeof(q)), 0);
	return ntohs(((struct sockaddr_in *)&q.src_addr)->sin_port);
}

/* ---- rxe-ref2: A resolves B ---- */

static void test_resolve_arp_on_wire(void **state)
{
	struct rdma_ucm_event_resp r;
	struct rdma_ucm_query_addr_resp q;
	uint8_t want[16];
	uint64_t t0, t1;
	int fd;
	uint32_t h, h2;

	(void)state;
	attach("rxe-ref2.fabric", "A");
	fd = emu_ucma_open();
	h = new_id(fd, EMU_CMA_PS_TCP, 0);
	t0 = now();
	assert_int_equal(resolve(fd, h, "192.0.2.66", 2000), 0);
	assert_int_equal(get_event(fd, &r), 0);
	t1 = now();
	assert_int_equal(r.event, EMU_CMA_EVENT_ADDR_RESOLVED);
	assert_int_equal(r.status, 0);
	assert_int_equal(r.uid, 0x1000);
	/* one ARP request from A, one reply from B */
	assert_int_equal(stats(0).arp_req_sent, 1);
	assert_int_equal(stats(1).arp_rep_sent, 1);
	assert_int_equal(stats(0).arp_rcvd, 1);
	assert_int_equal(stats(1).arp_rcvd, 1);
	/* rxe-ref2's link has no delay: the exchange takes no virtual time */
	assert_int_equal(t1, t0);
	assert_int_equal(state_of(h), EMU_CMA_ADDR_RESOLVED);
	/* the routed source address with the implicit bind's port, the device and its port */
	assert_int_equal(query(fd, h, RDMA_USER_CM_QUERY_ADDR, &q, sizeof(q)), 0);
	assert_string_equal(inet_ntoa(((struct sockaddr_in *)&q.src_addr)->sin_addr), "192.0.2.65");
	assert_true(ntohs(((struct sockaddr_in *)&q.src_addr)->sin_port) >= 32768);
	assert_int_equal(ntohs(((struct sockaddr_in *)&q.dst_addr)->sin_port), 7471);
	assert_int_equal(q.port_num, 1);
	assert_int_equal(q.pkey, 0);
	/* GIDs: both IPs as IPv4-mapped GIDs (rdma_read_gids on RoCE) */
	assert_int_equal(query(fd, h, RDMA_USER_CM_QUERY_GID, &q, sizeof(q)), 0);
	gid4(want, "192.0.2.65");
	assert_memory_equal(((uint8_t *)&q.src_addr) + 8, want, 16);
	gid4(want, "192.0.2.66");
	assert_memory_equal(((uint8_t *)&q.dst_addr) + 8, want, 16);

	/* a second id: the neighbour entry is REACHABLE, no frame, resolved at the same instant */
	h2 = new_id(fd, EMU_CMA_PS_UDP, 0);
	assert_int_equal(resolve(fd, h2, "192.0.2.66", 2000), 0);
	assert_int_equal(get_event(fd, &r), 0);
	assert_int_equal(r.event, EMU_CMA_EVENT_ADDR_RESOLVED);
	assert_int_equal(now(), t1);
	assert_int_equal(stats(0).arp_req_sent, 1);
	/* resolved already: EINVAL */
	assert_int_equal(resolve(fd, h2, "192.0.2.66", 2000), -EINVAL);
	emu_ucma_close(fd);
}

/* The RoCE path record as cma_resolve_iboe_route builds it and ib_sa_pack_path packs it. */
static void test_route_roce(void **state)
{
	struct rdma_ucm_event_resp r;
	struct emu_sa_path_rec rec;
	uint8_t want[16];
	uint64_t t;
	int fd;
	uint32_t h;
	uint8_t tos = 32, ack = 14;

	(void)state;
	attach("rxe-ref2.fabric", "A");
	fd = emu_ucma_open();
	h = new_id(fd, EMU_CMA_PS_TCP, 0);
	assert_int_equal(resolve_route(fd, h, 2000), -EINVAL); /* not resolved */
	assert_int_equal(resolve(fd, h, "192.0.2.66", 2000), 0);
	assert_int_equal(get_event(fd, &r), 0);
	t = now();
	assert_int_equal(resolve_route(fd, h, 2000), 0);
	assert_int_equal(get_event(fd, &r), 0);
	assert_int_equal(r.event, EMU_CMA_EVENT_ROUTE_RESOLVED);
	assert_int_equal(r.status, 0);
	assert_int_equal(now(), t); /* built locally: no wire, no time */
	assert_int_equal(state_of(h), EMU_CMA_ROUTE_RESOLVED);
	the_path(fd, h, &rec);
	gid4(want, "192.0.2.65");
	assert_memory_equal(rec.sgid, want, 16);
	gid4(want, "192.0.2.66");
	assert_memory_equal(rec.dgid, want, 16);
	/* B's MAC 02:00:00:00:02:02 under the "ib" view of the roce union */
	assert_int_equal(rec.dlid, 0x0102);
	assert_int_equal(rec.slid, 0x0000);
	assert_int_equal(rec.raw_traffic, 0);
	assert_int_equal(rec.flow_label, (src_port(fd, h) * 31u + 7471u) & 0xfffff);
	assert_int_equal(rec.hop_limit, 64);
	assert_int_equal(rec.traffic_class, 0);
	assert_int_equal(rec.reversible, 1);
	assert_int_equal(rec.numb_path, 0);
	assert_int_equal(rec.pkey, 0xffff);
	assert_int_equal(rec.sl, 0);
	assert_int_equal(rec.mtu_selector, 2);
	assert_int_equal(rec.mtu, 3); /* 1500 - 96 bytes of headers: IB_MTU_1024 */
	assert_int_equal(rec.rate_selector, 2);
	assert_int_equal(rec.rate, 0);
	assert_int_equal(rec.packet_life_time_selector, 2);
	assert_int_equal(rec.packet_life_time, 18);
	assert_int_equal(rec.service_id, 0);
	assert_int_equal(resolve_route(fd, h, 2000), -EINVAL); /* ROUTE_RESOLVED already */

	/* TOS -> traffic class; ACK timeout -> packet lifetime = timeout - 1 */
	h = new_id(fd, EMU_CMA_PS_TCP, 0);
	assert_int_equal(set_opt(fd, h, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, &tos, 1), 0);
	assert_int_equal(set_opt(fd, h, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &ack, 1), 0);
	assert_int_equal(resolve(fd, h, "192.0.2.66", 2000), 0);
	assert_int_equal(get_event(fd, &r), 0);
	assert_int_equal(resolve_route(fd, h, 2000), 0);
	assert_int_equal(get_event(fd, &r), 0);
	assert_int_equal(r.event, EMU_CMA_EVENT_ROUTE_RESOLVED);
	the_path(fd, h, &rec);
	assert_int_equal(rec.traffic_class, 32);
	assert_int_equal(rec.packet_life_time, 13);
	emu_ucma_close(fd);
}

/* ---- rxe-ref: failures, loopback, own address ---- */

static void test_resolve_timeout(void **state)
{
	struct rdma_ucm_event_resp r;
	uint64_t t0;
	int fd;
	uint32_t h;

	(void)state;
	attach("rxe-ref.fabric", "rxe-ref");
	fd = emu_ucma_open();
	h = new_id(fd, EMU_CMA_PS_TCP, 0);
	t0 = now();
	assert_int_equal(resolve(fd, h, "192.0.2.30", 500), 0);
	assert_int_equal(get_event(fd, &r), 0);
	assert_int_equal(r.event, EMU_CMA_EVENT_ADDR_ERROR);
	assert_int_equal((int32_t)r.status, -ETIMEDOUT);
	assert_int_equal(now() - t0, 500 * MS);
	assert_int_equal(state_of(h), EMU_CMA_ADDR_BOUND);
	/* the ARP requests went out on s0 (broadcast probes 1 s apart: one by 500 ms) */
	assert_int_equal(stats(0).arp_req_sent, 1);
	/* a retry with 2000 ms times out exactly 2000 ms later */
	t0 = now();
	assert_int_equal(resolve(fd, h, "192.0.2.30", 2000), 0);
	assert_int_equal(get_event(fd, &r), 0);
	assert_int_equal(r.event, EMU_CMA_EVENT_ADDR_ERROR);
	assert_int_equal((int32_t)r.status, -ETIMEDOUT);
	assert_int_equal(now() - t0, 2000 * MS);
	emu_ucma_close(fd);
}

static void test_resolve_unreachable(void **state)
{
	int fd;
	uint32_t h;

	(void)state;
	attach("rxe-ref.fabric", "rxe-ref");
	fd = emu_ucma_open();
	h = new_id(fd, EMU_CMA_PS_TCP, 0);
	assert_int_equal(resolve(fd, h, "203.0.113.9", 2000), -ENETUNREACH);
	assert_int_equal(state_of(h), EMU_CMA_ADDR_BOUND);
	assert_false(readable(fd));
	assert_int_equal(stats(0).arp_req_sent, 0);
	emu_ucma_close(fd);
}

static void test_resolve_loopback(void **state)
{
	struct rdma_ucm_event_resp r;
	struct rdma_ucm_query_addr_resp q;
	uint8_t want[16];
	uint64_t t0;
	int fd;
	uint32_t h;

	(void)state;
	attach("rxe-ref.fabric", "rxe-ref");
	fd = emu_ucma_open();
	/* 127.0.0.1: cma_resolve_loopback binds the first active device, source 127.0.0.1 */
	h = new_id(fd, EMU_CMA_PS_TCP, 0);
	t0 = now();
	assert_int_equal(resolve(fd, h, "127.0.0.1", 2000), 0);
	assert_int_equal(get_event(fd, &r), 0);
	assert_int_equal(r.event, EMU_CMA_EVENT_ADDR_RESOLVED);
	assert_int_equal(now(), t0);
	assert_int_equal(query(fd, h, RDMA_USER_CM_QUERY_ADDR, &q, sizeof(q)), 0);
	assert_string_equal(inet_ntoa(((struct sockaddr_in *)&q.src_addr)->sin_addr), "127.0.0.1");
	assert_int_equal(q.port_num, 1);
	assert_int_equal(q.node_guid, emu_process_host()->devices[0].node_guid);
	assert_int_equal(ntohs(q.pkey), 0xffff);
	assert_int_equal(query(fd, h, RDMA_USER_CM_QUERY_GID, &q, sizeof(q)), 0);
	gid4(want, "127.0.0.1");
	assert_memory_equal(((uint8_t *)&q.src_addr) + 8, want, 16);
	/* no bound netdev: RoCE route resolution fails synchronously (spec row 143) */
	assert_int_equal(resolve_route(fd, h, 2000), -ENODEV);
	assert_int_equal(state_of(h), EMU_CMA_ADDR_RESOLVED);

	/* the host's own address: through lo to the netdev that holds it (s0, rxe1) */
	h = new_id(fd, EMU_CMA_PS_TCP, 0);
	assert_int_equal(resolve(fd, h, "192.0.2.17", 2000), 0);
	assert_int_equal(get_event(fd, &r), 0);
	assert_int_equal(r.event, EMU_CMA_EVENT_ADDR_RESOLVED);
	assert_int_equal(query(fd, h, RDMA_USER_CM_QUERY_ADDR, &q, sizeof(q)), 0);
	assert_string_equal(inet_ntoa(((struct sockaddr_in *)&q.src_addr)->sin_addr), "192.0.2.17");
	assert_int_equal(q.node_guid, emu_process_host()->devices[1].node_guid);
	assert_int_equal(resolve_route(fd, h, 2000), 0);
	assert_int_equal(get_event(fd, &r), 0);
	assert_int_equal(r.event, EMU_CMA_EVENT_ROUTE_RESOLVED);

	/* the NOARP dummy d0: a silent address resolves at once, source 192.0.2.1 on rxe0 */
	h = new_id(fd, EMU_CMA_PS_TCP, 0);
	t0 = now();
	assert_int_equal(resolve(fd, h, "192.0.2.5", 2000), 0);
	assert_int_equal(get_event(fd, &r), 0);
	assert_int_equal(r.event, EMU_CMA_EVENT_ADDR_RESOLVED);
	assert_int_equal(now(), t0);
	assert_int_equal(query(fd, h, RDMA_USER_CM_QUERY_ADDR, &q, sizeof(q)), 0);
	assert_string_equal(inet_ntoa(((struct sockaddr_in *)&q.src_addr)->sin_addr), "192.0.2.1");
	assert_int_equal(q.node_guid, emu_process_host()->devices[0].node_guid);
	assert_int_equal(stats(0).arp_req_sent, 0);
	emu_ucma_close(fd);
}

/* rdma_destroy_id while the ARP is unanswered: rdma_addr_cancel, no event ever. */
static void test_destroy_while_resolving(void **state)
{
	struct rdma_ucm_destroy_id c = { 0 };
	struct rdma_ucm_destroy_id_resp dr;
	int fd;
	uint32_t h;

	(void)state;
	attach("rxe-ref.fabric", "rxe-ref");
	fd = emu_ucma_open();
	h = new_id(fd, EMU_CMA_PS_TCP, 0);
	assert_int_equal(resolve(fd, h, "192.0.2.30", 2000), 0);
	c.id = h;
	c.response = (uintptr_t)&dr;
	assert_int_equal(ucmd(fd, RDMA_USER_CM_CMD_DESTROY_ID, &c, sizeof(c), sizeof(dr)), 0);
	/* the cancelled request never reports: 3 s later nothing is queued */
	assert_int_equal(rdmaemu_ctl_advance_ns(3000 * MS), 0);
	assert_false(readable(fd));
	emu_ucma_close(fd);
}

/* ---- ib.fabric: IPoIB ARP and the SA ---- */

static void test_route_ib(void **state)
{
	struct rdma_ucm_event_resp r;
	struct rdma_ucm_query_addr_resp q;
	struct emu_sa_path_rec rec;
	struct rdmaemu_sa_policy pol;
	const struct emu_fabric *f;
	uint8_t bgid[16];
	uint64_t t0;
	int fd;
	uint32_t h;

	(void)state;
	attach("ib.fabric", "ib-a");
	f = emu_process_fabric();
	memcpy(bgid, f->hosts[1].devices[0].ports[0].gids[0].raw, 16);
	fd = emu_ucma_open();
	h = new_id(fd, EMU_CMA_PS_TCP, 0);
	assert_int_equal(resolve(fd, h, "192.0.2.130", 2000), 0);
	assert_int_equal(get_event(fd, &r), 0);
	assert_int_equal(r.event, EMU_CMA_EVENT_ADDR_RESOLVED);
	assert_int_equal(stats(0).ipoib_sent, 1);
	/* the destination GID from ib-b's IPoIB hardware address; the IPoIB P_Key */
	assert_int_equal(query(fd, h, RDMA_USER_CM_QUERY_GID, &q, sizeof(q)), 0);
	assert_memory_equal(((uint8_t *)&q.dst_addr) + 8, bgid, 16);
	assert_memory_equal(((uint8_t *)&q.src_addr) + 8,
			    f->hosts[0].devices[0].ports[0].gids[0].raw, 16);
	assert_int_equal(query(fd, h, RDMA_USER_CM_QUERY_ADDR, &q, sizeof(q)), 0);
	assert_int_equal(ntohs(q.pkey), 0xffff);

	/* the SA answers after its 50 us response delay (plus the wire): a path from LID 2 to 3 */
	t0 = now();
	assert_int_equal(resolve_route(fd, h, 2000), 0);
	assert_int_equal(get_event(fd, &r), 0);
	assert_int_equal(r.event, EMU_CMA_EVENT_ROUTE_RESOLVED);
	assert_true(now() - t0 >= 50000);
	assert_true(now() - t0 < MS);
	the_path(fd, h, &rec);
	assert_memory_equal(rec.dgid, bgid, 16);
	assert_int_equal(rec.dlid, 3);
	assert_int_equal(rec.slid, 2);
	assert_int_equal(rec.pkey, 0xffff);
	assert_int_equal(rec.reversible, 1);
	assert_int_equal(rec.sl, 0);
	assert_int_equal(rec.packet_life_time, 18);
	assert_int_equal(rec.service_id, ((uint64_t)EMU_CMA_PS_TCP << 16) + 7471);

	/* the SA drops the next query: ROUTE_ERROR -ETIMEDOUT exactly at the caller's timeout */
	h = new_id(fd, EMU_CMA_PS_TCP, 0);
	assert_int_equal(resolve(fd, h, "192.0.2.130", 2000), 0);
	assert_int_equal(get_event(fd, &r), 0);
	assert_int_equal(rdmaemu_ctl_sa_policy(NULL, &pol), 0);
	pol.drop_next = 1;
	assert_int_equal(rdmaemu_ctl_sa_policy(&pol, NULL), 0);
	t0 = now();
	assert_int_equal(resolve_route(fd, h, 1500), 0);
	assert_int_equal(get_event(fd, &r), 0);
	assert_int_equal(r.event, EMU_CMA_EVENT_ROUTE_ERROR);
	assert_int_equal((int32_t)r.status, -ETIMEDOUT);
	assert_int_equal(now() - t0, 1500 * MS);
	assert_int_equal(state_of(h), EMU_CMA_ADDR_RESOLVED);
	/* an error status from the SA: ROUTE_ERROR -EINVAL (sa_query's recv_handler) */
	pol.drop_next = 0;
	pol.error_status = 0x0300;
	assert_int_equal(rdmaemu_ctl_sa_policy(&pol, NULL), 0);
	assert_int_equal(resolve_route(fd, h, 1500), 0);
	assert_int_equal(get_event(fd, &r), 0);
	assert_int_equal(r.event, EMU_CMA_EVENT_ROUTE_ERROR);
	assert_int_equal((int32_t)r.status, -EINVAL);
	/* and again a good answer */
	pol.error_status = 0;
	assert_int_equal(rdmaemu_ctl_sa_policy(&pol, NULL), 0);
	assert_int_equal(resolve_route(fd, h, 1500), 0);
	assert_int_equal(get_event(fd, &r), 0);
	assert_int_equal(r.event, EMU_CMA_EVENT_ROUTE_RESOLVED);
	emu_ucma_close(fd);
}

/* IPv6 over IPoIB: the NS goes to the target's solicited-node group once the IPoIB netdevs
 * joined their groups and ib-a its send-only one at the SA, the NA back once ib-b has the
 * SA's path to ib-a (docs/neigh.md), then the route. */
static void test_route_ib6(void **state)
{
	struct rdma_ucm_resolve_addr c = { .timeout_ms = 2000 };
	struct rdma_ucm_event_resp r;
	struct rdma_ucm_query_addr_resp q;
	struct sockaddr_storage ss;
	struct emu_sa_path_rec rec;
	const struct emu_fabric *f;
	const struct sockaddr_in6 *s6;
	uint8_t want[16];
	uint64_t t0;
	int fd;

	(void)state;
	attach("ib.fabric", "ib-a");
	f = emu_process_fabric();
	fd = emu_ucma_open();
	c.id = new_id(fd, EMU_CMA_PS_TCP, 0);
	sa6(&ss, "2001:db8:0:81::b");
	((struct sockaddr_in6 *)&ss)->sin6_port = htons(7471);
	memcpy(&c.dst_addr, &ss, sizeof(struct sockaddr_in6));
	c.dst_size = sizeof(struct sockaddr_in6);
	t0 = now();
	assert_int_equal(ucmd(fd, RDMA_USER_CM_CMD_RESOLVE_ADDR, &c, sizeof(c), 0), 0);
	assert_int_equal(get_event(fd, &r), 0);
	assert_int_equal(r.event, EMU_CMA_EVENT_ADDR_RESOLVED);
	assert_int_equal(r.status, 0);
	/* the NS waited for the send-only join, the SA's 50 us; ib-b's unicast NA waited for its
	 * PathRecord query to ib-a's GID, 50 us more (ipoib's neigh_add_path) */
	assert_int_equal(now() - t0, 100000);
	assert_int_equal(stats(0).ns_sent, 1);
	assert_int_equal(stats(0).nd_rcvd, 1);
	assert_int_equal(stats(1).na_sent, 1);
	assert_int_equal(stats(1).path_queries, 1);
	assert_int_equal(stats(0).arp_req_sent, 0);
	assert_int_equal(query(fd, c.id, RDMA_USER_CM_QUERY_GID, &q, sizeof(q)), 0);
	assert_memory_equal(((uint8_t *)&q.dst_addr) + 8, f->hosts[1].devices[0].ports[0].gids[0].raw,
			    16);
	assert_int_equal(query(fd, c.id, RDMA_USER_CM_QUERY_ADDR, &q, sizeof(q)), 0);
	/* the source: ib0's address sharing the longest prefix with the destination */
	s6 = (const struct sockaddr_in6 *)&q.src_addr;
	assert_int_equal(s6->sin6_family, AF_INET6);
	assert_int_equal(inet_pton(AF_INET6, "2001:db8:0:81::a", want), 1);
	assert_memory_equal(&s6->sin6_addr, want, 16);
	assert_int_equal(ntohs(q.pkey), 0xffff);
	assert_int_equal(resolve_route(fd, c.id, 2000), 0);
	assert_int_equal(get_event(fd, &r), 0);
	assert_int_equal(r.event, EMU_CMA_EVENT_ROUTE_RESOLVED);
	the_path(fd, c.id, &rec);
	assert_int_equal(rec.slid, 2);
	assert_int_equal(rec.dlid, 3);
	emu_ucma_close(fd);
}

/* ---- multicast ---- */

static void test_mcast_roce(void **state)
{
	struct rdma_ucm_event_resp r;
	struct sockaddr_storage g;
	const struct emu_port *p;
	uint8_t want[16];
	int fd;
	uint32_t h, mc;

	(void)state;
	attach("rxe-ref2.fabric", "A");
	fd = emu_ucma_open();
	h = new_id(fd, EMU_CMA_PS_UDP, 4);
	sa4(&g, "239.1.1.1", 0);
	assert_int_equal(join(fd, h, &g, 0, NULL), -EINVAL); /* no device yet */
	assert_int_equal(bind4(fd, h, "192.0.2.65", 0), 0);
	assert_int_equal(join(fd, h, &g, 0, &mc), 0);
	assert_int_equal(get_event(fd, &r), 0);
	assert_int_equal(r.event, EMU_CMA_EVENT_MULTICAST_JOIN);
	assert_int_equal(r.status, 0);
	assert_int_equal(r.uid, 0x77);
	assert_int_equal(r.param.ud.qp_num, 0xffffff);
	assert_int_equal(r.param.ud.qkey, 0x01234567);
	gid4(want, "239.1.1.1");
	assert_memory_equal(r.param.ud.ah_attr.grh.dgid, want, 16);
	assert_int_equal(r.param.ud.ah_attr.grh.hop_limit, 64);
	assert_int_equal(r.param.ud.ah_attr.is_global, 1);
	assert_int_equal(r.param.ud.ah_attr.dlid, 0);
	assert_int_equal(r.param.ud.ah_attr.port_num, 1);
	/* the RoCE v2 GID of 192.0.2.65 */
	p = &emu_process_host()->devices[0].ports[0];
	gid4(want, "192.0.2.65");
	assert_memory_equal(p->gids[r.param.ud.ah_attr.grh.sgid_index].raw, want, 16);
	assert_int_equal(p->gids[r.param.ud.ah_attr.grh.sgid_index].type, EMU_GID_ROCE_V2);
	/* the wildcard, an IPv6 group on RoCE v2 (-ENOTSUPP, 524) */
	sa4(&g, "0.0.0.0", 0);
	assert_int_equal(join(fd, h, &g, 0, NULL), -EINVAL);
	h = new_id(fd, EMU_CMA_PS_UDP, 4);
	{
		struct rdma_ucm_bind c = { .id = h, .addr_size = sizeof(struct sockaddr_in6) };
		struct sockaddr_storage ss;

		sa6(&ss, "fe80::ff:fe00:201");
		((struct sockaddr_in6 *)&ss)->sin6_scope_id = 2;
		memcpy(&c.addr, &ss, sizeof(struct sockaddr_in6));
		assert_int_equal(ucmd(fd, RDMA_USER_CM_CMD_BIND, &c, sizeof(c), 0), 0);
	}
	sa6(&g, "ff0e::1:2");
	assert_int_equal(join(fd, h, &g, 0, NULL), -524);
	emu_ucma_close(fd);
}

static void test_mcast_ib(void **state)
{
	static const uint8_t mgid[16] = { 0xff, 0x12, 0x40, 0x01, 0xff, 0xff, 0, 0,
					  0, 0, 0, 0, 0x0f, 0x01, 0x01, 0x01 };
	struct rdma_ucm_event_resp r;
	struct rdmaemu_sa_policy pol;
	struct sockaddr_storage g;
	uint64_t t0;
	int fd;
	uint32_t h;

	(void)state;
	attach("ib.fabric", "ib-a");
	fd = emu_ucma_open();
	h = new_id(fd, EMU_CMA_PS_UDP, 4);
	assert_int_equal(bind4(fd, h, "192.0.2.129", 0), 0);
	sa4(&g, "239.1.1.1", 0);
	assert_int_equal(join(fd, h, &g, 0, NULL), 0);
	assert_int_equal(get_event(fd, &r), 0);
	assert_int_equal(r.event, EMU_CMA_EVENT_MULTICAST_JOIN);
	assert_int_equal(r.status, 0);
	/* ip_ib_mc_map of 239.1.1.1 with the RDMA CM signature (PS_UDP) */
	assert_memory_equal(r.param.ud.ah_attr.grh.dgid, mgid, 16);
	assert_true(r.param.ud.ah_attr.dlid >= 0xc000);
	assert_int_equal(r.param.ud.qp_num, 0xffffff);
	assert_int_equal(r.param.ud.qkey, 0x01234567);
	assert_int_equal(r.param.ud.ah_attr.is_global, 1);
	assert_int_equal(r.param.ud.ah_attr.grh.sgid_index, 0);
	assert_int_equal(r.param.ud.ah_attr.port_num, 1);

	/* the SA never answers: MULTICAST_ERROR -ETIMEDOUT after multicast.c's 3 s */
	assert_int_equal(rdmaemu_ctl_sa_policy(NULL, &pol), 0);
	pol.drop_next = 1;
	assert_int_equal(rdmaemu_ctl_sa_policy(&pol, NULL), 0);
	sa4(&g, "239.1.1.2", 0);
	t0 = now();
	assert_int_equal(join(fd, h, &g, 0, NULL), 0);
	assert_int_equal(get_event(fd, &r), 0);
	assert_int_equal(r.event, EMU_CMA_EVENT_MULTICAST_ERROR);
	assert_int_equal((int32_t)r.status, -ETIMEDOUT);
	assert_int_equal(now() - t0, 3000 * MS);
	emu_ucma_close(fd);
}

/* ---- address changes ---- */

static void test_addr_change(void **state)
{
	struct rdma_ucm_event_resp r;
	int fd;
	uint32_t h, hb;

	(void)state;
	attach("rxe-ref2.fabric", "A");
	fd = emu_ucma_open();
	h = new_id(fd, EMU_CMA_PS_TCP, 0);
	assert_int_equal(resolve(fd, h, "192.0.2.66", 2000), 0);
	assert_int_equal(get_event(fd, &r), 0);
	hb = new_id(fd, EMU_CMA_PS_TCP, 0);
	assert_int_equal(bind4(fd, hb, "192.0.2.65", 0), 0);
	/* Linux 6.1's cma_netdev_callback acts on NETDEV_BONDING_FAILOVER only: removing,
	 * adding addresses and link changes queue nothing for the ids */
	assert_int_equal(rdmaemu_ctl_addr_del("A", "eth0", "192.0.2.65/28"), 0);
	assert_int_equal(rdmaemu_ctl_addr_add("A", "eth0", "192.0.2.70/28"), 0);
	assert_int_equal(rdmaemu_ctl_link_set("A", "eth0", 0), 0);
	assert_int_equal(rdmaemu_ctl_advance_ns(10 * MS), 0);
	assert_false(readable(fd));
	assert_int_equal(state_of(h), EMU_CMA_ADDR_RESOLVED);
	assert_int_equal(state_of(hb), EMU_CMA_ADDR_BOUND);
	/* but a new resolution sees the change: no route any more */
	hb = new_id(fd, EMU_CMA_PS_TCP, 0);
	assert_int_equal(resolve(fd, hb, "192.0.2.66", 2000), -ENETUNREACH);
	emu_ucma_close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_resolve_arp_on_wire, teardown),
		cmocka_unit_test_teardown(test_route_roce, teardown),
		cmocka_unit_test_teardown(test_resolve_timeout, teardown),
		cmocka_unit_test_teardown(test_resolve_unreachable, teardown),
		cmocka_unit_test_teardown(test_resolve_loopback, teardown),
		cmocka_unit_test_teardown(test_destroy_while_resolving, teardown),
		cmocka_unit_test_teardown(test_route_ib, teardown),
		cmocka_unit_test_teardown(test_route_ib6, teardown),
		cmocka_unit_test_teardown(test_mcast_roce, teardown),
		cmocka_unit_test_teardown(test_mcast_ib, teardown),
		cmocka_unit_test_teardown(test_addr_change, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
