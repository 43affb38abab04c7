/* RADDR, RROUTE and MC rows of spec §15 that need the network (rows 133-139, 141-143,
 * 221-222, 226), and the emulator-only fault cases (ARP timeout => ADDR_ERROR,
 * SA timeout => ROUTE_ERROR, address change), which steer the emulator through its control
 * API found with dlsym (the suite never links the emulator).
 *
 * Peers: the rows resolve addresses of the machine itself (the first RDMA IPv4 address, found
 * in the GID tables) and, where an unanswered neighbour is needed, the reference setup's
 * silent address 192.0.2.30 in 192.0.2.16/28 (fixtures/rxe-ref.fabric, the reference VM):
 * those rows report Notrun on a machine without 192.0.2.17. */
#include "config.h"

#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <string.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "conformance/cm_util.h"
#include "conformance/conformance.h"

#define TEST_PORT 47471
#define REF_ADDR "192.0.2.17"   /* rxe1 on s0 in the reference setup */
#define SILENT_ADDR "192.0.2.30" /* in s0's subnet; nobody answers its ARP */
#define NOROUTE_ADDR "203.0.113.9"

static void gid_of(const struct sockaddr_in *sin, uint8_t gid[16])
{
	memset(gid, 0, 16);
	gid[10] = gid[11] = 0xff;
	memcpy(gid + 12, &sin->sin_addr, 4);
}

/* The reference setup's s0 (192.0.2.17 on an RDMA port), or Notrun. */
static void need_ref(void)
{
	for (unsigned i = 0; i < 8; i++) {
		struct sockaddr_in sin;

		if (!cm_local_ipv4_try(i, 0, &sin, NULL))
			break;
		if (sin.sin_addr.s_addr == inet_addr(REF_ADDR))
			return;
	}
	conf_notrun("needs the reference setup (" REF_ADDR " on an RDMA port, "
		    SILENT_ADDR " silent in its subnet; fixtures/rxe-ref.fabric)");
}

static struct rdma_cm_event *next_event(struct rdma_event_channel *ch)
{
	struct rdma_cm_event *ev;

	if (rdma_get_cm_event(ch, &ev))
		conf_fatal("rdma_get_cm_event: %s", conf_errno_name(errno));
	return ev;
}

/* ---- rdma_resolve_addr outcomes, one table row each ---- */

enum raddr_dst { DST_LOCAL, DST_SILENT, DST_NOROUTE, DST_LOOPBACK };
enum raddr_want { W_RESOLVED, W_ERROR_EVENT, W_SYNC_ERRNO, W_NOROUTE };

struct raddr_row {
	enum raddr_dst dst;
	int timeout;
	bool sync;
	enum raddr_want want;
	int status_or_errno; /* W_ERROR_EVENT: the event's status; W_SYNC_ERRNO: errno */
	int route_errno;     /* after W_RESOLVED: 0 = don't resolve the route; -1 = expect
			      * ROUTE_RESOLVED; else rdma_resolve_route's -1 errno */
	bool twice;          /* row 136: a second resolve_addr gives -1/EINVAL */
};

static void raddr_dst(enum raddr_dst d, struct sockaddr_in *dst)
{
	switch (d) {
	case DST_LOCAL:
		cm_local_ipv4(0, TEST_PORT, dst, NULL);
		break;
	case DST_SILENT:
		need_ref();
		cm_ipv4(SILENT_ADDR, TEST_PORT, dst);
		break;
	case DST_NOROUTE:
		cm_ipv4(NOROUTE_ADDR, TEST_PORT, dst);
		break;
	case DST_LOOPBACK:
		cm_local_ipv4(0, 0, dst, NULL); /* a device must exist */
		cm_ipv4("127.0.0.1", TEST_PORT, dst);
		break;
	}
}

static void check_route(struct rdma_cm_id *id, struct rdma_event_channel *ch, int want)
{
	struct rdma_cm_event *ev;
	uint8_t sg[16], dg[16];
	int ret, e;

	errno = 0;
	ret = rdma_resolve_route(id, 2000);
	e = errno;
	if (want > 0) {
		CM_EXPECT_FAIL("rdma_resolve_route", ret, e, want);
		conf_note("route: -1 errno %s", conf_errno_name(e));
		return;
	}
	EXPECT_INT("rdma_resolve_route", ret, 0);
	if (ret)
		return;
	if (ch) {
		ev = next_event(ch);
		CM_EXPECT_EVENT("route event", ev->event, RDMA_CM_EVENT_ROUTE_RESOLVED);
		EXPECT_INT("route status", ev->status, 0);
		rdma_ack_cm_event(ev);
	}
	/* row 141: path_rec[0]'s GIDs are those of the two addresses */
	conf_expect(id->route.num_paths >= 1, "num_paths %d, want >= 1", id->route.num_paths);
	if (id->route.num_paths < 1)
		return;
	gid_of((struct sockaddr_in *)rdma_get_local_addr(id), sg);
	gid_of((struct sockaddr_in *)rdma_get_peer_addr(id), dg);
	conf_expect(!memcmp(id->route.path_rec[0].sgid.raw, sg, 16), "path sgid is not the source's");
	conf_expect(!memcmp(id->route.path_rec[0].dgid.raw, dg, 16), "path dgid is not the dest's");
	/* row 142 */
	errno = 0;
	ret = rdma_resolve_route(id, 2000);
	e = errno;
	CM_EXPECT_FAIL("second rdma_resolve_route", ret, e, EINVAL);
	conf_note("ROUTE_RESOLVED, %d path(s), mtu %d, packet lifetime %d", id->route.num_paths,
		  id->route.path_rec[0].mtu, id->route.path_rec[0].packet_life_time);
}

static void raddr_row(const struct conf_case *c)
{
	const struct raddr_row *r = c->data;
	struct rdma_event_channel *ch = r->sync ? NULL : cm_channel();
	struct rdma_cm_id *id = cm_id(ch, RDMA_PS_TCP);
	struct sockaddr_in dst;
	struct rdma_cm_event *ev;
	char buf[64];
	int ret, e;

	raddr_dst(r->dst, &dst);
	conf_stimulus("%s rdma_resolve_addr(id, NULL, %s, %d)", r->sync ? "sync" : "async",
		      conf_fmt_sockaddr(buf, sizeof buf, (struct sockaddr *)&dst, sizeof dst),
		      r->timeout);
	errno = 0;
	ret = rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, r->timeout);
	e = errno;
	/* row 138: once the kernel took the command, the destination is the id's at once */
	if (ret == 0)
		conf_expect(!memcmp(rdma_get_peer_addr(id), &dst, sizeof dst),
			    "rdma_get_peer_addr differs from dst right after the call");
	if (r->want == W_NOROUTE) {
		/* row 135: synchronously, or as an ADDR_ERROR with a negative status */
		if (ret == -1) {
			EXPECT_ERRNO("rdma_resolve_addr", e, ENETUNREACH);
			conf_note("-1 errno %s", conf_errno_name(e));
		} else {
			ev = next_event(ch);
			CM_EXPECT_EVENT("event", ev->event, RDMA_CM_EVENT_ADDR_ERROR);
			conf_expect(ev->status < 0, "status %d, want < 0", ev->status);
			conf_note("ADDR_ERROR status %d", ev->status);
			rdma_ack_cm_event(ev);
		}
		return;
	}
	if (r->want == W_SYNC_ERRNO) {
		CM_EXPECT_FAIL("rdma_resolve_addr", ret, e, r->status_or_errno);
		conf_note("-1 errno %s", conf_errno_name(e));
		return;
	}
	EXPECT_INT("rdma_resolve_addr", ret, 0);
	if (ret)
		return;
	if (!r->sync) {
		ev = next_event(ch);
		if (r->want == W_ERROR_EVENT) {
			CM_EXPECT_EVENT("event", ev->event, RDMA_CM_EVENT_ADDR_ERROR);
			EXPECT_INT("status", ev->status, r->status_or_errno);
			conf_note("%s status %d", rdma_event_str(ev->event), ev->status);
			rdma_ack_cm_event(ev);
			return;
		}
		CM_EXPECT_EVENT("event", ev->event, RDMA_CM_EVENT_ADDR_RESOLVED);
		EXPECT_INT("status", ev->status, 0);
		rdma_ack_cm_event(ev);
	} else {
		/* row 139: the sync id holds its event */
		conf_expect(id->event && id->event->event == RDMA_CM_EVENT_ADDR_RESOLVED,
			    "sync id: id->event is not ADDR_RESOLVED");
	}
	/* row 133: device, PD, port and addresses */
	conf_expect(id->verbs != NULL, "id->verbs NULL");
	conf_expect(id->pd != NULL, "id->pd NULL");
	conf_expect(id->port_num >= 1, "port_num %d", id->port_num);
	conf_expect(rdma_get_src_port(id) != 0, "source port 0");
	EXPECT_INT("dst port", ntohs(rdma_get_dst_port(id)), TEST_PORT);
	conf_note("ADDR_RESOLVED: src %s", conf_fmt_sockaddr(buf, sizeof buf,
							     rdma_get_local_addr(id),
							     sizeof(struct sockaddr_in)));
	if (r->twice) {
		errno = 0;
		ret = rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, r->timeout);
		e = errno;
		CM_EXPECT_FAIL("second rdma_resolve_addr", ret, e, EINVAL);
	}
	if (r->route_errno)
		check_route(id, ch, r->route_errno);
}

static const struct raddr_row raddr_133 = { DST_LOCAL, 2000, false, W_RESOLVED, 0, 0, false };
static const struct raddr_row raddr_134 = { DST_SILENT, 500, false, W_ERROR_EVENT, -ETIMEDOUT,
					    0, false };
static const struct raddr_row raddr_135 = { DST_NOROUTE, 2000, false, W_NOROUTE, 0, 0, false };
static const struct raddr_row raddr_136 = { DST_LOCAL, 2000, false, W_RESOLVED, 0, 0, true };
static const struct raddr_row raddr_139a = { DST_LOCAL, 2000, true, W_RESOLVED, 0, 0, false };
static const struct raddr_row raddr_139b = { DST_SILENT, 500, true, W_SYNC_ERRNO, ETIMEDOUT, 0,
					     false };
static const struct raddr_row rroute_141 = { DST_LOCAL, 2000, false, W_RESOLVED, 0, -1, false };
static const struct raddr_row rroute_141s = { DST_LOCAL, 2000, true, W_RESOLVED, 0, -1, false };
static const struct raddr_row rroute_143 = { DST_LOOPBACK, 2000, false, W_RESOLVED, 0, ENODEV,
					     false };

/* ---- multicast on RoCE (rows 221, 222, 226) ---- */

struct mc_row {
	const char *group;
	int want_errno; /* 0: MULTICAST_JOIN */
};

static void mc_row(const struct conf_case *c)
{
	const struct mc_row *r = c->data;
	struct rdma_event_channel *ch = cm_channel();
	struct rdma_cm_id *id = cm_id(ch, RDMA_PS_UDP);
	struct sockaddr_in src, grp;
	struct ibv_port_attr pa;
	struct rdma_cm_event *ev;
	uint8_t want[16];
	int ctx, ret, e;

	cm_local_ipv4(0, 0, &src, NULL);
	if (rdma_bind_addr(id, (struct sockaddr *)&src))
		conf_fatal("rdma_bind_addr: %s", conf_errno_name(errno));
	if (ibv_query_port(id->verbs, id->port_num, &pa) || pa.link_layer != IBV_LINK_LAYER_ETHERNET)
		conf_notrun("the first RDMA address is not on a RoCE port");
	cm_ipv4(r->group, 0, &grp);
	conf_stimulus("PS_UDP id bound to the local address; rdma_join_multicast(%s)", r->group);
	errno = 0;
	ret = rdma_join_multicast(id, (struct sockaddr *)&grp, &ctx);
	e = errno;
	if (r->want_errno) {
		CM_EXPECT_FAIL("rdma_join_multicast", ret, e, r->want_errno);
		conf_note("-1 errno %s", conf_errno_name(e));
		return;
	}
	EXPECT_INT("rdma_join_multicast", ret, 0);
	if (ret)
		return;
	ev = next_event(ch);
	CM_EXPECT_EVENT("event", ev->event, RDMA_CM_EVENT_MULTICAST_JOIN);
	EXPECT_INT("status", ev->status, 0);
	conf_expect(ev->param.ud.private_data == &ctx, "ud.private_data is not the context");
	EXPECT_INT("ud.private_data_len", ev->param.ud.private_data_len, 0);
	EXPECT_HEX("ud.qp_num", ev->param.ud.qp_num, 0xffffff);
	EXPECT_HEX("ud.qkey", ev->param.ud.qkey, 0x01234567);
	EXPECT_INT("ah_attr.is_global", ev->param.ud.ah_attr.is_global, 1);
	gid_of(&grp, want); /* row 222: RoCE v2 */
	conf_expect(!memcmp(ev->param.ud.ah_attr.grh.dgid.raw, want, 16),
		    "grh.dgid is not ::ffff:%s", r->group);
	conf_note("MULTICAST_JOIN qp_num 0x%x qkey 0x%x", ev->param.ud.qp_num, ev->param.ud.qkey);
	rdma_ack_cm_event(ev);
	if (rdma_leave_multicast(id, (struct sockaddr *)&grp))
		conf_expect(false, "rdma_leave_multicast: %s", conf_errno_name(errno));
}

static const struct mc_row mc_221 = { "239.1.1.1", 0 };
static const struct mc_row mc_226 = { "0.0.0.0", EINVAL };

/* ---- emulator-only faults (control API by dlsym) ---- */

static int (*ctl_now)(uint64_t *);

static uint64_t vnow(void)
{
	uint64_t t = 0;

	if (!ctl_now)
		ctl_now = (int (*)(uint64_t *))conf_ctl_sym("rdmaemu_ctl_now_ns");
	if (!ctl_now || ctl_now(&t))
		conf_fatal("rdmaemu_ctl_now_ns");
	return t;
}

/* ARP timeout => ADDR_ERROR -ETIMEDOUT at exactly the caller's timeout, in virtual time. */
static void fault_arp(const struct conf_case *c)
{
	struct rdma_event_channel *ch = cm_channel();
	struct rdma_cm_id *id = cm_id(ch, RDMA_PS_TCP);
	struct sockaddr_in dst;
	struct rdma_cm_event *ev;
	uint64_t t0, dt;
	int ret;

	need_ref();
	cm_ipv4(SILENT_ADDR, TEST_PORT, &dst);
	conf_stimulus("rdma_resolve_addr(" SILENT_ADDR ", 1234 ms), nobody answers the ARP");
	t0 = vnow();
	ret = rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 1234);
	EXPECT_INT("rdma_resolve_addr", ret, 0);
	ev = next_event(ch);
	CM_EXPECT_EVENT("event", ev->event, RDMA_CM_EVENT_ADDR_ERROR);
	EXPECT_INT("status", ev->status, -ETIMEDOUT);
	dt = vnow() - t0;
	EXPECT_INT("virtual ns", dt, 1234000000ll);
	conf_note("ADDR_ERROR %d after %llu ns", ev->status, (unsigned long long)dt);
	rdma_ack_cm_event(ev);
}

/* An IB subnet with an SM: two hosts behind one switch. */
static const char ib_fabric[] =
	"seed 1\n"
	"resolver files\n"
	"host ib-a\n"
	"  device mlx5_0 link=ib\n"
	"  netdev ib0 rdma=mlx5_0/1\n"
	"    addr 192.0.2.129/26\n"
	"host ib-b\n"
	"  device mlx5_0 link=ib\n"
	"  netdev ib0 rdma=mlx5_0/1\n"
	"    addr 192.0.2.130/26\n"
	"switch sw ports=8 lid=1\n"
	"link ib-a/mlx5_0/1 sw/1\n"
	"link ib-b/mlx5_0/1 sw/2\n"
	"sm lid=1 packet-lifetime=18 response-delay=50us\n";

struct sa_policy { /* struct rdmaemu_sa_policy (include/rdmaemu/ctl.h) */
	uint64_t response_delay_ns;
	unsigned drop_next;
	double drop;
	unsigned busy_next;
	double busy;
	uint16_t error_status, error_attr;
};

static void attach_ib(void)
{
	int (*attach)(const char *, const char *) =
		(int (*)(const char *, const char *))conf_ctl_sym("rdmaemu_ctl_attach_text");

	if (!attach || attach(ib_fabric, "ib-a"))
		conf_fatal("rdmaemu_ctl_attach_text(IB fabric) failed: errno %s",
			   conf_errno_name(errno));
}

/* SA timeout => ROUTE_ERROR -ETIMEDOUT at exactly the caller's timeout; then the SA answers
 * and the path is LID 2 -> 3 with the SM's packet lifetime. */
static void fault_sa(const struct conf_case *c)
{
	int (*pol)(const struct sa_policy *, struct sa_policy *) =
		(int (*)(const struct sa_policy *, struct sa_policy *))conf_ctl_sym(
			"rdmaemu_ctl_sa_policy");
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id;
	struct sockaddr_in dst;
	struct rdma_cm_event *ev;
	struct sa_policy p;
	uint64_t t0, dt;
	int ret;

	attach_ib();
	ch = cm_channel();
	id = cm_id(ch, RDMA_PS_TCP);
	cm_ipv4("192.0.2.130", TEST_PORT, &dst);
	conf_stimulus("IB: resolve 192.0.2.130, the SA drops the PathRecord query, resolve_route 777 ms");
	ret = rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 2000);
	EXPECT_INT("rdma_resolve_addr", ret, 0);
	ev = next_event(ch);
	CM_EXPECT_EVENT("event", ev->event, RDMA_CM_EVENT_ADDR_RESOLVED);
	rdma_ack_cm_event(ev);
	if (!pol || pol(NULL, &p))
		conf_fatal("rdmaemu_ctl_sa_policy");
	p.drop_next = 1;
	pol(&p, NULL);
	t0 = vnow();
	ret = rdma_resolve_route(id, 777);
	EXPECT_INT("rdma_resolve_route", ret, 0);
	ev = next_event(ch);
	CM_EXPECT_EVENT("event", ev->event, RDMA_CM_EVENT_ROUTE_ERROR);
	EXPECT_INT("status", ev->status, -ETIMEDOUT);
	dt = vnow() - t0;
	EXPECT_INT("virtual ns", dt, 777000000ll);
	rdma_ack_cm_event(ev);
	ret = rdma_resolve_route(id, 777);
	EXPECT_INT("rdma_resolve_route again", ret, 0);
	ev = next_event(ch);
	CM_EXPECT_EVENT("event", ev->event, RDMA_CM_EVENT_ROUTE_RESOLVED);
	rdma_ack_cm_event(ev);
	EXPECT_INT("num_paths", id->route.num_paths, 1);
	if (id->route.num_paths == 1) {
		EXPECT_INT("dlid", ntohs(id->route.path_rec[0].dlid), 3);
		EXPECT_INT("slid", ntohs(id->route.path_rec[0].slid), 2);
		EXPECT_INT("packet_life_time", id->route.path_rec[0].packet_life_time, 18);
	}
	conf_note("ROUTE_ERROR -110 at exactly 777 ms; then a path LID 2 -> 3");
}

/* Address removal: Linux 6.1 raises ADDR_CHANGE only on bonding fail-over, so the ids hear
 * nothing; a new resolution sees the route gone. */
static void fault_addr_change(const struct conf_case *c)
{
	int (*del)(const char *, const char *, const char *) =
		(int (*)(const char *, const char *, const char *))conf_ctl_sym(
			"rdmaemu_ctl_addr_del");
	int (*adv)(uint64_t) = (int (*)(uint64_t))conf_ctl_sym("rdmaemu_ctl_advance_ns");
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id, *id2;
	struct sockaddr_in dst;
	struct rdma_cm_event *ev;
	int ret, e;

	attach_ib();
	ch = cm_channel();
	id = cm_id(ch, RDMA_PS_TCP);
	cm_ipv4("192.0.2.130", TEST_PORT, &dst);
	conf_stimulus("resolve 192.0.2.130, then `ip addr del 192.0.2.129/26 dev ib0`");
	ret = rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 2000);
	EXPECT_INT("rdma_resolve_addr", ret, 0);
	ev = next_event(ch);
	CM_EXPECT_EVENT("event", ev->event, RDMA_CM_EVENT_ADDR_RESOLVED);
	rdma_ack_cm_event(ev);
	if (!del || !adv || del(NULL, "ib0", "192.0.2.129/26") || adv(100000000))
		conf_fatal("rdmaemu_ctl_addr_del / advance_ns");
	conf_expect(!cm_readable(ch), "an event was queued after the address removal");
	id2 = cm_id(ch, RDMA_PS_TCP);
	errno = 0;
	ret = rdma_resolve_addr(id2, NULL, (struct sockaddr *)&dst, 2000);
	e = errno;
	CM_EXPECT_FAIL("rdma_resolve_addr after the removal", ret, e, ENETUNREACH);
	conf_note("no ADDR_CHANGE; a new resolution: -1 errno %s", conf_errno_name(e));
}

/* IB multicast through the SA: MULTICAST_JOIN with the SA's MLID and the mapped MGID. */
static void fault_mc_ib(const struct conf_case *c)
{
	static const uint8_t mgid[16] = { 0xff, 0x12, 0x40, 0x01, 0xff, 0xff, 0, 0,
					  0, 0, 0, 0, 0x0f, 0x01, 0x01, 0x01 };
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id;
	struct sockaddr_in src, grp;
	struct rdma_cm_event *ev;
	int ctx, ret;

	attach_ib();
	ch = cm_channel();
	id = cm_id(ch, RDMA_PS_UDP);
	cm_ipv4("192.0.2.129", 0, &src);
	cm_ipv4("239.1.1.1", 0, &grp);
	conf_stimulus("IB: PS_UDP id bound to 192.0.2.129, rdma_join_multicast(239.1.1.1)");
	if (rdma_bind_addr(id, (struct sockaddr *)&src))
		conf_fatal("rdma_bind_addr: %s", conf_errno_name(errno));
	ret = rdma_join_multicast(id, (struct sockaddr *)&grp, &ctx);
	EXPECT_INT("rdma_join_multicast", ret, 0);
	ev = next_event(ch);
	CM_EXPECT_EVENT("event", ev->event, RDMA_CM_EVENT_MULTICAST_JOIN);
	conf_expect(!memcmp(ev->param.ud.ah_attr.grh.dgid.raw, mgid, 16),
		    "MGID is not ff12:4001:ffff::f01:101");
	conf_expect(ev->param.ud.ah_attr.dlid >= 0xc000, "dlid 0x%x is not a multicast LID",
		    ev->param.ud.ah_attr.dlid);
	EXPECT_HEX("qkey", ev->param.ud.qkey, 0x01234567);
	conf_note("MULTICAST_JOIN mlid 0x%x", ev->param.ud.ah_attr.dlid);
	rdma_ack_cm_event(ev);
}

#define C(id, area, row, desc, doc, pre, fn, data) \
	{ id, area, row, desc, doc, pre, NULL, 0, fn, data }
#define CM PRE_CM
#define EMU (PRE_CM | PRE_EMU_ONLY)

static const struct conf_case cases[] = {
	C("RADDR-133", "RADDR", 133, "resolve a local RDMA address: ADDR_RESOLVED, verbs/pd/port, "
	  "source port set", NULL, CM, raddr_row, &raddr_133),
	C("RADDR-134", "RADDR", 134, "unanswered ARP, timeout 500: ADDR_ERROR -110", NULL, CM,
	  raddr_row, &raddr_134),
	C("RADDR-135", "RADDR", 135, "no route: -1/ENETUNREACH (or ADDR_ERROR < 0)", NULL, CM,
	  raddr_row, &raddr_135),
	C("RADDR-136", "RADDR", 136, "second resolve on a resolved id: -1/EINVAL", NULL, CM,
	  raddr_row, &raddr_136),
	C("RADDR-139a", "RADDR", 139, "sync id, success: 0 with id->event ADDR_RESOLVED", NULL, CM,
	  raddr_row, &raddr_139a),
	C("RADDR-139b", "RADDR", 139, "sync id, unanswered ARP: -1/ETIMEDOUT", NULL, CM, raddr_row,
	  &raddr_139b),
	C("RROUTE-141", "RROUTE", 141, "after ADDR_RESOLVED: ROUTE_RESOLVED, num_paths >= 1, GIDs "
	  "of the addresses; a second resolve_route -1/EINVAL (142)", NULL, CM, raddr_row,
	  &rroute_141),
	C("RROUTE-141s", "RROUTE", 141, "the same on a sync id", NULL, CM, raddr_row, &rroute_141s),
	C("RROUTE-143", "RROUTE", 143, "RoCE, dst 127.0.0.1: resolve_addr ok, resolve_route "
	  "-1/ENODEV", NULL, CM, raddr_row, &rroute_143),
	C("MC-221", "MC", 221, "join 239.1.1.1 (RoCE, PS_UDP): MULTICAST_JOIN, ud params; MGID "
	  "::ffff:239.1.1.1 (222)", NULL, CM, mc_row, &mc_221),
	C("MC-226", "MC", 226, "join 0.0.0.0 on RoCE: -1/EINVAL", NULL, CM, mc_row, &mc_226),
	C("RADDR-134e", "RADDR", 134, "emulator: ARP timeout => ADDR_ERROR -110 at exactly the "
	  "timeout (virtual time)", NULL, EMU, fault_arp, NULL),
	C("RROUTE-141e", "RROUTE", 141, "emulator: SA timeout => ROUTE_ERROR -110 at exactly the "
	  "timeout; then the SA's path", NULL, EMU, fault_sa, NULL),
	C("MC-221e", "MC", 221, "emulator: IB join through the SA (MCMemberRecord)", NULL, EMU,
	  fault_mc_ib, NULL),
	C("EVT-14e", "EVT", 14, "emulator: address removal raises no ADDR_CHANGE (Linux 6.1: "
	  "bonding fail-over only)", NULL, EMU, fault_addr_change, NULL),
};

const struct conf_area conf_area_cmroute = { "CMROUTE", cases, sizeof cases / sizeof cases[0] };
