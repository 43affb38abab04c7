/* RC reliability on a faulty wire (IBTA 9.7.5 / 9.7.6, rxe's retry machinery): hosts A, B and
 * C of the fabric below in one process (rdmaemu_ctl_open_host_devices). A/rxe0 - B/rxe0 loses,
 * duplicates and reorders frames: SENDs, WRITEs, READs and FETCH_AND_ADDs must still complete
 * in order, exactly once, with exact data. A/rxe1 - C/rxe0 goes down once the QPs are connected
 * (modify_qp to RTR resolves the peer's MAC by ARP, as the kernel does, so the link must carry
 * that first): the retransmission timer and retry_cnt must end the oldest WR with
 * RETRY_EXC_ERR at an exact virtual time. The same
 * seed twice (two fresh processes running the lossy workload) gives the same completions and
 * the same virtual end time. */
#include "config.h"

#include <endian.h>
#include <limits.h>
#include <stdbool.h>
#include <sys/wait.h>

#include "emu/sim/fabric.h" /* struct emu_faults */
#include "emu/verbs/tests/verbs_test.h"

#define MEM (2u << 20)
#define NMSG 200
#define WINDOW 16
#define NRECV 48
#define SLOT 4096

static const char fabric[] =
	"seed 7\n"
	"resolver files\n"
	"host A\n"
	"  device rxe0 link=eth\n"
	"  netdev eth0 mac=02:00:00:00:02:01 mtu=1500 rdma=rxe0/1\n"
	"    addr 192.0.2.65/28\n"
	"  device rxe1 link=eth\n"
	"  netdev eth1 mac=02:00:00:00:02:03 mtu=1500 rdma=rxe1/1\n"
	"    addr 192.0.2.81/28\n"
	"host B\n"
	"  device rxe0 link=eth\n"
	"  netdev eth0 mac=02:00:00:00:02:02 mtu=1500 rdma=rxe0/1\n"
	"    addr 192.0.2.66/28\n"
	"host C\n"
	"  device rxe0 link=eth\n"
	"  netdev eth0 mac=02:00:00:00:02:04 mtu=1500 rdma=rxe0/1\n"
	"    addr 192.0.2.82/28\n"
	"link A/rxe0/1 B/rxe0/1 delay=1us loss=10% duplicate=5% reorder=5%\n"
	"link A/rxe1/1 C/rxe0/1\n";

struct host {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	uint8_t *mem;
	struct ibv_mr *mr;
	union ibv_gid gid;
};

/* 0: A/rxe0, 1: A/rxe1, 2: B/rxe0, 3: C/rxe0 (the device list's order) */
static struct ibv_context *ctxs[4];

static uint64_t now_ns(void)
{
	static int (*now)(uint64_t *);
	uint64_t t = 0;

	if (!now)
		now = (int (*)(uint64_t *))dlsym(RTLD_DEFAULT, "rdmaemu_ctl_now_ns");
	assert_non_null(now);
	assert_int_equal(now(&t), 0);
	return t;
}

/* Takes link `link` of the fabric down (or up) through the engine's wire: the library
 * exports its emu_ internals, looked up like the control API. */
static void link_set_down(int link, bool down)
{
	void *(*get)(void) = (void *(*)(void))dlsym(RTLD_DEFAULT, "emu_engine_get");
	void (*lock)(void *) = (void (*)(void *))dlsym(RTLD_DEFAULT, "emu_engine_lock");
	void (*unlock)(void *) = (void (*)(void *))dlsym(RTLD_DEFAULT, "emu_engine_unlock");
	void *(*topo)(void *) = (void *(*)(void *))dlsym(RTLD_DEFAULT, "emu_engine_topology");
	void *(*wire)(void *) = (void *(*)(void *))dlsym(RTLD_DEFAULT, "emu_topology_wire");
	int (*getf)(void *, int, struct emu_faults *) =
		(int (*)(void *, int, struct emu_faults *))dlsym(RTLD_DEFAULT,
								  "emu_wire_get_faults");
	int (*setf)(void *, int, const struct emu_faults *) =
		(int (*)(void *, int, const struct emu_faults *))dlsym(RTLD_DEFAULT,
									"emu_wire_set_faults");
	struct emu_faults f;
	void *e, *w;

	assert_true(get && lock && unlock && topo && wire && getf && setf);
	e = get();
	assert_non_null(e);
	lock(e);
	w = wire(topo(e));
	assert_int_equal(getf(w, link, &f), 0);
	f.down = down;
	assert_int_equal(setf(w, link, &f), 0);
	unlock(e);
}

static void host_up(struct host *h, struct ibv_context *ctx)
{
	struct ibv_qp_init_attr a = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 64, .max_recv_wr = 64, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};

	h->ctx = ctx;
	assert_int_equal(ibv_query_gid(ctx, 1, 1, &h->gid), 0);
	h->pd = ibv_alloc_pd(ctx);
	assert_non_null(h->pd);
	h->cq = ibv_create_cq(ctx, 256, NULL, NULL, 0);
	assert_non_null(h->cq);
	h->mem = calloc(1, MEM);
	assert_non_null(h->mem);
	h->mr = ibv_reg_mr(h->pd, h->mem, MEM,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	assert_non_null(h->mr);
	a.send_cq = a.recv_cq = h->cq;
	h->qp = ibv_create_qp(h->pd, &a);
	assert_non_null(h->qp);
}

static void host_down(struct host *h)
{
	assert_int_equal(ibv_destroy_qp(h->qp), 0);
	assert_int_equal(ibv_dereg_mr(h->mr), 0);
	assert_int_equal(ibv_destroy_cq(h->cq), 0);
	assert_int_equal(ibv_dealloc_pd(h->pd), 0);
	free(h->mem);
}

static void rc_connect(struct host *h, const struct host *peer, uint8_t timeout,
		       uint8_t retry_cnt)
{
	const struct vt_conn c = {
		.dest_qpn = peer->qp->qp_num, .dgid = peer->gid,
		.psn = 0xfffff0, /* the PSNs wrap during the run */
		.access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			  IBV_ACCESS_REMOTE_ATOMIC,
		.rd_atomic = 4, .min_rnr_timer = 1, .timeout = timeout, .retry_cnt = retry_cnt,
		.rnr_retry = 7,
	};

	vt_connect(h->qp, &c);
}

static void pair_up(struct host *a, struct host *b, int ia, int ib, uint8_t timeout,
		    uint8_t retry_cnt)
{
	host_up(a, ctxs[ia]);
	host_up(b, ctxs[ib]);
	rc_connect(a, b, timeout, retry_cnt);
	rc_connect(b, a, timeout, retry_cnt);
}

static void post_send(struct host *h, struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad = NULL;

	assert_int_equal(ibv_post_send(h->qp, wr, &bad), 0);
}

static void post_recv_slot(struct host *h, unsigned slot)
{
	struct ibv_sge sg = { (uintptr_t)h->mem + (size_t)slot * SLOT, SLOT, h->mr->lkey };
	struct ibv_recv_wr w = { .wr_id = slot, .sg_list = &sg, .num_sge = 1 }, *bad;

	assert_int_equal(ibv_post_recv(h->qp, &w, &bad), 0);
}

static uint8_t pat(unsigned msg, unsigned i)
{
	return (uint8_t)(msg * 31 + i * 7 + 3);
}

static uint32_t msg_len(unsigned i)
{
	return (i * 997u) % 3000u + 1; /* 1..3000: one to three packets at MTU 1024 */
}

static uint64_t fnv(uint64_t h, uint64_t v)
{
	for (int i = 0; i < 8; i++, v >>= 8)
		h = (h ^ (v & 0xff)) * 1099511628211ull;
	return h;
}

/* (a) NMSG RC messages, every third an RDMA WRITE, the rest SENDs of mixed sizes, at most
 * WINDOW outstanding. Returns a digest of the completion order (A's send CQEs and B's
 * receive CQEs as polled) for the determinism check. */
static uint64_t lossy_workload(void)
{
	struct host a, b;
	unsigned next = 0, done = 0, next_send = 0, nrecv = 0;
	uint64_t digest = 1469598103934665603ull;
	long spins = 0;

	pair_up(&a, &b, 0, 2, 8, 7);
	for (unsigned s = 0; s < NRECV; s++)
		post_recv_slot(&b, s);
	while (done < NMSG) {
		struct ibv_wc wc;

		while (next < NMSG && next - done < WINDOW) {
			uint32_t len = msg_len(next);
			uint8_t *src = a.mem + (size_t)next * SLOT;
			struct ibv_sge sg = { (uintptr_t)src, len, a.mr->lkey };
			struct ibv_send_wr w = { .wr_id = next, .sg_list = &sg, .num_sge = 1,
						 .send_flags = IBV_SEND_SIGNALED };

			for (uint32_t i = 0; i < len; i++)
				src[i] = pat(next, i);
			if (next % 3 == 2) {
				w.opcode = IBV_WR_RDMA_WRITE;
				w.wr.rdma.remote_addr = (uintptr_t)b.mem + (1u << 20) +
							(size_t)next * SLOT;
				w.wr.rdma.rkey = b.mr->rkey;
			} else {
				w.opcode = IBV_WR_SEND;
			}
			post_send(&a, &w);
			next++;
		}
		if (ibv_poll_cq(a.cq, 1, &wc)) {
			assert_int_equal(wc.status, IBV_WC_SUCCESS);
			assert_int_equal(wc.wr_id, done); /* in order */
			assert_int_equal(wc.byte_len, msg_len(done));
			if (done % 3 == 2) {
				assert_int_equal(wc.opcode, IBV_WC_RDMA_WRITE);
				/* the WRITE landed, byte exact */
				assert_memory_equal(b.mem + (1u << 20) + (size_t)done * SLOT,
						    a.mem + (size_t)done * SLOT, msg_len(done));
			}
			digest = fnv(digest, wc.wr_id);
			done++;
			continue;
		}
		if (ibv_poll_cq(b.cq, 1, &wc)) {
			const uint8_t *got = b.mem + wc.wr_id * SLOT;

			assert_int_equal(wc.status, IBV_WC_SUCCESS);
			assert_int_equal(wc.opcode, IBV_WC_RECV);
			while (next_send % 3 == 2)
				next_send++;
			/* each SEND exactly once, in order, byte exact */
			assert_int_equal(wc.byte_len, msg_len(next_send));
			for (uint32_t i = 0; i < wc.byte_len; i++)
				if (got[i] != pat(next_send, i))
					fail_msg("SEND %u byte %u", next_send, i);
			digest = fnv(digest, 1000000 + wc.wr_id);
			next_send++;
			nrecv++;
			post_recv_slot(&b, (unsigned)wc.wr_id);
			continue;
		}
		assert_true(++spins < 50000000L); /* an empty poll lets virtual time move */
	}
	/* the receives of the last SENDs may come after the sender's completions */
	while (next_send < NMSG && next_send % 3 == 2)
		next_send++;
	for (long i = 0; next_send < NMSG && i < 10000000L; i++) {
		struct ibv_wc wc;

		if (!ibv_poll_cq(b.cq, 1, &wc))
			continue;
		assert_int_equal(wc.status, IBV_WC_SUCCESS);
		assert_int_equal(wc.byte_len, msg_len(next_send));
		digest = fnv(digest, 1000000 + wc.wr_id);
		next_send++;
		nrecv++;
		while (next_send < NMSG && next_send % 3 == 2)
			next_send++;
	}
	assert_int_equal(nrecv, NMSG - NMSG / 3);
	host_down(&a);
	host_down(&b);
	return digest;
}

static void test_lossy_send_write(void **state)
{
	(void)state;
	lossy_workload();
}

/* (a2) The fault matrix's RC cell in one process: 2000 SENDs of 3000 bytes (three packets
 * at MTU 1024), at most 8 outstanding, the ACK timeout rdma_cm gives on RoCE (19: 2.1 s)
 * and retry_cnt 6, where each timeout uses a retry and progress gives them all back (rxe's
 * reset_retry_counters): the transfer must end with every message once, in order, byte
 * exact, never with RETRY_EXC_ERR, although far more than 6 timeouts happen in it. */
static void test_lossy_retry_cnt_bounded(void **state)
{
	struct host a, b;
	unsigned next = 0, done = 0, got = 0;
	const unsigned n = 2000, len = 3000;
	long spins = 0;
	uint64_t t0;

	(void)state;
	pair_up(&a, &b, 0, 2, 19, 6);
	t0 = now_ns();
	for (unsigned s = 0; s < NRECV; s++)
		post_recv_slot(&b, s);
	while (done < n || got < n) {
		struct ibv_wc wc;

		while (next < n && next - done < 8) {
			uint8_t *src = a.mem + (size_t)(next % 8) * SLOT;
			struct ibv_sge sg = { (uintptr_t)src, len, a.mr->lkey };
			struct ibv_send_wr w = { .wr_id = next, .sg_list = &sg, .num_sge = 1,
						 .opcode = IBV_WR_SEND,
						 .send_flags = IBV_SEND_SIGNALED };

			for (uint32_t i = 0; i < len; i++)
				src[i] = pat(next, i);
			post_send(&a, &w);
			next++;
		}
		if (ibv_poll_cq(a.cq, 1, &wc)) {
			assert_int_equal(wc.status, IBV_WC_SUCCESS);
			assert_int_equal(wc.wr_id, done);
			done++;
			continue;
		}
		if (ibv_poll_cq(b.cq, 1, &wc)) {
			const uint8_t *m = b.mem + wc.wr_id * SLOT;

			assert_int_equal(wc.status, IBV_WC_SUCCESS);
			assert_int_equal(wc.byte_len, len);
			for (uint32_t i = 0; i < len; i++)
				if (m[i] != pat(got, i))
					fail_msg("SEND %u byte %u", got, i);
			got++;
			post_recv_slot(&b, (unsigned)wc.wr_id);
			continue;
		}
		assert_true(++spins < 50000000L);
	}
	/* more than retry_cnt timeouts of 2.1 s each: the counter was given back */
	assert_true(now_ns() - t0 > 7 * (4096ull << 19));
	host_down(&a);
	host_down(&b);
}

/* poll one CQE from h's CQ, letting virtual time move */
/* (b) FETCH_AND_ADD x50 on the lossy link: every one executes once (duplicates are answered
 * from the responder resources), in PSN order, so the k-th fetches k * addend. */
static void test_lossy_atomics(void **state)
{
	struct host a, b;
	const uint64_t add = 3;
	unsigned next = 0, done = 0;
	uint64_t v = 0;

	(void)state;
	pair_up(&a, &b, 0, 2, 8, 7);
	memcpy(b.mem + 64, &v, 8);
	while (done < 50) {
		struct ibv_wc wc;

		while (next < 50 && next - done < 8) {
			struct ibv_sge sg = { (uintptr_t)a.mem + next * 8, 8, a.mr->lkey };
			struct ibv_send_wr w = { .wr_id = next, .sg_list = &sg, .num_sge = 1,
						 .opcode = IBV_WR_ATOMIC_FETCH_AND_ADD,
						 .send_flags = IBV_SEND_SIGNALED,
						 .wr.atomic = { (uintptr_t)b.mem + 64, add, 0,
								b.mr->rkey } };

			post_send(&a, &w);
			next++;
		}
		assert_int_equal(vt_poll_wait(a.cq, &wc), 1);
		assert_int_equal(wc.status, IBV_WC_SUCCESS);
		assert_int_equal(wc.opcode, IBV_WC_FETCH_ADD);
		assert_int_equal(wc.wr_id, done);
		memcpy(&v, a.mem + done * 8, 8);
		assert_int_equal(v, done * add);
		done++;
	}
	memcpy(&v, b.mem + 64, 8);
	assert_int_equal(v, 50 * add);
	host_down(&a);
	host_down(&b);
}

/* (c) READs of up to five packets on the lossy link: the data is exact (lost responses are
 * replayed from B's memory). */
static void test_lossy_reads(void **state)
{
	struct host a, b;
	unsigned next = 0, done = 0;

	(void)state;
	pair_up(&a, &b, 0, 2, 8, 7);
	for (size_t i = 0; i < MEM; i++)
		b.mem[i] = (uint8_t)(i * 13 + (i >> 12));
	while (done < 40) {
		struct ibv_wc wc;

		while (next < 40 && next - done < 8) {
			uint32_t len = (next * 1409u) % 5000u + 1;
			struct ibv_sge sg = { (uintptr_t)a.mem + (size_t)next * 8192, len,
					      a.mr->lkey };
			struct ibv_send_wr w = { .wr_id = next, .sg_list = &sg, .num_sge = 1,
						 .opcode = IBV_WR_RDMA_READ,
						 .send_flags = IBV_SEND_SIGNALED,
						 .wr.rdma = { (uintptr_t)b.mem + (size_t)next * 8192,
							      b.mr->rkey } };

			post_send(&a, &w);
			next++;
		}
		assert_int_equal(vt_poll_wait(a.cq, &wc), 1);
		assert_int_equal(wc.status, IBV_WC_SUCCESS);
		assert_int_equal(wc.opcode, IBV_WC_RDMA_READ);
		assert_int_equal(wc.wr_id, done);
		assert_int_equal(wc.byte_len, (done * 1409u) % 5000u + 1);
		assert_memory_equal(a.mem + (size_t)done * 8192, b.mem + (size_t)done * 8192,
				    wc.byte_len);
		done++;
	}
	host_down(&a);
	host_down(&b);
}

/* (d) the link to C is down: retry_cnt 2, timeout 10 (4.096 us * 2^10 = 4194304 ns). The
 * first transmission and two retransmissions each wait one timeout, then the oldest WR
 * completes with RETRY_EXC_ERR and the QP's other WRs are flushed. */
static void test_link_down_retry_exceeded(void **state)
{
	struct host a, c;
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qi;
	struct ibv_wc wc;
	uint64_t t0, t1;

	(void)state;
	pair_up(&a, &c, 1, 3, 10, 2);
	link_set_down(1, true);
	memset(a.mem, 0x11, 100);
	t0 = now_ns();
	for (unsigned i = 0; i < 3; i++) {
		struct ibv_sge sg = { (uintptr_t)a.mem, 100, a.mr->lkey };
		struct ibv_send_wr w = { .wr_id = 10 + i, .sg_list = &sg, .num_sge = 1,
					 .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED };

		post_send(&a, &w);
	}
	assert_int_equal(vt_poll_wait(a.cq, &wc), 1);
	t1 = now_ns();
	assert_int_equal(wc.status, IBV_WC_RETRY_EXC_ERR);
	assert_int_equal(wc.wr_id, 10);
	assert_int_equal(t1 - t0, 3 * (4096ull << 10)); /* 1 + retry_cnt transmissions */
	for (unsigned i = 1; i < 3; i++) {
		assert_int_equal(vt_poll_wait(a.cq, &wc), 1);
		assert_int_equal(wc.status, IBV_WC_WR_FLUSH_ERR);
		assert_int_equal(wc.wr_id, 10 + i);
	}
	assert_int_equal(ibv_poll_cq(a.cq, 1, &wc), 0);
	assert_int_equal(ibv_query_qp(a.qp, &qa, IBV_QP_STATE, &qi), 0);
	assert_int_equal(qa.qp_state, IBV_QPS_ERR);
	assert_int_equal(ibv_poll_cq(c.cq, 1, &wc), 0);
	link_set_down(1, false);
	host_down(&a);
	host_down(&c);
}

/* This program's path (main's argv[0]): not /proc/self/exe, which is the valgrind tool when
 * the test runs under make check-valgrind. */
static const char *self_path;

/* (e) the lossy workload in two fresh processes with the fabric's seed: the same completion
 * order and the same virtual end time. */
static void run_child(char *out, size_t n)
{
	FILE *p;
	size_t got;

	setenv("RDMAEMU_RETRY_DIGEST", "1", 1);
	p = popen(self_path, "r");
	unsetenv("RDMAEMU_RETRY_DIGEST");
	assert_non_null(p);
	got = fread(out, 1, n - 1, p);
	out[got] = 0;
	assert_int_equal(pclose(p), 0);
	assert_true(got > 0);
}

static void test_determinism(void **state)
{
	char a[128], b[128];

	(void)state;
	run_child(a, sizeof(a));
	run_child(b, sizeof(b));
	fprintf(stderr, "lossy workload: %s", a);
	assert_string_equal(a, b);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lossy_send_write),
		cmocka_unit_test(test_lossy_retry_cnt_bounded),
		cmocka_unit_test(test_lossy_atomics),
		cmocka_unit_test(test_lossy_reads),
		cmocka_unit_test(test_link_down_retry_exceeded),
		cmocka_unit_test(test_determinism),
	};
	int (*open_host)(const char *);
	struct ibv_device **l;
	int n, rc;

	(void)argc;
	self_path = argv[0];
	setenv("RDMAEMU_QUIESCE_US", "0", 0);
	verbs_test_init(argv, NULL, fabric, "A");
	open_host = (int (*)(const char *))dlsym(RTLD_DEFAULT, "rdmaemu_ctl_open_host_devices");
	if (!open_host || open_host("B") || open_host("C")) {
		perror("rdmaemu_ctl_open_host_devices");
		return 99;
	}
	l = ibv_get_device_list(&n);
	if (!l || n != 4)
		return 99;
	for (int i = 0; i < 4; i++) {
		ctxs[i] = ibv_open_device(l[i]);
		if (!ctxs[i])
			return 99;
	}
	ibv_free_device_list(l);
	if (getenv("RDMAEMU_RETRY_DIGEST")) {
		/* the child of test_determinism: one run of the lossy workload */
		uint64_t d = lossy_workload();

		printf("completions %016llx end %llu ns\n", (unsigned long long)d,
		       (unsigned long long)now_ns());
		rc = 0;
	} else {
		rc = cmocka_run_group_tests(tests, NULL, NULL);
	}
	for (int i = 0; i < 4; i++)
		ibv_close_device(ctxs[i]);
	return rc;
}
