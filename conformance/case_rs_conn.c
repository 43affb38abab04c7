/* RS: rsockets' connection set-up: rbind, rlisten, raccept and rconnect, blocking and not, with
 * their errors, SO_ERROR and rpoll on a connecting rsocket, the addresses of both ends and the
 * options fixed by a connection. Expected values are the reference VM's (rdma-core v44 on
 * kernel rxe 6.1); every connection is a loopback one in the case's process. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <string.h>
#include <infiniband/sa.h>

#include "conformance/cm_util.h"
#include "conformance/conformance.h"
#include "conformance/rs_util.h"

/* ---- bind, listen, accept ---- */

static void bind_nonlocal(const struct conf_case *c)
{
	const struct rs_calls *rs = rs_api();
	int fd = rs_stream(), ret, e;
	struct sockaddr_in sin;

	cm_ipv4("198.51.100.1", (uint16_t)(RS_PORT + c->row), &sin);
	conf_stimulus("rbind(198.51.100.1:%d), an address no local device has", RS_PORT + c->row);
	errno = 0;
	ret = rs->bind(fd, (struct sockaddr *)&sin, sizeof sin);
	e = errno;
	CM_EXPECT_FAIL("rbind", ret, e, EADDRNOTAVAIL);
	rs->close(fd);
	conf_note("-1 errno %s", conf_errno_name(e));
}

static void bind_twice(const struct conf_case *c)
{
	const struct rs_calls *rs = rs_api();
	int fd = rs_stream(), ret, e;
	struct sockaddr_in sin, sin2;

	rs_addr(c->row, &sin);
	sin2 = sin;
	sin2.sin_port = htons((uint16_t)(RS_PORT + c->row + 500));
	conf_stimulus("rbind twice: %s:%d, then port %d", inet_ntoa(sin.sin_addr),
		      RS_PORT + c->row, RS_PORT + c->row + 500);
	RS_INT("first rbind", rs->bind(fd, (struct sockaddr *)&sin, sizeof sin), 0);
	errno = 0;
	ret = rs->bind(fd, (struct sockaddr *)&sin2, sizeof sin2);
	e = errno;
	CM_EXPECT_FAIL("second rbind", ret, e, EINVAL);
	rs->close(fd);
	conf_note("0, then -1 errno %s", conf_errno_name(e));
}

static void bind_inuse(const struct conf_case *c)
{
	const struct rs_calls *rs = rs_api();
	struct sockaddr_in sin;
	int l, fd, ret, e;

	rs_addr(c->row, &sin);
	l = rs_listener(&sin);
	fd = rs_stream();
	conf_stimulus("rbind to %s:%d, which a listening rsocket holds", inet_ntoa(sin.sin_addr),
		      RS_PORT + c->row);
	errno = 0;
	ret = rs->bind(fd, (struct sockaddr *)&sin, sizeof sin);
	e = errno;
	CM_EXPECT_FAIL("rbind", ret, e, EADDRINUSE);
	rs->close(fd);
	rs->close(l);
	conf_note("-1 errno %s", conf_errno_name(e));
}

static void listen_twice(const struct conf_case *c)
{
	const struct rs_calls *rs = rs_api();
	struct sockaddr_in sin;
	int l;

	rs_addr(c->row, &sin);
	l = rs_listener(&sin);
	conf_stimulus("rlisten on a listening rsocket");
	RS_INT("second rlisten", rs->listen(l, 8), 0);
	rs->close(l);
	conf_note("0");
}

static void listen_unbound(const struct conf_case *c)
{
	const struct rs_calls *rs = rs_api();
	struct sockaddr_in sin;
	socklen_t len = sizeof sin;
	int fd = rs_stream();

	conf_stimulus("rlisten on an unbound rsocket, then rgetsockname");
	RS_INT("rlisten", rs->listen(fd, 8), 0);
	memset(&sin, 0xff, sizeof sin);
	RS_INT("rgetsockname", rs->getsockname(fd, (struct sockaddr *)&sin, &len), 0);
	RS_INT("addrlen", len, sizeof sin);
	RS_INT("family", sin.sin_family, AF_INET);
	RS_HEX("address (wildcard)", ntohl(sin.sin_addr.s_addr), 0);
	conf_expect(sin.sin_port != 0, "port 0: no port chosen");
	rs->close(fd);
	conf_note("0; bound to 0.0.0.0:<a chosen port>");
}

static void accept_not_listening(const struct conf_case *c)
{
	const struct rs_calls *rs = rs_api();
	struct sockaddr_in sin;
	int fd = rs_stream(), ret, e;

	rs_addr(c->row, &sin);
	conf_stimulus("raccept on a fresh rsocket, then on a bound one");
	errno = 0;
	ret = rs->accept(fd, NULL, NULL);
	e = errno;
	CM_EXPECT_FAIL("raccept (fresh)", ret, e, EBADF);
	if (rs->bind(fd, (struct sockaddr *)&sin, sizeof sin))
		conf_fatal("rbind: %s", conf_errno_name(errno));
	errno = 0;
	ret = rs->accept(fd, NULL, NULL);
	e = errno;
	CM_EXPECT_FAIL("raccept (bound)", ret, e, EBADF);
	rs->close(fd);
	conf_note("-1 EBADF, -1 EBADF");
}

static void accept_nonblock_empty(const struct conf_case *c)
{
	const struct rs_calls *rs = rs_api();
	struct sockaddr_in sin;
	int fd = rs_stream(), ret, e;

	rs_addr(c->row, &sin);
	conf_stimulus("O_NONBLOCK listener, nothing pending: raccept, rpoll POLLIN 0 ms");
	rs->fcntl(fd, F_SETFL, O_NONBLOCK);
	if (rs->bind(fd, (struct sockaddr *)&sin, sizeof sin) || rs->listen(fd, 8)) {
		e = errno;
		rs->close(fd);
		conf_fatal("rbind/rlisten: %s", conf_errno_name(e));
	}
	errno = 0;
	ret = rs->accept(fd, NULL, NULL);
	e = errno;
	CM_EXPECT_FAIL("raccept", ret, e, EAGAIN);
	RS_INT("rpoll revents", rs_poll1(fd, POLLIN, 0), 0);
	rs->close(fd);
	conf_note("-1 EAGAIN; rpoll 0");
}

/* ---- connect ---- */

static void check_addr(const char *what, const struct sockaddr_in *got, socklen_t len,
		       const struct sockaddr_in *want)
{
	char g[64], w[64];

	conf_fmt_sockaddr(g, sizeof g, (const struct sockaddr *)got, len);
	conf_fmt_sockaddr(w, sizeof w, (const struct sockaddr *)want, sizeof *want);
	conf_expect(len == sizeof *want && !strcmp(g, w), "%s: %s (len %u), want %s", what, g,
		    (unsigned)len, w);
}

static void connect_blocking(const struct conf_case *c)
{
	const struct rs_calls *rs = rs_api();
	struct sockaddr_in sin, a, csock, cpeer, ssock, speer;
	socklen_t alen = sizeof a, len;
	int l, fd, s;

	rs_addr(c->row, &sin);
	l = rs_listener(&sin);
	fd = rs_stream();
	conf_stimulus("blocking rconnect to %s:%d, rpoll POLLIN on the listener, raccept with an "
		      "address", inet_ntoa(sin.sin_addr), RS_PORT + c->row);
	if (rs->connect(fd, (struct sockaddr *)&sin, sizeof sin)) {
		/* no connection, nothing to accept (a blocking raccept would wait for good) */
		conf_expect(false, "rconnect: %s", conf_errno_name(errno));
		rs->close(fd);
		rs->close(l);
		return;
	}
	RS_INT("listener rpoll", rs_poll1(l, POLLIN, 5000), POLLIN);
	memset(&a, 0, sizeof a);
	s = rs->accept(l, (struct sockaddr *)&a, &alen);
	if (!conf_expect(s >= 0, "raccept: %s", conf_errno_name(errno)))
		return;
	conf_expect(s != fd && s != l, "raccept returned an existing descriptor");
	len = sizeof csock;
	RS_INT("rgetsockname (active)", rs->getsockname(fd, (struct sockaddr *)&csock, &len), 0);
	len = sizeof cpeer;
	RS_INT("rgetpeername (active)", rs->getpeername(fd, (struct sockaddr *)&cpeer, &len), 0);
	check_addr("active's peer", &cpeer, len, &sin);
	len = sizeof ssock;
	RS_INT("rgetsockname (accepted)", rs->getsockname(s, (struct sockaddr *)&ssock, &len), 0);
	check_addr("accepted's local", &ssock, len, &sin);
	len = sizeof speer;
	RS_INT("rgetpeername (accepted)", rs->getpeername(s, (struct sockaddr *)&speer, &len), 0);
	check_addr("accepted's peer", &speer, len, &csock);
	check_addr("raccept's address", &a, alen, &csock);
	RS_HEX("active's local address", csock.sin_addr.s_addr, sin.sin_addr.s_addr);
	conf_expect(csock.sin_port != 0 && csock.sin_port != sin.sin_port,
		    "active's local port %d", ntohs(csock.sin_port));
	rs->close(fd);
	rs->close(s);
	rs->close(l);
	conf_note("0; listener POLLIN; both ends' names and peers agree");
}

static void connect_refused(const struct conf_case *c)
{
	const struct rs_calls *rs = rs_api();
	struct sockaddr_in sin;
	int fd = rs_stream(), ret, e;
	struct rs_opt o;

	rs_addr(c->row, &sin);
	conf_stimulus("blocking rconnect to %s:%d where nobody listens; SO_ERROR twice; rconnect "
		      "again", inet_ntoa(sin.sin_addr), RS_PORT + c->row);
	errno = 0;
	ret = rs->connect(fd, (struct sockaddr *)&sin, sizeof sin);
	e = errno;
	CM_EXPECT_FAIL("rconnect", ret, e, ECONNREFUSED);
	o = rs_getopt(fd, SOL_SOCKET, SO_ERROR);
	RS_INT("SO_ERROR", o.val, ECONNREFUSED);
	o = rs_getopt(fd, SOL_SOCKET, SO_ERROR);
	RS_INT("SO_ERROR (read again: cleared)", o.val, 0);
	errno = 0;
	ret = rs->connect(fd, (struct sockaddr *)&sin, sizeof sin);
	e = errno;
	CM_EXPECT_FAIL("second rconnect", ret, e, ENOTCONN);
	rs->close(fd);
	conf_note("-1 ECONNREFUSED; SO_ERROR ECONNREFUSED then 0; again -1 ENOTCONN");
}

static void connect_nonblock(const struct conf_case *c)
{
	const struct rs_calls *rs = rs_api();
	struct sockaddr_in sin;
	int l, fd, s, ret, e, rev;
	char b = 'x';

	rs_addr(c->row, &sin);
	l = rs_listener(&sin);
	fd = rs_stream();
	rs->fcntl(fd, F_SETFL, O_NONBLOCK);
	conf_stimulus("O_NONBLOCK rconnect to a listener; rpoll POLLOUT; SO_ERROR; rconnect again");
	errno = 0;
	ret = rs->connect(fd, (struct sockaddr *)&sin, sizeof sin);
	e = errno;
	CM_EXPECT_FAIL("rconnect", ret, e, EINPROGRESS);
	rev = rs_poll1(fd, POLLOUT, 5000);
	RS_HEX("rpoll revents", rev, POLLOUT);
	e = rs_getopt(fd, SOL_SOCKET, SO_ERROR).val;
	EXPECT_ERRNO("SO_ERROR", e, 0);
	/* a connection that did not come about has nothing to accept (a blocking raccept would
	 * wait for good) */
	ret = rs->connect(fd, (struct sockaddr *)&sin, sizeof sin);
	RS_INT("rconnect again", ret, 0);
	s = ret ? -1 : rs->accept(l, NULL, NULL);
	if (!ret && conf_expect(s >= 0, "raccept: %s", conf_errno_name(errno))) {
		RS_INT("rsend 1 byte", rs->send(fd, &b, 1, 0), 1);
		b = 0;
		RS_INT("rrecv", rs->recv(s, &b, 1, 0), 1);
		RS_INT("byte", b, 'x');
		rs->close(s);
	}
	rs->close(fd);
	rs->close(l);
	conf_note("-1 EINPROGRESS; POLLOUT; SO_ERROR 0; again 0; a byte through");
}

static void connect_nonblock_refused(const struct conf_case *c)
{
	const struct rs_calls *rs = rs_api();
	struct sockaddr_in sin;
	int fd = rs_stream(), ret, e, rev;

	rs_addr(c->row, &sin);
	rs->fcntl(fd, F_SETFL, O_NONBLOCK);
	conf_stimulus("O_NONBLOCK rconnect where nobody listens; rpoll POLLIN|POLLOUT; SO_ERROR");
	errno = 0;
	ret = rs->connect(fd, (struct sockaddr *)&sin, sizeof sin);
	e = errno;
	CM_EXPECT_FAIL("rconnect", ret, e, EINPROGRESS);
	rev = rs_poll1(fd, POLLIN | POLLOUT, 5000);
	RS_HEX("rpoll revents", rev, POLLIN | POLLOUT | POLLERR);
	RS_INT("SO_ERROR", rs_getopt(fd, SOL_SOCKET, SO_ERROR).val, ECONNREFUSED);
	rs->close(fd);
	conf_note("-1 EINPROGRESS; POLLIN|POLLOUT|POLLERR; SO_ERROR ECONNREFUSED");
}

static void connect_twice(const struct conf_case *c)
{
	const struct rs_calls *rs = rs_api();
	struct sockaddr_in sin;
	int l, fd, s;

	rs_pair(c->row, &l, &fd, &s);
	rs_addr(c->row, &sin);
	conf_stimulus("rconnect on a connected rsocket");
	RS_INT("rconnect", rs->connect(fd, (struct sockaddr *)&sin, sizeof sin), 0);
	rs->close(fd);
	rs->close(s);
	rs->close(l);
	conf_note("0");
}

/* TCP_MAXSEG, RDMA_ROUTE and SOL_RDMA once connected: the path's MTU (rxe on a 1500-byte
 * netdev: IBV_MTU_1024), one path record, the queue sizes fixed. */
static void opt_connected(const struct conf_case *c)
{
	const struct rs_calls *rs = rs_api();
	struct ibv_path_data pd[2];
	socklen_t len = sizeof pd;
	struct rs_opt o;
	int l, fd, s, e;

	rs_pair(c->row, &l, &fd, &s);
	conf_stimulus("connected rsocket: TCP_MAXSEG, RDMA_ROUTE, set RDMA_SQSIZE and SO_RCVBUF");
	o = rs_getopt(fd, IPPROTO_TCP, TCP_MAXSEG);
	RS_INT("TCP_MAXSEG", o.val, 1024);
	memset(pd, 0, sizeof pd);
	RS_INT("RDMA_ROUTE", rs->getsockopt(fd, SOL_RDMA, RDMA_ROUTE, pd, &len), 0);
	RS_INT("RDMA_ROUTE optlen (one path)", len, sizeof pd[0]);
	RS_HEX("path mtu byte (selector exactly, IBV_MTU_1024)", pd[0].path.mtu, 0x80 | 3);
	RS_HEX("path pkey", ntohs(pd[0].path.pkey), 0xffff);
	e = rs_setopt(fd, SOL_RDMA, RDMA_SQSIZE, 64);
	EXPECT_ERRNO("rsetsockopt RDMA_SQSIZE", e, EINVAL);
	RS_INT("RDMA_SQSIZE", rs_getopt(fd, SOL_RDMA, RDMA_SQSIZE).val, 384);
	RS_INT("RDMA_RQSIZE", rs_getopt(fd, SOL_RDMA, RDMA_RQSIZE).val, 384);
	e = rs_setopt(fd, SOL_SOCKET, SO_RCVBUF, 4096);
	EXPECT_ERRNO("rsetsockopt SO_RCVBUF", e, 0);
	RS_INT("SO_RCVBUF (the buffer exists: kept)", rs_getopt(fd, SOL_SOCKET, SO_RCVBUF).val,
		   131072);
	RS_INT("accepted's TCP_MAXSEG", rs_getopt(s, IPPROTO_TCP, TCP_MAXSEG).val, 1024);
	rs->close(fd);
	rs->close(s);
	rs->close(l);
	conf_note("TCP_MAXSEG 1024; one path, mtu 0x83; SOL_RDMA -1 EINVAL; SO_RCVBUF kept");
}

/* The accepted rsocket takes the listener's sizes, set before rlisten. */
static void opt_inherit(const struct conf_case *c)
{
	const struct rs_calls *rs = rs_api();
	struct sockaddr_in sin;
	int l = rs_stream(), fd, s;

	rs_addr(c->row, &sin);
	conf_stimulus("listener with SO_RCVBUF 32768, SO_SNDBUF 16384, RDMA_SQSIZE 64, "
		      "RDMA_INLINE 128: the accepted rsocket's values");
	rs_setopt(l, SOL_SOCKET, SO_RCVBUF, 32768);
	rs_setopt(l, SOL_SOCKET, SO_SNDBUF, 16384);
	rs_setopt(l, SOL_RDMA, RDMA_SQSIZE, 64);
	rs_setopt(l, SOL_RDMA, RDMA_INLINE, 128);
	if (rs->bind(l, (struct sockaddr *)&sin, sizeof sin) || rs->listen(l, 8))
		conf_fatal("rbind/rlisten: %s", conf_errno_name(errno));
	fd = rs_stream();
	if (rs->connect(fd, (struct sockaddr *)&sin, sizeof sin))
		conf_fatal("rconnect: %s", conf_errno_name(errno));
	s = rs->accept(l, NULL, NULL);
	if (s < 0)
		conf_fatal("raccept: %s", conf_errno_name(errno));
	RS_INT("SO_RCVBUF", rs_getopt(s, SOL_SOCKET, SO_RCVBUF).val, 65536);
	RS_INT("SO_SNDBUF", rs_getopt(s, SOL_SOCKET, SO_SNDBUF).val, 32768);
	RS_INT("RDMA_SQSIZE", rs_getopt(s, SOL_RDMA, RDMA_SQSIZE).val, 64);
	RS_INT("RDMA_INLINE", rs_getopt(s, SOL_RDMA, RDMA_INLINE).val, 128);
	RS_INT("RDMA_RQSIZE", rs_getopt(s, SOL_RDMA, RDMA_RQSIZE).val, 384);
	rs->close(fd);
	rs->close(s);
	rs->close(l);
	conf_note("65536, 32768, 64, 128; RQSIZE 384");
}

/* Argument errors need no device; everything that creates a stream rsocket needs the kernel
 * CM (rsocket() creates an rdma_cm id). */

#define CD(id, row, desc, fn, data) { id, "RS", row, desc, NULL, PRE_CM, NULL, 20, fn, data }
static const struct conf_case cases[] = {
	CD("RS-40", 40, "rbind to an address no device has: -1/EADDRNOTAVAIL", bind_nonlocal,
	   NULL),
	CD("RS-41", 41, "rbind twice: -1/EINVAL", bind_twice, NULL),
	CD("RS-42", 42, "rbind to a port a listener holds: -1/EADDRINUSE", bind_inuse, NULL),
	CD("RS-43", 43, "rlisten twice: 0", listen_twice, NULL),
	CD("RS-44", 44, "rlisten unbound: 0, bound to 0.0.0.0 and a chosen port", listen_unbound,
	   NULL),
	CD("RS-45", 45, "raccept on a fresh and on a bound rsocket: -1/EBADF",
	   accept_not_listening, NULL),
	CD("RS-46", 46, "raccept on an O_NONBLOCK listener, nothing pending: -1/EAGAIN; rpoll 0",
	   accept_nonblock_empty, NULL),
	CD("RS-47", 47, "blocking rconnect: 0; listener POLLIN; raccept's address, rgetsockname "
	   "and rgetpeername of both ends agree", connect_blocking, NULL),
	CD("RS-48", 48, "blocking rconnect, nobody listens: -1/ECONNREFUSED; SO_ERROR "
	   "ECONNREFUSED, then 0; rconnect again -1/ENOTCONN", connect_refused, NULL),
	CD("RS-49", 49, "O_NONBLOCK rconnect: -1/EINPROGRESS, rpoll POLLOUT, SO_ERROR 0, "
	   "rconnect again 0", connect_nonblock, NULL),
	CD("RS-50", 50, "O_NONBLOCK rconnect, nobody listens: -1/EINPROGRESS, rpoll "
	   "POLLIN|POLLOUT|POLLERR, SO_ERROR ECONNREFUSED", connect_nonblock_refused, NULL),
	{ "RS-51", "RS", 51, "rconnect on a connected rsocket: 0",
	  "connect(2): 'EISCONN The socket is already connected'", PRE_CM, NULL, 20,
	  connect_twice, NULL },
	CD("RS-52", 52, "connected: TCP_MAXSEG 1024, RDMA_ROUTE one path (mtu 0x83), SOL_RDMA "
	   "set -1/EINVAL, SO_RCVBUF set kept", opt_connected, NULL),
	CD("RS-53", 53, "the accepted rsocket has the listener's buffer and queue sizes",
	   opt_inherit, NULL),
};

const struct conf_area conf_area_rs_conn = { "RSCONN", cases, sizeof cases / sizeof cases[0] };
