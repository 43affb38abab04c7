/* evpush_probe: the corner cases of push files (protocol 6, docs/daemon.md "rdma_cm files"),
 * run as one `rdmaemu run` process on the built-in fabric (test_daemon_evpush.sh). It drives
 * the rdma_cm command interface directly (emu_ucma_write, the bytes librdmacm writes) to see
 * the kernel's numbers librdmacm hides: the events_reported of DESTROY_ID, LEAVE_MCAST and
 * MIGRATE_ID. Every check compares exact values; a failed one prints FAIL and the exit
 * status is 1.
 *
 * The events come from the daemon's engine while this process sleeps outside the library
 * (ADDR_RESOLVED of the host's own address, ROUTE_RESOLVED, MULTICAST_JOIN): what makes the
 * channel's fd readable then is the daemon's write to the eventfd, not the library. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <rdma/rdma_user_cm.h>

#include "emu/rdma_cm/ucma_api.h"
#include "rdmaemu/ctl.h"

/* enum rdma_cm_event_type (<rdma/rdma_cma.h>, whose port spaces clash with the uapi's) */
enum { EV_ADDR_RESOLVED = 0, EV_ROUTE_RESOLVED = 2, EV_CONNECT_REQUEST = 4, EV_MULTICAST_JOIN = 12 };

#include "emu/daemon/tests/probe_check.h"

/* One command: header + body; its return value (len or -errno) as an int. */
static int cmd(int fd, uint32_t c, void *body, size_t in, size_t out)
{
	struct {
		struct rdma_ucm_cmd_hdr h;
		uint8_t b[512];
	} m;
	ssize_t r;

	m.h.cmd = c;
	m.h.in = (uint16_t)in;
	m.h.out = (uint16_t)out;
	memcpy(m.b, body, in);
	r = emu_ucma_write(fd, &m, sizeof(m.h) + in);
	return r < 0 ? (int)r : 0;
}

static uint32_t create_id_ps(int fd, uint64_t uid, uint16_t ps, uint8_t qp_type)
{
	struct rdma_ucm_create_id c = { .uid = uid, .ps = ps, .qp_type = qp_type };
	struct rdma_ucm_create_id_resp r = { 0 };
	int ret;

	c.response = (uintptr_t)&r;
	ret = cmd(fd, RDMA_USER_CM_CMD_CREATE_ID, &c, sizeof(c), sizeof(r));
	CHECK(ret == 0, "create_id %d", ret);
	return r.id;
}

static uint32_t create_id(int fd, uint64_t uid)
{
	return create_id_ps(fd, uid, RDMA_PS_TCP, 2 /* IBV_QPT_RC */);
}

static void sin6_of(struct sockaddr_in6 *s6, const char *a)
{
	struct sockaddr_in *s = (struct sockaddr_in *)s6;

	memset(s6, 0, sizeof(*s6));
	s->sin_family = AF_INET;
	inet_pton(AF_INET, a, &s->sin_addr);
}

static void resolve_addr(int fd, uint32_t id)
{
	struct rdma_ucm_resolve_ip c;
	int ret;

	memset(&c, 0, sizeof(c));
	sin6_of(&c.dst_addr, "192.0.2.1");
	c.id = id;
	c.timeout_ms = 2000;
	ret = cmd(fd, RDMA_USER_CM_CMD_RESOLVE_IP, &c, sizeof(c), 0);
	CHECK(ret == 0, "resolve_ip %d", ret);
}

static void resolve_route(int fd, uint32_t id)
{
	struct rdma_ucm_resolve_route c = { .id = id, .timeout_ms = 2000 };
	int ret = cmd(fd, RDMA_USER_CM_CMD_RESOLVE_ROUTE, &c, sizeof(c), 0);

	CHECK(ret == 0, "resolve_route %d", ret);
}

/* GET_EVENT: 0 and *ev, or -errno */
static int get_event(int fd, struct rdma_ucm_event_resp *ev)
{
	struct rdma_ucm_get_event c;

	memset(ev, 0, sizeof(*ev));
	c.response = (uintptr_t)ev;
	return cmd(fd, RDMA_USER_CM_CMD_GET_EVENT, &c, sizeof(c), sizeof(*ev));
}

static void expect_event(int fd, uint64_t uid, uint32_t event, const char *what)
{
	struct rdma_ucm_event_resp ev;
	int ret = get_event(fd, &ev);

	CHECK(ret == 0 && ev.uid == uid && ev.event == event && ev.status == 0,
	      "%s: ret %d uid %llu event %u status %d", what, ret, (unsigned long long)ev.uid,
	      ev.event, (int)ev.status);
}

static void expect_eagain(int fd, const char *what)
{
	struct rdma_ucm_event_resp ev;
	int ret = get_event(fd, &ev);

	CHECK(ret == -EAGAIN, "%s: ret %d uid %llu event %u", what, ret,
	      (unsigned long long)ev.uid, ev.event);
}

/* poll(fd, 0): 1 readable, 0 not */
static int readable(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
}

static void nap(void)
{
	usleep(200 * 1000); /* outside the library: the daemon's engine goes on */
}

static uint32_t destroy_id(int fd, uint32_t id)
{
	struct rdma_ucm_destroy_id c = { .id = id };
	struct rdma_ucm_destroy_id_resp r = { 0xffff };
	int ret;

	c.response = (uintptr_t)&r;
	ret = cmd(fd, RDMA_USER_CM_CMD_DESTROY_ID, &c, sizeof(c), sizeof(r));
	CHECK(ret == 0, "destroy_id %d", ret);
	return r.events_reported;
}

static uint32_t migrate(int to, int from, uint32_t id)
{
	struct rdma_ucm_migrate_id c = { .id = id, .fd = (uint32_t)from };
	struct rdma_ucm_migrate_resp r = { 0xffff };
	int ret;

	c.response = (uintptr_t)&r;
	ret = cmd(to, RDMA_USER_CM_CMD_MIGRATE_ID, &c, sizeof(c), sizeof(r));
	CHECK(ret == 0, "migrate_id %d", ret);
	return r.events_reported;
}

static void set_nonblock(int fd)
{
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

/* 1: events queued while the process is outside the library, read in order */
static void order(int a, int b)
{
	uint32_t i1 = create_id(a, 1), i2 = create_id(a, 2);
	(void)b;

	CHECK(readable(a) == 0, "empty file readable");
	resolve_addr(a, i1);
	nap();
	resolve_addr(a, i2);
	nap();
	CHECK(readable(a) == 1, "two pushed events: fd not readable");
	expect_event(a, 1, EV_ADDR_RESOLVED, "first");
	CHECK(readable(a) == 1, "one event left: fd not readable");
	expect_event(a, 2, EV_ADDR_RESOLVED, "second");
	CHECK(readable(a) == 0, "all read: fd readable");
	expect_eagain(a, "all read");
	CHECK(destroy_id(a, i1) == 1, "events_reported of id 1");
	CHECK(destroy_id(a, i2) == 1, "events_reported of id 2");
}

/* 2: DESTROY_ID drops the id's unread pushed events */
static void destroy(int a, int b)
{
	uint32_t i3 = create_id(a, 3), i4 = create_id(a, 4), r;
	(void)b;

	resolve_addr(a, i3);
	resolve_addr(a, i4);
	nap();
	CHECK(readable(a) == 1, "pushed events: fd not readable");
	r = destroy_id(a, i3);
	CHECK(r == 0, "events_reported of an id with its event unread: %u", r);
	CHECK(readable(a) == 1, "id 4's event left: fd not readable");
	expect_event(a, 4, EV_ADDR_RESOLVED, "id 4's, after id 3's dropped");
	CHECK(readable(a) == 0, "after the drop and the read: fd readable");
	expect_eagain(a, "id 3's event dropped");
	r = destroy_id(a, i4);
	CHECK(r == 1, "events_reported of an id with its event read: %u", r);
}

/* 3: MIGRATE_ID moves the id's unread pushed events to the other file, in order */
static void migration(int a, int b)
{
	uint32_t i5 = create_id(a, 5), i6 = create_id(a, 6), i7 = create_id(a, 7), i8, r;

	resolve_addr(a, i5);
	nap();
	resolve_addr(a, i6);
	nap();
	resolve_route(a, i5);
	nap();
	/* a: id 5 ADDR_RESOLVED, id 6 ADDR_RESOLVED, id 5 ROUTE_RESOLVED, all unread */
	r = migrate(b, a, i5);
	CHECK(r == 0, "events_reported of the migrated id: %u", r);
	CHECK(readable(a) == 1, "id 6's event stays on a: a not readable");
	CHECK(readable(b) == 1, "id 5's events moved to b: b not readable");
	expect_event(b, 5, EV_ADDR_RESOLVED, "b's first");
	expect_event(b, 5, EV_ROUTE_RESOLVED, "b's second");
	CHECK(readable(b) == 0, "b read: readable");
	expect_eagain(b, "b read");
	expect_event(a, 6, EV_ADDR_RESOLVED, "a's only one left");
	CHECK(readable(a) == 0, "a read: readable");
	expect_eagain(a, "a read");
	/* one read before the migration, one moved: events_reported 1, back from b to a */
	i8 = create_id(b, 8);
	resolve_addr(b, i8);
	nap();
	expect_event(b, 8, EV_ADDR_RESOLVED, "id 8 on b");
	resolve_addr(a, i7);
	nap();
	expect_event(a, 7, EV_ADDR_RESOLVED, "id 7 read on a");
	resolve_route(a, i7);
	nap();
	r = migrate(b, a, i7);
	CHECK(r == 1, "events_reported of id 7 (1 read, 1 moved): %u", r);
	CHECK(readable(a) == 0, "id 7's route event left a: a readable");
	r = migrate(a, b, i5); /* the other way round: the two files' locks in the other order */
	CHECK(r == 2, "events_reported of id 5 back on a: %u", r);
	expect_event(b, 7, EV_ROUTE_RESOLVED, "id 7's route event on b");
	expect_eagain(b, "b read again");
	CHECK(destroy_id(a, i5) == 2, "events_reported of id 5");
	CHECK(destroy_id(a, i6) == 1, "events_reported of id 6");
	CHECK(destroy_id(b, i7) == 2, "events_reported of id 7");
	CHECK(destroy_id(b, i8) == 1, "events_reported of id 8");
}

/* 4: LEAVE_MCAST drops the membership's unread JOIN event */
static void leave(int a, int b)
{
	struct rdma_ucm_bind_ip bc;
	struct rdma_ucm_join_ip_mcast jc;
	struct rdma_ucm_create_id_resp jr;
	struct rdma_ucm_destroy_id lc;
	struct rdma_ucm_destroy_id_resp lr;
	/* multicast needs a UD id (cma_join_multicast) */
	uint32_t i9 = create_id_ps(a, 9, RDMA_PS_UDP, 4 /* IBV_QPT_UD */);
	int ret;
	(void)b;

	memset(&bc, 0, sizeof(bc));
	sin6_of(&bc.addr, "192.0.2.1");
	bc.id = i9;
	ret = cmd(a, RDMA_USER_CM_CMD_BIND_IP, &bc, sizeof(bc), 0);
	CHECK(ret == 0, "bind_ip %d", ret);
	for (int round = 0; round < 2; round++) {
		memset(&jc, 0, sizeof(jc));
		jc.response = (uintptr_t)&jr;
		jc.uid = 90 + (uint64_t)round;
		sin6_of(&jc.addr, "239.0.2.9");
		jc.id = i9;
		ret = cmd(a, RDMA_USER_CM_CMD_JOIN_IP_MCAST, &jc, sizeof(jc), sizeof(jr));
		CHECK(ret == 0, "join %d", ret);
		nap();
		CHECK(readable(a) == 1, "round %d: the join's event: fd not readable", round);
		if (round == 1)
			expect_event(a, 91, EV_MULTICAST_JOIN, "the second join's");
		memset(&lc, 0, sizeof(lc));
		lc.response = (uintptr_t)&lr;
		lc.id = jr.id;
		lr.events_reported = 0xffff;
		ret = cmd(a, RDMA_USER_CM_CMD_LEAVE_MCAST, &lc, sizeof(lc), sizeof(lr));
		CHECK(ret == 0 && lr.events_reported == (uint32_t)round,
		      "round %d: leave %d events_reported %u", round, ret, lr.events_reported);
		CHECK(readable(a) == 0, "round %d: after the leave: fd readable", round);
		expect_eagain(a, "after the leave");
	}
	/* the read JOIN counts for the id too (ucma_get_event) */
	CHECK(destroy_id(a, i9) == 1, "events_reported of id 9");
}

/* 5: two threads blocked in GET_EVENT on one file while a third issues the commands whose
 * answers bring the pushes (it reads the socket they sleep on) */
#define NEV 20
static int cfd;
static int seen[NEV + 1];
static pthread_mutex_t seen_lock = PTHREAD_MUTEX_INITIALIZER;

static void *reader(void *arg)
{
	struct rdma_ucm_event_resp ev;
	int *n = arg;

	for (;;) {
		int ret = get_event(cfd, &ev);

		if (ret) {
			printf("FAIL reader: get_event %d\n", ret);
			probe_failed = 1;
			return NULL;
		}
		if (ev.uid == 999)
			return NULL; /* a stop: queued after every other one */
		pthread_mutex_lock(&seen_lock);
		if (ev.uid >= 1 && ev.uid <= NEV && ev.event == EV_ADDR_RESOLVED)
			seen[ev.uid]++;
		else
			seen[0]++;
		pthread_mutex_unlock(&seen_lock);
		++*n;
	}
}

static void threads(int a, int b)
{
	pthread_t t[2];
	uint32_t ids[NEV + 2];
	int n[2] = { 0, 0 }, total = 0, once = 0;
	(void)a;
	(void)b;

	cfd = emu_ucma_open();
	CHECK(cfd >= 0, "open c %d", cfd);
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, reader, &n[i]);
	usleep(100 * 1000); /* both asleep on the empty file */
	for (int i = 0; i < NEV; i++) {
		ids[i] = create_id(cfd, (uint64_t)i + 1);
		resolve_addr(cfd, ids[i]);
	}
	nap();
	for (int i = NEV; i < NEV + 2; i++) {
		ids[i] = create_id(cfd, 999);
		resolve_addr(cfd, ids[i]);
	}
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	for (int u = 1; u <= NEV; u++)
		once += seen[u] == 1;
	total = n[0] + n[1];
	CHECK(total == NEV && once == NEV && seen[0] == 0,
	      "read %d (%d + %d), %d exactly once, %d unexpected", total, n[0], n[1], once,
	      seen[0]);
	set_nonblock(cfd);
	expect_eagain(cfd, "threads' file read");
	CHECK(readable(cfd) == 0, "threads' file read: readable");
	emu_ucma_close(cfd);
}

/* Runs one part; its ok line only when none of its checks failed. */
static void section(void (*fn)(int, int), int a, int b, const char *what)
{
	int before = probe_failed;

	probe_failed = 0;
	fn(a, b);
	if (!probe_failed)
		printf("ok %s\n", what);
	probe_failed |= before;
}

/* race (a run of its own: how many events get pushed varies): DESTROY_ID right after the
 * RESOLVE_IP that queues the id's event, 50 times, so that the event is sometimes still on
 * its way when the id goes (posted DESTROY_ID, docs/daemon.md "Posted commands"): none of
 * them is ever read, the fd never stays readable, and the file's queue and the process's
 * copy still agree (an event read after them comes, the daemon keeps the file). */
static void race(int a, int b)
{
	uint32_t last;
	(void)b;

	for (int i = 0; i < 50; i++) {
		uint32_t id = create_id(a, 100 + (uint64_t)i), r;

		resolve_addr(a, id);
		r = destroy_id(a, id);
		CHECK(r == 0, "events_reported of id %d destroyed at once: %u", i, r);
	}
	nap();
	CHECK(readable(a) == 0, "only destroyed ids' events: fd readable");
	expect_eagain(a, "destroyed ids' events");
	last = create_id(a, 200);
	resolve_addr(a, last);
	nap();
	CHECK(readable(a) == 1, "a live id's event: fd not readable");
	expect_event(a, 200, EV_ADDR_RESOLVED, "the live id's, after 50 destroyed");
	CHECK(destroy_id(a, last) == 1, "events_reported of the live id");
}

static void set_tos(int fd, uint32_t id, uint8_t tos)
{
	struct rdma_ucm_set_option c = { .optval = (uintptr_t)&tos, .id = id, .level = 0,
					 .optname = 0 /* RDMA_OPTION_ID_TOS */, .optlen = 1 };
	int ret = cmd(fd, RDMA_USER_CM_CMD_SET_OPTION, &c, sizeof(c), 0);

	CHECK(ret == 0, "set_option TOS %d", ret);
}

/* verdict (a run of its own, its ucmalink line checked apart): RESOLVE_IP on fresh ids is
 * posted once the daemon's verdict came with a round trip's answer, and a round trip again
 * once the daemon took it back (a device removal: rxe1, which none of these ids uses) or for
 * an id that was used (TOS set); every id still gets its ADDR_RESOLVED, in order. */
static void verdict(int a, int b)
{
	uint32_t id[5];
	int r;
	(void)b;

	id[0] = create_id(a, 1);
	resolve_addr(a, id[0]); /* round trip: the verdict comes before its answer */
	id[1] = create_id(a, 2);
	resolve_addr(a, id[1]); /* posted */
	r = rdmaemu_ctl_device_remove("rxe-ref", "rxe1");
	CHECK(r == 0, "remove rxe1: %d", r);
	id[2] = create_id(a, 3);
	resolve_addr(a, id[2]); /* round trip: taken back; a new verdict */
	id[3] = create_id(a, 4);
	set_tos(a, id[3], 32);
	resolve_addr(a, id[3]); /* round trip: not fresh */
	id[4] = create_id(a, 5);
	resolve_addr(a, id[4]); /* posted */
	nap();
	for (int i = 0; i < 5; i++)
		expect_event(a, (uint64_t)i + 1, EV_ADDR_RESOLVED, "resolved");
	for (int i = 0; i < 5; i++)
		CHECK(destroy_id(a, id[i]) == 1, "events_reported of id %d", i);
}

/* forget (a run of its own): file b listens on 192.0.2.1:7199, file a connects to it, b
 * reads the CONNECT_REQUEST (the daemon sends the verdict that its ACCEPT would return 0),
 * then a destroys its id: the REJ reaches the request, whose event is dropped (not accepted
 * yet, as ucma does), and the daemon tells b to forget the verdict, so b's ACCEPT asks and
 * fails with EINVAL as the kernel's does ("the accept will just fail later"). */
static void forget(int a, int b)
{
	struct rdma_ucm_bind_ip bc;
	struct rdma_ucm_listen lc;
	struct rdma_ucm_connect cc;
	struct rdma_ucm_accept ac;
	struct rdma_ucm_event_resp ev;
	uint32_t l = create_id(b, 10), c = create_id(a, 11), n;
	int ret;

	memset(&bc, 0, sizeof(bc));
	sin6_of(&bc.addr, "192.0.2.1");
	((struct sockaddr_in *)&bc.addr)->sin_port = htons(7199);
	bc.id = l;
	ret = cmd(b, RDMA_USER_CM_CMD_BIND_IP, &bc, sizeof(bc), 0);
	CHECK(ret == 0, "bind_ip %d", ret);
	lc = (struct rdma_ucm_listen){ .id = l, .backlog = 4 };
	ret = cmd(b, RDMA_USER_CM_CMD_LISTEN, &lc, sizeof(lc), 0);
	CHECK(ret == 0, "listen %d", ret);
	{
		struct rdma_ucm_resolve_ip rc;

		memset(&rc, 0, sizeof(rc));
		sin6_of(&rc.dst_addr, "192.0.2.1");
		((struct sockaddr_in *)&rc.dst_addr)->sin_port = htons(7199);
		rc.id = c;
		rc.timeout_ms = 2000;
		ret = cmd(a, RDMA_USER_CM_CMD_RESOLVE_IP, &rc, sizeof(rc), 0);
		CHECK(ret == 0, "resolve_ip %d", ret);
	}
	nap();
	expect_event(a, 11, EV_ADDR_RESOLVED, "client's address");
	resolve_route(a, c);
	nap();
	expect_event(a, 11, EV_ROUTE_RESOLVED, "client's route");
	memset(&cc, 0, sizeof(cc));
	cc.id = c;
	cc.conn_param.valid = 1;
	cc.conn_param.qp_num = 0x1234;
	cc.conn_param.responder_resources = 1;
	cc.conn_param.initiator_depth = 1;
	ret = cmd(a, RDMA_USER_CM_CMD_CONNECT, &cc, sizeof(cc), 0);
	CHECK(ret == 0, "connect %d", ret);
	nap();
	ret = get_event(b, &ev);
	CHECK(ret == 0 && ev.event == EV_CONNECT_REQUEST && ev.uid == 10,
	      "request: ret %d event %u uid %llu", ret, ev.event, (unsigned long long)ev.uid);
	n = ev.id;
	CHECK(destroy_id(a, c) == 2, "events_reported of the client"); /* addr, route */
	nap();
	memset(&ac, 0, sizeof(ac));
	ac.id = n;
	ac.uid = 12;
	ac.conn_param.valid = 1;
	ac.conn_param.qp_num = 0x5678;
	ret = cmd(b, RDMA_USER_CM_CMD_ACCEPT, &ac, sizeof(ac), 0);
	CHECK(ret == -EINVAL, "accept of a request its peer gave up: %d", ret);
	CHECK(destroy_id(b, n) == 0, "events_reported of the request");
	CHECK(destroy_id(b, l) == 1, "events_reported of the listener");
}

int main(int argc, char **argv)
{
	int a = emu_ucma_open(), b = emu_ucma_open();

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (a < 0 || b < 0) {
		printf("FAIL open %d %d\n", a, b);
		return 1;
	}
	set_nonblock(a);
	set_nonblock(b);
	if (argc > 1 && !strcmp(argv[1], "race")) {
		section(race, a, b, "race: 50 ids destroyed as their events come, none read");
		emu_ucma_close(a);
		emu_ucma_close(b);
		return probe_failed;
	}
	if (argc > 1 && !strcmp(argv[1], "forget")) {
		section(forget, a, b, "forget: accept of a request its peer gave up: EINVAL");
		emu_ucma_close(a);
		emu_ucma_close(b);
		return probe_failed;
	}
	if (argc > 1 && !strcmp(argv[1], "verdict")) {
		section(verdict, a, b, "verdict: 5 ids resolved, 2 posted, all resolved in order");
		emu_ucma_close(a);
		emu_ucma_close(b);
		return probe_failed;
	}
	section(order, a, b, "order: 2 events pushed while outside the library, read in order");
	section(destroy, a, b,
		"destroy: events_reported 0 with the event unread (dropped), 1 read");
	section(migration, a, b,
		"migrate: unread events move in order, the source keeps the rest");
	section(leave, a, b, "leave: events_reported 0 with the join unread (dropped), 1 read");
	section(threads, a, b, "threads: 20 events, each read once by one of two blocked readers");
	emu_ucma_close(a);
	emu_ucma_close(b);
	return probe_failed;
}
