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
 * already moved.
 *
 * A move is atomic for the other threads: the pages are write-protected with a userfaultfd
 * (UFFDIO_WRITEPROTECT, Linux 5.19 for the shared memory of the way back) while they are
 * copied and the new mapping put in place, so a thread writing them meanwhile waits in its
 * page fault and writes to the new pages; nothing is lost. Without that (no userfaultfd, or a policy that
 * forbids it) the pages are not moved, unless RDMAEMU_XFAST_MAP=1 asks for the move anyway
 * (a program that knows no thread writes there while it registers). RDMAEMU_XFAST_MAP=0 never
 * moves. A fork() takes the child's private copy of the moved regions while the parent's
 * pages are write-protected the same way, the parent waiting until the child has it: the copy
 * is the memory at the fork, as Linux 6.1 gives a child a copy of pinned pages. */
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
#include <sys/ioctl.h>
#include <sys/syscall.h>
#if defined(__linux__) && defined(SYS_userfaultfd)
#include <linux/userfaultfd.h>
#define XMAP_UFFD 1
#endif

#include "emu/link/link.h"
#include "emu/verbs/datapath.h"
#include "util/failcall.h"
#include "util/valgrind.h"

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

/* How pages are moved: 0 never, 1 with write protection only (the default), 2 always
 * (RDMAEMU_XFAST_MAP=1: without protection where there is none). */
static int xmap_mode(void)
{
	static int mode = -1;

	if (mode < 0) {
		const char *v = getenv("RDMAEMU_XFAST_MAP");
		const char *x = getenv("RDMAEMU_XFAST");

		if ((x && *x && strcmp(x, "1")) || !emu_dp_fast_on() || (v && !strcmp(v, "0")))
			mode = 0;
		else
			mode = v && !strcmp(v, "1") ? 2 : 1;
	}
	return emu_link_active() ? mode : 0;
}

/* Write protection while pages move (userfaultfd). wp_open: a userfaultfd with write
 * protection of anonymous (anon) or shared memory handshaken, -1 where there is none. The
 * first call learns what the kernel offers: a process without CAP_SYS_PTRACE where
 * vm.unprivileged_userfaultfd is 0 gets UFFD_USER_MODE_ONLY (Linux 5.11), whose protected
 * pages fail a system call's write to them with EFAULT while the move lasts instead of
 * holding it; without UFFD_FEATURE_WP_UNPOPULATED (Linux 6.4) the pages are faulted in
 * first, since protection covers present pages only. */
#ifdef XMAP_UFFD
#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY 1
#endif
#ifndef UFFD_FEATURE_WP_HUGETLBFS_SHMEM
#define UFFD_FEATURE_WP_HUGETLBFS_SHMEM (1 << 12)
#endif
#ifndef UFFD_FEATURE_WP_UNPOPULATED
#define UFFD_FEATURE_WP_UNPOPULATED (1 << 13)
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

static int wp_flags = -1; /* userfaultfd's flags, -2: none to be had */
static uint64_t wp_features;

static int uffd(int flags)
{
	return (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK | flags);
}

static void wp_learn(void)
{
	const uint64_t need = UFFD_FEATURE_PAGEFAULT_FLAG_WP | UFFD_FEATURE_WP_HUGETLBFS_SHMEM;
	struct uffdio_api api = { .api = UFFD_API };
	int flags = 0, fd;

	wp_flags = -2;
	if (emu_on_valgrind())
		return; /* memcheck knows none of its ioctls */
	fd = uffd(0);
	if (fd < 0 && errno == EPERM)
		fd = uffd(flags = UFFD_USER_MODE_ONLY);
	if (fd < 0)
		return;
	if (!ioctl(fd, UFFDIO_API, &api) && (api.features & need) == need) {
		wp_flags = flags;
		wp_features = api.features;
	}
	close(fd);
}

static int wp_open(uintptr_t start, uintptr_t end, bool anon)
{
	struct uffdio_api api = { .api = UFFD_API, .features = UFFD_FEATURE_PAGEFAULT_FLAG_WP };
	struct uffdio_register reg = { .range = { start, end - start },
				       .mode = UFFDIO_REGISTER_MODE_WP };
	struct uffdio_writeprotect wp = { .range = { start, end - start },
					  .mode = UFFDIO_WRITEPROTECT_MODE_WP };
	int fd;

	if (wp_flags == -1)
		wp_learn();
	if (wp_flags < 0)
		return -1;
	if (!anon)
		api.features |= UFFD_FEATURE_WP_HUGETLBFS_SHMEM;
	else if (wp_features & UFFD_FEATURE_WP_UNPOPULATED)
		api.features |= UFFD_FEATURE_WP_UNPOPULATED;
	else if (madvise((void *)start, end - start, MADV_POPULATE_WRITE))
		return -1;
	fd = uffd(wp_flags);
	if (fd < 0)
		return -1;
	if (ioctl(fd, UFFDIO_API, &api) || ioctl(fd, UFFDIO_REGISTER, &reg) ||
	    ioctl(fd, UFFDIO_WRITEPROTECT, &wp)) {
		close(fd); /* releases what was registered */
		return -1;
	}
	return fd;
}

/* The end of a protection: the pages (where they are still this file's) writable again, and
 * every thread waiting to write them woken, to fault again on what is mapped there now. */
static void wp_close(int fd, uintptr_t start, uintptr_t end)
{
	struct uffdio_writeprotect wp = { .range = { start, end - start }, .mode = 0 };

	if (fd < 0)
		return;
	(void)ioctl(fd, UFFDIO_WRITEPROTECT, &wp); /* fails where the range was replaced */
	close(fd);
}
#else
static int wp_open(uintptr_t start, uintptr_t end, bool anon)
{
	(void)start, (void)end, (void)anon;
	return -1;
}

static void wp_close(int fd, uintptr_t start, uintptr_t end)
{
	(void)fd, (void)start, (void)end;
}
#endif

/* [start, end)'s pages replaced by a copy of them in a fresh mapping: MAP_SHARED of fd, or
 * private anonymous where fd is -1. The caller write-protects them meanwhile. */
static bool move_pages(uintptr_t start, uintptr_t end, int fd)
{
	size_t len = end - start;
	void *tmp = emu_mmap(NULL, len, PROT_READ | PROT_WRITE,
			     fd < 0 ? MAP_PRIVATE | MAP_ANONYMOUS : MAP_SHARED, fd, 0);

	if (tmp == MAP_FAILED)
		return false;
	memcpy(tmp, (void *)start, len);
	if (mremap(tmp, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, (void *)start) == MAP_FAILED) {
		munmap(tmp, len);
		return false;
	}
	return true;
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
	int mode, fd, wfd;
	bool moved;

	if (len < XMAP_MIN || end <= start || !(mode = xmap_mode()))
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
	wfd = wp_open(start, end, true);
	moved = (wfd >= 0 || mode == 2) && move_pages(start, end, fd);
	wp_close(wfd, start, end);
	if (!moved) {
		close(fd);
		goto out;
	}
	regions[nregions++] = (struct xmap_region){ .start = start, .end = end, .fd = fd,
						    .ino = (uint64_t)st.st_ino, .refs = 1 };
out:
	pthread_mutex_unlock(&xmap_lock);
}

/* r's pages back in private anonymous memory, contents kept (unless the application has
 * unmapped or replaced them meanwhile: then they are no longer ours); write-protected while
 * they move where that can be had (protect: other threads may write them). */
static void move_back(const struct xmap_region *r, bool protect)
{
	int wfd;

	if (!still_ours(r->start, r->end, r->ino))
		return;
	wfd = protect ? wp_open(r->start, r->end, false) : -1;
	(void)move_pages(r->start, r->end, -1);
	wp_close(wfd, r->start, r->end);
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
		move_back(r, true);
		close(r->fd);
		*r = regions[--nregions];
	}
	pthread_mutex_unlock(&xmap_lock);
}

/* fork(): the parent write-protects its moved regions (xmap_prepare), the child turns them
 * into private copies at once (xmap_child) and says so on a pipe, and the parent waits for
 * that before it lifts the protection (xmap_parent). So the child's copy is the memory at
 * the fork, as Linux 6.1 copies pinned pages for a child (ibv_is_fork_initialized:
 * IBV_FORK_UNNEEDED), instead of pages shared with the parent; another thread of the parent
 * writing them meanwhile waits. The child's registrations of the parent's userfaultfds are
 * dropped by the kernel at the fork (no UFFD_FEATURE_EVENT_FORK). */
static int fork_wp[XMAP_MAX_REGIONS];
static int fork_pipe[2] = { -1, -1 };

static void xmap_prepare(void)
{
	pthread_mutex_lock(&xmap_lock);
	if (!nregions || pipe2(fork_pipe, O_CLOEXEC))
		fork_pipe[0] = fork_pipe[1] = -1;
	for (unsigned i = 0; i < nregions; i++)
		fork_wp[i] = fork_pipe[0] >= 0 ? wp_open(regions[i].start, regions[i].end, false) : -1;
}

static void xmap_parent(void)
{
	if (fork_pipe[0] >= 0) {
		char c;

		close(fork_pipe[1]);
		/* one byte from the child, or the end of the pipe if there is no child (a
		 * failed fork) or it died first */
		while (read(fork_pipe[0], &c, 1) < 0 && errno == EINTR)
			;
		close(fork_pipe[0]);
	}
	for (unsigned i = 0; i < nregions; i++)
		wp_close(fork_wp[i], regions[i].start, regions[i].end);
	pthread_mutex_unlock(&xmap_lock);
}

static void xmap_child(void)
{
	for (unsigned i = 0; i < nregions; i++) {
		move_back(&regions[i], false); /* the child's only thread */
		close(regions[i].fd);
		if (fork_wp[i] >= 0)
			close(fork_wp[i]);
	}
	nregions = 0;
	if (fork_pipe[0] >= 0) {
		ssize_t w;

		do
			w = write(fork_pipe[1], "", 1);
		while (w < 0 && errno == EINTR);
		close(fork_pipe[0]);
		close(fork_pipe[1]);
	}
	pthread_mutex_init(&xmap_lock, NULL);
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
