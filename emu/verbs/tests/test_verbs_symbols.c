/* The exports that complete rdma-core 44's libibverbs.so.1 symbol list, each with the answer
 * rdma-core 44 + the rxe provider give: the dummy ops for what rxe lacks (import, dmabuf,
 * ECE), ibv_import_device's checks, ibv_qp_to_qp_ex (create_qp_ex QPs only), the marshall.c
 * conversions, ibv_get_sysfs_path, ibv_register_driver@IBVERBS_1.1 and
 * ibv_resolve_eth_l2_from_gid on rxe-ref2's hosts A (attached) and B. */
#include "config.h"

#include <fcntl.h>
#include <infiniband/sa.h>
#include <rdma/ib_user_sa.h>
#include <rdma/ib_user_verbs.h>

#include "emu/verbs/tests/verbs_test.h"

/* not in the installed headers (marshall.h, driver.h) */
void ibv_copy_ah_attr_from_kern(struct ibv_ah_attr *dst, struct ib_uverbs_ah_attr *src);
void ibv_copy_qp_attr_from_kern(struct ibv_qp_attr *dst, struct ib_uverbs_qp_attr *src);
void ibv_copy_path_rec_from_kern(struct ibv_sa_path_rec *dst, struct ib_user_path_rec *src);
void ibv_copy_path_rec_to_kern(struct ib_user_path_rec *dst, struct ibv_sa_path_rec *src);
const char *ibv_get_sysfs_path(void);

static struct ibv_context *ctx;
static struct ibv_pd *pd;

static const char FABRIC[] = "seed 1\n"
			     "resolver files\n"
			     "host A\n"
			     "  device rxe0 link=eth\n"
			     "  netdev eth0 mac=02:00:00:00:02:01 mtu=1500 rdma=rxe0/1\n"
			     "    addr 192.0.2.65/28\n"
			     "  device rxe1 link=eth\n"
			     "  netdev eth1 mac=02:00:00:00:02:03 mtu=1500 rdma=rxe1/1\n"
			     "    addr 192.0.2.81/28\n"
			     "host B\n"
			     "  device rxe0 link=eth\n"
			     "  netdev eth0 mac=02:00:00:00:02:02 mtu=1500 rdma=rxe0/1\n"
			     "    addr 192.0.2.66/28\n"
			     "link A/rxe0/1 B/rxe0/1\n"
			     "link A/rxe1/1 none\n";

/* First: the path is computed once, from SYSFS_PATH as set at the first call. */
static void test_sysfs_path(void **state)
{
	(void)state;
	assert_string_equal(ibv_get_sysfs_path(), "/tmp/emu-sysfs");
	setenv("SYSFS_PATH", "/elsewhere", 1);
	assert_string_equal(ibv_get_sysfs_path(), "/tmp/emu-sysfs");
}

static void test_dummy_ops(void **state)
{
	struct ibv_ece ece = { 0 };
	uint8_t buf[64];
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	struct ibv_cq *cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	struct ibv_qp_init_attr qa = { .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = 1, .max_recv_wr = 1,
						.max_send_sge = 1, .max_recv_sge = 1 } };
	struct ibv_qp *qp;

	(void)state;
	assert_non_null(mr);
	assert_non_null(cq);
	qp = ibv_create_qp(pd, &qa);
	assert_non_null(qp);
	errno = 0;
	assert_null(ibv_import_pd(ctx, pd->handle));
	assert_int_equal(errno, EOPNOTSUPP);
	errno = 0;
	assert_null(ibv_import_mr(pd, mr->handle));
	assert_int_equal(errno, EOPNOTSUPP);
	errno = 0;
	assert_null(ibv_import_dm(ctx, 0));
	assert_int_equal(errno, EOPNOTSUPP);
	errno = 0;
	ibv_unimport_pd(pd); /* nothing happens: the PD stays usable */
	ibv_unimport_mr(mr);
	assert_int_equal(errno, 0);
	errno = 0;
	assert_null(ibv_reg_dmabuf_mr(pd, 0, 4096, 0, 0, IBV_ACCESS_LOCAL_WRITE));
	assert_int_equal(errno, EOPNOTSUPP);
	/* ECE: vendor_id 0 is refused by verbs.c with errno; the dummy op only returns it */
	errno = 0;
	assert_int_equal(ibv_set_ece(qp, &ece), EOPNOTSUPP);
	assert_int_equal(errno, EOPNOTSUPP);
	errno = 0;
	ece.vendor_id = 0x15b3;
	assert_int_equal(ibv_set_ece(qp, &ece), EOPNOTSUPP);
	assert_int_equal(errno, 0);
	assert_int_equal(ibv_query_ece(qp, &ece), EOPNOTSUPP);
	assert_int_equal(errno, 0);
	assert_int_equal(ibv_destroy_qp(qp), 0);
	assert_int_equal(ibv_dereg_mr(mr), 0);
	assert_int_equal(ibv_destroy_cq(cq), 0);
}

/* Extended ops the emulated context leaves NULL: <infiniband/verbs.h>'s inline wrappers
 * answer as rdma-core's dummy ops do for rxe, which lacks them (XRC, TDs, device memory,
 * CQ moderation). Memory windows are the exception: rxe has them, the emulator not yet. */
static void test_missing_ext_ops(void **state)
{
	struct ibv_xrcd_init_attr xa = { .comp_mask = IBV_XRCD_INIT_ATTR_FD |
						      IBV_XRCD_INIT_ATTR_OFLAGS,
					 .fd = -1, .oflags = O_CREAT };
	struct ibv_td_init_attr ta = { 0 };
	struct ibv_alloc_dm_attr da = { .length = 64 };
	struct ibv_modify_cq_attr ma = { .attr_mask = IBV_CQ_ATTR_MODERATE };
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 4, .max_sge = 1 } };
	struct ibv_cq *cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	struct ibv_srq *srq = ibv_create_srq(pd, &sa);
	uint32_t num = 77;

	(void)state;
	assert_non_null(cq);
	assert_non_null(srq);
	errno = 0;
	assert_null(ibv_open_xrcd(ctx, &xa));
	assert_int_equal(errno, EOPNOTSUPP);
	assert_int_equal(ibv_get_srq_num(srq, &num), EOPNOTSUPP);
	assert_int_equal(num, 77);
	errno = 0;
	assert_null(ibv_alloc_td(ctx, &ta));
	assert_int_equal(errno, EOPNOTSUPP);
	errno = 0;
	assert_null(ibv_alloc_dm(ctx, &da));
	assert_int_equal(errno, EOPNOTSUPP);
	assert_int_equal(ibv_modify_cq(cq, &ma), EOPNOTSUPP);
	/* memory windows are rxe's own ops, not dummies (emu/verbs/mw.c) */
	{
		struct ibv_mw *mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);

		assert_non_null(mw);
		assert_int_equal(mw->type, IBV_MW_TYPE_2);
		assert_int_equal(ibv_dealloc_mw(mw), 0);
	}
	assert_int_equal(ibv_destroy_srq(srq), 0);
	assert_int_equal(ibv_destroy_cq(cq), 0);
}

static void test_qp_to_qp_ex(void **state)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	struct ibv_qp_init_attr qa = { .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_UD,
				       .cap = { .max_send_wr = 1, .max_recv_wr = 1,
						.max_send_sge = 1, .max_recv_sge = 1 } };
	struct ibv_qp_init_attr_ex qx = { .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_UD,
					  .comp_mask = IBV_QP_INIT_ATTR_PD, .pd = pd,
					  .cap = qa.cap };
	struct ibv_qp *legacy, *pd_only, *ex;

	(void)state;
	legacy = ibv_create_qp(pd, &qa);
	/* verbs.h's ibv_create_qp_ex() with comp_mask PD alone calls ibv_create_qp() */
	pd_only = ibv_create_qp_ex(ctx, &qx);
	qx.comp_mask |= IBV_QP_INIT_ATTR_CREATE_FLAGS;
	ex = ibv_create_qp_ex(ctx, &qx);
	assert_non_null(legacy);
	assert_non_null(pd_only);
	assert_non_null(ex);
	assert_null(ibv_qp_to_qp_ex(legacy));        /* rxe_create_qp: no VERBS_QP_EX */
	assert_null(ibv_qp_to_qp_ex(pd_only));
	assert_ptr_equal(ibv_qp_to_qp_ex(ex), ex);    /* the ibv_qp_ex shares the ibv_qp */
	assert_ptr_equal(&ibv_qp_to_qp_ex(ex)->qp_base, ex);
	assert_int_equal(ibv_destroy_qp(legacy), 0);
	assert_int_equal(ibv_destroy_qp(pd_only), 0);
	assert_int_equal(ibv_destroy_qp(ex), 0);
	assert_int_equal(ibv_destroy_cq(cq), 0);
}

static void test_import_device(void **state)
{
	int p[2], zero = open("/dev/zero", O_RDONLY), null = open("/dev/null", O_RDONLY);

	(void)state;
	assert_true(zero >= 0 && null >= 0);
	assert_int_equal(pipe(p), 0);
	errno = 0;
	assert_null(ibv_import_device(-1)); /* fstat fails */
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_null(ibv_import_device(p[0])); /* not a character device */
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_null(ibv_import_device(zero)); /* no device has that cdev */
	assert_int_equal(errno, ENODEV);
	/* the device's own command fd: rxe has no import_context */
	errno = 0;
	assert_null(ibv_import_device(ctx->cmd_fd));
	assert_int_equal(errno, EOPNOTSUPP);
	errno = 0;
	assert_null(ibv_import_device(null));
	assert_int_equal(errno, EOPNOTSUPP);
	close(p[0]);
	close(p[1]);
	close(zero);
	close(null);
}

static void test_marshall(void **state)
{
	struct ib_uverbs_qp_attr k;
	struct ibv_qp_attr a;
	struct ib_user_path_rec kp, kp2;
	struct ibv_sa_path_rec sp;

	(void)state;
	memset(&k, 0, sizeof(k));
	memset(&a, 0x77, sizeof(a));
	k.qp_attr_mask = 0xffffffff;
	k.qp_state = 3;
	k.cur_qp_state = 2;
	k.path_mtu = 4;
	k.path_mig_state = 1;
	k.qkey = 0x11111111;
	k.rq_psn = 0x222222;
	k.sq_psn = 0x333333;
	k.dest_qp_num = 0x4444;
	k.qp_access_flags = 0xe;
	k.ah_attr.grh.dgid[15] = 0x55;
	k.ah_attr.grh.flow_label = 0xabcde;
	k.ah_attr.grh.sgid_index = 6;
	k.ah_attr.grh.hop_limit = 7;
	k.ah_attr.grh.traffic_class = 8;
	k.ah_attr.dlid = 0x99;
	k.ah_attr.sl = 10;
	k.ah_attr.src_path_bits = 11;
	k.ah_attr.static_rate = 12;
	k.ah_attr.is_global = 1;
	k.ah_attr.port_num = 2;
	k.alt_ah_attr.dlid = 0x1234;
	k.max_send_wr = 13;
	k.max_recv_wr = 14;
	k.max_send_sge = 15;
	k.max_recv_sge = 16;
	k.max_inline_data = 17;
	k.pkey_index = 18;
	k.alt_pkey_index = 19;
	k.en_sqd_async_notify = 1;
	k.sq_draining = 1;
	k.max_rd_atomic = 20;
	k.max_dest_rd_atomic = 21;
	k.min_rnr_timer = 22;
	k.port_num = 1;
	k.timeout = 23;
	k.retry_cnt = 5;
	k.rnr_retry = 6;
	k.alt_port_num = 2;
	k.alt_timeout = 24;
	ibv_copy_qp_attr_from_kern(&a, &k);
	assert_int_equal(a.qp_state, 0x77777777); /* not in marshall.c's list */
	assert_int_equal(a.cur_qp_state, 2);
	assert_int_equal(a.path_mtu, 4);
	assert_int_equal(a.path_mig_state, 1);
	assert_int_equal(a.qkey, 0x11111111);
	assert_int_equal(a.rq_psn, 0x222222);
	assert_int_equal(a.sq_psn, 0x333333);
	assert_int_equal(a.dest_qp_num, 0x4444);
	assert_int_equal(a.qp_access_flags, 0xe);
	assert_int_equal(a.cap.max_send_wr, 13);
	assert_int_equal(a.cap.max_recv_wr, 14);
	assert_int_equal(a.cap.max_send_sge, 15);
	assert_int_equal(a.cap.max_recv_sge, 16);
	assert_int_equal(a.cap.max_inline_data, 17);
	assert_int_equal(a.ah_attr.grh.dgid.raw[15], 0x55);
	assert_int_equal(a.ah_attr.grh.dgid.raw[0], 0);
	assert_int_equal(a.ah_attr.grh.flow_label, 0xabcde);
	assert_int_equal(a.ah_attr.grh.sgid_index, 6);
	assert_int_equal(a.ah_attr.grh.hop_limit, 7);
	assert_int_equal(a.ah_attr.grh.traffic_class, 8);
	assert_int_equal(a.ah_attr.dlid, 0x99);
	assert_int_equal(a.ah_attr.sl, 10);
	assert_int_equal(a.ah_attr.src_path_bits, 11);
	assert_int_equal(a.ah_attr.static_rate, 12);
	assert_int_equal(a.ah_attr.is_global, 1);
	assert_int_equal(a.ah_attr.port_num, 2);
	assert_int_equal(a.alt_ah_attr.dlid, 0x1234);
	assert_int_equal(a.alt_ah_attr.is_global, 0);
	assert_int_equal(a.pkey_index, 18);
	assert_int_equal(a.alt_pkey_index, 19);
	assert_int_equal(a.en_sqd_async_notify, 1);
	assert_int_equal(a.sq_draining, 1);
	assert_int_equal(a.max_rd_atomic, 20);
	assert_int_equal(a.max_dest_rd_atomic, 21);
	assert_int_equal(a.min_rnr_timer, 22);
	assert_int_equal(a.port_num, 1);
	assert_int_equal(a.timeout, 23);
	assert_int_equal(a.retry_cnt, 5);
	assert_int_equal(a.rnr_retry, 6);
	assert_int_equal(a.alt_port_num, 2);
	assert_int_equal(a.alt_timeout, 24);

	memset(&kp, 0, sizeof(kp));
	kp.dgid[0] = 0xfe;
	kp.sgid[15] = 0x01;
	kp.dlid = htobe16(3);
	kp.slid = htobe16(2);
	kp.raw_traffic = 1;
	kp.flow_label = htobe32(0x12345);
	kp.hop_limit = 9;
	kp.traffic_class = 0x20;
	kp.reversible = 1;
	kp.numb_path = 4;
	kp.pkey = htobe16(0xffff);
	kp.sl = 5;
	kp.mtu_selector = 2;
	kp.mtu = 4;
	kp.rate_selector = 2;
	kp.rate = 7;
	kp.packet_life_time_selector = 2;
	kp.packet_life_time = 18;
	kp.preference = 1;
	memset(&sp, 0x5a, sizeof(sp));
	ibv_copy_path_rec_from_kern(&sp, &kp);
	assert_int_equal(sp.dgid.raw[0], 0xfe);
	assert_int_equal(sp.sgid.raw[15], 0x01);
	assert_int_equal(sp.dlid, htobe16(3)); /* network order stays network order */
	assert_int_equal(sp.slid, htobe16(2));
	assert_int_equal(sp.raw_traffic, 1);
	assert_int_equal(sp.flow_label, htobe32(0x12345));
	assert_int_equal(sp.hop_limit, 9);
	assert_int_equal(sp.traffic_class, 0x20);
	assert_int_equal(sp.reversible, 1);
	assert_int_equal(sp.numb_path, 4);
	assert_int_equal(sp.pkey, 0xffff);
	assert_int_equal(sp.sl, 5);
	assert_int_equal(sp.mtu_selector, 2);
	assert_int_equal(sp.mtu, 4);
	assert_int_equal(sp.rate_selector, 2);
	assert_int_equal(sp.rate, 7);
	assert_int_equal(sp.packet_life_time_selector, 2);
	assert_int_equal(sp.packet_life_time, 18);
	assert_int_equal(sp.preference, 1);
	memset(&kp2, 0, sizeof(kp2));
	ibv_copy_path_rec_to_kern(&kp2, &sp);
	assert_memory_equal(&kp2, &kp, sizeof(kp));
	{
		struct ibv_ah_attr ah;
		struct ibv_qp_attr z;

		memset(&ah, 0, sizeof(ah));
		memset(&z, 0, sizeof(z));
		ibv_copy_ah_attr_from_kern(&ah, &k.ah_attr);
		ibv_copy_qp_attr_from_kern(&z, &k);
		assert_memory_equal(&ah, &z.ah_attr, sizeof(ah));
	}
}

/* The compat stub: only as ibv_register_driver@IBVERBS_1.1, and it does nothing. */
static void test_register_driver(void **state)
{
	void (*reg)(const char *, void *) =
		(void (*)(const char *, void *))dlvsym(RTLD_DEFAULT, "ibv_register_driver",
						       "IBVERBS_1.1");

	(void)state;
	assert_non_null(reg);
	reg("usnic", NULL);
	assert_null(dlvsym(RTLD_DEFAULT, "ibv_register_driver", "IBVERBS_1.0"));
}

static void test_resolve_eth_l2(void **state)
{
	struct ibv_ah_attr a = { .is_global = 1, .port_num = 1, .grh = { .sgid_index = 1 } };
	static const uint8_t mac_b[6] = { 0x02, 0, 0, 0, 0x02, 0x02 };
	static const uint8_t mac_a[6] = { 0x02, 0, 0, 0, 0x02, 0x01 };
	static const uint8_t mc4[6] = { 0x01, 0x00, 0x5e, 0x01, 0x02, 0x03 };
	static const uint8_t mc6[6] = { 0x33, 0x33, 0xde, 0xad, 0xbe, 0xef };
	uint8_t mac[6];
	uint16_t vid = 0;

	(void)state;
	/* B's address: B's MAC; no VLAN */
	a.grh.dgid.raw[10] = a.grh.dgid.raw[11] = 0xff;
	a.grh.dgid.raw[12] = 192;
	a.grh.dgid.raw[13] = 0;
	a.grh.dgid.raw[14] = 2;
	a.grh.dgid.raw[15] = 66;
	assert_int_equal(ibv_resolve_eth_l2_from_gid(ctx, &a, mac, &vid), 0);
	assert_memory_equal(mac, mac_b, 6);
	assert_int_equal(vid, 0xffff);
	assert_int_equal(ibv_resolve_eth_l2_from_gid(ctx, &a, mac, NULL), 0);
	/* A's own address */
	a.grh.dgid.raw[15] = 65;
	assert_int_equal(ibv_resolve_eth_l2_from_gid(ctx, &a, mac, &vid), 0);
	assert_memory_equal(mac, mac_a, 6);
	/* A's other netdev (eth1): not on the source's interface (measured on rxe: -113) */
	a.grh.dgid.raw[15] = 81;
	memset(mac, 0, 6);
	assert_int_equal(ibv_resolve_eth_l2_from_gid(ctx, &a, mac, &vid), -EHOSTUNREACH);
	/* nobody's */
	a.grh.dgid.raw[15] = 77;
	assert_int_equal(ibv_resolve_eth_l2_from_gid(ctx, &a, mac, &vid), -EHOSTUNREACH);
	/* multicast: the mapped MACs */
	a.grh.dgid.raw[12] = 239;
	a.grh.dgid.raw[13] = 0x81;
	a.grh.dgid.raw[14] = 2;
	a.grh.dgid.raw[15] = 3;
	assert_int_equal(ibv_resolve_eth_l2_from_gid(ctx, &a, mac, &vid), 0);
	assert_memory_equal(mac, mc4, 6);
	memset(a.grh.dgid.raw, 0, 16);
	a.grh.dgid.raw[0] = 0xff;
	a.grh.dgid.raw[1] = 0x0e;
	a.grh.dgid.raw[12] = 0xde;
	a.grh.dgid.raw[13] = 0xad;
	a.grh.dgid.raw[14] = 0xbe;
	a.grh.dgid.raw[15] = 0xef;
	assert_int_equal(ibv_resolve_eth_l2_from_gid(ctx, &a, mac, &vid), 0);
	assert_memory_equal(mac, mc6, 6);
	/* the source GID: an empty slot is no interface's address; past the table,
	 * ibv_query_gid's -1 */
	a.grh.sgid_index = 5;
	assert_int_equal(ibv_resolve_eth_l2_from_gid(ctx, &a, mac, &vid), -EINVAL);
	a.grh.sgid_index = 255;
	a.port_num = 2;
	assert_int_equal(ibv_resolve_eth_l2_from_gid(ctx, &a, mac, &vid), -1);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sysfs_path),
		cmocka_unit_test(test_dummy_ops),
		cmocka_unit_test(test_missing_ext_ops),
		cmocka_unit_test(test_qp_to_qp_ex),
		cmocka_unit_test(test_import_device),
		cmocka_unit_test(test_marshall),
		cmocka_unit_test(test_register_driver),
		cmocka_unit_test(test_resolve_eth_l2),
	};
	int rc;

	(void)argc;
	setenv("SYSFS_PATH", "/tmp/emu-sysfs//", 1);
	setenv("RDMAEMU_QUIESCE_US", "0", 0);
	verbs_test_init(argv, NULL, FABRIC, "A");
	ctx = vt_open("rxe0");
	pd = ibv_alloc_pd(ctx);
	if (!pd)
		return 99;
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return rc;
}
