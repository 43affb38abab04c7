/* librdmacm under failure injection (util/failnth.h, docs/failure-sweep.md), on rxe-ref2 as
 * node A: each object allocation rdma_create_id makes fails in turn, and every time the call
 * is -1 with errno ENOMEM (what rdma-core's rdma_create_id gives when its id cannot be made)
 * and the same call made again succeeds. A sanitizer build's LeakSanitizer checks that no
 * failure leaves memory behind. Re-executes itself on the emulated libibverbs
 * (verbs_test.h). */
#include "config.h"

#include <rdma/rdma_cma.h>

#include "emu/verbs/tests/verbs_test.h"
#include "util/failnth.h"

static void test_create_id_each_alloc(void **state)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_id *id;
	unsigned long before, k;

	(void)state;
	assert_non_null(ch);
	before = emu_fail_count(EMU_FAIL_ALLOC);
	assert_int_equal(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP), 0);
	k = emu_fail_count(EMU_FAIL_ALLOC) - before;
	assert_int_equal(rdma_destroy_id(id), 0);
	assert_true(k >= 1);
	print_message("rdma_create_id: %lu allocations, each failed in turn\n", k);
	for (unsigned long n = 1; n <= k; n++) {
		id = NULL;
		emu_fail_arm(EMU_FAIL_ALLOC, n);
		errno = 0;
		assert_int_equal(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP), -1);
		assert_int_equal(errno, ENOMEM);
		assert_null(id);
		emu_fail_arm(EMU_FAIL_ALLOC, 0);
		assert_int_equal(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP), 0);
		assert_int_equal(rdma_destroy_id(id), 0);
	}
	rdma_destroy_event_channel(ch);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_create_id_each_alloc),
	};

	(void)argc;
	setenv("RDMAEMU_QUIESCE_US", "0", 1);
	verbs_test_init(argv, "rxe-ref2.fabric", NULL, "A");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
