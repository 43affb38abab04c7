/* The CM agents on the wire (emu/ib/cm_host.h): REQ -> REP -> RTU and DREQ -> DREP between two
 * hosts as real QP1 MADs, on RoCEv2 (fixtures/rxe-ref2.fabric: A and B on one link) and on
 * InfiniBand through a switch (fixtures/ib.fabric), and REJ 8 from a host nobody listens on.
 * The same exchanges as test_cm_agent, but through emu_gsi (UD packets, ICRC, Q_Key/P_Key
 * checks) and the engine's port demultiplexer. */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "emu/ib/cm_agent.h"
#include "emu/ib/cm_host.h"
#include "emu/ib/cm_mad.h"
#include "emu/sim/engine.h"
#include "emu/ib/gsi.h"
#include "emu/sim/process.h"
#include "rdmaemu/ctl.h"

#define SID 0x0000000001064701ull /* RDMA_PS_TCP port 18177 (0x4701) */

static struct emu_engine *eng;
static bool locked; /* a failed assertion leaves the test with the lock: teardown releases it */

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

static int attach(const char *file)
{
	char path[1200];
	const char *top = getenv("RDMAEMU_TOP_SRCDIR");

	emu_engine_reset();
	emu_process_reset();
	snprintf(path, sizeof(path), "%s/fixtures/%s", top && *top ? top : RDMAEMU_SRCDIR, file);
	if (rdmaemu_ctl_attach(path, NULL))
		return -1;
	eng = emu_engine_get();
	return eng ? 0 : -1;
}

static int setup_roce(void **state)
{
	(void)state;
	return attach("rxe-ref2.fabric");
}

static int setup_ib(void **state)
{
	(void)state;
	return attach("ib.fabric");
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

/* What one side saw. */
struct side {
	int events[16];
	size_t n;
	uint64_t at[16];
	unsigned rej_reason;
	uint8_t pd[8];
	struct emu_cm_id *conn; /* the passive side's new id */
	bool reply;		/* answer REQ with REP, REP with RTU, DREQ with DREP */
};

static struct side *side_of(struct emu_cm_id *id)
{
	return emu_cm_id_context(id);
}

static int handler(struct emu_cm_id *id, const struct emu_cm_event *ev)
{
	struct side *s = side_of(id);

	if (ev->type == EMU_CM_UE_REQ_RECEIVED) /* a new id: the listener's context is ours */
		s = emu_cm_id_context(ev->listen_id);
	if (s->n < 16) {
		s->events[s->n] = ev->type;
		s->at[s->n] = emu_engine_now(eng);
	}
	s->n++;
	/* the REQ's and REP's private data (an RTU's is all zeros, the field's full length) */
	if ((ev->type == EMU_CM_UE_REQ_RECEIVED || ev->type == EMU_CM_UE_REP_RECEIVED) &&
	    ev->private_data_len >= sizeof(s->pd))
		memcpy(s->pd, ev->private_data, sizeof(s->pd));
	switch (ev->type) {
	case EMU_CM_UE_REQ_RECEIVED: {
		struct emu_cm_rep_param rep = { .qp_num = 0x22, .starting_psn = 0x200,
						.responder_resources = 1, .initiator_depth = 1,
						.rnr_retry_count = 7,
						.private_data = "rep-data", .private_data_len = 8 };

		emu_cm_id_set_context(id, s);
		s->conn = id;
		if (s->reply)
			assert_int_equal(emu_cm_send_rep(id, &rep), 0);
		break;
	}
	case EMU_CM_UE_REP_RECEIVED:
		if (s->reply)
			assert_int_equal(emu_cm_send_rtu(id, NULL, 0), 0);
		break;
	case EMU_CM_UE_DREQ_RECEIVED:
		if (s->reply)
			assert_int_equal(emu_cm_send_drep(id, NULL, 0), 0);
		break;
	case EMU_CM_UE_REJ_RECEIVED:
		s->rej_reason = ev->msg ? ev->msg->reason : 0;
		break;
	default:
		break;
	}
	return 0;
}

static const struct emu_port *port_of(size_t host)
{
	return &emu_engine_fabric(eng)->hosts[host].devices[0].ports[0];
}

/* REQ from host `a` to host `b`, port 1 of device 0 each; gid index `gi`. */
static void req_params(size_t a, size_t b, unsigned gi, struct emu_cm_path_rec *path,
		       struct emu_cm_req_param *req)
{
	const struct emu_port *pa = port_of(a), *pb = port_of(b);

	memset(path, 0, sizeof(*path));
	memcpy(path->sgid, pa->gids[gi].raw, 16);
	memcpy(path->dgid, pb->gids[gi].raw, 16);
	path->slid = pa->lid;
	path->dlid = pb->lid;
	path->mtu = 3;
	path->packet_life_time = 16;
	path->pkey = 0xffff;
	memset(req, 0, sizeof(*req));
	req->primary_path = path;
	req->dst.lid = pb->lid;
	memcpy(req->dst.gid, pb->gids[gi].raw, 16);
	req->dst.port = 1;
	req->service_id = SID;
	req->qp_num = 0x11;
	req->qp_type = EMU_CM_TRANSPORT_RC;
	req->starting_psn = 0x100;
	req->responder_resources = 1;
	req->initiator_depth = 1;
	req->remote_cm_response_timeout = 20;
	req->local_cm_response_timeout = 20;
	req->retry_count = 7;
	req->rnr_retry_count = 7;
	req->max_cm_retries = 15;
	req->private_data = "req-data";
	req->private_data_len = 8;
}

static void connect_disconnect(size_t a, size_t b, unsigned gi)
{
	struct side sa = { .reply = true }, sb = { .reply = true };
	struct emu_cm_agent *ca, *cb;
	struct emu_cm_id *ida, *lis;
	struct emu_cm_path_rec path;
	struct emu_cm_req_param req;
	struct emu_cm_counters c;

	lock();
	ca = emu_cm_host_agent(eng, a, 0);
	cb = emu_cm_host_agent(eng, b, 0);
	assert_non_null(ca);
	assert_non_null(cb);
	assert_ptr_equal(emu_cm_host_agent(eng, a, 0), ca); /* one agent per device */
	assert_int_equal(emu_cm_create_id(cb, handler, &sb, &lis), 0);
	assert_int_equal(emu_cm_listen(lis, SID, 0), 0);
	assert_int_equal(emu_cm_create_id(ca, handler, &sa, &ida), 0);
	req_params(a, b, gi, &path, &req);
	assert_int_equal(emu_cm_send_req(ida, &req), 0);
	unlock();
	/* zero-delay links (and a zero-delay switch): the whole exchange at one instant */
	lock();
	assert_int_equal(sb.n, 2);
	assert_int_equal(sb.events[0], EMU_CM_UE_REQ_RECEIVED);
	assert_memory_equal(sb.pd, "req-data", 8);
	assert_int_equal(sb.events[1], EMU_CM_UE_RTU_RECEIVED);
	assert_int_equal(sa.n, 1);
	assert_int_equal(sa.events[0], EMU_CM_UE_REP_RECEIVED);
	assert_memory_equal(sa.pd, "rep-data", 8);
	assert_int_equal(emu_cm_id_state(ida), EMU_CM_ESTABLISHED);
	assert_int_equal(emu_cm_id_state(sb.conn), EMU_CM_ESTABLISHED);
	assert_int_equal(emu_cm_id_remote_id(ida), emu_cm_id_local_id(sb.conn));
	assert_int_equal(emu_cm_id_remote_id(sb.conn), emu_cm_id_local_id(ida));

	/* disconnect: DREQ -> DREP, then A's timewait */
	assert_int_equal(emu_cm_send_dreq(ida, NULL, 0), 0);
	unlock();
	lock();
	assert_int_equal(sb.n, 3);
	assert_int_equal(sb.events[2], EMU_CM_UE_DREQ_RECEIVED);
	assert_int_equal(sa.n, 2);
	assert_int_equal(sa.events[1], EMU_CM_UE_DREP_RECEIVED);
	assert_int_equal(emu_cm_id_state(ida), EMU_CM_TIMEWAIT);
	emu_cm_agent_counters(ca, &c);
	assert_int_equal(c.tx[emu_cm_class(EMU_CM_ATTR_REQ)], 1);
	assert_int_equal(c.tx[emu_cm_class(EMU_CM_ATTR_RTU)], 1);
	assert_int_equal(c.tx[emu_cm_class(EMU_CM_ATTR_DREQ)], 1);
	assert_int_equal(c.rx[emu_cm_class(EMU_CM_ATTR_REP)], 1);
	assert_int_equal(c.rx[emu_cm_class(EMU_CM_ATTR_DREP)], 1);
	assert_int_equal(c.rx_bad, 0);
	emu_cm_destroy_id(ida);
	emu_cm_destroy_id(sb.conn);
	emu_cm_destroy_id(lis);
	unlock();
}

static void test_roce_connect(void **state)
{
	(void)state;
	connect_disconnect(0, 1, 1); /* GID 1: ::ffff:192.0.2.65 -> ::ffff:192.0.2.66 */
}

static void test_ib_connect(void **state)
{
	(void)state;
	connect_disconnect(0, 1, 0); /* through the switch by LID */
}

/* Nobody listens at B: REJ reason 8 (invalid service ID) comes back over the wire. */
static void test_roce_no_listener(void **state)
{
	struct side sa = { .reply = true };
	struct emu_cm_agent *ca;
	struct emu_cm_id *ida;
	struct emu_cm_path_rec path;
	struct emu_cm_req_param req;

	(void)state;
	lock();
	ca = emu_cm_host_agent(eng, 0, 0);
	assert_non_null(emu_cm_host_agent(eng, 1, 0));
	assert_null(emu_cm_host_agent(eng, 7, 0));
	assert_int_equal(errno, ENOENT);
	assert_int_equal(emu_cm_create_id(ca, handler, &sa, &ida), 0);
	req_params(0, 1, 1, &path, &req);
	assert_int_equal(emu_cm_send_req(ida, &req), 0);
	unlock();
	lock();
	assert_int_equal(sa.n, 1);
	assert_int_equal(sa.events[0], EMU_CM_UE_REJ_RECEIVED);
	assert_int_equal(sa.rej_reason, EMU_CM_REJ_INVALID_SERVICE_ID);
	assert_int_equal(sa.at[0], 0);
	emu_cm_destroy_id(ida);
	unlock();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_roce_connect, setup_roce, teardown),
		cmocka_unit_test_setup_teardown(test_roce_no_listener, setup_roce, teardown),
		cmocka_unit_test_setup_teardown(test_ib_connect, setup_ib, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
