/* The one connection-time difference of the librdmacm personalities
 * (docs/rdma-core-generations.md row 7), built twice like test_personality.c: rdma_accept on a
 * synchronous UD id acks the CONNECT_REQUEST that rdma_get_request left in id->event from
 * rdma-core v52 on (9a0fc3afd); personality 44 leaves it there for rdma_destroy_id. Hosts A
 * and B of fixtures/rxe-ref2.fabric in one process, as test_cma_conn; re-executes itself on
 * the emulated libibverbs. */
#include "config.h"

#include "emu/verbs/tests/verbs_test.h"
#include "lib/tests/cma_conn_test.h"
#include "rdmaemu/ctl.h"

#define PORT 7481

static void next_event(struct rdma_event_channel *ch, enum rdma_cm_event_type type)
{
	struct rdma_cm_event *ev;

	assert_int_equal(rdma_get_cm_event(ch, &ev), 0);
	assert_int_equal(ev->event, type);
	assert_int_equal(ev->status, 0);
	assert_int_equal(rdma_ack_cm_event(ev), 0);
}

static struct ibv_cq *ud_qp(struct rdma_cm_id *id)
{
	struct ibv_qp_init_attr qa = { .cap = { 4, 4, 1, 1, 0 }, .qp_type = IBV_QPT_UD };
	struct ibv_cq *cq = ibv_create_cq(id->verbs, 8, NULL, NULL, 0);

	assert_non_null(cq);
	qa.send_cq = qa.recv_cq = cq;
	assert_int_equal(rdma_create_qp(id, NULL, &qa), 0);
	return cq;
}

static void test_sync_ud_accept(void **state)
{
	struct rdma_conn_param cp = { .private_data = "ud", .private_data_len = 3 };
	struct rdma_cm_id *listen, *conn, *a;
	struct rdma_event_channel *ch;
	struct sockaddr_in any, dst;
	struct ibv_cq *cq_a, *cq_b;

	(void)state;
	assert_int_equal(rdmaemu_ctl_rdmacm_level(), PERSONALITY);
	/* B: a synchronous listener */
	assert_int_equal(rdmaemu_ctl_cm_host("B"), 0);
	assert_int_equal(rdma_create_id(NULL, &listen, NULL, RDMA_PS_UDP), 0);
	assert_int_equal(rdmaemu_ctl_cm_host(NULL), 0);
	standin_dst(&any, "0.0.0.0", PORT);
	assert_int_equal(rdma_bind_addr(listen, (struct sockaddr *)&any), 0);
	assert_int_equal(rdma_listen(listen, 4), 0);
	/* A: an asynchronous UD id sends the SIDR REQ */
	ch = rdma_create_event_channel();
	assert_non_null(ch);
	assert_int_equal(rdma_create_id(ch, &a, NULL, RDMA_PS_UDP), 0);
	standin_dst(&dst, "192.0.2.66", PORT);
	assert_int_equal(rdma_resolve_addr(a, NULL, (struct sockaddr *)&dst, 2000), 0);
	next_event(ch, RDMA_CM_EVENT_ADDR_RESOLVED);
	assert_int_equal(standin_route(a), 0);
	next_event(ch, RDMA_CM_EVENT_ROUTE_RESOLVED);
	cq_a = ud_qp(a);
	assert_int_equal(rdma_connect(a, &cp), 0);

	assert_int_equal(rdma_get_request(listen, &conn), 0);
	assert_non_null(conn->event);
	assert_int_equal(conn->event->event, RDMA_CM_EVENT_CONNECT_REQUEST);
	cq_b = ud_qp(conn);
	assert_int_equal(rdma_accept(conn, &cp), 0);
	if (PERSONALITY >= 52) {
		assert_null(conn->event);
	} else {
		assert_non_null(conn->event);
		assert_int_equal(conn->event->event, RDMA_CM_EVENT_CONNECT_REQUEST);
	}
	next_event(ch, RDMA_CM_EVENT_ESTABLISHED);

	rdma_destroy_qp(conn);
	assert_int_equal(ibv_destroy_cq(cq_b), 0);
	assert_int_equal(rdma_destroy_id(conn), 0); /* 44: acks the held request */
	assert_int_equal(rdma_destroy_id(listen), 0);
	rdma_destroy_qp(a);
	assert_int_equal(ibv_destroy_cq(cq_a), 0);
	assert_int_equal(rdma_destroy_id(a), 0);
	rdma_destroy_event_channel(ch);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sync_ud_accept),
	};

	(void)argc;
	verbs_test_init(argv, "rxe-ref2.fabric", NULL, "A");
	if (rdmaemu_ctl_open_host_devices("B")) {
		perror("rdmaemu_ctl_open_host_devices");
		return 99;
	}
	emu_cma_set_addr_ops(&standin_addr_ops);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
