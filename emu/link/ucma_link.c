/* rdma_cm files served by rdmaemud (emu/link/ucma_link.h): the client end.
 *
 * A file is a connection of its own, so its requests and answers never mix with the frames
 * of the process's link socket or with another file's; a mutex per file keeps one request in
 * flight on it (the kernel serialises a file's commands on its ids' locks anyway). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>
#include <rdma/rdma_user_cm.h>

#include "emu/link/proto.h"
#include "emu/link/ucma_proto.h"
#include "emu/link/ucma_ring.h"
#include "emu/sim/engine.h"
#include "util/kmem.h"
#include "emu/link/link.h"
#include "emu/sim/trace.h"
#include "emu/rdma_cm/ucma.h"
#include "emu/link/ucma_link.h"
#include "util/failcall.h"

/* An event the daemon pushed (UCMA_EVENT) and the application has not read. */
struct lev {
	struct lev *next;
	uint32_t seq; /* the daemon's sequence number of it on the file */
	uint32_t gen; /* the daemon's removal generation when it was queued */
	struct rdma_ucm_event_resp resp;
	uint32_t nsnap; /* the answers pushed with it (struct emu_ducma_snap records) */
	uint8_t snap[];
};

/* An answer the daemon pushed with an event, kept for the QUERY / INIT_QP_ATTR that
 * librdmacm sends right after reading it (kept answers), or a verdict (len 0, cmd
 * RESOLVE_ROUTE: that command returns 0, so it may be posted). Valid from the moment the
 * event is read until anything could change it: a later event of the same id arrives, or a
 * command other than these two names the id (or, when it cannot be told which id it names,
 * any command of the file). The daemon ran the command when it queued the event, and nothing
 * of the id has happened since that the process could know of: so the kernel could have
 * answered so at that moment. Kept by id in a hash: a pipelining application (cmtime) reads
 * the events of a thousand ids before it asks about any. */
#define KEPT_BUCKETS 4096u
#define KEPT_MAX 65536u /* answers kept per file at most (each id keeps only its latest) */
struct kept {
	struct kept *next;
	uint32_t cmd, id, sub, len;
	uint8_t b[];
};

/* An id whose events_reported the process knows, so that it can answer DESTROY_ID itself
 * (posted commands): created by this file (CREATE_ID) or handed over by a CONNECT_REQUEST
 * read from it, and never a listener, a multicast member or migrated (their events count
 * elsewhere or name other ids). dead: destroyed by a posted DESTROY_ID the daemon has not
 * run yet (its UCMA_POSTED is on its way): the id's events still arriving are dropped. */
#define LID_BUCKETS 4096u
struct lid {
	struct lid *next;
	uint32_t h, reported;
	bool dead;
	/* fresh: as CREATE_ID left it, no command has named it since (a RESOLVE_ADDR verdict
	 * holds for it); ps, qp_type: its CREATE_ID's */
	bool fresh;
	uint16_t ps;
	uint8_t qp_type;
};

/* How many events of an id the copy of the queue holds (evq): kept_take asks whether a later
 * event of the id is still unread, per event read, without a walk of a queue that a
 * pipelining application lets grow to thousands. */
#define QCOUNT_BUCKETS 4096u
struct qcount {
	struct qcount *next;
	uint32_t id, n;
};

/* A file lives while the application's fd is open or a command is running on it: as in the
 * kernel, where a blocked read() holds the struct file, close() from another thread does not
 * end a GET_EVENT in progress (that reader goes on waiting for an event) and ucma_close runs
 * when the last user lets go.
 *
 * A push file (protocol 6): the daemon sends every event as it queues it, and every pushed
 * event that leaves its queue unread (UCMA_DROP); whoever reads the socket under the lock
 * (a command waiting for its answer, a GET_EVENT) applies them to evq, the copy of the
 * file's queue, so GET_EVENT reads evq and asks nothing. */
struct lfile {
	struct lfile *next;
	int fd;   /* the application's: the daemon's eventfd */
	int evfd; /* our own duplicate of it, valid after the application closes fd */
	int sock; /* this file's connection */
	int dfd;  /* the daemon's number for it */
	unsigned refs; /* the files list's (until close) + one per command running on it */
	pthread_mutex_t lock; /* one request in flight; the socket's reads; evq; waiters */
	/* The file's sends (the command ring, or the socket without one), taken under lock
	 * and held across the copy or sendmsg while lock may go (send_cmd): messages leave in
	 * lock's order, and a post's system call does not keep the event thread from evq */
	pthread_mutex_t slock;
	struct lev *evq, **evq_tail;
	/* GET_EVENTs asleep on the socket for an event on its way (get_event): a command
	 * that takes pushes into evq meanwhile (having read the socket they sleep on) sets
	 * wake, an eventfd of ours, which stays set until such a reader finds evq empty */
	unsigned waiters;
	int wake;
	struct kept *kept[KEPT_BUCKETS]; /* lock (all below too) */
	unsigned nkept;
	struct lid *ids[LID_BUCKETS];
	struct qcount *queued[QCOUNT_BUCKETS];
	uint32_t spare[EMU_DUCMA_SPARE_MAX]; /* handles for posted CREATE_IDs (UCMA_SPARE) */
	unsigned nspare;
	/* the daemon's RESOLVE_ADDR verdict (UCMA_VERDICT) and the posts left on it */
	struct emu_ducma_verdict verdict;
	uint32_t vuses;
	/* events handed to the application and not yet said (UCMA_CONSUMED): cons_n of them,
	 * the last cons_seq */
	uint32_t cons_seq, cons_n;
	/* The page shared with the daemon (emu/link/ucma_ring.h; NULL without one: then the
	 * socket carries everything, as before protocol 9). sent: the daemon's count of the
	 * messages it sent on sock, nread how many were read: equal, a drain has nothing to
	 * read and makes no recvmsg. The command ring (protocol 11) and its head (slock). */
	struct emu_ducma_shared *sh;
	uint64_t nread;
	uint64_t rhead;
	uint8_t *rbuf; /* recv_answer2's, EMU_DUCMA_BUNDLE_MAX bytes: a bundle fits (lock) */
};

/* Frees a file's memory (its fds are the caller's business). */
static void lfile_free(struct lfile *f)
{
	free(f->rbuf);
	if (f->sh)
		munmap(f->sh, EMU_DUCMA_PAGE_LEN);
	free(f);
}

static pthread_mutex_t files_lock = PTHREAD_MUTEX_INITIALIZER;
static struct lfile *files;

/* The file of fd with a reference taken (put() it), or NULL. */
static struct lfile *get(int fd)
{
	struct lfile *f;

	pthread_mutex_lock(&files_lock);
	for (f = files; f && f->fd != fd; f = f->next)
		;
	if (f)
		f->refs++;
	pthread_mutex_unlock(&files_lock);
	return f;
}

static bool is_file(int fd)
{
	struct lfile *f;

	pthread_mutex_lock(&files_lock);
	for (f = files; f && f->fd != fd; f = f->next)
		;
	pthread_mutex_unlock(&files_lock);
	return f != NULL;
}

static void release(struct lfile *f);

static void put(struct lfile *f)
{
	unsigned left;

	pthread_mutex_lock(&files_lock);
	left = --f->refs;
	pthread_mutex_unlock(&files_lock);
	if (!left)
		release(f);
}

static int send_msg(int sock, uint16_t type, uint32_t arg, uint32_t pad, struct iovec *iov,
		    int n)
{
	struct emu_dmsg h = { EMU_DPROTO_MAGIC, EMU_DPROTO_VERSION, type, arg, pad };
	struct msghdr m = { .msg_iov = iov, .msg_iovlen = (size_t)n };
	ssize_t r;

	iov[0] = (struct iovec){ &h, sizeof(h) };
	emu_link_count_sent(1);
	do
		r = sendmsg(sock, &m, MSG_NOSIGNAL);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		emu_link_count_sent(-1);
	return r < 0 ? -errno : 0;
}

/* The doorbell: the daemon may be asleep with a record in the ring (protocol 11). A full
 * socket holds doorbells already. */
static int ring_doorbell(struct lfile *f)
{
	struct emu_dmsg h = { EMU_DPROTO_MAGIC, EMU_DPROTO_VERSION, EMU_DMSG_UCMA_RING, 0, 0 };
	ssize_t r;

	/* not counted (emu_link_count_sent): a wake-up, not a message; what it rings for is the
	 * record, counted, and a doorbell may find the connection closed by the record before */
	do
		r = send(f->sock, &h, sizeof(h), MSG_NOSIGNAL | MSG_DONTWAIT);
	while (r < 0 && errno == EINTR);
	return r < 0 && errno != EAGAIN ? -errno : 0;
}

/* A message (iov[1..n-1] its body) as a record of f's command ring, f's send lock held. A
 * full ring (the daemon behind by 256 KiB of commands) waits for room, the doorbell rung
 * once: a daemon that is awake with a record in a ring does not sleep. */
static int ring_put(struct lfile *f, uint16_t type, uint32_t arg, uint32_t pad,
		    const struct iovec *iov, int n)
{
	struct emu_ducma_rec rec = { 0, type, 0, arg, pad };
	uint8_t *ring = (uint8_t *)f->sh + EMU_DUCMA_RING_OFF, *p;
	uint32_t size, off, room;
	bool rung = false;
	int err;

	for (int i = 1; i < n; i++)
		rec.len += (uint32_t)iov[i].iov_len;
	if (rec.len > EMU_DUCMA_REC_MAX)
		return -EMSGSIZE; /* bounded by the ucma limits (EMU_DUCMA_MAX_IN, _OPT) */
	size = emu_ducma_rec_size(rec.len);
	for (;;) {
		uint64_t tail = __atomic_load_n(&f->sh->tail, __ATOMIC_ACQUIRE);

		off = (uint32_t)(f->rhead & (EMU_DUCMA_RING_LEN - 1));
		room = EMU_DUCMA_RING_LEN - off; /* before the end */
		if (f->rhead + size + (room < size ? room : 0) - tail <= EMU_DUCMA_RING_LEN)
			break;
		if (!rung) {
			err = ring_doorbell(f);
			if (err)
				return err;
			rung = true;
		}
		sched_yield();
	}
	if (room < size) {
		struct emu_ducma_rec wrap = { 0, EMU_DUCMA_REC_WRAP, 0, 0, 0 };

		memcpy(ring + off, &wrap, sizeof(wrap));
		f->rhead += room;
		off = 0;
	}
	p = ring + off;
	memcpy(p, &rec, sizeof(rec));
	p += sizeof(rec);
	for (int i = 1; i < n; i++) {
		if (!iov[i].iov_len)
			continue; /* an absent option: base NULL */
		memcpy(p, iov[i].iov_base, iov[i].iov_len);
		p += iov[i].iov_len;
	}
	f->rhead += size;
	/* a record is a message the daemon counts as it reads it */
	((struct emu_ducma_rec *)(void *)(ring + off))->seq16 = (uint16_t)emu_link_count_sent(1);
	__atomic_store_n(&f->sh->head, f->rhead, __ATOMIC_RELEASE);
	/* against the daemon's "awake = 0, then look at head" before it sleeps: one of the two
	 * sees the other */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (!__atomic_load_n(&f->sh->awake, __ATOMIC_RELAXED))
		return ring_doorbell(f);
	return 0;
}

/* A message of f (iov[0] for the header) from f's lock, which it lets go before the copy or
 * system call when unlock is set: into the command ring, or (no shared page) on the socket.
 * It carries the events read since the last one in arg and pad: UCMA_CONSUMED, and
 * (protocol 10) UCMA_WRITE and UCMA_POST, whose events the daemon applies before it runs
 * the command. */
static int send_cmd(struct lfile *f, uint16_t type, struct iovec *iov, int n, bool unlock)
{
	uint32_t cnt = f->cons_n, seq = cnt ? f->cons_seq : 0;
	int err;

	f->cons_n = 0;
	pthread_mutex_lock(&f->slock);
	if (unlock)
		pthread_mutex_unlock(&f->lock);
	err = f->sh ? ring_put(f, type, seq, cnt, iov, n) :
		      send_msg(f->sock, type, seq, cnt, iov, n);
	pthread_mutex_unlock(&f->slock);
	return err;
}

/* Says the events read since the last time (one UCMA_CONSUMED for them all), f's lock held,
 * let go before the system call when unlock is set. Before a reader sleeps or answers
 * EAGAIN, at once for a CONNECT_REQUEST (its read gives the listener's backlog slot back),
 * every CONSUMED_BATCH events (one message, and one wake-up of the daemon, per burst of
 * events rather than per event), and before a MIGRATE_ID or close; a command carries them
 * itself (send_cmd): the daemon has applied them when it runs it, as the kernel had when
 * the application's next syscall came. */
#define CONSUMED_BATCH 32u
static int flush_consumed2(struct lfile *f, bool unlock)
{
	struct iovec iov[1];

	if (!f->cons_n) {
		if (unlock)
			pthread_mutex_unlock(&f->lock);
		return 0;
	}
	return send_cmd(f, EMU_DMSG_UCMA_CONSUMED, iov, 1, unlock);
}

static int flush_consumed(struct lfile *f)
{
	return flush_consumed2(f, false);
}

static unsigned long pushed_count; /* UCMA_EVENTs received (RDMAEMU_TRACE=ucmalink) */
/* rdma_cm files opened, and those that got the daemon's sent count (protocol 9) */
static unsigned long files_opened, files_counted;
/* the daemon's socket messages read on rdma_cm files, and the bundles among them with the
 * messages they held (protocol 12) */
static unsigned long sockmsg_count, bundle_count, bundled_count;
static unsigned long kept_count;   /* commands answered from kept answers (the same) */

/* ---- events of an id in evq (f's lock held) ---- */

/* d: +1 an event of id joined evq, -1 one left it. 0, or -1 when a new count finds no
 * memory (the caller refuses the event, as it does when the event's own record finds none). */
static int queued_add(struct lfile *f, uint32_t id, int d)
{
	struct qcount **pp = &f->queued[id % QCOUNT_BUCKETS];

	while (*pp && (*pp)->id != id)
		pp = &(*pp)->next;
	if (d > 0) {
		if (!*pp) {
			struct qcount *q = emu_kmem_alloc(sizeof(*q));

			if (!q)
				return -1;
			q->id = id;
			q->n = 0;
			q->next = NULL;
			*pp = q;
		}
		(*pp)->n++;
	} else if (*pp && !--(*pp)->n) {
		struct qcount *q = *pp;

		*pp = q->next;
		emu_kmem_free(q);
	}
	return 0;
}

static bool queued_any(const struct lfile *f, uint32_t id)
{
	for (const struct qcount *q = f->queued[id % QCOUNT_BUCKETS]; q; q = q->next)
		if (q->id == id)
			return true;
	return false;
}

/* Forgets the kept answers of id (all: every one) (f's lock held). */
static void kept_forget(struct lfile *f, uint32_t id, bool all)
{
	for (unsigned b = all ? 0 : id % KEPT_BUCKETS; b < KEPT_BUCKETS; b++) {
		struct kept **pp = &f->kept[b];

		while (*pp) {
			struct kept *k = *pp;

			if (all || k->id == id) {
				*pp = k->next;
				emu_kmem_free(k);
				f->nkept--;
			} else {
				pp = &k->next;
			}
		}
		if (!all)
			break;
	}
}

/* e is read: its answers are kept, unless evq holds a later event of its id (something
 * happened to it after the daemon ran them) (f's lock held). */
static void kept_take(struct lfile *f, const struct lev *e)
{
	size_t off = 0;

	if (!e->nsnap || queued_any(f, e->resp.id))
		return;
	kept_forget(f, e->resp.id, false);
	while (off + sizeof(struct emu_ducma_snap) <= e->nsnap && f->nkept < KEPT_MAX) {
		struct emu_ducma_snap s;
		struct kept *k;

		memcpy(&s, e->snap + off, sizeof(s));
		off += sizeof(s);
		if (s.len > EMU_DUCMA_MAX_OUT || off + s.len > e->nsnap || s.id != e->resp.id)
			return;
		k = emu_kmem_alloc(sizeof(*k) + s.len);
		if (!k)
			return;
		k->cmd = s.cmd, k->id = s.id, k->sub = s.sub, k->len = s.len;
		memcpy(k->b, e->snap + off, s.len);
		off += (s.len + 7) & ~7u;
		k->next = f->kept[s.id % KEPT_BUCKETS];
		f->kept[s.id % KEPT_BUCKETS] = k;
		f->nkept++;
	}
}

/* The kept answer of (cmd, id, sub), or NULL (f's lock held). */
static const struct kept *kept_find(struct lfile *f, uint32_t cmd, uint32_t id, uint32_t sub)
{
	for (const struct kept *k = f->kept[id % KEPT_BUCKETS]; k; k = k->next)
		if (k->cmd == cmd && k->id == id && k->sub == sub)
			return k;
	return NULL;
}

/* A verdict of no bytes for (cmd, id, sub) (f's lock held; no memory: not kept). */
static void kept_add(struct lfile *f, uint32_t cmd, uint32_t id, uint32_t sub)
{
	struct kept *k = f->nkept < KEPT_MAX ? emu_kmem_alloc(sizeof(*k)) : NULL;

	if (!k)
		return;
	k->cmd = cmd, k->id = id, k->sub = sub, k->len = 0;
	k->next = f->kept[id % KEPT_BUCKETS];
	f->kept[id % KEPT_BUCKETS] = k;
	f->nkept++;
}

/* ---- ids whose events_reported is known (f's lock held) ---- */

static struct lid *lid_find(struct lfile *f, uint32_t h)
{
	struct lid *l;

	for (l = f->ids[h % LID_BUCKETS]; l && l->h != h; l = l->next)
		;
	return l;
}

/* A new id of the file, none of its events read yet (no memory: it stays unknown); fresh
 * from a CREATE_ID of port space ps and qp_type. */
static struct lid *lid_add(struct lfile *f, uint32_t h, bool fresh, uint16_t ps,
			   uint8_t qp_type)
{
	struct lid *l = lid_find(f, h);

	if (!l) {
		l = emu_kmem_alloc(sizeof(*l));
		if (!l)
			return NULL;
		l->h = h;
		l->next = f->ids[h % LID_BUCKETS];
		f->ids[h % LID_BUCKETS] = l;
	}
	l->reported = 0;
	l->dead = false;
	l->fresh = fresh;
	l->ps = ps;
	l->qp_type = qp_type;
	return l;
}

static void lid_del(struct lfile *f, uint32_t h)
{
	struct lid **pp;

	for (pp = &f->ids[h % LID_BUCKETS]; *pp && (*pp)->h != h; pp = &(*pp)->next)
		;
	if (*pp) {
		struct lid *l = *pp;

		*pp = l->next;
		emu_kmem_free(l);
	}
}

/* The id's count is no longer known; a dead id stays until its UCMA_POSTED (its events on
 * their way must still be dropped). */
static void lid_forget(struct lfile *f, uint32_t h)
{
	const struct lid *l = lid_find(f, h);

	if (l && !l->dead)
		lid_del(f, h);
}

/* Events whose resp.id is not the id they count for (the kernel's ucma_get_event counts a
 * CONNECT_REQUEST for its listener, a multicast event's id is the membership's). */
static bool counts_for_id(uint32_t event)
{
	return event != EMU_CMA_EVENT_CONNECT_REQUEST && event != EMU_CMA_EVENT_MULTICAST_JOIN &&
	       event != EMU_CMA_EVENT_MULTICAST_ERROR;
}

/* The push messages (f's lock held): an EVENT joins evq (or is dropped: its id is dead), a
 * DROP leaves it, SPARE brings handles, POSTED ends a dead id. 1 when h was one (*marker set
 * for a DROP 0, the end of a MIGRATE_ID's drops), 2 for a POSTED and 3 for a SPARE (also an
 * answer to whoever waits for one), 0 when it is no push message, -EPROTO for a malformed one or a DROP of an
 * event evq does not hold. */
static int take_push(struct lfile *f, const struct emu_dmsg *h, const void *body, size_t got,
		     bool *marker)
{
	struct lev *e, **pp;

	if (h->type == EMU_DMSG_UCMA_EVENT) {
		if (!f || got < sizeof(e->resp) ||
		    !(e = emu_kmem_alloc(sizeof(*e) + got - sizeof(e->resp))))
			return -EPROTO;
		memcpy(&e->resp, body, sizeof(e->resp));
		if (counts_for_id(e->resp.event)) {
			const struct lid *l = lid_find(f, e->resp.id);

			if (l && l->dead) {
				/* queued before the daemon ran our posted DESTROY_ID, which drops it
				 * from its queue quietly: its 1 on the eventfd is ours to take */
				emu_engine_fd_clear(f->evfd);
				emu_kmem_free(e);
				return 1;
			}
		}
		e->next = NULL;
		e->seq = h->arg;
		e->gen = h->pad;
		e->nsnap = (uint32_t)(got - sizeof(e->resp));
		memcpy(e->snap, (const uint8_t *)body + sizeof(e->resp), e->nsnap);
		kept_forget(f, e->resp.id, false); /* something happened to that id */
		if (queued_add(f, e->resp.id, 1)) {
			emu_kmem_free(e);
			return -ENOMEM;
		}
		*f->evq_tail = e;
		f->evq_tail = &e->next;
		if (f->waiters)
			emu_engine_fd_signal(f->wake);
		__atomic_fetch_add(&pushed_count, 1, __ATOMIC_RELAXED);
		return 1;
	}
	if (h->type == EMU_DMSG_UCMA_SPARE) {
		size_t n = got / sizeof(uint32_t);

		if (!f || got % sizeof(uint32_t) || f->nspare + n > EMU_DUCMA_SPARE_MAX)
			return -EPROTO;
		memcpy(f->spare + f->nspare, body, got);
		f->nspare += (unsigned)n;
		return 3;
	}
	if (h->type == EMU_DMSG_UCMA_FORGET) {
		if (!f)
			return -EPROTO;
		kept_forget(f, h->arg, false);
		return 1;
	}
	if (h->type == EMU_DMSG_UCMA_VERDICT) {
		if (!f || got != sizeof(f->verdict))
			return -EPROTO;
		memcpy(&f->verdict, body, got);
		f->vuses = h->arg;
		/* taken back: the host changed (a device removal closes ids without an event) */
		if (!h->arg)
			kept_forget(f, 0, true);
		return 1;
	}
	if (h->type == EMU_DMSG_UCMA_POSTED) {
		struct emu_ducma_posted a;

		if (!f || got != sizeof(a))
			return -EPROTO;
		memcpy(&a, body, sizeof(a));
		if (a.cmd == RDMA_USER_CM_CMD_DESTROY_ID) {
			const struct lid *l = lid_find(f, a.id);

			/* the daemon ran it: no event of that id is on its way any more */
			if (l && l->dead)
				lid_del(f, a.id);
		}
		return 2;
	}
	if (h->type != EMU_DMSG_UCMA_DROP)
		return 0;
	if (!f)
		return -EPROTO;
	if (!h->arg) {
		*marker = true;
		return 1;
	}
	for (pp = &f->evq; *pp && (*pp)->seq != h->arg; pp = &(*pp)->next)
		;
	e = *pp;
	if (!e)
		return -EPROTO; /* the daemon's queue and ours diverged */
	*pp = e->next;
	if (!*pp)
		f->evq_tail = pp;
	queued_add(f, e->resp.id, -1);
	emu_kmem_free(e);
	return 1;
}

/* Reads sock's messages until the answer of type `type` (0: until a DROP 0 marker; -1: until
 * the socket is empty, flags MSG_DONTWAIT), applying the push messages of file f (NULL
 * before the file exists: none may come). The answer's arg, body into buf (up to len), an fd
 * passed with it into *fd (when fd is not NULL). -errno of the socket, -EPROTO for a
 * malformed message. */
static int recv_answer2(int sock, struct lfile *f, int type, int32_t *arg, void *buf,
			size_t len, size_t *got, int *fd, int *fd2, uint32_t *pad);

static int recv_answer(int sock, struct lfile *f, int type, int32_t *arg, void *buf, size_t len,
		       size_t *got, int *fd, uint32_t *pad)
{
	return recv_answer2(sock, f, type, arg, buf, len, got, fd, NULL, pad);
}

/* The fds passed with message m: into *fd, then *fd2, where the caller wants them (not NULL
 * and still -1); the others are closed. */
static void take_fds(const struct msghdr *m, int *fd, int *fd2)
{
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(m); cm; cm = CMSG_NXTHDR((struct msghdr *)m, cm)) {
		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		for (size_t i = 0; i < (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++) {
			int passed;

			memcpy(&passed, CMSG_DATA(cm) + i * sizeof(int), sizeof(passed));
			if (fd && *fd < 0)
				*fd = passed;
			else if (fd2 && *fd2 < 0)
				*fd2 = passed;
			else
				close(passed);
		}
	}
}

/* Whether the n bytes of message m are a whole message of the protocol (header h). */
static bool msg_ok(const struct msghdr *m, const struct emu_dmsg *h, size_t n)
{
	return n >= sizeof(*h) && h->magic == EMU_DPROTO_MAGIC &&
	       !(m->msg_flags & (MSG_TRUNC | MSG_CTRUNC));
}

/* What recv_answer2's caller waits for, and where its answer goes. */
struct want {
	int type; /* as recv_answer2's */
	int32_t *arg;
	void *buf;
	size_t len, *got;
	uint32_t *pad;
	bool done; /* the answer (or the DROP 0 marker) was taken */
};

/* One message of the file's connection (on its own or in a bundle): a push is applied, the
 * answer waited for is taken into w. 0, or -errno as recv_answer2's. */
static int take_msg(struct lfile *f, const struct emu_dmsg *h, const void *body, size_t blen,
		    struct want *w)
{
	bool marker = false;
	int r = take_push(f, h, body, blen, &marker);

	if (r < 0)
		return r;
	if (w->done)
		return r > 0 ? 0 : -EPROTO; /* a second answer: nobody waits for it */
	if ((r == 2 && w->type == EMU_DMSG_UCMA_POSTED) ||
	    (r == 3 && w->type == EMU_DMSG_UCMA_SPARE))
		r = 0;
	if (r > 0) {
		if (marker && w->type == 0)
			w->done = true;
		return 0;
	}
	if (w->type <= 0 || h->type != w->type || blen > w->len)
		return -EPROTO;
	if (blen)
		memcpy(w->buf, body, blen);
	*w->arg = (int32_t)h->arg;
	if (w->pad)
		*w->pad = h->pad;
	if (w->got)
		*w->got = blen;
	w->done = true;
	return 0;
}

/* Protocol 12: a UCMA_BUNDLE's messages, in order (emu/link/proto.h). Every one of them
 * is taken, also those after the answer waited for: the bundle has left the socket. */
static int take_bundle(struct lfile *f, const struct emu_dmsg *h, const uint8_t *body,
		       size_t blen, struct want *w)
{
	size_t off = 0;
	uint32_t n = 0;

	if (!f || h->arg < 2)
		return -EPROTO;
	while (off < blen) {
		struct emu_ducma_rec rec;
		struct emu_dmsg inner;
		int r;

		if (blen - off < sizeof(rec))
			return -EPROTO;
		memcpy(&rec, body + off, sizeof(rec));
		if (rec.seq16 || rec.type == EMU_DMSG_UCMA_BUNDLE ||
		    rec.len > blen - off - sizeof(rec) ||
		    emu_ducma_rec_size(rec.len) > blen - off)
			return -EPROTO;
		inner = (struct emu_dmsg){ EMU_DPROTO_MAGIC, EMU_DPROTO_VERSION, rec.type, rec.arg,
					   rec.pad };
		r = take_msg(f, &inner, body + off + sizeof(rec), rec.len, w);
		if (r)
			return r;
		off += emu_ducma_rec_size(rec.len);
		n++;
	}
	return n == h->arg ? 0 : -EPROTO;
}

/* fd2: a second passed fd (UCMA_OPEN's page), else it is closed. Before the file exists (f
 * NULL: UCMA_OPEN's answer) the message is read into a buffer on the stack; then into the
 * file's, which a bundle fits (f's lock held). */
static int recv_answer3(int sock, struct lfile *f, int type, int32_t *arg, void *buf,
			size_t len, size_t *got, int *fd, int *fd2, uint32_t *pad);

/* Virtual time: the daemon sends every answer as it reads the request (ucma_srv.c), so a
 * thread waiting for one holds time still (emu_link_vt_hold): the process is not idle while
 * its answer is on the way. */
static int recv_answer2(int sock, struct lfile *f, int type, int32_t *arg, void *buf,
			size_t len, size_t *got, int *fd, int *fd2, uint32_t *pad)
{
	int err;

	if (type < 0)
		return recv_answer3(sock, f, type, arg, buf, len, got, fd, fd2, pad);
	emu_link_vt_hold(true);
	err = recv_answer3(sock, f, type, arg, buf, len, got, fd, fd2, pad);
	emu_link_vt_hold(false);
	return err;
}

static int recv_answer3(int sock, struct lfile *f, int type, int32_t *arg, void *buf,
			size_t len, size_t *got, int *fd, int *fd2, uint32_t *pad)
{
	union {
		uint8_t b[EMU_DUCMA_MAX_OUT + sizeof(struct rdma_ucm_event_resp)];
		uint64_t align;
	} sbody;
	uint8_t *body = f ? f->rbuf : sbody.b;
	struct emu_dmsg h;
	struct iovec iov[2] = { { &h, sizeof(h) },
				{ body, f ? EMU_DUCMA_BUNDLE_MAX : sizeof(sbody.b) } };
	union {
		char b[CMSG_SPACE(2 * sizeof(int))];
		struct cmsghdr align;
	} c;
	struct want w = { type, arg, buf, len, got, pad, false };

	for (;;) {
		struct msghdr m = { .msg_iov = iov, .msg_iovlen = 2, .msg_control = c.b,
				    .msg_controllen = sizeof(c.b) };
		size_t blen;
		ssize_t n;
		int r;

		/* a drain with every message the daemon sent read: nothing to read */
		if (type < 0 && f && f->sh &&
		    __atomic_load_n(&f->sh->sent, __ATOMIC_ACQUIRE) == f->nread)
			return 0;
		do
			n = recvmsg(sock, &m, MSG_CMSG_CLOEXEC | (type < 0 ? MSG_DONTWAIT : 0));
		while (n < 0 && errno == EINTR);
		if (n < 0)
			return type < 0 && errno == EAGAIN ? 0 : -errno;
		if (n == 0)
			return -ECONNRESET; /* the daemon went away */
		if (f)
			f->nread++;
		take_fds(&m, type > 0 ? fd : NULL, type > 0 ? fd2 : NULL);
		if (!msg_ok(&m, &h, (size_t)n))
			return -EPROTO;
		blen = (size_t)n - sizeof(h);
		__atomic_fetch_add(&sockmsg_count, 1, __ATOMIC_RELAXED);
		if (h.type == EMU_DMSG_UCMA_BUNDLE) {
			__atomic_fetch_add(&bundle_count, 1, __ATOMIC_RELAXED);
			__atomic_fetch_add(&bundled_count, h.arg, __ATOMIC_RELAXED);
			r = take_bundle(f, &h, body, blen, &w);
		} else {
			r = take_msg(f, &h, body, blen, &w);
		}
		if (r < 0)
			return r;
		if (w.done)
			return 0;
	}
}

/* ---- RDMAEMU_TRACE=ucmalink: the round trips this process made, by command, printed at
 * exit (docs/daemon.md, "Connection setup across processes"): what a connection costs in
 * round trips to the daemon, for the measurements, without strace. QUERY is split by its
 * option (addr, path, gid, IB service). GET_EVENT makes none (push files): the line ends
 * with the number of events the daemon pushed. */

enum { RT_QUERY_OPT = EMU_UCMA_NCMDS, RT_N = RT_QUERY_OPT + 4 };

/* the names of the commands (emu_ucma_cmd_name), then of QUERY's options */
static const char *const rt_query_names[RT_N - RT_QUERY_OPT] = {
	[RDMA_USER_CM_QUERY_ADDR] = "QUERY(addr)",
	[RDMA_USER_CM_QUERY_PATH] = "QUERY(path)",
	[RDMA_USER_CM_QUERY_GID] = "QUERY(gid)",
	[EMU_UCMA_QUERY_IB_SERVICE] = "QUERY(ib_service)",
};

static const char *rt_name(int i)
{
	return i < RT_QUERY_OPT ? emu_ucma_cmd_name((uint32_t)i) : rt_query_names[i - RT_QUERY_OPT];
}

static unsigned long rt_count[RT_N];
static unsigned long post_count[EMU_UCMA_NCMDS]; /* posted commands, by command */

static bool rt_trace_on(void)
{
	static int on = -1;

	return emu_trace_enabled(&on, "ucmalink");
}

static void rt_trace(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void rt_trace(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	emu_trace_vprint("ucmalink: ", fmt, ap);
	va_end(ap);
}

static void rt_print(void)
{
	char line[2048];
	size_t n = 0;
	unsigned long total = 0;

	for (int i = 0; i < RT_N; i++) {
		unsigned long c = __atomic_load_n(&rt_count[i], __ATOMIC_RELAXED);
		int k;

		if (!c || !rt_name(i))
			continue;
		/* QUERY is counted once under its name and once under its option */
		if (i < RT_QUERY_OPT)
			total += c;
		k = snprintf(line + n, sizeof(line) - n, " %s %lu", rt_name(i), c);
		if (k < 0 || (size_t)k >= sizeof(line) - n)
			break;
		n += (size_t)k;
	}
	line[n] = 0;
	{
		char pl[256];
		size_t pn = 0;
		unsigned long ptotal = 0;

		pl[0] = 0;
		for (int i = 0; i < EMU_UCMA_NCMDS; i++) {
			unsigned long c = __atomic_load_n(&post_count[i], __ATOMIC_RELAXED);
			int k;

			if (!c)
				continue;
			ptotal += c;
			k = snprintf(pl + pn, sizeof(pl) - pn, " %s %lu", rt_name(i), c);
			if (k < 0 || (size_t)k >= sizeof(pl) - pn)
				break;
			pn += (size_t)k;
		}
		rt_trace("pid %d round trips %lu:%s; posted %lu:%s; events pushed %lu; kept "
			 "answers used %lu; files %lu, %lu with the sent count",
			 (int)getpid(), total, line, ptotal, pl,
			 __atomic_load_n(&pushed_count, __ATOMIC_RELAXED),
			 __atomic_load_n(&kept_count, __ATOMIC_RELAXED),
			 __atomic_load_n(&files_opened, __ATOMIC_RELAXED),
			 __atomic_load_n(&files_counted, __ATOMIC_RELAXED));
		rt_trace("pid %d bundles %lu holding %lu messages; socket messages %lu",
			 (int)getpid(), __atomic_load_n(&bundle_count, __ATOMIC_RELAXED),
			 __atomic_load_n(&bundled_count, __ATOMIC_RELAXED),
			 __atomic_load_n(&sockmsg_count, __ATOMIC_RELAXED));
	}
}

static void rt_register(void)
{
	atexit(rt_print);
}

static void rt_count_one(const uint8_t *body, uint32_t cmd, uint32_t in, bool posted)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	uint32_t opt;

	if (!rt_trace_on() || cmd >= EMU_UCMA_NCMDS)
		return;
	pthread_once(&once, rt_register);
	if (posted) {
		__atomic_fetch_add(&post_count[cmd], 1, __ATOMIC_RELAXED);
		return;
	}
	__atomic_fetch_add(&rt_count[cmd], 1, __ATOMIC_RELAXED);
	if (cmd == RDMA_USER_CM_CMD_QUERY &&
	    offsetof(struct rdma_ucm_query, option) + sizeof(opt) <= in) {
		memcpy(&opt, body + offsetof(struct rdma_ucm_query, option), sizeof(opt));
		if (opt <= EMU_UCMA_QUERY_IB_SERVICE)
			__atomic_fetch_add(&rt_count[RT_QUERY_OPT + opt], 1, __ATOMIC_RELAXED);
	}
}

int emu_ucma_link_open(const struct emu_host *h)
{
	const char *path = getenv("RDMAEMU_DAEMON"), *fabric = getenv("RDMAEMU_FABRIC");
	struct emu_dmsg_hello hello;
	struct emu_ducma_opened ans;
	struct iovec iov[2];
	struct lfile *f;
	int32_t arg = 0;
	size_t got = 0;
	int sock, err, fd = -1, sfd = -1;

	memset(&hello, 0, sizeof(hello));
	snprintf(hello.node, sizeof(hello.node), "%s", h->name);
	if (fabric && *fabric && !realpath(fabric, hello.fabric))
		return -errno;
	hello.pid = (int32_t)getpid();
	f = emu_calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->rbuf = emu_malloc(EMU_DUCMA_BUNDLE_MAX);
	if (!f->rbuf) {
		lfile_free(f);
		return -ENOMEM;
	}
	sock = path ? emu_link_connect(path) : -1;
	if (sock < 0) {
		err = path ? -errno : -ENODEV;
		lfile_free(f);
		return err;
	}
	iov[1] = (struct iovec){ &hello, sizeof(hello) };
	err = send_msg(sock, EMU_DMSG_UCMA_OPEN, 0, 0, iov, 2);
	if (!err)
		err = recv_answer2(sock, NULL, EMU_DMSG_UCMA_OPEN, &arg, &ans, sizeof(ans), &got,
				   &fd, &sfd, NULL);
	if (sfd >= 0) {
		/* the sent-message count and the command ring; without them the drains read the
		 * socket and the commands go on it */
		void *p = emu_mmap(NULL, EMU_DUCMA_PAGE_LEN, PROT_READ | PROT_WRITE, MAP_SHARED, sfd, 0);

		if (p != MAP_FAILED) {
			f->sh = p;
			/* the ring's pages now, not a fault each as it first fills (~10 us each in
			 * the reference VM) */
			(void)madvise((uint8_t *)p + EMU_DUCMA_RING_OFF, EMU_DUCMA_RING_LEN,
				      MADV_POPULATE_WRITE);
		}
		close(sfd);
	}
	if (!err && arg)
		err = -arg;
	else if (!err && (got < sizeof(ans) || fd < 0))
		err = -EPROTO;
	if (err) {
		if (fd >= 0)
			close(fd);
		close(sock);
		lfile_free(f);
		return err;
	}
	f->evfd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	f->wake = f->evfd < 0 ? -1 : emu_eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (f->wake < 0) {
		err = -errno;
		if (f->evfd >= 0)
			close(f->evfd);
		close(fd);
		close(sock);
		lfile_free(f);
		return err;
	}
	f->fd = fd;
	f->sock = sock;
	f->dfd = ans.dfd;
	f->refs = 1;
	f->evq_tail = &f->evq;
	{
		/* the first spares follow the answer (posted CREATE_IDs from the first one) */
		uint32_t first[EMU_DUCMA_SPARE_MAX];

		err = recv_answer(sock, f, EMU_DMSG_UCMA_SPARE, &arg, first, sizeof(first), NULL,
				  NULL, NULL);
		if (err) {
			close(f->wake);
			close(f->evfd);
			close(fd);
			close(sock);
			lfile_free(f);
			return err;
		}
	}
	pthread_mutex_init(&f->lock, NULL);
	pthread_mutex_init(&f->slock, NULL);
	pthread_mutex_lock(&files_lock);
	f->next = files;
	files = f;
	pthread_mutex_unlock(&files_lock);
	__atomic_add_fetch(&files_opened, 1, __ATOMIC_RELAXED);
	if (f->sh)
		__atomic_add_fetch(&files_counted, 1, __ATOMIC_RELAXED);
	/* virtual time: the engine follows the daemon's clock, and the program's clock and
	 * waits join it, from the first rdma_cm file on (a program that never opens a device
	 * has no engine otherwise) */
	if (emu_link_virtual_time())
		emu_engine_get();
	return fd;
}

bool emu_ucma_link_is_file(int fd)
{
	return is_file(fd);
}

/* ucma_close: the daemon destroys the file's ids before this returns, so the DREQs of its
 * connections are on their way when the application goes on. */
static void release(struct lfile *f)
{
	struct iovec iov[1];
	int32_t arg;

	pthread_mutex_lock(&f->lock);
	if (!flush_consumed(f) && !send_cmd(f, EMU_DMSG_UCMA_CLOSE, iov, 1, false))
		(void)recv_answer(f->sock, f, EMU_DMSG_UCMA_CLOSE, &arg, NULL, 0, NULL, NULL,
				  NULL);
	pthread_mutex_unlock(&f->lock);
	while (f->evq) {
		struct lev *e = f->evq;

		f->evq = e->next;
		queued_add(f, e->resp.id, -1);
		emu_kmem_free(e);
	}
	kept_forget(f, 0, true);
	for (unsigned b = 0; b < LID_BUCKETS; b++)
		while (f->ids[b])
			lid_del(f, f->ids[b]->h);
	close(f->sock);
	close(f->evfd);
	close(f->wake);
	pthread_mutex_destroy(&f->lock);
	pthread_mutex_destroy(&f->slock);
	lfile_free(f);
}

int emu_ucma_link_close(int fd)
{
	struct lfile *f, **pp;
	int ret;

	pthread_mutex_lock(&files_lock);
	for (pp = &files; *pp && (*pp)->fd != fd; pp = &(*pp)->next)
		;
	f = *pp;
	if (f)
		*pp = f->next;
	pthread_mutex_unlock(&files_lock);
	ret = close(fd) ? -errno : 0;
	if (f)
		put(f); /* the list's reference: the file goes now, or with its last command */
	return ret;
}

static uint32_t get_u32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* RDMAEMU_UCMA_KEPT_CHECK=1: a kept answer is checked against a round trip (tests) */
static bool kept_check(void)
{
	static int on = -1;

	if (on < 0) {
		const char *s = getenv("RDMAEMU_UCMA_KEPT_CHECK");

		on = s && !strcmp(s, "1");
	}
	return on;
}

static uint64_t get_u64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* One round trip (f's lock held): the command (in bytes of cmd) and the option's value go,
 * the return value and the *got bytes of the response buffer the command wrote come back
 * into resp (out bytes of room); the events pushed meanwhile join evq. *devrm_gen: the
 * answer's removal generation. */
static int round_trip(struct lfile *f, const uint8_t *cmd, uint32_t in, uint8_t *resp,
		      uint32_t out, const void *opt, uint32_t optlen, int32_t *ret,
		      uint32_t *devrm_gen, size_t *got)
{
	struct emu_ducma_write w = { in, out, optlen };
	struct iovec iov[4];
	int err;

	iov[1] = (struct iovec){ &w, sizeof(w) };
	iov[2] = (struct iovec){ (void *)cmd, in };
	iov[3] = (struct iovec){ (void *)opt, optlen };
	*got = 0;
	/* virtual time: the daemon answers at once (ucma_srv.c): the process is at work until
	 * the answer is in, not waiting; time moving meanwhile would land its events and
	 * deadlines before the command in one run and after it in the next */
	emu_link_vt_hold(true);
	err = send_cmd(f, EMU_DMSG_UCMA_WRITE, iov, 4, false);
	if (!err)
		err = recv_answer(f->sock, f, EMU_DMSG_UCMA_WRITE, ret, resp, out, got, NULL,
				  devrm_gen);
	emu_link_vt_hold(false);
	emu_link_vt_sync();
	return err;
}

/* Whether fd reads now (the eventfd's count is above 0). */
static bool fd_readable(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
}

/* GET_EVENT on a push file: the head of evq to dst (out bytes at most, as ucma_get_event
 * copies), UCMA_CONSUMED to the daemon, which then does what reading it does in the kernel.
 * An empty evq takes what the socket holds; then EAGAIN for an O_NONBLOCK fd, or a sleep.
 *
 * The sleep is on the eventfd, not the socket: the answers of other threads' commands arrive
 * on the socket and would wake every reader for nothing (measured: connect 40 % slower). The
 * count is what the process has been pushed and not read, and under the lock it is the
 * number of events in evq or still on their way (the daemon counts an event before it sends
 * it, and a reader takes its 1 before it lets the lock go). So an empty evq with the count
 * at 0 sleeps on the eventfd until the next push; with the count above 0 the event is on its
 * way: the reader sleeps on the socket, and on wake, which a command of another thread sets
 * when it takes pushes into evq meanwhile (it may read the message the reader waits for).
 * The socket's hang-up (the daemon died) ends both sleeps: once what the daemon sent before
 * is read, GET_EVENT says ECONNRESET (test_ucma_link). */
static int get_event(struct lfile *f, void *dst, uint32_t out)
{
	struct lev *e;
	int32_t unused;
	int err, fl;
	bool hup = false, intr;

	pthread_mutex_lock(&f->lock);
	for (;;) {
		struct pollfd p[3];
		bool coming;

		if (f->evq)
			break;
		err = recv_answer(f->sock, f, -1, &unused, NULL, 0, NULL, NULL, NULL);
		if (err) {
			pthread_mutex_unlock(&f->lock);
			return err;
		}
		if (f->evq)
			break;
		/* the daemon went away and what it sent before is read (the drain above reads
		 * only what the sent count says, so it never meets the end of the socket) */
		if (hup) {
			pthread_mutex_unlock(&f->lock);
			return -ECONNRESET;
		}
		/* nothing more to read now: the daemon hears of what was */
		err = flush_consumed(f);
		if (err) {
			pthread_mutex_unlock(&f->lock);
			return err;
		}
		/* the file status flags (O_NONBLOCK) are the shared open file's */
		fl = fcntl(f->evfd, F_GETFL);
		if (fl < 0 || (fl & O_NONBLOCK)) {
			pthread_mutex_unlock(&f->lock);
			return -EAGAIN;
		}
		coming = fd_readable(f->evfd);
		p[0] = (struct pollfd){ .fd = f->sock, .events = coming ? POLLIN : 0 };
		p[1] = (struct pollfd){ .fd = coming ? f->wake : f->evfd, .events = POLLIN };
		if (coming)
			emu_engine_fd_clear(f->wake);
		f->waiters += coming;
		pthread_mutex_unlock(&f->lock);
		intr = false;
		/* virtual time: a wait of the process's own, asleep until the daemon pushes */
		emu_link_vt_block(true, "rdma_get_cm_event");
		/* the kernel's read of the file waits interruptibly (emu_signal_restarts) */
		while (poll(p, 2, -1) < 0 && errno == EINTR)
			if ((intr = !emu_signal_restarts()))
				break;
		emu_link_vt_block(false, NULL);
		hup = p[0].revents & (POLLHUP | POLLERR);
		pthread_mutex_lock(&f->lock);
		f->waiters -= coming;
		if (intr) {
			pthread_mutex_unlock(&f->lock);
			return -EINTR;
		}
	}
	/* ucma_get_event: a failed copy_to_user leaves the event queued */
	if (!dst) {
		pthread_mutex_unlock(&f->lock);
		return -EFAULT;
	}
	e = f->evq;
	f->evq = e->next;
	if (!f->evq)
		f->evq_tail = &f->evq;
	queued_add(f, e->resp.id, -1);
	kept_take(f, e);
	/* ucma_get_event's events_reported, where the process can tell whose */
	if (e->resp.event == EMU_CMA_EVENT_CONNECT_REQUEST) {
		lid_add(f, e->resp.id, false, 0, 0);
	} else if (counts_for_id(e->resp.event)) {
		struct lid *l = lid_find(f, e->resp.id);

		if (l)
			l->reported++;
	}
	/* the event's 1 on the semaphore, under the lock (see above) */
	emu_engine_fd_clear(f->evfd);
	/* said to the daemon with the file's next message (send_cmd) */
	f->cons_seq = e->seq;
	f->cons_n++;
	if (e->resp.event == EMU_CMA_EVENT_CONNECT_REQUEST || f->cons_n >= CONSUMED_BATCH) {
		err = flush_consumed2(f, true);
	} else {
		err = 0;
		pthread_mutex_unlock(&f->lock);
	}
	if (err) {
		emu_kmem_free(e);
		return err;
	}
	/* a DEVICE_REMOVAL is seen only once the device lists dropped the device */
	if (e->gen)
		emu_link_devrm_sync(e->gen);
	/* virtual time: the daemon moved this process's clock before it pushed the event */
	emu_link_vt_sync();
	memcpy(dst, &e->resp, out < sizeof(e->resp) ? out : sizeof(e->resp));
	emu_kmem_free(e);
	return 0;
}

/* ---- posted commands (protocol 7, docs/daemon.md "Posted commands") ----
 *
 * CREATE_ID, DESTROY_ID and RESOLVE_ROUTE are answered by the process when it knows the
 * answer for sure, and sent one-way (UCMA_POST): the daemon runs them in the connection's
 * order, before anything the process sends later. CREATE_ID takes a handle the daemon
 * reserved for the file (UCMA_SPARE); DESTROY_ID answers the events_reported of an id whose
 * events the process has counted (struct lid) and drops its unread events itself;
 * RESOLVE_ROUTE needs the verdict the daemon sent with the id's ADDR_RESOLVED. Anything
 * else, or nothing known, is a round trip as before. */

/* f's lock held; let go before the system call when unlock is set */
static int post(struct lfile *f, const uint8_t *cmd, uint32_t in, int32_t ret, uint32_t val,
		bool ack, bool unlock)
{
	struct emu_ducma_post p = { in, ack ? EMU_DUCMA_POST_ACK : 0, ret, val };
	struct iovec iov[3];

	iov[1] = (struct iovec){ &p, sizeof(p) };
	iov[2] = (struct iovec){ (void *)cmd, in };
	return send_cmd(f, EMU_DMSG_UCMA_POST, iov, 3, unlock);
}

static bool kept_check(void);

/* RDMAEMU_UCMA_KEPT_CHECK=1: the daemon's UCMA_POSTED of the command just posted must say
 * what the process answered; abort otherwise (f's lock held). */
static int post_check(struct lfile *f, uint32_t cmd, uint32_t id, uint32_t val)
{
	struct emu_ducma_posted a;
	int32_t ret = 0;
	size_t got = 0;
	int err;

	if (!kept_check())
		return 0;
	err = recv_answer(f->sock, f, EMU_DMSG_UCMA_POSTED, &ret, &a, sizeof(a), &got, NULL,
			  NULL);
	if (err)
		return err;
	if (got != sizeof(a) || a.cmd != cmd || a.id != id || ret || a.val != val) {
		fprintf(stderr, "rdmaemu: ucmalink: posted %s (id %u) answered 0 (%u), the "
				"daemon's %d (%u)\n",
			emu_ucma_cmd_name(cmd), id, val, ret, a.val);
		abort();
	}
	return 0;
}

/* The kept verdict for cmd on id, whatever its sub (f's lock held). */
static const struct kept *verdict_of(struct lfile *f, uint32_t cmd, uint32_t id)
{
	for (const struct kept *k = f->kept[id % KEPT_BUCKETS]; k; k = k->next)
		if (k->cmd == cmd && k->id == id && !k->len &&
		    (cmd != RDMA_USER_CM_CMD_DISCONNECT || !k->sub))
			return k;
	return NULL;
}

/* Whether the command's conn_param is one the verdict (sub, emu_cma_cm_ops.sure) holds for:
 * CONNECT valid, with no more private data than it takes; ACCEPT as the verdict says (a
 * REP: valid, and the private data; the RTU: not valid); DISCONNECT always. */
static bool verdict_holds(uint32_t cmd, uint32_t sub, const struct rdma_ucm_conn_param *cp)
{
	struct rdma_ucm_conn_param p;

	if (cmd == RDMA_USER_CM_CMD_DISCONNECT)
		return true;
	memcpy(&p, cp, sizeof(p));
	if (cmd == RDMA_USER_CM_CMD_CONNECT)
		return p.valid && p.private_data_len <= sub;
	if (!(sub & 0x100))
		return !p.valid;
	return p.valid && p.private_data_len <= (sub & 0xff);
}

/* ucma_get_qp_type of a CREATE_ID whose port space it takes. */
static uint8_t ucma_qp_type(const struct rdma_ucm_create_id *c)
{
	return c->ps == EMU_CMA_PS_TCP ? 2 /* IB_QPT_RC */ :
	       c->ps == EMU_CMA_PS_IB  ? c->qp_type :
					 4 /* IB_QPT_UD: UDP, IPOIB */;
}

/* A command try_post may post: the application's command cut to its struct (need bytes, the
 * header's in), with no response buffer (out 0): what goes to the daemon. */
struct post_cmd {
	uint8_t c[sizeof(struct rdma_ucm_cmd_hdr) + EMU_DUCMA_POST_MAX];
	const uint8_t *body; /* the command's struct as the process has it */
	uint32_t cmd, need, out;
	uint64_t resp_addr;
	uint32_t id;  /* the id it names; CREATE_ID: the handle it takes */
	uint32_t val; /* CREATE_ID: the handle; DESTROY_ID: the id's events_reported */
	struct rdma_ucm_create_id cq; /* CREATE_ID's */
};

/* CREATE_ID and DESTROY_ID answer in the response buffer: without one, a round trip. */
static bool post_has_resp(const struct post_cmd *p, size_t resp_len)
{
	return p->out >= resp_len && p->resp_addr;
}

static bool post_create_admit(struct post_cmd *p)
{
	if (!post_has_resp(p, sizeof(struct rdma_ucm_create_id_resp)))
		return false;
	memcpy(&p->cq, p->body, sizeof(p->cq));
	/* the port spaces ucma_get_qp_type takes; another one is the daemon's EINVAL */
	return p->cq.ps == EMU_CMA_PS_TCP || p->cq.ps == EMU_CMA_PS_UDP ||
	       p->cq.ps == EMU_CMA_PS_IPOIB || p->cq.ps == EMU_CMA_PS_IB;
}

static bool post_destroy_admit(struct post_cmd *p)
{
	return post_has_resp(p, sizeof(struct rdma_ucm_destroy_id_resp));
}

static bool post_route_admit(struct post_cmd *p)
{
	return get_u32(p->body + offsetof(struct rdma_ucm_resolve_route, timeout_ms)) != 0;
}

/* CREATE_ID takes a spare handle, the lowest first, as the kernel's xa_alloc would hand
 * them out; none left: a round trip, which brings new spares. */
static bool post_create(struct lfile *f, struct post_cmd *p)
{
	unsigned lo = 0;

	if (!f->nspare)
		return false;
	for (unsigned i = 1; i < f->nspare; i++)
		if (f->spare[i] < f->spare[lo])
			lo = i;
	p->id = p->val = f->spare[lo];
	f->spare[lo] = f->spare[--f->nspare];
	lid_add(f, p->id, true, p->cq.ps, ucma_qp_type(&p->cq));
	return true;
}

/* RESOLVE_ADDR, RESOLVE_IP: the daemon's verdict says these bytes return 0 on a fresh id of
 * this kind. */
static bool post_resolve_addr(struct lfile *f, struct post_cmd *p)
{
	struct lid *l = lid_find(f, p->id);
	const struct emu_ducma_verdict *v = &f->verdict;
	uint8_t key[EMU_DUCMA_KEY_MAX];

	if (!l || l->dead || !l->fresh || !f->vuses || v->cmd != p->cmd ||
	    v->klen != p->need || v->ps != l->ps || v->qp_type != l->qp_type)
		return false;
	memcpy(key, p->body, p->need);
	memset(key + emu_ducma_ptrs_of(p->cmd).id, 0, sizeof(uint32_t));
	if (memcmp(key, v->key, p->need))
		return false;
	f->vuses--;
	l->fresh = false;
	return true;
}

/* ucma_destroy_id: the id's unread events go (the daemon drops its copies quietly). */
static void evq_drop_id(struct lfile *f, uint32_t id)
{
	struct lev **pp = &f->evq;

	while (*pp) {
		struct lev *e = *pp;

		if (e->resp.id == id && counts_for_id(e->resp.event)) {
			*pp = e->next;
			emu_engine_fd_clear(f->evfd);
			queued_add(f, id, -1);
			emu_kmem_free(e);
		} else {
			pp = &e->next;
		}
	}
	f->evq_tail = pp;
}

/* DESTROY_ID of an id whose events the process counts answers its events_reported. */
static bool post_destroy(struct lfile *f, struct post_cmd *p)
{
	struct lid *l = lid_find(f, p->id);

	if (!l || l->dead)
		return false;
	p->val = l->reported;
	l->dead = true;
	evq_drop_id(f, p->id);
	kept_forget(f, p->id, false);
	return true;
}

/* CONNECT, ACCEPT, DISCONNECT: the verdict kept for the id holds for this conn_param. */
static bool post_conn(struct lfile *f, struct post_cmd *p)
{
	const uint8_t *s = p->c + sizeof(struct rdma_ucm_cmd_hdr);
	const struct rdma_ucm_conn_param *cp = NULL;
	const struct kept *k = verdict_of(f, p->cmd, p->id);
	bool then_disconnect;

	if (p->cmd == RDMA_USER_CM_CMD_CONNECT)
		cp = (const void *)(s + offsetof(struct rdma_ucm_connect, conn_param));
	else if (p->cmd == RDMA_USER_CM_CMD_ACCEPT)
		cp = (const void *)(s + offsetof(struct rdma_ucm_accept, conn_param));
	if (!k || !verdict_holds(p->cmd, k->sub, cp))
		return false;
	/* the RTU's verdict came with the DISCONNECT's that holds after it */
	then_disconnect = p->cmd == RDMA_USER_CM_CMD_ACCEPT &&
			  kept_find(f, RDMA_USER_CM_CMD_DISCONNECT, p->id, 1);
	kept_forget(f, p->id, false);
	if (then_disconnect)
		kept_add(f, RDMA_USER_CM_CMD_DISCONNECT, p->id, 0);
	return true;
}

/* RESOLVE_ROUTE: the verdict the daemon sent with the id's ADDR_RESOLVED. */
static bool post_route(struct lfile *f, struct post_cmd *p)
{
	if (!kept_find(f, RDMA_USER_CM_CMD_RESOLVE_ROUTE, p->id, 0))
		return false;
	kept_forget(f, p->id, false);
	return true;
}

/* The commands that may be posted, by command: admit looks at the command alone (NULL:
 * any), answer (f's lock held, the daemon's news read) tells whether the process knows the
 * answer for sure, and takes it then. */
struct post_op {
	bool (*admit)(struct post_cmd *p);
	bool (*answer)(struct lfile *f, struct post_cmd *p);
};

static const struct post_op post_ops[EMU_UCMA_NCMDS] = {
	[RDMA_USER_CM_CMD_CREATE_ID] = { post_create_admit, post_create },
	[RDMA_USER_CM_CMD_DESTROY_ID] = { post_destroy_admit, post_destroy },
	[RDMA_USER_CM_CMD_RESOLVE_IP] = { NULL, post_resolve_addr },
	[RDMA_USER_CM_CMD_RESOLVE_ADDR] = { NULL, post_resolve_addr },
	[RDMA_USER_CM_CMD_RESOLVE_ROUTE] = { post_route_admit, post_route },
	[RDMA_USER_CM_CMD_CONNECT] = { NULL, post_conn },
	[RDMA_USER_CM_CMD_ACCEPT] = { NULL, post_conn },
	[RDMA_USER_CM_CMD_DISCONNECT] = { NULL, post_conn },
};

/* The way to post cmd (in bytes, out of room at resp_addr), *p made from it; NULL: cmd may
 * not be posted. */
static const struct post_op *post_prepare(struct post_cmd *p, const uint8_t *cmd, uint32_t in,
					  uint32_t out, uint64_t resp_addr)
{
	struct rdma_ucm_cmd_hdr hdr;
	const struct post_op *op;
	int id_off;

	memcpy(&hdr, cmd, sizeof(hdr));
	p->need = (uint32_t)emu_ducma_post_size(hdr.cmd);
	if (!p->need || in < p->need)
		return NULL;
	op = &post_ops[hdr.cmd]; /* a command with a post size has one */
	p->cmd = hdr.cmd;
	p->body = cmd + sizeof(hdr);
	p->out = out;
	p->resp_addr = resp_addr;
	id_off = emu_ducma_ptrs_of(hdr.cmd).id;
	p->id = id_off >= 0 ? get_u32(p->body + id_off) : 0;
	p->val = 0;
	if (op->admit && !op->admit(p))
		return NULL;
	memcpy(p->c, cmd, sizeof(hdr) + p->need);
	((struct rdma_ucm_cmd_hdr *)(void *)p->c)->in = (uint16_t)p->need;
	((struct rdma_ucm_cmd_hdr *)(void *)p->c)->out = 0;
	return op;
}

/* What the daemon sent meanwhile first, where it matters: a verdict taken back, a later
 * event of the id (RESOLVE_*), spares when none are left. A DESTROY_ID drops the id's events
 * still on their way as they come (struct lid). One recvmsg saved per post. */
static int post_catch_up(struct lfile *f, uint32_t cmd)
{
	int32_t unused;

	if (cmd == RDMA_USER_CM_CMD_DESTROY_ID ||
	    (cmd == RDMA_USER_CM_CMD_CREATE_ID && f->nspare))
		return 0;
	return recv_answer(f->sock, f, -1, &unused, NULL, 0, NULL, NULL, NULL);
}

/* A DESTROY_ID's UCMA_POSTED ends its id's record (take_push). The daemon's UCMA_POSTED says
 * events_reported for DESTROY_ID, else 0: checked under the lock, else the lock goes before
 * the system call. Called with f's lock held, returns without it. */
static int post_send(struct lfile *f, const struct post_cmd *p)
{
	uint32_t len = (uint32_t)sizeof(struct rdma_ucm_cmd_hdr) + p->need;
	bool destroy = p->cmd == RDMA_USER_CM_CMD_DESTROY_ID;
	int err;

	if (!kept_check())
		return post(f, p->c, len, 0, p->val, destroy, true);
	err = post(f, p->c, len, 0, p->val, true, false);
	if (!err)
		err = post_check(f, p->cmd, p->id, destroy ? p->val : 0);
	pthread_mutex_unlock(&f->lock);
	return err;
}

/* What the kernel would have written over the response buffer. */
static void post_reply(const struct post_cmd *p)
{
	if (p->cmd == RDMA_USER_CM_CMD_CREATE_ID) {
		struct rdma_ucm_create_id_resp r = { p->id };

		memcpy((void *)(uintptr_t)p->resp_addr, &r, sizeof(r));
	} else if (p->cmd == RDMA_USER_CM_CMD_DESTROY_ID) {
		struct rdma_ucm_destroy_id_resp r = { p->val };

		memcpy((void *)(uintptr_t)p->resp_addr, &r, sizeof(r));
	}
}

/* cmd (its header's in and out cut to what the kernel reads) posted and answered here: 1;
 * not known for sure: 0 (a round trip); -errno of the socket. */
static int try_post(struct lfile *f, const uint8_t *cmd, uint32_t in, uint32_t out,
		    uint64_t resp_addr)
{
	const struct post_op *op;
	struct post_cmd p;
	int err;

	op = post_prepare(&p, cmd, in, out, resp_addr);
	if (!op)
		return 0;
	pthread_mutex_lock(&f->lock);
	err = post_catch_up(f, p.cmd);
	if (err || !op->answer(f, &p)) {
		pthread_mutex_unlock(&f->lock);
		return err;
	}
	err = post_send(f, &p);
	if (err)
		return err;
	post_reply(&p);
	rt_count_one(p.c + sizeof(struct rdma_ucm_cmd_hdr), p.cmd, p.need, true);
	return 1;
}

/* The id a command that changes how an id's events count names (LISTEN: its requests count
 * for it; JOIN: its events name the membership; MIGRATE_ID: it leaves the file; DESTROY_ID),
 * or -1. */
static int64_t uncounted_id(uint32_t cmd, const uint8_t *body, uint32_t in)
{
	size_t off;

	switch (cmd) {
	case RDMA_USER_CM_CMD_LISTEN:
		off = offsetof(struct rdma_ucm_listen, id);
		break;
	case RDMA_USER_CM_CMD_JOIN_IP_MCAST:
		off = offsetof(struct rdma_ucm_join_ip_mcast, id);
		break;
	case RDMA_USER_CM_CMD_JOIN_MCAST:
		off = offsetof(struct rdma_ucm_join_mcast, id);
		break;
	case RDMA_USER_CM_CMD_MIGRATE_ID:
		off = offsetof(struct rdma_ucm_migrate_id, id);
		break;
	case RDMA_USER_CM_CMD_DESTROY_ID:
		off = offsetof(struct rdma_ucm_destroy_id, id);
		break;
	default:
		return -1;
	}
	return off + 4 <= in ? (int64_t)get_u32(body + off) : -1;
}

/* A command on its way through emu_ucma_link_write: the application's, cut to what the
 * kernel reads of it (the rest never matters). */
struct wcmd {
	struct rdma_ucm_cmd_hdr hdr; /* the application's header */
	uint8_t cmd[sizeof(struct rdma_ucm_cmd_hdr) + EMU_DUCMA_MAX_IN]; /* in and out cut */
	const uint8_t *body; /* the application's struct */
	uint32_t in, out;
	struct emu_ducma_ptrs ptrs;
	uint64_t resp_addr;
};

/* A kept answer of a QUERY or INIT_QP_ATTR (len 0: none), with RDMAEMU_UCMA_KEPT_CHECK=1
 * checked against the daemon's. */
struct write_hit {
	uint8_t b[EMU_DUCMA_MAX_OUT];
	size_t len;
};

/* The daemon's answer of a round trip. */
struct write_answer {
	uint8_t resp[EMU_DUCMA_MAX_OUT];
	int32_t ret;
	uint32_t devrm_gen;
	size_t got;
};

/* The checks of emu_ucma_write, in its order: *f, with a reference, for the command in buf.
 * A file of ours is an open fd (the library closes it through emu_ucma_link_close, which
 * takes it off the list first), so only an fd we do not know needs the fcntl that tells a
 * closed one (EBADF) from one that is no rdma_cm file (EINVAL): a system call less per
 * command. An application that close()s the channel's fd itself and writes on it still gets
 * EBADF from the kernel only if the library's list is told; here its commands go on
 * (docs/daemon.md). */
static int write_file(int fd, const void *buf, size_t len, struct rdma_ucm_cmd_hdr *hdr,
		      struct lfile **fp)
{
	struct lfile *f;

	if (fd < 0)
		return -EBADF;
	f = get(fd);
	if (!f && fcntl(fd, F_GETFD) < 0)
		return -EBADF;
	if (len < sizeof(*hdr) ||
	    (memcpy(hdr, buf, sizeof(*hdr)), hdr->cmd >= EMU_UCMA_NCMDS) ||
	    hdr->in + sizeof(*hdr) > len || !f) {
		if (f)
			put(f);
		return -EINVAL;
	}
	*fp = f;
	return 0;
}

/* w made from the command in buf, its header in w->hdr. */
static void write_cut(struct wcmd *w, const void *buf)
{
	w->body = (const uint8_t *)buf + sizeof(w->hdr);
	w->in = w->hdr.in < EMU_DUCMA_MAX_IN ? w->hdr.in : EMU_DUCMA_MAX_IN;
	w->out = w->hdr.out < EMU_DUCMA_MAX_OUT ? w->hdr.out : EMU_DUCMA_MAX_OUT;
	memcpy(w->cmd, buf, sizeof(w->hdr) + w->in);
	((struct rdma_ucm_cmd_hdr *)w->cmd)->in = (uint16_t)w->in;
	((struct rdma_ucm_cmd_hdr *)w->cmd)->out = (uint16_t)w->out;
	w->ptrs = emu_ducma_ptrs_of(w->hdr.cmd);
	w->resp_addr = 0;
	if (w->ptrs.resp >= 0 && (uint32_t)w->ptrs.resp + 8 <= w->in)
		w->resp_addr = get_u64(w->body + w->ptrs.resp);
}

/* GET_EVENT: ucma_get_event's only failure before the wait comes first. */
static int write_get_event(struct lfile *f, const struct wcmd *w)
{
	if (w->out < EMU_UCMA_GET_EVENT_MIN_OUT)
		return -ENOSPC;
	return get_event(f, (void *)(uintptr_t)w->resp_addr, w->out);
}

/* The kept answer of a QUERY or INIT_QP_ATTR into *hit, if there is one and the buffer
 * holds it. */
static void kept_answer(struct lfile *f, const struct wcmd *w, struct write_hit *hit)
{
	struct rdma_ucm_query q;
	const struct kept *k;
	int32_t unused;
	int err;

	if ((w->hdr.cmd != RDMA_USER_CM_CMD_QUERY && w->hdr.cmd != RDMA_USER_CM_CMD_INIT_QP_ATTR) ||
	    w->in < sizeof(struct rdma_ucm_query) || !w->resp_addr)
		return;
	memcpy(&q, w->body, sizeof(q));
	pthread_mutex_lock(&f->lock);
	/* what the daemon sent meanwhile first: a later event of the id forgets */
	err = recv_answer(f->sock, f, -1, &unused, NULL, 0, NULL, NULL, NULL);
	k = err ? NULL : kept_find(f, w->hdr.cmd, q.id, q.option);
	/* the kernel writes the same bytes into any buffer that holds them (a PATH answer
	 * wants room for one record more than it fills: ucma_query_path's loop) */
	if (k && w->out >= k->len +
				   (w->hdr.cmd == RDMA_USER_CM_CMD_QUERY &&
					    q.option == RDMA_USER_CM_QUERY_PATH ?
				    sizeof(struct ib_path_rec_data) :
				    0)) {
		hit->len = k->len;
		memcpy(hit->b, k->b, hit->len);
	}
	pthread_mutex_unlock(&f->lock);
}

/* The option buffer the command names (*opt, *optlen bytes), or -ENOMEM. */
static int write_opt(const struct wcmd *w, const void **opt, uint32_t *optlen)
{
	if (w->ptrs.opt < 0 || (uint32_t)w->ptrs.opt_len + 4 > w->in)
		return 0;
	memcpy(optlen, w->body + w->ptrs.opt_len, sizeof(*optlen));
	*opt = (const void *)(uintptr_t)get_u64(w->body + w->ptrs.opt);
	if (*optlen > (1u << 22))
		*optlen = 0; /* the daemon answers EINVAL from the length in the command */
	else if (*optlen > EMU_DUCMA_MAX_OPT)
		return -ENOMEM; /* a limit of the emulation (docs/daemon.md) */
	if (!*opt)
		*optlen = 0; /* the daemon answers EFAULT */
	return 0;
}

/* MIGRATE_ID: the file it takes the id from, with a reference (NULL: f itself or none), its
 * fd in the command replaced by the daemon's number of it: -1 for a closed fd (ENOENT), -2
 * for an fd that is no rdma_cm file (EINVAL). */
static struct lfile *migrate_source(struct lfile *f, struct wcmd *w)
{
	uint8_t *p = w->cmd + sizeof(w->hdr) + offsetof(struct rdma_ucm_migrate_id, fd);
	struct lfile *s;
	int32_t src, dfd;

	if (w->hdr.cmd != RDMA_USER_CM_CMD_MIGRATE_ID ||
	    offsetof(struct rdma_ucm_migrate_id, fd) + 4 > w->in)
		return NULL;
	memcpy(&src, p, sizeof(src));
	s = get(src);
	if (s == f) {
		put(s);
		s = NULL;
		dfd = f->dfd;
	} else {
		dfd = s ? s->dfd : fcntl(src, F_GETFD) < 0 ? -1 : -2;
	}
	memcpy(p, &dfd, sizeof(dfd));
	return s;
}

/* MIGRATE_ID from another file holds that file's lock too (the two in address order: two
 * migrations the other way round must not deadlock): no event of it is read meanwhile, so
 * the daemon, which applies that file's UCMA_CONSUMEDs before it moves its events, moves
 * none the application has seen. */
static void lock_files(struct lfile *f, struct lfile *s)
{
	if (s && s < f)
		pthread_mutex_lock(&s->lock);
	pthread_mutex_lock(&f->lock);
	if (s && s > f)
		pthread_mutex_lock(&s->lock);
}

/* A command that may change an id: what was kept of it goes, it is fresh no more; one that
 * changes how an id's events count takes it off the ids counted (f's and s's locks held). */
static void forget_named(struct lfile *f, struct lfile *s, const struct wcmd *w)
{
	int64_t u;

	if (w->hdr.cmd != RDMA_USER_CM_CMD_QUERY && w->hdr.cmd != RDMA_USER_CM_CMD_INIT_QP_ATTR) {
		if (w->ptrs.id >= 0 && (uint32_t)w->ptrs.id + 4 <= w->in) {
			struct lid *l = lid_find(f, get_u32(w->body + w->ptrs.id));

			if (l)
				l->fresh = false;
			kept_forget(f, get_u32(w->body + w->ptrs.id), false);
		} else if (w->ptrs.id == -1) {
			kept_forget(f, 0, true);
			if (s)
				kept_forget(s, 0, true); /* MIGRATE_ID: its ids leave s */
		}
	}
	u = uncounted_id(w->hdr.cmd, w->body, w->in);
	if (u >= 0) {
		lid_forget(f, (uint32_t)u);
		if (s)
			lid_forget(s, (uint32_t)u);
	}
}

/* A CREATE_ID the daemon ran: the process counts the new id's events (f's lock held). */
static void created(struct lfile *f, const struct wcmd *w, const struct write_answer *a)
{
	struct rdma_ucm_create_id q;

	memcpy(&q, w->body, w->in < sizeof(q) ? w->in : sizeof(q));
	if (w->in < sizeof(q))
		memset((uint8_t *)&q + w->in, 0, sizeof(q) - w->in);
	lid_add(f, get_u32(a->resp + offsetof(struct rdma_ucm_create_id_resp, id)), true, q.ps,
		ucma_qp_type(&q));
}

/* The round trip of the command, under f's lock (and s's, MIGRATE_ID from another file);
 * both files' references go. */
static int write_round_trip(struct lfile *f, struct lfile *s, const struct wcmd *w,
			    const void *opt, uint32_t optlen, struct write_answer *a)
{
	int32_t unused;
	int err;

	lock_files(f, s);
	forget_named(f, s, w);
	/* MIGRATE_ID: the daemon applies the source's UCMA_CONSUMEDs before it moves events */
	err = s ? flush_consumed(s) : 0;
	if (!err)
		err = round_trip(f, w->cmd, (uint32_t)sizeof(w->hdr) + w->in, a->resp, w->out, opt,
				 optlen, &a->ret, &a->devrm_gen, &a->got);
	if (!err && !a->ret && w->hdr.cmd == RDMA_USER_CM_CMD_CREATE_ID &&
	    w->out >= sizeof(struct rdma_ucm_create_id_resp))
		created(f, w, a);
	pthread_mutex_unlock(&f->lock);
	/* the migration's DROPs on the other file end with a marker: they leave its evq now */
	if (!err && s && !a->ret)
		err = recv_answer(s->sock, s, 0, &unused, NULL, 0, NULL, NULL, NULL);
	if (s) {
		pthread_mutex_unlock(&s->lock);
		put(s);
	}
	put(f);
	return err;
}

/* RDMAEMU_UCMA_KEPT_CHECK=1: the kept answer must be the daemon's now: the same bytes
 * written, no more. */
static void hit_check(const struct wcmd *w, const struct write_hit *hit,
		      const struct write_answer *a)
{
	if (a->ret < 0 || a->got != hit->len || memcmp(hit->b, a->resp, hit->len)) {
		fprintf(stderr, "rdmaemu: ucmalink: kept answer of %s (id %u, %u) differs "
				"from the daemon's (ret %d)\n",
			emu_ucma_cmd_name(w->hdr.cmd),
			get_u32(w->body + offsetof(struct rdma_ucm_query, id)),
			get_u32(w->body + offsetof(struct rdma_ucm_query, option)), a->ret);
		abort();
	}
	__atomic_fetch_add(&kept_count, 1, __ATOMIC_RELAXED);
}

/* What the round trip answered the application. */
static ssize_t write_result(const struct wcmd *w, const struct write_hit *hit,
			    const struct write_answer *a, size_t len)
{
	/* a DEVICE_REMOVAL in this answer is seen only once the device lists dropped it */
	if (a->devrm_gen)
		emu_link_devrm_sync(a->devrm_gen);
	rt_count_one(w->cmd + sizeof(w->hdr), w->hdr.cmd, w->in, false);
	if (hit->len)
		hit_check(w, hit, a);
	if (a->ret < 0)
		return a->ret;
	/* what the command wrote over the application's buffer, as the kernel's copy_to_user */
	if (w->resp_addr && a->got)
		memcpy((void *)(uintptr_t)w->resp_addr, a->resp, a->got);
	return (ssize_t)len;
}

ssize_t emu_ucma_link_write(int fd, const void *buf, size_t len)
{
	struct wcmd w;
	struct write_hit hit;
	struct write_answer a;
	const void *opt = NULL;
	uint32_t optlen = 0;
	struct lfile *f, *s;
	int err;

	err = write_file(fd, buf, len, &w.hdr, &f);
	if (err)
		return err;
	write_cut(&w, buf);
	if (w.hdr.cmd == RDMA_USER_CM_CMD_GET_EVENT) {
		err = write_get_event(f, &w);
		put(f);
		return err ? err : (ssize_t)len;
	}
	hit.len = 0;
	kept_answer(f, &w, &hit);
	if (hit.len && !kept_check()) {
		memcpy((void *)(uintptr_t)w.resp_addr, hit.b, hit.len);
		__atomic_fetch_add(&kept_count, 1, __ATOMIC_RELAXED);
		put(f);
		return (ssize_t)len;
	}
	err = try_post(f, w.cmd, w.in, w.out, w.resp_addr);
	if (!err)
		err = write_opt(&w, &opt, &optlen);
	if (err) {
		put(f);
		return err < 0 ? err : (ssize_t)len;
	}
	s = migrate_source(f, &w);
	a.ret = 0;
	a.devrm_gen = 0;
	a.got = 0;
	err = write_round_trip(f, s, &w, opt, optlen, &a);
	if (err)
		return err;
	return write_result(&w, &hit, &a, len);
}

const struct emu_ucma_transport emu_link_ucma_transport = {
	.open = emu_ucma_link_open,
	.write = emu_ucma_link_write,
	.close = emu_ucma_link_close,
	.is_file = emu_ucma_link_is_file,
};
