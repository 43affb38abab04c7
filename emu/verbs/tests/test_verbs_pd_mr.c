/* PDs and MRs on rxe-ref.fabric: key format, iova, the access and range checks of
 * ib_check_mr_access()/ib_umem_get(), and the return conventions of each verb. */
#include "config.h"

#include <linux/capability.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#include "emu/verbs/tests/verbs_test.h"

#define EXPECTED_FIRST_KEY 0x63

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static long page;

static int setup(void **state)
{
	(void)state;
	page = sysconf(_SC_PAGESIZE);
	ctx = vt_open("rxe0");
	pd = ibv_alloc_pd(ctx);
	return pd ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	ibv_dealloc_pd(pd);
	return ibv_close_device(ctx);
}

static void test_pd(void **state)
{
	struct ibv_pd *p2 = ibv_alloc_pd(ctx);

	(void)state;
	assert_non_null(p2);
	assert_ptr_equal(p2->context, ctx);
	assert_int_equal(pd->handle, 0); /* uverbs handles: per context, lowest free first */
	assert_int_equal(p2->handle, 1);
	assert_int_equal(ibv_dealloc_pd(p2), 0);
}

/* Expected keys: MR indices count up from 1 per device (rxe's cyclic pool), the low byte is
 * rxe's random key, here drawn from the fixture's seed, so fixed run after run. */
static void test_mr_keys(void **state)
{
	static char buf[8192];
	struct ibv_mr *a, *b, *c;
	uint32_t first_key;

	(void)state;
	a = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	assert_non_null(a);
	assert_ptr_equal(a->context, ctx);
	assert_ptr_equal(a->pd, pd);
	assert_ptr_equal(a->addr, buf);
	assert_int_equal(a->length, sizeof(buf));
	/* index 1 is the kernel's: ib_mad's PD on port 1 owns a DMA MR (measured: 0x2xx first) */
	assert_int_equal(a->lkey >> 8, 2);
	assert_int_equal(a->rkey, 0); /* no remote access: rxe leaves the rkey 0 */
	first_key = a->lkey;
	b = ibv_reg_mr(pd, buf, 16, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	assert_non_null(b);
	assert_int_equal(b->lkey >> 8, 3);
	assert_int_equal(b->handle, 2); /* uverbs handles: pd 0, a 1, b 2 (measured) */
	assert_int_equal(b->rkey, b->lkey);
	assert_int_equal(ibv_dereg_mr(b), 0);
	/* a freed index is not reused before the range wraps (xa_alloc_cyclic) */
	c = ibv_reg_mr(pd, buf, 16, IBV_ACCESS_REMOTE_READ);
	assert_non_null(c);
	assert_int_equal(c->lkey >> 8, 4);
	assert_int_equal(c->rkey, c->lkey);
	assert_int_equal(ibv_dereg_mr(c), 0);
	assert_int_equal(ibv_dereg_mr(a), 0);
	/* the seeded key of the first MR of rxe-ref's rxe0 (fixture seed 1) */
	print_message("first lkey 0x%x\n", first_key);
	assert_int_equal(first_key & 0xff, EXPECTED_FIRST_KEY);
}

static void test_mr_iova(void **state)
{
	static char buf[8192] __attribute__((aligned(4096)));
	struct ibv_mr *mr;

	(void)state;
	mr = ibv_reg_mr_iova(pd, buf + 100, 200, 0x10000064, IBV_ACCESS_LOCAL_WRITE);
	assert_non_null(mr);
	assert_ptr_equal(mr->addr, buf + 100);
	assert_int_equal(ibv_dereg_mr(mr), 0);
	/* the page offsets of addr and iova must agree (ib_uverbs_reg_mr) */
	errno = 0;
	assert_null(ibv_reg_mr_iova(pd, buf + 100, 200, 0x10000000, IBV_ACCESS_LOCAL_WRITE));
	assert_int_equal(errno, EINVAL);
	mr = ibv_reg_mr_iova2(pd, buf, 64, 0, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_RELAXED_ORDERING);
	assert_non_null(mr);
	assert_int_equal(ibv_dereg_mr(mr), 0);
}

static void expect_reg_fail(void *addr, size_t len, int access, int err)
{
	errno = 0;
	/* a non-constant access: the header's macro calls ibv_reg_mr_iova2 */
	assert_null(ibv_reg_mr(pd, addr, len, access));
	assert_int_equal(errno, err);
}

static void test_mr_access_flags(void **state)
{
	static char buf[4096];
	volatile int acc;
	struct ibv_mr *mr;

	(void)state;
	/* ib_check_mr_access(): remote write/atomic need local write */
	expect_reg_fail(buf, sizeof(buf), IBV_ACCESS_REMOTE_WRITE, EINVAL);
	expect_reg_fail(buf, sizeof(buf), IBV_ACCESS_REMOTE_ATOMIC, EINVAL);
	expect_reg_fail(buf, sizeof(buf), IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ, EINVAL);
	/* bits outside IB_ACCESS_SUPPORTED (0xff + the optional range 20..29) */
	expect_reg_fail(buf, sizeof(buf), 1 << 8, EINVAL);
	expect_reg_fail(buf, sizeof(buf), 1 << 19, EINVAL);
	expect_reg_fail(buf, sizeof(buf), 1 << 30, EINVAL);
	/* rxe (6.1) has no ODP: EINVAL (measured) */
	expect_reg_fail(buf, sizeof(buf), IBV_ACCESS_ON_DEMAND, EINVAL);
	/* accepted: read-only remote access, MW_BIND/ZERO_BASED/HUGETLB, an optional bit */
	acc = IBV_ACCESS_REMOTE_READ;
	mr = ibv_reg_mr(pd, buf, sizeof(buf), acc);
	assert_non_null(mr);
	assert_int_equal(ibv_dereg_mr(mr), 0);
	acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND | IBV_ACCESS_ZERO_BASED |
	      IBV_ACCESS_HUGETLB | (1 << 29);
	mr = ibv_reg_mr(pd, buf, sizeof(buf), acc);
	assert_non_null(mr);
	assert_int_equal(ibv_dereg_mr(mr), 0);
	/* the constant-access path of the macro reaches the exported ibv_reg_mr */
	mr = ibv_reg_mr(pd, buf, sizeof(buf),
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC);
	assert_non_null(mr);
	assert_int_equal(ibv_dereg_mr(mr), 0);
}

static void test_mr_ranges(void **state)
{
	char *m = mmap(NULL, 4 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct ibv_mr *mr;

	(void)state;
	assert_true(m != MAP_FAILED);
	/* length 0: no page at a page boundary (EINVAL), one page elsewhere (accepted) */
	expect_reg_fail(m, 0, IBV_ACCESS_LOCAL_WRITE, EINVAL);
	mr = ibv_reg_mr(pd, m + 8, 0, IBV_ACCESS_LOCAL_WRITE);
	assert_non_null(mr);
	assert_int_equal(ibv_dereg_mr(mr), 0);
	/* addr + length wraps */
	expect_reg_fail(m, SIZE_MAX - 16, IBV_ACCESS_LOCAL_WRITE, EINVAL);
	/* unmapped pages: NULL, a hole */
	expect_reg_fail(NULL, 4096, IBV_ACCESS_LOCAL_WRITE, EFAULT);
	expect_reg_fail(NULL, 4096, 0, EFAULT);
	assert_int_equal(munmap(m + 2 * page, page), 0);
	expect_reg_fail(m, 4 * page, 0, EFAULT);
	mr = ibv_reg_mr(pd, m, 2 * page, 0);
	assert_non_null(mr);
	assert_int_equal(ibv_dereg_mr(mr), 0);
	/* read-only pages: a writable MR is refused, a read-only one pinned (FOLL_FORCE, 6.1) */
	assert_int_equal(mprotect(m, page, PROT_READ), 0);
	expect_reg_fail(m, page, IBV_ACCESS_LOCAL_WRITE, EFAULT);
	expect_reg_fail(m, page, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE, EFAULT);
	mr = ibv_reg_mr(pd, m, page, IBV_ACCESS_REMOTE_READ);
	assert_non_null(mr);
	assert_int_equal(ibv_dereg_mr(mr), 0);
	/* PROT_NONE private pages: the same (see probes/VM-CHECKS.md) */
	assert_int_equal(mprotect(m, page, PROT_NONE), 0);
	expect_reg_fail(m, page, IBV_ACCESS_LOCAL_WRITE, EFAULT);
	mr = ibv_reg_mr(pd, m, page, 0);
	assert_non_null(mr);
	assert_int_equal(ibv_dereg_mr(mr), 0);
	munmap(m, 2 * page);
	munmap(m + 3 * page, page);
}

/* Drops CAP_IPC_LOCK from the effective set (a root test run has it), so RLIMIT_MEMLOCK
 * applies as to an ordinary user. */
static void drop_ipc_lock(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d))
		return;
	d[CAP_IPC_LOCK / 32].effective &= ~(1u << (CAP_IPC_LOCK % 32));
	syscall(SYS_capset, &h, d);
}

static void test_memlock(void **state)
{
	struct rlimit old, rl;
	static char buf[4 * 4096] __attribute__((aligned(4096)));
	struct ibv_mr *a;

	(void)state;
	drop_ipc_lock();
	assert_int_equal(getrlimit(RLIMIT_MEMLOCK, &old), 0);
	rl = old;
	rl.rlim_cur = 2 * (rlim_t)page;
	if (setrlimit(RLIMIT_MEMLOCK, &rl)) {
		skip();
		return;
	}
	a = ibv_reg_mr(pd, buf, 16, 0); /* one page */
	assert_non_null(a);
	errno = 0;
	assert_null(ibv_reg_mr(pd, buf, (size_t)page + 16, 0)); /* two more pages: over */
	assert_int_equal(errno, ENOMEM);
	rl.rlim_cur = 0;
	assert_int_equal(setrlimit(RLIMIT_MEMLOCK, &rl), 0);
	errno = 0;
	assert_null(ibv_reg_mr(pd, buf, 16, 0));
	assert_int_equal(errno, EPERM);
	assert_int_equal(ibv_dereg_mr(a), 0);
	/* lowering the soft limit is reversible: the hard limit is untouched */
	assert_int_equal(setrlimit(RLIMIT_MEMLOCK, &old), 0);
}

static void test_dealloc_busy(void **state)
{
	static char buf[64];
	struct ibv_pd *p = ibv_alloc_pd(ctx);
	struct ibv_mr *mr;

	(void)state;
	mr = ibv_reg_mr(p, buf, sizeof(buf), 0);
	assert_non_null(mr);
	errno = 0;
	/* an errno value, not -1, and errno set as the failed write(2) leaves it */
	assert_int_equal(ibv_dealloc_pd(p), EBUSY);
	assert_int_equal(errno, EBUSY);
	assert_int_equal(ibv_dereg_mr(mr), 0);
	assert_int_equal(ibv_dealloc_pd(p), 0);
}

static void test_rereg(void **state)
{
	static char buf[64];
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);

	(void)state;
	assert_non_null(mr);
	/* libibverbs' input checks */
	errno = 0;
	assert_int_equal(ibv_rereg_mr(mr, 1 << 3, NULL, NULL, 0, 0), IBV_REREG_MR_ERR_INPUT);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, NULL, 0, 0),
			 IBV_REREG_MR_ERR_INPUT);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(ibv_rereg_mr(mr, 0, NULL, NULL, 0, IBV_ACCESS_LOCAL_WRITE),
			 IBV_REREG_MR_ERR_INPUT);
	assert_int_equal(errno, EINVAL);
	/* rxe's provider has no rereg_mr */
	errno = 0;
	assert_int_equal(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
				      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ),
			 IBV_REREG_MR_ERR_CMD);
	assert_int_equal(errno, EOPNOTSUPP);
	assert_int_equal(ibv_dereg_mr(mr), 0);
}

/* Closing a context with PDs and MRs still in it cleans them up (the kernel's ufile cleanup). */
static void test_close_with_objects(void **state)
{
	static char buf[64];
	struct ibv_context *c = vt_open("rxe0");
	struct ibv_pd *p = ibv_alloc_pd(c);

	(void)state;
	assert_non_null(p);
	assert_non_null(ibv_reg_mr(p, buf, sizeof(buf), 0));
	assert_non_null(ibv_reg_mr(p, buf, sizeof(buf), 0));
	assert_int_equal(ibv_close_device(c), 0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pd),
		cmocka_unit_test(test_mr_keys),
		cmocka_unit_test(test_mr_iova),
		cmocka_unit_test(test_mr_access_flags),
		cmocka_unit_test(test_mr_ranges),
		cmocka_unit_test(test_memlock),
		cmocka_unit_test(test_dealloc_busy),
		cmocka_unit_test(test_rereg),
		cmocka_unit_test(test_close_with_objects),
	};

	(void)argc;
	verbs_test_init(argv, "rxe-ref.fabric", NULL, NULL);
	return cmocka_run_group_tests(tests, setup, teardown);
}
