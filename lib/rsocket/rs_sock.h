/* One rsocket as the calls of rsocket(7) see it: the fd number the application holds and the
 * implementation of its type, chosen once at rsocket() (rdma-core's rsockets keep one structure
 * for both types; here each type is an ops table over its own object, which starts with
 * struct rs_sock).
 *
 * lib/rsocket/rs_api.c owns the public calls: it checks what is common to both types, finds the
 * rs_sock behind a socket number (rs_index.c) and calls the type's op. An op has the public
 * call's contract for its type: it returns what the call returns and sets errno exactly as
 * rdma-core's library does on that type (an op that the type refuses still exists and gives
 * the real library's errno). rpoll/rselect are generic over the three poll ops.
 *
 * Types: lib/rsocket/rs_stream*.c (SOCK_STREAM over an RC QP, RDMA writes with immediate data
 * into the peer's receive buffer) and lib/rsocket/ds_*.c (SOCK_DGRAM over UD QPs, with a UDP
 * socket that resolves the peers' QPs). */
#ifndef RDMAEMU_LIB_RSOCKET_RS_SOCK_H
#define RDMAEMU_LIB_RSOCKET_RS_SOCK_H

#include <poll.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>

struct rs_type;

struct rs_sock {
	const struct rs_type *type;
	int index;		/* the socket number the application holds (a real fd) */
};

struct rs_type {
	int sotype;		/* SOCK_STREAM or SOCK_DGRAM */
	const char *name;

	int (*bind)(struct rs_sock *s, const struct sockaddr *addr, socklen_t len);
	int (*listen)(struct rs_sock *s, int backlog);
	/* Returns the new rsocket's number; the new object is already in the index. */
	int (*accept)(struct rs_sock *s, struct sockaddr *addr, socklen_t *len);
	int (*connect)(struct rs_sock *s, const struct sockaddr *addr, socklen_t len);

	/* rrecv/rrecvfrom/rread(v)/rrecvmsg and rsend/rsendto/rwrite(v)/rsendmsg end here;
	 * src/dst are NULL for the connected forms. */
	ssize_t (*recvfrom)(struct rs_sock *s, void *buf, size_t len, int flags,
			    struct sockaddr *src, socklen_t *srclen);
	ssize_t (*recvv)(struct rs_sock *s, const struct iovec *iov, int iovcnt, int flags);
	ssize_t (*sendto)(struct rs_sock *s, const void *buf, size_t len, int flags,
			  const struct sockaddr *dst, socklen_t dstlen);
	ssize_t (*sendv)(struct rs_sock *s, const struct iovec *iov, int iovcnt, int flags);

	int (*shutdown)(struct rs_sock *s, int how);
	/* Frees the object and its socket number (removed from the index by the op). */
	int (*close)(struct rs_sock *s);
	int (*getpeername)(struct rs_sock *s, struct sockaddr *addr, socklen_t *len);
	int (*getsockname)(struct rs_sock *s, struct sockaddr *addr, socklen_t *len);
	int (*setsockopt)(struct rs_sock *s, int level, int name, const void *val, socklen_t len);
	int (*getsockopt)(struct rs_sock *s, int level, int name, void *val, socklen_t *len);
	/* F_GETFL/F_SETFL (O_NONBLOCK); other commands give the real library's answer. */
	int (*fcntl)(struct rs_sock *s, int cmd, long arg);

	off_t (*iomap)(struct rs_sock *s, void *buf, size_t len, int prot, int flags,
		       off_t offset);
	int (*iounmap)(struct rs_sock *s, void *buf, size_t len);
	size_t (*iowrite)(struct rs_sock *s, const void *buf, size_t count, off_t offset,
			  int flags);

	/* rpoll, in three steps as rdma-core's: check (process what completed, without
	 * blocking, and return the revents of `events` that hold now, POLLERR/POLLHUP/POLLNVAL
	 * included), arm (request the notifications and give the fd and events to wait on in
	 * the kernel; returns 0, or the revents when something became ready while arming),
	 * drain (poll() said that fd is ready: consume its notification). */
	short (*poll_check)(struct rs_sock *s, short events);
	short (*poll_arm)(struct rs_sock *s, short events, struct pollfd *kfd);
	void (*poll_drain)(struct rs_sock *s, const struct pollfd *kfd);
};

extern const struct rs_type rs_stream_type;
extern const struct rs_type rs_dgram_type;

/* rpoll's wake-up of the other threads blocked in poll() (lib/rsocket/rs_api.c): a type
 * calls it when something changed an rsocket's state outside any rpoll (a service thread that
 * took a CM event), so that threads blocked in the kernel on other fds look again, as
 * rdma-core's rs_poll_signal. Added beside the ops because the stream type's connection
 * service needs it. */
void rs_poll_signal(void);

/* Each type's constructor, called by rsocket() after the common checks: the object with its
 * socket number set and entered in the index, or NULL with errno set. */
struct rs_sock *rs_stream_new(int domain);
struct rs_sock *rs_dgram_new(int domain);

/* The socket-number index (lib/rsocket/rs_index.c): socket numbers are the fds the objects
 * hold, so lookups are an array access. */
int rs_index_insert(int index, struct rs_sock *s);
void rs_index_remove(int index);
struct rs_sock *rs_index_get(int index);

/* Defaults from /etc/rdma/rsocket/ (rsocket(7) "Configuration"), read once
 * (lib/rsocket/rs_config.c). */
struct rs_config {
	uint32_t mem_default;		/* receive buffer bytes, mem_default */
	uint32_t wmem_default;		/* send buffer bytes, wmem_default */
	uint16_t sqsize_default;
	uint16_t rqsize_default;
	uint16_t inline_default;
	uint16_t iomap_size;
	uint32_t polling_time;		/* microseconds rpoll spins before it blocks */
	uint32_t wake_up_interval;	/* milliseconds */
};
const struct rs_config *rs_config(void);

#endif
