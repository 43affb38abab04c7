/* SRQ limit events as rxe_resp.c get_srq_wqe() raises them: the limit (create's srq_limit or
 * modify's IBV_SRQ_LIMIT) arms; the receive WQE whose removal leaves fewer than srq_limit WQEs
 * posts one IBV_EVENT_SRQ_LIMIT_REACHED with element.srq, and the limit goes back to 0 (query
 * reports it). Posting or arming never raises it: only taking a WQE does. Loopback UD on rxe0
 * of fixtures/rxe-ref.fabric, one QP sending to a QP on the SRQ. */
#include "config.h"

#include <fcntl.h>

#include "emu/verbs/tests/verbs_test.h"

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct ibv_mr *mr;
static uint8_t mem[8192];
static union ibv_gid gid1;

static struct ibv_qp *ud_qp(struct ibv_srq *srq)
{
	struct ibv_qp_init_attr a = {
		.send_cq = cq, .recv_cq = cq, .srq = srq, .qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr qa = { .qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = 5 };
	struct ibv_qp *qp = ibv_create_qp(pd, &a);

	assert_non_null(qp);
	assert_int_equal(ibv_modify_qp(qp, &qa, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
							IBV_QP_QKEY), 0);
	qa.qp_state = IBV_QPS_RTR;
	assert_int_equal(ibv_modify_qp(qp, &qa, IBV_QP_STATE), 0);
	qa.qp_state = IBV_QPS_RTS;
	assert_int_equal(ibv_modify_qp(qp, &qa, IBV_QP_STATE | IBV_QP_SQ_PSN), 0);
	return qp;
}

static void post_srq(struct ibv_srq *srq, int n)
{
	for (int i = 0; i < n; i++) {
		struct ibv_sge sg = { (uintptr_t)mem + 4096, 256, mr->lkey };
		struct ibv_recv_wr w = { .wr_id = (uint64_t)i, .sg_list = &sg, .num_sge = 1 }, *bad;

		assert_int_equal(ibv_post_srq_recv(srq, &w, &bad), 0);
	}
}

/* One UD message from `from` to `to`, received through the SRQ. */
static void one_message(struct ibv_qp *from, struct ibv_ah *ah, struct ibv_qp *to)
{
	struct ibv_sge sg = { (uintptr_t)mem, 16, mr->lkey };
	struct ibv_send_wr w = { .wr_id = 99, .sg_list = &sg, .num_sge = 1, .opcode = IBV_WR_SEND,
				 .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc[2];
	int got = 0;

	w.wr.ud.ah = ah;
	w.wr.ud.remote_qpn = to->qp_num;
	w.wr.ud.remote_qkey = 5;
	assert_int_equal(ibv_post_send(from, &w, &bad), 0);
	while (got < 2) {
		assert_int_equal(vt_poll_wait(cq, &wc[got]), 1);
		assert_int_equal(wc[got].status, IBV_WC_SUCCESS);
		got++;
	}
	assert_int_equal(wc[0].opcode == IBV_WC_RECV || wc[1].opcode == IBV_WC_RECV, 1);
}

static uint32_t limit_of(struct ibv_srq *srq)
{
	struct ibv_srq_attr a;

	assert_int_equal(ibv_query_srq(srq, &a), 0);
	return a.srq_limit;
}

static void expect_no_event(void)
{
	struct ibv_async_event ev;

	errno = 0;
	assert_int_equal(ibv_get_async_event(ctx, &ev), -1);
	assert_int_equal(errno, EAGAIN);
}

static void expect_limit_event(struct ibv_srq *srq)
{
	struct ibv_async_event ev;

	assert_int_equal(ibv_get_async_event(ctx, &ev), 0);
	assert_int_equal(ev.event_type, IBV_EVENT_SRQ_LIMIT_REACHED);
	assert_ptr_equal(ev.element.srq, srq);
	ibv_ack_async_event(&ev);
}

static void test_modify_arms(void **state)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 8, .max_sge = 1 } };
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1,
				  .grh = { .sgid_index = 1, .hop_limit = 64 } };
	struct ibv_srq_attr m = { .srq_limit = 3 };
	struct ibv_srq *srq;
	struct ibv_qp *tx, *rx;
	struct ibv_ah *ah;

	(void)state;
	srq = ibv_create_srq(pd, &sa);
	assert_non_null(srq);
	tx = ud_qp(NULL);
	rx = ud_qp(srq);
	aa.grh.dgid = gid1;
	ah = ibv_create_ah(pd, &aa);
	assert_non_null(ah);
	assert_int_equal(limit_of(srq), 0);
	post_srq(srq, 4);
	/* not armed: draining to 3 raises nothing */
	one_message(tx, ah, rx);
	expect_no_event();
	/* armed at 3 with 3 queued: posting and arming raise nothing, 3 < 3 is false */
	assert_int_equal(ibv_modify_srq(srq, &m, IBV_SRQ_LIMIT), 0);
	assert_int_equal(limit_of(srq), 3);
	post_srq(srq, 1);
	one_message(tx, ah, rx); /* 4 -> 3 */
	expect_no_event();
	assert_int_equal(limit_of(srq), 3);
	one_message(tx, ah, rx); /* 3 -> 2: the event, and the limit disarms */
	expect_limit_event(srq);
	expect_no_event();
	assert_int_equal(limit_of(srq), 0);
	one_message(tx, ah, rx); /* 2 -> 1: disarmed */
	expect_no_event();
	/* arming above the current count waits for the next WQE taken */
	m.srq_limit = 5;
	assert_int_equal(ibv_modify_srq(srq, &m, IBV_SRQ_LIMIT), 0);
	expect_no_event();
	assert_int_equal(limit_of(srq), 5);
	one_message(tx, ah, rx); /* 1 -> 0 */
	expect_limit_event(srq);
	assert_int_equal(limit_of(srq), 0);
	expect_no_event();
	assert_int_equal(srq->events_completed, 2);
	assert_int_equal(ibv_destroy_ah(ah), 0);
	assert_int_equal(ibv_destroy_qp(rx), 0);
	assert_int_equal(ibv_destroy_qp(tx), 0);
	assert_int_equal(ibv_destroy_srq(srq), 0);
}

/* rxe_srq_from_init() keeps create's srq_limit: armed from the start. */
static void test_create_arms(void **state)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 8, .max_sge = 1, .srq_limit = 2 } };
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1,
				  .grh = { .sgid_index = 1, .hop_limit = 64 } };
	struct ibv_srq *srq;
	struct ibv_qp *tx, *rx;
	struct ibv_ah *ah;

	(void)state;
	srq = ibv_create_srq(pd, &sa);
	assert_non_null(srq);
	assert_int_equal(limit_of(srq), 2);
	tx = ud_qp(NULL);
	rx = ud_qp(srq);
	aa.grh.dgid = gid1;
	ah = ibv_create_ah(pd, &aa);
	assert_non_null(ah);
	post_srq(srq, 2);
	one_message(tx, ah, rx); /* 2 -> 1 < 2 */
	expect_limit_event(srq);
	assert_int_equal(limit_of(srq), 0);
	one_message(tx, ah, rx);
	expect_no_event();
	assert_int_equal(srq->events_completed, 1);
	assert_int_equal(ibv_destroy_ah(ah), 0);
	assert_int_equal(ibv_destroy_qp(rx), 0);
	assert_int_equal(ibv_destroy_qp(tx), 0);
	assert_int_equal(ibv_destroy_srq(srq), 0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_modify_arms),
		cmocka_unit_test(test_create_arms),
	};
	int rc;

	(void)argc;
	setenv("RDMAEMU_QUIESCE_US", "0", 0);
	verbs_test_init(argv, "rxe-ref.fabric", NULL, NULL);
	ctx = vt_open("rxe0");
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	mr = ibv_reg_mr(pd, mem, sizeof(mem), IBV_ACCESS_LOCAL_WRITE);
	if (!pd || !cq || !mr || ibv_query_gid(ctx, 1, 1, &gid1) ||
	    fcntl(ctx->async_fd, F_SETFL, fcntl(ctx->async_fd, F_GETFL) | O_NONBLOCK))
		return 99;
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	ibv_dereg_mr(mr);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return rc;
}
