/* RMPP (IBTA 13.6) in the MAD layer, as the kernel's mad_rmpp.c does it: the sender's window
 * and ACK wait, the receiver's in-order reassembly with an ACK per window (emu/ib/gsi.h).
 *
 * Receiver states: ACTIVE (segments arriving; 40 s to finish) -> COMPLETE (delivered; kept
 * 10 s to re-ACK duplicates) -> freed. One trace line per transition. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "emu/sim/engine.h"
#include "emu/ib/gsi_priv.h"
#include "emu/hca/pkt.h"
#include "util/failcall.h"

#define RMPP_SEG_PAYLOAD (EMU_MAD_LEN - EMU_RMPP_HDR_END) /* what PayloadLength counts: 220 */

/* RMPP status codes (13.6.2.3; the kernel's IB_MGMT_RMPP_STATUS_*) used here. */
#define RMPP_STATUS_T2L 118        /* total time too long */
#define RMPP_STATUS_BAD_SEG 120    /* inconsistent First flag and segment number */
#define RMPP_STATUS_BADT 121       /* illegal RMPP type */
#define RMPP_STATUS_W2S 122        /* NewWindowLast too small */
#define RMPP_STATUS_S2B 123        /* segment number too big */
#define RMPP_STATUS_BAD_STATUS 124 /* illegal status */
#define RMPP_STATUS_UNV 125        /* unsupported version */

enum rmpp_recv_state { RMPP_RECV_ACTIVE, RMPP_RECV_COMPLETE, RMPP_RECV_NSTATES };

static const char *const rmpp_recv_state_name[RMPP_RECV_NSTATES] = {
	[RMPP_RECV_ACTIVE] = "ACTIVE",
	[RMPP_RECV_COMPLETE] = "COMPLETE",
};

struct rmpp_recv {
	struct emu_list link;
	struct emu_gsi_agent *a;
	enum rmpp_recv_state state;
	uint64_t tid;
	uint32_t src_qp;
	uint16_t slid;
	uint8_t sgid[16];
	uint8_t mgmt_class, class_version, method;
	struct emu_gsi_addr from;
	uint8_t *segs;  /* segment i (1-based) at (i - 1) * 256 */
	uint8_t *have;
	unsigned cap;
	unsigned seg_num, newwin, last_ack;
	struct emu_timer timer;
};

size_t emu_gsi_data_offset(uint8_t c)
{
	/* ib_get_mad_data_offset */
	if (c == EMU_MGMT_CLASS_SUBN_ADM)
		return EMU_SA_HDR_LEN;
	if (c >= 0x30 && c <= 0x4f)
		return 40;
	return EMU_RMPP_HDR_END;
}

unsigned emu_gsi_rmpp_nsegs(uint8_t c, size_t len)
{
	size_t off = emu_gsi_data_offset(c), seg = EMU_MAD_LEN - off;
	size_t data = len > off ? len - off : 0;

	return data ? (unsigned)((data + seg - 1) / seg) : 1;
}

void emu_gsi_rmpp_segment(const struct emu_gsi_send *s, unsigned seg, uint8_t out[EMU_MAD_LEN])
{
	size_t off = emu_gsi_data_offset(s->mgmt_class), ssz = EMU_MAD_LEN - off;
	size_t data = s->len - off, pos = (size_t)(seg - 1) * ssz;
	size_t chunk = data - pos < ssz ? data - pos : ssz;
	size_t pad = (size_t)s->nsegs * ssz - data;
	struct emu_rmpp_hdr rh;

	memset(out, 0, EMU_MAD_LEN);
	memcpy(out, s->msg, off); /* the class header repeats in every segment */
	memcpy(out + off, s->msg + off + pos, chunk);
	emu_rmpp_hdr_get(s->msg + 24, &rh);
	rh.version = EMU_RMPP_VERSION;
	rh.type = EMU_RMPP_TYPE_DATA;
	rh.status = 0;
	rh.flags = EMU_RMPP_FLAG_ACTIVE | (seg == 1 ? EMU_RMPP_FLAG_FIRST : 0) |
		   (seg == s->nsegs ? EMU_RMPP_FLAG_LAST : 0);
	rh.data1 = seg;
	/* send_next_seg: the whole message in the first, the last segment's own bytes in the
	 * last (which wins when there is one segment), 0 between */
	rh.data2 = 0;
	if (seg == 1)
		rh.data2 = (uint32_t)(s->nsegs * RMPP_SEG_PAYLOAD - pad);
	if (seg == s->nsegs)
		rh.data2 = (uint32_t)(RMPP_SEG_PAYLOAD - pad);
	emu_rmpp_hdr_put(out + 24, &rh);
}

/* ---------- sender ---------- */

static void arm_ack_wait(struct emu_gsi_send *s)
{
	uint32_t ms = s->timeout_ms;

	if (!ms || ms > EMU_GSI_RMPP_ACK_WAIT_MS)
		ms = EMU_GSI_RMPP_ACK_WAIT_MS;
	emu_timer_arm_in(emu_engine_clock(s->a->p->g->e), &s->timer,
			 (uint64_t)ms * EMU_NSEC_PER_MSEC);
}

/* Sends the segments after seg_num that the window allows, then waits for an ACK. */
static void send_window(struct emu_gsi_send *s)
{
	uint8_t seg[EMU_MAD_LEN];

	while (s->seg_num < s->newwin && s->seg_num < s->nsegs) {
		emu_gsi_rmpp_segment(s, ++s->seg_num, seg);
		if (emu_gsi_xmit(s->a->p, &s->to, seg)) {
			emu_gsi_send_complete(s, -EIO, NULL);
			return;
		}
	}
	emu_gsi_trace("send tid 0x%016llx: RMPP segments up to %u of %u sent, window %u, "
		      "waiting for an ACK",
		      (unsigned long long)s->tid, s->seg_num, s->nsegs, s->newwin);
	arm_ack_wait(s);
}

void emu_gsi_rmpp_send_start(struct emu_gsi_send *s)
{
	send_window(s);
}

void emu_gsi_rmpp_send_timeout(struct emu_gsi_send *s)
{
	if (!s->retries_left) {
		emu_gsi_send_complete(s, -ETIMEDOUT, NULL);
		return;
	}
	s->retries_left--;
	/* ib_retry_rmpp: again from the last ACKed segment */
	emu_gsi_trace("send tid 0x%016llx: no RMPP ACK, resending from segment %u",
		      (unsigned long long)s->tid, s->last_ack + 1);
	s->seg_num = s->last_ack;
	send_window(s);
}

/* An ABORT back to where r came from (nack_recv). */
static void send_abort(struct emu_gsi_agent *a, const struct emu_gsi_recv *r, uint8_t status)
{
	uint8_t m[EMU_MAD_LEN];
	struct emu_rmpp_hdr rh = { .version = EMU_RMPP_VERSION, .type = EMU_RMPP_TYPE_ABORT,
				   .flags = EMU_RMPP_FLAG_ACTIVE, .status = status };

	memset(m, 0, sizeof(m));
	memcpy(m, r->mad, emu_gsi_data_offset(r->mad[1]));
	m[3] ^= EMU_MAD_METHOD_RESP_BIT;
	rh.resp_time = r->mad[26] >> 3;
	emu_rmpp_hdr_put(m + 24, &rh);
	emu_gsi_trace("RMPP tid 0x%016llx: ABORT status %u", (unsigned long long)emu_be64_get(m + 8),
		      status);
	emu_gsi_xmit(a->p, &r->from, m);
}

static struct emu_gsi_send *find_rmpp_send(struct emu_gsi_agent *a, const uint8_t *mad)
{
	uint64_t tid = emu_be64_get(mad + 8);
	struct emu_list *it, *tmp;

	emu_list_for_each_safe(it, tmp, &a->sends)
	{
		struct emu_gsi_send *s = emu_list_entry(it, struct emu_gsi_send, link);

		if (s->rmpp && s->tid == tid && s->mgmt_class == mad[1])
			return s;
	}
	return NULL;
}

static void process_ack(struct emu_gsi_agent *a, const struct emu_gsi_recv *r)
{
	struct emu_rmpp_hdr rh;
	struct emu_gsi_send *s;

	emu_rmpp_hdr_get(r->mad + 24, &rh);
	a->p->cnt.rmpp_acks_received++;
	s = find_rmpp_send(a, r->mad);
	if (rh.status || rh.data2 < rh.data1) {
		uint8_t st = rh.status ? RMPP_STATUS_BAD_STATUS : RMPP_STATUS_W2S;

		if (s && s->state == EMU_GSI_SEND_ACTIVE)
			emu_gsi_send_complete(s, -ECONNABORTED, NULL);
		send_abort(a, r, st);
		return;
	}
	if (!s || s->state != EMU_GSI_SEND_ACTIVE)
		return; /* unmatched, or already done */
	if (rh.data1 > s->nsegs || rh.data1 > s->newwin) {
		emu_gsi_send_complete(s, -ECONNABORTED, NULL);
		send_abort(a, r, RMPP_STATUS_S2B);
		return;
	}
	if (rh.data2 < s->newwin || rh.data1 < s->last_ack)
		return; /* an old ACK */
	emu_gsi_trace("send tid 0x%016llx: RMPP ACK segment %u, window to %u",
		      (unsigned long long)s->tid, rh.data1, rh.data2);
	if (rh.data1 > s->last_ack) {
		s->last_ack = rh.data1;
		s->retries_left = s->retries;
	}
	s->newwin = rh.data2;
	if (s->last_ack == s->nsegs) {
		if (!s->timeout_ms) { /* no response expected: the last ACK completes it */
			emu_gsi_send_complete(s, 0, NULL);
			return;
		}
		emu_gsi_send_set_state(s, EMU_GSI_SEND_WAIT_RESP, "all segments ACKed");
		emu_timer_arm_in(emu_engine_clock(a->p->g->e), &s->timer,
				 (uint64_t)s->timeout_ms * EMU_NSEC_PER_MSEC);
		return;
	}
	/* more to send only when the window opened past what is out (a repeated ACK leaves the
	 * running ACK wait alone, as process_rmpp_ack does) */
	if (s->seg_num < s->newwin && s->seg_num < s->nsegs)
		send_window(s);
}

/* ---------- receiver ---------- */

static void recv_set_state(struct rmpp_recv *rr, enum rmpp_recv_state st, const char *why)
{
	emu_gsi_trace("RMPP recv tid 0x%016llx: %s -> %s (%s)", (unsigned long long)rr->tid,
		      rmpp_recv_state_name[rr->state], rmpp_recv_state_name[st], why);
	rr->state = st;
}

static void recv_free(struct rmpp_recv *rr)
{
	emu_timer_cancel(emu_engine_clock(rr->a->p->g->e), &rr->timer);
	emu_list_del(&rr->link);
	free(rr->segs);
	free(rr->have);
	free(rr);
}

static void send_ack(struct rmpp_recv *rr)
{
	uint8_t m[EMU_MAD_LEN];
	struct emu_rmpp_hdr rh;

	/* format_ack: the first segment's class header, the method turned around */
	memset(m, 0, sizeof(m));
	memcpy(m, rr->segs, emu_gsi_data_offset(rr->mgmt_class));
	m[3] ^= EMU_MAD_METHOD_RESP_BIT;
	emu_rmpp_hdr_get(m + 24, &rh);
	rh.type = EMU_RMPP_TYPE_ACK;
	rh.flags = EMU_RMPP_FLAG_ACTIVE;
	rh.status = 0;
	rr->last_ack = rr->seg_num;
	rh.data1 = rr->seg_num;
	rh.data2 = rr->newwin;
	emu_rmpp_hdr_put(m + 24, &rh);
	if (!emu_gsi_xmit(rr->a->p, &rr->from, m))
		rr->a->p->cnt.rmpp_acks_sent++;
}

static void recv_timer(struct emu_clock *clk, struct emu_timer *t, void *arg)
{
	struct rmpp_recv *rr = arg;

	(void)clk, (void)t;
	if (rr->state == RMPP_RECV_ACTIVE) {
		struct emu_gsi_recv r = { .mad = rr->segs, .len = EMU_MAD_LEN, .from = rr->from,
					  .port = rr->a->p };

		emu_gsi_trace("RMPP recv tid 0x%016llx: transfer took too long: aborted",
			      (unsigned long long)rr->tid);
		send_abort(rr->a, &r, RMPP_STATUS_T2L);
	}
	recv_free(rr);
}

static struct rmpp_recv *find_recv(struct emu_gsi_agent *a, const struct emu_gsi_recv *r)
{
	struct emu_list *it, *tmp;
	uint64_t tid = emu_be64_get(r->mad + 8);

	emu_list_for_each_safe(it, tmp, &a->rmpp_recvs)
	{
		struct rmpp_recv *rr = emu_list_entry(it, struct rmpp_recv, link);

		if (rr->tid == tid && rr->src_qp == r->from.qpn && rr->slid == r->from.lid &&
		    !memcmp(rr->sgid, r->from.gid, 16) && rr->mgmt_class == r->mad[1] &&
		    rr->class_version == r->mad[2] && rr->method == r->mad[3])
			return rr;
	}
	return NULL;
}

static int store(struct rmpp_recv *rr, unsigned seg, const uint8_t *mad)
{
	if (seg > rr->cap) {
		unsigned cap = rr->cap ? rr->cap : 8;
		uint8_t *s, *h;

		while (cap < seg)
			cap *= 2;
		s = emu_realloc(rr->segs, (size_t)cap * EMU_MAD_LEN);
		if (!s)
			return -ENOMEM;
		rr->segs = s;
		h = emu_realloc(rr->have, cap);
		if (!h)
			return -ENOMEM;
		memset(h + rr->cap, 0, cap - rr->cap);
		rr->have = h;
		rr->cap = cap;
	}
	memcpy(rr->segs + (size_t)(seg - 1) * EMU_MAD_LEN, mad, EMU_MAD_LEN);
	rr->have[seg - 1] = 1;
	return 0;
}

/* The whole message from the segments 1..seg_num (get_mad_len). */
static uint8_t *assemble(struct rmpp_recv *rr, size_t *len)
{
	size_t off = emu_gsi_data_offset(rr->mgmt_class), ssz = EMU_MAD_LEN - off;
	const uint8_t *last = rr->segs + (size_t)(rr->seg_num - 1) * EMU_MAD_LEN;
	uint32_t paylen = emu_be32_get(last + 32);
	size_t pad = RMPP_SEG_PAYLOAD >= paylen ? RMPP_SEG_PAYLOAD - paylen : 0;
	uint8_t *m;

	if (pad > ssz)
		pad = 0;
	*len = off + (size_t)rr->seg_num * ssz - pad;
	m = emu_malloc(*len > EMU_MAD_LEN ? *len : EMU_MAD_LEN);
	if (!m)
		return NULL;
	memcpy(m, rr->segs, off);
	for (unsigned i = 0; i < rr->seg_num; i++) {
		size_t pos = (size_t)i * ssz, n = *len - off - pos < ssz ? *len - off - pos : ssz;

		memcpy(m + off + pos, rr->segs + (size_t)i * EMU_MAD_LEN + off, n);
	}
	return m;
}

static bool complete(struct rmpp_recv *rr, struct emu_gsi_recv *r, uint8_t **owned)
{
	struct emu_clock *clk = emu_engine_clock(rr->a->p->g->e);
	size_t len;
	uint8_t *m;

	recv_set_state(rr, RMPP_RECV_COMPLETE, "last segment");
	send_ack(rr);
	emu_timer_arm_in(clk, &rr->timer, (uint64_t)EMU_GSI_RMPP_CLEANUP_MS * EMU_NSEC_PER_MSEC);
	m = assemble(rr, &len);
	if (!m)
		return false;
	r->mad = m;
	r->len = len;
	*owned = m;
	return true;
}

static bool process_data(struct emu_gsi_agent *a, struct emu_gsi_recv *r, uint8_t **owned)
{
	struct emu_rmpp_hdr rh;
	struct rmpp_recv *rr;

	emu_rmpp_hdr_get(r->mad + 24, &rh);
	if (rh.status) {
		send_abort(a, r, RMPP_STATUS_BAD_STATUS);
		return false;
	}
	if ((rh.data1 == 1) != !!(rh.flags & EMU_RMPP_FLAG_FIRST)) {
		send_abort(a, r, RMPP_STATUS_BAD_SEG);
		return false;
	}
	rr = find_recv(a, r);
	if (rh.data1 == 1 && !rr) { /* start_rmpp */
		rr = emu_calloc(1, sizeof(*rr));
		if (!rr || store(rr, 1, r->mad)) {
			if (rr)
				free(rr->segs), free(rr->have);
			free(rr);
			return false;
		}
		rr->a = a;
		rr->tid = emu_be64_get(r->mad + 8);
		rr->src_qp = r->from.qpn;
		rr->slid = r->from.lid;
		memcpy(rr->sgid, r->from.gid, 16);
		rr->mgmt_class = r->mad[1];
		rr->class_version = r->mad[2];
		rr->method = r->mad[3];
		rr->from = r->from;
		rr->seg_num = 1;
		rr->newwin = 1;
		rr->state = RMPP_RECV_ACTIVE;
		emu_timer_init(&rr->timer, recv_timer, rr);
		emu_list_add_tail(&a->rmpp_recvs, &rr->link);
		emu_gsi_trace("RMPP recv tid 0x%016llx: started (%u bytes announced)",
			      (unsigned long long)rr->tid, rh.data2);
		if (rh.flags & EMU_RMPP_FLAG_LAST)
			return complete(rr, r, owned);
		emu_timer_arm_in(emu_engine_clock(a->p->g->e), &rr->timer,
				 (uint64_t)EMU_GSI_RMPP_RECV_TIMEOUT_MS * EMU_NSEC_PER_MSEC);
		rr->newwin += EMU_GSI_RMPP_WINDOW;
		send_ack(rr);
		return false;
	}
	/* continue_rmpp */
	if (!rr || rh.data1 > rr->newwin)
		return false;
	if (rh.data1 <= rr->last_ack || rr->state == RMPP_RECV_COMPLETE) {
		send_ack(rr); /* a duplicate: tell the sender where we are */
		return false;
	}
	if (rh.data1 <= rr->seg_num || (rh.data1 <= rr->cap && rr->have[rh.data1 - 1]))
		return false;
	if (store(rr, rh.data1, r->mad))
		return false;
	while (rr->seg_num < rr->cap && rr->have[rr->seg_num])
		rr->seg_num++;
	emu_gsi_trace("RMPP recv tid 0x%016llx: segment %u stored, in order up to %u, window %u",
		      (unsigned long long)rr->tid, rh.data1, rr->seg_num, rr->newwin);
	if (rr->segs[(size_t)(rr->seg_num - 1) * EMU_MAD_LEN + 26] & EMU_RMPP_FLAG_LAST)
		return complete(rr, r, owned);
	if (rr->seg_num == rr->newwin) {
		rr->newwin += EMU_GSI_RMPP_WINDOW;
		send_ack(rr);
	}
	return false;
}

bool emu_gsi_rmpp_recv(struct emu_gsi_agent *a, struct emu_gsi_recv *r, uint8_t **owned)
{
	struct emu_gsi_send *s;

	*owned = NULL;
	if (r->mad[24] != EMU_RMPP_VERSION) {
		send_abort(a, r, RMPP_STATUS_UNV);
		return false;
	}
	switch (r->mad[25]) {
	case EMU_RMPP_TYPE_DATA:
		return process_data(a, r, owned);
	case EMU_RMPP_TYPE_ACK:
		process_ack(a, r);
		return false;
	case EMU_RMPP_TYPE_STOP:
	case EMU_RMPP_TYPE_ABORT:
		s = find_rmpp_send(a, r->mad);
		if (s && s->state == EMU_GSI_SEND_ACTIVE)
			emu_gsi_send_complete(s, -ECONNABORTED, NULL);
		return false;
	default:
		send_abort(a, r, RMPP_STATUS_BADT);
		return false;
	}
}

void emu_gsi_rmpp_agent_free(struct emu_gsi_agent *a)
{
	while (!emu_list_empty(&a->rmpp_recvs))
		recv_free(emu_list_entry(a->rmpp_recvs.next, struct rmpp_recv, link));
}
