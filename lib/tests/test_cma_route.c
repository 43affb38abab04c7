/* librdmacm's address, route and multicast calls over the emulated kernel's network modules
 * (emu/rdma_cm/cma_addr.c, cma_route.c, cma_mcast.c), on rxe-ref2 as node A:
 *  - rdma_resolve_addr / rdma_resolve_route asynchronously: the device, the addresses and the
 *    path record the library converts into id->route.path_rec;
 *  - synchronous ids: an unanswered ARP gives -1/ETIMEDOUT after exactly the timeout, no
 *    route -1/ENETUNREACH at once;
 *  - rdma_join_multicast / rdma_leave_multicast with the event's ud parameters (row 221/222).
 * Re-executes itself on the emulated libibverbs (verbs_test.h). */
#include "config.h"

#include <arpa/inet.h>
#include <rdma/rdma_cma.h>
#include <infiniband/sa.h>

#include "emu/verbs/tests/verbs_test.h"
#include "rdmaemu/ctl.h"

#define MS 1000000ull

static void sin4(struct sockaddr_in *s, const char *a, uint16_t port)
{
	memset(s, 0, sizeof(*s));
	s->sin_family = AF_INET;
	s->sin_port = htons(port);
	assert_int_equal(inet_pton(AF_INET, a, &s->sin_addr), 1);
}

static void gid4(uint8_t gid[16], const char *a)
{
	memset(gid, 0, 16);
	gid[10] = gid[11] = 0xff;
	assert_int_equal(inet_pton(AF_INET, a, gid + 12), 1);
}

static uint64_t vnow(void)
{
	uint64_t t;

	assert_int_equal(rdmaemu_ctl_now_ns(&t), 0);
	return t;
}

static void test_async_addr_and_route(void **state)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;
	struct sockaddr_in dst;
	struct ibv_sa_path_rec *p;
	uint8_t want[16];

	(void)state;
	assert_non_null(ch);
	assert_int_equal(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP), 0);
	sin4(&dst, "192.0.2.66", 7471);
	assert_int_equal(rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 2000), 0);
	assert_int_equal(rdma_get_cm_event(ch, &ev), 0);
	assert_int_equal(ev->event, RDMA_CM_EVENT_ADDR_RESOLVED);
	assert_int_equal(ev->status, 0);
	assert_int_equal(rdma_ack_cm_event(ev), 0);
	assert_non_null(id->verbs);
	assert_non_null(id->pd);
	assert_int_equal(id->port_num, 1);
	assert_string_equal(inet_ntoa(((struct sockaddr_in *)rdma_get_local_addr(id))->sin_addr),
			    "192.0.2.65");
	assert_true(ntohs(rdma_get_src_port(id)) >= 32768);
	assert_int_equal(rdma_get_dst_port(id), htons(7471));
	gid4(want, "192.0.2.65");
	assert_memory_equal(id->route.addr.addr.ibaddr.sgid.raw, want, 16);
	gid4(want, "192.0.2.66");
	assert_memory_equal(id->route.addr.addr.ibaddr.dgid.raw, want, 16);

	assert_int_equal(rdma_resolve_route(id, 2000), 0);
	assert_int_equal(rdma_get_cm_event(ch, &ev), 0);
	assert_int_equal(ev->event, RDMA_CM_EVENT_ROUTE_RESOLVED);
	assert_int_equal(ev->status, 0);
	assert_int_equal(rdma_ack_cm_event(ev), 0);
	/* row 141: one path, its GIDs those of the two addresses */
	assert_int_equal(id->route.num_paths, 1);
	p = &id->route.path_rec[0];
	gid4(want, "192.0.2.65");
	assert_memory_equal(p->sgid.raw, want, 16);
	gid4(want, "192.0.2.66");
	assert_memory_equal(p->dgid.raw, want, 16);
	assert_int_equal(p->dlid, htons(0x0102));
	assert_int_equal(p->slid, 0);
	assert_int_equal(p->hop_limit, 64);
	assert_int_equal(p->traffic_class, 0);
	assert_int_equal(p->reversible, 1);
	assert_int_equal(p->pkey, htons(0xffff));
	assert_int_equal(p->sl, 0);
	assert_int_equal(p->mtu, IBV_MTU_1024);
	assert_int_equal(p->rate, 0);
	assert_int_equal(p->packet_life_time, 18);
	assert_int_equal(ntohl(p->flow_label),
			 (ntohs(rdma_get_src_port(id)) * 31u + 7471u) & 0xfffff);
	assert_int_equal(p->preference, 0x2b);
	/* row 142 */
	errno = 0;
	assert_int_equal(rdma_resolve_route(id, 2000), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(rdma_destroy_id(id), 0);
	rdma_destroy_event_channel(ch);
}

static void test_sync_failures(void **state)
{
	struct rdma_cm_id *id;
	struct sockaddr_in dst;
	uint64_t t0;

	(void)state;
	assert_int_equal(rdma_create_id(NULL, &id, NULL, RDMA_PS_TCP), 0);
	/* nobody has 192.0.2.70 in A's subnet: the ARP goes unanswered */
	sin4(&dst, "192.0.2.70", 7471);
	t0 = vnow();
	errno = 0;
	assert_int_equal(rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 500), -1);
	assert_int_equal(errno, ETIMEDOUT);
	assert_int_equal(vnow() - t0, 500 * MS);
	/* no route: synchronously */
	sin4(&dst, "203.0.113.9", 7471);
	errno = 0;
	assert_int_equal(rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 500), -1);
	assert_int_equal(errno, ENETUNREACH);
	/* and the id may still resolve */
	sin4(&dst, "192.0.2.66", 7471);
	assert_int_equal(rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 500), 0);
	assert_int_equal(rdma_resolve_route(id, 500), 0);
	assert_int_equal(id->route.num_paths, 1);
	assert_int_equal(rdma_destroy_id(id), 0);
}

static void test_multicast(void **state)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;
	struct sockaddr_in src, grp;
	uint8_t want[16];
	int ctx;

	(void)state;
	assert_int_equal(rdma_create_id(ch, &id, NULL, RDMA_PS_UDP), 0);
	sin4(&grp, "239.1.1.1", 0);
	errno = 0;
	assert_int_equal(rdma_join_multicast(id, (struct sockaddr *)&grp, &ctx), -1); /* row 220 */
	assert_int_equal(errno, EINVAL);
	sin4(&src, "192.0.2.65", 0);
	assert_int_equal(rdma_bind_addr(id, (struct sockaddr *)&src), 0);
	assert_int_equal(rdma_join_multicast(id, (struct sockaddr *)&grp, &ctx), 0);
	assert_int_equal(rdma_get_cm_event(ch, &ev), 0);
	/* rows 221, 222 */
	assert_int_equal(ev->event, RDMA_CM_EVENT_MULTICAST_JOIN);
	assert_int_equal(ev->status, 0);
	assert_ptr_equal(ev->param.ud.private_data, &ctx);
	assert_int_equal(ev->param.ud.private_data_len, 0);
	assert_int_equal(ev->param.ud.qp_num, 0xffffff);
	assert_int_equal(ev->param.ud.qkey, 0x01234567);
	assert_int_equal(ev->param.ud.ah_attr.is_global, 1);
	gid4(want, "239.1.1.1");
	assert_memory_equal(ev->param.ud.ah_attr.grh.dgid.raw, want, 16);
	assert_int_equal(ev->param.ud.ah_attr.grh.hop_limit, 64);
	assert_int_equal(ev->param.ud.ah_attr.port_num, 1);
	assert_int_equal(rdma_ack_cm_event(ev), 0);
	/* row 226: the wildcard group on RoCE */
	sin4(&grp, "0.0.0.0", 0);
	errno = 0;
	assert_int_equal(rdma_join_multicast(id, (struct sockaddr *)&grp, &ctx), -1);
	assert_int_equal(errno, EINVAL);
	sin4(&grp, "239.1.1.1", 0);
	assert_int_equal(rdma_leave_multicast(id, (struct sockaddr *)&grp), 0);
	errno = 0;
	assert_int_equal(rdma_leave_multicast(id, (struct sockaddr *)&grp), -1);
	assert_int_equal(errno, EADDRNOTAVAIL);
	assert_int_equal(rdma_destroy_id(id), 0);
	rdma_destroy_event_channel(ch);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_async_addr_and_route),
		cmocka_unit_test(test_sync_failures),
		cmocka_unit_test(test_multicast),
	};

	(void)argc;
	/* virtual time moves only when the test waits: exact times even under valgrind */
	setenv("RDMAEMU_QUIESCE_US", "0", 1);
	verbs_test_init(argv, "rxe-ref2.fabric", NULL, "A");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
