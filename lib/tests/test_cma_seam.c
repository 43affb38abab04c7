/* librdmacm over the emulated kernel CM, through the seam the network modules will fill.
 *
 * A stand-in address-resolution module (emu_cma_set_addr_ops) answers rdma_resolve_addr at a
 * virtual time; the library's side is then what runs for real: event post-processing (the
 * address, GID and device queries), the synchronous-mode errno mapping (spec §6.1, row 264),
 * IB_PATH route setting with its path records, and QPs on the resolved device. The test runs
 * against the emulated libibverbs (re-executed with it on the library path, as the verbs
 * tests are). */
#include "config.h"

#include <arpa/inet.h>
#include <rdma/rdma_cma.h>
#include <infiniband/sa.h>

#include "emu/verbs/tests/verbs_test.h"
#include "emu/sim/engine.h"
#include "emu/rdma_cm/cma.h"
#include "rdmaemu/ctl.h"
#include "rdmaemu/compat.h"

static const char fabric_text[] =
	"seed 5\n"
	"resolver files\n"
	"host alpha\n"
	"  device rxe0 link=eth\n"
	"  netdev d0 mac=02:00:00:00:00:01 mtu=1500 rdma=rxe0/1\n"
	"    addr 192.0.2.1/28\n"
	"link alpha/rxe0/1 none\n";

/* ---- the stand-in module ---- */

enum fake_mode { FAKE_OK, FAKE_TIMEOUT, FAKE_NODEV };

static struct {
	struct emu_timer t;
	struct emu_cma_id *id;
	enum fake_mode mode;
} fake;

static void fake_done(struct emu_clock *clk, struct emu_timer *t, void *arg)
{
	(void)clk;
	(void)t;
	(void)arg;
	switch (fake.mode) {
	case FAKE_OK:
		inet_pton(AF_INET, "192.0.2.1", &((struct sockaddr_in *)&fake.id->src)->sin_addr);
		emu_cma_addr_resolved(fake.id, emu_cma_acquire_dev(fake.id, 0));
		break;
	case FAKE_TIMEOUT:
		emu_cma_addr_resolved(fake.id, -ETIMEDOUT);
		break;
	case FAKE_NODEV:
		/* "resolved" without a device: the library must refuse it */
		emu_cma_addr_resolved(fake.id, 0);
		break;
	}
}

static int fake_resolve(struct emu_cma_id *id, uint32_t timeout_ms)
{
	fake.id = id;
	emu_timer_init(&fake.t, fake_done, NULL);
	emu_timer_arm_in(emu_engine_clock(emu_engine_get()), &fake.t,
			 fake.mode == FAKE_TIMEOUT ? timeout_ms * 1000000ull : 1000000ull);
	return 0;
}

static const struct emu_cma_addr_ops fake_ops = { fake_resolve, NULL };

static void dst_addr(struct sockaddr_in *sin)
{
	memset(sin, 0, sizeof *sin);
	sin->sin_family = AF_INET;
	sin->sin_port = htons(7471);
	inet_pton(AF_INET, "192.0.2.2", &sin->sin_addr);
}

static uint64_t now_ns(void)
{
	uint64_t t = 0;

	assert_int_equal(rdmaemu_ctl_now_ns(&t), 0);
	return t;
}

/* ---- tests ---- */

static void test_sync_resolved(void **state)
{
	struct rdma_cm_id *id;
	struct sockaddr_in dst, *src;
	struct ibv_context **list;
	uint64_t t0;
	int n = 0;

	(void)state;
	fake.mode = FAKE_OK;
	dst_addr(&dst);
	assert_int_equal(rdma_create_id(NULL, &id, NULL, RDMA_PS_TCP), 0);
	t0 = now_ns();
	assert_int_equal(rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 2000), 0);
	assert_int_equal(now_ns() - t0, 1000000);
	assert_non_null(id->event);
	assert_int_equal(id->event->event, RDMA_CM_EVENT_ADDR_RESOLVED);
	assert_int_equal(id->event->status, 0);
	assert_null(id->event->listen_id);
	/* the library's queries: device, default PD, port, addresses, GIDs */
	assert_non_null(id->verbs);
	assert_non_null(id->pd);
	assert_int_equal(id->port_num, 1);
	src = (struct sockaddr_in *)rdma_get_local_addr(id);
	assert_int_equal(src->sin_addr.s_addr, htonl(0xc0000201));
	assert_int_not_equal(src->sin_port, 0);
	assert_memory_equal(rdma_get_peer_addr(id), &dst, sizeof dst);
	assert_int_equal(id->route.addr.addr.ibaddr.sgid.raw[10], 0xff);
	assert_int_equal(id->route.addr.addr.ibaddr.sgid.raw[15], 1);
	assert_int_equal(id->route.addr.addr.ibaddr.dgid.raw[15], 2);
	list = rdma_get_devices(&n);
	assert_int_equal(n, 1);
	assert_ptr_equal(list[0], id->verbs);
	rdma_free_devices(list);
	/* an RC QP on the resolved device: INIT, on the id's port */
	{
		struct ibv_qp_init_attr a = { .cap = { 4, 4, 1, 1, 0 }, .qp_type = IBV_QPT_RC };
		struct ibv_qp_attr qa;
		struct ibv_qp_init_attr ia;

		assert_int_equal(rdma_create_qp(id, NULL, &a), 0);
		assert_int_equal(ibv_query_qp(id->qp, &qa, IBV_QP_STATE | IBV_QP_PORT, &ia), 0);
		assert_int_equal(qa.qp_state, IBV_QPS_INIT);
		assert_int_equal(qa.port_num, 1);
		/* connect: the IB CM module is missing; the kernel says so after its checks
		 * (state ADDR_RESOLVED != ROUTE_RESOLVED first) */
		errno = 0;
		assert_int_equal(rdma_connect(id, NULL), -1);
		assert_int_equal(errno, EINVAL);
		rdma_destroy_qp(id);
	}
	assert_int_equal(rdma_destroy_id(id), 0);
}

static void test_sync_timeout(void **state)
{
	struct rdma_cm_id *id;
	struct sockaddr_in dst;
	uint64_t t0;

	(void)state;
	fake.mode = FAKE_TIMEOUT;
	dst_addr(&dst);
	assert_int_equal(rdma_create_id(NULL, &id, NULL, RDMA_PS_TCP), 0);
	t0 = now_ns();
	errno = 0;
	assert_int_equal(rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 500), -1);
	assert_int_equal(errno, ETIMEDOUT);
	assert_int_equal(now_ns() - t0, 500000000);
	assert_int_equal(id->event->event, RDMA_CM_EVENT_ADDR_ERROR);
	assert_int_equal(id->event->status, -ETIMEDOUT);
	/* the id went back to ADDR_BOUND: it may retry (cmtime does) */
	fake.mode = FAKE_OK;
	assert_int_equal(rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 500), 0);
	assert_int_equal(id->event->event, RDMA_CM_EVENT_ADDR_RESOLVED);
	assert_int_equal(rdma_destroy_id(id), 0);
}

/* Row 264: a library-internal failure has status -1, which sync mode maps to EPERM. */
static void test_sync_internal_failure(void **state)
{
	struct rdma_cm_id *id;
	struct sockaddr_in dst;

	(void)state;
	fake.mode = FAKE_NODEV;
	dst_addr(&dst);
	assert_int_equal(rdma_create_id(NULL, &id, NULL, RDMA_PS_TCP), 0);
	errno = 0;
	assert_int_equal(rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 2000), -1);
	assert_int_equal(errno, EPERM);
	assert_int_equal(id->event->event, RDMA_CM_EVENT_ADDR_ERROR);
	assert_int_equal(id->event->status, -1);
	assert_int_equal(rdma_destroy_id(id), 0);
}

static void test_async_route_by_path(void **state)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_event *ev;
	struct ibv_path_data pd;
	struct rdma_cm_id *id;
	struct sockaddr_in dst;

	(void)state;
	fake.mode = FAKE_OK;
	dst_addr(&dst);
	assert_non_null(ch);
	assert_int_equal(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP), 0);
	assert_int_equal(rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 2000), 0);
	assert_null(id->event); /* async: nothing held */
	assert_int_equal(rdma_get_cm_event(ch, &ev), 0);
	assert_int_equal(ev->event, RDMA_CM_EVENT_ADDR_RESOLVED);
	assert_ptr_equal(ev->id, id);
	assert_int_equal(rdma_ack_cm_event(ev), 0);
	/* without a route module: ENOSYS from the kernel, the id stays ADDR_RESOLVED */
	emu_cma_set_route_ops(NULL);
	errno = 0;
	assert_int_equal(rdma_resolve_route(id, 2000), -1);
	assert_int_equal(errno, ENOSYS);
	/* the route from a path record (what rdma_create_ep does with ibacm data) */
	memset(&pd, 0, sizeof pd);
	pd.flags = IBV_PATH_FLAG_GMP | IBV_PATH_FLAG_PRIMARY | IBV_PATH_FLAG_BIDIRECTIONAL;
	memcpy(&pd.path.sgid, id->route.addr.addr.ibaddr.sgid.raw, 16);
	memcpy(&pd.path.dgid, id->route.addr.addr.ibaddr.dgid.raw, 16);
	pd.path.pkey = htons(0xffff);
	pd.path.mtu = 0x80 | IBV_MTU_1024;
	pd.path.flowlabel_hoplimit = htonl(0x12345 << 8 | 64);
	assert_int_equal(rdma_set_option(id, RDMA_OPTION_IB, RDMA_OPTION_IB_PATH, &pd, sizeof pd),
			 0);
	assert_int_equal(rdma_get_cm_event(ch, &ev), 0);
	assert_int_equal(ev->event, RDMA_CM_EVENT_ROUTE_RESOLVED);
	assert_int_equal(ev->status, 0);
	assert_int_equal(id->route.num_paths, 1);
	assert_memory_equal(id->route.path_rec[0].dgid.raw, id->route.addr.addr.ibaddr.dgid.raw, 16);
	assert_int_equal(id->route.path_rec[0].mtu, IBV_MTU_1024);
	assert_int_equal(id->route.path_rec[0].hop_limit, 64);
	assert_int_equal(ntohl(id->route.path_rec[0].flow_label), 0x12345);
	assert_int_equal(id->route.path_rec[0].preference, pd.flags);
	assert_int_equal(rdma_ack_cm_event(ev), 0);
	assert_int_equal(rdma_destroy_id(id), 0);
	rdma_destroy_event_channel(ch);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sync_resolved),
		cmocka_unit_test(test_sync_timeout),
		cmocka_unit_test(test_sync_internal_failure),
		cmocka_unit_test(test_async_route_by_path),
	};

	(void)argc;
	verbs_test_init(argv, NULL, fabric_text, "alpha");
	emu_cma_set_addr_ops(&fake_ops);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
