/* Moving a socket between libc and rsockets: a fresh socket on the other side that keeps the
 * few options rdma-core's library carries over (the file flags, SO_REUSEADDR, TCP_NODELAY),
 * and the rsocket options of the environment (RS_SQ_SIZE, RS_RQ_SIZE, RS_INLINE). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <rdma/rsocket.h>

#include "lib/preload/rsp.h"

int rsp_copy_sockopts(int dfd, int sfd, const struct rsp_api *dapi, const struct rsp_api *sapi)
{
	socklen_t len;
	int param, ret;

	ret = sapi->fcntl(sfd, F_GETFL);
	if (ret > 0)
		ret = dapi->fcntl(dfd, F_SETFL, ret);
	if (ret)
		return ret;

	param = 0;
	len = sizeof(param);
	ret = sapi->getsockopt(sfd, SOL_SOCKET, SO_REUSEADDR, &param, &len);
	if (!ret && param)
		ret = dapi->setsockopt(dfd, SOL_SOCKET, SO_REUSEADDR, &param, len);
	if (ret)
		return ret;

	param = 0;
	len = sizeof(param);
	ret = sapi->getsockopt(sfd, IPPROTO_TCP, TCP_NODELAY, &param, &len);
	if (!ret && param)
		ret = dapi->setsockopt(dfd, IPPROTO_TCP, TCP_NODELAY, &param, len);
	return ret;
}

/* The new socket's family follows the old one's address length (asked for with a length of
 * 0: nothing is copied); it is a stream socket whatever the old one was, as in rdma-core's
 * library. */
int rsp_transpose(int index, enum rsp_kind to)
{
	const struct rsp_api *dapi = to == RSP_RSOCKET ? &rsp_rs : &rsp_real.api;
	const struct rsp_api *sapi = to == RSP_RSOCKET ? &rsp_real.api : &rsp_rs;
	int sfd = rsp_fd_getd(index), dfd, family;
	struct sockaddr_storage unused;
	socklen_t len = 0;

	if (sapi->getsockname(sfd, (struct sockaddr *)&unused, &len))
		return -1;
	family = len == sizeof(struct sockaddr_in6) ? AF_INET6 : AF_INET;
	dfd = dapi->socket(family, SOCK_STREAM, 0);
	if (dfd < 0)
		return -1;
	if (rsp_copy_sockopts(dfd, sfd, dapi, sapi)) {
		dapi->close(dfd);
		return -1;
	}
	rsp_fd_store(index, dfd, to, RSP_READY);
	return dfd;
}

/* Failures keep rsockets' defaults. */
void rsp_set_rsocket_options(int rs)
{
	if (rsp_opts.sq_size)
		rsetsockopt(rs, SOL_RDMA, RDMA_SQSIZE, &rsp_opts.sq_size, sizeof(int));
	if (rsp_opts.rq_size)
		rsetsockopt(rs, SOL_RDMA, RDMA_RQSIZE, &rsp_opts.rq_size, sizeof(int));
	if (rsp_opts.sq_inline)
		rsetsockopt(rs, SOL_RDMA, RDMA_INLINE, &rsp_opts.sq_inline, sizeof(int));
}
