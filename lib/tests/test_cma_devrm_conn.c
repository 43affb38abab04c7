/* Device removal under connections (docs/cma.md "Address changes and device removal"), hosts
 * A and B of fixtures/rxe-ref2.fabric in one process. B's rxe0 goes while B holds an
 * established connection from A, a request it read but did not accept yet, and a wildcard
 * listener. As Linux 6.1 does it (cma_send_device_removal_put, ucma_event_handler, then
 * ucma_close_id -> rdma_destroy_id -> ib_destroy_cm_id while the device's ib_cm is still
 * there):
 *   - B: one DEVICE_REMOVAL, status 0, for the established id; nothing for the id not yet
 *     accepted (uid 0) nor for the wildcard listener;
 *   - A: DISCONNECTED status 0 (the DREQ of cm_destroy_id on an established connection), then
 *     REJECTED 28 for the pending one (its REJ, IB_CM_REJ_CONSUMER_DEFINED);
 *   - B's ids: rdma_accept ENXIO, rdma_destroy_id 0;
 *   - a new connection from A meets no CM on B (cm_remove_one) and ends UNREACHABLE -110 when
 *     the REQ retries run out.
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
		       struct rdma_cm_id *id)
{
	assert_int_equal(rdma_ack_cm_event(cm_test_expect(ch, type, status, id)), 0);
}

/* An id of A resolved (address and route) towards B:PORT. */
static struct rdma_cm_id *resolve_a(struct rdma_event_channel *ch)
{
	struct rdma_cm_id *id;
	struct sockaddr_in dst;

	memset(&dst, 0, sizeof dst);
	dst.sin_family = AF_INET;
	dst.sin_port = htons(PORT);
	inet_pton(AF_INET, "192.0.2.66", &dst.sin_addr);
	assert_int_equal(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP), 0);
	assert_int_equal(rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 2000), 0);
	expect_ack(ch, RDMA_CM_EVENT_ADDR_RESOLVED, 0, id);
	assert_int_equal(rdma_resolve_route(id, 2000), 0);
	expect_ack(ch, RDMA_CM_EVENT_ROUTE_RESOLVED, 0, id);
	return id;
}

static void test_remove_under_connections(void **state)
{
	struct rdma_conn_param cp = { .qp_num = 0x123, .responder_resources = 1,
				      .initiator_depth = 1 };
	struct rdma_event_channel *ach, *bch;
	struct rdma_cm_id *lis, *a1, *a2, *a3, *b1, *b2;
	struct rdma_cm_event *ev;
	struct sockaddr_in any;
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

	/* an established connection a1 - b1 (no QPs: CONNECT_RESPONSE and rdma_establish) */
	a1 = resolve_a(ach);
	assert_int_equal(rdma_connect(a1, &cp), 0);
	ev = cm_test_expect(bch, RDMA_CM_EVENT_CONNECT_REQUEST, 0, NULL);
	b1 = ev->id;
	assert_int_equal(rdma_ack_cm_event(ev), 0);
	cp.qp_num = 0x456;
	assert_int_equal(rdma_accept(b1, &cp), 0);
	expect_ack(ach, RDMA_CM_EVENT_CONNECT_RESPONSE, 0, a1);
	assert_int_equal(rdma_establish(a1), 0);
	expect_ack(bch, RDMA_CM_EVENT_ESTABLISHED, 0, b1);
	/* a request B has read but not accepted: a2 - b2 */
	a2 = resolve_a(ach);
	cp.qp_num = 0x124;
	assert_int_equal(rdma_connect(a2, &cp), 0);
	ev = cm_test_expect(bch, RDMA_CM_EVENT_CONNECT_REQUEST, 0, NULL);
	b2 = ev->id;
	assert_int_equal(rdma_ack_cm_event(ev), 0);

	t = cm_test_now_ns();
	assert_int_equal(rdmaemu_ctl_device_remove("B", "rxe0"), 0);
	expect_ack(bch, RDMA_CM_EVENT_DEVICE_REMOVAL, 0, b1);
	assert_int_equal(cm_test_now_ns(), t);
	cm_test_expect_none(bch);
	/* A: the DREQ, then the REJ, both sent at the removal */
	expect_ack(ach, RDMA_CM_EVENT_DISCONNECTED, 0, a1);
	expect_ack(ach, RDMA_CM_EVENT_REJECTED, 28, a2);
	assert_int_equal(rdma_destroy_id(a1), 0);
	assert_int_equal(rdma_destroy_id(a2), 0);
	/* B: the ids are closed; only destroy works */
	cp.qp_num = 0x457;
	assert_int_equal(rdma_accept(b2, &cp), -1);
	assert_int_equal(errno, ENXIO);
	assert_int_equal(rdma_disconnect(b1), -1);
	assert_int_equal(errno, ENXIO);
	assert_int_equal(rdma_destroy_id(b1), 0);
	assert_int_equal(rdma_destroy_id(b2), 0);
	cm_test_expect_none(bch);

	/* B's CM is gone: a new REQ is never answered, the REQ retries run out (16 REQs of
	 * 2 x 1024 + 4096 ms with packet lifetime 18: 98.304 s) */
	a3 = resolve_a(ach);
	t = cm_test_now_ns();
	cp.qp_num = 0x125;
	assert_int_equal(rdma_connect(a3, &cp), 0);
	expect_ack(ach, RDMA_CM_EVENT_UNREACHABLE, -ETIMEDOUT, a3);
	assert_int_equal(cm_test_now_ns() - t, 98304000000ull);
	cm_test_expect_none(bch);
	assert_int_equal(rdma_destroy_id(a3), 0);
	assert_int_equal(rdma_destroy_id(lis), 0);
	rdma_destroy_event_channel(ach);
	rdma_destroy_event_channel(bch);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_remove_under_connections),
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
