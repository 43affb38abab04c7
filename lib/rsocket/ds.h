/* Datagram rsockets (SOCK_DGRAM): the object behind rs_dgram_type and the pieces its files
 * share. rsocket(7) and rdma-core's protocol guide ("Datagram Overview"): one UDP socket per
 * rsocket, whose fd is the socket number, carries the first datagrams to a peer and tells the
 * peers each other's UD QP numbers; once the peer's QPN and a path are known, datagrams go
 * over a UD QP, one per local source address in use (so per device and port).
 *
 * Files: ds_sock.c (the object and the ops table), ds_opt.c (options, fcntl, the calls a
 * datagram socket refuses), ds_qp.c (UD QPs and the destination map), ds_io.c (sends,
 * receives, completions), ds_svc.c (the UDP service thread), ds_udp.c and ds_chan_*.c (the
 * UDP socket and its side channel's two backends, ds_chan.h), ds_addr.c (addresses). */
#ifndef RDMAEMU_LIB_RSOCKET_DS_H
#define RDMAEMU_LIB_RSOCKET_DS_H

#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <rdma/rdma_cma.h>

#include "rs_sock.h"

/* rdma-core's values (librdmacm/rsocket.c). */
#define DS_SNDLOWAT 2048	/* RS_SNDLOWAT: the size of each send and receive slot */
#define DS_QP_MAX_SIZE 0xFFFE	/* RS_QP_MAX_SIZE */
#define DS_OP_DATA 0x00		/* RS_OP_DATA */
#define DS_OP_CTRL 0x40		/* RS_OP_CTRL */
#define DS_UDP_TAG 0x55555555u
#define DS_IPV4_HDR_LEN 8
#define DS_IPV6_HDR_LEN 24
#define DS_UDP_IPV4_HDR_LEN 16
#define DS_UDP_IPV6_HDR_LEN 28
#define DS_GRH_LEN 40		/* sizeof(struct ibv_grh): the first SGE of each receive */

/* rdma-core's socket states as the datagram type uses them. */
#define DS_READABLE 0x0400
#define DS_WRITABLE 0x0200

union ds_addr {
	struct sockaddr sa;
	struct sockaddr_in sin;
	struct sockaddr_in6 sin6;
};

/* Before the user data of every datagram on a UD QP: the sender's address (network order). */
struct ds_header {
	uint8_t version;	/* 4 or 6 */
	uint8_t length;		/* DS_IPV4_HDR_LEN or DS_IPV6_HDR_LEN */
	uint16_t port;
	union {
		uint32_t ipv4;
		struct {
			uint32_t flowinfo;
			uint8_t addr[16];
		} ipv6;
	} addr;
};
_Static_assert(sizeof(struct ds_header) == 24, "ds_header as rdma-core's");

/* Before the user data of a datagram on the UDP socket (DS_OP_DATA) and alone as the reply
 * that gives the QPN (DS_OP_CTRL). */
struct ds_udp_header {
	uint32_t tag;		/* DS_UDP_TAG, network order */
	uint8_t version;
	uint8_t op;
	uint8_t length;		/* DS_UDP_IPV4_HDR_LEN or DS_UDP_IPV6_HDR_LEN */
	uint8_t reserved;
	uint32_t qpn;		/* network order, the QPN in the upper 24 bits' place: qpn & 0xFFFFFF */
	union {
		uint32_t ipv4;
		uint8_t ipv6[16];
	} addr;			/* the address the datagram was sent to */
};
_Static_assert(sizeof(struct ds_udp_header) == 28, "ds_udp_header as rdma-core's");

struct ds_qp;

/* A peer (an address and port): the QP that reaches it and, once its QPN is known, the AH. */
struct ds_dest {
	union ds_addr addr;	/* first: the destination map compares entries through it */
	struct ds_qp *qp;
	struct ibv_ah *ah;
	uint32_t qpn;
};

/* One UD QP, for one local source address. */
struct ds_qp {
	struct ds_qp *next, *prev;	/* circular list of the rsocket's QPs */
	struct ds_sock *ds;
	struct rdma_cm_id *cm_id;
	struct ds_header hdr;		/* the source address this QP's datagrams carry */
	struct ds_dest dest;		/* this QP itself (the AH to its own port) */
	struct ibv_mr *smr;
	struct ibv_mr *rmr;
	uint8_t *rbuf;			/* rq_size slots of DS_SNDLOWAT, then the GRH slot */
	int cq_armed;
	int in_epoll;
};

/* A received datagram waiting for recvfrom: the slot of one QP's receive buffer. */
struct ds_rmsg {
	struct ds_qp *qp;
	uint32_t offset;
	uint32_t length;	/* the ds_header included */
};

struct ds_chan;

struct ds_sock {
	struct rs_sock rs;		/* first: the index and the public calls see this */
	int domain;
	int state;			/* 0 until the endpoint exists, then readable|writable */
	int fs_flags;			/* O_NONBLOCK as F_GETFL answers */
	int fd_flags;			/* FD_CLOEXEC as F_GETFD answers */
	int in_svc;			/* registered with the UDP service thread */

	struct ds_chan *chan;		/* the UDP socket (ds_chan.h) */
	int epfd;			/* the QPs' completion channels, for blocking and rpoll */

	pthread_mutex_t slock;		/* sends and conn_dest */
	pthread_mutex_t rlock;		/* receives */
	pthread_mutex_t cq_lock;
	pthread_mutex_t cq_wait_lock;
	pthread_mutex_t map_lock;	/* the destination map and the QP list */

	struct ds_qp *qp_list;
	void *dest_map;			/* tsearch tree of struct ds_dest by address */
	struct ds_dest *conn_dest;	/* the destination of the last send, or connect's */
	int cq_armed;

	uint32_t sbuf_size, rbuf_size;
	uint16_t sq_size, rq_size, sq_inline;
	int sqe_avail, rqe_avail;
	uint8_t *sbuf;			/* sq_size slots of DS_SNDLOWAT; free ones listed */
	void *smsg_free;
	struct ds_rmsg *dmsg;		/* rq_size + 1 entries, a ring */
	int rmsg_head, rmsg_tail;

	/* What the options keep (rgetsockopt answers from these, as rdma-core's). */
	uint64_t so_opts, ipv6_opts;
	int ipv4_opts;
	int err;
};

static inline struct ds_sock *ds_of(struct rs_sock *s)
{
	return (struct ds_sock *)s;
}

/* ds_sock.c */
int ds_init_ep(struct ds_sock *ds);

/* ds_qp.c */
int ds_get_dest(struct ds_sock *ds, const struct sockaddr *addr, socklen_t len,
		struct ds_dest **dest);
void ds_free_qps(struct ds_sock *ds);
/* The epoll fd and the QPs' completion channels follow O_NONBLOCK (rs_set_nonblocking). */
int ds_set_nonblocking(struct ds_sock *ds, int nonblock);
int ds_post_recv(struct ds_sock *ds, struct ds_qp *qp, uint32_t offset);

/* ds_io.c */
int ds_can_send(struct ds_sock *ds);
int ds_have_rdata(struct ds_sock *ds);
int ds_all_sends_done(struct ds_sock *ds);
int ds_process_cqs(struct ds_sock *ds, int nonblock, int (*test)(struct ds_sock *));
int ds_get_comp(struct ds_sock *ds, int nonblock, int (*test)(struct ds_sock *));
int ds_get_cq_event(struct ds_sock *ds);
/* Sends hdr then the iovecs' bytes over dest's QP to dest (a send slot, waiting for one
 * unless nonblock): 0, or -1 with errno. */
int ds_send_slot(struct ds_sock *ds, struct ds_dest *dest, const struct ds_header *hdr,
		 const struct iovec *iov, int iovcnt, int nonblock);
/* Sends the UDP header of dest's QP, then the iovecs, on the UDP socket to dest: the user
 * bytes sent, or -1 with errno. */
ssize_t ds_send_udp(struct ds_sock *ds, struct ds_dest *dest, const struct iovec *iov,
		    int iovcnt, int flags, uint8_t op);
ssize_t ds_send(struct ds_sock *ds, const struct iovec *iov, int iovcnt, int flags);
ssize_t ds_recv(struct ds_sock *ds, void *buf, size_t len, int flags, struct sockaddr *src,
		socklen_t *srclen);

/* ds_svc.c: the UDP service thread, started with the first rsocket and stopped with the
 * last; remove returns once the thread no longer touches ds. */
int ds_svc_add(struct ds_sock *ds);
void ds_svc_remove(struct ds_sock *ds);

/* ds_opt.c */
int ds_setsockopt(struct rs_sock *s, int level, int name, const void *val, socklen_t len);
int ds_getsockopt(struct rs_sock *s, int level, int name, void *val, socklen_t *len);
int ds_fcntl(struct rs_sock *s, int cmd, long arg);
int ds_listen(struct rs_sock *s, int backlog);
int ds_accept(struct rs_sock *s, struct sockaddr *addr, socklen_t *len);
off_t ds_iomap(struct rs_sock *s, void *buf, size_t len, int prot, int flags, off_t offset);
int ds_iounmap(struct rs_sock *s, void *buf, size_t len);
size_t ds_iowrite(struct rs_sock *s, const void *buf, size_t count, off_t offset, int flags);

#endif
