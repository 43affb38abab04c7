/* The SOCK_STREAM rsocket: one RC QP through a sync rdma_cm id, RDMA writes with immediate
 * data into the peer's receive buffer (rdma-core's librdmacm/docs/rsocket, rsocket(7)).
 *
 * Files: rs_stream.c (the object, its ops table, states, close and names), rs_stream_conn.c
 * (bind, listen, accept, the connect state machine, the private data), rs_stream_data.c (the
 * messages, credits, send and receive), rs_stream_cq.c (completions, waits, the poll ops),
 * rs_stream_opt.c (socket options), rs_stream_iomap.c (riomap, riounmap, riowrite),
 * rs_stream_svc.c (the service threads: accepting, CM progress, keepalives),
 * rs_stream_shut.c (shutdown and fcntl). docs/rsockets.md describes the design. */
#ifndef RDMAEMU_LIB_RSOCKET_RS_STREAM_H
#define RDMAEMU_LIB_RSOCKET_RS_STREAM_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <netinet/in.h>
#include <rdma/rdma_cma.h>

#include "rs_sock.h"

/* Wire constants of rdma-core's protocol. */
#define RS_OLAP_START_SIZE 2048
#define RS_MAX_TRANSFER 65536
#define RS_SNDLOWAT 2048
#define RS_QP_MIN_SIZE 16
#define RS_QP_MAX_SIZE 0xFFFE
#define RS_QP_CTRL_SIZE 4	/* control messages in flight; a power of 2 */
#define RS_CONN_RETRIES 6
#define RS_SGL_SIZE 2

/* The 32-bit immediate: op in bits 31:29, its data in 28:0. */
enum rs_op {
	RS_OP_DATA = 0,
	RS_OP_RSVD_DATA_MORE = 1,
	RS_OP_WRITE = 2,	/* local only: a direct write's completion, never sent */
	RS_OP_RSVD_DRA_MORE = 3,
	RS_OP_SGL = 4,
	RS_OP_RSVD = 5,
	RS_OP_IOMAP_SGL = 6,
	RS_OP_CTRL = 7,
};
#define RS_MSG(op, data) (((uint32_t)(op) << 29) | (uint32_t)(data))
#define RS_MSG_OP(m) ((uint32_t)(m) >> 29)
#define RS_MSG_DATA(m) ((uint32_t)(m) & 0x1FFFFFFFu)

enum rs_ctrl {
	RS_CTRL_DISCONNECT = 0,
	RS_CTRL_KEEPALIVE = 1,
	RS_CTRL_SHUTDOWN = 2,
};

/* Receive work requests carry this bit in wr_id; sends carry their message. */
#define RS_WR_RECV (1ull << 63)

struct rs_sge {
	uint64_t addr;
	uint32_t key;
	uint32_t length;
};

struct rs_iomap {
	uint64_t offset;
	struct rs_sge sge;
};

#define RS_CONN_FLAG_NET 1	/* the sender is big-endian */
#define RS_CONN_FLAG_IOMAP 2	/* target_iomap_size is meaningful */

/* The private data of the connect request and reply (all fields big-endian). */
struct rs_conn_data {
	uint8_t version;
	uint8_t flags;
	uint16_t credits;
	uint8_t reserved[3];
	uint8_t target_iomap_size;
	struct rs_sge target_sgl;
	struct rs_sge data_buf;
};
_Static_assert(sizeof(struct rs_conn_data) == 40, "rs_conn_data is 40 bytes on the wire");

/* States are bits, ordered passive < opening < connected < disconnected, as rdma-core's: the
 * connected ones carry READABLE/WRITABLE, which shutdown takes away one by one. */
enum rs_state {
	RS_INIT = 0,
	RS_BOUND = 0x0001,
	RS_LISTENING = 0x0002,
	RS_OPENING = 0x0004,
	RS_RESOLVING_ADDR = RS_OPENING | 0x0010,
	RS_RESOLVING_ROUTE = RS_OPENING | 0x0020,
	RS_CONNECTING = RS_OPENING | 0x0040,
	RS_ACCEPTING = RS_OPENING | 0x0080,
	RS_CONNECTED = 0x0100,
	RS_WRITABLE = 0x0200,
	RS_READABLE = 0x0400,
	RS_CONNECT_RDWR = RS_CONNECTED | RS_READABLE | RS_WRITABLE,
	RS_CONNECT_ERROR = 0x0800,
	RS_DISCONNECTED = 0x1000,
	RS_ERROR = 0x2000,
};
const char *rs_state_name(int state);

/* opts bits */
#define RS_OPT_SWAP_SGL 1	/* the peer's byte order differs: SGEs we write are swapped */
#define RS_OPT_KEEPALIVE 8
#define RS_OPT_CM_SVC 16

struct rs_msg {
	uint32_t op;
	uint32_t data;
};

struct rs_iomap_mr {
	uint64_t offset;
	struct ibv_mr *mr;
	struct rs_iomap_mr *next;	/* on iomap_list or iomap_queue */
	int refcnt;
	int index;	/* slot in the peer's iomap, -1 for a local mapping */
};

struct rs_stream {
	struct rs_sock sock;	/* first */
	pthread_mutex_t slock, rlock, cq_lock, cq_wait_lock, map_lock;
	struct rdma_cm_id *cm_id;
	int domain;

	int state;
	int err;
	int opts;
	int fd_flags;
	int cq_armed;
	int retries;
	int unack_cqe;
	uint64_t so_opts, tcp_opts, ipv6_opts;
	unsigned keepalive_time;
	void *optval;		/* RDMA_ROUTE, until the connect uses it */
	size_t optlen;
	int accept_queue[2];

	uint32_t ctrl_seqno, ctrl_max_seqno;
	uint16_t sseq_no, sseq_comp, rseq_no, rseq_comp;

	int remote_sge;
	struct rs_sge remote_sgl, remote_iomap;

	struct ibv_mr *target_mr;
	int target_sge;
	int target_iomap_size;
	void *target_buffer_list;
	volatile struct rs_sge *target_sgl;
	struct rs_iomap *target_iomap;

	uint32_t rbuf_size;
	uint16_t rq_size;
	int rmsg_head, rmsg_tail;
	struct rs_msg *rmsg;
	int rbuf_bytes_avail, rbuf_free_offset, rbuf_offset;
	struct ibv_mr *rmr;
	uint8_t *rbuf;

	uint32_t sbuf_size;
	uint16_t sq_size, sq_inline;
	int sqe_avail;
	int sbuf_bytes_avail;
	uint8_t *sbuf;
	struct ibv_mr *smr;
	struct ibv_sge ssgl[2];

	struct rs_iomap_mr *remote_iomappings;
	struct rs_iomap_mr *iomap_list, *iomap_queue;
	int iomap_pending;
};

static inline struct rs_stream *rs_stream_of(struct rs_sock *s)
{
	return (struct rs_stream *)s;
}

int rs_seterr(int e);

/* rs_stream.c */
struct rs_stream *rs_stream_alloc(const struct rs_stream *from);
void rs_stream_free(struct rs_stream *rs);
int rs_stream_insert(struct rs_stream *rs);
void *rs_forksafe_alloc(size_t len);
int rs_set_nonblocking(struct rs_stream *rs, int arg);
int rs_nonblocking(const struct rs_stream *rs, int flags);

/* rs_stream_conn.c */
int rs_stream_bind(struct rs_sock *s, const struct sockaddr *addr, socklen_t len);
int rs_stream_listen(struct rs_sock *s, int backlog);
int rs_stream_accept(struct rs_sock *s, struct sockaddr *addr, socklen_t *len);
int rs_stream_connect(struct rs_sock *s, const struct sockaddr *addr, socklen_t len);
int rs_do_connect(struct rs_stream *rs);
void rs_accept_one(struct rs_stream *listener);
/* A connect in progress from the calls that need it connected: 0, or -1 with EAGAIN. */
int rs_finish_connect(struct rs_stream *rs);

/* rs_stream_data.c */
int rs_post_recv(struct rs_stream *rs);
int rs_post_msg(struct rs_stream *rs, uint32_t msg);
int rs_post_write(struct rs_stream *rs, struct ibv_sge *sgl, int nsge, uint32_t wr_data,
		  int flags, uint64_t addr, uint32_t rkey);
int rs_ctrl_avail(const struct rs_stream *rs);
void rs_update_credits(struct rs_stream *rs);
int rs_can_send(struct rs_stream *rs);
uint32_t rs_sbuf_left(const struct rs_stream *rs);
/* Where the bytes of a send come from: the caller's vector, consumed as they go. */
struct rs_src {
	const struct iovec *iov;
	size_t off;
};
typedef int (*rs_post_fn)(struct rs_stream *rs, struct ibv_sge *sgl, int nsge, uint32_t len,
			  int flags, void *ctx);
/* The next `len` bytes of src as one work request: inline from the caller's memory when
 * they fit and are contiguous, else through the send buffer (wrapping in two SGEs). */
int rs_send_from(struct rs_stream *rs, struct rs_src *src, uint32_t len, rs_post_fn post,
		 void *ctx);
uint32_t rs_next_xfer(size_t left, uint32_t *olen);
ssize_t rs_stream_recvfrom(struct rs_sock *s, void *buf, size_t len, int flags,
			   struct sockaddr *src, socklen_t *srclen);
ssize_t rs_stream_recvv(struct rs_sock *s, const struct iovec *iov, int iovcnt, int flags);
ssize_t rs_stream_sendto(struct rs_sock *s, const void *buf, size_t len, int flags,
			 const struct sockaddr *dst, socklen_t dstlen);
ssize_t rs_stream_sendv(struct rs_sock *s, const struct iovec *iov, int iovcnt, int flags);
int rs_wait_send(struct rs_stream *rs, int flags);

/* rs_stream_cq.c */
int rs_create_ep(struct rs_stream *rs);
int rs_process_cq(struct rs_stream *rs, int nonblock, int (*test)(struct rs_stream *rs));
int rs_get_comp(struct rs_stream *rs, int nonblock, int (*test)(struct rs_stream *rs));
int rs_get_cq_event(struct rs_stream *rs);
int rs_conn_can_send(struct rs_stream *rs);
int rs_conn_have_rdata(struct rs_stream *rs);
int rs_have_rdata(struct rs_stream *rs);
int rs_conn_can_send_ctrl(struct rs_stream *rs);
int rs_conn_all_sends_done(struct rs_stream *rs);
short rs_stream_poll_check(struct rs_sock *s, short events);
short rs_stream_poll_arm(struct rs_sock *s, short events, struct pollfd *kfd);
void rs_stream_poll_drain(struct rs_sock *s, const struct pollfd *kfd);

/* rs_stream_opt.c */
int rs_stream_setsockopt(struct rs_sock *s, int level, int name, const void *val,
			 socklen_t len);
int rs_stream_getsockopt(struct rs_sock *s, int level, int name, void *val, socklen_t *len);

/* rs_stream_iomap.c */
off_t rs_stream_iomap(struct rs_sock *s, void *buf, size_t len, int prot, int flags,
		      off_t offset);
int rs_stream_iounmap(struct rs_sock *s, void *buf, size_t len);
size_t rs_stream_iowrite(struct rs_sock *s, const void *buf, size_t count, off_t offset,
			 int flags);
int rs_send_iomaps(struct rs_stream *rs, int flags);
void rs_free_iomappings(struct rs_stream *rs);

/* rs_stream_svc.c: the threads that accept, drive connects and send keepalives. */
enum rs_svc_cmd {
	RS_SVC_NOOP,
	RS_SVC_ADD_KEEPALIVE,
	RS_SVC_REM_KEEPALIVE,
	RS_SVC_MOD_KEEPALIVE,
	RS_SVC_ADD_CM,
	RS_SVC_REM_CM,
};
enum rs_svc_kind { RS_SVC_LISTEN, RS_SVC_CONNECT, RS_SVC_KEEPALIVE };
int rs_svc_notify(enum rs_svc_kind kind, struct rs_stream *rs, enum rs_svc_cmd cmd);

/* rs_stream_shut.c */
int rs_stream_shutdown(struct rs_sock *s, int how);
int rs_stream_fcntl(struct rs_sock *s, int cmd, long arg);

#endif
