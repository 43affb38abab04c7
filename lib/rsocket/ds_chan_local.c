/* The local backend of the UDP side channel (ds_chan.h): without a sandbox, the datagram
 * rsockets of this process carry their UDP messages to each other over loopback.
 *
 * Each channel bound to a fabric address (address, port) is entered in a process-wide table,
 * and its UDP socket is bound to the loopback address of its family on that port (or, when
 * the machine has that port in use, on any free one). A message to (address, port) goes to
 * the loopback port of the table's entry, preceded by a frame header: the sender's fabric
 * address (a union ds_addr, 28 bytes), which the receiver strips and reports as the source.
 * Frames whose loopback sender is no channel of this process are dropped, so nothing from
 * outside the process is taken for a peer's. A destination no entry serves is refused with
 * ENETUNREACH and one line on stderr: without a sandbox it would be the machine's real
 * network. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ds_addr.h"
#include "ds_chan.h"

#define FRAME_HDR ((socklen_t)sizeof(union ds_addr))
#define MAX_IOV 10

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ds_chan *table;
static int warned;

static uint16_t port_of(const union ds_addr *a)
{
	return a->sa.sa_family == AF_INET6 ? a->sin6.sin6_port : a->sin.sin_port;
}

static int same_ip(const union ds_addr *a, const union ds_addr *b)
{
	if (a->sa.sa_family != b->sa.sa_family)
		return 0;
	if (a->sa.sa_family == AF_INET)
		return a->sin.sin_addr.s_addr == b->sin.sin_addr.s_addr;
	return !memcmp(&a->sin6.sin6_addr, &b->sin6.sin6_addr, 16);
}

/* The entry serving a: bound to that address and port, or to the wildcard on that port. */
static struct ds_chan *lookup_locked(const union ds_addr *a)
{
	struct ds_chan *c, *wild = NULL;

	for (c = table; c; c = c->next) {
		if (c->name.sa.sa_family != a->sa.sa_family || port_of(&c->name) != port_of(a))
			continue;
		if (same_ip(&c->name, a))
			return c;
		if (ds_any_addr(&c->name))
			wild = c;
	}
	return wild;
}

static int from_us_locked(const union ds_addr *lo)
{
	struct ds_chan *c;

	for (c = table; c; c = c->next)
		if (c->lo.sa.sa_family == lo->sa.sa_family && port_of(&c->lo) == port_of(lo))
			return 1;
	return 0;
}

/* The kernel's checks of a UDP socket's bind/connect address. */
static int check_addr(const struct ds_chan *c, const struct sockaddr *addr, socklen_t len)
{
	socklen_t min = c->domain == AF_INET6 ? 24 : (socklen_t)sizeof(struct sockaddr_in);

	if (!addr || len < min) {
		errno = EINVAL;
		return -1;
	}
	if (addr->sa_family != c->domain) {
		errno = EAFNOSUPPORT;
		return -1;
	}
	return 0;
}

static void loopback(int domain, uint16_t port, union ds_addr *lo)
{
	memset(lo, 0, sizeof *lo);
	lo->sa.sa_family = (sa_family_t)domain;
	if (domain == AF_INET6) {
		lo->sin6.sin6_addr = in6addr_loopback;
		lo->sin6.sin6_port = port;
	} else {
		lo->sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		lo->sin.sin_port = port;
	}
}

/* Binds c to the fabric address a (its port 0: any free one). */
static int bind_as(struct ds_chan *c, const union ds_addr *a)
{
	union ds_addr lo, name = *a;
	socklen_t len = sizeof lo;
	struct ds_chan *o;

	pthread_mutex_lock(&table_lock);
	for (o = table; port_of(a) && o; o = o->next)
		if (o->name.sa.sa_family == a->sa.sa_family && port_of(&o->name) == port_of(a) &&
		    (same_ip(&o->name, a) || ds_any_addr(&o->name) || ds_any_addr(a))) {
			pthread_mutex_unlock(&table_lock);
			errno = EADDRINUSE;
			return -1;
		}
	loopback(c->domain, port_of(a), &lo);
	if (bind(c->fd, &lo.sa, ds_addrlen(&lo.sa))) {
		loopback(c->domain, 0, &lo);
		if (bind(c->fd, &lo.sa, ds_addrlen(&lo.sa))) {
			pthread_mutex_unlock(&table_lock);
			return -1;
		}
	}
	getsockname(c->fd, &lo.sa, &len);
	c->lo = lo;
	if (!port_of(&name)) {
		if (name.sa.sa_family == AF_INET6)
			name.sin6.sin6_port = port_of(&lo);
		else
			name.sin.sin_port = port_of(&lo);
	}
	c->name = name;
	c->bound = 1;
	c->next = table;
	table = c;
	pthread_mutex_unlock(&table_lock);
	return 0;
}

static int autobind(struct ds_chan *c)
{
	union ds_addr any;

	if (c->bound)
		return 0;
	memset(&any, 0, sizeof any);
	any.sa.sa_family = (sa_family_t)c->domain;
	return bind_as(c, &any);
}

static int l_open(struct ds_chan *c)
{
	(void)c;
	return 0;
}

static int l_bind(struct ds_chan *c, const struct sockaddr *addr, socklen_t len)
{
	union ds_addr a;

	if (check_addr(c, addr, len))
		return -1;
	if (c->bound) {
		errno = EINVAL;
		return -1;
	}
	memset(&a, 0, sizeof a);
	memcpy(&a, addr, ds_addrlen(addr));
	return bind_as(c, &a);
}

static int l_connect(struct ds_chan *c, const struct sockaddr *addr, socklen_t len)
{
	if (addr && len >= sizeof(sa_family_t) && addr->sa_family == AF_UNSPEC) {
		c->connected = 0;
		return 0;
	}
	if (check_addr(c, addr, len) || autobind(c))
		return -1;
	memset(&c->peer, 0, sizeof c->peer);
	memcpy(&c->peer, addr, ds_addrlen(addr));
	c->connected = 1;
	return 0;
}

static int l_getsockname(struct ds_chan *c, struct sockaddr *addr, socklen_t *len)
{
	union ds_addr none;

	if (c->bound) {
		ds_copy_addr(&c->name, addr, len);
		return 0;
	}
	memset(&none, 0, sizeof none);
	none.sa.sa_family = (sa_family_t)c->domain;
	ds_copy_addr(&none, addr, len);
	return 0;
}

static int l_getpeername(struct ds_chan *c, struct sockaddr *addr, socklen_t *len)
{
	if (!c->connected) {
		errno = ENOTCONN;
		return -1;
	}
	ds_copy_addr(&c->peer, addr, len);
	return 0;
}

static int l_route_src(struct ds_chan *c, const struct sockaddr *dst, socklen_t dstlen,
		       union ds_addr *src, socklen_t *srclen);

static int refuse(const union ds_addr *a)
{
	char text[INET6_ADDRSTRLEN] = "";

	if (!__atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED)) {
		inet_ntop(a->sa.sa_family,
			  a->sa.sa_family == AF_INET6 ? (const void *)&a->sin6.sin6_addr :
							(const void *)&a->sin.sin_addr,
			  text, sizeof text);
		fprintf(stderr, "rdmaemu: rsocket datagram to %s port %u refused: without a "
				"sandbox, only datagram rsockets of this process are reachable\n",
			text, ntohs(port_of(a)));
	}
	errno = ENETUNREACH;
	return -1;
}

static ssize_t l_sendmsg(struct ds_chan *c, const struct iovec *iov, int iovcnt, int flags,
			 const struct sockaddr *dst, socklen_t dstlen)
{
	struct iovec miov[MAX_IOV];
	union ds_addr to, lo, src;
	struct ds_chan *t;
	struct msghdr msg;
	socklen_t srclen;
	ssize_t n;

	if (iovcnt + 1 > MAX_IOV) {
		errno = EMSGSIZE;
		return -1;
	}
	if (!dst) {
		if (!c->connected) {
			errno = EDESTADDRREQ;
			return -1;
		}
		to = c->peer;
	} else {
		if (check_addr(c, dst, dstlen))
			return -1;
		memset(&to, 0, sizeof to);
		memcpy(&to, dst, ds_addrlen(dst));
	}
	if (autobind(c))
		return -1;
	pthread_mutex_lock(&table_lock);
	t = lookup_locked(&to);
	if (t)
		lo = t->lo;
	pthread_mutex_unlock(&table_lock);
	if (!t)
		return refuse(&to);
	/* the sender's address as the receiver must see it: never the wildcard */
	src = c->name;
	if (ds_any_addr(&src)) {
		if (l_route_src(c, &to.sa, ds_addrlen(&to.sa), &src, &srclen))
			return -1;
		if (src.sa.sa_family == AF_INET6)
			src.sin6.sin6_port = port_of(&c->name);
		else
			src.sin.sin_port = port_of(&c->name);
	}
	miov[0].iov_base = &src;
	miov[0].iov_len = FRAME_HDR;
	memcpy(&miov[1], iov, sizeof *iov * (size_t)iovcnt);
	memset(&msg, 0, sizeof msg);
	msg.msg_name = &lo;
	msg.msg_namelen = ds_addrlen(&lo.sa);
	msg.msg_iov = miov;
	msg.msg_iovlen = (size_t)iovcnt + 1;
	n = sendmsg(c->fd, &msg, flags);
	return n < 0 ? n : n - FRAME_HDR;
}

static ssize_t l_recvfrom(struct ds_chan *c, void *buf, size_t len, struct sockaddr *src,
			  socklen_t *srclen)
{
	union ds_addr from, lo;
	struct iovec iov[2];
	struct msghdr msg;
	ssize_t n;
	int ours;

	for (;;) {
		iov[0].iov_base = &from;
		iov[0].iov_len = FRAME_HDR;
		iov[1].iov_base = buf;
		iov[1].iov_len = len;
		memset(&msg, 0, sizeof msg);
		msg.msg_name = &lo;
		msg.msg_namelen = sizeof lo;
		msg.msg_iov = iov;
		msg.msg_iovlen = 2;
		n = recvmsg(c->fd, &msg, MSG_DONTWAIT);
		if (n < 0)
			return n;
		pthread_mutex_lock(&table_lock);
		ours = from_us_locked(&lo);
		pthread_mutex_unlock(&table_lock);
		if (!ours || n < FRAME_HDR || (from.sa.sa_family != AF_INET &&
					       from.sa.sa_family != AF_INET6))
			continue;
		if (c->connected && (!same_ip(&from, &c->peer) ||
				     port_of(&from) != port_of(&c->peer)))
			continue;
		if (src && srclen)
			ds_copy_addr(&from, src, srclen);
		return n - FRAME_HDR;
	}
}

/* The source the emulated rdma_cm picks for dst: this host's address towards it. */
static int l_route_src(struct ds_chan *c, const struct sockaddr *dst, socklen_t dstlen,
		       union ds_addr *src, socklen_t *srclen)
{
	struct rdma_cm_id *id;
	int ret;

	(void)c;
	(void)dstlen;
	if (rdma_create_id(NULL, &id, NULL, RDMA_PS_UDP))
		return -1;
	ret = rdma_resolve_addr(id, NULL, (struct sockaddr *)dst, 2000);
	if (!ret) {
		memset(src, 0, sizeof *src);
		memcpy(src, rdma_get_local_addr(id), ds_addrlen(rdma_get_local_addr(id)));
		*srclen = ds_addrlen(&src->sa);
	}
	rdma_destroy_id(id);
	return ret;
}

static void l_close(struct ds_chan *c)
{
	struct ds_chan **p;

	pthread_mutex_lock(&table_lock);
	for (p = &table; *p; p = &(*p)->next)
		if (*p == c) {
			*p = c->next;
			break;
		}
	pthread_mutex_unlock(&table_lock);
	close(c->fd);
	free(c);
}

const struct ds_chan_ops ds_chan_local_ops = {
	.name = "local",
	.open = l_open,
	.bind = l_bind,
	.connect = l_connect,
	.getsockname = l_getsockname,
	.getpeername = l_getpeername,
	.sendmsg = l_sendmsg,
	.recvfrom = l_recvfrom,
	.route_src = l_route_src,
	.close = l_close,
};
