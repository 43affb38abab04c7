/* The GSI fast path (emu_gsi_xmit, emu/sim/wire.h emu_wire_send_lazy): a MAD from host A's RoCE
 * port to host B's in one process travels as a description, no frame built. The same scenario
 * runs three ways: fast path, fast path off (every MAD built and parsed), and fast path on with
 * a capture recording the link (frames built at send). Over a link with delay, jitter, loss,
 * duplication and reordering, every received MAD (bytes, sender address, virtual instant),
 * every send completion, and the GSI, topology and wire counters must be equal; the fast
 * path must have carried MADs in the first run and none in the others. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "emu/sim/engine.h"
#include "emu/ib/gsi.h"
#include "emu/sim/process.h"
#include "emu/sim/topology.h"
#include "emu/sim/wire.h"
#include "rdmaemu/ctl.h"

/* rxe-ref2's two hosts */
#define HOSTS                                                          \
	"seed 7\n"                                                     \
	"host A\n"                                                     \
	"  device rxe0 link=eth\n"                                     \
	"  netdev eth0 mac=02:00:00:00:02:01 mtu=1500 rdma=rxe0/1\n"   \
	"    addr 192.0.2.65/28\n"                                     \
	"host B\n"                                                     \
	"  device rxe0 link=eth\n"                                     \
	"  netdev eth0 mac=02:00:00:00:02:02 mtu=1500 rdma=rxe0/1\n"   \
	"    addr 192.0.2.66/28\n"

/* one link with every fault the wire draws randomly */
static const char fabric[] =
	HOSTS "link A/rxe0/1 B/rxe0/1 delay=3us jitter=2us loss=0.15 duplicate=0.2 reorder=0.2\n";

#define NSEND 40
#define MAXRX (4 * NSEND)
#define CLASS 0x06 /* DevMgt: no agent of the emulator registers it */

struct rx {
	uint64_t at;
	uint8_t mad[EMU_MAD_LEN];
	struct emu_gsi_addr from;
};

struct run {
	struct rx srv[MAXRX]; /* what B's server agent received */
	size_t nsrv;
	struct {
		uint64_t at;
		int status;
		uint8_t resp[EMU_MAD_LEN];
	} done[NSEND]; /* A's send completions */
	size_t ndone;
	struct emu_gsi_port_counters ca, cb;
	struct emu_topology_port_counters ta, tb;
	struct emu_wire_counters w[2];
	uint64_t end;
};

static struct emu_engine *eng;
static struct emu_gsi_agent *server;

static void srv_recv(struct emu_gsi_agent *a, const struct emu_gsi_recv *r, void *ctx)
{
	struct run *R = ctx;
	struct rx *x;
	uint8_t resp[EMU_MAD_LEN];

	if (R->nsrv >= MAXRX)
		return;
	x = &R->srv[R->nsrv++];
	x->at = emu_engine_now(eng);
	memcpy(x->mad, r->mad, EMU_MAD_LEN);
	x->from = r->from;
	/* a GetResp with the request's TID and one byte of our own */
	memcpy(resp, r->mad, EMU_MAD_LEN);
	resp[3] = 0x81;
	resp[64] = (uint8_t)R->nsrv;
	emu_gsi_respond(a, r, resp, EMU_MAD_LEN);
}

static void send_done(struct emu_gsi_send *s, int status, const struct emu_gsi_recv *resp,
		      void *ctx)
{
	struct run *R = ctx;

	(void)s;
	if (R->ndone >= NSEND)
		return;
	R->done[R->ndone].at = emu_engine_now(eng);
	R->done[R->ndone].status = status;
	if (resp)
		memcpy(R->done[R->ndone].resp, resp->mad, EMU_MAD_LEN);
	R->ndone++;
}

static bool never(void *arg)
{
	(void)arg;
	return false;
}

static bool all_done(void *arg)
{
	return ((struct run *)arg)->ndone == NSEND;
}

static void scenario(struct run *R, bool fast, const char *pcap)
{
	struct emu_gsi *g;
	struct emu_gsi_port *pa, *pb;
	struct emu_gsi_agent *client;
	struct emu_topology *t;
	int epa, epb, link;

	memset(R, 0, sizeof(*R));
	emu_engine_reset();
	emu_process_reset();
	if (pcap)
		setenv("RDMAEMU_PCAP", pcap, 1);
	else
		unsetenv("RDMAEMU_PCAP");
	assert_int_equal(rdmaemu_ctl_attach_text(fabric, NULL), 0);
	eng = emu_engine_get();
	assert_non_null(eng);
	unsetenv("RDMAEMU_PCAP");
	emu_gsi_set_fastpath(fast);

	emu_engine_lock(eng);
	g = emu_gsi_get(eng);
	assert_non_null(g);
	pa = emu_gsi_port_get(g, 0, 0, 1);
	pb = emu_gsi_port_get(g, 1, 0, 1);
	assert_non_null(pa);
	assert_non_null(pb);
	server = emu_gsi_agent_register(pb, CLASS, 1, EMU_GSI_SERVER, srv_recv, R);
	client = emu_gsi_agent_register(pa, CLASS, 1, 0, NULL, NULL);
	assert_non_null(server);
	assert_non_null(client);
	for (unsigned i = 0; i < NSEND; i++) {
		struct emu_gsi_addr to = { .qpn = 1, .grh = true };
		uint8_t mad[EMU_MAD_LEN] = { 1, CLASS, 1, 0x01 /* Get */ };
		uint64_t tid = emu_gsi_agent_new_tid(client);
		int err = 0;

		/* B's GID 192.0.2.66; every 8th to a P_Key B does not have (dropped there) */
		memcpy(to.gid, (const uint8_t[16]){ [10] = 0xff, [11] = 0xff, 192, 0, 2, 66 }, 16);
		if (i % 8 == 7)
			to.pkey = 0x7001;
		for (int b = 0; b < 8; b++)
			mad[8 + b] = (uint8_t)(tid >> (56 - 8 * b));
		mad[17] = 0x10;
		mad[40] = (uint8_t)i;
		assert_non_null(emu_gsi_send(client, &to, mad, EMU_MAD_LEN, 20, 2, send_done, R,
					     &err));
		/* sends spread over virtual time, some while others are in flight */
		if (i % 3 == 0)
			emu_engine_wait(eng, "spacing", never, NULL, 1500);
	}
	assert_int_equal(emu_engine_wait(eng, "all sends", all_done, R, EMU_ENGINE_FOREVER), 0);
	/* let duplicates, late responses and retries drain */
	emu_engine_wait(eng, "drain", never, NULL, 200 * EMU_NSEC_PER_MSEC);
	R->end = emu_engine_now(eng);
	emu_gsi_port_counters(pa, &R->ca);
	emu_gsi_port_counters(pb, &R->cb);
	t = emu_engine_topology(eng);
	epa = emu_topology_port_endpoint(t, 0, 0, 1);
	epb = emu_topology_port_endpoint(t, 1, 0, 1);
	emu_topology_port_counters(t, epa, &R->ta);
	emu_topology_port_counters(t, epb, &R->tb);
	link = emu_wire_endpoint_link(emu_topology_wire(t), epa);
	assert_true(link >= 0);
	emu_wire_counters(emu_topology_wire(t), link, EMU_WIRE_A_TO_B, &R->w[0]);
	emu_wire_counters(emu_topology_wire(t), link, EMU_WIRE_B_TO_A, &R->w[1]);
	emu_gsi_agent_unregister(client);
	emu_gsi_agent_unregister(server);
	emu_engine_unlock(eng);
	emu_engine_reset();
	emu_process_reset();
	eng = NULL;
	emu_gsi_set_fastpath(true);
}

static void rm_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char p[512];

	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
		unlink(p);
	}
	if (d)
		closedir(d);
	rmdir(dir);
}

static void expect_same(const struct run *a, const struct run *b)
{
	struct emu_gsi_port_counters ca = a->ca, cb = a->cb;

	assert_int_equal(a->nsrv, b->nsrv);
	for (size_t i = 0; i < a->nsrv; i++) {
		assert_int_equal(a->srv[i].at, b->srv[i].at);
		assert_memory_equal(a->srv[i].mad, b->srv[i].mad, EMU_MAD_LEN);
		assert_memory_equal(&a->srv[i].from, &b->srv[i].from, sizeof(a->srv[i].from));
	}
	assert_int_equal(a->ndone, b->ndone);
	for (size_t i = 0; i < a->ndone; i++) {
		assert_int_equal(a->done[i].at, b->done[i].at);
		assert_int_equal(a->done[i].status, b->done[i].status);
		assert_memory_equal(a->done[i].resp, b->done[i].resp, EMU_MAD_LEN);
	}
	/* the one counter the paths differ in */
	ca.received_described = b->ca.received_described;
	cb.received_described = b->cb.received_described;
	assert_memory_equal(&ca, &b->ca, sizeof(ca));
	assert_memory_equal(&cb, &b->cb, sizeof(cb));
	assert_memory_equal(&a->ta, &b->ta, sizeof(a->ta));
	assert_memory_equal(&a->tb, &b->tb, sizeof(a->tb));
	assert_memory_equal(a->w, b->w, sizeof(a->w));
	assert_int_equal(a->end, b->end);
}

static void test_fast_equals_wire(void **state)
{
	static struct run fast, slow, cap;
	char dir[] = "/tmp/rdmaemu-gsifp-XXXXXX", prefix[64];

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(prefix, sizeof(prefix), "%s/cap", dir);
	scenario(&fast, true, NULL);
	scenario(&slow, false, NULL);
	scenario(&cap, true, prefix);
	rm_dir(dir);

	/* the faults did something, and the scenario is not empty */
	assert_true(fast.w[0].dropped_loss > 0);
	assert_true(fast.w[0].duplicated + fast.w[1].duplicated > 0);
	assert_true(fast.w[0].reordered + fast.w[1].reordered > 0);
	assert_true(fast.cb.dropped_pkey > 0);
	assert_true(fast.nsrv > NSEND / 2);
	/* every MAD that reached a port came described on the fast path, none otherwise */
	assert_int_equal(fast.ca.received_described, fast.ca.received + fast.ca.dropped_pkey);
	assert_int_equal(fast.cb.received_described, fast.cb.received + fast.cb.dropped_pkey);
	assert_int_equal(slow.ca.received_described + slow.cb.received_described, 0);
	assert_int_equal(cap.ca.received_described + cap.cb.received_described, 0);
	expect_same(&fast, &slow);
	expect_same(&fast, &cap);
}

/* The port keeps its last destination's route (emu_gsi_xmit): it must follow the GID tables.
 * B's address goes: a MAD to its GID finds no port (-EIO completion, nothing received); it
 * comes back: delivered again. A's own address goes: no source GID of that kind. */
static const char plain_fabric[] = HOSTS "link A/rxe0/1 B/rxe0/1\n";

static unsigned nrecv;
static int last_status;
static bool completed;

static void count_recv(struct emu_gsi_agent *a, const struct emu_gsi_recv *r, void *ctx)
{
	(void)a;
	(void)r;
	(void)ctx;
	nrecv++;
}

static void note_done(struct emu_gsi_send *s, int status, const struct emu_gsi_recv *resp,
		      void *ctx)
{
	(void)s;
	(void)resp;
	(void)ctx;
	last_status = status;
	completed = true;
}

static bool is_completed(void *arg)
{
	(void)arg;
	return completed;
}

/* One Get from A to 192.0.2.66 without a response timeout: its completion status. */
static int send_one(struct emu_gsi_agent *client)
{
	struct emu_gsi_addr to = { .qpn = 1, .grh = true };
	uint8_t mad[EMU_MAD_LEN] = { 1, CLASS, 1, 0x01 };
	int err = 0;

	memcpy(to.gid, (const uint8_t[16]){ [10] = 0xff, [11] = 0xff, 192, 0, 2, 66 }, 16);
	mad[17] = 0x10;
	completed = false;
	emu_engine_lock(eng);
	assert_non_null(emu_gsi_send(client, &to, mad, EMU_MAD_LEN, 0, 0, note_done, NULL, &err));
	assert_int_equal(emu_engine_wait(eng, "completion", is_completed, NULL,
					 EMU_ENGINE_FOREVER), 0);
	emu_engine_wait(eng, "delivery", never, NULL, EMU_NSEC_PER_MSEC);
	emu_engine_unlock(eng);
	return last_status;
}

static void test_route_follows_gid_changes(void **state)
{
	struct emu_gsi *g;
	struct emu_gsi_agent *client, *srv;

	(void)state;
	emu_engine_reset();
	emu_process_reset();
	unsetenv("RDMAEMU_PCAP");
	assert_int_equal(rdmaemu_ctl_attach_text(plain_fabric, NULL), 0);
	eng = emu_engine_get();
	assert_non_null(eng);
	emu_engine_lock(eng);
	g = emu_gsi_get(eng);
	assert_non_null(g);
	srv = emu_gsi_agent_register(emu_gsi_port_get(g, 1, 0, 1), CLASS, 1, EMU_GSI_SERVER,
				     count_recv, NULL);
	client = emu_gsi_agent_register(emu_gsi_port_get(g, 0, 0, 1), CLASS, 1, 0, NULL, NULL);
	assert_non_null(srv);
	assert_non_null(client);
	emu_engine_unlock(eng);

	nrecv = 0;
	assert_int_equal(send_one(client), 0);
	assert_int_equal(send_one(client), 0); /* the second from the kept route */
	assert_int_equal(nrecv, 2);
	assert_int_equal(rdmaemu_ctl_addr_del("B", "eth0", "192.0.2.66/28"), 0);
	assert_int_equal(send_one(client), -EIO);
	assert_int_equal(nrecv, 2);
	assert_int_equal(rdmaemu_ctl_addr_add("B", "eth0", "192.0.2.66/28"), 0);
	assert_int_equal(send_one(client), 0);
	assert_int_equal(nrecv, 3);
	assert_int_equal(rdmaemu_ctl_addr_del("A", "eth0", "192.0.2.65/28"), 0);
	assert_int_equal(send_one(client), -EIO);
	assert_int_equal(nrecv, 3);

	emu_engine_lock(eng);
	emu_gsi_agent_unregister(client);
	emu_gsi_agent_unregister(srv);
	emu_engine_unlock(eng);
	emu_engine_reset();
	emu_process_reset();
	eng = NULL;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fast_equals_wire),
		cmocka_unit_test(test_route_follows_gid_changes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
