/* librspreload.so: unmodified socket programs over rsockets (rsocket(7) "preload"), as
 * rdma-core v44's library of that name (lib/preload/README).
 *
 * The program holds a real descriptor of /dev/null for every socket the library takes; the
 * fd table (rsp_fd.c) maps it to what stands behind it: an rsocket, or a real socket (an
 * rsocket whose connect failed and fell back to TCP, or a TCP connection kept for fork
 * support until its first data call moves it to RDMA). Descriptors the table does not hold
 * go straight to libc. */
#ifndef RDMAEMU_LIB_PRELOAD_RSP_H
#define RDMAEMU_LIB_PRELOAD_RSP_H

#include <poll.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>

enum rsp_kind {
	RSP_NORMAL,	/* a real socket of libc */
	RSP_RSOCKET,
};

/* Fork support (RDMAV_FORK_SAFE): a TCP socket stays real until its connection's first data
 * call after fork, which moves it to an rsocket (rsp_fork.c). */
enum rsp_fork_state {
	RSP_READY,
	RSP_FORK,		/* created, neither listening nor connected yet */
	RSP_FORK_LISTEN,	/* its accepts give RSP_FORK_PASSIVE sockets */
	RSP_FORK_ACTIVE,	/* connected: moves by connecting an rsocket to the peer */
	RSP_FORK_PASSIVE,	/* accepted: moves by listening on its port for that connect */
};

struct rsp_fd {
	enum rsp_kind kind;
	enum rsp_fork_state state;
	int fd;			/* the rsocket number, or the real socket */
	int dupfd;		/* dup2: the descriptor this one copies, -1 when none */
	atomic_int refcnt;	/* the descriptor itself and the dup2 copies of it */
};

/* The calls of one side (libc's, or the rsocket ones) that moving a socket between the two
 * needs: rsp_real's first members, and rsp_rs. */
struct rsp_api {
	int (*socket)(int domain, int type, int protocol);
	int (*close)(int fd);
	int (*getsockname)(int fd, struct sockaddr *addr, socklen_t *len);
	int (*getsockopt)(int fd, int level, int name, void *val, socklen_t *len);
	int (*setsockopt)(int fd, int level, int name, const void *val, socklen_t len);
	int (*fcntl)(int fd, int cmd, ...);
};

/* libc's calls, found with dlsym(RTLD_NEXT) (rsp_init.c). */
struct rsp_real {
	struct rsp_api api;
	int (*bind)(int fd, const struct sockaddr *addr, socklen_t len);
	int (*listen)(int fd, int backlog);
	int (*accept)(int fd, struct sockaddr *addr, socklen_t *len);
	int (*connect)(int fd, const struct sockaddr *addr, socklen_t len);
	ssize_t (*recv)(int fd, void *buf, size_t len, int flags);
	ssize_t (*recvfrom)(int fd, void *buf, size_t len, int flags, struct sockaddr *src,
			    socklen_t *srclen);
	ssize_t (*recvmsg)(int fd, struct msghdr *msg, int flags);
	ssize_t (*read)(int fd, void *buf, size_t count);
	ssize_t (*readv)(int fd, const struct iovec *iov, int iovcnt);
	ssize_t (*send)(int fd, const void *buf, size_t len, int flags);
	ssize_t (*sendto)(int fd, const void *buf, size_t len, int flags,
			  const struct sockaddr *dst, socklen_t dstlen);
	ssize_t (*sendmsg)(int fd, const struct msghdr *msg, int flags);
	ssize_t (*write)(int fd, const void *buf, size_t count);
	ssize_t (*writev)(int fd, const struct iovec *iov, int iovcnt);
	int (*poll)(struct pollfd *fds, nfds_t nfds, int timeout);
	int (*shutdown)(int fd, int how);
	int (*getpeername)(int fd, struct sockaddr *addr, socklen_t *len);
	int (*dup2)(int oldfd, int newfd);
	ssize_t (*sendfile)(int out_fd, int in_fd, off_t *offset, size_t count);
};

extern struct rsp_real rsp_real;
extern const struct rsp_api rsp_rs;

/* What the environment and the preload_config file ask for (rsp_config.c). */
struct rsp_opts {
	int sq_size;		/* RS_SQ_SIZE, RS_RQ_SIZE, RS_INLINE: 0 keeps rsockets' default */
	int rq_size;
	int sq_inline;
	int fork_support;	/* RDMAV_FORK_SAFE */
};
extern struct rsp_opts rsp_opts;

/* Resolves libc's calls and reads the options, once; every call starts with it. */
void rsp_init(void);
void rsp_config_load(void);
/* Whether socket(domain, type, protocol) of this program goes to rsockets. */
bool rsp_config_takes(int domain, int type, int protocol);

/* The fd table (rsp_fd.c). rsp_fd_open: a new /dev/null descriptor and its entry (RSP_NORMAL,
 * RSP_READY, no fd yet), or -1 with errno. */
int rsp_fd_open(void);
void rsp_fd_store(int index, int fd, enum rsp_kind kind, enum rsp_fork_state state);
struct rsp_fd *rsp_fd_lookup(int index);
int rsp_fd_insert(int index, struct rsp_fd *e);
void rsp_fd_clear(int index);
/* The descriptor behind index (index itself when the table has none) and its kind. */
enum rsp_kind rsp_fd_get(int index, int *fd);
int rsp_fd_getd(int index);
enum rsp_fork_state rsp_fd_state(int index);
/* Drops index's entry and closes index, leaving what stood behind it open. */
void rsp_fd_drop(int index);

/* Moves index's socket to the other side (a fresh socket there with the options copied):
 * the new descriptor, or -1 with errno. */
int rsp_transpose(int index, enum rsp_kind to);
/* The rsocket options the environment asks for, applied to a new rsocket. */
void rsp_set_rsocket_options(int rs);
/* Copies O_NONBLOCK and the flags, SO_REUSEADDR and TCP_NODELAY from one side to the other. */
int rsp_copy_sockopts(int dfd, int sfd, const struct rsp_api *dapi, const struct rsp_api *sapi);
/* The data calls' lookup: a fork-support socket moves to RDMA here first (rsp_fork.c). */
enum rsp_kind rsp_fork_get(int index, int *fd);
void rsp_fork_resolve(int index);

/* Whether a real connection that this library would open towards addr must be refused, on
 * the emulator outside a sandbox (rsp_guard.c); errno is ENETUNREACH then. */
bool rsp_guard_refuses(const struct sockaddr *addr, socklen_t len);

#endif
