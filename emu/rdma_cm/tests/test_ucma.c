/* Unit tests of the emulated kernel rdma_cm (emu/rdma_cm/ucma.c, emu/rdma_cm/cma_id.c, emu/rdma_cm/cma_bind.c),
 * driven through its command interface exactly as librdmacm drives it: struct rdma_ucm_* after
 * a struct rdma_ucm_cmd_hdr, written with emu_ucma_write.
 *
 * Besides the kernel's rules (bind, listen, options, states, events, migrate), the tests plug
 * a stand-in address-resolution module into the hook point (emu_cma_set_addr_ops) to show the
 * seam the neighbour module will use: its outcome arrives as an event at a virtual time. */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include <poll.h>
#include <arpa/inet.h>
#include <linux/capability.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <cmocka.h>

#include "emu/sim/engine.h"
#include "emu/sim/process.h"
#include "emu/rdma_cm/cma_conn.h"
#include "emu/rdma_cm/ucma.h"
#include "rdmaemu/ctl.h"

/* alpha: a RoCE device on d0 (IPv4, global IPv6, link-local), a plain netdev e1 without RDMA
 * device; the same seed twice gives the same ephemeral ports. */
static const char fabric_text[] =
	"seed 11\n"
	"resolver files\n"
	"host alpha\n"
	"  device rxe0 link=eth\n"
	"  netdev d0 mac=02:00:00:00:00:01 mtu=1500 rdma=rxe0/1\n"
	"    addr 192.0.2.1/28\n"
	"    addr 2001:db8::1/64\n"
	"  netdev e1 mac=02:00:00:00:00:02 mtu=1500\n"
	"    addr 198.51.100.1/24\n"
	"link alpha/rxe0/1 none\n";

static int setup(void **state)
{
	(void)state;
	emu_process_reset();
	/* the kernel core alone: no network module (they install themselves at load) */
	emu_cma_set_addr_ops(NULL);
	emu_cma_set_route_ops(NULL);
	assert_int_equal(rdmaemu_ctl_attach_text(fabric_text, "alpha"), 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	emu_cma_set_addr_ops(NULL);
	emu_process_reset();
	return 0;
}

/* ---- command helpers ---- */

static int ucmd(int fd, uint32_t op, const void *body, size_t len, size_t out)
{
	uint8_t buf[1024];
	struct rdma_ucm_cmd_hdr h = { .cmd = op, .in = (uint16_t)len, .out = (uint16_t)out };
	ssize_t r;

	memcpy(buf, &h, sizeof h);
	memcpy(buf + sizeof h, body, len);
	r = emu_ucma_write(fd, buf, sizeof h + len);
	if (r < 0)
		return (int)r;
	assert_int_equal(r, (ssize_t)(sizeof h + len));
	return 0;
}

static int create_id(int fd, uint16_t ps, uint8_t qp_type, uint32_t *handle)
{
	struct rdma_ucm_create_id c = { .uid = 0x1000, .ps = ps, .qp_type = qp_type };
	struct rdma_ucm_create_id_resp r = { 0 };
	int ret;

	c.response = (uintptr_t)&r;
	ret = ucmd(fd, RDMA_USER_CM_CMD_CREATE_ID, &c, sizeof c, sizeof r);
	*handle = r.id;
	return ret;
}

static uint32_t new_id(int fd, uint16_t ps)
{
	uint32_t h;

	assert_int_equal(create_id(fd, ps, 0, &h), 0);
	return h;
}

static int destroy_id(int fd, uint32_t h, uint32_t *reported)
{
	struct rdma_ucm_destroy_id c = { .id = h };
	struct rdma_ucm_destroy_id_resp r = { 0 };
	int ret;

	c.response = (uintptr_t)&r;
	ret = ucmd(fd, RDMA_USER_CM_CMD_DESTROY_ID, &c, sizeof c, sizeof r);
	if (reported)
		*reported = r.events_reported;
	return ret;
}

static void sa4(struct sockaddr_storage *ss, const char *a, uint16_t port)
{
	struct sockaddr_in *s = (struct sockaddr_in *)ss;

	memset(ss, 0, sizeof *ss);
	s->sin_family = AF_INET;
	s->sin_port = htons(port);
	assert_int_equal(inet_pton(AF_INET, a, &s->sin_addr), 1);
}

static void sa6(struct sockaddr_storage *ss, const char *a, uint16_t port, uint32_t scope)
{
	struct sockaddr_in6 *s = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof *ss);
	s->sin6_family = AF_INET6;
	s->sin6_port = htons(port);
	s->sin6_scope_id = scope;
	assert_int_equal(inet_pton(AF_INET6, a, &s->sin6_addr), 1);
}

static int bind_ss(int fd, uint32_t h, const struct sockaddr_storage *ss)
{
	struct rdma_ucm_bind c = { .id = h };

	c.addr_size = (uint16_t)emu_cma_addr_size((const struct sockaddr *)ss);
	memcpy(&c.addr, ss, sizeof c.addr);
	return ucmd(fd, RDMA_USER_CM_CMD_BIND, &c, sizeof c, 0);
}

static int set_int_opt(int fd, uint32_t h, uint32_t name, int v)
{
	struct rdma_ucm_set_option c = { .id = h, .level = RDMA_OPTION_ID, .optname = name,
					 .optlen = sizeof v };

	c.optval = (uintptr_t)&v;
	return ucmd(fd, RDMA_USER_CM_CMD_SET_OPTION, &c, sizeof c, 0);
}

static int listen_id(int fd, uint32_t h, uint32_t backlog)
{
	struct rdma_ucm_listen c = { .id = h, .backlog = backlog };

	return ucmd(fd, RDMA_USER_CM_CMD_LISTEN, &c, sizeof c, 0);
}

static int query_addr(int fd, uint32_t h, struct rdma_ucm_query_addr_resp *r)
{
	struct rdma_ucm_query c = { .id = h, .option = RDMA_USER_CM_QUERY_ADDR };

	c.response = (uintptr_t)r;
	return ucmd(fd, RDMA_USER_CM_CMD_QUERY, &c, sizeof c, sizeof *r);
}

static int get_event(int fd, struct rdma_ucm_event_resp *r)
{
	struct rdma_ucm_get_event c;

	c.response = (uintptr_t)r;
	return ucmd(fd, RDMA_USER_CM_CMD_GET_EVENT, &c, sizeof c, sizeof *r);
}

static int write_event(int fd, uint32_t h, uint32_t event, uint32_t status, uint64_t arg)
{
	struct emu_ucma_write_cm_event c = { .id = h, .event = event, .status = status,
					     .arg = arg };

	/* the struct includes the header: send only the body */
	return ucmd(fd, EMU_UCMA_CMD_WRITE_CM_EVENT, (const char *)&c + 8, sizeof c - 8, 0);
}

static bool readable(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 0) == 1;
}

static enum emu_cma_state state_of(uint32_t h)
{
	struct emu_engine *e = emu_engine_get();
	enum emu_cma_state s;

	emu_engine_lock(e);
	s = emu_cma_id_lookup(h)->state;
	emu_engine_unlock(e);
	return s;
}

/* ---- tests ---- */

static void test_state_names(void **state)
{
	static const char *const want[] = { "IDLE", "ADDR_QUERY", "ADDR_RESOLVED", "ROUTE_QUERY",
					    "ROUTE_RESOLVED", "CONNECT", "DISCONNECT",
					    "ADDR_BOUND", "LISTEN", "DEVICE_REMOVAL",
					    "DESTROYING", "ADDRINFO_QUERY", "ADDRINFO_RESOLVED" };

	(void)state;
	for (unsigned i = 0; i < EMU_CMA_NSTATES; i++)
		assert_string_equal(emu_cma_state_name((enum emu_cma_state)i), want[i]);
	assert_string_equal(emu_cma_state_name(EMU_CMA_NSTATES), "?");
}

static void test_commands(void **state)
{
	int fd = emu_ucma_open(), fd2 = emu_ucma_open(), p[2];
	uint32_t h, h2, h3, rep;
	uint8_t hdr[8] = { 0 };

	(void)state;
	assert_true(fd >= 0 && fd2 >= 0);
	/* port spaces: TCP RC, UDP/IPoIB UD, IB keeps the asked type, others EINVAL */
	assert_int_equal(create_id(fd, EMU_CMA_PS_TCP, 4, &h), 0);
	assert_int_equal(create_id(fd, EMU_CMA_PS_IB, 4, &h2), 0);
	assert_int_equal(create_id(fd, 0x1234, 0, &h3), -EINVAL);
	{
		struct emu_engine *e = emu_engine_get();

		emu_engine_lock(e);
		assert_int_equal(emu_cma_id_lookup(h)->qp_type, 2);
		assert_int_equal(emu_cma_id_lookup(h2)->qp_type, 4);
		emu_engine_unlock(e);
	}
	/* handles: the lowest free one is reused */
	assert_int_equal(h, 0);
	assert_int_equal(h2, 1);
	assert_int_equal(destroy_id(fd, h, &rep), 0);
	assert_int_equal(rep, 0);
	assert_int_equal(create_id(fd, EMU_CMA_PS_UDP, 0, &h), 0);
	assert_int_equal(h, 0);
	/* unknown handle ENOENT, another file's EINVAL */
	assert_int_equal(destroy_id(fd, 77, NULL), -ENOENT);
	assert_int_equal(destroy_id(fd2, h, NULL), -EINVAL);
	/* the header: unknown command EINVAL, no handler ENOSYS, short write EINVAL */
	hdr[0] = 25;
	assert_int_equal(emu_ucma_write(fd, hdr, sizeof hdr), -EINVAL);
	hdr[0] = RDMA_USER_CM_CMD_GET_OPTION;
	assert_int_equal(emu_ucma_write(fd, hdr, sizeof hdr), -ENOSYS);
	assert_int_equal(emu_ucma_write(fd, hdr, 4), -EINVAL);
	hdr[4] = 16; /* in larger than the buffer */
	assert_int_equal(emu_ucma_write(fd, hdr, sizeof hdr), -EINVAL);
	/* not a file: EBADF for a closed fd, EINVAL for an fd of something else */
	assert_int_equal(emu_ucma_write(-1, hdr, sizeof hdr), -EBADF);
	assert_int_equal(pipe(p), 0);
	hdr[4] = 0;
	assert_int_equal(emu_ucma_write(p[0], hdr, sizeof hdr), -EINVAL);
	close(p[0]);
	close(p[1]);
	assert_false(emu_ucma_is_file(p[0]));
	assert_true(emu_ucma_is_file(fd));
	assert_int_equal(emu_ucma_close(fd), 0);
	assert_int_equal(emu_ucma_close(fd2), 0);
}

/* One bind scenario: id a binds first (must succeed), then id b; b's result. */
struct bind_case {
	const char *name;
	uint16_t ps_a, ps_b;
	const char *addr_a, *addr_b; /* IPv4 or IPv6 text; "" wildcard of the other's family */
	uint16_t port_a, port_b;
	int reuse_a, reuse_b;
	int afonly_a, afonly_b;      /* -1: not set */
	int want;
};

static void bind_addr(struct sockaddr_storage *ss, const char *a, uint16_t port)
{
	if (strchr(a, ':'))
		sa6(ss, a, port, 0);
	else
		sa4(ss, a, port);
}

static void test_bind_rules(void **state)
{
	static const struct bind_case cases[] = {
		{ "same specific", EMU_CMA_PS_TCP, EMU_CMA_PS_TCP, "192.0.2.1", "192.0.2.1", 5000,
		  5000, 0, 0, -1, -1, -EADDRINUSE },
		{ "same wildcard", EMU_CMA_PS_TCP, EMU_CMA_PS_TCP, "0.0.0.0", "0.0.0.0", 5000,
		  5000, 0, 0, -1, -1, -EADDRNOTAVAIL },
		{ "specific then wildcard", EMU_CMA_PS_TCP, EMU_CMA_PS_TCP, "192.0.2.1",
		  "0.0.0.0", 5000, 5000, 0, 0, -1, -1, -EADDRNOTAVAIL },
		{ "reuse both", EMU_CMA_PS_TCP, EMU_CMA_PS_TCP, "192.0.2.1", "192.0.2.1", 5000,
		  5000, 1, 1, -1, -1, 0 },
		{ "reuse one side", EMU_CMA_PS_TCP, EMU_CMA_PS_TCP, "192.0.2.1", "192.0.2.1",
		  5000, 5000, 0, 1, -1, -1, -EADDRINUSE },
		{ "other port space", EMU_CMA_PS_TCP, EMU_CMA_PS_UDP, "192.0.2.1", "192.0.2.1",
		  5000, 5000, 0, 0, -1, -1, 0 },
		{ "IPoIB and IB spaces", EMU_CMA_PS_IPOIB, EMU_CMA_PS_IB, "0.0.0.0", "0.0.0.0",
		  5000, 5000, 0, 0, -1, -1, 0 },
		{ "v6 wildcard then v4 wildcard", EMU_CMA_PS_TCP, EMU_CMA_PS_TCP, "::", "0.0.0.0",
		  5000, 5000, 0, 0, -1, -1, -EADDRNOTAVAIL },
		{ "v6 wildcard AFONLY, v4 wildcard", EMU_CMA_PS_TCP, EMU_CMA_PS_TCP, "::",
		  "0.0.0.0", 5000, 5000, 0, 0, 1, -1, 0 },
		{ "v4 specific, v6 specific", EMU_CMA_PS_TCP, EMU_CMA_PS_TCP, "192.0.2.1",
		  "2001:db8::1", 5000, 5000, 0, 0, -1, -1, 0 },
		{ "different ports", EMU_CMA_PS_TCP, EMU_CMA_PS_TCP, "0.0.0.0", "0.0.0.0", 5000,
		  5001, 0, 0, -1, -1, 0 },
		{ "not local", EMU_CMA_PS_TCP, EMU_CMA_PS_TCP, "0.0.0.0", "203.0.113.1", 5000,
		  5000, 0, 0, -1, -1, -EADDRNOTAVAIL },
		{ "loopback: like a wildcard", EMU_CMA_PS_TCP, EMU_CMA_PS_TCP, "0.0.0.0",
		  "127.0.0.1", 5000, 5001, 0, 0, -1, -1, 0 },
		{ "loopback v6", EMU_CMA_PS_TCP, EMU_CMA_PS_TCP, "0.0.0.0", "::1", 5000, 5001, 0,
		  0, -1, -1, 0 },
		{ "netdev without RDMA device", EMU_CMA_PS_TCP, EMU_CMA_PS_TCP, "0.0.0.0",
		  "198.51.100.1", 5000, 5001, 0, 0, -1, -1, -ENODEV },
		{ "link-local without scope", EMU_CMA_PS_TCP, EMU_CMA_PS_TCP, "0.0.0.0",
		  "fe80::1", 5000, 5001, 0, 0, -1, -1, -EINVAL },
	};

	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const struct bind_case *c = &cases[i];
		int fd = emu_ucma_open();
		uint32_t a = new_id(fd, c->ps_a), b = new_id(fd, c->ps_b);
		struct sockaddr_storage sa, sb;

		print_message("bind: %s\n", c->name);
		bind_addr(&sa, c->addr_a, c->port_a);
		bind_addr(&sb, c->addr_b, c->port_b);
		if (c->reuse_a)
			assert_int_equal(set_int_opt(fd, a, RDMA_OPTION_ID_REUSEADDR, 1), 0);
		if (c->reuse_b)
			assert_int_equal(set_int_opt(fd, b, RDMA_OPTION_ID_REUSEADDR, 1), 0);
		if (c->afonly_a >= 0)
			assert_int_equal(set_int_opt(fd, a, RDMA_OPTION_ID_AFONLY, c->afonly_a), 0);
		if (c->afonly_b >= 0)
			assert_int_equal(set_int_opt(fd, b, RDMA_OPTION_ID_AFONLY, c->afonly_b), 0);
		assert_int_equal(bind_ss(fd, a, &sa), 0);
		assert_int_equal(bind_ss(fd, b, &sb), c->want);
		/* a failed bind leaves the id IDLE, a good one ADDR_BOUND */
		assert_int_equal(state_of(b), c->want ? EMU_CMA_IDLE : EMU_CMA_ADDR_BOUND);
		assert_int_equal(emu_ucma_close(fd), 0);
	}
}

/* Ports below 1024 need CAP_NET_BIND_SERVICE of the calling process, as capable() judges. */
static void test_privileged_port(void **state)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];
	int fd = emu_ucma_open();
	uint32_t a = new_id(fd, EMU_CMA_PS_TCP), b = new_id(fd, EMU_CMA_PS_TCP);
	struct sockaddr_storage ss;
	pid_t pid;
	int st;

	(void)state;
	assert_int_equal(syscall(SYS_capget, &h, d), 0);
	sa4(&ss, "0.0.0.0", 1023);
	if (d[0].effective & (1u << CAP_NET_BIND_SERVICE))
		assert_int_equal(bind_ss(fd, a, &ss), 0);
	else
		assert_int_equal(bind_ss(fd, a, &ss), -EACCES);
	/* without the capability (dropped in a child): EACCES */
	pid = fork();
	if (pid == 0) {
		d[0].effective &= ~(1u << CAP_NET_BIND_SERVICE);
		if (syscall(SYS_capset, &h, d))
			_exit(2);
		sa4(&ss, "0.0.0.0", 1000);
		_exit(bind_ss(fd, b, &ss) == -EACCES ? 0 : 1);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	emu_ucma_close(fd);
}

static void test_link_local_scope(void **state)
{
	int fd = emu_ucma_open();
	uint32_t a = new_id(fd, EMU_CMA_PS_TCP), b = new_id(fd, EMU_CMA_PS_TCP);
	struct sockaddr_storage ss;
	uint8_t ll[16];
	char text[64];

	(void)state;
	/* d0's link-local address from its MAC (EUI-64), as Linux derives it */
	sa6(&ss, "fe80::ff:fe00:1", 0, 0);
	memcpy(ll, &((struct sockaddr_in6 *)&ss)->sin6_addr, 16);
	assert_non_null(inet_ntop(AF_INET6, ll, text, sizeof text));
	sa6(&ss, text, 0, (uint32_t)emu_cma_ifindex(1)); /* e1's scope: not there */
	assert_int_equal(bind_ss(fd, a, &ss), -EADDRNOTAVAIL);
	sa6(&ss, text, 0, (uint32_t)emu_cma_ifindex(0)); /* d0 */
	assert_int_equal(bind_ss(fd, b, &ss), 0);
	emu_ucma_close(fd);
}

static void test_ephemeral_ports(void **state)
{
	uint16_t first[3], again[3];

	(void)state;
	for (int round = 0; round < 2; round++) {
		int fd;

		if (round) {
			emu_process_reset();
			assert_int_equal(rdmaemu_ctl_attach_text(fabric_text, "alpha"), 0);
		}
		fd = emu_ucma_open();
		for (int i = 0; i < 3; i++) {
			uint32_t h = new_id(fd, EMU_CMA_PS_TCP);
			struct sockaddr_storage ss;
			struct rdma_ucm_query_addr_resp r;
			uint16_t port;

			sa4(&ss, "0.0.0.0", 0);
			assert_int_equal(bind_ss(fd, h, &ss), 0);
			assert_int_equal(query_addr(fd, h, &r), 0);
			port = emu_cma_port((const struct sockaddr *)&r.src_addr);
			assert_in_range(port, EMU_CMA_PORT_LOW, EMU_CMA_PORT_HIGH);
			(round ? again : first)[i] = port;
		}
		emu_ucma_close(fd);
	}
	/* the same seed gives the same ports; three binds, three different ports */
	assert_memory_equal(first, again, sizeof first);
	assert_int_not_equal(first[0], first[1]);
	assert_int_not_equal(first[1], first[2]);
}

static void test_port_released(void **state)
{
	int fd = emu_ucma_open();
	uint32_t a = new_id(fd, EMU_CMA_PS_TCP), b = new_id(fd, EMU_CMA_PS_TCP);
	struct sockaddr_storage ss;

	(void)state;
	sa4(&ss, "192.0.2.1", 6000);
	assert_int_equal(bind_ss(fd, a, &ss), 0);
	assert_int_equal(bind_ss(fd, b, &ss), -EADDRINUSE);
	assert_int_equal(destroy_id(fd, a, NULL), 0);
	assert_int_equal(bind_ss(fd, b, &ss), 0);
	/* closing the file releases its ids' ports too */
	emu_ucma_close(fd);
	fd = emu_ucma_open();
	a = new_id(fd, EMU_CMA_PS_TCP);
	assert_int_equal(bind_ss(fd, a, &ss), 0);
	emu_ucma_close(fd);
}

static void test_bind_query(void **state)
{
	int fd = emu_ucma_open();
	uint32_t a = new_id(fd, EMU_CMA_PS_TCP), w = new_id(fd, EMU_CMA_PS_TCP);
	struct rdma_ucm_query_addr_resp r;
	struct sockaddr_storage ss;
	const struct emu_host *h = emu_process_host();

	(void)state;
	sa4(&ss, "192.0.2.1", 7000);
	assert_int_equal(bind_ss(fd, a, &ss), 0);
	assert_int_equal(query_addr(fd, a, &r), 0);
	assert_int_equal(r.node_guid, h->devices[0].node_guid);
	assert_int_equal(r.port_num, 1);
	assert_int_equal(r.pkey, 0); /* RoCE: measured on rxe */
	assert_int_equal(r.src_size, sizeof(struct sockaddr_in));
	assert_memory_equal(&r.src_addr, &ss, sizeof(struct sockaddr_in));
	assert_int_equal(r.dst_size, sizeof(struct sockaddr_in)); /* family set, address 0 */
	/* a wildcard bind has no device */
	sa4(&ss, "0.0.0.0", 7001);
	assert_int_equal(bind_ss(fd, w, &ss), 0);
	assert_int_equal(query_addr(fd, w, &r), 0);
	assert_int_equal(r.node_guid, 0);
	assert_int_equal(r.port_num, 0);
	/* binding twice: EINVAL, and the id keeps its first address */
	assert_int_equal(bind_ss(fd, a, &ss), -EINVAL);
	assert_int_equal(state_of(a), EMU_CMA_ADDR_BOUND);
	emu_ucma_close(fd);
}

static void test_listen(void **state)
{
	int fd = emu_ucma_open();
	uint32_t a = new_id(fd, EMU_CMA_PS_TCP), b = new_id(fd, EMU_CMA_PS_TCP),
		 c = new_id(fd, EMU_CMA_PS_TCP);
	struct rdma_ucm_query_addr_resp r;
	struct sockaddr_storage ss, dst;
	struct emu_engine *e = emu_engine_get();

	(void)state;
	/* IDLE: auto-bound to 0.0.0.0 and a port */
	assert_int_equal(listen_id(fd, a, 0), 0);
	assert_int_equal(state_of(a), EMU_CMA_LISTEN);
	assert_int_equal(query_addr(fd, a, &r), 0);
	assert_int_equal(((struct sockaddr_in *)&r.src_addr)->sin_family, AF_INET);
	assert_int_equal(((struct sockaddr_in *)&r.src_addr)->sin_addr.s_addr, 0);
	assert_int_not_equal(emu_cma_port((const struct sockaddr *)&r.src_addr), 0);
	assert_int_equal(listen_id(fd, a, 0), -EINVAL);
	/* backlog <= 0 or too large: max_backlog */
	emu_engine_lock(e);
	assert_int_equal(emu_cma_id_lookup(a)->backlog, EMU_CMA_MAX_BACKLOG);
	emu_engine_unlock(e);
	/* a REUSEADDR id may share a bound port but not listen on it */
	sa4(&ss, "192.0.2.1", 8000);
	assert_int_equal(set_int_opt(fd, b, RDMA_OPTION_ID_REUSEADDR, 1), 0);
	assert_int_equal(set_int_opt(fd, c, RDMA_OPTION_ID_REUSEADDR, 1), 0);
	assert_int_equal(bind_ss(fd, b, &ss), 0);
	assert_int_equal(bind_ss(fd, c, &ss), 0);
	assert_int_equal(listen_id(fd, b, 5), -EADDRINUSE);
	assert_int_equal(state_of(b), EMU_CMA_ADDR_BOUND);
	/* once the other one is gone it may */
	assert_int_equal(destroy_id(fd, c, NULL), 0);
	assert_int_equal(listen_id(fd, b, 5), 0);
	/* a listener then refuses REUSEADDR */
	assert_int_equal(set_int_opt(fd, b, RDMA_OPTION_ID_REUSEADDR, 1), -EINVAL);
	/* the listener a request to 192.0.2.1:8000 finds: the specific one */
	sa4(&dst, "192.0.2.1", 8000);
	emu_engine_lock(e);
	assert_ptr_equal(emu_cma_find_listener(emu_process_host(), EMU_CMA_PS_TCP, 8000,
					       (const struct sockaddr *)&dst),
			 emu_cma_id_lookup(b));
	assert_null(emu_cma_find_listener(emu_process_host(), EMU_CMA_PS_UDP, 8000,
					  (const struct sockaddr *)&dst));
	emu_engine_unlock(e);
	emu_ucma_close(fd);
}

static void test_events(void **state)
{
	int fd = emu_ucma_open(), fd2 = emu_ucma_open();
	uint32_t a = new_id(fd, EMU_CMA_PS_TCP), b = new_id(fd, EMU_CMA_PS_TCP), rep;
	struct rdma_ucm_event_resp r;
	uint64_t arg;

	(void)state;
	assert_false(readable(fd));
	/* O_NONBLOCK: EAGAIN on an empty queue */
	assert_int_equal(fcntl(fd, F_SETFL, O_NONBLOCK), 0);
	assert_int_equal(get_event(fd, &r), -EAGAIN);
	/* WRITE_CM_EVENT: USER and INTERNAL only */
	assert_int_equal(write_event(fd, a, EMU_CMA_EVENT_ESTABLISHED, 0, 0), -EINVAL);
	assert_int_equal(write_event(fd, a, EMU_CMA_EVENT_USER, 5, 0x1122334455667788ull), 0);
	assert_int_equal(write_event(fd, b, EMU_CMA_EVENT_USER, 6, 0), 0);
	assert_true(readable(fd));
	assert_int_equal(get_event(fd, &r), 0);
	assert_int_equal(r.uid, 0x1000);
	assert_int_equal(r.id, a);
	assert_int_equal(r.event, EMU_CMA_EVENT_USER);
	assert_int_equal(r.status, 5);
	memcpy(&arg, &r.param, sizeof arg);
	assert_int_equal(arg, 0x1122334455667788ull);
	assert_true(readable(fd)); /* b's is still there */
	/* b's unread event goes with b; a reported one */
	assert_int_equal(destroy_id(fd, b, &rep), 0);
	assert_int_equal(rep, 0);
	assert_false(readable(fd));
	assert_int_equal(destroy_id(fd, a, &rep), 0);
	assert_int_equal(rep, 1);
	/* a blocking read with nothing that could ever come fails fast */
	a = new_id(fd2, EMU_CMA_PS_TCP);
	assert_int_equal(get_event(fd2, &r), -EDEADLK);
	emu_ucma_close(fd);
	emu_ucma_close(fd2);
}

/* GET_EVENT of an event queued with response param: handle, event and status set, into a
 * buffer of out bytes at offset skew of a 0xa5-filled one. */
static void event_round_trip(int fd, uint32_t h, const struct rdma_ucm_event_resp *param,
			     size_t out, size_t skew)
{
	struct emu_engine *e = emu_engine_get();
	struct rdma_ucm_event_resp want;
	uint8_t buf[sizeof want + 16], tail[sizeof buf];
	struct rdma_ucm_get_event c;
	const size_t wrote = out < sizeof want ? out : sizeof want;

	emu_engine_lock(e);
	assert_int_equal(emu_cma_event(emu_cma_id_lookup(h), NULL, EMU_CMA_EVENT_CONNECT_RESPONSE,
				       -7, param), 0);
	emu_engine_unlock(e);
	if (param)
		want = *param;
	else
		memset(&want, 0, sizeof want);
	want.uid = 0x1000;
	want.id = h;
	want.event = EMU_CMA_EVENT_CONNECT_RESPONSE;
	want.status = (uint32_t)-7;
	assert_true(skew + out <= sizeof buf);
	memset(buf, 0xa5, sizeof buf);
	memset(tail, 0xa5, sizeof tail);
	c.response = (uintptr_t)(buf + skew);
	assert_int_equal(ucmd(fd, RDMA_USER_CM_CMD_GET_EVENT, &c, sizeof c, out), 0);
	assert_memory_equal(buf + skew, &want, wrote);
	/* nothing before or after the response (at most the size the caller gave) */
	assert_memory_equal(buf, tail, skew);
	assert_memory_equal(buf + skew + wrote, tail, sizeof buf - skew - wrote);
}

/* A queued event keeps its response without the zeros (emu/rdma_cm/ucma.h): every byte of the
 * response must come back as it was given, for conn and UD private data of every length,
 * the conn flags and ECE in the tail, and through both copies (whole and aligned: straight
 * into the caller's buffer; short or unaligned: through a local response). */
static void test_event_records(void **state)
{
	int fd = emu_ucma_open();
	uint32_t h = new_id(fd, EMU_CMA_PS_TCP);
	struct rdma_ucm_event_resp p;
	static const size_t lens[] = { 0, 1, 7, 56, 148, 196, 224, 255 };
	const size_t min = EMU_UCMA_GET_EVENT_MIN_OUT, whole = sizeof p;

	(void)state;
	/* no param, and an all-zero one: header only */
	event_round_trip(fd, h, NULL, whole, 0);
	memset(&p, 0, sizeof p);
	event_round_trip(fd, h, &p, whole, 0);
	for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
		/* conn: qp_num, qkey, private data of that length (no zero byte in it), the
		 * flags after it and the ECE */
		memset(&p, 0, sizeof p);
		p.param.conn.qp_num = 0x123456;
		p.param.conn.qkey = 0x11223344;
		for (size_t k = 0; k < lens[i]; k++)
			p.param.conn.private_data[k] = (uint8_t)(k * 7 + 1) | 1;
		p.param.conn.private_data_len = (uint8_t)lens[i];
		p.param.conn.responder_resources = 3;
		p.param.conn.rnr_retry_count = 7;
		p.param.conn.valid = 1;
		p.ece.vendor_id = 0x15b3;
		p.ece.attr_mod = 0xabcd;
		event_round_trip(fd, h, &p, whole, 0);
		event_round_trip(fd, h, &p, whole, 4);
		event_round_trip(fd, h, &p, min, 0);
		/* UD: the address handle, private data of that length (up to where the union
		 * ends, the rest is in the tail), its length */
		memset(&p, 0, sizeof p);
		p.param.ud.qp_num = 0xffffff;
		p.param.ud.qkey = 0x80010000;
		p.param.ud.ah_attr.dlid = 0x1234;
		p.param.ud.ah_attr.grh.dgid[15] = 9;
		p.param.ud.ah_attr.is_global = 1;
		for (size_t k = 0; k < lens[i] && k < sizeof p.param.ud.private_data; k++)
			p.param.ud.private_data[k] = (uint8_t)(k * 5 + 3) | 1;
		p.param.ud.private_data_len = (uint8_t)lens[i];
		event_round_trip(fd, h, &p, whole, 0);
		event_round_trip(fd, h, &p, min, 8);
	}
	/* a buffer larger than the response and unaligned: the response's bytes only */
	event_round_trip(fd, h, &p, whole + 8, 3);
	/* every event was read: none left */
	assert_int_equal(fcntl(fd, F_SETFL, O_NONBLOCK), 0);
	assert_int_equal(get_event(fd, &p), -EAGAIN);
	emu_ucma_close(fd);
}

static void test_migrate(void **state)
{
	int fd = emu_ucma_open(), fd2 = emu_ucma_open(), p[2];
	uint32_t a = new_id(fd, EMU_CMA_PS_TCP), b = new_id(fd, EMU_CMA_PS_TCP);
	struct rdma_ucm_migrate_id m = { .id = a, .fd = (uint32_t)fd };
	struct rdma_ucm_migrate_resp mr = { 0 };
	struct rdma_ucm_event_resp r;

	(void)state;
	m.response = (uintptr_t)&mr;
	assert_int_equal(write_event(fd, a, EMU_CMA_EVENT_USER, 1, 0), 0);
	assert_int_equal(write_event(fd, b, EMU_CMA_EVENT_USER, 2, 0), 0);
	assert_int_equal(write_event(fd, a, EMU_CMA_EVENT_USER, 3, 0), 0);
	assert_int_equal(ucmd(fd2, RDMA_USER_CM_CMD_MIGRATE_ID, &m, sizeof m, sizeof mr), 0);
	assert_int_equal(mr.events_reported, 0);
	/* a's two events moved in order, b's stayed */
	assert_int_equal(fcntl(fd, F_SETFL, O_NONBLOCK), 0);
	assert_int_equal(fcntl(fd2, F_SETFL, O_NONBLOCK), 0);
	assert_int_equal(get_event(fd2, &r), 0);
	assert_int_equal(r.status, 1);
	assert_int_equal(get_event(fd2, &r), 0);
	assert_int_equal(r.status, 3);
	assert_int_equal(get_event(fd2, &r), -EAGAIN);
	assert_int_equal(get_event(fd, &r), 0);
	assert_int_equal(r.status, 2);
	/* a now belongs to fd2: fd cannot name it */
	assert_int_equal(destroy_id(fd, a, NULL), -EINVAL);
	/* old fd not open: ENOENT; not an rdma_cm file: EINVAL; id of another file: EINVAL */
	m.fd = 1000;
	assert_int_equal(ucmd(fd, RDMA_USER_CM_CMD_MIGRATE_ID, &m, sizeof m, sizeof mr), -ENOENT);
	assert_int_equal(pipe(p), 0);
	m.fd = (uint32_t)p[0];
	assert_int_equal(ucmd(fd, RDMA_USER_CM_CMD_MIGRATE_ID, &m, sizeof m, sizeof mr), -EINVAL);
	close(p[0]);
	close(p[1]);
	m.fd = (uint32_t)fd;
	assert_int_equal(ucmd(fd2, RDMA_USER_CM_CMD_MIGRATE_ID, &m, sizeof m, sizeof mr), -EINVAL);
	emu_ucma_close(fd);
	emu_ucma_close(fd2);
}

static void test_requests_die_with_listener(void **state)
{
	int fd = emu_ucma_open();
	uint32_t l = new_id(fd, EMU_CMA_PS_TCP), conn1, conn2;
	struct emu_engine *e = emu_engine_get();
	struct rdma_ucm_event_resp r;
	struct emu_cma_id *lid, *c1, *c2;

	(void)state;
	assert_int_equal(listen_id(fd, l, 1), 0);
	/* what the CM module does for an incoming REQ: a conn id, CONNECT_REQUEST on it */
	emu_engine_lock(e);
	lid = emu_cma_id_lookup(l);
	c1 = emu_cma_conn_id_new(lid);
	assert_non_null(c1);
	assert_int_equal(c1->state, EMU_CMA_CONNECT);
	assert_null(emu_cma_conn_id_new(lid)); /* backlog 1 used up: the REQ is dropped */
	emu_cma_event(c1, NULL, EMU_CMA_EVENT_CONNECT_REQUEST, 0, NULL);
	conn1 = c1->handle;
	emu_engine_unlock(e);
	/* reading the request returns the slot; it carries the listener's uid and the new id */
	assert_int_equal(get_event(fd, &r), 0);
	assert_int_equal(r.event, EMU_CMA_EVENT_CONNECT_REQUEST);
	assert_int_equal(r.id, conn1);
	emu_engine_lock(e);
	c2 = emu_cma_conn_id_new(lid);
	assert_non_null(c2);
	emu_cma_event(c2, NULL, EMU_CMA_EVENT_CONNECT_REQUEST, 0, NULL);
	conn2 = c2->handle;
	emu_engine_unlock(e);
	/* destroying the listener takes the unread request's id with it, not the read one */
	assert_int_equal(destroy_id(fd, l, NULL), 0);
	emu_engine_lock(e);
	assert_null(emu_cma_id_lookup(conn2));
	assert_non_null(emu_cma_id_lookup(conn1));
	emu_engine_unlock(e);
	assert_false(readable(fd));
	emu_ucma_close(fd);
}

static void test_options(void **state)
{
	static const struct {
		uint16_t ps;
		uint32_t level, name, len;
		int want;
	} t[] = {
		{ EMU_CMA_PS_TCP, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, 1, 0 },
		{ EMU_CMA_PS_TCP, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, 4, -EINVAL },
		{ EMU_CMA_PS_TCP, RDMA_OPTION_ID, RDMA_OPTION_ID_REUSEADDR, 4, 0 },
		{ EMU_CMA_PS_TCP, RDMA_OPTION_ID, RDMA_OPTION_ID_REUSEADDR, 1, -EINVAL },
		{ EMU_CMA_PS_TCP, RDMA_OPTION_ID, RDMA_OPTION_ID_AFONLY, 4, 0 },
		{ EMU_CMA_PS_TCP, RDMA_OPTION_ID, RDMA_OPTION_ID_AFONLY, 8, -EINVAL },
		{ EMU_CMA_PS_TCP, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, 1, 0 },
		{ EMU_CMA_PS_TCP, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, 4, -EINVAL },
		{ EMU_CMA_PS_UDP, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, 1, -EINVAL },
		{ EMU_CMA_PS_IPOIB, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, 1, -EINVAL },
		{ EMU_CMA_PS_TCP, RDMA_OPTION_ID, 4, 4, -ENOSYS },
		{ EMU_CMA_PS_TCP, RDMA_OPTION_IB, 2, 4, -ENOSYS },
		{ EMU_CMA_PS_TCP, 2, 0, 4, -ENOSYS },
		{ EMU_CMA_PS_TCP, RDMA_OPTION_IB, RDMA_OPTION_IB_PATH, 71, -EINVAL },
		{ EMU_CMA_PS_TCP, RDMA_OPTION_IB, RDMA_OPTION_IB_PATH, 72, -EINVAL }, /* flags 0 */
		{ EMU_CMA_PS_TCP, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, (1u << 22) + 1, -EINVAL },
	};
	int fd = emu_ucma_open();
	uint8_t val[128] = { 1 };

	(void)state;
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		uint32_t h = new_id(fd, t[i].ps);
		struct rdma_ucm_set_option c = { .id = h, .level = t[i].level,
						 .optname = t[i].name, .optlen = t[i].len };

		c.optval = (uintptr_t)val;
		print_message("option %zu\n", i);
		assert_int_equal(ucmd(fd, RDMA_USER_CM_CMD_SET_OPTION, &c, sizeof c, 0), t[i].want);
	}
	emu_ucma_close(fd);
}

/* ---- the address-resolution seam, with a stand-in module ---- */

struct fake_res {
	struct emu_timer t;
	struct emu_cma_id *id;
	int status;
};

static struct fake_res fake;
static int fake_status, fake_acquire;

/* Runs with the engine lock held: records instead of asserting. */
static void fake_done(struct emu_clock *clk, struct emu_timer *t, void *arg)
{
	struct fake_res *f = arg;
	int status = f->status;

	(void)clk;
	(void)t;
	if (!status) {
		/* what the neighbour module does on success: the routed source address (the
		 * port of the implicit bind stays), then the device behind its netdev */
		struct sockaddr_in *src = (struct sockaddr_in *)&f->id->src;

		inet_pton(AF_INET, "192.0.2.1", &src->sin_addr);
		fake_acquire = emu_cma_acquire_dev(f->id, 0);
		status = fake_acquire;
	}
	emu_cma_addr_resolved(f->id, status);
}

/* "Neighbour resolution" that answers after the timeout (fails) or after 1 ms (succeeds). */
static int fake_resolve(struct emu_cma_id *id, uint32_t timeout_ms)
{
	struct emu_clock *clk = emu_engine_clock(emu_engine_get());

	fake.id = id;
	fake.status = fake_status;
	emu_timer_init(&fake.t, fake_done, &fake);
	emu_timer_arm_in(clk, &fake.t,
			 fake_status ? (uint64_t)timeout_ms * 1000000u : 1000000u);
	return 0;
}

static void fake_cancel(struct emu_cma_id *id)
{
	if (fake.id == id && emu_timer_pending(&fake.t))
		emu_timer_cancel(emu_engine_clock(emu_engine_get()), &fake.t);
}

static const struct emu_cma_addr_ops fake_ops = { fake_resolve, fake_cancel };

static int resolve(int fd, uint32_t h, const char *dst, uint32_t timeout_ms)
{
	struct rdma_ucm_resolve_addr c = { .id = h, .timeout_ms = timeout_ms };
	struct sockaddr_storage ss;

	sa4(&ss, dst, 7471);
	memcpy(&c.dst_addr, &ss, sizeof(struct sockaddr_in));
	c.dst_size = sizeof(struct sockaddr_in);
	return ucmd(fd, RDMA_USER_CM_CMD_RESOLVE_ADDR, &c, sizeof c, 0);
}

static void test_resolve_without_module(void **state)
{
	int fd = emu_ucma_open();
	uint32_t h = new_id(fd, EMU_CMA_PS_TCP);
	struct rdma_ucm_resolve_route rr = { .id = h, .timeout_ms = 2000 };

	(void)state;
	/* the implicit bind happens, then the missing module says ENOSYS; back to ADDR_BOUND */
	assert_int_equal(resolve(fd, h, "192.0.2.2", 2000), -ENOSYS);
	assert_int_equal(state_of(h), EMU_CMA_ADDR_BOUND);
	/* route resolution of an id without device: EINVAL before any module */
	assert_int_equal(ucmd(fd, RDMA_USER_CM_CMD_RESOLVE_ROUTE, &rr, sizeof rr, 0), -EINVAL);
	emu_ucma_close(fd);
}

static void test_resolve_seam(void **state)
{
	int fd = emu_ucma_open();
	uint32_t h = new_id(fd, EMU_CMA_PS_TCP);
	struct emu_engine *e = emu_engine_get();
	struct rdma_ucm_event_resp r;
	struct rdma_ucm_query_addr_resp q;
	uint64_t t0, t1;

	(void)state;
	emu_cma_set_addr_ops(&fake_ops);
	/* failure: ADDR_ERROR -ETIMEDOUT exactly at the timeout, the id back to ADDR_BOUND */
	fake_status = -ETIMEDOUT;
	t0 = emu_engine_peek_now(e);
	assert_int_equal(resolve(fd, h, "192.0.2.14", 500), 0);
	assert_int_equal(state_of(h), EMU_CMA_ADDR_QUERY);
	assert_int_equal(resolve(fd, h, "192.0.2.14", 500), -EINVAL); /* not while resolving */
	assert_int_equal(get_event(fd, &r), 0);
	t1 = emu_engine_peek_now(e);
	assert_int_equal(r.event, EMU_CMA_EVENT_ADDR_ERROR);
	assert_int_equal((int32_t)r.status, -ETIMEDOUT);
	assert_int_equal(t1 - t0, 500 * 1000000ull);
	assert_int_equal(state_of(h), EMU_CMA_ADDR_BOUND);
	/* retry, success: ADDR_RESOLVED 1 ms later, a device, the destination stored */
	fake_status = 0;
	assert_int_equal(resolve(fd, h, "192.0.2.2", 2000), 0);
	assert_int_equal(get_event(fd, &r), 0);
	assert_int_equal(fake_acquire, 0);
	assert_int_equal(r.event, EMU_CMA_EVENT_ADDR_RESOLVED);
	assert_int_equal(r.status, 0);
	assert_int_equal(emu_engine_peek_now(e) - t1, 1000000ull);
	assert_int_equal(state_of(h), EMU_CMA_ADDR_RESOLVED);
	assert_int_equal(query_addr(fd, h, &q), 0);
	assert_int_equal(q.port_num, 1);
	assert_int_equal(((struct sockaddr_in *)&q.dst_addr)->sin_port, htons(7471));
	assert_int_equal(resolve(fd, h, "192.0.2.2", 2000), -EINVAL); /* resolved already */
	/* no route module: ENOSYS, and the id stays ADDR_RESOLVED */
	{
		struct rdma_ucm_resolve_route rr = { .id = h, .timeout_ms = 2000 };

		assert_int_equal(ucmd(fd, RDMA_USER_CM_CMD_RESOLVE_ROUTE, &rr, sizeof rr, 0),
				 -ENOSYS);
		assert_int_equal(state_of(h), EMU_CMA_ADDR_RESOLVED);
	}
	/* IB_PATH with a primary record: ROUTE_RESOLVED now, one path to query */
	{
		struct ib_path_rec_data pd[2];
		struct rdma_ucm_set_option c = { .id = h, .level = RDMA_OPTION_IB,
						 .optname = RDMA_OPTION_IB_PATH,
						 .optlen = sizeof pd };
		struct {
			struct rdma_ucm_query_path_resp hdr;
			struct ib_path_rec_data p[6];
		} qp;
		struct rdma_ucm_query qc = { .id = h, .option = RDMA_USER_CM_QUERY_PATH };

		memset(pd, 0, sizeof pd);
		pd[0].flags = 0x1;
		pd[1].flags = 0x2b;
		pd[1].path_rec[0] = 0xabcdef01;
		c.optval = (uintptr_t)pd;
		assert_int_equal(ucmd(fd, RDMA_USER_CM_CMD_SET_OPTION, &c, sizeof c, 0), 0);
		assert_int_equal(state_of(h), EMU_CMA_ROUTE_RESOLVED);
		assert_int_equal(get_event(fd, &r), 0);
		assert_int_equal(r.event, EMU_CMA_EVENT_ROUTE_RESOLVED);
		qc.response = (uintptr_t)&qp;
		assert_int_equal(ucmd(fd, RDMA_USER_CM_CMD_QUERY, &qc, sizeof qc, sizeof qp), 0);
		assert_int_equal(qp.hdr.num_paths, 1);
		assert_int_equal(qp.p[0].flags, 0x2b);
		assert_int_equal(qp.p[0].path_rec[0], 0xabcdef01);
	}
	/* connect without an IB CM module (the built-in one unplugged) -> ENOSYS, back to
	 * ROUTE_RESOLVED */
	{
		struct rdma_ucm_connect c = { .id = h };

		emu_cma_set_cm_ops(NULL);
		assert_int_equal(ucmd(fd, RDMA_USER_CM_CMD_CONNECT, &c, sizeof c, 0), -EINVAL);
		c.conn_param.valid = 1;
		assert_int_equal(ucmd(fd, RDMA_USER_CM_CMD_CONNECT, &c, sizeof c, 0), -ENOSYS);
		assert_int_equal(state_of(h), EMU_CMA_ROUTE_RESOLVED);
		emu_cma_set_cm_ops(&emu_cma_ib_cm_ops);
	}
	/* destroy while a resolution is pending cancels it (the module's cancel hook) */
	{
		uint32_t h2 = new_id(fd, EMU_CMA_PS_TCP);

		fake_status = -ETIMEDOUT;
		assert_int_equal(resolve(fd, h2, "192.0.2.14", 500), 0);
		assert_int_equal(destroy_id(fd, h2, NULL), 0);
		assert_false(emu_timer_pending(&fake.t));
	}
	emu_ucma_close(fd);
}

static void test_init_qp_attr(void **state)
{
	int fd = emu_ucma_open();
	uint32_t rc = new_id(fd, EMU_CMA_PS_TCP), ud = new_id(fd, EMU_CMA_PS_UDP),
		 idle = new_id(fd, EMU_CMA_PS_TCP);
	struct ib_uverbs_qp_attr a;
	struct rdma_ucm_init_qp_attr c = { .qp_state = 1 /* INIT */ };
	struct sockaddr_storage ss;

	(void)state;
	c.response = (uintptr_t)&a;
	sa4(&ss, "192.0.2.1", 0);
	assert_int_equal(bind_ss(fd, rc, &ss), 0);
	assert_int_equal(bind_ss(fd, ud, &ss), 0);
	c.id = rc;
	assert_int_equal(ucmd(fd, RDMA_USER_CM_CMD_INIT_QP_ATTR, &c, sizeof c, sizeof a), 0);
	/* STATE | ACCESS_FLAGS | PKEY_INDEX | PORT */
	assert_int_equal(a.qp_attr_mask, 0x1 | 0x8 | 0x10 | 0x20);
	assert_int_equal(a.qp_state, 1);
	assert_int_equal(a.port_num, 1);
	assert_int_equal(a.pkey_index, 0);
	assert_int_equal(a.qp_access_flags, 0);
	c.id = ud;
	assert_int_equal(ucmd(fd, RDMA_USER_CM_CMD_INIT_QP_ATTR, &c, sizeof c, sizeof a), 0);
	assert_int_equal(a.qp_attr_mask, 0x1 | 0x10 | 0x20 | 0x40); /* ... | QKEY */
	assert_int_equal(a.qkey, EMU_CMA_QKEY);
	/* RTR without a connection: the INIT attributes and the id's rq_psn */
	c.id = rc;
	c.qp_state = 3;
	assert_int_equal(ucmd(fd, RDMA_USER_CM_CMD_INIT_QP_ATTR, &c, sizeof c, sizeof a), 0);
	assert_int_equal(a.qp_state, 3);
	assert_int_equal(a.qp_attr_mask, 0x1 | 0x8 | 0x10 | 0x20);
	/* state beyond ERR, or no device: EINVAL */
	c.qp_state = 7;
	assert_int_equal(ucmd(fd, RDMA_USER_CM_CMD_INIT_QP_ATTR, &c, sizeof c, sizeof a), -EINVAL);
	c.qp_state = 1;
	c.id = idle;
	assert_int_equal(ucmd(fd, RDMA_USER_CM_CMD_INIT_QP_ATTR, &c, sizeof c, sizeof a), -EINVAL);
	/* no reject/disconnect/notify without a connection */
	{
		struct rdma_ucm_reject rj = { .id = rc };
		struct rdma_ucm_disconnect dc = { .id = rc };
		struct rdma_ucm_notify nt = { .id = rc, .event = 4 };

		assert_int_equal(ucmd(fd, RDMA_USER_CM_CMD_REJECT, &rj, sizeof rj, 0), -EINVAL);
		rj.reason = 5;
		assert_int_equal(ucmd(fd, RDMA_USER_CM_CMD_REJECT, &rj, sizeof rj, 0), -EINVAL);
		assert_int_equal(ucmd(fd, RDMA_USER_CM_CMD_DISCONNECT, &dc, sizeof dc, 0), -EINVAL);
		assert_int_equal(ucmd(fd, RDMA_USER_CM_CMD_NOTIFY, &nt, sizeof nt, 0), -EINVAL);
	}
	emu_ucma_close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_state_names),
		cmocka_unit_test_setup_teardown(test_commands, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bind_rules, setup, teardown),
		cmocka_unit_test_setup_teardown(test_privileged_port, setup, teardown),
		cmocka_unit_test_setup_teardown(test_link_local_scope, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ephemeral_ports, setup, teardown),
		cmocka_unit_test_setup_teardown(test_port_released, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bind_query, setup, teardown),
		cmocka_unit_test_setup_teardown(test_listen, setup, teardown),
		cmocka_unit_test_setup_teardown(test_events, setup, teardown),
		cmocka_unit_test_setup_teardown(test_event_records, setup, teardown),
		cmocka_unit_test_setup_teardown(test_migrate, setup, teardown),
		cmocka_unit_test_setup_teardown(test_requests_die_with_listener, setup, teardown),
		cmocka_unit_test_setup_teardown(test_options, setup, teardown),
		cmocka_unit_test_setup_teardown(test_resolve_without_module, setup, teardown),
		cmocka_unit_test_setup_teardown(test_resolve_seam, setup, teardown),
		cmocka_unit_test_setup_teardown(test_init_qp_attr, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
