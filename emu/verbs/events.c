/* Completion channels and asynchronous events.
 *
 * Both are real, pollable file descriptors carrying the kernel's record formats, so programs
 * that poll()/epoll() them, set O_NONBLOCK, or read them through ibv_get_cq_event() /
 * ibv_get_async_event() all work: a completion channel is a stream socket pair carrying
 * struct ib_uverbs_comp_event_desc (8 bytes: the CQ's user pointer), the context's async_fd a
 * pipe of struct ib_uverbs_async_event_desc (16 bytes). The write ends belong to the emulated
 * HCA (emu_verbs_post_async_event() and, with the data path, the CQ notifier).
 *
 * ibv_get_cq_event waits as the kernel's read() of the channel does: a signal whose handler
 * was installed without SA_RESTART ends the wait with EINTR (qperf's SIGALRM ends its test
 * that way), one with SA_RESTART does not. A blocking recv(MSG_PEEK) on the socket has exactly
 * those semantics and takes nothing, so the record itself is still read under the lock. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "emu/verbs/objects.h"
#include "util/failcall.h"

struct emu_comp_channel {
	struct ibv_comp_channel ch;
	int wfd;              /* write end: the CQ notifier writes here */
	/* Serialises writers, ibv_get_cq_event's reads and the purge of a destroyed CQ's records,
	 * so a record is only ever read whole and never after its CQ is gone. */
	pthread_mutex_t lock;
};

static struct emu_comp_channel *to_ch(struct ibv_comp_channel *ch)
{
	return container_of(ch, struct emu_comp_channel, ch);
}

struct async_desc { /* struct ib_uverbs_async_event_desc */
	uint64_t element;
	uint32_t event_type;
	uint32_t reserved;
};

struct ibv_comp_channel *ibv_create_comp_channel(struct ibv_context *context)
{
	struct emu_comp_channel *c = emu_calloc(1, sizeof(*c));
	int p[2];

	if (!c) {
		errno = ENOMEM;
		return NULL;
	}
	if (emu_socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, p) < 0) {
		free(c);
		return NULL;
	}
	/* the application's end only reads, as the kernel's event file */
	shutdown(p[0], SHUT_WR);
	shutdown(p[1], SHUT_RD);
	c->ch.context = context;
	c->ch.fd = p[0];
	c->ch.refcnt = 0;
	c->wfd = p[1];
	pthread_mutex_init(&c->lock, NULL);
	return &c->ch;
}

/* EBUSY while CQs use the channel (they count themselves in refcnt under context->mutex). */
int ibv_destroy_comp_channel(struct ibv_comp_channel *channel)
{
	struct emu_comp_channel *c = container_of(channel, struct emu_comp_channel, ch);
	struct ibv_context *context = channel->context;
	int ret = 0;

	pthread_mutex_lock(&context->mutex);
	if (channel->refcnt) {
		ret = EBUSY;
	} else {
		close(c->ch.fd);
		close(c->wfd);
		pthread_mutex_destroy(&c->lock);
		free(c);
	}
	pthread_mutex_unlock(&context->mutex);
	return ret;
}

int emu_verbs_comp_channel_wfd(struct ibv_comp_channel *channel)
{
	return container_of(channel, struct emu_comp_channel, ch)->wfd;
}

int emu_verbs_comp_event_post(struct ibv_comp_channel *ch, struct ibv_cq *cq)
{
	struct emu_comp_channel *c = to_ch(ch);
	uint64_t rec = (uintptr_t)cq; /* struct ib_uverbs_comp_event_desc: the CQ's user handle */
	ssize_t n;

	pthread_mutex_lock(&c->lock);
	n = write(c->wfd, &rec, sizeof(rec));
	pthread_mutex_unlock(&c->lock);
	return n == (ssize_t)sizeof(rec) ? 0 : errno;
}

/* Bytes waiting in the channel (whole records only are ever written). */
static int pending(int fd)
{
	int n = 0;

	return ioctl(fd, FIONREAD, &n) == 0 ? n : 0;
}

void emu_verbs_comp_events_purge(struct ibv_comp_channel *ch, struct ibv_cq *cq)
{
	struct emu_comp_channel *c = to_ch(ch);
	uint64_t *recs;
	int n;

	pthread_mutex_lock(&c->lock);
	n = pending(c->ch.fd);
	recs = n > 0 ? emu_malloc((size_t)n) : NULL;
	if (recs && read(c->ch.fd, recs, (size_t)n) == n) {
		size_t keep = 0;

		for (size_t i = 0; i < (size_t)n / sizeof(*recs); i++)
			if (recs[i] != (uintptr_t)cq)
				recs[keep++] = recs[i];
		if (keep && write(c->wfd, recs, keep * sizeof(*recs)) < 0)
			keep = 0; /* cannot happen: the pipe had room for them a moment ago */
	}
	free(recs);
	pthread_mutex_unlock(&c->lock);
}

int emu_verbs_comp_event_read(struct ibv_comp_channel *ch, struct ibv_cq **cq)
{
	struct emu_comp_channel *c = to_ch(ch);

	for (;;) {
		uint64_t rec;

		pthread_mutex_lock(&c->lock);
		if (pending(c->ch.fd) >= (int)sizeof(rec) &&
		    recv(c->ch.fd, &rec, sizeof(rec), MSG_DONTWAIT) == (ssize_t)sizeof(rec)) {
			*cq = (struct ibv_cq *)(uintptr_t)rec;
			/* the kernel counts an event as reported when it is read */
			to_vcq(*cq)->comp_events_reported++;
			pthread_mutex_unlock(&c->lock);
			return 0;
		}
		pthread_mutex_unlock(&c->lock);
		/* O_NONBLOCK: EAGAIN; a signal: EINTR or a restart, as the handler asked */
		if (recv(c->ch.fd, &rec, sizeof(rec), MSG_PEEK) < 0)
			return -1;
	}
}

int emu_verbs_post_async_event(struct ibv_context *context, uint32_t type, uint64_t element)
{
	struct async_desc d = { .element = element, .event_type = type };

	/* 16 bytes < PIPE_BUF: the record arrives whole */
	return write(to_vctx(context)->async_wfd, &d, sizeof(d)) == (ssize_t)sizeof(d) ? 0 : errno;
}

int ibv_get_async_event(struct ibv_context *context, struct ibv_async_event *event)
{
	struct async_desc d;

	if (read(context->async_fd, &d, sizeof(d)) != (ssize_t)sizeof(d))
		return -1;
	event->event_type = (enum ibv_event_type)d.event_type;
	switch (event->event_type) {
	case IBV_EVENT_CQ_ERR:
		event->element.cq = (struct ibv_cq *)(uintptr_t)d.element;
		pthread_mutex_lock(&event->element.cq->mutex);
		to_vcq(event->element.cq)->async_events_reported++;
		pthread_mutex_unlock(&event->element.cq->mutex);
		break;
	case IBV_EVENT_QP_FATAL:
	case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR:
	case IBV_EVENT_COMM_EST:
	case IBV_EVENT_SQ_DRAINED:
	case IBV_EVENT_PATH_MIG:
	case IBV_EVENT_PATH_MIG_ERR:
	case IBV_EVENT_QP_LAST_WQE_REACHED:
		event->element.qp = (struct ibv_qp *)(uintptr_t)d.element;
		break;
	case IBV_EVENT_SRQ_ERR:
	case IBV_EVENT_SRQ_LIMIT_REACHED:
		event->element.srq = (struct ibv_srq *)(uintptr_t)d.element;
		break;
	case IBV_EVENT_WQ_FATAL:
		event->element.wq = (struct ibv_wq *)(uintptr_t)d.element;
		break;
	default:
		event->element.port_num = (int)d.element;
		break;
	}
	return 0;
}

/* Counts the acknowledgement on the object, waking a destroy that waits for it. */
void ibv_ack_async_event(struct ibv_async_event *event)
{
	switch (event->event_type) {
	case IBV_EVENT_CQ_ERR: {
		struct ibv_cq *cq = event->element.cq;

		pthread_mutex_lock(&cq->mutex);
		++cq->async_events_completed;
		pthread_cond_signal(&cq->cond);
		pthread_mutex_unlock(&cq->mutex);
		return;
	}
	case IBV_EVENT_QP_FATAL:
	case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR:
	case IBV_EVENT_COMM_EST:
	case IBV_EVENT_SQ_DRAINED:
	case IBV_EVENT_PATH_MIG:
	case IBV_EVENT_PATH_MIG_ERR:
	case IBV_EVENT_QP_LAST_WQE_REACHED: {
		struct ibv_qp *qp = event->element.qp;

		pthread_mutex_lock(&qp->mutex);
		++qp->events_completed;
		pthread_cond_signal(&qp->cond);
		pthread_mutex_unlock(&qp->mutex);
		return;
	}
	case IBV_EVENT_SRQ_ERR:
	case IBV_EVENT_SRQ_LIMIT_REACHED: {
		struct ibv_srq *srq = event->element.srq;

		pthread_mutex_lock(&srq->mutex);
		++srq->events_completed;
		pthread_cond_signal(&srq->cond);
		pthread_mutex_unlock(&srq->mutex);
		return;
	}
	case IBV_EVENT_WQ_FATAL: {
		struct ibv_wq *wq = event->element.wq;

		pthread_mutex_lock(&wq->mutex);
		++wq->events_completed;
		pthread_cond_signal(&wq->cond);
		pthread_mutex_unlock(&wq->mutex);
		return;
	}
	default:
		return;
	}
}
