/* The *_str helpers, rate conversions, fork state, an InfiniBand port and device caps that a
 * fixture lowers (max_pd, max_mr), on a fabric given as text. */
#include "config.h"

#include <endian.h>

#include "emu/verbs/tests/verbs_test.h"

/* exported by libibverbs.so.1 (IBVERBS_1.1), declared by rdma-core only in driver.h */
int ibv_dontfork_range(void *base, size_t size);

static const char fabric[] =
	"seed 3\n"
	"host h\n"
	"  device rxe0 link=eth\n"
	"  cap max_pd=3 max_mr=3\n"
	"  netdev eth0 mac=02:00:00:00:02:01 rdma=rxe0/1\n"
	"    addr 198.51.100.1/24\n"
	"  device mlx5_0 link=ib vendor=0x2c9 part=4119 fw=16.35.2000\n"
	"  netdev ib0 rdma=mlx5_0/1\n"
	"    addr 203.0.113.3/24\n"
	"switch sw ports=4 lid=1\n"
	"link h/mlx5_0/1 sw/1\n"
	"sm lid=1\n";

static void test_strings(void **state)
{
	(void)state;
	assert_string_equal(ibv_node_type_str(IBV_NODE_CA), "InfiniBand channel adapter");
	assert_string_equal(ibv_node_type_str(IBV_NODE_RNIC), "iWARP NIC");
	assert_string_equal(ibv_node_type_str(IBV_NODE_UNSPECIFIED), "unspecified");
	assert_string_equal(ibv_node_type_str(IBV_NODE_UNKNOWN), "unknown");
	assert_string_equal(ibv_node_type_str((enum ibv_node_type)0), "unknown");
	assert_string_equal(ibv_node_type_str((enum ibv_node_type)99), "unknown");
	assert_string_equal(ibv_port_state_str(IBV_PORT_NOP), "no state change (NOP)");
	assert_string_equal(ibv_port_state_str(IBV_PORT_ACTIVE), "active");
	assert_string_equal(ibv_port_state_str(IBV_PORT_ACTIVE_DEFER), "active defer");
	assert_string_equal(ibv_port_state_str((enum ibv_port_state)6), "unknown");
	assert_string_equal(ibv_event_type_str(IBV_EVENT_CQ_ERR), "CQ error");
	assert_string_equal(ibv_event_type_str(IBV_EVENT_PORT_ACTIVE), "port active");
	assert_string_equal(ibv_event_type_str(IBV_EVENT_WQ_FATAL), "WQ fatal");
	assert_string_equal(ibv_event_type_str((enum ibv_event_type)-1), "unknown");
	assert_string_equal(ibv_event_type_str((enum ibv_event_type)20), "unknown");
	assert_string_equal(ibv_wc_status_str(IBV_WC_SUCCESS), "success");
	assert_string_equal(ibv_wc_status_str(IBV_WC_LOC_PROT_ERR), "local protection error");
	assert_string_equal(ibv_wc_status_str(IBV_WC_WR_FLUSH_ERR), "Work Request Flushed Error");
	assert_string_equal(ibv_wc_status_str(IBV_WC_REM_ACCESS_ERR), "remote access error");
	assert_string_equal(ibv_wc_status_str(IBV_WC_RETRY_EXC_ERR),
			    "transport retry counter exceeded");
	assert_string_equal(ibv_wc_status_str(IBV_WC_TM_RNDV_INCOMPLETE), "TM software rendezvous");
	assert_string_equal(ibv_wc_status_str((enum ibv_wc_status)24), "unknown");
}

static void test_rates(void **state)
{
	(void)state;
	assert_int_equal(ibv_rate_to_mult(IBV_RATE_2_5_GBPS), 1);
	assert_int_equal(ibv_rate_to_mult(IBV_RATE_10_GBPS), 4);
	assert_int_equal(ibv_rate_to_mult(IBV_RATE_28_GBPS), 11);
	assert_int_equal(ibv_rate_to_mult(IBV_RATE_1200_GBPS), 480);
	assert_int_equal(ibv_rate_to_mult(IBV_RATE_14_GBPS), -1);
	assert_int_equal(ibv_rate_to_mult(IBV_RATE_MAX), -1);
	assert_int_equal(mult_to_ibv_rate(16), IBV_RATE_40_GBPS);
	assert_int_equal(mult_to_ibv_rate(20), IBV_RATE_50_GBPS);
	assert_int_equal(mult_to_ibv_rate(3), IBV_RATE_MAX);
	assert_int_equal(ibv_rate_to_mbps(IBV_RATE_25_GBPS), 25781);
	assert_int_equal(ibv_rate_to_mbps(IBV_RATE_100_GBPS), 103125);
	assert_int_equal(ibv_rate_to_mbps(IBV_RATE_800_GBPS), 850000);
	assert_int_equal(ibv_rate_to_mbps((enum ibv_rate)99), -1);
	assert_int_equal(mbps_to_ibv_rate(56250), IBV_RATE_56_GBPS);
	assert_int_equal(mbps_to_ibv_rate(100000), IBV_RATE_MAX);
}

static void test_fork(void **state)
{
	(void)state;
	/* before any MR: fork protection can be enabled, idempotently */
	assert_int_equal(ibv_fork_init(), 0);
	assert_int_equal(ibv_fork_init(), 0);
	assert_int_equal(ibv_is_fork_initialized(), IBV_FORK_UNNEEDED);
	assert_int_equal(ibv_dontfork_range(NULL, 0), 0);
}

static void test_ib_port(void **state)
{
	struct ibv_context *ctx = vt_open("mlx5_0");
	struct ibv_device_attr a;
	struct ibv_port_attr p;
	struct ibv_gid_entry e;
	union ibv_gid g;

	(void)state;
	assert_int_equal(ibv_query_device(ctx, &a), 0);
	assert_string_equal(a.fw_ver, "16.35.2000");
	assert_int_equal(a.vendor_id, 0x2c9);
	assert_int_equal(a.vendor_part_id, 4119);
	assert_int_equal(ibv_query_port(ctx, 1, &p), 0);
	assert_int_equal(p.link_layer, IBV_LINK_LAYER_INFINIBAND);
	assert_int_equal(p.state, IBV_PORT_ACTIVE);
	assert_int_equal(p.lid, 2);
	assert_int_equal(p.sm_lid, 1);
	assert_int_equal(p.subnet_timeout, 18);
	assert_int_equal(ibv_query_gid(ctx, 1, 0, &g), 0);
	assert_int_equal(g.raw[0], 0xfe);
	assert_int_equal(g.raw[1], 0x80);
	assert_int_equal(ibv_query_gid_ex(ctx, 1, 0, &e, 0), 0);
	assert_int_equal(e.gid_type, IBV_GID_TYPE_IB);
	assert_int_equal(e.ndev_ifindex, 0); /* an IB GID has no netdev */
	assert_int_equal(ibv_close_device(ctx), 0);
}

/* max_pd=3, max_mr=3: the kernel's ib_mad holds one PD and one MR of each (one port), the
 * user gets two of each. */
static void test_caps_limits(void **state)
{
	static char buf[64];
	struct ibv_context *ctx = vt_open("rxe0");
	struct ibv_pd *a = ibv_alloc_pd(ctx), *b = ibv_alloc_pd(ctx);
	struct ibv_mr *m1, *m2;

	(void)state;
	assert_non_null(a);
	assert_non_null(b);
	/* PDs are added with rxe_add_to_pool(): EINVAL when max_pd exist (Linux 6.1) */
	errno = 0;
	assert_null(ibv_alloc_pd(ctx));
	assert_int_equal(errno, EINVAL);
	m1 = ibv_reg_mr(a, buf, sizeof(buf), 0);
	m2 = ibv_reg_mr(b, buf, sizeof(buf), 0);
	assert_non_null(m1);
	assert_non_null(m2);
	/* MRs come from rxe_alloc(): ENOMEM when max_mr exist, before any other check */
	errno = 0;
	assert_null(ibv_reg_mr(a, buf, sizeof(buf), 0));
	assert_int_equal(errno, ENOMEM);
	errno = 0;
	assert_null(ibv_reg_mr(a, NULL, 0, IBV_ACCESS_LOCAL_WRITE));
	assert_int_equal(errno, ENOMEM);
	/* the limit is per device, across contexts */
	{
		struct ibv_context *c2 = vt_open("rxe0");

		errno = 0;
		assert_null(ibv_alloc_pd(c2));
		assert_int_equal(errno, EINVAL);
		assert_int_equal(ibv_close_device(c2), 0);
	}
	assert_int_equal(ibv_dereg_mr(m1), 0);
	assert_int_equal(ibv_dereg_mr(m2), 0);
	assert_int_equal(ibv_dealloc_pd(a), 0);
	assert_int_equal(ibv_dealloc_pd(b), 0);
	assert_int_equal(ibv_close_device(ctx), 0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_strings), cmocka_unit_test(test_rates),
		cmocka_unit_test(test_fork),	cmocka_unit_test(test_ib_port),
		cmocka_unit_test(test_caps_limits),
	};

	(void)argc;
	verbs_test_init(argv, NULL, fabric, "h");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
