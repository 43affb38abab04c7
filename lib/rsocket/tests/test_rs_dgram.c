/* Datagram rsockets on an InfiniBand port (host ib-a of fixtures/ib.fabric, IPoIB address
 * 192.0.2.129), in one process through the UDP side channel's local backend: the first
 * datagram to a peer over the UDP socket, the next ones over UD once the peer's QPN came
 * back; sizes, MSG_PEEK, truncation, EAGAIN, options, rpoll's steps and the errnos of the
 * calls a datagram socket refuses. (On a RoCE port rdma-core's datagram rsockets fail before
 * any datagram: test_rs_dgram_roce.) */
#include "config.h"

#include <netinet/tcp.h>
#include <poll.h>
#include <sys/mman.h>
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
	/* then every size from 1 byte to the maximum */
	for (size_t n = 1; n <= 2040; n++) {
		fill(buf, n, (unsigned)n);
		assert_int_equal(cli->type->sendto(cli, buf, n, 0, DT_SA(to), sizeof to), n);
		expect_dgram(srv, buf, n, cport);
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

/* The service thread reads at most 2048 bytes of a UDP datagram: a first datagram keeps
 * 2048 - 16 bytes of user data, the rest is cut off. */
static void test_udp_path_cut(void **state)
{
	struct rs_sock *srv = dt_bound(IP, 7175), *cli = dt_bound(IP, 0);
	struct sockaddr_in to = dt_addr(IP, 7175);
	uint8_t buf[2100];

	(void)state;
	fill(buf, sizeof buf, 5);
	assert_int_equal(cli->type->sendto(cli, buf, 2040, 0, DT_SA(to), sizeof to), 2040);
	assert_false(over_ud(cli));
	expect_dgram(srv, buf, 2032, dt_port(cli));
	dt_close(cli);
	dt_close(srv);
}

static void test_peek_truncate_eagain(void **state)
{
	struct rs_sock *srv = dt_bound(IP, 7176), *cli = dt_bound(IP, 0);
	struct sockaddr_in to = dt_addr(IP, 7176);
	uint8_t buf[64], got[64];

	(void)state;
	errno = 0;
	assert_int_equal(srv->type->recvfrom(srv, got, sizeof got, MSG_DONTWAIT, NULL, NULL), -1);
	assert_int_equal(errno, EAGAIN);
	fill(buf, 40, 7);
	assert_int_equal(cli->type->sendto(cli, buf, 40, 0, DT_SA(to), sizeof to), 40);
	memset(got, 0, sizeof got);
	assert_int_equal(srv->type->recvfrom(srv, got, sizeof got, MSG_PEEK, NULL, NULL), 40);
	assert_memory_equal(got, buf, 40);
	/* the peeked datagram is still there, now cut to 10 bytes and gone */
	memset(got, 0, sizeof got);
	assert_int_equal(srv->type->recvfrom(srv, got, 10, 0, NULL, NULL), 10);
	assert_memory_equal(got, buf, 10);
	assert_int_equal(got[10], 0);
	errno = 0;
	assert_int_equal(srv->type->recvfrom(srv, got, sizeof got, MSG_DONTWAIT, NULL, NULL), -1);
	assert_int_equal(errno, EAGAIN);
	/* O_NONBLOCK: the same without the flag */
	assert_int_equal(srv->type->fcntl(srv, F_SETFL, O_NONBLOCK), 0);
	assert_int_equal(srv->type->fcntl(srv, F_GETFL, 0), O_NONBLOCK);
	errno = 0;
	assert_int_equal(srv->type->recvfrom(srv, got, sizeof got, 0, NULL, NULL), -1);
	assert_int_equal(errno, EAGAIN);
	assert_int_equal(srv->type->fcntl(srv, F_SETFL, 0), 0);
	dt_close(cli);
	dt_close(srv);
}

/* rsend/rrecv after rconnect: the connected peer is the destination, and recvv fills the
 * first iovec only. */
static void test_connect_send_recvv(void **state)
{
	struct rs_sock *srv = dt_bound(IP, 7177), *cli = dt_new();
	struct sockaddr_in to = dt_addr(IP, 7177), peer;
	socklen_t len = sizeof peer;
	uint8_t a[8] = "abcdefg", b[8] = "1234567", got1[4], got2[16];
	struct iovec iov[2] = { { a, 7 }, { b, 7 } }, riov[2] = { { got1, 4 }, { got2, 16 } };

	(void)state;
	errno = 0;
	assert_int_equal(cli->type->getpeername(cli, DT_SA(peer), &len), -1);
	assert_int_equal(errno, ENOTCONN);
	errno = 0;
	assert_int_equal(cli->type->sendto(cli, a, 1, 0, NULL, 0), -1);
	assert_int_equal(errno, EDESTADDRREQ);
	assert_int_equal(cli->type->connect(cli, DT_SA(to), sizeof to), 0);
	assert_int_equal(cli->type->getpeername(cli, DT_SA(peer), &len), 0);
	assert_int_equal(len, sizeof peer);
	assert_int_equal(ntohs(peer.sin_port), 7177);
	assert_int_equal(cli->type->sendv(cli, iov, 2, 0), 14);
	assert_int_equal(srv->type->recvv(srv, riov, 2, 0), 4);
	assert_memory_equal(got1, "abcd", 4);
	wait_ud(cli);
	assert_int_equal(cli->type->sendto(cli, b, 7, 0, NULL, 0), 7);
	assert_int_equal(srv->type->recvfrom(srv, got2, sizeof got2, 0, NULL, NULL), 7);
	assert_memory_equal(got2, b, 7);
	dt_close(cli);
	dt_close(srv);
}

static void test_options(void **state)
{
	struct rs_sock *s = dt_new();
	socklen_t len = sizeof(int);
	uint32_t v;
	int x;

	(void)state;
	/* the defaults: rsocket(7)'s, the buffers from mem_default and wmem_default */
	assert_int_equal(s->type->getsockopt(s, SOL_RDMA, RDMA_SQSIZE, &x, &len), 0);
	assert_int_equal(x, 384);
	assert_int_equal(s->type->getsockopt(s, SOL_SOCKET, SO_RCVBUF, &x, &len), 0);
	assert_int_equal(x, 131072);
	v = 100;
	assert_int_equal(s->type->setsockopt(s, SOL_RDMA, RDMA_SQSIZE, &v, sizeof v), 0);
	v = 20;
	assert_int_equal(s->type->setsockopt(s, SOL_RDMA, RDMA_RQSIZE, &v, sizeof v), 0);
	v = 128;
	assert_int_equal(s->type->setsockopt(s, SOL_RDMA, RDMA_INLINE, &v, sizeof v), 0);
	errno = 0;
	assert_int_equal(s->type->setsockopt(s, SOL_RDMA, 99, &v, sizeof v), -1);
	assert_int_equal(errno, ENOTSUP);
	v = 16384;	/* kept doubled, as the kernel's */
	assert_int_equal(s->type->setsockopt(s, SOL_SOCKET, SO_RCVBUF, &v, sizeof v), 0);
	assert_int_equal(s->type->getsockopt(s, SOL_SOCKET, SO_RCVBUF, &x, &len), 0);
	assert_int_equal(x, 32768);
	x = 1;
	assert_int_equal(s->type->setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &x, sizeof x), 0);
	x = 0;
	assert_int_equal(s->type->getsockopt(s, SOL_SOCKET, SO_REUSEADDR, &x, &len), 0);
	assert_int_equal(x, 1);
	/* other levels go to the UDP socket first, which has no TCP options */
	errno = 0;
	assert_int_equal(s->type->setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &x, sizeof x), -1);
	assert_int_equal(errno, ENOPROTOOPT);
	errno = 0;
	assert_int_equal(s->type->getsockopt(s, SOL_SOCKET, SO_PRIORITY, &x, &len), -1);
	assert_int_equal(errno, ENOTSUP);
	/* the endpoint: queues bounded by the buffers (32768 / 2048 = 16 receive slots) */
	struct sockaddr_in a = dt_addr(IP, 0);
	assert_int_equal(s->type->bind(s, DT_SA(a), sizeof a), 0);
	assert_int_equal(s->type->getsockopt(s, SOL_RDMA, RDMA_RQSIZE, &x, &len), 0);
	assert_int_equal(x, 16);
	assert_int_equal(s->type->getsockopt(s, SOL_RDMA, RDMA_SQSIZE, &x, &len), 0);
	assert_int_equal(x, 64);
	assert_int_equal(s->type->getsockopt(s, SOL_SOCKET, SO_SNDBUF, &x, &len), 0);
	assert_int_equal(x, 131072);
	errno = 0;
	v = 8;
	assert_int_equal(s->type->setsockopt(s, SOL_RDMA, RDMA_SQSIZE, &v, sizeof v), -1);
	assert_int_equal(errno, EINVAL);
	dt_close(s);
}

static void test_refused_calls(void **state)
{
	struct rs_sock *s = dt_new();
	struct sockaddr_in a, any = dt_addr("0.0.0.0", 0);
	socklen_t len = sizeof a;
	uint8_t buf[8];

	(void)state;
	errno = 0;
	assert_int_equal(s->type->recvfrom(s, buf, 8, MSG_DONTWAIT, NULL, NULL), -1);
	assert_int_equal(errno, EINVAL);	/* no endpoint before bind, connect or sendto */
	assert_int_equal(s->type->getsockname(s, DT_SA(a), &len), 0);
	assert_int_equal(a.sin_family, AF_INET);
	assert_int_equal(a.sin_port, 0);
	assert_int_equal(a.sin_addr.s_addr, 0);
	errno = 0;
	assert_int_equal(s->type->listen(s, 5), -1);
	assert_int_equal(errno, EOPNOTSUPP);
	errno = 0;
	assert_int_equal(s->type->accept(s, NULL, NULL), -1);
	assert_int_equal(errno, EBADF);
	errno = 0;
	assert_int_equal(s->type->iomap(s, buf, 8, PROT_WRITE, 0, -1), -1);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(s->type->iounmap(s, buf, 8), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(s->type->iowrite(s, buf, 8, 0, 0), 0);
	errno = 0;
	assert_int_equal(s->type->fcntl(s, F_DUPFD, 0), -1);
	assert_int_equal(errno, ENOTSUP);
	assert_int_equal(s->type->shutdown(s, SHUT_RDWR), 0);
	/* the wildcard: getsockname answers it with the port given */
	assert_int_equal(s->type->bind(s, DT_SA(any), sizeof any), 0);
	len = sizeof a;
	assert_int_equal(s->type->getsockname(s, DT_SA(a), &len), 0);
	assert_int_equal(a.sin_addr.s_addr, 0);
	assert_int_not_equal(a.sin_port, 0);
	errno = 0;
	assert_int_equal(s->type->bind(s, DT_SA(any), sizeof any), -1);
	assert_int_equal(errno, EINVAL);
	dt_close(s);
}

/* A fabric host no rsocket of this process serves (ib-b): refused, never sent. */
static void test_unserved_destination(void **state)
{
	struct rs_sock *s = dt_bound(IP, 0), *t = dt_bound(IP, 7178), *u = dt_new();
	struct sockaddr_in b = dt_addr("192.0.2.130", 7178), taken = dt_addr(IP, 7178);

	(void)state;
	errno = 0;
	assert_int_equal(s->type->sendto(s, "x", 1, 0, DT_SA(b), sizeof b), -1);
	assert_int_equal(errno, ENETUNREACH);
	errno = 0;
	assert_int_equal(u->type->bind(u, DT_SA(taken), sizeof taken), -1);
	assert_int_equal(errno, EADDRINUSE);
	dt_close(u);
	dt_close(t);
	dt_close(s);
}

/* rpoll's steps: check, arm (the epoll fd), the kernel's poll, drain, check. */
static void test_poll_steps(void **state)
{
	struct rs_sock *srv = dt_bound(IP, 7179), *cli = dt_bound(IP, 0);
	struct sockaddr_in to = dt_addr(IP, 7179);
	struct pollfd kfd;
	uint8_t buf[16];
	short revents;
	int i;

	(void)state;
	assert_int_equal(srv->type->poll_check(srv, POLLIN | POLLOUT), POLLOUT);
	assert_int_equal(srv->type->poll_check(srv, POLLIN), 0);
	assert_int_equal(srv->type->poll_arm(srv, POLLIN, &kfd), 0);
	assert_int_equal(kfd.fd, ds_of(srv)->epfd);
	assert_int_equal(kfd.events, POLLIN);
	assert_int_equal(poll(&kfd, 1, 0), 0);
	assert_int_equal(cli->type->sendto(cli, "ping", 4, 0, DT_SA(to), sizeof to), 4);
	/* as rpoll: the first event may be the forwarding send's completion, then re-arm */
	for (i = 0; i < 10; i++) {
		assert_int_equal(poll(&kfd, 1, 5000), 1);
		assert_int_equal(kfd.revents, POLLIN);
		srv->type->poll_drain(srv, &kfd);
		if (srv->type->poll_check(srv, POLLIN) == POLLIN)
			break;
		revents = srv->type->poll_arm(srv, POLLIN, &kfd);
		if (revents == POLLIN)
			break;
		assert_int_equal(revents, 0);
	}
	assert_true(i < 10);
	assert_int_equal(srv->type->recvfrom(srv, buf, sizeof buf, 0, NULL, NULL), 4);
	assert_int_equal(srv->type->poll_check(srv, POLLIN), 0);
	dt_close(cli);
	dt_close(srv);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_udp_then_ud),
		cmocka_unit_test(test_udp_path_cut),
		cmocka_unit_test(test_peek_truncate_eagain),
		cmocka_unit_test(test_connect_send_recvv),
		cmocka_unit_test(test_options),
		cmocka_unit_test(test_refused_calls),
		cmocka_unit_test(test_unserved_destination),
		cmocka_unit_test(test_poll_steps),
	};

	(void)argc;
	verbs_test_init(argv, "ib.fabric", NULL, "ib-a");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
