/* ibv_init_ah_from_wc / ibv_create_ah_from_wc on real UD receive completions of the emulated
 * data path: between hosts A and B of fixtures/rxe-ref2.fabric (B opened through
 * rdmaemu_ctl_open_host_devices) and in loopback on A's rxe0; the reply goes back through the
 * created AH. Then the conversion of synthetic 40-byte areas: RoCE v2 over IPv6, RoCE v1, the
 * IPv4 checksum rule of get_grh_header_version(), and each error with rdma-core 44's errno. */
#include "config.h"

#include <endian.h>
#include <stdbool.h>

#include "emu/verbs/tests/verbs_test.h"

#define BUF 4096

struct host {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	uint8_t *mem;
	struct ibv_mr *mr;
	union ibv_gid gid0, gid1;
};

static struct host H[3]; /* 0: A, 1: B, 2: a second QP on A (loopback) */

static void host_up(struct host *h)
{
	struct ibv_qp_init_attr a = {
		.qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr qa = { .qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = 0x2222 };

	h->pd = ibv_alloc_pd(h->ctx);
	assert_non_null(h->pd);
	h->cq = ibv_create_cq(h->ctx, 16, NULL, NULL, 0);
	assert_non_null(h->cq);
	h->mem = calloc(1, BUF);
	assert_non_null(h->mem);
	h->mr = ibv_reg_mr(h->pd, h->mem, BUF, IBV_ACCESS_LOCAL_WRITE);
	assert_non_null(h->mr);
	a.send_cq = a.recv_cq = h->cq;
	h->qp = ibv_create_qp(h->pd, &a);
	assert_non_null(h->qp);
	assert_int_equal(ibv_modify_qp(h->qp, &qa, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
							   IBV_QP_QKEY), 0);
	qa.qp_state = IBV_QPS_RTR;
	assert_int_equal(ibv_modify_qp(h->qp, &qa, IBV_QP_STATE), 0);
	qa.qp_state = IBV_QPS_RTS;
	assert_int_equal(ibv_modify_qp(h->qp, &qa, IBV_QP_STATE | IBV_QP_SQ_PSN), 0);
}

static void host_down(struct host *h)
{
	assert_int_equal(ibv_destroy_qp(h->qp), 0);
	assert_int_equal(ibv_dereg_mr(h->mr), 0);
	assert_int_equal(ibv_destroy_cq(h->cq), 0);
	assert_int_equal(ibv_dealloc_pd(h->pd), 0);
	free(h->mem);
}

/* from's buffer [0, len) of pattern `pat` to to's QP through ah; to receives at offset 0. */
static void ud_send(struct host *from, struct ibv_ah *ah, struct host *to, uint8_t pat,
		    uint32_t len, struct ibv_wc *rwc)
{
	struct ibv_sge sg = { (uintptr_t)from->mem + 2048, len, from->mr->lkey };
	struct ibv_sge rsg = { (uintptr_t)to->mem, 1024, to->mr->lkey };
	struct ibv_recv_wr rw = { .wr_id = 0x77, .sg_list = &rsg, .num_sge = 1 }, *rbad;
	struct ibv_send_wr w = { .wr_id = 0x66, .sg_list = &sg, .num_sge = 1,
				 .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc;

	memset(from->mem + 2048, pat, len);
	memset(to->mem, 0, 1024);
	w.wr.ud.ah = ah;
	w.wr.ud.remote_qpn = to->qp->qp_num;
	w.wr.ud.remote_qkey = 0x2222;
	assert_int_equal(ibv_post_recv(to->qp, &rw, &rbad), 0);
	assert_int_equal(ibv_post_send(from->qp, &w, &bad), 0);
	assert_int_equal(vt_poll_wait(from->cq, &wc), 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.wr_id, 0x66);
	assert_int_equal(vt_poll_wait(to->cq, rwc), 1);
	assert_int_equal(rwc->status, IBV_WC_SUCCESS);
	assert_int_equal(rwc->wr_id, 0x77);
	assert_int_equal(rwc->opcode, IBV_WC_RECV);
	assert_int_equal(rwc->byte_len, 40 + len);
	assert_int_equal(rwc->src_qp, from->qp->qp_num);
	assert_int_equal(rwc->wc_flags & IBV_WC_GRH, IBV_WC_GRH);
	for (uint32_t i = 0; i < len; i++)
		assert_int_equal(to->mem[40 + i], pat);
}

/* A request from `from` to `to`, the AH built from the completion, and the reply through it. */
/* The IPv4 header checksum of the area: valid from the wire, 0 after rxe's loopback. */
static void check_csum(const uint8_t *m, bool loop)
{
	uint32_t sum = 0;

	if (loop) {
		assert_int_equal(m[30], 0);
		assert_int_equal(m[31], 0);
		return;
	}
	for (int i = 20; i < 40; i += 2)
		sum += (uint32_t)m[i] << 8 | m[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	assert_int_equal(sum, 0xffff);
}

static void request_reply(struct host *from, struct host *to, bool loop)
{
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1,
				  .grh = { .sgid_index = 1, .hop_limit = 64, .traffic_class = 0x28 } };
	struct ibv_ah_attr got;
	struct ibv_ah *ah, *back;
	struct ibv_wc wc;
	static const uint8_t zero[20];

	aa.grh.dgid = to->gid1;
	ah = ibv_create_ah(from->pd, &aa);
	assert_non_null(ah);
	ud_send(from, ah, to, 0x3c, 100, &wc);
	/* rxe's area: 20 zero bytes, then the IPv4 header the requester built */
	assert_memory_equal(to->mem, zero, 20);
	assert_int_equal(to->mem[20], 0x45);
	assert_int_equal(to->mem[21], 0x28);          /* TOS = traffic class */
	assert_int_equal(to->mem[28], 64);            /* TTL = hop limit */
	assert_int_equal(to->mem[29], 17);            /* UDP */
	assert_memory_equal(to->mem + 32, from->gid1.raw + 12, 4);
	assert_memory_equal(to->mem + 36, to->gid1.raw + 12, 4);
	check_csum(to->mem, loop);

	assert_int_equal(ibv_init_ah_from_wc(to->ctx, 1, &wc, (struct ibv_grh *)to->mem, &got), 0);
	assert_int_equal(got.is_global, 1);
	assert_int_equal(got.port_num, 1);
	assert_int_equal(got.dlid, 0);                /* RoCE: slid 0 */
	assert_int_equal(got.sl, 0);
	assert_int_equal(got.src_path_bits, 0);
	assert_int_equal(got.static_rate, 0);
	assert_memory_equal(got.grh.dgid.raw, from->gid1.raw, 16);
	assert_int_equal(got.grh.sgid_index, 1);      /* the IPv4-mapped RoCE v2 GID */
	assert_int_equal(got.grh.hop_limit, 64);
	assert_int_equal(got.grh.traffic_class, 0x28);
	assert_int_equal(got.grh.flow_label, 0);      /* the zero bytes of rxe's area */

	back = ibv_create_ah_from_wc(to->pd, &wc, (struct ibv_grh *)to->mem, 1);
	assert_non_null(back);
	assert_ptr_equal(back->pd, to->pd);
	ud_send(to, back, from, 0xc3, 33, &wc);
	assert_int_equal(from->mem[21], 0x28);
	assert_int_equal(from->mem[28], 64);
	assert_memory_equal(from->mem + 32, to->gid1.raw + 12, 4);
	assert_memory_equal(from->mem + 36, from->gid1.raw + 12, 4);
	check_csum(from->mem, loop);
	assert_int_equal(ibv_destroy_ah(back), 0);
	assert_int_equal(ibv_destroy_ah(ah), 0);
}

static void test_reply_between_hosts(void **state)
{
	(void)state;
	host_up(&H[0]);
	host_up(&H[1]);
	request_reply(&H[0], &H[1], false);
	request_reply(&H[1], &H[0], false);
	host_down(&H[0]);
	host_down(&H[1]);
}

static void test_reply_loopback(void **state)
{
	(void)state;
	H[2].ctx = H[0].ctx;
	H[2].gid0 = H[0].gid0;
	H[2].gid1 = H[0].gid1;
	host_up(&H[0]);
	host_up(&H[2]);
	request_reply(&H[0], &H[2], true);
	host_down(&H[0]);
	host_down(&H[2]);
}

/* A synthetic IPv6 GRH: version 6, traffic class, flow label, next header, hop limit. */
static void grh6(uint8_t g[40], uint8_t tclass, uint32_t flow, uint8_t next, uint8_t hops,
		 const union ibv_gid *sgid, const union ibv_gid *dgid)
{
	uint32_t vtf = htobe32(6u << 28 | (uint32_t)tclass << 20 | flow);

	memset(g, 0, 40);
	memcpy(g, &vtf, 4);
	g[6] = next;
	g[7] = hops;
	memcpy(g + 8, sgid->raw, 16);
	memcpy(g + 24, dgid->raw, 16);
}

/* rxe's IPv4 area: 20 zero bytes, a 20-byte header with a correct checksum. */
static void grh4(uint8_t g[40], uint8_t tos, uint8_t ttl, const uint8_t src[4],
		 const uint8_t dst[4])
{
	uint32_t sum = 0;

	memset(g, 0, 40);
	g[20] = 0x45;
	g[21] = tos;
	g[23] = 60;
	g[26] = 0x40;
	g[28] = ttl;
	g[29] = 17;
	memcpy(g + 32, src, 4);
	memcpy(g + 36, dst, 4);
	for (int i = 20; i < 40; i += 2)
		sum += (uint32_t)g[i] << 8 | g[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	g[30] = (uint8_t)(~sum >> 8);
	g[31] = (uint8_t)~sum;
}

/* rdma-core's ipv4_calc_hdr_csum() folds the 32-bit sum once: when that fold carries, its
 * value differs from the header's (correct) checksum. */
static bool one_fold_carries(const uint8_t g[40])
{
	uint32_t sum = 0;

	for (int i = 20; i < 40; i += 2) {
		uint16_t w;

		memcpy(&w, g + i, 2);
		if (i != 30)
			sum += w;
	}
	return (sum & 0xffff) + (sum >> 16) > 0xffff;
}

static void expect_fail(uint8_t g[40], struct ibv_wc *wc, int err)
{
	struct ibv_ah_attr got;

	errno = 0;
	assert_int_equal(ibv_init_ah_from_wc(H[0].ctx, 1, wc, (struct ibv_grh *)g, &got), -1);
	assert_int_equal(errno, err);
	assert_int_equal(got.is_global, 1);
	errno = 0;
	assert_null(ibv_create_ah_from_wc(H[0].pd, wc, (struct ibv_grh *)g, 1));
	assert_int_equal(errno, err);
}

static void test_conversion(void **state)
{
	struct host *a = &H[0];
	struct ibv_wc wc = { .wc_flags = IBV_WC_GRH, .slid = 0x12, .sl = 3, .dlid_path_bits = 1 };
	union ibv_gid peer = { .raw = { 0xfe, 0x80, [8] = 0x02, [15] = 0x99 } };
	union ibv_gid mc = { .raw = { 0xff, 0x0e, [15] = 1 } };
	union ibv_gid other = { .raw = { 0x20, 0x01, 0x0d, 0xb8, [15] = 7 } };
	static const uint8_t fe80[8] = { 0xfe, 0x80 };
	uint8_t g[40], me[4], them[4] = { 192, 0, 2, 70 };
	struct ibv_ah_attr got;
	struct ibv_ah *ah;

	(void)state;
	host_up(a);
	memcpy(me, a->gid1.raw + 12, 4);
	assert_memory_equal(a->gid0.raw, fe80, 8); /* GID 0: the link-local RoCE v2 GID */

	/* RoCE v2 over IPv6 towards GID 0: everything from the GRH, the wc's IB fields kept */
	grh6(g, 0xb8, 0xabcde, 17, 9, &peer, &a->gid0);
	assert_int_equal(ibv_init_ah_from_wc(a->ctx, 1, &wc, (struct ibv_grh *)g, &got), 0);
	assert_int_equal(got.is_global, 1);
	assert_int_equal(got.dlid, 0x12);
	assert_int_equal(got.sl, 3);
	assert_int_equal(got.src_path_bits, 1);
	assert_int_equal(got.port_num, 1);
	assert_memory_equal(got.grh.dgid.raw, peer.raw, 16);
	assert_int_equal(got.grh.sgid_index, 0);
	assert_int_equal(got.grh.flow_label, 0xabcde);
	assert_int_equal(got.grh.traffic_class, 0xb8);
	assert_int_equal(got.grh.hop_limit, 9);
	/* the AH resolves the sender's MAC (ib_resolve_eth_dmac): nobody has that address, so
	 * after the 1000 ms of rdma_addr_find_l2_eth_by_grh it is ETIMEDOUT */
	{
		int (*now)(uint64_t *) = (int (*)(uint64_t *))dlsym(RTLD_DEFAULT,
								    "rdmaemu_ctl_now_ns");
		uint64_t t0, t1;

		assert_non_null(now);
		assert_int_equal(now(&t0), 0);
		errno = 0;
		assert_null(ibv_create_ah_from_wc(a->pd, &wc, (struct ibv_grh *)g, 1));
		assert_int_equal(errno, ETIMEDOUT);
		assert_int_equal(now(&t1), 0);
		assert_int_equal(t1 - t0, 1000000000ull);
	}
	/* from B's link-local GID: neighbour discovery on the wire answers */
	grh6(g, 0xb8, 0xabcde, 17, 9, &H[1].gid0, &a->gid0);
	ah = ibv_create_ah_from_wc(a->pd, &wc, (struct ibv_grh *)g, 1);
	assert_non_null(ah);
	assert_int_equal(ibv_destroy_ah(ah), 0);

	/* RoCE v2 over IPv4 */
	grh4(g, 0x10, 33, them, me);
	assert_int_equal(ibv_init_ah_from_wc(a->ctx, 1, &wc, (struct ibv_grh *)g, &got), 0);
	assert_int_equal(got.grh.sgid_index, 1);
	assert_int_equal(got.grh.dgid.raw[10], 0xff);
	assert_int_equal(got.grh.dgid.raw[11], 0xff);
	assert_memory_equal(got.grh.dgid.raw + 12, them, 4);
	assert_int_equal(got.grh.hop_limit, 33);
	assert_int_equal(got.grh.traffic_class, 0x10);
	assert_int_equal(got.grh.flow_label, 0);
	/* the same with a first nibble of 6 is still IPv4: the header checksum is right */
	g[0] = 0x60;
	assert_int_equal(ibv_init_ah_from_wc(a->ctx, 1, &wc, (struct ibv_grh *)g, &got), 0);
	assert_int_equal(got.grh.sgid_index, 1);
	assert_int_equal(got.grh.flow_label, 0);
	/* ... but with a wrong checksum it is read as IPv6: next header 0 is no RoCE */
	g[31] ^= 1;
	expect_fail(g, &wc, EPROTONOSUPPORT);
	/* a correct header whose one-fold checksum carries (found by varying the IP id): with a
	 * first nibble of 0 it is IPv4 all the same, with 6 it is read as IPv6. TOS and TTL
	 * 0xfc / 0xff make the other words' sum large enough for the fold to carry at all */
	{
		int id = 0;
		uint32_t sum;

		do {
			grh4(g, 0xfc, 0xff, them, me);
			g[24] = (uint8_t)(id >> 8);
			g[25] = (uint8_t)id;
			g[30] = g[31] = 0;
			sum = 0;
			for (int i = 20; i < 40; i += 2)
				sum += (uint32_t)g[i] << 8 | g[i + 1];
			while (sum >> 16)
				sum = (sum & 0xffff) + (sum >> 16);
			g[30] = (uint8_t)(~sum >> 8);
			g[31] = (uint8_t)~sum;
		} while (!one_fold_carries(g) && ++id < 0x10000);
		assert_true(id < 0x10000);
		assert_int_equal(ibv_init_ah_from_wc(a->ctx, 1, &wc, (struct ibv_grh *)g, &got), 0);
		assert_int_equal(got.grh.sgid_index, 1);
		assert_int_equal(got.grh.hop_limit, 0xff);
		assert_int_equal(got.grh.traffic_class, 0xfc);
		g[0] = 0x60;
		expect_fail(g, &wc, EPROTONOSUPPORT);
	}
	/* neither version 6 nor an IPv4 header at byte 20 */
	memset(g, 0, 40);
	expect_fail(g, &wc, EPROTONOSUPPORT);
	/* a multicast destination (IPv4 class D, IPv6 ff00::/8): EINVAL before any lookup */
	grh4(g, 0, 64, them, (const uint8_t[4]){ 224, 0, 0, 1 });
	expect_fail(g, &wc, EINVAL);
	grh6(g, 0, 0, 17, 64, &peer, &mc);
	expect_fail(g, &wc, EINVAL);
	/* a destination address that is not in the GID table: the scan ends where ibv_query_gid
	 * refuses the index (past gid_tbl_len), EINVAL */
	grh4(g, 0, 64, them, them);
	expect_fail(g, &wc, EINVAL);
	grh6(g, 0, 0, 17, 64, &peer, &other);
	expect_fail(g, &wc, EINVAL);
	/* RoCE v1 (next header 0x1b): rxe's GIDs are all RoCE v2, so no index has that type */
	grh6(g, 0, 0, 0x1b, 64, &peer, &a->gid0);
	expect_fail(g, &wc, EINVAL);
	/* next header TCP */
	grh6(g, 0, 0, 6, 64, &peer, &a->gid0);
	expect_fail(g, &wc, EPROTONOSUPPORT);

	/* no GRH: an IB-style attribute (is_global 0) that a RoCE port refuses at create_ah */
	wc.wc_flags = 0;
	memset(&got, 0xee, sizeof(got));
	assert_int_equal(ibv_init_ah_from_wc(a->ctx, 1, &wc, (struct ibv_grh *)g, &got), 0);
	assert_int_equal(got.is_global, 0);
	assert_int_equal(got.dlid, 0x12);
	assert_int_equal(got.grh.sgid_index, 0);
	assert_int_equal(got.grh.flow_label, (be32toh(*(uint32_t *)g) & 0xfffff));
	errno = 0;
	assert_null(ibv_create_ah_from_wc(a->pd, &wc, (struct ibv_grh *)g, 1));
	assert_int_equal(errno, EINVAL);
	host_down(a);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reply_between_hosts),
		cmocka_unit_test(test_reply_loopback),
		cmocka_unit_test(test_conversion),
	};
	int rc;

	(void)argc;
	setenv("RDMAEMU_QUIESCE_US", "0", 0);
	verbs_test_init(argv, "rxe-ref2.fabric", NULL, "A");
	{
		struct ibv_context *c[2];

		vt_open_pair("B", c);
		for (int i = 0; i < 2; i++) {
			H[i].ctx = c[i];
			if (ibv_query_gid(c[i], 1, 0, &H[i].gid0) ||
			    ibv_query_gid(c[i], 1, 1, &H[i].gid1))
				return 99;
		}
	}
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	for (int i = 0; i < 2; i++)
		ibv_close_device(H[i].ctx);
	return rc;
}
