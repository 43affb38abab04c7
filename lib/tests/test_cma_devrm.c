/* Device removal (rdmaemu_ctl_device_remove, docs/cma.md "Address changes and device removal")
 * on fixtures/rxe-ref.fabric, the sequence probes/cma/devrm_probe.c measured on Linux 6.1 +
 * rdma-core 44 + rxe (`rdma link delete rxe0`): a listener bound to 192.0.2.1 and an id
 * resolved to it get one DEVICE_REMOVAL each, status 0, in that order and at the instant of
 * the removal (and so does an id bound there whose resolution is then cancelled); the id bound
 * on rxe1, an idle id and a wildcard listener get nothing; later commands on the removed ids
 * (rdma_leave_multicast included) fail with ENXIO while rdma_destroy_id returns 0; the open rxe0
 * context gets no async event and still works; rxe0 leaves ibv_get_device_list and
 * rdma_get_devices; a new bind to 192.0.2.1 fails with ENODEV; the wildcard listener still
 * takes requests through rxe1. Re-executes itself on the emulated libibverbs (verbs_test.h). */
#include "config.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <poll.h>
#include <rdma/rdma_cma.h>

#include "emu/verbs/tests/verbs_test.h"
#include "lib/tests/cm_event_test.h"
#include "rdmaemu/ctl.h"

static uint64_t now_ns(void)
{
	uint64_t t = 0;

	assert_int_equal(rdmaemu_ctl_now_ns(&t), 0);
	return t;
}

static struct sockaddr_in sin4(const char *ip, uint16_t port)
{
	struct sockaddr_in s;

	memset(&s, 0, sizeof s);
	s.sin_family = AF_INET;
	s.sin_port = htons(port);
	assert_int_equal(inet_pton(AF_INET, ip, &s.sin_addr), 1);
	return s;
}

/* The next event of ch, of `type` with `status`, for `id`; acked. */
static void expect_ack(struct rdma_event_channel *ch, enum rdma_cm_event_type type, int status,
		       struct rdma_cm_id *id)
{
	assert_int_equal(rdma_ack_cm_event(cm_test_expect(ch, type, status, id)), 0);
}

/* ch has no event queued: its fd is not readable and a non-blocking get says EAGAIN. */
static void expect_none(struct rdma_event_channel *ch)
{
	struct pollfd p = { ch->fd, POLLIN, 0 };
	struct rdma_cm_event *ev;
	int fl = fcntl(ch->fd, F_GETFL);

	assert_int_equal(poll(&p, 1, 0), 0);
	assert_int_equal(fcntl(ch->fd, F_SETFL, fl | O_NONBLOCK), 0);
	assert_int_equal(rdma_get_cm_event(ch, &ev), -1);
	assert_int_equal(errno, EAGAIN);
	assert_int_equal(fcntl(ch->fd, F_SETFL, fl), 0);
}

static const char *dev_name(struct rdma_cm_id *id)
{
	return id->verbs ? ibv_get_device_name(id->verbs->device) : "-";
}

static void test_remove_rxe0(void **state)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_id *lis, *other, *res, *idle, *wild, *after, *cli, *slow, *ud;
	struct ibv_device **dl;
	struct ibv_context *own, **cl;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct rdma_cm_event *ev;
	struct rdma_conn_param cp;
	struct sockaddr_in a, mc;
	struct pollfd p;
	uint64_t t0;
	int n;

	(void)state;
	assert_non_null(ch);
	/* the probe's ids, in its order */
	assert_int_equal(rdma_create_id(ch, &lis, "listener", RDMA_PS_TCP), 0);
	a = sin4("192.0.2.1", 7000);
	assert_int_equal(rdma_bind_addr(lis, (struct sockaddr *)&a), 0);
	assert_int_equal(rdma_listen(lis, 4), 0);
	assert_int_equal(rdma_create_id(ch, &other, "other-dev", RDMA_PS_TCP), 0);
	a = sin4("192.0.2.17", 7000);
	assert_int_equal(rdma_bind_addr(other, (struct sockaddr *)&a), 0);
	assert_string_equal(dev_name(other), "rxe1");
	assert_int_equal(rdma_create_id(ch, &res, "resolved", RDMA_PS_TCP), 0);
	a = sin4("192.0.2.1", 7001);
	assert_int_equal(rdma_resolve_addr(res, NULL, (struct sockaddr *)&a, 2000), 0);
	expect_ack(ch, RDMA_CM_EVENT_ADDR_RESOLVED, 0, res);
	assert_string_equal(dev_name(res), "rxe0");
	assert_int_equal(rdma_create_id(ch, &idle, "idle", RDMA_PS_TCP), 0);
	/* beyond the probe: a multicast membership of the resolved id, an id bound to
	 * 192.0.2.1 resolving towards 192.0.2.30 (nobody answers: ADDR_ERROR after 2 s) */
	mc = sin4("239.1.1.1", 0);
	assert_int_equal(rdma_join_multicast(res, (struct sockaddr *)&mc, NULL), -1);
	assert_int_equal(errno, EINVAL); /* not a UD id (measured, devrm_probe2) */
	assert_int_equal(rdma_create_id(ch, &ud, "udp", RDMA_PS_UDP), 0);
	a = sin4("192.0.2.1", 7002);
	assert_int_equal(rdma_resolve_addr(ud, NULL, (struct sockaddr *)&a, 2000), 0);
	expect_ack(ch, RDMA_CM_EVENT_ADDR_RESOLVED, 0, ud);
	assert_int_equal(rdma_join_multicast(ud, (struct sockaddr *)&mc, NULL), 0);
	expect_ack(ch, RDMA_CM_EVENT_MULTICAST_JOIN, 0, ud);
	assert_int_equal(rdma_create_id(ch, &slow, "resolving", RDMA_PS_TCP), 0);
	a = sin4("192.0.2.1", 7003);
	assert_int_equal(rdma_bind_addr(slow, (struct sockaddr *)&a), 0);
	a = sin4("192.0.2.30", 7003);
	assert_int_equal(rdma_resolve_addr(slow, NULL, (struct sockaddr *)&a, 2000), 0);
	/* and a wildcard listener, which spans both devices */
	assert_int_equal(rdma_create_id(ch, &wild, "wildcard", RDMA_PS_TCP), 0);
	a = sin4("0.0.0.0", 7100);
	assert_int_equal(rdma_bind_addr(wild, (struct sockaddr *)&a), 0);
	assert_int_equal(rdma_listen(wild, 4), 0);
	dl = ibv_get_device_list(&n);
	assert_int_equal(n, 2);
	assert_string_equal(ibv_get_device_name(dl[0]), "rxe0");
	own = ibv_open_device(dl[0]);
	assert_non_null(own);
	ibv_free_device_list(dl);

	t0 = now_ns();
	assert_int_equal(rdmaemu_ctl_device_remove(NULL, "rxe0"), 0);
	/* attach order, status 0, at the instant of the removal */
	expect_ack(ch, RDMA_CM_EVENT_DEVICE_REMOVAL, 0, lis);
	expect_ack(ch, RDMA_CM_EVENT_DEVICE_REMOVAL, 0, res);
	expect_ack(ch, RDMA_CM_EVENT_DEVICE_REMOVAL, 0, ud);
	expect_ack(ch, RDMA_CM_EVENT_DEVICE_REMOVAL, 0, slow);
	assert_int_equal(now_ns(), t0);
	expect_none(ch);
	/* no ADDR_ERROR when the resolution's timeout passes (close_work cancelled it, and
	 * addr_handler ignores an id no longer in ADDR_QUERY) */
	assert_int_equal(rdmaemu_ctl_advance_ns(3000000000ull), 0);
	expect_none(ch);
	/* gone: a second removal finds no rxe0 */
	assert_int_equal(rdmaemu_ctl_device_remove(NULL, "rxe0"), -1);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(rdmaemu_ctl_device_remove("nosuchhost", "rxe1"), -1);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(rdmaemu_ctl_device_remove(NULL, NULL), -1);
	assert_int_equal(errno, EINVAL);

	/* the own context: no async event (rxe has no disassociate), and it keeps working */
	p = (struct pollfd){ own->async_fd, POLLIN, 0 };
	assert_int_equal(poll(&p, 1, 0), 0);
	pd = ibv_alloc_pd(own);
	assert_non_null(pd);
	cq = ibv_create_cq(own, 4, NULL, NULL, 0);
	assert_non_null(cq);
	assert_int_equal(ibv_destroy_cq(cq), 0);
	assert_int_equal(ibv_dealloc_pd(pd), 0);

	/* the removed ids: ucma's close_work destroyed their kernel ids */
	assert_int_equal(rdma_resolve_route(res, 2000), -1);
	assert_int_equal(errno, ENXIO);
	assert_int_equal(rdma_listen(lis, 4), -1);
	assert_int_equal(errno, ENXIO);
	assert_int_equal(rdma_leave_multicast(ud, (struct sockaddr *)&mc), -1);
	assert_int_equal(errno, ENXIO);
	assert_int_equal(rdma_destroy_id(ud), 0);
	/* close_work released the port of the still existing id: the wildcard may take it */
	assert_int_equal(rdma_create_id(ch, &after, "port", RDMA_PS_TCP), 0);
	a = sin4("0.0.0.0", 7003);
	assert_int_equal(rdma_bind_addr(after, (struct sockaddr *)&a), 0);
	assert_int_equal(rdma_destroy_id(after), 0);
	assert_int_equal(rdma_destroy_id(slow), 0);
	/* the others are untouched */
	assert_int_equal(rdma_listen(idle, 4), 0);
	assert_string_equal(dev_name(other), "rxe1");
	assert_int_equal(rdma_destroy_id(lis), 0);
	assert_int_equal(rdma_destroy_id(res), 0);
	assert_int_equal(ibv_close_device(own), 0);

	/* the device lists */
	dl = ibv_get_device_list(&n);
	assert_int_equal(n, 1);
	assert_string_equal(ibv_get_device_name(dl[0]), "rxe1");
	assert_null(dl[1]);
	ibv_free_device_list(dl);
	cl = rdma_get_devices(&n);
	assert_non_null(cl);
	assert_int_equal(n, 1);
	assert_string_equal(ibv_get_device_name(cl[0]->device), "rxe1");
	assert_ptr_equal(cl[0], other->verbs);
	rdma_free_devices(cl);

	/* the netdev d0 stays, without RDMA device */
	assert_int_equal(rdma_create_id(ch, &after, "after", RDMA_PS_TCP), 0);
	a = sin4("192.0.2.1", 7002);
	assert_int_equal(rdma_bind_addr(after, (struct sockaddr *)&a), -1);
	assert_int_equal(errno, ENODEV);
	assert_int_equal(rdma_destroy_id(after), 0);

	/* the wildcard listener still listens, through rxe1 */
	assert_int_equal(rdma_create_id(ch, &cli, "client", RDMA_PS_TCP), 0);
	a = sin4("192.0.2.17", 7100);
	assert_int_equal(rdma_resolve_addr(cli, NULL, (struct sockaddr *)&a, 2000), 0);
	expect_ack(ch, RDMA_CM_EVENT_ADDR_RESOLVED, 0, cli);
	assert_string_equal(dev_name(cli), "rxe1");
	assert_int_equal(rdma_resolve_route(cli, 2000), 0);
	expect_ack(ch, RDMA_CM_EVENT_ROUTE_RESOLVED, 0, cli);
	memset(&cp, 0, sizeof cp);
	assert_int_equal(rdma_connect(cli, &cp), 0);
	assert_int_equal(rdma_get_cm_event(ch, &ev), 0);
	assert_int_equal(ev->event, RDMA_CM_EVENT_CONNECT_REQUEST);
	assert_ptr_equal(ev->listen_id, wild);
	assert_string_equal(dev_name(ev->id), "rxe1");
	assert_int_equal(rdma_reject(ev->id, NULL, 0), 0);
	assert_int_equal(rdma_destroy_id(ev->id), 0);
	assert_int_equal(rdma_ack_cm_event(ev), 0);
	expect_ack(ch, RDMA_CM_EVENT_REJECTED, 28, cli);

	assert_int_equal(rdma_destroy_id(cli), 0);
	assert_int_equal(rdma_destroy_id(wild), 0);
	assert_int_equal(rdma_destroy_id(idle), 0);
	assert_int_equal(rdma_destroy_id(other), 0);
	rdma_destroy_event_channel(ch);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_remove_rxe0),
	};

	(void)argc;
	setenv("RDMAEMU_QUIESCE_US", "0", 1);
	verbs_test_init(argv, "rxe-ref.fabric", NULL, "rxe-ref");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
