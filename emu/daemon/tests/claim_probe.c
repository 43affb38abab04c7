/* claim_probe: one message of the daemon protocol with the identity a process claims in it,
 * and the daemon's answer (test_daemon_security.sh).
 *
 *   claim_probe SOCKET HELLO|UCMA_OPEN|TAP_ATTACH NODE self|PID
 *
 * connects to SOCKET with a bare socket (no check of who listens: the probe plays a process
 * that lies), sends the message for host NODE of the fabric $RDMAEMU_FABRIC (as `rdmaemu run`
 * sets it; unset: the built-in fabric) claiming pid PID ("self":
 * its own), TAP_ATTACH with an eventfd in the place of a tap, and prints one line:
 * "MSG NODE PID: NAME" with NAME the errno name of the answer's arg ("0" for none),
 * "closed" when the daemon closed the connection without an answer, or "connect: NAME". */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "emu/link/proto.h"

static const char *errname(int e)
{
	static const struct {
		int e;
		const char *name;
	} names[] = { { 0, "0" },	      { EPERM, "EPERM" },   { ENOENT, "ENOENT" },
		      { EACCES, "EACCES" },   { EXDEV, "EXDEV" },   { EPROTO, "EPROTO" },
		      { ENODEV, "ENODEV" },   { EBUSY, "EBUSY" },   { ECONNREFUSED, "ECONNREFUSED" },
		      { EUSERS, "EUSERS" } };
	static char other[16];

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].e == e)
			return names[i].name;
	snprintf(other, sizeof(other), "errno %d", e);
	return other;
}

/* The message's body after the header: HELLO and UCMA_OPEN carry struct emu_dmsg_hello,
 * TAP_ATTACH struct emu_dmsg_tap. */
static size_t body(const char *msg, const char *node, int32_t pid, uint16_t *type, void *out)
{
	const char *fabric = getenv("RDMAEMU_FABRIC");

	if (!fabric)
		fabric = "";
	if (!strcmp(msg, "TAP_ATTACH")) {
		struct emu_dmsg_tap *t = out;

		memset(t, 0, sizeof(*t));
		snprintf(t->node, sizeof(t->node), "%s", node);
		snprintf(t->netdev, sizeof(t->netdev), "eth0");
		snprintf(t->fabric, sizeof(t->fabric), "%s", fabric);
		*type = EMU_DMSG_TAP_ATTACH;
		return sizeof(*t);
	}
	struct emu_dmsg_hello *h = out;

	memset(h, 0, sizeof(*h));
	snprintf(h->node, sizeof(h->node), "%s", node);
	snprintf(h->fabric, sizeof(h->fabric), "%s", fabric);
	h->pid = pid;
	h->sent = 1;
	*type = strcmp(msg, "HELLO") ? EMU_DMSG_UCMA_OPEN : EMU_DMSG_HELLO;
	return sizeof(*h);
}

int main(int argc, char **argv)
{
	union {
		struct emu_dmsg_hello hello;
		struct emu_dmsg_tap tap;
	} b;
	struct emu_dmsg h = { EMU_DPROTO_MAGIC, EMU_DPROTO_VERSION, 0, 0, 0 };
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct iovec iov[2] = { { &h, sizeof(h) }, { &b, 0 } };
	union {
		char c[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} cm;
	struct msghdr m = { .msg_iov = iov, .msg_iovlen = 2 };
	int32_t pid;
	ssize_t n;
	int s;

	if (argc != 5 || (strcmp(argv[2], "HELLO") && strcmp(argv[2], "UCMA_OPEN") &&
			  strcmp(argv[2], "TAP_ATTACH"))) {
		fprintf(stderr, "usage: claim_probe SOCKET HELLO|UCMA_OPEN|TAP_ATTACH NODE self|PID\n");
		return 2;
	}
	pid = strcmp(argv[4], "self") ? (int32_t)atoi(argv[4]) : (int32_t)getpid();
	iov[1].iov_len = body(argv[2], argv[3], pid, &h.type, &b);
	if (h.type == EMU_DMSG_TAP_ATTACH) {
		int fd = eventfd(0, EFD_CLOEXEC);

		memset(&cm, 0, sizeof(cm));
		m.msg_control = cm.c;
		m.msg_controllen = sizeof(cm.c);
		CMSG_FIRSTHDR(&m)->cmsg_level = SOL_SOCKET;
		CMSG_FIRSTHDR(&m)->cmsg_type = SCM_RIGHTS;
		CMSG_FIRSTHDR(&m)->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(CMSG_FIRSTHDR(&m)), &fd, sizeof(fd));
	}
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", argv[1]);
	s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (s < 0 || connect(s, (struct sockaddr *)&sa, sizeof(sa))) {
		printf("connect: %s\n", errname(errno));
		return 0;
	}
	if (sendmsg(s, &m, MSG_NOSIGNAL) < 0) {
		/* the daemon may have closed the connection before the message went */
		printf("%s\n", errno == EPIPE || errno == ECONNRESET ? "closed" : errname(errno));
		return 0;
	}
	iov[1].iov_len = sizeof(b);
	m = (struct msghdr){ .msg_iov = iov, .msg_iovlen = 2 };
	n = recvmsg(s, &m, MSG_CMSG_CLOEXEC);
	if (n <= 0)
		printf("%s\n", n == 0 || errno == ECONNRESET ? "closed" : errname(errno));
	else if (n < (ssize_t)sizeof(h) || h.magic != EMU_DPROTO_MAGIC)
		printf("malformed answer\n");
	else
		printf("%s %s %s: %s\n", argv[2], argv[3], argv[4], errname((int)h.arg));
	return 0;
}
