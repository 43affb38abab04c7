/* Claims: a responder in another process of the host places an RDMA READ's data straight in
 * the requester's registered pages, as an HCA's DMA engine would, only while the requester
 * still waits for it (docs/daemon.md, "One copy between processes").
 *
 * A claim is a 64-bit word in the shared-memory rings' pair of the two processes
 * (emu_link_shm_claims: the requester writes the words of its tx ring's header page, the
 * responder finds them as the words of its rx ring's). A word holds a tag, unique in the
 * requester's process for its life, and a state:
 *
 *   0 (free) --requester arms--> ARMED --responder--> COPYING --responder--> DONE
 *   ARMED --requester takes it back--> 0        DONE --requester, at the answer--> 0
 *
 * Every change is a compare-and-swap on (tag, state), so a word never moves for a tag it no
 * longer holds. The responder copies only between its COPYING and its DONE. The requester
 * takes a claim back before its WQE can be given back to the application (a go-back-N, a
 * flush, a reset or destroy, the deregistration of a region it writes to): from ARMED the
 * claim simply ends; from COPYING it waits for DONE, the copy's end (a 1 MiB copy takes well
 * under a millisecond), or for the responder's process to be gone. So the responder never
 * writes into memory the application may already use again.
 *
 * At most XCLAIM_MAX claims are armed in the process at once; index i of the table is word i
 * of whichever pair its READ goes to. Engine lock held throughout (the requester's calls; the
 * responder's are on the peer's words, which only compare-and-swap moves). */
#include "config.h"

#include <errno.h>
#include <signal.h>

#include "emu/link/link_shm.h"
#include "emu/verbs/datapath.h"

#define XCLAIM_MAX EMU_LINK_SHM_CLAIMS

enum { CL_ARMED = 1, CL_COPYING = 2, CL_DONE = 3 };

static inline uint64_t word_of(uint64_t tag, unsigned st)
{
	return tag << 2 | st;
}

static struct xclaim {
	struct emu_swqe *w; /* NULL: free */
	uint32_t dqpn;
} table[XCLAIM_MAX];
static unsigned armed, next_free;
static uint64_t last_tag;

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#else
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
#endif
}

static bool cas(uint64_t *word, uint64_t from, uint64_t to)
{
	return __atomic_compare_exchange_n(word, &from, to, false, __ATOMIC_ACQ_REL,
					   __ATOMIC_ACQUIRE);
}

static void release(struct emu_swqe *w)
{
	table[w->xf_slot] = (struct xclaim){ 0 };
	__atomic_store_n(&armed, armed - 1, __ATOMIC_RELAXED);
	w->xf_tag = 0;
}

uint64_t emu_xclaim_arm(struct emu_swqe *w, uint32_t dqpn, uint32_t *slot)
{
	uint64_t *words = emu_link_shm_claims(dqpn);

	if (!words || armed == XCLAIM_MAX || w->xf_tag)
		return 0;
	for (unsigned n = 0; n < XCLAIM_MAX; n++) {
		unsigned i = (next_free + n) % XCLAIM_MAX;

		/* (a word our table calls free is 0: every path that frees the entry zeroed it,
		 * or the pair it was in has gone) */
		if (table[i].w || __atomic_load_n(&words[i], __ATOMIC_ACQUIRE))
			continue;
		w->xf_tag = ++last_tag;
		w->xf_slot = (uint16_t)i;
		table[i] = (struct xclaim){ w, dqpn };
		__atomic_store_n(&armed, armed + 1, __ATOMIC_RELAXED);
		next_free = (i + 1) % XCLAIM_MAX;
		__atomic_store_n(&words[i], word_of(w->xf_tag, CL_ARMED), __ATOMIC_RELEASE);
		*slot = i;
		return w->xf_tag;
	}
	return 0;
}

/* The responder's side: the claim (slot, tag) of peer pid from ARMED to COPYING. */
bool emu_xclaim_begin(int pid, uint32_t slot, uint64_t tag)
{
	uint64_t *words = emu_link_shm_peer_claims(pid);

	return words && slot < XCLAIM_MAX && tag &&
	       cas(&words[slot], word_of(tag, CL_ARMED), word_of(tag, CL_COPYING));
}

void emu_xclaim_done(int pid, uint32_t slot, uint64_t tag)
{
	uint64_t *words = emu_link_shm_peer_claims(pid);

	if (words && slot < XCLAIM_MAX)
		cas(&words[slot], word_of(tag, CL_COPYING), word_of(tag, CL_DONE));
}

/* Whether the responder's process still exists (a claim it holds in COPYING may yet end). */
static bool peer_alive(uint32_t dqpn)
{
	int pid = emu_link_shm_peer_pid(dqpn);

	return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM);
}

bool emu_xclaim_end(struct emu_swqe *w, bool pushed)
{
	struct xclaim *c;
	uint64_t *words, tag = w->xf_tag;
	bool placed = false;
	unsigned spins = 0;

	if (!tag)
		return false;
	c = &table[w->xf_slot];
	words = emu_link_shm_claims(c->dqpn);
	while (words) {
		uint64_t v = __atomic_load_n(&words[w->xf_slot], __ATOMIC_ACQUIRE);

		if (v == word_of(tag, CL_DONE)) {
			/* its data is in place: the answer says so, or it was copied meanwhile */
			placed = cas(&words[w->xf_slot], v, 0) && pushed;
			break;
		}
		if (v == word_of(tag, CL_ARMED)) {
			if (cas(&words[w->xf_slot], v, 0))
				break;
			continue; /* the responder took it meanwhile */
		}
		if (v != word_of(tag, CL_COPYING))
			break; /* not ours (its pair went and came again) */
		/* the responder is copying: its end, or its process gone */
		if (++spins % 4096 == 0 && !peer_alive(c->dqpn))
			break;
		cpu_relax();
	}
	release(w);
	return placed;
}

void emu_xclaim_cancel(struct emu_swqe *w)
{
	if (w->xf_tag)
		emu_xclaim_end(w, false);
}

void emu_xclaim_mr_gone(uint32_t lkey)
{
	for (unsigned i = 0; i < XCLAIM_MAX && armed; i++) {
		struct emu_swqe *w = table[i].w;

		if (!w)
			continue;
		for (int k = 0; k < w->wr.num_sge; k++)
			if (w->sge[k].lkey == lkey) {
				emu_xclaim_cancel(w);
				break;
			}
	}
}

unsigned emu_xclaim_armed(void)
{
	return __atomic_load_n(&armed, __ATOMIC_RELAXED);
}
