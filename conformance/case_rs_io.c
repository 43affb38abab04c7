/* RS: the rsocket data path: transfers both ways with exact bytes (sizes up to 32 times the
 * 128 KiB receive buffer), the MSG_* flags, rpoll/rselect over rsockets and ordinary fds
 * together, rshutdown of each direction and rclose. Expected values are the reference VM's
 * (rdma-core v44 on kernel rxe 6.1); the pair is a loopback connection in the case's process, a second
 * thread moving the other direction where a call would block. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/select.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "conformance/cm_util.h"
#include "conformance/conformance.h"
#include "conformance/rs_util.h"

/* ---- transfers ---- */

struct xfer_row {
	size_t len, chunk;
};

static void xfer_row(const struct conf_case *c)
{
	const struct xfer_row *r = c->data;
	int l, a, p;

	rs_pair(c->row, &l, &a, &p);
	conf_stimulus("%zu bytes each way in rsend calls of %zu bytes", r->len, r->chunk);
	rs_one_way("active -> passive", a, p, r->len, r->chunk, 1);
	rs_one_way("passive -> active", p, a, r->len, r->chunk, 2);
	rs_api()->close(a);
	rs_api()->close(p);
	rs_api()->close(l);
	conf_note("%zu bytes each way, every byte as sent", r->len);
}

static const struct xfer_row x1 = { 1, 1 }, x64 = { 64, 64 }, x65 = { 65, 65 },
	x2048 = { 2048, 2048 }, x4k = { 4096, 4096 }, x64k = { 65536, 65536 },
	x128k = { 131072, 131072 }, x1m = { 1048576, 1048576 }, x1m_odd = { 1048576, 1000 },
	x4m = { 4194304, 4194304 };

/* MSG_WAITALL: one rrecv returns the whole length, sent in ten pieces. */
static void waitall(const struct conf_case *c)
{
	const size_t len = 100000;
	uint8_t *out = rs_xmalloc(len), *in = rs_xmalloc(len);
	struct rs_sender s;
	ssize_t n;
	int l, a, p;

	rs_pair(c->row, &l, &a, &p);
	conf_stimulus("rrecv(%zu, MSG_WAITALL) while the peer sends 10 x %zu", len, len / 10);
	rs_fill(out, len, 3);
	rs_sender_start(&s, a, out, len, len / 10);
	n = rs_api()->recv(p, in, len, MSG_WAITALL);
	rs_sender_join(&s, "sender");
	RS_INT("rrecv MSG_WAITALL", n, len);
	RS_INT("first wrong byte", rs_check(in, len, 3), len);
	free(out);
	free(in);
	rs_api()->close(a);
	rs_api()->close(p);
	rs_api()->close(l);
	conf_note("%zu in one call", len);
}

static void peek(const struct conf_case *c)
{
	const struct rs_calls *rs = rs_api();
	uint8_t out[100], in[100];
	int l, a, p;

	rs_pair(c->row, &l, &a, &p);
	conf_stimulus("100 bytes sent; rrecv(50, MSG_PEEK) twice, then rrecv(100)");
	rs_fill(out, sizeof out, 4);
	RS_INT("rsend", rs->send(a, out, sizeof out, 0), 100);
	RS_INT("rpoll POLLIN", rs_poll1(p, POLLIN, 5000), POLLIN);
	memset(in, 0, sizeof in);
	RS_INT("rrecv MSG_PEEK", rs->recv(p, in, 50, MSG_PEEK), 50);
	RS_INT("peeked bytes", rs_check(in, 50, 4), 50);
	memset(in, 0, sizeof in);
	RS_INT("rrecv MSG_PEEK again", rs->recv(p, in, 50, MSG_PEEK), 50);
	RS_INT("peeked bytes again", rs_check(in, 50, 4), 50);
	memset(in, 0, sizeof in);
	RS_INT("rrecv", rs->recv(p, in, sizeof in, 0), 100);
	RS_INT("bytes", rs_check(in, 100, 4), 100);
	rs->close(a);
	rs->close(p);
	rs->close(l);
	conf_note("50, 50 (the same bytes), then 100");
}

static void eagain(const struct conf_case *c)
{
	const struct rs_calls *rs = rs_api();
	uint8_t b[16];
	int l, a, p, ret, e;

	rs_pair(c->row, &l, &a, &p);
	conf_stimulus("no data: rrecv MSG_DONTWAIT; O_NONBLOCK rrecv; rpoll POLLIN 0 ms");
	errno = 0;
	ret = (int)rs->recv(p, b, sizeof b, MSG_DONTWAIT);
	e = errno;
	CM_EXPECT_FAIL("rrecv MSG_DONTWAIT", ret, e, EAGAIN);
	rs->fcntl(p, F_SETFL, O_NONBLOCK);
	errno = 0;
	ret = (int)rs->recv(p, b, sizeof b, 0);
	e = errno;
	CM_EXPECT_FAIL("O_NONBLOCK rrecv", ret, e, EAGAIN);
	RS_INT("rpoll POLLIN", rs_poll1(p, POLLIN, 0), 0);
	RS_HEX("rpoll POLLIN|POLLOUT", rs_poll1(p, POLLIN | POLLOUT, 0), POLLOUT);
	rs->close(a);
	rs->close(p);
	rs->close(l);
	conf_note("-1 EAGAIN twice; rpoll 0; POLLOUT only");
}

/* Non-blocking rsend to a peer that does not read: the send window closes (EAGAIN) after at
 * most the peer's receive buffer, and what was accepted arrives whole. */
static void send_eagain(const struct conf_case *c)
{
	const struct rs_calls *rs = rs_api();
	const size_t cap = 1 << 20;
	uint8_t *out = rs_xmalloc(cap), *in = rs_xmalloc(cap);
	size_t total = 0, got;
	ssize_t n;
	int l, a, p, e = 0, err;

	rs_pair(c->row, &l, &a, &p);
	conf_stimulus("rsend(4096, MSG_DONTWAIT) until it fails, the peer not reading");
	rs_fill(out, cap, 5);
	while (total < cap) {
		errno = 0;
		n = rs->send(a, out + total, 4096, MSG_DONTWAIT);
		if (n <= 0) {
			e = errno;
			break;
		}
		total += (size_t)n;
	}
	EXPECT_ERRNO("the failing rsend", e, EAGAIN);
	/* the peer's 128 KiB receive buffer is offered in two halves; the second comes with
	 * the peer's first read */
	RS_INT("bytes accepted before EAGAIN", total, 65536);
	got = rs_recv_all(p, in, total, &err);
	RS_INT("received", got, total);
	RS_INT("first wrong byte", rs_check(in, got, 5), got);
	RS_HEX("rpoll POLLOUT after the peer read", rs_poll1(a, POLLOUT, 5000), POLLOUT);
	free(out);
	free(in);
	rs->close(a);
	rs->close(p);
	rs->close(l);
	conf_note("EAGAIN after %zu bytes; all of them arrive", total);
}

/* ---- rpoll, rselect ---- */

static void poll_mixed(const struct conf_case *c)
{
	const struct rs_calls *rs = rs_api();
	struct pollfd f[4];
	int l, a, p, pipefd[2], n;
	char b = 'p';

	rs_pair(c->row, &l, &a, &p);
	if (pipe(pipefd))
		conf_fatal("pipe");
	conf_stimulus("rpoll {active POLLIN, pipe POLLIN, passive POLLOUT, pipe's write end "
		      "POLLOUT}, before and after a byte on each");
	f[0] = (struct pollfd){ .fd = a, .events = POLLIN };
	f[1] = (struct pollfd){ .fd = pipefd[0], .events = POLLIN };
	f[2] = (struct pollfd){ .fd = p, .events = POLLOUT };
	f[3] = (struct pollfd){ .fd = pipefd[1], .events = POLLOUT };
	n = rs->poll(f, 2, 100);
	RS_INT("rpoll of the two POLLIN, nothing ready", n, 0);
	RS_HEX("active revents", f[0].revents, 0);
	RS_HEX("pipe revents", f[1].revents, 0);
	n = rs->poll(f, 4, 1000);
	RS_INT("rpoll of all four", n, 2);
	RS_HEX("passive revents", f[2].revents, POLLOUT);
	RS_HEX("pipe write end revents", f[3].revents, POLLOUT);
	if (write(pipefd[1], &b, 1) != 1 || rs->send(p, &b, 1, 0) != 1)
		conf_fatal("write/rsend");
	for (int i = 0; i < 50; i++) {
		n = rs->poll(f, 2, 100);
		if (n == 2)
			break;
	}
	RS_INT("rpoll after a byte each", n, 2);
	RS_HEX("active revents", f[0].revents, POLLIN);
	RS_HEX("pipe revents", f[1].revents, POLLIN);
	close(pipefd[0]);
	close(pipefd[1]);
	rs->close(a);
	rs->close(p);
	rs->close(l);
	conf_note("0; 2 (POLLOUT, POLLOUT); 2 (POLLIN, POLLIN)");
}

static void select_mixed(const struct conf_case *c)
{
	const struct rs_calls *rs = rs_api();
	struct timeval tv;
	fd_set r, w;
	int l, a, p, pipefd[2], n, nfds;
	char b = 's';

	rs_pair(c->row, &l, &a, &p);
	if (pipe(pipefd))
		conf_fatal("pipe");
	nfds = a > p ? a : p;
	nfds = (nfds > pipefd[1] ? nfds : pipefd[1]) + 1;
	conf_stimulus("rselect: read {active, pipe}, write {passive}; before and after a byte each");
	FD_ZERO(&r);
	FD_ZERO(&w);
	FD_SET(a, &r);
	FD_SET(pipefd[0], &r);
	tv = (struct timeval){ 0, 100000 };
	n = rs->select(nfds, &r, NULL, NULL, &tv);
	RS_INT("rselect, nothing readable", n, 0);
	FD_ZERO(&r);
	FD_SET(a, &r);
	FD_SET(pipefd[0], &r);
	FD_SET(p, &w);
	tv = (struct timeval){ 1, 0 };
	n = rs->select(nfds, &r, &w, NULL, &tv);
	RS_INT("rselect with the writable passive", n, 1);
	conf_expect(FD_ISSET(p, &w) && !FD_ISSET(a, &r) && !FD_ISSET(pipefd[0], &r),
		    "sets: passive writable %d, active readable %d, pipe readable %d",
		    FD_ISSET(p, &w), FD_ISSET(a, &r), FD_ISSET(pipefd[0], &r));
	if (write(pipefd[1], &b, 1) != 1 || rs->send(p, &b, 1, 0) != 1)
		conf_fatal("write/rsend");
	for (int i = 0; i < 50; i++) {
		FD_ZERO(&r);
		FD_SET(a, &r);
		FD_SET(pipefd[0], &r);
		tv = (struct timeval){ 0, 100000 };
		n = rs->select(nfds, &r, NULL, NULL, &tv);
		if (n == 2)
			break;
	}
	RS_INT("rselect after a byte each", n, 2);
	conf_expect(FD_ISSET(a, &r) && FD_ISSET(pipefd[0], &r), "readable: active %d, pipe %d",
		    FD_ISSET(a, &r), FD_ISSET(pipefd[0], &r));
	close(pipefd[0]);
	close(pipefd[1]);
	rs->close(a);
	rs->close(p);
	rs->close(l);
	conf_note("0; 1 (passive writable); 2 (both readable)");
}

static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static void poll_timeout(const struct conf_case *c)
{
	int l, a, p, n;
	double t0, dt;

	rs_pair(c->row, &l, &a, &p);
	conf_stimulus("rpoll POLLIN of an idle rsocket: 0 ms, then 200 ms");
	RS_INT("rpoll 0 ms", rs_poll1(a, POLLIN, 0), 0);
	t0 = now_ms();
	n = rs_poll1(a, POLLIN, 200);
	dt = now_ms() - t0;
	RS_INT("rpoll 200 ms", n, 0);
	conf_expect(dt >= 190 && dt < 2000, "rpoll 200 ms took %.0f ms", dt);
	rs_api()->close(a);
	rs_api()->close(p);
	rs_api()->close(l);
	conf_note("0 at once; 0 after %.0f ms", dt);
}

/* ---- shutdown, close ---- */

static void shut_wr(const struct conf_case *c)
{
	const struct rs_calls *rs = rs_api();
	uint8_t b[64];
	int l, a, p;

	rs_pair(c->row, &l, &a, &p);
	conf_stimulus("active sends 64 bytes, rshutdown(SHUT_WR); passive reads, rsend 64; active "
		      "reads");
	rs_fill(b, sizeof b, 6);
	RS_INT("rsend", rs->send(a, b, sizeof b, 0), 64);
	RS_INT("rshutdown SHUT_WR", rs->shutdown(a, SHUT_WR), 0);
	memset(b, 0, sizeof b);
	RS_INT("passive rrecv (the data)", rs->recv(p, b, sizeof b, 0), 64);
	RS_INT("bytes", rs_check(b, 64, 6), 64);
	RS_INT("passive rrecv (end of stream)", rs->recv(p, b, sizeof b, 0), 0);
	RS_HEX("passive rpoll POLLIN|POLLOUT", rs_poll1(p, POLLIN | POLLOUT, 1000),
		   POLLIN | POLLOUT);
	rs_fill(b, sizeof b, 7);
	RS_INT("passive rsend", rs->send(p, b, sizeof b, 0), 64);
	memset(b, 0, sizeof b);
	RS_INT("active rrecv", rs->recv(a, b, sizeof b, 0), 64);
	RS_INT("bytes", rs_check(b, 64, 7), 64);
	rs->close(a);
	rs->close(p);
	rs->close(l);
	conf_note("64 then 0 on the passive side; the other direction still carries 64");
}

static void shut_rdwr(const struct conf_case *c)
{
	const struct rs_calls *rs = rs_api();
	uint8_t b[64];
	int l, a, p, ret, e;

	rs_pair(c->row, &l, &a, &p);
	conf_stimulus("active rshutdown(SHUT_RDWR); passive rpoll, rrecv, rsend; active rsend, "
		      "rrecv");
	RS_INT("rshutdown SHUT_RDWR", rs->shutdown(a, SHUT_RDWR), 0);
	RS_HEX("passive rpoll POLLIN", rs_poll1(p, POLLIN, 2000), POLLIN | POLLHUP);
	RS_INT("passive rrecv", rs->recv(p, b, sizeof b, 0), 0);
	/* v44 checks the send window, not the state: both ends' rsend still succeed */
	RS_INT("passive rsend", rs->send(p, b, sizeof b, 0), 64);
	RS_INT("active rsend", rs->send(a, b, sizeof b, 0), 64);
	RS_INT("active rrecv", rs->recv(a, b, sizeof b, 0), 0);
	(void)ret;
	(void)e;
	rs->close(a);
	rs->close(p);
	rs->close(l);
	conf_note("POLLIN|POLLHUP, 0, rsend 64; active rsend 64, rrecv 0");
}

static void shut_rd(const struct conf_case *c)
{
	const struct rs_calls *rs = rs_api();
	uint8_t b[64];
	int l, a, p;

	rs_pair(c->row, &l, &a, &p);
	conf_stimulus("active rshutdown(SHUT_RD); passive sends 64; active rrecv; active sends 64");
	RS_INT("rshutdown SHUT_RD", rs->shutdown(a, SHUT_RD), 0);
	rs_fill(b, sizeof b, 8);
	RS_INT("passive rsend", rs->send(p, b, sizeof b, 0), 64);
	memset(b, 0, sizeof b);
	/* v44 sends nothing to the peer for SHUT_RD and keeps delivering */
	RS_INT("active rrecv", rs->recv(a, b, sizeof b, 0), 64);
	RS_INT("bytes", rs_check(b, 64, 8), 64);
	rs_fill(b, sizeof b, 9);
	RS_INT("active rsend", rs->send(a, b, sizeof b, 0), 64);
	memset(b, 0, sizeof b);
	RS_INT("passive rrecv", rs->recv(p, b, sizeof b, 0), 64);
	RS_INT("bytes", rs_check(b, 64, 9), 64);
	rs->close(a);
	rs->close(p);
	rs->close(l);
	conf_note("the active end still reads the 64 bytes; its sends still arrive");
}

static void close_peer(const struct conf_case *c)
{
	const struct rs_calls *rs = rs_api();
	uint8_t b[64];
	int l, a, p, ret, e;

	rs_pair(c->row, &l, &a, &p);
	rs_fill(b, sizeof b, 10);
	conf_stimulus("active rsend 64, rclose; passive rpoll, rrecv, rrecv, rsend; rgetsockopt on "
		      "the closed number");
	RS_INT("rsend", rs->send(a, b, sizeof b, 0), 64);
	RS_INT("rclose", rs->close(a), 0);
	RS_HEX("passive rpoll POLLIN", rs_poll1(p, POLLIN, 2000), POLLIN | POLLHUP);
	memset(b, 0, sizeof b);
	RS_INT("passive rrecv (the data)", rs->recv(p, b, sizeof b, 0), 64);
	RS_INT("bytes", rs_check(b, 64, 10), 64);
	RS_INT("passive rrecv (end)", rs->recv(p, b, sizeof b, 0), 0);
	RS_INT("passive rsend (still accepted)", rs->send(p, b, sizeof b, 0), 64);
	(void)e;
	ret = rs_getopt(a, SOL_SOCKET, SO_ERROR).err;
	EXPECT_ERRNO("rgetsockopt on the closed number", ret, EBADF);
	rs->close(p);
	rs->close(l);
	conf_note("POLLIN|POLLHUP; 64 bytes, then 0; rsend 64; closed number EBADF");
}


#define C(id, row, desc, fn, data) { id, "RS", row, desc, NULL, PRE_CM, NULL, 30, fn, data }
#define CDOC(id, row, desc, doc, fn, data) { id, "RS", row, desc, doc, PRE_CM, NULL, 30, fn, data }
static const struct conf_case cases[] = {
	C("RS-60", 60, "1 byte each way", xfer_row, &x1),
	C("RS-61", 61, "64 bytes each way (the inline size)", xfer_row, &x64),
	C("RS-62", 62, "65 bytes each way (one over the inline size)", xfer_row, &x65),
	C("RS-63", 63, "2048 bytes each way", xfer_row, &x2048),
	C("RS-64", 64, "4 KiB each way", xfer_row, &x4k),
	C("RS-65", 65, "64 KiB each way in one rsend", xfer_row, &x64k),
	C("RS-66", 66, "128 KiB each way (the whole receive buffer) in one rsend", xfer_row,
	  &x128k),
	C("RS-67", 67, "1 MiB each way in one rsend (8 x the receive buffer)", xfer_row, &x1m),
	C("RS-67b", 67, "1 MiB each way in rsend calls of 1000 bytes", xfer_row, &x1m_odd),
	C("RS-68", 68, "4 MiB each way in one rsend", xfer_row, &x4m),
	C("RS-70", 70, "rrecv MSG_WAITALL of 100000 sent in 10 pieces: 100000 in one call",
	  waitall, NULL),
	C("RS-71", 71, "MSG_PEEK: 50 twice (the same bytes), then 100", peek, NULL),
	C("RS-72", 72, "no data: MSG_DONTWAIT and O_NONBLOCK rrecv -1/EAGAIN; rpoll POLLIN 0, "
	  "POLLOUT", eagain, NULL),
	C("RS-73", 73, "MSG_DONTWAIT rsend to a peer not reading: EAGAIN after 65536 bytes (half "
	  "the peer's buffer), all of it arrives", send_eagain, NULL),
	C("RS-74", 74, "rpoll over rsockets and a pipe: exact revents before and after data",
	  poll_mixed, NULL),
	C("RS-75", 75, "rselect over rsockets and a pipe: exact sets before and after data",
	  select_mixed, NULL),
	C("RS-76", 76, "rpoll timeout: 0 at once with 0 ms, 0 after 200 ms", poll_timeout, NULL),
	C("RS-77", 77, "rshutdown SHUT_WR: the peer reads the data then 0; the other direction "
	  "works", shut_wr, NULL),
	CDOC("RS-78", 78, "rshutdown SHUT_RD: the local end still reads what the peer sends; its "
	     "sends arrive", "shutdown(2): 'SHUT_RD, further receptions will be disallowed'",
	     shut_rd, NULL),
	CDOC("RS-79", 79, "rshutdown SHUT_RDWR: peer POLLIN|POLLHUP, rrecv 0; rsend on either "
	     "end still returns 64", "send(2): 'EPIPE The local end has been shut down on a "
	     "connection oriented socket'", shut_rdwr, NULL),
	CDOC("RS-80", 80, "rclose with data in flight: the peer reads it, then 0; its rsend still "
	     "returns 64", "send(2): 'ECONNRESET Connection reset by peer'", close_peer, NULL),
};

const struct conf_area conf_area_rs_io = { "RSIO", cases, sizeof cases / sizeof cases[0] };
