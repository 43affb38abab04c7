/* Addresses of datagram rsockets (lib/rsocket/ds_addr.c): below every other ds_* file. */
#ifndef RDMAEMU_LIB_RSOCKET_DS_ADDR_H
#define RDMAEMU_LIB_RSOCKET_DS_ADDR_H

#include "ds.h"

/* The size of an AF_INET6 address for AF_INET6, of an AF_INET one otherwise. */
socklen_t ds_addrlen(const struct sockaddr *sa);
/* rdma-core's ds_compare_addr (a tsearch comparison): the bytes of a sockaddr_in, or of a
 * sockaddr_in6 when both are IPv6. */
int ds_compare_addr(const void *a, const void *b);
/* rdma-core's rs_any_addr: the wildcard or loopback address. */
int ds_any_addr(const union ds_addr *a);
/* Copies a to addr as getsockname does: truncated to *len, *len set to a's full length. */
void ds_copy_addr(const union ds_addr *a, struct sockaddr *addr, socklen_t *len);
/* The ds_header naming addr. */
void ds_format_hdr(struct ds_header *hdr, const union ds_addr *addr);

#endif
