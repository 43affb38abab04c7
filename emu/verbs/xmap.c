/* Registered memory a peer process can map (docs/daemon.md, "One copy between processes").
 *
 * process_vm_readv costs a system call and a page-table walk of the other process for
 * every copy (~1 us, and 12-14 GB/s at best here, a fifth of memcpy). So, in a process attached
 * to a daemon (the only ones with peers on rings), ibv_reg_mr moves the whole pages of the
 * region to a memfd: their contents are copied into it and it is mapped MAP_SHARED | MAP_FIXED
 * over them, so the application's pointers, data and access rights stay as they were. A peer
 * that is allowed to (the ptrace rule of /proc/PID/fd, the same as process_vm_readv's) opens
 * /proc/PID/fd/FD once, maps it, and from then on copies with memcpy: one copy, no system
 * call. ibv_dereg_mr of the last MR of a region moves it back to private anonymous memory
 * (contents copied), so a peer's old mapping never sees the process's later use of those
 * pages.
 *
 * Only private anonymous memory is moved ("rw-p", no file: malloc'd, mmap'd anonymous, the
 * heap), whole pages only (a region's first and last partial pages stay where they are and
 * go through process_vm_readv), at least XMAP_MIN bytes, never a region overlapping one
 * already moved. A child of fork() turns its moved regions back into private copies at once
 * (xmap_child). Differences it makes, documented: that copy is taken when the child first
 * runs, not at the fork; another thread writing the pages during ibv_reg_mr itself may lose
 * that write, and so may a write to another object that shares the region's first or last
 * whole page with it (a heap neighbour). So it is asked for, RDMAEMU_XFAST_MAP=1: a program
 * that knows no thread writes its buffers' pages while it registers them takes it (the
 * switches that turn the one-copy path off turn it off too); without it a peer copies with
 * process_vm_readv / writev. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "emu/link/link.h"
#include "emu/verbs/datapath.h"
#include "util/failcall.h"

#define XMAP_MIN (64u * 1024)
#define XMAP_MAX_REGIONS 64

struct xmap_region {
	uintptr_t start, end; /* whole pages */
	int fd;
	uint64_t ino;
	unsigned refs;
};

static pthread_mutex_t xmap_lock = PTHREAD_MUTEX_INITIALIZER;
static struct xmap_region regions[XMAP_MAX_REGIONS];
static unsigned nregions;

static bool xmap_on(void)
{
	static int on = -1;

	if (on < 0) {
		const char *v = getenv("RDMAEMU_XFAST_MAP");
		const char *x = getenv("RDMAEMU_XFAST");

		on = v && !strcmp(v, "1") && !(x && *x && strcmp(x, "1")) && emu_dp_fast_on();
	}
	return on && emu_link_active();
}

/* Whether [start, end) is covered, without a gap, by mappings of /proc/self/maps that all
 * pass ok (given each one's permissions, inode and name). */
static bool maps_cover(uintptr_t start, uintptr_t end,
		       bool (*ok)(const char *perms, unsigned long ino, const char *name,
				  uint64_t arg),
		       uint64_t arg)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[512];
	uintptr_t at = start;

	if (!f)
		return false;
	while (at < end && fgets(line, sizeof(line), f)) {
		unsigned long lo, hi, ino;
		char perms[8], name[256] = "";
		int n = sscanf(line, "%lx-%lx %7s %*s %*s %lu %255s", &lo, &hi, perms, &ino, name);

		if (n < 4 || hi <= at)
			continue;
		if (lo > at || !ok(perms, ino, name, arg))
			break;
		at = hi;
	}
	fclose(f);
	return at >= end;
}

/* private anonymous writable memory: malloc'd, anonymous mmap, the heap */
static bool anon_rw(const char *perms, unsigned long ino, const char *name, uint64_t arg)
{
	(void)arg;
	return !strcmp(perms, "rw-p") && !ino && (!name[0] || !strcmp(name, "[heap]"));
}

/* mapped from the memfd of inode arg */
static bool of_inode(const char *perms, unsigned long ino, const char *name, uint64_t arg)
{
	(void)perms;
	(void)name;
	return ino == arg;
}

/* Whether [start, end) lies in private anonymous writable mappings only. */
static bool private_anon(uintptr_t start, uintptr_t end)
{
	return maps_cover(start, end, anon_rw, 0);
}

/* Whether [start, end) is still mapped from the memfd of inode ino only (the application may
 * have unmapped or replaced the pages, freeing a buffer before ibv_dereg_mr). */
static bool still_ours(uintptr_t start, uintptr_t end, uint64_t ino)
{
	return maps_cover(start, end, of_inode, ino);
}

static struct xmap_region *region_of(uintptr_t lo, uintptr_t hi)
{
	for (unsigned i = 0; i < nregions; i++)
		if (lo < regions[i].end && regions[i].start < hi)
			return &regions[i];
	return NULL;
}

void emu_xmap_reg(void *addr, size_t len)
{
	long pg = sysconf(_SC_PAGESIZE);
	uintptr_t start = ((uintptr_t)addr + (uintptr_t)pg - 1) & ~((uintptr_t)pg - 1);
	uintptr_t end = ((uintptr_t)addr + len) & ~((uintptr_t)pg - 1);
	struct xmap_region *r;
	struct stat st;
	void *tmp;
	int fd;

	if (len < XMAP_MIN || end <= start || !xmap_on())
		return;
	pthread_mutex_lock(&xmap_lock);
	r = region_of(start, end);
	if (r) {
		/* the same pages registered again: one more MR on them */
		if (r->start == start && r->end == end)
			r->refs++;
		goto out;
	}
	if (nregions == XMAP_MAX_REGIONS || !private_anon(start, end))
		goto out;
	fd = memfd_create("rdmaemu-mr", MFD_CLOEXEC);
	if (fd < 0)
		goto out;
	if (ftruncate(fd, (off_t)(end - start)) || fstat(fd, &st)) {
		close(fd);
		goto out;
	}
	tmp = emu_mmap(NULL, end - start, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (tmp == MAP_FAILED) {
		close(fd);
		goto out;
	}
	memcpy(tmp, (void *)start, end - start);
	if (mremap(tmp, end - start, end - start, MREMAP_MAYMOVE | MREMAP_FIXED, (void *)start) ==
	    MAP_FAILED) {
		munmap(tmp, end - start);
		close(fd);
		goto out;
	}
	regions[nregions++] = (struct xmap_region){ .start = start, .end = end, .fd = fd,
						    .ino = (uint64_t)st.st_ino, .refs = 1 };
out:
	pthread_mutex_unlock(&xmap_lock);
}

void emu_xmap_unreg(void *addr, size_t len)
{
	long pg = sysconf(_SC_PAGESIZE);
	uintptr_t start = ((uintptr_t)addr + (uintptr_t)pg - 1) & ~((uintptr_t)pg - 1);
	uintptr_t end = ((uintptr_t)addr + len) & ~((uintptr_t)pg - 1);
	struct xmap_region *r;

	if (len < XMAP_MIN || end <= start)
		return;
	pthread_mutex_lock(&xmap_lock);
	r = region_of(start, end);
	if (r && r->start == start && r->end == end && !--r->refs) {
		/* back to private anonymous memory, contents kept (unless the application has
		 * unmapped or replaced the pages meanwhile: then they are no longer ours) */
		void *tmp = still_ours(start, end, r->ino) ?
				    emu_mmap(NULL, end - start, PROT_READ | PROT_WRITE,
					 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) : MAP_FAILED;

		if (tmp != MAP_FAILED) {
			memcpy(tmp, (void *)start, end - start);
			if (mremap(tmp, end - start, end - start, MREMAP_MAYMOVE | MREMAP_FIXED,
				   (void *)start) == MAP_FAILED)
				munmap(tmp, end - start);
		}
		close(r->fd);
		*r = regions[--nregions];
	}
	pthread_mutex_unlock(&xmap_lock);
}

/* In a child of fork(): its moved regions become private copies, as Linux 6.1 gives a child a
 * copy of pinned pages (ibv_is_fork_initialized: IBV_FORK_UNNEEDED), instead of pages shared
 * with the parent. The copy is taken when the child first runs, not at the fork itself: a
 * parent writing a registered page between the two leaves its write in the child's copy. */
static void xmap_child(void)
{
	for (unsigned i = 0; i < nregions; i++) {
		struct xmap_region *r = &regions[i];
		void *tmp = still_ours(r->start, r->end, r->ino) ?
				    emu_mmap(NULL, r->end - r->start, PROT_READ | PROT_WRITE,
					 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) : MAP_FAILED;

		if (tmp != MAP_FAILED) {
			memcpy(tmp, (void *)r->start, r->end - r->start);
			if (mremap(tmp, r->end - r->start, r->end - r->start,
				   MREMAP_MAYMOVE | MREMAP_FIXED, (void *)r->start) == MAP_FAILED)
				munmap(tmp, r->end - r->start);
		}
		close(r->fd);
	}
	nregions = 0;
	pthread_mutex_init(&xmap_lock, NULL);
}

static void xmap_prepare(void)
{
	pthread_mutex_lock(&xmap_lock);
}

static void xmap_parent(void)
{
	pthread_mutex_unlock(&xmap_lock);
}

__attribute__((constructor)) static void xmap_atfork(void)
{
	pthread_atfork(xmap_prepare, xmap_parent, xmap_child);
}

bool emu_xmap_find(uintptr_t p, uint64_t len, int *fd, uint64_t *ino, uintptr_t *start,
		   uintptr_t *end)
{
	bool ok = false;

	pthread_mutex_lock(&xmap_lock);
	for (unsigned i = 0; i < nregions; i++)
		if (p < regions[i].end && regions[i].start < p + len) {
			*fd = regions[i].fd;
			*ino = regions[i].ino;
			*start = regions[i].start;
			*end = regions[i].end;
			ok = true;
			break;
		}
	pthread_mutex_unlock(&xmap_lock);
	return ok;
}
