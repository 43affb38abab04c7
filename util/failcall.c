/* failcall: the counted resource calls (failcall.h). */
#include "failcall.h"
#include "failnth.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>

/* 1 (errno set to err) when failnth names this call of kind: the caller fails it. */
static int injected(enum emu_fail_kind kind, int err)
{
	if (!emu_fail_nth(kind))
		return 0;
	errno = err;
	return 1;
}

void *emu_malloc(size_t size)
{
	return injected(EMU_FAIL_ALLOC, ENOMEM) ? NULL : malloc(size);
}

void *emu_calloc(size_t n, size_t size)
{
	return injected(EMU_FAIL_ALLOC, ENOMEM) ? NULL : calloc(n, size);
}

void *emu_realloc(void *p, size_t size)
{
	return injected(EMU_FAIL_ALLOC, ENOMEM) ? NULL : realloc(p, size);
}

char *emu_strdup(const char *s)
{
	return injected(EMU_FAIL_ALLOC, ENOMEM) ? NULL : strdup(s);
}

char *emu_strndup(const char *s, size_t n)
{
	return injected(EMU_FAIL_ALLOC, ENOMEM) ? NULL : strndup(s, n);
}

void *emu_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return injected(EMU_FAIL_MMAP, ENOMEM) ? MAP_FAILED : mmap(addr, len, prot, flags, fd, off);
}

int emu_eventfd(unsigned int initval, int flags)
{
	return injected(EMU_FAIL_EVENTFD, EMFILE) ? -1 : eventfd(initval, flags);
}

int emu_socket(int domain, int type, int protocol)
{
	return injected(EMU_FAIL_SOCKET, EMFILE) ? -1 : socket(domain, type, protocol);
}

int emu_socketpair(int domain, int type, int protocol, int sv[2])
{
	return injected(EMU_FAIL_SOCKET, EMFILE) ? -1 : socketpair(domain, type, protocol, sv);
}

int emu_pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *),
		       void *arg)
{
	if (emu_fail_nth(EMU_FAIL_THREAD))
		return EAGAIN;
	return pthread_create(th, attr, fn, arg);
}
