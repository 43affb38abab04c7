/* test_ucma_link: the client end of an rdma_cm file (emu/link/ucma_link.c) against a daemon the
 * test plays. It takes the daemon's bundles (UCMA_BUNDLE, protocol 12, emu/link/proto.h)
 * whole and in order and refuses a broken one with EPROTO; a GET_EVENT asleep with nothing
 * on its way ends with ECONNRESET when the daemon goes away (nothing hangs).
 *
 * The test plays the daemon on a Unix socket of its own (RDMAEMU_DAEMON): a thread accepts
 * each UCMA_OPEN and answers it as rdmaemud does (the file's eventfd and the shared page with
 * SCM_RIGHTS, then the first UCMA_SPARE); after that the test writes the daemon's messages
 * itself, bumping the eventfd and the page's sent count as the daemon does, and reads them
 * through the library's GET_EVENT and commands. */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <rdma/rdma_user_cm.h>

#include "emu/rdma_cm/cma.h"
#include "emu/link/proto.h"
#include "emu/link/ucma_proto.h"
#include "emu/link/ucma_ring.h"
#include "emu/link/link.h"
#include "emu/link/ucma_link.h"

/* The daemon's end of one file. */
struct dfile {
	int sock, evfd;
	struct emu_ducma_shared *sh;
};

static int lsock = -1;
static char lpath[sizeof(((struct sockaddr_un *)0)->sun_path)];

/* 0, or -1 (no cmocka assertion: the daemon's threads call it too) */
static int send_raw(int sock, uint16_t type, uint32_t arg, const void *body, size_t len,
		    const int *fds, int nfds)
{
	struct emu_dmsg h = { EMU_DPROTO_MAGIC, EMU_DPROTO_VERSION, type, arg, 0 };
	struct iovec iov[2] = { { &h, sizeof(h) }, { (void *)body, len } };

	return emu_link_sendmsg_fds(sock, iov, len ? 2 : 1, fds, nfds, MSG_NOSIGNAL) ==
			       (ssize_t)(sizeof(h) + len)
		       ? 0
		       : -1;
}

/* The accepting thread: one UCMA_OPEN, answered as rdmaemud answers it. */
static void *daemon_open(void *arg)
{
	struct dfile *d = arg;
	uint8_t buf[sizeof(struct emu_dmsg) + sizeof(struct emu_dmsg_hello)];
	struct emu_ducma_opened ans = { 3 };
	struct emu_dmsg h;
	int fds[2], memfd;

	d->sock = accept(lsock, NULL, NULL);
	if (d->sock < 0 || recv(d->sock, buf, sizeof(buf), 0) < (ssize_t)sizeof(h))
		return NULL;
	memcpy(&h, buf, sizeof(h));
	if (h.type != EMU_DMSG_UCMA_OPEN)
		return NULL;
	d->evfd = eventfd(0, EFD_SEMAPHORE | EFD_CLOEXEC);
	memfd = memfd_create("ucma-page", MFD_CLOEXEC);
	if (d->evfd < 0 || memfd < 0 || ftruncate(memfd, EMU_DUCMA_PAGE_LEN))
		return NULL;
	d->sh = mmap(NULL, EMU_DUCMA_PAGE_LEN, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
	if (d->sh == MAP_FAILED)
		return NULL;
	/* awake: the client's records need no doorbell (nobody reads its ring here) */
	d->sh->awake = 1;
	fds[0] = d->evfd;
	fds[1] = memfd;
	if (send_raw(d->sock, EMU_DMSG_UCMA_OPEN, 0, &ans, sizeof(ans), fds, 2))
		return NULL;
	close(memfd);
	/* the first spares follow the answer, counted as every later message */
	d->sh->sent = 1;
	return send_raw(d->sock, EMU_DMSG_UCMA_SPARE, 0, NULL, 0, NULL, 0) ? NULL : d;
}

/* Opens a file through the library with the test as its daemon: the application's fd. */
static int open_file(struct dfile *d)
{
	struct emu_host host;
	pthread_t t;
	void *ok = NULL;
	int fd;

	memset(&host, 0, sizeof(host));
	snprintf(host.name, sizeof(host.name), "rxe-ref");
	memset(d, 0, sizeof(*d));
	assert_int_equal(pthread_create(&t, NULL, daemon_open, d), 0);
	fd = emu_ucma_link_open(&host);
	assert_int_equal(pthread_join(t, &ok), 0);
	assert_ptr_equal(ok, d);
	assert_true(fd >= 0);
	return fd;
}

static void close_file(struct dfile *d, int fd)
{
	/* the library's UCMA_CLOSE waits for an answer: the daemon end goes first */
	close(d->sock);
	(void)emu_ucma_link_close(fd);
	close(d->evfd);
	munmap(d->sh, EMU_DUCMA_PAGE_LEN);
}

/* A pushed event as the daemon's body of UCMA_EVENT: the response, no kept answers. */
static struct rdma_ucm_event_resp event(uint64_t uid, uint32_t id, uint32_t type)
{
	struct rdma_ucm_event_resp r;

	memset(&r, 0, sizeof(r));
	r.uid = uid;
	r.id = id;
	r.event = type;
	return r;
}

/* Appends a record (type, arg, body) to a bundle being built in b at *off. */
static void rec_add(uint8_t *b, size_t *off, uint16_t type, uint32_t arg, const void *body,
		    uint32_t len)
{
	struct emu_ducma_rec rec = { len, type, 0, arg, 0 };
	uint32_t size = emu_ducma_rec_size(len);

	memset(b + *off, 0, size);
	memcpy(b + *off, &rec, sizeof(rec));
	if (len)
		memcpy(b + *off + sizeof(rec), body, len);
	*off += size;
}

/* The daemon sends its 1s for the events, then one socket message, counted: 0 or -1. */
static int push(struct dfile *d, uint64_t events, uint16_t type, uint32_t arg, const void *body,
		size_t len)
{
	if (write(d->evfd, &events, sizeof(events)) != sizeof(events))
		return -1;
	__atomic_store_n(&d->sh->sent, d->sh->sent + 1, __ATOMIC_RELEASE);
	return send_raw(d->sock, type, arg, body, len, NULL, 0);
}

/* GET_EVENT through the library: 0 and the response, or -errno (emu_ucma_link_write's). */
static int get_event(int fd, struct rdma_ucm_event_resp *resp)
{
	struct {
		struct rdma_ucm_cmd_hdr hdr;
		struct rdma_ucm_get_event cmd;
	} c;
	ssize_t r;

	memset(&c, 0, sizeof(c));
	memset(resp, 0xa5, sizeof(*resp));
	c.hdr.cmd = RDMA_USER_CM_CMD_GET_EVENT;
	c.hdr.in = sizeof(c.cmd);
	c.hdr.out = sizeof(*resp);
	c.cmd.response = (uintptr_t)resp;
	r = emu_ucma_link_write(fd, &c, sizeof(c));
	if (r < 0)
		return (int)r;
	assert_int_equal(r, sizeof(c));
	return 0;
}

static void expect_event(int fd, uint64_t uid, uint32_t id, uint32_t type)
{
	struct rdma_ucm_event_resp r;

	assert_int_equal(get_event(fd, &r), 0);
	assert_int_equal(r.uid, uid);
	assert_int_equal(r.id, id);
	assert_int_equal(r.event, type);
	assert_int_equal(r.status, 0);
}

/* Three events in one bundle and one alone after it: read in the daemon's order. */
static void test_bundle_in_order(void **state)
{
	struct rdma_ucm_event_resp e1 = event(101, 5, EMU_CMA_EVENT_ADDR_RESOLVED),
				   e2 = event(102, 6, EMU_CMA_EVENT_ADDR_RESOLVED),
				   e3 = event(101, 5, EMU_CMA_EVENT_ROUTE_RESOLVED),
				   e4 = event(102, 6, EMU_CMA_EVENT_ROUTE_ERROR);
	static uint8_t b[EMU_DUCMA_BUNDLE_MAX];
	struct dfile d;
	size_t off = 0;
	int fd = open_file(&d);

	(void)state;
	rec_add(b, &off, EMU_DMSG_UCMA_EVENT, 1, &e1, sizeof(e1));
	rec_add(b, &off, EMU_DMSG_UCMA_EVENT, 2, &e2, sizeof(e2));
	rec_add(b, &off, EMU_DMSG_UCMA_EVENT, 3, &e3, sizeof(e3));
	assert_int_equal(push(&d, 3, EMU_DMSG_UCMA_BUNDLE, 3, b, off), 0);
	assert_int_equal(push(&d, 1, EMU_DMSG_UCMA_EVENT, 4, &e4, sizeof(e4)), 0);
	expect_event(fd, 101, 5, EMU_CMA_EVENT_ADDR_RESOLVED);
	expect_event(fd, 102, 6, EMU_CMA_EVENT_ADDR_RESOLVED);
	expect_event(fd, 101, 5, EMU_CMA_EVENT_ROUTE_RESOLVED);
	expect_event(fd, 102, 6, EMU_CMA_EVENT_ROUTE_ERROR);
	close_file(&d, fd);
}

/* A command's answer in a bundle with an event behind it: the command returns its answer and
 * the event is taken with it (it left the socket with the bundle), read with no message more.
 * The answer is sent once the command is in the client's ring. */
struct answer_ctx {
	struct dfile *d;
	uint8_t b[1024];
	size_t off;
	int err;
};

static void *daemon_answer(void *arg)
{
	struct answer_ctx *a = arg;

	/* the LISTEN's record, published by the client (head moves past the ring's start) */
	while (!__atomic_load_n(&a->d->sh->head, __ATOMIC_ACQUIRE))
		usleep(1000);
	a->err = push(a->d, 1, EMU_DMSG_UCMA_BUNDLE, 2, a->b, a->off);
	return NULL;
}

static void test_bundle_answer_then_event(void **state)
{
	struct rdma_ucm_event_resp e = event(7, 9, EMU_CMA_EVENT_CONNECT_ERROR);
	struct answer_ctx a;
	struct {
		struct rdma_ucm_cmd_hdr hdr;
		struct rdma_ucm_listen cmd;
	} c;
	struct rdma_ucm_event_resp r;
	struct dfile d;
	pthread_t t;
	int fd = open_file(&d);

	(void)state;
	memset(&a, 0, sizeof(a));
	a.d = &d;
	/* LISTEN fails in the daemon with EADDRINUSE (its answer's arg), then the event */
	rec_add(a.b, &a.off, EMU_DMSG_UCMA_WRITE, (uint32_t)-EADDRINUSE, NULL, 0);
	rec_add(a.b, &a.off, EMU_DMSG_UCMA_EVENT, 1, &e, sizeof(e));
	memset(&c, 0, sizeof(c));
	c.hdr.cmd = RDMA_USER_CM_CMD_LISTEN;
	c.hdr.in = sizeof(c.cmd);
	c.cmd.id = 9;
	c.cmd.backlog = 4;
	assert_int_equal(pthread_create(&t, NULL, daemon_answer, &a), 0);
	assert_int_equal(emu_ucma_link_write(fd, &c, sizeof(c)), -EADDRINUSE);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(a.err, 0);
	/* nothing more on the socket: the event came with the answer */
	assert_int_equal(get_event(fd, &r), 0);
	assert_int_equal(r.uid, 7);
	assert_int_equal(r.id, 9);
	assert_int_equal(r.event, EMU_CMA_EVENT_CONNECT_ERROR);
	close_file(&d, fd);
}

/* A GET_EVENT asleep on an empty file (the eventfd at 0: nothing on its way) wakes with
 * ECONNRESET when the daemon's end closes: the reader's poll() holds the socket too, for its
 * hang-up. Waited for 10 s at most (a reader that never wakes fails the test, not hangs it). */
struct reader {
	int fd, ret;
	pthread_mutex_t lock;
	pthread_cond_t done;
	bool finished;
};

static void *read_one(void *arg)
{
	struct reader *r = arg;
	struct rdma_ucm_event_resp e;
	int ret = get_event(r->fd, &e);

	pthread_mutex_lock(&r->lock);
	r->ret = ret;
	r->finished = true;
	pthread_cond_signal(&r->done);
	pthread_mutex_unlock(&r->lock);
	return NULL;
}

static void test_blocked_reader_daemon_gone(void **state)
{
	struct reader r = { .lock = PTHREAD_MUTEX_INITIALIZER, .done = PTHREAD_COND_INITIALIZER };
	struct timespec until;
	struct dfile d;
	pthread_t t;
	int err = 0;

	(void)state;
	r.fd = open_file(&d);
	assert_int_equal(pthread_create(&t, NULL, read_one, &r), 0);
	usleep(100 * 1000); /* the reader asleep (were it not, it would see the hang-up anyway) */
	assert_false(r.finished);
	close(d.sock);
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 10;
	pthread_mutex_lock(&r.lock);
	while (!r.finished && err != ETIMEDOUT)
		err = pthread_cond_timedwait(&r.done, &r.lock, &until);
	pthread_mutex_unlock(&r.lock);
	assert_true(r.finished);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(r.ret, -ECONNRESET);
	(void)emu_ucma_link_close(r.fd);
	close(d.evfd);
	munmap(d.sh, EMU_DUCMA_PAGE_LEN);
}

/* Broken bundles: the read that meets one fails with EPROTO. */
enum breakage { B_COUNT, B_OVERRUN, B_NESTED, B_ONE };
static enum breakage breakages[] = { B_COUNT, B_OVERRUN, B_NESTED, B_ONE };

static void test_bundle_broken(void **state)
{
	enum breakage how = *(enum breakage *)*state;
	struct rdma_ucm_event_resp e = event(1, 2, EMU_CMA_EVENT_ADDR_RESOLVED), r;
	static uint8_t b[EMU_DUCMA_BUNDLE_MAX];
	struct emu_ducma_rec rec;
	uint32_t n = 2;
	struct dfile d;
	size_t off = 0;
	int fd = open_file(&d);

	rec_add(b, &off, EMU_DMSG_UCMA_EVENT, 1, &e, sizeof(e));
	rec_add(b, &off, EMU_DMSG_UCMA_EVENT, 2, &e, sizeof(e));
	switch (how) {
	case B_COUNT: /* says 3, holds 2 */
		n = 3;
		break;
	case B_OVERRUN: /* the last record's body runs past the bundle */
		memcpy(&rec, b + emu_ducma_rec_size(sizeof(e)), sizeof(rec));
		rec.len += 64;
		memcpy(b + emu_ducma_rec_size(sizeof(e)), &rec, sizeof(rec));
		break;
	case B_NESTED: /* a bundle inside a bundle */
		memcpy(&rec, b, sizeof(rec));
		rec.type = EMU_DMSG_UCMA_BUNDLE;
		memcpy(b, &rec, sizeof(rec));
		break;
	case B_ONE: /* a bundle of one message: the daemon sends those alone */
		off = emu_ducma_rec_size(sizeof(e));
		n = 1;
		break;
	}
	assert_int_equal(push(&d, n, EMU_DMSG_UCMA_BUNDLE, n, b, off), 0);
	assert_int_equal(get_event(fd, &r), -EPROTO);
	close_file(&d, fd);
}

static int setup(void **state)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	(void)state;
	snprintf(lpath, sizeof(lpath), "/tmp/rdmaemu-bundle-%d.sock", (int)getpid());
	unlink(lpath);
	memcpy(sa.sun_path, lpath, sizeof(lpath));
	lsock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	/* 0600: the client refuses a daemon socket that is not the user's alone */
	if (lsock < 0 || bind(lsock, (struct sockaddr *)&sa, sizeof(sa)) || chmod(lpath, 0600) ||
	    listen(lsock, 4))
		return -1;
	return setenv("RDMAEMU_DAEMON", lpath, 1);
}

static int teardown(void **state)
{
	(void)state;
	close(lsock);
	unlink(lpath);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bundle_in_order),
		cmocka_unit_test(test_bundle_answer_then_event),
		cmocka_unit_test(test_blocked_reader_daemon_gone),
		{ "test_bundle_broken_count", test_bundle_broken, NULL, NULL, &breakages[B_COUNT] },
		{ "test_bundle_broken_overrun", test_bundle_broken, NULL, NULL, &breakages[B_OVERRUN] },
		{ "test_bundle_broken_nested", test_bundle_broken, NULL, NULL, &breakages[B_NESTED] },
		{ "test_bundle_broken_one", test_bundle_broken, NULL, NULL, &breakages[B_ONE] },
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
