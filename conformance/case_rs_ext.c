/* RS: the rest of rsockets' calls: the vector and message calls, riomap/riounmap/riowrite,
 * datagram rsockets and rsocket(7)'s fork statement. Expected values are the reference VM's
 * (rdma-core v44 on kernel rxe 6.1). */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "conformance/cm_util.h"
#include "conformance/conformance.h"
#include "conformance/rs_util.h"

/* ---- the vector and message calls ---- */

/* Waits until `fd` has data, then reads once with MSG_DONTWAIT semantics kept by the caller. */
static void wait_in(int fd)
{
	if (rs_poll1(fd, POLLIN, 5000) != POLLIN)
		conf_fatal("no data within 5 s");
}

static void writev_readv(const struct conf_case *c)
{
	const struct rs_calls *rs = rs_api();
	uint8_t out[300], in[300];
	struct iovec wv[3] = { { out, 100 }, { out + 100, 100 }, { out + 200, 100 } };
	struct iovec rv[2] = { { in, 50 }, { in + 50, 250 } };
	size_t got;
	int l, a, p, err;
	ssize_t n;

	rs_pair(c->row, &l, &a, &p);
	conf_stimulus("rwritev 3 x 100; rreadv {50, 250}; the rest by rread");
	rs_fill(out, sizeof out, 11);
	RS_INT("rwritev", rs->writev(a, wv, 3), 300);
	wait_in(p);
	memset(in, 0, sizeof in);
	n = rs->readv(p, rv, 2);
	RS_INT("rreadv (only the first vector is filled)", n, 50);
	got = n > 0 ? (size_t)n : 0;
	got += rs_recv_all(p, in + got, 300 - got, &err);
	RS_INT("bytes in all", got, 300);
	RS_INT("bytes", rs_check(in, 300, 11), 300);
	rs->close(a);
	rs->close(p);
	rs->close(l);
	conf_note("300; rreadv 50; 300 in all");
}

static void write_read(const struct conf_case *c)
{
	const struct rs_calls *rs = rs_api();
	uint8_t out[20], in[64];
	int l, a, p;

	rs_pair(c->row, &l, &a, &p);
	conf_stimulus("rwrite 20; rread(64)");
	rs_fill(out, sizeof out, 16);
	RS_INT("rwrite", rs->write(p, out, 20), 20);
	wait_in(a);
	memset(in, 0, sizeof in);
	RS_INT("rread", rs->read(a, in, sizeof in), 20);
	RS_INT("bytes", rs_check(in, 20, 16), 20);
	rs->close(a);
	rs->close(p);
	rs->close(l);
	conf_note("20, 20");
}

static void sendmsg_recvmsg(const struct conf_case *c)
{
	const struct rs_calls *rs = rs_api();
	uint8_t out[300], in[300];
	struct iovec wv[3] = { { out, 100 }, { out + 100, 100 }, { out + 200, 100 } };
	struct iovec rv = { in, sizeof in };
	struct msghdr m;
	char ctl[64];
	size_t got;
	int l, a, p, ret, e, err;
	ssize_t n;

	rs_pair(c->row, &l, &a, &p);
	conf_stimulus("rsendmsg 3 x 100; rrecvmsg(300); rrecvmsg with msg_control");
	rs_fill(out, sizeof out, 17);
	memset(&m, 0, sizeof m);
	m.msg_iov = wv;
	m.msg_iovlen = 3;
	RS_INT("rsendmsg", rs->sendmsg(a, &m, 0), 300);
	wait_in(p);
	memset(&m, 0, sizeof m);
	memset(in, 0, sizeof in);
	m.msg_iov = &rv;
	m.msg_iovlen = 1;
	n = rs->recvmsg(p, &m, 0);
	conf_expect(n > 0, "rrecvmsg: %zd errno %s", n, conf_errno_name(errno));
	got = n > 0 ? (size_t)n : 0;
	got += rs_recv_all(p, in + got, 300 - got, &err);
	RS_INT("bytes in all", got, 300);
	RS_INT("bytes", rs_check(in, 300, 17), 300);
	m.msg_control = ctl;
	m.msg_controllen = sizeof ctl;
	errno = 0;
	ret = (int)rs->recvmsg(p, &m, 0);
	e = errno;
	CM_EXPECT_FAIL("rrecvmsg with msg_control", ret, e, EOPNOTSUPP);
	rs->close(a);
	rs->close(p);
	rs->close(l);
	conf_note("300 sent, 300 received; control -1 EOPNOTSUPP");
}

/* ---- riomap, riowrite ---- */

static void iomap_write(const struct conf_case *c)
{
	const struct rs_calls *rs = rs_api();
	struct sockaddr_in sin;
	static uint8_t target[8192];
	uint8_t out[4096], mark = 'm';
	int l = rs_stream(), a = rs_stream(), p;
	off_t off;
	size_t n;

	rs_addr(c->row, &sin);
	rs_setopt(l, SOL_RDMA, RDMA_IOMAPSIZE, 4);
	rs_setopt(a, SOL_RDMA, RDMA_IOMAPSIZE, 4);
	if (rs->bind(l, (struct sockaddr *)&sin, sizeof sin) || rs->listen(l, 8) ||
	    rs->connect(a, (struct sockaddr *)&sin, sizeof sin))
		conf_fatal("rbind/rlisten/rconnect: %s", conf_errno_name(errno));
	p = rs->accept(l, NULL, NULL);
	if (p < 0)
		conf_fatal("raccept: %s", conf_errno_name(errno));
	conf_stimulus("RDMA_IOMAPSIZE 4 on both; passive riomap(8 KiB, PROT_WRITE, offset 0); "
		      "a message; active riowrite 4096 at offset 1000, then a marker byte");
	memset(target, 0, sizeof target);
	off = rs->iomap(p, target, sizeof target, PROT_WRITE, 0, 0);
	RS_INT("riomap", off, 0);
	/* the mapping reaches the peer with the next transfer */
	RS_INT("passive rsend (carries the mapping)", rs->send(p, &mark, 1, 0), 1);
	RS_INT("active rrecv", rs->recv(a, &mark, 1, 0), 1);
	rs_fill(out, sizeof out, 12);
	n = rs->iowrite(a, out, sizeof out, 1000, 0);
	RS_INT("riowrite", n, 4096);
	RS_INT("active rsend marker", rs->send(a, &mark, 1, 0), 1);
	RS_INT("passive rrecv marker (the iowrite is not data)", rs->recv(p, &mark, 1, 0), 1);
	RS_INT("mapped bytes at 1000", rs_check(target + 1000, 4096, 12), 4096);
	RS_INT("byte before", target[999], 0);
	RS_INT("byte after", target[5096], 0);
	n = rs->iowrite(a, out, 16, 100000, 0);
	RS_INT("riowrite outside every mapping", n, 0);
	RS_INT("riounmap", rs->iounmap(p, target, sizeof target), 0);
	rs->close(a);
	rs->close(p);
	rs->close(l);
	conf_note("offset 0; 4096 placed at 1000 exactly, the stream only sees the marker; "
		  "outside: 0; riounmap 0");
}

static void iomap_errors(const struct conf_case *c)
{
	const struct rs_calls *rs = rs_api();
	static uint8_t buf[4096];
	int fd = rs_stream(), l, a, p, e;
	off_t off;

	conf_stimulus("riomap on an unconnected rsocket; PROT_READ; riounmap of an unmapped "
		      "buffer; riomap PROT_WRITE without RDMA_IOMAPSIZE");
	errno = 0;
	off = rs->iomap(fd, buf, sizeof buf, PROT_WRITE, 0, 0);
	e = errno;
	CM_EXPECT_FAIL("riomap (unconnected)", off, e, EINVAL);
	rs->close(fd);
	rs_pair(c->row, &l, &a, &p);
	errno = 0;
	off = rs->iomap(a, buf, sizeof buf, PROT_READ, 0, 0);
	e = errno;
	CM_EXPECT_FAIL("riomap PROT_READ", off, e, EINVAL);
	errno = 0;
	off = rs->iounmap(a, buf, sizeof buf);
	e = errno;
	CM_EXPECT_FAIL("riounmap (nothing mapped)", off, e, EINVAL);
	errno = 0;
	off = rs->iomap(a, buf, sizeof buf, PROT_WRITE, 0, 0);
	e = errno;
	CM_EXPECT_FAIL("riomap PROT_WRITE, no mapping table", off, e, ENOMEM);
	RS_INT("riomap PROT_NONE (local only, offset -1: the address)",
		   rs->iomap(a, buf, sizeof buf, PROT_NONE, 0, -1), (off_t)(uintptr_t)buf);
	RS_INT("riounmap of it", rs->iounmap(a, buf, sizeof buf), 0);
	rs->close(a);
	rs->close(p);
	rs->close(l);
	conf_note("EINVAL, EINVAL, EINVAL, ENOMEM; PROT_NONE maps at the address");
}

/* ---- datagram rsockets ---- */

static void dgram(const struct conf_case *c)
{
	const struct rs_calls *rs = rs_api();
	struct sockaddr_in sa, sb, from, name;
	socklen_t flen = sizeof from, nlen = sizeof name;
	uint8_t out[1000], in[1200];
	const bool r_fails = c->data != NULL;
	int a, b, rev, e;
	ssize_t n;

	/* rsockets give their first UD QP an AH without a GRH, which the kernel refuses on
	 * every RoCE port (docs/reference/rsockets-rxe.md): RS-90 is that failure, RS-90b the
	 * exchange on an InfiniBand port (RS-90b@IB) */
	if (r_fails && rs_link_layer() == IBV_LINK_LAYER_INFINIBAND)
		conf_notrun("the local address is on an InfiniBand port (the row is RoCE's failure)");
	if (!r_fails && rs_link_layer() != IBV_LINK_LAYER_INFINIBAND)
		conf_notrun("datagram rsockets need an InfiniBand port: RoCE refuses their address "
			    "handle (RS-90)");
	rs_addr(c->row, &sa);
	sb = sa;
	sb.sin_port = htons((uint16_t)(RS_PORT + c->row + 500));
	a = rs->socket(AF_INET, SOCK_DGRAM, 0);
	b = rs->socket(AF_INET, SOCK_DGRAM, 0);
	if (a < 0 || b < 0)
		conf_fatal("rsocket SOCK_DGRAM: %s", conf_errno_name(errno));
	conf_stimulus("two SOCK_DGRAM rsockets bound to %s ports %d and %d; rsendto 1000 bytes "
		      "a -> b; rrecvfrom", inet_ntoa(sa.sin_addr), RS_PORT + c->row,
		      RS_PORT + c->row + 500);
	RS_INT("rbind a", rs->bind(a, (struct sockaddr *)&sa, sizeof sa), 0);
	RS_INT("rbind b", rs->bind(b, (struct sockaddr *)&sb, sizeof sb), 0);
	RS_INT("rgetsockname b", rs->getsockname(b, (struct sockaddr *)&name, &nlen), 0);
	RS_INT("b's port", ntohs(name.sin_port), RS_PORT + c->row + 500);
	rs_fill(out, sizeof out, 13);
	errno = 0;
	n = rs->sendto(a, out, sizeof out, 0, (struct sockaddr *)&sb, sizeof sb);
	e = errno;
	if (r_fails) {
		/* kernel rxe 6.1: the UD address handle's creation fails (EINVAL) and a later
		 * epoll_ctl(DEL) leaves ENOENT (docs/reference/rsockets-rxe.md) */
		CM_EXPECT_FAIL("rsendto", n, e, ENOENT);
		conf_note("rsendto -1 errno %s", conf_errno_name(e));
		goto out;
	}
	if (!conf_expect(n == (ssize_t)sizeof out, "rsendto: %zd errno %s", n,
			 conf_errno_name(e)))
		goto out;
	rev = rs_poll1(b, POLLIN, 5000);
	RS_HEX("b rpoll", rev, POLLIN);
	(void)e;
	memset(in, 0, sizeof in);
	n = rs->recvfrom(b, in, sizeof in, MSG_DONTWAIT, (struct sockaddr *)&from, &flen);
	RS_INT("rrecvfrom", n, sizeof out);
	RS_INT("bytes", rs_check(in, sizeof out, 13), sizeof out);
	RS_HEX("source address", from.sin_addr.s_addr, sa.sin_addr.s_addr);
	RS_INT("source port", ntohs(from.sin_port), RS_PORT + c->row);
out:
	rs->close(a);
	rs->close(b);
	conf_note("1000 bytes from %s:%d", inet_ntoa(sa.sin_addr), RS_PORT + c->row);
}

static const bool dgram_fails = true;

/* ---- fork ---- */

/* rsocket(7): "fork is supportable for server applications that accept a connection, then
 * fork off a process" with RDMAV_FORK_SAFE=1: the parent's connection goes on carrying data
 * while a child exists and after it ended. */
static void fork_parent(const struct conf_case *c)
{
	int l, a, p, st = 0;
	pid_t pid;

	if (setenv("RDMAV_FORK_SAFE", "1", 1))
		conf_fatal("setenv");
	rs_pair(c->row, &l, &a, &p);
	conf_stimulus("RDMAV_FORK_SAFE=1; connected pair; fork (the child exits); 64 KiB each way");
	pid = fork();
	if (pid == 0)
		_exit(0);
	if (pid < 0)
		conf_fatal("fork: %s", conf_errno_name(errno));
	rs_one_way("active -> passive with a child alive", a, p, 65536, 65536, 14);
	waitpid(pid, &st, 0);
	RS_INT("child exit status", WIFEXITED(st) ? WEXITSTATUS(st) : -1, 0);
	rs_one_way("passive -> active after the child", p, a, 65536, 65536, 15);
	rs_api()->close(a);
	rs_api()->close(p);
	rs_api()->close(l);
	conf_note("64 KiB each way, before and after the child ended");
}

#define C(id, row, desc, fn, data) { id, "RS", row, desc, NULL, PRE_CM, NULL, 30, fn, data }
#define CDOC(id, row, desc, doc, fn, data) { id, "RS", row, desc, doc, PRE_CM, NULL, 30, fn, data }
static const struct conf_case cases[] = {
	CDOC("RS-81", 81, "rwritev 3 x 100: 300; rreadv {50, 250}: 50 (the first vector only)",
	     "readv(2): 'reads iovcnt buffers'", writev_readv, NULL),
	C("RS-81b", 81, "rwrite 20, rread(64): 20", write_read, NULL),
	C("RS-81c", 81, "rsendmsg 3 x 100: 300, received whole; rrecvmsg with msg_control "
	  "-1/EOPNOTSUPP", sendmsg_recvmsg, NULL),
	C("RS-82", 82, "riomap + riowrite: bytes placed at the offset, not in the stream; "
	  "outside a mapping 0; riounmap 0", iomap_write, NULL),
	C("RS-83", 83, "riomap/riounmap errors: unconnected, PROT_READ, unmapped, no table",
	  iomap_errors, NULL),
	CDOC("RS-90", 90, "SOCK_DGRAM: rbind both 0; rsendto 1000 bytes -1/ENOENT (kernel rxe 6.1)",
	     "rsocket(7): 'PF_INET, PF_INET6, SOCK_STREAM, SOCK_DGRAM' are supported", dgram,
	     &dgram_fails),
	{ "RS-90b", "RS", 90, "SOCK_DGRAM: rbind, rsendto 1000 bytes, rpoll POLLIN, rrecvfrom with "
	  "the source (where datagram rsockets work)", NULL, PRE_CM | PRE_EMU_ONLY, NULL, 30,
	  dgram, NULL },
	CDOC("RS-95", 95, "RDMAV_FORK_SAFE=1 and fork: the parent's connection carries 64 KiB "
	     "each way", "rsocket(7): 'fork is supportable for server applications that accept "
	     "a connection, then fork off a process'", fork_parent, NULL),
};

const struct conf_area conf_area_rs_ext = { "RSEXT", cases, sizeof cases / sizeof cases[0] };
