/* ring_probe: the daemon's checks of the command ring (protocol 11, emu/link/ucma_ring.h)
 * against a client that breaks it, run as an `rdmaemu run` process on the built-in fabric
 * (test_daemon_evpush.sh; RDMAEMU_DAEMON names the daemon's socket).
 *
 * For each way of breaking a ring it opens an rdma_cm file with the raw protocol (UCMA_OPEN),
 * maps the shared page it is given, writes the broken state, rings the doorbell and checks
 * that the daemon closes that connection (recv() returns 0, within 5 s) and goes on serving:
 * after them a new file opens (answer 0). A well-formed UCMA_CONSUMED of an event the file
 * never had is refused the same way (the client's copy of the queue would diverge). Every
 * check is an exact value; a failed one prints FAIL and the exit status is 1. */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <rdma/rdma_user_cm.h>

#include "emu/link/proto.h"
#include "emu/link/ucma_proto.h"
#include "emu/link/ucma_ring.h"

#include "emu/daemon/tests/probe_check.h"

struct file {
	int sock;
	struct emu_ducma_shared *sh;
	uint8_t *ring;
};

static int dconnect(void)
{
	const char *path = getenv("RDMAEMU_DAEMON");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int s;

	if (!path) {
		printf("FAIL: RDMAEMU_DAEMON is not set (run under rdmaemu run)\n");
		exit(1);
	}
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (s < 0 || connect(s, (struct sockaddr *)&sa, sizeof(sa))) {
		printf("FAIL: connect %s: %s\n", path, strerror(errno));
		exit(1);
	}
	return s;
}

/* UCMA_OPEN on host rxe-ref of the built-in fabric: the answer's arg (0 or an errno), the
 * page mapped into *f. */
static int open_file(struct file *f)
{
	struct emu_dmsg h = { EMU_DPROTO_MAGIC, EMU_DPROTO_VERSION, EMU_DMSG_UCMA_OPEN, 0, 0 };
	struct emu_dmsg_hello hello;
	struct emu_ducma_opened ans;
	struct iovec iov[2] = { { &h, sizeof(h) }, { &hello, sizeof(hello) } };
	struct msghdr m = { .msg_iov = iov, .msg_iovlen = 2 };
	union {
		char b[CMSG_SPACE(2 * sizeof(int))];
		struct cmsghdr align;
	} c;
	int fds[2] = { -1, -1 };
	ssize_t n;

	memset(&hello, 0, sizeof(hello));
	snprintf(hello.node, sizeof(hello.node), "rxe-ref");
	hello.pid = (int32_t)getpid();
	f->sock = dconnect();
	if (sendmsg(f->sock, &m, MSG_NOSIGNAL) < 0)
		return errno;
	iov[1] = (struct iovec){ &ans, sizeof(ans) };
	m = (struct msghdr){ .msg_iov = iov, .msg_iovlen = 2, .msg_control = c.b,
			     .msg_controllen = sizeof(c.b) };
	n = recvmsg(f->sock, &m, MSG_CMSG_CLOEXEC);
	if (n < (ssize_t)sizeof(h))
		return EPROTO;
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(&m); cm; cm = CMSG_NXTHDR(&m, cm))
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS)
			memcpy(fds, CMSG_DATA(cm), cm->cmsg_len - CMSG_LEN(0));
	if (h.arg)
		return (int)h.arg;
	if (fds[1] < 0)
		return ENOENT;
	f->sh = mmap(NULL, EMU_DUCMA_PAGE_LEN, PROT_READ | PROT_WRITE, MAP_SHARED, fds[1], 0);
	close(fds[1]);
	if (fds[0] >= 0)
		close(fds[0]);
	if (f->sh == MAP_FAILED)
		return errno;
	f->ring = (uint8_t *)f->sh + EMU_DUCMA_RING_OFF;
	return 0;
}

static void doorbell(struct file *f)
{
	struct emu_dmsg h = { EMU_DPROTO_MAGIC, EMU_DPROTO_VERSION, EMU_DMSG_UCMA_RING, 0, 0 };

	CHECK(send(f->sock, &h, sizeof(h), MSG_NOSIGNAL) == (ssize_t)sizeof(h), "doorbell: %s",
	      strerror(errno));
}

/* Whether the daemon closed f's connection within 5 s (what it sent before, the spare handles
 * of the open, is read and dropped). */
static int closed(struct file *f)
{
	char buf[8192];

	for (;;) {
		struct pollfd p = { .fd = f->sock, .events = POLLIN };

		if (poll(&p, 1, 5000) != 1)
			return 0;
		if (recv(f->sock, buf, sizeof(buf), 0) <= 0)
			return 1;
	}
}

static void put_rec(struct file *f, uint32_t off, uint16_t type, uint32_t len, uint32_t arg,
		    uint32_t pad)
{
	struct emu_ducma_rec r = { len, type, 0, arg, pad };

	memcpy(f->ring + off, &r, sizeof(r));
}

static void release(struct file *f)
{
	munmap(f->sh, EMU_DUCMA_PAGE_LEN);
	close(f->sock);
}

/* One broken ring a row: the record written at offset 0 (type 0: none) and the head then
 * published. */
static const struct broken {
	const char *name;
	uint16_t type;
	uint32_t len, arg, pad;
	uint64_t head;
} cases[] = {
	{ "a head more than a ring ahead", 0, 0, 0, 0,
	  EMU_DUCMA_RING_LEN + EMU_DUCMA_REC_ALIGN },
	{ "a head off the record boundary", EMU_DMSG_UCMA_CONSUMED, 0, 1, 1, 24 },
	{ "a record longer than what the head published", EMU_DMSG_UCMA_POST, 64, 0, 0,
	  EMU_DUCMA_REC_ALIGN },
	{ "a wrap past what the head published", EMU_DUCMA_REC_WRAP, 0, 0, 0,
	  EMU_DUCMA_REC_ALIGN },
	{ "a body bigger than the largest", EMU_DMSG_UCMA_WRITE, EMU_DUCMA_REC_MAX + 1, 0, 0,
	  /* emu_ducma_rec_size(EMU_DUCMA_REC_MAX + 1): the header and the body, padded */
	  (EMU_DUCMA_REC_MAX + 2 * EMU_DUCMA_REC_ALIGN) & ~(uint64_t)(EMU_DUCMA_REC_ALIGN - 1) },
	{ "a record of a type no client sends", EMU_DMSG_STATUS, 0, 0, 0, EMU_DUCMA_REC_ALIGN },
	{ "a UCMA_CONSUMED of an event the file never had", EMU_DMSG_UCMA_CONSUMED, 0, 7, 1,
	  EMU_DUCMA_REC_ALIGN },
};
#define NCASE ((int)(sizeof(cases) / sizeof(cases[0])))

int main(void)
{
	_Static_assert(sizeof(struct emu_ducma_rec) == EMU_DUCMA_REC_ALIGN, "the size in cases[]");
	for (int k = 0; k < NCASE; k++) {
		const struct broken *c = &cases[k];
		struct file f;
		int err = open_file(&f);

		CHECK(err == 0, "%s: UCMA_OPEN answered %d", c->name, err);
		if (err)
			continue;
		CHECK(f.sh->head == 0 && f.sh->tail == 0, "%s: a fresh ring: head %llu tail %llu",
		      c->name, (unsigned long long)f.sh->head, (unsigned long long)f.sh->tail);
		if (c->type)
			put_rec(&f, 0, c->type, c->len, c->arg, c->pad);
		__atomic_store_n(&f.sh->head, c->head, __ATOMIC_RELEASE);
		doorbell(&f);
		CHECK(closed(&f), "%s: the daemon kept the connection", c->name);
		release(&f);
	}
	{
		/* and it serves on */
		struct file f;
		int err = open_file(&f);

		CHECK(err == 0, "after the broken rings: UCMA_OPEN answered %d", err);
		if (!err)
			release(&f);
	}
	if (!probe_failed)
		printf("ok ring: %d broken rings closed, the daemon serves on\n", NCASE);
	return probe_failed;
}
