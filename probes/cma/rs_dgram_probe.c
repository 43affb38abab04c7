/* The verbs steps of a datagram rsocket's first UD QP (rdma-core's ds_create_qp), one call at
 * a time with its result, then rconnect and rsendto of a datagram rsocket to the same
 * address. On kernel rxe the AH without a GRH that rsockets create towards the QP's own port
 * fails with EINVAL, and rconnect/rsendto report ENOENT (docs/reference/rsockets-rxe.md).
 *   cc -O2 -o rs_dgram_probe probes/cma/rs_dgram_probe.c -lrdmacm -libverbs
 *   scripts/rxe-vm run --copy rs_dgram_probe -- /opt/rdmaemu/rs_dgram_probe 192.0.2.1 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <rdma/rdma_cma.h>
#include <rdma/rsocket.h>

static struct rdma_cm_id *ud_qp(struct sockaddr_in *sin)
{
	struct ibv_qp_init_attr qa;
	struct rdma_cm_id *id;
	int ret;

	ret = rdma_create_id(NULL, &id, NULL, RDMA_PS_UDP);
	printf("rdma_create_id UDP: %d\n", ret);
	ret = rdma_bind_addr(id, (struct sockaddr *)sin);
	printf("rdma_bind_addr: %d port_num %u\n", ret, id->port_num);
	if (ret || !id->verbs)
		return NULL;
	id->recv_cq_channel = ibv_create_comp_channel(id->verbs);
	id->recv_cq = ibv_create_cq(id->verbs, 768, id, id->recv_cq_channel, 0);
	id->send_cq_channel = id->recv_cq_channel;
	id->send_cq = id->recv_cq;
	printf("ibv_create_cq: %s\n", id->recv_cq ? "ok" : "NULL");
	memset(&qa, 0, sizeof qa);
	qa.send_cq = qa.recv_cq = id->recv_cq;
	qa.qp_type = IBV_QPT_UD;
	qa.sq_sig_all = 1;
	qa.cap.max_send_wr = 64;
	qa.cap.max_recv_wr = 64;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 2;
	qa.cap.max_inline_data = 64;
	ret = rdma_create_qp(id, NULL, &qa);
	printf("rdma_create_qp UD: %d errno %d max_inline_data %u\n", ret, ret ? errno : 0,
	       qa.cap.max_inline_data);
	return ret ? NULL : id;
}

static void ah(struct rdma_cm_id *id)
{
	struct ibv_port_attr pa;
	struct ibv_ah_attr aa;
	union ibv_gid gid;
	struct ibv_ah *a;
	int ret;

	ret = ibv_query_port(id->verbs, id->port_num, &pa);
	printf("ibv_query_port: %d lid %u link_layer %u\n", ret, pa.lid, pa.link_layer);
	memset(&aa, 0, sizeof aa);
	aa.dlid = pa.lid;
	aa.port_num = id->port_num;
	errno = 0;
	a = ibv_create_ah(id->pd, &aa);
	printf("ibv_create_ah dlid %u, no GRH: %s errno %d (%s)\n", pa.lid, a ? "ok" : "NULL",
	       errno, strerror(errno));
	if (a)
		ibv_destroy_ah(a);
	ibv_query_gid(id->verbs, id->port_num, 1, &gid);
	aa.is_global = 1;
	aa.grh.dgid = gid;
	aa.grh.sgid_index = 1;
	aa.grh.hop_limit = 64;
	errno = 0;
	a = ibv_create_ah(id->pd, &aa);
	printf("ibv_create_ah with a GRH (sgid_index 1): %s errno %d\n", a ? "ok" : "NULL", errno);
	if (a)
		ibv_destroy_ah(a);
}

int main(int argc, char **argv)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct rdma_cm_id *id;
	int rs, ret;

	inet_pton(AF_INET, argc > 1 ? argv[1] : "192.0.2.1", &sin.sin_addr);
	id = ud_qp(&sin);
	if (!id)
		return 1;
	ah(id);
	rdma_destroy_qp(id);
	rdma_destroy_id(id);

	rs = rsocket(AF_INET, SOCK_DGRAM, 0);
	sin.sin_port = htons(7174);
	errno = 0;
	ret = rconnect(rs, (struct sockaddr *)&sin, sizeof sin);
	printf("rconnect: %d errno %d (%s)\n", ret, errno, strerror(errno));
	errno = 0;
	ret = (int)rsendto(rs, "x", 1, 0, (struct sockaddr *)&sin, sizeof sin);
	printf("rsendto: %d errno %d (%s)\n", ret, errno, strerror(errno));
	rclose(rs);
	return 0;
}
