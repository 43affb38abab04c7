/* Links between daemons over UDP: emu/daemon/udp_link.h. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "emu/daemon/udp_link.h"
#include "emu/sim/engine.h"
#include "emu/sim/fabric.h"
#include "emu/sim/topology.h"
#include "emu/sim/wire.h"

/* Datagrams read in one turn of the main loop, at most: the clients get their turn between. */
#define BURST 32
#define TURN_BURSTS 8
/* Socket buffers: a window of 1 KiB frames several links deep, so that a main loop busy with
 * its clients for a while does not make the kernel drop what arrives meanwhile. */
#define SOCK_BUF (8 << 20)

struct hdr {
	uint32_t magic;
	uint8_t version, end;
	uint16_t from;
	uint32_t link, seq;
	uint64_t fabric;
};
_Static_assert(sizeof(struct hdr) == EMU_DUDP_HDR_LEN, "the documented layout");

/* A ghost port: where what reaches it goes. */
struct ghost {
	uint32_t link;
	uint8_t end;
	unsigned peer;
};

struct peer {
	struct sockaddr_storage sa;
	socklen_t salen;
	uint32_t tx_seq;
	uint32_t rx_seq; /* the highest seen */
	bool rx_any;
};

static struct {
	const struct emu_fabric *f;
	struct emu_topology *t;
	unsigned self; /* index in f->daemons */
	uint64_t fabric_id;
	int fd;
	struct peer *peers; /* [f->ndaemons]; self's unused */
	struct ghost *ghosts; /* [endpoints] */
	struct {
		uint64_t sent, send_drops, received, short_, oversized, bad_header, wrong_fabric,
			unknown_sender, unknown_link, lost, late, ghost_tx, down;
	} n;
} u = { .fd = -1 };

static uint64_t be64(uint64_t v)
{
	return ((uint64_t)htonl((uint32_t)v) << 32) | htonl((uint32_t)(v >> 32));
}

static void to_sockaddr(const struct emu_fabric_daemon *dm, struct peer *p)
{
	memset(&p->sa, 0, sizeof(p->sa));
	if (dm->family == AF_INET) {
		struct sockaddr_in *s = (struct sockaddr_in *)&p->sa;

		s->sin_family = AF_INET;
		s->sin_port = htons(dm->port);
		s->sin_addr = dm->addr.v4;
		p->salen = sizeof(*s);
	} else {
		struct sockaddr_in6 *s = (struct sockaddr_in6 *)&p->sa;

		s->sin6_family = AF_INET6;
		s->sin6_port = htons(dm->port);
		s->sin6_addr = dm->addr.v6;
		p->salen = sizeof(*s);
	}
}

bool emu_dudp_active(void)
{
	return u.f != NULL;
}

const char *emu_dudp_remote(size_t host)
{
	if (!u.f || host >= u.f->nhosts || u.f->hosts[host].daemon == u.self + 1)
		return NULL;
	return u.f->daemons[u.f->hosts[host].daemon - 1].name;
}

int emu_dudp_tx(void *ctx, int ep, size_t host, size_t dev, unsigned port, const void *frame,
		size_t len)
{
	(void)ctx;
	(void)dev;
	(void)port;
	if (emu_dudp_remote(host)) {
		u.n.ghost_tx++; /* its own daemon sends what the host says */
		return 0;
	}
	return emu_wire_send(emu_topology_wire(u.t), ep, frame, len);
}

/* The receiver of a ghost port: the frame goes to the daemon of its host. Engine lock held. */
static void forward(void *ctx, const uint8_t *frame, size_t len, uint64_t now)
{
	struct ghost *g = ctx;
	struct peer *p = &u.peers[g->peer];
	struct hdr h = { htonl(EMU_DUDP_MAGIC), EMU_DUDP_VERSION, g->end, htons((uint16_t)u.self),
			 htonl(g->link), htonl(++p->tx_seq), be64(u.fabric_id) };
	struct iovec iov[2] = { { &h, sizeof(h) }, { (void *)frame, len } };
	struct msghdr m = { .msg_name = &p->sa, .msg_namelen = p->salen, .msg_iov = iov,
			    .msg_iovlen = 2 };

	(void)now;
	/* never block with the engine lock held: a full socket drops, as a congested link */
	if (sendmsg(u.fd, &m, MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
		u.n.send_drops++;
	else
		u.n.sent++;
}

/* The ports of the other daemons' hosts forward to them. */
static int install_ghosts(void)
{
	size_t n = emu_topology_nendpoints(u.t);

	u.ghosts = calloc(n ? n : 1, sizeof(*u.ghosts));
	if (!u.ghosts)
		return -1;
	for (size_t ep = 0; ep < n; ep++) {
		struct emu_endpoint info;
		const struct emu_link *lk;
		int link = emu_wire_endpoint_link(emu_topology_wire(u.t), (int)ep);

		if (emu_topology_endpoint_info(u.t, (int)ep, &info) ||
		    info.kind != EMU_EP_HOST_PORT || !emu_dudp_remote((size_t)info.node) || link < 0)
			continue;
		lk = &u.f->links[link];
		u.ghosts[ep].link = (uint32_t)link;
		u.ghosts[ep].end = !(lk->a.kind == EMU_EP_HOST_PORT && lk->a.node == info.node &&
				     lk->a.device == info.device && lk->a.port == info.port);
		u.ghosts[ep].peer = u.f->hosts[info.node].daemon - 1;
		if (emu_topology_set_rx(u.t, (int)ep, forward, &u.ghosts[ep]))
			return -1;
	}
	return 0;
}

static int open_socket(void)
{
	struct peer *me = &u.peers[u.self];
	int sz = SOCK_BUF;

	u.fd = socket(me->sa.ss_family, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (u.fd < 0)
		return -1;
	/* beyond net.core.[rw]mem_max when allowed to */
	if (setsockopt(u.fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz)))
		setsockopt(u.fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	if (setsockopt(u.fd, SOL_SOCKET, SO_SNDBUFFORCE, &sz, sizeof(sz)))
		setsockopt(u.fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	return bind(u.fd, (struct sockaddr *)&me->sa, me->salen);
}

static int refuse(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int refuse(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("rdmaemud: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	return -1;
}

int emu_dudp_setup(struct emu_engine *e, const struct emu_fabric *f, const char *as, bool vt)
{
	const struct emu_fabric_daemon *me;

	if (!f->ndaemons)
		return as ? refuse("--as %s: fabric %s declares no daemons", as, f->source) : 0;
	if (!as)
		return refuse("fabric %s is run by several daemons (its `daemon` lines): --as NAME "
			      "says which one this is", f->source);
	me = emu_fabric_find_daemon(f, as);
	if (!me)
		return refuse("--as %s: fabric %s declares no such daemon", as, f->source);
	if (vt && f->ndaemons > 1)
		return refuse("--virtual-time: fabric %s is run by %zu daemons, each with its own "
			      "clock; virtual time needs a single daemon (run in real time)",
			      f->source, f->ndaemons);
	u.f = f;
	u.t = emu_engine_topology(e);
	u.self = (unsigned)(me - f->daemons);
	u.fabric_id = emu_fabric_id(f);
	u.peers = calloc(f->ndaemons, sizeof(*u.peers));
	if (!u.peers)
		return refuse("out of memory");
	for (size_t i = 0; i < f->ndaemons; i++)
		to_sockaddr(&f->daemons[i], &u.peers[i]);
	if (open_socket()) {
		char a[INET6_ADDRSTRLEN];

		inet_ntop(me->family, &me->addr, a, sizeof(a));
		return refuse("daemon %s: cannot bind UDP %s port %u: %s", me->name, a, me->port,
			      strerror(errno));
	}
	if (install_ghosts())
		return refuse("out of memory");
	return 0;
}

size_t emu_dudp_poll_set(struct pollfd *pfd, size_t max)
{
	if (u.fd < 0 || !max)
		return 0;
	pfd[0] = (struct pollfd){ .fd = u.fd, .events = POLLIN };
	return 1;
}

static bool same_addr(const struct sockaddr_storage *a, socklen_t alen, const struct peer *p)
{
	if (a->ss_family != p->sa.ss_family || alen < p->salen)
		return false;
	if (a->ss_family == AF_INET) {
		const struct sockaddr_in *x = (const void *)a, *y = (const void *)&p->sa;

		return x->sin_port == y->sin_port && x->sin_addr.s_addr == y->sin_addr.s_addr;
	}
	const struct sockaddr_in6 *x = (const void *)a, *y = (const void *)&p->sa;

	return x->sin6_port == y->sin6_port && !memcmp(&x->sin6_addr, &y->sin6_addr, 16);
}

/* The port a datagram's frame arrives at: its endpoint, or -1 (not a port of a host here, or
 * the sending end is a host port of another daemon than the sender's). */
static int arrival(uint32_t link, uint8_t end, unsigned sender)
{
	const struct emu_endpoint *at, *from;

	if (link >= u.f->nlinks || end > 1)
		return -1;
	at = end ? &u.f->links[link].b : &u.f->links[link].a;
	from = end ? &u.f->links[link].a : &u.f->links[link].b;
	if (at->kind != EMU_EP_HOST_PORT || emu_dudp_remote((size_t)at->node))
		return -1;
	/* a switch at the far end: every daemon has it, and forwards through it */
	if (from->kind == EMU_EP_HOST_PORT && u.f->hosts[from->node].daemon != sender + 1)
		return -1;
	return emu_topology_port_endpoint(u.t, (size_t)at->node, (size_t)at->device, at->port);
}

/* Sequence numbers of the sending daemon: gaps are datagrams lost on the way (or still to
 * come late), a backward step one that came late. */
static void count_seq(struct peer *p, uint32_t seq)
{
	int32_t step = (int32_t)(seq - p->rx_seq);

	if (!p->rx_any) {
		p->rx_any = true;
		u.n.lost += seq - 1;
	} else if (seq == 1 || (step < -(1 << 20) && seq < (1u << 20))) {
		/* back at the start, or far behind and near it: the sender restarted, and its
		 * count with it */
	} else if (step <= 0) {
		u.n.late++;
		return;
	} else {
		u.n.lost += (uint32_t)step - 1;
	}
	p->rx_seq = seq;
}

/* Checks one datagram: the endpoint its frame arrives at, or -1 (counted). */
static int check(const uint8_t *b, size_t len, int flags, const struct sockaddr_storage *from,
		 socklen_t fromlen)
{
	struct hdr h;
	unsigned sender;
	int ep;

	if (flags & MSG_TRUNC || len > EMU_DUDP_HDR_LEN + EMU_WIRE_MAX_FRAME) {
		u.n.oversized++;
		return -1;
	}
	/* the shortest frame: an IB LRH (8 bytes) */
	if (len < EMU_DUDP_HDR_LEN + 8) {
		u.n.short_++;
		return -1;
	}
	memcpy(&h, b, sizeof(h));
	if (ntohl(h.magic) != EMU_DUDP_MAGIC || h.version != EMU_DUDP_VERSION) {
		u.n.bad_header++;
		return -1;
	}
	if (be64(h.fabric) != u.fabric_id) {
		u.n.wrong_fabric++;
		return -1;
	}
	sender = ntohs(h.from);
	if (sender >= u.f->ndaemons || sender == u.self ||
	    !same_addr(from, fromlen, &u.peers[sender])) {
		u.n.unknown_sender++;
		return -1;
	}
	ep = arrival(ntohl(h.link), h.end, sender);
	if (ep < 0) {
		u.n.unknown_link++;
		return -1;
	}
	count_seq(&u.peers[sender], ntohl(h.seq));
	u.n.received++;
	return ep;
}

void emu_dudp_turn(struct emu_engine *e, const struct pollfd *pfd, size_t n)
{
	static uint8_t bufs[BURST][EMU_DUDP_HDR_LEN + EMU_WIRE_MAX_FRAME + 1];
	static struct sockaddr_storage from[BURST];
	struct mmsghdr mm[BURST];
	struct iovec iov[BURST];

	if (!n || !(pfd[0].revents & POLLIN))
		return;
	for (int turn = 0; turn < TURN_BURSTS; turn++) {
		int got;

		for (int i = 0; i < BURST; i++) {
			iov[i] = (struct iovec){ bufs[i], sizeof(bufs[i]) };
			mm[i].msg_hdr = (struct msghdr){ .msg_name = &from[i],
							 .msg_namelen = sizeof(from[i]),
							 .msg_iov = &iov[i], .msg_iovlen = 1 };
		}
		got = recvmmsg(u.fd, mm, BURST, MSG_DONTWAIT, NULL);
		if (got <= 0)
			return;
		emu_engine_lock(e);
		for (int i = 0; i < got; i++) {
			int ep = check(bufs[i], mm[i].msg_len, mm[i].msg_hdr.msg_flags, &from[i],
				       mm[i].msg_hdr.msg_namelen);

			/* a port without carrier (its netdev set down here) receives nothing,
			 * as the wire drops what arrives for it */
			if (ep >= 0 && emu_wire_endpoint_down(emu_topology_wire(u.t), ep))
				u.n.down++;
			else if (ep >= 0)
				emu_engine_deliver(e, ep, bufs[i] + EMU_DUDP_HDR_LEN,
						   mm[i].msg_len - EMU_DUDP_HDR_LEN,
						   emu_engine_now(e));
		}
		emu_engine_unlock(e); /* runs the zero-delay deliveries now */
		if (got < BURST)
			return;
	}
}

size_t emu_dudp_status(char *buf, size_t len)
{
	const struct emu_fabric_daemon *me;
	char a[INET6_ADDRSTRLEN];
	int n;

	if (!u.f || !len)
		return 0;
	me = &u.f->daemons[u.self];
	inet_ntop(me->family, &me->addr, a, sizeof(a));
	n = snprintf(buf, len,
		     "daemon %s udp %s%s%s:%u fabric-id 0x%016llx\n"
		     "udp sent %llu send-drops %llu received %llu short %llu oversized %llu "
		     "bad-header %llu wrong-fabric %llu unknown-sender %llu unknown-link %llu "
		     "lost %llu late %llu ghost-tx %llu down %llu\n",
		     me->name, me->family == AF_INET6 ? "[" : "", a,
		     me->family == AF_INET6 ? "]" : "", me->port,
		     (unsigned long long)u.fabric_id, (unsigned long long)u.n.sent,
		     (unsigned long long)u.n.send_drops, (unsigned long long)u.n.received,
		     (unsigned long long)u.n.short_, (unsigned long long)u.n.oversized,
		     (unsigned long long)u.n.bad_header, (unsigned long long)u.n.wrong_fabric,
		     (unsigned long long)u.n.unknown_sender, (unsigned long long)u.n.unknown_link,
		     (unsigned long long)u.n.lost, (unsigned long long)u.n.late,
		     (unsigned long long)u.n.ghost_tx, (unsigned long long)u.n.down);
	return n < 0 ? 0 : (size_t)n < len ? (size_t)n : len - 1;
}

void emu_dudp_close(void)
{
	if (u.fd >= 0)
		close(u.fd);
	u.fd = -1;
	free(u.ghosts);
	free(u.peers);
	u.ghosts = NULL;
	u.peers = NULL;
	u.f = NULL;
}
