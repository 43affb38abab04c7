/* libc's calls behind the wrappers, and the rsocket side of a socket's move (lib/preload/rsp.h).
 * The wrappers' names are libc's own, so libc is reached through dlsym(RTLD_NEXT): the next
 * object in the lookup order after this library (libc, or another preloaded interposer such
 * as librdmaemu-host.so when that one comes later in LD_PRELOAD). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <rdma/rsocket.h>

#include "lib/preload/rsp.h"

struct rsp_real rsp_real;

const struct rsp_api rsp_rs = {
	.socket = rsocket,
	.close = rclose,
	.getsockname = rgetsockname,
	.getsockopt = rgetsockopt,
	.setsockopt = rsetsockopt,
	.fcntl = rfcntl,
};

static pthread_once_t init_once = PTHREAD_ONCE_INIT;

#define RESOLVE(field, name) (*(void **)&(field) = dlsym(RTLD_NEXT, name))

static void resolve(void)
{
	RESOLVE(rsp_real.api.socket, "socket");
	RESOLVE(rsp_real.api.close, "close");
	RESOLVE(rsp_real.api.getsockname, "getsockname");
	RESOLVE(rsp_real.api.getsockopt, "getsockopt");
	RESOLVE(rsp_real.api.setsockopt, "setsockopt");
	RESOLVE(rsp_real.api.fcntl, "fcntl");
	RESOLVE(rsp_real.bind, "bind");
	RESOLVE(rsp_real.listen, "listen");
	RESOLVE(rsp_real.accept, "accept");
	RESOLVE(rsp_real.connect, "connect");
	RESOLVE(rsp_real.recv, "recv");
	RESOLVE(rsp_real.recvfrom, "recvfrom");
	RESOLVE(rsp_real.recvmsg, "recvmsg");
	RESOLVE(rsp_real.read, "read");
	RESOLVE(rsp_real.readv, "readv");
	RESOLVE(rsp_real.send, "send");
	RESOLVE(rsp_real.sendto, "sendto");
	RESOLVE(rsp_real.sendmsg, "sendmsg");
	RESOLVE(rsp_real.write, "write");
	RESOLVE(rsp_real.writev, "writev");
	RESOLVE(rsp_real.poll, "poll");
	RESOLVE(rsp_real.shutdown, "shutdown");
	RESOLVE(rsp_real.getpeername, "getpeername");
	RESOLVE(rsp_real.dup2, "dup2");
	RESOLVE(rsp_real.sendfile, "sendfile");
	rsp_config_load();
}

void rsp_init(void)
{
	pthread_once(&init_once, resolve);
}
