/* AF_IB in librdmacm and the emulated kernel, on rxe-ref (docs/cma.md "AF_IB"): the library's
 * af_ib_support probe, AF_IB binds and their port spaces, and rdma_resolve_addr to AF_IB
 * destinations on a RoCE port. Every expected value is what probes/cma/afib_probe.c printed on
 * Linux 6.1 + rdma-core 44 + rxe (scripts/rxe-vm), except the ephemeral ports, which are
 * random there: here they are checked for their range only.
 * Re-executes itself on the emulated libibverbs (verbs_test.h). */
#include "config.h"

#include <arpa/inet.h>
#include <endian.h>
#include <rdma/rdma_cma.h>
#include <infiniband/ib.h>

#include "emu/verbs/tests/verbs_test.h"
#include "rdmaemu/ctl.h"

/* rxe-ref's GIDs: 0 = fe80:: from MAC 02:00:00:00:01:01, 1 = ::ffff:192.0.2.1 */
static const uint8_t GID0[16] = { 0xfe, 0x80, [8] = 0x00, 0x00, 0x00, 0xff, 0xfe, 0x00, 0x01,
				  0x01 };
static const uint8_t GID1[16] = { [10] = 0xff, 0xff, 192, 0, 2, 1 };
static const uint8_t ONE[16] = { [15] = 1 };
static const uint8_t ZERO[16];

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

static uint64_t sid_of(const struct sockaddr_ib *s)
{
	return be64toh(s->sib_sid);
}

/* A sync id of port space ps binds s: the call's result and errno (0 on success). */
static int bind_one(enum rdma_port_space ps, struct sockaddr_ib s, struct rdma_cm_id **out)
{
	struct rdma_cm_id *id;
	int ret;

	assert_int_equal(rdma_create_id(NULL, &id, NULL, ps), 0);
	errno = 0;
	ret = rdma_bind_addr(id, (struct sockaddr *)&s) ? errno : 0;
	if (out && !ret)
		*out = id;
	else
		assert_int_equal(rdma_destroy_id(id), 0);
	return ret;
}

static void assert_ephemeral(uint64_t sid, uint64_t prefix)
{
	assert_int_equal(sid & ~0xffffull, prefix);
	assert_in_range(sid & 0xffff, 32768, 60999);
}

static void test_bind_and_port_spaces(void **state)
{
	struct rdma_cm_id *id, *b;
	struct sockaddr_in sin;

	(void)state;
	/* the library's own probe: PS_IB id, wildcard, TCP prefix under the port-space mask */
	assert_int_equal(bind_one(RDMA_PS_IB, sib_of(NULL, 0, RDMA_IB_IP_PS_TCP,
						     RDMA_IB_IP_PS_MASK), &id), 0);
	assert_int_equal(local(id)->sib_family, AF_IB);
	assert_memory_equal(local(id)->sib_addr.sib_raw, ZERO, 16);
	assert_int_equal(local(id)->sib_pkey, 0);
	assert_ephemeral(sid_of(local(id)), RDMA_IB_IP_PS_TCP);
	assert_int_equal(be64toh(local(id)->sib_sid_mask), ~0ull);
	assert_int_equal(ntohs(rdma_get_src_port(id)), sid_of(local(id)) & 0xffff);
	assert_int_equal(rdma_get_peer_addr(id)->sa_family, AF_IB);
	assert_int_equal(((struct sockaddr_ib *)rdma_get_peer_addr(id))->sib_sid, 0);
	assert_null(id->verbs);
	assert_int_equal(rdma_destroy_id(id), 0);

	/* no prefix at all: an RDMA_PS_IB id takes the IB port space */
	assert_int_equal(bind_one(RDMA_PS_IB, sib_of(NULL, 0, 0, 0), &id), 0);
	assert_ephemeral(sid_of(local(id)), RDMA_IB_PS_IB);
	assert_int_equal(rdma_destroy_id(id), 0);
	/* a port under a full mask is kept */
	assert_int_equal(bind_one(RDMA_PS_IB, sib_of(NULL, 0, RDMA_IB_PS_IB | 7000, ~0ull), &id),
			 0);
	assert_int_equal(sid_of(local(id)), 0x13f1b58);
	assert_int_equal(ntohs(rdma_get_src_port(id)), 7000);
	assert_int_equal(rdma_destroy_id(id), 0);
	/* a port outside the mask is not: cma_port reads 0 and an ephemeral one is taken */
	assert_int_equal(bind_one(RDMA_PS_TCP, sib_of(NULL, 0, RDMA_IB_IP_PS_TCP | 7001,
						      RDMA_IB_IP_PS_MASK), &id), 0);
	assert_ephemeral(sid_of(local(id)), RDMA_IB_IP_PS_TCP);
	assert_int_not_equal(sid_of(local(id)) & 0xffff, 7001);
	assert_int_equal(rdma_destroy_id(id), 0);

	/* a prefix the id's port space may not take */
	assert_int_equal(bind_one(RDMA_PS_UDP, sib_of(NULL, 0, RDMA_IB_IP_PS_TCP,
						      RDMA_IB_IP_PS_MASK), NULL), EPROTONOSUPPORT);
	assert_int_equal(bind_one(RDMA_PS_TCP, sib_of(NULL, 0, RDMA_IB_PS_IB,
						      RDMA_IB_IP_PS_MASK), NULL), EPROTONOSUPPORT);
	assert_int_equal(bind_one(RDMA_PS_IPOIB, sib_of(NULL, 0, RDMA_IB_IP_PS_TCP,
							RDMA_IB_IP_PS_MASK), NULL), EPROTONOSUPPORT);
	/* rxe's own GIDs are no AF_IB source: ENODEV, with or without a P_Key */
	assert_int_equal(bind_one(RDMA_PS_IB, sib_of(GID0, 0, RDMA_IB_IP_PS_TCP | 7002,
						     RDMA_IB_IP_PS_MASK), NULL), ENODEV);
	assert_int_equal(bind_one(RDMA_PS_IB, sib_of(GID1, 0, RDMA_IB_IP_PS_TCP | 7003,
						     RDMA_IB_IP_PS_MASK), NULL), ENODEV);
	assert_int_equal(bind_one(RDMA_PS_IB, sib_of(GID0, 0xffff, RDMA_IB_IP_PS_TCP | 7004,
						     RDMA_IB_IP_PS_MASK), NULL), ENODEV);

	/* one TCP port space for AF_IB TCP service IDs and AF_INET TCP ids */
	assert_int_equal(bind_one(RDMA_PS_TCP, sib_of(NULL, 0, RDMA_IB_IP_PS_TCP | 7010, ~0ull),
				  &id), 0);
	assert_int_equal(rdma_create_id(NULL, &b, NULL, RDMA_PS_TCP), 0);
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons(7010);
	errno = 0;
	assert_int_equal(rdma_bind_addr(b, (struct sockaddr *)&sin), -1);
	assert_int_equal(errno, EADDRNOTAVAIL);
	/* and the UDP one is another space */
	assert_int_equal(rdma_destroy_id(b), 0);
	assert_int_equal(rdma_create_id(NULL, &b, NULL, RDMA_PS_UDP), 0);
	assert_int_equal(rdma_bind_addr(b, (struct sockaddr *)&sin), 0);
	assert_int_equal(rdma_destroy_id(b), 0);
	assert_int_equal(rdma_destroy_id(id), 0);
}

/* rdma_resolve_addr(NULL, dst) on an async PS_IB id: the call's errno, or 0 and the event. */
static int resolve(struct rdma_event_channel *ch, struct rdma_cm_id **idp, struct sockaddr *src,
		   struct sockaddr_ib dst)
{
	struct rdma_cm_event *ev;
	uint64_t t0, t1;

	assert_int_equal(rdma_create_id(ch, idp, NULL, RDMA_PS_IB), 0);
	assert_int_equal(rdmaemu_ctl_now_ns(&t0), 0);
	errno = 0;
	if (rdma_resolve_addr(*idp, src, (struct sockaddr *)&dst, 2000))
		return errno;
	assert_int_equal(rdma_get_cm_event(ch, &ev), 0);
	assert_int_equal(ev->event, RDMA_CM_EVENT_ADDR_RESOLVED);
	assert_int_equal(ev->status, 0);
	assert_int_equal(rdma_ack_cm_event(ev), 0);
	/* no neighbour to ask: resolved from the work queue at the same virtual instant */
	assert_int_equal(rdmaemu_ctl_now_ns(&t1), 0);
	assert_int_equal(t1, t0);
	return 0;
}

static void test_resolve_on_roce(void **state)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	const struct sockaddr_ib *peer;
	struct sockaddr_in sin;
	struct rdma_cm_id *id;
	struct sockaddr_ib d;

	(void)state;
	assert_non_null(ch);
	/* the wildcard: the loopback, the source ::1 with the id's P_Key 0; the port's P_Key */
	d = sib_of(NULL, 0, RDMA_IB_IP_PS_TCP | 7021, ~0ull);
	assert_int_equal(resolve(ch, &id, NULL, d), 0);
	assert_string_equal(ibv_get_device_name(id->verbs->device), "rxe0");
	assert_int_equal(id->port_num, 1);
	assert_memory_equal(local(id)->sib_addr.sib_raw, ONE, 16);
	assert_int_equal(local(id)->sib_pkey, 0);
	assert_ephemeral(sid_of(local(id)), RDMA_IB_PS_IB);
	peer = (const struct sockaddr_ib *)rdma_get_peer_addr(id);
	assert_memory_equal(peer->sib_addr.sib_raw, ZERO, 16);
	assert_int_equal(sid_of(peer), 0x1061b6d);
	assert_memory_equal(id->route.addr.addr.ibaddr.sgid.raw, ONE, 16);
	assert_memory_equal(id->route.addr.addr.ibaddr.dgid.raw, ZERO, 16);
	assert_int_equal(ntohs(id->route.addr.addr.ibaddr.pkey), 0xffff);
	/* no netdev behind an AF_IB id: a RoCE route cannot be built */
	errno = 0;
	assert_int_equal(rdma_resolve_route(id, 2000), -1);
	assert_int_equal(errno, ENODEV);
	assert_int_equal(rdma_destroy_id(id), 0);

	/* ::1 is the loopback too */
	d.sib_addr.sib_raw[15] = 1;
	assert_int_equal(resolve(ch, &id, NULL, d), 0);
	assert_memory_equal(local(id)->sib_addr.sib_raw, ONE, 16);
	assert_memory_equal(id->route.addr.addr.ibaddr.dgid.raw, ONE, 16);
	assert_int_equal(rdma_destroy_id(id), 0);

	/* an own GID with a P_Key of the port (membership bit ignored) */
	d = sib_of(GID1, 0x7fff, RDMA_IB_IP_PS_TCP | 7023, ~0ull);
	assert_int_equal(resolve(ch, &id, NULL, d), 0);
	assert_memory_equal(local(id)->sib_addr.sib_raw, GID1, 16);
	assert_int_equal(ntohs(local(id)->sib_pkey), 0x7fff);
	assert_memory_equal(id->route.addr.addr.ibaddr.sgid.raw, GID1, 16);
	assert_memory_equal(id->route.addr.addr.ibaddr.dgid.raw, GID1, 16);
	assert_int_equal(ntohs(id->route.addr.addr.ibaddr.pkey), 0x7fff);
	assert_int_equal(rdma_destroy_id(id), 0);
	/* someone else's GID: the first GID with its subnet prefix (GID 1's is zero) */
	d = sib_of(GID1, 0xffff, RDMA_IB_IP_PS_TCP | 7023, ~0ull);
	d.sib_addr.sib_raw[15] = 84;
	assert_int_equal(resolve(ch, &id, NULL, d), 0);
	assert_memory_equal(local(id)->sib_addr.sib_raw, GID1, 16);
	assert_int_equal(id->route.addr.addr.ibaddr.dgid.raw[15], 84);
	assert_int_equal(rdma_destroy_id(id), 0);
	d = sib_of(GID0, 0xffff, RDMA_IB_IP_PS_TCP | 7024, ~0ull);
	d.sib_addr.sib_raw[15] ^= 0x55;
	assert_int_equal(resolve(ch, &id, NULL, d), 0);
	assert_memory_equal(local(id)->sib_addr.sib_raw, GID0, 16);
	/* an AF_IB group: this RC id may join nothing (6.1 refuses non-UD ids: EINVAL, measured
	 * with devrm_probe2); a UD id has no netdev behind it: ENODEV as on rxe (afib_probe) */
	{
		static const uint8_t MGID[16] = { 0xff, 0x12, [15] = 0x42 };
		struct sockaddr_ib grp = sib_of(MGID, 0xffff, 0, 0);
		struct rdma_cm_event *ev;
		struct rdma_cm_id *ud;

		errno = 0;
		assert_int_equal(rdma_join_multicast(id, (struct sockaddr *)&grp, NULL), -1);
		assert_int_equal(errno, EINVAL);
		d = sib_of(GID1, 0xffff, RDMA_IB_IP_PS_UDP | 7030, ~0ull);
		assert_int_equal(rdma_create_id(ch, &ud, NULL, RDMA_PS_UDP), 0);
		assert_int_equal(rdma_resolve_addr(ud, NULL, (struct sockaddr *)&d, 2000), 0);
		assert_int_equal(rdma_get_cm_event(ch, &ev), 0);
		assert_int_equal(ev->event, RDMA_CM_EVENT_ADDR_RESOLVED);
		assert_int_equal(rdma_ack_cm_event(ev), 0);
		errno = 0;
		assert_int_equal(rdma_join_multicast(ud, (struct sockaddr *)&grp, NULL), -1);
		assert_int_equal(errno, ENODEV);
		assert_int_equal(rdma_destroy_id(ud), 0);
	}
	assert_int_equal(rdma_destroy_id(id), 0);

	/* P_Key 0 is in no table: ENODEV at once; the library asked nothing back */
	d = sib_of(GID1, 0, RDMA_IB_IP_PS_TCP | 7020, RDMA_IB_IP_PS_MASK);
	assert_int_equal(resolve(ch, &id, NULL, d), ENODEV);
	assert_int_equal(local(id)->sib_family, 0);
	assert_null(id->verbs);
	assert_int_equal(rdma_destroy_id(id), 0);
	/* an IPv4 source with an AF_IB destination: the families differ */
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	assert_int_equal(inet_pton(AF_INET, "192.0.2.1", &sin.sin_addr), 1);
	assert_int_equal(resolve(ch, &id, (struct sockaddr *)&sin, d), EINVAL);
	assert_int_equal(rdma_destroy_id(id), 0);
	rdma_destroy_event_channel(ch);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bind_and_port_spaces),
		cmocka_unit_test(test_resolve_on_roce),
	};

	(void)argc;
	setenv("RDMAEMU_QUIESCE_US", "0", 1);
	verbs_test_init(argv, "rxe-ref.fabric", NULL, "rxe-ref");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
