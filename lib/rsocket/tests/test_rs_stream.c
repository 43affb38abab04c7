/* SOCK_STREAM rsockets through the public calls, server and client threads in one process on
 * host rxe-ref of fixtures/rxe-ref.fabric (192.0.2.1 and 192.0.2.17 on one host): argument
 * checks, options, connections, data of every size through the receive buffer's flow
 * control, non-blocking calls, rpoll and rselect beside a pipe, shutdown, close with data in
 * flight, riomap/riowrite, a connect nobody answers, keepalives. The defaults are rdma-core's
 * (an empty $RDMAEMU_RSOCKET_CONF). Re-executes itself on the emulated libibverbs. */
#include "config.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/select.h>
#include <rdma/rsocket.h>

#include "emu/verbs/tests/verbs_test.h"

#define SERVER_IP "192.0.2.1"

static void addr_of(struct sockaddr_in *sin, const char *ip, uint16_t port)
{
	memset(sin, 0, sizeof *sin);
	sin->sin_family = AF_INET;
	sin->sin_port = htons(port);
	assert_int_equal(inet_pton(AF_INET, ip, &sin->sin_addr), 1);
}

static int stream(void)
{
	int s = rsocket(AF_INET, SOCK_STREAM, 0);

	assert_true(s >= 0);
	return s;
}

static void set_int(int s, int level, int name, int v)
{
	assert_int_equal(rsetsockopt(s, level, name, &v, sizeof v), 0);
}

static int get_int(int s, int level, int name)
{
	socklen_t len = sizeof(int);
	int v = -1;

	assert_int_equal(rgetsockopt(s, level, name, &v, &len), 0);
	assert_int_equal(len, sizeof(int));
	return v;
}

static int listener(uint16_t port, int iomap)
{
	struct sockaddr_in sin;
	int l = stream();

	if (iomap)
		set_int(l, SOL_RDMA, RDMA_IOMAPSIZE, iomap);
	addr_of(&sin, SERVER_IP, port);
	assert_int_equal(rbind(l, (struct sockaddr *)&sin, sizeof sin), 0);
	assert_int_equal(rlisten(l, 4), 0);
	return l;
}

static int connect_to(uint16_t port, int iomap)
{
	struct sockaddr_in sin;
	int c = stream();

	if (iomap)
		set_int(c, SOL_RDMA, RDMA_IOMAPSIZE, iomap);
	addr_of(&sin, SERVER_IP, port);
	if (rconnect(c, (struct sockaddr *)&sin, sizeof sin))
		fail_msg("rconnect: %s", strerror(errno));
	return c;
}

/* A connected pair: *c the client's end, *a the accepted one; *l the listener. */
static void pair(uint16_t port, int iomap, int *l, int *c, int *a)
{
	struct sockaddr_in peer;
	socklen_t len = sizeof peer;

	*l = listener(port, iomap);
	*c = connect_to(port, iomap);
	*a = raccept(*l, (struct sockaddr *)&peer, &len);
	assert_true(*a >= 0);
	assert_int_equal(len, sizeof peer);
	assert_int_equal(peer.sin_family, AF_INET);
	assert_int_equal(peer.sin_addr.s_addr, inet_addr(SERVER_IP));
}

static void send_all(int s, const uint8_t *p, size_t len)
{
	while (len) {
		ssize_t n = rsend(s, p, len, 0);

		assert_true(n > 0);
		p += n;
		len -= (size_t)n;
	}
}

static void recv_all(int s, uint8_t *p, size_t len)
{
	while (len) {
		ssize_t n = rrecv(s, p, len, 0);

		assert_true(n > 0);
		p += n;
		len -= (size_t)n;
	}
}

static void fill(uint8_t *p, size_t len, unsigned seed)
{
	for (size_t i = 0; i < len; i++)
		p[i] = (uint8_t)(i * 7 + seed + (i >> 8));
}

struct xfer {
	int s;
	uint8_t *buf;
	size_t len;
};

static void *sender(void *arg)
{
	struct xfer *x = arg;

	send_all(x->s, x->buf, x->len);
	return NULL;
}

static void test_args(void **state)
{
	(void)state;
	errno = 0;
	assert_int_equal(rsocket(AF_UNIX, SOCK_STREAM, 0), -1);
	assert_int_equal(errno, ENOTSUP);
	assert_int_equal(rsocket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0), -1);
	assert_int_equal(errno, ENOTSUP);
	assert_int_equal(rsocket(AF_INET, SOCK_RAW, 0), -1);
	assert_int_equal(errno, ENOTSUP);
	assert_int_equal(rsocket(AF_INET, SOCK_STREAM, IPPROTO_UDP), -1);
	assert_int_equal(errno, ENOTSUP);
	assert_int_equal(rsocket(AF_INET, SOCK_DGRAM, IPPROTO_TCP), -1);
	assert_int_equal(errno, ENOTSUP);
	/* 0 is stdin: never an rsocket */
	assert_int_equal(rbind(0, NULL, 0), -1);
	assert_int_equal(errno, EBADF);
	assert_int_equal(rrecv(0, NULL, 0, 0), -1);
	assert_int_equal(errno, EBADF);
	assert_int_equal(rsend(0, "", 1, 0), -1);
	assert_int_equal(errno, EBADF);
	assert_int_equal(rfcntl(0, F_GETFL), -1);
	assert_int_equal(errno, EBADF);
	assert_int_equal((ssize_t)riowrite(0, "", 1, 0, 0), -1);
	assert_int_equal(errno, EBADF);
	errno = 0;
	assert_int_equal(rclose(0), EBADF);	/* the value, errno untouched */
	assert_int_equal(errno, 0);
}

static void test_options(void **state)
{
	struct linger lg = { 0, 0 };
	socklen_t len = sizeof lg;
	int s = stream(), s6, v = 0;

	(void)state;
	assert_int_equal(get_int(s, SOL_SOCKET, SO_RCVBUF), 131072);
	assert_int_equal(get_int(s, SOL_SOCKET, SO_SNDBUF), 131072);
	assert_int_equal(get_int(s, SOL_RDMA, RDMA_SQSIZE), 384);
	assert_int_equal(get_int(s, SOL_RDMA, RDMA_RQSIZE), 384);
	assert_int_equal(get_int(s, SOL_RDMA, RDMA_INLINE), 64);
	assert_int_equal(get_int(s, SOL_RDMA, RDMA_IOMAPSIZE), 0);
	assert_int_equal(get_int(s, SOL_SOCKET, SO_ERROR), 0);
	assert_int_equal(get_int(s, SOL_SOCKET, SO_KEEPALIVE), 0);
	assert_int_equal(get_int(s, IPPROTO_TCP, TCP_NODELAY), 0);
	assert_int_equal(get_int(s, IPPROTO_TCP, TCP_MAXSEG), 2048);
	assert_int_equal(get_int(s, IPPROTO_TCP, TCP_KEEPIDLE), 0);
	assert_int_equal(rgetsockopt(s, SOL_SOCKET, SO_LINGER, &lg, &len), 0);
	assert_int_equal(lg.l_onoff, 1);
	assert_int_equal(len, sizeof lg);

	set_int(s, SOL_SOCKET, SO_RCVBUF, 1000);
	assert_int_equal(get_int(s, SOL_SOCKET, SO_RCVBUF), 2000);
	set_int(s, SOL_SOCKET, SO_SNDBUF, 100);
	assert_int_equal(get_int(s, SOL_SOCKET, SO_SNDBUF), 4096);
	set_int(s, SOL_SOCKET, SO_SNDBUF, 65536);
	assert_int_equal(get_int(s, SOL_SOCKET, SO_SNDBUF), 131072);
	set_int(s, IPPROTO_TCP, TCP_NODELAY, 1);
	assert_int_equal(get_int(s, IPPROTO_TCP, TCP_NODELAY), 1);
	set_int(s, SOL_SOCKET, SO_OOBINLINE, 1);
	assert_int_equal(get_int(s, SOL_SOCKET, SO_OOBINLINE), 1);
	set_int(s, SOL_SOCKET, SO_REUSEADDR, 1);
	assert_int_equal(get_int(s, SOL_SOCKET, SO_REUSEADDR), 1);
	lg.l_onoff = 0;
	assert_int_equal(rsetsockopt(s, SOL_SOCKET, SO_LINGER, &lg, sizeof lg), 0);
	lg.l_onoff = 7;
	assert_int_equal(rgetsockopt(s, SOL_SOCKET, SO_LINGER, &lg, &len), 0);
	assert_int_equal(lg.l_onoff, 0);
	assert_int_equal(rsetsockopt(s, IPPROTO_TCP, TCP_KEEPIDLE, &v, sizeof v), -1);
	assert_int_equal(errno, EINVAL);
	set_int(s, IPPROTO_TCP, TCP_KEEPIDLE, 5);
	assert_int_equal(get_int(s, IPPROTO_TCP, TCP_KEEPIDLE), 5);
	set_int(s, IPPROTO_TCP, TCP_KEEPCNT, 9);
	set_int(s, IPPROTO_TCP, TCP_MAXSEG, 1000);
	assert_int_equal(get_int(s, IPPROTO_TCP, TCP_MAXSEG), 2048);

	set_int(s, SOL_RDMA, RDMA_SQSIZE, 70000);
	assert_int_equal(get_int(s, SOL_RDMA, RDMA_SQSIZE), 0xFFFE);
	set_int(s, SOL_RDMA, RDMA_RQSIZE, 100);
	assert_int_equal(get_int(s, SOL_RDMA, RDMA_RQSIZE), 100);
	set_int(s, SOL_RDMA, RDMA_INLINE, 0);
	assert_int_equal(get_int(s, SOL_RDMA, RDMA_INLINE), 0);
	set_int(s, SOL_RDMA, RDMA_IOMAPSIZE, 200);
	assert_int_equal(get_int(s, SOL_RDMA, RDMA_IOMAPSIZE), 128);
	set_int(s, SOL_RDMA, RDMA_IOMAPSIZE, 1000);
	assert_int_equal(get_int(s, SOL_RDMA, RDMA_IOMAPSIZE), 768);

	assert_int_equal(rsetsockopt(s, SOL_SOCKET, SO_BROADCAST, &v, sizeof v), -1);
	assert_int_equal(errno, ENOTSUP);
	assert_int_equal(rgetsockopt(s, SOL_SOCKET, SO_BROADCAST, &v, &len), -1);
	assert_int_equal(errno, ENOTSUP);
	assert_int_equal(rsetsockopt(s, SOL_IP, IP_TOS, &v, sizeof v), -1);
	assert_int_equal(errno, ENOTSUP);
	assert_int_equal(rgetsockopt(s, SOL_RDMA, 99, &v, &len), -1);
	assert_int_equal(errno, ENOTSUP);

	assert_int_equal(rfcntl(s, F_GETFL), 0);
	assert_int_equal(rfcntl(s, F_SETFL, O_NONBLOCK), 0);
	assert_int_equal(rfcntl(s, F_GETFL), O_NONBLOCK);
	assert_int_equal(rfcntl(s, F_GETFD), -1);
	assert_int_equal(errno, ENOTSUP);
	assert_int_equal(rclose(s), 0);

	s6 = rsocket(AF_INET6, SOCK_STREAM, IPPROTO_TCP);
	assert_true(s6 >= 0);
	assert_int_equal(get_int(s6, IPPROTO_IPV6, IPV6_V6ONLY), 0);
	set_int(s6, IPPROTO_IPV6, IPV6_V6ONLY, 1);
	assert_int_equal(get_int(s6, IPPROTO_IPV6, IPV6_V6ONLY), 1);
	assert_int_equal(rclose(s6), 0);
}

/* Every size through one connection, the larger ones many times the receive buffer. */
static void test_transfer(void **state)
{
	static const size_t sizes[] = { 1, 63, 64, 65, 2048, 4096, 65536, 131072, 300001,
					1 << 20 };
	uint8_t *out = malloc(1 << 20), *in = malloc(1 << 20);
	int l, c, a, v = 1;
	pthread_t t;

	(void)state;
	pair(7401, 0, &l, &c, &a);
	assert_int_equal(rsetsockopt(c, SOL_RDMA, RDMA_SQSIZE, &v, sizeof v), -1);
	assert_int_equal(errno, EINVAL);
	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
		struct xfer x = { c, out, sizes[i] };

		fill(out, sizes[i], (unsigned)i);
		memset(in, 0, sizes[i]);
		assert_int_equal(pthread_create(&t, NULL, sender, &x), 0);
		recv_all(a, in, sizes[i]);
		assert_int_equal(pthread_join(t, NULL), 0);
		assert_memory_equal(in, out, sizes[i]);
	}
	/* and back, through rwritev and rreadv */
	{
		struct iovec iov[2] = { { out, 10 }, { out + 10, 20 } };

		fill(out, 30, 3);
		assert_int_equal(rwritev(a, iov, 2), 30);
		memset(in, 0, 30);
		iov[0].iov_base = in;
		iov[0].iov_len = 30;
		assert_int_equal(rreadv(c, iov, 1), 30);
		assert_memory_equal(in, out, 30);
	}
	assert_int_equal(rclose(c), 0);
	assert_int_equal(rclose(a), 0);
	assert_int_equal(rclose(l), 0);
	free(out);
	free(in);
}

static void test_nonblocking(void **state)
{
	struct sockaddr_in sin;
	struct pollfd p;
	int l, c, a, err;
	socklen_t len = sizeof err;
	char b[8];

	(void)state;
	l = listener(7402, 0);
	assert_int_equal(rfcntl(l, F_SETFL, O_NONBLOCK), 0);
	assert_int_equal(raccept(l, NULL, NULL), -1);
	assert_int_equal(errno, EAGAIN);
	c = stream();
	assert_int_equal(rfcntl(c, F_SETFL, O_NONBLOCK), 0);
	addr_of(&sin, SERVER_IP, 7402);
	/* EINPROGRESS, unless every step's event was already there (a local peer) */
	if (rconnect(c, (struct sockaddr *)&sin, sizeof sin))
		assert_int_equal(errno, EINPROGRESS);
	p.fd = c;
	p.events = POLLOUT;
	assert_int_equal(rpoll(&p, 1, 5000), 1);
	assert_int_equal(p.revents, POLLOUT);
	assert_int_equal(rgetsockopt(c, SOL_SOCKET, SO_ERROR, &err, &len), 0);
	assert_int_equal(err, 0);
	p.fd = l;
	p.events = POLLIN;
	assert_int_equal(rpoll(&p, 1, 5000), 1);
	assert_int_equal(p.revents, POLLIN);
	a = raccept(l, NULL, NULL);
	assert_true(a >= 0);
	assert_int_equal(rrecv(c, b, sizeof b, 0), -1);
	assert_int_equal(errno, EAGAIN);
	assert_int_equal(rrecv(a, b, sizeof b, MSG_DONTWAIT), -1);
	assert_int_equal(errno, EAGAIN);
	assert_int_equal(rsend(c, "abc", 3, 0), 3);
	p.fd = a;
	p.events = POLLIN;
	assert_int_equal(rpoll(&p, 1, 5000), 1);
	assert_int_equal(rrecv(a, b, sizeof b, MSG_PEEK), 3);
	assert_int_equal(rrecv(a, b, sizeof b, 0), 3);
	assert_memory_equal(b, "abc", 3);
	assert_int_equal(rclose(c), 0);
	assert_int_equal(rclose(a), 0);
	assert_int_equal(rclose(l), 0);
}

static void test_poll_select(void **state)
{
	struct pollfd p[2];
	struct timeval tv = { 5, 0 };
	fd_set rd;
	int l, c, a, pfd[2];
	char b[4];

	(void)state;
	pair(7403, 0, &l, &c, &a);
	assert_int_equal(pipe(pfd), 0);
	p[0].fd = a;
	p[0].events = POLLIN;
	p[1].fd = pfd[0];
	p[1].events = POLLIN;
	assert_int_equal(rpoll(p, 2, 0), 0);
	assert_int_equal(rpoll(p, 2, 20), 0);
	assert_int_equal(write(pfd[1], "x", 1), 1);
	assert_int_equal(rpoll(p, 2, 5000), 1);
	assert_int_equal(p[0].revents, 0);
	assert_int_equal(p[1].revents, POLLIN);
	assert_int_equal(read(pfd[0], b, 1), 1);
	assert_int_equal(rsend(c, "hi", 2, 0), 2);
	assert_int_equal(rpoll(p, 2, 5000), 1);
	assert_int_equal(p[0].revents, POLLIN);
	assert_int_equal(p[1].revents, 0);

	FD_ZERO(&rd);
	FD_SET(a, &rd);
	FD_SET(pfd[0], &rd);
	assert_int_equal(rselect((a > pfd[0] ? a : pfd[0]) + 1, &rd, NULL, NULL, &tv), 1);
	assert_true(FD_ISSET(a, &rd));
	assert_false(FD_ISSET(pfd[0], &rd));
	assert_int_equal(rrecv(a, b, sizeof b, 0), 2);
	FD_ZERO(&rd);
	FD_SET(a, &rd);
	FD_SET(pfd[0], &rd);
	tv.tv_sec = 0;
	tv.tv_usec = 10000;
	assert_int_equal(rselect((a > pfd[0] ? a : pfd[0]) + 1, &rd, NULL, NULL, &tv), 0);
	assert_false(FD_ISSET(a, &rd));
	close(pfd[0]);
	close(pfd[1]);
	assert_int_equal(rclose(c), 0);
	assert_int_equal(rclose(a), 0);
	assert_int_equal(rclose(l), 0);
}

static void test_shutdown(void **state)
{
	uint8_t b[16];
	struct pollfd p;
	int l, c, a;

	(void)state;
	pair(7404, 0, &l, &c, &a);
	/* SHUT_RD here: reads end at once, writes go on */
	assert_int_equal(rshutdown(a, SHUT_RD), 0);
	assert_int_equal(rrecv(a, b, sizeof b, 0), 0);
	assert_int_equal(rsend(a, "r", 1, 0), 1);
	assert_int_equal(rrecv(c, b, sizeof b, 0), 1);
	/* SHUT_WR at the client: the server reads what was sent, then 0 */
	assert_int_equal(rsend(c, "abcd", 4, 0), 4);
	assert_int_equal(rshutdown(c, SHUT_WR), 0);
	p.fd = a;
	p.events = POLLIN;
	assert_int_equal(rpoll(&p, 1, 5000), 1);
	assert_int_equal(p.revents, POLLIN);	/* still connected: no POLLHUP */
	assert_int_equal(rrecv(a, b, sizeof b, 0), 4);
	assert_int_equal(rrecv(a, b, sizeof b, 0), 0);
	assert_int_equal(rclose(c), 0);
	assert_int_equal(rclose(a), 0);

	/* SHUT_RDWR: the peer sees the end of the stream and POLLHUP */
	c = connect_to(7404, 0);
	a = raccept(l, NULL, NULL);
	assert_true(a >= 0);
	assert_int_equal(rshutdown(c, SHUT_RDWR), 0);
	p.fd = a;
	p.events = POLLIN;
	assert_int_equal(rpoll(&p, 1, 5000), 1);
	assert_int_equal(p.revents, POLLIN | POLLHUP);
	assert_int_equal(rrecv(a, b, sizeof b, 0), 0);
	assert_int_equal(rclose(c), 0);
	assert_int_equal(rclose(a), 0);
	assert_int_equal(rclose(l), 0);
}

/* rclose right after the sends: the peer still gets every byte, then the end. */
static void test_close_pending(void **state)
{
	uint8_t *out = malloc(65536), *in = malloc(65536 + 1);
	int l, c, a;

	(void)state;
	pair(7405, 0, &l, &c, &a);
	fill(out, 65536, 9);
	send_all(c, out, 65536);
	assert_int_equal(rclose(c), 0);
	recv_all(a, in, 65536);
	assert_memory_equal(in, out, 65536);
	assert_int_equal(rrecv(a, in, 1, 0), 0);
	assert_int_equal(rclose(a), 0);
	assert_int_equal(rclose(l), 0);
	free(out);
	free(in);
}

static void test_iomap(void **state)
{
	uint8_t *target = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			       -1, 0), data[4096], b[4];
	int l, c, a;

	(void)state;
	assert_true(target != MAP_FAILED);
	memset(target, 0, 8192);
	pair(7406, 1, &l, &c, &a);
	assert_int_equal(riomap(a, target, 4096, PROT_READ, 0, 0), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(riomap(a, target, 4096, PROT_WRITE, 0, 0), 0);
	/* a second mapping has no slot left in the peer's iomap of 1 */
	assert_int_equal(riomap(a, target + 4096, 4096, PROT_WRITE, 0, 4096), -1);
	assert_int_equal(errno, ENOMEM);
	/* the mapping travels ahead of the next send */
	assert_int_equal(rsend(a, "go", 2, 0), 2);
	assert_int_equal(rrecv(c, b, 2, 0), 2);
	fill(data, sizeof data, 5);
	assert_int_equal(riowrite(c, data, sizeof data, 0, 0), sizeof data);
	assert_int_equal(riowrite(c, data, 16, 8192, 0), 0);	/* no mapping there */
	assert_int_equal(rsend(c, "ok", 2, 0), 2);
	assert_int_equal(rrecv(a, b, 2, 0), 2);
	assert_memory_equal(target, data, sizeof data);
	assert_int_equal(riounmap(a, target, 4096), 0);
	assert_int_equal(riounmap(a, target, 4096), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(rclose(c), 0);
	assert_int_equal(rclose(a), 0);
	assert_int_equal(rclose(l), 0);
	munmap(target, 8192);
}

/* Nobody listens on the port: the CM's reject (the emulated kernel answers as rxe's). */
static void test_refused(void **state)
{
	struct sockaddr_in sin;
	int c = stream();

	(void)state;
	addr_of(&sin, SERVER_IP, 7499);
	assert_int_equal(rconnect(c, (struct sockaddr *)&sin, sizeof sin), -1);
	assert_int_equal(errno, ECONNREFUSED);
	assert_int_equal(get_int(c, SOL_SOCKET, SO_ERROR), ECONNREFUSED);
	assert_int_equal(get_int(c, SOL_SOCKET, SO_ERROR), 0);
	assert_int_equal(rconnect(c, (struct sockaddr *)&sin, sizeof sin), -1);
	assert_int_equal(errno, ENOTCONN);
	assert_int_equal(rclose(c), 0);
}

/* Keepalives every second on both ends for a while; the connection carries data after. */
static void test_keepalive(void **state)
{
	struct timespec ts = { 2, 500000000 };
	uint8_t b[3];
	int l, c, a;

	(void)state;
	pair(7407, 0, &l, &c, &a);
	set_int(c, IPPROTO_TCP, TCP_KEEPIDLE, 1);
	set_int(c, SOL_SOCKET, SO_KEEPALIVE, 1);
	assert_int_equal(get_int(c, SOL_SOCKET, SO_KEEPALIVE), 1);
	set_int(a, SOL_SOCKET, SO_KEEPALIVE, 1);
	set_int(a, IPPROTO_TCP, TCP_KEEPIDLE, 1);
	nanosleep(&ts, NULL);
	assert_int_equal(rsend(c, "abc", 3, 0), 3);
	assert_int_equal(rrecv(a, b, 3, MSG_WAITALL), 3);
	assert_int_equal(rsend(a, "xyz", 3, 0), 3);
	assert_int_equal(rrecv(c, b, 3, MSG_WAITALL), 3);
	assert_memory_equal(b, "xyz", 3);
	set_int(c, SOL_SOCKET, SO_KEEPALIVE, 0);
	assert_int_equal(get_int(c, SOL_SOCKET, SO_KEEPALIVE), 0);
	assert_int_equal(rclose(c), 0);
	assert_int_equal(rclose(a), 0);
	assert_int_equal(rclose(l), 0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_args),
		cmocka_unit_test(test_options),
		cmocka_unit_test(test_transfer),
		cmocka_unit_test(test_nonblocking),
		cmocka_unit_test(test_poll_select),
		cmocka_unit_test(test_shutdown),
		cmocka_unit_test(test_close_pending),
		cmocka_unit_test(test_iomap),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_keepalive),
	};
	char dir[] = "/tmp/rs-conf.XXXXXX";

	(void)argc;
	if (!getenv(VT_CHILD_ENV)) {
		if (!mkdtemp(dir))
			return 99;
		setenv("RDMAEMU_RSOCKET_CONF", dir, 1);
	}
	verbs_test_init(argv, "rxe-ref.fabric", NULL, NULL);
	{
		int ret = cmocka_run_group_tests(tests, NULL, NULL);
		const char *conf = getenv("RDMAEMU_RSOCKET_CONF");

		if (conf)
			rmdir(conf);
		return ret;
	}
}
