/* RoCE address handles and connected QPs resolve the destination MAC through the neighbour
 * layer, as Linux 6.1's ib_resolve_eth_dmac does (emu/verbs/ah.c): hosts A and B of
 * fixtures/rxe-ref2.fabric in one process (A attached, B's device opened through
 * rdmaemu_ctl_open_host_devices), the neighbour counters and the virtual clock read through
 * the library's exported emu_ / rdmaemu_ctl_ functions.
 *  - create_ah towards B: one ARP request from A, one reply from B, the AV holds B's MAC;
 *    a second create_ah is served from the neighbour cache (no frame);
 *  - towards B's link-local GID: one neighbour solicitation, one advertisement;
 *  - towards an address nobody has: NULL with errno ETIMEDOUT after exactly 1000 ms of
 *    virtual time (rdma_addr_find_l2_eth_by_grh's timeout);
 *  - towards A's own GID: its own MAC, nothing on the wire;
 *  - RC modify_qp to RTR: the same resolution (ETIMEDOUT at 1000 ms, the QP stays in INIT),
 *    and the route's hop limit (64) replaces the one given (ib_resolve_unicast_gid_dmac). */
#include "config.h"

#include <stdbool.h>

#include "emu/net/neigh.h"
#include "emu/verbs/tests/verbs_test.h"

#define SEC 1000000000ull

static struct ibv_context *ctx[2]; /* 0: A, 1: B */
static union ibv_gid gid0[2], gid1[2];
static const uint8_t mac_a[6] = { 0x02, 0x00, 0x00, 0x00, 0x02, 0x01 };
static const uint8_t mac_b[6] = { 0x02, 0x00, 0x00, 0x00, 0x02, 0x02 };

static void *sym(const char *name)
{
	void *p = dlsym(RTLD_DEFAULT, name);

	assert_non_null(p);
	return p;
}

static uint64_t now_ns(void)
{
	int (*now)(uint64_t *) = (int (*)(uint64_t *))sym("rdmaemu_ctl_now_ns");
	uint64_t t = 0;

	assert_int_equal(now(&t), 0);
	return t;
}

/* Host h's neighbour counters (emu_neigh_stats under the engine lock). */
static struct emu_neigh_stats stats(size_t h)
{
	void *(*get)(void) = (void *(*)(void))sym("emu_engine_get");
	void (*lock)(void *) = (void (*)(void *))sym("emu_engine_lock");
	void (*unlock)(void *) = (void (*)(void *))sym("emu_engine_unlock");
	int (*st)(void *, size_t, struct emu_neigh_stats *) =
		(int (*)(void *, size_t, struct emu_neigh_stats *))sym("emu_neigh_stats");
	struct emu_neigh_stats s;
	void *e = get();

	assert_non_null(e);
	lock(e);
	assert_int_equal(st(e, h, &s), 0);
	unlock(e);
	return s;
}

static int ah_dmac(struct ibv_ah *ah, uint8_t mac[6])
{
	int (*f)(struct ibv_ah *, uint8_t *) =
		(int (*)(struct ibv_ah *, uint8_t *))sym("rdmaemu_verbs_ah_dmac");

	return f(ah, mac);
}

/* `ip neigh flush` on both hosts: every test starts with empty tables. */
static int flush_both(void **state)
{
	int (*flush)(const char *, const char *) =
		(int (*)(const char *, const char *))sym("rdmaemu_ctl_neigh_flush");

	(void)state;
	assert_true(flush("A", NULL) >= 0); /* the number of entries dropped */
	assert_true(flush("B", NULL) >= 0);
	return 0;
}

static union ibv_gid v4gid(uint8_t a, uint8_t b, uint8_t c, uint8_t d)
{
	union ibv_gid g = { .raw = { [10] = 0xff, [11] = 0xff, [12] = a, [13] = b, [14] = c,
				     [15] = d } };

	return g;
}

static void test_create_ah_arp_once(void **state)
{
	struct ibv_pd *pd = ibv_alloc_pd(ctx[0]);
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1,
				  .grh = { .dgid = gid1[1], .sgid_index = 1, .hop_limit = 1 } };
	struct emu_neigh_stats a0 = stats(0), b0 = stats(1), a1, b1;
	struct ibv_ah *ah, *ah2;
	uint8_t mac[6];
	uint64_t t0 = now_ns();

	(void)state;
	assert_non_null(pd);
	ah = ibv_create_ah(pd, &aa);
	assert_non_null(ah);
	/* rxe-ref2's wire has no delay: the exchange costs no virtual time */
	assert_int_equal(now_ns() - t0, 0);
	assert_int_equal(ah_dmac(ah, mac), 1);
	assert_memory_equal(mac, mac_b, 6);
	a1 = stats(0);
	b1 = stats(1);
	assert_int_equal(a1.arp_req_sent - a0.arp_req_sent, 1);
	assert_int_equal(b1.arp_rcvd - b0.arp_rcvd, 1);
	assert_int_equal(b1.arp_rep_sent - b0.arp_rep_sent, 1);
	assert_int_equal(a1.arp_rcvd - a0.arp_rcvd, 1);
	assert_int_equal(a1.arp_rep_sent - a0.arp_rep_sent, 0);
	/* the second AH: the neighbour entry is valid, nothing is sent */
	ah2 = ibv_create_ah(pd, &aa);
	assert_non_null(ah2);
	memset(mac, 0, 6);
	assert_int_equal(ah_dmac(ah2, mac), 1);
	assert_memory_equal(mac, mac_b, 6);
	a0 = stats(0);
	b0 = stats(1);
	assert_int_equal(a0.arp_req_sent, a1.arp_req_sent);
	assert_int_equal(b0.arp_rcvd, b1.arp_rcvd);
	assert_int_equal(b0.arp_rep_sent, b1.arp_rep_sent);
	assert_int_equal(ibv_destroy_ah(ah2), 0);
	assert_int_equal(ibv_destroy_ah(ah), 0);
	assert_int_equal(ibv_dealloc_pd(pd), 0);
}

static void test_create_ah_nd(void **state)
{
	struct ibv_pd *pd = ibv_alloc_pd(ctx[0]);
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1,
				  .grh = { .dgid = gid0[1], .sgid_index = 0, .hop_limit = 64 } };
	struct emu_neigh_stats a0 = stats(0), b0 = stats(1), a1, b1;
	struct ibv_ah *ah;
	uint8_t mac[6];

	(void)state;
	assert_non_null(pd);
	ah = ibv_create_ah(pd, &aa);
	assert_non_null(ah);
	assert_int_equal(ah_dmac(ah, mac), 1);
	assert_memory_equal(mac, mac_b, 6);
	a1 = stats(0);
	b1 = stats(1);
	assert_int_equal(a1.ns_sent - a0.ns_sent, 1);
	assert_int_equal(b1.na_sent - b0.na_sent, 1);
	assert_int_equal(a1.arp_req_sent - a0.arp_req_sent, 0);
	assert_int_equal(ibv_destroy_ah(ah), 0);
	assert_int_equal(ibv_dealloc_pd(pd), 0);
}

static void test_create_ah_silent(void **state)
{
	struct ibv_pd *pd = ibv_alloc_pd(ctx[0]);
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1,
				  .grh = { .dgid = v4gid(192, 0, 2, 70), .sgid_index = 1,
					   .hop_limit = 64 } };
	struct emu_neigh_stats a0 = stats(0), a1;
	uint64_t t0 = now_ns();

	(void)state;
	assert_non_null(pd);
	errno = 0;
	assert_null(ibv_create_ah(pd, &aa));
	assert_int_equal(errno, ETIMEDOUT);
	assert_int_equal(now_ns() - t0, SEC);
	a1 = stats(0);
	/* the broadcast request at 0 and the second probe at 1 s, retrans_time apart (the
	 * request times out at that same instant) */
	assert_int_equal(a1.arp_req_sent - a0.arp_req_sent, 2);
	assert_int_equal(a1.arp_rcvd - a0.arp_rcvd, 0);
	assert_int_equal(ibv_dealloc_pd(pd), 0);
}

static void test_create_ah_loopback(void **state)
{
	struct ibv_pd *pd = ibv_alloc_pd(ctx[0]);
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1,
				  .grh = { .dgid = gid1[0], .sgid_index = 1, .hop_limit = 64 } };
	struct emu_neigh_stats a0 = stats(0), a1;
	struct ibv_ah *ah;
	uint8_t mac[6];
	uint64_t t0 = now_ns();

	(void)state;
	assert_non_null(pd);
	ah = ibv_create_ah(pd, &aa);
	assert_non_null(ah);
	assert_int_equal(now_ns() - t0, 0);
	assert_int_equal(ah_dmac(ah, mac), 1);
	assert_memory_equal(mac, mac_a, 6); /* addr_resolve_neigh(): IFF_LOOPBACK */
	a1 = stats(0);
	assert_int_equal(a1.arp_req_sent, a0.arp_req_sent);
	assert_int_equal(ibv_destroy_ah(ah), 0);
	assert_int_equal(ibv_dealloc_pd(pd), 0);
}

static void test_modify_qp_rtr(void **state)
{
	struct ibv_pd *pd = ibv_alloc_pd(ctx[0]);
	struct ibv_cq *cq = ibv_create_cq(ctx[0], 4, NULL, NULL, 0);
	struct ibv_qp_init_attr qi = { .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = 2, .max_recv_wr = 2,
						.max_send_sge = 1, .max_recv_sge = 1 } };
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1 };
	struct emu_neigh_stats a0, a1;
	struct ibv_qp *qp;
	uint64_t t0;

	(void)state;
	assert_non_null(pd);
	assert_non_null(cq);
	qi.send_cq = qi.recv_cq = cq;
	qp = ibv_create_qp(pd, &qi);
	assert_non_null(qp);
	assert_int_equal(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
						       IBV_QP_ACCESS_FLAGS), 0);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = 0x11;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.sgid_index = 1;
	a.ah_attr.grh.hop_limit = 1;
	a.ah_attr.grh.dgid = v4gid(192, 0, 2, 71);
	a0 = stats(0);
	t0 = now_ns();
	assert_int_equal(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
						       IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
						       IBV_QP_MAX_DEST_RD_ATOMIC |
						       IBV_QP_MIN_RNR_TIMER),
			 ETIMEDOUT);
	assert_int_equal(errno, ETIMEDOUT);
	assert_int_equal(now_ns() - t0, SEC);
	a1 = stats(0);
	assert_int_equal(a1.arp_req_sent - a0.arp_req_sent, 2);
	{
		struct ibv_qp_attr q;
		struct ibv_qp_init_attr i;

		assert_int_equal(ibv_query_qp(qp, &q, IBV_QP_STATE, &i), 0);
		assert_int_equal(q.qp_state, IBV_QPS_INIT);
	}
	/* towards B: resolved by ARP, and the hop limit is the route's */
	a.ah_attr.grh.dgid = gid1[1];
	t0 = now_ns();
	assert_int_equal(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
						       IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
						       IBV_QP_MAX_DEST_RD_ATOMIC |
						       IBV_QP_MIN_RNR_TIMER),
			 0);
	assert_int_equal(now_ns() - t0, 0);
	a0 = stats(0);
	assert_int_equal(a0.arp_req_sent - a1.arp_req_sent, 1);
	{
		struct ibv_qp_attr q;
		struct ibv_qp_init_attr i;

		assert_int_equal(ibv_query_qp(qp, &q, IBV_QP_STATE | IBV_QP_AV, &i), 0);
		assert_int_equal(q.qp_state, IBV_QPS_RTR);
		assert_int_equal(q.ah_attr.grh.hop_limit, 64);
	}
	assert_int_equal(ibv_destroy_qp(qp), 0);
	assert_int_equal(ibv_destroy_cq(cq), 0);
	assert_int_equal(ibv_dealloc_pd(pd), 0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_create_ah_arp_once, flush_both),
		cmocka_unit_test_setup(test_create_ah_nd, flush_both),
		cmocka_unit_test_setup(test_create_ah_silent, flush_both),
		cmocka_unit_test_setup(test_create_ah_loopback, flush_both),
		cmocka_unit_test_setup(test_modify_qp_rtr, flush_both),
	};
	int rc;

	(void)argc;
	setenv("RDMAEMU_QUIESCE_US", "0", 0);
	verbs_test_init(argv, "rxe-ref2.fabric", NULL, "A");
	vt_open_pair("B", ctx);
	for (int i = 0; i < 2; i++)
		if (ibv_query_gid(ctx[i], 1, 0, &gid0[i]) || ibv_query_gid(ctx[i], 1, 1, &gid1[i]))
			return 99;
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	for (int i = 0; i < 2; i++)
		ibv_close_device(ctx[i]);
	return rc;
}
