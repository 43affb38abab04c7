/* Common set-up of the verbs tests.
 *
 * The tests are built like an application: the system's <infiniband/verbs.h>, linked with
 * -libverbs. verbs_test_init() re-executes the test with LD_LIBRARY_PATH on the build's
 * emu/verbs/.libs and emu/.libs, so the dynamic linker binds the program to the emulated
 * libibverbs.so.1 (and the symbol versions of the system library must resolve in it); then it
 * checks that the emulator really is what got loaded, and attaches the process to a fabric. */
#ifndef RDMAEMU_VERBS_TEST_H
#define RDMAEMU_VERBS_TEST_H

#include <dlfcn.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <infiniband/verbs.h>

#define VT_CHILD_ENV "RDMAEMU_VERBS_TEST_CHILD"

/* fixture: a file under fixtures/ (NULL with text); text: a fabric in rdmaemu-fabric(5) form. */
static inline void verbs_test_init(char **argv, const char *fixture, const char *text,
				   const char *node)
{
	const char *b = getenv("RDMAEMU_TOP_BUILDDIR"), *s = getenv("RDMAEMU_TOP_SRCDIR");
	int (*attach)(const char *, const char *);
	int (*attach_text)(const char *, const char *);

	if (!b)
		b = RDMAEMU_BUILDDIR;
	if (!s)
		s = RDMAEMU_SRCDIR;
	if (!getenv(VT_CHILD_ENV)) {
		const char *old = getenv("LD_LIBRARY_PATH");
		char *path;

		if (asprintf(&path, "%s/emu/verbs/.libs:%s/emu/.libs%s%s", b, b, old ? ":" : "",
			     old ? old : "") < 0)
			exit(99);
		setenv("LD_LIBRARY_PATH", path, 1);
		setenv(VT_CHILD_ENV, "1", 1);
		free(path);
		/* argv[0], not /proc/self/exe: under make check-valgrind that is the valgrind
		 * tool, which follows this exec of the test itself */
		execv(argv[0], argv);
		perror("execv");
		exit(99);
	}
	attach = (int (*)(const char *, const char *))dlsym(RTLD_DEFAULT, "rdmaemu_ctl_attach");
	attach_text = (int (*)(const char *, const char *))dlsym(RTLD_DEFAULT,
								  "rdmaemu_ctl_attach_text");
	if (!attach || !attach_text) {
		fprintf(stderr, "the emulated libibverbs.so.1 is not the one loaded\n");
		exit(99);
	}
	if (fixture) {
		char *path;

		if (asprintf(&path, "%s/fixtures/%s", s, fixture) < 0 || attach(path, node)) {
			perror("rdmaemu_ctl_attach");
			exit(99);
		}
		free(path);
	} else if (attach_text(text, node)) {
		perror("rdmaemu_ctl_attach_text");
		exit(99);
	}
}

/* Lists host `peer`'s devices after the attached host's (rdmaemu_ctl_open_host_devices) and
 * opens the first device of each: ctx[0] the attached host's, ctx[1] the peer's. Exits 99
 * (a hard error of the test) when any step fails. Before any cmocka test runs. */
static inline void vt_open_pair(const char *peer, struct ibv_context *ctx[2])
{
	int (*open_host)(const char *) =
		(int (*)(const char *))dlsym(RTLD_DEFAULT, "rdmaemu_ctl_open_host_devices");
	struct ibv_device **l;
	int n;

	if (!open_host || open_host(peer)) {
		perror("rdmaemu_ctl_open_host_devices");
		exit(99);
	}
	l = ibv_get_device_list(&n);
	if (!l || n != 2)
		exit(99);
	for (int i = 0; i < 2; i++)
		if (!(ctx[i] = ibv_open_device(l[i])))
			exit(99);
	ibv_free_device_list(l);
}

/* Opens device `name` of the attached host. */
static inline struct ibv_context *vt_open(const char *name)
{
	struct ibv_device **l = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;

	assert_non_null(l);
	for (int i = 0; l[i]; i++)
		if (!strcmp(ibv_get_device_name(l[i]), name))
			ctx = ibv_open_device(l[i]);
	ibv_free_device_list(l);
	assert_non_null(ctx);
	return ctx;
}

/* What the data-path tests vary when they connect a QP; the rest is fixed: port 1, path MTU
 * 1024, source GID index 1 (the IPv4-mapped GID), hop limit 64, P_Key index 0. */
struct vt_conn {
	uint32_t dest_qpn;
	union ibv_gid dgid;
	uint32_t psn;      /* the receive PSN expected and the first send PSN */
	uint32_t flow_label; /* the address vector's */
	unsigned access;   /* qp_access_flags */
	/* RC only */
	uint8_t rd_atomic; /* max_rd_atomic and max_dest_rd_atomic */
	uint8_t min_rnr_timer, timeout, retry_cnt, rnr_retry;
};

/* RESET -> INIT -> RTR -> RTS of an RC or UC QP, each step asserted. */
static inline void vt_connect(struct ibv_qp *qp, const struct vt_conn *c)
{
	int rc_only = qp->qp_type == IBV_QPT_RC;
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qp_access_flags = c->access };

	assert_int_equal(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
						      IBV_QP_ACCESS_FLAGS), 0);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = c->dest_qpn;
	a.rq_psn = c->psn;
	a.max_dest_rd_atomic = c->rd_atomic;
	a.min_rnr_timer = c->min_rnr_timer;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = c->dgid;
	a.ah_attr.grh.sgid_index = 1;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.grh.flow_label = c->flow_label;
	a.ah_attr.port_num = 1;
	assert_int_equal(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
						      IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
						      (rc_only ? IBV_QP_MAX_DEST_RD_ATOMIC |
								 IBV_QP_MIN_RNR_TIMER : 0)), 0);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = c->psn;
	a.timeout = c->timeout;
	a.retry_cnt = c->retry_cnt;
	a.rnr_retry = c->rnr_retry;
	a.max_rd_atomic = c->rd_atomic;
	assert_int_equal(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
						      (rc_only ? IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
								 IBV_QP_RNR_RETRY |
								 IBV_QP_MAX_QP_RD_ATOMIC : 0)), 0);
}

/* Busy-polls for one completion; each empty poll lets virtual time move to the next timer
 * (the wire's deliveries, retransmissions, RNR waits). 1 when one came, 0 after the bound. */
static inline int vt_poll_wait(struct ibv_cq *cq, struct ibv_wc *wc)
{
	for (long i = 0; i < 10000000L; i++)
		if (ibv_poll_cq(cq, 1, wc))
			return 1;
	return 0;
}

#endif
