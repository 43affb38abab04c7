/* CH, ID, MIG, WEV, EVT (spec §15 rows 100-115, 194-198, 262): event channels, creating and
 * destroying ids, migration, and the events a process can make without the network (USER
 * events of rdma_write_cm_event, v60). */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <rdma/rdma_cma.h>

#include "conformance/cm_util.h"
#include "conformance/conformance.h"
#include "rdmaemu/compat.h"

#define CTX ((void *)0x1234abcdUL)

/* ---- CH ---- */

static void ch_103(const struct conf_case *c)
{
	struct rdma_event_channel *ch;
	int fl;

	conf_stimulus("rdma_create_event_channel()");
	ch = cm_channel();
	fl = fcntl(ch->fd, F_GETFD);
	conf_expect(ch->fd >= 0, "fd %d", ch->fd);
	conf_expect(fl >= 0 && (fl & FD_CLOEXEC), "FD_CLOEXEC not set (flags 0x%x)", fl);
	conf_note("fd %d, FD_CLOEXEC", ch->fd);
	rdma_destroy_event_channel(ch);
}

static void ch_103b(const struct conf_case *c)
{
	struct rdma_event_channel *ch;
	char link[64], target[256];
	ssize_t n;

	conf_stimulus("readlink(/proc/self/fd/<channel fd>)");
	ch = cm_channel();
	snprintf(link, sizeof link, "/proc/self/fd/%d", ch->fd);
	n = readlink(link, target, sizeof target - 1);
	if (n < 0)
		conf_fatal("readlink: %s", conf_errno_name(errno));
	target[n] = 0;
	conf_expect(strstr(target, "rdma_cm") != NULL, "fd refers to %s", target);
	conf_note("%s", target);
}

static void ch_104(const struct conf_case *c)
{
	cm_write_event_fn wr = cm_write_event();
	struct rdma_event_channel *ch = cm_channel();
	struct rdma_cm_id *id = cm_id(ch, RDMA_PS_TCP);
	struct rdma_cm_event *ev;
	int r0, r1, r2;

	conf_stimulus("poll(channel fd) with 0 events, after rdma_write_cm_event(USER), after reading it");
	r0 = cm_readable(ch);
	if (wr(id, RDMAEMU_CM_EVENT_USER, 0, 0))
		conf_fatal("rdma_write_cm_event: %s", conf_errno_name(errno));
	r1 = cm_readable(ch);
	if (rdma_get_cm_event(ch, &ev))
		conf_fatal("rdma_get_cm_event: %s", conf_errno_name(errno));
	r2 = cm_readable(ch);
	EXPECT_INT("readable, empty queue", r0, 0);
	EXPECT_INT("readable, one event", r1, 1);
	EXPECT_INT("readable, event read", r2, 0);
	rdma_ack_cm_event(ev);
	conf_note("POLLIN %d / %d / %d", r0, r1, r2);
}

static void ch_105(const struct conf_case *c)
{
	struct rdma_event_channel *ch = cm_channel();
	struct rdma_cm_event *ev = NULL;
	int ret, e;

	conf_stimulus("fcntl(fd, O_NONBLOCK); rdma_get_cm_event(ch, &ev) on an empty queue");
	if (fcntl(ch->fd, F_SETFL, fcntl(ch->fd, F_GETFL) | O_NONBLOCK))
		conf_fatal("fcntl: %s", conf_errno_name(errno));
	errno = 0;
	ret = rdma_get_cm_event(ch, &ev);
	e = errno;
	CM_EXPECT_FAIL("rdma_get_cm_event", ret, e, EAGAIN);
	conf_note("-1 errno %s", conf_errno_name(e));
}

static void ch_106(const struct conf_case *c)
{
	cm_write_event_fn wr = cm_write_event();
	struct rdma_event_channel *ch = cm_channel();
	struct rdma_cm_id *a = cm_id(ch, RDMA_PS_TCP), *b = cm_id(ch, RDMA_PS_UDP);
	struct rdma_cm_event *ev[3];

	conf_stimulus("USER events a(1), b(2), a(3) on one channel; read three");
	if (wr(a, RDMAEMU_CM_EVENT_USER, 1, 0) || wr(b, RDMAEMU_CM_EVENT_USER, 2, 0) ||
	    wr(a, RDMAEMU_CM_EVENT_USER, 3, 0))
		conf_fatal("rdma_write_cm_event: %s", conf_errno_name(errno));
	for (int i = 0; i < 3; i++)
		if (rdma_get_cm_event(ch, &ev[i]))
			conf_fatal("rdma_get_cm_event: %s", conf_errno_name(errno));
	conf_expect(ev[0]->id == a && ev[0]->status == 1, "1st: id %s status %d",
		    ev[0]->id == a ? "a" : "?", ev[0]->status);
	conf_expect(ev[1]->id == b && ev[1]->status == 2, "2nd: id %s status %d",
		    ev[1]->id == b ? "b" : "?", ev[1]->status);
	conf_expect(ev[2]->id == a && ev[2]->status == 3, "3rd: id %s status %d",
		    ev[2]->id == a ? "a" : "?", ev[2]->status);
	for (int i = 0; i < 3; i++)
		rdma_ack_cm_event(ev[i]);
	conf_note("a/1, b/2, a/3 in queue order");
}

/* ---- ID ---- */

static void id_107(const struct conf_case *c)
{
	struct rdma_event_channel *ch = cm_channel();
	static const char zero[sizeof(struct rdma_route)];
	struct rdma_cm_id *id;
	int ret;

	conf_stimulus("rdma_create_id(ch, &id, ctx, RDMA_PS_TCP)");
	ret = rdma_create_id(ch, &id, CTX, RDMA_PS_TCP);
	if (!conf_expect(ret == 0, "ret %d errno %s", ret, conf_errno_name(errno)))
		return;
	conf_expect(id->channel == ch, "channel differs");
	conf_expect(id->context == CTX, "context differs");
	EXPECT_HEX("ps", id->ps, RDMA_PS_TCP);
	EXPECT_INT("qp_type", id->qp_type, IBV_QPT_RC);
	EXPECT_NULL("verbs", id->verbs);
	EXPECT_NULL("qp", id->qp);
	EXPECT_NULL("pd", id->pd);
	EXPECT_NULL("event", id->event);
	conf_expect(!memcmp(&id->route, zero, sizeof zero), "route not zeroed");
	EXPECT_INT("src port", rdma_get_src_port(id), 0);
	EXPECT_INT("dst port", rdma_get_dst_port(id), 0);
	rdma_destroy_id(id);
	conf_note("0; ps 0x106, RC, verbs/qp/pd/event NULL, route zero");
}

static void id_108(const struct conf_case *c)
{
	static const struct { enum rdma_port_space ps; int qpt; } t[] = {
		{ RDMA_PS_UDP, IBV_QPT_UD }, { RDMA_PS_IPOIB, IBV_QPT_UD }, { RDMA_PS_IB, IBV_QPT_RC },
	};
	struct rdma_event_channel *ch = cm_channel();

	conf_stimulus("rdma_create_id with ps UDP / IPOIB / IB");
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		struct rdma_cm_id *id;
		int ret = rdma_create_id(ch, &id, NULL, t[i].ps), e = errno;

		if (!conf_expect(ret == 0, "ps 0x%x: errno %s", t[i].ps, conf_errno_name(e)))
			continue;
		conf_expect(id->qp_type == (enum ibv_qp_type)t[i].qpt, "ps 0x%x: qp_type %d, want %d",
			    t[i].ps, id->qp_type, t[i].qpt);
		rdma_destroy_id(id);
	}
	conf_note("UD / UD / RC");
}

static void id_109(const struct conf_case *c)
{
	struct rdma_cm_id *id;
	int ret;

	conf_stimulus("rdma_create_id(NULL, &id, ctx, RDMA_PS_TCP)");
	ret = rdma_create_id(NULL, &id, CTX, RDMA_PS_TCP);
	if (!conf_expect(ret == 0, "ret %d errno %s", ret, conf_errno_name(errno)))
		return;
	conf_expect(id->channel != NULL, "channel NULL");
	/* a sync id refuses to become sync again (spec §6.1) */
	errno = 0;
	ret = rdma_migrate_id(id, NULL);
	CM_EXPECT_FAIL("rdma_migrate_id(sync id, NULL)", ret, errno, EINVAL);
	rdma_destroy_id(id);
	conf_note("private channel fd %s; migrate(id, NULL) EINVAL (sync)", "set");
}

static void id_110(const struct conf_case *c)
{
	struct rdma_event_channel *ch = cm_channel();
	struct rdma_cm_id *id = (void *)0x5a5a;
	int ret, e;

	conf_stimulus("rdma_create_id(ch, &id, ctx, 0x1234)");
	errno = 0;
	ret = rdma_create_id(ch, &id, NULL, (enum rdma_port_space)0x1234);
	e = errno;
	CM_EXPECT_FAIL("rdma_create_id", ret, e, EINVAL);
	conf_expect(id == (void *)0x5a5a, "*id was written");
	conf_note("-1 errno %s", conf_errno_name(e));
}

struct ack_later {
	struct rdma_cm_event *ev;
	volatile int acked;
};

static void *ack_thread(void *arg)
{
	struct ack_later *a = arg;

	/* The sleep only gives a call that does not wait the chance to return first; a
	 * correct library passes whatever the scheduling. */
	usleep(200 * 1000);
	a->acked = 1;
	rdma_ack_cm_event(a->ev);
	return NULL;
}

static void id_111(const struct conf_case *c)
{
	cm_write_event_fn wr = cm_write_event();
	struct rdma_event_channel *ch = cm_channel();
	struct rdma_cm_id *id = cm_id(ch, RDMA_PS_TCP);
	struct ack_later a = { 0 };
	pthread_t t;
	int ret, seen;

	conf_stimulus("read a USER event; rdma_destroy_id while another thread acks it later");
	if (wr(id, RDMAEMU_CM_EVENT_USER, 0, 0) || rdma_get_cm_event(ch, &a.ev))
		conf_fatal("event: %s", conf_errno_name(errno));
	pthread_create(&t, NULL, ack_thread, &a);
	ret = rdma_destroy_id(id);
	seen = a.acked;
	pthread_join(t, NULL);
	EXPECT_INT("ret", ret, 0);
	conf_expect(seen == 1, "rdma_destroy_id returned before the event was acked");
	conf_note("returned 0 after the ack");
}

static void id_115(const struct conf_case *c)
{
	struct rdma_cm_id *id = cm_dummy_id(-1);
	int ret, e;

	conf_stimulus("rdma_destroy_id(dummy id with channel {fd=-1})");
	errno = 0;
	ret = rdma_destroy_id(id);
	e = errno;
	CM_EXPECT_FAIL("rdma_destroy_id", ret, e, EBADF);
	conf_note("-1 errno %s", conf_errno_name(e));
}

/* ---- MIG ---- */

static void mig_194(const struct conf_case *c)
{
	struct rdma_cm_id *id;
	int ret, e;

	conf_stimulus("rdma_migrate_id(sync id, NULL)");
	if (rdma_create_id(NULL, &id, NULL, RDMA_PS_TCP))
		conf_fatal("rdma_create_id: %s", conf_errno_name(errno));
	errno = 0;
	ret = rdma_migrate_id(id, NULL);
	e = errno;
	CM_EXPECT_FAIL("rdma_migrate_id", ret, e, EINVAL);
	conf_note("-1 errno %s", conf_errno_name(e));
}

static void mig_195(const struct conf_case *c)
{
	struct rdma_event_channel bad = { .fd = -1 };
	struct rdma_cm_id *id = cm_dummy_id(-1);
	int ret, e;

	conf_stimulus("rdma_migrate_id(dummy async id, &{fd=-1})");
	errno = 0;
	ret = rdma_migrate_id(id, &bad);
	e = errno;
	CM_EXPECT_FAIL("rdma_migrate_id", ret, e, EBADF);
	conf_note("-1 errno %s", conf_errno_name(e));
}

static void mig_196(const struct conf_case *c)
{
	cm_write_event_fn wr = cm_write_event();
	struct rdma_event_channel *old = cm_channel(), *nu = cm_channel();
	struct rdma_cm_id *id = cm_id(old, RDMA_PS_TCP);
	struct rdma_cm_event *ev;
	int ret, r_old, r_new;

	conf_stimulus("USER event queued on the old channel; rdma_migrate_id(id, new); read new");
	if (wr(id, RDMAEMU_CM_EVENT_USER, 7, 0))
		conf_fatal("rdma_write_cm_event: %s", conf_errno_name(errno));
	ret = rdma_migrate_id(id, nu);
	EXPECT_INT("ret", ret, 0);
	conf_expect(id->channel == nu, "id->channel is not the new channel");
	r_old = cm_readable(old);
	r_new = cm_readable(nu);
	EXPECT_INT("old channel readable", r_old, 0);
	EXPECT_INT("new channel readable", r_new, 1);
	if (fcntl(nu->fd, F_SETFL, O_NONBLOCK) || rdma_get_cm_event(nu, &ev)) {
		conf_expect(false, "no event on the new channel (%s)", conf_errno_name(errno));
		return;
	}
	conf_expect(ev->id == id && ev->status == 7, "event of another id or status %d", ev->status);
	rdma_ack_cm_event(ev);
	conf_note("0; the event moved with the id");
}

static void mig_197(const struct conf_case *c)
{
	struct rdma_event_channel *ch = cm_channel();
	struct rdma_cm_id *id = cm_id(ch, RDMA_PS_TCP);
	int ret, ret2, e2;

	conf_stimulus("rdma_migrate_id(async id, NULL), then rdma_migrate_id(id, NULL) again");
	ret = rdma_migrate_id(id, NULL);
	EXPECT_INT("ret", ret, 0);
	conf_expect(id->channel && id->channel != ch, "id->channel not a new private channel");
	errno = 0;
	ret2 = rdma_migrate_id(id, NULL);
	e2 = errno;
	CM_EXPECT_FAIL("second migrate (id is now sync)", ret2, e2, EINVAL);
	conf_note("0, then -1 errno %s (the id is synchronous)", conf_errno_name(e2));
}

static void mig_198(const struct conf_case *c)
{
	cm_write_event_fn wr = cm_write_event();
	struct rdma_event_channel *old = cm_channel(), *nu = cm_channel();
	struct rdma_cm_id *id = cm_id(old, RDMA_PS_TCP);
	struct ack_later a = { 0 };
	pthread_t t;
	int ret, seen;

	conf_stimulus("read a USER event; rdma_migrate_id while another thread acks it later");
	if (wr(id, RDMAEMU_CM_EVENT_USER, 0, 0) || rdma_get_cm_event(old, &a.ev))
		conf_fatal("event: %s", conf_errno_name(errno));
	pthread_create(&t, NULL, ack_thread, &a);
	ret = rdma_migrate_id(id, nu);
	seen = a.acked;
	pthread_join(t, NULL);
	EXPECT_INT("ret", ret, 0);
	conf_expect(seen == 1, "rdma_migrate_id returned before the event was acked");
	conf_note("returned 0 after the ack");
}

/* ---- WEV, EVT ---- */

static void wev_100(const struct conf_case *c)
{
	cm_write_event_fn wr = cm_write_event();
	struct rdma_event_channel *ch = cm_channel();
	struct rdma_cm_id *id = cm_id(ch, RDMA_PS_TCP);
	int ret, e;

	conf_stimulus("rdma_write_cm_event(id, RDMA_CM_EVENT_ESTABLISHED, 0, 0)");
	errno = 0;
	ret = wr(id, RDMA_CM_EVENT_ESTABLISHED, 0, 0);
	e = errno;
	CM_EXPECT_FAIL("rdma_write_cm_event", ret, e, EINVAL);
	EXPECT_INT("channel readable", cm_readable(ch), 0);
	conf_note("-1 errno %s, no event", conf_errno_name(e));
}

static void wev_101(const struct conf_case *c)
{
	cm_write_event_fn wr = cm_write_event();
	struct rdma_event_channel *ch = cm_channel();
	struct rdma_cm_id *id = cm_id(ch, RDMA_PS_TCP);
	struct rdma_cm_event *ev;
	uint64_t arg;
	int ret;

	conf_stimulus("rdma_write_cm_event(id, USER, 5, 0x1122334455667788); poll; get");
	ret = wr(id, RDMAEMU_CM_EVENT_USER, 5, 0x1122334455667788ull);
	EXPECT_INT("ret", ret, 0);
	EXPECT_INT("poll wakes", cm_readable(ch), 1);
	if (rdma_get_cm_event(ch, &ev))
		conf_fatal("rdma_get_cm_event: %s", conf_errno_name(errno));
	memcpy(&arg, &ev->param, sizeof arg);
	CM_EXPECT_EVENT("event", ev->event, RDMAEMU_CM_EVENT_USER);
	conf_expect(ev->id == id, "event->id differs");
	EXPECT_INT("status", ev->status, 5);
	EXPECT_HEX("param.arg", arg, 0x1122334455667788ull);
	EXPECT_NULL("listen_id", ev->listen_id);
	rdma_ack_cm_event(ev);
	conf_note("USER, status 5, arg 0x%llx", (unsigned long long)arg);
}

static void evt_262(const struct conf_case *c)
{
	cm_write_event_fn wr = cm_write_event();
	struct rdma_event_channel *ch = cm_channel();
	struct rdma_cm_id *id = cm_id(ch, RDMA_PS_UDP);
	struct rdma_cm_event *ev;

	conf_stimulus("a USER event on a listening id: event->listen_id");
	if (rdma_listen(id, 1))
		conf_fatal("rdma_listen: %s", conf_errno_name(errno));
	if (wr(id, RDMAEMU_CM_EVENT_USER, 0, 0) || rdma_get_cm_event(ch, &ev))
		conf_fatal("event: %s", conf_errno_name(errno));
	EXPECT_NULL("listen_id", ev->listen_id);
	rdma_ack_cm_event(ev);
	conf_note("NULL");
}

/* ---- RAI (v60): rdma_resolve_addrinfo / rdma_query_addrinfo ---- */

typedef int (*rai_fn)(struct rdma_cm_id *, const char *, const char *,
		      const struct rdma_addrinfo *);
typedef int (*qai_fn)(struct rdma_cm_id *, struct rdma_addrinfo **);

static rai_fn rai(void)
{
	rai_fn fn = (rai_fn)dlsym(RTLD_DEFAULT, "rdma_resolve_addrinfo");

	if (!fn)
		conf_notrun("needs rdma_resolve_addrinfo (rdma-core >= v60)");
	return fn;
}

static qai_fn qai(void)
{
	qai_fn fn = (qai_fn)dlsym(RTLD_DEFAULT, "rdma_query_addrinfo");

	if (!fn)
		conf_notrun("needs rdma_query_addrinfo (rdma-core >= v60)");
	return fn;
}

static void rai_90(const struct conf_case *c)
{
	rai_fn r = rai();
	int ret, e;

	conf_stimulus("rdma_resolve_addrinfo(NULL, \"192.0.2.1\", \"7471\", NULL)");
	errno = 0;
	ret = r(NULL, "192.0.2.1", "7471", NULL);
	e = errno;
	CM_EXPECT_FAIL("rdma_resolve_addrinfo", ret, e, EINVAL);
	conf_note("-1 errno %s", conf_errno_name(e));
}

static void rai_91(const struct conf_case *c)
{
	qai_fn q = qai();
	struct rdma_addrinfo *info = NULL;
	int r1, e1, r2, e2;

	conf_stimulus("rdma_query_addrinfo(NULL, &info) and (dummy id, NULL)");
	errno = 0;
	r1 = q(NULL, &info);
	e1 = errno;
	errno = 0;
	r2 = q(cm_dummy_id(-1), NULL);
	e2 = errno;
	CM_EXPECT_FAIL("id NULL", r1, e1, EINVAL);
	CM_EXPECT_FAIL("info NULL", r2, e2, EINVAL);
	conf_note("-1/EINVAL both");
}

static void rai_92(const struct conf_case *c)
{
	qai_fn q = qai();
	struct rdma_event_channel *ch = cm_channel();
	struct rdma_cm_id *id = cm_id(ch, RDMA_PS_TCP);
	struct rdma_addrinfo *info = NULL;
	int ret, e;

	conf_stimulus("rdma_query_addrinfo(id, &info) before any resolve");
	errno = 0;
	ret = q(id, &info);
	e = errno;
	CM_EXPECT_FAIL("rdma_query_addrinfo", ret, e, ENOENT);
	conf_note("-1 errno %s", conf_errno_name(e));
}

static bool same_ai(const struct rdma_addrinfo *a, const struct rdma_addrinfo *b)
{
	return a->ai_flags == b->ai_flags && a->ai_family == b->ai_family &&
	       a->ai_qp_type == b->ai_qp_type && a->ai_port_space == b->ai_port_space &&
	       a->ai_src_len == b->ai_src_len && a->ai_dst_len == b->ai_dst_len &&
	       (!a->ai_dst_len || !memcmp(a->ai_dst_addr, b->ai_dst_addr, a->ai_dst_len)) &&
	       (!a->ai_src_len || !memcmp(a->ai_src_addr, b->ai_src_addr, a->ai_src_len)) &&
	       a->ai_route_len == b->ai_route_len && a->ai_connect_len == b->ai_connect_len;
}

/* 93 (resolve, event, query), 94 (second query), 95 (resolve again before query) */
static void rai_dns(const struct conf_case *c)
{
	int row = c->row;
	rai_fn r = rai();
	qai_fn q = qai();
	struct rdma_event_channel *ch = cm_channel();
	struct rdma_cm_id *id = cm_id(ch, RDMA_PS_TCP);
	struct rdma_addrinfo *info = NULL, *ref = NULL;
	struct rdma_cm_event *ev;
	int ret, e;

	conf_stimulus("rdma_resolve_addrinfo(async id, \"192.0.2.1\", \"7471\", NULL)%s",
		      row == 94 ? ", get, query, query" : row == 95 ? " twice" : ", get, query");
	ret = r(id, "192.0.2.1", "7471", NULL);
	if (!conf_expect(ret == 0, "resolve: ret %d errno %d", ret, errno))
		return;
	if (row == 95) {
		errno = 0;
		ret = r(id, "192.0.2.1", "7471", NULL);
		e = errno;
		CM_EXPECT_FAIL("second resolve", ret, e, EBUSY);
		conf_note("-1 errno %s", conf_errno_name(e));
		return;
	}
	if (rdma_get_cm_event(ch, &ev))
		conf_fatal("rdma_get_cm_event: %s", conf_errno_name(errno));
	CM_EXPECT_EVENT("event", ev->event, RDMAEMU_CM_EVENT_ADDRINFO_RESOLVED);
	EXPECT_INT("status", ev->status, 0);
	conf_expect(ev->id == id, "event->id differs");
	rdma_ack_cm_event(ev);
	ret = q(id, &info);
	if (!conf_expect(ret == 0 && info, "query: ret %d errno %s", ret, conf_errno_name(errno)))
		return;
	if (rdma_getaddrinfo("192.0.2.1", "7471", NULL, &ref))
		conf_fatal("rdma_getaddrinfo: %s", conf_errno_name(errno));
	conf_expect(same_ai(info, ref), "the list differs from rdma_getaddrinfo's");
	rdma_freeaddrinfo(ref);
	rdma_freeaddrinfo(info);
	if (row == 94) {
		errno = 0;
		ret = q(id, &info);
		e = errno;
		CM_EXPECT_FAIL("second query", ret, e, ENOENT);
		conf_note("-1 errno %s", conf_errno_name(e));
		return;
	}
	conf_note("0; ADDRINFO_RESOLVED status 0; the list equals rdma_getaddrinfo's");
}

/* 96-98: failures with no event; errno as rdma-core sets it (§5.1 step 4) */
struct rai_fail_row {
	const char *node, *service;
	int flags;        /* -1: hints NULL */
	int want_errno;
};

static void rai_fail(const struct conf_case *c)
{
	const struct rai_fail_row *row = c->data;
	rai_fn r = rai();
	struct rdma_event_channel *ch = cm_channel();
	struct rdma_cm_id *id = cm_id(ch, RDMA_PS_TCP);
	struct rdma_addrinfo hints;
	int ret, e;

	memset(&hints, 0, sizeof hints);
	hints.ai_flags = row->flags;
	if (row->flags < 0)
		conf_stimulus("rdma_resolve_addrinfo(id, %s, %s, NULL hints)",
			      row->node ? row->node : "NULL", row->service ? row->service : "NULL");
	else
		conf_stimulus("rdma_resolve_addrinfo(id, %s, %s, hints flags 0x%x)",
			      row->node ? row->node : "NULL", row->service ? row->service : "NULL",
			      (unsigned)row->flags);
	errno = 0;
	ret = r(id, row->node, row->service, row->flags < 0 ? NULL : &hints);
	e = errno;
	EXPECT_INT("ret", ret, -1);
	EXPECT_INT("errno", e, row->want_errno);
	EXPECT_INT("channel readable (no event)", cm_readable(ch), 0);
	conf_note("-1, errno %d, no event", e);
}

static const struct rai_fail_row rai_96a = { NULL, "7471", RAI_SA | RAI_DNS, ENOTSUP };
static const struct rai_fail_row rai_96b = { "192.0.2.1", "7471", RAI_SA, ENOTSUP };
static const struct rai_fail_row rai_97 = { NULL, NULL, RAI_SA, -1 };
static const struct rai_fail_row rai_98 = { "no-such-host.invalid", "7471", -1, EAI_NONAME };

static void rai_99(const struct conf_case *c)
{
	rai_fn r = rai();
	qai_fn q = qai();
	struct rdma_addrinfo *info = NULL;
	struct rdma_cm_id *id;
	int ret;

	conf_stimulus("rdma_resolve_addrinfo(sync id, \"192.0.2.1\", \"7471\", NULL); query");
	if (rdma_create_id(NULL, &id, NULL, RDMA_PS_TCP))
		conf_fatal("rdma_create_id: %s", conf_errno_name(errno));
	ret = r(id, "192.0.2.1", "7471", NULL);
	if (!conf_expect(ret == 0, "ret %d errno %d", ret, errno))
		return;
	conf_expect(id->event && id->event->event == (enum rdma_cm_event_type)
					  RDMAEMU_CM_EVENT_ADDRINFO_RESOLVED,
		    "id->event is not ADDRINFO_RESOLVED");
	ret = q(id, &info);
	conf_expect(ret == 0 && info, "query: ret %d errno %s", ret, conf_errno_name(errno));
	if (info)
		rdma_freeaddrinfo(info);
	rdma_destroy_id(id);
	conf_note("0; id->event ADDRINFO_RESOLVED; query works");
}

#define DEV (PRE_DEVICE | PRE_CM)
#define V60 (PRE_DEVICE | PRE_CM | PRE_LEVEL60)
/* where the v60 rows' expected values come from (docs/rdma-core-generations.md) */
#define DOC_WEV "rdma-core 7d7ca522f (v60), librdmacm/cma.c:rdma_write_cm_event"
#define DOC_RAI "rdma-core 7b1a686bc (v60), librdmacm/cma.c:rdma_resolve_addrinfo, " \
	"rdma_query_addrinfo"
#define DOC_RAI_DNS "rdma-core 30828be88 (v60), librdmacm/cma.c:rdma_resolve_addrinfo's DNS path"

static const struct conf_case cases[] = {
	{ "CH-103", "CH", 103, "rdma_create_event_channel: fd >= 0 with FD_CLOEXEC", NULL, DEV,
	  NULL, 0, ch_103, NULL },
	{ "CH-103b", "CH", 103, "the channel fd refers to the rdma_cm char device", NULL, DEV,
	  NULL, 0, ch_103b, NULL },
	{ "CH-104", "CH", 104, "poll on the channel fd: POLLIN iff >= 1 event queued", NULL, V60,
	  NULL, 0, ch_104, NULL },
	{ "CH-105", "CH", 105, "O_NONBLOCK fd, empty queue: rdma_get_cm_event -1/EAGAIN", NULL,
	  DEV, NULL, 0, ch_105, NULL },
	{ "CH-106", "CH", 106, "two ids on one channel: events interleave in queue order, "
	  "event->id names the id", NULL, V60, NULL, 0, ch_106, NULL },
	{ "ID-107", "ID", 107, "rdma_create_id(ch,&id,ctx,RDMA_PS_TCP): fields set, the rest "
	  "NULL/zero", NULL, DEV, NULL, 0, id_107, NULL },
	{ "ID-108", "ID", 108, "ps UDP / IPOIB / IB: qp_type UD / UD / RC", NULL, DEV, NULL, 0,
	  id_108, NULL },
	{ "ID-109", "ID", 109, "channel NULL: a sync id with a private non-NULL channel", NULL,
	  DEV, NULL, 0, id_109, NULL },
	{ "ID-110", "ID", 110, "ps 0x1234: -1/EINVAL", NULL, DEV, NULL, 0, id_110, NULL },
	{ "ID-111", "ID", 111, "destroy with an unacked event read by another thread blocks until "
	  "the ack, then 0", NULL, V60, NULL, 0, id_111, NULL },
	{ "ID-115", "ID", 115, "destroy of an id whose channel fd is -1: -1/EBADF", NULL, PRE_NONE,
	  NULL, 0, id_115, NULL },
	{ "MIG-194", "MIG", 194, "rdma_migrate_id(sync id, NULL): -1/EINVAL", NULL, DEV, NULL, 0,
	  mig_194, NULL },
	{ "MIG-195", "MIG", 195, "async id to a channel with fd -1: -1/EBADF", NULL, PRE_NONE,
	  NULL, 0, mig_195, NULL },
	{ "MIG-196", "MIG", 196, "a queued unread event moves with the id to the new channel",
	  NULL, V60, NULL, 0, mig_196, NULL },
	{ "MIG-197", "MIG", 197, "migrate(id, NULL): the id becomes synchronous", NULL, DEV, NULL,
	  0, mig_197, NULL },
	{ "MIG-198", "MIG", 198, "migrate while an event read from the old channel is unacked "
	  "returns only after the ack", "only rdma_migrate_id.3 says it blocks (§16 item 16)",
	  V60, NULL, 0, mig_198, NULL },
	{ "WEV-100", "WEV", 100, "rdma_write_cm_event(id, ESTABLISHED): -1/EINVAL",
	  DOC_WEV, V60, NULL, 0, wev_100, NULL },
	{ "WEV-101", "WEV", 101, "USER status 5 arg 0x1122334455667788: the reader gets them; "
	  "poll wakes", DOC_WEV, V60, NULL, 0, wev_101, NULL },
	{ "RAI-90", "RAI", 90, "rdma_resolve_addrinfo(NULL, ...): -1/EINVAL", DOC_RAI,
	  PRE_LEVEL60, NULL, 0, rai_90, NULL },
	{ "RAI-91", "RAI", 91, "rdma_query_addrinfo(NULL,&i) / (id,NULL): -1/EINVAL",
	  DOC_RAI, PRE_LEVEL60, NULL, 0, rai_91, NULL },
	{ "RAI-92", "RAI", 92, "query before any resolve: -1/ENOENT", DOC_RAI, V60, NULL, 0, rai_92,
	  NULL },
	{ "RAI-93", "RAI", 93, "DNS resolve of a numeric node on an async id: 0, ADDRINFO_RESOLVED "
	  "status 0, query gives rdma_getaddrinfo's list", DOC_RAI_DNS, V60, NULL, 0, rai_dns, NULL },
	{ "RAI-94", "RAI", 94, "second query after a successful one: -1/ENOENT", DOC_RAI, V60, NULL,
	  0, rai_dns, NULL },
	{ "RAI-95", "RAI", 95, "resolve again before querying: -1/EBUSY", DOC_RAI, V60, NULL, 0,
	  rai_dns, NULL },
	{ "RAI-96a", "RAI", 96, "hints RAI_SA|RAI_DNS: -1, errno ENOTSUP, no event", DOC_RAI, V60,
	  NULL, 0, rai_fail, &rai_96a },
	{ "RAI-96b", "RAI", 96, "hints RAI_SA with a node: -1, errno ENOTSUP, no event", DOC_RAI, V60,
	  NULL, 0, rai_fail, &rai_96b },
	{ "RAI-97", "RAI", 97, "RAI_SA without service: -1, errno -1 (quirk), no event",
	  "the man page promises errno set to the failure reason (§16 item 10)", V60, NULL, 0,
	  rai_fail, &rai_97 },
	{ "RAI-98", "RAI", 98, "DNS failure (unknown host): -1, errno = EAI code (-2), no event",
	  "the man page promises errno set to the failure reason (§16 item 10)",
	  V60 | PRE_NODNS_SYSTEM, NULL, 0, rai_fail, &rai_98 },
	{ "RAI-99", "RAI", 99, "sync id DNS resolve: blocks, 0, id->event ADDRINFO_RESOLVED; query "
	  "works", DOC_RAI_DNS "; 7528827b7 (v61): the sync mode", V60, NULL, 0, rai_99, NULL },
	{ "EVT-262", "EVT", 262, "event->listen_id is NULL for events other than CONNECT_REQUEST",
	  NULL, V60, NULL, 0, evt_262, NULL },
};

const struct conf_area conf_area_cmid = { "CMID", cases, sizeof cases / sizeof cases[0] };
