/* AF_IB on an InfiniBand port (fixtures/ib.fabric, node ib-a; docs/cma.md "AF_IB"): a bind to
 * the port's own GID, rdma_resolve_addr to a peer's GID (cma_resolve_ib_dev), the route from
 * the SA, and the loopback to the own GID. The real-stack VM has no InfiniBand: these values
 * follow the kernel source (cma.c cma_resolve_ib_dev, cma_translate_ib, ucma_query_gid).
 * Re-executes itself on the emulated libibverbs (verbs_test.h). */
#include "config.h"

#include <arpa/inet.h>
#include <endian.h>
#include <rdma/rdma_cma.h>
#include <infiniband/ib.h>
#include <infiniband/sa.h>

#include "emu/verbs/tests/verbs_test.h"
#include "rdmaemu/ctl.h"

/* fe80::2:c903:0:a01 (ib-a), fe80::2:c903:0:b01 (ib-b) */
static const uint8_t GID_A[16] = { 0xfe, 0x80, [8] = 0x00, 0x02, 0xc9, 0x03, 0x00, 0x00, 0x0a,
				   0x01 };
static const uint8_t GID_B[16] = { 0xfe, 0x80, [8] = 0x00, 0x02, 0xc9, 0x03, 0x00, 0x00, 0x0b,
				   0x01 };

static struct sockaddr_ib sib_of(const uint8_t *gid, uint16_t pkey, uint64_t sid, uint64_t mask)
{
	struct sockaddr_ib s;

	memset(&s, 0, sizeof(s));
	s.sib_family = AF_IB;
	s.sib_pkey = htons(pkey);
	if (gid)
		memcpy(s.sib_addr.sib_raw, gid, 16);
	s.sib_sid = htobe64(sid);
	s.sib_sid_mask = htobe64(mask);
	return s;
}

static const struct sockaddr_ib *local(struct rdma_cm_id *id)
{
	return (const struct sockaddr_ib *)rdma_get_local_addr(id);
}

static void expect(struct rdma_event_channel *ch, enum rdma_cm_event_type type)
{
	struct rdma_cm_event *ev;

	assert_int_equal(rdma_get_cm_event(ch, &ev), 0);
	assert_int_equal(ev->event, type);
	assert_int_equal(ev->status, 0);
	assert_int_equal(rdma_ack_cm_event(ev), 0);
}

static void test_bind_own_gid(void **state)
{
	struct sockaddr_ib s = sib_of(GID_A, 0xffff, RDMA_IB_PS_IB | 7100, ~0ull);
	struct rdma_cm_id *id;

	(void)state;
	assert_int_equal(rdma_create_id(NULL, &id, NULL, RDMA_PS_IB), 0);
	assert_int_equal(rdma_bind_addr(id, (struct sockaddr *)&s), 0);
	assert_non_null(id->verbs);
	assert_string_equal(ibv_get_device_name(id->verbs->device), "mlx5_0");
	assert_int_equal(id->port_num, 1);
	assert_memory_equal(local(id)->sib_addr.sib_raw, GID_A, 16);
	assert_int_equal(be64toh(local(id)->sib_sid), RDMA_IB_PS_IB | 7100);
	/* QUERY GID of an AF_IB id: the address itself */
	assert_memory_equal(id->route.addr.addr.ibaddr.sgid.raw, GID_A, 16);
	assert_int_equal(ntohs(id->route.addr.addr.ibaddr.pkey), 0xffff);
	/* a GID of another host is nobody's here */
	s = sib_of(GID_B, 0xffff, RDMA_IB_PS_IB | 7101, ~0ull);
	assert_int_equal(rdma_destroy_id(id), 0);
	assert_int_equal(rdma_create_id(NULL, &id, NULL, RDMA_PS_IB), 0);
	errno = 0;
	assert_int_equal(rdma_bind_addr(id, (struct sockaddr *)&s), -1);
	assert_int_equal(errno, ENODEV);
	assert_int_equal(rdma_destroy_id(id), 0);
}

static void test_resolve_peer_gid(void **state)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct sockaddr_ib d = sib_of(GID_B, 0xffff, RDMA_IB_IP_PS_TCP | 7471, ~0ull);
	struct ibv_sa_path_rec *p;
	struct rdma_cm_id *id;
	uint64_t t0, t1;

	(void)state;
	assert_non_null(ch);
	assert_int_equal(rdma_create_id(ch, &id, NULL, RDMA_PS_IB), 0);
	assert_int_equal(rdmaemu_ctl_now_ns(&t0), 0);
	assert_int_equal(rdma_resolve_addr(id, NULL, (struct sockaddr *)&d, 2000), 0);
	expect(ch, RDMA_CM_EVENT_ADDR_RESOLVED);
	assert_int_equal(rdmaemu_ctl_now_ns(&t1), 0);
	assert_int_equal(t1, t0); /* no ARP: the GID is the address */
	assert_int_equal(id->port_num, 1);
	/* the source takes the port's GID of the destination's subnet and the P_Key */
	assert_memory_equal(local(id)->sib_addr.sib_raw, GID_A, 16);
	assert_int_equal(ntohs(local(id)->sib_pkey), 0xffff);
	assert_int_equal(be64toh(local(id)->sib_sid) >> 16, RDMA_IB_PS_IB >> 16);
	assert_memory_equal(id->route.addr.addr.ibaddr.sgid.raw, GID_A, 16);
	assert_memory_equal(id->route.addr.addr.ibaddr.dgid.raw, GID_B, 16);
	/* the route: a PathRecord from the SA between the two GIDs */
	assert_int_equal(rdma_resolve_route(id, 2000), 0);
	expect(ch, RDMA_CM_EVENT_ROUTE_RESOLVED);
	assert_int_equal(id->route.num_paths, 1);
	p = &id->route.path_rec[0];
	assert_memory_equal(p->sgid.raw, GID_A, 16);
	assert_memory_equal(p->dgid.raw, GID_B, 16);
	assert_int_equal(ntohs(p->slid), 2);
	assert_int_equal(ntohs(p->dlid), 3);
	assert_int_equal(ntohs(p->pkey), 0xffff);
	assert_int_equal(rdma_destroy_id(id), 0);

	/* a P_Key the port does not have: ENODEV at once */
	d.sib_pkey = htons(0x8001);
	assert_int_equal(rdma_create_id(ch, &id, NULL, RDMA_PS_IB), 0);
	errno = 0;
	assert_int_equal(rdma_resolve_addr(id, NULL, (struct sockaddr *)&d, 2000), -1);
	assert_int_equal(errno, ENODEV);
	assert_int_equal(rdma_destroy_id(id), 0);
	rdma_destroy_event_channel(ch);
}

/* An AF_IB group address is the MGID itself (cma_set_mgid): no IP mapping, no RDMA CM
 * signature for a UDP id. */
static void test_join_af_ib_group(void **state)
{
	static const uint8_t MGID[16] = { 0xff, 0x12, 0x40, 0x1b, 0xff, 0xff, [15] = 0x42 };
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct sockaddr_ib s = sib_of(GID_A, 0xffff, RDMA_IB_IP_PS_UDP | 7200, ~0ull);
	struct sockaddr_ib grp = sib_of(MGID, 0xffff, 0, 0);
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;
	int ctx;

	(void)state;
	assert_non_null(ch);
	assert_int_equal(rdma_create_id(ch, &id, NULL, RDMA_PS_UDP), 0);
	assert_int_equal(rdma_bind_addr(id, (struct sockaddr *)&s), 0);
	assert_int_equal(rdma_join_multicast(id, (struct sockaddr *)&grp, &ctx), 0);
	assert_int_equal(rdma_get_cm_event(ch, &ev), 0);
	assert_int_equal(ev->event, RDMA_CM_EVENT_MULTICAST_JOIN);
	assert_int_equal(ev->status, 0);
	assert_ptr_equal(ev->param.ud.private_data, &ctx);
	assert_memory_equal(ev->param.ud.ah_attr.grh.dgid.raw, MGID, 16);
	assert_int_equal(ev->param.ud.qp_num, 0xffffff);
	assert_int_equal(rdma_ack_cm_event(ev), 0);
	assert_int_equal(rdma_leave_multicast(id, (struct sockaddr *)&grp), 0);
	assert_int_equal(rdma_destroy_id(id), 0);
	rdma_destroy_event_channel(ch);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bind_own_gid),
		cmocka_unit_test(test_resolve_peer_gid),
		cmocka_unit_test(test_join_af_ib_group),
	};

	(void)argc;
	setenv("RDMAEMU_QUIESCE_US", "0", 1);
	verbs_test_init(argv, "ib.fabric", NULL, "ib-a");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
