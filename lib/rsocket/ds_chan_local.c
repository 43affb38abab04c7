/* The local backend of the UDP side channel (ds_chan.h): without a sandbox, the datagram
 * rsockets of this process carry their UDP messages to each other in memory.
 *
 * Each channel bound to a fabric address (address, port) is entered in a process-wide table.
 * A message to (address, port) is queued, with the sender's fabric address, on the table's
 * entry for it, and the entry's eventfd turns readable: the service thread polls that fd
 * (ds_chan's rfd) as rdma-core's polls the UDP socket. The hand-over is done when the send
 * returns, so on the virtual clock a waiting service thread counts as woken at once (a
 * datagram sent over loopback could sit in the kernel's backlog while every thread looks
 * asleep, and the clock would jump past it). As UDP's, a queue holding the receiver's
 * SO_RCVBUF drops what comes more. A destination no entry serves is refused with ENETUNREACH
 * and one line on stderr: without a sandbox it would be the machine's real network. The UDP
 * socket itself stays the rsocket's number and carries its socket options; nothing is sent
 * on it. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "ds_addr.h"
#include "ds_chan.h"
#include "util/failcall.h"

/* The largest UDP payload: 65,535 less the IP header (20 for IPv4; IPv6's is outside its
 * payload length) and the UDP header. */
#define UDP_MAX_V4 65507
#define UDP_MAX_V6 65527

struct ds_lframe {
	struct ds_lframe *next;
	union ds_addr from;
	size_t len;
	uint8_t data[];
};

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

/* A free port of the family in the kernel's default ephemeral range (32768-60999), from a
 * rotating start as the kernel's; 0 when every one is taken. */
static uint16_t ephemeral_locked(sa_family_t family)
{
	static unsigned next;
	const unsigned lo = 32768, n = 60999 - 32768 + 1;
	const struct ds_chan *o;

	for (unsigned i = 0; i < n; i++) {
		uint16_t port = htons((uint16_t)(lo + (next + i) % n));

		for (o = table; o; o = o->next)
			if (o->name.sa.sa_family == family && port_of(&o->name) == port)
				break;
		if (!o) {
			next = (next + i + 1) % n;
			return port;
		}
	}
	return 0;
}

/* Binds c to the fabric address a (its port 0: any free one). */
static int bind_as(struct ds_chan *c, const union ds_addr *a)
{
	union ds_addr name = *a;
	struct ds_chan *o;
	uint16_t port;

	pthread_mutex_lock(&table_lock);
	for (o = table; port_of(a) && o; o = o->next)
		if (o->name.sa.sa_family == a->sa.sa_family && port_of(&o->name) == port_of(a) &&
		    (same_ip(&o->name, a) || ds_any_addr(&o->name) || ds_any_addr(a))) {
			pthread_mutex_unlock(&table_lock);
			errno = EADDRINUSE;
			return -1;
		}
	if (!port_of(&name)) {
		port = ephemeral_locked(name.sa.sa_family);
		if (!port) {
			pthread_mutex_unlock(&table_lock);
			errno = EADDRINUSE;
			return -1;
		}
		if (name.sa.sa_family == AF_INET6)
			name.sin6.sin6_port = port;
		else
			name.sin.sin_port = port;
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
	c->rfd = emu_eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	return c->rfd < 0 ? -1 : 0;
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

/* The receiver's SO_RCVBUF, as the kernel holds it (twice what was set). */
static size_t rcvbuf_of(const struct ds_chan *t)
{
	int v = 0;
	socklen_t len = sizeof v;

	if (getsockopt(t->fd, SOL_SOCKET, SO_RCVBUF, &v, &len) || v <= 0)
		return 212992;
	return (size_t)v;
}

/* Queues a datagram on t (table_lock held): false when t's queue has no room, a drop. */
static bool enqueue_locked(struct ds_chan *t, struct ds_lframe *f)
{
	static const uint64_t one = 1;

	if (t->qbytes && t->qbytes + f->len > rcvbuf_of(t))
		return false;
	f->next = NULL;
	if (t->qtail)
		t->qtail->next = f;
	else
		t->qhead = f;
	t->qtail = f;
	t->qbytes += f->len;
	if (write(t->rfd, &one, sizeof one) < 0) {
		/* the counter cannot overflow at one a datagram */
	}
	return true;
}

static ssize_t l_sendmsg(struct ds_chan *c, const struct iovec *iov, int iovcnt, int flags,
			 const struct sockaddr *dst, socklen_t dstlen)
{
	union ds_addr to, src;
	struct ds_lframe *f;
	struct ds_chan *t;
	socklen_t srclen;
	size_t len = 0;
	uint8_t *p;

	(void)flags;	/* nothing waits: a full queue drops, as UDP's */
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
	for (int i = 0; i < iovcnt; i++)
		len += iov[i].iov_len;
	if (len > (c->domain == AF_INET6 ? UDP_MAX_V6 : UDP_MAX_V4)) {
		errno = EMSGSIZE;
		return -1;
	}
	if (autobind(c))
		return -1;
	pthread_mutex_lock(&table_lock);
	t = lookup_locked(&to);
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
	f = emu_malloc(sizeof *f + len);
	if (!f) {
		errno = ENOBUFS;
		return -1;
	}
	f->from = src;
	f->len = len;
	p = f->data;
	for (int i = 0; i < iovcnt; i++) {
		memcpy(p, iov[i].iov_base, iov[i].iov_len);
		p += iov[i].iov_len;
	}
	/* to whatever serves the address now: gone meanwhile, the datagram is lost, as UDP's */
	pthread_mutex_lock(&table_lock);
	t = lookup_locked(&to);
	if (!t || !enqueue_locked(t, f))
		free(f);
	pthread_mutex_unlock(&table_lock);
	return (ssize_t)len;
}

/* The oldest datagram of c (table_lock held), the eventfd drained with the last one. */
static struct ds_lframe *dequeue_locked(struct ds_chan *c)
{
	struct ds_lframe *f = c->qhead;
	uint64_t n;

	if (!f)
		return NULL;
	c->qhead = f->next;
	if (!c->qhead) {
		c->qtail = NULL;
		if (read(c->rfd, &n, sizeof n) < 0) {
			/* already drained */
		}
	}
	c->qbytes -= f->len;
	return f;
}

static ssize_t l_recvfrom(struct ds_chan *c, void *buf, size_t len, struct sockaddr *src,
			  socklen_t *srclen)
{
	struct ds_lframe *f;
	size_t n;

	for (;;) {
		pthread_mutex_lock(&table_lock);
		f = dequeue_locked(c);
		pthread_mutex_unlock(&table_lock);
		if (!f) {
			errno = EAGAIN;
			return -1;
		}
		if (c->connected && (!same_ip(&f->from, &c->peer) ||
				     port_of(&f->from) != port_of(&c->peer))) {
			free(f);
			continue;
		}
		n = f->len < len ? f->len : len;
		memcpy(buf, f->data, n);
		if (src && srclen)
			ds_copy_addr(&f->from, src, srclen);
		free(f);
		return (ssize_t)n;
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
	struct ds_lframe *f;
	struct ds_chan **p;

	pthread_mutex_lock(&table_lock);
	for (p = &table; *p; p = &(*p)->next)
		if (*p == c) {
			*p = c->next;
			break;
		}
	while ((f = dequeue_locked(c)))
		free(f);
	pthread_mutex_unlock(&table_lock);
	close(c->rfd);
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
