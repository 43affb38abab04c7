/* ibv_query_device(_ex), ibv_query_port, the GID and P_Key queries and the emulated sysfs on
 * rxe-ref.fabric. Expected values: `ibv_devinfo -v -d rxe0` in scripts/rxe-vm (Debian 12,
 * Linux 6.1, rdma-core 44), see probes/VM-CHECKS.md. */
#include "config.h"

#include <endian.h>

#include "emu/verbs/tests/verbs_test.h"

#undef ibv_query_port
int ibv_query_port(struct ibv_context *context, uint8_t port_num,
		   struct _compat_ibv_port_attr *port_attr);
/* IBVERBS_PRIVATE_34, as ibv_devinfo imports it */
int ibv_query_gid_type(struct ibv_context *context, uint8_t port_num, unsigned int index,
		       int *type);
int ibv_read_sysfs_file(const char *dir, const char *file, char *buf, size_t size);
#define query_port(c, p, a) ___ibv_query_port(c, p, a)

static struct ibv_context *ctx;

static int setup(void **state)
{
	(void)state;
	ctx = vt_open("rxe0");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return ibv_close_device(ctx);
}

static void check_orig_attr(const struct ibv_device_attr *a)
{
	assert_string_equal(a->fw_ver, "0.0.0");
	assert_true(be64toh(a->node_guid) == 0x000000fffe000101ull);
	assert_true(be64toh(a->sys_image_guid) == 0x000000fffe000101ull);
	assert_true(a->max_mr_size == 0xffffffffffffffffull);
	assert_true(a->page_size_cap == 0xfffff000ull);
	assert_int_equal(a->vendor_id, 0xffffff);
	assert_int_equal(a->vendor_part_id, 0);
	assert_int_equal(a->hw_ver, 0);
	assert_int_equal(a->max_qp, 1048560);
	assert_int_equal(a->max_qp_wr, 1048576);
	assert_int_equal(a->device_cap_flags, 0x01223c76);
	assert_int_equal(a->max_sge, 32);
	assert_int_equal(a->max_sge_rd, 32);
	assert_int_equal(a->max_cq, 1048576);
	assert_int_equal(a->max_cqe, 32767);
	assert_int_equal(a->max_mr, 524287);
	assert_int_equal(a->max_pd, 1048576);
	assert_int_equal(a->max_qp_rd_atom, 128);
	assert_int_equal(a->max_ee_rd_atom, 0);
	assert_int_equal(a->max_res_rd_atom, 258048);
	assert_int_equal(a->max_qp_init_rd_atom, 128);
	assert_int_equal(a->max_ee_init_rd_atom, 0);
	assert_int_equal(a->atomic_cap, IBV_ATOMIC_HCA);
	assert_int_equal(a->max_ee, 0);
	assert_int_equal(a->max_rdd, 0);
	assert_int_equal(a->max_mw, 524287);
	assert_int_equal(a->max_raw_ipv6_qp, 0);
	assert_int_equal(a->max_raw_ethy_qp, 0);
	assert_int_equal(a->max_mcast_grp, 8192);
	assert_int_equal(a->max_mcast_qp_attach, 56);
	assert_int_equal(a->max_total_mcast_qp_attach, 458752);
	assert_int_equal(a->max_ah, 32767);
	assert_int_equal(a->max_fmr, 0);
	assert_int_equal(a->max_map_per_fmr, 0);
	assert_int_equal(a->max_srq, 917503);
	assert_int_equal(a->max_srq_wr, 1048576);
	assert_int_equal(a->max_srq_sge, 27);
	assert_int_equal(a->max_pkeys, 64);
	assert_int_equal(a->local_ca_ack_delay, 15);
	assert_int_equal(a->phys_port_cnt, 1);
}

static void test_query_device(void **state)
{
	struct ibv_device_attr a;

	(void)state;
	memset(&a, 0xa5, sizeof(a));
	assert_int_equal(ibv_query_device(ctx, &a), 0);
	check_orig_attr(&a);
}

static void test_query_device_ex(void **state)
{
	struct ibv_device_attr_ex a, zero;
	struct ibv_query_device_ex_input in = { .comp_mask = 1 };

	(void)state;
	memset(&a, 0xa5, sizeof(a));
	assert_int_equal(ibv_query_device_ex(ctx, NULL, &a), 0);
	check_orig_attr(&a.orig_attr);
	assert_true(a.device_cap_flags_ex == 0x1223c76);
	/* everything else of the extended part is 0 on rxe (ODP, timestamps, TSO, RSS, ...) */
	memset(&zero, 0, sizeof(zero));
	assert_memory_equal(&a.comp_mask, &zero.comp_mask,
			    offsetof(struct ibv_device_attr_ex, device_cap_flags_ex) -
				    offsetof(struct ibv_device_attr_ex, comp_mask));
	assert_memory_equal(&a.tso_caps, &zero.tso_caps,
			    sizeof(a) - offsetof(struct ibv_device_attr_ex, tso_caps));
	assert_int_equal(ibv_query_device_ex(ctx, &in, &a), EINVAL);
	/* a caller with a smaller struct (older headers) gets what fits, through the op */
	memset(&a, 0xa5, sizeof(a));
	assert_int_equal(verbs_get_ctx(ctx)->query_device_ex(ctx, NULL, &a, sizeof(a.orig_attr) + 4),
			 0);
	assert_int_equal(a.comp_mask, 0);
	assert_int_equal(((unsigned char *)&a)[sizeof(a.orig_attr) + 4], 0xa5);
	assert_int_equal(verbs_get_ctx(ctx)->query_device_ex(ctx, NULL, &a, 8), EINVAL);
}

static void check_port(const struct ibv_port_attr *p)
{
	assert_int_equal(p->state, IBV_PORT_ACTIVE);
	assert_int_equal(p->max_mtu, IBV_MTU_4096);
	assert_int_equal(p->active_mtu, IBV_MTU_1024);
	assert_int_equal(p->gid_tbl_len, 1024);
	assert_int_equal(p->port_cap_flags, 0x00010000);
	assert_int_equal(p->max_msg_sz, 0x800000);
	assert_int_equal(p->bad_pkey_cntr, 0);
	assert_int_equal(p->qkey_viol_cntr, 0);
	assert_int_equal(p->pkey_tbl_len, 1);
	assert_int_equal(p->lid, 0);
	assert_int_equal(p->sm_lid, 0);
	assert_int_equal(p->lmc, 0);
	assert_int_equal(p->max_vl_num, 1);
	assert_int_equal(p->sm_sl, 0);
	assert_int_equal(p->subnet_timeout, 0);
	assert_int_equal(p->init_type_reply, 0);
	assert_int_equal(p->active_width, 1);
	assert_int_equal(p->active_speed, 1);
	assert_int_equal(p->phys_state, 5);
	assert_int_equal(p->link_layer, IBV_LINK_LAYER_ETHERNET);
	assert_int_equal(p->flags, 0);
}

static void test_query_port(void **state)
{
	struct ibv_port_attr p;

	(void)state;
	memset(&p, 0xa5, sizeof(p));
	assert_int_equal(query_port(ctx, 1, &p), 0); /* the header's inline: verbs_context op */
	check_port(&p);
	assert_int_equal(p.port_cap_flags2, 0);
	assert_int_equal(query_port(ctx, 0, &p), EINVAL);
	assert_int_equal(query_port(ctx, 2, &p), EINVAL);
	/* the exported symbol, with the old (pre-port_cap_flags2) struct */
	memset(&p, 0xa5, sizeof(p));
	assert_int_equal(ibv_query_port(ctx, 1, (struct _compat_ibv_port_attr *)&p), 0);
	check_port(&p);
	assert_int_equal(p.port_cap_flags2, 0xa5a5); /* beyond the old struct: untouched */
	assert_int_equal(ibv_query_port(ctx, 9, (struct _compat_ibv_port_attr *)&p), EINVAL);
}

static void test_query_gid(void **state)
{
	static const uint8_t gid0[16] = { 0xfe, 0x80, 0, 0, 0, 0, 0, 0,
					  0x00, 0x00, 0x00, 0xff, 0xfe, 0x00, 0x01, 0x01 };
	static const uint8_t gid1[16] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 0, 2, 1 };
	static const uint8_t zero[16];
	union ibv_gid g;

	(void)state;
	assert_int_equal(ibv_query_gid(ctx, 1, 0, &g), 0);
	assert_memory_equal(g.raw, gid0, 16);
	assert_int_equal(ibv_query_gid(ctx, 1, 1, &g), 0);
	assert_memory_equal(g.raw, gid1, 16);
	/* an empty slot reads as zeros (kernel-rxe.md §3), the last slot too; the ioctl's ENODATA is
	 * left in errno (measured) */
	memset(&g, 0xa5, sizeof(g));
	errno = 0;
	assert_int_equal(ibv_query_gid(ctx, 1, 2, &g), 0);
	assert_memory_equal(g.raw, zero, 16);
	assert_int_equal(errno, ENODATA);
	assert_int_equal(ibv_query_gid(ctx, 1, 1023, &g), 0);
	/* past the table, a bad port: -1 with the ioctl's EINVAL */
	errno = 0;
	assert_int_equal(ibv_query_gid(ctx, 1, 1024, &g), -1);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(ibv_query_gid(ctx, 1, -1, &g), -1);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(ibv_query_gid(ctx, 2, 0, &g), -1);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(ibv_query_gid(ctx, 0, 0, &g), -1);
	assert_int_equal(errno, EINVAL);
}

static void test_query_gid_ex(void **state)
{
	struct ibv_gid_entry e;
	struct ibv_context *c1;

	(void)state;
	memset(&e, 0xa5, sizeof(e));
	assert_int_equal(ibv_query_gid_ex(ctx, 1, 1, &e, 0), 0);
	assert_int_equal(e.gid.raw[15], 1);
	assert_int_equal(e.gid_index, 1);
	assert_int_equal(e.port_num, 1);
	assert_int_equal(e.gid_type, IBV_GID_TYPE_ROCE_V2);
	assert_int_equal(e.ndev_ifindex, 2); /* d0: lo is 1 */
	assert_int_equal(ibv_query_gid_ex(ctx, 1, 2, &e, 0), ENODATA);
	assert_int_equal(ibv_query_gid_ex(ctx, 1, 1024, &e, 0), EINVAL);
	assert_int_equal(ibv_query_gid_ex(ctx, 2, 0, &e, 0), EINVAL);
	assert_int_equal(ibv_query_gid_ex(ctx, 1, 0, &e, 1), EINVAL);
	assert_int_equal(_ibv_query_gid_ex(ctx, 1, 0, &e, 0, 16), EINVAL);
	{
		/* a larger entry is accepted, zero-filled past the kernel's 32 bytes (measured) */
		unsigned char big[40];

		memset(big, 0xa5, sizeof(big));
		assert_int_equal(_ibv_query_gid_ex(ctx, 1, 0, (struct ibv_gid_entry *)big, 0,
						   sizeof(big)), 0);
		assert_int_equal(big[0], 0xfe);
		assert_int_equal(big[39], 0);
	}
	c1 = vt_open("rxe1");
	assert_int_equal(ibv_query_gid_ex(c1, 1, 0, &e, 0), 0);
	assert_int_equal(e.ndev_ifindex, 3); /* s0 */
	assert_int_equal(ibv_close_device(c1), 0);
}

static void test_query_gid_table(void **state)
{
	struct ibv_gid_entry t[4];

	(void)state;
	memset(t, 0xa5, sizeof(t));
	assert_int_equal(ibv_query_gid_table(ctx, t, 4, 0), 2);
	assert_int_equal(t[0].gid.raw[0], 0xfe);
	assert_int_equal(t[0].gid_index, 0);
	assert_int_equal(t[1].gid_index, 1);
	assert_int_equal(t[1].gid_type, IBV_GID_TYPE_ROCE_V2);
	assert_int_equal(t[1].ndev_ifindex, 2);
	assert_int_equal(t[2].gid_index, 0xa5a5a5a5); /* untouched */
	assert_int_equal(ibv_query_gid_table(ctx, t, 1, 0), -EINVAL);
	assert_int_equal(ibv_query_gid_table(ctx, t, 0, 0), -EINVAL);
	assert_int_equal(ibv_query_gid_table(ctx, t, 4, 1), -EINVAL);
	/* a smaller entry size gets the leading bytes of each entry (measured: 2) */
	memset(t, 0xa5, sizeof(t));
	assert_int_equal(_ibv_query_gid_table(ctx, t, 4, 0, 16), 2);
	assert_int_equal(((unsigned char *)t)[16], 0x00); /* entry 1's GID starts at byte 16 */
	assert_int_equal(((unsigned char *)t)[16 + 10], 0xff);
	/* more than the 16-bit ioctl length can describe */
	assert_int_equal(_ibv_query_gid_table(ctx, t, 4096, 0, sizeof(t[0])), -EINVAL);
}

static void test_query_pkey(void **state)
{
	__be16 pk = 0;

	(void)state;
	assert_int_equal(ibv_query_pkey(ctx, 1, 0, &pk), 0);
	assert_int_equal(be16toh(pk), 0xffff);
	errno = 0;
	assert_int_equal(ibv_query_pkey(ctx, 1, 1, &pk), -1);
	assert_int_equal(errno, ENOENT);
	errno = 0;
	assert_int_equal(ibv_query_pkey(ctx, 2, 0, &pk), -1);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(ibv_get_pkey_index(ctx, 1, htobe16(0xffff)), 0);
	errno = 0;
	assert_int_equal(ibv_get_pkey_index(ctx, 1, htobe16(0x8001)), -1);
	assert_int_equal(errno, ENOENT);
}

static void test_gid_type_and_sysfs(void **state)
{
	char buf[64];
	int type = -1;

	(void)state;
	assert_int_equal(ibv_query_gid_type(ctx, 1, 0, &type), 0);
	assert_int_equal(type, 1); /* IBV_GID_TYPE_SYSFS_ROCE_V2 */
	/* measured on 6.1: an empty slot is type 0 (IB/RoCE v1), past the table or port -1/EINVAL */
	type = -1;
	assert_int_equal(ibv_query_gid_type(ctx, 1, 2, &type), 0);
	assert_int_equal(type, 0);
	errno = 0;
	assert_int_equal(ibv_query_gid_type(ctx, 1, 1024, &type), -1);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(ibv_query_gid_type(ctx, 2, 0, &type), -1);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(ibv_read_sysfs_file(ctx->device->ibdev_path, "ports/1/gid_attrs/types/2",
					     buf, sizeof(buf)), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(ibv_read_sysfs_file(ctx->device->ibdev_path, "ports/1/gid_attrs/ndevs/0",
					     buf, sizeof(buf)), 2);
	assert_string_equal(buf, "d0");
	/* measured: an empty slot's netdev reads as EINVAL too */
	errno = 0;
	assert_int_equal(ibv_read_sysfs_file(ctx->device->ibdev_path, "ports/1/gid_attrs/ndevs/2",
					     buf, sizeof(buf)), -1);
	assert_int_equal(errno, EINVAL);
	/* rxe's uverbs ABI, and ib_umad's class files */
	assert_int_equal(ibv_read_sysfs_file(ctx->device->dev_path, "abi_version", buf,
					     sizeof(buf)), 1);
	assert_string_equal(buf, "2");
	assert_int_equal(ibv_read_sysfs_file("/sys/class/infiniband_mad", "umad0/ibdev", buf,
					     sizeof(buf)), 4);
	assert_string_equal(buf, "rxe0");
	ibv_read_sysfs_file(ctx->device->ibdev_path, "ports/1/cap_mask", buf, sizeof(buf));
	assert_string_equal(buf, "0x00010000");
	ibv_read_sysfs_file(ctx->device->ibdev_path, "ports/1/lid", buf, sizeof(buf));
	assert_string_equal(buf, "0x0");

	assert_int_equal(ibv_read_sysfs_file(ctx->device->ibdev_path, "node_type", buf,
					     sizeof(buf)), 5);
	assert_string_equal(buf, "1: CA");
	assert_int_equal(ibv_read_sysfs_file(ctx->device->ibdev_path, "fw_ver", buf, sizeof(buf)),
			 0);
	assert_string_equal(buf, "");
	assert_int_equal(ibv_read_sysfs_file(ctx->device->ibdev_path, "board_id", buf,
					     sizeof(buf)), -1);
	assert_int_equal(errno, ENOENT);
	ibv_read_sysfs_file(ctx->device->ibdev_path, "ports/1/rate", buf, sizeof(buf));
	assert_string_equal(buf, "2.5 Gb/sec (1X SDR)");
	ibv_read_sysfs_file(ctx->device->ibdev_path, "ports/1/gids/0", buf, sizeof(buf));
	assert_string_equal(buf, "fe80:0000:0000:0000:0000:00ff:fe00:0101");
	ibv_read_sysfs_file(ctx->device->ibdev_path, "ports/1/state", buf, sizeof(buf));
	assert_string_equal(buf, "4: ACTIVE");
	ibv_read_sysfs_file(ctx->device->ibdev_path, "node_guid", buf, sizeof(buf));
	assert_string_equal(buf, "0000:00ff:fe00:0101");
	ibv_read_sysfs_file(ctx->device->dev_path, "ibdev", buf, sizeof(buf));
	assert_string_equal(buf, "rxe0");
	/* a buffer too small for the content fails rather than truncate */
	assert_int_equal(ibv_read_sysfs_file(ctx->device->ibdev_path, "node_guid", buf, 4), -1);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_query_device),   cmocka_unit_test(test_query_device_ex),
		cmocka_unit_test(test_query_port),     cmocka_unit_test(test_query_gid),
		cmocka_unit_test(test_query_gid_ex),   cmocka_unit_test(test_query_gid_table),
		cmocka_unit_test(test_query_pkey),     cmocka_unit_test(test_gid_type_and_sysfs),
	};

	(void)argc;
	verbs_test_init(argv, "rxe-ref.fabric", NULL, NULL);
	return cmocka_run_group_tests(tests, setup, teardown);
}
