/* The UDP side channel of a datagram rsocket: its UDP socket, behind one seam with two
 * backends, chosen once per process (ds_udp.c):
 *
 *  kernel  Inside an `rdmaemu run` sandbox (RDMAEMU_SANDBOX set): the rsocket's UDP socket is
 *          a kernel UDP socket used exactly as rdma-core uses it. The fabric's addresses are
 *          the sandbox's own taps, so its datagrams stay on the emulated wire.
 *  local   Anywhere else (in-process runs, `rdmaemu run --no-sandbox`): a fabric address is
 *          this machine's real network, so no datagram may reach the kernel's routing. The
 *          UDP socket is bound to loopback only (never to a fabric address) and the datagram
 *          rsockets of this process reach each other through an in-process table keyed by
 *          (address, port) (ds_chan_local.c). A destination no rsocket of this process
 *          serves is refused: ENETUNREACH and one line on stderr.
 *
 * Each call has the contract of the socket call it is named after, on the rsocket's UDP
 * socket: addresses are the rsocket's (getsockname answers the bound fabric address, never
 * the loopback one), errors are -1 with errno. */
#ifndef RDMAEMU_LIB_RSOCKET_DS_CHAN_H
#define RDMAEMU_LIB_RSOCKET_DS_CHAN_H

#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "ds.h"

struct ds_lframe;

struct ds_chan_ops {
	const char *name;
	int (*open)(struct ds_chan *c);
	int (*bind)(struct ds_chan *c, const struct sockaddr *addr, socklen_t len);
	int (*connect)(struct ds_chan *c, const struct sockaddr *addr, socklen_t len);
	int (*getsockname)(struct ds_chan *c, struct sockaddr *addr, socklen_t *len);
	int (*getpeername)(struct ds_chan *c, struct sockaddr *addr, socklen_t *len);
	ssize_t (*sendmsg)(struct ds_chan *c, const struct iovec *iov, int iovcnt, int flags,
			   const struct sockaddr *dst, socklen_t dstlen);
	/* One datagram, without blocking; truncated to len (the rest is lost, as UDP's). */
	ssize_t (*recvfrom)(struct ds_chan *c, void *buf, size_t len, struct sockaddr *src,
			    socklen_t *srclen);
	/* The source address this host would use towards dst (the port left 0). */
	int (*route_src)(struct ds_chan *c, const struct sockaddr *dst, socklen_t dstlen,
			 union ds_addr *src, socklen_t *srclen);
	void (*close)(struct ds_chan *c);
};

struct ds_chan {
	const struct ds_chan_ops *ops;
	int fd;				/* the UDP socket: the rsocket's number */
	int rfd;			/* readable while a datagram waits: what the service
					 * thread polls (the UDP socket, or the local queue's
					 * eventfd) */
	int domain;
	/* local backend only */
	struct ds_chan *next;		/* the process's table of bound channels */
	union ds_addr name;		/* the bound fabric address */
	union ds_addr peer;
	int bound, connected;
	struct ds_lframe *qhead, *qtail;	/* datagrams waiting, oldest first */
	size_t qbytes;
};

extern const struct ds_chan_ops ds_chan_kernel_ops;
extern const struct ds_chan_ops ds_chan_local_ops;

#endif
