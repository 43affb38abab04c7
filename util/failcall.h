/* failcall: the libraries' calls that can fail for lack of a resource, each counted by
 * failnth (failnth.h) so that a failure sweep can make any one of them fail
 * (docs/failure-sweep.md).
 *
 * Every call of lib/ and of the emulator's libraries that takes memory, a mapping, an
 * eventfd, a socket or a thread goes through one of these (scripts/layers refuses a raw one).
 * Each behaves as the libc call it wraps, except when failnth names it: then it fails as
 * the real call does when the resource is gone, touching nothing:
 *   emu_malloc, emu_calloc, emu_realloc, emu_strdup, emu_strndup: NULL, errno ENOMEM
 *   emu_mmap: MAP_FAILED, errno ENOMEM
 *   emu_eventfd, emu_socket, emu_socketpair: -1, errno EMFILE (the process's fd limit)
 *   emu_pthread_create: EAGAIN returned (errno untouched, as pthread_create does) */
#ifndef EMU_FAILCALL_H
#define EMU_FAILCALL_H

#include <pthread.h>
#include <stddef.h>
#include <sys/types.h>

void *emu_malloc(size_t size);
void *emu_calloc(size_t n, size_t size);
void *emu_realloc(void *p, size_t size);
char *emu_strdup(const char *s);
char *emu_strndup(const char *s, size_t n);
void *emu_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off);
int emu_eventfd(unsigned int initval, int flags);
int emu_socket(int domain, int type, int protocol);
int emu_socketpair(int domain, int type, int protocol, int sv[2]);
int emu_pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *),
		       void *arg);

#endif
