/* Unit tests of fabrics run by several daemons (emu/sim/fabric_daemon.c, rdmaemu-fabric(5)
 * "daemon"): the lines and the hosts' daemon= in the model, their `fabric show` lines, the
 * fabric's identity (the same model from another path, another model), every error. */
#include "config.h"

#include <arpa/inet.h>
#include <sys/socket.h>

#include "emu/sim/tests/fabric_test.h"

#define TWO "daemon D1 udp=198.18.0.1:7471\n"                                  \
	    "daemon D2 udp=[2001:db8::2]:65535\n"                              \
	    "host A daemon=D1\n  device rxe0 link=eth\n"                       \
	    "  netdev eth0 rdma=rxe0/1\n    addr 203.0.113.1/24\n"             \
	    "host B daemon=D2\n  device rxe0 link=eth\n"                       \
	    "  netdev eth0 rdma=rxe0/1\n    addr 203.0.113.2/24\n"             \
	    "link A/rxe0/1 B/rxe0/1\n"

static void test_daemons_in_the_model(void **state)
{
	struct emu_fabric *f = load_ok(TWO);
	const struct emu_fabric_daemon *d1, *d2;
	char a[INET6_ADDRSTRLEN], *s;

	(void)state;
	assert_int_equal(f->ndaemons, 2);
	d1 = emu_fabric_find_daemon(f, "D1");
	d2 = emu_fabric_find_daemon(f, "D2");
	assert_ptr_equal(d1, &f->daemons[0]);
	assert_ptr_equal(d2, &f->daemons[1]);
	assert_null(emu_fabric_find_daemon(f, "D3"));
	assert_int_equal(d1->family, AF_INET);
	assert_int_equal(d1->port, 7471);
	assert_string_equal(inet_ntop(AF_INET, &d1->addr.v4, a, sizeof(a)), "198.18.0.1");
	assert_int_equal(d2->family, AF_INET6);
	assert_int_equal(d2->port, 65535);
	assert_string_equal(inet_ntop(AF_INET6, &d2->addr.v6, a, sizeof(a)), "2001:db8::2");
	assert_int_equal(emu_fabric_find_host(f, "A")->daemon, 1);
	assert_int_equal(emu_fabric_find_host(f, "B")->daemon, 2);
	s = show_to_string(f);
	assert_non_null(strstr(s, "\n\ndaemon D1 udp 198.18.0.1:7471 hosts A\n"
				  "daemon D2 udp [2001:db8::2]:65535 hosts B\n"));
	free(s);
	emu_fabric_free(f);
}

/* The identity: the same model wherever the file lies; another model, another identity. */
static void test_fabric_id(void **state)
{
	struct emu_fabric *f = load_ok(TWO), *g, *h, *none = load_ok("host A\n");
	struct emu_error err;

	(void)state;
	g = emu_fabric_load_text(TWO, "elsewhere/x.fabric", tmpdir_make(), &err);
	assert_non_null(g);
	h = load_ok(TWO "faults delay=1us\n");
	assert_int_equal(emu_fabric_id(f), emu_fabric_id(g));
	assert_int_not_equal(emu_fabric_id(f), emu_fabric_id(h));
	assert_int_equal(none->ndaemons, 0);
	assert_int_equal(emu_fabric_find_host(none, "A")->daemon, 0);
	emu_fabric_free(f);
	emu_fabric_free(g);
	emu_fabric_free(h);
	emu_fabric_free(none);
}

static void test_errors(void **state)
{
	static const struct {
		const char *text;
		unsigned line;
		const char *msg;
	} c[] = {
		{ "daemon\n", 1, "expected a daemon name after 'daemon'" },
		{ "daemon a/b udp=1.2.3.4:1\n", 1, "expected a daemon name after 'daemon'" },
		{ "daemon D1\n", 1, "daemon 'D1' needs udp=ADDR:PORT" },
		{ "daemon D1 tcp=1.2.3.4:5\n", 1,
		  "unknown attribute 'tcp=1.2.3.4:5' on a 'daemon' line (expected udp=)" },
		{ "daemon D1 udp=1.2.3.4\n", 1, "expected udp=IPV4:PORT or udp=[IPV6]:PORT (port "
						 "1-65535), got 'udp=1.2.3.4'" },
		{ "daemon D1 udp=1.2.3.4:0\n", 1, "got 'udp=1.2.3.4:0'" },
		{ "daemon D1 udp=1.2.3.4:65536\n", 1, "got 'udp=1.2.3.4:65536'" },
		{ "daemon D1 udp=2001:db8::1:5\n", 1, "got 'udp=2001:db8::1:5'" },
		{ "daemon D1 udp=[1.2.3.4]:5\n", 1, "got 'udp=[1.2.3.4]:5'" },
		{ "daemon D1 udp=[2001:db8::1]5\n", 1, "got 'udp=[2001:db8::1]5'" },
		{ "daemon D1 udp=host:5\n", 1, "got 'udp=host:5'" },
		{ "daemon D1 udp=1.2.3.4:5\ndaemon D1 udp=1.2.3.4:6\n", 2, "duplicate daemon 'D1'" },
		{ "daemon D1 udp=1.2.3.4:5\ndaemon D2 udp=1.2.3.4:5\n", 2,
		  "daemons 'D1' and 'D2' have the same udp= address" },
		{ "host A daemon=\n", 1, "expected a daemon name after 'daemon=', got ''" },
		{ "daemon D1 udp=1.2.3.4:5\nhost A daemon=D1\nhost B\n", 3,
		  "host 'B' names no daemon= (the fabric declares daemons: each host runs under "
		  "one)" },
		{ "host A daemon=D9\n", 1, "host 'A': no daemon 'D9' (a 'daemon NAME "
					   "udp=ADDR:PORT' line declares it)" },
		{ "host A foo=1\n", 1, "(expected alias=, acm=, cm-abi=, kind=, daemon=)" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++)
		load_bad(c[i].text, EINVAL, c[i].line, c[i].msg);
}

/* A daemon line may follow the hosts that name it. */
static void test_forward_reference(void **state)
{
	struct emu_fabric *f = load_ok("host A daemon=D2\nhost B daemon=D1\n"
				       "daemon D1 udp=10.0.0.1:1\ndaemon D2 udp=10.0.0.2:1\n");

	(void)state;
	assert_int_equal(emu_fabric_find_host(f, "A")->daemon, 2);
	assert_int_equal(emu_fabric_find_host(f, "B")->daemon, 1);
	emu_fabric_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_daemons_in_the_model),
		cmocka_unit_test(test_fabric_id),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_forward_reference),
	};
	int r = cmocka_run_group_tests(tests, NULL, NULL);

	tmpdir_cleanup();
	return r;
}
