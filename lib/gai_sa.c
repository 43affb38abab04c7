/* RAI_SA in rdma_getaddrinfo (rdma-core >= v60, spec §4.6).
 *
 * The real library binds an id to GID 0 of every active InfiniBand port in turn and asks the
 * SA for service records of `service`; the first port that gets records wins, none gives
 * ENOENT. RoCE and iWARP ports are skipped, so a RoCE-only host always gets ENOENT.
 *
 * NOT COMPLETE: service records are held by the fake SA, which arrives with the fabric
 * services work (issue [4]). Until then no port can have records, so every valid lookup ends
 * in ENOENT, which is the real answer for RoCE-only hosts and for an SA that knows no such
 * service, and the argument checks are the real ones. */
#include "config.h"

#include "lib/cma.h"
#include "lib/gai.h"

int cma_gai_sa(const struct emu_host *h, const char *service, struct rdma_addrinfo **res)
{
	(void)h;
	(void)res;
	if (!service)
		return cma_err(EINVAL);
	return cma_err(ENOENT);
}
