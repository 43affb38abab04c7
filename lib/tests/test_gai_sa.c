/* RAI_SA on fixtures/ib.fabric (spec §4.6, §5): ServiceRecords registered at the fake SA by
 * ib-b (a ServiceRecord Set through the SA client on the wire), found back from ib-a through
 * rdma_getaddrinfo(RAI_SA) and rdma_resolve_addrinfo + rdma_query_addrinfo, which go through
 * the emulated kernel's RESOLVE_IB_SERVICE and QUERY IB_SERVICE; the SA's faults give the
 * kernel's ADDRINFO_ERROR statuses at exact virtual times. Re-executes itself on the emulated
 * libibverbs (verbs_test.h): binding an id needs the device. */
#include "config.h"

#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <infiniband/ib.h>
#include <rdma/rdma_cma.h>

#include "emu/sim/engine.h"
#include "emu/sim/fabric.h"
#include "emu/ib/mad.h"
#include "emu/sim/process.h"
#include "emu/ib/sa_client.h"
#include "emu/verbs/tests/verbs_test.h"
#include "rdmaemu/compat.h"
#include "rdmaemu/ctl.h"

#define MS 1000000ull

/* RDMACM_1.4 (v60): not in the installed header; librdmacm exports them. */
int rdma_resolve_addrinfo(struct rdma_cm_id *id, const char *node, const char *service,
			  const struct rdma_addrinfo *hints);
int rdma_query_addrinfo(struct rdma_cm_id *id, struct rdma_addrinfo **info);

static uint64_t now(void)
{
	uint64_t t;

	assert_int_equal(rdmaemu_ctl_now_ns(&t), 0);
	return t;
}

static const uint8_t *gid0(const char *host)
{
	const struct emu_fabric *f = emu_process_fabric();

	return emu_fabric_find_host(f, host)->devices[0].ports[0].gids[0].raw;
}

/* ---- RAI_SA: ServiceRecords registered at the SA, found back ---- */

#define SVC_ID 0x1000000000000abcull

struct reg_wait {
	bool done;
	int status;
};

static void reg_cb(struct emu_sa_query *q, int status, uint16_t mad_status, const void *recs,
		   size_t nrecs, size_t rec_size, void *ctx)
{
	struct reg_wait *w = ctx;

	(void)q;
	(void)mad_status;
	(void)recs;
	(void)nrecs;
	(void)rec_size;
	w->status = status;
	w->done = true;
}

static bool reg_ready(void *arg)
{
	return ((struct reg_wait *)arg)->done;
}

/* ib-b (host 1) registers a service (Set) with its port GID, as a server would. */
static void register_service(uint64_t sid, const char *name)
{
	struct emu_sa_client_port from = { 1, 0, 1 };
	struct emu_engine *e = emu_engine_get();
	struct emu_sa_service_rec sr;
	struct reg_wait w = { false, 0 };
	int err = 0;

	memset(&sr, 0, sizeof(sr));
	sr.id = sid;
	memcpy(sr.gid, gid0("ib-b"), 16);
	sr.pkey = 0xffff;
	sr.lease = EMU_SR_LEASE_INFINITE;
	strncpy((char *)sr.name, name, sizeof(sr.name) - 1);
	emu_engine_lock(e);
	assert_non_null(emu_sa_service_query(e, &from, EMU_MAD_METHOD_SET, &sr,
					     EMU_SR_COMP_ID | EMU_SR_COMP_GID | EMU_SR_COMP_PKEY |
					     EMU_SR_COMP_NAME, NULL, reg_cb, &w, &err));
	assert_int_equal(emu_engine_wait(e, "register", reg_ready, &w, EMU_ENGINE_FOREVER), 0);
	emu_engine_unlock(e);
	assert_int_equal(w.status, 0);
}

static void check_sa_entry(const struct rdma_addrinfo *ai, uint64_t sid, bool with_src)
{
	const struct sockaddr_ib *d = (const struct sockaddr_ib *)ai->ai_dst_addr;

	assert_int_equal(ai->ai_flags, RAI_SA);
	assert_int_equal(ai->ai_family, AF_IB);
	assert_int_equal(ai->ai_port_space, RDMA_PS_IB);
	assert_int_equal(ai->ai_qp_type, 0);
	assert_int_equal(ai->ai_dst_len, sizeof(struct sockaddr_ib));
	assert_int_equal(d->sib_family, AF_IB);
	assert_int_equal(ntohs(d->sib_pkey), 0xffff);
	assert_memory_equal(&d->sib_addr, gid0("ib-b"), 16);
	assert_true(be64toh(d->sib_sid) == sid);
	assert_true(d->sib_sid_mask == ~0ull);
	if (with_src) {
		const struct sockaddr_ib *s = (const struct sockaddr_ib *)ai->ai_src_addr;

		assert_int_equal(ai->ai_src_len, sizeof(struct sockaddr_ib));
		assert_int_equal(s->sib_family, AF_IB);
		assert_memory_equal(&s->sib_addr, gid0("ib-a"), 16);
		assert_true(be64toh(s->sib_sid) == 0x013F0000ull);
		assert_true(be64toh(s->sib_sid_mask) == 0xFFFFFFFFFFFF0000ull);
		assert_int_equal(ntohs(s->sib_pkey), 0xffff);
	} else {
		assert_int_equal(ai->ai_src_len, 0);
	}
}

static void test_rai_sa_getaddrinfo(void **state)
{
	struct rdma_addrinfo hints, *r = NULL;
	struct rdmaemu_sa_policy pol;
	uint64_t t0;

	(void)state;
	register_service(SVC_ID, "rdmaemu-echo");
	register_service(SVC_ID + 1, "rdmaemu-echo2");
	memset(&hints, 0, sizeof(hints));
	hints.ai_flags = RAI_SA;
	/* by ServiceID (a number in any strtoull base) */
	assert_int_equal(rdma_getaddrinfo(NULL, "0x1000000000000abc", &hints, &r), 0);
	check_sa_entry(r, SVC_ID, true);
	assert_null(r->ai_next);
	rdma_freeaddrinfo(r);
	/* by ServiceName */
	assert_int_equal(rdma_getaddrinfo(NULL, "rdmaemu-echo2", &hints, &r), 0);
	check_sa_entry(r, SVC_ID + 1, true);
	assert_null(r->ai_next);
	rdma_freeaddrinfo(r);
	/* an unknown service: the SA has no records, ENOENT */
	r = NULL;
	assert_int_equal(rdma_getaddrinfo(NULL, "nosuch", &hints, &r), -1);
	assert_int_equal(errno, ENOENT);
	assert_null(r);
	/* the SA drops the query: the kernel's 2000 ms, then ENOENT */
	assert_int_equal(rdmaemu_ctl_sa_policy(NULL, &pol), 0);
	pol.drop_next = 1;
	assert_int_equal(rdmaemu_ctl_sa_policy(&pol, NULL), 0);
	t0 = now();
	assert_int_equal(rdma_getaddrinfo(NULL, "rdmaemu-echo", &hints, &r), -1);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(now() - t0, 2000 * MS);
	/* and the argument checks */
	assert_int_equal(rdma_getaddrinfo(NULL, NULL, &hints, &r), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(rdma_getaddrinfo("192.0.2.130", "x", &hints, &r), -1);
	assert_int_equal(errno, EOPNOTSUPP);
}

static struct rdma_cm_id *bound_id(struct rdma_event_channel *ch)
{
	struct sockaddr_in sin;
	struct rdma_cm_id *id;

	assert_int_equal(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP), 0);
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(0xc0000281); /* ib-a's 192.0.2.129 */
	assert_int_equal(rdma_bind_addr(id, (struct sockaddr *)&sin), 0);
	return id;
}

static void test_rai_sa_resolve_addrinfo(void **state)
{
	struct rdma_event_channel *ch;
	struct rdma_addrinfo hints, *r = NULL;
	struct rdma_cm_event *ev;
	struct rdmaemu_sa_policy pol;
	struct rdma_cm_id *id;

	(void)state;
	register_service(SVC_ID, "rdmaemu-echo");
	ch = rdma_create_event_channel();
	assert_non_null(ch);
	memset(&hints, 0, sizeof(hints));
	hints.ai_flags = RAI_SA;

	id = bound_id(ch);
	assert_int_equal(rdma_resolve_addrinfo(id, NULL, "rdmaemu-echo", &hints), 0);
	assert_int_equal(rdma_get_cm_event(ch, &ev), 0);
	assert_int_equal(ev->event, RDMAEMU_CM_EVENT_ADDRINFO_RESOLVED);
	assert_int_equal(ev->status, 0);
	rdma_ack_cm_event(ev);
	assert_int_equal(rdma_query_addrinfo(id, &r), 0);
	check_sa_entry(r, SVC_ID, false);
	assert_null(r->ai_next);
	rdma_freeaddrinfo(r);
	assert_int_equal(rdma_query_addrinfo(id, &r), -1);
	assert_int_equal(errno, ENOENT);
	/* once resolved the id is in ADDRINFO_RESOLVED: a second resolution is refused by the
	 * kernel (not ADDR_BOUND), -1 with errno -1 (the quirk) */
	assert_int_equal(rdma_resolve_addrinfo(id, NULL, "rdmaemu-echo", &hints), -1);
	assert_int_equal(errno, -1);
	rdma_destroy_id(id);

	/* unknown service: ADDRINFO_ERROR with the kernel's -ENODATA (no records) */
	id = bound_id(ch);
	assert_int_equal(rdma_resolve_addrinfo(id, NULL, "nosuch", &hints), 0);
	assert_int_equal(rdma_get_cm_event(ch, &ev), 0);
	assert_int_equal(ev->event, RDMAEMU_CM_EVENT_ADDRINFO_ERROR);
	assert_int_equal(ev->status, -ENODATA);
	rdma_ack_cm_event(ev);
	assert_int_equal(rdma_query_addrinfo(id, &r), -1);
	assert_int_equal(errno, ENOENT);

	/* SA drop: ADDRINFO_ERROR -ETIMEDOUT after 2000 ms; the id is ADDR_BOUND again, so a
	 * new resolution works */
	assert_int_equal(rdmaemu_ctl_sa_policy(NULL, &pol), 0);
	pol.drop_next = 1;
	assert_int_equal(rdmaemu_ctl_sa_policy(&pol, NULL), 0);
	assert_int_equal(rdma_resolve_addrinfo(id, NULL, "rdmaemu-echo", &hints), 0);
	assert_int_equal(rdma_get_cm_event(ch, &ev), 0);
	assert_int_equal(ev->event, RDMAEMU_CM_EVENT_ADDRINFO_ERROR);
	assert_int_equal(ev->status, -ETIMEDOUT);
	rdma_ack_cm_event(ev);
	/* an SA error status: -EINVAL */
	pol.drop_next = 0;
	pol.error_status = 0x0300;
	assert_int_equal(rdmaemu_ctl_sa_policy(&pol, NULL), 0);
	assert_int_equal(rdma_resolve_addrinfo(id, NULL, "rdmaemu-echo", &hints), 0);
	assert_int_equal(rdma_get_cm_event(ch, &ev), 0);
	assert_int_equal(ev->event, RDMAEMU_CM_EVENT_ADDRINFO_ERROR);
	assert_int_equal(ev->status, -EINVAL);
	rdma_ack_cm_event(ev);
	pol.error_status = 0;
	assert_int_equal(rdmaemu_ctl_sa_policy(&pol, NULL), 0);
	assert_int_equal(rdma_resolve_addrinfo(id, NULL, "0x1000000000000abc", &hints), 0);
	assert_int_equal(rdma_get_cm_event(ch, &ev), 0);
	assert_int_equal(ev->event, RDMAEMU_CM_EVENT_ADDRINFO_RESOLVED);
	rdma_ack_cm_event(ev);
	assert_int_equal(rdma_query_addrinfo(id, &r), 0);
	check_sa_entry(r, SVC_ID, false);
	rdma_freeaddrinfo(r);
	rdma_destroy_id(id);

	/* an unbound id: the kernel refuses (no device), -1 with errno -1, no event */
	assert_int_equal(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP), 0);
	assert_int_equal(rdma_resolve_addrinfo(id, NULL, "rdmaemu-echo", &hints), -1);
	assert_int_equal(errno, -1);
	rdma_destroy_id(id);
	rdma_destroy_event_channel(ch);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rai_sa_getaddrinfo),
		cmocka_unit_test(test_rai_sa_resolve_addrinfo),
	};

	(void)argc;
	/* virtual time moves only when the test waits: exact times even under valgrind */
	setenv("RDMAEMU_QUIESCE_US", "0", 1);
	verbs_test_init(argv, "ib.fabric", NULL, "ib-a");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
