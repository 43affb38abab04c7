/* RS: rsockets (rsocket(7)): rsocket()'s arguments, every socket option of an unconnected
 * rsocket, rfcntl and calls on descriptors that are no rsocket, as rdma-core v44's rsocket.c
 * answers them on kernel rxe. Expected values are the reference VM's (fixtures/golden/rxe);
 * where rsocket(7) or the socket call the r* call mirrors says otherwise, the case carries that
 * as "documented".
 *
 * The other RS cases: connection set-up in case_rs_conn.c (loopback connections to the first
 * local RDMA IPv4 address, both ends in the case's process: rsockets accept in their own
 * service thread, so a blocking rconnect completes without a second thread), the data path in
 * case_rs_io.c, the vector calls, iomap, datagram rsockets and fork in case_rs_ext.c; the
 * shared helpers in rs_util.c. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/sa.h>

#include "conformance/cm_util.h"
#include "conformance/conformance.h"
#include "conformance/rs_util.h"

/* ---- rsocket() arguments ---- */

struct sock_row {
	int domain, type, protocol;
	int want_errno; /* 0: a socket */
};

static void sock_row(const struct conf_case *c)
{
	const struct sock_row *r = c->data;
	const struct rs_calls *rs = rs_api();
	int fd, e;

	conf_stimulus("rsocket(%d, %#x, %d)", r->domain, r->type, r->protocol);
	errno = 0;
	fd = rs->socket(r->domain, r->type, r->protocol);
	e = errno;
	if (r->want_errno) {
		CM_EXPECT_FAIL("rsocket", fd, e, r->want_errno);
		conf_note("-1 errno %s", conf_errno_name(e));
		return;
	}
	if (conf_expect(fd >= 0, "rsocket: %d errno %s", fd, conf_errno_name(e))) {
		RS_INT("rfcntl F_GETFL", rs->fcntl(fd, F_GETFL), 0);
		/* rclose of a datagram rsocket that never got its queues blocks (RS-6) */
		if (r->type == SOCK_STREAM)
			RS_INT("rclose", rs->close(fd), 0);
	}
	conf_note("a socket; F_GETFL 0%s", r->type == SOCK_STREAM ? "; rclose 0" : "");
}

static const struct sock_row sock_unix = { AF_UNIX, SOCK_STREAM, 0, EOPNOTSUPP };
static const struct sock_row sock_seqpacket = { AF_INET, SOCK_SEQPACKET, 0, EOPNOTSUPP };
static const struct sock_row sock_raw = { AF_INET, SOCK_RAW, 0, EOPNOTSUPP };
static const struct sock_row sock_stream_udp = { AF_INET, SOCK_STREAM, IPPROTO_UDP, EOPNOTSUPP };
static const struct sock_row sock_dgram_tcp = { AF_INET, SOCK_DGRAM, IPPROTO_TCP, EOPNOTSUPP };
static const struct sock_row sock_nonblock = { AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0,
					       EOPNOTSUPP };
static const struct sock_row sock_stream6 = { AF_INET6, SOCK_STREAM, IPPROTO_TCP, 0 };
static const struct sock_row sock_dgram = { AF_INET, SOCK_DGRAM, IPPROTO_UDP, 0 };

/* v44's rclose of a datagram rsocket waits until every send-queue entry is back; one that was
 * never bound, connected or sent from has no queue, so the wait never ends. */
static void *dgram_close_run(void *arg)
{
	int *fd = arg;

	rs_api()->close(*fd);
	*fd = -1;
	return NULL;
}

static void dgram_close_fresh(const struct conf_case *c)
{
	const struct rs_calls *rs = rs_api();
	int fd = rs->socket(AF_INET, SOCK_DGRAM, 0);
	pthread_t t;

	if (fd < 0)
		conf_fatal("rsocket SOCK_DGRAM: %s", conf_errno_name(errno));
	conf_stimulus("rclose of a fresh SOCK_DGRAM rsocket (in a thread, watched for 1 s)");
	if (pthread_create(&t, NULL, dgram_close_run, &fd))
		conf_fatal("pthread_create");
	usleep(1000000);
	conf_expect(fd != -1, "rclose returned within 1 s");
	conf_note("still blocked after 1 s");
	/* the child process ends with the thread blocked: the runner forks one per case */
}

/* ---- options of an unconnected stream rsocket: default, set, read back ---- */

struct opt_row {
	int family;
	int level, name;
	int def, def_errno;  /* rgetsockopt before any set */
	int set, set_errno;  /* rsetsockopt(set) */
	int after;           /* rgetsockopt after the set (def_errno: the same errno) */
};

static void opt_row(const struct conf_case *c)
{
	const struct opt_row *r = c->data;
	const struct rs_calls *rs = rs_api();
	int fd = rs->socket(r->family, SOCK_STREAM, 0);
	struct rs_opt o;
	int e;

	if (fd < 0)
		conf_fatal("rsocket: %s", conf_errno_name(errno));
	conf_stimulus("level %#x option %d: get, set %d, get", r->level, r->name, r->set);
	o = rs_getopt(fd, r->level, r->name);
	if (r->def_errno) {
		CM_EXPECT_FAIL("rgetsockopt (default)", o.ret, o.err, r->def_errno);
	} else {
		RS_INT("rgetsockopt (default)", o.ret, 0);
		RS_INT("default value", o.val, r->def);
		RS_INT("optlen", o.len, sizeof(int));
	}
	e = rs_setopt(fd, r->level, r->name, r->set);
	EXPECT_ERRNO("rsetsockopt", e, r->set_errno);
	o = rs_getopt(fd, r->level, r->name);
	if (r->def_errno)
		CM_EXPECT_FAIL("rgetsockopt (after)", o.ret, o.err, r->def_errno);
	else
		RS_INT("value after set", o.val, r->after);
	rs->close(fd);
	if (r->def_errno)
		conf_note("get -1 %s, set %s", conf_errno_name(r->def_errno),
			  conf_errno_name(r->set_errno));
	else
		conf_note("default %d, set %s, then %d", r->def, conf_errno_name(r->set_errno),
			  r->after);
}

#define OPT(fam, lvl, nm, def, deferr, set, seterr, after)                                \
	static const struct opt_row opt_##nm##_##fam = { fam, lvl, nm, def, deferr, set, seterr, \
							 after }
OPT(AF_INET, SOL_SOCKET, SO_REUSEADDR, 0, 0, 1, 0, 1);
OPT(AF_INET, SOL_SOCKET, SO_KEEPALIVE, 0, 0, 1, 0, 1);
OPT(AF_INET, SOL_SOCKET, SO_OOBINLINE, 0, 0, 1, 0, 1);
OPT(AF_INET, SOL_SOCKET, SO_RCVBUF, 131072, 0, 65536, 0, 131072);
OPT(AF_INET, SOL_SOCKET, SO_SNDBUF, 131072, 0, 1000, 0, 4096);
OPT(AF_INET, SOL_SOCKET, SO_ERROR, 0, 0, 1, EOPNOTSUPP, 0);
OPT(AF_INET, SOL_SOCKET, SO_RCVLOWAT, 0, EOPNOTSUPP, 1, EOPNOTSUPP, 0);
OPT(AF_INET, IPPROTO_TCP, TCP_NODELAY, 0, 0, 1, 0, 1);
OPT(AF_INET, IPPROTO_TCP, TCP_MAXSEG, 2048, 0, 1000, 0, 2048);
OPT(AF_INET, IPPROTO_TCP, TCP_KEEPIDLE, 0, 0, 30, 0, 30);
OPT(AF_INET, IPPROTO_TCP, TCP_KEEPCNT, 1, 0, 5, 0, 1);
OPT(AF_INET, IPPROTO_TCP, TCP_KEEPINTVL, 1, 0, 5, 0, 1);
OPT(AF_INET, IPPROTO_TCP, TCP_CORK, 0, EOPNOTSUPP, 1, EOPNOTSUPP, 0);
OPT(AF_INET6, IPPROTO_IPV6, IPV6_V6ONLY, 0, 0, 1, 0, 1);
OPT(AF_INET6, IPPROTO_IPV6, IPV6_UNICAST_HOPS, 0, EOPNOTSUPP, 1, EOPNOTSUPP, 0);
OPT(AF_INET, SOL_RDMA, RDMA_SQSIZE, 384, 0, 100000, 0, 65534);
OPT(AF_INET, SOL_RDMA, RDMA_RQSIZE, 384, 0, 8, 0, 8);
OPT(AF_INET, SOL_RDMA, RDMA_INLINE, 64, 0, 256, 0, 256);
OPT(AF_INET, SOL_RDMA, RDMA_IOMAPSIZE, 0, 0, 1000, 0, 768);
OPT(AF_INET, SOL_RDMA, 99, 0, EOPNOTSUPP, 1, EOPNOTSUPP, 0);
OPT(AF_INET, SOL_IP, IP_TOS, 0, EOPNOTSUPP, 16, EOPNOTSUPP, 0);
#undef OPT

static const struct opt_row keepidle_zero = { AF_INET, IPPROTO_TCP, TCP_KEEPIDLE, 0, 0, 0,
					      EINVAL, 0 };

static void opt_linger(const struct conf_case *c)
{
	const struct rs_calls *rs = rs_api();
	int fd = rs_stream();
	struct linger lg = { -1, -1 };
	socklen_t len = sizeof lg;
	int ret;

	conf_stimulus("SO_LINGER: get, set {0,0}, get, set {1,5}, get");
	ret = rs->getsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, &len);
	RS_INT("rgetsockopt", ret, 0);
	RS_INT("default l_onoff", lg.l_onoff, 1);
	RS_INT("default l_linger", lg.l_linger, 0);
	RS_INT("optlen", len, sizeof lg);
	lg.l_onoff = 0;
	lg.l_linger = 0;
	RS_INT("rsetsockopt {0,0}", rs->setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg), 0);
	rs->getsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, &len);
	RS_INT("l_onoff after {0,0}", lg.l_onoff, 0);
	lg.l_onoff = 1;
	lg.l_linger = 5;
	RS_INT("rsetsockopt {1,5}", rs->setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg), 0);
	rs->getsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, &len);
	RS_INT("l_onoff after {1,5}", lg.l_onoff, 1);
	RS_INT("l_linger after {1,5} (never kept)", lg.l_linger, 0);
	rs->close(fd);
	conf_note("default {1,0}; {0,0} -> {0,0}; {1,5} -> {1,0}");
}

static void opt_route_unconnected(const struct conf_case *c)
{
	const struct rs_calls *rs = rs_api();
	int fd = rs_stream();
	struct ibv_path_data pd[2];
	socklen_t len = sizeof pd[0] - 1;
	int ret, e;

	conf_stimulus("RDMA_ROUTE get on an unconnected rsocket: optlen %zu, then %zu",
		      sizeof pd[0] - 1, sizeof pd);
	errno = 0;
	ret = rs->getsockopt(fd, SOL_RDMA, RDMA_ROUTE, pd, &len);
	e = errno;
	CM_EXPECT_FAIL("rgetsockopt (short)", ret, e, EINVAL);
	len = sizeof pd;
	ret = rs->getsockopt(fd, SOL_RDMA, RDMA_ROUTE, pd, &len);
	RS_INT("rgetsockopt", ret, 0);
	RS_INT("optlen (no path)", len, 0);
	rs->close(fd);
	conf_note("short: -1 EINVAL; no path yet: 0, optlen 0");
}

static void fcntl_flags(const struct conf_case *c)
{
	const struct rs_calls *rs = rs_api();
	int fd = rs_stream(), ret, e;

	conf_stimulus("rfcntl F_GETFL, F_SETFL O_NONBLOCK, F_GETFL, F_GETFD");
	RS_INT("F_GETFL", rs->fcntl(fd, F_GETFL), 0);
	RS_INT("F_SETFL O_NONBLOCK", rs->fcntl(fd, F_SETFL, O_NONBLOCK), 0);
	RS_HEX("F_GETFL after", rs->fcntl(fd, F_GETFL), O_NONBLOCK);
	RS_INT("F_SETFL 0", rs->fcntl(fd, F_SETFL, 0), 0);
	RS_HEX("F_GETFL after clearing", rs->fcntl(fd, F_GETFL), 0);
	errno = 0;
	ret = rs->fcntl(fd, F_GETFD);
	e = errno;
	CM_EXPECT_FAIL("F_GETFD", ret, e, EOPNOTSUPP);
	rs->close(fd);
	conf_note("0, O_NONBLOCK, 0; F_GETFD -1 EOPNOTSUPP");
}

/* A descriptor that is no rsocket: an ordinary socket, opened after one rsocket exists (so the
 * library's index has a table for small numbers; rclose and the data calls index it
 * unchecked). */
static void bad_fd(const struct conf_case *c)
{
	const struct rs_calls *rs = rs_api();
	int keep = rs_stream();
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	struct sockaddr_in sin;
	socklen_t len = sizeof sin;
	int v = 1, ret;

	if (fd < 0)
		conf_fatal("socket: %s", conf_errno_name(errno));
	cm_ipv4("0.0.0.0", 0, &sin);
	conf_stimulus("r* calls on fd %d, an ordinary socket", fd);
#define BAD(what, call)                                                                      \
	do {                                                                                 \
		errno = 0;                                                                   \
		ret = (int)(call);                                                           \
		CM_EXPECT_FAIL(what, ret, errno, EBADF);                                     \
	} while (0)
	BAD("rbind", rs->bind(fd, (struct sockaddr *)&sin, sizeof sin));
	BAD("rlisten", rs->listen(fd, 1));
	BAD("raccept", rs->accept(fd, NULL, NULL));
	BAD("rconnect", rs->connect(fd, (struct sockaddr *)&sin, sizeof sin));
	BAD("rshutdown", rs->shutdown(fd, SHUT_RDWR));
	BAD("rgetsockname", rs->getsockname(fd, (struct sockaddr *)&sin, &len));
	BAD("rgetpeername", rs->getpeername(fd, (struct sockaddr *)&sin, &len));
	BAD("rsetsockopt", rs->setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &v, sizeof v));
	BAD("rgetsockopt", rs->getsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &v, &len));
	BAD("rfcntl", rs->fcntl(fd, F_GETFL));
	BAD("rsend", rs->send(fd, &v, 1, 0));
	BAD("rrecv", rs->recv(fd, &v, 1, MSG_DONTWAIT));
#undef BAD
	/* rclose answers a positive EBADF, not -1 */
	RS_INT("rclose (returns the errno value)", rs->close(fd), EBADF);
	close(fd);
	rs->close(keep);
	conf_note("-1 EBADF from each call; rclose returns %d", EBADF);
}


#define CA(id, row, desc, fn, data) { id, "RS", row, desc, NULL, PRE_NONE, NULL, 0, fn, data }
#define C(id, row, desc, fn, data) { id, "RS", row, desc, NULL, PRE_CM, NULL, 0, fn, data }
#define CD(id, row, desc, fn, data) { id, "RS", row, desc, NULL, PRE_CM, NULL, 20, fn, data }
#define CDOC(id, row, desc, doc, fn, data) { id, "RS", row, desc, doc, PRE_CM, NULL, 0, fn, data }
#define CADOC(id, row, desc, doc, fn, data) { id, "RS", row, desc, doc, PRE_NONE, NULL, 0, fn, data }
#define OPTC(id, row, desc, nm, fam) C(id, row, desc, opt_row, &opt_##nm##_##fam)
static const struct conf_case cases[] = {
	CA("RS-1", 1, "rsocket(AF_UNIX, SOCK_STREAM, 0): -1/EOPNOTSUPP", sock_row, &sock_unix),
	CA("RS-2", 2, "rsocket(AF_INET, SOCK_SEQPACKET, 0): -1/EOPNOTSUPP", sock_row,
	  &sock_seqpacket),
	CA("RS-2b", 2, "rsocket(AF_INET, SOCK_RAW, 0): -1/EOPNOTSUPP", sock_row, &sock_raw),
	CA("RS-3", 3, "rsocket(AF_INET, SOCK_STREAM, IPPROTO_UDP): -1/EOPNOTSUPP", sock_row,
	  &sock_stream_udp),
	CA("RS-3b", 3, "rsocket(AF_INET, SOCK_DGRAM, IPPROTO_TCP): -1/EOPNOTSUPP", sock_row,
	  &sock_dgram_tcp),
	CADOC("RS-4", 4, "rsocket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0): -1/EOPNOTSUPP",
	     "socket(2): 'type ... may include the bitwise OR of ... SOCK_NONBLOCK'", sock_row,
	     &sock_nonblock),
	C("RS-5", 5, "rsocket(AF_INET6, SOCK_STREAM, IPPROTO_TCP): a socket, F_GETFL 0",
	  sock_row, &sock_stream6),
	CA("RS-5b", 5, "rsocket(AF_INET, SOCK_DGRAM, IPPROTO_UDP): a socket, F_GETFL 0", sock_row,
	  &sock_dgram),
	{ "RS-6", "RS", 6, "rclose of a fresh (never bound) SOCK_DGRAM rsocket blocks",
	  "close(2) returns; rsocket(7) notes no difference", PRE_NONE, NULL, 0,
	  dgram_close_fresh, NULL },
	OPTC("RS-10", 10, "SO_REUSEADDR: default 0, set 1 -> 1", SO_REUSEADDR, AF_INET),
	CDOC("RS-11", 11, "SO_KEEPALIVE: default 0, set 1 -> 1",
	     "rsocket(7): 'SO_KEEPALIVE (flag supported, but ignored)'", opt_row,
	     &opt_SO_KEEPALIVE_AF_INET),
	OPTC("RS-12", 12, "SO_OOBINLINE: default 0, set 1 -> 1", SO_OOBINLINE, AF_INET),
	CDOC("RS-13", 13, "SO_RCVBUF: default 131072, set 65536 -> 131072 (doubled)",
	     "/etc/rdma/rsocket/mem_default absent: the internal default", opt_row,
	     &opt_SO_RCVBUF_AF_INET),
	OPTC("RS-14", 14, "SO_SNDBUF: default 131072, set 1000 -> 4096 (doubled, at least twice "
	     "the 2048-byte low mark)", SO_SNDBUF, AF_INET),
	OPTC("RS-15", 15, "SO_ERROR: default 0; set -1/EOPNOTSUPP", SO_ERROR, AF_INET),
	OPTC("RS-16", 16, "SO_RCVLOWAT (not supported): get and set -1/EOPNOTSUPP", SO_RCVLOWAT,
	     AF_INET),
	OPTC("RS-17", 17, "TCP_NODELAY: default 0, set 1 -> 1", TCP_NODELAY, AF_INET),
	OPTC("RS-18", 18, "TCP_MAXSEG unconnected: 2048; set 1000 accepted, still 2048",
	     TCP_MAXSEG, AF_INET),
	OPTC("RS-19", 19, "TCP_KEEPIDLE: default 0, set 30 -> 30", TCP_KEEPIDLE, AF_INET),
	C("RS-19b", 19, "TCP_KEEPIDLE set 0: -1/EINVAL", opt_row, &keepidle_zero),
	OPTC("RS-20", 20, "TCP_KEEPCNT: reads 1; set 5 accepted, still 1", TCP_KEEPCNT, AF_INET),
	OPTC("RS-20b", 20, "TCP_KEEPINTVL: reads 1; set 5 accepted, still 1", TCP_KEEPINTVL,
	     AF_INET),
	OPTC("RS-21", 21, "TCP_CORK (not supported): get and set -1/EOPNOTSUPP", TCP_CORK,
	     AF_INET),
	OPTC("RS-22", 22, "IPV6_V6ONLY (AF_INET6): default 0, set 1 -> 1", IPV6_V6ONLY,
	     AF_INET6),
	OPTC("RS-22b", 22, "IPV6_UNICAST_HOPS (not supported): -1/EOPNOTSUPP",
	     IPV6_UNICAST_HOPS, AF_INET6),
	OPTC("RS-23", 23, "RDMA_SQSIZE: default 384, set 100000 -> 65534", RDMA_SQSIZE, AF_INET),
	OPTC("RS-24", 24, "RDMA_RQSIZE: default 384, set 8 -> 8", RDMA_RQSIZE, AF_INET),
	OPTC("RS-25", 25, "RDMA_INLINE: default 64, set 256 -> 256", RDMA_INLINE, AF_INET),
	CDOC("RS-26", 26, "RDMA_IOMAPSIZE: default 0, set 1000 -> 768 (8-bit scale)",
	     "rsocket(7): 'By default, an rsocket does not support remote IO mappings'", opt_row,
	     &opt_RDMA_IOMAPSIZE_AF_INET),
	OPTC("RS-27", 27, "SOL_RDMA option 99: get and set -1/EOPNOTSUPP", 99, AF_INET),
	OPTC("RS-28", 28, "level SOL_IP (IP_TOS): get and set -1/EOPNOTSUPP", IP_TOS, AF_INET),
	C("RS-29", 29, "SO_LINGER: default {1,0}; {0,0} -> l_onoff 0; {1,5} -> {1,0}", opt_linger,
	  NULL),
	C("RS-30", 30, "RDMA_ROUTE unconnected: short optlen -1/EINVAL; else 0 with optlen 0",
	  opt_route_unconnected, NULL),
	C("RS-31", 31, "rfcntl: F_GETFL 0, F_SETFL O_NONBLOCK, F_GETFL O_NONBLOCK; F_GETFD "
	  "-1/EOPNOTSUPP", fcntl_flags, NULL),
	C("RS-32", 32, "r* calls on an fd that is no rsocket: -1/EBADF; rclose returns EBADF "
	  "(positive)", bad_fd, NULL),
};

const struct conf_area conf_area_rs = { "RS", cases, sizeof cases / sizeof cases[0] };
