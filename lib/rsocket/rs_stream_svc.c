/* The stream rsockets' service threads, as rdma-core's: the listen service takes connect
 * requests on every listener and accepts them; the connect service drives the CM events of
 * connecting and connected rsockets (a connect the application left in progress, the peer's
 * DISCONNECTED); the keepalive service sends RS_CTRL_KEEPALIVE on every rsocket with
 * SO_KEEPALIVE each keepalive_time seconds (TCP_KEEPIDLE). Each thread starts with its first
 * rsocket and ends with its last. Commands reach it over a socketpair and are answered there,
 * so that an rsocket removed from a service is never touched by it again. */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "lib/cma.h"
#include "rs_stream_priv.h"
#include "util/failcall.h"

struct svc_msg {
	uint32_t cmd;
	uint32_t status;
	struct rs_stream *rs;
};

struct rs_svc {
	pthread_t id;
	int sock[2];
	int cnt;			/* entries 1..cnt; entry 0 is the command socket */
	int size;
	struct rs_stream **rss;
	struct pollfd *fds;		/* CM services */
	uint64_t *timeouts;		/* keepalive: seconds of CLOCK_MONOTONIC */
	void *(*run)(void *svc);
};

static pthread_mutex_t svc_lock = PTHREAD_MUTEX_INITIALIZER;

static void *cm_svc_run(void *arg);
static void *keepalive_run(void *arg);

static struct rs_svc svcs[] = {
	[RS_SVC_LISTEN] = { .run = cm_svc_run },
	[RS_SVC_CONNECT] = { .run = cm_svc_run },
	[RS_SVC_KEEPALIVE] = { .run = keepalive_run },
};

static void write_all(int fd, const void *p, size_t len)
{
	const uint8_t *b = p;

	while (len) {
		ssize_t n = write(fd, b, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		b += n;
		len -= (size_t)n;
	}
}

static int read_all(int fd, void *p, size_t len)
{
	uint8_t *b = p;

	while (len) {
		ssize_t n = read(fd, b, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		b += n;
		len -= (size_t)n;
	}
	return 0;
}

int rs_svc_notify(enum rs_svc_kind kind, struct rs_stream *rs, enum rs_svc_cmd cmd)
{
	struct rs_svc *svc = &svcs[kind];
	struct svc_msg msg;
	int ret = 0;

	pthread_mutex_lock(&svc_lock);
	if (!svc->cnt) {
		if (emu_socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, svc->sock)) {
			ret = -1;
			goto unlock;
		}
		ret = emu_pthread_create(&svc->id, NULL, svc->run, svc);
		if (ret) {
			errno = ret;
			ret = -1;
			goto close_pair;
		}
	}
	msg.cmd = cmd;
	msg.status = EINVAL;
	msg.rs = rs;
	write_all(svc->sock[0], &msg, sizeof msg);
	if (read_all(svc->sock[0], &msg, sizeof msg))
		msg.status = EIO;
	ret = msg.status ? rs_seterr((int)msg.status) : 0;
	if (svc->cnt)
		goto unlock;
	pthread_join(svc->id, NULL);
close_pair:
	close(svc->sock[0]);
	close(svc->sock[1]);
unlock:
	pthread_mutex_unlock(&svc_lock);
	return ret;
}

static int svc_grow(struct rs_svc *svc)
{
	int size = svc->size ? svc->size * 2 : 16;
	struct rs_stream **rss = emu_realloc(svc->rss, (size_t)size * sizeof *rss);
	struct pollfd *fds;
	uint64_t *to;

	if (!rss)
		return ENOMEM;
	svc->rss = rss;
	fds = emu_realloc(svc->fds, (size_t)size * sizeof *fds);
	if (!fds)
		return ENOMEM;
	svc->fds = fds;
	to = emu_realloc(svc->timeouts, (size_t)size * sizeof *to);
	if (!to)
		return ENOMEM;
	svc->timeouts = to;
	svc->size = size;
	return 0;
}

static int svc_index(const struct rs_svc *svc, const struct rs_stream *rs)
{
	for (int i = 1; i <= svc->cnt; i++)
		if (svc->rss[i] == rs)
			return i;
	return -1;
}

static int svc_add(struct rs_svc *svc, struct rs_stream *rs)
{
	if (svc->cnt + 1 >= svc->size && svc_grow(svc))
		return ENOMEM;
	svc->rss[++svc->cnt] = rs;
	return 0;
}

static int svc_remove(struct rs_svc *svc, struct rs_stream *rs)
{
	int i = svc_index(svc, rs);

	if (i < 0)
		return EBADF;
	svc->rss[i] = svc->rss[svc->cnt];
	svc->fds[i] = svc->fds[svc->cnt];
	svc->timeouts[i] = svc->timeouts[svc->cnt];
	svc->cnt--;
	return 0;
}

static void svc_free(struct rs_svc *svc)
{
	free(svc->rss);
	free(svc->fds);
	free(svc->timeouts);
	svc->rss = NULL;
	svc->fds = NULL;
	svc->timeouts = NULL;
	svc->size = 0;
}

static uint64_t now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec;
}

static void svc_command(struct rs_svc *svc)
{
	struct svc_msg msg;
	int i;

	if (read_all(svc->sock[1], &msg, sizeof msg))
		return;
	switch (msg.cmd) {
	case RS_SVC_ADD_CM:
		/* an rsocket is in the set once: a second rconnect of a non-blocking rsocket still
		 * connecting asks for it again (as rdma-core's rconnect does), and a second entry
		 * would outlive the one rclose removes (rdma-core then reads the freed rsocket when
		 * its closed fd polls) */
		if (svc_index(svc, msg.rs) > 0) {
			msg.status = 0;
			break;
		}
		msg.status = (uint32_t)svc_add(svc, msg.rs);
		if (!msg.status) {
			msg.rs->opts |= RS_OPT_CM_SVC;
			svc->fds[svc->cnt].fd = msg.rs->cm_id->channel->fd;
			svc->fds[svc->cnt].events = POLLIN;
			svc->fds[svc->cnt].revents = 0;
		}
		break;
	case RS_SVC_REM_CM:
		msg.status = (uint32_t)svc_remove(svc, msg.rs);
		if (!msg.status)
			msg.rs->opts &= ~RS_OPT_CM_SVC;
		break;
	case RS_SVC_ADD_KEEPALIVE:
		msg.status = (uint32_t)svc_add(svc, msg.rs);
		if (!msg.status) {
			msg.rs->opts |= RS_OPT_KEEPALIVE;
			svc->timeouts[svc->cnt] = now_s() + msg.rs->keepalive_time;
		}
		break;
	case RS_SVC_REM_KEEPALIVE:
		msg.status = (uint32_t)svc_remove(svc, msg.rs);
		if (!msg.status)
			msg.rs->opts &= ~RS_OPT_KEEPALIVE;
		break;
	case RS_SVC_MOD_KEEPALIVE:
		i = svc_index(svc, msg.rs);
		msg.status = i < 0 ? EBADF : 0;
		if (i >= 0)
			svc->timeouts[i] = now_s() + msg.rs->keepalive_time;
		break;
	default:
		msg.status = 0;
		break;
	}
	write_all(svc->sock[1], &msg, sizeof msg);
	/* A request already queued is taken now. This also makes the thread known to the
	 * emulator before the listen call returns: a thread that never called into it counts as
	 * absent, and time would run past the connect requests while it sits in poll(). */
	if (msg.cmd == RS_SVC_ADD_CM && !msg.status && svc == &svcs[RS_SVC_LISTEN])
		rs_accept_one(msg.rs);
}

/* A CM event on a connecting or connected rsocket. */
static void handle_cm_event(struct rs_stream *rs)
{
	if (rs->state & RS_OPENING) {
		rs_do_connect(rs);
	} else if (!cma_complete(rs->cm_id) && rs->cm_id->event &&
		   (rs->state & RS_CONNECTED) &&
		   rs->cm_id->event->event == RDMA_CM_EVENT_DISCONNECTED) {
		rs->state = RS_DISCONNECTED;
	}
	if (!(rs->state & RS_OPENING))
		rs_poll_signal();
}

static void *cm_svc_run(void *arg)
{
	struct rs_svc *svc = arg;

	if (svc_grow(svc)) {
		struct svc_msg msg = { .status = ENOMEM };

		write_all(svc->sock[1], &msg, sizeof msg);
		return NULL;
	}
	svc->fds[0].fd = svc->sock[1];
	svc->fds[0].events = POLLIN;
	do {
		for (int i = 0; i <= svc->cnt; i++)
			svc->fds[i].revents = 0;
		poll(svc->fds, (nfds_t)svc->cnt + 1, -1);
		if (svc->fds[0].revents)
			svc_command(svc);
		for (int i = 1; i <= svc->cnt; i++) {
			if (!svc->fds[i].revents)
				continue;
			if (svc == &svcs[RS_SVC_LISTEN])
				rs_accept_one(svc->rss[i]);
			else
				handle_cm_event(svc->rss[i]);
		}
	} while (svc->cnt >= 1);
	svc_free(svc);
	return NULL;
}

/* A zero-length RDMA WRITE (no immediate, rdma-core's choice): the peer's QP acknowledges
 * it without a receive, nothing above it answers, and a dead peer turns it into a completion
 * error. Its completion gives the control slot back (RS_OP_CTRL in wr_id). */
static void send_keepalive(struct rs_stream *rs)
{
	pthread_mutex_lock(&rs->cq_lock);
	if (rs_ctrl_avail(rs) && (rs->state & RS_CONNECTED)) {
		rs->ctrl_seqno++;
		rs_post_write(rs, NULL, 0, RS_MSG(RS_OP_CTRL, RS_CTRL_KEEPALIVE), 0, 0, 0);
	}
	pthread_mutex_unlock(&rs->cq_lock);
}

static void *keepalive_run(void *arg)
{
	struct rs_svc *svc = arg;
	struct pollfd fd;
	int timeout = -1;

	if (svc_grow(svc)) {
		struct svc_msg msg = { .status = ENOMEM };

		write_all(svc->sock[1], &msg, sizeof msg);
		return NULL;
	}
	fd.fd = svc->sock[1];
	fd.events = POLLIN;
	do {
		uint64_t now, next = UINT64_MAX;

		fd.revents = 0;
		poll(&fd, 1, timeout < 0 ? -1 : timeout * 1000);
		if (fd.revents)
			svc_command(svc);
		now = now_s();
		for (int i = 1; i <= svc->cnt; i++) {
			if (svc->timeouts[i] <= now) {
				send_keepalive(svc->rss[i]);
				svc->timeouts[i] = now + svc->rss[i]->keepalive_time;
			}
			if (svc->timeouts[i] < next)
				next = svc->timeouts[i];
		}
		timeout = next == UINT64_MAX ? -1 : (int)(next - now);
	} while (svc->cnt >= 1);
	svc_free(svc);
	return NULL;
}
