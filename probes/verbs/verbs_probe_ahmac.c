/* Verbs probe for the AH / QP destination MAC resolution (ib_resolve_eth_dmac), meant for the
 * two-VM reference (scripts/rxe-vm run --two: A = 192.0.2.65 on eth0, B = 192.0.2.66, a real
 * ARP link between them) and runnable on the emulator (rxe-ref2.fabric, node A), where
 * "ms" is real time and so not comparable: there the wait runs in virtual time and
 * emu/verbs/tests/test_verbs_ah_neigh.c checks it. Prints, per call, the return value, errno
 * on its own line after the call, and the wall-clock milliseconds it took:
 *  - create_ah towards B (ARP), again (cache), towards 192.0.2.70 (nobody: the open question
 *    is errno ETIMEDOUT after ~1000 ms, from addr.c's process_one_req);
 *  - RC INIT -> RTR towards 192.0.2.71 (nobody), then towards B with hop_limit 1, and the
 *    hop limit query_qp reports after it (the route's, 64, if ib_resolve_unicast_gid_dmac's
 *    `grh->hop_limit = hop_limit` reaches rxe's AV).
 * See probes/VM-CHECKS.md. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <infiniband/verbs.h>

static double ms_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) * 1e3 + (double)(t1.tv_nsec - t0->tv_nsec) / 1e6;
}

static union ibv_gid v4(uint8_t d)
{
	union ibv_gid g = { .raw = { [10] = 0xff, [11] = 0xff, 192, 0, 2, d } };

	return g;
}

static void ah(struct ibv_pd *pd, const char *label, union ibv_gid dgid)
{
	struct ibv_ah_attr a = { .is_global = 1, .port_num = 1,
				 .grh = { .dgid = dgid, .sgid_index = 1, .hop_limit = 1 } };
	struct timespec t0;
	struct ibv_ah *h;
	int err;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	errno = 0;
	h = ibv_create_ah(pd, &a);
	err = errno;
	printf("create_ah %s -> %s errno=%d ms=%.0f\n", label, h ? "OK" : "NULL", h ? 0 : err,
	       ms_since(&t0));
	if (h)
		ibv_destroy_ah(h);
}

static void rtr(struct ibv_qp *qp, const char *label, union ibv_gid dgid)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr i;
	struct timespec t0;
	int rc, err;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = 0x11;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.sgid_index = 1;
	a.ah_attr.grh.hop_limit = 1;
	a.ah_attr.grh.dgid = dgid;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	errno = 0;
	rc = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
					   IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
					   IBV_QP_MIN_RNR_TIMER);
	err = errno;
	printf("modify_qp RTR %s -> %d errno=%d ms=%.0f\n", label, rc, rc ? err : 0,
	       ms_since(&t0));
	memset(&a, 0, sizeof(a));
	ibv_query_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV, &i);
	printf("query_qp %s: state=%d hop_limit=%u\n", label, a.qp_state, a.ah_attr.grh.hop_limit);
}

int main(void)
{
	struct ibv_device **l = ibv_get_device_list(NULL);
	struct ibv_context *ctx = l && l[0] ? ibv_open_device(l[0]) : NULL;
	struct ibv_pd *pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	struct ibv_cq *cq = ctx ? ibv_create_cq(ctx, 4, NULL, NULL, 0) : NULL;
	struct ibv_qp_init_attr qi = { .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = 2, .max_recv_wr = 2,
						.max_send_sge = 1, .max_recv_sge = 1 } };
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1 };
	struct ibv_qp *qp;

	if (!pd || !cq) {
		fprintf(stderr, "no device\n");
		return 1;
	}
	qi.send_cq = qi.recv_cq = cq;
	ah(pd, "B 192.0.2.66", v4(66));
	ah(pd, "B again", v4(66));
	ah(pd, "nobody 192.0.2.70", v4(70));
	qp = ibv_create_qp(pd, &qi);
	if (!qp || ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
						IBV_QP_ACCESS_FLAGS)) {
		fprintf(stderr, "qp\n");
		return 1;
	}
	rtr(qp, "nobody 192.0.2.71", v4(71));
	rtr(qp, "B 192.0.2.66", v4(66));
	ibv_destroy_qp(qp);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(l);
	return 0;
}
