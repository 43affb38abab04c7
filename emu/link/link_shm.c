/* The shared-memory loopback path between the processes of one host (emu/link/link_shm.h,
 * docs/daemon.md).
 *
 * Rings. A ring is single-producer, single-consumer: `head` (bytes ever written) belongs to the
 * writer, `tail` (bytes ever consumed) to the reader, each on its own cache line. A record is
 * an 8-byte header {len, ep} and the frame, padded to 8 bytes; a record never wraps: when it
 * does not fit before the end, the writer leaves a WRAP marker there (the gap is a multiple of
 * 8, so the marker always fits) and starts again at offset 0. The
 * writer publishes head with a release store after the record is written; the reader consumes
 * records in place (the engine delivers the frame straight from the ring) and only then moves
 * tail, so the writer never overwrites a frame being read.
 *
 * Wake-ups. `reader_awake` is set by the reader while it drains and cleared before it sleeps
 * (then it looks at every ring once more); a writer that finds it clear after publishing
 * writes the reader's eventfd. A fresh ring reads 0, so the first frame always wakes the
 * reader. The other way, a writer whose ring is full keeps frames in a backlog of its own
 * (copies, in order, at most BACKLOG_MAX) and sets `writer_waiting`; the reader, having made
 * room, clears it and writes the writer's eventfd, whose ring thread then flushes the backlog.
 * Nobody ever waits for ring space with a lock held, so two processes sending to each other
 * cannot deadlock; a backlog that is full too drops the frame (counted, traced) as a congested
 * receiver does, and RC retransmits it.
 *
 * Fences. Both hand-offs are a store then a load on each side (a writer's head then the
 * reader's flag; a reader's flag then the head), which needs a full fence on both. The
 * frequent side's fence (a writer's at every record, a reader's at every drain) stalled on the
 * stores the other core had just read: ~145 ns a message, a quarter of the requester's time in
 * an 8-byte message-rate run (perf). Where the kernel has membarrier, the rare side (a reader
 * about to sleep, a writer about to wait for room) calls membarrier(GLOBAL_EXPEDITED) instead,
 * which orders every thread of every registered process as a fence would, and the frequent
 * side only keeps the compiler from reordering. Each end says in the ring header that it does
 * so (`reader_mb`, `writer_mb`); the other end leaves its fence out only then, and only when
 * its own process is registered (so that the membarrier reaches it).
 *
 * Locking. The peer table, the backlogs and every ring access happen under the engine lock
 * (sends come from the data path, which holds it; the ring thread takes it for each batch; the
 * link's receive thread takes it for SHM_PEER / SHM_GONE), so a peer cannot be unmapped while
 * a frame of its ring is being read.
 *
 * Peer states: FREE --SHM_PEER--> MAPPED --SHM_GONE / reset--> FREE (one trace line each,
 * RDMAEMU_TRACE=shm). */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#ifdef __NR_membarrier
#include <linux/membarrier.h>
#endif

#include "emu/sim/engine_tasks.h"
#include "emu/link/proto.h"
#include "emu/sim/engine.h"
#include "emu/link/link.h"
#include "emu/link/link_shm.h"
#include "emu/hca/pkt.h"
#include "emu/sim/trace.h"
#include "util/failcall.h"

#define BACKLOG_MAX 4096
#define REC_HDR 8u
#define REC_WRAP UINT32_MAX
/* in a record's len: a descriptor of the data path's own (emu_link_shm_send_desc), not a frame */
#define REC_DESC 0x40000000u
/* Empty passes before a ring thread sleeps. Spinning longer (64 passes, each taking and
 * releasing the engine lock) measured no better on this 2-core machine: the spinning thread
 * takes the CPU the writer needs. */
#define IDLE_ROUNDS 64
/* Looks in a row that find the engine lock taken before the ring thread waits for it */
#define TRY_MAX 64
/* A nap between looks while an application thread polls the rings (poller_busy) */
#define NAP_NS 100000

struct shm_ring {
	uint64_t head; /* writer */
	uint8_t pad0[56];
	uint64_t tail; /* reader */
	uint8_t pad1[56];
	uint32_t reader_awake;
	uint32_t writer_waiting;
	uint8_t pad2[56];
	/* set once by each end when it maps the pair, read-only after (fences below) */
	uint32_t reader_mb; /* the reader orders its sleep with membarrier */
	uint32_t writer_mb; /* the writer orders its wait for room with membarrier */
	uint8_t pad3[56];
};
/* the claims of the ring's writer follow the header in its page (emu_link_shm_claims) */
_Static_assert(sizeof(struct shm_ring) + EMU_LINK_SHM_CLAIMS * sizeof(uint64_t) <=
		       EMU_SHM_RING_HDR, "ring header and claims fit their page");

struct rec_hdr {
	uint32_t len; /* REC_WRAP: the rest of the ring up to its end is empty */
	int32_t ep;
};

struct backlog {
	struct backlog *next;
	int ep;
	uint32_t flag; /* REC_DESC or 0 */
	size_t len;
	uint8_t frame[];
};

enum peer_state { PEER_FREE, PEER_MAPPED };
static const char *const peer_state_name[] = {
	[PEER_FREE] = "FREE", [PEER_MAPPED] = "MAPPED",
};

/* A pair's mapping whose peer went away while the ring thread ran: the thread may be looking
 * at its ring without the lock (work_hint), so it unmaps it itself, at its next locked pass. */
struct grave {
	struct grave *next;
	uint8_t *map;
};

struct peer {
	enum peer_state state;
	unsigned slot;
	int pid;
	uint32_t qpn_min, qpn_max;
	int efd; /* the peer's eventfd: wakes its ring thread */
	uint8_t *map;
	struct shm_ring *tx, *rx;
	uint8_t *txd, *rxd;
	struct backlog *bl, **bl_tail;
	size_t nbl;
	/* the ring's data bytes in our page table from its start (populate), in chunks as our
	 * records to the peer (tx) and the peer's to us (rx) reach them
	 * rx at the first frame we read from it */
	uint64_t tx_pop, rx_pop;
	/* the tx ring's tail as last read: the writer looks at the reader's tail (a cache line
	 * the reader writes at every frame) only when this says the ring is full */
	uint64_t tx_tail;
	/* the tx ring's head, ours: read here, not from the ring's line, which the reader has
	 * just read (a load of it waited for that line at every record) */
	uint64_t tx_head;
	/* frames committed in a burst since this ring's last doorbell */
	unsigned unrung;
};

static struct {
	int efd; /* ours: peers wake our ring thread with it */
	int sock; /* the daemon's emu_socket (SHM_MAPPED) */
	struct emu_engine *e;
	struct peer peers[EMU_DPROTO_SHM_SLOTS];
	pthread_t thr;
	bool thr_started, stop;
	struct emu_link_shm_stats st;
	long nbl;		/* frames in every backlog (read without the lock) */
	unsigned burst;		/* emu_link_shm_burst_begin depth (engine lock held) */
	bool owed;		/* a peer's unrung is not 0 */
	struct grave *graves;	/* mappings the ring thread may still be reading */
	/* 1 + the highest slot MAPPED (0: none): the loops over the peers stop there. A busy
	 * poller's look at the rings (work_hint) walked all 64 slots at every empty poll, a
	 * fifth of ib_write_lat's time, for the one or two peers a host's processes have.
	 * Written under the engine lock, read without it (a stale value costs a look). */
	unsigned top;
	/* looks at the rings by the application's pollers (emu_link_shm_poll), a hint for the
	 * ring thread: written without the lock, lossy */
	unsigned long polls;
} sh = { .efd = -1, .sock = -1 };

static unsigned peers_top(void)
{
	return __atomic_load_n(&sh.top, __ATOMIC_ACQUIRE);
}

static void backlog_count(long d)
{
	__atomic_store_n(&sh.nbl, sh.nbl + d, __ATOMIC_RELAXED);
}

/* sh.st.peers changes under the engine lock; pollers read it without (emu_link_shm_poll) */
static void peers_add(int d)
{
	__atomic_store_n(&sh.st.peers, sh.st.peers + (unsigned)d, __ATOMIC_RELAXED);
}

static bool shm_trace_on(void)
{
	static int on = -1;

	return emu_trace_enabled(&on, "shm");
}

static void shm_trace(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void shm_trace(const char *fmt, ...)
{
	va_list ap;

	if (!shm_trace_on())
		return;
	va_start(ap, fmt);
	emu_trace_vprint("shm: ", fmt, ap);
	va_end(ap);
}

static void peer_set_state(struct peer *p, enum peer_state s)
{
	shm_trace("peer slot %u (pid %d, qpn %u-%u): %s -> %s", p->slot, p->pid, p->qpn_min,
		  p->qpn_max, peer_state_name[p->state], peer_state_name[s]);
	/* the ring thread and pollers read the table without the lock (work_hint); seq_cst,
	 * against a poller's count in hint_readers (graves_reap) */
	__atomic_store_n(&p->state, s, __ATOMIC_SEQ_CST);
	if (s == PEER_MAPPED && p->slot + 1 > sh.top) {
		__atomic_store_n(&sh.top, p->slot + 1, __ATOMIC_RELEASE);
	} else if (s != PEER_MAPPED) {
		unsigned top = sh.top;

		while (top && sh.peers[top - 1].state != PEER_MAPPED)
			top--;
		__atomic_store_n(&sh.top, top, __ATOMIC_RELEASE);
	}
}

/* membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED) reaches this process's threads (mb_start) */
static bool mb_on;

static void mb_start(void)
{
#ifdef __NR_membarrier
	const char *v = getenv("RDMAEMU_SHM_MEMBARRIER"); /* 0: fences on both sides (measuring) */
	long q;

	/* (again at every start: a forked child starting its own rings registers its own
	 * memory map) */
	mb_on = false;
	if (v && !strcmp(v, "0"))
		return;
	q = syscall(__NR_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
	mb_on = q > 0 && (q & MEMBARRIER_CMD_GLOBAL_EXPEDITED) &&
		(q & MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED) &&
		!syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED, 0, 0);
#endif
}

/* The rare side's fence: every thread of every registered process passes a full fence (the
 * peers that left theirs out), and so do we. */
static void heavy_fence(void)
{
#ifdef __NR_membarrier
	if (mb_on && syscall(__NR_membarrier, MEMBARRIER_CMD_GLOBAL_EXPEDITED, 0, 0)) {
		/* cannot happen once the query said yes; were it to, the peers go back to their
		 * fences (one that read the flag before may still miss one wake-up: its next
		 * record, or RC's retransmission, rings again) */
		fprintf(stderr, "rdmaemu: membarrier: %s: shared-memory rings fence on both "
				"sides from now on\n", strerror(errno));
		mb_on = false;
		for (size_t i = 0; i < EMU_DPROTO_SHM_SLOTS; i++)
			if (sh.peers[i].state == PEER_MAPPED) {
				__atomic_store_n(&sh.peers[i].rx->reader_mb, 0, __ATOMIC_RELAXED);
				__atomic_store_n(&sh.peers[i].tx->writer_mb, 0, __ATOMIC_RELAXED);
			}
	}
#endif
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

/* The frequent side's fence, left out when the other end calls membarrier (its flag) and
 * that reaches us. */
static void light_fence(const uint32_t *other_mb)
{
	if (mb_on && __atomic_load_n(other_mb, __ATOMIC_RELAXED))
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
	else
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

static void kick(int efd)
{
	uint64_t one = 1;
	ssize_t n = write(efd, &one, sizeof(one));

	(void)n; /* a saturated counter is readable anyway */
}

static size_t rec_size(size_t len)
{
	return REC_HDR + ((len + 7) & ~(size_t)7);
}

/* ---------- writer side (engine lock held) ---------- */

/* Maps a ring's pages into this process ahead of use, a chunk of POP_CHUNK bytes at a time as
 * the ring's writer (or reader) reaches it, instead of a page fault per 4 KiB page as the ring
 * fills: on this VM the faults of the first lap through two 16 MiB rings cost perftest a
 * quarter of a 5,000-message run (ib_write_bw -s 65536: 1,479-1,683 MB/s against 2,160-2,178
 * with the rings populated). By chunks, not the whole ring at the first record: one-copy
 * descriptors (~0.5 KiB a message) use a small part of it, and populating 16 MiB that nobody
 * uses cost a 5,000-message run of 64 KiB WRITEs three quarters of its time. *pop: the bytes
 * of the ring's data populated from its start (the header with the first chunk). Best effort:
 * an older kernel says EINVAL. */
#define POP_CHUNK (1u << 20)
/* The start of a ring, where its writer goes back whenever the reader keeps up (ring_room): its
 * first chunk */
#define RING_HOT (128u << 10)
static void populate(struct shm_ring *r, uint64_t *pop, size_t upto)
{
	static int off = -1; /* RDMAEMU_SHM_POPULATE=0: fault the pages in as before (measuring) */
	size_t from = (size_t)*pop, to;

	if (upto > EMU_SHM_RING_DATA)
		upto = EMU_SHM_RING_DATA;
	to = upto <= RING_HOT ? RING_HOT : (upto + POP_CHUNK - 1) / POP_CHUNK * POP_CHUNK;
	if (to > EMU_SHM_RING_DATA)
		to = EMU_SHM_RING_DATA;
	*pop = to;
	if (off < 0) {
		const char *v = getenv("RDMAEMU_SHM_POPULATE");

		off = v && !strcmp(v, "0");
	}
	if (off || to <= from)
		return;
#ifdef MADV_POPULATE_WRITE
	{
		uint8_t *lo = from ? (uint8_t *)r + EMU_SHM_RING_HDR + from : (uint8_t *)r;

		if (madvise(lo, (size_t)((uint8_t *)r + EMU_SHM_RING_HDR + to - lo),
			    MADV_POPULATE_WRITE) && shm_trace_on())
			shm_trace("populating a ring: %s", strerror(errno));
	}
#else
	(void)r;
#endif
}

/* Whether the writer at pos, past RING_HOT, can go back to the ring's start for a record of
 * need bytes: the reader has consumed all but what lies between the start and pos - need.
 * The tail as last read first; the reader's own line (which it writes at every record) once a
 * page of records at most. */
static bool early_wrap(struct peer *p, uint64_t head, size_t pos, size_t need)
{
	if (head - p->tx_tail + need <= pos)
		return true;
	if (pos / 4096 == (pos + need) / 4096)
		return false;
	p->tx_tail = __atomic_load_n(&p->tx->tail, __ATOMIC_ACQUIRE);
	return head - p->tx_tail + need <= pos;
}

/* Room in p's tx ring for a record of a frame of len bytes: its header's offset, after
 * leaving a WRAP marker when the record does not fit before the end, or when it has passed
 * RING_HOT and the reader has kept up (the marker is only read once head passes it): a ring
 * whose reader keeps up stays in its first RING_HOT bytes, warm in the caches and populated
 * once, instead of sweeping 16 MiB of pages (each 1 MiB chunk populated on the way cost ~1 ms
 * on both sides, inside perftest's window). *headp: the record's position in the byte stream.
 * -1 when there is no room now. */
static long ring_room(struct peer *p, size_t len, uint64_t *headp)
{
	struct shm_ring *r = p->tx;
	uint64_t head = p->tx_head;
	size_t need = rec_size(len), pos = (size_t)(head % EMU_SHM_RING_DATA);
	size_t gap = EMU_SHM_RING_DATA - pos < need ? EMU_SHM_RING_DATA - pos : 0;

	if (!gap && pos + need > RING_HOT && early_wrap(p, head, pos, need))
		gap = EMU_SHM_RING_DATA - pos;

	/* (a wrapped record lies at the start, populated with the first chunk) */
	if (!gap && pos + need > p->tx_pop)
		populate(r, &p->tx_pop, pos + need);
	else if (!p->tx_pop)
		populate(r, &p->tx_pop, need);

	if (head + gap + need - p->tx_tail > EMU_SHM_RING_DATA) {
		p->tx_tail = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
		if (head + gap + need - p->tx_tail > EMU_SHM_RING_DATA)
			return -1;
	}
	if (gap) {
		struct rec_hdr wrap = { REC_WRAP, 0 };

		memcpy(p->txd + pos, &wrap, sizeof(wrap));
		head += gap;
		pos = 0;
	}
	*headp = head;
	return (long)pos;
}

/* Publishes the record at stream position head holding a frame of len bytes. */
static void ring_publish(struct peer *p, uint64_t head, int ep, size_t len, uint32_t flag)
{
	struct rec_hdr rh = { (uint32_t)len | flag, ep };

	memcpy(p->txd + head % EMU_SHM_RING_DATA, &rh, sizeof(rh));
	p->tx_head = head + rec_size(len);
	__atomic_store_n(&p->tx->head, p->tx_head, __ATOMIC_RELEASE);
}

/* Copies one frame into p's tx ring: false when it does not fit now. */
static bool ring_put(struct peer *p, int ep, const void *frame, size_t len, uint32_t flag)
{
	uint64_t head;
	long pos = ring_room(p, len, &head);

	if (pos < 0)
		return false;
	memcpy(p->txd + pos + REC_HDR, frame, len);
	ring_publish(p, head, ep, len, flag);
	return true;
}

/* The reader sleeps (or is about to): wake it. The fence orders our head store before the
 * load of its flag, against its flag store before its last look at head (heavy_fence). */
static void ring_doorbell(struct peer *p)
{
	light_fence(&p->tx->reader_mb);
	if (!__atomic_load_n(&p->tx->reader_awake, __ATOMIC_RELAXED)) {
		sh.st.wakeups++;
		kick(p->efd);
	}
}

/* Moves the backlog into the ring while it fits. true when something moved. */
static bool backlog_flush(struct peer *p)
{
	bool moved = false;

	while (p->bl && ring_put(p, p->bl->ep, p->bl->frame, p->bl->len, p->bl->flag)) {
		struct backlog *b = p->bl;

		p->bl = b->next;
		if (!p->bl)
			p->bl_tail = &p->bl;
		p->nbl--;
		backlog_count(-1);
		free(b);
		moved = true;
	}
	if (p->bl) {
		/* ask the reader to wake us when it has made room, then look once more: it may
		 * have made room between our attempt and the flag */
		__atomic_store_n(&p->tx->writer_waiting, 1, __ATOMIC_RELAXED);
		heavy_fence();
		while (p->bl && ring_put(p, p->bl->ep, p->bl->frame, p->bl->len, p->bl->flag)) {
			struct backlog *b = p->bl;

			p->bl = b->next;
			if (!p->bl)
				p->bl_tail = &p->bl;
			p->nbl--;
			backlog_count(-1);
			free(b);
			moved = true;
		}
	}
	return moved;
}

static void backlog_free(struct peer *p)
{
	backlog_count(-(long)p->nbl);
	while (p->bl) {
		struct backlog *b = p->bl;

		p->bl = b->next;
		free(b);
	}
	p->bl_tail = &p->bl;
	p->nbl = 0;
}

static struct peer *peer_of_qpn(uint32_t dqpn)
{
	for (size_t i = 0, top = sh.top; i < top; i++)
		if (sh.peers[i].state == PEER_MAPPED && dqpn >= sh.peers[i].qpn_min &&
		    dqpn <= sh.peers[i].qpn_max)
			return &sh.peers[i];
	return NULL;
}

void *emu_link_shm_reserve(int ep, uint32_t dqpn, size_t len, struct emu_link_shm_resv *rv)
{
	struct peer *p = peer_of_qpn(dqpn);
	long pos;

	if (!p || p->bl || len > EMU_WIRE_MAX_FRAME)
		return NULL;
	pos = ring_room(p, len, &rv->head);
	if (pos < 0)
		return NULL;
	rv->peer = p;
	rv->ep = ep;
	return p->txd + pos + REC_HDR;
}

void emu_link_shm_commit(const struct emu_link_shm_resv *rv, size_t len)
{
	struct peer *p = rv->peer;

	ring_publish(p, rv->head, rv->ep, len, 0);
	sh.st.tx++;
	if (sh.burst && ++p->unrung < EMU_LINK_SHM_BELL_EVERY) {
		sh.owed = true;
		return;
	}
	p->unrung = 0;
	ring_doorbell(p);
}

void emu_link_shm_burst_begin(void)
{
	sh.burst++;
}

void emu_link_shm_burst_end(void)
{
	if (--sh.burst || !sh.owed)
		return;
	sh.owed = false;
	for (size_t i = 0, top = sh.top; i < top; i++) {
		struct peer *p = &sh.peers[i];

		if (p->unrung) {
			p->unrung = 0;
			if (p->state == PEER_MAPPED)
				ring_doorbell(p);
		}
	}
}

static int shm_send(int ep, uint32_t dqpn, const void *frame, size_t len, uint32_t flag)
{
	struct peer *p = peer_of_qpn(dqpn);
	struct backlog *b;

	if (!p)
		return -ENOENT;
	if (len > EMU_WIRE_MAX_FRAME)
		return -EMSGSIZE;
	/* behind a backlog, in order */
	if (!p->bl && ring_put(p, ep, frame, len, flag)) {
		sh.st.tx++;
		/* a descriptor in a burst, as emu_link_shm_commit: the end rings */
		if (flag && sh.burst && ++p->unrung < EMU_LINK_SHM_BELL_EVERY) {
			sh.owed = true;
			return 0;
		}
		p->unrung = 0;
		ring_doorbell(p);
		return 0;
	}
	if (p->nbl >= BACKLOG_MAX || !(b = emu_malloc(sizeof(*b) + len))) {
		sh.st.drops++;
		shm_trace("ring to slot %u full and %zu frames behind it: %s for qp %u dropped",
			  p->slot, p->nbl, flag ? "descriptor" : "frame", dqpn);
		return 0;
	}
	b->next = NULL;
	b->ep = ep;
	b->flag = flag;
	b->len = len;
	memcpy(b->frame, frame, len);
	*p->bl_tail = b;
	p->bl_tail = &b->next;
	p->nbl++;
	backlog_count(1);
	sh.st.backlogged++;
	sh.st.tx++;
	if (backlog_flush(p))
		ring_doorbell(p);
	return 0;
}

int emu_link_shm_send(int ep, uint32_t dqpn, const void *frame, size_t len)
{
	return shm_send(ep, dqpn, frame, len, 0);
}

int emu_link_shm_send_desc(int ep, uint32_t dqpn, const void *desc, size_t len)
{
	return shm_send(ep, dqpn, desc, len, REC_DESC);
}

static uint64_t *ring_claims(struct shm_ring *r)
{
	return (uint64_t *)(void *)((uint8_t *)r + sizeof(*r));
}

uint64_t *emu_link_shm_claims(uint32_t dqpn)
{
	struct peer *p = peer_of_qpn(dqpn);

	return p ? ring_claims(p->tx) : NULL;
}

uint64_t *emu_link_shm_peer_claims(int pid)
{
	for (size_t i = 0, top = sh.top; i < top; i++)
		if (sh.peers[i].state == PEER_MAPPED && sh.peers[i].pid == pid)
			return ring_claims(sh.peers[i].rx);
	return NULL;
}

int emu_link_shm_peer_pid(uint32_t dqpn)
{
	struct peer *p = peer_of_qpn(dqpn);

	return p ? p->pid : 0;
}

/* ---------- reader side: the ring thread ---------- */

static bool ring_empty(const struct peer *p)
{
	return __atomic_load_n(&p->rx->head, __ATOMIC_ACQUIRE) == p->rx->tail;
}

/* the data path's taker of descriptors (emu_link_shm_set_desc_hook) */
static emu_link_shm_desc_fn *desc_hook;

void emu_link_shm_set_desc_hook(emu_link_shm_desc_fn *fn)
{
	desc_hook = fn;
}

/* Delivers what p's rx ring holds (engine lock held). The number of frames. */
static size_t ring_drain(struct peer *p)
{
	struct shm_ring *r = p->rx;
	uint64_t head = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE), tail = r->tail;
	size_t n = 0;

	while (tail != head) {
		size_t pos = (size_t)(tail % EMU_SHM_RING_DATA);
		struct rec_hdr rh;

		uint32_t flag;

		memcpy(&rh, p->rxd + pos, sizeof(rh));
		if (rh.len == REC_WRAP) {
			tail += EMU_SHM_RING_DATA - pos;
			continue;
		}
		flag = rh.len & REC_DESC;
		rh.len &= ~REC_DESC;
		/* the chunk the writer has reached, into our page tables at once */
		if (pos + rec_size(rh.len) > p->rx_pop && rh.len <= EMU_WIRE_MAX_FRAME)
			populate(r, &p->rx_pop, pos + rec_size(rh.len));
		if (rh.len > EMU_WIRE_MAX_FRAME || pos + rec_size(rh.len) > EMU_SHM_RING_DATA ||
		    head - tail < rec_size(rh.len)) {
			/* only a broken peer writes this: stop reading it */
			fprintf(stderr, "rdmaemu: shared-memory ring from pid %d is corrupt: "
					"ignoring it from now on\n", p->pid);
			tail = head;
			break;
		}
		if (flag) {
			/* the data path's descriptor: to its hook, with the writer's pid */
			if (desc_hook)
				desc_hook(rh.ep, p->pid, p->rxd + pos + REC_HDR, rh.len);
		} else {
			/* a loopback frame the peer's builder made: its ICRC cannot be wrong */
			emu_pkt_trust(true);
			emu_engine_deliver(sh.e, rh.ep, p->rxd + pos + REC_HDR, rh.len,
					   emu_engine_now(sh.e));
			emu_pkt_trust(false);
		}
		tail += rec_size(rh.len);
		/* free the space at once: a writer on the other core refills behind us */
		__atomic_store_n(&r->tail, tail, __ATOMIC_RELEASE);
		n++;
	}
	__atomic_store_n(&r->tail, tail, __ATOMIC_RELEASE);
	if (n) {
		light_fence(&r->writer_mb);
		if (__atomic_load_n(&r->writer_waiting, __ATOMIC_RELAXED) &&
		    __atomic_exchange_n(&r->writer_waiting, 0, __ATOMIC_SEQ_CST))
			kick(p->efd);
	}
	return n;
}

/* set while this thread delivers frames from the rings (emu_link_shm_delivering) */
static __thread bool delivering;
/* the data path's flush of what it held back (emu_link_shm_set_idle_hook); engine lock */
static void (*idle_hook)(void);

bool emu_link_shm_delivering(void)
{
	return delivering;
}

void emu_link_shm_set_idle_hook(void (*fn)(void))
{
	idle_hook = fn;
}

/* One pass over every peer: drain its ring to us, flush our backlog to it. Engine lock
 * held. The number of frames delivered. ring_thread: the caller is the ring thread, which
 * alone says it is awake (a poller that did would leave the flag set over the ring thread's
 * sleep, and writers would stop waking it). */
static size_t pass(bool ring_thread)
{
	size_t n = 0;

	/* what the frames delivered send back (ACKs, READ responses) is one burst */
	emu_link_shm_burst_begin();
	delivering = true;
	for (size_t i = 0, top = sh.top; i < top; i++) {
		struct peer *p = &sh.peers[i];

		if (p->state != PEER_MAPPED)
			continue;
		/* written only when it changes: writers read this line at every frame */
		if (ring_thread && !__atomic_load_n(&p->rx->reader_awake, __ATOMIC_RELAXED))
			__atomic_store_n(&p->rx->reader_awake, 1, __ATOMIC_RELAXED);
		n += ring_drain(p);
		if (p->bl && backlog_flush(p))
			ring_doorbell(p);
	}
	delivering = false;
	emu_link_shm_burst_end();
	sh.st.rx += n;
	return n;
}

/* Clears reader_awake on every ring, then looks once more (engine lock held): true when
 * the thread may sleep, every writer now knowing it must ring. */
static bool may_sleep(void)
{
	for (size_t i = 0; i < sh.top; i++)
		if (sh.peers[i].state == PEER_MAPPED)
			__atomic_store_n(&sh.peers[i].rx->reader_awake, 0, __ATOMIC_RELAXED);
	heavy_fence();
	for (size_t i = 0; i < sh.top; i++)
		if (sh.peers[i].state == PEER_MAPPED && !ring_empty(&sh.peers[i]))
			return false;
	return true;
}

/* Without the engine lock, ring thread only: may a locked pass find work (a frame in a ring
 * to us, a frame in a backlog)? The table's mappings stay valid meanwhile: a peer that goes
 * away leaves its mapping to this thread (graves_reap). A wrong answer costs only time: the
 * thread takes the lock after IDLE_ROUNDS passes anyway. */
static bool work_hint(void)
{
	if (__atomic_load_n(&sh.nbl, __ATOMIC_RELAXED))
		return true;
	for (size_t i = 0, top = peers_top(); i < top; i++) {
		struct peer *p = &sh.peers[i];
		struct shm_ring *rx;

		if (__atomic_load_n(&p->state, __ATOMIC_ACQUIRE) != PEER_MAPPED)
			continue;
		rx = __atomic_load_n(&p->rx, __ATOMIC_RELAXED);
		if (__atomic_load_n(&rx->head, __ATOMIC_ACQUIRE) !=
		    __atomic_load_n(&rx->tail, __ATOMIC_RELAXED))
			return true;
	}
	return false;
}

/* Pollers looking at the rings without the engine lock (emu_link_shm_poll's work_hint): the
 * mappings of gone peers stay while one does. */
static unsigned hint_readers;

/* Unmaps the mappings of peers gone while this thread ran (engine lock held, or the thread
 * stopped); not while a poller looks without the lock (force: at reset, when no other thread
 * can). */
static void graves_reap(bool force)
{
	if (!force && __atomic_load_n(&hint_readers, __ATOMIC_SEQ_CST))
		return;
	while (sh.graves) {
		struct grave *g = sh.graves;

		sh.graves = g->next;
		munmap(g->map, EMU_SHM_PAIR_BYTES);
		free(g);
	}
}

static int nap_on = -1; /* RDMAEMU_SHM_NAP=0: spin beside a poller too (measuring) */

/* An application thread is polling the rings (its look since our last one): it delivers what
 * comes, so the ring thread naps instead of spinning, which left three busy threads on two
 * CPUs (docs/daemon.md "Wake-ups"). */
static bool poller_busy(unsigned long *seen)
{
	unsigned long now = __atomic_load_n(&sh.polls, __ATOMIC_RELAXED);
	bool busy = now != *seen;

	*seen = now;
	if (nap_on < 0) {
		const char *v = getenv("RDMAEMU_SHM_NAP");

		nap_on = !(v && !strcmp(v, "0"));
	}
	return busy && nap_on;
}

static void nap(void)
{
	struct timespec ts = { 0, NAP_NS };

	nanosleep(&ts, NULL);
}

static void *ring_main(void *arg)
{
	struct emu_engine *e = arg;
	unsigned idle = 0, tries = 0;
	unsigned long seen = 0;

	prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
	for (;;) {
		bool sleep = false;
		uint64_t v;

		if (__atomic_load_n(&sh.stop, __ATOMIC_ACQUIRE))
			break;
		/* idle: look without the lock first, which the application's thread wants
		 * for its posts and polls (reader_awake stays set: writers need not ring) */
		if (idle && idle < IDLE_ROUNDS && idle != EMU_LINK_SHM_FLUSH_ROUNDS &&
		    !work_hint()) {
			if (poller_busy(&seen)) {
				/* the idle looks go on (the held ACKs' flush at
				 * EMU_LINK_SHM_FLUSH_ROUNDS), but no sleep while it polls */
				if (++idle == IDLE_ROUNDS)
					idle--;
				nap();
				continue;
			}
			idle++;
			sched_yield();
			continue;
		}
		/* an application thread holds the lock (a post, a poll that delivers what the
		 * rings hold): look again later rather than queue behind it, whose unlock would
		 * then wake us with a system call at every call (an 8-byte message-rate run's
		 * requester spent a tenth of its time there, perf) */
		if (++tries < TRY_MAX && !emu_engine_trylock(e)) {
			sched_yield();
			continue;
		}
		if (tries >= TRY_MAX)
			emu_engine_lock(e); /* (a holder's hint not cleared: no starving) */
		tries = 0;
		graves_reap(false);
		if (pass(true)) {
			idle = 0;
		} else {
			/* idle a while: what the passes held back goes out (before any sleep) */
			if (++idle > EMU_LINK_SHM_FLUSH_ROUNDS && idle_hook) {
				emu_link_shm_burst_begin();
				idle_hook();
				emu_link_shm_burst_end();
			}
			if (idle >= IDLE_ROUNDS && may_sleep())
				sleep = true;
		}
		emu_engine_unlock(e);
		if (!sleep) {
			if (idle)
				sched_yield();
			continue;
		}
		idle = 0;
		if (read(sh.efd, &v, sizeof(v)) < 0 && errno != EINTR && errno != EAGAIN) {
			fprintf(stderr, "rdmaemu: shared-memory ring thread: %s: frames now go "
					"through the daemon only\n", strerror(errno));
			break;
		}
	}
	return NULL;
}

bool emu_link_shm_peers(void)
{
	return __atomic_load_n(&sh.st.peers, __ATOMIC_RELAXED) != 0;
}

bool emu_link_shm_poll(struct emu_engine *e)
{
	size_t n;
	bool hint;

	/* (without the ring thread, a gone peer's mapping goes at once: no look then) */
	if (!__atomic_load_n(&sh.st.peers, __ATOMIC_RELAXED) ||
	    !__atomic_load_n(&sh.thr_started, __ATOMIC_ACQUIRE))
		return false;
	/* nothing in the rings, no backlog: no engine lock (a busy poller took it at every
	 * empty poll, in turn with the ring thread that had frames to deliver). A peer that
	 * goes meanwhile keeps its mapping until the look is over (graves_reap). */
	__atomic_store_n(&sh.polls, __atomic_load_n(&sh.polls, __ATOMIC_RELAXED) + 1,
			 __ATOMIC_RELAXED);
	__atomic_add_fetch(&hint_readers, 1, __ATOMIC_SEQ_CST);
	hint = work_hint();
	__atomic_sub_fetch(&hint_readers, 1, __ATOMIC_SEQ_CST);
	if (!hint)
		return false;
	emu_engine_lock(e);
	n = sh.thr_started && sh.e == e ? pass(false) : 0;
	emu_engine_unlock(e);
	return n > 0;
}

/* ---------- peers (from the link's receive thread) ---------- */

static void peer_unmap(struct peer *p)
{
	struct grave *g;

	peer_set_state(p, PEER_FREE);
	backlog_free(p);
	/* a running ring thread may be reading the ring without the lock: it unmaps it */
	if (sh.thr_started && (g = emu_malloc(sizeof(*g)))) {
		g->map = p->map;
		g->next = sh.graves;
		sh.graves = g;
	} else if (sh.thr_started) {
		/* no memory for the note: leak the mapping rather than risk the reader */
		shm_trace("slot %u: its mapping stays (no memory to defer the unmap)", p->slot);
	} else {
		munmap(p->map, EMU_SHM_PAIR_BYTES);
	}
	close(p->efd);
	p->map = NULL;
	p->efd = -1;
}

static void send_mapped(unsigned slot)
{
	struct emu_dmsg h = { EMU_DPROTO_MAGIC, EMU_DPROTO_VERSION, EMU_DMSG_SHM_MAPPED, slot, 0 };

	if (send(sh.sock, &h, sizeof(h), MSG_NOSIGNAL) < 0)
		shm_trace("cannot tell the daemon about slot %u: %s", slot, strerror(errno));
}

/* Starts the ring thread (engine lock held, or before the engine exists, single-threaded). */
static void thread_start(struct emu_engine *e)
{
	sigset_t all, old;

	if (sh.thr_started)
		return;
	sh.e = e;
	sh.stop = false;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	if (emu_tasks_create_ours(&sh.thr, "ring", ring_main, e) == 0)
		sh.thr_started = true;
	else
		fprintf(stderr, "rdmaemu: cannot start the shared-memory ring thread\n");
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!sh.thr_started) /* nobody would read the rings: use the daemon */
		for (size_t i = 0; i < EMU_DPROTO_SHM_SLOTS; i++)
			if (sh.peers[i].state == PEER_MAPPED) {
				peers_add(-1);
				peer_unmap(&sh.peers[i]);
			}
}

/* The peer may read and write this process's memory (process_vm_readv / writev, the data
 * path's one-copy transfers, docs/daemon.md): where Yama restricts ptrace to descendants
 * (ptrace_scope 1), name it as our ptracer. One process only can be named: the latest peer.
 * Without Yama, or with scope 0, same-uid processes need nothing; with 2 or 3 nothing helps
 * and the transfers fall back to frames. */
static void grant_peer(int pid)
{
	static int scope = -2;

	if (scope == -2) {
		FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "re");

		scope = -1;
		if (f) {
			if (fscanf(f, "%d", &scope) != 1)
				scope = -1;
			fclose(f);
		}
	}
	if (scope != 1 || pid <= 0)
		return;
	if (prctl(PR_SET_PTRACER, (unsigned long)pid, 0, 0, 0))
		shm_trace("PR_SET_PTRACER %d: %s", pid, strerror(errno));
}

/* SHM_PEER: maps the pair's rings. e is NULL while attaching (no engine yet, one thread);
 * otherwise the engine lock is taken. Answers SHM_MAPPED either way. */
static void on_peer(struct emu_engine *e, unsigned slot, const struct emu_dmsg_shm_peer *b,
		    const int *fds)
{
	struct peer *p = &sh.peers[slot];
	uint8_t *map = emu_mmap(NULL, EMU_SHM_PAIR_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fds[0],
			    0);
	unsigned tx = b->tx_ring & 1;

	close(fds[0]);
	if (map == MAP_FAILED) {
		fprintf(stderr, "rdmaemu: cannot map the ring of pid %d: %s: its frames go "
				"through the daemon\n", b->pid, strerror(errno));
		close(fds[1]);
		send_mapped(slot);
		return;
	}
	if (e)
		emu_engine_lock(e);
	if (p->state != PEER_FREE)
		peer_unmap(p); /* the daemon said GONE before; a lost GONE is harmless too */
	p->slot = slot;
	p->pid = b->pid;
	p->qpn_min = b->qpn_min;
	p->qpn_max = b->qpn_max;
	p->efd = fds[1];
	p->map = map;
	p->tx = (struct shm_ring *)(map + tx * EMU_SHM_RING_SPAN);
	__atomic_store_n(&p->rx, (struct shm_ring *)(map + (1 - tx) * EMU_SHM_RING_SPAN),
			 __ATOMIC_RELAXED);
	p->txd = (uint8_t *)p->tx + EMU_SHM_RING_HDR;
	p->rxd = (uint8_t *)p->rx + EMU_SHM_RING_HDR;
	p->tx_pop = p->rx_pop = 0;
	p->tx_head = __atomic_load_n(&p->tx->head, __ATOMIC_RELAXED);
	p->tx_tail = __atomic_load_n(&p->tx->tail, __ATOMIC_RELAXED);
	p->unrung = 0;
	/* our fences' side of the pair's rings (mb_start ran before the first SHM_PEER) */
	__atomic_store_n(&p->rx->reader_mb, mb_on, __ATOMIC_RELAXED);
	__atomic_store_n(&p->tx->writer_mb, mb_on, __ATOMIC_RELAXED);
	p->bl = NULL;
	p->bl_tail = &p->bl;
	p->nbl = 0;
	peer_set_state(p, PEER_MAPPED);
	peers_add(1);
	grant_peer(p->pid);
	if (e) {
		thread_start(e);
		emu_engine_unlock(e);
		kick(sh.efd); /* frames may already wait in the new ring */
	}
	send_mapped(slot);
}

void emu_link_shm_msg(struct emu_engine *e, const struct emu_dmsg *h, const void *body,
		      size_t len, const int *fds, int nfds)
{
	int used = 0;

	if (h->type == EMU_DMSG_SHM_PEER && h->arg < EMU_DPROTO_SHM_SLOTS && nfds == 2 &&
	    len >= sizeof(struct emu_dmsg_shm_peer) && sh.efd >= 0) {
		struct emu_dmsg_shm_peer b;

		memcpy(&b, body, sizeof(b));
		on_peer(e, h->arg, &b, fds);
		used = 2;
	} else if (h->type == EMU_DMSG_SHM_GONE && h->arg < EMU_DPROTO_SHM_SLOTS) {
		if (e)
			emu_engine_lock(e);
		if (sh.peers[h->arg].state == PEER_MAPPED) {
			/* What the peer wrote before it went is on the wire already: deliver it
			 * (a process that acknowledged our last message and exited at once left
			 * that ACK here; dropping it would make our QP retransmit to a QP that
			 * is gone, forever with rc_pingpong's retry_cnt 7, as rxe retries). */
			if (e && sh.thr_started && sh.e == e)
				sh.st.rx += ring_drain(&sh.peers[h->arg]);
			peers_add(-1);
			peer_unmap(&sh.peers[h->arg]);
		}
		if (e)
			emu_engine_unlock(e);
	}
	for (int i = used; i < nfds; i++)
		close(fds[i]);
}

int emu_link_shm_start(int fd)
{
	const char *env = getenv("RDMAEMU_SHM");
	struct emu_dmsg h = { EMU_DPROTO_MAGIC, EMU_DPROTO_VERSION, EMU_DMSG_SHM_HELLO, 0, 0 };
	struct iovec iov = { &h, sizeof(h) };

	if (env && !strcmp(env, "0"))
		return 0;
	for (size_t i = 0; i < EMU_DPROTO_SHM_SLOTS; i++)
		sh.peers[i] = (struct peer){ .efd = -1 };
	sh.top = 0;
	sh.efd = emu_eventfd(0, EFD_CLOEXEC);
	if (sh.efd < 0)
		return errno;
	mb_start();
	if (emu_link_sendmsg_fds(fd, &iov, 1, &sh.efd, 1, MSG_NOSIGNAL) < 0) {
		int err = errno;

		close(sh.efd);
		sh.efd = -1;
		return err;
	}
	sh.sock = fd;
	/* SHM_PEER for every process already on the host, then SHM_READY: once this returns,
	 * every pair's both ends have their rings */
	for (;;) {
		uint8_t body[64];
		struct emu_dmsg rh;
		struct iovec riov[2] = { { &rh, sizeof(rh) }, { body, sizeof(body) } };
		union {
			struct cmsghdr c;
			char b[CMSG_SPACE(4 * sizeof(int))];
		} rcm;
		struct msghdr rm = { .msg_iov = riov, .msg_iovlen = 2, .msg_control = rcm.b,
				     .msg_controllen = sizeof(rcm.b) };
		int fds[4], nfds = 0;
		ssize_t n;

		do
			n = recvmsg(fd, &rm, MSG_CMSG_CLOEXEC);
		while (n < 0 && errno == EINTR);
		if (n <= 0)
			return n < 0 ? errno : ECONNRESET;
		for (struct cmsghdr *cc = CMSG_FIRSTHDR(&rm); cc; cc = CMSG_NXTHDR(&rm, cc))
			for (size_t i = 0; cc->cmsg_level == SOL_SOCKET &&
					   cc->cmsg_type == SCM_RIGHTS &&
					   i < (cc->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++) {
				int k;

				memcpy(&k, CMSG_DATA(cc) + i * sizeof(int), sizeof(int));
				if (nfds < 4)
					fds[nfds++] = k;
				else
					close(k);
			}
		if ((size_t)n < sizeof(rh) || rh.magic != EMU_DPROTO_MAGIC) {
			while (nfds > 0)
				close(fds[--nfds]);
			return EPROTO;
		}
		if (rh.type == EMU_DMSG_SHM_READY)
			return 0;
		/* a FRAME now finds no engine to take it (no HCA exists yet): dropped */
		if (rh.type >= EMU_DMSG_SHM_HELLO)
			emu_link_shm_msg(NULL, &rh, body, (size_t)n - sizeof(rh), fds, nfds);
		else
			while (nfds > 0)
				close(fds[--nfds]);
	}
}

void emu_link_shm_engine_created(struct emu_engine *e)
{
	for (size_t i = 0; i < EMU_DPROTO_SHM_SLOTS; i++)
		if (sh.peers[i].state == PEER_MAPPED) {
			thread_start(e);
			kick(sh.efd);
			return;
		}
}

void emu_link_shm_stats(struct emu_link_shm_stats *out)
{
	*out = sh.st;
}

void emu_link_shm_reset(void)
{
	/* emu_process_reset frees the engine before it resets the link: no engine lock here
	 * (no other thread may be using the engine then, the ring thread included) */
	if (sh.thr_started) {
		__atomic_store_n(&sh.stop, true, __ATOMIC_RELEASE);
		kick(sh.efd);
		pthread_join(sh.thr, NULL);
		sh.thr_started = false;
	}
	graves_reap(true);
	for (size_t i = 0; i < EMU_DPROTO_SHM_SLOTS; i++)
		if (sh.peers[i].state == PEER_MAPPED)
			peer_unmap(&sh.peers[i]);
	if (sh.efd >= 0)
		close(sh.efd);
	sh.efd = -1;
	sh.sock = -1;
	memset(&sh.st, 0, sizeof(sh.st));
}
