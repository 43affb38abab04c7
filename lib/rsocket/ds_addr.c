/* Addresses of datagram rsockets (ds_addr.h). */
#include "config.h"

#include <arpa/inet.h>
#include <string.h>

#include "ds_addr.h"

socklen_t ds_addrlen(const struct sockaddr *sa)
{
	return sa->sa_family == AF_INET6 ? (socklen_t)sizeof(struct sockaddr_in6) :
					   (socklen_t)sizeof(struct sockaddr_in);
}

int ds_compare_addr(const void *a, const void *b)
{
	const struct sockaddr *x = a, *y = b;
	size_t len = x->sa_family == AF_INET6 && y->sa_family == AF_INET6 ?
			     sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);

	return memcmp(a, b, len);
}

int ds_any_addr(const union ds_addr *a)
{
	if (a->sa.sa_family == AF_INET)
		return a->sin.sin_addr.s_addr == htonl(INADDR_ANY) ||
		       a->sin.sin_addr.s_addr == htonl(INADDR_LOOPBACK);
	return !memcmp(&a->sin6.sin6_addr, &in6addr_any, 16) ||
	       !memcmp(&a->sin6.sin6_addr, &in6addr_loopback, 16);
}

void ds_copy_addr(const union ds_addr *a, struct sockaddr *addr, socklen_t *len)
{
	socklen_t full = ds_addrlen(&a->sa);

	if (*len)
		memcpy(addr, a, *len < full ? *len : full);
	*len = full;
}

void ds_format_hdr(struct ds_header *hdr, const union ds_addr *addr)
{
	memset(hdr, 0, sizeof *hdr);
	if (addr->sa.sa_family == AF_INET) {
		hdr->version = 4;
		hdr->length = DS_IPV4_HDR_LEN;
		hdr->port = addr->sin.sin_port;
		hdr->addr.ipv4 = addr->sin.sin_addr.s_addr;
	} else {
		hdr->version = 6;
		hdr->length = DS_IPV6_HDR_LEN;
		hdr->port = addr->sin6.sin6_port;
		hdr->addr.ipv6.flowinfo = addr->sin6.sin6_flowinfo;
		memcpy(hdr->addr.ipv6.addr, &addr->sin6.sin6_addr, 16);
	}
}
