/* Checking rdma_cm events in the in-process tests: the virtual clock, the next event of a
 * channel with its exact type, status and id, and a channel with nothing to read. */
#ifndef RDMAEMU_LIB_TESTS_CM_EVENT_TEST_H
#define RDMAEMU_LIB_TESTS_CM_EVENT_TEST_H

#include <poll.h>
#include <stdint.h>
#include <rdma/rdma_cma.h>
#include <rdmaemu/ctl.h>

static inline uint64_t cm_test_now_ns(void)
{
	uint64_t t = 0;

	assert_int_equal(rdmaemu_ctl_now_ns(&t), 0);
	return t;
}

/* The next event of ch, of `type` with `status`, for `id` (NULL: any); returned unacked. */
static inline struct rdma_cm_event *cm_test_expect(struct rdma_event_channel *ch,
						   enum rdma_cm_event_type type, int status,
						   struct rdma_cm_id *id)
{
	struct rdma_cm_event *ev;

	assert_int_equal(rdma_get_cm_event(ch, &ev), 0);
	if (ev->event != type)
		fail_msg("event %s (status %d), expected %s", rdma_event_str(ev->event), ev->status,
			 rdma_event_str(type));
	assert_int_equal(ev->status, status);
	if (id)
		assert_ptr_equal(ev->id, id);
	return ev;
}

/* Nothing to read on ch now. */
static inline void cm_test_expect_none(struct rdma_event_channel *ch)
{
	struct pollfd p = { ch->fd, POLLIN, 0 };

	assert_int_equal(poll(&p, 1, 0), 0);
}

#endif
