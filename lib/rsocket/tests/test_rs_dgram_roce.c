/* Datagram rsockets on a RoCE port (host rxe-ref of fixtures/rxe-ref.fabric, rxe0 at
 * 192.0.2.1), as kernel rxe answers them (docs/reference/rsockets-rxe.md): the first QP of a
 * datagram rsocket gets an AH to its own port without a GRH, which a RoCE port refuses
 * (EINVAL), and the clean-up's epoll removal of a channel never added leaves ENOENT, which
 * rconnect and rsendto report. Measured in the reference VM with rdma-core 44 on Linux 6.1. */
#include "config.h"

#include "lib/rsocket/tests/ds_test.h"

static void test_first_qp_refused(void **state)
{
	struct rs_sock *srv = dt_bound("192.0.2.1", 7174), *cli = dt_bound("192.0.2.1", 0);
	struct sockaddr_in to = dt_addr("192.0.2.1", 7174);
	uint8_t buf[16];

	(void)state;
	errno = 0;
	assert_int_equal(cli->type->connect(cli, DT_SA(to), sizeof to), -1);
	assert_int_equal(errno, ENOENT);
	assert_null(ds_of(cli)->qp_list);
	assert_null(ds_of(cli)->conn_dest);
	errno = 0;
	assert_int_equal(cli->type->sendto(cli, "x", 1, 0, DT_SA(to), sizeof to), -1);
	assert_int_equal(errno, ENOENT);
	/* nothing was sent: the server has no datagram */
	errno = 0;
	assert_int_equal(srv->type->recvfrom(srv, buf, sizeof buf, MSG_DONTWAIT, NULL, NULL), -1);
	assert_int_equal(errno, EAGAIN);
	dt_close(cli);
	dt_close(srv);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_first_qp_refused),
	};

	(void)argc;
	verbs_test_init(argv, "rxe-ref.fabric", NULL, "rxe-ref");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
