/* rdmaemud: a fabric in real time, shared by the processes attached to its hosts
 * (docs/daemon.md, rdmaemud(1)).
 *
 * The daemon is an engine in real-time mode (emu/sim/engine.h) that owns the fabric's wire: links
 * with their delays and faults, IB switching, the pcap taps. Every host port's receiver is
 * replaced by the forwarder below, which hands each frame reaching a host to the process that
 * holds it: a transport packet to the process whose QP-number slice contains its DestQP, any
 * other frame (and a DestQP nobody owns, QP1's MADs for one) to the host's first process.
 *
 * Threads: the main thread polls the listening socket and the clients, and injects their
 * frames into the wire under the engine lock; the engine's progress thread fires the wire's
 * deliveries when their (real) time comes. The client table is guarded by the engine lock:
 * the forwarder runs in either thread with it held.
 *
 * Client states: CONNECTED --HELLO ok--> ATTACHED --socket closed--> (gone)
 *                CONNECTED --STATUS/STOP--> answered, then as before (a control connection). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "emu/link/proto.h"
#include "emu/daemon/peer.h"
#include "emu/daemon/shm.h"
#include "emu/daemon/stacks.h"
#include "emu/daemon/tap.h"
#include "emu/daemon/vmport.h"
#include "emu/daemon/udp_link.h"
#include "emu/link/ucma_ring.h"
#include "emu/daemon/ucma_srv.h"
#include "emu/sim/apptime.h"
#include "emu/sim/engine.h"
#include "emu/hca/engine_rx.h"
#include "emu/ib/pma.h"
#include "emu/link/link.h"
#include "emu/net/neigh.h"
#include "emu/sim/pcap.h"
#include "emu/sim/process.h"
#include "emu/rdma_cm/ucma.h"
#include "rdmaemu/ctl.h"

/* Connections at once: a process holds one for its host and one for each rdma_cm file it
 * opens (docs/daemon.md "Limits"); a full table refuses the next one with a line on both
 * sides. */
#define MAX_CLIENTS 4096
/* Bytes of frames queued for a client whose socket is full (the kernel queues at most
 * net.unix.max_dgram_qlen = 10 messages per SEQPACKET socket): past this, frames are dropped
 * as a congested receiver drops them. Not lower: a drop costs a reliable connection a
 * go-back-N resend, and a READ's resend replays its whole response, so with 4,096 frames
 * (4 MiB of 1 KiB frames, a queue that 4 retries of 16 outstanding 64 KiB READs fill)
 * ib_read_bw over this path fell into resending, each drop causing the next, in about one
 * run of eight (a 5 s run went past 60 s). 64 MiB is ~1 s of this path's traffic. */
#define OUTQ_MAX_BYTES ((size_t)64 << 20)
_Static_assert(MAX_CLIENTS <= EMU_DSHM_MAX_CLIENTS, "emu/daemon/shm.c tracks every client");

enum client_state { CLIENT_FREE, CLIENT_CONNECTED, CLIENT_ATTACHED, CLIENT_UCMA };
static const char *const client_state_name[] = {
	[CLIENT_FREE] = "FREE", [CLIENT_CONNECTED] = "CONNECTED", [CLIENT_ATTACHED] = "ATTACHED",
	[CLIENT_UCMA] = "UCMA",
};

struct outmsg {
	struct outmsg *next;
	size_t len; /* of the frame */
	bool counted; /* in the client's sent count (rdma_cm connections) */
	struct emu_dmsg h;
	uint8_t frame[];
};

struct client {
	enum client_state state;
	struct outmsg *outq, **outq_tail; /* engine lock; sent by the main loop on POLLOUT */
	size_t outq_bytes;
	int fd;
	int ucma_dfd; /* CLIENT_UCMA: the rdma_cm file it serves (emu/daemon/ucma_srv.h) */
	/* the page shared with its client (emu/link/ucma_ring.h), or NULL: the count of the
	 * messages sent to it, and the command ring with how far it was read */
	struct emu_ducma_shared *ucma_sh;
	uint64_t rtail;
	bool ring_broken; /* a record broke the rules: closed on the main loop's next turn */
	/* the count (low 16 bits) of the last message taken from this connection that carried
	 * one (a frame, a command record), when seq_ok (taken_seq, follows_taken) */
	uint16_t seq_last;
	bool seq_ok;
	/* the main loop's burst (batch_flush): the 1s its events add to the file's semaphore,
	 * written in one go before they are sent; whether c is on the list to flush */
	uint64_t sem_pending;
	bool dirty;
	int pid;
	size_t host;
	unsigned slot; /* its slice of the host's QP numbers */
	uint32_t qpn_min, qpn_max;
	uint64_t attached_seq; /* order of attachment: the host's first process gets the rest */
	uint64_t frames_in, frames_out, drops;
	char node[EMU_DPROTO_NAME_MAX];
	struct emu_neigh_req *neigh; /* a NEIGH_RESOLVE in progress (engine lock) */
	size_t neigh_host;	     /* its host */
	int peer_pid; /* the connecting process (SO_PEERCRED): whose messages these are */
	struct emu_dpeer peer; /* its credentials and network namespace (emu/daemon/peer.h) */
	/* virtual time: its VT_IDLE of the current round, and the deadline it said */
	bool vt_answered;
	uint64_t vt_next;
};

struct port_ctx {
	int ep;
	size_t host;
	int link_layer;
};

static struct {
	struct emu_engine *e;
	const struct emu_fabric *f;
	char fabric_path[EMU_DPROTO_PATH_MAX]; /* real path, "" for the built-in */
	const char *as; /* --as: which of the fabric's daemons this is (docs/multi-daemon.md) */
	char sock[sizeof(((struct sockaddr_un *)0)->sun_path)];
	struct client clients[MAX_CLIENTS];
	/* one past the highest entry of clients[] not CLIENT_FREE (engine lock): every walk of
	 * the table (a frame's owner, the poll set, the virtual-time rounds) ends there, so a
	 * daemon serving a few processes does not look at 4,096 entries a frame */
	size_t top;
	struct port_ctx *ports;
	/* per host: the offset in a slot's slice of the last QP number a connection of the host
	 * named (rdma_connect, rdma_accept); its next process's QP pool goes on from there */
	uint32_t *qpn_cursor;
	uint32_t qpn_slice, nslots; /* QP numbers a process (process-qpns), processes a host */
	uint64_t seq;
	uint64_t loopback_frames; /* LOOPBACK messages forwarded (the shared rings bypass them) */
	bool trace;
	int wake[2]; /* a pipe: the forwarder tells the main loop to watch a client for POLLOUT */
	struct client *dirty[MAX_CLIENTS]; /* batch_add (engine lock) */
	size_t ndirty;
	/* the rdma_cm connections with a command ring (main thread), the main loop's to run */
	struct client *rings[MAX_CLIENTS];
	size_t nrings;
	uint32_t link_gen;  /* link changes made (LINK_SET) */
	uint32_t devrm_gen; /* devices removed (DEVICE_REMOVE), each in removed[] */
	struct {
		uint16_t host, dev;
	} removed[EMU_DPROTO_MAX_REMOVED];
	/* virtual time (--virtual-time, docs/daemon.md "Virtual time"): the round of queries, a
	 * message received since it began (a new round is due once all is quiet), the stall
	 * said once, and the messages received from each process on all its connections */
	bool vt;
	uint32_t vt_round;
	/* --hold N: the clock stays until N processes have attached (a run's processes start at
	 * wall-clock moments; those that come first must not see time pass alone) */
	unsigned vt_hold, vt_attached;
	/* bytes of frames queued for one client at most (OUTQ_MAX_BYTES, or
	 * RDMAEMU_DAEMON_OUTQ_MAX for the fault matrix's congested receiver) */
	size_t outq_max;
	bool vt_dirty;
	bool vt_armed; /* the last round found every process idle: the next one confirms it */
	bool vt_told;
	struct {
		int pid;
		uint64_t recv;
	} vtp[MAX_CLIENTS];
	/* entries of vtp in use lie below it: the look-up on every message walks the processes
	 * there are, not all 4,096 entries */
	size_t vtp_top;
} d;

static volatile sig_atomic_t stop_requested;

static void trace(const char *fmt, ...)
{
	va_list ap;

	if (!d.trace)
		return;
	va_start(ap, fmt);
	fputs("rdmaemud: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/* One more message from process pid (virtual time): it counts against the process's
 * VT_IDLE, and the round in progress is stale. */
static void vt_count(int pid)
{
	size_t i, free_slot = MAX_CLIENTS;

	if (!d.vt)
		return; /* real time: no per-message look-up on the main loop's path */
	d.vt_dirty = true;
	d.vt_armed = false;
	for (i = 0; i < d.vtp_top; i++) {
		if (d.vtp[i].pid == pid) {
			d.vtp[i].recv++;
			return;
		}
		if (!d.vtp[i].pid && free_slot == MAX_CLIENTS)
			free_slot = i;
	}
	if (free_slot == MAX_CLIENTS && d.vtp_top < MAX_CLIENTS)
		free_slot = d.vtp_top++;
	if (free_slot < MAX_CLIENTS) {
		d.vtp[free_slot].pid = pid;
		d.vtp[free_slot].recv = 1;
	}
}

static uint64_t vt_received(int pid)
{
	for (size_t i = 0; i < d.vtp_top; i++)
		if (d.vtp[i].pid == pid)
			return d.vtp[i].recv;
	return 0;
}

static void vt_forget(int pid)
{
	for (size_t i = 0; i < d.vtp_top; i++)
		if (d.vtp[i].pid == pid)
			d.vtp[i] = (typeof(d.vtp[i])){ 0, 0 };
	while (d.vtp_top && !d.vtp[d.vtp_top - 1].pid)
		d.vtp_top--;
}

static void client_set_state(struct client *c, enum client_state s)
{
	trace("client fd %d (%s pid %d): %s -> %s", c->fd, c->node[0] ? c->node : "-", c->pid,
	      client_state_name[c->state], client_state_name[s]);
	c->state = s;
	if (s != CLIENT_FREE && (size_t)(c - d.clients) >= d.top)
		d.top = (size_t)(c - d.clients) + 1;
	while (d.top && d.clients[d.top - 1].state == CLIENT_FREE)
		d.top--;
}

static int send_msg(int fd, uint16_t type, uint32_t arg, const void *body, size_t len, int flags)
{
	struct emu_dmsg h = { EMU_DPROTO_MAGIC, EMU_DPROTO_VERSION, type, arg, 0 };
	struct iovec iov[2] = { { &h, sizeof(h) }, { (void *)body, len } };
	struct msghdr m = { .msg_iov = iov, .msg_iovlen = body && len ? 2 : 1 };

	return sendmsg(fd, &m, MSG_NOSIGNAL | flags) < 0 ? -errno : 0;
}

/* ---------- forwarding (engine lock held) ---------- */

/* The process of `host` that gets a frame for DestQP dqpn (transport) or any other frame. */
static struct client *owner(size_t host, bool transport, uint32_t dqpn)
{
	struct client *first = NULL;

	for (size_t i = 0; i < d.top; i++) {
		struct client *c = &d.clients[i];

		if (c->state != CLIENT_ATTACHED || c->host != host)
			continue;
		if (transport && dqpn >= c->qpn_min && dqpn <= c->qpn_max)
			return c;
		if (!first || c->attached_seq < first->attached_seq)
			first = c;
	}
	return first;
}

/* Set by the main thread while it reads its clients' messages: what their commands send on
 * rdma_cm connections waits for batch_flush, so that a burst of commands costs a client one
 * sendmmsg, one eventfd write and one wake-up rather than one of each per message (the
 * main loop was the busiest of cmtime's three processes: ~130 us of CPU a connection). */
static __thread bool batching;

/* One more message on rdma_cm connection c, counted right before it is sent: a client that
 * has read as many finds nothing on its socket (protocol 9). */
static void count_sent(struct client *c)
{
	if (c->ucma_sh)
		__atomic_store_n(&c->ucma_sh->sent, c->ucma_sh->sent + 1, __ATOMIC_RELEASE);
}

/* Takes the head of c's queue. */
static void outq_pop(struct client *c)
{
	struct outmsg *m = c->outq;

	c->outq = m->next;
	if (!c->outq)
		c->outq_tail = &c->outq;
	c->outq_bytes -= m->len;
	free(m);
}

/* Sends the head of c's queue alone, counted (once) right before its sendmsg: 0 sent (or
 * dropped: the client is going away), -1 the socket is full. Engine lock held. */
static int outq_send_head(struct client *c)
{
	struct outmsg *m = c->outq;
	struct iovec iov[2] = { { &m->h, sizeof(m->h) }, { m->frame, m->len } };
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 2 };

	if (!m->counted) {
		count_sent(c);
		m->counted = true;
	}
	if (sendmsg(c->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
		if (errno == EAGAIN || errno == EINTR)
			return -1;
		c->drops++; /* the client is going away: its hang-up comes next */
	} else {
		c->frames_out++;
	}
	outq_pop(c);
	return 0;
}

/* Protocol 12: what is queued on an rdma_cm file's connection goes in bundles (UCMA_BUNDLE,
 * emu/link/proto.h), up to EMU_DUCMA_BUNDLE_MAX bytes a socket message. A sendmmsg of
 * single messages cost the kernel an skb, its memory accounting and a look at the reader's
 * wait queue for each message: 35 % of the daemon's CPU in cmtime -c 1000 (perf, protocol
 * 11). A bundle is counted once, right before its sendmsg, and uncounted when the socket is
 * full (its messages stay queued and are bundled again); a message counted already (it found
 * the socket full on its own, ucma_send) goes alone, as does a lone message. Engine lock
 * held. */
static void outq_flush_bundled(struct client *c)
{
	static uint8_t buf[EMU_DUCMA_BUNDLE_MAX];

	while (c->outq) {
		struct emu_dmsg h = { EMU_DPROTO_MAGIC, EMU_DPROTO_VERSION, EMU_DMSG_UCMA_BUNDLE, 0,
				      0 };
		struct iovec iov[2] = { { &h, sizeof(h) }, { buf, 0 } };
		struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 2 };
		struct outmsg *m;
		size_t off = 0;
		uint32_t n = 0;

		for (m = c->outq; m && !m->counted; m = m->next, n++) {
			struct emu_ducma_rec rec = { (uint32_t)m->len, m->h.type, 0, m->h.arg,
						     m->h.pad };
			uint32_t size = emu_ducma_rec_size((uint32_t)m->len);

			if (off + size > sizeof(buf))
				break;
			memcpy(buf + off, &rec, sizeof(rec));
			memcpy(buf + off + sizeof(rec), m->frame, m->len);
			memset(buf + off + sizeof(rec) + m->len, 0, size - sizeof(rec) - m->len);
			off += size;
		}
		if (n < 2) {
			if (outq_send_head(c))
				return;
			continue;
		}
		h.arg = n;
		iov[1].iov_len = off;
		count_sent(c);
		if (sendmsg(c->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
			if (errno == EAGAIN || errno == EINTR) {
				__atomic_store_n(&c->ucma_sh->sent, c->ucma_sh->sent - 1,
						 __ATOMIC_RELEASE);
				return;
			}
			c->drops += n; /* the client is going away: its hang-up comes next */
		} else {
			c->frames_out += n;
		}
		while (n--)
			outq_pop(c);
	}
}

/* Sends what is queued for c, in order, until its socket is full: up to OUTQ_MMSG messages
 * a system call (an rdma_cm file's connection: in bundles). Engine lock held. */
#define OUTQ_MMSG 64
static void outq_flush(struct client *c)
{
	if (c->state == CLIENT_UCMA && c->ucma_sh) {
		outq_flush_bundled(c);
		return;
	}
	while (c->outq) {
		struct iovec iov[OUTQ_MMSG][2];
		struct mmsghdr mh[OUTQ_MMSG];
		struct outmsg *m = c->outq;
		unsigned n = 0;
		int r;

		/* no sent count here: the connections with one (rdma_cm files with a shared page)
		 * go through outq_flush_bundled */
		for (; m && n < OUTQ_MMSG; m = m->next, n++) {
			iov[n][0] = (struct iovec){ &m->h, sizeof(m->h) };
			iov[n][1] = (struct iovec){ m->frame, m->len };
			mh[n] = (struct mmsghdr){ .msg_hdr = { .msg_iov = iov[n], .msg_iovlen = 2 } };
		}
		r = sendmmsg(c->fd, mh, n, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (r < 0) {
			if (errno == EAGAIN || errno == EINTR)
				return;
			c->drops++; /* the client is going away: its hang-up comes next */
			outq_pop(c);
			continue;
		}
		c->frames_out += (uint64_t)r;
		for (int i = 0; i < r; i++)
			outq_pop(c);
		if ((unsigned)r < n)
			return; /* the socket is full */
	}
}

static void outq_free(struct client *c)
{
	while (c->outq) {
		struct outmsg *m = c->outq;

		c->outq = m->next;
		free(m);
	}
	c->outq_tail = &c->outq;
	c->outq_bytes = 0;
}

/* Queues a message (a header and a body) behind what is already queued for c. Engine lock
 * held. */
static void outq_add_msg(struct client *c, uint16_t type, uint32_t arg, uint32_t pad,
			 const uint8_t *frame, size_t len, bool counted)
{
	struct outmsg *m;
	bool first;

	/* an rdma_cm file's messages are never dropped: the client's copy of the event queue
	 * would diverge from the file's; what waits is bounded by the events the application
	 * leaves unread */
	if ((c->outq_bytes + len > d.outq_max && c->state != CLIENT_UCMA) ||
	    !(m = malloc(sizeof(*m) + len))) {
		c->drops++;
		return;
	}
	m->next = NULL;
	m->len = len;
	c->outq_bytes += len;
	m->counted = counted;
	m->h = (struct emu_dmsg){ EMU_DPROTO_MAGIC, EMU_DPROTO_VERSION, type, arg, pad };
	if (len)
		memcpy(m->frame, frame, len);
	first = !c->outq;
	*c->outq_tail = m;
	c->outq_tail = &m->next;
	if (first && !batching) {
		/* the main loop may be asleep in poll() without POLLOUT for this client */
		ssize_t n = write(d.wake[1], "", 1);

		(void)n; /* full pipe: a wake-up is pending anyway */
	}
}

/* c has messages or semaphore 1s of the main loop's burst: batch_flush sends them. */
static void batch_add(struct client *c)
{
	if (!c->dirty) {
		c->dirty = true;
		d.dirty[d.ndirty++] = c;
	}
}

/* emu_ucma_srv_ops.send: a message of an rdma_cm file's connection, in order behind what
 * waits for it; queued during the main loop's burst. Engine lock held. */
static void ucma_send(void *ctx, uint16_t type, uint32_t arg, uint32_t pad, const void *body,
		      size_t len)
{
	struct client *c = ctx;

	if (batching) {
		outq_add_msg(c, type, arg, pad, body, len, false);
		batch_add(c);
		return;
	}
	if (!c->outq) {
		struct emu_dmsg h = { EMU_DPROTO_MAGIC, EMU_DPROTO_VERSION, type, arg, pad };
		struct iovec iov[2] = { { &h, sizeof(h) }, { (void *)body, len } };
		struct msghdr m = { .msg_iov = iov, .msg_iovlen = body && len ? 2 : 1 };

		count_sent(c);
		if (sendmsg(c->fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT) >= 0) {
			c->frames_out++;
			return;
		}
		if (errno != EAGAIN) {
			c->drops++; /* the client is going away: its hang-up comes next */
			return;
		}
		outq_add_msg(c, type, arg, pad, body, len, true);
		return;
	}
	outq_add_msg(c, type, arg, pad, body, len, false);
}

/* emu_ucma_srv_ops.sem: the main loop's burst adds its 1s up (taking one back first, as a
 * DROP of an event of the burst does); anything else goes to the eventfd at once. Either
 * way, before the message it counts is sent. Engine lock held. */
static void ucma_sem(void *ctx, int fd, int delta)
{
	struct client *c = ctx;

	if (delta < 0 && c->sem_pending) {
		c->sem_pending--;
	} else if (delta < 0) {
		emu_engine_fd_clear(fd); /* EFD_SEMAPHORE: 1 */
	} else if (batching || c->sem_pending) {
		/* behind a burst's messages still queued: written with them */
		c->sem_pending++;
		if (batching)
			batch_add(c);
	} else {
		emu_engine_fd_signal(fd);
	}
}

/* The end of the main loop's burst: each file's 1s in one eventfd write, then its messages,
 * up to OUTQ_MMSG a system call (one wake-up of the client for them all). Engine lock held. */
static void batch_flush(void)
{
	for (size_t i = 0; i < d.ndirty; i++) {
		struct client *c = d.dirty[i];

		c->dirty = false;
		if (c->state == CLIENT_FREE)
			continue;
		/* the file's eventfd (the push's fd); gone with UCMA_CLOSE, and its 1s with it */
		if (c->sem_pending && c->ucma_dfd >= 0) {
			ssize_t r = write(c->ucma_dfd, &c->sem_pending, sizeof(c->sem_pending));

			(void)r; /* an eventfd takes any count below 2^64 - 1 */
		}
		c->sem_pending = 0;
		outq_flush(c);
	}
	d.ndirty = 0;
}

static void order_before(const struct client *self, int pid, uint32_t seq);

/* Whether the message with count seq (emu_link_count_sent's) from c's process comes right
 * after the last one taken from c in order (ring_run, client_read): then no other connection
 * of the process holds an earlier one (order_before took every earlier one there was when it
 * took that one), and the look at them (a system call on each of the process's sockets) is
 * left out. A CONSUMED record the ucma takes out of turn (ucma_ring_consumed) is not counted
 * as taken: the record after it looks. As before, a message whose count another thread took
 * but whose send had not ended yet is not put before later ones (it was not there); with
 * this, "yet" means when the connection's previous message was taken. */
static bool follows_taken(const struct client *c, uint32_t seq)
{
	return c->seq_ok && (uint16_t)((uint16_t)seq - c->seq_last) == 1;
}

static void taken_seq(struct client *c, uint32_t seq)
{
	c->seq_last = (uint16_t)seq;
	c->seq_ok = true;
}
static bool ring_run(struct client *c, uint8_t *buf, unsigned max);
static bool ring_check(struct client *c, uint64_t head);
static bool ring_rec(struct client *c, uint64_t head, struct emu_ducma_rec *rec,
		     uint32_t *off);

/* emu_ucma_srv_ops.ring_consumed */
static int ucma_ring_consumed(void *ctx, uint32_t *seq, uint32_t *count)
{
	struct client *c = ctx;
	struct emu_ducma_rec rec;
	uint64_t head;
	uint32_t off;

	if (!c->ucma_sh)
		return -1;
	if (c->ring_broken)
		return 0; /* the main loop closes it */
	head = __atomic_load_n(&c->ucma_sh->head, __ATOMIC_ACQUIRE);
	if (!ring_check(c, head) || !ring_rec(c, head, &rec, &off) ||
	    rec.type != EMU_DMSG_UCMA_CONSUMED)
		return 0; /* nothing, or a broken ring the main loop closes */
	*seq = rec.arg;
	*count = rec.pad;
	vt_count(c->peer_pid);
	c->rtail += emu_ducma_rec_size(rec.len);
	__atomic_store_n(&c->ucma_sh->tail, c->rtail, __ATOMIC_RELEASE);
	return 1;
}

/* emu_ucma_srv_ops.qpn_used: rxe's QP numbers are the host's, allocated cyclically, so its
 * next program's first QP gets the number after the last one's; here the daemon keeps where
 * the host's connections got to and starts the next process's pool there (the hidden QP1
 * takes that index, the first user QP the one after). Without it every process of a host
 * reused the same numbers, and a kernel peer still holding the previous connection (not yet
 * in timewait) rejected the next REQ from the same QPN as stale (REJ 10). */
static void ucma_qpn_used(size_t host, uint32_t qpn)
{
	if (d.qpn_cursor && host < d.f->nhosts && qpn >= 16)
		d.qpn_cursor[host] = (qpn - 16) % d.qpn_slice;
}

static const struct emu_ucma_srv_ops ucma_ops = { .send = ucma_send,
						  .sem = ucma_sem,
						  .ring_consumed = ucma_ring_consumed,
						  .qpn_used = ucma_qpn_used };

static void outq_add(struct client *c, int ep, const uint8_t *frame, size_t len)
{
	outq_add_msg(c, EMU_DMSG_FRAME, (uint32_t)ep, 0, frame, len, false);
}

static void deliver_to(struct client *c, const struct port_ctx *p, const uint8_t *frame,
		       size_t len);

static void deliver(const struct port_ctx *p, const uint8_t *frame, size_t len)
{
	uint32_t dqpn = 0;
	bool transport = emu_rx_classify(p->link_layer, frame, len, &dqpn) ==
			 EMU_RX_KIND_TRANSPORT;
	struct client *c;

	if (transport && dqpn == EMU_DSTACKS_MCAST_QPN) {
		/* multicast: every process of the host, whose HCA keeps what its QPs joined */
		for (size_t i = 0; i < d.top; i++)
			if (d.clients[i].state == CLIENT_ATTACHED && d.clients[i].host == p->host)
				deliver_to(&d.clients[i], p, frame, len);
		return;
	}
	c = owner(p->host, transport, dqpn);
	if (!c)
		return; /* nobody runs on that host: as a host that is switched off */
	deliver_to(c, p, frame, len);
}

static void deliver_to(struct client *c, const struct port_ctx *p, const uint8_t *frame,
		       size_t len)
{
	/* Never block with the engine lock held: a full socket queues the frame (one copy),
	 * and the main loop sends it when the client has read; behind a queue, in order. */
	if (!c->outq && !send_msg(c->fd, EMU_DMSG_FRAME, (uint32_t)p->ep, frame, len,
				  MSG_DONTWAIT))
		c->frames_out++;
	else if (!c->outq && errno != EAGAIN)
		c->drops++;
	else
		outq_add(c, p->ep, frame, len);
}

static void port_rx(void *ctx, const uint8_t *frame, size_t len, uint64_t now)
{
	(void)now;
	deliver(ctx, frame, len);
}

static int install_ports(void)
{
	struct emu_topology *t = emu_engine_topology(d.e);
	size_t n = emu_topology_nendpoints(t);

	d.ports = calloc(n ? n : 1, sizeof(*d.ports));
	d.qpn_cursor = calloc(d.f->nhosts ? d.f->nhosts : 1, sizeof(*d.qpn_cursor));
	if (!d.ports || !d.qpn_cursor)
		return -1;
	d.qpn_slice = d.f->process_qpns ? d.f->process_qpns : EMU_DPROTO_QPN_SLICE;
	d.nslots = EMU_DPROTO_SLOTS(d.qpn_slice);
	for (size_t ep = 0; ep < n; ep++) {
		struct emu_endpoint info;
		const struct emu_port *port;

		if (emu_topology_endpoint_info(t, (int)ep, &info) || info.kind != EMU_EP_HOST_PORT)
			continue;
		port = &d.f->hosts[info.node].devices[info.device].ports[info.port - 1];
		d.ports[ep] = (struct port_ctx){
			.ep = (int)ep, .host = (size_t)info.node,
			.link_layer = port->link_layer == EMU_LL_ETHERNET ? EMU_LL_ETHERNET
									  : EMU_LL_INFINIBAND,
		};
		/* the daemon's own stacks (neighbours, QP1) keep what the engine's demultiplexer
		 * gives them; what would reach the host's HCA goes to its processes */
		if (emu_engine_port_set_rx_class(d.e, info.node, info.device, info.port,
						 EMU_RX_HCA, port_rx, &d.ports[ep]))
			return -1;
	}
	return emu_dstacks_start(d.e);
}

/* ---------- client messages ---------- */

/* The page shared with c's client (emu/link/ucma_ring.h: the sent count, the command ring),
 * mapped here; its fd for UCMA_OPEN's answer (the caller closes it), or -1: the client then
 * drains its socket and sends its commands on it as before. */
static int ucma_page_map(struct client *c)
{
	int fd = memfd_create("rdmaemu-ucma-sent", MFD_CLOEXEC);
	void *p;

	if (fd < 0)
		return -1;
	if (ftruncate(fd, EMU_DUCMA_PAGE_LEN) ||
	    (p = mmap(NULL, EMU_DUCMA_PAGE_LEN, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) ==
		    MAP_FAILED) {
		close(fd);
		return -1;
	}
	c->ucma_sh = p;
	c->rtail = 0;
	c->ring_broken = false;
	c->ucma_sh->awake = 1; /* the main loop looks at the ring before it next sleeps */
	return fd;
}

static void client_close(struct client *c)
{
	emu_engine_lock(d.e);
	if (c->neigh) /* the asker went away: its answer would go nowhere */
		emu_neigh_cancel(d.e, c->neigh);
	c->neigh = NULL;
	emu_engine_unlock(d.e);
	emu_dshm_close((unsigned)(c - d.clients));
	/* kernel ucma_close of the file the connection served (takes the engine lock) */
	emu_ucma_srv_close(c->ucma_dfd);
	c->ucma_dfd = -1;
	emu_engine_lock(d.e);
	emu_dtap_close_owner(d.e, (unsigned)(c - d.clients));
	emu_dpeer_forget((unsigned)(c - d.clients));
	if (c->state == CLIENT_ATTACHED)
		vt_forget(c->peer_pid); /* the process is gone from the rounds */
	d.vt_dirty = true;
	d.vt_armed = false;
	client_set_state(c, CLIENT_FREE);
	outq_free(c);
	if (c->ucma_sh) {
		for (size_t i = 0; i < d.nrings; i++)
			if (d.rings[i] == c) {
				d.rings[i] = d.rings[--d.nrings];
				break;
			}
		munmap(c->ucma_sh, EMU_DUCMA_PAGE_LEN);
	}
	c->ucma_sh = NULL;
	close(c->fd);
	c->fd = -1;
	emu_engine_unlock(d.e);
}

/* The lowest slot of host's QP numbers no attached process holds, or d.nslots when all are
 * taken. Engine lock held. */
static unsigned free_slot(size_t host)
{
	uint64_t used[(EMU_DPROTO_MAX_SLOTS + 63) / 64] = { 0 };
	unsigned slot = 0;

	for (size_t i = 0; i < d.top; i++)
		if (d.clients[i].state == CLIENT_ATTACHED && d.clients[i].host == host)
			used[d.clients[i].slot / 64] |= 1ull << (d.clients[i].slot % 64);
	while (slot < d.nslots && (used[slot / 64] >> (slot % 64) & 1))
		slot++;
	return slot;
}

static void on_hello(struct client *c, const struct emu_dmsg_hello *h, size_t len)
{
	struct emu_dmsg_welcome w = { 0 };
	const struct emu_host *host;
	int err = 0;

	w.flags = d.vt ? EMU_DPROTO_VIRTUAL_TIME : 0;
	if (len < sizeof(*h) || c->state != CLIENT_CONNECTED) {
		err = EPROTO;
		goto out;
	}
	if ((h->flags & EMU_DPROTO_VIRTUAL_TIME) != w.flags) {
		fprintf(stderr, "rdmaemud: pid %d asked for %s time, this daemon runs its fabric in "
				"%s time: refused\n", h->pid,
			h->flags & EMU_DPROTO_VIRTUAL_TIME ? "virtual" : "real",
			d.vt ? "virtual" : "real");
		err = EPROTOTYPE;
		goto out;
	}
	if (strncmp(h->fabric, d.fabric_path, sizeof(h->fabric))) {
		fprintf(stderr, "rdmaemud: pid %d asked for fabric '%s', this daemon runs '%s'\n",
			h->pid, h->fabric[0] ? h->fabric : "(built-in)",
			d.fabric_path[0] ? d.fabric_path : "(built-in)");
		err = EXDEV;
		goto out;
	}
	host = memchr(h->node, 0, sizeof(h->node)) ? emu_fabric_find_host(d.f, h->node) : NULL;
	if (!host) {
		err = ENOENT;
		goto out;
	}
	if (host->kind == EMU_HOST_RXE_VM) {
		/* its stack is the VM's kernel: no process of this machine runs on it */
		fprintf(stderr, "rdmaemud: pid %d asked for host %s, a VM (kind=rxe-vm): refused\n",
			h->pid, host->name);
		err = EREMOTE;
		goto out;
	}
	if (emu_dudp_remote((size_t)(host - d.f->hosts))) {
		fprintf(stderr, "rdmaemud: pid %d asked for host %s, which daemon %s runs\n", h->pid,
			host->name, emu_dudp_remote((size_t)(host - d.f->hosts)));
		err = EREMOTE;
		goto out;
	}
	err = emu_dpeer_may_claim(&c->peer, d.f, "HELLO", h->pid, (size_t)(host - d.f->hosts));
	if (err)
		goto out;
	emu_engine_lock(d.e);
	c->slot = free_slot((size_t)(host - d.f->hosts));
	if (c->slot == d.nslots) {
		fprintf(stderr, "rdmaemud: pid %d refused: host %s has all its %u process slots in "
				"use (each process takes %u of the host's 24-bit QP numbers: the "
				"fabric's process-qpns); a smaller process-qpns gives a host more "
				"processes, or run them on other hosts of the fabric\n", h->pid,
			host->name, d.nslots, d.qpn_slice);
		err = EUSERS;
	} else {
		c->host = (size_t)(host - d.f->hosts);
		c->qpn_min = 16 + c->slot * d.qpn_slice;
		c->qpn_max = c->qpn_min + d.qpn_slice - 1;
		c->pid = h->pid;
		c->attached_seq = ++d.seq;
		d.vt_attached++;
		/* the process's own count from here: what the same pid sent before an exec (the
		 * status requests of `rdmaemu run`) is not in it */
		vt_forget(c->peer_pid);
		vt_count(c->peer_pid);
		for (size_t i = 0; i < MAX_CLIENTS; i++)
			if (d.vtp[i].pid == c->peer_pid)
				d.vtp[i].recv = h->sent;
		snprintf(c->node, sizeof(c->node), "%s", host->name);
		client_set_state(c, CLIENT_ATTACHED);
		w.host = (uint32_t)c->host;
		w.qpn_min = c->qpn_min;
		w.qpn_max = c->qpn_max;
		w.qpn_first = c->qpn_min + d.qpn_cursor[c->host];
		w.devrm_gen = d.devrm_gen;
		memcpy(w.removed, d.removed, sizeof(w.removed));
		w.link_gen = d.link_gen;
		for (size_t i = 0; i < host->nnetdevs && i < 64; i++)
			if (!emu_neigh_link_up(d.e, c->host, (int)i))
				w.netdevs_down |= 1ull << i;
		w.now = emu_engine_now(d.e);
	}
	emu_engine_unlock(d.e);
out:
	send_msg(c->fd, EMU_DMSG_WELCOME, (uint32_t)err, &w, sizeof(w), 0);
}

static void on_frame(struct client *c, const struct emu_dmsg *h, const uint8_t *frame,
		     size_t len, bool loopback)
{
	struct emu_topology *t = emu_engine_topology(d.e);

	/* a process speaks for its own host's ports only */
	if (c->state != CLIENT_ATTACHED || h->arg >= emu_topology_nendpoints(t) ||
	    !d.ports[h->arg].link_layer || d.ports[h->arg].host != c->host)
		return;
	c->frames_in++;
	d.loopback_frames += loopback;
	emu_engine_lock(d.e);
	if (loopback) {
		/* the HCA's loopback: not on the wire; the port counts it sent and received */
		emu_wire_count(emu_topology_wire(t), (int)h->arg, false, d.ports[h->arg].link_layer,
			       frame, len);
		emu_wire_count(emu_topology_wire(t), (int)h->arg, true, d.ports[h->arg].link_layer,
			       frame, len);
		deliver(&d.ports[h->arg], frame, len);
	} else
		emu_wire_send(emu_topology_wire(t), (int)h->arg, frame, len);
	emu_engine_unlock(d.e); /* runs the zero-delay deliveries now */
}

/* A host's neighbour generation moved (engine lock held): its processes forget the MACs
 * they kept (emu/link/link.c), behind the frames already queued for them. */
static void neigh_gen_moved(void *ctx, size_t host, uint32_t gen)
{
	(void)ctx;
	for (size_t i = 0; i < d.top; i++)
		if (d.clients[i].state == CLIENT_ATTACHED && d.clients[i].host == host)
			outq_add_msg(&d.clients[i], EMU_DMSG_NEIGH_GEN, (uint32_t)host, gen, NULL, 0, false);
	/* what a fresh id's RESOLVE_ADDR returns may change with it */
	emu_ucma_srv_revoke(host);
}

/* gen: the host's neighbour generation the MAC holds for (0 with an error) */
static void neigh_answer(struct client *c, int err, const uint8_t *mac, uint32_t gen)
{
	struct emu_dmsg h = { EMU_DPROTO_MAGIC, EMU_DPROTO_VERSION, EMU_DMSG_NEIGH_RESOLVE,
			      (uint32_t)err, gen };
	uint8_t zero[6] = { 0 };
	struct iovec iov[2] = { { &h, sizeof(h) }, { (void *)(mac ? mac : zero), 6 } };

	/* one small answer to a connection that waits for it: never blocks */
	(void)sendmsg(c->fd, &(struct msghdr){ .msg_iov = iov, .msg_iovlen = 2 },
		      MSG_NOSIGNAL | MSG_DONTWAIT);
}

/* The daemon's neighbour layer ended a NEIGH_RESOLVE (engine lock held). */
static void neigh_done(void *ctx, const struct emu_neigh_result *r)
{
	struct client *c = ctx;

	c->neigh = NULL;
	neigh_answer(c, r->status < 0 ? -r->status : r->status, r->status ? NULL : r->dst_hw,
		     r->status ? 0 : emu_neigh_gen(d.e, c->neigh_host));
}

/* NEIGH_RESOLVE: ib_resolve_eth_dmac for a verbs AH or connected QP of a process: the host's
 * neighbour tables live here, and so do its ARP / ND exchanges on the wire. Answered when
 * the resolution ends (at the timeout at the latest); the main loop goes on meanwhile. */
static void on_neigh_resolve(struct client *c, const struct emu_dmsg_neigh *q, size_t len)
{
	const struct sockaddr *src = (const void *)q->src, *dst = (const void *)q->dst;
	int rc;

	if (len < sizeof(*q) || q->host >= d.f->nhosts || c->neigh ||
	    (src->sa_family != AF_INET && src->sa_family != AF_INET6) ||
	    dst->sa_family != src->sa_family) {
		neigh_answer(c, EINVAL, NULL, 0);
		return;
	}
	emu_engine_lock(d.e);
	c->neigh_host = q->host;
	rc = emu_neigh_resolve(d.e, q->host, src, dst,
			       (uint64_t)q->timeout_ms * EMU_NSEC_PER_MSEC, neigh_done, c, &c->neigh);
	if (rc) {
		c->neigh = NULL;
		neigh_answer(c, -rc, NULL, 0);
	}
	emu_engine_unlock(d.e);
}

/* NEIGH_FLUSH: `ip neigh flush` on a host of the fabric (the host's processes hear the
 * generation move when something was dropped, and ask again for the MACs they kept). */
static void on_neigh_flush(struct client *c, const struct emu_dmsg_neigh_flush *r, size_t len)
{
	struct emu_dmsg h = { EMU_DPROTO_MAGIC, EMU_DPROTO_VERSION, EMU_DMSG_NEIGH_FLUSH, 0, 0 };
	uint32_t body[2] = { 0, 0 }; /* host, its generation now */
	struct iovec iov[2] = { { &h, sizeof(h) }, { body, sizeof(body) } };
	int rc = -EPROTO;

	if (len >= sizeof(*r) && memchr(r->node, 0, sizeof(r->node)) &&
	    memchr(r->netdev, 0, sizeof(r->netdev))) {
		const struct emu_host *host = emu_fabric_find_host(d.f, r->node);

		if (host && emu_dudp_remote((size_t)(host - d.f->hosts)))
			rc = -EREMOTE; /* another daemon runs the host */
		else if ((rc = rdmaemu_ctl_neigh_flush(r->node, r->netdev[0] ? r->netdev : NULL)) < 0)
			rc = -errno;
	}
	if (rc < 0) {
		h.arg = (uint32_t)-rc;
	} else {
		const struct emu_host *host = emu_fabric_find_host(d.f, r->node);

		h.pad = (uint32_t)rc;
		body[0] = (uint32_t)(host - d.f->hosts);
		emu_engine_lock(d.e);
		body[1] = emu_neigh_gen(d.e, body[0]);
		emu_engine_unlock(d.e);
	}
	trace("neigh flush %s %s: %d", len >= sizeof(*r) ? r->node : "?",
	      len >= sizeof(*r) ? r->netdev : "?", rc);
	(void)sendmsg(c->fd, &(struct msghdr){ .msg_iov = iov, .msg_iovlen = 2 },
		      MSG_NOSIGNAL | MSG_DONTWAIT);
}

/* LINK_SET: `ip link set NETDEV up|down` on a host of the fabric, from a control connection or
 * an attached process (rdmaemu_ctl_link_set). The daemon's engine applies it (routes,
 * neighbours, the RoCE port's state and carrier: emu_neigh_link_set); then the host's
 * processes hear LINK_STATE, behind the frames already queued for them, and set the port's
 * state in their copy of the fabric (ibv_query_port). The answer follows both. */
static void on_link_set(struct client *c, const struct emu_dmsg_link_set *r, size_t len)
{
	struct emu_dmsg h = { EMU_DPROTO_MAGIC, EMU_DPROTO_VERSION, EMU_DMSG_LINK_SET, 0, 0 };
	const struct emu_host *host = NULL;
	int rc = -EPROTO, nd = -1;

	if (len >= sizeof(*r) && memchr(r->node, 0, sizeof(r->node)) &&
	    memchr(r->netdev, 0, sizeof(r->netdev))) {
		host = emu_fabric_find_host(d.f, r->node);
		for (size_t i = 0; host && i < host->nnetdevs; i++)
			if (!strcmp(host->netdevs[i].name, r->netdev))
				nd = (int)i;
		rc = nd < 0 ? -ENOENT : 0;
		if (!rc && emu_dudp_remote((size_t)(host - d.f->hosts)))
			rc = -EREMOTE; /* another daemon runs the host */
	}
	if (!rc) {
		size_t hi = (size_t)(host - d.f->hosts);
		bool up = r->up != 0;

		emu_engine_lock(d.e);
		if (emu_neigh_link_up(d.e, hi, nd) != up)
			rc = emu_neigh_link_set(d.e, hi, nd, up);
		else
			rc = 1; /* as it was: no event, nothing to tell */
		if (!rc) {
			h.pad = ++d.link_gen;
			for (size_t i = 0; i < d.top; i++)
				if (d.clients[i].state == CLIENT_ATTACHED && d.clients[i].host == hi)
					outq_add_msg(&d.clients[i], EMU_DMSG_LINK_STATE,
						     (uint32_t)nd << 1 | up, h.pad, NULL, 0, false);
		}
		emu_engine_unlock(d.e);
		rc = rc > 0 ? 0 : rc;
	}
	trace("link set %s %s %s: %d (generation %u)", len >= sizeof(*r) ? r->node : "?",
	      len >= sizeof(*r) ? r->netdev : "?", len >= sizeof(*r) && r->up ? "up" : "down", rc,
	      h.pad);
	h.arg = (uint32_t)-rc;
	(void)sendmsg(c->fd, &(struct msghdr){ .msg_iov = &(struct iovec){ &h, sizeof(h) },
					       .msg_iovlen = 1 },
		      MSG_NOSIGNAL | MSG_DONTWAIT);
}

/* DEVICE_REMOVE: `rdma link delete` on a host of the fabric, from a control connection or an
 * attached process. The daemon's engine runs the removal (the device leaves its lists, its
 * rdma_cm ids get DEVICE_REMOVAL, its CM agent stops, emu/rdma_cm/devrm_ctl.c); then every attached
 * process hears DEVICE_GONE, behind the frames already queued for it, and every later rdma_cm
 * answer carries the new generation, which a client applies before it hands the answer on
 * (so an application never reads DEVICE_REMOVAL while its device list still has the device). */
static void on_device_remove(struct client *c, const struct emu_dmsg_devrm *r, size_t len)
{
	struct emu_dmsg h = { EMU_DPROTO_MAGIC, EMU_DPROTO_VERSION, EMU_DMSG_DEVICE_REMOVE, 0, 0 };
	struct emu_host *host = NULL;
	size_t dev = 0;
	int rc = -EPROTO;

	if (len >= sizeof(*r) && memchr(r->node, 0, sizeof(r->node)) &&
	    memchr(r->dev, 0, sizeof(r->dev))) {
		emu_engine_lock(d.e);
		/* the daemon's own fabric: emu_engine_fabric hands it out const for readers */
		host = (struct emu_host *)emu_fabric_find_host(d.f, r->node);
		if (!host)
			rc = -ENOENT;
		else if (emu_dudp_remote((size_t)(host - d.f->hosts)))
			rc = -EREMOTE; /* another daemon runs the host */
		else if (d.devrm_gen >= EMU_DPROTO_MAX_REMOVED)
			rc = -ENOSPC;
		else {
			/* the DEVICE_REMOVAL events the removal pushes carry the generation
			 * it brings */
			emu_ucma_srv_devrm(d.devrm_gen + 1);
			emu_ucma_srv_revoke(SIZE_MAX);
			rc = emu_device_remove_locked(host, r->dev, &dev);
			emu_ucma_srv_devrm(d.devrm_gen);
		}
		if (!rc) {
			uint32_t arg = (uint32_t)(host - d.f->hosts) << 16 | (uint32_t)dev;

			d.removed[d.devrm_gen].host = (uint16_t)(host - d.f->hosts);
			d.removed[d.devrm_gen].dev = (uint16_t)dev;
			d.devrm_gen++;
			emu_ucma_srv_devrm(d.devrm_gen);
			/* the processes, and the sandboxes' keepers, whose files show it */
			for (size_t i = 0; i < d.top; i++)
				if (d.clients[i].state == CLIENT_ATTACHED ||
				    (d.clients[i].state == CLIENT_CONNECTED && emu_dtap_owns((unsigned)i)))
					outq_add_msg(&d.clients[i], EMU_DMSG_DEVICE_GONE, arg,
						     d.devrm_gen, NULL, 0, false);
			trace("device %s of %s removed (generation %u)", r->dev, r->node,
			      d.devrm_gen);
		}
		emu_engine_unlock(d.e);
	}
	h.arg = (uint32_t)-rc;
	h.pad = d.devrm_gen;
	(void)sendmsg(c->fd, &(struct msghdr){ .msg_iov = &(struct iovec){ &h, sizeof(h) },
					       .msg_iovlen = 1 }, MSG_NOSIGNAL | MSG_DONTWAIT);
}

/* TAP_ATTACH: a host's sandbox hands over the tap of one of its netdevs (emu/daemon/tap.h);
 * the tap lives as long as this connection. */
static void on_tap_attach(struct client *c, const struct emu_dmsg_tap *t, size_t len, int fd)
{
	const struct emu_host *host = NULL;
	struct emu_dmsg_tap_ans ans = { 0 };
	int err = 0;

	if (len < sizeof(*t) || c->state != CLIENT_CONNECTED || fd < 0 ||
	    !memchr(t->node, 0, sizeof(t->node)) || !memchr(t->netdev, 0, sizeof(t->netdev)))
		err = EPROTO;
	else if (strncmp(t->fabric, d.fabric_path, sizeof(t->fabric)))
		err = EXDEV;
	else if (!(host = emu_fabric_find_host(d.f, t->node)))
		err = ENOENT;
	else if (host->kind == EMU_HOST_RXE_VM)
		err = EREMOTE;
	else if (emu_dudp_remote((size_t)(host - d.f->hosts)))
		err = EREMOTE; /* another daemon runs the host */
	else
		err = emu_dpeer_may_claim(&c->peer, d.f, "TAP_ATTACH", c->peer.pid,
					  (size_t)(host - d.f->hosts));
	if (err) {
		if (fd >= 0)
			close(fd);
	} else {
		emu_engine_lock(d.e);
		err = -emu_dtap_attach(d.e, (size_t)(host - d.f->hosts), t->netdev, fd,
				       (unsigned)(c - d.clients));
		if (!err) /* the keeper's namespace is the host's from now on */
			emu_dpeer_host_netns(&c->peer, (size_t)(host - d.f->hosts),
					     (unsigned)(c - d.clients));
		ans.devrm_gen = d.devrm_gen;
		_Static_assert(sizeof(ans.removed) == sizeof(d.removed), "WELCOME's list");
		memcpy(ans.removed, d.removed, sizeof(ans.removed));
		emu_engine_unlock(d.e);
		trace("tap %s/%s: %s", t->node, t->netdev, err ? strerror(err) : "attached");
	}
	send_msg(c->fd, EMU_DMSG_TAP_ATTACH, (uint32_t)err, &ans, sizeof(ans), 0);
}

static void on_status(struct client *c)
{
	static char buf[EMU_DPROTO_STATUS_MAX]; /* the main thread's alone */
	size_t n = 0;
	unsigned nattached = 0, unlisted = 0;

	emu_engine_lock(d.e);
	for (size_t i = 0; i < d.top; i++)
		nattached += d.clients[i].state == CLIENT_ATTACHED;
	n += (size_t)snprintf(buf + n, sizeof(buf) - n,
			      "rdmaemud %s pid %d\nfabric %s\nsocket %s\ntime: %s\nprocesses %u\n"
			      "rdma_cm files %u\nloopback-frames %llu\n",
			      PACKAGE_VERSION, (int)getpid(),
			      d.fabric_path[0] ? d.fabric_path : "(built-in)", d.sock,
			      d.vt ? "virtual" : "real", nattached,
			      emu_ucma_srv_count(), (unsigned long long)d.loopback_frames);
	n += emu_dtap_status(d.e, buf + n, sizeof(buf) - n);
	n += emu_dvm_status(d.e, buf + n, sizeof(buf) - n);
	n += emu_dudp_status(buf + n, sizeof(buf) - n);
	emu_engine_unlock(d.e);
	/* the main thread alone changes the table: read without the lock, which the ucma takes */
	for (size_t i = 0; i < d.top && n < sizeof(buf) - 200; i++)
		if (d.clients[i].state == CLIENT_UCMA)
			n += emu_ucma_srv_status(d.clients[i].ucma_dfd, d.clients[i].pid, buf + n,
						 sizeof(buf) - n);
	emu_engine_lock(d.e);
	for (size_t i = 0; i < d.top; i++) {
		const struct client *k = &d.clients[i];

		if (k->state != CLIENT_ATTACHED)
			continue;
		if (n >= sizeof(buf) - 200) {
			unlisted++;
			continue;
		}
		n += (size_t)snprintf(buf + n, sizeof(buf) - n,
				      "process %d host %s qpn %u-%u frames-in %llu frames-out %llu "
				      "drops %llu shm-peers %u\n", k->pid, k->node, k->qpn_min,
				      k->qpn_max, (unsigned long long)k->frames_in,
				      (unsigned long long)k->frames_out,
				      (unsigned long long)k->drops, emu_dshm_npeers((unsigned)i));
	}
	emu_engine_unlock(d.e);
	if (unlisted)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "processes not listed %u\n",
				      unlisted);
	send_msg(c->fd, EMU_DMSG_STATUS, 0, buf, n, 0);
}

/* The one descriptor a message carried (SCM_RIGHTS), or -1; any others are closed. */
static int msg_fd(struct msghdr *m)
{
	int got = -1;

	for (struct cmsghdr *cm = CMSG_FIRSTHDR(m); cm; cm = CMSG_NXTHDR(m, cm)) {
		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		for (size_t i = 0; i < (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++) {
			int fd;

			memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
			if (got < 0)
				got = fd;
			else
				close(fd);
		}
	}
	return got;
}

/* SHM_HELLO: the client offers its eventfd for the shared rings to its host's processes. */
static void on_shm_hello(struct client *c, int efd)
{
	if (c->state != CLIENT_ATTACHED || efd < 0) {
		if (efd >= 0)
			close(efd);
		return;
	}
	emu_dshm_hello((unsigned)(c - d.clients), c->fd, efd, c->host, c->slot, c->qpn_min,
		       c->qpn_max, c->pid);
}

/* A message of an rdma_cm file's client (from its socket, or a record of its ring); false
 * when it ends the connection. */
static bool ucma_msg(struct client *c, uint16_t type, uint32_t arg, uint32_t pad,
		     const uint8_t *buf, size_t len)
{
	if (c->state != CLIENT_UCMA)
		return false;
	switch (type) {
	case EMU_DMSG_UCMA_WRITE:
		/* protocol 10: the events the client read before it sent the command first */
		return !(pad && emu_ucma_srv_consumed(c->ucma_dfd, arg, pad)) &&
		       !emu_ucma_srv_write(c->fd, c->ucma_dfd, c->pid, buf, len);
	case EMU_DMSG_UCMA_CONSUMED:
		return !emu_ucma_srv_consumed(c->ucma_dfd, arg, pad);
	case EMU_DMSG_UCMA_POST:
		return !(pad && emu_ucma_srv_consumed(c->ucma_dfd, arg, pad)) &&
		       !emu_ucma_srv_post(c->ucma_dfd, buf, len);
	case EMU_DMSG_UCMA_CLOSE:
		emu_ucma_srv_close(c->ucma_dfd); /* before the answer: close() returns after it */
		c->ucma_dfd = -1;
		send_msg(c->fd, EMU_DMSG_UCMA_CLOSE, 0, NULL, 0, MSG_DONTWAIT);
		return false;
	default:
		fprintf(stderr, "rdmaemud: unknown record type %u in the ring of pid %d: closing "
			"it\n", type, c->pid);
		return false;
	}
}

/* Whether head (the client's, just read) is within a ring of what was read and on a record
 * boundary; else the ring is broken (said on stderr once). */
static bool ring_check(struct client *c, uint64_t head)
{
	if (head - c->rtail <= EMU_DUCMA_RING_LEN && !((head - c->rtail) % EMU_DUCMA_REC_ALIGN))
		return true;
	fprintf(stderr, "rdmaemud: pid %d's ring head %llu is out of its ring: closing it\n",
		c->pid, (unsigned long long)head);
	c->ring_broken = true;
	return false;
}

/* The header of the next record (a wrap skipped) into *rec, its offset into *off; false for
 * none (rtail == head) or a broken one (said on stderr). */
static bool ring_rec(struct client *c, uint64_t head, struct emu_ducma_rec *rec,
		     uint32_t *off)
{
	const uint8_t *ring = (const uint8_t *)c->ucma_sh + EMU_DUCMA_RING_OFF;

	for (;;) {
		uint32_t room;

		if (c->rtail == head)
			return false;
		*off = (uint32_t)(c->rtail & (EMU_DUCMA_RING_LEN - 1));
		room = EMU_DUCMA_RING_LEN - *off;
		memcpy(rec, ring + *off, sizeof(*rec));
		if (rec->type != EMU_DUCMA_REC_WRAP)
			break;
		if (head - c->rtail < room)
			goto broken;
		c->rtail += room;
		__atomic_store_n(&c->ucma_sh->tail, c->rtail, __ATOMIC_RELEASE);
	}
	if (rec->len <= EMU_DUCMA_REC_MAX &&
	    emu_ducma_rec_size(rec->len) <= EMU_DUCMA_RING_LEN - *off &&
	    emu_ducma_rec_size(rec->len) <= head - c->rtail)
		return true;
broken:
	fprintf(stderr, "rdmaemud: pid %d's ring holds a broken record (type %u, %u bytes): "
		"closing it\n", c->pid, rec->type, rec->len);
	c->ring_broken = true;
	return false;
}

/* The records c's client put in its command ring, up to max of them (the main loop's turn
 * for it); false when the client broke the ring's rules or ended the connection (the caller
 * closes it). Each body is copied out before it is looked at: the client may be writing. */
static bool ring_run(struct client *c, uint8_t *buf, unsigned max)
{
	const uint8_t *ring = (const uint8_t *)c->ucma_sh + EMU_DUCMA_RING_OFF;
	uint64_t head = __atomic_load_n(&c->ucma_sh->head, __ATOMIC_ACQUIRE);
	struct emu_ducma_rec rec;
	uint32_t off;

	if (!ring_check(c, head))
		return false;
	while (max-- && ring_rec(c, head, &rec, &off)) {
		if (!follows_taken(c, rec.seq16)) {
			/* the process's frames sent before it go first (they may copy into
			 * another buffer: this record is read after) */
			order_before(c, c->peer_pid, rec.seq16);
			if (c->state != CLIENT_UCMA || c->ring_broken)
				return false;
			head = __atomic_load_n(&c->ucma_sh->head, __ATOMIC_ACQUIRE);
			if (!ring_check(c, head) || !ring_rec(c, head, &rec, &off))
				return !c->ring_broken;
		}
		memcpy(buf, ring + off + sizeof(rec), rec.len);
		vt_count(c->peer_pid);
		taken_seq(c, rec.seq16);
		c->rtail += emu_ducma_rec_size(rec.len);
		__atomic_store_n(&c->ucma_sh->tail, c->rtail, __ATOMIC_RELEASE);
		if (!ucma_msg(c, rec.type, rec.arg, rec.pad, buf, rec.len))
			return false;
	}
	return !c->ring_broken;
}

/* The main loop is running: clients need not ring. */
static void rings_awake(void)
{
	for (size_t i = 0; i < d.nrings; i++)
		__atomic_store_n(&d.rings[i]->ucma_sh->awake, 1, __ATOMIC_RELAXED);
}

/* Before the main loop sleeps: every ring's awake mark goes, then each is looked at once
 * more (the client publishes, then looks at the mark: one of the two sees the other).
 * false when one holds a record: the marks come back and the loop does not sleep. */
#define RING_TURN 64u
static bool rings_idle(void)
{
	bool idle = true;

	for (size_t i = 0; i < d.nrings; i++)
		__atomic_store_n(&d.rings[i]->ucma_sh->awake, 0, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	for (size_t i = 0; i < d.nrings && idle; i++)
		if (__atomic_load_n(&d.rings[i]->ucma_sh->head, __ATOMIC_ACQUIRE) !=
		    d.rings[i]->rtail)
			idle = false;
	if (!idle)
		rings_awake();
	return idle;
}

/* ---------- virtual time (docs/daemon.md "Virtual time") ---------- */

/* Nothing waits to go to a process: every message sent is in its socket. */
static bool vt_quiet(void)
{
	for (size_t i = 0; i < d.top; i++)
		if (d.clients[i].state != CLIENT_FREE &&
		    (d.clients[i].outq || d.clients[i].sem_pending))
			return false;
	return true;
}

/* Every process of the round is idle with nothing in flight: the clock moves to the earliest
 * deadline of all, the processes first (VT_ADVANCE behind the frames already sent), then the
 * daemon's engine, whose frames and events at that instant follow it. */
static void vt_check(void)
{
	uint64_t t = UINT64_MAX, next;
	unsigned n = 0;

	for (size_t i = 0; i < d.top; i++) {
		const struct client *c = &d.clients[i];

		if (c->state != CLIENT_ATTACHED)
			continue;
		if (!c->vt_answered)
			return;
		n++;
		if (c->vt_next < t)
			t = c->vt_next;
	}
	if (!n || d.vt_attached < d.vt_hold)
		return;
	emu_engine_lock(d.e);
	if (emu_engine_next_deadline(d.e, &next) && next < t)
		t = next;
	if (t != UINT64_MAX && !d.vt_armed) {
		/* A second round, with nothing received in between, confirms it: a process's
		 * answer says what its threads looked like, and a thread that the daemon's last
		 * push had woken could still read as asleep in /proc for a moment (seen under
		 * load: the process answered idle with an rdma_cm event for it just pushed). */
		emu_engine_unlock(d.e);
		d.vt_armed = true;
		d.vt_dirty = true;
		for (size_t i = 0; i < d.top; i++)
			d.clients[i].vt_answered = false;
		return;
	}
	d.vt_armed = false;
	if (t == UINT64_MAX) {
		emu_engine_unlock(d.e);
		if (!d.vt_told)
			fprintf(stderr, "rdmaemu: every process of the fabric waits and nothing is "
					"pending\n");
		d.vt_told = true;
		return;
	}
	d.vt_told = false;
	for (size_t i = 0; i < d.top; i++) {
		struct client *c = &d.clients[i];
		struct emu_dmsg_vt v = { t, 0 };

		if (c->state != CLIENT_ATTACHED)
			continue;
		c->vt_answered = false;
		outq_add_msg(c, EMU_DMSG_VT_ADVANCE, 0, 0, (const uint8_t *)&v, sizeof(v), false);
		outq_flush(c);
	}
	trace("virtual time %llu", (unsigned long long)t);
	emu_engine_follow_advance(d.e, t);
	emu_engine_unlock(d.e);
	d.vt_dirty = true; /* the next round once the processes are quiet again */
}

/* The main loop found nothing to read, nothing to send: ask every process whether it is
 * idle. */
static void vt_round(void)
{
	d.vt_round++;
	trace("round %u", d.vt_round);
	d.vt_dirty = false;
	emu_engine_lock(d.e);
	for (size_t i = 0; i < d.top; i++) {
		struct client *c = &d.clients[i];

		if (c->state != CLIENT_ATTACHED)
			continue;
		c->vt_answered = false;
		outq_add_msg(c, EMU_DMSG_VT_QUERY, d.vt_round, 0, NULL, 0, false);
		outq_flush(c);
	}
	emu_engine_unlock(d.e);
	vt_check(); /* a fabric without processes: nothing to wait for */
}

/* VT_IDLE: current when it answers this round, nothing came from anywhere since the round
 * began, and the process has sent nothing the daemon has not read. */
static void vt_on_idle(struct client *c, uint32_t round, const uint8_t *body, size_t len)
{
	struct emu_dmsg_vt v;

	if (!d.vt || c->state != CLIENT_ATTACHED || len < sizeof(v) || round != d.vt_round ||
	    d.vt_dirty) {
		trace("pid %d idle in round %u: stale (round %u%s)", c->pid, round, d.vt_round,
		      d.vt_dirty ? ", messages since" : "");
		return;
	}
	memcpy(&v, body, sizeof(v));
	if (v.sent != vt_received(c->peer_pid)) {
		trace("pid %d idle in round %u: sent %llu, %llu received: stale", c->pid, round,
		      (unsigned long long)v.sent, (unsigned long long)vt_received(c->peer_pid));
		return;
	}
	c->vt_answered = true;
	c->vt_next = v.t;
	trace("pid %d idle in round %u, next deadline %llu", c->pid, round,
	      (unsigned long long)v.t);
	vt_check();
}

/* CM_FAULT: rdmaemu_ctl_cm_fault of a process attached here: the CM agents are the daemon's. */
static void on_cm_fault(struct client *c, const struct emu_dmsg_cm_fault *q, size_t len)
{
	struct emu_dmsg h = { EMU_DPROTO_MAGIC, EMU_DPROTO_VERSION, EMU_DMSG_CM_FAULT, 0, 0 };
	struct rdmaemu_cm_fault set, old;
	struct emu_dmsg_cm_rule ans = { 0 };
	struct iovec iov[2] = { { &h, sizeof(h) }, { &ans, sizeof(ans) } };

	memset(&old, 0, sizeof(old));
	if (len < sizeof(*q) || !memchr(q->node, 0, sizeof(q->node)) ||
	    !memchr(q->device, 0, sizeof(q->device)) || !memchr(q->msg, 0, sizeof(q->msg))) {
		h.arg = EPROTO;
	} else {
		set = (struct rdmaemu_cm_fault){ q->rule.drop_next, q->rule.dup_next,
						 q->rule.delay_next, q->rule.drop, q->rule.dup,
						 q->rule.delay, q->rule.delay_ns };
		if (rdmaemu_ctl_cm_fault(q->node, q->device[0] ? q->device : NULL, q->msg,
					 q->set ? &set : NULL, &old))
			h.arg = (uint32_t)errno;
		ans = (struct emu_dmsg_cm_rule){ old.drop_next, old.dup_next, old.delay_next, 0,
						 old.drop, old.dup, old.delay, old.delay_ns };
	}
	(void)sendmsg(c->fd, &(struct msghdr){ .msg_iov = iov, .msg_iovlen = 2 },
		      MSG_NOSIGNAL | MSG_DONTWAIT);
}

/* PMA: a PerfMgt MAD of a process's tool (perfquery), answered from this wire's counters,
 * which every process's frames cross. */
static void on_pma(struct client *c, const struct emu_dmsg_pma *q, size_t len)
{
	struct emu_dmsg h = { EMU_DPROTO_MAGIC, EMU_DPROTO_VERSION, EMU_DMSG_PMA, 0, 0 };
	uint8_t mad[256];
	struct iovec iov[2] = { { &h, sizeof(h) }, { mad, sizeof(mad) } };
	struct emu_sma_node n;

	if (len < sizeof(*q)) {
		h.arg = EPROTO;
	} else {
		memcpy(mad, q->mad, sizeof(mad));
		emu_engine_lock(d.e);
		if (q->dlid > UINT16_MAX ||
		    emu_sma_find_lid(emu_engine_fabric(d.e), (uint16_t)q->dlid, &n) ||
		    emu_pma_process(emu_engine_fabric(d.e), emu_engine_topology(d.e), &n, mad))
			h.arg = ETIMEDOUT;
		emu_engine_unlock(d.e);
	}
	(void)sendmsg(c->fd, &(struct msghdr){ .msg_iov = iov, .msg_iovlen = h.arg ? 1 : 2 },
		      MSG_NOSIGNAL | MSG_DONTWAIT);
}

static bool client_read(struct client *c, uint8_t *buf, bool *got);

/* A process's frames (main link) and rdma_cm command records (rings) in the order it sent
 * them, whichever the main loop meets first: before one with count `seq` (emu_link_count_sent's,
 * low 16 bits in the records), every earlier one of the same process that is already here
 * goes, oldest first. It is here: the process sent it before the later one, on its socket or
 * into its ring. Without this, the RTU of an rdma_accept and the first SEND behind it left
 * the daemon in either order from one run to the next, in real time as in virtual time.
 * `self` is the connection the later one came on: its next message is later still. */
static bool seq_before(uint32_t a, uint32_t b)
{
	return (int16_t)(uint16_t)(a - b) < 0;
}

static struct client *earliest_before(const struct client *self, int pid, uint32_t seq)
{
	struct client *best = NULL;
	uint32_t bseq = seq;

	for (size_t i = 0; i < d.top; i++) {
		struct client *c = &d.clients[i];
		struct emu_dmsg h;
		struct emu_ducma_rec rec;
		uint64_t head;
		uint32_t off;

		if (c->peer_pid != pid || c == self)
			continue;
		head = c->state == CLIENT_UCMA && c->ucma_sh ?
			       __atomic_load_n(&c->ucma_sh->head, __ATOMIC_ACQUIRE) : 0;
		if (c->state == CLIENT_ATTACHED &&
		    recv(c->fd, &h, sizeof(h), MSG_PEEK | MSG_DONTWAIT) == (ssize_t)sizeof(h) &&
		    (h.type == EMU_DMSG_FRAME || h.type == EMU_DMSG_LOOPBACK) &&
		    seq_before(h.pad, bseq)) {
			best = c;
			bseq = h.pad;
		} else if (c->state == CLIENT_UCMA && c->ucma_sh && !c->ring_broken &&
			   ring_check(c, head) && ring_rec(c, head, &rec, &off) &&
			   seq_before(rec.seq16, bseq)) {
			best = c;
			bseq = rec.seq16;
		}
	}
	return best;
}

static void order_before(const struct client *self, int pid, uint32_t seq)
{
	struct client *best = earliest_before(self, pid, seq);
	uint8_t *buf;

	if (!best)
		return;
	/* a buffer of its own: the caller's holds the later message */
	buf = malloc(EMU_DPROTO_PATH_MAX + 1024 > EMU_WIRE_MAX_FRAME ? EMU_DPROTO_PATH_MAX + 1024
								     : EMU_WIRE_MAX_FRAME);
	if (!buf)
		return;
	for (; best; best = earliest_before(self, pid, seq)) {
		if (best->state == CLIENT_ATTACHED) {
			bool got;

			if (!client_read(best, buf, &got) || !got)
				break; /* the main loop closes it */
		} else if (!ring_run(best, buf, 1)) {
			break;
		}
	}
	free(buf);
}

/* Reads one message of client c (*got set when there was one); false when the client is
 * gone. */
static bool client_read(struct client *c, uint8_t *buf, bool *got)
{
	struct emu_dmsg h;
	struct iovec iov[2] = { { &h, sizeof(h) }, { buf, EMU_DPROTO_PATH_MAX + 1024 } };
	union {
		struct cmsghdr c;
		char b[CMSG_SPACE(4 * sizeof(int))];
	} cm;
	struct msghdr m = { .msg_iov = iov, .msg_iovlen = 2, .msg_control = cm.b,
			    .msg_controllen = sizeof(cm.b) };
	ssize_t n = recvmsg(c->fd, &m, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	size_t len;
	int fd;

	*got = n > 0;
	if (n < 0)
		return errno == EAGAIN || errno == EINTR;
	fd = msg_fd(&m);
	if (fd >= 0 && (n < (ssize_t)sizeof(h) ||
			(h.type != EMU_DMSG_SHM_HELLO && h.type != EMU_DMSG_TAP_ATTACH))) {
		close(fd); /* only SHM_HELLO and TAP_ATTACH carry one */
		fd = -1;
	}
	if (n == 0)
		return false;
	if ((size_t)n < sizeof(h) || h.magic != EMU_DPROTO_MAGIC ||
	    h.version != EMU_DPROTO_VERSION || (m.msg_flags & MSG_TRUNC)) {
		fprintf(stderr, "rdmaemud: malformed message from pid %d: closing it\n", c->pid);
		if (fd >= 0)
			close(fd);
		return false;
	}
	len = (size_t)n - sizeof(h);
	/* what the process counts (emu_link_count_sent): not the answers to queries, nor the
	 * doorbells of the command rings (their records count) */
	if (h.type != EMU_DMSG_VT_IDLE && h.type != EMU_DMSG_UCMA_RING)
		vt_count(c->peer_pid);
	switch (h.type) {
	case EMU_DMSG_VT_IDLE:
		vt_on_idle(c, h.arg, buf, len);
		break;
	case EMU_DMSG_CM_FAULT:
		on_cm_fault(c, (const void *)buf, len);
		break;
	case EMU_DMSG_PMA:
		on_pma(c, (const void *)buf, len);
		break;
	case EMU_DMSG_HELLO:
		on_hello(c, (const void *)buf, len);
		break;
	case EMU_DMSG_FRAME:
	case EMU_DMSG_LOOPBACK:
		if (!follows_taken(c, h.pad))
			order_before(c, c->peer_pid, h.pad);
		taken_seq(c, h.pad);
		on_frame(c, &h, buf, len, h.type == EMU_DMSG_LOOPBACK);
		break;
	case EMU_DMSG_STATUS:
		on_status(c);
		break;
	case EMU_DMSG_DEVICE_REMOVE:
		on_device_remove(c, (const void *)buf, len);
		break;
	case EMU_DMSG_NEIGH_RESOLVE:
		on_neigh_resolve(c, (const void *)buf, len);
		break;
	case EMU_DMSG_NEIGH_FLUSH:
		on_neigh_flush(c, (const void *)buf, len);
		break;
	case EMU_DMSG_LINK_SET:
		on_link_set(c, (const void *)buf, len);
		break;
	case EMU_DMSG_SHM_HELLO:
		on_shm_hello(c, fd);
		fd = -1;
		break;
	case EMU_DMSG_TAP_ATTACH:
		on_tap_attach(c, (const void *)buf, len, fd);
		fd = -1;
		break;
	case EMU_DMSG_SHM_MAPPED:
		emu_dshm_mapped((unsigned)(c - d.clients), h.arg);
		break;
	case EMU_DMSG_UCMA_OPEN:
		if (c->state != CLIENT_CONNECTED)
			return false;
		{
			int sfd = ucma_page_map(c);

			c->ucma_dfd = emu_ucma_srv_open(c->fd, d.f, d.fabric_path, buf, len,
							&c->peer, &c->pid, c, sfd);
			if (sfd >= 0)
				close(sfd);
		}
		if (c->ucma_dfd < 0)
			return false;
		if (c->ucma_sh)
			d.rings[d.nrings++] = c;
		emu_engine_lock(d.e);
		client_set_state(c, CLIENT_UCMA);
		emu_engine_unlock(d.e);
		break;
	case EMU_DMSG_UCMA_WRITE:
	case EMU_DMSG_UCMA_CONSUMED:
	case EMU_DMSG_UCMA_POST:
	case EMU_DMSG_UCMA_CLOSE:
		/* with the shared page these come through the ring only */
		if (c->ucma_sh)
			return false;
		return ucma_msg(c, h.type, h.arg, h.pad, buf, len);
	case EMU_DMSG_UCMA_RING:
		/* the doorbell: the main loop runs every ring each pass */
		if (c->state != CLIENT_UCMA || !c->ucma_sh)
			return false;
		break;
	case EMU_DMSG_STOP:
		send_msg(c->fd, EMU_DMSG_STOP, 0, NULL, 0, 0);
		stop_requested = 1;
		break;
	default:
		fprintf(stderr, "rdmaemud: unknown message type %u from pid %d: closing it\n",
			h.type, c->pid);
		return false;
	}
	return true;
}

/* ---------- main ---------- */

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static int listen_on(const char *path)
{
	struct sockaddr_un sa;
	int fd = emu_link_connect(path), bound;
	mode_t old_mask;

	if (fd >= 0) {
		close(fd);
		fprintf(stderr, "rdmaemud: a daemon already answers on %s\n", path);
		errno = EADDRINUSE;
		return -1;
	}
	if (errno == EPERM)
		return -1; /* not the user's alone (said): no daemon's to replace */
	unlink(path); /* a dead daemon's socket */
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	/* The socket is created with mode 0600 at once: a client that found it between bind and
	 * chmod would see the umask's mode (0755) and refuse it as not the user's alone. */
	old_mask = umask(0177);
	bound = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	umask(old_mask);
	if (bound || chmod(path, 0600) || listen(fd, 64)) {
		int e = errno;

		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

static void usage(FILE *out)
{
	fputs("usage: rdmaemud [--fabric FILE] [--as DAEMON] [--pcap PREFIX] [--socket PATH]\n"
	      "                [--virtual-time] [--hold N] [--trace]\n"
	      "Runs an emulated RDMA fabric for the processes that `rdmaemu run` attaches to it:\n"
	      "in real time, or with --virtual-time on one virtual clock for them all that moves\n"
	      "to the next deadline when every process is idle. See rdmaemud(1).\n", out);
}

/* The command line into d and *fabric: true to run, else false with the exit status. */
static bool parse_options(int argc, char **argv, const char **fabric, int *status)
{
	static const struct option opts[] = {
		{ "fabric", required_argument, NULL, 'f' }, { "pcap", required_argument, NULL, 'p' },
		{ "socket", required_argument, NULL, 's' }, { "trace", no_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ "virtual-time", no_argument, NULL, 'V' }, { "hold", required_argument, NULL, 'H' },
		{ "as", required_argument, NULL, 'a' }, { NULL, 0, NULL, 0 },
	};
	char *end;
	int opt;

	while ((opt = getopt_long(argc, argv, "f:p:s:th", opts, NULL)) != -1) {
		switch (opt) {
		case 'f': *fabric = optarg; break;
		case 'p': setenv("RDMAEMU_PCAP", optarg, 1); break;
		case 's': snprintf(d.sock, sizeof(d.sock), "%s", optarg); break;
		case 't': d.trace = true; break;
		case 'V': d.vt = true; break;
		case 'a': d.as = optarg; break;
		case 'H':
			d.vt_hold = (unsigned)strtoul(optarg, &end, 10);
			if (*end || !*optarg) {
				fprintf(stderr, "rdmaemud: --hold %s: not a number of processes\n",
					optarg);
				*status = 2;
				return false;
			}
			break;
		case 'h': usage(stdout); *status = 0; return false;
		default: usage(stderr); *status = 2; return false;
		}
	}
	if (optind != argc) {
		usage(stderr);
		*status = 2;
		return false;
	}
	return true;
}

static void wake_main_loop(void)
{
	ssize_t n = write(d.wake[1], "", 1);

	(void)n; /* full pipe: a wake-up is pending anyway */
}

/* The sockets of the fabric's VM hosts (emu/daemon/vmport.h), beside the daemon's own: 0, or
 * 1 with the reason said. A VM runs on the machine's clock: no virtual time with one. */
static int vm_ports_open(void)
{
	char dir[sizeof(d.sock)];
	char *slash;

	for (size_t h = 0; h < d.f->nhosts; h++)
		if (d.vt && d.f->hosts[h].kind == EMU_HOST_RXE_VM) {
			fprintf(stderr, "rdmaemud: host %s is a VM (kind=rxe-vm), which runs in real "
					"time: no --virtual-time with it\n", d.f->hosts[h].name);
			return 1;
		}
	snprintf(dir, sizeof(dir), "%s", d.sock);
	slash = strrchr(dir, '/');
	if (slash)
		*slash = 0;
	else
		snprintf(dir, sizeof(dir), ".");
	return emu_dvm_open(d.e, dir, wake_main_loop) ? 1 : 0;
}

/* The fabric (NULL: the built-in) in an engine of real time whose host ports forward to the
 * clients: 0, or 1 with the reason said. */
static int fabric_setup(const char *fabric)
{
	int status;

	emu_dshm_set_trace(d.trace);
	unsetenv("RDMAEMU_DAEMON"); /* the daemon owns the fabric: it attaches to no daemon */
	if (fabric && !realpath(fabric, d.fabric_path)) {
		fprintf(stderr, "rdmaemud: %s: %s\n", fabric, strerror(errno));
		return 1;
	}
	if (!d.sock[0] && emu_link_socket_path(d.sock, sizeof(d.sock), true))
		return 1;
	/* a large fabric's image beside the socket: its processes map it (fabric_image.c) */
	emu_fabric_set_image_dir_of(d.sock);
	if (rdmaemu_ctl_attach(fabric ? d.fabric_path : NULL, NULL))
		return 1;
	d.f = emu_process_fabric();
	d.e = emu_engine_get();
	if (!d.f || !d.e) {
		fprintf(stderr, "rdmaemud: cannot build the fabric: %s\n", strerror(errno));
		return 1;
	}
	emu_ucma_srv_init(&ucma_ops);
	emu_engine_lock(d.e);
	/* several daemons: the ports of the others' hosts forward to them, and those hosts'
	 * stacks here send nothing (emu_dudp_tx), from the first frame the stacks send on */
	if (emu_dudp_setup(d.e, d.f, d.as, d.vt)) {
		emu_engine_unlock(d.e);
		return 1;
	}
	/* virtual time: the daemon's engine moves only when a round says (vt_check) */
	if (d.vt)
		emu_engine_set_follower(d.e, emu_dudp_active() ? emu_dudp_tx : NULL, NULL, NULL,
					NULL);
	else
		emu_engine_set_realtime(d.e, emu_dudp_active() ? emu_dudp_tx : NULL, NULL);
	d.vt_dirty = true;
	emu_neigh_set_gen_hook(d.e, neigh_gen_moved, NULL);
	if (install_ports()) {
		emu_engine_unlock(d.e);
		fprintf(stderr, "rdmaemud: out of memory\n");
		return 1;
	}
	status = vm_ports_open();
	emu_engine_unlock(d.e);
	return status;
}

/* The listening socket, the signals that stop the daemon, the empty client table and the
 * forwarder's wake-up pipe: the listening fd, or -1 with the reason said. */
/* Each connection holds a socket, and an rdma_cm one the file it serves and its shared
 * page: the soft RLIMIT_NOFILE (1,024 by default) would refuse accept() after some 300
 * processes, so it goes up to the hard limit (what an unprivileged process may). */
static void raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur >= rl.rlim_max)
		return;
	rl.rlim_cur = rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl))
		fprintf(stderr, "rdmaemud: cannot raise RLIMIT_NOFILE to %llu: %s\n",
			(unsigned long long)rl.rlim_max, strerror(errno));
}

static int serve_setup(void)
{
	struct sigaction sa;
	int lfd;

	raise_nofile();
	lfd = listen_on(d.sock);
	if (lfd < 0) {
		if (errno != EADDRINUSE)
			fprintf(stderr, "rdmaemud: cannot listen on %s: %s\n", d.sock,
				strerror(errno));
		return -1;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	for (size_t i = 0; i < MAX_CLIENTS; i++) {
		d.clients[i].fd = -1;
		d.clients[i].ucma_dfd = -1;
		d.clients[i].outq_tail = &d.clients[i].outq;
	}
	if (pipe2(d.wake, O_CLOEXEC | O_NONBLOCK)) {
		perror("rdmaemud: pipe");
		return -1;
	}
	return lfd;
}

/* What the main loop polls: the listening socket, the wake-up pipe, then every client (its
 * index in who[]), for POLLOUT too while it has frames queued. */
static nfds_t poll_set(struct pollfd *pfd, size_t *who, int lfd)
{
	nfds_t n = 0;

	pfd[n] = (struct pollfd){ .fd = lfd, .events = POLLIN };
	who[n++] = MAX_CLIENTS;
	pfd[n] = (struct pollfd){ .fd = d.wake[0], .events = POLLIN };
	who[n++] = MAX_CLIENTS;
	emu_engine_lock(d.e);
	for (size_t i = 0; i < d.top; i++)
		if (d.clients[i].state != CLIENT_FREE) {
			pfd[n] = (struct pollfd){ .fd = d.clients[i].fd, .events = POLLIN };
			if (d.clients[i].outq || emu_dshm_pending((unsigned)i))
				pfd[n].events |= POLLOUT;
			who[n++] = i;
		}
	emu_engine_unlock(d.e);
	return n;
}

static void wake_drain(void)
{
	char drain[64];

	while (read(d.wake[0], drain, sizeof(drain)) > 0)
		;
}

/* A client that ended its connection: the records still in its command ring run first, as
 * its socket's last messages do (a process that exits right after a posted command, the RTU
 * of the rdma_accept behind an ESTABLISHED it has read, has that command run before its
 * files close, as the kernel ran the syscall before the exit), then it is closed. */
static void client_hangup(struct client *c, uint8_t *buf)
{
	if (c->state == CLIENT_UCMA && c->ucma_sh && !c->ring_broken)
		(void)ring_run(c, buf, ~0u);
	if (c->state != CLIENT_FREE)
		client_close(c);
}

/* A readable client's messages, up to a burst; it drains what is queued before noticing a
 * hang-up: a client's last frames still go out, and so do its ring's records. */
static void client_burst(struct client *c, short revents, uint8_t *buf)
{
	for (int burst = 0; burst < 64 && c->state != CLIENT_FREE; burst++) {
		struct pollfd one = { .fd = c->fd, .events = POLLIN };
		bool got;

		if (!client_read(c, buf, &got)) {
			client_hangup(c, buf);
			break;
		}
		if (!got)
			break;
		if (revents & POLLHUP)
			continue;
		/* a ring's client says little here: its doorbells */
		if (c->state == CLIENT_UCMA && c->ucma_sh)
			break;
		if (poll(&one, 1, 0) <= 0)
			break;
	}
}

/* Client i's turn in the main loop, after poll said revents of it. */
static void client_turn(size_t i, short revents, uint8_t *buf)
{
	struct client *c = &d.clients[i];

	if (!revents)
		return;
	if (revents & POLLOUT) {
		emu_engine_lock(d.e);
		outq_flush(c);
		emu_engine_unlock(d.e);
		emu_dshm_flush((unsigned)i);
	}
	if (!(revents & (POLLIN | POLLHUP | POLLERR)))
		return;
	batching = true;
	client_burst(c, revents, buf);
}

/* The command rings (protocol 11), each client's turn up to RING_TURN records, in the same
 * batch as the sockets' (a pass woken by a ring alone reads no socket); then the batch goes. */
static void rings_turn(uint8_t *buf)
{
	batching = true;
	/* backwards: a closed client leaves d.rings, the last one taking its place */
	for (size_t i = d.nrings; i-- > 0;)
		if (!ring_run(d.rings[i], buf, RING_TURN))
			client_close(d.rings[i]);
	batching = false;
	if (d.ndirty) {
		emu_engine_lock(d.e);
		batch_flush();
		emu_engine_unlock(d.e);
	}
}

/* A new connection into a free slot of the client table; with none free, the client sees
 * its connection closed. */
static void client_accept(int lfd)
{
	int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	struct emu_dpeer peer;
	size_t i;

	/* the socket is the user's alone (0600 in a 0700 directory); this holds where a process
	 * of another uid gets through all the same (CAP_DAC_OVERRIDE) */
	if (fd >= 0 && (emu_dpeer_get(fd, &peer) || !emu_dpeer_uid_ok(&peer))) {
		close(fd);
		return;
	}
	for (i = 0; fd >= 0 && i < MAX_CLIENTS && d.clients[i].state != CLIENT_FREE; i++)
		;
	if (fd >= 0 && i == MAX_CLIENTS) {
		fprintf(stderr, "rdmaemud: pid %d refused: all %d connections of the daemon are in "
				"use (one a process and one for each of its rdma_cm files)\n", peer.pid,
			MAX_CLIENTS);
		close(fd);
	} else if (fd >= 0) {
		emu_engine_lock(d.e);
		memset(&d.clients[i], 0, sizeof(d.clients[i]));
		/* the zeroing took the empty queue's tail pointer too */
		d.clients[i].outq_tail = &d.clients[i].outq;
		d.clients[i].fd = fd;
		d.clients[i].ucma_dfd = -1;
		d.clients[i].peer = peer;
		d.clients[i].peer_pid = peer.pid;
		d.vt_dirty = true;
		d.vt_armed = false;
		client_set_state(&d.clients[i], CLIENT_CONNECTED);
		emu_engine_unlock(d.e);
	}
}

/* The main loop, until a signal stops it or poll fails. */
static void serve(int lfd, uint8_t *buf)
{
	struct pollfd pfd[MAX_CLIENTS + 2 + EMU_DTAP_MAX + EMU_DVM_POLL_MAX + 1];
	size_t who[MAX_CLIENTS + 2];

	while (!stop_requested) {
		nfds_t n = poll_set(pfd, who, lfd);
		size_t ntaps = emu_dtap_poll_set(pfd + n, EMU_DTAP_MAX);
		size_t nvms = emu_dvm_poll_set(d.e, pfd + n + ntaps, EMU_DVM_POLL_MAX);
		size_t nudp = emu_dudp_poll_set(pfd + n + ntaps + nvms, 1);
		bool idle = rings_idle();
		/* virtual time: something happened since the last round and all of it is sent;
		 * a look without sleeping first, then the round if nothing came meanwhile */
		bool round = d.vt && idle && d.vt_dirty && vt_quiet();
		int r = poll(pfd, n + ntaps + nvms + nudp, idle && !round ? -1 : 0);

		if (r < 0) {
			rings_awake();
			if (errno == EINTR)
				continue;
			fprintf(stderr, "rdmaemud: poll: %s\n", strerror(errno));
			break;
		}
		rings_awake();
		if (round && r == 0) {
			vt_round();
			continue;
		}
		if (d.vt && ntaps)
			for (size_t k = 0; k < ntaps; k++)
				if (pfd[n + k].revents) {
					d.vt_dirty = true;
					d.vt_armed = false;
				}
		if (pfd[1].revents & POLLIN)
			wake_drain();
		for (nfds_t k = 2; k < n; k++)
			client_turn(who[k], pfd[k].revents, buf);
		emu_dtap_turn(d.e, pfd + n, ntaps, buf);
		emu_dvm_turn(d.e, pfd + n + ntaps, nvms, buf);
		emu_dudp_turn(d.e, pfd + n + ntaps + nvms, nudp);
		rings_turn(buf);
		if (pfd[0].revents & POLLIN)
			client_accept(lfd);
	}
}

static void teardown(int lfd, uint8_t *buf)
{
	unlink(d.sock);
	close(lfd);
	for (size_t i = 0; i < d.top; i++)
		if (d.clients[i].state != CLIENT_FREE)
			client_close(&d.clients[i]);
	emu_dvm_close();
	fprintf(stderr, "rdmaemud: stopped\n");
	free(buf);
	emu_process_reset(); /* flushes and closes the captures */
	emu_dudp_close();
	free(d.ports);
	free(d.qpn_cursor);
}

/* RDMAEMU_DAEMON_OUTQ_MAX=BYTES (at least 64 KiB): a smaller queue per client, which makes a
 * receiver that stops reading lose frames sooner (faults/check-faults.sh). */
static bool outq_max_from_env(void)
{
	const char *v = getenv("RDMAEMU_DAEMON_OUTQ_MAX");
	char *end;
	unsigned long long n;

	d.outq_max = OUTQ_MAX_BYTES;
	if (!v)
		return true;
	errno = 0;
	n = strtoull(v, &end, 10);
	if (errno || end == v || *end || n < 65536 || n > SIZE_MAX) {
		fprintf(stderr, "rdmaemud: RDMAEMU_DAEMON_OUTQ_MAX=%s: not a number of bytes "
			"from 65536\n", v);
		return false;
	}
	d.outq_max = (size_t)n;
	return true;
}

int main(int argc, char **argv)
{
	const char *fabric = NULL;
	uint8_t *buf;
	int status, lfd;

	if (!parse_options(argc, argv, &fabric, &status))
		return status;
	if (!outq_max_from_env())
		return 2;
	emu_apptime_disable();
	status = fabric_setup(fabric);
	if (status)
		return status;
	buf = malloc(EMU_DPROTO_PATH_MAX + 1024 > EMU_WIRE_MAX_FRAME ? EMU_DPROTO_PATH_MAX + 1024
								      : EMU_WIRE_MAX_FRAME);
	if (!buf)
		return 1;
	lfd = serve_setup();
	if (lfd < 0)
		return 1;
	fprintf(stderr, "rdmaemud: fabric %s%s%s, %s time, listening on %s\n",
		d.fabric_path[0] ? d.fabric_path : "(built-in)", d.as ? " as daemon " : "",
		d.as ? d.as : "", d.vt ? "virtual" : "real", d.sock);
	serve(lfd, buf);
	teardown(lfd, buf);
	return 0;
}
