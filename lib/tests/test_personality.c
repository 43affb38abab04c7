/* The librdmacm personalities (docs/rdma-core-generations.md), built twice: linked with
 * lib/rdma-core-44/librdmacm.la (PERSONALITY 44) and with lib/rdma-core-61/librdmacm.la
 * (PERSONALITY 61). Each checks what its generation's library shows a program: the level the
 * library announced to the emulator, the RDMACM_1.4 symbols, rdma_event_str(16/17), the RAI_SA
 * and RAI_DNS hints of rdma_getaddrinfo, and the one line a mismatching RDMAEMU_RDMA_CORE
 * gets. */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <cmocka.h>
#include <rdma/rdma_cma.h>

#include "rdmaemu/compat.h"
#include "rdmaemu/ctl.h"

static const char fabric_text[] =
	"seed 7\n"
	"host alpha\n"
	"  device rxe0 link=eth\n"
	"  netdev d0 mac=02:00:00:00:00:01 mtu=1500 rdma=rxe0/1\n"
	"    addr 192.0.2.1/28\n";

static int attach(void **state)
{
	(void)state;
	return rdmaemu_ctl_attach_text(fabric_text, "alpha");
}

static void test_level(void **state)
{
	(void)state;
	assert_int_equal(rdmaemu_ctl_rdmacm_level(), PERSONALITY);
}

/* 7b1a686bc and 7d7ca522f (v60) add the RDMACM_1.4 node; rdma-core 44 has no such names at
 * any version. */
static void test_rdmacm_1_4(void **state)
{
	static const char *const names[] = { "rdma_resolve_addrinfo", "rdma_query_addrinfo",
					     "rdma_write_cm_event" };

	(void)state;
	for (size_t i = 0; i < 3; i++) {
		void *v = dlvsym(RTLD_DEFAULT, names[i], "RDMACM_1.4");
		void *d = dlsym(RTLD_DEFAULT, names[i]);

		if (PERSONALITY >= 60) {
			assert_non_null(v);
			assert_ptr_equal(v, d);
		} else {
			assert_null(v);
			assert_null(d);
		}
	}
	/* the older nodes are in both */
	assert_non_null(dlvsym(RTLD_DEFAULT, "rdma_get_remote_ece", "RDMACM_1.3"));
	assert_non_null(dlvsym(RTLD_DEFAULT, "rdma_getaddrinfo", "RDMACM_1.0"));
}

static void test_event_str(void **state)
{
	(void)state;
	assert_string_equal(rdma_event_str(RDMA_CM_EVENT_TIMEWAIT_EXIT),
			    "RDMA_CM_EVENT_TIMEWAIT_EXIT");
	assert_string_equal(rdma_event_str(16), PERSONALITY >= 60 ?
			    "RDMA_CM_EVENT_ADDRINFO_RESOLVED" : "UNKNOWN EVENT");
	assert_string_equal(rdma_event_str(17), PERSONALITY >= 60 ?
			    "RDMA_CM_EVENT_ADDRINFO_ERROR" : "UNKNOWN EVENT");
	assert_string_equal(rdma_event_str(18), "UNKNOWN EVENT");
}

/* dfc0afdea (v60): RAI_SA with a node, or with RAI_DNS, is -1/EOPNOTSUPP; before it both bits
 * are ignored and the address resolves as without them. */
static void test_rai_flags(void **state)
{
	struct rdma_addrinfo hints = { .ai_flags = RAI_SA, .ai_port_space = RDMA_PS_TCP };
	struct rdma_addrinfo *res = NULL;
	int ret;

	(void)state;
	errno = 0;
	ret = rdma_getaddrinfo("192.0.2.1", "7471", &hints, &res);
	if (PERSONALITY >= 60) {
		assert_int_equal(ret, -1);
		assert_int_equal(errno, EOPNOTSUPP);
		assert_null(res);
	} else {
		const struct sockaddr_in *sin;

		assert_int_equal(ret, 0);
		assert_non_null(res);
		assert_int_equal(res->ai_family, AF_INET);
		sin = (const struct sockaddr_in *)res->ai_dst_addr;
		assert_int_equal(ntohs(sin->sin_port), 7471);
		assert_int_equal(ntohl(sin->sin_addr.s_addr), 0xc0000201);
		rdma_freeaddrinfo(res);
	}
	/* RAI_DNS alone: as no flag in both generations */
	res = NULL;
	hints.ai_flags = RAI_DNS;
	assert_int_equal(rdma_getaddrinfo("192.0.2.1", "7471", &hints, &res), 0);
	assert_non_null(res);
	rdma_freeaddrinfo(res);
}

/* This program's path (main's argv[0]): not /proc/self/exe, which is the valgrind tool when
 * the test runs under make check-valgrind. */
static const char *self_path;

/* RDMAEMU_RDMA_CORE naming the other personality: the library's one line on stderr; naming
 * its own: nothing. */
static void run_loaded(const char *want, char *out, size_t len)
{
	int fds[2];
	pid_t pid;
	ssize_t n;
	size_t got = 0;
	int status;

	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(fds[1], 2);
		close(fds[0]);
		setenv("RDMAEMU_RDMA_CORE", want, 1);
		execl(self_path, "test_personality", "--loaded", (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	while (got < len - 1 && (n = read(fds[0], out + got, len - 1 - got)) > 0)
		got += (size_t)n;
	out[got] = 0;
	close(fds[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

static void test_mismatch_line(void **state)
{
	char out[512], want[128];

	(void)state;
	run_loaded(PERSONALITY >= 60 ? "44" : "61", out, sizeof(out));
	snprintf(want, sizeof(want), "rdmaemu: RDMAEMU_RDMA_CORE=%s, but the librdmacm.so.1 "
		 "loaded is personality %d\n", PERSONALITY >= 60 ? "44" : "61", PERSONALITY);
	assert_string_equal(out, want);
	run_loaded(PERSONALITY >= 60 ? "61" : "44", out, sizeof(out));
	assert_string_equal(out, "");
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_level),
		cmocka_unit_test(test_rdmacm_1_4),
		cmocka_unit_test(test_event_str),
		cmocka_unit_test(test_rai_flags),
		cmocka_unit_test(test_mismatch_line),
	};

	/* the child of test_mismatch_line: the library's constructor has spoken */
	if (argc > 1 && !strcmp(argv[1], "--loaded"))
		return 0;
	unsetenv("RDMAEMU_RDMA_CORE");
	self_path = argv[0];
	return cmocka_run_group_tests(tests, attach, NULL);
}
