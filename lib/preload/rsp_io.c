/* The data calls of libc, as librspreload.so exports them. A fork-support socket moves to
 * rsockets on its first data call (rsp_fork.c); sendfile to an rsocket maps the file and
 * writes the mapping. */
/* This file defines libc functions of the same name; the inline wrappers _FORTIFY_SOURCE puts
 * in front of them (a hardened build's flags, a distribution's defaults) cannot be compiled over
 * such definitions. */
#undef _FORTIFY_SOURCE
#define _GNU_SOURCE
#include <rdma/rsocket.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <unistd.h>

#include "lib/preload/rsp.h"

ssize_t recv(int socket, void *buf, size_t len, int flags)
{
	int fd;

	rsp_init();
	return rsp_fork_get(socket, &fd) == RSP_RSOCKET ? rrecv(fd, buf, len, flags)
							: rsp_real.recv(fd, buf, len, flags);
}

ssize_t recvfrom(int socket, void *buf, size_t len, int flags, struct sockaddr *src_addr,
		 socklen_t *addrlen)
{
	int fd;

	rsp_init();
	return rsp_fork_get(socket, &fd) == RSP_RSOCKET
		       ? rrecvfrom(fd, buf, len, flags, src_addr, addrlen)
		       : rsp_real.recvfrom(fd, buf, len, flags, src_addr, addrlen);
}

ssize_t recvmsg(int socket, struct msghdr *msg, int flags)
{
	int fd;

	rsp_init();
	return rsp_fork_get(socket, &fd) == RSP_RSOCKET ? rrecvmsg(fd, msg, flags)
							: rsp_real.recvmsg(fd, msg, flags);
}

ssize_t read(int socket, void *buf, size_t count)
{
	int fd;

	rsp_init();
	return rsp_fork_get(socket, &fd) == RSP_RSOCKET ? rread(fd, buf, count)
							: rsp_real.read(fd, buf, count);
}

ssize_t readv(int socket, const struct iovec *iov, int iovcnt)
{
	int fd;

	rsp_init();
	return rsp_fork_get(socket, &fd) == RSP_RSOCKET ? rreadv(fd, iov, iovcnt)
							: rsp_real.readv(fd, iov, iovcnt);
}

ssize_t send(int socket, const void *buf, size_t len, int flags)
{
	int fd;

	rsp_init();
	return rsp_fork_get(socket, &fd) == RSP_RSOCKET ? rsend(fd, buf, len, flags)
							: rsp_real.send(fd, buf, len, flags);
}

ssize_t sendto(int socket, const void *buf, size_t len, int flags,
	       const struct sockaddr *dest_addr, socklen_t addrlen)
{
	int fd;

	rsp_init();
	return rsp_fork_get(socket, &fd) == RSP_RSOCKET
		       ? rsendto(fd, buf, len, flags, dest_addr, addrlen)
		       : rsp_real.sendto(fd, buf, len, flags, dest_addr, addrlen);
}

ssize_t sendmsg(int socket, const struct msghdr *msg, int flags)
{
	int fd;

	rsp_init();
	return rsp_fork_get(socket, &fd) == RSP_RSOCKET ? rsendmsg(fd, msg, flags)
							: rsp_real.sendmsg(fd, msg, flags);
}

ssize_t write(int socket, const void *buf, size_t count)
{
	int fd;

	rsp_init();
	return rsp_fork_get(socket, &fd) == RSP_RSOCKET ? rwrite(fd, buf, count)
							: rsp_real.write(fd, buf, count);
}

ssize_t writev(int socket, const struct iovec *iov, int iovcnt)
{
	int fd;

	rsp_init();
	return rsp_fork_get(socket, &fd) == RSP_RSOCKET ? rwritev(fd, iov, iovcnt)
							: rsp_real.writev(fd, iov, iovcnt);
}

/* The mapping is made with neither MAP_SHARED nor MAP_PRIVATE, as rdma-core v44 makes it:
 * the kernel refuses such a mapping (EINVAL), so sendfile to an rsocket fails with EINVAL
 * there, and here (measured on the reference VM, docs/reference/rsockets-preload.md). */
ssize_t sendfile(int out_fd, int in_fd, off_t *offset, size_t count)
{
	void *map;
	ssize_t ret;
	int fd;

	rsp_init();
	if (rsp_fd_get(out_fd, &fd) != RSP_RSOCKET)
		return rsp_real.sendfile(fd, in_fd, offset, count);
	map = mmap(NULL, count, PROT_READ, 0, in_fd, offset ? *offset : 0);
	if (map == MAP_FAILED)
		return -1;
	ret = rwrite(fd, map, count);
	if (ret > 0 && offset)
		lseek(in_fd, ret, SEEK_CUR);
	munmap(map, count);
	return ret;
}
