/* rkey_probe: a process's memory is reachable from another process only through a valid rkey,
 * within the registered bounds and with the rights registered.
 *
 *   rkey_probe -s PORT [-a ADDR]   the target: two MRs, and the verdict on its memory at the end
 *   rkey_probe -c PORT [-a ADDR]   the requester: one RDMA READ, WRITE or atomic per case
 *
 * The target registers two 4 KiB MRs: "ro" (LOCAL_WRITE | REMOTE_READ, filled with 0xa5) and
 * "rw" (every remote right, filled with 0x5a), and gives their addresses and rkeys to the
 * requester over TCP on ADDR:PORT (127.0.0.1 unless -a says otherwise). Each case runs on a
 * fresh RC QP pair (an access error takes both QPs to ERR); its QP grants every remote right,
 * so that the MR alone decides. The requester prints, per case, the completion's status
 * (ibv_wc_status_str and number) and its QP's state after it; the target prints its QP's
 * state after each case and, at the end, whether its memory holds exactly what the allowed
 * operations left (the first 16 bytes of rw written with 0x11, the next 8 the fetch-and-add's
 * sum, everything else untouched). Both open the first device, port 1, GID index 1 (the
 * IPv4-mapped RoCEv2 GID of rxe-ref and of the reference VM's rxe0).
 * Plain libibverbs: the same binary runs on the real stack and under `rdmaemu run`. */
#include <arpa/inet.h>
#include <errno.h>
#include <infiniband/verbs.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define LEN 4096

struct dest {
	uint32_t qpn, psn;
	union ibv_gid gid;
};

struct target {
	uint64_t ro_addr, rw_addr;
	uint32_t ro_rkey, rw_rkey;
};

enum where { RO, RW, BAD_KEY };

static const struct one_case {
	const char *name;
	enum ibv_wr_opcode op;
	enum where mr;
	int64_t off; /* from the MR's start */
	uint32_t len;
} cases[] = {
	{ "write rw, in bounds", IBV_WR_RDMA_WRITE, RW, 0, 16 },
	{ "read ro, in bounds", IBV_WR_RDMA_READ, RO, 0, 16 },
	{ "fetch_add rw, in bounds", IBV_WR_ATOMIC_FETCH_AND_ADD, RW, 16, 8 },
	{ "write ro (no REMOTE_WRITE)", IBV_WR_RDMA_WRITE, RO, 0, 16 },
	{ "fetch_add ro (no REMOTE_ATOMIC)", IBV_WR_ATOMIC_FETCH_AND_ADD, RO, 0, 8 },
	{ "read, bad rkey", IBV_WR_RDMA_READ, BAD_KEY, 0, 16 },
	{ "write, bad rkey", IBV_WR_RDMA_WRITE, BAD_KEY, 0, 16 },
	{ "fetch_add, bad rkey", IBV_WR_ATOMIC_FETCH_AND_ADD, BAD_KEY, 0, 8 },
	{ "write rw, 8 bytes past the end", IBV_WR_RDMA_WRITE, RW, LEN - 8, 16 },
	{ "read rw, from 8 bytes before", IBV_WR_RDMA_READ, RW, -8, 16 },
	{ "fetch_add rw, at the end", IBV_WR_ATOMIC_FETCH_AND_ADD, RW, LEN, 8 },
	{ "read ro, past the end", IBV_WR_RDMA_READ, RO, 1, LEN },
};
#define NCASES (sizeof(cases) / sizeof(cases[0]))

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;

static void die(const char *what)
{
	fprintf(stderr, "rkey_probe: %s: %s\n", what, strerror(errno));
	exit(2);
}

static int side_channel(int server, int port, const char *addr)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int one = 1, s = socket(AF_INET, SOCK_STREAM, 0);

	if (s < 0 || inet_pton(AF_INET, addr, &sa.sin_addr) != 1)
		die("socket");
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

static void put(int fd, const void *p, size_t n)
{
	if (send(fd, p, n, 0) != (ssize_t)n)
		die("send");
}

static void get(int fd, void *p, size_t n)
{
	if (recv(fd, p, n, MSG_WAITALL) != (ssize_t)n)
		die("recv");
}

static struct ibv_qp *new_qp(void)
{
	struct ibv_qp_init_attr ia = { .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = 2, .max_recv_wr = 2,
						.max_send_sge = 1, .max_recv_sge = 1 } };
	struct ibv_qp *qp = ibv_create_qp(pd, &ia);

	if (!qp)
		die("create_qp");
	return qp;
}

/* INIT with every remote right, RTR, RTS: the MR alone decides what the peer may do. */
static void connect_qp(struct ibv_qp *qp, uint32_t psn, const struct dest *d)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
						    IBV_ACCESS_REMOTE_ATOMIC };

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
	a.sq_psn = psn;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
				  IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC))
		die("modify RTS");
}

static int qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr i;

	if (ibv_query_qp(qp, &a, IBV_QP_STATE, &i))
		die("query_qp");
	return (int)a.qp_state;
}

/* A fresh QP connected to the peer's for one case: our dest out, theirs in. */
static struct ibv_qp *pair_up(int fd, int server)
{
	struct ibv_qp *qp = new_qp();
	struct dest mine = { .qpn = qp->qp_num, .psn = server ? 0x1234 : 0x5678 }, theirs;

	if (ibv_query_gid(ctx, 1, 1, &mine.gid))
		die("query_gid 1");
	put(fd, &mine, sizeof(mine));
	get(fd, &theirs, sizeof(theirs));
	connect_qp(qp, mine.psn, &theirs);
	return qp;
}

static bool all(const uint8_t *p, size_t n, uint8_t v)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != v)
			return false;
	return true;
}

static int target(int fd, uint8_t *mem)
{
	struct ibv_mr *ro = ibv_reg_mr(pd, mem, LEN, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	struct ibv_mr *rw = ibv_reg_mr(pd, mem + LEN, LEN,
				       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
					       IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	struct target t;
	uint64_t sum, want_sum;
	bool ok;
	char c;

	if (!ro || !rw)
		die("reg_mr");
	t = (struct target){ (uintptr_t)mem, (uintptr_t)mem + LEN, ro->rkey, rw->rkey };
	put(fd, &t, sizeof(t));
	for (size_t i = 0; i < NCASES; i++) {
		struct ibv_qp *qp = pair_up(fd, 1);

		get(fd, &c, 1); /* the requester has its completion */
		printf("target: %s: qp state %d\n", cases[i].name, qp_state(qp));
		if (ibv_destroy_qp(qp))
			die("destroy_qp");
		put(fd, &c, 1);
	}
	/* the allowed operations' traces, and nothing else */
	memcpy(&sum, mem + LEN + 16, 8);
	memset(&want_sum, 0x5a, 8);
	want_sum += 1;
	ok = all(mem, LEN, 0xa5) && all(mem + LEN, 16, 0x11) && sum == want_sum &&
	     all(mem + LEN + 24, LEN - 24, 0x5a);
	printf("target: memory as the allowed operations left it: %s\n", ok ? "yes" : "NO");
	ibv_dereg_mr(ro);
	ibv_dereg_mr(rw);
	return ok ? 0 : 1;
}

static int requester(int fd, uint8_t *mem)
{
	struct ibv_mr *mr = ibv_reg_mr(pd, mem, LEN, IBV_ACCESS_LOCAL_WRITE);
	struct target t;
	char c = 'd';

	if (!mr)
		die("reg_mr");
	memset(mem, 0x11, LEN);
	get(fd, &t, sizeof(t));
	for (size_t i = 0; i < NCASES; i++) {
		const struct one_case *k = &cases[i];
		struct ibv_qp *qp = pair_up(fd, 0);
		struct ibv_sge sge = { .addr = (uintptr_t)mem, .length = k->len, .lkey = mr->lkey };
		struct ibv_send_wr wr = { .wr_id = i + 1, .sg_list = &sge, .num_sge = 1,
					  .opcode = k->op, .send_flags = IBV_SEND_SIGNALED }, *bad;
		uint64_t base = k->mr == RO ? t.ro_addr : t.rw_addr;
		uint32_t rkey = k->mr == RO ? t.ro_rkey : k->mr == RW ? t.rw_rkey
						     /* another index, the same key byte */
						     : t.rw_rkey ^ 0x00ffff00u;
		uint64_t addr = base + (uint64_t)k->off;
		struct timespec t0, now;
		struct ibv_wc wc;
		int n;

		if (k->op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
			wr.wr.atomic.remote_addr = addr;
			wr.wr.atomic.rkey = rkey;
			wr.wr.atomic.compare_add = 1;
		} else {
			wr.wr.rdma.remote_addr = addr;
			wr.wr.rdma.rkey = rkey;
		}
		if (ibv_post_send(qp, &wr, &bad))
			die("post_send");
		clock_gettime(CLOCK_MONOTONIC, &t0);
		do {
			n = ibv_poll_cq(cq, 1, &wc);
			clock_gettime(CLOCK_MONOTONIC, &now);
		} while (n == 0 && now.tv_sec - t0.tv_sec < 30);
		if (n < 0)
			die("poll_cq");
		if (n == 0)
			printf("%s: no completion in 30 s; qp state %d\n", k->name, qp_state(qp));
		else
			printf("%s: %s (%d); qp state %d\n", k->name, ibv_wc_status_str(wc.status),
			       (int)wc.status, qp_state(qp));
		put(fd, &c, 1);
		get(fd, &c, 1); /* the target has looked at its QP */
		if (ibv_destroy_qp(qp))
			die("destroy_qp");
	}
	ibv_dereg_mr(mr);
	return 0;
}

int main(int argc, char **argv)
{
	int server = -1, port = 0, opt, fd, rc;
	const char *addr = "127.0.0.1";
	struct ibv_device **list;
	uint8_t *mem;

	while ((opt = getopt(argc, argv, "s:c:a:")) != -1)
		switch (opt) {
		case 'a': addr = optarg; break;
		case 's': server = 1; port = atoi(optarg); break;
		case 'c': server = 0; port = atoi(optarg); break;
		default: server = -1; break;
		}
	if (server < 0 || port <= 0) {
		fprintf(stderr, "usage: rkey_probe -s PORT [-a ADDR] | -c PORT [-a ADDR]\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	list = ibv_get_device_list(NULL);
	if (!list || !list[0])
		die("no device");
	ctx = ibv_open_device(list[0]);
	if (!ctx)
		die("open_device");
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	if (!pd || !cq || posix_memalign((void **)&mem, 4096, 2 * LEN))
		die("pd/cq/memory");
	memset(mem, 0xa5, LEN);
	memset(mem + LEN, 0x5a, LEN);
	fd = side_channel(server, port, addr);
	rc = server ? target(fd, mem) : requester(fd, mem);
	close(fd);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	free(mem);
	return rc;
}
