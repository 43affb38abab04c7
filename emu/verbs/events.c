/* Completion channels and asynchronous events.
 *
 * Both are real, pollable file descriptors carrying the kernel's record formats, so programs
 * that poll()/epoll() them, set O_NONBLOCK, or read them through ibv_get_cq_event() /
 * ibv_get_async_event() all work: a completion channel is a pipe of
 * struct ib_uverbs_comp_event_desc (8 bytes: the CQ's user pointer), the context's async_fd a
 * pipe of struct ib_uverbs_async_event_desc (16 bytes). The write ends belong to the emulated
 * HCA (emu_verbs_post_async_event() and, with the data path, the CQ notifier). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "emu/verbs/verbs_priv.h"

struct emu_comp_channel {
	struct ibv_comp_channel ch;
	int wfd; /* write end: the CQ notifier writes here */
};

struct async_desc { /* struct ib_uverbs_async_event_desc */
	uint64_t element;
	uint32_t event_type;
	uint32_t reserved;
};

struct ibv_comp_channel *ibv_create_comp_channel(struct ibv_context *context)
{
	struct emu_comp_channel *c = calloc(1, sizeof(*c));
	int p[2];

	if (!c) {
		errno = ENOMEM;
		return NULL;
	}
	if (pipe2(p, O_CLOEXEC) < 0) {
		free(c);
		return NULL;
	}
	c->ch.context = context;
	c->ch.fd = p[0];
	c->ch.refcnt = 0;
	c->wfd = p[1];
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
		free(c);
	}
	pthread_mutex_unlock(&context->mutex);
	return ret;
}

int emu_verbs_comp_channel_wfd(struct ibv_comp_channel *channel)
{
	return container_of(channel, struct emu_comp_channel, ch)->wfd;
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
