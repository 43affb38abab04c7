/* The fake ibacm of the ACM rows (fakeacm.h). */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "conformance/conformance.h"
#include "conformance/fakeacm.h"

#define SYSTEM_SOCK "/run/ibacm.sock"
#define SYSTEM_PORT "/run/ibacm.port"

static struct {
	pthread_t thread;
	bool running;
	volatile bool stop;
	int lfd;
	char path[108];   /* the socket or port file the library reads */
	char dir[64];     /* emu: the private directory holding it */
	fakeacm_reply_fn *fn;
	void *arg;
	pthread_mutex_t lock;
	int connected;
	size_t nreqs;
	uint8_t req[FAKEACM_MAX_REQS][FAKEACM_MAX_MSG];
	size_t req_len[FAKEACM_MAX_REQS];
} fa = { .lfd = -1, .lock = PTHREAD_MUTEX_INITIALIZER };

static void remove_files(void)
{
	if (fa.path[0])
		unlink(fa.path);
	fa.path[0] = 0;
	if (fa.dir[0])
		rmdir(fa.dir);
	fa.dir[0] = 0;
}

/* Waits for fd to be readable, 100 ms at a time, until stop. */
static bool wait_readable(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	while (!fa.stop) {
		int n = poll(&p, 1, 100);

		if (n > 0)
			return true;
		if (n < 0 && errno != EINTR)
			return false;
	}
	return false;
}

static bool read_full(int fd, uint8_t *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n;

		if (!wait_readable(fd))
			return false;
		n = recv(fd, buf + got, len - got, 0);
		if (n <= 0)
			return false;
		got += (size_t)n;
	}
	return true;
}

static void serve(int fd)
{
	for (;;) {
		uint8_t msg[FAKEACM_MAX_MSG], reply[FAKEACM_MAX_MSG];
		uint16_t len;
		size_t n, slot;

		if (!read_full(fd, msg, FAKEACM_HDR_LEN))
			return;
		memcpy(&len, msg + 6, 2);
		if (len < FAKEACM_HDR_LEN || len > FAKEACM_MAX_MSG)
			return; /* not a request librdmacm could send */
		if (!read_full(fd, msg + FAKEACM_HDR_LEN, len - FAKEACM_HDR_LEN))
			return;
		pthread_mutex_lock(&fa.lock);
		slot = fa.nreqs < FAKEACM_MAX_REQS ? fa.nreqs : FAKEACM_MAX_REQS - 1;
		memcpy(fa.req[slot], msg, len);
		fa.req_len[slot] = len;
		fa.nreqs++;
		pthread_mutex_unlock(&fa.lock);
		memset(reply, 0, sizeof(reply));
		n = fa.fn(msg, len, reply, fa.arg);
		if (!n)
			return;
		if (send(fd, reply, n, MSG_NOSIGNAL) != (ssize_t)n)
			return;
	}
}

static void *server_main(void *unused)
{
	int fd;

	(void)unused;
	if (!wait_readable(fa.lfd))
		return NULL;
	fd = accept(fa.lfd, NULL, NULL);
	if (fd < 0)
		return NULL;
	pthread_mutex_lock(&fa.lock);
	fa.connected = 1;
	pthread_mutex_unlock(&fa.lock);
	remove_files(); /* the library has read them: nothing is left behind if the case dies */
	serve(fd);
	close(fd);
	return NULL;
}

static int listen_unix(const char *path)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
	if (bind(fd, (struct sockaddr *)&sun, sizeof(sun)) || listen(fd, 4)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* A TCP listener on 127.0.0.1 (never another address) and its port written to `path`. */
static int listen_tcp(const char *path)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	socklen_t sl = sizeof(sin);
	FILE *f;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) || listen(fd, 4) ||
	    getsockname(fd, (struct sockaddr *)&sin, &sl) || !(f = fopen(path, "we"))) {
		close(fd);
		return -1;
	}
	fprintf(f, "%u\n", ntohs(sin.sin_port));
	if (fclose(f)) {
		unlink(path);
		close(fd);
		return -1;
	}
	return fd;
}

void fakeacm_start(enum fakeacm_transport t, fakeacm_reply_fn *fn, void *arg)
{
	const char *name = t == FAKEACM_TCP ? "ibacm.port" : "ibacm.sock";

	/* a fresh server (a failure sweep runs a case body again in the same process) */
	fakeacm_stop();
	fa.stop = false;
	pthread_mutex_lock(&fa.lock);
	fa.connected = 0;
	fa.nreqs = 0;
	pthread_mutex_unlock(&fa.lock);
	fa.fn = fn;
	fa.arg = arg;
	if (conf_target() == TARGET_EMU) {
		snprintf(fa.dir, sizeof(fa.dir), "/tmp/rdmaemu-fakeacm-XXXXXX");
		if (!mkdtemp(fa.dir)) {
			fa.dir[0] = 0;
			conf_notrun("fake ibacm: mkdtemp: %s", conf_errno_name(errno));
		}
		snprintf(fa.path, sizeof(fa.path), "%s/%s", fa.dir, name);
		/* the emulated library reads these instead of /run/ibacm.* */
		setenv(t == FAKEACM_TCP ? "RDMAEMU_IBACM_PORT_FILE" : "RDMAEMU_IBACM_SERVER_PATH",
		       fa.path, 1);
	} else {
		snprintf(fa.path, sizeof(fa.path), "%s",
			 t == FAKEACM_TCP ? SYSTEM_PORT : SYSTEM_SOCK);
	}
	fa.lfd = t == FAKEACM_TCP ? listen_tcp(fa.path) : listen_unix(fa.path);
	if (fa.lfd < 0) {
		int e = errno;

		fa.path[0] = 0; /* not ours: never remove it */
		remove_files();
		conf_notrun("fake ibacm: cannot listen (%s)", conf_errno_name(e));
	}
	if (pthread_create(&fa.thread, NULL, server_main, NULL)) {
		close(fa.lfd);
		remove_files();
		conf_notrun("fake ibacm: pthread_create failed");
	}
	fa.running = true;
}

void fakeacm_stop(void)
{
	if (fa.running) {
		fa.stop = true;
		pthread_join(fa.thread, NULL);
		fa.running = false;
	}
	if (fa.lfd >= 0)
		close(fa.lfd);
	fa.lfd = -1;
	remove_files();
}

size_t fakeacm_nreqs(void)
{
	size_t n;

	pthread_mutex_lock(&fa.lock);
	n = fa.nreqs;
	pthread_mutex_unlock(&fa.lock);
	return n;
}

const uint8_t *fakeacm_req(size_t i, size_t *len)
{
	const uint8_t *r = NULL;

	pthread_mutex_lock(&fa.lock);
	if (i < fa.nreqs && i < FAKEACM_MAX_REQS) {
		r = fa.req[i];
		*len = fa.req_len[i];
	}
	pthread_mutex_unlock(&fa.lock);
	return r;
}

int fakeacm_connected(void)
{
	int c;

	pthread_mutex_lock(&fa.lock);
	c = fa.connected;
	pthread_mutex_unlock(&fa.lock);
	return c;
}

void fakeacm_set_len(uint8_t *buf, uint16_t len)
{
	memcpy(buf + 6, &len, 2); /* host byte order, as librdmacm and ibacm use it */
}

size_t fakeacm_put_hdr(uint8_t *buf, uint8_t status)
{
	memset(buf, 0, FAKEACM_HDR_LEN);
	buf[0] = 1;    /* ACM_VERSION */
	buf[1] = 0x81; /* ACM_OP_RESOLVE | ACM_OP_ACK, as ibacm answers */
	buf[2] = status;
	fakeacm_set_len(buf, FAKEACM_HDR_LEN);
	return FAKEACM_HDR_LEN;
}

static size_t put_ep(uint8_t *buf, size_t len, uint32_t flags, uint16_t type, const void *info,
		     size_t info_len)
{
	uint8_t *ep = buf + len;

	memset(ep, 0, FAKEACM_EP_LEN);
	memcpy(ep, &flags, 4);
	memcpy(ep + 4, &type, 2);
	memcpy(ep + 8, info, info_len);
	len += FAKEACM_EP_LEN;
	fakeacm_set_len(buf, (uint16_t)len);
	return len;
}

size_t fakeacm_put_addr(uint8_t *buf, size_t len, uint32_t flags, int family, const void *addr)
{
	return put_ep(buf, len, flags, family == AF_INET ? 2 : 3, addr, family == AF_INET ? 4 : 16);
}

size_t fakeacm_put_path(uint8_t *buf, size_t len, uint32_t flags, const void *path64)
{
	return put_ep(buf, len, flags, 0x10, path64, 64);
}

void fakeacm_get_hdr(const uint8_t *msg, struct fakeacm_hdr *h)
{
	h->version = msg[0];
	h->opcode = msg[1];
	h->status = msg[2];
	memcpy(h->data, msg + 3, 3);
	memcpy(&h->length, msg + 6, 2);
	memcpy(&h->tid, msg + 8, 8);
}

void fakeacm_get_ep(const uint8_t *msg, size_t i, struct fakeacm_ep *ep)
{
	const uint8_t *p = msg + FAKEACM_HDR_LEN + i * FAKEACM_EP_LEN;

	memcpy(&ep->flags, p, 4);
	memcpy(&ep->type, p + 4, 2);
	memcpy(&ep->reserved, p + 6, 2);
	memcpy(ep->info, p + 8, 64);
}
