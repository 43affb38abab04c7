/* The datagram rsocket's place while lib/rsocket/ds_*.c is absent: rsocket(SOCK_DGRAM)
 * fails with ESOCKTNOSUPPORT, so no object of this type ever exists and its ops are never
 * called. */
#include "config.h"

#include <errno.h>
#include <stddef.h>

#include "rs_sock.h"

const struct rs_type rs_dgram_type = {
	.sotype = SOCK_DGRAM,
	.name = "dgram",
};

struct rs_sock *rs_dgram_new(int domain)
{
	(void)domain;
	errno = ESOCKTNOSUPPORT;
	return NULL;
}
