/* Unit tests of lib/: rdma_getaddrinfo on the emulated host.
 *
 * The conformance suite checks the public behaviour against the spec's matrix; these tests
 * check what only the emulator has: names from the fabric's table and a hosts file instead of
 * DNS, AI_ADDRCONFIG and scope ids judged on the emulated host, the emulated ibacm, and the
 * places where the emulator refuses or zero-fills what the real library crashes on or
 * over-reads. Each test attaches the process to a fabric given as text. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <cmocka.h>

#include "lib/cma.h"
#include "emu/sim/process.h"
#include "rdmaemu/ctl.h"

/* host alpha: RoCE device on d0 (IPv4 + global IPv6), ibacm running.
 * host bravo: IPv4 only (IPv6 disabled on its netdev), no ibacm.
 * host charlie: IPv4 addresses, IPv6 enabled as Linux has it: only the link-local address.
 * host nodev: a netdev, no RDMA device. */
static const char fabric_text[] =
	"seed 7\n"
	"host alpha acm=on\n"
	"  device rxe0 link=eth\n"
	"  netdev d0 mac=02:00:00:00:00:01 mtu=1500 rdma=rxe0/1\n"
	"    addr 192.0.2.1/28\n"
	"    addr 2001:db8::1/64\n"
	"host bravo\n"
	"  device rxe0 link=eth\n"
	"  netdev d0 mac=02:00:00:00:00:02 mtu=1500 rdma=rxe0/1 ipv6=off\n"
	"    addr 192.0.2.2/28\n"
	"host charlie\n"
	"  device rxe0 link=eth\n"
	"  netdev d0 mac=02:00:00:00:00:04 mtu=1500 rdma=rxe0/1\n"
	"    addr 192.0.2.4/28\n"
	"host nodev\n"
	"  netdev eth0 mac=02:00:00:00:00:03 mtu=1500\n"
	"    addr 198.51.100.10/24\n"
	"link alpha/rxe0/1 bravo/rxe0/1\n"
	"name both.example 192.0.2.9 2001:db8::9\n"
	"name v6.example 2001:db8::6\n"
	"name hostsfile-shadow 192.0.2.5\n";

static char hosts_path[] = "/tmp/rdmaemu-test-hosts-XXXXXX";

static void attach(const char *node)
{
	emu_process_reset();
	assert_int_equal(rdmaemu_ctl_attach_text(fabric_text, node), 0);
}

static int setup_hosts(void **state)
{
	int fd = mkstemp(hosts_path);
	static const char text[] =
		"# a hosts file for the tests\n"
		"127.0.0.1\tlocalhost\n"
		"192.0.2.77 filehost filehost-alias # trailing comment\n"
		"192.0.2.66 hostsfile-shadow\n"
		"2001:db8::77 filehost\n";

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, sizeof(text) - 1), (ssize_t)(sizeof(text) - 1));
	close(fd);
	setenv("RDMAEMU_HOSTS_FILE", hosts_path, 1);
	return 0;
}

static int teardown_hosts(void **state)
{
	(void)state;
	unlink(hosts_path);
	emu_process_reset();
	return 0;
}

static struct rdma_addrinfo hints_of(int flags, int family)
{
	struct rdma_addrinfo h;

	memset(&h, 0, sizeof(h));
	h.ai_flags = flags;
	h.ai_family = family;
	return h;
}

static void assert_sin(const struct sockaddr *sa, socklen_t len, const char *ip, uint16_t port)
{
	const struct sockaddr_in *sin = (const struct sockaddr_in *)sa;
	char buf[INET_ADDRSTRLEN];

	assert_non_null(sa);
	assert_int_equal(len, sizeof(struct sockaddr_in));
	assert_int_equal(sin->sin_family, AF_INET);
	assert_string_equal(inet_ntop(AF_INET, &sin->sin_addr, buf, sizeof(buf)), ip);
	assert_int_equal(ntohs(sin->sin_port), port);
}

static void assert_sin6(const struct sockaddr *sa, socklen_t len, const char *ip, uint16_t port)
{
	const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)sa;
	char buf[INET6_ADDRSTRLEN];

	assert_non_null(sa);
	assert_int_equal(len, sizeof(struct sockaddr_in6));
	assert_int_equal(sin6->sin6_family, AF_INET6);
	assert_string_equal(inet_ntop(AF_INET6, &sin6->sin6_addr, buf, sizeof(buf)), ip);
	assert_int_equal(ntohs(sin6->sin6_port), port);
}

static void test_no_device_is_enodev(void **state)
{
	struct rdma_addrinfo *res = (void *)0x1;

	(void)state;
	attach("nodev");
	errno = 0;
	assert_int_equal(rdma_getaddrinfo("192.0.2.1", "7471", NULL, &res), -1);
	assert_int_equal(errno, ENODEV);
	assert_ptr_equal(res, (void *)0x1);
	/* the all-NULL check comes before init */
	errno = 0;
	assert_int_equal(rdma_getaddrinfo(NULL, NULL, NULL, &res), -1);
	assert_int_equal(errno, EINVAL);
}

static void test_bad_fabric_is_enodev(void **state)
{
	struct rdma_addrinfo *res = NULL;

	(void)state;
	emu_process_reset();
	setenv("RDMAEMU_FABRIC", "/nonexistent/rdmaemu.fabric", 1);
	errno = 0;
	assert_int_equal(rdma_getaddrinfo("192.0.2.1", "7471", NULL, &res), -1);
	assert_int_equal(errno, ENODEV);
	assert_null(res);
	unsetenv("RDMAEMU_FABRIC");
	/* once attached (here: failed), the control API refuses to re-attach */
	assert_int_equal(rdmaemu_ctl_attach_text(fabric_text, "alpha"), -1);
	assert_int_equal(errno, EBUSY);
	emu_process_reset();
}

static void test_fabric_name_table(void **state)
{
	struct rdma_addrinfo *res = NULL, h = hints_of(0, AF_INET);

	(void)state;
	attach("alpha");
	assert_int_equal(rdma_getaddrinfo("both.example", "7471", &h, &res), 0);
	assert_sin(res->ai_dst_addr, res->ai_dst_len, "192.0.2.9", 7471);
	rdma_freeaddrinfo(res);

	/* AF_UNSPEC: IPv6 (precedence 40) before IPv4 (10) when the host has both families */
	h = hints_of(0, AF_UNSPEC);
	assert_int_equal(rdma_getaddrinfo("both.example", "7471", &h, &res), 0);
	assert_sin6(res->ai_dst_addr, res->ai_dst_len, "2001:db8::9", 7471);
	assert_null(res->ai_next);
	rdma_freeaddrinfo(res);

	/* a name known only in the other family: EAI_NONAME, as glibc's files backend */
	h = hints_of(0, AF_INET);
	assert_int_equal(rdma_getaddrinfo("v6.example", "7471", &h, &res), EAI_NONAME);

	/* hosts of the fabric resolve by name to their addresses */
	assert_int_equal(rdma_getaddrinfo("bravo", "1", &h, &res), 0);
	assert_sin(res->ai_dst_addr, res->ai_dst_len, "192.0.2.2", 1);
	rdma_freeaddrinfo(res);
}

static void test_unusable_family_goes_last(void **state)
{
	struct rdma_addrinfo *res = NULL, h = hints_of(0, AF_UNSPEC);

	(void)state;
	/* bravo has no IPv6 address: RFC 3484 rule 1 puts the IPv6 destination last */
	attach("bravo");
	assert_int_equal(rdma_getaddrinfo("both.example", "7471", &h, &res), 0);
	assert_sin(res->ai_dst_addr, res->ai_dst_len, "192.0.2.9", 7471);
	rdma_freeaddrinfo(res);
}

static void test_hosts_file(void **state)
{
	struct rdma_addrinfo *res = NULL, h = hints_of(0, AF_INET);

	(void)state;
	attach("alpha");
	assert_int_equal(rdma_getaddrinfo("FILEHOST-alias", "80", &h, &res), 0);
	assert_sin(res->ai_dst_addr, res->ai_dst_len, "192.0.2.77", 80);
	rdma_freeaddrinfo(res);

	h = hints_of(0, AF_INET6);
	assert_int_equal(rdma_getaddrinfo("filehost", "80", &h, &res), 0);
	assert_sin6(res->ai_dst_addr, res->ai_dst_len, "2001:db8::77", 80);
	rdma_freeaddrinfo(res);

	/* the fabric's table wins over the hosts file */
	h = hints_of(0, AF_INET);
	assert_int_equal(rdma_getaddrinfo("hostsfile-shadow", "80", &h, &res), 0);
	assert_sin(res->ai_dst_addr, res->ai_dst_len, "192.0.2.5", 80);
	rdma_freeaddrinfo(res);

	/* unknown everywhere, system resolver off: EAI_NONAME without any DNS query */
	assert_int_equal(rdma_getaddrinfo("no-such-host.example", "80", &h, &res), EAI_NONAME);
	/* RAI_NUMERICHOST: names are not even looked up */
	h = hints_of(RAI_NUMERICHOST, AF_INET);
	assert_int_equal(rdma_getaddrinfo("filehost", "80", &h, &res), EAI_NONAME);
	/* service errors come before host lookup, as in glibc */
	h = hints_of(0, AF_INET);
	assert_int_equal(rdma_getaddrinfo("no-such-host.example", "no-such-service", &h, &res),
			 EAI_SERVICE);
}

static void test_addrconfig_on_emulated_host(void **state)
{
	struct rdma_addrinfo *res = NULL;

	(void)state;
	/* NULL hints mean AI_ADDRCONFIG: bravo has only IPv4, so the passive-less NULL-node
	 * lookup gives 127.0.0.1 whatever the real machine has configured */
	attach("bravo");
	assert_int_equal(rdma_getaddrinfo(NULL, "7471", NULL, &res), 0);
	assert_sin(res->ai_dst_addr, res->ai_dst_len, "127.0.0.1", 7471);
	rdma_freeaddrinfo(res);
	/* and an IPv6 literal is then of the wrong family */
	assert_int_equal(rdma_getaddrinfo("2001:db8::9", "7471", NULL, &res), EAI_ADDRFAMILY);

	/* charlie has only IPv4 addresses, but its netdev has the fe80:: link-local address
	 * Linux gives it, which glibc counts: both families stay, ::1 first (as on the real
	 * machine and in the reference VM) */
	attach("charlie");
	assert_int_equal(rdma_getaddrinfo(NULL, "7471", NULL, &res), 0);
	assert_sin6(res->ai_dst_addr, res->ai_dst_len, "::1", 7471);
	rdma_freeaddrinfo(res);

	/* alpha has global IPv6 too: glibc's order puts ::1 first */
	attach("alpha");
	assert_int_equal(rdma_getaddrinfo(NULL, "7471", NULL, &res), 0);
	assert_sin6(res->ai_dst_addr, res->ai_dst_len, "::1", 7471);
	rdma_freeaddrinfo(res);
}

static void test_scope_ids_are_emulated(void **state)
{
	struct rdma_addrinfo *res = NULL, h = hints_of(RAI_NUMERICHOST, AF_INET6);
	const struct sockaddr_in6 *sin6;

	(void)state;
	attach("alpha");
	assert_int_equal(rdma_getaddrinfo("fe80::1%d0", "1", &h, &res), 0);
	sin6 = (const struct sockaddr_in6 *)res->ai_dst_addr;
	assert_int_equal(sin6->sin6_scope_id, 2); /* lo is 1, d0 the first netdev */
	rdma_freeaddrinfo(res);

	assert_int_equal(rdma_getaddrinfo("fe80::1%lo", "1", &h, &res), 0);
	assert_int_equal(((const struct sockaddr_in6 *)res->ai_dst_addr)->sin6_scope_id, 1);
	rdma_freeaddrinfo(res);

	assert_int_equal(rdma_getaddrinfo("fe80::1%7", "1", &h, &res), 0);
	assert_int_equal(((const struct sockaddr_in6 *)res->ai_dst_addr)->sin6_scope_id, 7);
	rdma_freeaddrinfo(res);

	/* eth0 is not an interface of alpha, whatever the real machine has */
	assert_int_equal(rdma_getaddrinfo("fe80::1%eth0", "1", &h, &res), EAI_NONAME);
	/* ... but a bad service is still reported first */
	assert_int_equal(rdma_getaddrinfo("fe80::1%eth0", "no-such-service", &h, &res), EAI_SERVICE);
}

static void test_acm_source_discovery(void **state)
{
	struct rdma_addrinfo *res = NULL, h = hints_of(0, AF_UNSPEC);
	struct sockaddr_in hint_src;

	(void)state;
	attach("alpha"); /* acm on */
	assert_int_equal(rdma_getaddrinfo("192.0.2.2", "7471", &h, &res), 0);
	assert_sin(res->ai_src_addr, res->ai_src_len, "192.0.2.1", 0);
	assert_int_equal(res->ai_route_len, 0);
	rdma_freeaddrinfo(res);

	assert_int_equal(rdma_getaddrinfo("2001:db8::2", "7471", &h, &res), 0);
	assert_sin6(res->ai_src_addr, res->ai_src_len, "2001:db8::1", 0);
	rdma_freeaddrinfo(res);

	/* off-subnet destination: ibacm has no answer, no source */
	assert_int_equal(rdma_getaddrinfo("203.0.113.9", "7471", &h, &res), 0);
	assert_null(res->ai_src_addr);
	assert_int_equal(res->ai_src_len, 0);
	rdma_freeaddrinfo(res);

	/* a hint source is kept */
	memset(&hint_src, 0, sizeof(hint_src));
	hint_src.sin_family = AF_INET;
	hint_src.sin_port = htons(1111);
	inet_pton(AF_INET, "192.0.2.3", &hint_src.sin_addr);
	h.ai_src_addr = (struct sockaddr *)&hint_src;
	h.ai_src_len = sizeof(hint_src);
	assert_int_equal(rdma_getaddrinfo("192.0.2.2", "7471", &h, &res), 0);
	assert_sin(res->ai_src_addr, res->ai_src_len, "192.0.2.3", 1111);
	rdma_freeaddrinfo(res);

	/* passive lookups never ask ibacm */
	h = hints_of(RAI_PASSIVE, AF_INET);
	assert_int_equal(rdma_getaddrinfo("192.0.2.1", "7471", &h, &res), 0);
	assert_sin(res->ai_src_addr, res->ai_src_len, "192.0.2.1", 7471);
	assert_null(res->ai_dst_addr);
	rdma_freeaddrinfo(res);

	/* bravo runs no ibacm: no source, as on a real host without ibacm */
	attach("bravo");
	h = hints_of(0, AF_UNSPEC);
	assert_int_equal(rdma_getaddrinfo("192.0.2.1", "7471", &h, &res), 0);
	assert_null(res->ai_src_addr);
	rdma_freeaddrinfo(res);
}

static void test_null_pointers_refused(void **state)
{
	struct rdma_addrinfo *res = NULL, h = hints_of(0, AF_INET);

	(void)state;
	attach("alpha");
	/* hints-only with a length but no address: the real library memcpy()s from NULL */
	h.ai_dst_len = sizeof(struct sockaddr_in);
	errno = 0;
	assert_int_equal(rdma_getaddrinfo(NULL, NULL, &h, &res), -1);
	assert_int_equal(errno, EINVAL);
	assert_null(res);

	h = hints_of(0, AF_INET);
	h.ai_src_len = sizeof(struct sockaddr_in);
	errno = 0;
	assert_int_equal(rdma_getaddrinfo("192.0.2.2", "1", &h, &res), -1);
	assert_int_equal(errno, EINVAL);

	errno = 0;
	assert_int_equal(rdma_getaddrinfo("192.0.2.2", "1", NULL, NULL), -1);
	assert_int_equal(errno, EINVAL);
}

static void test_af_ib_ipv4_overread_is_zeros(void **state)
{
	struct rdma_addrinfo *res = NULL;
	struct rdma_addrinfo h = hints_of(RAI_FAMILY | RAI_NUMERICHOST, AF_IB);
	const struct sockaddr_ib *sib;
	static const uint8_t zero[16];

	(void)state;
	attach("alpha");
	h.ai_port_space = RDMA_PS_TCP;
	assert_int_equal(rdma_getaddrinfo("10.0.0.1", "7471", &h, &res), 0);
	assert_int_equal(res->ai_family, AF_IB);
	assert_int_equal(res->ai_dst_len, sizeof(struct sockaddr_ib));
	sib = (const struct sockaddr_ib *)res->ai_dst_addr;
	/* the IPv4 address sits where sin6_flowinfo would be; the rest is zero, not garbage */
	assert_int_equal(sib->sib_flowinfo, htonl(0x0a000001));
	assert_memory_equal(&sib->sib_addr, zero, 16);
	assert_int_equal(sib->sib_scope_id, 0);
	assert_int_equal(be64toh(sib->sib_sid), 0x1061d2fULL);
	rdma_freeaddrinfo(res);
}

static void test_rai_sa(void **state)
{
	struct rdma_addrinfo *res = NULL, h = hints_of(RAI_SA, 0);

	(void)state;
	attach("alpha");
	errno = 0;
	assert_int_equal(rdma_getaddrinfo("192.0.2.2", "1", &h, &res), -1);
	assert_int_equal(errno, EOPNOTSUPP);
	h.ai_flags = RAI_SA | RAI_DNS;
	errno = 0;
	assert_int_equal(rdma_getaddrinfo(NULL, "1", &h, &res), -1);
	assert_int_equal(errno, EOPNOTSUPP);
	h.ai_flags = RAI_SA;
	errno = 0;
	assert_int_equal(rdma_getaddrinfo(NULL, NULL, &h, &res), -1);
	assert_int_equal(errno, EINVAL);
	/* RoCE only: no IB port to ask */
	errno = 0;
	assert_int_equal(rdma_getaddrinfo(NULL, "0x10000ce100415453", &h, &res), -1);
	assert_int_equal(errno, ENOENT);
	assert_null(res);
}

static void test_event_str_and_ports(void **state)
{
	struct rdma_cm_id id;
	struct sockaddr_ib *sib = (struct sockaddr_ib *)&id.route.addr.dst_storage;

	(void)state;
	assert_string_equal(rdma_event_str(RDMA_CM_EVENT_ADDR_RESOLVED), "RDMA_CM_EVENT_ADDR_RESOLVED");
	assert_string_equal(rdma_event_str(RDMA_CM_EVENT_TIMEWAIT_EXIT), "RDMA_CM_EVENT_TIMEWAIT_EXIT");
	assert_string_equal(rdma_event_str(16), "RDMA_CM_EVENT_ADDRINFO_RESOLVED");
	assert_string_equal(rdma_event_str(17), "RDMA_CM_EVENT_ADDRINFO_ERROR");
	assert_string_equal(rdma_event_str(18), "UNKNOWN EVENT");
	assert_string_equal(rdma_event_str(19), "UNKNOWN EVENT");
	assert_string_equal(rdma_event_str((enum rdma_cm_event_type)-1), "UNKNOWN EVENT");

	memset(&id, 0, sizeof(id));
	assert_int_equal(rdma_get_src_port(&id), 0);
	id.route.addr.src_sin.sin_family = AF_INET;
	id.route.addr.src_sin.sin_port = htons(7471);
	assert_int_equal(rdma_get_src_port(&id), htons(7471));
	sib->sib_family = AF_IB;
	sib->sib_sid = htobe64(0x1061d2fULL);
	assert_int_equal(rdma_get_dst_port(&id), htons(0x1d2f));
	assert_int_equal(rdma_get_src_port(NULL), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_device_is_enodev),
		cmocka_unit_test(test_bad_fabric_is_enodev),
		cmocka_unit_test(test_fabric_name_table),
		cmocka_unit_test(test_unusable_family_goes_last),
		cmocka_unit_test(test_hosts_file),
		cmocka_unit_test(test_addrconfig_on_emulated_host),
		cmocka_unit_test(test_scope_ids_are_emulated),
		cmocka_unit_test(test_acm_source_discovery),
		cmocka_unit_test(test_null_pointers_refused),
		cmocka_unit_test(test_af_ib_ipv4_overread_is_zeros),
		cmocka_unit_test(test_rai_sa),
		cmocka_unit_test(test_event_str_and_ports),
	};

	return cmocka_run_group_tests(tests, setup_hosts, teardown_hosts);
}
