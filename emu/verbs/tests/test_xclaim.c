/* The claims by which a responder in another process places a READ's data in the requester's
 * pages (emu/verbs/xclaim.c), on words of this test's own instead of a shared-memory pair:
 * the state machine, a claim taken back before, during and after the responder's copy, a
 * responder's process gone in the middle of its copy, a deregistered region, a full table. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "emu/link/link_shm.h"
#include "emu/verbs/datapath.h"

/* the pair's words: the requester's view and the responder's are the same memory here */
static uint64_t words[EMU_LINK_SHM_CLAIMS];
static bool pair_gone;
static int peer_pid;

uint64_t *emu_link_shm_claims(uint32_t dqpn)
{
	(void)dqpn;
	return pair_gone ? NULL : words;
}

uint64_t *emu_link_shm_peer_claims(int pid)
{
	(void)pid;
	return pair_gone ? NULL : words;
}

int emu_link_shm_peer_pid(uint32_t dqpn)
{
	(void)dqpn;
	return peer_pid;
}

#define PEER 4242

struct wqe {
	struct emu_swqe w;
	struct ibv_sge sge[1];
};

static void wqe_init(struct wqe *x, uint32_t lkey)
{
	memset(x, 0, sizeof(*x));
	x->w.wr.opcode = IBV_WR_RDMA_READ;
	x->w.wr.num_sge = 1;
	x->w.sge[0].lkey = lkey;
}

static int setup(void **state)
{
	(void)state;
	memset(words, 0, sizeof(words));
	pair_gone = false;
	peer_pid = getpid();
	return 0;
}

static uint64_t word(uint64_t tag, unsigned st)
{
	return tag << 2 | st;
}

/* ARMED -> COPYING -> DONE -> 0 at the answer: the data counts as placed once */
static void test_placed(void **state)
{
	struct wqe x;
	uint32_t slot = 999;
	uint64_t tag;

	(void)state;
	wqe_init(&x, 0x100);
	tag = emu_xclaim_arm(&x.w, 7, &slot);
	assert_true(tag != 0);
	assert_int_equal(slot, x.w.xf_slot);
	assert_int_equal(x.w.xf_tag, tag);
	assert_int_equal(emu_xclaim_armed(), 1);
	assert_int_equal(words[slot], word(tag, 1));
	assert_false(emu_xclaim_begin(PEER, slot, tag + 1)); /* not its tag */
	assert_true(emu_xclaim_begin(PEER, slot, tag));
	assert_int_equal(words[slot], word(tag, 2));
	assert_false(emu_xclaim_begin(PEER, slot, tag)); /* once */
	emu_xclaim_done(PEER, slot, tag);
	assert_int_equal(words[slot], word(tag, 3));
	assert_true(emu_xclaim_end(&x.w, true));
	assert_int_equal(words[slot], 0);
	assert_int_equal(x.w.xf_tag, 0);
	assert_int_equal(emu_xclaim_armed(), 0);
	emu_xclaim_cancel(&x.w); /* nothing left to take back */
	assert_int_equal(emu_xclaim_armed(), 0);
}

/* taken back while ARMED: the responder may not begin after that; an answer that says
 * "not placed" ends the claim the same way */
static void test_taken_back(void **state)
{
	struct wqe x, y;
	uint32_t slot, slot2;
	uint64_t tag, tag2;

	(void)state;
	wqe_init(&x, 0x100);
	tag = emu_xclaim_arm(&x.w, 7, &slot);
	emu_xclaim_cancel(&x.w);
	assert_int_equal(words[slot], 0);
	assert_int_equal(x.w.xf_tag, 0);
	assert_false(emu_xclaim_begin(PEER, slot, tag));
	assert_int_equal(words[slot], 0);

	wqe_init(&y, 0x100);
	tag2 = emu_xclaim_arm(&y.w, 7, &slot2);
	assert_true(tag2 > tag); /* tags are never reused */
	assert_false(emu_xclaim_end(&y.w, false));
	assert_int_equal(words[slot2], 0);
	assert_int_equal(emu_xclaim_armed(), 0);
}

/* DONE before the requester takes it back (a go-back-N after the copy): the data is there,
 * but the WQE goes again, so end says not placed */
static void test_done_then_taken_back(void **state)
{
	struct wqe x;
	uint32_t slot;
	uint64_t tag;

	(void)state;
	wqe_init(&x, 0x100);
	tag = emu_xclaim_arm(&x.w, 7, &slot);
	assert_true(emu_xclaim_begin(PEER, slot, tag));
	emu_xclaim_done(PEER, slot, tag);
	assert_false(emu_xclaim_end(&x.w, false));
	assert_int_equal(words[slot], 0);
}

struct copier {
	uint32_t slot;
	uint64_t tag;
	int done;
};

static void *copier_main(void *arg)
{
	struct copier *c = arg;
	struct timespec ts = { 0, 30 * 1000 * 1000 };

	nanosleep(&ts, NULL);
	__atomic_store_n(&c->done, 1, __ATOMIC_SEQ_CST);
	emu_xclaim_done(PEER, c->slot, c->tag);
	return NULL;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* taken back during the copy: it waits for the copy's end (30 ms here) */
static void test_taken_back_while_copying(void **state)
{
	struct wqe x;
	struct copier c = { 0 };
	pthread_t th;
	double t0;

	(void)state;
	wqe_init(&x, 0x100);
	c.tag = emu_xclaim_arm(&x.w, 7, &c.slot);
	assert_true(emu_xclaim_begin(PEER, c.slot, c.tag));
	assert_int_equal(pthread_create(&th, NULL, copier_main, &c), 0);
	t0 = now_ms();
	emu_xclaim_cancel(&x.w);
	assert_int_equal(__atomic_load_n(&c.done, __ATOMIC_SEQ_CST), 1);
	assert_true(now_ms() - t0 >= 25);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(words[c.slot], 0);
	assert_int_equal(emu_xclaim_armed(), 0);
}

/* the responder's process gone in the middle of its copy: no wait for ever */
static void test_copier_gone(void **state)
{
	struct wqe x;
	uint32_t slot;
	uint64_t tag;
	pid_t child = fork();

	(void)state;
	if (!child)
		_exit(0);
	assert_true(child > 0);
	assert_int_equal(waitpid(child, NULL, 0), child);
	peer_pid = child; /* reaped: kill(child, 0) says ESRCH */
	wqe_init(&x, 0x100);
	tag = emu_xclaim_arm(&x.w, 7, &slot);
	assert_true(emu_xclaim_begin(PEER, slot, tag));
	assert_false(emu_xclaim_end(&x.w, false));
	assert_int_equal(x.w.xf_tag, 0);
	assert_int_equal(emu_xclaim_armed(), 0);
	words[slot] = 0; /* (the pair would go with its process) */
}

/* the pair gone before the claim ends: the claim ends without touching it */
static void test_pair_gone(void **state)
{
	struct wqe x;
	uint32_t slot;

	(void)state;
	wqe_init(&x, 0x100);
	assert_true(emu_xclaim_arm(&x.w, 7, &slot) != 0);
	pair_gone = true;
	assert_false(emu_xclaim_end(&x.w, true));
	assert_int_equal(emu_xclaim_armed(), 0);
	assert_int_equal(emu_xclaim_arm(&x.w, 7, &slot), 0); /* no pair: none */
}

/* a region deregistered: the claims of the READs that write to it end, the others stay */
static void test_mr_gone(void **state)
{
	struct wqe x, y;
	uint32_t sx, sy;
	uint64_t ty;

	(void)state;
	wqe_init(&x, 0x100);
	wqe_init(&y, 0x200);
	assert_true(emu_xclaim_arm(&x.w, 7, &sx) != 0);
	ty = emu_xclaim_arm(&y.w, 7, &sy);
	assert_int_equal(emu_xclaim_armed(), 2);
	emu_xclaim_mr_gone(0x100);
	assert_int_equal(x.w.xf_tag, 0);
	assert_int_equal(words[sx], 0);
	assert_int_equal(y.w.xf_tag, ty);
	assert_int_equal(words[sy], word(ty, 1));
	assert_int_equal(emu_xclaim_armed(), 1);
	emu_xclaim_cancel(&y.w);
	assert_int_equal(emu_xclaim_armed(), 0);
}

/* EMU_LINK_SHM_CLAIMS at once at most; a freed one is found again */
static void test_full(void **state)
{
	static struct wqe x[EMU_LINK_SHM_CLAIMS + 1];
	uint32_t slot;

	(void)state;
	for (int i = 0; i < EMU_LINK_SHM_CLAIMS; i++) {
		wqe_init(&x[i], 0x100);
		assert_true(emu_xclaim_arm(&x[i].w, 7, &slot) != 0);
	}
	wqe_init(&x[EMU_LINK_SHM_CLAIMS], 0x100);
	assert_int_equal(emu_xclaim_arm(&x[EMU_LINK_SHM_CLAIMS].w, 7, &slot), 0);
	emu_xclaim_cancel(&x[5].w);
	assert_true(emu_xclaim_arm(&x[EMU_LINK_SHM_CLAIMS].w, 7, &slot) != 0);
	assert_int_equal(slot, x[EMU_LINK_SHM_CLAIMS].w.xf_slot);
	emu_xclaim_mr_gone(0x100);
	assert_int_equal(emu_xclaim_armed(), 0);
	for (int i = 0; i < EMU_LINK_SHM_CLAIMS; i++)
		assert_int_equal(words[i], 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_placed, setup),
		cmocka_unit_test_setup(test_taken_back, setup),
		cmocka_unit_test_setup(test_done_then_taken_back, setup),
		cmocka_unit_test_setup(test_taken_back_while_copying, setup),
		cmocka_unit_test_setup(test_copier_gone, setup),
		cmocka_unit_test_setup(test_pair_gone, setup),
		cmocka_unit_test_setup(test_mr_gone, setup),
		cmocka_unit_test_setup(test_full, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
