/* Datagram rsockets through the public calls of librdmacm.so.1 (rsocket(7)), in-process on
 * host ib-a of fixtures/ib.fabric (IPoIB 192.0.2.129): a request and its answer, rpoll, and
 * the calls a datagram socket refuses. */
#include "config.h"

#include <arpa/inet.h>
#include <poll.h>
#include <sys/mman.h>
#include <rdma/rsocket.h>

#include "emu/verbs/tests/verbs_test.h"

static struct sockaddr_in addr(const char *ip, uint16_t port)
{
	struct sockaddr_in a;

	memset(&a, 0, sizeof a);
	a.sin_family = AF_INET;
	a.sin_port = htons(port);
	inet_pton(AF_INET, ip, &a.sin_addr);
	return a;
}

static void test_request_answer(void **state)
{
	struct sockaddr_in sa = addr("192.0.2.129", 7200), ca = addr("192.0.2.129", 0), from;
	socklen_t len = sizeof from;
	struct pollfd pfd;
	char buf[64];
	int srv, cli;

	(void)state;
	srv = rsocket(AF_INET, SOCK_DGRAM, 0);
	cli = rsocket(AF_INET, SOCK_DGRAM, IPPROTO_UDP);
	assert_true(srv >= 0 && cli >= 0);
	assert_int_equal(rbind(srv, (struct sockaddr *)&sa, sizeof sa), 0);
	assert_int_equal(rbind(cli, (struct sockaddr *)&ca, sizeof ca), 0);
	assert_int_equal(rgetsockname(cli, (struct sockaddr *)&ca, &len), 0);
	assert_int_equal(rsendto(cli, "request", 7, 0, (struct sockaddr *)&sa, sizeof sa), 7);
	pfd.fd = srv;
	pfd.events = POLLIN;
	pfd.revents = 0;
	assert_int_equal(rpoll(&pfd, 1, 5000), 1);
	assert_int_equal(pfd.revents, POLLIN);
	len = sizeof from;
	assert_int_equal(rrecvfrom(srv, buf, sizeof buf, 0, (struct sockaddr *)&from, &len), 7);
	assert_memory_equal(buf, "request", 7);
	assert_int_equal(from.sin_port, ca.sin_port);
	assert_int_equal(from.sin_addr.s_addr, sa.sin_addr.s_addr);
	assert_int_equal(rsendto(srv, "answer", 6, 0, (struct sockaddr *)&from, len), 6);
	assert_int_equal(rrecv(cli, buf, sizeof buf, 0), 6);
	assert_memory_equal(buf, "answer", 6);
	assert_int_equal(rclose(cli), 0);
	assert_int_equal(rclose(srv), 0);
}

static void test_refused(void **state)
{
	int s = rsocket(AF_INET, SOCK_DGRAM, 0);
	char buf[8];

	(void)state;
	assert_true(s >= 0);
	errno = 0;
	assert_int_equal(rsocket(AF_INET, SOCK_DGRAM, IPPROTO_TCP), -1);
	assert_int_equal(errno, ENOTSUP);
	errno = 0;
	assert_int_equal(rlisten(s, 1), -1);
	assert_int_equal(errno, EOPNOTSUPP);
	errno = 0;
	assert_int_equal(raccept(s, NULL, NULL), -1);
	assert_int_equal(errno, EBADF);
	errno = 0;
	assert_int_equal(riomap(s, buf, sizeof buf, PROT_WRITE, 0, -1), -1);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(rsend(s, buf, 1, 0), -1);
	assert_int_equal(errno, EDESTADDRREQ);
	errno = 0;
	assert_int_equal(rrecv(s, buf, 1, MSG_DONTWAIT), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(rclose(s), 0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_request_answer),
		cmocka_unit_test(test_refused),
	};

	(void)argc;
	verbs_test_init(argv, "ib.fabric", NULL, "ib-a");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
