/* A datagram rsocket's UDP socket, over the side channel's seam (ds_chan.h). */
#ifndef RDMAEMU_LIB_RSOCKET_DS_UDP_H
#define RDMAEMU_LIB_RSOCKET_DS_UDP_H

#include "ds_chan.h"

/* The backend of this process: kernel inside an `rdmaemu run` sandbox, local elsewhere. */
const struct ds_chan_ops *ds_udp_backend(void);

/* A channel of the process's backend for an rsocket of `domain`: its fd (the rsocket's
 * number), or -1 with errno. */
int ds_udp_open(int domain, struct ds_chan **c);

/* The source address towards dst with the rsocket's port (rdma-core's ds_get_src_addr): the
 * bound address, or when bound to the wildcard, the one the route to dst gives. */
int ds_udp_src_addr(struct ds_chan *c, const struct sockaddr *dst, socklen_t dstlen,
		    union ds_addr *src, socklen_t *srclen);

#endif
