/* sweep_rs: one stream rsocket connection's life through librdmacm's rsocket calls, in one
 * process on the emulator (node A of rxe-ref2 connecting to itself), as the failure sweep's
 * scenario (docs/failure-sweep.md).
 *
 * Phases: listen (rsocket, RDMA_IOMAPSIZE, rbind, rlisten), connect (the client's rsocket,
 * RDMA_IOMAPSIZE and blocking rconnect; raccept once rpoll shows the listener readable),
 * data (64 KiB from the client to the server, then 64 KiB back, 16 KiB at a time, every byte
 * checked), iomap (riomap of 4 KiB on the server, riowrite of 4 KiB from the client, every
 * byte checked, riounmap) and close (rshutdown of the client, the server reads the end,
 * rshutdown of the server, rclose of both ends and of the listener).
 *
 * SWEEP_FAIL=kind:N (failnth.h kinds) makes the N-th call of that kind after the fabric is
 * attached fail, in the first of two connections made one after the other; the second, with
 * nothing failing, must succeed whole. The oracle, per r* call: its result, or -1 with the
 * injected kind's errno (ENOMEM for memory and mappings, EMFILE for eventfds and sockets,
 * EAGAIN for threads), or the errno rdma-core v44's rsocket.c gives for that failure
 * underneath (translated[] names the function). After an accepted failure the phase's
 * sockets are rclosed and the phase is run again, and it must succeed; a failure of data or
 * iomap makes the connection again. Exit 0 and "sweep-result: ok" when every phase succeeded
 * and every byte arrived; 1 with "sweep-result: FAIL step: why" otherwise. The line before
 * it, "sweep-count: alloc=A mmap=M eventfd=E socket=S thread=T", counts the calls of each
 * kind the first connection made. Every wait is an rpoll of at most 120 s of the emulator's
 * clock; a blocking rconnect ends by the CM's own timeouts. */
#include "config.h"

#include <arpa/inet.h>
#include <poll.h>
#include <rdma/rsocket.h>
#include <sys/socket.h>

#include "emu/verbs/tests/verbs_test.h"
#include "faults/sweep_common.h"

#define PORT 7472
#define ADDR "192.0.2.65"
#define LEN (64 * 1024)
#define CHUNK (16 * 1024)
#define MAPLEN 4096
#define WAIT_MS 120000
#define TRIES 3


/* Errors of rdma-core v44 that stand for a resource failure underneath: where rsocket.c
 * turns the failure of a call it makes into an errno of its own, or where the failure of
 * one side reaches its peer. */
static const struct sweep_translation translated[] = {
	/* rbind() passes rdma_bind_addr()'s errno on: ENODEV when cma.c's
	 * sync_devices_list() or ucma_init_device() fails */
	{ "rbind", ENODEV, "rbind: rdma_bind_addr's device list or open" },
	/* rs_do_connect() passes rdma_resolve_addr()'s errno on (the same ENODEV) */
	{ "rconnect", ENODEV, "rs_do_connect: rdma_resolve_addr's device list or open" },
	/* rs_accept(): a request the listener could not take is rdma_reject()ed; the client's
	 * ucma_complete() in rs_do_connect() gives ECONNREFUSED for the REJECTED event */
	{ "rconnect", ECONNREFUSED, "rs_accept: rdma_reject of a request not taken" },
	/* rs_do_connect() waits in ucma_complete(), which gives an event's status -1 (cma.c's
	 * own processing of ADDR_RESOLVED, ROUTE_RESOLVED or the connect response failed:
	 * ucma_process_addr_resolved(), ucma_process_route_resolved(),
	 * ucma_process_conn_resp()) as ERR(-status), EPERM */
	{ "rconnect", EPERM, "rs_do_connect: ucma_complete of status -1" },
	/* rsocket() passes rdma_create_id()'s errno on: ENOMEM whatever failed in cma.c's
	 * ucma_alloc_id(), the sync id's rdma_create_event_channel() among it */
	{ "rsocket", ENOMEM, "rsocket: rdma_create_id's ucma_alloc_id" },
	/* rs_poll_cq(): a completion in error (a send's LOC_QP_OP_ERR, its packet's memory
	 * failed) puts the rsocket in rs_error with err EIO, which SO_ERROR gives; rs_poll_rs()
	 * shows it as POLLERR, and the data the sender had taken never arrives */
	{ "rrecv", EIO, "rs_poll_cq: the sender's completion in error" },
	/* rsend() on an rsocket in rs_error: ECONNRESET (rs_send(), rs_send_iomaps()) */
	{ "rsend", ECONNRESET, "rs_send: rs_error after a completion in error" },
};

/* A step failed with err: accept it (once per run: the injection fails one call) when it is
 * the injected resource's error or rdma-core's translation of it, else the run fails. */
static void accept_failure(const char *step, int err)
{
	/* a blocking call waiting for what an injected failure lost as the real stack loses it
	 * (emu_fail_lost) waits forever there; the emulator's clock tells it with EDEADLK */
	if (err == EDEADLK && emu_fail_lost_what() && !sweep_failures) {
		printf("sweep-lost: %s: %s: EDEADLK\n", step, emu_fail_lost_what());
		sweep_failures++;
		return;
	}
	sweep_accept(step, err, translated, sizeof(translated) / sizeof(*translated));
}

/* The same for a call that returns a socket, -1 with errno. */
#define TRYS(step, lhs, expr)                                                                  \
	do {                                                                                   \
		errno = 0;                                                                     \
		if (((lhs) = (expr)) < 0) {                                                    \
			accept_failure(step, errno);                                           \
			return -1;                                                             \
		}                                                                              \
	} while (0)

static int lsock = -1, csock = -1, asock = -1;
static uint8_t cbuf[LEN], sbuf[LEN];
static uint8_t target[MAPLEN] __attribute__((aligned(4096)));

/* The peer of a transfer in the error state: rs_poll_rs() shows POLLERR once a completion of
 * the peer's failed (its QP went to the error state: a packet whose memory failed completes
 * its send with LOC_QP_OP_ERR, as rxe_requester() does), and SO_ERROR gives rs_poll_cq()'s
 * EIO. The data it had taken will never arrive: the failure is the peer's. 0 when it is not
 * in error. */
static int peer_error(const char *step, int peer)
{
	struct pollfd p = { .fd = peer, .events = 0 };
	socklen_t len = sizeof(int);
	int err = 0;

	if (peer < 0 || rpoll(&p, 1, 0) != 1 || !(p.revents & POLLERR))
		return 0;
	if (rgetsockopt(peer, SOL_SOCKET, SO_ERROR, &err, &len))
		sweep_verdict_fail(step, "SO_ERROR of the peer: %s", strerror(errno));
	accept_failure(step, err);
	return -1;
}

/* Waits until rpoll shows events (or an error or hang-up) on s, watching the peer of the
 * transfer (-1: none) for its error. 0 when s showed them; -1 after an accepted failure of
 * rpoll itself or of the peer. */
static int wait_sock(const char *step, int s, short events, int peer)
{
	struct pollfd p[2] = { { .fd = s, .events = events }, { .fd = peer, .events = 0 } };
	int n;

	errno = 0;
	n = rpoll(p, peer < 0 ? 1 : 2, WAIT_MS);
	if (n < 0) {
		accept_failure(step, errno);
		return -1;
	}
	if (n > 0 && p[0].revents)
		return 0;
	if (n > 0)
		return peer_error(step, peer) ? -1 : 0;
	if (emu_fail_fired() && !sweep_failures && emu_fail_lost_what()) {
		printf("sweep-lost: %s: %s\n", step, emu_fail_lost_what());
		sweep_failures++;
		return -1;
	}
	/* rs_accept(): when rdma_accept() fails, the listen service thread rdma_reject()s and
	 * frees the new rsocket, and raccept() has nothing to return (its client may have
	 * connected: the failure came after the server's REP) */
	if (emu_fail_fired() && !sweep_failures && !strcmp(step, "raccept-wait")) {
		printf("sweep-lost: %s: rs_accept dropped the connection\n", step);
		sweep_failures++;
		return -1;
	}
	sweep_verdict_fail(step, "hang: no event 0x%x within %d ms", events, WAIT_MS);
	return -1;
}

static int phase_listen(void)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(PORT) };
	int one = 1;

	inet_pton(AF_INET, ADDR, &sin.sin_addr);
	TRYS("rsocket-listen", lsock, rsocket(AF_INET, SOCK_STREAM, 0));
	TRY("rsetsockopt-listen", rsetsockopt(lsock, SOL_RDMA, RDMA_IOMAPSIZE, &one, sizeof one));
	TRY("rbind", rbind(lsock, (struct sockaddr *)&sin, sizeof sin));
	TRY("rlisten", rlisten(lsock, 4));
	return 0;
}

static void close_sock(const char *step, int *s)
{
	int ret;

	if (*s < 0)
		return;
	ret = rclose(*s);
	if (ret)
		sweep_verdict_fail(step, "rclose %d", ret);
	*s = -1;
}

static void undo_listen(void)
{
	close_sock("rclose-listen", &lsock);
}

static int phase_connect(void)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(PORT) }, peer, self;
	socklen_t len, slen = sizeof self;
	int one = 1;

	inet_pton(AF_INET, ADDR, &sin.sin_addr);
	TRYS("rsocket", csock, rsocket(AF_INET, SOCK_STREAM, 0));
	TRY("rsetsockopt", rsetsockopt(csock, SOL_RDMA, RDMA_IOMAPSIZE, &one, sizeof one));
	TRY("rconnect", rconnect(csock, (struct sockaddr *)&sin, sizeof sin));
	if (rgetsockname(csock, (struct sockaddr *)&self, &slen))
		sweep_verdict_fail("rgetsockname", "%s", strerror(errno));
	for (;;) {
		if (wait_sock("raccept-wait", lsock, POLLIN, -1))
			return -1;
		len = sizeof peer;
		TRYS("raccept", asock, raccept(lsock, (struct sockaddr *)&peer, &len));
		if (len != sizeof peer || peer.sin_family != AF_INET ||
		    peer.sin_addr.s_addr != sin.sin_addr.s_addr)
			sweep_verdict_fail("raccept", "peer address length %u family %d", len,
				     peer.sin_family);
		/* the connection of a client given up before (whose accept finished late,
		 * when that client's rclose ended the server's wait) is closed: the one
		 * wanted comes from this client's port */
		if (peer.sin_port == self.sin_port)
			return 0;
		close_sock("rclose-stale", &asock);
	}
}

static void undo_connect(void)
{
	close_sock("rclose-client", &csock);
	close_sock("rclose-server", &asock);
}

/* len bytes of buf through s: rpoll for POLLOUT, then rsend, until all went. */
static int send_all(const char *step, int s, const uint8_t *buf, size_t len)
{
	while (len) {
		ssize_t n;

		if (wait_sock(step, s, POLLOUT, -1))
			return -1;
		errno = 0;
		n = rsend(s, buf, len, 0);
		if (n <= 0) {
			accept_failure(step, n ? errno : 0);
			return -1;
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* len bytes into buf from s: rpoll for POLLIN, then rrecv, until all came, or the sender,
 * peer, failed. An end of the stream before them fails the run. */
static int recv_all(const char *step, int s, uint8_t *buf, size_t len, int peer)
{
	while (len) {
		ssize_t n;

		if (wait_sock(step, s, POLLIN, peer))
			return -1;
		errno = 0;
		n = rrecv(s, buf, len, 0);
		if (n < 0) {
			accept_failure(step, errno);
			return -1;
		}
		if (n == 0 && peer_error(step, peer))
			return -1;
		if (n == 0)
			sweep_verdict_fail(step, "end of stream with %zu bytes to come", len);
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

static void fill(uint8_t *p, size_t len, unsigned seed)
{
	for (size_t i = 0; i < len; i++)
		p[i] = (uint8_t)(i * 7 + seed + (i >> 8));
}

/* 64 KiB each way, CHUNK at a time; the receiver takes each chunk before the next is sent,
 * so a blocking rsend always finds credits. */
static int transfer(const char *sstep, int from, const char *rstep, int to, unsigned seed)
{
	fill(cbuf, LEN, seed);
	memset(sbuf, 0, LEN);
	for (size_t off = 0; off < LEN; off += CHUNK) {
		if (send_all(sstep, from, cbuf + off, CHUNK) ||
		    recv_all(rstep, to, sbuf + off, CHUNK, from))
			return -1;
	}
	if (memcmp(cbuf, sbuf, LEN))
		sweep_verdict_fail(rstep, "the received bytes differ from the sent ones");
	return 0;
}

static int phase_data(void)
{
	if (transfer("rsend-client", csock, "rrecv-server", asock, 3))
		return -1;
	return transfer("rsend-server", asock, "rrecv-client", csock, 11);
}

/* riomap of the server's target (RDMA_IOMAPSIZE 1 on both ends), announced ahead of the
 * server's next send; riowrite of MAPLEN bytes into it; the client's next send tells the
 * server they are there. */
static int phase_iomap(void)
{
	uint8_t b[2];
	off_t off;
	size_t n;

	memset(target, 0, MAPLEN);
	errno = 0;
	off = riomap(asock, target, MAPLEN, PROT_WRITE, 0, 0);
	if (off == -1) {
		accept_failure("riomap", errno);
		return -1;
	}
	if (off != 0)
		sweep_verdict_fail("riomap", "offset %lld, expected 0", (long long)off);
	if (send_all("rsend-iomap", asock, (const uint8_t *)"go", 2) ||
	    recv_all("rrecv-iomap", csock, b, 2, asock))
		return -1;
	fill(cbuf, MAPLEN, 5);
	errno = 0;
	n = riowrite(csock, cbuf, MAPLEN, 0, 0);
	if (n != MAPLEN) {
		if (n == (size_t)-1) {
			accept_failure("riowrite", errno);
			return -1;
		}
		sweep_verdict_fail("riowrite", "wrote %zu of %d bytes", n, MAPLEN);
	}
	if (send_all("rsend-iowrite", csock, (const uint8_t *)"ok", 2) ||
	    recv_all("rrecv-iowrite", asock, b, 2, csock))
		return -1;
	if (memcmp(target, cbuf, MAPLEN))
		sweep_verdict_fail("riowrite", "the mapped bytes differ from the written ones");
	TRY("riounmap", riounmap(asock, target, MAPLEN));
	return 0;
}

/* rshutdown of the client; the server reads the end of the stream; its rshutdown. */
static int phase_close(void)
{
	uint8_t b;
	ssize_t n;

	TRY("rshutdown-client", rshutdown(csock, SHUT_RDWR));
	if (wait_sock("rrecv-end", asock, POLLIN, -1))
		return -1;
	errno = 0;
	n = rrecv(asock, &b, 1, 0);
	if (n < 0) {
		accept_failure("rrecv-end", errno);
		return -1;
	}
	if (n != 0)
		sweep_verdict_fail("rrecv-end", "read %zd bytes after the peer's shutdown", n);
	TRY("rshutdown-server", rshutdown(asock, SHUT_RDWR));
	return 0;
}

/* The connection made, carrying its data and its mapping; after an accepted failure both
 * ends are rclosed and it is made again, up to TRIES times. */
static void session(void)
{
	for (int t = 0; t < TRIES; t++) {
		if (!phase_connect() && !phase_data() && !phase_iomap())
			return;
		undo_connect();
	}
	sweep_verdict_fail("connect", "failed %d times", TRIES);
}

/* One connection's life, every socket closed at its end. */
static void connection(void)
{
	for (int t = 0; t < TRIES; t++) {
		if (!phase_listen())
			break;
		undo_listen();
		if (t == TRIES - 1)
			sweep_verdict_fail("listen", "failed %d times", TRIES);
	}
	session();
	(void)phase_close(); /* after a failure there, the ends are closed as they are */
	undo_connect();
	undo_listen();
}

int main(int argc, char **argv)
{
	(void)argc;
	/* the quiescence rule stays on: rsockets wait for completions in ibv_get_cq_event, in
	 * the kernel on the completion channel, where only that rule moves the clock to the
	 * next timer (a send's retry timer after the peer's QP is gone) */
	setenv("RDMAEMU_RSOCKET_CONF", "/nonexistent", 1); /* rdma-core's defaults */
	verbs_test_init(argv, "rxe-ref2.fabric", NULL, "A");
	sweep_count_begin();
	sweep_arm_from_env("sweep_rs");
	connection();
	sweep_count_print();
	/* the process goes on: a second connection, with nothing failing, must work whole */
	sweep_fail_kind = -1;
	connection();
	printf("sweep-result: ok\n");
	return 0;
}
