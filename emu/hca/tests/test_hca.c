/* The HCA model on its own: object pools (cyclic indices, caps, EBUSY), and the access check
 * the data path will run (rxe's lookup_mr + mr_check_range) with its completion statuses. */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "emu/hca/hca.h"

static struct emu_fabric *fab;
static struct emu_hca *hca;
static struct emu_hca_ctx *hctx;

static int setup(void **state)
{
	struct emu_error err;

	(void)state;
	fab = emu_fabric_load_text("host h\n  device rxe0 link=eth\n  cap max_pd=4\n"
				   "  netdev d0 rdma=rxe0/1\n    addr 192.0.2.1/28\n",
				   "test", ".", &err);
	if (!fab)
		return -1;
	hca = emu_hca_get(&fab->hosts[0].devices[0]);
	return hca && emu_hca_ctx_open(hca, &hctx) == 0 ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	emu_hca_ctx_close(hctx);
	emu_hca_put(hca);
	emu_fabric_free(fab);
	return 0;
}

static void test_registry(void **state)
{
	struct emu_hca *again = emu_hca_get(&fab->hosts[0].devices[0]);

	(void)state;
	assert_ptr_equal(again, hca);
	assert_ptr_equal(emu_hca_device(again), &fab->hosts[0].devices[0]);
	emu_hca_put(again);
}

static void test_pd_pool(void **state)
{
	struct emu_pd a = { 0 }, b = { 0 }, c = { 0 }, d = { 0 };

	(void)state;
	assert_int_equal(emu_hca_pd_alloc(hctx, &a), 0);
	assert_int_equal(emu_hca_pd_alloc(hctx, &b), 0);
	assert_int_equal(emu_hca_pd_alloc(hctx, &c), 0);
	/* index 1 and one of max_pd = 4 belong to the kernel (ib_mad's PD on port 1) */
	assert_int_equal(a.obj.index, 2);
	assert_int_equal(c.obj.index, 4);
	assert_int_equal(emu_hca_pd_alloc(hctx, &d), EINVAL);
	assert_int_equal(emu_hca_obj_count(hca, EMU_OBJ_PD), 4);
	assert_int_equal(emu_hca_pd_dealloc(&b), 0);
	assert_int_equal(emu_hca_pd_alloc(hctx, &d), 0);
	assert_int_equal(d.obj.index, 5); /* cyclic: 3 is not reused yet */
	assert_int_equal(emu_hca_pd_dealloc(&a), 0);
	assert_int_equal(emu_hca_pd_dealloc(&c), 0);
	assert_int_equal(emu_hca_pd_dealloc(&d), 0);
}

static void test_mr_check(void **state)
{
	static uint8_t buf[8192];
	struct emu_pd pd = { 0 }, other = { 0 };
	struct emu_mr mr = { 0 }, ro = { 0 };
	void *host = NULL;

	(void)state;
	assert_int_equal(emu_hca_pd_alloc(hctx, &pd), 0);
	assert_int_equal(emu_hca_pd_alloc(hctx, &other), 0);
	assert_int_equal(emu_hca_mr_reg(&pd, buf, 4096, 0x100000, EMU_ACCESS_LOCAL_WRITE |
			 EMU_ACCESS_REMOTE_WRITE | EMU_ACCESS_REMOTE_READ, &mr), EINVAL);
	assert_int_equal(emu_hca_mr_reg(&pd, buf, 4096, (uintptr_t)buf, EMU_ACCESS_LOCAL_WRITE |
			 EMU_ACCESS_REMOTE_WRITE | EMU_ACCESS_REMOTE_READ, &mr), 0);
	assert_int_equal(mr.rkey, mr.lkey);
	assert_int_equal(emu_hca_mr_reg(&pd, buf, 100, (uintptr_t)buf, 0, &ro), 0);
	assert_int_equal(ro.rkey, 0);

	/* a good local write, a good remote read, and where the bytes are */
	assert_int_equal(emu_hca_mr_check(hca, &pd, mr.lkey, false, (uintptr_t)buf + 10, 100,
					  EMU_ACCESS_LOCAL_WRITE, &host), EMU_MR_OK);
	assert_ptr_equal(host, buf + 10);
	assert_int_equal(emu_hca_mr_check(hca, &pd, mr.rkey, true, (uintptr_t)buf, 4096,
					  EMU_ACCESS_REMOTE_READ, NULL), EMU_MR_OK);
	/* the key byte must match; an unknown index; rkey 0 of a local-only MR */
	assert_int_equal(emu_hca_mr_check(hca, &pd, mr.lkey ^ 1, false, (uintptr_t)buf, 1, 0, NULL),
			 EMU_MR_BAD_KEY);
	assert_int_equal(emu_hca_mr_check(hca, &pd, 0x7fff00, true, (uintptr_t)buf, 1, 0, NULL),
			 EMU_MR_BAD_KEY);
	assert_int_equal(emu_hca_mr_check(hca, &pd, ro.rkey, true, (uintptr_t)buf, 1, 0, NULL),
			 EMU_MR_BAD_KEY);
	/* another PD, a missing access, out of range (both ends, and a wrapping length) */
	assert_int_equal(emu_hca_mr_check(hca, &other, mr.lkey, false, (uintptr_t)buf, 1, 0, NULL),
			 EMU_MR_BAD_PD);
	assert_int_equal(emu_hca_mr_check(hca, &pd, ro.lkey, false, (uintptr_t)buf, 1,
					  EMU_ACCESS_LOCAL_WRITE, NULL), EMU_MR_BAD_ACCESS);
	assert_int_equal(emu_hca_mr_check(hca, &pd, mr.rkey, true, (uintptr_t)buf, 1,
					  EMU_ACCESS_REMOTE_ATOMIC, NULL), EMU_MR_BAD_ACCESS);
	assert_int_equal(emu_hca_mr_check(hca, &pd, mr.lkey, false, (uintptr_t)buf + 4000, 97, 0,
					  NULL), EMU_MR_BAD_RANGE);
	assert_int_equal(emu_hca_mr_check(hca, &pd, mr.lkey, false, (uintptr_t)buf - 1, 1, 0, NULL),
			 EMU_MR_BAD_RANGE);
	assert_int_equal(emu_hca_mr_check(hca, &pd, mr.lkey, false, (uintptr_t)buf + 1, UINT64_MAX,
					  0, NULL), EMU_MR_BAD_RANGE);
	assert_int_equal(emu_mr_status_wc(EMU_MR_BAD_RANGE, false), 4);
	assert_int_equal(emu_mr_status_wc(EMU_MR_BAD_KEY, true), 10);
	assert_int_equal(emu_mr_status_wc(EMU_MR_OK, true), 0);
	assert_string_equal(emu_mr_status_str(EMU_MR_BAD_PD), "PD mismatch");

	/* the PD is busy while its MRs exist */
	assert_int_equal(emu_hca_pd_dealloc(&pd), EBUSY);
	assert_int_equal(emu_hca_mr_dereg(&mr), 0);
	assert_int_equal(emu_hca_mr_check(hca, &pd, mr.lkey, false, (uintptr_t)buf, 1, 0, NULL),
			 EMU_MR_BAD_KEY);
	assert_int_equal(emu_hca_mr_dereg(&ro), 0);
	assert_int_equal(emu_hca_pd_dealloc(&pd), 0);
	assert_int_equal(emu_hca_pd_dealloc(&other), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_registry),
		cmocka_unit_test(test_pd_pool),
		cmocka_unit_test(test_mr_check),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
