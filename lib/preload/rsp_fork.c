/* Fork support (RDMAV_FORK_SAFE=1): an RDMA connection cannot pass from a parent to the child
 * that serves it, so a TCP socket is made real and connected over TCP, and moves to an rsocket
 * at its connection's first data call, in whichever process makes it. The accepting side
 * listens on its port over rsockets, then tells the connecting side over the TCP connection
 * with a 4-byte zero; the connecting side waits for that word and connects to the peer's
 * address. Both then drop the TCP connection. The listening steps of all the processes on a
 * machine are serialised by the named semaphore /rsocket_fork (rdma-core's name), since they
 * reuse one port. A nonblocking server that polls before its first read never moves (the
 * connecting side waits in its first call for a word that does not come), as with rdma-core. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <netinet/in.h>
#include <rdma/rsocket.h>
#include <semaphore.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>

#include "lib/preload/rsp.h"

static void move_done(int index, int sfd, int dfd)
{
	rsp_set_rsocket_options(dfd);
	rsp_copy_sockopts(dfd, sfd, &rsp_rs, &rsp_real.api);
	rsp_real.shutdown(sfd, SHUT_RDWR);
	rsp_real.api.close(sfd);
	rsp_fd_store(index, dfd, RSP_RSOCKET, RSP_READY);
}

static void fork_active(int index)
{
	struct sockaddr_storage addr;
	int sfd = rsp_fd_getd(index), dfd, flags;
	socklen_t len = sizeof(addr);
	uint32_t msg = 1;
	ssize_t n;

	/* the word is awaited blocking, whatever the program set */
	flags = rsp_real.api.fcntl(sfd, F_GETFL);
	rsp_real.api.fcntl(sfd, F_SETFL, 0);
	n = rsp_real.recv(sfd, &msg, sizeof(msg), MSG_PEEK);
	rsp_real.api.fcntl(sfd, F_SETFL, flags);
	if (n != sizeof(msg) || msg)
		goto keep_tcp;
	if (rsp_real.getpeername(sfd, (struct sockaddr *)&addr, &len))
		goto keep_tcp;
	dfd = rsocket(addr.ss_family, SOCK_STREAM, 0);
	if (dfd < 0)
		goto keep_tcp;
	if (rconnect(dfd, (struct sockaddr *)&addr, len)) {
		rclose(dfd);
		goto keep_tcp;
	}
	move_done(index, sfd, dfd);
	return;
keep_tcp:
	rsp_fd_store(index, sfd, RSP_NORMAL, RSP_READY);
}

/* Listens on the wildcard address at the TCP connection's port and tells the peer; the new
 * rsocket, or -1. */
static int passive_accept(int sfd, const struct sockaddr_in6 *local)
{
	struct sockaddr_in6 any;
	uint32_t msg = 0;
	int lfd, dfd = -1, one = 1;

	/* rdma-core clears the address bytes of a sockaddr_in6 read over either family: the
	 * wildcard address with the port, bound with the IPv6 length */
	memset(&any, 0, sizeof(any));
	any.sin6_family = local->sin6_family;
	any.sin6_port = local->sin6_port;
	lfd = rsocket(any.sin6_family, SOCK_STREAM, 0);
	if (lfd < 0)
		return -1;
	rsetsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (!rbind(lfd, (struct sockaddr *)&any, sizeof(any)) && !rlisten(lfd, 1) &&
	    rsp_real.write(sfd, &msg, sizeof(msg)) == sizeof(msg))
		dfd = raccept(lfd, NULL, NULL);
	rclose(lfd);
	return dfd;
}

static void fork_passive(int index)
{
	struct sockaddr_in6 local;
	socklen_t len = sizeof(local);
	int sfd = rsp_fd_getd(index), dfd = -1;
	sem_t *sem;

	if (!rsp_real.api.getsockname(sfd, (struct sockaddr *)&local, &len)) {
		sem = sem_open("/rsocket_fork", O_CREAT | O_RDWR, S_IRWXU | S_IRWXG, 1);
		if (sem != SEM_FAILED) {
			sem_wait(sem);
			dfd = passive_accept(sfd, &local);
			sem_post(sem);
			sem_close(sem);
		}
	}
	if (dfd >= 0)
		move_done(index, sfd, dfd);
	else
		rsp_fd_store(index, sfd, RSP_NORMAL, RSP_READY);
}

void rsp_fork_resolve(int index)
{
	switch (rsp_fd_state(index)) {
	case RSP_FORK_PASSIVE:
		fork_passive(index);
		break;
	case RSP_FORK_ACTIVE:
		fork_active(index);
		break;
	default:
		break;
	}
}

enum rsp_kind rsp_fork_get(int index, int *fd)
{
	rsp_fork_resolve(index);
	return rsp_fd_get(index, fd);
}
