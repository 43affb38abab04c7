/* rc_retry: what an RC requester sees when its peer process dies, with a retry count below 7
 * (7 means "retry forever" on rxe, which is what perftest and the pingpongs ask for).
 *
 *   rc_retry -s PORT [-a ADDR]                     the peer: connects its QP, then kills
 *                                                  itself
 *   rc_retry -c PORT [-a ADDR] [-r RETRY] [-t TMO] the requester: after the peer's death,
 *                                                  one SEND
 *
 * Both open the first device, port 1, GID index 1 (the IPv4-mapped RoCEv2 GID of rxe-ref and
 * of the reference VM's rxe0) and exchange QPN, PSN and GID over TCP on ADDR:PORT (the peer's address; 127.0.0.1 unless
 * -a says otherwise). The
 * peer reads one byte (the requester's "go"), then SIGKILLs itself: its QP goes away without
 * a word on the wire, so the requester's SEND is never acknowledged. The requester waits for
 * the side channel's EOF, posts the SEND and a second one, and prints each completion's status
 * (ibv_wc_status_str), the time to the first, and the QP state. Exit 0 when the first is
 * IBV_WC_RETRY_EXC_ERR and the second IBV_WC_WR_FLUSH_ERR (the QP in IBV_QPS_ERR), as Linux
 * 6.1's rxe gives (measured in the reference VM: probes/VM-CHECKS.md); 1 otherwise.
 * Plain libibverbs: the same binary runs on the real stack and under `rdmaemu run`. */
#include <arpa/inet.h>
#include <errno.h>
#include <infiniband/verbs.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

struct dest {
	uint32_t qpn, psn;
	union ibv_gid gid;
};

static void die(const char *what)
{
	fprintf(stderr, "rc_retry: %s: %s\n", what, strerror(errno));
	exit(2);
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int side_channel(int server, int port, const char *addr)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int one = 1, s = socket(AF_INET, SOCK_STREAM, 0);

	if (s < 0)
		die("socket");
	if (inet_pton(AF_INET, addr, &sa.sin_addr) != 1)
		die("address");
	if (server) {
		int c;

		setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(s, (struct sockaddr *)&sa, sizeof(sa)) || listen(s, 1))
			die("bind/listen");
		c = accept(s, NULL, NULL);
		if (c < 0)
			die("accept");
		close(s);
		return c;
	}
	for (int i = 0; connect(s, (struct sockaddr *)&sa, sizeof(sa)); i++) {
		if (i == 300)
			die("connect");
		usleep(100000);
	}
	return s;
}

static void xfer(int fd, int server, const struct dest *mine, struct dest *theirs)
{
	if (server) {
		if (recv(fd, theirs, sizeof(*theirs), MSG_WAITALL) != sizeof(*theirs))
			die("recv dest");
		if (send(fd, mine, sizeof(*mine), 0) != sizeof(*mine))
			die("send dest");
	} else {
		if (send(fd, mine, sizeof(*mine), 0) != sizeof(*mine))
			die("send dest");
		if (recv(fd, theirs, sizeof(*theirs), MSG_WAITALL) != sizeof(*theirs))
			die("recv dest");
	}
}

static void connect_qp(struct ibv_qp *qp, const struct dest *mine, const struct dest *d,
		       int retry, int tmo)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qp_access_flags = IBV_ACCESS_REMOTE_WRITE };

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				  IBV_QP_ACCESS_FLAGS))
		die("modify INIT");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = d->qpn;
	a.rq_psn = d->psn;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = d->gid;
	a.ah_attr.grh.sgid_index = 1;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				  IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
				  IBV_QP_MIN_RNR_TIMER))
		die("modify RTR");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = mine->psn;
	a.timeout = (uint8_t)tmo;
	a.retry_cnt = (uint8_t)retry;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
				  IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC))
		die("modify RTS");
}

/* the next completion, or status -1 after 60 s of wall time */
static struct ibv_wc wait_wc(struct ibv_cq *cq)
{
	struct ibv_wc wc;
	double t0 = now_ms();
	int n;

	while ((n = ibv_poll_cq(cq, 1, &wc)) == 0)
		if (now_ms() - t0 > 60000) {
			wc.status = (enum ibv_wc_status)-1;
			return wc;
		}
	if (n < 0)
		die("poll_cq");
	return wc;
}

int main(int argc, char **argv)
{
	int server = -1, port = 0, retry = 1, tmo = 14, opt, fd, ok;
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr qa;
	struct dest mine, theirs;
	static char buf[64];
	char c = 'g';
	const char *addr = "127.0.0.1";
	double t0;

	while ((opt = getopt(argc, argv, "s:c:r:t:a:")) != -1)
		switch (opt) {
		case 'a': addr = optarg; break;
		case 's': server = 1; port = atoi(optarg); break;
		case 'c': server = 0; port = atoi(optarg); break;
		case 'r': retry = atoi(optarg); break;
		case 't': tmo = atoi(optarg); break;
		default: server = -1; break;
		}
	if (server < 0 || port <= 0 || retry < 0 || retry > 7 || tmo < 0 || tmo > 31) {
		fprintf(stderr, "usage: rc_retry -s PORT [-a ADDR] | -c PORT [-a ADDR] "
				"[-r RETRY 0..7] [-t TIMEOUT]\n");
		return 2;
	}
	list = ibv_get_device_list(NULL);
	if (!list || !list[0])
		die("no device");
	ctx = ibv_open_device(list[0]);
	if (!ctx)
		die("open_device");
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	mr = pd ? ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE) : NULL;
	if (!pd || !cq || !mr)
		die("pd/cq/mr");
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = ia.recv_cq = cq;
	ia.qp_type = IBV_QPT_RC;
	ia.cap.max_send_wr = ia.cap.max_recv_wr = 2;
	ia.cap.max_send_sge = ia.cap.max_recv_sge = 1;
	qp = ibv_create_qp(pd, &ia);
	if (!qp)
		die("create_qp");
	memset(&mine, 0, sizeof(mine));
	mine.qpn = qp->qp_num;
	mine.psn = server ? 0x1234 : 0x5678;
	if (ibv_query_gid(ctx, 1, 1, &mine.gid))
		die("query_gid 1");
	fd = side_channel(server, port, addr);
	xfer(fd, server, &mine, &theirs);
	connect_qp(qp, &mine, &theirs, retry, tmo);
	if (server) {
		/* connected: wait for the requester's go, then die as a crash would */
		if (recv(fd, &c, 1, MSG_WAITALL) != 1)
			die("recv go");
		kill(getpid(), SIGKILL);
		return 3;
	}
	if (send(fd, &c, 1, 0) != 1)
		die("send go");
	while (recv(fd, &c, 1, 0) > 0) /* EOF: the peer is gone, its QP with it */
		;
	for (int i = 0; i < 2; i++) {
		struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = 16, .lkey = mr->lkey };
		struct ibv_send_wr wr = { .wr_id = (uint64_t)i + 1, .sg_list = &sge, .num_sge = 1,
					  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED };
		struct ibv_send_wr *bad;

		if (ibv_post_send(qp, &wr, &bad))
			die(i ? "post_send after the error" : "post_send");
	}
	t0 = now_ms();
	{
		struct ibv_wc w1 = wait_wc(cq);
		double dt = now_ms() - t0;
		struct ibv_wc w2 = wait_wc(cq);
		struct ibv_qp_init_attr ia2;

		if (ibv_query_qp(qp, &qa, IBV_QP_STATE, &ia2))
			die("query_qp");
		printf("retry_cnt %d timeout %d: wr %llu %s (%d) after %.0f ms; wr %llu %s (%d); "
		       "qp state %d\n", retry, tmo, (unsigned long long)w1.wr_id,
		       ibv_wc_status_str(w1.status), (int)w1.status, dt,
		       (unsigned long long)w2.wr_id, ibv_wc_status_str(w2.status),
		       (int)w2.status, (int)qa.qp_state);
		ok = w1.wr_id == 1 && w1.status == IBV_WC_RETRY_EXC_ERR && w2.wr_id == 2 &&
		     w2.status == IBV_WC_WR_FLUSH_ERR && qa.qp_state == IBV_QPS_ERR;
	}
	ibv_destroy_qp(qp);
	ibv_dereg_mr(mr);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	return ok ? 0 : 1;
}
