/* An AF_IB connection to an IP service on fixtures/ib.fabric (docs/cma.md "AF_IB"): ib-c runs
 * ibacm, so rdma_getaddrinfo puts the AF_IB entry with ai_connect in front; rdma_create_ep on
 * it resolves the AF_IB addresses, takes ibacm's route (IB_PATH) and keeps ai_connect, which
 * rdma_connect puts in front of the user's private data. ib-b's IP listener reads that
 * header as the CMA header: a CONNECT_REQUEST from 192.0.2.131 port 0 (the header's port,
 * left 0 by the library). Without ai_connect an AF_IB REQ carries no header at all: the IP
 * listener does not match it and the requester gets REJECTED 28 (cm_destroy_id's REJ); an
 * AF_IB listener takes it, with all 92 bytes and addresses from the REQ's path.
 * The real-stack VM has no InfiniBand; this follows the 6.1 and rdma-core 44 sources.
 * Re-executes itself on the emulated libibverbs (verbs_test.h). */
#include "config.h"

#include <arpa/inet.h>
#include <endian.h>
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>
#include <infiniband/ib.h>

#include "emu/verbs/tests/verbs_test.h"
#include "rdmaemu/ctl.h"

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

static struct rdma_event_channel *listen_b(struct rdma_cm_id **l)
{
	struct rdma_event_channel *ch;
	struct sockaddr_in any;

	assert_int_equal(rdmaemu_ctl_cm_host("ib-b"), 0);
	ch = rdma_create_event_channel();
	assert_int_equal(rdmaemu_ctl_cm_host(NULL), 0);
	assert_non_null(ch);
	assert_int_equal(rdma_create_id(ch, l, NULL, RDMA_PS_TCP), 0);
	memset(&any, 0, sizeof(any));
	any.sin_family = AF_INET;
	any.sin_port = htons(7471);
	assert_int_equal(rdma_bind_addr(*l, (struct sockaddr *)&any), 0);
	assert_int_equal(rdma_listen(*l, 4), 0);
	return ch;
}

static void create_qp(struct rdma_cm_id *id)
{
	struct ibv_qp_init_attr qa = { .cap = { 4, 4, 1, 1, 0 }, .qp_type = IBV_QPT_RC };
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

static void test_ai_connect_to_ip_listener(void **state)
{
	struct rdma_event_channel *bch = NULL, *ach = rdma_create_event_channel();
	struct rdma_conn_param p = { .responder_resources = 1, .initiator_depth = 1,
				     .retry_count = 7, .rnr_retry_count = 7 };
	static const char hello[] = "afib";
	struct rdma_cm_id *l, *a, *b;
	struct rdma_addrinfo *res;
	struct rdma_cm_event *ev;
	const struct sockaddr_in *sin;
	uint8_t big[57];

	(void)state;
	assert_non_null(ach);
	bch = listen_b(&l);
	assert_int_equal(rdma_getaddrinfo("192.0.2.130", "7471", NULL, &res), 0);
	assert_int_equal(res->ai_family, AF_IB);
	assert_int_equal(res->ai_connect_len, 36);
	assert_int_equal(rdma_create_ep(&a, res, NULL, NULL), 0);
	rdma_freeaddrinfo(res);
	/* the ep is an AF_IB id on ib-c's port, its route ibacm's */
	assert_int_equal(rdma_get_local_addr(a)->sa_family, AF_IB);
	assert_int_equal(be64toh(((struct sockaddr_ib *)rdma_get_peer_addr(a))->sib_sid),
			 0x01060000ull | 7471);
	assert_int_equal(a->route.num_paths, 1);
	assert_int_equal(ntohs(a->route.path_rec[0].slid), 4);
	assert_int_equal(ntohs(a->route.path_rec[0].dlid), 3);
	assert_int_equal(rdma_migrate_id(a, ach), 0);
	create_qp(a);
	/* 36 bytes of header + 57 > 92: EINVAL, and the header is still there afterwards */
	memset(big, 0x5a, sizeof(big));
	p.private_data = big;
	p.private_data_len = sizeof(big);
	errno = 0;
	assert_int_equal(rdma_connect(a, &p), -1);
	assert_int_equal(errno, EINVAL);
	p.private_data = hello;
	p.private_data_len = sizeof(hello);
	assert_int_equal(rdma_connect(a, &p), 0);

	/* ib-b: an IP connection request from 192.0.2.131, port 0, with the user's bytes */
	ev = expect(bch, RDMA_CM_EVENT_CONNECT_REQUEST, 0);
	b = ev->id;
	assert_int_equal(ev->param.conn.private_data_len, 56);
	assert_memory_equal(ev->param.conn.private_data, hello, sizeof(hello));
	sin = (const struct sockaddr_in *)rdma_get_peer_addr(b);
	assert_int_equal(sin->sin_family, AF_INET);
	assert_int_equal(ntohl(sin->sin_addr.s_addr), 0xc0000283);
	assert_int_equal(sin->sin_port, 0);
	sin = (const struct sockaddr_in *)rdma_get_local_addr(b);
	assert_int_equal(ntohl(sin->sin_addr.s_addr), 0xc0000282);
	assert_int_equal(ntohs(sin->sin_port), 7471);
	assert_int_equal(rdma_ack_cm_event(ev), 0);
	create_qp(b);
	assert_int_equal(rdma_accept(b, &p), 0);
	assert_int_equal(rdma_ack_cm_event(expect(ach, RDMA_CM_EVENT_ESTABLISHED, 0)), 0);
	assert_int_equal(rdma_ack_cm_event(expect(bch, RDMA_CM_EVENT_ESTABLISHED, 0)), 0);
	assert_int_equal(a->qp->state, IBV_QPS_RTS);
	assert_int_equal(rdma_disconnect(a), 0);
	assert_int_equal(rdma_ack_cm_event(expect(bch, RDMA_CM_EVENT_DISCONNECTED, 0)), 0);
	assert_int_equal(rdma_disconnect(b), 0); /* the DREP */
	assert_int_equal(rdma_ack_cm_event(expect(ach, RDMA_CM_EVENT_DISCONNECTED, 0)), 0);
	destroy(b);
	destroy(a);
	assert_int_equal(rdma_destroy_id(l), 0);
	rdma_destroy_event_channel(bch);
	rdma_destroy_event_channel(ach);
}

static void test_no_header_rejected(void **state)
{
	struct rdma_event_channel *bch, *ach = rdma_create_event_channel();
	struct rdma_conn_param p = { .responder_resources = 1, .initiator_depth = 1,
				     .retry_count = 7, .rnr_retry_count = 7 };
	struct rdma_addrinfo *res;
	struct rdma_cm_id *l, *a;
	struct rdma_cm_event *ev;
	uint8_t pd[93];

	(void)state;
	bch = listen_b(&l);
	assert_int_equal(rdma_getaddrinfo("192.0.2.130", "7471", NULL, &res), 0);
	assert_int_equal(rdma_create_id(ach, &a, NULL, RDMA_PS_TCP), 0);
	assert_int_equal(rdma_resolve_addr(a, res->ai_src_addr, res->ai_dst_addr, 2000), 0);
	assert_int_equal(rdma_ack_cm_event(expect(ach, RDMA_CM_EVENT_ADDR_RESOLVED, 0)), 0);
	assert_int_equal(rdma_resolve_route(a, 2000), 0);
	assert_int_equal(rdma_ack_cm_event(expect(ach, RDMA_CM_EVENT_ROUTE_RESOLVED, 0)), 0);
	rdma_freeaddrinfo(res);
	create_qp(a);
	/* no CMA header for AF_IB: all 92 bytes are the user's, 93 are too many */
	memset(pd, 0, sizeof(pd));
	p.private_data = pd;
	p.private_data_len = 93;
	errno = 0;
	assert_int_equal(rdma_connect(a, &p), -1);
	assert_int_equal(errno, EINVAL);
	p.private_data_len = 92;
	assert_int_equal(rdma_connect(a, &p), 0);
	/* zeros are no CMA header (IP version 0): no listener matches, REJ 28 */
	ev = expect(ach, RDMA_CM_EVENT_REJECTED, 28);
	assert_int_equal(rdma_ack_cm_event(ev), 0);
	destroy(a);
	assert_int_equal(rdma_destroy_id(l), 0);
	rdma_destroy_event_channel(bch);
	rdma_destroy_event_channel(ach);
}

/* An AF_IB connection to an AF_IB listener: no CMA header, all 92 bytes are the user's, and
 * the new id's addresses come from the REQ's path (cma_save_ib_info). */
static void test_af_ib_listener(void **state)
{
	static const uint8_t GID_B[16] = { 0xfe, 0x80, [8] = 0x00, 0x02, 0xc9, 0x03, 0x00, 0x00,
					   0x0b, 0x01 };
	static const uint8_t GID_C[16] = { 0xfe, 0x80, [8] = 0x00, 0x02, 0xc9, 0x03, 0x00, 0x00,
					   0x0c, 0x01 };
	struct rdma_event_channel *bch, *ach = rdma_create_event_channel();
	struct rdma_conn_param p = { .responder_resources = 1, .initiator_depth = 1,
				     .retry_count = 7, .rnr_retry_count = 7 };
	const uint64_t sid = 0x01060000ull | 7472;
	const struct sockaddr_ib *sib;
	struct sockaddr_ib addr;
	struct rdma_cm_id *l, *a, *b;
	struct rdma_cm_event *ev;
	uint8_t pd[92];

	(void)state;
	assert_int_equal(rdmaemu_ctl_cm_host("ib-b"), 0);
	bch = rdma_create_event_channel();
	assert_int_equal(rdmaemu_ctl_cm_host(NULL), 0);
	assert_int_equal(rdma_create_id(bch, &l, NULL, RDMA_PS_TCP), 0);
	memset(&addr, 0, sizeof(addr));
	addr.sib_family = AF_IB;
	addr.sib_pkey = htons(0xffff);
	memcpy(addr.sib_addr.sib_raw, GID_B, 16);
	addr.sib_sid = htobe64(sid);
	addr.sib_sid_mask = htobe64(~0ull);
	assert_int_equal(rdma_bind_addr(l, (struct sockaddr *)&addr), 0);
	assert_int_equal(rdma_listen(l, 4), 0);

	assert_int_equal(rdma_create_id(ach, &a, NULL, RDMA_PS_TCP), 0);
	assert_int_equal(rdma_resolve_addr(a, NULL, (struct sockaddr *)&addr, 2000), 0);
	assert_int_equal(rdma_ack_cm_event(expect(ach, RDMA_CM_EVENT_ADDR_RESOLVED, 0)), 0);
	assert_int_equal(rdma_resolve_route(a, 2000), 0);
	assert_int_equal(rdma_ack_cm_event(expect(ach, RDMA_CM_EVENT_ROUTE_RESOLVED, 0)), 0);
	create_qp(a);
	for (size_t i = 0; i < sizeof(pd); i++)
		pd[i] = (uint8_t)(i + 1);
	p.private_data = pd;
	p.private_data_len = sizeof(pd);
	assert_int_equal(rdma_connect(a, &p), 0);

	ev = expect(bch, RDMA_CM_EVENT_CONNECT_REQUEST, 0);
	b = ev->id;
	assert_int_equal(ev->param.conn.private_data_len, 92);
	assert_memory_equal(ev->param.conn.private_data, pd, 92);
	sib = (const struct sockaddr_ib *)rdma_get_local_addr(b);
	assert_int_equal(sib->sib_family, AF_IB);
	assert_memory_equal(sib->sib_addr.sib_raw, GID_B, 16);
	assert_int_equal(be64toh(sib->sib_sid), sid);
	assert_int_equal(ntohs(sib->sib_pkey), 0xffff);
	sib = (const struct sockaddr_ib *)rdma_get_peer_addr(b);
	assert_int_equal(sib->sib_family, AF_IB);
	assert_memory_equal(sib->sib_addr.sib_raw, GID_C, 16);
	assert_int_equal(rdma_ack_cm_event(ev), 0);
	create_qp(b);
	p.private_data = NULL;
	p.private_data_len = 0;
	assert_int_equal(rdma_accept(b, &p), 0);
	assert_int_equal(rdma_ack_cm_event(expect(ach, RDMA_CM_EVENT_ESTABLISHED, 0)), 0);
	assert_int_equal(rdma_ack_cm_event(expect(bch, RDMA_CM_EVENT_ESTABLISHED, 0)), 0);
	assert_int_equal(rdma_disconnect(a), 0);
	assert_int_equal(rdma_ack_cm_event(expect(bch, RDMA_CM_EVENT_DISCONNECTED, 0)), 0);
	assert_int_equal(rdma_disconnect(b), 0);
	assert_int_equal(rdma_ack_cm_event(expect(ach, RDMA_CM_EVENT_DISCONNECTED, 0)), 0);
	destroy(b);
	destroy(a);
	assert_int_equal(rdma_destroy_id(l), 0);
	rdma_destroy_event_channel(bch);
	rdma_destroy_event_channel(ach);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ai_connect_to_ip_listener),
		cmocka_unit_test(test_no_header_rejected),
		cmocka_unit_test(test_af_ib_listener),
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
