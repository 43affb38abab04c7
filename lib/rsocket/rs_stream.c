/* The stream rsocket's object: its creation (a sync rdma_cm id, whose event channel's fd is
 * the socket number), the ops table, the state names, close and the address calls. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include <infiniband/verbs.h>

#include "rs_stream_priv.h"
#include "util/failcall.h"

int rs_seterr(int e)
{
	errno = e;
	return -1;
}

static const struct {
	int state;
	const char *name;
} state_names[] = {
	{ RS_INIT, "INIT" },
	{ RS_BOUND, "BOUND" },
	{ RS_LISTENING, "LISTENING" },
	{ RS_OPENING, "OPENING" },
	{ RS_RESOLVING_ADDR, "RESOLVING_ADDR" },
	{ RS_RESOLVING_ROUTE, "RESOLVING_ROUTE" },
	{ RS_CONNECTING, "CONNECTING" },
	{ RS_ACCEPTING, "ACCEPTING" },
	{ RS_CONNECTED, "CONNECTED" },
	{ RS_CONNECTED | RS_READABLE, "CONNECTED_RD" },
	{ RS_CONNECTED | RS_WRITABLE, "CONNECTED_WR" },
	{ RS_CONNECT_RDWR, "CONNECTED_RDWR" },
	{ RS_CONNECT_ERROR, "CONNECT_ERROR" },
	{ RS_DISCONNECTED, "DISCONNECTED" },
	{ RS_ERROR, "ERROR" },
};

const char *rs_state_name(int state)
{
	for (size_t i = 0; i < sizeof state_names / sizeof state_names[0]; i++)
		if (state_names[i].state == state)
			return state_names[i].name;
	return "?";
}

/* Registered memory in whole pages, so that a forked child (ibv_fork_init, RDMAV_FORK_SAFE)
 * loses no unregistered data sharing a page with it. */
void *rs_forksafe_alloc(size_t len)
{
	long page = sysconf(_SC_PAGESIZE);
	void *p;

	if (page <= 0)
		page = 4096;
	len = (len + (size_t)page - 1) / (size_t)page * (size_t)page;
	if (posix_memalign(&p, (size_t)page, len))
		return NULL;
	memset(p, 0, len);
	return p;
}

/* A new object with the defaults, or the listener's sizes for an accepted one; the type is
 * the caller's to give (the ops table sits above every stream file). */
struct rs_stream *rs_stream_alloc(const struct rs_type *type, const struct rs_stream *from)
{
	const struct rs_config *cfg = rs_config();
	struct rs_stream *rs = emu_calloc(1, sizeof *rs);

	if (!rs)
		return NULL;
	rs->sock.type = type;
	rs->sock.index = -1;
	rs->accept_queue[0] = rs->accept_queue[1] = -1;
	if (from) {
		rs->sbuf_size = from->sbuf_size;
		rs->rbuf_size = from->rbuf_size;
		rs->sq_inline = from->sq_inline;
		rs->sq_size = from->sq_size;
		rs->rq_size = from->rq_size;
		rs->ctrl_max_seqno = from->ctrl_max_seqno;
		rs->target_iomap_size = from->target_iomap_size;
		rs->domain = from->domain;
	} else {
		rs->sbuf_size = cfg->wmem_default;
		rs->rbuf_size = cfg->mem_default;
		rs->sq_inline = cfg->inline_default;
		rs->sq_size = cfg->sqsize_default;
		rs->rq_size = cfg->rqsize_default;
		rs->ctrl_max_seqno = RS_QP_CTRL_SIZE;
		/* the scaled form of the file's value, as the wire carries it */
		rs->target_iomap_size = cfg->iomap_size <= 128 ? cfg->iomap_size
							       : (cfg->iomap_size & 0x7f) << 8;
	}
	pthread_mutex_init(&rs->slock, NULL);
	pthread_mutex_init(&rs->rlock, NULL);
	pthread_mutex_init(&rs->cq_lock, NULL);
	pthread_mutex_init(&rs->cq_wait_lock, NULL);
	pthread_mutex_init(&rs->map_lock, NULL);
	return rs;
}

int rs_stream_insert(struct rs_stream *rs)
{
	return rs_index_insert(rs->cm_id->channel->fd, &rs->sock) < 0 ? -1 : 0;
}

void rs_stream_free(struct rs_stream *rs)
{
	free(rs->rmsg);
	if (rs->sbuf) {
		if (rs->smr)
			ibv_dereg_mr(rs->smr);
		free(rs->sbuf);
	}
	if (rs->rbuf) {
		if (rs->rmr)
			ibv_dereg_mr(rs->rmr);
		free(rs->rbuf);
	}
	if (rs->target_buffer_list) {
		if (rs->target_mr)
			ibv_dereg_mr(rs->target_mr);
		free(rs->target_buffer_list);
	}
	if (rs->sock.index >= 0)
		rs_index_remove(rs->sock.index);
	if (rs->cm_id) {
		rs_free_iomappings(rs);
		if (rs->cm_id->qp) {
			ibv_ack_cq_events(rs->cm_id->recv_cq, (unsigned)rs->unack_cqe);
			rdma_destroy_qp(rs->cm_id);	/* and its CQ and channel */
		} else if (rs->cm_id->recv_cq) {
			ibv_destroy_cq(rs->cm_id->recv_cq);
			rs->cm_id->recv_cq = rs->cm_id->send_cq = NULL;
		}
		if (rs->cm_id->recv_cq_channel) {
			ibv_destroy_comp_channel(rs->cm_id->recv_cq_channel);
			rs->cm_id->recv_cq_channel = rs->cm_id->send_cq_channel = NULL;
		}
		rdma_destroy_id(rs->cm_id);
	}
	if (rs->accept_queue[0] >= 0) {
		close(rs->accept_queue[0]);
		close(rs->accept_queue[1]);
	}
	free(rs->remote_iomappings);
	free(rs->optval);
	pthread_mutex_destroy(&rs->map_lock);
	pthread_mutex_destroy(&rs->cq_wait_lock);
	pthread_mutex_destroy(&rs->cq_lock);
	pthread_mutex_destroy(&rs->rlock);
	pthread_mutex_destroy(&rs->slock);
	free(rs);
}

/* The fds whose O_NONBLOCK follows the rsocket's: the completion channel, the accept queue
 * of a listener, the CM channel until connected. */
int rs_set_nonblocking(struct rs_stream *rs, int arg)
{
	int ret = 0;

	if (rs->cm_id->recv_cq_channel)
		ret = fcntl(rs->cm_id->recv_cq_channel->fd, F_SETFL, arg);
	if (rs->state == RS_LISTENING)
		ret = fcntl(rs->accept_queue[0], F_SETFL, arg);
	else if (!ret && rs->state < RS_CONNECTED)
		ret = fcntl(rs->cm_id->channel->fd, F_SETFL, arg);
	return ret;
}

int rs_nonblocking(const struct rs_stream *rs, int flags)
{
	return (rs->fd_flags & O_NONBLOCK) || (flags & MSG_DONTWAIT);
}

/* The mappings' lists (lib/rsocket/rs_stream_iomap.c maps and sends them). */
void rs_iomap_append(struct rs_iomap_mr **head, struct rs_iomap_mr *m)
{
	m->next = NULL;
	while (*head)
		head = &(*head)->next;
	*head = m;
}

static void iomap_unlink(struct rs_iomap_mr **head, struct rs_iomap_mr *m)
{
	for (; *head; head = &(*head)->next) {
		if (*head == m) {
			*head = m->next;
			return;
		}
	}
}

static void release(struct rs_stream *rs, struct rs_iomap_mr **head, struct rs_iomap_mr *m)
{
	if (--m->refcnt)
		return;
	iomap_unlink(head, m);
	ibv_dereg_mr(m->mr);
	m->mr = NULL;
	if (m->index < 0)
		free(m);
	(void)rs;
}

static struct rs_iomap_mr *find(struct rs_iomap_mr *m, const void *buf, size_t len)
{
	for (; m; m = m->next)
		if (m->mr->addr == buf && m->mr->length == len)
			return m;
	return NULL;
}

int rs_stream_iounmap(struct rs_sock *s, void *buf, size_t len)
{
	struct rs_stream *rs = rs_stream_of(s);
	struct rs_iomap_mr *m;
	int ret = 0;

	pthread_mutex_lock(&rs->map_lock);
	if ((m = find(rs->iomap_list, buf, len)))
		release(rs, &rs->iomap_list, m);
	else if ((m = find(rs->iomap_queue, buf, len)))
		release(rs, &rs->iomap_queue, m);
	else
		ret = rs_seterr(EINVAL);
	pthread_mutex_unlock(&rs->map_lock);
	return ret;
}

void rs_free_iomappings(struct rs_stream *rs)
{
	while (rs->iomap_list)
		rs_stream_iounmap(&rs->sock, rs->iomap_list->mr->addr, rs->iomap_list->mr->length);
	while (rs->iomap_queue)
		rs_stream_iounmap(&rs->sock, rs->iomap_queue->mr->addr,
				  rs->iomap_queue->mr->length);
}

