/* SEED: statements of the seed man pages (docs/reference/man-pages.md: the NVIDIA "CM ID
 * Operations" chapter, rdma_getaddrinfo(3), rdma_resolve_addrinfo(3)) that no matrix row of
 * spec §15 checks yet. Each case quotes its sentence (desc: the real behaviour; documented: the
 * sentence where the two differ). The statements the matrix rows already check are mapped to
 * those rows in seed_map.c; the connection-bound ones are in case_cmconn.c (SEED-3x). */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

#include "conformance/cm_util.h"
#include "conformance/conformance.h"

#define SEED_PORT 46000

static struct rdma_addrinfo *active_rai(int row)
{
	struct rdma_addrinfo hints, *rai = NULL;
	struct sockaddr_in sin;
	char host[32], port[16];

	cm_local_ipv4(0, 0, &sin, NULL);
	inet_ntop(AF_INET, &sin.sin_addr, host, sizeof host);
	snprintf(port, sizeof port, "%d", SEED_PORT + row);
	memset(&hints, 0, sizeof hints);
	hints.ai_flags = RAI_NUMERICHOST;
	hints.ai_port_space = RDMA_PS_TCP;
	if (rdma_getaddrinfo(host, port, &hints, &rai))
		conf_fatal("rdma_getaddrinfo(%s, %s): %s", host, port, conf_errno_name(errno));
	return rai;
}

static void qp_attr(struct ibv_qp_init_attr *a)
{
	memset(a, 0, sizeof *a);
	a->cap.max_send_wr = a->cap.max_recv_wr = 2;
	a->cap.max_send_sge = a->cap.max_recv_sge = 1;
}

/* rdma_create_ep: "If a protection domain (PD) is provided, then the QP will be created on
 * that PD." (cma.c:rdma_create_ep hands pd to rdma_create_qp) */
static void seed_ep_pd(const struct conf_case *c)
{
	struct rdma_addrinfo *rai = active_rai(c->row);
	struct ibv_qp_init_attr a;
	struct ibv_context *verbs;
	struct sockaddr_in sin;
	struct rdma_cm_id *id;
	struct ibv_pd *pd;

	cm_local_ipv4(0, 0, &sin, &verbs);
	pd = ibv_alloc_pd(verbs);
	if (!pd)
		conf_fatal("ibv_alloc_pd: %s", conf_errno_name(errno));
	qp_attr(&a);
	conf_stimulus("rdma_create_ep(&id, active rai, own pd, qp_init_attr)");
	if (rdma_create_ep(&id, rai, pd, &a))
		conf_fatal("rdma_create_ep: %s", conf_errno_name(errno));
	if (conf_expect(id->qp != NULL, "no QP"))
		conf_expect(id->qp->pd == pd, "QP on another PD than the one given");
	conf_note("QP on the given PD");
	rdma_destroy_ep(id);
	ibv_dealloc_pd(pd);
	rdma_freeaddrinfo(rai);
}

/* rdma_create_ep: "Otherwise the QP will be allocated on a default PD" and "If qp_init_attr
 * is not NULL, then a QP will be allocated": id->pd is the device's PD, the QP's. */
static void seed_ep_default_pd(const struct conf_case *c)
{
	struct rdma_addrinfo *rai = active_rai(c->row);
	struct ibv_qp_init_attr a;
	struct rdma_cm_id *id;

	qp_attr(&a);
	conf_stimulus("rdma_create_ep(&id, active rai, NULL pd, qp_init_attr)");
	if (rdma_create_ep(&id, rai, NULL, &a))
		conf_fatal("rdma_create_ep: %s", conf_errno_name(errno));
	if (conf_expect(id->qp != NULL, "no QP")) {
		conf_expect(id->pd != NULL, "id->pd NULL");
		conf_expect(id->qp->pd == id->pd, "QP not on id->pd");
	}
	conf_note("QP on id->pd (the device's default PD)");
	rdma_destroy_ep(id);
	rdma_freeaddrinfo(rai);
}

/* rdma_create_ep without qp_init_attr: no QP. */
static void seed_ep_noqp(const struct conf_case *c)
{
	struct rdma_addrinfo *rai = active_rai(c->row);
	struct rdma_cm_id *id;

	conf_stimulus("rdma_create_ep(&id, active rai, NULL, NULL)");
	if (rdma_create_ep(&id, rai, NULL, NULL))
		conf_fatal("rdma_create_ep: %s", conf_errno_name(errno));
	EXPECT_NULL("id->qp", id->qp);
	conf_expect(id->verbs != NULL, "id->verbs NULL (the route is resolved)");
	conf_note("no QP; verbs set");
	rdma_destroy_ep(id);
	rdma_freeaddrinfo(rai);
}

/* rdma_create_ep: "The rdma_cm_id will be set to use synchronous operations ... To use
 * asynchronous operations, rdma_cm_id must be migrated to a user allocated event channel
 * using rdma_migrate_id." A sync id refuses migrate(id, NULL) (spec §6.1, as row 109); it
 * migrates to a channel. */
static void seed_ep_sync(const struct conf_case *c)
{
	struct rdma_addrinfo *rai = active_rai(c->row);
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id;
	int ret, e;

	conf_stimulus("rdma_create_ep(active); rdma_migrate_id(id, NULL); rdma_migrate_id(id, ch)");
	if (rdma_create_ep(&id, rai, NULL, NULL))
		conf_fatal("rdma_create_ep: %s", conf_errno_name(errno));
	conf_expect(id->channel != NULL, "id->channel NULL");
	errno = 0;
	ret = rdma_migrate_id(id, NULL);
	e = errno;
	CM_EXPECT_FAIL("rdma_migrate_id(ep id, NULL)", ret, e, EINVAL);
	ch = cm_channel();
	ret = rdma_migrate_id(id, ch);
	EXPECT_INT("rdma_migrate_id(ep id, ch)", ret, 0);
	conf_expect(id->channel == ch, "id->channel is not the new channel");
	conf_note("migrate(NULL) -1/EINVAL (already sync); migrate(ch) 0");
	rdma_destroy_ep(id);
	rdma_freeaddrinfo(rai);
}

/* rdma_resolve_addr: "If a source address is given, the rdma_cm_id is bound to that address,
 * the same as if rdma_bind_addr were called." */
static void seed_raddr_src(const struct conf_case *c)
{
	struct rdma_event_channel *ch = cm_channel();
	struct rdma_cm_id *id = cm_id(ch, RDMA_PS_TCP);
	struct sockaddr_in src, dst, *got;
	struct rdma_cm_event *ev;
	char buf[64];
	int ret;

	cm_local_ipv4(0, 0, &src, NULL);
	cm_local_ipv4(0, (uint16_t)(SEED_PORT + c->row), &dst, NULL);
	conf_stimulus("rdma_resolve_addr(id, %s, own address, 2000)",
		      conf_fmt_sockaddr(buf, sizeof buf, (struct sockaddr *)&src, sizeof src));
	ret = rdma_resolve_addr(id, (struct sockaddr *)&src, (struct sockaddr *)&dst, 2000);
	if (!conf_expect(ret == 0, "rdma_resolve_addr: %d errno %s", ret, conf_errno_name(errno)))
		return;
	if (rdma_get_cm_event(ch, &ev))
		conf_fatal("rdma_get_cm_event: %s", conf_errno_name(errno));
	CM_EXPECT_EVENT("event", ev->event, RDMA_CM_EVENT_ADDR_RESOLVED);
	rdma_ack_cm_event(ev);
	got = (struct sockaddr_in *)rdma_get_local_addr(id);
	EXPECT_INT("local family", got->sin_family, AF_INET);
	EXPECT_HEX("local address", got->sin_addr.s_addr, src.sin_addr.s_addr);
	conf_expect(got->sin_port != 0, "local port 0 (bound ids get a port)");
	conf_expect(id->verbs != NULL, "verbs NULL");
	conf_note("local %s, verbs set", conf_fmt_sockaddr(buf, sizeof buf,
							  (struct sockaddr *)got, sizeof *got));
}

/* rdma_get_dst_port: "If the rdma_cm_id, id, is not connected, then the routine will return
 * 0." Real: the destination is copied into the id by rdma_resolve_addr (row 138), so an id
 * that is resolved but not connected already returns the destination's port. */
static void seed_dst_port(const struct conf_case *c)
{
	struct rdma_event_channel *ch = cm_channel();
	struct rdma_cm_id *id = cm_id(ch, RDMA_PS_TCP);
	struct sockaddr_in dst;
	struct rdma_cm_event *ev;
	uint16_t p0, p1;

	cm_local_ipv4(0, (uint16_t)(SEED_PORT + c->row), &dst, NULL);
	conf_stimulus("rdma_get_dst_port before and after rdma_resolve_addr(port %d), no connect",
		      SEED_PORT + c->row);
	p0 = rdma_get_dst_port(id);
	if (rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 2000))
		conf_fatal("rdma_resolve_addr: %s", conf_errno_name(errno));
	if (rdma_get_cm_event(ch, &ev))
		conf_fatal("rdma_get_cm_event: %s", conf_errno_name(errno));
	CM_EXPECT_EVENT("event", ev->event, RDMA_CM_EVENT_ADDR_RESOLVED);
	rdma_ack_cm_event(ev);
	p1 = rdma_get_dst_port(id);
	EXPECT_INT("dst port of a new id", p0, 0);
	EXPECT_HEX("dst port after resolve_addr (not connected)", p1, htons(SEED_PORT + c->row));
	conf_note("0, then 0x%04x (network order)", p1);
}

/* rdma_get_src_port: "If the id is not bound to a port, the routine will return 0"; after an
 * address resolution without a source the id is bound to an ephemeral port. */
static void seed_src_port(const struct conf_case *c)
{
	struct rdma_event_channel *ch = cm_channel();
	struct rdma_cm_id *id = cm_id(ch, RDMA_PS_TCP);
	struct sockaddr_in dst;
	struct rdma_cm_event *ev;
	uint16_t p0, p1;

	cm_local_ipv4(0, (uint16_t)(SEED_PORT + c->row), &dst, NULL);
	conf_stimulus("rdma_get_src_port before and after rdma_resolve_addr(NULL src)");
	p0 = rdma_get_src_port(id);
	if (rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 2000))
		conf_fatal("rdma_resolve_addr: %s", conf_errno_name(errno));
	if (rdma_get_cm_event(ch, &ev))
		conf_fatal("rdma_get_cm_event: %s", conf_errno_name(errno));
	rdma_ack_cm_event(ev);
	p1 = rdma_get_src_port(id);
	EXPECT_INT("src port of a new id", p0, 0);
	conf_expect(p1 != 0, "src port still 0 after resolve_addr");
	conf_note("0, then %u", ntohs(p1));
}

/* rdma_resolve_route: "The destination must already have been resolved by calling
 * rdma_resolve_addr" -- the real library crashes instead (row 140); the bound-only case:
 * an id bound to a local address (a device) but not resolved: the kernel refuses, EINVAL. */
static void seed_rroute_bound(const struct conf_case *c)
{
	struct rdma_event_channel *ch = cm_channel();
	struct rdma_cm_id *id = cm_id(ch, RDMA_PS_TCP);
	struct sockaddr_in sin;
	int ret, e;

	cm_local_ipv4(0, (uint16_t)(SEED_PORT + c->row), &sin, NULL);
	if (rdma_bind_addr(id, (struct sockaddr *)&sin))
		conf_fatal("rdma_bind_addr: %s", conf_errno_name(errno));
	conf_stimulus("rdma_resolve_route(id bound to a local RDMA address, not resolved, 2000)");
	errno = 0;
	ret = rdma_resolve_route(id, 2000);
	e = errno;
	CM_EXPECT_FAIL("rdma_resolve_route", ret, e, EINVAL);
	EXPECT_INT("channel readable (no event)", cm_readable(ch), 0);
	conf_note("-1 errno %s, no event", conf_errno_name(e));
}

#define DEV (PRE_DEVICE | PRE_CM)
#define S(id_, row_, desc_, doc_, fn_) { id_, "SEED", row_, desc_, doc_, DEV, NULL, 0, fn_, NULL }

static const struct conf_case cases[] = {
	S("SEED-1", 250, "rdma_create_ep (CM ID Operations): 'If a protection domain (PD) is "
	  "provided, then the QP will be created on that PD': id->qp->pd == pd", NULL, seed_ep_pd),
	S("SEED-2", 250, "rdma_create_ep: 'If qp_init_attr is not NULL, then a QP will be "
	  "allocated ... Otherwise the QP will be allocated on a default PD': QP on id->pd", NULL,
	  seed_ep_default_pd),
	S("SEED-3", 250, "rdma_create_ep: 'optional QP': qp_init_attr NULL gives no QP, the id "
	  "still has its device", NULL, seed_ep_noqp),
	S("SEED-4", 250, "rdma_create_ep: 'The rdma_cm_id will be set to use synchronous "
	  "operations ... must be migrated to a user allocated event channel': migrate(id, NULL) "
	  "-1/EINVAL, migrate(id, ch) 0", NULL, seed_ep_sync),
	S("SEED-6", 133, "rdma_resolve_addr: 'If a source address is given, the rdma_cm_id is "
	  "bound to that address': local address == src, port assigned, verbs set", NULL,
	  seed_raddr_src),
	S("SEED-7", 138, "rdma_get_dst_port of a resolved, unconnected id: the destination's "
	  "port (network order)", "rdma_get_dst_port: 'If the rdma_cm_id, id, is not connected, "
	  "then the routine will return 0'", seed_dst_port),
	S("SEED-8", 119, "rdma_get_src_port: 0 on a new id; non-zero after rdma_resolve_addr "
	  "without source (the id is bound)", "'If the id is not bound to a port, the routine "
	  "will return 0' (byte order unstated: it is network order, §16 item 3)", seed_src_port),
	S("SEED-9", 142, "rdma_resolve_route on an id bound to a device but not resolved: "
	  "-1/EINVAL, no event", "rdma_resolve_route: 'The destination must already have been "
	  "resolved by calling rdma_resolve_addr' (the consequence is unstated)",
	  seed_rroute_bound),
};

const struct conf_area conf_area_seed = { "SEED", cases, sizeof cases / sizeof cases[0] };
