/* One copy a byte between two processes of a host (docs/daemon.md, "One copy between
 * processes").
 *
 * Between processes joined by shared-memory rings, an RC SEND / WRITE / READ of at least
 * RDMAEMU_XFAST_MIN bytes (default XFAST_MIN_DEFAULT) does not go as MTU-sized frames copied
 * into the ring and out of it: the requester puts one descriptor in the ring (opcode, PSN
 * range, remote address / rkey, where its SGEs' bytes are), takes the message's PSNs as its
 * packets would have, and the WQE waits for its answer as any sent WQE (retransmission timer
 * included). The responder, in its ring pass, checks the descriptor against its QP exactly
 * where the packet path would succeed (state, ePSN, no message in progress, receive WQE,
 * access flags, rkey range and rights), copies a SEND's / WRITE's payload once from the
 * requester's memory into its MR or receive WQE (memcpy from the requester's registered pages
 * mapped here, xmap.c; process_vm_readv for the rest), leaves its QP as the packets would have
 * (ePSN, MSN, RETH state, responder resources) and answers: a SEND / WRITE with the ACK frame
 * its last packet would have drawn (held as such an ACK is, docs/daemon.md "Held ACKs"), a
 * READ with a descriptor saying where the data is, which the requester copies into its SGEs
 * itself (only it knows whether the WQE still waits) before completing it.
 *
 * A SEND finding no receive WQE draws the RNR NAK its packets would have drawn. Anything else
 * is declined before anything is changed: the responder answers DECLINE, and the requester
 * sends that WQE and every later one it had sent again, as packets, from its first PSN (no
 * retry counted: nothing was lost), so every error (bad rkey -> REM_ACCESS_ERR, lengths, a QP
 * in the wrong state) is the packet path's own. A copy that fails for want of
 * permission (EPERM: ptrace rules, Yama; ENOSYS) also turns the pair's one-copy path off for
 * the rest of the run. Observers of packets turn it off as for the in-process fast path
 * (emu_dp_fast_on: RDMAEMU_FASTPATH=0, RDMAEMU_TRACE=qp, RDMAEMU_PCAP), and so does
 * RDMAEMU_XFAST=0; a responder with any of them declines (and the requester stops trying).
 *
 * Engine lock held throughout (the requester's doorbell, the ring pass). */
#include "config.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "emu/hca/engine_rx.h"
#include "emu/link/link_shm.h"
#include "emu/sim/topology.h"
#include "emu/verbs/datapath.h"
#include "util/failcall.h"

#define XF_MAX_SGE 4
#define XF_MAX_IOV (3 * XF_MAX_SGE) /* an SGE: partial page, mapped pages, partial page */
/* Below this the frames cost less than the system call (measured: bench/RESULTS.md) */
#define XFAST_MIN_DEFAULT 16384
#define XF_OFF_PIDS 16
#define XF_INL_DEFAULT 1024

enum xf_kind { XF_REQ = 1, XF_READ_DONE, XF_DECLINE, XF_REQ_INL, XF_ACK };

/* why a descriptor was declined */
enum xf_why { XF_WHY_STATE = 1, XF_WHY_CHECK, XF_WHY_COPY, XF_WHY_PERM, XF_WHY_OFF,
	      XF_RNR /* not a decline: answered with an RNR NAK, as the packets would be */ };

struct xf_iov {
	uint64_t addr, len;
	/* the requester's registered pages a peer can map (xmap.c): fd -1 when not */
	int32_t fd;
	uint32_t pad;
	uint64_t ino, off;
};

struct xf_req {
	uint8_t kind, opcode, se, niov;
	uint32_t dqpn, sqpn;
	uint32_t psn, npkts, mtu;
	uint32_t len, rkey, imm;
	uint64_t va;
	/* a READ whose responder may place the data (xclaim.c): its claim (tag 0: none) */
	uint64_t tag;
	uint32_t slot, pad;
	/* the requester's memory: a SEND's / WRITE's gather, a READ's scatter when claimed */
	struct xf_iov iov[XF_MAX_IOV];
};

/* A descriptor holds the iovs it uses only: a 64 KiB WRITE's takes 88-168 bytes of the ring,
 * not 528, so a 5,000-message run stays in the ring's first populated chunk (link_shm.c's
 * populate: each further 1 MiB chunk cost ~1 ms of page faults inside perftest's window). */
#define XF_REQ_HDR offsetof(struct xf_req, iov)
static size_t xf_req_len(unsigned niov)
{
	return XF_REQ_HDR + niov * sizeof(struct xf_iov);
}

/* A short SEND / WRITE: its payload follows the header in the descriptor (gathered by the
 * requester as the frames' would be: the bytes are copied into the ring and out of it, but no
 * frame is built or parsed, and no system call is made). */
struct xf_inl {
	uint8_t kind, opcode, se, pad;
	uint32_t dqpn, sqpn;
	uint32_t psn, npkts, mtu;
	uint32_t len, rkey, imm, pad2;
	uint64_t va;
};
#define XF_INL_LIMIT 4096

struct xf_ans {
	uint8_t kind, why, niov;
	uint8_t placed; /* READ_DONE: the responder placed the data (the claim of tag) */
	uint32_t qpn; /* the requester's */
	uint32_t psn; /* the WQE's first PSN */
	int32_t err;
	uint64_t tag;
	/* READ_DONE, not placed: where the data is in the responder's memory (the requester
	 * copies it) */
	struct xf_iov iov[3];
};

/* The positive ACK of a message that came as a descriptor: the PSN its last packet had. Its
 * requester's completer takes it as it takes an ACK packet (emu_dp_comp_xfast_ack), without
 * a frame built, parsed and demultiplexed (~2,800 instructions a message, as many as the
 * WRITE's own descriptor took on both sides: callgrind of ib_write_lat). */
struct xf_ack {
	uint8_t kind, pad[3];
	uint32_t qpn; /* the requester's */
	uint32_t psn;
	uint32_t pad2;
};

static uint64_t xf_served, xf_declined;

uint64_t rdmaemu_verbs_xfast_count(void) __attribute__((visibility("default")));
uint64_t rdmaemu_verbs_xfast_count(void)
{
	return __atomic_load_n(&xf_served, __ATOMIC_RELAXED);
}

static bool xf_trace_on(void)
{
	static int on = -1;

	return emu_trace_enabled(&on, "xfast");
}

#define xf_trace(...) EMU_TRACE_IF(xf_trace_on(), emu_dp_trace_print, __VA_ARGS__)

/* peers whose one-copy path is off (a copy was refused, or they decline everything) */
static int off_pids[XF_OFF_PIDS];
static bool any_off; /* (no look at the table at every message while it is empty) */

static bool pid_off(int pid)
{
	if (!any_off)
		return false;
	for (int i = 0; i < XF_OFF_PIDS; i++)
		if (off_pids[i] == pid)
			return true;
	return false;
}

static void pid_set_off(int pid)
{
	if (pid <= 0 || pid_off(pid))
		return;
	any_off = true;
	for (int i = 0; i < XF_OFF_PIDS; i++)
		if (!off_pids[i]) {
			off_pids[i] = pid;
			return;
		}
	off_pids[XF_OFF_PIDS - 1] = pid; /* full: the last one gives way */
}

/* RDMAEMU_XFAST=eperm: every copy fails as a ptrace rule would make it (tests the fallback) */
static bool xf_eperm;

static bool xf_on(void)
{
	static int on = -1;

	if (on < 0) {
		const char *v = getenv("RDMAEMU_XFAST");

		xf_eperm = v && !strcmp(v, "eperm");
		on = !(v && !strcmp(v, "0")) && emu_dp_fast_on();
	}
	return on;
}

/* A number from the environment, or dflt when unset or not a number. */
static uint64_t env_u64(const char *name, uint64_t dflt)
{
	const char *v = getenv(name);
	char *end;
	unsigned long long n = v ? strtoull(v, &end, 0) : 0;

	return v && *v && !*end ? (uint64_t)n : dflt;
}

/* RDMAEMU_XFAST_INLINE: the longest SEND / WRITE whose payload goes in the descriptor
 * (XF_INL_DEFAULT; 0: none, below RDMAEMU_XFAST_MIN such messages go as frames) */
static uint64_t xf_inl_max(void)
{
	static int64_t max = -1;

	if (max < 0) {
		uint64_t n = env_u64("RDMAEMU_XFAST_INLINE", XF_INL_DEFAULT);

		max = (int64_t)(n > XF_INL_LIMIT ? XF_INL_LIMIT : n);
	}
	return (uint64_t)max;
}

static uint64_t xf_min(void)
{
	static int64_t min = -1;

	if (min < 0)
		min = (int64_t)env_u64("RDMAEMU_XFAST_MIN", XFAST_MIN_DEFAULT);
	return (uint64_t)min;
}

/* Adds the piece [host, host + len) of the requester's memory to r: false when r is full. */
static bool xf_piece(struct xf_req *r, uintptr_t host, uint64_t len, int fd, uint64_t ino,
		     uint64_t off)
{
	if (!len)
		return true;
	if (r->niov == XF_MAX_IOV)
		return false;
	r->iov[r->niov] = (struct xf_iov){ .addr = host, .len = len, .fd = fd, .ino = ino,
					   .off = off };
	r->niov++;
	return true;
}

/* The requester's SGEs for len bytes with the lkey checks of the packet path, as pieces of
 * our memory: the part of each inside a region a peer can map (xmap.c) named by its memfd,
 * the rest (a region's partial first and last pages, memory that is not moved) by address.
 * false: the packet path reports what is wrong (or the pieces do not fit a descriptor). */
static bool xf_sges(struct emu_vqp *q, const struct ibv_sge *sge, int n, uint64_t len,
		    unsigned access, struct xf_req *r)
{
	r->niov = 0;
	for (int i = 0; i < n && len; i++) {
		uint64_t take = sge[i].length < len ? sge[i].length : len;
		uintptr_t lo, hi, rs, re;
		uint64_t ino;
		void *host;
		int fd;

		if (!take)
			continue;
		if (emu_hca_mr_check(emu_dp_hca(q), q->pd, sge[i].lkey, false, sge[i].addr, take,
				     access, &host) != EMU_MR_OK)
			return false;
		lo = (uintptr_t)host;
		hi = lo + take;
		if (emu_xmap_find(lo, take, &fd, &ino, &rs, &re)) {
			uintptr_t a = lo > rs ? lo : rs, b = hi < re ? hi : re;

			if (!xf_piece(r, lo, a - lo, -1, 0, 0) ||
			    !xf_piece(r, a, b - a, fd, ino, a - rs) ||
			    !xf_piece(r, b, hi - b, -1, 0, 0))
				return false;
		} else if (!xf_piece(r, lo, take, -1, 0, 0)) {
			return false;
		}
		len -= take;
	}
	return !len;
}

/* What the WQE's packets would have left: its PSNs, an AckReq on the last. */
static void xf_sent(struct emu_vqp *q, struct emu_swqe *w, uint64_t npkts)
{
	w->first_psn = q->dp.req_psn;
	q->dp.req_psn = (uint32_t)(q->dp.req_psn + npkts) & EMU_PSN_MASK;
	w->last_psn = (q->dp.req_psn - 1) & EMU_PSN_MASK;
	if (w->wr.opcode != IBV_WR_RDMA_READ)
		q->dp.noack_pkts = 0;
	w->xfast = true;
}

/* RDMAEMU_XFAST_PLACE=0: the requester copies every READ's data itself (measuring) */
static bool xf_place_on(void)
{
	static int on = -1;

	if (on < 0)
		on = env_u64("RDMAEMU_XFAST_PLACE", 1) != 0;
	return on;
}

/* A READ whose SGEs lie whole in pages the responder can map: its claim armed (xclaim.c) and
 * the pieces kept in the descriptor, so that the responder places the data there itself, as
 * an HCA's DMA engine would, while the WQE waits (the requester's thread copied every READ
 * before: a mapped 64 KiB ib_read_bw spent 62 % of its posting thread in that memcpy, with
 * the other CPU idle half the time, perf). false: the requester copies it. */
static bool xf_read_arm(struct emu_swqe *w, uint32_t dqpn, struct xf_req *r)
{
	if (!r->niov || !xf_place_on())
		return false;
	for (int k = 0; k < r->niov; k++)
		if (r->iov[k].fd < 0)
			return false;
	r->tag = emu_xclaim_arm(w, dqpn, &r->slot);
	return r->tag != 0;
}

/* A short SEND / WRITE with its payload in the descriptor. */
static bool xf_send_inline(struct emu_vqp *q, struct emu_swqe *w, uint32_t mtu, uint64_t npkts)
{
	enum ibv_wr_opcode o = w->wr.opcode;
	uint32_t dqpn = q->attr.dest_qp_num & EMU_QPN_MASK;
	union {
		struct xf_inl h;
		uint8_t b[sizeof(struct xf_inl) + XF_INL_LIMIT];
	} d;
	int pid;

	if (w->length > xf_inl_max() ||
	    (o != IBV_WR_SEND && o != IBV_WR_SEND_WITH_IMM && o != IBV_WR_RDMA_WRITE &&
	     o != IBV_WR_RDMA_WRITE_WITH_IMM))
		return false;
	pid = emu_link_shm_peer_pid(dqpn);
	if (!pid || pid_off(pid))
		return false;
	/* the gather with its lkey checks (req.c's): a failure is the packet path's to report */
	if (w->is_inline)
		memcpy(d.b + sizeof(d.h), w->inl, w->length);
	else if (emu_dp_copy_sge(q, w->sge, w->wr.num_sge, 0, d.b + sizeof(d.h), w->length,
				 false) != EMU_MR_OK)
		return false;
	d.h = (struct xf_inl){ .kind = XF_REQ_INL, .opcode = (uint8_t)o,
			       .se = w->wr.send_flags & IBV_SEND_SOLICITED && o != IBV_WR_RDMA_WRITE,
			       .dqpn = dqpn, .sqpn = q->qp.qp_num, .psn = q->dp.req_psn,
			       .npkts = (uint32_t)npkts, .mtu = mtu, .len = (uint32_t)w->length,
			       .rkey = w->wr.wr.rdma.rkey, .imm = w->wr.imm_data,
			       .va = w->wr.wr.rdma.remote_addr };
	if (emu_dp_xmit_desc(q, d.b, sizeof(d.h) + w->length))
		return false;
	xf_sent(q, w, npkts);
	return true;
}

bool emu_dp_xfast_send(struct emu_vqp *q, struct emu_swqe *w, uint32_t mtu, uint64_t npkts)
{
	enum ibv_wr_opcode o = w->wr.opcode;
	uint32_t dqpn = q->attr.dest_qp_num & EMU_QPN_MASK;
	struct xf_req r;
	int pid;

	if (w->xfast_no || w->length >= 0x80000000u || !xf_on())
		return false;
	if (w->length < xf_min())
		return xf_send_inline(q, w, mtu, npkts);
	if (w->is_inline)
		return false;
	if (o != IBV_WR_SEND && o != IBV_WR_SEND_WITH_IMM && o != IBV_WR_RDMA_WRITE &&
	    o != IBV_WR_RDMA_WRITE_WITH_IMM && o != IBV_WR_RDMA_READ)
		return false;
	pid = emu_link_shm_peer_pid(dqpn);
	if (!pid || pid_off(pid))
		return false;
	memset(&r, 0, sizeof(r));
	if (!xf_sges(q, w->sge, w->wr.num_sge, w->length,
		     o == IBV_WR_RDMA_READ ? EMU_ACCESS_LOCAL_WRITE : 0, &r))
		return false;
	r.kind = XF_REQ;
	r.opcode = (uint8_t)o;
	r.se = w->wr.send_flags & IBV_SEND_SOLICITED && o != IBV_WR_RDMA_WRITE;
	r.dqpn = dqpn;
	r.sqpn = q->qp.qp_num;
	r.psn = q->dp.req_psn;
	r.npkts = (uint32_t)npkts;
	r.mtu = mtu;
	r.len = (uint32_t)w->length;
	r.imm = w->wr.imm_data;
	r.rkey = w->wr.wr.rdma.rkey;
	r.va = w->wr.wr.rdma.remote_addr;
	if (o == IBV_WR_RDMA_READ && !xf_read_arm(w, dqpn, &r))
		r.niov = 0; /* its data is copied here, from the responder's pieces */
	if (emu_dp_xmit_desc(q, &r, xf_req_len(r.niov))) {
		emu_xclaim_cancel(w);
		return false;
	}
	xf_sent(q, w, npkts);
	xf_trace("xfast: qp %u -> pid %d qp %u: %s %u bytes psn %#x", q->qp.qp_num, pid, dqpn,
		 o == IBV_WR_RDMA_READ ? "READ" : o <= IBV_WR_RDMA_WRITE_WITH_IMM ? "WRITE" : "SEND",
		 r.len, r.psn);
	return true;
}

/* ---------- the responder ---------- */

struct xf_seg {
	struct iovec v[XF_MAX_SGE];
	int n;
};

/* A receive WQE's scatter list with LOCAL_WRITE, as host addresses. */
static bool rwqe_segs(struct emu_vqp *b, const struct emu_rwqe *rw, uint64_t len,
		      struct xf_seg *s)
{
	s->n = 0;
	for (int i = 0; i < rw->num_sge && len; i++) {
		uint64_t take = rw->sge[i].length < len ? rw->sge[i].length : len;
		void *host;

		if (!take)
			continue;
		if (s->n == XF_MAX_SGE ||
		    emu_hca_mr_check(emu_dp_hca(b), b->pd, rw->sge[i].lkey, false, rw->sge[i].addr,
				     take, EMU_ACCESS_LOCAL_WRITE, &host) != EMU_MR_OK)
			return false;
		s->v[s->n].iov_base = host;
		s->v[s->n].iov_len = take;
		s->n++;
		len -= take;
	}
	return !len;
}

/* Peers' registered pages mapped here (xmap.c), by (pid, fd, inode); a failed open is kept
 * too (base NULL), so that it is not tried again at every message. */
#define XF_MAPS 32
static struct xf_map {
	int pid, fd;
	uint64_t ino;
	uint8_t *base;
	size_t size;
	uint64_t used;
} maps[XF_MAPS];
static uint64_t map_clock;

static struct xf_map *peer_map(int pid, int fd, uint64_t ino)
{
	struct xf_map *m = NULL, *old = &maps[0];
	char path[64];
	struct stat st;
	int mfd;

	for (int i = 0; i < XF_MAPS; i++) {
		if (maps[i].pid == pid && maps[i].fd == fd && maps[i].ino == ino) {
			maps[i].used = ++map_clock;
			return &maps[i];
		}
		if (maps[i].used < old->used)
			old = &maps[i];
	}
	m = old; /* the least recently used goes */
	if (m->base)
		munmap(m->base, m->size);
	*m = (struct xf_map){ .pid = pid, .fd = fd, .ino = ino, .used = ++map_clock };
	snprintf(path, sizeof(path), "/proc/%d/fd/%d", pid, fd);
	mfd = open(path, O_RDWR | O_CLOEXEC);
	if (mfd < 0) {
		xf_trace("xfast: %s: %s: process_vm_readv instead", path, strerror(errno));
		return m;
	}
	if (!fstat(mfd, &st) && (uint64_t)st.st_ino == ino && st.st_size > 0) {
		/* its page tables at once: a fault per 4 KiB page cost a short run more than
		 * its copies (ib_write_bw, 300 x 64 KiB) */
		void *b = emu_mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE,
				   MAP_SHARED | MAP_POPULATE, mfd, 0);

		if (b != MAP_FAILED) {
			m->base = b;
			m->size = (size_t)st.st_size;
		}
	}
	close(mfd);
	return m;
}

/* Copies r's bytes from the requester's pieces into our segments: memcpy where its pages are
 * mapped here, process_vm_readv elsewhere. 0, or the errno of a failed system call (a short
 * copy: EFAULT). *mapped: a mapping was used. */
static int xf_copy(int pid, struct xf_seg *mine, const struct xf_req *r, bool *mapped)
{
	uint8_t *rp[XF_MAX_IOV];
	int i = 0, j = 0;
	uint64_t di = 0, sj = 0;

	*mapped = false;
	if (xf_eperm)
		return EPERM;
	for (int k = 0; k < r->niov; k++) {
		struct xf_map *m;

		rp[k] = NULL;
		if (r->iov[k].fd < 0)
			continue;
		m = peer_map(pid, r->iov[k].fd, r->iov[k].ino);
		if (m->base && r->iov[k].off <= m->size && r->iov[k].len <= m->size - r->iov[k].off)
			rp[k] = m->base + r->iov[k].off;
	}
	while (i < mine->n && j < r->niov) {
		uint64_t n = mine->v[i].iov_len - di;
		uint8_t *l = (uint8_t *)mine->v[i].iov_base + di;

		if (r->iov[j].len - sj < n)
			n = r->iov[j].len - sj;
		if (rp[j]) {
			memcpy(l, rp[j] + sj, n);
			*mapped = true;
		} else {
			struct iovec lv = { l, n };
			struct iovec rv = { (void *)(uintptr_t)(r->iov[j].addr + sj), n };
			ssize_t got = process_vm_readv(pid, &lv, 1, &rv, 1, 0);

			if (got < 0)
				return errno ? errno : EFAULT;
			if ((uint64_t)got != n)
				return EFAULT;
		}
		di += n;
		sj += n;
		if (di == mine->v[i].iov_len)
			i++, di = 0;
		if (sj == r->iov[j].len)
			j++, sj = 0;
	}
	return 0;
}

/* A READ's data placed by the responder in the requester's pages, src its r->len bytes here,
 * once the claim is ours (xclaim.c): true when it is there; false, nothing written, when the
 * requester copies it (a piece not mapped here, the claim taken back meanwhile). */
static bool xf_place(int pid, const struct xf_req *r, const uint8_t *src)
{
	uint8_t *dst[XF_MAX_IOV];
	uint64_t total = 0;

	if (!r->tag || !r->niov || xf_eperm)
		return false;
	for (int k = 0; k < r->niov; k++) {
		const struct xf_iov *v = &r->iov[k];
		struct xf_map *m = v->fd >= 0 ? peer_map(pid, v->fd, v->ino) : NULL;

		if (!m || !m->base || v->off > m->size || v->len > m->size - v->off)
			return false;
		dst[k] = m->base + v->off;
		total += v->len;
	}
	if (total != r->len || !emu_xclaim_begin(pid, r->slot, r->tag))
		return false;
	for (int k = 0; k < r->niov; k++) {
		memcpy(dst[k], src, r->iov[k].len);
		src += r->iov[k].len;
	}
	emu_xclaim_done(pid, r->slot, r->tag);
	return true;
}

/* The positive ACK of PSN psn, as a descriptor to the requester's ring, acknowledging covers
 * messages (more than one when coalesced, ack_hold.c): false when it must go as a frame (no
 * ring back, descriptors off). */
static bool xf_send_ack(struct emu_vqp *q, uint32_t psn, unsigned covers)
{
	struct xf_ack a = { .kind = XF_ACK, .qpn = q->attr.dest_qp_num & EMU_QPN_MASK,
			    .psn = psn & EMU_PSN_MASK };

	if (!xf_on() || emu_dp_xmit_desc(q, &a, sizeof(a)))
		return false;
	xf_trace("xfast: qp %u: ACK psn %#x as a descriptor for %u messages", q->qp.qp_num, a.psn,
		 covers);
	return true;
}

/* Serves r on b: 0 when done (b's state moved as the packets would have moved it, the answer
 * sent), else an xf_why with nothing changed. */
static int xf_serve(struct emu_vqp *b, const struct xf_req *r, int pid, const uint8_t *inl,
		    int *err, bool *mapped)
{
	enum ibv_wr_opcode o = r->opcode;
	bool send = o == IBV_WR_SEND || o == IBV_WR_SEND_WITH_IMM;
	bool imm = o == IBV_WR_SEND_WITH_IMM || o == IBV_WR_RDMA_WRITE_WITH_IMM;
	struct emu_rwqe *rw = NULL;
	struct xf_seg mine = { .n = 0 };
	uint32_t last = (r->psn + r->npkts - 1) & EMU_PSN_MASK;
	void *host = NULL;

	*err = 0;
	if (!xf_on())
		return XF_WHY_OFF;
	if (b->qp.qp_type != IBV_QPT_RC || b->srq ||
	    (b->attr.qp_state != IBV_QPS_RTR && b->attr.qp_state != IBV_QPS_RTS &&
	     b->attr.qp_state != IBV_QPS_SQD) ||
	    (b->attr.dest_qp_num & EMU_QPN_MASK) != r->sqpn || emu_dp_mtu(b) != r->mtu ||
	    b->dp.resp_psn != r->psn || b->dp.resp_nak_sent || b->dp.resp_wqe)
		return XF_WHY_STATE;
	if (send || o == IBV_WR_RDMA_WRITE_WITH_IMM) {
		if (emu_list_empty(&b->rq.list)) {
			/* resp.c's err_rnr: an RNR NAK with our min_rnr_timer, the ePSN kept; the
			 * requester waits and sends the message again (as a descriptor) */
			emu_dp_ack_flush(b);
			emu_dp_xmit_resp(b, EMU_OP_RC | EMU_OP_ACK, r->psn,
					 emu_aeth_rnr_nak(b->attr.min_rnr_timer), NULL, 0, 0,
					 b->dp.resp_msn);
			return XF_RNR;
		}
		rw = emu_list_entry(b->rq.list.next, struct emu_rwqe, link);
	}
	if (send) {
		if (r->len > rw->length || !rwqe_segs(b, rw, r->len, &mine))
			return XF_WHY_CHECK;
	} else if (o == IBV_WR_RDMA_WRITE || o == IBV_WR_RDMA_WRITE_WITH_IMM) {
		if (!(b->attr.qp_access_flags & IBV_ACCESS_REMOTE_WRITE))
			return XF_WHY_CHECK;
		if (r->len && emu_hca_mr_check(emu_dp_hca(b), b->pd, r->rkey, true, r->va, r->len,
					       EMU_ACCESS_REMOTE_WRITE, &host) != EMU_MR_OK)
			return XF_WHY_CHECK;
	} else if (o == IBV_WR_RDMA_READ) {
		if (!(b->attr.qp_access_flags & IBV_ACCESS_REMOTE_READ) ||
		    !b->attr.max_dest_rd_atomic)
			return XF_WHY_CHECK;
		if (r->len && emu_hca_mr_check(emu_dp_hca(b), b->pd, r->rkey, true, r->va, r->len,
					       EMU_ACCESS_REMOTE_READ, &host) != EMU_MR_OK)
			return XF_WHY_CHECK;
	} else {
		return XF_WHY_CHECK;
	}
	if (host) {
		mine.v[0].iov_base = host;
		mine.v[0].iov_len = r->len;
		mine.n = 1;
	}
	/* the one copy; a READ's is the requester's, at its answer (only the requester knows
	 * whether its WQE still waits: a responder writing there could hit memory the
	 * requester has given back) */
	if (inl) {
		uint64_t at = 0;

		for (int i = 0; i < mine.n; i++) {
			memcpy(mine.v[i].iov_base, inl + at, mine.v[i].iov_len);
			at += mine.v[i].iov_len;
		}
	} else if (o != IBV_WR_RDMA_READ) {
		*err = xf_copy(pid, &mine, r, mapped);
		if (*err)
			return *err == EPERM || *err == ENOSYS ? XF_WHY_PERM : XF_WHY_COPY;
	}
	/* the state its packets would have left (fast.c's fast_exec, responder half) */
	emu_dp_ack_flush(b); /* a held ACK goes before any other responder packet */
	b->dp.resp_psn = (r->psn + r->npkts) & EMU_PSN_MASK;
	b->dp.resp_msn++;
	if (send) {
		struct emu_swqe w = { .length = r->len };

		w.wr.opcode = o;
		w.wr.imm_data = r->imm;
		w.wr.send_flags = r->se ? IBV_SEND_SOLICITED : 0;
		b->dp.resp_off = r->len;
		emu_dp_fast_recv_wc(b, rw, IBV_WC_RECV, r->len, &w);
	} else if (o != IBV_WR_RDMA_READ) {
		b->dp.resp_va = r->va + r->len;
		b->dp.resp_rkey = r->rkey;
		b->dp.resp_resid = 0;
		b->dp.resp_length = r->len;
		if (rw) {
			struct emu_swqe w = { .length = r->len };

			w.wr.opcode = o;
			w.wr.imm_data = r->imm;
			w.wr.send_flags = r->se ? IBV_SEND_SOLICITED : 0;
			b->dp.resp_off = 0;
			emu_dp_fast_recv_wc(b, rw, IBV_WC_RECV_RDMA_WITH_IMM, r->len, &w);
		}
	} else {
		b->dp.resp_va = r->va;
		b->dp.resp_rkey = r->rkey;
		b->dp.resp_resid = b->dp.resp_length = r->len;
		emu_dp_res_add(b, false, r->psn, last, 0);
	}
	(void)imm;
	if (o == IBV_WR_RDMA_READ) {
		struct xf_ans a = { .kind = XF_READ_DONE, .qpn = r->sqpn, .psn = r->psn,
				    .tag = r->tag };
		struct xf_req pieces = { .niov = 0 };
		uintptr_t lo = (uintptr_t)host, hi = lo + r->len, rs, re;
		uint64_t ino;
		int fd;

		a.placed = xf_place(pid, r, host);
		if (a.placed) {
			*mapped = true;
		} else if (r->len && emu_xmap_find(lo, r->len, &fd, &ino, &rs, &re)) {
			/* our memory, as the requester will find it: mapped pages by memfd */
			uintptr_t x = lo > rs ? lo : rs, y = hi < re ? hi : re;

			xf_piece(&pieces, lo, x - lo, -1, 0, 0);
			xf_piece(&pieces, x, y - x, fd, ino, x - rs);
			xf_piece(&pieces, y, hi - y, -1, 0, 0);
		} else if (r->len) {
			xf_piece(&pieces, lo, r->len, -1, 0, 0);
		}
		a.niov = pieces.niov;
		memcpy(a.iov, pieces.iov, sizeof(a.iov[0]) * pieces.niov);
		if (emu_dp_xmit_desc(b, &a, sizeof(a)))
			xf_trace("xfast: qp %u: READ psn %#x: no ring back", b->qp.qp_num, r->psn);
	} else {
		/* the ACK of the last packet, held as that packet's would be, as a descriptor */
		struct emu_pkt_info pi = { .psn = last, .mask = o == IBV_WR_RDMA_WRITE ?
								EMU_PKT_WRITE : 0 };

		if (emu_dp_ack_hold(b, &pi))
			b->dp.ack_desc = true;
		else if (!xf_send_ack(b, last, 1))
			emu_dp_xmit_resp(b, EMU_OP_RC | EMU_OP_ACK, last,
					 emu_aeth_ack(EMU_AETH_CREDITS_INVALID), NULL, 0, 0,
					 b->dp.resp_msn);
	}
	return 0;
}

/* The HCA behind topology endpoint ep (a reference), NULL when none is open here. */
static struct emu_hca *ep_hca(int ep)
{
	struct emu_engine *e = emu_dp_engine();
	const struct emu_fabric *fab;
	struct emu_endpoint info;

	if (!e || emu_topology_endpoint_info(emu_engine_topology(e), ep, &info) ||
	    info.kind != EMU_EP_HOST_PORT)
		return NULL;
	fab = emu_engine_fabric(e);
	if ((size_t)info.node >= fab->nhosts || info.device < 0 ||
	    (size_t)info.device >= fab->hosts[info.node].ndevices)
		return NULL;
	return emu_hca_get(&fab->hosts[info.node].devices[info.device]);
}

static struct emu_vqp *hca_qp(struct emu_hca *hca, uint32_t qpn)
{
	struct emu_obj *obj;

	pthread_mutex_lock(emu_hca_lock(hca));
	obj = emu_hca_obj_find_locked(hca, EMU_OBJ_QP, qpn & EMU_QPN_MASK);
	pthread_mutex_unlock(emu_hca_lock(hca));
	return obj ? container_of(obj, struct emu_vqp, obj) : NULL;
}

/* A READ's answer: its data copied from the responder's pieces into the WQE's SGEs, with
 * the completer's lkey checks (emu_dp_copy_sge), while the WQE still waits for it. A copy the
 * kernel refuses sends the READ again as packets (the responder answers the duplicate from its
 * responder resources) and stops the descriptors to that peer. */
static void xf_read_done(struct emu_vqp *q, int pid, const struct xf_ans *a)
{
	struct emu_swqe *w = emu_dp_comp_xfast_wqe(q, a->psn);
	uint64_t off = 0;
	bool mapped = false;
	int status = 0;

	if (!w || w->wr.opcode != IBV_WR_RDMA_READ || a->niov > 3)
		return;
	/* the claim ends here, whatever the answer: placed, the data is in our pages */
	if (emu_xclaim_end(w, a->placed && a->tag == w->xf_tag)) {
		__atomic_fetch_add(&xf_served, 1, __ATOMIC_RELAXED);
		xf_trace("xfast: qp %u <- pid %d: psn %#x, %llu bytes, placed by the responder",
			 q->qp.qp_num, pid, a->psn, (unsigned long long)w->length);
		emu_dp_comp_xfast_read(q, w, 0);
		return;
	}
	for (int k = 0; k < a->niov && !status; k++) {
		const struct xf_iov *v = &a->iov[k];
		struct xf_map *m = v->fd >= 0 && !xf_eperm ? peer_map(pid, v->fd, v->ino) : NULL;
		uint8_t *src = NULL, *bounce = NULL;

		if (m && m->base && v->off <= m->size && v->len <= m->size - v->off) {
			src = m->base + v->off;
			mapped = true;
		} else {
			/* not mapped here: through a buffer (the data must pass the lkey checks) */
			struct iovec lv, rv = { (void *)(uintptr_t)v->addr, v->len };
			ssize_t got = -1;
			int err = EPERM;

			bounce = emu_malloc(v->len ? v->len : 1);
			lv = (struct iovec){ bounce, v->len };
			if (bounce && !xf_eperm) {
				got = process_vm_readv(pid, &lv, 1, &rv, 1, 0);
				err = got < 0 ? errno : EFAULT;
			}
			if (!bounce || (uint64_t)got != v->len) {
				free(bounce);
				if (bounce && (err == EPERM || err == ENOSYS)) {
					pid_set_off(pid);
					fprintf(stderr, "rdmaemu: one-copy transfers from pid %d refused "
							"(%s): frames from now on\n", pid, strerror(err));
				}
				xf_trace("xfast: qp %u: READ psn %#x: copy failed, as packets again",
					 q->qp.qp_num, a->psn);
				emu_dp_comp_xfast_decline(q, a->psn);
				return;
			}
			src = bounce;
		}
		if (emu_dp_copy_sge(q, w->sge, w->wr.num_sge, off, src, v->len, true) != EMU_MR_OK)
			status = IBV_WC_LOC_PROT_ERR; /* comp_read_resp's */
		off += v->len;
		free(bounce);
	}
	if (!status) {
		__atomic_fetch_add(&xf_served, 1, __ATOMIC_RELAXED);
		xf_trace("xfast: qp %u <- pid %d: psn %#x, %llu bytes, one copy (%s)", q->qp.qp_num,
			 pid, a->psn, (unsigned long long)w->length,
			 mapped ? "mapped" : "process_vm");
	}
	emu_dp_comp_xfast_read(q, w, status);
}

/* A request descriptor of len bytes into *r (an inline one's payload at *inl), checked on our
 * copy: the ring is the peer's to write while we read it, and only the copy stays. false:
 * malformed (only a broken peer writes one). */
static bool xf_req_take(const void *desc, size_t len, struct xf_req *r, const uint8_t **inl)
{
	if (*(const uint8_t *)desc == XF_REQ_INL) {
		struct xf_inl h;

		if (len < sizeof(h))
			return false;
		memcpy(&h, desc, sizeof(h));
		if (len != sizeof(h) + h.len)
			return false;
		*r = (struct xf_req){ .kind = XF_REQ, .opcode = h.opcode, .se = h.se,
				      .dqpn = h.dqpn, .sqpn = h.sqpn, .psn = h.psn,
				      .npkts = h.npkts, .mtu = h.mtu, .len = h.len,
				      .rkey = h.rkey, .imm = h.imm, .va = h.va };
		*inl = (const uint8_t *)desc + sizeof(h);
		return true;
	}
	if (len < XF_REQ_HDR)
		return false;
	memcpy(r, desc, XF_REQ_HDR);
	if (r->niov > XF_MAX_IOV || len != xf_req_len(r->niov))
		return false;
	memcpy(r->iov, (const uint8_t *)desc + XF_REQ_HDR, len - XF_REQ_HDR);
	return true;
}

/* The QP a descriptor names, by (port endpoint, QPN): the last ones found, each valid while no
 * QP has changed state or gone (emu_dp_fast_epoch, which moves under the engine lock, held
 * here). The lookup took the HCA registry's lock twice and the HCA's once at every message. */
#define XF_QP_CACHE 8
static struct xf_qp_slot {
	int ep;
	uint32_t qpn;
	uint64_t epoch;
	struct emu_vqp *q;
} qp_cache[XF_QP_CACHE];

static struct emu_vqp *xf_qp(int ep, uint32_t qpn)
{
	uint64_t epoch = __atomic_load_n(&emu_dp_fast_epoch, __ATOMIC_RELAXED);
	struct xf_qp_slot *c = &qp_cache[qpn % XF_QP_CACHE];
	struct emu_hca *hca;
	struct emu_vqp *q;

	if (c->q && c->epoch == epoch && c->ep == ep && c->qpn == qpn)
		return c->q;
	hca = ep_hca(ep);
	if (!hca)
		return NULL;
	/* (the QP's context holds the HCA while the QP exists) */
	q = hca_qp(hca, qpn);
	emu_hca_put(hca);
	if (q)
		*c = (struct xf_qp_slot){ .ep = ep, .qpn = qpn, .epoch = epoch, .q = q };
	return q;
}

static void xf_rx(int ep, int pid, const void *desc, size_t len)
{
	struct emu_vqp *q;
	struct xf_req r;
	const uint8_t *inl = NULL;
	uint8_t kind;

	if (len < 1)
		return;
	kind = *(const uint8_t *)desc;
	if ((kind == XF_REQ || kind == XF_REQ_INL) && xf_req_take(desc, len, &r, &inl)) {
		int why, err = 0;
		bool mapped = false;

		q = xf_qp(ep, r.dqpn);
		why = q ? xf_serve(q, &r, pid, inl, &err, &mapped) : XF_WHY_STATE;
		if (why == XF_RNR) {
			xf_trace("xfast: qp %u <- pid %d: psn %#x: no receive WQE, RNR NAK", r.dqpn,
				 pid, r.psn);
		} else if (!why && r.opcode == IBV_WR_RDMA_READ) {
			xf_trace("xfast: qp %u <- pid %d: psn %#x, READ of %u bytes answered%s",
				 r.dqpn, pid, r.psn, r.len,
				 mapped ? ", placed in its pages" : "");
		} else if (!why) {
			__atomic_fetch_add(&xf_served, 1, __ATOMIC_RELAXED);
			xf_trace("xfast: qp %u <- pid %d: psn %#x, %u bytes, %s", r.dqpn, pid, r.psn,
				 r.len, inl ? "inline" : mapped ? "one copy (mapped)" :
							 "one copy (process_vm)");
		} else {
			struct xf_ans a = { .kind = XF_DECLINE, .why = (uint8_t)why, .qpn = r.sqpn,
					    .psn = r.psn, .err = err };

			xf_declined++;
			if (why == XF_WHY_PERM || why == XF_WHY_OFF)
				pid_set_off(pid);
			xf_trace("xfast: qp %u <- pid %d: psn %#x declined (%d%s%s)", r.dqpn, pid,
				 r.psn, why, err ? ", " : "", err ? strerror(err) : "");
			/* back through the ring of the same port, to the requester's QP */
			emu_link_shm_send_desc(ep, r.sqpn, &a, sizeof(a));
		}
	} else if (kind == XF_ACK && len == sizeof(struct xf_ack)) {
		struct xf_ack a;

		memcpy(&a, desc, sizeof(a));
		q = xf_qp(ep, a.qpn);
		if (q && q->qp.qp_type == IBV_QPT_RC)
			emu_dp_comp_xfast_ack(q, a.psn);
	} else if ((kind == XF_READ_DONE || kind == XF_DECLINE) && len == sizeof(struct xf_ans)) {
		struct xf_ans a;

		memcpy(&a, desc, sizeof(a));
		q = xf_qp(ep, a.qpn);
		if (q && kind == XF_READ_DONE) {
			xf_read_done(q, pid, &a);
		} else if (q) {
			if (a.why == XF_WHY_PERM || a.why == XF_WHY_OFF) {
				pid_set_off(pid);
				if (a.why == XF_WHY_PERM)
					fprintf(stderr, "rdmaemu: one-copy transfers to pid %d refused "
							"(%s): frames from now on\n", pid,
						strerror(a.err));
			}
			xf_trace("xfast: qp %u: psn %#x declined by pid %d (%d)", a.qpn, a.psn, pid,
				 a.why);
			emu_dp_comp_xfast_decline(q, a.psn);
		}
	}
}

__attribute__((constructor)) static void xf_register(void)
{
	emu_link_shm_set_desc_hook(xf_rx);
	emu_dp_ack_set_desc_sender(xf_send_ack);
}
