/* Datagram rsockets on an InfiniBand port (host ib-a of fixtures/ib.fabric, IPoIB address
 * 192.0.2.129), in one process through the UDP side channel's local backend: the first
 * datagram to a peer over the UDP socket, the next ones over UD once the peer's QPN came
 * back; sizes, MSG_PEEK, truncation, EAGAIN, options, rpoll's steps and the errnos of the
 * calls a datagram socket refuses. (On a RoCE port rdma-core's datagram rsockets fail before
 * any datagram: test_rs_dgram_roce.) */
#include "config.h"

#include <netinet/tcp.h>
#include <rdma/rsocket.h>

#include "lib/rsocket/tests/ds_test.h"

#define IP "192.0.2.129"

static void fill(uint8_t *b, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		b[i] = (uint8_t)(seed * 31 + i * 7);
}

/* Waits (5 s at most) until s knows the QPN of the peer it last sent to. */
static void wait_ud(struct rs_sock *s)
{
	struct ds_sock *ds = ds_of(s);

	for (int i = 0; i < 5000; i++) {
		pthread_mutex_lock(&ds->slock);
		if (ds->conn_dest && ds->conn_dest->ah) {
			pthread_mutex_unlock(&ds->slock);
			return;
		}
		pthread_mutex_unlock(&ds->slock);
		usleep(1000);
	}
	fail_msg("no AH to the peer after 5 s");
}

static int over_ud(struct rs_sock *s)
{
	return ds_of(s)->conn_dest && ds_of(s)->conn_dest->ah;
}

/* Receives one datagram (blocking), checks its length, bytes and source. */
static void expect_dgram(struct rs_sock *r, const uint8_t *want, size_t n, uint16_t srcport)
{
	static uint8_t got[4096];
	struct sockaddr_in src;
	socklen_t len = sizeof src;

	memset(got, 0, sizeof got);
	assert_int_equal(r->type->recvfrom(r, got, sizeof got, 0, DT_SA(src), &len), n);
	assert_memory_equal(got, want, n);
	assert_int_equal(len, sizeof src);
	assert_int_equal(src.sin_family, AF_INET);
	assert_int_equal(ntohs(src.sin_port), srcport);
	assert_int_equal(src.sin_addr.s_addr, inet_addr(IP));
}

static void test_udp_then_ud(void **state)
{
	static const size_t sizes[] = { 1, 2, 63, 64, 65, 1000, 2039, 2040 };
	struct rs_sock *srv = dt_bound(IP, 7174), *cli = dt_bound(IP, 0);
	struct sockaddr_in to = dt_addr(IP, 7174), back;
	uint8_t buf[2048];
	uint16_t cport = dt_port(cli);

	(void)state;
	assert_int_not_equal(cport, 0);
	/* the first datagram goes over UDP: no AH yet */
	fill(buf, 100, 1);
	assert_int_equal(cli->type->sendto(cli, buf, 100, 0, DT_SA(to), sizeof to), 100);
	expect_dgram(srv, buf, 100, cport);
	wait_ud(cli);
	for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
		fill(buf, sizes[i], (unsigned)i + 2);
		assert_int_equal(cli->type->sendto(cli, buf, sizes[i], 0, DT_SA(to), sizeof to),
				 sizes[i]);
		assert_true(over_ud(cli));
		expect_dgram(srv, buf, sizes[i], cport);
	}
	/* one slot: the ds_header and at most 2040 bytes */
	errno = 0;
	assert_int_equal(cli->type->sendto(cli, buf, 2041, 0, DT_SA(to), sizeof to), -1);
	assert_int_equal(errno, EMSGSIZE);
	/* the server answers over UD at once: it learnt the client's QPN from the UDP header */
	back = dt_addr(IP, cport);
	fill(buf, 2040, 99);
	assert_int_equal(srv->type->sendto(srv, buf, 2040, 0, DT_SA(back), sizeof back), 2040);
	assert_true(over_ud(srv));
	expect_dgram(cli, buf, 2040, 7174);
	dt_close(cli);
	dt_close(srv);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_udp_then_ud),
	};

	(void)argc;
	verbs_test_init(argv, "ib.fabric", NULL, "ib-a");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
