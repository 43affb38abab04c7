/* RESOLVE_IB_SERVICE, QUERY IB_SERVICE and AF_IB bind through ucma's command interface
 * (docs/cma.md, "IB services"): argument and state checks, the query's size rules, the
 * record bytes, the SA's answer time, RoCE ports, and an id destroyed while its query runs. */
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
#include <rdma/rdma_user_cm.h>

#include "emu/rdma_cm/cma.h"
#include "emu/sim/engine.h"
#include "emu/ib/mad.h"
#include "emu/sim/process.h"
#include "emu/ib/sa_client.h"
#include "emu/rdma_cm/ucma.h"
#include "rdmaemu/ctl.h"

#define MS 1000000ull
#define SVC_ID 0x2000000000000042ull

static void attach(const char *fixture, const char *node)
{
	char path[1200];
	const char *top = getenv("RDMAEMU_TOP_SRCDIR");

	emu_engine_reset();
	emu_process_reset();
	snprintf(path, sizeof(path), "%s/fixtures/%s", top && *top ? top : RDMAEMU_SRCDIR,
		 fixture);
	assert_int_equal(rdmaemu_ctl_attach(path, node), 0);
	emu_engine_set_quiesce_ns(emu_engine_get(), 0);
}

static int teardown(void **state)
{
	(void)state;
	emu_engine_reset();
	emu_process_reset();
	return 0;
}

static uint64_t now(void)
{
	uint64_t t;

	assert_int_equal(rdmaemu_ctl_now_ns(&t), 0);
	return t;
}

static int ucmd(int fd, uint32_t op, const void *body, size_t len, size_t out)
{
	uint8_t buf[1024];
	struct rdma_ucm_cmd_hdr h = { .cmd = op, .in = (uint16_t)len, .out = (uint16_t)out };
	ssize_t r;

	memcpy(buf, &h, sizeof(h));
	memcpy(buf + sizeof(h), body, len);
	r = emu_ucma_write(fd, buf, sizeof(h) + len);
	if (r < 0)
		return (int)r;
	assert_int_equal(r, (ssize_t)(sizeof(h) + len));
	return 0;
}

static uint32_t new_id(int fd, uint16_t ps)
{
	struct rdma_ucm_create_id c = { .uid = 0x1000, .ps = ps, .qp_type = 2 };
	struct rdma_ucm_create_id_resp r = { 0 };

	c.response = (uintptr_t)&r;
	assert_int_equal(ucmd(fd, RDMA_USER_CM_CMD_CREATE_ID, &c, sizeof(c), sizeof(r)), 0);
	return r.id;
}

static int bind_addr(int fd, uint32_t h, const void *addr, size_t len)
{
	struct rdma_ucm_bind c = { .id = h, .addr_size = (uint16_t)len };

	memcpy(&c.addr, addr, len);
	return ucmd(fd, RDMA_USER_CM_CMD_BIND, &c, sizeof(c), 0);
}

static int bind_gid(int fd, uint32_t h, const uint8_t gid[16])
{
	struct emu_sockaddr_ib sib;

	memset(&sib, 0, sizeof(sib));
	sib.sib_family = 27;
	sib.sib_pkey = htons(0xffff);
	memcpy(sib.sib_addr, gid, 16);
	sib.sib_sid = htobe64(0x013F0000ull);
	sib.sib_sid_mask = htobe64(0xFFFFFFFFFFFF0000ull);
	return bind_addr(fd, h, &sib, sizeof(sib));
}

static int resolve_svc(int fd, uint32_t h, const char *name, uint64_t sid)
{
	struct emu_ucma_resolve_ib_service c;

	memset(&c, 0, sizeof(c));
	c.id = h;
	if (name) {
		strncpy((char *)c.service_name, name, sizeof(c.service_name) - 1);
		c.flags = EMU_UCMA_IB_SERVICE_FLAG_NAME;
	} else {
		c.service_id = sid;
		c.flags = EMU_UCMA_IB_SERVICE_FLAG_ID;
	}
	/* the body: everything after the 8-byte header */
	return ucmd(fd, EMU_UCMA_CMD_RESOLVE_IB_SERVICE, (const char *)&c + 8, sizeof(c) - 8, 0);
}

static int query(int fd, uint32_t h, uint32_t option, void *resp, size_t len)
{
	struct rdma_ucm_query c = { .id = h, .option = option };

	c.response = (uintptr_t)resp;
	return ucmd(fd, RDMA_USER_CM_CMD_QUERY, &c, sizeof(c), len);
}

static int get_event(int fd, struct rdma_ucm_event_resp *r)
{
	struct rdma_ucm_get_event c;

	c.response = (uintptr_t)r;
	return ucmd(fd, RDMA_USER_CM_CMD_GET_EVENT, &c, sizeof(c), sizeof(*r));
}

static int state_of(uint32_t h)
{
	struct emu_cma_id *id = emu_cma_id_lookup(h);

	return id ? (int)id->state : -1;
}

static const uint8_t *gid0(const char *host)
{
	return emu_fabric_find_host(emu_process_fabric(), host)->devices[0].ports[0].gids[0].raw;
}

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

static void register_service(uint64_t sid, const char *name)
{
	struct emu_sa_client_port from = { 1, 0, 1 }; /* ib-b */
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

static void test_checks_and_bind(void **state)
{
	static const uint8_t nogid[16] = { 0xfe, 0x80, [15] = 0x77 };
	struct rdma_ucm_query_addr_resp a;
	struct emu_sockaddr_ib *sib = (struct emu_sockaddr_ib *)&a.src_addr;
	uint8_t buf[8];
	uint32_t h;
	int fd;

	(void)state;
	attach("ib.fabric", "ib-a");
	fd = emu_ucma_open();
	h = new_id(fd, EMU_CMA_PS_IB);
	/* IDLE, no device: EINVAL */
	assert_int_equal(resolve_svc(fd, h, "x", 0), -EINVAL);
	assert_int_equal(state_of(h), EMU_CMA_IDLE);
	/* AF_IB bind: a GID nobody has, ENODEV and still IDLE; ib-a's GID 0 binds */
	assert_int_equal(bind_gid(fd, h, nogid), -ENODEV);
	assert_int_equal(state_of(h), EMU_CMA_IDLE);
	assert_int_equal(bind_gid(fd, h, gid0("ib-a")), 0);
	assert_int_equal(state_of(h), EMU_CMA_ADDR_BOUND);
	assert_int_equal(query(fd, h, RDMA_USER_CM_QUERY_ADDR, &a, sizeof(a)), 0);
	assert_int_equal(a.src_size, 48);
	assert_int_equal(sib->sib_family, 27);
	assert_memory_equal(sib->sib_addr, gid0("ib-a"), 16);
	/* the service ID keeps the IB port space and gets an ephemeral port */
	assert_true((be64toh(sib->sib_sid) >> 16) == 0x013F);
	assert_in_range(be64toh(sib->sib_sid) & 0xffff, EMU_CMA_PORT_LOW, EMU_CMA_PORT_HIGH);
	assert_int_equal(a.port_num, 1);
	/* QUERY IB_SERVICE before any answer: ENOSPC below 4 bytes, else ENODATA */
	assert_int_equal(query(fd, h, EMU_UCMA_QUERY_IB_SERVICE, buf, 2), -ENOSPC);
	assert_int_equal(query(fd, h, EMU_UCMA_QUERY_IB_SERVICE, buf, sizeof(buf)), -ENODATA);
	emu_ucma_close(fd);
}

static void test_resolve_and_query(void **state)
{
	uint8_t buf[4 + 2 * EMU_UCMA_SERVICE_REC_SIZE];
	struct rdma_ucm_event_resp r;
	uint32_t num, h;
	uint64_t t0, be;
	int fd;

	(void)state;
	attach("ib.fabric", "ib-a");
	register_service(SVC_ID, "svc-one");
	fd = emu_ucma_open();
	h = new_id(fd, EMU_CMA_PS_IB);
	assert_int_equal(bind_gid(fd, h, gid0("ib-a")), 0);
	t0 = now();
	assert_int_equal(resolve_svc(fd, h, "svc-one", 0), 0);
	assert_int_equal(state_of(h), EMU_CMA_ADDRINFO_QUERY);
	assert_int_equal(get_event(fd, &r), 0);
	assert_int_equal(r.event, EMU_CMA_EVENT_ADDRINFO_RESOLVED);
	assert_int_equal(r.status, 0);
	/* the SA's 50 us response delay plus the wire */
	assert_true(now() - t0 >= 50000);
	assert_true(now() - t0 < MS);
	assert_int_equal(state_of(h), EMU_CMA_ADDRINFO_RESOLVED);
	/* room for no record: 0 and nothing written */
	memset(buf, 0xaa, sizeof(buf));
	assert_int_equal(query(fd, h, EMU_UCMA_QUERY_IB_SERVICE, buf, 4), 0);
	assert_int_equal(buf[0], 0xaa);
	assert_int_equal(query(fd, h, EMU_UCMA_QUERY_IB_SERVICE, buf, sizeof(buf)), 0);
	memcpy(&num, buf, 4);
	assert_int_equal(num, 1);
	memcpy(&be, buf + 4, 8);
	assert_true(be64toh(be) == SVC_ID);
	assert_memory_equal(buf + 4 + 8, gid0("ib-b"), 16);
	assert_int_equal(buf[4 + 24], 0xff);
	assert_int_equal(buf[4 + 25], 0xff);
	assert_string_equal((const char *)buf + 4 + 48, "svc-one");
	/* once resolved: not ADDR_BOUND any more */
	assert_int_equal(resolve_svc(fd, h, "svc-one", 0), -EINVAL);

	/* by ID; then an ID nobody registered: ADDRINFO_ERROR -ENODATA, back to ADDR_BOUND */
	h = new_id(fd, EMU_CMA_PS_IB);
	assert_int_equal(bind_gid(fd, h, gid0("ib-a")), 0);
	assert_int_equal(resolve_svc(fd, h, NULL, SVC_ID + 1), 0);
	assert_int_equal(get_event(fd, &r), 0);
	assert_int_equal(r.event, EMU_CMA_EVENT_ADDRINFO_ERROR);
	assert_int_equal((int32_t)r.status, -ENODATA);
	assert_int_equal(state_of(h), EMU_CMA_ADDR_BOUND);
	assert_int_equal(resolve_svc(fd, h, NULL, SVC_ID), 0);
	assert_int_equal(get_event(fd, &r), 0);
	assert_int_equal(r.event, EMU_CMA_EVENT_ADDRINFO_RESOLVED);

	/* destroyed while the query runs: the late answer finds nobody, no event */
	h = new_id(fd, EMU_CMA_PS_IB);
	assert_int_equal(bind_gid(fd, h, gid0("ib-a")), 0);
	assert_int_equal(resolve_svc(fd, h, "svc-one", 0), 0);
	{
		struct rdma_ucm_destroy_id d = { .id = h };
		struct rdma_ucm_destroy_id_resp dr;

		d.response = (uintptr_t)&dr;
		assert_int_equal(ucmd(fd, RDMA_USER_CM_CMD_DESTROY_ID, &d, sizeof(d), sizeof(dr)),
				 0);
	}
	assert_int_equal(rdmaemu_ctl_advance_ns(10 * MS), 0);
	emu_ucma_close(fd);
}

static void test_roce_port(void **state)
{
	struct sockaddr_in sin;
	uint32_t h;
	int fd;

	(void)state;
	attach("rxe-ref.fabric", "rxe-ref");
	fd = emu_ucma_open();
	h = new_id(fd, EMU_CMA_PS_TCP);
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	assert_int_equal(inet_pton(AF_INET, "192.0.2.1", &sin.sin_addr), 1);
	assert_int_equal(bind_addr(fd, h, &sin, sizeof(sin)), 0);
	/* rdma_cap_ib_sa is false on RoCE: EOPNOTSUPP, and the id stays ADDR_BOUND */
	assert_int_equal(resolve_svc(fd, h, "x", 0), -EOPNOTSUPP);
	assert_int_equal(state_of(h), EMU_CMA_ADDR_BOUND);
	assert_int_equal(resolve_svc(fd, h, "x", 0), -EOPNOTSUPP);
	emu_ucma_close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_checks_and_bind, teardown),
		cmocka_unit_test_teardown(test_resolve_and_query, teardown),
		cmocka_unit_test_teardown(test_roce_port, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
