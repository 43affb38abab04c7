/* A host's link taken down under an established connection (`ip link set eth0 down` on B),
 * hosts A and B of fixtures/rxe-ref2.fabric in one process. As kernel rxe does it, measured
 * on the reference VMs (probes/cma/timeout_probe.c, docs/reference/timeouts-rxe.md): a down
 * netdev neither sends nor receives RoCE packets, so
 *   - B's rxe0 port reads PORT_DOWN with physical state Disabled (3);
 *   - A's rdma_disconnect sends DREQs nobody answers: DISCONNECTED -110 when the retries run
 *     out, 16 DREQs of the REQ's timeout (2 x 1024 + 4096 ms with the route's packet lifetime
 *     18) = 98.304 s after the call; B hears nothing;
 *   - with the link up again B's own DREQ reaches A, whose CM answers it (no id any more):
 *     B's DISCONNECTED 0 at once.
 * Re-executes itself on the emulated libibverbs (verbs_test.h). */
#include "config.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <poll.h>
#include <rdma/rdma_cma.h>

#include "emu/verbs/tests/verbs_test.h"
#include "rdmaemu/ctl.h"
#include "lib/tests/cm_event_test.h"

#define PORT 7471

static void expect_ack(struct rdma_event_channel *ch, enum rdma_cm_event_type type, int status,
		       struct rdma_cm_id *id, struct rdma_cm_id **new_id)
{
	struct rdma_cm_event *ev = cm_test_expect(ch, type, status, id);

	if (new_id)
		*new_id = ev->id;
	assert_int_equal(rdma_ack_cm_event(ev), 0);
}

static void port_state(struct ibv_context *ctx, enum ibv_port_state state, uint8_t phys)
{
	struct ibv_port_attr pa;

	assert_int_equal(ibv_query_port(ctx, 1, &pa), 0);
	assert_int_equal(pa.state, state);
	assert_int_equal(pa.phys_state, phys);
}

static void test_dreq_to_a_down_link(void **state)
{
	struct rdma_conn_param cp = { .qp_num = 0x123, .responder_resources = 1,
				      .initiator_depth = 1 };
	struct rdma_event_channel *ach, *bch;
	struct rdma_cm_id *lis, *a, *b;
	struct sockaddr_in any, dst;
	uint64_t t;

	(void)state;
	assert_int_equal(rdmaemu_ctl_cm_host("B"), 0);
	bch = rdma_create_event_channel();
	assert_int_equal(rdmaemu_ctl_cm_host(NULL), 0);
	assert_non_null(bch);
	assert_int_equal(rdma_create_id(bch, &lis, NULL, RDMA_PS_TCP), 0);
	memset(&any, 0, sizeof any);
	any.sin_family = AF_INET;
	any.sin_port = htons(PORT);
	assert_int_equal(rdma_bind_addr(lis, (struct sockaddr *)&any), 0);
	assert_int_equal(rdma_listen(lis, 8), 0);
	ach = rdma_create_event_channel();
	assert_non_null(ach);

	/* an established connection a - b (no QPs: CONNECT_RESPONSE and rdma_establish) */
	memset(&dst, 0, sizeof dst);
	dst.sin_family = AF_INET;
	dst.sin_port = htons(PORT);
	inet_pton(AF_INET, "192.0.2.66", &dst.sin_addr);
	assert_int_equal(rdma_create_id(ach, &a, NULL, RDMA_PS_TCP), 0);
	assert_int_equal(rdma_resolve_addr(a, NULL, (struct sockaddr *)&dst, 2000), 0);
	expect_ack(ach, RDMA_CM_EVENT_ADDR_RESOLVED, 0, a, NULL);
	assert_int_equal(rdma_resolve_route(a, 2000), 0);
	expect_ack(ach, RDMA_CM_EVENT_ROUTE_RESOLVED, 0, a, NULL);
	assert_int_equal(rdma_connect(a, &cp), 0);
	expect_ack(bch, RDMA_CM_EVENT_CONNECT_REQUEST, 0, NULL, &b);
	cp.qp_num = 0x456;
	assert_int_equal(rdma_accept(b, &cp), 0);
	expect_ack(ach, RDMA_CM_EVENT_CONNECT_RESPONSE, 0, a, NULL);
	assert_int_equal(rdma_establish(a), 0);
	expect_ack(bch, RDMA_CM_EVENT_ESTABLISHED, 0, b, NULL);

	/* rxe_port_down: DOWN and Disabled; the rdma_cm raises nothing */
	port_state(b->verbs, IBV_PORT_ACTIVE, 5);
	assert_int_equal(rdmaemu_ctl_link_set("B", "eth0", 0), 0);
	port_state(b->verbs, IBV_PORT_DOWN, 3);
	port_state(a->verbs, IBV_PORT_ACTIVE, 5);
	cm_test_expect_none(bch);

	/* the DREQs go unanswered: DREQ_ERROR after 16 of them */
	t = cm_test_now_ns();
	assert_int_equal(rdma_disconnect(a), 0);
	expect_ack(ach, RDMA_CM_EVENT_DISCONNECTED, -ETIMEDOUT, a, NULL);
	assert_int_equal(cm_test_now_ns() - t, 98304000000ull);
	cm_test_expect_none(bch);
	assert_int_equal(rdma_destroy_id(a), 0);

	/* up again: B's DREQ meets A's CM, which answers a DREQ of no id with a DREP */
	assert_int_equal(rdmaemu_ctl_link_set("B", "eth0", 1), 0);
	port_state(b->verbs, IBV_PORT_ACTIVE, 5);
	t = cm_test_now_ns();
	assert_int_equal(rdma_disconnect(b), 0);
	expect_ack(bch, RDMA_CM_EVENT_DISCONNECTED, 0, b, NULL);
	assert_true(cm_test_now_ns() - t < 1000000000ull);
	cm_test_expect_none(ach);
	assert_int_equal(rdma_destroy_id(b), 0);
	assert_int_equal(rdma_destroy_id(lis), 0);
	rdma_destroy_event_channel(ach);
	rdma_destroy_event_channel(bch);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dreq_to_a_down_link),
	};

	(void)argc;
	setenv("RDMAEMU_QUIESCE_US", "0", 1);
	verbs_test_init(argv, "rxe-ref2.fabric", NULL, "A");
	if (rdmaemu_ctl_open_host_devices("B")) {
		perror("rdmaemu_ctl_open_host_devices");
		return 99;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
