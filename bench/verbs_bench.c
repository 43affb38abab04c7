/* RC data-path figures of the emulated libibverbs.so.1, in-process, each beside a plain memcpy
 * of the same sizes measured in the same run. Built like an application: the
 * system's <infiniband/verbs.h> and -libverbs; bench/run-verbs-bench points the dynamic linker
 * at the build tree's emulated library and the process at fixtures/rxe-ref.fabric.
 *
 * Two RC QPs of one device (rxe0) are connected to each other through one of the port's own
 * GIDs (loopback, as emu/verbs/tests/test_verbs_datapath.c does), or with --wire, B's on the
 * device of another host over the fabric's link. Printed, one line a figure:
 *   bench rc_write size=N gbps=.. gbytes_per_s=.. memcpy_gbytes_per_s=.. ratio=..
 *   bench rc_send  size=N gbps=.. gbytes_per_s=.. memcpy_gbytes_per_s=.. ratio=..
 *   bench rc_{send,write}_rate size=8 inline=0|1 msgs_per_s=.. ns_per_msg=..
 *   bench rc_send_lat size=8 usec_half_rtt=..
 *   bench verbs: 1MiB write = X% of memcpy (goal 70%), small msgs = Y M/s (goal 5 M/s)
 *   bench verbs_fastpath wqes=N   (emulator only: send WQEs its loopback fast path ran)
 * GB are 10^9 bytes; gbps is 10^9 bits/s. Wall time (CLOCK_MONOTONIC) is read here only.
 *
 * Usage: verbs_bench [--quick] [--bw] [--wire HOST] [--sizes LIST] [--device NAME]
 *                    [--gid-index N]
 *   LIST: comma-separated sizes, each with an optional K or M suffix (binary).
 *   --bw: the bandwidth lines only (no message rates, no latency): for profiling them.
 *   --wire HOST: B's QP on the device of that name of fabric host HOST, opened in this process
 *   too (rdmaemu_ctl_open_host_devices), so the frames cross the fabric's link (and its
 *   capture, with RDMAEMU_PCAP) instead of looping back inside one device. */
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/bench_clock.h"

#include <infiniband/verbs.h>

#define MAX_SIZES 32
#define SQ_DEPTH 256
#define RQ_DEPTH 256
#define CQ_DEPTH 1024
#define WINDOW 64  /* WRs posted per round (fewer for large messages) */
#define SIG_EVERY 16
#define MAX_INLINE 64
#define SMALL 8

static const size_t default_sizes[] = { 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576,
					4194304 };

struct opts {
	double min_s;         /* run each figure at least this long... */
	uint64_t byte_budget; /* ...or until this many bytes have moved */
	uint64_t msg_budget;  /* message-rate / latency cap */
	size_t sizes[MAX_SIZES];
	int nsizes;
	const char *device;
	int gid_index;
	bool bw_only;
	const char *wire; /* B on this host's device, the frames on the fabric's link */
};

struct side {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	union ibv_gid gid;
	struct ibv_cq *scq, *rcq;
	struct ibv_qp *qp;
	uint8_t *buf;
	struct ibv_mr *mr;
};

static struct side A, B;
static size_t buf_len;
static enum ibv_mtu path_mtu;
static uint64_t (*fast_count)(void); /* the emulator's count of fast-path WQEs, if any */

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("verbs_bench: ", stderr);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static double wall_s(void)
{
	return (double)bench_clock_ns() * 1e-9;
}

/* ---- set-up ---------------------------------------------------------------------------- */

static void side_init(struct side *s)
{
	struct ibv_qp_init_attr a = {
		.qp_type = IBV_QPT_RC, .sq_sig_all = 0,
		.cap = { .max_send_wr = SQ_DEPTH, .max_recv_wr = RQ_DEPTH, .max_send_sge = 1,
			 .max_recv_sge = 1, .max_inline_data = MAX_INLINE },
	};

	s->scq = ibv_create_cq(s->ctx, CQ_DEPTH, NULL, NULL, 0);
	s->rcq = ibv_create_cq(s->ctx, CQ_DEPTH, NULL, NULL, 0);
	if (!s->scq || !s->rcq)
		die("ibv_create_cq: %s", strerror(errno));
	s->buf = aligned_alloc(4096, buf_len);
	if (!s->buf)
		die("out of memory for %zu bytes", buf_len);
	memset(s->buf, 0x5a, buf_len); /* touch every page before measuring */
	s->mr = ibv_reg_mr(s->pd, s->buf, buf_len, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
						  IBV_ACCESS_REMOTE_READ);
	if (!s->mr)
		die("ibv_reg_mr(%zu): %s", buf_len, strerror(errno));
	a.send_cq = s->scq;
	a.recv_cq = s->rcq;
	s->qp = ibv_create_qp(s->pd, &a);
	if (!s->qp)
		die("ibv_create_qp: %s", strerror(errno));
}

static void modify(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask, const char *what)
{
	int e = ibv_modify_qp(qp, a, mask);

	if (e)
		die("ibv_modify_qp(%s): %s", what, strerror(e));
}

static void rc_connect(struct ibv_qp *qp, uint32_t dqpn, const union ibv_gid *dgid,
		       int gid_index)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
						    IBV_ACCESS_REMOTE_READ };

	modify(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS,
	       "INIT");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = path_mtu;
	a.dest_qp_num = dqpn;
	a.rq_psn = 0;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 1;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = *dgid;
	a.ah_attr.grh.sgid_index = (uint8_t)gid_index;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	modify(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			       IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER,
	       "RTR");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	modify(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			       IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC,
	       "RTS");
}

/* Opens the side's device, its PD and GID; the path MTU becomes the smaller port's. */
static void side_open(struct side *s, struct ibv_device *d, const struct opts *o)
{
	struct ibv_port_attr pa;

	s->ctx = ibv_open_device(d);
	if (!s->ctx)
		die("ibv_open_device(%s): %s", ibv_get_device_name(d), strerror(errno));
	if (ibv_query_port(s->ctx, 1, &pa))
		die("ibv_query_port: %s", strerror(errno));
	if (s == &A || pa.active_mtu < path_mtu)
		path_mtu = pa.active_mtu;
	if (ibv_query_gid(s->ctx, 1, o->gid_index, &s->gid))
		die("ibv_query_gid(%d): %s", o->gid_index, strerror(errno));
	s->pd = ibv_alloc_pd(s->ctx);
	if (!s->pd)
		die("ibv_alloc_pd: %s", strerror(errno));
}

/* A and B on the device named o->device, or with --wire, B on that of host o->wire (listed
 * after the attached host's devices). */
static void setup(const struct opts *o)
{
	struct ibv_device **l, *da = NULL, *db = NULL;

	if (o->wire) {
		int (*open_host)(const char *) = (int (*)(const char *))dlsym(
			RTLD_DEFAULT, "rdmaemu_ctl_open_host_devices");

		if (!open_host)
			die("--wire needs the emulator (run through bench/run-verbs-bench)");
		if (open_host(o->wire))
			die("rdmaemu_ctl_open_host_devices(%s): %s", o->wire, strerror(errno));
	}
	l = ibv_get_device_list(NULL);
	if (!l)
		die("ibv_get_device_list: %s (run through bench/run-verbs-bench)", strerror(errno));
	for (int i = 0; l[i]; i++)
		if (!strcmp(ibv_get_device_name(l[i]), o->device)) {
			if (!da)
				da = l[i];
			db = l[i];
		}
	if (!da || (o->wire && db == da))
		die("no device %s%s%s (run through bench/run-verbs-bench)", o->device,
		    o->wire ? " on host " : "", o->wire ? o->wire : "");
	side_open(&A, da, o);
	if (o->wire) {
		side_open(&B, db, o);
	} else {
		B.ctx = A.ctx;
		B.pd = A.pd;
		B.gid = A.gid;
	}
	ibv_free_device_list(l);
	buf_len = 4096;
	for (int i = 0; i < o->nsizes; i++)
		if (o->sizes[i] > buf_len)
			buf_len = (o->sizes[i] + 4095) & ~(size_t)4095;
	side_init(&A);
	side_init(&B);
	rc_connect(A.qp, B.qp->qp_num, &B.gid, o->gid_index);
	rc_connect(B.qp, A.qp->qp_num, &A.gid, o->gid_index);
}

static void side_fini(struct side *s)
{
	int e;

	if ((e = ibv_destroy_qp(s->qp)) || (e = ibv_dereg_mr(s->mr)) ||
	    (e = ibv_destroy_cq(s->scq)) || (e = ibv_destroy_cq(s->rcq)))
		die("teardown: %s", strerror(e));
	free(s->buf);
}

static void teardown(void)
{
	int e;

	side_fini(&A);
	side_fini(&B);
	if (B.ctx != A.ctx &&
	    ((e = ibv_dealloc_pd(B.pd)) || (e = ibv_close_device(B.ctx))))
		die("teardown: %s", strerror(e));
	if ((e = ibv_dealloc_pd(A.pd)) || (e = ibv_close_device(A.ctx)))
		die("teardown: %s", strerror(e));
}

/* ---- posting and polling ----------------------------------------------------------------- */

static void post_send(struct side *s, enum ibv_wr_opcode op, size_t len, bool signaled,
		      bool inl, uint64_t id)
{
	struct ibv_sge sg = { (uintptr_t)s->buf, (uint32_t)len, s->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = id, .sg_list = &sg, .num_sge = 1, .opcode = op,
				  .send_flags = (signaled ? IBV_SEND_SIGNALED : 0) |
						(inl ? IBV_SEND_INLINE : 0) },
			   *bad = NULL;
	struct side *peer = s == &A ? &B : &A;
	int e;

	if (op == IBV_WR_RDMA_WRITE) {
		wr.wr.rdma.remote_addr = (uintptr_t)peer->buf;
		wr.wr.rdma.rkey = peer->mr->rkey;
	}
	if ((e = ibv_post_send(s->qp, &wr, &bad)))
		die("ibv_post_send(len %zu): %s", len, strerror(e));
}

static void post_recv(struct side *s, size_t len, uint64_t id)
{
	struct ibv_sge sg = { (uintptr_t)s->buf, (uint32_t)len, s->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sg, .num_sge = 1 }, *bad = NULL;
	int e;

	if ((e = ibv_post_recv(s->qp, &wr, &bad)))
		die("ibv_post_recv(len %zu): %s", len, strerror(e));
}

/* Polls cq until n completions, each of which must be a success. */
static void poll_n(struct ibv_cq *cq, int n, const char *what)
{
	struct ibv_wc wc[32];

	while (n > 0) {
		int got = ibv_poll_cq(cq, n < 32 ? n : 32, wc);

		if (got < 0)
			die("ibv_poll_cq(%s): %d", what, got);
		for (int i = 0; i < got; i++)
			if (wc[i].status != IBV_WC_SUCCESS)
				die("%s: completion wr_id %" PRIu64 " status %s (%d), vendor_err %u",
				    what, wc[i].wr_id, ibv_wc_status_str(wc[i].status),
				    (int)wc[i].status, wc[i].vendor_err);
		n -= got;
	}
}

/* ---- figures ----------------------------------------------------------------------------- */

static int window_for(size_t size)
{
	size_t w = (16u << 20) / size; /* at most 16 MiB per round */

	return w >= WINDOW ? WINDOW : w < 1 ? 1 : (int)w;
}

/* One round: `w` messages of `size` bytes from A to B, every SIG_EVERY-th and the last one
 * signaled; returns when every signaled send (and, for SEND, every receive) completed. */
static void round_msgs(enum ibv_wr_opcode op, size_t size, int w, bool inl)
{
	int sig = 0;

	if (op == IBV_WR_SEND)
		for (int i = 0; i < w; i++)
			post_recv(&B, size, (uint64_t)i);
	for (int i = 0; i < w; i++) {
		bool s = (i + 1) % SIG_EVERY == 0 || i == w - 1;

		post_send(&A, op, size, s, inl, (uint64_t)i);
		sig += s;
	}
	poll_n(A.scq, sig, op == IBV_WR_SEND ? "send" : "write");
	if (op == IBV_WR_SEND)
		poll_n(B.rcq, w, "recv");
}

static void round_memcpy(size_t size, int w)
{
	for (int i = 0; i < w; i++) {
		memcpy(B.buf, A.buf, size);
		__asm__ __volatile__("" ::: "memory"); /* each copy happens */
	}
}

struct result {
	uint64_t msgs, bytes;
	double s;
};

/* Repeats rounds until min_s has elapsed or the budget is spent (at least one round). */
static struct result measure(const struct opts *o, enum ibv_wr_opcode op, size_t size, bool inl,
			     bool is_memcpy, uint64_t msg_cap)
{
	int w = window_for(size);
	struct result r = { 0 };
	double t0;

	/* a warm-up round, not counted */
	if (is_memcpy)
		round_memcpy(size, w);
	else
		round_msgs(op, size, w, inl);
	t0 = wall_s();
	do {
		if (is_memcpy)
			round_memcpy(size, w);
		else
			round_msgs(op, size, w, inl);
		r.msgs += (uint64_t)w;
		r.bytes += (uint64_t)w * size;
		r.s = wall_s() - t0;
	} while (r.s < o->min_s && r.bytes < o->byte_budget && r.msgs < msg_cap);
	return r;
}

static double gbytes(struct result r)
{
	return (double)r.bytes / r.s / 1e9;
}

static double bw_line(const struct opts *o, const char *name, enum ibv_wr_opcode op, size_t size)
{
	struct result mc = measure(o, op, size, false, true, UINT64_MAX);
	struct result v = measure(o, op, size, false, false, UINT64_MAX);
	double ratio = gbytes(v) / gbytes(mc);

	printf("bench %s size=%zu gbps=%.2f gbytes_per_s=%.3f memcpy_gbytes_per_s=%.3f "
	       "ratio=%.3f msgs=%" PRIu64 " secs=%.3f\n",
	       name, size, gbytes(v) * 8, gbytes(v), gbytes(mc), ratio, v.msgs, v.s);
	fflush(stdout);
	return ratio;
}

static double rate_line(const struct opts *o, const char *name, enum ibv_wr_opcode op, bool inl)
{
	struct result v = measure(o, op, SMALL, inl, false, o->msg_budget);
	double rate = (double)v.msgs / v.s;

	printf("bench %s size=%d inline=%d msgs_per_s=%.0f mmsgs_per_s=%.3f ns_per_msg=%.1f "
	       "msgs=%" PRIu64 "\n",
	       name, SMALL, inl, rate, rate / 1e6, 1e9 / rate, v.msgs);
	fflush(stdout);
	return rate;
}

/* Ping-pong: A sends 8 bytes, B polls its receive, replies, A polls its receive. Sends are
 * signaled every SIG_EVERY-th iteration (and then their completion is reaped). */
static void latency_line(const struct opts *o)
{
	uint64_t n = 0;
	double t0, dt;

	for (int i = 0; i < 2; i++) {
		post_recv(&A, SMALL, 0);
		post_recv(&B, SMALL, 0);
	}
	t0 = wall_s();
	do {
		bool s = (n + 1) % SIG_EVERY == 0;

		post_send(&A, IBV_WR_SEND, SMALL, s, true, n);
		poll_n(B.rcq, 1, "lat recv B");
		post_recv(&B, SMALL, n);
		post_send(&B, IBV_WR_SEND, SMALL, s, true, n);
		poll_n(A.rcq, 1, "lat recv A");
		post_recv(&A, SMALL, n);
		if (s) {
			poll_n(A.scq, 1, "lat send A");
			poll_n(B.scq, 1, "lat send B");
		}
		n++;
		dt = wall_s() - t0;
	} while (dt < o->min_s && n < o->msg_budget);
	/* leave the queues empty: drain any outstanding signaled sends (none) and the 2 receives
	 * still posted on each side are flushed when the QPs are destroyed */
	printf("bench rc_send_lat size=%d inline=1 usec_half_rtt=%.3f iters=%" PRIu64 "\n", SMALL,
	       dt * 1e6 / (double)n / 2, n);
	fflush(stdout);
}

/* ---- options ----------------------------------------------------------------------------- */

static void usage(void)
{
	fprintf(stderr, "usage: verbs_bench [--quick] [--bw] [--wire HOST] [--sizes N[K|M][,...]] "
			"[--device NAME] [--gid-index N]\n");
	exit(2);
}

static void parse_sizes(struct opts *o, const char *arg)
{
	char *copy = strdup(arg), *save = NULL, *t;

	if (!copy)
		die("out of memory");
	o->nsizes = 0;
	for (t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		char *end;
		unsigned long long v = strtoull(t, &end, 0);

		if (*end == 'K' || *end == 'k')
			v <<= 10, end++;
		else if (*end == 'M' || *end == 'm')
			v <<= 20, end++;
		if (*end || v < 1 || v > (1ull << 30) || o->nsizes == MAX_SIZES)
			usage();
		o->sizes[o->nsizes++] = (size_t)v;
	}
	free(copy);
	if (!o->nsizes)
		usage();
}

int main(int argc, char **argv)
{
	struct opts o = { .min_s = 0.2, .byte_budget = 8ull << 30, .msg_budget = 20000000,
			  .device = "rxe0", .gid_index = 1 };
	double r1m = -1, best = 0;
	const char *best_name = "";
	bool emulated;

	memcpy(o.sizes, default_sizes, sizeof(default_sizes));
	o.nsizes = (int)(sizeof(default_sizes) / sizeof(*default_sizes));
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--quick")) {
			o.min_s = 0.03;
			o.byte_budget = 256ull << 20;
			o.msg_budget = 200000;
		} else if (!strcmp(argv[i], "--wire") && i + 1 < argc) {
			o.wire = argv[++i];
		} else if (!strcmp(argv[i], "--bw")) {
			o.bw_only = true;
		} else if (!strcmp(argv[i], "--sizes") && i + 1 < argc) {
			parse_sizes(&o, argv[++i]);
		} else if (!strcmp(argv[i], "--device") && i + 1 < argc) {
			o.device = argv[++i];
		} else if (!strcmp(argv[i], "--gid-index") && i + 1 < argc) {
			o.gid_index = atoi(argv[++i]);
		} else {
			usage();
		}
	}
	emulated = dlsym(RTLD_DEFAULT, "rdmaemu_ctl_attach") != NULL;
	fast_count = (uint64_t (*)(void))dlsym(RTLD_DEFAULT, "rdmaemu_verbs_fast_count");
	setup(&o);
	printf("bench verbs_setup device=%s emulated=%d path_mtu=%d window=%d signal_every=%d "
	       "min_secs=%.2f wire=%s\n",
	       o.device, emulated, 128 << path_mtu, WINDOW, SIG_EVERY, o.min_s,
	       o.wire ? o.wire : "-");
	for (int i = 0; i < o.nsizes; i++) {
		double r = bw_line(&o, "rc_write", IBV_WR_RDMA_WRITE, o.sizes[i]);

		if (o.sizes[i] == 1u << 20)
			r1m = r;
	}
	for (int i = 0; i < o.nsizes; i++)
		bw_line(&o, "rc_send", IBV_WR_SEND, o.sizes[i]);
	if (o.bw_only)
		goto done;
	{
		static const struct {
			const char *name;
			enum ibv_wr_opcode op;
			bool inl;
		} rates[] = { { "rc_send_rate", IBV_WR_SEND, false },
			      { "rc_send_rate", IBV_WR_SEND, true },
			      { "rc_write_rate", IBV_WR_RDMA_WRITE, false },
			      { "rc_write_rate", IBV_WR_RDMA_WRITE, true } };

		for (size_t i = 0; i < sizeof(rates) / sizeof(*rates); i++) {
			double r = rate_line(&o, rates[i].name, rates[i].op, rates[i].inl);

			if (r > best) {
				best = r;
				best_name = rates[i].op == IBV_WR_SEND ? "send" : "write";
			}
		}
	}
	latency_line(&o);
	if (r1m >= 0)
		printf("bench verbs: 1MiB write = %.1f%% of memcpy (goal 70%%), ", r1m * 100);
	else
		printf("bench verbs: 1MiB write not measured (goal 70%%), ");
	printf("small msgs = %.2f M/s (8 B %s, goal 5 M/s)\n", best / 1e6, best_name);
done:
	if (fast_count) /* the emulator's loopback fast path (RDMAEMU_FASTPATH=0 turns it off) */
		printf("bench verbs_fastpath wqes=%" PRIu64 "\n", fast_count());
	teardown();
	return 0;
}
