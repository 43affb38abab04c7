/* FAB: the fabric services behind the CM (SA, neighbours, GIDs): AF_IB addresses on a kernel that
 * takes them (the library's af_ib_support probe succeeds on Linux 6.1) and the RoCE GID table
 * following the netdev's addresses. The spec's matrix has no rows for these (row 0); every
 * expectation was measured on Linux 6.1 + rdma-core 44 + rxe with probes/cma/afib_probe.c and
 * probes/cma/gidprobe.sh (docs/cma.md "AF_IB", docs/neigh.md "GID table"). */
#include "config.h"

#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <infiniband/ib.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "conformance/cm_util.h"
#include "conformance/conformance.h"

#define FAB_PORT 47490

/* The first device's context and its port 1, or Notrun. */
static struct ibv_context *first_dev(struct ibv_port_attr *pa)
{
	struct ibv_context **list = rdma_get_devices(NULL), *ctx = list ? list[0] : NULL;

	/* the array only: the contexts stay librdmacm's */
	if (list)
		rdma_free_devices(list);
	if (!ctx)
		conf_notrun("needs an RDMA device");
	if (ibv_query_port(ctx, 1, pa))
		conf_fatal("ibv_query_port: %s", conf_errno_name(errno));
	return ctx;
}

/* GID idx of port 1 of the first device, on a RoCE port (Notrun on InfiniBand: the rows
 * check what a RoCE port does). */
static void roce_gid(unsigned idx, union ibv_gid *g)
{
	struct ibv_port_attr pa;
	struct ibv_context *ctx = first_dev(&pa);

	if (pa.link_layer != IBV_LINK_LAYER_ETHERNET)
		conf_notrun("needs a RoCE port");
	if (ibv_query_gid(ctx, 1, (int)idx, g))
		conf_fatal("ibv_query_gid: %s", conf_errno_name(errno));
}

static struct sockaddr_ib sib(const union ibv_gid *gid, uint16_t pkey, uint64_t sid,
			      uint64_t mask)
{
	struct sockaddr_ib s;

	memset(&s, 0, sizeof s);
	s.sib_family = AF_IB;
	s.sib_pkey = htons(pkey);
	if (gid)
		memcpy(s.sib_addr.sib_raw, gid->raw, 16);
	s.sib_sid = htobe64(sid);
	s.sib_sid_mask = htobe64(mask);
	return s;
}

static const struct sockaddr_ib *local_sib(struct rdma_cm_id *id)
{
	return (const struct sockaddr_ib *)rdma_get_local_addr(id);
}

/* ---- binds ---- */

struct bind_row {
	enum rdma_port_space ps;
	uint64_t sid, mask;
	int want_errno;       /* 0: success */
	uint64_t want_prefix; /* the bound service ID's port-space prefix */
	int port;             /* -1: ephemeral; else the port the service ID must end in */
};

static void fab_bind(const struct conf_case *c)
{
	const struct bind_row *r = c->data;
	struct rdma_cm_id *id = cm_id(cm_channel(), r->ps);
	struct sockaddr_ib s = sib(NULL, 0, r->sid, r->mask);
	char buf[160];
	int ret, e;
	uint64_t sid;

	first_dev(&(struct ibv_port_attr){ 0 });
	conf_stimulus("rdma_bind_addr(ps 0x%x id, %s)", r->ps,
		      conf_fmt_sockaddr(buf, sizeof buf, (struct sockaddr *)&s, sizeof s));
	errno = 0;
	ret = rdma_bind_addr(id, (struct sockaddr *)&s);
	e = errno;
	if (r->want_errno) {
		CM_EXPECT_FAIL("rdma_bind_addr", ret, e, r->want_errno);
		conf_note("-1 errno %s", conf_errno_name(e));
		return;
	}
	EXPECT_INT("rdma_bind_addr", ret, 0);
	if (ret)
		return;
	sid = be64toh(local_sib(id)->sib_sid);
	EXPECT_INT("src family", local_sib(id)->sib_family, AF_IB);
	EXPECT_HEX("sid prefix", sid & ~0xffffull, r->want_prefix);
	EXPECT_HEX("sid mask", be64toh(local_sib(id)->sib_sid_mask), ~0ull);
	if (r->port >= 0)
		EXPECT_INT("port", sid & 0xffff, r->port);
	else
		conf_expect((sid & 0xffff) >= 32768 && (sid & 0xffff) <= 60999,
			    "port %u outside ip_local_port_range", (unsigned)(sid & 0xffff));
	EXPECT_INT("rdma_get_src_port", ntohs(rdma_get_src_port(id)), sid & 0xffff);
	EXPECT_NULL("verbs", id->verbs);
	conf_note("0; %s", conf_fmt_sockaddr(buf, sizeof buf, rdma_get_local_addr(id),
					     sizeof(struct sockaddr_ib)));
}

#define PS_MASK RDMA_IB_IP_PS_MASK
static const struct bind_row bind_probe = { RDMA_PS_IB, RDMA_IB_IP_PS_TCP, PS_MASK, 0,
					    RDMA_IB_IP_PS_TCP, -1 };
static const struct bind_row bind_zero = { RDMA_PS_IB, 0, 0, 0, RDMA_IB_PS_IB, -1 };
static const struct bind_row bind_port = { RDMA_PS_IB, RDMA_IB_PS_IB | FAB_PORT, ~0ull, 0,
					   RDMA_IB_PS_IB, FAB_PORT };
static const struct bind_row bind_masked = { RDMA_PS_TCP, RDMA_IB_IP_PS_TCP | FAB_PORT, PS_MASK,
					     0, RDMA_IB_IP_PS_TCP, -1 };
static const struct bind_row bind_udp_tcp = { RDMA_PS_UDP, RDMA_IB_IP_PS_TCP, PS_MASK,
					      EPROTONOSUPPORT, 0, 0 };
static const struct bind_row bind_tcp_ib = { RDMA_PS_TCP, RDMA_IB_PS_IB, PS_MASK,
					     EPROTONOSUPPORT, 0, 0 };
static const struct bind_row bind_ipoib = { RDMA_PS_IPOIB, RDMA_IB_IP_PS_TCP, PS_MASK,
					    EPROTONOSUPPORT, 0, 0 };

static void fab_bind_own_gid(const struct conf_case *c)
{
	struct rdma_cm_id *id = cm_id(cm_channel(), RDMA_PS_IB);
	struct sockaddr_ib s;
	union ibv_gid g;
	int ret, e;

	(void)c;
	roce_gid(0, &g);
	s = sib(&g, 0xffff, RDMA_IB_IP_PS_TCP | FAB_PORT, PS_MASK);
	conf_stimulus("rdma_bind_addr(AF_IB, the RoCE port's GID 0, P_Key 0xffff)");
	errno = 0;
	ret = rdma_bind_addr(id, (struct sockaddr *)&s);
	e = errno;
	CM_EXPECT_FAIL("rdma_bind_addr", ret, e, ENODEV);
	conf_note("-1 errno %s", conf_errno_name(e));
}

static void fab_shared_ps(const struct conf_case *c)
{
	struct rdma_event_channel *ch = cm_channel();
	struct rdma_cm_id *a = cm_id(ch, RDMA_PS_TCP), *b = cm_id(ch, RDMA_PS_TCP);
	struct sockaddr_ib s = sib(NULL, 0, RDMA_IB_IP_PS_TCP | (FAB_PORT + 1), ~0ull);
	struct sockaddr_in sin;
	int ret, e;

	(void)c;
	first_dev(&(struct ibv_port_attr){ 0 });
	conf_stimulus("AF_IB wildcard sid TCP|%d, then AF_INET 0.0.0.0:%d (both ps TCP)",
		      FAB_PORT + 1, FAB_PORT + 1);
	ret = rdma_bind_addr(a, (struct sockaddr *)&s);
	EXPECT_INT("AF_IB bind", ret, 0);
	cm_ipv4("0.0.0.0", FAB_PORT + 1, &sin);
	errno = 0;
	ret = rdma_bind_addr(b, (struct sockaddr *)&sin);
	e = errno;
	CM_EXPECT_FAIL("AF_INET bind", ret, e, EADDRNOTAVAIL);
	conf_note("0, then -1 errno %s: one TCP port space", conf_errno_name(e));
}

/* ---- rdma_resolve_addr to AF_IB destinations ---- */

struct resolve_row {
	int gid;        /* -1: ::1; else the port's GID index */
	uint16_t pkey;
	int want_errno; /* 0: ADDR_RESOLVED */
	bool ip_src;    /* an IPv4 source (the device's first address) */
};

static void fab_resolve(const struct conf_case *c)
{
	const struct resolve_row *r = c->data;
	struct rdma_event_channel *ch = cm_channel();
	struct rdma_cm_id *id = cm_id(ch, RDMA_PS_IB);
	static const uint8_t one[16] = { [15] = 1 };
	struct rdma_cm_event *ev;
	struct sockaddr_in src;
	struct sockaddr_ib d;
	union ibv_gid g;
	char buf[160];
	int ret, e;

	memset(&g, 0, sizeof g);
	if (r->gid >= 0)
		roce_gid((unsigned)r->gid, &g);
	else
		memcpy(g.raw, one, 16);
	if (r->ip_src)
		cm_local_ipv4(0, 0, &src, NULL);
	else
		first_dev(&(struct ibv_port_attr){ 0 });
	d = sib(&g, r->pkey, RDMA_IB_IP_PS_TCP | FAB_PORT, ~0ull);
	conf_stimulus("rdma_resolve_addr(ps IB id, %s, %s, 2000)", r->ip_src ? "IPv4" : "NULL",
		      conf_fmt_sockaddr(buf, sizeof buf, (struct sockaddr *)&d, sizeof d));
	errno = 0;
	ret = rdma_resolve_addr(id, r->ip_src ? (struct sockaddr *)&src : NULL,
				(struct sockaddr *)&d, 2000);
	e = errno;
	if (r->want_errno) {
		CM_EXPECT_FAIL("rdma_resolve_addr", ret, e, r->want_errno);
		conf_note("-1 errno %s", conf_errno_name(e));
		return;
	}
	EXPECT_INT("rdma_resolve_addr", ret, 0);
	if (ret)
		return;
	if (rdma_get_cm_event(ch, &ev))
		conf_fatal("rdma_get_cm_event: %s", conf_errno_name(errno));
	CM_EXPECT_EVENT("event", ev->event, RDMA_CM_EVENT_ADDR_RESOLVED);
	EXPECT_INT("status", ev->status, 0);
	rdma_ack_cm_event(ev);
	/* the source: ::1 for the loopback, else the port's GID with the destination's P_Key */
	conf_expect(!memcmp(local_sib(id)->sib_addr.sib_raw, g.raw, 16), "source GID");
	EXPECT_HEX("source P_Key", ntohs(local_sib(id)->sib_pkey), r->pkey);
	EXPECT_INT("port_num", id->port_num, 1);
	conf_expect(id->verbs != NULL, "id->verbs set");
	/* no netdev behind an AF_IB id: a RoCE route cannot be built */
	errno = 0;
	ret = rdma_resolve_route(id, 2000);
	e = errno;
	CM_EXPECT_FAIL("rdma_resolve_route", ret, e, ENODEV);
	conf_note("ADDR_RESOLVED, src %s; resolve_route -1 errno %s",
		  conf_fmt_sockaddr(buf, sizeof buf, rdma_get_local_addr(id),
				    sizeof(struct sockaddr_ib)), conf_errno_name(e));
}

static const struct resolve_row resolve_lo = { -1, 0, 0, false };
static const struct resolve_row resolve_gid1 = { 1, 0x7fff, 0, false };
static const struct resolve_row resolve_pkey0 = { 1, 0, ENODEV, false };
static const struct resolve_row resolve_ipsrc = { 1, 0xffff, EINVAL, true };

/* ---- the RoCE GID table and the netdev's addresses (emulator: rdmaemu_ctl_addr_add/del) ---- */

static void fab_gid_table(const struct conf_case *c)
{
	int (*add)(const char *, const char *, const char *) =
		(int (*)(const char *, const char *, const char *))conf_ctl_sym("rdmaemu_ctl_addr_add");
	int (*del)(const char *, const char *, const char *) =
		(int (*)(const char *, const char *, const char *))conf_ctl_sym("rdmaemu_ctl_addr_del");
	struct ibv_port_attr pa;
	struct ibv_context *ctx = first_dev(&pa);
	struct ibv_gid_entry ent;
	union ibv_gid g, want;
	int free_idx = -1, ret;

	(void)c;
	if (!add || !del)
		conf_notrun("changes the host's addresses: emulator only");
	if (pa.link_layer != IBV_LINK_LAYER_ETHERNET)
		conf_notrun("needs a RoCE port");
	for (int i = 0; i < pa.gid_tbl_len && free_idx < 0; i++)
		if (!ibv_query_gid(ctx, 1, i, &g) && !g.global.subnet_prefix &&
		    !g.global.interface_id)
			free_idx = i;
	conf_stimulus("ip addr add 192.0.2.14/28 dev d0; then del");
	if (add(NULL, "d0", "192.0.2.14/28"))
		conf_notrun("no netdev d0 (%s)", conf_errno_name(errno));
	memset(&want, 0, sizeof want);
	want.raw[10] = want.raw[11] = 0xff;
	want.raw[12] = 192;
	want.raw[13] = 0;
	want.raw[14] = 2;
	want.raw[15] = 14;
	ret = ibv_query_gid(ctx, 1, free_idx, &g);
	EXPECT_INT("ibv_query_gid", ret, 0);
	conf_expect(!memcmp(g.raw, want.raw, 16), "GID %d is ::ffff:192.0.2.14", free_idx);
	ret = ibv_query_gid_ex(ctx, 1, (uint32_t)free_idx, &ent, 0);
	EXPECT_INT("ibv_query_gid_ex", ret, 0);
	EXPECT_INT("gid_type", ent.gid_type, IBV_GID_TYPE_ROCE_V2);
	ret = del(NULL, "d0", "192.0.2.14/28");
	EXPECT_INT("del", ret, 0);
	ret = ibv_query_gid_ex(ctx, 1, (uint32_t)free_idx, &ent, 0);
	EXPECT_INT("ibv_query_gid_ex after del", ret, ENODATA);
	conf_note("GID %d appears (RoCE v2) and empties again (ENODATA)", free_idx);
}

/* ---- device removal (emulator: rdmaemu_ctl_device_remove = `rdma link delete`) ---- */

static int count_devices(const char *without)
{
	int n = 0, left = 0;
	struct ibv_context **l = rdma_get_devices(&n);

	for (int i = 0; l && i < n; i++)
		left += !without || strcmp(ibv_get_device_name(l[i]->device), without);
	if (l)
		rdma_free_devices(l);
	return without ? left : n;
}

static void fab_devrm(const struct conf_case *c)
{
	int (*rm)(const char *, const char *) =
		(int (*)(const char *, const char *))conf_ctl_sym("rdmaemu_ctl_device_remove");
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id, *idle, *after;
	struct ibv_context *verbs;
	struct rdma_cm_event *ev;
	struct sockaddr_in sin;
	char name[IBV_SYSFS_NAME_MAX];
	int before, ret;

	(void)c;
	if (!rm)
		conf_notrun("removes an RDMA device: emulator only");
	cm_local_ipv4(0, FAB_PORT + 1, &sin, &verbs);
	snprintf(name, sizeof name, "%s", ibv_get_device_name(verbs->device));
	before = count_devices(NULL);
	ch = cm_channel();
	id = cm_id(ch, RDMA_PS_TCP);
	idle = cm_id(ch, RDMA_PS_TCP);
	ret = rdma_bind_addr(id, (struct sockaddr *)&sin);
	EXPECT_INT("bind", ret, 0);
	conf_stimulus("rdma link delete %s with an id bound to one of its addresses", name);
	if (rm(NULL, name))
		conf_fatal("rdmaemu_ctl_device_remove: %s", conf_errno_name(errno));
	ret = rdma_get_cm_event(ch, &ev);
	EXPECT_INT("rdma_get_cm_event", ret, 0);
	if (ret)
		return;
	CM_EXPECT_EVENT("event", ev->event, RDMA_CM_EVENT_DEVICE_REMOVAL);
	EXPECT_INT("status", ev->status, 0);
	conf_expect(ev->id == id, "the event is the bound id's");
	rdma_ack_cm_event(ev);
	EXPECT_INT("another event queued (the idle id)", cm_readable(ch), 0);
	ret = rdma_listen(id, 1);
	CM_EXPECT_FAIL("listen on the removed id", ret, errno, ENXIO);
	ret = rdma_destroy_id(id);
	EXPECT_INT("destroy the removed id", ret, 0);
	after = cm_id(ch, RDMA_PS_TCP);
	ret = rdma_bind_addr(after, (struct sockaddr *)&sin);
	CM_EXPECT_FAIL("bind to the address again", ret, errno, ENODEV);
	EXPECT_INT("rdma_get_devices count", count_devices(NULL), before - 1);
	EXPECT_INT("rdma_get_devices without the removed one", count_devices(name), before - 1);
	rdma_destroy_id(after);
	rdma_destroy_id(idle);
	rdma_destroy_event_channel(ch);
	conf_note("DEVICE_REMOVAL status 0 on the bound id only; ENXIO after, ENODEV for a new "
		  "bind; %s left rdma_get_devices", name);
}

#define DEV (PRE_DEVICE | PRE_CM)
#define C(id_, desc_, pre_, fn_, data_) { id_, "FAB", 0, desc_, NULL, pre_, NULL, 0, fn_, data_ }

static const struct conf_case cases[] = {
	C("FAB-1", "AF_IB probe bind (ps IB, wildcard, sid TCP under the port-space mask): 0, "
	  "TCP prefix, ephemeral port, full mask", DEV, fab_bind, &bind_probe),
	C("FAB-2", "AF_IB wildcard, sid 0 mask 0 on a ps IB id: the IB port space", DEV, fab_bind,
	  &bind_zero),
	C("FAB-3", "AF_IB sid IB|port, full mask: the port is kept", DEV, fab_bind, &bind_port),
	C("FAB-4", "AF_IB sid TCP|port under the port-space mask only: the port is not (cma_port "
	  "masks it), an ephemeral one is taken", DEV, fab_bind, &bind_masked),
	C("FAB-5a", "ps UDP id, TCP service ID: -1/EPROTONOSUPPORT", DEV, fab_bind, &bind_udp_tcp),
	C("FAB-5b", "ps TCP id, IB service ID: -1/EPROTONOSUPPORT", DEV, fab_bind, &bind_tcp_ib),
	C("FAB-5c", "ps IPoIB id, TCP service ID: -1/EPROTONOSUPPORT", DEV, fab_bind, &bind_ipoib),
	C("FAB-6", "AF_IB bind to a RoCE port's own GID: -1/ENODEV", DEV, fab_bind_own_gid, NULL),
	C("FAB-7", "AF_IB TCP service ID and an AF_INET TCP id share the port space: "
	  "-1/EADDRNOTAVAIL", DEV, fab_shared_ps, NULL),
	C("FAB-8a", "resolve AF_IB ::1: ADDR_RESOLVED, source ::1; resolve_route -1/ENODEV", DEV,
	  fab_resolve, &resolve_lo),
	C("FAB-8b", "resolve AF_IB own GID 1, P_Key 0x7fff: ADDR_RESOLVED, source GID 1 with P_Key "
	  "0x7fff; resolve_route -1/ENODEV (RoCE)", DEV, fab_resolve, &resolve_gid1),
	C("FAB-8c", "resolve AF_IB with P_Key 0: -1/ENODEV", DEV, fab_resolve, &resolve_pkey0),
	C("FAB-8d", "resolve IPv4 source to AF_IB destination: -1/EINVAL", DEV, fab_resolve,
	  &resolve_ipsrc),
	C("FAB-9", "an address added to the RoCE netdev becomes a RoCE v2 GID in the first empty "
	  "entry, its removal empties it", DEV | PRE_EMU_ONLY, fab_gid_table, NULL),
	{ "FAB-10", "FAB", 263, "spec §7.3 event 11 RDMA_CM_EVENT_DEVICE_REMOVAL (row 263): the "
	  "device of a bound id is unregistered: one DEVICE_REMOVAL status 0 on that id, nothing "
	  "on an idle id, then ENXIO for its commands, 0 for rdma_destroy_id, ENODEV for a new "
	  "bind, the device gone from rdma_get_devices", NULL, DEV | PRE_EMU_ONLY, NULL, 0,
	  fab_devrm, NULL },
};

const struct conf_area conf_area_fab = { "FAB", cases, sizeof cases / sizeof cases[0] };
