/* Device list, names, GUIDs, indices, contexts and their file descriptors on rxe-ref.fabric,
 * against the values kernel rxe shows in scripts/rxe-vm (docs/reference/kernel-rxe.md §3). */
#include "config.h"

#include <endian.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>

#include "emu/verbs/tests/verbs_test.h"

static void test_device_list(void **state)
{
	int n = -1;
	struct ibv_device **l = ibv_get_device_list(&n);

	(void)state;
	assert_non_null(l);
	assert_int_equal(n, 2);
	assert_null(l[2]);
	assert_string_equal(ibv_get_device_name(l[0]), "rxe0");
	assert_string_equal(ibv_get_device_name(l[1]), "rxe1");
	assert_string_equal(l[0]->name, "rxe0");
	assert_string_equal(l[0]->dev_name, "uverbs0");
	assert_string_equal(l[1]->dev_name, "uverbs1");
	assert_string_equal(l[0]->dev_path, "/sys/class/infiniband_verbs/uverbs0");
	assert_string_equal(l[0]->ibdev_path, "/sys/class/infiniband/rxe0");
	assert_int_equal(l[0]->node_type, IBV_NODE_CA);
	assert_int_equal(l[0]->transport_type, IBV_TRANSPORT_IB);
	/* the VM's `ibv_devices`: 000000fffe000101, 000000fffe000102; `rdma dev`: 0: rxe0 */
	assert_true(be64toh(ibv_get_device_guid(l[0])) == 0x000000fffe000101ull);
	assert_true(be64toh(ibv_get_device_guid(l[1])) == 0x000000fffe000102ull);
	assert_int_equal(ibv_get_device_index(l[0]), 0);
	assert_int_equal(ibv_get_device_index(l[1]), 1);
	ibv_free_device_list(l);

	/* a NULL count is allowed; a second list shares the same device objects */
	l = ibv_get_device_list(NULL);
	assert_non_null(l);
	assert_string_equal(l[0]->name, "rxe0");
	ibv_free_device_list(l);
}

static void test_open_close(void **state)
{
	struct ibv_device **l = ibv_get_device_list(NULL);
	struct ibv_context *a, *b;
	struct stat st;

	(void)state;
	a = ibv_open_device(l[0]);
	b = ibv_open_device(l[0]);
	ibv_free_device_list(l); /* contexts outlive the list, as in rdma-core */
	assert_non_null(a);
	assert_non_null(b);
	assert_ptr_not_equal(a, b);
	assert_string_equal(a->device->name, "rxe0");
	assert_int_equal(a->num_comp_vectors, 2); /* rxe: num_possible_cpus() of the VM */
	assert_true(a->cmd_fd >= 0 && a->async_fd >= 0);
	assert_int_equal(fstat(a->cmd_fd, &st), 0);
	assert_true(S_ISCHR(st.st_mode));
	assert_true(fcntl(a->async_fd, F_GETFD) & FD_CLOEXEC);
	assert_ptr_equal(a->abi_compat, __VERBS_ABI_IS_EXTENDED);
	assert_int_equal(ibv_close_device(b), 0);
	assert_int_equal(ibv_close_device(a), 0);
}

static void test_async_fd(void **state)
{
	struct ibv_context *ctx = vt_open("rxe0");
	struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };
	struct ibv_async_event ev;

	(void)state;
	assert_int_equal(poll(&pfd, 1, 0), 0); /* nothing happened */
	assert_int_equal(fcntl(ctx->async_fd, F_SETFL, O_NONBLOCK), 0);
	errno = 0;
	assert_int_equal(ibv_get_async_event(ctx, &ev), -1);
	assert_int_equal(errno, EAGAIN);
	assert_int_equal(ibv_close_device(ctx), 0);
}

static void test_comp_channel(void **state)
{
	struct ibv_context *ctx = vt_open("rxe0");
	struct ibv_comp_channel *ch = ibv_create_comp_channel(ctx);
	struct pollfd pfd;

	(void)state;
	assert_non_null(ch);
	assert_ptr_equal(ch->context, ctx);
	assert_int_equal(ch->refcnt, 0);
	pfd = (struct pollfd){ .fd = ch->fd, .events = POLLIN };
	assert_int_equal(poll(&pfd, 1, 0), 0);
	/* a CQ on the channel counts itself in refcnt (verbs_init_cq): destroy is refused */
	ch->refcnt = 1;
	assert_int_equal(ibv_destroy_comp_channel(ch), EBUSY);
	ch->refcnt = 0;
	assert_int_equal(ibv_destroy_comp_channel(ch), 0);
	assert_int_equal(ibv_close_device(ctx), 0);
}

/* Extended verbs the emulator lacks yet are refused by the header's own inline wrappers,
 * which proves that they found (and read) the struct verbs_context. */
static void test_missing_ext_ops(void **state)
{
	struct ibv_context *ctx = vt_open("rxe0");
	struct ibv_cq_init_attr_ex cq_attr = { .cqe = 1 };
	struct ibv_xrcd_init_attr xattr = { 0 };
	struct ibv_values_ex vals = { 0 };
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq_ex *cqx;

	(void)state;
	cqx = ibv_create_cq_ex(ctx, &cq_attr); /* implemented now */
	assert_non_null(cqx);
	assert_int_equal(ibv_destroy_cq(ibv_cq_ex_to_cq(cqx)), 0);
	errno = 0;
	assert_null(ibv_open_xrcd(ctx, &xattr)); /* rxe 6.1: no XRC (kernel-rxe.md §4: error 95) */
	assert_int_equal(errno, EOPNOTSUPP);
	assert_int_equal(ibv_query_rt_values_ex(ctx, &vals), EOPNOTSUPP);
	/* rxe implements memory windows (emu/verbs/mw.c, tests in test_verbs_mw) */
	{
		struct ibv_mw *mw = ibv_alloc_mw(pd, IBV_MW_TYPE_1);

		assert_non_null(mw);
		assert_int_equal(ibv_dealloc_mw(mw), 0);
	}
	/* the fast-path dispatchers exist: poll_cq works on the CQ ring, the posts run the data
	 * path (emu/verbs/tests/test_verbs_datapath.c) */
	assert_non_null(ctx->ops.poll_cq);
	assert_non_null(ctx->ops.post_send);
	assert_non_null(ctx->ops.post_recv);
	assert_non_null(ctx->ops.post_srq_recv);
	assert_int_equal(ibv_dealloc_pd(pd), 0);
	assert_int_equal(ibv_close_device(ctx), 0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_device_list),
		cmocka_unit_test(test_open_close),
		cmocka_unit_test(test_async_fd),
		cmocka_unit_test(test_comp_channel),
		cmocka_unit_test(test_missing_ext_ops),
	};

	(void)argc;
	verbs_test_init(argv, "rxe-ref.fabric", NULL, NULL);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
