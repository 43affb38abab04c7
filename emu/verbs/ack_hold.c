/* Held ACKs: on the shared-memory ring path, the positive ACK of an RDMA WRITE waits for its
 * QP's next request (docs/daemon.md "Held ACKs").
 *
 * Why. A ping-pong such as ib_write_lat spins on memory for the peer's RDMA WRITE, so only the
 * ring thread can deliver it, and waking that thread on a CPU taken by a spinner costs what the
 * scheduler makes it cost (5 us to 2 ms here). The peer's application thread, though, is
 * polling its send CQ for the ACK of its own WRITE at that moment, and a poll drains the rings
 * in order. If the ACK of message n leaves after the WRITE n + 1 that answers it, the poll that
 * finds the ACK has delivered the WRITE first: no wake-up on the path at all.
 *
 * Rules (an ACK has no deadline but the requester's ACK timeout, 4.096 us x 2^timeout and
 *     never below 8 us: a held ACK leaves within a few microseconds unless the ring thread
 *     waits for a CPU; the requester waits for it as for any ACK in flight):
 *   - only the ACK of a plain RDMA WRITE (no immediate, so no CQ tells its application)
 *     that a pass over the rings delivered is held (emu_link_shm_delivering):
 *     the in-process, daemon and virtual-time paths send every ACK at once, as before. A
 *     SEND's receiver polls a CQ anyway; holding its ACK bought nothing and slowed the
 *     sender's completion where the receiver went on to other work (docs/daemon.md);
 *   - one at most per QP: a plain WRITE that comes while the QP holds one is covered by it (its
 *     PSN and MSN become the new message's: ACK coalescing, as IBA allows a responder), up to
 *     ACK_COVERS messages; then, or for any other message that wants an ACK, the held one
 *     leaves first;
 *   - it leaves right after the QP's requester has sent a packet (req.c), before any other
 *     responder packet of the QP (resp.c), before the QP changes state or is destroyed, when
 *     a busy poller of any CQ has found nothing 16 times in a row (cq.c), and when the ring
 *     thread has idled EMU_LINK_SHM_FLUSH_ROUNDS looks (the idle hook);
 *   - it carries the PSN and MSN of the last message it covers; the ACK of a message that came
 *     as a descriptor goes as a descriptor too (xfast.c).
 * Engine lock held throughout. */
#include "config.h"

#include "emu/link/link_shm.h"
#include "emu/verbs/datapath.h"

/* the QPs holding an ACK, in the order they took it */
static struct emu_list held = { &held, &held };
/* how many: read without the lock by busy pollers (emu_dp_acks_held) */
static unsigned nheld;
static bool hooked;
/* the most messages one held ACK acknowledges */
#define ACK_COVERS 16
/* sends the ACK of a message that came as a descriptor as a descriptor (xfast.c registers it:
 * the one-copy path sits above the held ACKs) */
static bool (*desc_ack)(struct emu_vqp *q, uint32_t psn, unsigned covers);

void emu_dp_ack_set_desc_sender(bool (*fn)(struct emu_vqp *q, uint32_t psn, unsigned covers))
{
	desc_ack = fn;
}

static void unlist(struct emu_vqp *q)
{
	q->dp.ack_held = false;
	emu_list_del(&q->dp.ack_node);
	__atomic_store_n(&nheld, nheld - 1, __ATOMIC_RELAXED);
}

static void release(struct emu_vqp *q)
{
	unlist(q);
	emu_dp_trace("qp %u resp: held ACK psn %u sent for %u messages", q->qp.qp_num,
		     q->dp.ack_psn, q->dp.ack_covers);
	if (q->dp.ack_desc && desc_ack && desc_ack(q, q->dp.ack_psn, q->dp.ack_covers))
		return;
	emu_dp_xmit_resp(q, EMU_OP_RC | EMU_OP_ACK, q->dp.ack_psn,
			 emu_aeth_ack(EMU_AETH_CREDITS_INVALID), NULL, 0, 0, q->dp.ack_msn);
}

bool emu_dp_ack_hold(struct emu_vqp *q, const struct emu_pkt_info *pi)
{
	/* a plain RDMA WRITE's: its application learns of the message by memory, not by a CQ */
	if ((pi->mask & (EMU_PKT_WRITE | EMU_PKT_IMMDT)) != EMU_PKT_WRITE ||
	    !emu_link_shm_delivering())
		return false;
	if (q->dp.ack_held && q->dp.ack_covers < ACK_COVERS) {
		/* coalesced: an ACK of PSN n acknowledges every message before n, so the held one
		 * now says so for this one too (at most ACK_COVERS messages: the requester's
		 * completions wait for it) */
		q->dp.ack_covers++;
	} else {
		if (q->dp.ack_held)
			release(q);
		if (!hooked) {
			emu_link_shm_set_idle_hook(emu_dp_ack_flush_all);
			hooked = true;
		}
		q->dp.ack_held = true;
		q->dp.ack_covers = 1;
		emu_list_add_tail(&held, &q->dp.ack_node);
		__atomic_store_n(&nheld, nheld + 1, __ATOMIC_RELAXED);
	}
	q->dp.ack_desc = false;
	q->dp.ack_psn = pi->psn;
	q->dp.ack_msn = q->dp.resp_msn;
	emu_dp_trace("qp %u resp: ACK psn %u held (covers %u)", q->qp.qp_num, pi->psn,
		     q->dp.ack_covers);
	return true;
}

void emu_dp_ack_flush(struct emu_vqp *q)
{
	if (q->dp.ack_held)
		release(q);
}

void emu_dp_ack_flush_all(void)
{
	while (!emu_list_empty(&held))
		release(emu_list_entry(held.next, struct emu_vqp, dp.ack_node));
}

void emu_dp_ack_drop(struct emu_vqp *q)
{
	if (q->dp.ack_held)
		unlist(q);
}

bool emu_dp_acks_held(void)
{
	return __atomic_load_n(&nheld, __ATOMIC_RELAXED) != 0;
}
