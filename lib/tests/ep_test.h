/* Synchronous rdma_create_ep endpoints on rxe-ref's 192.0.2.1 for the in-process tests: the
 * RDMA_PS_TCP addrinfo of a port (passive or not) and a small RC QP's attributes. */
#ifndef RDMAEMU_LIB_TESTS_EP_TEST_H
#define RDMAEMU_LIB_TESTS_EP_TEST_H

#include <string.h>
#include <rdma/rdma_cma.h>

static inline struct rdma_addrinfo *ep_test_addrinfo(const char *port, int passive)
{
	struct rdma_addrinfo hints, *res = NULL;

	memset(&hints, 0, sizeof(hints));
	hints.ai_port_space = RDMA_PS_TCP;
	hints.ai_flags = passive ? RAI_PASSIVE : 0;
	assert_int_equal(rdma_getaddrinfo("192.0.2.1", port, &hints, &res), 0);
	return res;
}

static inline struct ibv_qp_init_attr ep_test_qp_attr(void)
{
	struct ibv_qp_init_attr a;

	memset(&a, 0, sizeof(a));
	a.cap.max_send_wr = a.cap.max_recv_wr = 4;
	a.cap.max_send_sge = a.cap.max_recv_sge = 1;
	a.sq_sig_all = 1;
	return a;
}

#endif
