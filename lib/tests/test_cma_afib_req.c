/* Requests reaching AF_IB listeners on fixtures/ib.fabric (docs/cma.md "AF_IB"), as Linux
 * 6.1's cma_req_handler -> cma_ib_id_from_event (cma_save_req_info, cma_get_net_dev,
 * cma_find_listener) -> cma_ib_new_conn_id / cma_ib_new_udp_id (cma_save_net_info,
 * cma_save_ib_info) -> cma_ib_acquire_dev treat them:
 *   - an IP REQ (CMA header) to an AF_IB listener: cma_match_private_data takes it, the new
 *     id's addresses are AF_IB from the REQ's path, and, the offset going by the listener's
 *     family, CONNECT_REQUEST carries all 92 bytes: the 36-byte CMA header, then the user's;
 *   - an IP SIDR_REQ to a wildcard AF_IB listener: the new id takes the listener's address
 *     (no path) with a full service ID mask and an AF_IB peer with nothing but the family;
 *     all 216 bytes; its GID is the receiving IPoIB netdev's;
 *   - an AF_IB SIDR_REQ (no header) to an AF_IB listener bound to the GID: the same
 *     addresses, the user's 216 bytes; to a wildcard AF_IB listener it fails
 *     (cma_ib_acquire_dev finds no GID: SIDR_REP REJECT, UNREACHABLE 2 at the requester);
 *   - a request whose private data starts with a byte other than 0 (CMA version) fails
 *     (cma_save_ip_info -EINVAL): REJECTED 28, even for an AF_IB listener.
 * The real-stack VM has no InfiniBand: this follows the 6.1 sources.
 * Re-executes itself on the emulated libibverbs (verbs_test.h). */
#include "config.h"

#include <arpa/inet.h>
#include <endian.h>
#include <poll.h>
#include <rdma/rdma_cma.h>
#include <infiniband/ib.h>

#include "emu/verbs/tests/verbs_test.h"
#include "rdmaemu/ctl.h"

#define PS_TCP 0x0106ull
#define PS_UDP 0x0111ull

static const uint8_t GID_B[16] = { 0xfe, 0x80, [8] = 0x00, 0x02, 0xc9, 0x03, 0x00, 0x00, 0x0b,
				   0x01 };
static const uint8_t GID_C[16] = { 0xfe, 0x80, [8] = 0x00, 0x02, 0xc9, 0x03, 0x00, 0x00, 0x0c,
				   0x01 };
static const uint8_t ZERO[16];

static struct rdma_cm_event *expect(struct rdma_event_channel *ch, enum rdma_cm_event_type type,
				    int status)
{
	struct rdma_cm_event *ev;

	assert_int_equal(rdma_get_cm_event(ch, &ev), 0);
	if (ev->event != type)
		fail_msg("event %s (status %d), expected %s", rdma_event_str(ev->event), ev->status,
			 rdma_event_str(type));
	assert_int_equal(ev->status, status);
	return ev;
}

static void expect_ack(struct rdma_event_channel *ch, enum rdma_cm_event_type type, int status)
{
	assert_int_equal(rdma_ack_cm_event(expect(ch, type, status)), 0);
}

/* 1 when ch has no event queued (its fd is not readable). */
static int cm_readable_none(struct rdma_event_channel *ch)
{
	struct pollfd pf = { ch->fd, POLLIN, 0 };

	return poll(&pf, 1, 0) == 0;
}

static struct sockaddr_ib sib(const uint8_t gid[16], uint64_t sid)
{
	struct sockaddr_ib s;

	memset(&s, 0, sizeof s);
	s.sib_family = AF_IB;
	s.sib_pkey = htons(0xffff);
	memcpy(s.sib_addr.sib_raw, gid, 16);
	s.sib_sid = htobe64(sid);
	s.sib_sid_mask = htobe64(~0ull);
	return s;
}

/* ib-b: a channel and an AF_IB listener on gid (ZERO: the wildcard) with service ID sid. */
static struct rdma_event_channel *listen_b(struct rdma_cm_id **l, enum rdma_port_space ps,
					   const uint8_t gid[16], uint64_t sid)
{
	struct rdma_event_channel *ch;
	struct sockaddr_ib a = sib(gid, sid);

	assert_int_equal(rdmaemu_ctl_cm_host("ib-b"), 0);
	ch = rdma_create_event_channel();
	assert_int_equal(rdmaemu_ctl_cm_host(NULL), 0);
	assert_non_null(ch);
	assert_int_equal(rdma_create_id(ch, l, NULL, ps), 0);
	assert_int_equal(rdma_bind_addr(*l, (struct sockaddr *)&a), 0);
	assert_int_equal(rdma_listen(*l, 4), 0);
	return ch;
}

/* ib-c: an id of ps resolved (address and route) to dst. */
static struct rdma_cm_id *resolve_c(struct rdma_event_channel *ch, enum rdma_port_space ps,
				    const struct sockaddr *dst)
{
	struct rdma_cm_id *id;

	assert_int_equal(rdma_create_id(ch, &id, NULL, ps), 0);
	assert_int_equal(rdma_resolve_addr(id, NULL, (struct sockaddr *)dst, 2000), 0);
	expect_ack(ch, RDMA_CM_EVENT_ADDR_RESOLVED, 0);
	assert_int_equal(rdma_resolve_route(id, 2000), 0);
	expect_ack(ch, RDMA_CM_EVENT_ROUTE_RESOLVED, 0);
	return id;
}

static struct sockaddr_in ip_b(uint16_t port)
{
	struct sockaddr_in s;

	memset(&s, 0, sizeof s);
	s.sin_family = AF_INET;
	s.sin_port = htons(port);
	inet_pton(AF_INET, "192.0.2.130", &s.sin_addr);
	return s;
}

/* The 36-byte CMA header a requester on ib-c (192.0.2.131, source port sport) puts in front. */
static void check_cma_hdr(const uint8_t *p, uint16_t sport_be)
{
	static const uint8_t c[4] = { 192, 0, 2, 131 }, b[4] = { 192, 0, 2, 130 };

	assert_int_equal(p[0], 0);    /* CMA version */
	assert_int_equal(p[1], 0x40); /* IP version 4 */
	assert_memory_equal(p + 2, &sport_be, 2);
	assert_memory_equal(p + 4 + 12, c, 4);
	assert_memory_equal(p + 20 + 12, b, 4);
}

static void create_ud_qp(struct rdma_cm_id *id)
{
	struct ibv_qp_init_attr qa = { .cap = { 4, 4, 1, 1, 0 }, .qp_type = IBV_QPT_UD };
	struct ibv_cq *cq = ibv_create_cq(id->verbs, 8, NULL, NULL, 0);

	assert_non_null(cq);
	qa.send_cq = qa.recv_cq = cq;
	assert_int_equal(rdma_create_qp(id, NULL, &qa), 0);
}

static void destroy(struct rdma_cm_id *id)
{
	struct ibv_cq *cq = id->qp ? id->qp->send_cq : NULL;

	if (id->qp)
		rdma_destroy_qp(id);
	if (cq)
		assert_int_equal(ibv_destroy_cq(cq), 0);
	assert_int_equal(rdma_destroy_id(id), 0);
}

static void test_ip_req_to_afib_listener(void **state)
{
	const uint64_t sid = PS_TCP << 16 | 7480;
	struct rdma_conn_param p = { .qp_num = 0x321, .responder_resources = 1,
				     .initiator_depth = 1 };
	struct rdma_event_channel *bch, *ach = rdma_create_event_channel();
	struct sockaddr_in dst = ip_b(7480);
	const struct sockaddr_ib *s;
	struct rdma_cm_id *l, *a, *b;
	struct rdma_cm_event *ev;
	uint8_t pd[56];

	(void)state;
	bch = listen_b(&l, RDMA_PS_TCP, GID_B, sid);
	a = resolve_c(ach, RDMA_PS_TCP, (struct sockaddr *)&dst);
	for (size_t i = 0; i < sizeof pd; i++)
		pd[i] = (uint8_t)(0xa0 + i);
	p.private_data = pd;
	p.private_data_len = sizeof pd;
	assert_int_equal(rdma_connect(a, &p), 0);
	ev = expect(bch, RDMA_CM_EVENT_CONNECT_REQUEST, 0);
	b = ev->id;
	assert_ptr_equal(ev->listen_id, l);
	/* all 92 bytes: the CMA header, then the user's 56 */
	assert_int_equal(ev->param.conn.private_data_len, 92);
	check_cma_hdr(ev->param.conn.private_data, rdma_get_src_port(a));
	assert_memory_equal((const uint8_t *)ev->param.conn.private_data + 36, pd, 56);
	assert_int_equal(ev->param.conn.qp_num, 0x321);
	/* AF_IB addresses from the REQ's path (cma_save_ib_info) */
	s = (const struct sockaddr_ib *)rdma_get_local_addr(b);
	assert_int_equal(s->sib_family, AF_IB);
	assert_memory_equal(s->sib_addr.sib_raw, GID_B, 16);
	assert_int_equal(ntohs(s->sib_pkey), 0xffff);
	assert_int_equal(be64toh(s->sib_sid), sid);
	assert_int_equal(be64toh(s->sib_sid_mask), ~0ull);
	s = (const struct sockaddr_ib *)rdma_get_peer_addr(b);
	assert_int_equal(s->sib_family, AF_IB);
	assert_memory_equal(s->sib_addr.sib_raw, GID_C, 16);
	assert_non_null(b->verbs);
	assert_int_equal(rdma_ack_cm_event(ev), 0);
	/* and it connects */
	p.private_data = NULL;
	p.private_data_len = 0;
	p.qp_num = 0x654;
	assert_int_equal(rdma_accept(b, &p), 0);
	ev = expect(ach, RDMA_CM_EVENT_CONNECT_RESPONSE, 0);
	assert_int_equal(ev->param.conn.qp_num, 0x654);
	assert_int_equal(rdma_ack_cm_event(ev), 0);
	assert_int_equal(rdma_establish(a), 0);
	expect_ack(bch, RDMA_CM_EVENT_ESTABLISHED, 0);
	assert_int_equal(rdma_destroy_id(b), 0);
	expect_ack(ach, RDMA_CM_EVENT_DISCONNECTED, 0);
	assert_int_equal(rdma_destroy_id(a), 0);
	assert_int_equal(rdma_destroy_id(l), 0);
	rdma_destroy_event_channel(bch);
	rdma_destroy_event_channel(ach);
}

static void test_ip_sidr_to_afib_listener(void **state)
{
	const uint64_t sid = PS_UDP << 16 | 7481;
	struct rdma_conn_param p = { 0 };
	struct rdma_event_channel *bch, *ach = rdma_create_event_channel();
	struct sockaddr_in dst = ip_b(7481);
	const struct sockaddr_ib *s;
	struct rdma_cm_id *l, *a, *b;
	struct rdma_cm_event *ev;
	uint8_t pd[100];

	(void)state;
	bch = listen_b(&l, RDMA_PS_UDP, ZERO, sid);
	a = resolve_c(ach, RDMA_PS_UDP, (struct sockaddr *)&dst);
	create_ud_qp(a);
	for (size_t i = 0; i < sizeof pd; i++)
		pd[i] = (uint8_t)(0x10 + i);
	p.private_data = pd;
	p.private_data_len = sizeof pd;
	assert_int_equal(rdma_connect(a, &p), 0);
	ev = expect(bch, RDMA_CM_EVENT_CONNECT_REQUEST, 0);
	b = ev->id;
	assert_int_equal(ev->param.ud.private_data_len, 216);
	check_cma_hdr(ev->param.ud.private_data, rdma_get_src_port(a));
	assert_memory_equal((const uint8_t *)ev->param.ud.private_data + 36, pd, 100);
	/* no path: the listener's address with a full mask; the peer's family only */
	s = (const struct sockaddr_ib *)rdma_get_local_addr(b);
	assert_int_equal(s->sib_family, AF_IB);
	assert_memory_equal(s->sib_addr.sib_raw, ZERO, 16);
	assert_int_equal(ntohs(s->sib_pkey), 0xffff);
	assert_int_equal(be64toh(s->sib_sid), sid);
	assert_int_equal(be64toh(s->sib_sid_mask), ~0ull);
	s = (const struct sockaddr_ib *)rdma_get_peer_addr(b);
	assert_int_equal(s->sib_family, AF_IB);
	assert_memory_equal(s->sib_addr.sib_raw, ZERO, 16);
	assert_int_equal(s->sib_sid, 0);
	assert_non_null(b->verbs);
	assert_int_equal(rdma_ack_cm_event(ev), 0);
	create_ud_qp(b);
	p.private_data = "ok";
	p.private_data_len = 3;
	assert_int_equal(rdma_accept(b, &p), 0);
	ev = expect(ach, RDMA_CM_EVENT_ESTABLISHED, 0);
	assert_int_equal(ev->param.ud.qp_num, b->qp->qp_num);
	assert_int_equal(ev->param.ud.qkey, RDMA_UDP_QKEY);
	assert_string_equal(ev->param.ud.private_data, "ok");
	assert_int_equal(rdma_ack_cm_event(ev), 0);
	destroy(b);
	destroy(a);
	assert_int_equal(rdma_destroy_id(l), 0);
	rdma_destroy_event_channel(bch);
	rdma_destroy_event_channel(ach);
}

static void test_afib_sidr_to_afib_listener(void **state)
{
	const uint64_t sid = PS_UDP << 16 | 7482;
	struct rdma_conn_param p = { 0 };
	struct rdma_event_channel *bch, *ach = rdma_create_event_channel();
	struct sockaddr_ib dst = sib(GID_B, sid);
	const struct sockaddr_ib *s;
	struct rdma_cm_id *l, *a, *b;
	struct rdma_cm_event *ev;
	uint8_t pd[216];

	(void)state;
	bch = listen_b(&l, RDMA_PS_UDP, GID_B, sid);
	a = resolve_c(ach, RDMA_PS_UDP, (struct sockaddr *)&dst);
	create_ud_qp(a);
	/* byte 0 is the CMA version slot (0), byte 1's IP version nibble is 0: AF_IB */
	for (size_t i = 0; i < sizeof pd; i++)
		pd[i] = (uint8_t)i;
	p.private_data = pd;
	p.private_data_len = sizeof pd;
	assert_int_equal(rdma_connect(a, &p), 0);
	ev = expect(bch, RDMA_CM_EVENT_CONNECT_REQUEST, 0);
	b = ev->id;
	assert_int_equal(ev->param.ud.private_data_len, 216);
	assert_memory_equal(ev->param.ud.private_data, pd, 216);
	s = (const struct sockaddr_ib *)rdma_get_local_addr(b);
	assert_int_equal(s->sib_family, AF_IB);
	assert_memory_equal(s->sib_addr.sib_raw, GID_B, 16);
	assert_int_equal(be64toh(s->sib_sid), sid);
	s = (const struct sockaddr_ib *)rdma_get_peer_addr(b);
	assert_int_equal(s->sib_family, AF_IB);
	assert_memory_equal(s->sib_addr.sib_raw, ZERO, 16);
	assert_int_equal(rdma_ack_cm_event(ev), 0);
	create_ud_qp(b);
	p.private_data = NULL;
	p.private_data_len = 0;
	assert_int_equal(rdma_accept(b, &p), 0);
	ev = expect(ach, RDMA_CM_EVENT_ESTABLISHED, 0);
	assert_int_equal(ev->param.ud.qp_num, b->qp->qp_num);
	assert_int_equal(rdma_ack_cm_event(ev), 0);
	destroy(b);
	destroy(a);
	assert_int_equal(rdma_destroy_id(l), 0);

	/* a wildcard AF_IB listener: the new id has no GID to acquire its port with */
	rdma_destroy_event_channel(bch);
	bch = listen_b(&l, RDMA_PS_UDP, ZERO, sid);
	a = resolve_c(ach, RDMA_PS_UDP, (struct sockaddr *)&dst);
	p.private_data = pd;
	p.private_data_len = sizeof pd;
	assert_int_equal(rdma_connect(a, &p), 0);
	expect_ack(ach, RDMA_CM_EVENT_UNREACHABLE, 2);
	assert_int_equal(cm_readable_none(bch), 1);
	assert_int_equal(rdma_destroy_id(a), 0);
	assert_int_equal(rdma_destroy_id(l), 0);
	rdma_destroy_event_channel(bch);
	rdma_destroy_event_channel(ach);
}

static void test_cma_version_refused(void **state)
{
	const uint64_t sid = PS_TCP << 16 | 7483;
	struct rdma_conn_param p = { .qp_num = 0x77, .responder_resources = 1,
				     .initiator_depth = 1 };
	struct rdma_event_channel *bch, *ach = rdma_create_event_channel();
	struct sockaddr_ib dst = sib(GID_B, sid);
	struct rdma_cm_id *l, *a;
	uint8_t pd[92];

	(void)state;
	bch = listen_b(&l, RDMA_PS_TCP, GID_B, sid);
	a = resolve_c(ach, RDMA_PS_TCP, (struct sockaddr *)&dst);
	memset(pd, 0, sizeof pd);
	pd[0] = 1;
	p.private_data = pd;
	p.private_data_len = sizeof pd;
	assert_int_equal(rdma_connect(a, &p), 0);
	expect_ack(ach, RDMA_CM_EVENT_REJECTED, 28);
	assert_int_equal(cm_readable_none(bch), 1);
	assert_int_equal(rdma_destroy_id(a), 0);
	assert_int_equal(rdma_destroy_id(l), 0);
	rdma_destroy_event_channel(bch);
	rdma_destroy_event_channel(ach);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ip_req_to_afib_listener),
		cmocka_unit_test(test_ip_sidr_to_afib_listener),
		cmocka_unit_test(test_afib_sidr_to_afib_listener),
		cmocka_unit_test(test_cma_version_refused),
	};

	(void)argc;
	setenv("RDMAEMU_QUIESCE_US", "0", 1);
	verbs_test_init(argv, "ib.fabric", NULL, "ib-c");
	if (rdmaemu_ctl_open_host_devices("ib-b")) {
		perror("rdmaemu_ctl_open_host_devices");
		return 99;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
