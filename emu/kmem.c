/* kmem: size-class object memory in huge-page chunks for the emulated kernel (emu/kmem.h). */
#define _GNU_SOURCE
#include "kmem.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#define KMEM_ON_VALGRIND() (RUNNING_ON_VALGRIND != 0)
#endif
#endif
#ifndef KMEM_ON_VALGRIND
#define KMEM_ON_VALGRIND() 0
#endif

#if defined(__SANITIZE_ADDRESS__)
#define KMEM_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define KMEM_ASAN 1
#endif
#endif

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

#define KMEM_CHUNK ((size_t)2 << 20) /* one transparent huge page on x86-64 and arm64 (4K) */
#define KMEM_STEP ((size_t)64 << 10) /* populated at once where THP is off */

#define KMEM_MAGIC_LIVE 0x6b6d656du
#define KMEM_MAGIC_FREE 0x6b66726eu
#define KMEM_MAGIC_BIG 0x6b626967u

/* 16 bytes, so objects keep malloc's 16-byte alignment */
struct kmem_hdr {
	uint32_t magic;
	uint32_t cls;
	uint64_t pad;
};

/* A free object. The shared lists hold batches: chains of up to KMEM_TCACHE_BATCH objects
 * (more at a thread's exit) whose first object carries the chain's length and the next
 * batch, so a thread's cache trades a whole chain by moving one pointer. Refilling object by
 * object walked the shared list, one dependent cache miss an object once the list had gone
 * cold (N = 10,000 connections of bench/cm_bench). The smallest class holds these 24 bytes. */
struct kmem_free {
	struct kmem_free *next;  /* within the chain */
	struct kmem_free *batch; /* a batch's first object: the next batch on the shared list */
	size_t n;                /* a batch's first object: the chain's length */
};

/* kmalloc's classes up to a page: 32 ... 4096 */
static const uint32_t class_size[] = {32, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048,
				      3072, 4096};
#define KMEM_NCLASS (sizeof class_size / sizeof class_size[0])

static struct {
	pthread_mutex_t lock;
	int mode; /* 0 until decided, then enum emu_kmem_mode */
	int huge;
	pthread_key_t key; /* flushes a thread's cache when it exits */
	struct kmem_free *free[KMEM_NCLASS];
	size_t cached, carved, chunks;
	char *bump, *end, *populated;
} km = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* Each thread keeps up to KMEM_TCACHE_MAX free objects a class and trades KMEM_TCACHE_BATCH
 * at a time with the shared lists, so most calls take no lock (the lock was ~2 k instructions
 * of a connection's ~63 k in bench/cm_bench). Initial-exec TLS: one %fs-relative load, no
 * __tls_get_addr; librdmaemu is always a load-time dependency, and the block is small. */
#define KMEM_TCACHE_MAX 64
#define KMEM_TCACHE_BATCH 32

struct kmem_tcache {
	struct kmem_free *head[KMEM_NCLASS];
	uint16_t n[KMEM_NCLASS];
	bool registered;
};

static __thread struct kmem_tcache tc __attribute__((tls_model("initial-exec")));

static void atfork_prepare(void)
{
	pthread_mutex_lock(&km.lock);
}

static void atfork_release(void)
{
	pthread_mutex_unlock(&km.lock);
}

/* THP in "always" or "madvise" mode honours MADV_HUGEPAGE; "never" does not. */
static int thp_available(void)
{
	char buf[128];
	int fd = open("/sys/kernel/mm/transparent_hugepage/enabled", O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return strstr(buf, "[always]") || strstr(buf, "[madvise]");
}

static void tcache_flush_all(void *arg);
static void build_class_table(void);

static int decide(void)
{
	int m = EMU_KMEM_POOL;
	const char *e = getenv("RDMAEMU_KMEM");

#ifdef KMEM_ASAN
	m = EMU_KMEM_LIBC;
#endif
	/* RDMAEMU_KMEM=1 keeps the pool under valgrind (to profile it with callgrind) */
	if ((KMEM_ON_VALGRIND() && !(e && !strcmp(e, "1"))) || (e && !strcmp(e, "0")))
		m = EMU_KMEM_LIBC;
	pthread_mutex_lock(&km.lock);
	if (!km.mode) {
		build_class_table();
		km.huge = m == EMU_KMEM_POOL && thp_available();
		if (m == EMU_KMEM_POOL) {
			pthread_atfork(atfork_prepare, atfork_release, atfork_release);
			if (pthread_key_create(&km.key, tcache_flush_all))
				m = EMU_KMEM_LIBC; /* no key: threads' caches could not be given back */
		}
		__atomic_store_n(&km.mode, m, __ATOMIC_RELEASE);
	}
	m = km.mode;
	pthread_mutex_unlock(&km.lock);
	return m;
}

static inline int kmem_mode(void)
{
	int m = __atomic_load_n(&km.mode, __ATOMIC_ACQUIRE);

	return m ? m : decide();
}

/* size -> class: a table by 32-byte step (a loop over the classes cost ~30 instructions an
 * allocation); built at the first decision, before any allocation */
static uint8_t class_by_step[EMU_KMEM_MAX / 32 + 1];

static void build_class_table(void)
{
	unsigned c = 0;

	for (unsigned i = 0; i <= EMU_KMEM_MAX / 32; i++) {
		while (class_size[c] < i * 32)
			c++;
		class_by_step[i] = (uint8_t)c;
	}
}

static inline unsigned class_of(size_t size)
{
	return class_by_step[(size + 31) / 32];
}

/* A fresh 2 MiB-aligned chunk: mapped at twice the size and trimmed, since THP backs only
 * aligned 2 MiB ranges. */
static int grow(void)
{
	size_t len = 2 * KMEM_CHUNK;
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *a;

	if (p == MAP_FAILED)
		return -1;
	a = (char *)(((uintptr_t)p + KMEM_CHUNK - 1) & ~(uintptr_t)(KMEM_CHUNK - 1));
	if (a > p)
		munmap(p, (size_t)(a - p));
	if (a + KMEM_CHUNK < p + len)
		munmap(a + KMEM_CHUNK, (size_t)(p + len - (a + KMEM_CHUNK)));
	/* refused (no THP in this kernel): the chunk is populated a step at a time instead */
	if (km.huge && madvise(a, KMEM_CHUNK, MADV_HUGEPAGE))
		km.huge = 0;
	km.bump = km.populated = a;
	km.end = a + KMEM_CHUNK;
	km.chunks++;
	return 0;
}

/* Called with km.lock held. The tail of a chunk too short for the object is left unused. */
static struct kmem_hdr *carve(unsigned c)
{
	size_t need = sizeof(struct kmem_hdr) + class_size[c];
	struct kmem_hdr *h;

	if (!km.bump || (size_t)(km.end - km.bump) < need) {
		if (grow())
			return NULL;
	}
	h = (struct kmem_hdr *)km.bump;
	km.bump += need;
	/* Without THP: one madvise populates 16 pages (half the cost of 16 faults here). An
	 * old kernel's EINVAL just leaves the pages to fault in. */
	while (!km.huge && km.populated < km.bump) {
		(void)madvise(km.populated, KMEM_STEP, MADV_POPULATE_WRITE);
		km.populated += KMEM_STEP;
	}
	return h;
}

/* Called with km.lock held and this thread's cache of class c empty: a batch from the shared
 * list, or KMEM_TCACHE_BATCH objects fresh from the chunk. */
static void refill(unsigned c)
{
	struct kmem_free *b = km.free[c];

	if (b) {
		km.free[c] = b->batch;
		km.cached -= b->n;
		tc.head[c] = b;
		tc.n[c] = (uint16_t)b->n;
		return;
	}
	for (unsigned i = 0; i < KMEM_TCACHE_BATCH; i++) {
		struct kmem_hdr *h = carve(c);
		struct kmem_free *f;

		if (!h)
			return;
		h->magic = KMEM_MAGIC_FREE;
		h->cls = c;
		km.carved++;
		f = (struct kmem_free *)(h + 1);
		f->next = tc.head[c];
		tc.head[c] = f;
		tc.n[c]++;
	}
}

/* Called with km.lock held: the first n (at least 1) objects of this thread's cache of class c
 * to the shared list, as one batch. They were freed last, so the walk stays in the cache. */
static void flush(unsigned c, unsigned n)
{
	struct kmem_free *b = tc.head[c], *last = b;

	if (!b || !n)
		return;
	if (n > tc.n[c])
		n = tc.n[c];
	for (unsigned i = 1; i < n; i++)
		last = last->next;
	tc.head[c] = last->next;
	tc.n[c] = (uint16_t)(tc.n[c] - n);
	last->next = NULL;
	b->n = n;
	b->batch = km.free[c];
	km.free[c] = b;
	km.cached += n;
}

static void tcache_flush_all(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&km.lock);
	for (unsigned c = 0; c < KMEM_NCLASS; c++)
		flush(c, tc.n[c]);
	pthread_mutex_unlock(&km.lock);
	/* another key's destructor may free or allocate after this one (their order is
	 * unspecified): that use registers again, and the next round of destructors flushes */
	tc.registered = false;
}

/* A thread's first use: its cache goes back to the shared lists when it exits. */
static void tcache_register(void)
{
	tc.registered = true;
	pthread_setspecific(km.key, &tc); /* any non-NULL value runs the destructor */
}

/* The thread's cache of class c: take its first object, give one back. */
static inline void *tc_pop(unsigned c)
{
	struct kmem_free *f = tc.head[c];

	tc.head[c] = f->next;
	tc.n[c]--;
	((struct kmem_hdr *)f - 1)->magic = KMEM_MAGIC_LIVE;
	return f;
}

static inline void tc_push(unsigned c, struct kmem_hdr *h)
{
	struct kmem_free *f = (struct kmem_free *)(h + 1);

	h->magic = KMEM_MAGIC_FREE;
	f->next = tc.head[c];
	tc.head[c] = f;
	tc.n[c]++;
}

/* What the fast path below does not: a big object, the thread's first object, an empty
 * cache. Out of line so that the fast path saves no registers (the two paths together in one
 * function cost ~15 instructions a call in prologue and epilogue, ~1 k a connection). */
static void *__attribute__((noinline)) pool_alloc_slow(size_t size)
{
	struct kmem_hdr *h;
	unsigned c;

	if (size > EMU_KMEM_MAX) {
		h = malloc(sizeof *h + size);
		if (!h)
			return NULL;
		h->magic = KMEM_MAGIC_BIG;
		h->cls = KMEM_NCLASS;
		return h + 1;
	}
	c = class_of(size);
	if (!tc.registered)
		tcache_register();
	pthread_mutex_lock(&km.lock);
	refill(c);
	pthread_mutex_unlock(&km.lock);
	if (!tc.head[c]) {
		errno = ENOMEM;
		return NULL;
	}
	return tc_pop(c);
}

static inline void *pool_alloc(size_t size)
{
	if (size <= EMU_KMEM_MAX && tc.head[class_of(size)])
		return tc_pop(class_of(size));
	return pool_alloc_slow(size);
}

void *emu_kmem_alloc(size_t size)
{
	if (kmem_mode() == EMU_KMEM_LIBC)
		return malloc(size ? size : 1);
	return pool_alloc(size);
}

void *emu_kmem_zalloc(size_t size)
{
	void *p;

	if (kmem_mode() == EMU_KMEM_LIBC)
		return calloc(1, size ? size : 1);
	p = pool_alloc(size);
	if (p)
		memset(p, 0, size);
	return p;
}

static void __attribute__((noreturn)) bad_free(const void *p, uint32_t magic)
{
	fprintf(stderr, "rdmaemu: kmem: free of %p: %s\n", p,
		magic == KMEM_MAGIC_FREE ? "freed twice" : "not a kmem object");
	abort();
}

/* A big object, a bad free, the thread's first free, a full cache (see pool_alloc_slow). */
static void __attribute__((noinline)) free_slow(struct kmem_hdr *h)
{
	unsigned c;

	if (h->magic == KMEM_MAGIC_BIG) {
		h->magic = KMEM_MAGIC_FREE;
		free(h);
		return;
	}
	if (h->magic != KMEM_MAGIC_LIVE || h->cls >= KMEM_NCLASS)
		bad_free(h + 1, h->magic);
	c = h->cls;
	if (!tc.registered)
		tcache_register();
	tc_push(c, h);
	if (tc.n[c] > KMEM_TCACHE_MAX) {
		pthread_mutex_lock(&km.lock);
		flush(c, KMEM_TCACHE_BATCH);
		pthread_mutex_unlock(&km.lock);
	}
}

void emu_kmem_free(void *p)
{
	struct kmem_hdr *h;
	unsigned c;

	if (!p)
		return;
	if (kmem_mode() == EMU_KMEM_LIBC) {
		free(p);
		return;
	}
	h = (struct kmem_hdr *)p - 1;
	c = h->cls;
	if (h->magic != KMEM_MAGIC_LIVE || c >= KMEM_NCLASS || !tc.registered ||
	    tc.n[c] >= KMEM_TCACHE_MAX)
		free_slow(h);
	else
		tc_push(c, h);
}

void emu_kmem_get_stats(struct emu_kmem_stats *s)
{
	s->mode = (enum emu_kmem_mode)kmem_mode();
	pthread_mutex_lock(&km.lock);
	s->chunks = km.chunks;
	s->carved = km.carved;
	s->cached = km.cached;
	s->huge = km.huge;
	pthread_mutex_unlock(&km.lock);
	for (unsigned c = 0; c < KMEM_NCLASS; c++)
		s->cached += tc.n[c];
}
