/* The SA on the wire: queries of the SA client (emu/ib/sa_client.h) from ib-a of
 * fixtures/ib.fabric travel as MADs through the switch to the SM on its management port 0
 * (emu/ib/sa_agent.h) and back, on the virtual clock. Exact records, statuses, virtual times,
 * RMPP segment/ACK counts, and the `sm` line's fault keys. */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "emu/ib/tests/sa_test.h"
#include "emu/sim/engine.h"
#include "emu/ib/gsi.h"
#include "emu/sim/process.h"
#include "emu/ib/sa_agent.h"
#include "emu/ib/sa_client.h"
#include "emu/sim/topology.h"
#include "emu/sim/wire.h"
#include "rdmaemu/ctl.h"

#define US EMU_NSEC_PER_USEC
#define MS EMU_NSEC_PER_MSEC

static struct emu_engine *eng;
static bool locked; /* a failed assertion leaves the test holding the engine lock */

static void lock(void)
{
	emu_engine_lock(eng);
	locked = true;
}

static void unlock(void)
{
	locked = false;
	emu_engine_unlock(eng);
}
static const struct emu_sa_client_port A = { 0, 0, 1 }; /* ib-a mlx5_0 port 1, LID 2 */

#define A_GUID 0x0002c90300000a01ull
#define B_GUID 0x0002c90300000b01ull
#define C_GUID 0x0002c90300000c01ull

static int attach(const char *file, const char *text)
{
	char path[1200];
	const char *top = getenv("RDMAEMU_TOP_SRCDIR");

	emu_engine_reset();
	emu_process_reset();
	if (file) {
		snprintf(path, sizeof(path), "%s/fixtures/%s", top && *top ? top : RDMAEMU_SRCDIR,
			 file);
		if (rdmaemu_ctl_attach(path, NULL))
			return -1;
	} else if (rdmaemu_ctl_attach_text(text, NULL)) {
		return -1;
	}
	eng = emu_engine_get();
	return eng ? 0 : -1;
}

static int setup_ib(void **state)
{
	(void)state;
	return attach("ib.fabric", NULL);
}

static int teardown(void **state)
{
	(void)state;
	if (locked)
		unlock();
	emu_engine_reset();
	emu_process_reset();
	eng = NULL;
	return 0;
}

/* What a callback saw. */
struct res {
	bool done;
	int status;
	uint16_t mad_status;
	size_t n;
	uint8_t recs[128 * 176];
	uint64_t at;
};

static void cb(struct emu_sa_query *q, int status, uint16_t mad_status, const void *recs,
	       size_t n, size_t rec_size, void *ctx)
{
	struct res *r = ctx;
	size_t sz = 0;

	(void)q;
	r->done = true;
	r->status = status;
	r->mad_status = mad_status;
	r->n = n;
	r->at = emu_engine_now(eng);
	if (n && recs) {
		sz = n * rec_size;
		memcpy(r->recs, recs, sz < sizeof(r->recs) ? sz : sizeof(r->recs));
	}
}

static bool is_done(void *arg)
{
	return ((struct res *)arg)->done;
}

/* Waits (lock held) for the callback; returns the virtual time the query took. */
static uint64_t wait_res(struct res *r, uint64_t t0)
{
	assert_int_equal(emu_engine_wait(eng, "sa query", is_done, r, EMU_ENGINE_FOREVER), 0);
	return r->at - t0;
}

static struct emu_sa_query *path_get(struct res *r, uint64_t dguid, bool table, uint8_t numb,
				     const struct emu_sa_query_opts *o)
{
	struct emu_sa_path_rec q = { 0 };
	int err = 0;
	struct emu_sa_query *h;

	gid_of(q.sgid, A_GUID);
	gid_of(q.dgid, dguid);
	q.numb_path = numb;
	q.reversible = 1;
	memset(r, 0, sizeof(*r));
	h = emu_sa_path_query(eng, &A, &q,
			      EMU_PR_COMP_SGID | EMU_PR_COMP_DGID | EMU_PR_COMP_NUMB_PATH |
				      EMU_PR_COMP_REVERSIBLE,
			      table, o, cb, r, &err);
	assert_int_equal(err, 0);
	assert_non_null(h);
	return h;
}

static void path_get_on_wire(void **state)
{
	struct res r;
	struct emu_sa_path_rec p;
	struct emu_gsi_port_counters c;
	struct emu_sa_agent_counters ac;
	uint64_t t0;

	(void)state;
	lock();
	t0 = emu_engine_now(eng);
	path_get(&r, B_GUID, false, 1, NULL);
	assert_false(r.done); /* never from inside the call */
	/* ib.fabric: links without delay, the SA answers after its 50 us */
	assert_int_equal(wait_res(&r, t0), 50 * US);
	assert_int_equal(r.status, 0);
	assert_int_equal(r.mad_status, 0);
	assert_int_equal(r.n, 1);
	memcpy(&p, r.recs, sizeof(p));
	assert_int_equal(p.slid, 2);
	assert_int_equal(p.dlid, 3);
	assert_int_equal(p.mtu, 5);
	assert_int_equal(p.rate, 7);
	assert_int_equal(p.packet_life_time, 18);
	assert_int_equal(p.pkey, 0xffff);
	assert_int_equal(p.reversible, 1);
	assert_int_equal(p.sl, 0);
	/* the MADs went through the wire: one each way, seen by ib-a's QP1 and the SA */
	emu_gsi_port_counters(emu_gsi_port_get(emu_gsi_get(eng), 0, 0, 1), &c);
	assert_int_equal(c.sent, 1);
	assert_int_equal(c.received, 1);
	assert_int_equal(emu_sa_agent_counters(eng, &ac), 0);
	assert_int_equal(ac.requests, 1);
	assert_int_equal(ac.answered, 1);
	assert_int_equal(ac.delayed, 1);
	unlock();
}

static void path_gettable_numb_path(void **state)
{
	static const char lmc_fabric[] =
		"seed 7\n"
		"sm lid=1 sl=3 packet-lifetime=16\n"
		"switch sw ports=8 lid=1\n"
		"host a\n  device mlx5_0 link=ib\n    port 1 lid=0x10 lmc=1 guid=0xa1\n"
		"host b\n  device mlx5_0 link=ib\n    port 1 lid=0x20 lmc=1 guid=0xb1 "
		"active-mtu=2048\n"
		"link a/mlx5_0/1 sw/1 width=4x speed=EDR\n"
		"link b/mlx5_0/1 sw/2 width=4x speed=FDR\n";
	static const uint16_t want[4][3] = { /* slid, dlid, preference (OpenSM's order) */
		{ 0x10, 0x20, 0 }, { 0x11, 0x21, 0 }, { 0x10, 0x21, 2 }, { 0x11, 0x20, 2 } };
	struct emu_sa_path_rec q = { 0 }, p[4];
	struct emu_gsi_port_counters c;
	struct res r;
	int err = 0;

	(void)state;
	assert_int_equal(attach(NULL, lmc_fabric), 0);
	lock();
	for (uint8_t numb = 1; numb <= 4; numb += 3) {
		gid_of(q.sgid, 0xa1);
		gid_of(q.dgid, 0xb1);
		q.numb_path = numb;
		memset(&r, 0, sizeof(r));
		assert_non_null(emu_sa_path_query(eng, &A, &q,
						  EMU_PR_COMP_SGID | EMU_PR_COMP_DGID |
							  EMU_PR_COMP_NUMB_PATH,
						  true, NULL, cb, &r, &err));
		wait_res(&r, emu_engine_now(eng));
		assert_int_equal(r.status, 0);
		assert_int_equal(r.n, numb);
		memcpy(p, r.recs, numb * sizeof(p[0]));
		for (unsigned i = 0; i < numb; i++) {
			assert_int_equal(p[i].slid, want[i][0]);
			assert_int_equal(p[i].dlid, want[i][1]);
			assert_int_equal(p[i].preference, want[i][2]);
			assert_int_equal(p[i].mtu, 4);
			assert_int_equal(p[i].rate, 12);
			assert_int_equal(p[i].sl, 3);
		}
	}
	/* the one-segment answer (56 + 64 bytes) was ACKed once by the client; the two-segment
	 * one (56 + 4 * 64 = 312 bytes) twice: segment 1 (window to 65), then the last */
	emu_gsi_port_counters(emu_gsi_port_get(emu_gsi_get(eng), 0, 0, 1), &c);
	assert_int_equal(c.rmpp_acks_sent, 3);
	assert_int_equal(c.sent, 5); /* 2 requests + 3 ACKs */
	assert_int_equal(c.received, 3); /* 1 + 2 segments */
	unlock();
}

static struct emu_sa_service_rec service(unsigned i)
{
	struct emu_sa_service_rec s = { 0 };

	s.id = 0x1000000000000000ull + i;
	gid_of(s.gid, A_GUID);
	s.pkey = 0xffff;
	s.lease = EMU_SR_LEASE_INFINITE;
	snprintf((char *)s.name, sizeof(s.name), "svc%u", i);
	return s;
}

#define SR_MASK (EMU_SR_COMP_ID | EMU_SR_COMP_GID | EMU_SR_COMP_PKEY | EMU_SR_COMP_NAME)

static void service_set_get_delete(void **state)
{
	struct emu_sa_service_rec s = service(7), got;
	struct res r;
	int err = 0;

	(void)state;
	lock();
	memset(&r, 0, sizeof(r));
	assert_non_null(emu_sa_service_query(eng, &A, EMU_MAD_METHOD_SET, &s, SR_MASK, NULL, cb,
					     &r, &err));
	wait_res(&r, 0);
	assert_int_equal(r.status, 0);
	assert_int_equal(r.n, 1);
	assert_int_equal(emu_sa_service_count(emu_sa_agent_sa(eng)), 1);
	/* Get by ID */
	memset(&r, 0, sizeof(r));
	memset(&got, 0, sizeof(got));
	got.id = s.id;
	assert_non_null(emu_sa_service_query(eng, &A, EMU_MAD_METHOD_GET, &got, EMU_SR_COMP_ID,
					     NULL, cb, &r, &err));
	wait_res(&r, 0);
	assert_int_equal(r.status, 0);
	assert_int_equal(r.n, 1);
	memcpy(&got, r.recs, sizeof(got));
	assert_int_equal(got.id, s.id);
	assert_string_equal((char *)got.name, "svc7");
	assert_memory_equal(got.gid, s.gid, 16);
	/* Delete, then Get finds nothing: MAD status ERR_NO_RECORDS -> -EINVAL */
	memset(&r, 0, sizeof(r));
	assert_non_null(emu_sa_service_query(eng, &A, EMU_MAD_METHOD_DELETE, &s, SR_MASK, NULL,
					     cb, &r, &err));
	wait_res(&r, 0);
	assert_int_equal(r.status, 0);
	assert_int_equal(emu_sa_service_count(emu_sa_agent_sa(eng)), 0);
	memset(&r, 0, sizeof(r));
	assert_non_null(emu_sa_service_query(eng, &A, EMU_MAD_METHOD_GET, &s, EMU_SR_COMP_ID, NULL,
					     cb, &r, &err));
	wait_res(&r, 0);
	assert_int_equal(r.status, -EINVAL);
	assert_int_equal(r.mad_status, EMU_SA_STATUS(EMU_SA_ERR_NO_RECORDS));
	assert_int_equal(r.n, 0);
	unlock();
}

/* 80 ServiceRecords (176 bytes each) = 14080 bytes of records: 71 RMPP segments of 200. The
 * client ACKs segment 1 (window to 65), segment 65 (window to 129) and the last one, 71. */
static void gettable_rmpp_windows(void **state)
{
	struct emu_gsi_port_counters c, sc;
	struct emu_sa_service_rec s, *got;
	struct emu_gsi_port_info info;
	struct res *r = calloc(1, sizeof(*r));
	int err = 0;

	(void)state;
	assert_non_null(r);
	lock();
	for (unsigned i = 0; i < 80; i++) {
		s = service(i);
		memset(r, 0, sizeof(*r));
		assert_non_null(emu_sa_service_query(eng, &A, EMU_MAD_METHOD_SET, &s, SR_MASK, NULL,
						     cb, r, &err));
		wait_res(r, 0);
		assert_int_equal(r->status, 0);
	}
	emu_gsi_port_counters(emu_gsi_port_get(emu_gsi_get(eng), 0, 0, 1), &c);
	memset(r, 0, sizeof(*r));
	memset(&s, 0, sizeof(s));
	assert_non_null(emu_sa_service_query(eng, &A, EMU_MAD_METHOD_GET_TABLE, &s, 0, NULL, cb, r,
					     &err));
	wait_res(r, 0);
	assert_int_equal(r->status, 0);
	assert_int_equal(r->n, 80);
	got = (struct emu_sa_service_rec *)r->recs;
	for (unsigned i = 0; i < 80; i++) {
		char name[16];

		snprintf(name, sizeof(name), "svc%u", i);
		assert_int_equal(got[i].id, 0x1000000000000000ull + i);
		assert_string_equal((char *)got[i].name, name);
	}
	emu_gsi_port_counters(emu_gsi_port_get(emu_gsi_get(eng), 0, 0, 1), &sc);
	assert_int_equal(sc.rmpp_acks_sent - c.rmpp_acks_sent, 3);
	assert_int_equal(sc.received - c.received, 71);
	/* the SA's side: three ACKs received on the switch's port 0 (LID 1) */
	emu_gsi_port_info(emu_gsi_port_by_lid(emu_gsi_get(eng), 1), &info);
	assert_true(info.is_switch);
	emu_gsi_port_counters(emu_gsi_port_by_lid(emu_gsi_get(eng), 1), &sc);
	assert_int_equal(sc.rmpp_acks_received, 3);
	unlock();
	free(r);
}

/* The same 80-record GetTable over a lossy cable (5% each way, seeded): lost segments are
 * resent from the last ACKed one after the 2 s ACK wait, lost ACKs are answered again, and the
 * client still gets every record in order. */
static void gettable_rmpp_lossy(void **state)
{
	const struct emu_fabric *f;
	struct emu_faults fl = { .loss = 0.05 };
	struct emu_gsi_port_counters sc;
	struct emu_sa_query_opts o = { .timeout_ms = 20000, .retries = 0 };
	struct emu_sa_service_rec s, *got;
	struct res *r = calloc(1, sizeof(*r));
	int err = 0;

	(void)state;
	assert_non_null(r);
	lock();
	for (unsigned i = 0; i < 80; i++) {
		s = service(i);
		memset(r, 0, sizeof(*r));
		assert_non_null(emu_sa_service_query(eng, &A, EMU_MAD_METHOD_SET, &s, SR_MASK, NULL,
						     cb, r, &err));
		wait_res(r, 0);
		assert_int_equal(r->status, 0);
	}
	f = emu_engine_fabric(eng);
	assert_int_equal(emu_wire_set_faults(emu_topology_wire(emu_engine_topology(eng)),
					     f->hosts[0].devices[0].ports[0].link, &fl),
			 0);
	memset(r, 0, sizeof(*r));
	memset(&s, 0, sizeof(s));
	assert_non_null(emu_sa_service_query(eng, &A, EMU_MAD_METHOD_GET_TABLE, &s, 0, &o, cb, r,
					     &err));
	wait_res(r, 0);
	assert_int_equal(r->status, 0);
	assert_int_equal(r->n, 80);
	got = (struct emu_sa_service_rec *)r->recs;
	for (unsigned i = 0; i < 80; i++)
		assert_int_equal(got[i].id, 0x1000000000000000ull + i);
	/* the SA had to send more than the 71 segments (+ 80 Set answers) */
	emu_gsi_port_counters(emu_gsi_port_by_lid(emu_gsi_get(eng), 1), &sc);
	assert_true(sc.sent > 80 + 71);
	unlock();
	free(r);
}

static void mcmember_join_leave(void **state)
{
	struct emu_sa_mcmember_rec q = { 0 }, p;
	static const uint8_t alloc0[16] = { 0xff, 0x12, 0xa0, 0x1b, 0xfe, 0x80, 0, 0,
					    0, 0, 0, 0, 0, 0, 0, 0 };
	uint64_t mask = EMU_MCR_COMP_MGID | EMU_MCR_COMP_PORT_GID | EMU_MCR_COMP_QKEY |
			EMU_MCR_COMP_PKEY | EMU_MCR_COMP_SL | EMU_MCR_COMP_FLOW_LABEL |
			EMU_MCR_COMP_TCLASS | EMU_MCR_COMP_JOIN_STATE;
	struct res r;
	int err = 0;

	(void)state;
	lock();
	gid_of(q.port_gid, A_GUID);
	q.qkey = 0x1234;
	q.pkey = 0xffff;
	q.join_state = EMU_MC_JOIN_FULL;
	memset(&r, 0, sizeof(r));
	assert_non_null(emu_sa_mcmember_join(eng, &A, &q, mask, NULL, cb, &r, &err));
	wait_res(&r, 0);
	assert_int_equal(r.status, 0);
	memcpy(&p, r.recs, sizeof(p));
	assert_memory_equal(p.mgid, alloc0, 16);
	assert_int_equal(p.mlid, 0xc001);
	assert_int_equal(p.qkey, 0x1234);
	assert_int_equal(p.join_state, EMU_MC_JOIN_FULL);
	assert_int_equal(emu_sa_mcgroup_count(emu_sa_agent_sa(eng)), 2);
	/* leave: the last member goes, so does the group */
	memcpy(q.mgid, p.mgid, 16);
	memset(&r, 0, sizeof(r));
	assert_non_null(emu_sa_mcmember_leave(eng, &A, &q, mask, NULL, cb, &r, &err));
	wait_res(&r, 0);
	assert_int_equal(r.status, 0);
	assert_int_equal(emu_sa_mcgroup_count(emu_sa_agent_sa(eng)), 1);
	unlock();
}

static void set_policy(const struct rdmaemu_sa_policy *p)
{
	assert_int_equal(rdmaemu_ctl_sa_policy(p, NULL), 0);
}

/* No answer: ETIMEDOUT after exactly (retries + 1) * timeout of virtual time, each attempt on
 * the wire (and seen by the SA, which dropped it). */
static void timeout_retries(void **state)
{
	struct rdmaemu_sa_policy pol = { .response_delay_ns = 50 * US, .drop_next = 3 };
	struct emu_sa_query_opts o = { .timeout_ms = 100, .retries = 2 };
	struct emu_sa_agent_counters ac;
	struct res r;
	uint64_t t0;

	(void)state;
	set_policy(&pol);
	lock();
	t0 = emu_engine_now(eng);
	path_get(&r, B_GUID, false, 1, &o);
	assert_int_equal(wait_res(&r, t0), 300 * MS);
	assert_int_equal(r.status, -ETIMEDOUT);
	assert_int_equal(r.n, 0);
	assert_int_equal(emu_sa_agent_counters(eng, &ac), 0);
	assert_int_equal(ac.requests, 3);
	assert_int_equal(ac.dropped, 3);
	/* one drop left by the counter? no: three were asked for, three used. A retry now
	 * succeeds at the first answer: 50 us. */
	t0 = emu_engine_now(eng);
	path_get(&r, B_GUID, false, 1, &o);
	assert_int_equal(wait_res(&r, t0), 50 * US);
	assert_int_equal(r.status, 0);
	unlock();
}

static void drop_then_retry(void **state)
{
	struct rdmaemu_sa_policy pol = { .response_delay_ns = 50 * US, .drop_next = 1 };
	struct emu_sa_query_opts o = { .timeout_ms = 100, .retries = 1 };
	struct res r;

	(void)state;
	set_policy(&pol);
	lock();
	path_get(&r, C_GUID, false, 1, &o);
	assert_int_equal(wait_res(&r, 0), 100 * MS + 50 * US);
	assert_int_equal(r.status, 0);
	assert_int_equal(((struct emu_sa_path_rec *)r.recs)->dlid, 4);
	unlock();
}

static void busy_and_error(void **state)
{
	struct rdmaemu_sa_policy pol = { .busy_next = 1 }, old;
	struct res r;

	(void)state;
	set_policy(&pol);
	lock();
	path_get(&r, B_GUID, false, 1, NULL);
	assert_int_equal(wait_res(&r, 0), 0); /* no response delay in this policy */
	assert_int_equal(r.status, -EINVAL);
	assert_int_equal(r.mad_status, EMU_MAD_STATUS_BUSY);
	/* the counter is spent: the next one is answered */
	path_get(&r, B_GUID, false, 1, NULL);
	wait_res(&r, 0);
	assert_int_equal(r.status, 0);
	unlock();
	pol = (struct rdmaemu_sa_policy){ .error_status = EMU_SA_STATUS(EMU_SA_ERR_REQ_DENIED),
					  .error_attr = EMU_SA_ATTR_PATH_RECORD };
	assert_int_equal(rdmaemu_ctl_sa_policy(&pol, &old), 0);
	assert_int_equal(old.busy_next, 0);
	lock();
	path_get(&r, B_GUID, true, 1, NULL);
	wait_res(&r, 0);
	assert_int_equal(r.status, -EINVAL);
	assert_int_equal(r.mad_status, EMU_SA_STATUS(EMU_SA_ERR_REQ_DENIED));
	unlock();
	/* bad policies */
	pol.drop = 1.5;
	assert_int_equal(rdmaemu_ctl_sa_policy(&pol, NULL), -1);
	assert_int_equal(errno, EINVAL);
}

static void cancel_query(void **state)
{
	struct emu_sa_query *q;
	struct res r;

	(void)state;
	lock();
	q = path_get(&r, B_GUID, false, 1, NULL);
	emu_sa_query_cancel(q);
	assert_true(r.done);
	assert_int_equal(r.status, -EINTR);
	assert_int_equal(r.at, 0);
	unlock();
}

static void bad_ports(void **state)
{
	struct emu_sa_path_rec q = { 0 };
	struct emu_sa_client_port roce = { 0, 0, 1 }, none = { 9, 0, 1 };
	int err = 0;

	(void)state;
	/* rxe-ref: a RoCE device, no SA */
	assert_int_equal(attach("rxe-ref.fabric", NULL), 0);
	lock();
	assert_null(emu_sa_path_query(eng, &roce, &q, 0, false, NULL, cb, NULL, &err));
	assert_int_equal(err, -ENODEV);
	assert_null(emu_sa_path_query(eng, &none, &q, 0, false, NULL, cb, NULL, &err));
	assert_int_equal(err, -ENODEV);
	assert_int_equal(emu_sa_agent_start(eng), -ENODEV);
	unlock();
	assert_int_equal(rdmaemu_ctl_sa_policy(NULL, NULL), -1);
	assert_int_equal(errno, ENODEV);
}

/* ---- the MAD layer alone, on RoCE (the CM's transport): rxe-ref2, A -> B ---- */

struct gsi_seen {
	int nrecv;
	struct emu_gsi_addr from;
	uint8_t method;
	bool done;
	int status;
	uint8_t resp_method;
	uint64_t resp_tid;
	uint64_t at;
};

static void b_recv(struct emu_gsi_agent *a, const struct emu_gsi_recv *r, void *ctx)
{
	struct gsi_seen *g = ctx;
	uint8_t resp[EMU_MAD_LEN];

	g->nrecv++;
	g->from = r->from;
	g->method = r->mad[3];
	memcpy(resp, r->mad, EMU_MAD_LEN);
	resp[3] |= EMU_MAD_METHOD_RESP_BIT;
	assert_int_equal(emu_gsi_respond(a, r, resp, EMU_MAD_LEN), 0);
}

static void a_done(struct emu_gsi_send *s, int status, const struct emu_gsi_recv *resp, void *ctx)
{
	struct gsi_seen *g = ctx;

	(void)s;
	g->done = true;
	g->status = status;
	g->at = emu_engine_now(eng);
	if (resp) {
		g->resp_method = resp->mad[3];
		g->resp_tid = (uint64_t)resp->mad[8] << 56 | (uint64_t)resp->mad[9] << 48 |
			      (uint64_t)resp->mad[10] << 40 | (uint64_t)resp->mad[11] << 32 |
			      (uint64_t)resp->mad[12] << 24 | (uint64_t)resp->mad[13] << 16 |
			      (uint64_t)resp->mad[14] << 8 | resp->mad[15];
	}
}

static bool gsi_done(void *arg)
{
	return ((struct gsi_seen *)arg)->done;
}

static void cm_class_mad(uint8_t mad[EMU_MAD_LEN], uint8_t mgmt_class, uint64_t tid)
{
	memset(mad, 0, EMU_MAD_LEN);
	mad[0] = EMU_MAD_BASE_VERSION;
	mad[1] = mgmt_class;
	mad[2] = 2;
	mad[3] = EMU_MAD_METHOD_GET;
	for (int i = 0; i < 8; i++)
		mad[8 + i] = (uint8_t)(tid >> (56 - 8 * i));
	mad[16] = 0x00;
	mad[17] = 0x10;
}

static void gsi_roce_request_response(void **state)
{
	static const uint8_t gid_b[16] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 0, 2, 66 };
	static const uint8_t gid_a[16] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 0, 2, 65 };
	static const uint8_t mac_a[6] = { 0x02, 0, 0, 0, 0x02, 0x01 };
	struct emu_gsi_port *pa, *pb;
	struct emu_gsi_agent *aa, *ab;
	struct emu_gsi_addr to = { 0 };
	struct emu_gsi_port_counters c;
	struct gsi_seen g = { 0 };
	uint8_t mad[EMU_MAD_LEN];
	uint64_t tid;
	int err = 0;

	(void)state;
	assert_int_equal(attach("rxe-ref2.fabric", NULL), 0);
	lock();
	pa = emu_gsi_port_get(emu_gsi_get(eng), 0, 0, 1);
	pb = emu_gsi_port_get(emu_gsi_get(eng), 1, 0, 1);
	assert_non_null(pa);
	assert_non_null(pb);
	ab = emu_gsi_agent_register(pb, 0x07, 2, EMU_GSI_SERVER, b_recv, &g);
	assert_non_null(ab);
	/* one server per class/version and port; QP1 carries no SMPs */
	assert_null(emu_gsi_agent_register(pb, 0x07, 2, EMU_GSI_SERVER, b_recv, &g));
	assert_int_equal(errno, EBUSY);
	assert_null(emu_gsi_agent_register(pb, 0x01, 1, 0, NULL, NULL));
	assert_int_equal(errno, EINVAL);
	aa = emu_gsi_agent_register(pa, 0x07, 2, 0, NULL, NULL);
	assert_non_null(aa);
	tid = emu_gsi_agent_new_tid(aa);
	cm_class_mad(mad, 0x07, tid);
	memcpy(to.gid, gid_b, 16);
	to.qpn = 1;
	assert_non_null(emu_gsi_send(aa, &to, mad, EMU_MAD_LEN, 50, 0, a_done, &g, &err));
	assert_false(g.done);
	assert_int_equal(emu_engine_wait(eng, "gsi", gsi_done, &g, EMU_ENGINE_FOREVER), 0);
	assert_int_equal(g.status, 0);
	assert_int_equal(g.nrecv, 1);
	assert_int_equal(g.method, EMU_MAD_METHOD_GET);
	assert_memory_equal(g.from.gid, gid_a, 16); /* the IPv4 source as a GID */
	assert_memory_equal(g.from.mac, mac_a, 6);
	assert_int_equal(g.from.qpn, 1);
	assert_int_equal(g.from.qkey, EMU_QP1_QKEY);
	assert_int_equal(g.resp_method, EMU_MAD_METHOD_GET_RESP);
	assert_int_equal(g.resp_tid, tid);
	/* a class nobody serves on B: dropped there, the send times out at exactly 50 ms */
	memset(&g, 0, sizeof(g));
	cm_class_mad(mad, 0x09, emu_gsi_agent_new_tid(aa));
	uint64_t t0 = emu_engine_now(eng);

	assert_non_null(emu_gsi_send(aa, &to, mad, EMU_MAD_LEN, 50, 0, a_done, &g, &err));
	assert_int_equal(emu_engine_wait(eng, "gsi", gsi_done, &g, EMU_ENGINE_FOREVER), 0);
	assert_int_equal(g.status, -ETIMEDOUT);
	assert_int_equal(g.at - t0, 50 * MS);
	emu_gsi_port_counters(pb, &c);
	assert_int_equal(c.dropped_no_agent, 1);
	/* a wrong Q_Key never reaches an agent */
	memset(&g, 0, sizeof(g));
	cm_class_mad(mad, 0x07, emu_gsi_agent_new_tid(aa));
	to.qkey = 0x1234;
	assert_non_null(emu_gsi_send(aa, &to, mad, EMU_MAD_LEN, 0, 0, a_done, &g, &err));
	assert_int_equal(emu_engine_wait(eng, "gsi", gsi_done, &g, EMU_ENGINE_FOREVER), 0);
	assert_int_equal(g.status, 0); /* no response expected: done once sent */
	emu_engine_run_now(eng);
	emu_gsi_port_counters(pb, &c);
	assert_int_equal(c.dropped_qkey, 1);
	assert_int_equal(g.nrecv, 0);
	/* an unknown destination GID: the send fails with -EIO in its completion */
	memset(&g, 0, sizeof(g));
	to.qkey = 0;
	to.gid[15] = 99;
	assert_non_null(emu_gsi_send(aa, &to, mad, EMU_MAD_LEN, 50, 0, a_done, &g, &err));
	assert_int_equal(emu_engine_wait(eng, "gsi", gsi_done, &g, EMU_ENGINE_FOREVER), 0);
	assert_int_equal(g.status, -EIO);
	/* bad sends */
	assert_null(emu_gsi_send(aa, &to, mad, 100, 0, 0, NULL, NULL, &err));
	assert_int_equal(err, -EINVAL);
	/* unregistering cancels what is pending: -EINTR */
	memset(&g, 0, sizeof(g));
	to.gid[15] = 66;
	assert_non_null(emu_gsi_send(aa, &to, mad, EMU_MAD_LEN, 50, 0, a_done, &g, &err));
	emu_gsi_agent_unregister(aa);
	assert_true(g.done);
	assert_int_equal(g.status, -EINTR);
	unlock();
}

/* An IB CA loops a MAD for one of its own LIDs back to itself (what lets the CM connect to the
 * host's own IPoIB address): the server on the same port gets it from the port's own LID, at
 * the same virtual instant, and the switch port never sees it. Any LID of the port's LMC
 * range counts; the next LID above the range goes out to the subnet. */
static void gsi_ib_own_lid_loopback(void **state)
{
	static const char fabric[] =
		"seed 7\n"
		"sm lid=1 sl=0 packet-lifetime=18\n"
		"switch sw ports=8 lid=1\n"
		"host a\n  device mlx5_0 link=ib\n    port 1 lid=0x10 lmc=1 guid=0xa1\n"
		"host b\n  device mlx5_0 link=ib\n    port 1 lid=0x20 guid=0xb1\n"
		"link a/mlx5_0/1 sw/1 delay=1us\n"
		"link b/mlx5_0/1 sw/2 delay=1us\n";
	struct emu_gsi_port *pa;
	struct emu_gsi_agent *srv, *cli;
	struct emu_gsi_addr to = { 0 };
	struct emu_gsi_port_counters c0, c1;
	struct gsi_seen g = { 0 };
	uint8_t mad[EMU_MAD_LEN];
	uint64_t t0;
	int err = 0;

	(void)state;
	assert_int_equal(attach(NULL, fabric), 0);
	lock();
	pa = emu_gsi_port_get(emu_gsi_get(eng), 0, 0, 1);
	assert_non_null(pa);
	srv = emu_gsi_agent_register(pa, 0x07, 2, EMU_GSI_SERVER, b_recv, &g);
	cli = emu_gsi_agent_register(pa, 0x07, 2, 0, NULL, NULL);
	assert_non_null(srv);
	assert_non_null(cli);
	for (uint16_t lid = 0x10; lid <= 0x11; lid++) {
		memset(&g, 0, sizeof(g));
		emu_gsi_port_counters(pa, &c0);
		cm_class_mad(mad, 0x07, emu_gsi_agent_new_tid(cli));
		to.lid = lid;
		to.qpn = 1;
		t0 = emu_engine_now(eng);
		assert_non_null(emu_gsi_send(cli, &to, mad, EMU_MAD_LEN, 50, 0, a_done, &g, &err));
		assert_int_equal(emu_engine_wait(eng, "gsi", gsi_done, &g, EMU_ENGINE_FOREVER), 0);
		assert_int_equal(g.status, 0);
		assert_int_equal(g.nrecv, 1);
		assert_int_equal(g.from.lid, 0x10); /* the base LID: SLID of a send from LMC 1 */
		assert_int_equal(g.resp_method, EMU_MAD_METHOD_GET_RESP);
		assert_int_equal(g.at - t0, 0);     /* never on the 1 us links */
		emu_gsi_port_counters(pa, &c1);
		assert_int_equal(c1.sent - c0.sent, 2);         /* request and response */
		assert_int_equal(c1.received - c0.received, 2); /* both came back to this port */
	}
	/* LID 0x12 is outside a's range (0x10-0x11): it leaves the port, and nobody has it */
	memset(&g, 0, sizeof(g));
	cm_class_mad(mad, 0x07, emu_gsi_agent_new_tid(cli));
	to.lid = 0x12;
	assert_non_null(emu_gsi_send(cli, &to, mad, EMU_MAD_LEN, 50, 0, a_done, &g, &err));
	assert_int_equal(emu_engine_wait(eng, "gsi", gsi_done, &g, EMU_ENGINE_FOREVER), 0);
	assert_int_equal(g.status, -ETIMEDOUT);
	assert_int_equal(g.nrecv, 0);
	emu_gsi_agent_unregister(cli);
	emu_gsi_agent_unregister(srv);
	unlock();
}

/* The `sm` line's fault keys load into the fabric and become the SA's first policy. */
static void fixture_sm_faults(void **state)
{
	struct emu_error err;
	struct emu_fabric *f = emu_fabric_load_text(
		"sm lid=1 drop-next=2 drop=0.25 busy-next=1 busy=0.5 error=0x0300 "
		"error-attr=0x35\nswitch sw ports=2 lid=1\n",
		"t", NULL, &err);

	(void)state;
	assert_non_null(f);
	assert_int_equal(f->sm.drop_next, 2);
	assert_true(f->sm.drop == 0.25);
	assert_int_equal(f->sm.busy_next, 1);
	assert_true(f->sm.busy == 0.5);
	assert_int_equal(f->sm.error_status, 0x0300);
	assert_int_equal(f->sm.error_attr, 0x35);
	emu_fabric_free(f);
	f = emu_fabric_load_text("sm lid=1 drop=2\n", "t", NULL, &err);
	assert_null(f);
	assert_int_equal(err.line, 1);
	assert_string_equal(err.msg, "expected a probability (0..1) after 'drop=', got '2'");
	f = emu_fabric_load_text("sm lid=1 error=0x10000\n", "t", NULL, &err);
	assert_null(f);
	assert_string_equal(err.msg,
			    "expected a 16-bit number (e.g. 0x0300) after 'error=', got '0x10000'");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(path_get_on_wire, setup_ib, teardown),
		cmocka_unit_test_setup_teardown(path_gettable_numb_path, NULL, teardown),
		cmocka_unit_test_setup_teardown(service_set_get_delete, setup_ib, teardown),
		cmocka_unit_test_setup_teardown(gettable_rmpp_windows, setup_ib, teardown),
		cmocka_unit_test_setup_teardown(gettable_rmpp_lossy, setup_ib, teardown),
		cmocka_unit_test_setup_teardown(mcmember_join_leave, setup_ib, teardown),
		cmocka_unit_test_setup_teardown(timeout_retries, setup_ib, teardown),
		cmocka_unit_test_setup_teardown(drop_then_retry, setup_ib, teardown),
		cmocka_unit_test_setup_teardown(busy_and_error, setup_ib, teardown),
		cmocka_unit_test_setup_teardown(cancel_query, setup_ib, teardown),
		cmocka_unit_test_setup_teardown(bad_ports, NULL, teardown),
		cmocka_unit_test_setup_teardown(gsi_roce_request_response, NULL, teardown),
		cmocka_unit_test_setup_teardown(gsi_ib_own_lid_loopback, NULL, teardown),
		cmocka_unit_test(fixture_sm_faults),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
