/* shm_xfer: checks bytes end to end between two processes (test_daemon_shm.sh).
 *
 *   shm_xfer server|client DIR SIZE COUNT
 *
 * Built like an application (the system's <infiniband/verbs.h>, -libverbs) and run under
 * `rdmaemu run`, so it goes through whatever path the daemon gives the pair: the shared rings
 * for two processes of one host, the daemon for two hosts. rxe0, port 1, GID 1 (RoCEv2), one
 * RC QP each side, path MTU 1024. The two sides exchange {qpn, psn, gid, rkey, addr} as files
 * in DIR (written to a temporary name, then renamed), and the client says it is done with a
 * third file, so the server's memory stays registered until the client's last READ.
 *
 * Message k (0 <= k < COUNT), every byte a function of (stream, k, offset):
 *   the client READs the server's source region k (stream 1, written by the server) and
 *   compares it; then WRITEs stream 2 into the server's write region k; then SENDs stream 3.
 *   The server, on the k-th receive (RC orders the WRITE before the SEND), compares its
 *   receive buffer with stream 3 and its write region k with stream 2.
 * Each side prints one line, "shm_xfer SIDE: COUNT x SIZE bytes: ... match", and exits 0, or
 * names the first differing byte and exits 1.
 *
 *   shm_xfer pp-server|pp-client DIR SIZE COUNT
 *
 * ib_write_lat's pattern (held ACKs, docs/daemon.md): message k is stream 4 with k + 1 in its
 * last 4 bytes, written into the peer's write region 0. The client posts it, waits for its
 * completion and spins on its own region for the server's message k; the server spins for
 * the client's, then posts its own and waits for the completion. Every message is compared;
 * "shm_xfer pp-SIDE: COUNT x SIZE bytes: every write matched".
 *
 *   shm_xfer quiet-server|quiet-client DIR SIZE COUNT
 *
 * The client WRITEs COUNT messages one at a time, each waited for; the server spins until the
 * last has landed, then only waits for client.done (it neither posts nor polls, so its held
 * ACKs are for its ring thread to send). "shm_xfer quiet-SIDE: COUNT x SIZE bytes: ..."
 *
 *   shm_xfer stream-server|stream-client DIR SIZE COUNT
 *
 * As quiet-, but the client keeps up to 8 WRITEs (its send queue) outstanding, each from a
 * source region of its own, and takes their completions in order: a quiet server receives
 * them back to back, so its held ACKs cover several (ACK coalescing, ack_hold.c).
 *
 *   shm_xfer badkey-server|badkey-client DIR SIZE COUNT
 *
 * The client WRITEs stream 2 into the server's write region 0, then the same with a wrong
 * rkey, which must complete with IBV_WC_REM_ACCESS_ERR; the server waits for client.done and
 * compares its write region 0. "shm_xfer badkey-client: SIZE bytes: write ok, bad rkey:
 * remote access error", "shm_xfer badkey-server: SIZE bytes: the write matched".
 *
 * Every mode starts its transfers once both QPs are in RTS (files SIDE.ready). With
 * SHM_XFER_RINGS=1 in its environment a quiet- side says "shm_xfer SIDE: rings resident N KiB"
 * on stderr once its messages are through (before client.done): the pages of its
 * shared-memory rings (/memfd:rdmaemu-rings in /proc/self/smaps) in its page tables.
 *
 *   shm_xfer regmap DIR SIZE COUNT
 *
 * One process, no peer (emu/verbs/xmap.c): an MR on SIZE bytes of anonymous memory, COUNT
 * times: its pages in a memfd while registered ("/memfd:rdmaemu-mr" in /proc/self/maps) and
 * not after ibv_dereg_mr, the contents kept both ways; an MR on malloc'd memory (not page
 * aligned) keeps its contents; an MR whose memory was unmapped before ibv_dereg_mr
 * deregisters. "shm_xfer regmap: SIZE bytes: moved and back, contents kept" (or "not moved",
 * when the pages stayed: RDMAEMU_XFAST_MAP=0, no daemon, or no userfaultfd to protect them).
 *
 *   shm_xfer regrace DIR SIZE COUNT
 *
 * One process, no peer: two threads add 1 to their own 64-bit words, one in every page of a
 * SIZE-byte anonymous buffer, as fast as they can, while the main thread registers and
 * deregisters an MR on it COUNT times (each move to the memfd and back). Then every word must
 * hold its thread's count: no write lost to a move. "shm_xfer regrace: SIZE bytes, COUNT
 * registrations: moved, no write lost" ("not moved" where the pages stayed).
 *
 *   shm_xfer regfork DIR SIZE COUNT
 *
 * One process, no peer: an MR on SIZE bytes holding stream 8, then COUNT times: fork(); the
 * parent at once fills the buffer with stream 9 and tells the child (a pipe); the child must
 * still see stream 8 (its copy is the memory at the fork). "shm_xfer regfork: SIZE bytes,
 * COUNT forks: the children saw the memory at the fork". */
#include <endian.h>
#include <errno.h>
#include <infiniband/verbs.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

struct info {
	uint32_t qpn, psn, rkey;
	uint64_t addr;
	uint8_t gid[16];
};

static void die(const char *what, int err)
{
	fprintf(stderr, "shm_xfer: %s: %s\n", what, strerror(err));
	exit(2);
}

static uint8_t pattern(unsigned stream, unsigned k, size_t i)
{
	uint64_t x = (uint64_t)stream << 48 ^ (uint64_t)k << 24 ^ i;

	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return (uint8_t)x;
}

static void fill(uint8_t *p, unsigned stream, unsigned k, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = pattern(stream, k, i);
}

/* The offset of the first byte differing from the stream, or n. */
static size_t check(const uint8_t *p, unsigned stream, unsigned k, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != pattern(stream, k, i))
			return i;
	return n;
}

static void nap(void)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };

	nanosleep(&ts, NULL);
}

static void put_file(const char *dir, const char *name, const void *data, size_t len)
{
	char tmp[4200], path[4200];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s/%s.tmp", dir, name);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(tmp, "wb");
	if (!f || fwrite(data, 1, len, f) != len || fclose(f) || rename(tmp, path))
		die(path, errno);
}

/* Waits (polling, real time: the other process may start later) for DIR/name. */
static void get_file(const char *dir, const char *name, void *data, size_t len)
{
	char path[4200];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	for (int i = 0; !(f = fopen(path, "rb")); i++) {
		if (i > 6000)
			die(path, ETIMEDOUT);
		nap();
	}
	if (fread(data, 1, len, f) != len)
		die(path, EIO);
	fclose(f);
}

static struct ibv_wc wait_wc(struct ibv_cq *cq)
{
	struct ibv_wc wc;
	int n;

	while ((n = ibv_poll_cq(cq, 1, &wc)) == 0)
		;
	if (n < 0)
		die("ibv_poll_cq", EIO);
	if (wc.status != IBV_WC_SUCCESS) {
		fprintf(stderr, "shm_xfer: wr %llu: %s\n", (unsigned long long)wc.wr_id,
			ibv_wc_status_str(wc.status));
		exit(1);
	}
	return wc;
}

/* The tail of message k (its last 4 bytes, k + 1) has landed in region p, then compare. */
static void await_msg(const uint8_t *p, size_t size, unsigned k, const char *side)
{
	uint32_t want = k + 1, got;
	size_t at;

	do {
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		memcpy(&got, (const uint8_t *)p + size - 4, 4);
		__asm__ __volatile__("" ::: "memory");
	} while (got != want);
	if ((at = check(p, 4, k, size - 4)) != size - 4) {
		fprintf(stderr, "shm_xfer %s: message %u differs at byte %zu\n", side, k, at);
		exit(1);
	}
}

/* Whether the page at p is mapped from the memfd of a moved MR. */
static bool in_memfd(const void *p)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	bool found = false;

	while (f && fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;

		if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && (uintptr_t)p >= lo &&
		    (uintptr_t)p < hi) {
			found = strstr(line, "/memfd:rdmaemu-mr") != NULL;
			break;
		}
	}
	if (f)
		fclose(f);
	return found;
}

static int regmap(struct ibv_pd *pd, size_t size, unsigned count)
{
	int moved = -1;

	for (unsigned k = 0; k < count; k++) {
		uint8_t *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
				  -1, 0);
		uint8_t *m = malloc(size + 100);
		struct ibv_mr *mr, *mr2;
		size_t at;
		int in;

		if (p == MAP_FAILED || !m)
			die("mmap / malloc", ENOMEM);
		fill(p, 5, k, size);
		fill(m + 100, 6, k, size);
		mr = ibv_reg_mr(pd, p, size, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
		mr2 = ibv_reg_mr(pd, m + 100, size, IBV_ACCESS_LOCAL_WRITE);
		if (!mr || !mr2)
			die("ibv_reg_mr", errno);
		in = in_memfd(p);
		if (moved >= 0 && in != moved) {
			fprintf(stderr, "shm_xfer regmap: MR %u %s moved, the first %s\n", k,
				in ? "was" : "was not", moved ? "was" : "was not");
			return 1;
		}
		moved = in;
		if ((at = check(p, 5, k, size)) != size || (at = check(m + 100, 6, k, size)) != size) {
			fprintf(stderr, "shm_xfer regmap: MR %u: byte %zu changed by ibv_reg_mr\n",
				k, at);
			return 1;
		}
		fill(p, 7, k, size);
		if (ibv_dereg_mr(mr) || ibv_dereg_mr(mr2))
			die("ibv_dereg_mr", errno);
		if (in_memfd(p) || (at = check(p, 7, k, size)) != size ||
		    (at = check(m + 100, 6, k, size)) != size) {
			fprintf(stderr, "shm_xfer regmap: MR %u: not back after ibv_dereg_mr, or "
					"its contents changed\n", k);
			return 1;
		}
		free(m);
		/* unmapped while registered: ibv_dereg_mr still works */
		mr = ibv_reg_mr(pd, p, size, IBV_ACCESS_LOCAL_WRITE);
		if (!mr)
			die("ibv_reg_mr", errno);
		munmap(p, size);
		if (ibv_dereg_mr(mr))
			die("ibv_dereg_mr after munmap", errno);
	}
	printf("shm_xfer regmap: %zu bytes: %s\n", size,
	       moved ? "moved and back, contents kept" : "not moved");
	return 0;
}

struct racer {
	uint64_t *words; /* one in every page: words[k * stride] */
	size_t pages, stride;
	uint64_t *counts; /* what this thread added to each */
	bool *stop; /* read and set atomically */
	pthread_t tid;
};

static void *race(void *arg)
{
	struct racer *r = arg;

	while (!__atomic_load_n(r->stop, __ATOMIC_RELAXED))
		for (size_t k = 0; k < r->pages; k++) {
			r->words[k * r->stride]++;
			r->counts[k]++;
		}
	return NULL;
}

static int regrace(struct ibv_pd *pd, size_t size, unsigned count)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE), pages = size / pg;
	uint8_t *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct racer r[2];
	bool stop = false;
	uint64_t total = 0;
	int moved = 0;

	if (p == MAP_FAILED || !pages)
		die("mmap", ENOMEM);
	memset(p, 0, size);
	for (int t = 0; t < 2; t++) {
		r[t] = (struct racer){ (uint64_t *)(void *)(p + 64 * t), pages, pg / 8,
				       calloc(pages, 8), &stop, 0 };
		if (!r[t].counts || pthread_create(&r[t].tid, NULL, race, &r[t]))
			die("thread", ENOMEM);
	}
	for (unsigned k = 0; k < count; k++) {
		struct ibv_mr *mr = ibv_reg_mr(pd, p, size, IBV_ACCESS_LOCAL_WRITE);

		if (!mr)
			die("ibv_reg_mr", errno);
		moved |= in_memfd(p);
		nap();
		if (ibv_dereg_mr(mr))
			die("ibv_dereg_mr", errno);
	}
	__atomic_store_n(&stop, true, __ATOMIC_RELAXED);
	for (int t = 0; t < 2; t++) {
		pthread_join(r[t].tid, NULL);
		for (size_t k = 0; k < pages; k++) {
			if (r[t].words[k * r[t].stride] != r[t].counts[k]) {
				fprintf(stderr, "shm_xfer regrace: thread %d page %zu: %llu in memory, "
						"%llu written\n", t, k,
					(unsigned long long)r[t].words[k * r[t].stride],
					(unsigned long long)r[t].counts[k]);
				return 1;
			}
			total += r[t].counts[k];
		}
		free(r[t].counts);
	}
	if (total < 1000u * count) {
		fprintf(stderr, "shm_xfer regrace: %llu writes in all: the writers hardly ran\n",
			(unsigned long long)total);
		return 1;
	}
	printf("shm_xfer regrace: %zu bytes, %u registrations: %s, no write lost\n", size, count,
	       moved ? "moved" : "not moved");
	return 0;
}

static int regfork(struct ibv_pd *pd, size_t size, unsigned count)
{
	uint8_t *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct ibv_mr *mr;
	bool moved;

	if (p == MAP_FAILED)
		die("mmap", ENOMEM);
	fill(p, 8, 0, size);
	mr = ibv_reg_mr(pd, p, size, IBV_ACCESS_LOCAL_WRITE);
	if (!mr)
		die("ibv_reg_mr", errno);
	moved = in_memfd(p);
	for (unsigned k = 0; k < count; k++) {
		int go[2], st;
		pid_t pid;
		char c;

		if (pipe(go))
			die("pipe", errno);
		fflush(stdout);
		pid = fork();
		if (pid < 0)
			die("fork", errno);
		if (!pid) {
			size_t at;

			close(go[1]);
			if (read(go[0], &c, 1) != 1)
				_exit(3);
			at = check(p, 8, k, size);
			if (at != size) {
				fprintf(stderr, "shm_xfer regfork: fork %u: the child's byte %zu is "
						"the parent's write after the fork\n", k, at);
				_exit(1);
			}
			_exit(in_memfd(p) ? 4 : 0);
		}
		close(go[0]);
		fill(p, 9, k, size);
		if (write(go[1], "", 1) != 1)
			die("write", errno);
		close(go[1]);
		if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st)) {
			fprintf(stderr, "shm_xfer regfork: fork %u: child status %#x (4: its pages "
					"still shared)\n", k, st);
			return 1;
		}
		fill(p, 8, k + 1, size);
	}
	if (ibv_dereg_mr(mr))
		die("ibv_dereg_mr", errno);
	printf("shm_xfer regfork: %zu bytes, %u forks (%s): the children saw the memory at the "
	       "fork\n", size, count, moved ? "moved" : "not moved");
	return 0;
}

static void make_msg(uint8_t *p, size_t size, unsigned k)
{
	uint32_t tail = k + 1;

	fill(p, 4, k, size - 4);
	memcpy(p + size - 4, &tail, 4);
}

static void post(struct ibv_qp *qp, enum ibv_wr_opcode op, void *buf, size_t len, uint32_t lkey,
		 uint64_t raddr, uint32_t rkey, uint64_t id)
{
	struct ibv_sge sge = { (uintptr_t)buf, (uint32_t)len, lkey };
	struct ibv_send_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1, .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	int err;

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	err = ibv_post_send(qp, &wr, &bad);
	if (err)
		die("ibv_post_send", err);
}

/* The KiB of the rings' mappings in this process's page tables (Rss in /proc/self/smaps) */
static unsigned long rings_rss(void)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	bool in = false;
	unsigned long kib, sum = 0;

	if (!f)
		die("/proc/self/smaps", errno);
	while (fgets(line, sizeof(line), f)) {
		if (strchr(line, '-') && strchr(line, ' ') && strchr(line, '-') < strchr(line, ' '))
			in = strstr(line, "memfd:rdmaemu-rings") != NULL;
		else if (in && sscanf(line, "Rss: %lu kB", &kib) == 1)
			sum += kib;
	}
	fclose(f);
	return sum;
}

/* With SHM_XFER_RINGS set, says how much of the rings is resident: while the peer is still
 * there (its exit unmaps them) */
static void report_rings(const char *side)
{
	if (getenv("SHM_XFER_RINGS"))
		fprintf(stderr, "shm_xfer %s: rings resident %lu KiB\n", side, rings_rss());
}

int main(int argc, char **argv)
{
	struct ibv_device **devs;
	struct ibv_context *ctx = NULL;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	struct info me, peer;
	union ibv_gid gid;
	uint8_t *buf, *src, *wr, *rx, *tx;
	size_t size;
	unsigned count;
	bool server, pp, quiet, stream, badkey;
	const char *side;
	int n, err;

	if (argc != 5 || (strcmp(argv[1], "server") && strcmp(argv[1], "client") &&
			  strcmp(argv[1], "pp-server") && strcmp(argv[1], "pp-client") &&
			  strcmp(argv[1], "quiet-server") && strcmp(argv[1], "quiet-client") &&
			  strcmp(argv[1], "stream-server") && strcmp(argv[1], "stream-client") &&
			  strcmp(argv[1], "badkey-server") && strcmp(argv[1], "badkey-client") &&
			  strcmp(argv[1], "regmap") && strcmp(argv[1], "regrace") &&
			  strcmp(argv[1], "regfork"))) {
		fprintf(stderr, "usage: shm_xfer [pp-|quiet-|stream-|badkey-]server|client DIR SIZE "
				"COUNT\n");
		return 2;
	}
	side = argv[1];
	pp = !strncmp(side, "pp-", 3);
	stream = !strncmp(side, "stream-", 7);
	quiet = stream || !strncmp(side, "quiet-", 6); /* stream-: a quiet- of its own */
	badkey = !strncmp(side, "badkey-", 7);
	server = !strcmp(side + (pp ? 3 : stream || badkey ? 7 : quiet ? 6 : 0), "server");
	size = strtoul(argv[3], NULL, 0);
	count = (unsigned)strtoul(argv[4], NULL, 0);
	if (!size || !count || size > (1u << 20) || count > 1000 || ((pp || quiet) && size < 8))
		die("SIZE or COUNT", EINVAL);
	devs = ibv_get_device_list(&n);
	for (int i = 0; devs && i < n && !ctx; i++)
		if (!strcmp(ibv_get_device_name(devs[i]), "rxe0"))
			ctx = ibv_open_device(devs[i]);
	if (!ctx)
		die("rxe0", ENODEV);
	if (!strncmp(side, "reg", 3)) {
		struct ibv_pd *p = ibv_alloc_pd(ctx);

		if (!p)
			die("ibv_alloc_pd", errno);
		return !strcmp(side, "regmap") ? regmap(p, size, count) :
		       !strcmp(side, "regrace") ? regrace(p, size, count) : regfork(p, size, count);
	}
	/* layout: source regions (server: stream 1), write regions, receive regions (one per
	 * message: the client's next SEND may land while the server still checks this one), a
	 * send buffer */
	buf = calloc(3 * (size_t)count + 1, size);
	if (!buf)
		die("calloc", ENOMEM);
	src = buf;
	wr = buf + (size_t)count * size;
	rx = wr + (size_t)count * size;
	tx = rx + (size_t)count * size;
	pd = ibv_alloc_pd(ctx);
	cq = pd ? ibv_create_cq(ctx, 2 * (int)count + 8, NULL, NULL, 0) : NULL;
	mr = cq ? ibv_reg_mr(pd, buf, (3 * (size_t)count + 1) * size,
			     IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				     IBV_ACCESS_REMOTE_READ) : NULL;
	{
		struct ibv_qp_init_attr ia = { .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
					       .cap = { .max_send_wr = 8, .max_recv_wr = count,
							.max_send_sge = 1, .max_recv_sge = 1 } };

		qp = mr ? ibv_create_qp(pd, &ia) : NULL;
	}
	if (!qp)
		die("pd/cq/mr/qp", errno);
	if (ibv_query_gid(ctx, 1, 1, &gid))
		die("ibv_query_gid", errno);
	if (server)
		for (unsigned k = 0; k < count; k++)
			fill(src + (size_t)k * size, 1, k, size);
	me = (struct info){ .qpn = qp->qp_num, .psn = server ? 0x1000 : 0x2000, .rkey = mr->rkey,
			    .addr = (uintptr_t)buf };
	memcpy(me.gid, gid.raw, 16);
	{
		struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
					 .qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
							    IBV_ACCESS_REMOTE_READ };

		if ((err = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
							 IBV_QP_ACCESS_FLAGS)))
			die("INIT", err);
	}
	/* receives first: the client may send as soon as it sees our info */
	if (server && !pp && !quiet && !badkey)
		for (unsigned k = 0; k < count; k++) {
			struct ibv_sge sge = { (uintptr_t)(rx + (size_t)k * size), (uint32_t)size,
					       mr->lkey };
			struct ibv_recv_wr rw = { .wr_id = k, .sg_list = &sge, .num_sge = 1 }, *bad;

			if ((err = ibv_post_recv(qp, &rw, &bad)))
				die("ibv_post_recv", err);
		}
	put_file(argv[2], server ? "server.info" : "client.info", &me, sizeof(me));
	get_file(argv[2], server ? "client.info" : "server.info", &peer, sizeof(peer));
	{
		struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024,
					 .dest_qp_num = peer.qpn, .rq_psn = peer.psn,
					 .max_dest_rd_atomic = 1, .min_rnr_timer = 12 };

		a.ah_attr.is_global = 1;
		a.ah_attr.port_num = 1;
		a.ah_attr.grh.sgid_index = 1;
		a.ah_attr.grh.hop_limit = 64;
		memcpy(a.ah_attr.grh.dgid.raw, peer.gid, 16);
		if ((err = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
							 IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
							 IBV_QP_MAX_DEST_RD_ATOMIC |
							 IBV_QP_MIN_RNR_TIMER)))
			die("RTR", err);
		/* pp- and quiet-: an ACK timeout of 4.3 s (20), so that a resend means an ACK
		 * never sent, not a slow machine (test_daemon_shm.sh counts them) */
		a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTS, .timeout = pp || quiet ? 20 : 14,
					  .retry_cnt = 7,
					  .rnr_retry = 7, .sq_psn = me.psn, .max_rd_atomic = 1 };
		if ((err = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
							 IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
							 IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC)))
			die("RTS", err);
	}
	{ /* both QPs in RTS before the first message: none is dropped in INIT */
		char ready;

		put_file(argv[2], server ? "server.ready" : "client.ready", "y", 1);
		get_file(argv[2], server ? "client.ready" : "server.ready", &ready, 1);
	}
	if (pp) {
		for (unsigned k = 0; k < count; k++) {
			if (server)
				await_msg(wr, size, k, side);
			make_msg(tx, size, k);
			post(qp, IBV_WR_RDMA_WRITE, tx, size, mr->lkey,
			     peer.addr + (uint64_t)count * size, peer.rkey, k);
			wait_wc(cq);
			if (!server)
				await_msg(wr, size, k, side);
		}
		printf("shm_xfer %s: %u x %zu bytes: every write matched\n", side, count, size);
	} else if (badkey && server) {
		char done;
		size_t at;

		get_file(argv[2], "client.done", &done, 1);
		if ((at = check(wr, 2, 0, size)) != size) {
			fprintf(stderr, "shm_xfer %s: the write differs at byte %zu\n", side, at);
			return 1;
		}
		printf("shm_xfer %s: %zu bytes: the write matched\n", side, size);
	} else if (badkey) {
		struct ibv_wc wc;

		fill(tx, 2, 0, size);
		post(qp, IBV_WR_RDMA_WRITE, tx, size, mr->lkey, peer.addr + (uint64_t)count * size,
		     peer.rkey, 1);
		wait_wc(cq);
		post(qp, IBV_WR_RDMA_WRITE, tx, size, mr->lkey, peer.addr + (uint64_t)count * size,
		     peer.rkey ^ 0x80, 2);
		while ((n = ibv_poll_cq(cq, 1, &wc)) == 0)
			;
		if (n < 0 || wc.wr_id != 2 || wc.status != IBV_WC_REM_ACCESS_ERR) {
			fprintf(stderr, "shm_xfer %s: bad rkey: wr %llu %s\n", side,
				(unsigned long long)wc.wr_id, ibv_wc_status_str(wc.status));
			return 1;
		}
		put_file(argv[2], "client.done", "y", 1);
		printf("shm_xfer %s: %zu bytes: write ok, bad rkey: remote access error\n", side,
		       size);
	} else if (quiet && server) {
		char done;

		await_msg(wr, size, count - 1, side);
		report_rings(side);
		get_file(argv[2], "client.done", &done, 1);
		printf("shm_xfer %s: %u x %zu bytes: the last write matched\n", side, count, size);
	} else if (stream) {
		unsigned posted = 0, done = 0;

		while (done < count) {
			struct ibv_wc wc;

			if (posted < count && posted - done < 8) {
				uint8_t *m = src + (size_t)posted * size;

				make_msg(m, size, posted);
				post(qp, IBV_WR_RDMA_WRITE, m, size, mr->lkey,
				     peer.addr + (uint64_t)count * size, peer.rkey, posted);
				posted++;
				continue;
			}
			wc = wait_wc(cq);
			if (wc.wr_id != done || wc.opcode != IBV_WC_RDMA_WRITE) {
				fprintf(stderr, "shm_xfer %s: completion %u: wr %llu opcode %d\n",
					side, done, (unsigned long long)wc.wr_id, wc.opcode);
				return 1;
			}
			done++;
		}
		put_file(argv[2], "client.done", "y", 1);
		printf("shm_xfer %s: %u x %zu bytes: every write completed\n", side, count, size);
	} else if (quiet) {
		for (unsigned k = 0; k < count; k++) {
			make_msg(tx, size, k);
			post(qp, IBV_WR_RDMA_WRITE, tx, size, mr->lkey,
			     peer.addr + (uint64_t)count * size, peer.rkey, k);
			wait_wc(cq);
		}
		report_rings(side);
		put_file(argv[2], "client.done", "y", 1);
		printf("shm_xfer %s: %u x %zu bytes: every write completed\n", side, count, size);
	} else if (server) {
		char done;

		for (unsigned k = 0; k < count; k++) {
			struct ibv_wc wc = wait_wc(cq);
			size_t at;

			if (wc.opcode != IBV_WC_RECV || wc.wr_id != k || wc.byte_len != size) {
				fprintf(stderr, "shm_xfer server: receive %u: opcode %d wr %llu "
						"len %u\n", k, wc.opcode,
					(unsigned long long)wc.wr_id, wc.byte_len);
				return 1;
			}
			if ((at = check(rx + (size_t)k * size, 3, k, size)) != size ||
			    (at = check(wr + (size_t)k * size, 2, k, size)) != size) {
				fprintf(stderr, "shm_xfer server: message %u differs at byte %zu\n", k,
					at);
				return 1;
			}
		}
		get_file(argv[2], "client.done", &done, 1);
		printf("shm_xfer server: %u x %zu bytes: send, write match\n", count, size);
	} else {
		for (unsigned k = 0; k < count; k++) {
			size_t at;

			post(qp, IBV_WR_RDMA_READ, src + (size_t)k * size, size, mr->lkey,
			     peer.addr + (uint64_t)k * size, peer.rkey, 3 * k);
			wait_wc(cq);
			if ((at = check(src + (size_t)k * size, 1, k, size)) != size) {
				fprintf(stderr, "shm_xfer client: read %u differs at byte %zu\n", k,
					at);
				return 1;
			}
			fill(tx, 2, k, size);
			post(qp, IBV_WR_RDMA_WRITE, tx, size, mr->lkey,
			     peer.addr + ((uint64_t)count + k) * size, peer.rkey, 3 * k + 1);
			wait_wc(cq);
			fill(tx, 3, k, size);
			post(qp, IBV_WR_SEND, tx, size, mr->lkey, 0, 0, 3 * k + 2);
			wait_wc(cq);
		}
		put_file(argv[2], "client.done", "y", 1);
		printf("shm_xfer client: %u x %zu bytes: read matches\n", count, size);
	}
	ibv_destroy_qp(qp);
	ibv_dereg_mr(mr);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(devs);
	free(buf);
	return 0;
}
