/* BIND, LISTEN, OPT and the argument and state checks of the network calls (spec §15 rows
 * 116-152, 170-193, 199-208, 214-220, 245-248) that need no peer: a call rejected by the
 * library (dummy ids) or by the kernel's state machine (ids bound to a local RDMA address). */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <ifaddrs.h>
#include <linux/capability.h>
#include <sys/syscall.h>
#include <net/if.h>
#include <infiniband/ib.h>
#include <infiniband/sa.h>
#include <rdma/rdma_cma.h>

#include "conformance/cm_util.h"
#include "conformance/conformance.h"
#include "conformance/emu_fabrics.h"
#include "rdmaemu/compat.h"

#define TEST_PORT 47471

static int bind_to(struct rdma_cm_id *id, const struct sockaddr_in *sin)
{
	return rdma_bind_addr(id, (struct sockaddr *)sin);
}

/* ---- BIND ---- */

/* One row per address the library refuses before the kernel (ucma_addrlen == 0). */
struct bind_lib_row {
	const char *what;
	int family; /* 0: NULL address */
};

static void bind_lib(const struct conf_case *c)
{
	const struct bind_lib_row *r = c->data;
	struct rdma_cm_id *id = cm_dummy_id(-1);
	struct sockaddr_storage ss;
	int ret, e;

	memset(&ss, 0, sizeof ss);
	ss.ss_family = (sa_family_t)r->family;
	conf_stimulus("rdma_bind_addr(dummy id, %s)", r->what);
	errno = 0;
	ret = rdma_bind_addr(id, r->family ? (struct sockaddr *)&ss : NULL);
	e = errno;
	CM_EXPECT_FAIL("rdma_bind_addr", ret, e, EINVAL);
	conf_note("-1 errno %s (no kernel call: the fd -1 would give EBADF)", conf_errno_name(e));
}

static const struct bind_lib_row bind_116 = { "NULL", 0 };
static const struct bind_lib_row bind_117 = { "AF_UNIX", AF_UNIX };

static void bind_118(const struct conf_case *c)
{
	struct rdma_event_channel *ch = cm_channel();
	struct rdma_cm_id *id = cm_id(ch, RDMA_PS_TCP);
	struct sockaddr_ib sib;
	int ret, e;

	memset(&sib, 0, sizeof sib);
	sib.sib_family = AF_IB;
	conf_stimulus("rdma_bind_addr(id, AF_IB address) on a library without AF_IB support");
	errno = 0;
	ret = rdma_bind_addr(id, (struct sockaddr *)&sib);
	e = errno;
	if (ret == 0)
		conf_notrun("the library and kernel support AF_IB (the row needs them not to)");
	CM_EXPECT_FAIL("rdma_bind_addr", ret, e, EINVAL);
	conf_note("-1 errno %s", conf_errno_name(e));
}

static void bind_119(const struct conf_case *c)
{
	struct rdma_event_channel *ch = cm_channel();
	struct rdma_cm_id *id = cm_id(ch, RDMA_PS_TCP);
	struct sockaddr_in any;
	int ret;

	cm_ipv4("0.0.0.0", 0, &any);
	conf_stimulus("rdma_bind_addr(id, 0.0.0.0:0)");
	ret = bind_to(id, &any);
	if (!conf_expect(ret == 0, "ret %d errno %s", ret, conf_errno_name(errno)))
		return;
	conf_expect(rdma_get_src_port(id) != 0, "src port 0");
	EXPECT_NULL("verbs", id->verbs);
	EXPECT_INT("channel readable (no event)", cm_readable(ch), 0);
	conf_note("0; src port %u, verbs NULL, no event", ntohs(rdma_get_src_port(id)));
}

static void bind_120(const struct conf_case *c)
{
	struct rdma_event_channel *ch = cm_channel();
	struct rdma_cm_id *id = cm_id(ch, RDMA_PS_TCP);
	struct sockaddr_in sin;
	char buf[64];
	int ret;

	cm_local_ipv4(0, TEST_PORT, &sin, NULL);
	conf_stimulus("rdma_bind_addr(id, %s)",
		      conf_fmt_sockaddr(buf, sizeof buf, (struct sockaddr *)&sin, sizeof sin));
	ret = bind_to(id, &sin);
	if (!conf_expect(ret == 0, "ret %d errno %s", ret, conf_errno_name(errno)))
		return;
	conf_expect(id->verbs != NULL, "verbs NULL");
	conf_expect(id->pd != NULL, "pd NULL");
	conf_expect(id->port_num >= 1, "port_num %u", id->port_num);
	EXPECT_HEX("src port", rdma_get_src_port(id), htons(TEST_PORT));
	EXPECT_INT("channel readable (no event)", cm_readable(ch), 0);
	conf_note("0; verbs, pd set, port_num %u, src port %u", id->port_num, TEST_PORT);
}

/* One row per bind the kernel refuses. */
struct bind_err_row {
	const char *addr; /* NULL: the local RDMA address */
	int family;
	uint16_t port;
	int want;
};

/* The case runs in its own child: drop CAP_NET_BIND_SERVICE from its effective set, so that
 * the row means the same as root (the reference VM) and as a user. */
static void drop_net_bind_service(void)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d))
		conf_fatal("capget: %s", conf_errno_name(errno));
	d[CAP_NET_BIND_SERVICE / 32].effective &= ~(1u << (CAP_NET_BIND_SERVICE % 32));
	if (syscall(SYS_capset, &h, d))
		conf_fatal("capset: %s", conf_errno_name(errno));
}

static void bind_err(const struct conf_case *c)
{
	const struct bind_err_row *r = c->data;
	struct rdma_event_channel *ch = cm_channel();
	struct rdma_cm_id *id = cm_id(ch, RDMA_PS_TCP);
	struct sockaddr_storage ss;
	char buf[80];
	int ret, e;

	memset(&ss, 0, sizeof ss);
	if (!r->addr) {
		if (r->port < 1024)
			drop_net_bind_service();
		cm_local_ipv4(0, r->port, (struct sockaddr_in *)&ss, NULL);
	} else if (r->family == AF_INET) {
		cm_ipv4(r->addr, r->port, (struct sockaddr_in *)&ss);
	} else {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;

		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(r->port);
		inet_pton(AF_INET6, r->addr, &s6->sin6_addr);
	}
	conf_stimulus("rdma_bind_addr(id, %s)",
		      conf_fmt_sockaddr(buf, sizeof buf, (struct sockaddr *)&ss,
					r->family == AF_INET6 ? sizeof(struct sockaddr_in6) :
								sizeof(struct sockaddr_in)));
	errno = 0;
	ret = rdma_bind_addr(id, (struct sockaddr *)&ss);
	e = errno;
	CM_EXPECT_FAIL("rdma_bind_addr", ret, e, r->want);
	conf_note("-1 errno %s", conf_errno_name(e));
}

static const struct bind_err_row bind_121 = { "203.0.113.77", AF_INET, TEST_PORT, EADDRNOTAVAIL };
static const struct bind_err_row bind_127 = { NULL, AF_INET, 1000, EACCES };
static const struct bind_err_row bind_128 = { "fe80::1", AF_INET6, TEST_PORT, EINVAL };

/* An IPv4 address of an up netdev that is not loopback and not an RDMA port's address: on the
 * emulator the PLAIN fabric's, elsewhere the first such address of the machine. */
static void plain_ipv4(struct sockaddr_in *sin)
{
	struct ifaddrs *ifa, *p;

	if (conf_target() == TARGET_EMU) {
		int (*attach)(const char *, const char *) =
			(int (*)(const char *, const char *))conf_ctl_sym("rdmaemu_ctl_attach_text");

		if (!attach || attach(EMU_FABRIC_PLAIN, EMU_FABRIC_PLAIN_NODE))
			conf_fatal("attaching the plain-netdev fabric failed: errno %s",
				   conf_errno_name(errno));
		cm_ipv4(EMU_FABRIC_PLAIN_ADDR, TEST_PORT, sin);
		return;
	}
	if (getifaddrs(&ifa))
		conf_fatal("getifaddrs: %s", conf_errno_name(errno));
	for (p = ifa; p; p = p->ifa_next) {
		struct sockaddr_in rdma;
		bool is_rdma = false;

		if (!p->ifa_addr || p->ifa_addr->sa_family != AF_INET || (p->ifa_flags & IFF_LOOPBACK))
			continue;
		memcpy(sin, p->ifa_addr, sizeof *sin);
		for (unsigned i = 0; !is_rdma && cm_local_ipv4_try(i, 0, &rdma, NULL); i++)
			is_rdma = rdma.sin_addr.s_addr == sin->sin_addr.s_addr;
		if (!is_rdma) {
			sin->sin_port = htons(TEST_PORT);
			freeifaddrs(ifa);
			return;
		}
	}
	freeifaddrs(ifa);
	conf_notrun("needs a netdev with an IPv4 address and no RDMA device");
}

static void bind_122(const struct conf_case *c)
{
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id;
	struct sockaddr_in sin;
	char buf[64];
	int ret, e;

	plain_ipv4(&sin);
	ch = cm_channel();
	id = cm_id(ch, RDMA_PS_TCP);
	conf_stimulus("rdma_bind_addr(id, %s) (a netdev without RDMA device)",
		      conf_fmt_sockaddr(buf, sizeof buf, (struct sockaddr *)&sin, sizeof sin));
	errno = 0;
	ret = bind_to(id, &sin);
	e = errno;
	CM_EXPECT_FAIL("rdma_bind_addr", ret, e, ENODEV);
	conf_note("-1 errno %s", conf_errno_name(e));
}

static void bind_122b(const struct conf_case *c)
{
	struct rdma_event_channel *ch = cm_channel();
	struct rdma_cm_id *id = cm_id(ch, RDMA_PS_TCP);
	struct sockaddr_in sin;
	int ret;

	cm_ipv4("127.0.0.1", 0, &sin);
	conf_stimulus("rdma_bind_addr(id, 127.0.0.1:0)");
	ret = bind_to(id, &sin);
	if (!conf_expect(ret == 0, "ret %d errno %s", ret, conf_errno_name(errno)))
		return;
	EXPECT_NULL("verbs", id->verbs);
	conf_expect(rdma_get_src_port(id) != 0, "src port 0");
	conf_note("0; verbs NULL, src port %u", ntohs(rdma_get_src_port(id)));
}

/* An RDMA_PS_IPOIB id bound to the address of a RoCE netdev: the kernel wants an IPoIB netdev
 * (cma_acquire_dev_by_src_ip). On an InfiniBand port the bind is an ordinary one: Notrun. */
static void bind_122c(const struct conf_case *c)
{
	struct rdma_event_channel *ch = cm_channel();
	struct rdma_cm_id *probe = cm_id(ch, RDMA_PS_TCP), *id;
	struct ibv_port_attr pa;
	struct sockaddr_in sin;
	char buf[64];
	int ret, e;

	cm_local_ipv4(0, TEST_PORT, &sin, NULL);
	if (bind_to(probe, &sin) || !probe->verbs ||
	    ibv_query_port(probe->verbs, probe->port_num, &pa)) {
		conf_expect(0, "binding an RDMA_PS_TCP id to the address failed: %s",
			    conf_errno_name(errno));
		return;
	}
	if (pa.link_layer != IBV_LINK_LAYER_ETHERNET)
		conf_notrun("the local RDMA address is on an InfiniBand port (needs RoCE)");
	rdma_destroy_id(probe);
	id = cm_id(ch, RDMA_PS_IPOIB);
	conf_stimulus("rdma_bind_addr(RDMA_PS_IPOIB id, %s) (a RoCE netdev)",
		      conf_fmt_sockaddr(buf, sizeof buf, (struct sockaddr *)&sin, sizeof sin));
	errno = 0;
	ret = bind_to(id, &sin);
	e = errno;
	CM_EXPECT_FAIL("rdma_bind_addr", ret, e, EINVAL);
	EXPECT_NULL("verbs", id->verbs);
	conf_note("-1 errno %s, verbs NULL", conf_errno_name(e));
}

static void bind_123(const struct conf_case *c)
{
	struct rdma_event_channel *ch = cm_channel();
	struct rdma_cm_id *id = cm_id(ch, RDMA_PS_TCP);
	struct sockaddr_in any;
	int ret, e;

	cm_ipv4("0.0.0.0", 0, &any);
	conf_stimulus("rdma_bind_addr twice on one id (0.0.0.0:0)");
	if (bind_to(id, &any))
		conf_fatal("first bind: %s", conf_errno_name(errno));
	errno = 0;
	ret = bind_to(id, &any);
	e = errno;
	CM_EXPECT_FAIL("second bind", ret, e, EINVAL);
	conf_note("-1 errno %s", conf_errno_name(e));
}

/* Two ids binding the same port: the second's result. */
struct bind_two_row {
	bool local;   /* the local RDMA address; else 0.0.0.0 */
	bool reuse;   /* REUSEADDR=1 on both before binding */
	enum rdma_port_space ps2;
	int want;     /* 0 or the errno of the second bind */
};

static void bind_two(const struct conf_case *c)
{
	const struct bind_two_row *r = c->data;
	struct rdma_event_channel *ch = cm_channel();
	struct rdma_cm_id *a = cm_id(ch, RDMA_PS_TCP), *b = cm_id(ch, r->ps2);
	struct sockaddr_in sin;
	char buf[64];
	int one = 1, ret, e;

	if (r->local)
		cm_local_ipv4(0, TEST_PORT, &sin, NULL);
	else
		cm_ipv4("0.0.0.0", TEST_PORT, &sin);
	conf_stimulus("ids a (TCP) and b (%s)%s bind %s", r->ps2 == RDMA_PS_UDP ? "UDP" : "TCP",
		      r->reuse ? " with REUSEADDR=1" : "",
		      conf_fmt_sockaddr(buf, sizeof buf, (struct sockaddr *)&sin, sizeof sin));
	if (r->reuse &&
	    (rdma_set_option(a, RDMA_OPTION_ID, RDMA_OPTION_ID_REUSEADDR, &one, sizeof one) ||
	     rdma_set_option(b, RDMA_OPTION_ID, RDMA_OPTION_ID_REUSEADDR, &one, sizeof one)))
		conf_fatal("REUSEADDR: %s", conf_errno_name(errno));
	if (bind_to(a, &sin))
		conf_fatal("first bind: %s", conf_errno_name(errno));
	errno = 0;
	ret = bind_to(b, &sin);
	e = errno;
	if (r->want) {
		CM_EXPECT_FAIL("second bind", ret, e, r->want);
		conf_note("second -1 errno %s", conf_errno_name(e));
	} else {
		conf_expect(ret == 0, "second bind: ret %d errno %s", ret, conf_errno_name(e));
		conf_note("both 0");
	}
}

static const struct bind_two_row bind_124 = { true, false, RDMA_PS_TCP, EADDRINUSE };
static const struct bind_two_row bind_125 = { false, false, RDMA_PS_TCP, EADDRNOTAVAIL };
static const struct bind_two_row bind_126 = { true, true, RDMA_PS_TCP, 0 };
static const struct bind_two_row bind_129 = { true, false, RDMA_PS_UDP, 0 };

/* ---- LISTEN ---- */

static void listen_145(const struct conf_case *c)
{
	struct rdma_event_channel *ch = cm_channel();
	struct rdma_cm_id *id = cm_id(ch, RDMA_PS_TCP);
	struct sockaddr_in sin;
	int ret;

	cm_local_ipv4(0, TEST_PORT, &sin, NULL);
	conf_stimulus("rdma_bind_addr(local:%u); rdma_listen(id, 10)", TEST_PORT);
	if (bind_to(id, &sin))
		conf_fatal("bind: %s", conf_errno_name(errno));
	ret = rdma_listen(id, 10);
	EXPECT_INT("ret", ret, 0);
	EXPECT_HEX("src port", rdma_get_src_port(id), htons(TEST_PORT));
	EXPECT_INT("channel readable (no event)", cm_readable(ch), 0);
	conf_note("0; no event; src port %u", TEST_PORT);
}

static void listen_146(const struct conf_case *c)
{
	struct rdma_event_channel *ch = cm_channel();
	struct rdma_cm_id *id = cm_id(ch, RDMA_PS_TCP);
	struct sockaddr_in *src;
	int ret;

	conf_stimulus("rdma_listen(IDLE id, 10)");
	ret = rdma_listen(id, 10);
	if (!conf_expect(ret == 0, "ret %d errno %s", ret, conf_errno_name(errno)))
		return;
	src = (struct sockaddr_in *)rdma_get_local_addr(id);
	EXPECT_INT("family", src->sin_family, AF_INET);
	EXPECT_HEX("address", ntohl(src->sin_addr.s_addr), INADDR_ANY);
	conf_expect(src->sin_port != 0, "src port 0");
	conf_note("0; bound to 0.0.0.0:%u", ntohs(src->sin_port));
}

static void listen_147(const struct conf_case *c)
{
	struct rdma_event_channel *ch = cm_channel();
	struct rdma_cm_id *id = cm_id(ch, RDMA_PS_TCP);
	int ret, e;

	conf_stimulus("rdma_listen twice");
	if (rdma_listen(id, 10))
		conf_fatal("first listen: %s", conf_errno_name(errno));
	errno = 0;
	ret = rdma_listen(id, 10);
	e = errno;
	CM_EXPECT_FAIL("second listen", ret, e, EINVAL);
	conf_note("-1 errno %s", conf_errno_name(e));
}

static void listen_148(const struct conf_case *c)
{
	struct rdma_event_channel *ch = cm_channel();
	struct rdma_cm_id *a = cm_id(ch, RDMA_PS_TCP), *b = cm_id(ch, RDMA_PS_TCP);
	int ra, rb;

	conf_stimulus("rdma_listen(id, 0) and rdma_listen(id, -1)");
	ra = rdma_listen(a, 0);
	rb = rdma_listen(b, -1);
	conf_expect(ra == 0, "backlog 0: ret %d errno %s", ra, conf_errno_name(errno));
	conf_expect(rb == 0, "backlog -1: ret %d errno %s", rb, conf_errno_name(errno));
	conf_note("0 and 0");
}

/* ---- OPT ---- */

static void opt_199(const struct conf_case *c)
{
	struct rdma_cm_id *id = cm_dummy_id(-1);
	int v = 1, r1, e1, r2, e2;

	conf_stimulus("rdma_set_option(dummy id fd -1, ID/REUSEADDR) and (level 7, optname 9)");
	errno = 0;
	r1 = rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_REUSEADDR, &v, sizeof v);
	e1 = errno;
	errno = 0;
	r2 = rdma_set_option(id, 7, 9, &v, 3);
	e2 = errno;
	CM_EXPECT_FAIL("REUSEADDR", r1, e1, EBADF);
	CM_EXPECT_FAIL("level 7", r2, e2, EBADF);
	conf_note("-1 errno %s / %s (no library validation)", conf_errno_name(e1),
		  conf_errno_name(e2));
}

/* One row per rdma_set_option the kernel judges. */
struct opt_row {
	enum rdma_port_space ps;
	int setup;   /* 0 none, 1 bind 0.0.0.0:0, 2 listen */
	int level, optname;
	size_t optlen;
	int want;
	const char *what;
	uint32_t path_flags; /* IB_PATH rows: flags of the one record */
};

static void opt_row(const struct conf_case *c)
{
	const struct opt_row *r = c->data;
	struct rdma_event_channel *ch = cm_channel();
	struct rdma_cm_id *id = cm_id(ch, r->ps);
	uint8_t val[256];
	int ret, e;

	memset(val, 0, sizeof val);
	if (r->setup == 1) {
		struct sockaddr_in any;

		cm_ipv4("0.0.0.0", 0, &any);
		if (bind_to(id, &any))
			conf_fatal("bind: %s", conf_errno_name(errno));
	} else if (r->setup == 2 && rdma_listen(id, 1)) {
		conf_fatal("listen: %s", conf_errno_name(errno));
	}
	if (r->level == RDMA_OPTION_IB && r->optlen >= sizeof(struct ibv_path_data)) {
		struct ibv_path_data *p = (struct ibv_path_data *)val;

		p->flags = r->path_flags;
	} else if (r->optlen == 4) {
		val[0] = 1;
	} else if (r->optlen == 1) {
		val[0] = 5;
	}
	conf_stimulus("%s", r->what);
	errno = 0;
	ret = rdma_set_option(id, r->level, r->optname, val, r->optlen);
	e = errno;
	if (r->want) {
		CM_EXPECT_FAIL("rdma_set_option", ret, e, r->want);
		conf_note("-1 errno %s", conf_errno_name(e));
	} else {
		conf_expect(ret == 0, "ret %d errno %s", ret, conf_errno_name(e));
		conf_note("0");
	}
}

#define OPT(id_, row_, ps_, setup_, lvl_, name_, len_, want_, what_, ...)                     \
	static const struct opt_row id_ = { ps_, setup_, lvl_, name_, len_, want_, what_,        \
					    __VA_ARGS__ };
OPT(opt_200a, 200, RDMA_PS_TCP, 0, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, 1, 0, "TOS, optlen 1", 0)
OPT(opt_200b, 200, RDMA_PS_TCP, 0, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, 4, EINVAL, "TOS, optlen 4", 0)
OPT(opt_201a, 201, RDMA_PS_TCP, 0, RDMA_OPTION_ID, RDMA_OPTION_ID_REUSEADDR, 4, 0,
    "REUSEADDR, optlen 4", 0)
OPT(opt_201b, 201, RDMA_PS_TCP, 0, RDMA_OPTION_ID, RDMA_OPTION_ID_REUSEADDR, 1, EINVAL,
    "REUSEADDR, optlen 1", 0)
OPT(opt_203, 203, RDMA_PS_TCP, 2, RDMA_OPTION_ID, RDMA_OPTION_ID_AFONLY, 4, EINVAL,
    "AFONLY=1 after rdma_listen", 0)
OPT(opt_204, 204, RDMA_PS_UDP, 0, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, 1, EINVAL,
    "ACK_TIMEOUT on an RDMA_PS_UDP id", 0)
OPT(opt_205a, 205, RDMA_PS_TCP, 0, RDMA_OPTION_ID, 9, 4, ENOSYS, "level ID, optname 9", 0)
OPT(opt_205b, 205, RDMA_PS_TCP, 0, 7, 0, 4, ENOSYS, "level 7", 0)
OPT(opt_206, 206, RDMA_PS_TCP, 0, RDMA_OPTION_IB, RDMA_OPTION_IB_PATH, 71, EINVAL,
    "IB_PATH, optlen 71", 0x2b)
OPT(opt_207, 207, RDMA_PS_TCP, 0, RDMA_OPTION_IB, RDMA_OPTION_IB_PATH, 72, EINVAL,
    "IB_PATH, one 72-byte record with flags 0x1 only", 0x1)
OPT(opt_208, 208, RDMA_PS_TCP, 0, RDMA_OPTION_IB, RDMA_OPTION_IB_PATH, 72, EINVAL,
    "IB_PATH on an IDLE id (one record, flags 0x2b)", 0x2b)

static void opt_202(const struct conf_case *c)
{
	struct rdma_event_channel *ch = cm_channel();
	struct rdma_cm_id *id = cm_id(ch, RDMA_PS_TCP);
	struct sockaddr_in any;
	int zero = 0, ret, e;

	cm_ipv4("0.0.0.0", 0, &any);
	conf_stimulus("bind 0.0.0.0:0; REUSEADDR = 0");
	if (bind_to(id, &any))
		conf_fatal("bind: %s", conf_errno_name(errno));
	errno = 0;
	ret = rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_REUSEADDR, &zero, sizeof zero);
	e = errno;
	CM_EXPECT_FAIL("rdma_set_option", ret, e, EINVAL);
	conf_note("-1 errno %s", conf_errno_name(e));
}

/* ---- the network calls' own checks ---- */

static void raddr_130(const struct conf_case *c)
{
	struct rdma_cm_id *id = cm_dummy_id(-1);
	int ret, e;

	conf_stimulus("rdma_resolve_addr(dummy id, NULL, NULL, 2000)");
	errno = 0;
	ret = rdma_resolve_addr(id, NULL, NULL, 2000);
	e = errno;
	CM_EXPECT_FAIL("rdma_resolve_addr", ret, e, EINVAL);
	conf_note("-1 errno %s", conf_errno_name(e));
}

static void raddr_131(const struct conf_case *c)
{
	struct rdma_cm_id *id = cm_dummy_id(-1);
	struct sockaddr_storage src = { .ss_family = AF_UNIX };
	struct sockaddr_in dst;
	int ret, e;

	cm_ipv4("192.0.2.2", 7471, &dst);
	conf_stimulus("rdma_resolve_addr(dummy id, AF_UNIX src, 192.0.2.2:7471, 2000)");
	errno = 0;
	ret = rdma_resolve_addr(id, (struct sockaddr *)&src, (struct sockaddr *)&dst, 2000);
	e = errno;
	CM_EXPECT_FAIL("rdma_resolve_addr", ret, e, EINVAL);
	conf_note("-1 errno %s", conf_errno_name(e));
}

static void raddr_132(const struct conf_case *c)
{
	struct rdma_event_channel *ch = cm_channel();
	struct rdma_cm_id *id = cm_id(ch, RDMA_PS_TCP);
	struct sockaddr_ib dst;
	int ret, e;

	memset(&dst, 0, sizeof dst);
	dst.sib_family = AF_IB;
	conf_stimulus("rdma_resolve_addr(id, NULL, AF_IB dst, 2000) without AF_IB support");
	errno = 0;
	ret = rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 2000);
	e = errno;
	if (ret == 0 || e != EINVAL) {
		struct sockaddr_ib sib = { .sib_family = AF_IB };
		struct rdma_cm_id *probe = cm_id(ch, RDMA_PS_IB);

		if (rdma_bind_addr(probe, (struct sockaddr *)&sib) == 0)
			conf_notrun("the library and kernel support AF_IB");
	}
	CM_EXPECT_FAIL("rdma_resolve_addr", ret, e, EINVAL);
	conf_note("-1 errno %s", conf_errno_name(e));
}

static void raddr_137(const struct conf_case *c)
{
	struct rdma_event_channel *ch = cm_channel();
	struct rdma_cm_id *id = cm_id(ch, RDMA_PS_TCP);
	struct sockaddr_in6 src = { .sin6_family = AF_INET6 };
	struct sockaddr_in dst;
	int ret, e;

	cm_local_ipv4(0, 7471, &dst, NULL);
	conf_stimulus("rdma_resolve_addr(id, [::]:0, <local IPv4>:7471, 2000)");
	errno = 0;
	ret = rdma_resolve_addr(id, (struct sockaddr *)&src, (struct sockaddr *)&dst, 2000);
	e = errno;
	CM_EXPECT_FAIL("rdma_resolve_addr", ret, e, EINVAL);
	conf_note("-1 errno %s", conf_errno_name(e));
}

/* A call on an id in a state where the kernel refuses it: the id is IDLE, bound to the local
 * RDMA address, or listening (setup), and the call gives `want`. */
enum st_call { ST_ROUTE, ST_CONNECT, ST_CONNECT_RESP, ST_REJECT, ST_DISCONNECT, ST_NOTIFY,
	       ST_JOIN, ST_ACCEPT_NOQP, ST_ESTABLISH_QP, ST_GET_REQUEST };
struct st_row {
	int setup; /* 0 IDLE, 1 bound to the local RDMA address, 3 dummy id */
	enum st_call call;
	int want;
	const char *what;
};

static void st_row(const struct conf_case *c)
{
	const struct st_row *r = c->data;
	struct rdma_event_channel *ch = NULL;
	struct rdma_cm_id *id;
	struct sockaddr_in sin, grp;
	struct rdma_conn_param p;
	int ret = 0, e;

	if (r->setup == 3) {
		id = cm_dummy_id(-1);
		id->ps = RDMA_PS_TCP; /* the library checks conn params of TCP ids only */
	} else {
		ch = cm_channel();
		id = cm_id(ch, r->call == ST_JOIN ? RDMA_PS_UDP : RDMA_PS_TCP);
	}
	if (r->setup == 1) {
		cm_local_ipv4(0, 0, &sin, NULL);
		if (bind_to(id, &sin))
			conf_fatal("bind: %s", conf_errno_name(errno));
	}
	memset(&p, 0, sizeof p);
	conf_stimulus("%s", r->what);
	errno = 0;
	switch (r->call) {
	case ST_ROUTE:
		ret = rdma_resolve_route(id, 2000);
		break;
	case ST_CONNECT:
		ret = rdma_connect(id, r->setup == 3 ? NULL : &p);
		break;
	case ST_CONNECT_RESP: {
		struct ibv_device_attr da;

		if (ibv_query_device(id->verbs, &da))
			conf_fatal("ibv_query_device: %s", conf_errno_name(errno));
		p.responder_resources = (uint8_t)(da.max_qp_rd_atom + 1);
		p.initiator_depth = 1;
		if (p.responder_resources == RDMA_MAX_RESP_RES)
			conf_notrun("device maximum + 1 is 0xff (\"device maximum\")");
		ret = rdma_connect(id, &p);
		break;
	}
	case ST_REJECT:
		ret = rdma_reject(id, NULL, 0);
		break;
	case ST_DISCONNECT:
		ret = rdma_disconnect(id);
		break;
	case ST_NOTIFY:
		ret = rdma_notify(id, IBV_EVENT_COMM_EST);
		break;
	case ST_JOIN:
		cm_ipv4("239.1.1.1", 0, &grp);
		ret = rdma_join_multicast(id, (struct sockaddr *)&grp, NULL);
		break;
	case ST_ACCEPT_NOQP:
		ret = rdma_accept(id, NULL);
		break;
	case ST_ESTABLISH_QP:
		id->qp = (struct ibv_qp *)id; /* any non-NULL QP: rejected before it is used */
		ret = rdma_establish(id);
		break;
	case ST_GET_REQUEST: {
		struct rdma_cm_id *nid;

		ret = rdma_get_request(id, &nid);
		break;
	}
	}
	e = errno;
	CM_EXPECT_FAIL("call", ret, e, r->want);
	conf_note("-1 errno %s", conf_errno_name(e));
}

#define ST(id_, setup_, call_, want_, what_)                                                   \
	static const struct st_row id_ = { setup_, call_, want_, what_ };
ST(rroute_140, 0, ST_ROUTE, EINVAL, "rdma_resolve_route(IDLE id, 2000)")
ST(conn_150, 3, ST_CONNECT, EINVAL, "rdma_connect(dummy RDMA_PS_TCP id without QP, NULL)")
ST(conn_151, 1, ST_CONNECT_RESP, EINVAL,
   "rdma_connect(bound id, {responder_resources = device max + 1})")
ST(conn_152, 1, ST_CONNECT, EINVAL, "rdma_connect(bound id, {0}) before route resolution")
ST(req_170, 3, ST_GET_REQUEST, EINVAL, "rdma_get_request(async (dummy) listener, &id)")
ST(acc_174, 1, ST_ACCEPT_NOQP, EINVAL, "rdma_accept(id without QP, NULL)")
ST(rej_184, 1, ST_REJECT, EINVAL, "rdma_reject(bound id that is not a request)")
ST(disc_185, 3, ST_DISCONNECT, EINVAL, "rdma_disconnect(id never bound to a device)")
ST(disc_186, 1, ST_DISCONNECT, EINVAL, "rdma_disconnect(bound, not connected id)")
ST(notify_192, 0, ST_NOTIFY, EINVAL, "rdma_notify(id without device, IBV_EVENT_COMM_EST)")
ST(est_193, 3, ST_ESTABLISH_QP, EINVAL, "rdma_establish(dummy id with a QP)")
ST(mc_220, 0, ST_JOIN, EINVAL, "rdma_join_multicast(IDLE id, 239.1.1.1)")

/* ---- MC (library checks) ---- */

struct mc_row {
	int ex;          /* 1: rdma_join_multicast_ex, 0: rdma_join_multicast, 2: leave */
	uint32_t comp_mask, join_flags;
	int family;      /* of the address; 0: NULL */
	int want;
	const char *what;
};

static void mc_row(const struct conf_case *c)
{
	const struct mc_row *r = c->data;
	struct rdma_cm_id *id = cm_dummy_id(-1);
	struct rdma_cm_join_mc_attr_ex attr;
	struct sockaddr_storage ss;
	struct sockaddr *addr = NULL;
	int ret, e;

	memset(&ss, 0, sizeof ss);
	if (r->family == AF_INET)
		cm_ipv4("239.1.1.1", 0, (struct sockaddr_in *)&ss);
	else
		ss.ss_family = (sa_family_t)r->family;
	if (r->family)
		addr = (struct sockaddr *)&ss;
	conf_stimulus("%s", r->what);
	errno = 0;
	if (r->ex == 1) {
		memset(&attr, 0, sizeof attr);
		attr.comp_mask = r->comp_mask;
		attr.join_flags = r->join_flags;
		attr.addr = addr;
		ret = rdma_join_multicast_ex(id, &attr, NULL);
	} else if (r->ex == 0) {
		ret = rdma_join_multicast(id, addr, NULL);
	} else {
		ret = rdma_leave_multicast(id, addr);
	}
	e = errno;
	CM_EXPECT_FAIL("call", ret, e, r->want);
	conf_note("-1 errno %s", conf_errno_name(e));
}

#define AM RDMA_CM_JOIN_MC_ATTR_ADDRESS
#define JF RDMA_CM_JOIN_MC_ATTR_JOIN_FLAGS
#define MC(id_, ex_, mask_, flags_, fam_, want_, what_)                                        \
	static const struct mc_row id_ = { ex_, mask_, flags_, fam_, want_, what_ };
MC(mc_214a, 1, 4, 0, AF_INET, ENOTSUP, "rdma_join_multicast_ex(comp_mask 4)")
MC(mc_214b, 1, 0xff, 0, AF_INET, ENOTSUP, "rdma_join_multicast_ex(comp_mask 0xff)")
MC(mc_215a, 1, 0, 0, AF_INET, EINVAL, "rdma_join_multicast_ex(comp_mask 0)")
MC(mc_215b, 1, AM, 0, AF_INET, EINVAL, "rdma_join_multicast_ex(comp_mask ADDRESS only)")
MC(mc_215c, 1, JF, 0, AF_INET, EINVAL, "rdma_join_multicast_ex(comp_mask JOIN_FLAGS only)")
MC(mc_216, 1, AM | JF, 2, AF_INET, EINVAL, "rdma_join_multicast_ex(join_flags 2)")
MC(mc_217a, 1, AM | JF, 0, 0, EINVAL, "rdma_join_multicast_ex(addr NULL)")
MC(mc_217b, 1, AM | JF, 0, AF_UNIX, EINVAL, "rdma_join_multicast_ex(addr AF_UNIX)")
MC(mc_217c, 0, 0, 0, 0, EINVAL, "rdma_join_multicast(id, NULL, ctx)")
MC(mc_218, 2, 0, 0, 0, EINVAL, "rdma_leave_multicast(id, NULL)")
MC(mc_219, 2, 0, 0, AF_INET, EADDRNOTAVAIL, "rdma_leave_multicast(id, 239.1.1.1 never joined)")

/* ---- ECE ---- */

static void ece_245(const struct conf_case *c)
{
	struct rdma_cm_id *id = cm_dummy_id(-1), *qpid = cm_dummy_id(-1);
	struct ibv_ece ok = { .vendor_id = 0x2c9 }, zero_vendor = { 0 },
		       mask = { .vendor_id = 0x2c9, .comp_mask = 1 };
	struct { const char *what; struct rdma_cm_id *id; struct ibv_ece *e; } t[] = {
		{ "id NULL", NULL, &ok }, { "ece NULL", id, NULL },
		{ "vendor_id 0", id, &zero_vendor }, { "comp_mask 1", id, &mask },
		{ "id with QP", qpid, &ok },
	};

	qpid->qp = (struct ibv_qp *)qpid;
	conf_stimulus("rdma_set_local_ece: id NULL, ece NULL, vendor_id 0, comp_mask 1, id with QP");
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		int ret, e;

		errno = 0;
		ret = rdma_set_local_ece(t[i].id, t[i].e);
		e = errno;
		conf_expect(ret == -1 && e == EINVAL, "%s: ret %d errno %s", t[i].what, ret,
			    conf_errno_name(e));
	}
	conf_note("-1/EINVAL each");
}

static void ece_246(const struct conf_case *c)
{
	struct rdma_cm_id *id = cm_dummy_id(-1);
	struct ibv_ece e = { .vendor_id = 0x2c9, .options = 7 };

	conf_stimulus("rdma_set_local_ece(id, {vendor 0x2c9, options 7})");
	EXPECT_INT("ret", rdma_set_local_ece(id, &e), 0);
	conf_note("0");
}

static void ece_247(const struct conf_case *c)
{
	struct rdma_cm_id *id = cm_dummy_id(-1), *qpid = cm_dummy_id(-1);
	struct ibv_ece e;
	int r1, e1, r2, e2, r3, e3;

	qpid->qp = (struct ibv_qp *)qpid;
	conf_stimulus("rdma_get_remote_ece(NULL,&e), (id,NULL), (id with QP,&e)");
	errno = 0;
	r1 = rdma_get_remote_ece(NULL, &e);
	e1 = errno;
	errno = 0;
	r2 = rdma_get_remote_ece(id, NULL);
	e2 = errno;
	errno = 0;
	r3 = rdma_get_remote_ece(qpid, &e);
	e3 = errno;
	CM_EXPECT_FAIL("id NULL", r1, e1, EINVAL);
	CM_EXPECT_FAIL("ece NULL", r2, e2, EINVAL);
	CM_EXPECT_FAIL("id with QP", r3, e3, EINVAL);
	conf_note("-1/EINVAL each");
}

static void ece_248(const struct conf_case *c)
{
	struct rdma_cm_id *id = cm_dummy_id(-1);
	struct ibv_ece e;

	memset(&e, 0xa5, sizeof e);
	conf_stimulus("rdma_get_remote_ece(fresh id, &e)");
	EXPECT_INT("ret", rdma_get_remote_ece(id, &e), 0);
	EXPECT_INT("vendor_id", e.vendor_id, 0);
	EXPECT_INT("options", e.options, 0);
	EXPECT_INT("comp_mask", e.comp_mask, 0);
	conf_note("0; zeros");
}

#define DEV (PRE_DEVICE | PRE_CM)
#define C(id_, area_, row_, desc_, doc_, pre_, fn_, data_)                                    \
	{ id_, area_, row_, desc_, doc_, pre_, NULL, 0, fn_, data_ }

static const struct conf_case cases[] = {
	C("BIND-116", "BIND", 116, "rdma_bind_addr(id, NULL): -1/EINVAL, no kernel call", NULL,
	  PRE_NONE, bind_lib, &bind_116),
	C("BIND-117", "BIND", 117, "AF_UNIX address: -1/EINVAL", NULL, PRE_NONE, bind_lib,
	  &bind_117),
	C("BIND-118", "BIND", 118, "AF_IB address when AF_IB is unsupported: -1/EINVAL", NULL, DEV,
	  bind_118, NULL),
	C("BIND-119", "BIND", 119, "0.0.0.0 port 0: 0; src port != 0; verbs NULL; no event", NULL,
	  DEV, bind_119, NULL),
	C("BIND-120", "BIND", 120, "local RDMA IP port P: 0; verbs, pd set, port_num >= 1, src "
	  "port P", NULL, DEV, bind_120, NULL),
	C("BIND-121", "BIND", 121, "IP not configured locally: -1/EADDRNOTAVAIL", NULL, DEV,
	  bind_err, &bind_121),
	C("BIND-122", "BIND", 122, "IP of a netdev without RDMA device: -1/ENODEV", NULL, DEV,
	  bind_122, NULL),
	C("BIND-122b", "BIND", 122, "127.0.0.1 (the loopback netdev): 0 and no device, like a "
	  "wildcard (measured on Linux 6.1 + rxe)", NULL, DEV, bind_122b, NULL),
	C("BIND-122c", "BIND", 122, "RDMA_PS_IPOIB id, IP of a RoCE netdev: -1/EINVAL, verbs NULL "
	  "(cma_acquire_dev_by_src_ip wants an IPoIB netdev; measured on Linux 6.1 + rxe)",
	  "rdma_create_id.3 lists RDMA_PS_IPOIB without saying it needs an IPoIB netdev", DEV,
	  bind_122c, NULL),
	C("BIND-123", "BIND", 123, "second bind on the same id: -1/EINVAL", NULL, DEV, bind_123,
	  NULL),
	C("BIND-124", "BIND", 124, "two ids, same specific IP:port, no REUSEADDR: second "
	  "-1/EADDRINUSE", NULL, DEV, bind_two, &bind_124),
	C("BIND-125", "BIND", 125, "two ids, 0.0.0.0:port: second -1/EADDRNOTAVAIL",
	  "one would expect EADDRINUSE (§16 item 5)", DEV, bind_two, &bind_125),
	C("BIND-126", "BIND", 126, "REUSEADDR=1 on both before bind: both succeed", NULL, DEV,
	  bind_two, &bind_126),
	C("BIND-127", "BIND", 127, "port 1000 without CAP_NET_BIND_SERVICE: -1/EACCES", NULL, DEV,
	  bind_err, &bind_127),
	C("BIND-128", "BIND", 128, "fe80:: link-local with scope_id 0: -1/EINVAL", NULL, DEV,
	  bind_err, &bind_128),
	C("BIND-129", "BIND", 129, "same port in RDMA_PS_TCP and RDMA_PS_UDP ids: both succeed",
	  NULL, DEV, bind_two, &bind_129),
	C("RADDR-130", "RADDR", 130, "rdma_resolve_addr(id, NULL, NULL, 2000): -1/EINVAL", NULL,
	  PRE_NONE, raddr_130, NULL),
	C("RADDR-131", "RADDR", 131, "src AF_UNIX: -1/EINVAL", NULL, PRE_NONE, raddr_131, NULL),
	C("RADDR-132", "RADDR", 132, "dst AF_IB when unsupported: -1/EINVAL", NULL, DEV, raddr_132,
	  NULL),
	C("RADDR-137", "RADDR", 137, "src AF_INET6, dst AF_INET: -1/EINVAL", NULL, DEV, raddr_137,
	  NULL),
	C("RROUTE-140", "RROUTE", 140, "rdma_resolve_route before address resolution: -1/EINVAL "
	  "(the real library crashes)", NULL, DEV | PRE_EMU_ONLY, st_row, &rroute_140),
	C("LISTEN-145", "LISTEN", 145, "after bind: 0; no event; src port unchanged", NULL, DEV,
	  listen_145, NULL),
	C("LISTEN-146", "LISTEN", 146, "on an IDLE id: 0, auto-bound to 0.0.0.0 with a port",
	  "rdma_listen.3: the id must be bound first (§16 item 4)", DEV, listen_146, NULL),
	C("LISTEN-147", "LISTEN", 147, "twice: -1/EINVAL", NULL, DEV, listen_147, NULL),
	C("LISTEN-148", "LISTEN", 148, "backlog 0 or -1: accepted", NULL, DEV, listen_148, NULL),
	C("CONN-150", "CONN", 150, "ps TCP, no QP, NULL conn_param: -1/EINVAL (library)", NULL,
	  PRE_NONE, st_row, &conn_150),
	C("CONN-151", "CONN", 151, "responder_resources = device max + 1: -1/EINVAL", NULL, DEV,
	  st_row, &conn_151),
	C("CONN-152", "CONN", 152, "before route resolution: -1/EINVAL", NULL, DEV, st_row,
	  &conn_152),
	C("REQ-170", "REQ", 170, "rdma_get_request on an async listener: -1/EINVAL", NULL,
	  PRE_NONE, st_row, &req_170),
	C("ACC-174", "ACC", 174, "rdma_accept without QP and NULL param: -1/EINVAL (the real "
	  "library crashes)", NULL, DEV | PRE_EMU_ONLY, st_row, &acc_174),
	C("REJ-184", "REJ", 184, "reject on an id that is not a request: -1/EINVAL", NULL, DEV,
	  st_row, &rej_184),
	C("DISC-185", "DISC", 185, "id never bound to a device: -1/EINVAL (library)", NULL,
	  PRE_NONE, st_row, &disc_185),
	C("DISC-186", "DISC", 186, "bound, not connected: -1/EINVAL", NULL, DEV, st_row,
	  &disc_186),
	C("NOTIFY-192", "NOTIFY", 192, "on an id without device: -1/EINVAL", NULL, DEV, st_row,
	  &notify_192),
	C("EST-193", "EST", 193, "rdma_establish on an id with QP: -1/EINVAL", NULL, PRE_NONE,
	  st_row, &est_193),
	C("OPT-199", "OPT", 199, "no library validation: fd -1 gives -1/EBADF for any level/"
	  "optname", NULL, PRE_NONE, opt_199, NULL),
	C("OPT-200a", "OPT", 200, "TOS optlen 1: 0", NULL, DEV, opt_row, &opt_200a),
	C("OPT-200b", "OPT", 200, "TOS optlen 4: -1/EINVAL", NULL, DEV, opt_row, &opt_200b),
	C("OPT-201a", "OPT", 201, "REUSEADDR optlen 4: 0", NULL, DEV, opt_row, &opt_201a),
	C("OPT-201b", "OPT", 201, "REUSEADDR optlen 1: -1/EINVAL", NULL, DEV, opt_row, &opt_201b),
	C("OPT-202", "OPT", 202, "REUSEADDR = 0 after bind: -1/EINVAL", NULL, DEV, opt_202, NULL),
	C("OPT-203", "OPT", 203, "AFONLY after listen: -1/EINVAL", NULL, DEV, opt_row, &opt_203),
	C("OPT-204", "OPT", 204, "ACK_TIMEOUT on an RDMA_PS_UDP id: -1/EINVAL",
	  "rdma_set_option.3 does not say (§16 item 20)", DEV, opt_row, &opt_204),
	C("OPT-205a", "OPT", 205, "level 0 optname 9: -1/ENOSYS", NULL, DEV, opt_row, &opt_205a),
	C("OPT-205b", "OPT", 205, "level 7: -1/ENOSYS", NULL, DEV, opt_row, &opt_205b),
	C("OPT-206", "OPT", 206, "IB_PATH optlen 71: -1/EINVAL", NULL, DEV, opt_row, &opt_206),
	C("OPT-207", "OPT", 207, "IB_PATH 72 B with flags 0x1 only: -1/EINVAL", NULL, DEV, opt_row,
	  &opt_207),
	C("OPT-208", "OPT", 208, "IB_PATH on an IDLE id: -1/EINVAL", NULL, DEV, opt_row, &opt_208),
	C("MC-214a", "MC", 214, "join_multicast_ex comp_mask 4: -1/ENOTSUP", NULL, PRE_NONE,
	  mc_row, &mc_214a),
	C("MC-214b", "MC", 214, "join_multicast_ex comp_mask 0xff: -1/ENOTSUP", NULL, PRE_NONE,
	  mc_row, &mc_214b),
	C("MC-215a", "MC", 215, "comp_mask 0: -1/EINVAL", NULL, PRE_NONE, mc_row, &mc_215a),
	C("MC-215b", "MC", 215, "comp_mask ADDRESS only: -1/EINVAL", NULL, PRE_NONE, mc_row,
	  &mc_215b),
	C("MC-215c", "MC", 215, "comp_mask JOIN_FLAGS only: -1/EINVAL", NULL, PRE_NONE, mc_row,
	  &mc_215c),
	C("MC-216", "MC", 216, "join_flags 2: -1/EINVAL", NULL, PRE_NONE, mc_row, &mc_216),
	C("MC-217a", "MC", 217, "_ex addr NULL: -1/EINVAL", NULL, PRE_NONE, mc_row, &mc_217a),
	C("MC-217b", "MC", 217, "_ex addr AF_UNIX: -1/EINVAL", NULL, PRE_NONE, mc_row, &mc_217b),
	C("MC-217c", "MC", 217, "join_multicast(id, NULL): -1/EINVAL", NULL, PRE_NONE, mc_row,
	  &mc_217c),
	C("MC-218", "MC", 218, "leave_multicast(id, NULL): -1/EINVAL", NULL, PRE_NONE, mc_row,
	  &mc_218),
	C("MC-219", "MC", 219, "leave an address never joined: -1/EADDRNOTAVAIL",
	  "undocumented (§16 item 16)", PRE_NONE, mc_row, &mc_219),
	C("MC-220", "MC", 220, "join on an IDLE id: -1/EINVAL", NULL, DEV, st_row, &mc_220),
	C("ECE-245", "ECE", 245, "rdma_set_local_ece: id NULL, ece NULL, vendor 0, comp_mask 1, "
	  "id with QP: -1/EINVAL each", NULL, PRE_NONE, ece_245, NULL),
	C("ECE-246", "ECE", 246, "rdma_set_local_ece valid (vendor 0x2c9): 0", NULL, PRE_NONE,
	  ece_246, NULL),
	C("ECE-247", "ECE", 247, "rdma_get_remote_ece: id NULL, ece NULL, id with QP: -1/EINVAL",
	  NULL, PRE_NONE, ece_247, NULL),
	C("ECE-248", "ECE", 248, "rdma_get_remote_ece on a fresh id: 0 and zeros", NULL, PRE_NONE,
	  ece_248, NULL),
};

const struct conf_area conf_area_cmbind = { "CMBIND", cases, sizeof cases / sizeof cases[0] };
