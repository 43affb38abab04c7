/*
 * rdma_nl_probe: the raw RDMA netlink exchange, request by request, in a form that compares
 * between kernel rxe (scripts/rxe-vm, single VM: rxe0 and rxe1) and the emulated host
 * (LD_PRELOAD of librdmaemu-host.so). Prints each reply datagram: length, type, flags, whether
 * the sequence number is echoed, whose port id it carries, and every attribute in hex. Values
 * that differ from boot to boot on the kernel (the PD's local_dma_lkey, a random port id) are
 * printed as a class, not as a number. Recorded in fixtures/golden/rxe/rdma-nl-probe.out.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <linux/netlink.h>
#include <rdma/rdma_netlink.h>

#define NLDEV(op) RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, op)
#define RQ (NLM_F_REQUEST | NLM_F_ACK)
#define DUMP (NLM_F_REQUEST | NLM_F_ACK | NLM_F_DUMP)
#define NONE 0xffffffffu

static uint32_t seq = 1000;
static uint32_t self_pid;

static const char *errname(int e)
{
	switch (e) {
	case 0: return "0";
	case EINVAL: return "EINVAL";
	case EPERM: return "EPERM";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case ENODEV: return "ENODEV";
	case ENOENT: return "ENOENT";
	case EMSGSIZE: return "EMSGSIZE";
	case EADDRINUSE: return "EADDRINUSE";
	case ENOPROTOOPT: return "ENOPROTOOPT";
	case EAGAIN: return "EAGAIN";
	case ENOTCONN: return "ENOTCONN";
	default: return "E?";
	}
}

static const char *pidclass(uint32_t pid)
{
	static char buf[32];

	if (pid == 0)
		return "0";
	if (pid == self_pid)
		return "own";
	if (pid == (uint32_t)getpid())
		return "tgid";
	if ((int32_t)pid < -4096)
		return "random-negative";
	snprintf(buf, sizeof(buf), "%u", pid);
	return buf;
}

static int is_nested(unsigned type)
{
	switch (type) {
	case RDMA_NLDEV_ATTR_RES_SUMMARY: case RDMA_NLDEV_ATTR_RES_SUMMARY_ENTRY:
	case RDMA_NLDEV_ATTR_RES_QP: case RDMA_NLDEV_ATTR_RES_QP_ENTRY:
	case RDMA_NLDEV_ATTR_RES_CM_ID: case RDMA_NLDEV_ATTR_RES_CM_ID_ENTRY:
	case RDMA_NLDEV_ATTR_RES_CQ: case RDMA_NLDEV_ATTR_RES_CQ_ENTRY:
	case RDMA_NLDEV_ATTR_RES_MR: case RDMA_NLDEV_ATTR_RES_MR_ENTRY:
	case RDMA_NLDEV_ATTR_RES_PD: case RDMA_NLDEV_ATTR_RES_PD_ENTRY:
	case RDMA_NLDEV_ATTR_DRIVER: case RDMA_NLDEV_ATTR_DRIVER_ENTRY:
	case RDMA_NLDEV_ATTR_STAT_COUNTER: case RDMA_NLDEV_ATTR_STAT_COUNTER_ENTRY:
	case RDMA_NLDEV_ATTR_STAT_HWCOUNTERS: case RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY:
	case RDMA_NLDEV_ATTR_RES_CTX: case RDMA_NLDEV_ATTR_RES_CTX_ENTRY:
	case RDMA_NLDEV_ATTR_RES_SRQ: case RDMA_NLDEV_ATTR_RES_SRQ_ENTRY:
		return 1;
	}
	return 0;
}

static void print_attrs(const unsigned char *p, size_t len, int depth)
{
	while (len >= 4) {
		uint16_t alen, atype;

		memcpy(&alen, p, 2);
		memcpy(&atype, p + 2, 2);
		if (alen < 4 || alen > len) {
			printf("%*sbad attribute length %u\n", depth * 2, "", alen);
			return;
		}
		unsigned t = atype & NLA_TYPE_MASK;
		printf("%*sattr %u%s len %u", depth * 2, "", t,
		       atype & NLA_F_NESTED ? " nested-flag" : "", alen);
		if (is_nested(t)) {
			printf("\n");
			print_attrs(p + 4, alen - 4u, depth + 1);
		} else {
			printf(":");
			if (t == RDMA_NLDEV_ATTR_RES_LOCAL_DMA_LKEY)
				printf(" (varies)");
			else
				for (unsigned i = 4; i < alen; i++)
					printf(" %02x", p[i]);
			printf("\n");
		}
		size_t step = NLA_ALIGN(alen);
		if (step > len)
			break;
		p += step;
		len -= step;
	}
}

static void print_msg(const struct nlmsghdr *h, size_t got, uint32_t want_seq)
{
	printf("< len %u type 0x%x flags 0x%x seq %s pid %s\n", h->nlmsg_len, h->nlmsg_type,
	       h->nlmsg_flags, h->nlmsg_seq == want_seq ? "echo" : "other", pidclass(h->nlmsg_pid));
	if (h->nlmsg_type == NLMSG_ERROR) {
		const struct nlmsgerr *e = NLMSG_DATA(h);
		printf("  error %s (%d) orig len %u type 0x%x flags 0x%x seq %s\n", errname(-e->error),
		       e->error, e->msg.nlmsg_len, e->msg.nlmsg_type, e->msg.nlmsg_flags,
		       e->msg.nlmsg_seq == want_seq ? "echo" : "other");
		size_t used = NLMSG_HDRLEN + sizeof(*e);
		if (h->nlmsg_len > used) {
			printf("  trailing");
			for (size_t i = used; i < h->nlmsg_len && i < got; i++)
				printf(" %02x", ((const unsigned char *)h)[i]);
			printf("\n");
		}
		return;
	}
	if (h->nlmsg_type == NLMSG_DONE) {
		printf("  done");
		for (size_t i = NLMSG_HDRLEN; i < h->nlmsg_len; i++)
			printf(" %02x", ((const unsigned char *)h)[i]);
		printf("\n");
		return;
	}
	print_attrs((const unsigned char *)NLMSG_DATA(h), h->nlmsg_len - NLMSG_HDRLEN, 1);
}

/* Reads every datagram that is there within a short wait; the kernel answers synchronously. */
static void drain(int fd, uint32_t want_seq)
{
	unsigned char buf[16384];

	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		if (poll(&pfd, 1, 200) <= 0) {
			printf("  (no more)\n");
			return;
		}
		struct sockaddr_nl from;
		struct iovec iov = { buf, sizeof(buf) };
		struct msghdr m = { .msg_name = &from, .msg_namelen = sizeof(from),
				    .msg_iov = &iov, .msg_iovlen = 1 };
		memset(&from, 0xa5, sizeof(from));
		ssize_t n = recvmsg(fd, &m, 0);
		if (n < 0) {
			printf("  recvmsg: %s\n", errname(errno));
			return;
		}
		printf("  datagram %zd bytes from family %u pid %u groups %u namelen %u flags 0x%x\n", n,
		       from.nl_family, from.nl_pid, from.nl_groups, m.msg_namelen, m.msg_flags);
		for (struct nlmsghdr *h = (void *)buf; NLMSG_OK(h, (size_t)n); h = NLMSG_NEXT(h, n))
			print_msg(h, (size_t)n, want_seq);
	}
}

static size_t put_u32(unsigned char *p, uint16_t type, uint32_t v)
{
	uint16_t len = 8;

	memcpy(p, &len, 2);
	memcpy(p + 2, &type, 2);
	memcpy(p + 4, &v, 4);
	return 8;
}

static size_t build(unsigned char *buf, uint16_t type, uint16_t flags, uint32_t dev, uint32_t port,
		    uint16_t xattr, uint32_t xval)
{
	struct nlmsghdr *h = (void *)buf;
	size_t len = NLMSG_HDRLEN;

	if (dev != NONE)
		len += put_u32(buf + len, RDMA_NLDEV_ATTR_DEV_INDEX, dev);
	if (port != NONE)
		len += put_u32(buf + len, RDMA_NLDEV_ATTR_PORT_INDEX, port);
	if (xattr)
		len += put_u32(buf + len, xattr, xval);
	h->nlmsg_len = (uint32_t)len;
	h->nlmsg_type = type;
	h->nlmsg_flags = flags;
	h->nlmsg_seq = ++seq;
	h->nlmsg_pid = 0;
	return len;
}

static void request(int fd, const char *name, uint16_t type, uint16_t flags, uint32_t dev,
		    uint32_t port, uint16_t xattr, uint32_t xval)
{
	unsigned char buf[256];
	size_t len = build(buf, type, flags, dev, port, xattr, xval);
	struct sockaddr_nl to = { .nl_family = AF_NETLINK };

	printf("== %s\n", name);
	ssize_t n = sendto(fd, buf, len, 0, (struct sockaddr *)&to, sizeof(to));
	printf("> type 0x%x flags 0x%x len %zu: sendto %zd%s%s\n", type, flags, len, n,
	       n < 0 ? " " : "", n < 0 ? errname(errno) : "");
	drain(fd, seq);
}

static int open_nl(int type, int capack, int extack)
{
	int fd = socket(AF_NETLINK, type, NETLINK_RDMA);
	int one = 1;

	if (fd < 0) {
		printf("socket: %s\n", errname(errno));
		exit(1);
	}
	if (capack && setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one)))
		printf("setsockopt CAP_ACK: %s\n", errname(errno));
	if (extack && setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one)))
		printf("setsockopt EXT_ACK: %s\n", errname(errno));
	return fd;
}

static void print_name(int fd, const char *what)
{
	struct sockaddr_nl a;
	socklen_t l = sizeof(a);

	memset(&a, 0xa5, sizeof(a));
	int rc = what[4] == 'p' ? getpeername(fd, (void *)&a, &l) : getsockname(fd, (void *)&a, &l);
	printf("%s: rc %d%s%s family %u pid %s groups %u len %u\n", what, rc, rc ? " " : "",
	       rc ? errname(errno) : "", a.nl_family, pidclass(a.nl_pid), a.nl_groups, l);
}

static void socket_calls(void)
{
	int fd = open_nl(SOCK_RAW, 0, 0);
	int v;
	socklen_t l = sizeof(v);

	printf("== socket calls\n");
	print_name(fd, "getsockname before bind");
	print_name(fd, "getpeername");
	getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &v, &l);
	printf("SO_DOMAIN %d\n", v);
	getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &v, &l);
	printf("SO_PROTOCOL %d\n", v);
	getsockopt(fd, SOL_SOCKET, SO_TYPE, &v, &l);
	printf("SO_TYPE %d\n", v);
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	int pr = poll(&pfd, 1, 0);
	printf("poll idle: %d revents 0x%x\n", pr, pfd.revents);
	struct sockaddr_nl a = { .nl_family = AF_NETLINK };
	printf("bind 0: %d\n", bind(fd, (void *)&a, sizeof(a)));
	print_name(fd, "getsockname after bind");
	self_pid = (uint32_t)getpid();
	int fd2 = open_nl(SOCK_DGRAM, 0, 0);
	printf("bind second 0: %d\n", bind(fd2, (void *)&a, sizeof(a)));
	print_name(fd2, "getsockname second");
	close(fd2);
	close(fd);
	fd = open_nl(SOCK_RAW | SOCK_CLOEXEC, 0, 0);
	unsigned char buf[64];
	size_t len = build(buf, NLDEV(RDMA_NLDEV_CMD_SYS_GET), RQ, NONE, NONE, 0, 0);
	printf("write unbound: %zd\n", write(fd, buf, len));
	print_name(fd, "getsockname after autobind");
	pfd.fd = fd;
	pfd.events = POLLIN;
	pr = poll(&pfd, 1, 1000);
	printf("poll after request: %d revents 0x%x\n", pr, pfd.revents);
	printf("recv peek trunc 0: %zd\n", recv(fd, buf, 0, MSG_PEEK | MSG_TRUNC));
	struct iovec iov = { buf, 16 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t n = recvmsg(fd, &m, 0);
	printf("recvmsg 16 bytes: %zd msg_flags 0x%x namelen %u\n", n, m.msg_flags, m.msg_namelen);
	struct sockaddr_nl from;
	socklen_t fl = sizeof(from);
	memset(&from, 0xa5, sizeof(from));
	n = recvfrom(fd, buf, sizeof(buf), 0, (void *)&from, &fl);
	printf("recvfrom next: %zd type %s family %u pid %u len %u\n", n,
	       ((struct nlmsghdr *)buf)->nlmsg_type == NLMSG_ERROR ? "error" : "other", from.nl_family,
	       from.nl_pid, fl);
	n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
	printf("recv nonblocking empty: %zd %s\n", n, errname(errno));
	close(fd);
}

static void batch(int fd)
{
	unsigned char buf[256];
	size_t a = build(buf, NLDEV(RDMA_NLDEV_CMD_SYS_GET), RQ, NONE, NONE, 0, 0);
	size_t b = build(buf + a, NLDEV(RDMA_NLDEV_CMD_GET), RQ, 7, NONE, 0, 0);

	printf("== batch: sys-get then get 7 in one datagram\n");
	printf("> sendto %zd\n", send(fd, buf, a + b, 0));
	drain(fd, seq);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	socket_calls();

	int fd = open_nl(SOCK_RAW, 1, 1);
	struct sockaddr_nl a = { .nl_family = AF_NETLINK };
	bind(fd, (void *)&a, sizeof(a));
	socklen_t l = sizeof(a);
	getsockname(fd, (void *)&a, &l);
	self_pid = a.nl_pid;

	request(fd, "get dump", NLDEV(RDMA_NLDEV_CMD_GET), DUMP, NONE, NONE, 0, 0);
	request(fd, "get 0", NLDEV(RDMA_NLDEV_CMD_GET), RQ, 0, NONE, 0, 0);
	request(fd, "get 1 no ack", NLDEV(RDMA_NLDEV_CMD_GET), NLM_F_REQUEST, 1, NONE, 0, 0);
	request(fd, "get 7", NLDEV(RDMA_NLDEV_CMD_GET), RQ, 7, NONE, 0, 0);
	request(fd, "get no index", NLDEV(RDMA_NLDEV_CMD_GET), RQ, NONE, NONE, 0, 0);
	request(fd, "port 0/1", NLDEV(RDMA_NLDEV_CMD_PORT_GET), RQ, 0, 1, 0, 0);
	request(fd, "port 1/1", NLDEV(RDMA_NLDEV_CMD_PORT_GET), RQ, 1, 1, 0, 0);
	request(fd, "port 0/2", NLDEV(RDMA_NLDEV_CMD_PORT_GET), RQ, 0, 2, 0, 0);
	request(fd, "port 0/0", NLDEV(RDMA_NLDEV_CMD_PORT_GET), RQ, 0, 0, 0, 0);
	request(fd, "port 7/1", NLDEV(RDMA_NLDEV_CMD_PORT_GET), RQ, 7, 1, 0, 0);
	request(fd, "port 0 no port", NLDEV(RDMA_NLDEV_CMD_PORT_GET), RQ, 0, NONE, 0, 0);
	request(fd, "port dump 1", NLDEV(RDMA_NLDEV_CMD_PORT_GET), DUMP, 1, NONE, 0, 0);
	request(fd, "port dump no index", NLDEV(RDMA_NLDEV_CMD_PORT_GET), DUMP, NONE, NONE, 0, 0);
	request(fd, "port dump 7", NLDEV(RDMA_NLDEV_CMD_PORT_GET), DUMP, 7, NONE, 0, 0);
	request(fd, "sys get", NLDEV(RDMA_NLDEV_CMD_SYS_GET), RQ, NONE, NONE, 0, 0);
	request(fd, "res 0", NLDEV(RDMA_NLDEV_CMD_RES_GET), RQ, 0, NONE, 0, 0);
	request(fd, "res 7", NLDEV(RDMA_NLDEV_CMD_RES_GET), RQ, 7, NONE, 0, 0);
	request(fd, "res dump", NLDEV(RDMA_NLDEV_CMD_RES_GET), DUMP, NONE, NONE, 0, 0);
	request(fd, "res qp dump 0", NLDEV(RDMA_NLDEV_CMD_RES_QP_GET), DUMP, 0, NONE, 0, 0);
	request(fd, "res qp dump 1/1", NLDEV(RDMA_NLDEV_CMD_RES_QP_GET), DUMP, 1, 1, 0, 0);
	request(fd, "res qp dump 0/2", NLDEV(RDMA_NLDEV_CMD_RES_QP_GET), DUMP, 0, 2, 0, 0);
	request(fd, "res qp dump 7", NLDEV(RDMA_NLDEV_CMD_RES_QP_GET), DUMP, 7, NONE, 0, 0);
	request(fd, "res qp dump no index", NLDEV(RDMA_NLDEV_CMD_RES_QP_GET), DUMP, NONE, NONE, 0, 0);
	request(fd, "res qp doit 0 lqpn 1", NLDEV(RDMA_NLDEV_CMD_RES_QP_GET), RQ, 0, NONE,
		RDMA_NLDEV_ATTR_RES_LQPN, 1);
	request(fd, "res qp doit 0 no lqpn", NLDEV(RDMA_NLDEV_CMD_RES_QP_GET), RQ, 0, NONE, 0, 0);
	request(fd, "res cq doit 0 cqn 0", NLDEV(RDMA_NLDEV_CMD_RES_CQ_GET), RQ, 0, NONE,
		RDMA_NLDEV_ATTR_RES_CQN, 0);
	request(fd, "res pd doit 0 pdn 0", NLDEV(RDMA_NLDEV_CMD_RES_PD_GET), RQ, 0, NONE,
		RDMA_NLDEV_ATTR_RES_PDN, 0);
	request(fd, "res mr doit 0 mrn 0", NLDEV(RDMA_NLDEV_CMD_RES_MR_GET), RQ, 0, NONE,
		RDMA_NLDEV_ATTR_RES_MRN, 0);
	request(fd, "res ctx doit 0 ctxn 0", NLDEV(RDMA_NLDEV_CMD_RES_CTX_GET), RQ, 0, NONE,
		RDMA_NLDEV_ATTR_RES_CTXN, 0);
	request(fd, "res cq dump 0", NLDEV(RDMA_NLDEV_CMD_RES_CQ_GET), DUMP, 0, NONE, 0, 0);
	request(fd, "res pd dump 1", NLDEV(RDMA_NLDEV_CMD_RES_PD_GET), DUMP, 1, NONE, 0, 0);
	request(fd, "res mr dump 0", NLDEV(RDMA_NLDEV_CMD_RES_MR_GET), DUMP, 0, NONE, 0, 0);
	request(fd, "res cm_id dump 0", NLDEV(RDMA_NLDEV_CMD_RES_CM_ID_GET), DUMP, 0, NONE, 0, 0);
	request(fd, "res ctx dump 0", NLDEV(RDMA_NLDEV_CMD_RES_CTX_GET), DUMP, 0, NONE, 0, 0);
	request(fd, "res srq dump 0", NLDEV(RDMA_NLDEV_CMD_RES_SRQ_GET), DUMP, 0, NONE, 0, 0);
	request(fd, "stat 0/1", NLDEV(RDMA_NLDEV_CMD_STAT_GET), RQ, 0, 1, 0, 0);
	request(fd, "stat 0/2", NLDEV(RDMA_NLDEV_CMD_STAT_GET), RQ, 0, 2, 0, 0);
	request(fd, "stat 7/1", NLDEV(RDMA_NLDEV_CMD_STAT_GET), RQ, 7, 1, 0, 0);
	request(fd, "stat 0 no port", NLDEV(RDMA_NLDEV_CMD_STAT_GET), RQ, 0, NONE, 0, 0);
	request(fd, "stat qp dump 1/1", NLDEV(RDMA_NLDEV_CMD_STAT_GET), DUMP, 1, 1,
		RDMA_NLDEV_ATTR_STAT_RES, RDMA_NLDEV_ATTR_RES_QP);
	request(fd, "stat dump 0/1 no res", NLDEV(RDMA_NLDEV_CMD_STAT_GET), DUMP, 0, 1, 0, 0);
	request(fd, "stat dump no index", NLDEV(RDMA_NLDEV_CMD_STAT_GET), DUMP, NONE, NONE, 0, 0);
	request(fd, "stat qp dump 7/1", NLDEV(RDMA_NLDEV_CMD_STAT_GET), DUMP, 7, 1,
		RDMA_NLDEV_ATTR_STAT_RES, RDMA_NLDEV_ATTR_RES_QP);
	request(fd, "stat status 0/1", NLDEV(RDMA_NLDEV_CMD_STAT_GET_STATUS), RQ, 0, 1, 0, 0);
	request(fd, "stat status 7/1", NLDEV(RDMA_NLDEV_CMD_STAT_GET_STATUS), RQ, 7, 1, 0, 0);
	request(fd, "sys get dump", NLDEV(RDMA_NLDEV_CMD_SYS_GET), DUMP, NONE, NONE, 0, 0);
	request(fd, "get dump 0", NLDEV(RDMA_NLDEV_CMD_GET), DUMP, 0, NONE, 0, 0);
	request(fd, "chardev 0 uverbs", NLDEV(RDMA_NLDEV_CMD_GET_CHARDEV), RQ, 0, NONE, 0, 0);
	request(fd, "op 0", NLDEV(0), RQ, NONE, NONE, 0, 0);
	request(fd, "op 31", NLDEV(31), RQ, NONE, NONE, 0, 0);
	request(fd, "op 31 dump", NLDEV(31), DUMP, NONE, NONE, 0, 0);
	request(fd, "client 9", RDMA_NL_GET_TYPE(9, 1), RQ, NONE, NONE, 0, 0);
	request(fd, "client 3", RDMA_NL_GET_TYPE(3, 1), RQ, NONE, NONE, 0, 0);
	request(fd, "not a request", NLDEV(RDMA_NLDEV_CMD_GET), NLM_F_ACK, 0, NONE, 0, 0);
	request(fd, "noop", NLMSG_NOOP, RQ, NONE, NONE, 0, 0);
	request(fd, "newlink no attributes", NLDEV(RDMA_NLDEV_CMD_NEWLINK), RQ, NONE, NONE, 0, 0);
	request(fd, "set 7", NLDEV(RDMA_NLDEV_CMD_SET), RQ, 7, NONE, 0, 0);
	batch(fd);
	close(fd);

	fd = open_nl(SOCK_RAW, 0, 0);
	request(fd, "no CAP_ACK: get 0", NLDEV(RDMA_NLDEV_CMD_GET), RQ, 0, NONE, 0, 0);
	request(fd, "no CAP_ACK: get 7", NLDEV(RDMA_NLDEV_CMD_GET), RQ, 7, NONE, 0, 0);
	close(fd);
	printf("== end\n");
	return 0;
}
