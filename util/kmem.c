/* kmem: size-class object memory in huge-page slabs for the emulated kernel (util/kmem.h). */
#define _GNU_SOURCE
#include "kmem.h"
#include "failnth.h"
#include "pagereport.h"
#include "valgrind.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <unistd.h>

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
#define KMEM_SLAB_SHIFT 16
#define KMEM_SLAB ((size_t)1 << KMEM_SLAB_SHIFT) /* one class's objects; populated at once
						    where THP is off */
/* Address space reserved (not memory: PROT_NONE until a chunk is used): 16 GiB, ~3.5 million
 * connections' worth; 1 GiB where that much cannot be had. */
#define KMEM_REGION ((size_t)16 << 30)
#define KMEM_REGION_SMALL ((size_t)1 << 30)

#define KMEM_MAGIC_BIG 0x6b626967u
#define KMEM_MAGIC_FREE 0x6b66726eu

/* Objects above EMU_KMEM_MAX come from malloc behind this header (16 bytes: malloc's
 * alignment is kept). Class objects have no header: a slab's class is in slab_cls. */
struct kmem_big {
	uint32_t magic;
	uint32_t pad[3];
};

/* kmalloc's classes up to a page: 32 ... 4096 */
static const uint32_t class_size[] = {32, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048,
				      3072, 4096};
#define KMEM_NCLASS (sizeof class_size / sizeof class_size[0])
/* ceil(2^32 / size): (offset * recip) >> 32 is offset / size for any offset in a slab */
static uint64_t class_recip[KMEM_NCLASS];

/* A slab's class + 1 by its index in the region (0: not handed out). 256 KiB of bss, of
 * which only the pages of slabs in use are ever touched. */
static uint8_t slab_cls[KMEM_REGION / KMEM_SLAB];

/* A handed-out slab's free objects: a bit each, by index from the slab's start (up to 2,048
 * objects: the 32-byte class). Outside the slab, so that freeing an object to the shared
 * pool touches this small table (24 bytes of bits for a slab of 384-byte objects, 256 for
 * the 32-byte class; ~30 KiB for 10,000 connections) and not the object. */
struct kmem_slab {
	uint32_t nfree;
	uint64_t bits[];
};

#define KMEM_NSLAB (KMEM_REGION / KMEM_SLAB)
#define KMEM_SLAB_WORDS (KMEM_NSLAB / 64)

/* by slab index; bss, touched only for the slabs in use */
static struct kmem_slab *slab_meta[KMEM_NSLAB];
/* By class: a bit for each of its slabs that has free objects (56 KiB of bss a class,
 * touched only where slabs are in use). */
static uint64_t class_slabs[KMEM_NCLASS][KMEM_SLAB_WORDS];

static struct {
	pthread_mutex_t lock;
	int mode; /* 0 until decided, then enum emu_kmem_mode */
	int huge;    /* THP asked for and not given up (huge_pages()) */
	bool report; /* the host takes free memory back: chunks after the first are 4 KiB pages */
	size_t nhuge; /* chunks 0 .. nhuge - 1 are huge pages; those after are 4 KiB pages */
	pthread_key_t key; /* flushes a thread's cache when it exits */
	uintptr_t base;    /* the reserved region: 2 MiB aligned */
	size_t len;
	size_t chunks;       /* mapped read-write from base, in order */
	size_t next_slab;    /* the next slab not handed out yet, by index */
	char *cur[KMEM_NCLASS], *cur_end[KMEM_NCLASS]; /* each class's slab being carved */
	/* By class: the first word of class_slabs[c] that may have a bit set (free objects not
	 * in any thread's cache are in the slabs it marks), and the objects ever carved. */
	size_t lo[KMEM_NCLASS], carved[KMEM_NCLASS];
	uint64_t fresh_ns, fresh_bytes; /* memory faulted in by populate_timed, and its time */
} km = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* Each thread keeps up to KMEM_TCACHE_MAX free objects a class and trades KMEM_TCACHE_BATCH
 * at a time with the shared pool, so most calls take no lock (the lock was ~2 k
 * instructions of a connection's ~63 k in bench/cm_bench). A cache is an array of pointers,
 * so neither alloc nor free touches the object's memory: at N = 10,000 connections the
 * former in-object free list and header were ~9 last-level misses a connection, most in
 * frees of objects not touched since their step. The array lives on the heap (~7 KiB); the
 * thread keeps a pointer to it in initial-exec TLS (one %fs-relative load, no
 * __tls_get_addr; 8 bytes of static TLS keep librdmaemu loadable by dlopen). */
#define KMEM_TCACHE_MAX 64
#define KMEM_TCACHE_BATCH 32

struct kmem_tcache {
	uint16_t n[KMEM_NCLASS];
	void *obj[KMEM_NCLASS][KMEM_TCACHE_MAX];
};

static __thread struct kmem_tcache *tcp __attribute__((tls_model("initial-exec")));

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

/* len bytes (a multiple of KMEM_CHUNK) of anonymous memory on a 2 MiB boundary (THP backs only
 * aligned 2 MiB ranges): mapped a chunk more than asked and trimmed. NULL if mmap fails. */
static char *map_aligned(size_t len, int prot, int flags)
{
	char *p = mmap(NULL, len + KMEM_CHUNK, prot, MAP_PRIVATE | MAP_ANONYMOUS | flags, -1, 0);
	char *a;

	if (p == MAP_FAILED)
		return NULL;
	a = (char *)(((uintptr_t)p + KMEM_CHUNK - 1) & ~(uintptr_t)(KMEM_CHUNK - 1));
	if (a > p)
		munmap(p, (size_t)(a - p));
	if (a + len < p + len + KMEM_CHUNK)
		munmap(a + len, (size_t)(p + len + KMEM_CHUNK - (a + len)));
	return a;
}

/* The region: PROT_NONE and MAP_NORESERVE, so no memory is committed until grow(). */
static int reserve(size_t len)
{
	char *a = map_aligned(len, PROT_NONE, MAP_NORESERVE);

	if (!a)
		return -1;
	km.base = (uintptr_t)a;
	km.len = len;
	return 0;
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
	if ((emu_on_valgrind() && !(e && !strcmp(e, "1"))) || (e && !strcmp(e, "0")))
		m = EMU_KMEM_LIBC;
	pthread_mutex_lock(&km.lock);
	if (!km.mode) {
		build_class_table();
		/* no address space (RLIMIT_AS) or no key (threads' caches could not be given
		 * back): plain malloc */
		if (m == EMU_KMEM_POOL && reserve(KMEM_REGION) && reserve(KMEM_REGION_SMALL))
			m = EMU_KMEM_LIBC;
		if (m == EMU_KMEM_POOL && pthread_key_create(&km.key, tcache_flush_all))
			m = EMU_KMEM_LIBC;
		if (m == EMU_KMEM_POOL) {
			/* where the host takes free memory back, a fresh huge page is one it
			 * must back again first (util/pagereport.h) */
			km.huge = thp_available();
			km.report = km.huge && emu_free_page_reporting(EMU_VIRTIO_DEVICES);
			pthread_atfork(atfork_prepare, atfork_release, atfork_release);
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
	for (c = 0; c < KMEM_NCLASS; c++)
		class_recip[c] = (((uint64_t)1 << 32) + class_size[c] - 1) / class_size[c];
}

static inline unsigned class_of(size_t size)
{
	return class_by_step[(size + 31) / 32];
}

/* A fresh huge page slower than this to fault in (per 2 MiB) is one the host had to back
 * first, as where a virtio balloon reports free memory (util/pagereport.h: ~4.6 ms for 2 MiB
 * there, against ~0.1 ms for a block the host still backs, and ~0.6 ms for 512 pages of 4 KiB,
 * bench/mem_latency). Zeroing 2 MiB takes well under 1 ms on any machine, so a slower huge
 * page is the host's doing wherever the reporting is not seen (another hypervisor's balloon),
 * and the process's next chunks and tables take 4 KiB pages instead. */
#define KMEM_HUGE_SLOW_NS 1000000

/* km.huge: set once before the pool is used, cleared at most once, by a table's populate
 * without km.lock too */
static inline int huge_pages(void)
{
	return __atomic_load_n(&km.huge, __ATOMIC_RELAXED);
}

/* Faults fresh memory in at once (MADV_POPULATE_WRITE, Linux 5.14; older kernels fault it at
 * first touch, untimed) and counts the time (emu_kmem_stats.fresh_ns). huge: the range is
 * huge pages; one slower than KMEM_HUGE_SLOW_NS ends huge pages for the process. */
static void populate_timed(void *a, size_t len, bool huge)
{
	struct timespec t0, t1;
	uint64_t ns;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (madvise(a, len, MADV_POPULATE_WRITE))
		return;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ns = (uint64_t)((t1.tv_sec - t0.tv_sec) * 1000000000LL + t1.tv_nsec - t0.tv_nsec);
	/* atomic: a big table is populated without km.lock (grow holds it) */
	__atomic_add_fetch(&km.fresh_ns, ns, __ATOMIC_RELAXED);
	__atomic_add_fetch(&km.fresh_bytes, len, __ATOMIC_RELAXED);
	if (huge && ns > KMEM_HUGE_SLOW_NS * (len / KMEM_CHUNK))
		__atomic_store_n(&km.huge, 0, __ATOMIC_RELAXED);
}

/* Whether a fresh chunk is a huge page. The first one is wherever THP is on: it holds all the
 * objects of most processes (under one TLB entry), and it is made at the process's first
 * kmem allocation. The ones after it are not where the host takes free memory back
 * (util/pagereport.h): each would cost ~4.6 ms, against ~0.6 ms for 4 KiB pages, and a
 * process that grows kmem past 2 MiB (1,000 connections and more) ran no slower on them
 * (bench/RESULTS.md, cm_bench). */
static bool chunk_wants_huge(size_t chunk)
{
	return huge_pages() && chunk == km.nhuge && !(km.report && chunk > 0);
}

/* The next 2 MiB chunk of the region made read-write. Called with km.lock held. */
static int grow(void)
{
	char *a = (char *)km.base + km.chunks * KMEM_CHUNK;

	if ((km.chunks + 1) * KMEM_CHUNK > km.len ||
	    mprotect(a, KMEM_CHUNK, PROT_READ | PROT_WRITE)) {
		errno = ENOMEM;
		return -1;
	}
	/* refused (no THP in this kernel): each slab is populated when handed out instead; after
	 * a slow huge page, 4 KiB pages even where THP is "always" */
	if (chunk_wants_huge(km.chunks) && !madvise(a, KMEM_CHUNK, MADV_HUGEPAGE)) {
		/* under km.lock, as the chunk's first slab is carved at once: a thread that
		 * needs a new slab meanwhile waits for this page as it would have waited for
		 * its own */
		populate_timed(a, KMEM_CHUNK, true);
		km.nhuge++;
	} else {
		(void)madvise(a, KMEM_CHUNK, MADV_NOHUGEPAGE);
	}
	km.chunks++;
	return 0;
}

/* One fresh object of class c, counted: the class's slab carved from the front, a new slab
 * (with its table of free objects, all clear) when it is used up (its tail shorter than an
 * object left unused). Objects start at multiples of their size from a 64 KiB boundary, so
 * those of 64 bytes and up start a cache line and span no more lines than their size needs.
 * Slabs are handed out in address order, so fresh objects lie above every freed one.
 * Called with km.lock held. */
static void *carve(unsigned c)
{
	size_t size = class_size[c];
	char *p;

	if (!km.cur[c] || (size_t)(km.cur_end[c] - km.cur[c]) < size) {
		size_t words = (KMEM_SLAB / size + 63) / 64;
		struct kmem_slab *m;
		char *s;

		if (km.next_slab * KMEM_SLAB >= km.chunks * KMEM_CHUNK && grow())
			return NULL;
		m = calloc(1, sizeof *m + words * sizeof m->bits[0]);
		if (!m) {
			errno = ENOMEM;
			return NULL;
		}
		slab_meta[km.next_slab] = m;
		s = (char *)km.base + km.next_slab * KMEM_SLAB;
		slab_cls[km.next_slab++] = (uint8_t)(c + 1);
		/* Outside the huge chunks: one madvise populates the slab's 16 pages (less
		 * than 16 faults cost). An old kernel's EINVAL just leaves them to fault in. */
		if ((size_t)(s - (char *)km.base) >= km.nhuge * KMEM_CHUNK)
			populate_timed(s, KMEM_SLAB, false);
		km.cur[c] = s;
		km.cur_end[c] = s + KMEM_SLAB;
	}
	p = km.cur[c];
	km.cur[c] += size;
	km.carved[c]++;
	return p;
}

static void __attribute__((noreturn)) bad_free(const void *p, const char *why);

/* Gives object p (of class c, at offset off in the region) to the shared pool. Called with
 * km.lock held. A second free of an object already there aborts. */
static void put_free(unsigned c, uintptr_t off, void *p)
{
	size_t slab = off >> KMEM_SLAB_SHIFT;
	struct kmem_slab *m = slab_meta[slab];
	uint64_t i = ((off & (KMEM_SLAB - 1)) * class_recip[c]) >> 32;
	uint64_t bit = (uint64_t)1 << (i % 64);

	if (m->bits[i / 64] & bit) {
		pthread_mutex_unlock(&km.lock);
		bad_free(p, "freed twice");
	}
	m->bits[i / 64] |= bit;
	if (m->nfree++ == 0) {
		class_slabs[c][slab / 64] |= (uint64_t)1 << (slab % 64);
		if (slab / 64 < km.lo[c])
			km.lo[c] = slab / 64;
	}
}

/* Up to max free objects of class c from the shared pool into out[], lowest address first.
 * Called with km.lock held. */
static size_t take_free(unsigned c, void **out, size_t max)
{
	size_t k = 0, hi = (km.next_slab + 63) / 64; /* no slab handed out above word hi */

	while (k < max && km.lo[c] < hi) {
		uint64_t *w = &class_slabs[c][km.lo[c]];
		size_t slab;
		struct kmem_slab *m;
		char *base;

		if (!*w) { /* none free in these 64 slabs: lo moves on (put_free moves it back) */
			km.lo[c]++;
			continue;
		}
		slab = km.lo[c] * 64 + (size_t)__builtin_ctzll(*w);
		m = slab_meta[slab];
		base = (char *)km.base + slab * KMEM_SLAB;
		for (size_t j = 0; k < max && m->nfree; j++) {
			while (m->bits[j] && k < max) {
				unsigned b = (unsigned)__builtin_ctzll(m->bits[j]);

				m->bits[j] &= m->bits[j] - 1;
				out[k++] = base + (j * 64 + b) * class_size[c];
				m->nfree--;
			}
		}
		if (!m->nfree)
			*w &= *w - 1; /* this slab's bit: the lowest */
	}
	return k;
}

/* Called with km.lock held and the thread's cache of class c empty: up to a batch of the
 * lowest free objects of the shared pool, then fresh ones from the slab, placed so that
 * they come out in address order. Objects taken by address, not in the order they were
 * freed: a program that makes many objects in a row (a burst of connections) gets them
 * side by side whatever came before, as on the first round, so walking them later in the
 * same order walks memory forward (bench/cm_bench at N = 10,000: rounds after the first were
 * 40 % slower with the objects in the order of their frees). */
static void refill(struct kmem_tcache *t, unsigned c)
{
	void *got[KMEM_TCACHE_BATCH];
	size_t k = take_free(c, got, KMEM_TCACHE_BATCH);

	while (k < KMEM_TCACHE_BATCH) {
		void *p = carve(c);

		if (!p)
			break;
		got[k++] = p;
	}
	for (size_t i = 0; i < k; i++)
		t->obj[c][k - 1 - i] = got[i];
	t->n[c] = (uint16_t)k;
}

/* Called with km.lock held: the n objects this thread freed first (at the bottom of its
 * cache, the coldest) to the shared pool; those freed last stay for the next allocations. */
static void flush(struct kmem_tcache *t, unsigned c, unsigned n)
{
	if (n > t->n[c])
		n = t->n[c];
	if (!n)
		return;
	for (unsigned i = 0; i < n; i++)
		put_free(c, (uintptr_t)t->obj[c][i] - km.base, t->obj[c][i]);
	t->n[c] = (uint16_t)(t->n[c] - n);
	memmove(t->obj[c], t->obj[c] + n, t->n[c] * sizeof(void *));
}

static void tcache_flush_all(void *arg)
{
	struct kmem_tcache *t = arg;

	pthread_mutex_lock(&km.lock);
	for (unsigned c = 0; c < KMEM_NCLASS; c++)
		flush(t, c, t->n[c]);
	pthread_mutex_unlock(&km.lock);
	/* another key's destructor may free or allocate after this one (their order is
	 * unspecified): that use makes a cache again, and the next round of destructors
	 * flushes it */
	tcp = NULL;
	free(t);
}

/* A thread's first use: its cache, given back when the thread exits. NULL if there is no
 * memory for it (the caller then goes to the shared pool under the lock). */
static struct kmem_tcache *tcache_get(void)
{
	struct kmem_tcache *t = tcp;

	if (t)
		return t;
	t = calloc(1, sizeof *t);
	if (!t)
		return NULL;
	if (pthread_setspecific(km.key, t)) {
		free(t);
		return NULL;
	}
	tcp = t;
	return t;
}

/* What the fast path below does not: a big object, the thread's first object, an empty
 * cache. Out of line so that the fast path saves no registers (the two paths together in one
 * function cost ~15 instructions a call in prologue and epilogue, ~1 k a connection). */
static void *__attribute__((noinline)) pool_alloc_slow(size_t size)
{
	struct kmem_tcache *t;
	void *p = NULL;
	unsigned c;

	if (size > EMU_KMEM_MAX) {
		struct kmem_big *h = malloc(sizeof *h + size);

		if (!h)
			return NULL;
		h->magic = KMEM_MAGIC_BIG;
		return h + 1;
	}
	c = class_of(size);
	t = tcache_get();
	pthread_mutex_lock(&km.lock);
	if (t) {
		refill(t, c);
		if (t->n[c])
			p = t->obj[c][--t->n[c]];
	} else {
		if (!take_free(c, &p, 1))
			p = carve(c);
	}
	pthread_mutex_unlock(&km.lock);
	if (!p)
		errno = ENOMEM;
	return p;
}

static inline void *pool_alloc(size_t size)
{
	struct kmem_tcache *t = tcp;

	if (t && size <= EMU_KMEM_MAX) {
		unsigned c = class_of(size);

		if (t->n[c])
			return t->obj[c][--t->n[c]];
	}
	return pool_alloc_slow(size);
}

/* An injected failure (failnth.h): NULL with errno ENOMEM, as an exhausted slab would give. */
static bool injected_enomem(void)
{
	if (!emu_fail_nth(EMU_FAIL_ALLOC))
		return false;
	errno = ENOMEM;
	return true;
}

void *emu_kmem_alloc(size_t size)
{
	if (injected_enomem())
		return NULL;
	if (kmem_mode() == EMU_KMEM_LIBC)
		return malloc(size ? size : 1);
	return pool_alloc(size);
}

void *emu_kmem_zalloc(size_t size)
{
	void *p;

	if (injected_enomem())
		return NULL;
	if (kmem_mode() == EMU_KMEM_LIBC)
		return calloc(1, size ? size : 1);
	p = pool_alloc(size);
	if (p)
		memset(p, 0, size);
	return p;
}

static void __attribute__((noreturn)) bad_free(const void *p, const char *why)
{
	fprintf(stderr, "rdmaemu: kmem: free of %p: %s\n", p, why);
	abort();
}

/* p's class if p is where an object of a handed-out slab starts, else KMEM_NCLASS */
static inline unsigned class_at(uintptr_t off)
{
	unsigned c = (unsigned)slab_cls[off >> KMEM_SLAB_SHIFT] - 1;
	uint64_t so = off & (KMEM_SLAB - 1);

	if (c >= KMEM_NCLASS || ((so * class_recip[c]) >> 32) * class_size[c] != so)
		return KMEM_NCLASS;
	return c;
}

/* A big object, a bad free, the thread's first free, a full cache (see pool_alloc_slow).
 * A double free is caught here when the object is still the last one freed in this thread's
 * cache (the check SLUB's hardened free list makes), and by put_free when it reaches the
 * shared pool; AddressSanitizer and valgrind, which run the libc mode, catch them at once. */
static void __attribute__((noinline)) free_slow(void *p)
{
	uintptr_t off;
	struct kmem_tcache *t;
	unsigned c;

	if (kmem_mode() == EMU_KMEM_LIBC) {
		free(p);
		return;
	}
	off = (uintptr_t)p - km.base;
	if (off >= km.len) {
		struct kmem_big *h = (struct kmem_big *)p - 1;

		if (h->magic != KMEM_MAGIC_BIG)
			bad_free(p, h->magic == KMEM_MAGIC_FREE ? "freed twice"
								: "not a kmem object");
		h->magic = KMEM_MAGIC_FREE;
		free(h);
		return;
	}
	c = class_at(off);
	if (c >= KMEM_NCLASS)
		bad_free(p, "not a kmem object");
	t = tcache_get();
	if (t && t->n[c] && t->obj[c][t->n[c] - 1] == p)
		bad_free(p, "freed twice");
	if (t && t->n[c] < KMEM_TCACHE_MAX) {
		t->obj[c][t->n[c]++] = p;
		return;
	}
	pthread_mutex_lock(&km.lock);
	if (t) {
		flush(t, c, KMEM_TCACHE_BATCH);
		t->obj[c][t->n[c]++] = p;
	} else {
		put_free(c, off, p);
	}
	pthread_mutex_unlock(&km.lock);
}

void emu_kmem_free(void *p)
{
	struct kmem_tcache *t;
	uintptr_t off;
	unsigned c;

	if (!p)
		return;
	/* no mode check here: in the libc mode (and before the decision) km.len is 0, so
	 * every pointer goes to free_slow, which checks */
	off = (uintptr_t)p - km.base;
	t = tcp;
	if (off < km.len && t && (c = class_at(off)) < KMEM_NCLASS &&
	    t->n[c] - 1u < KMEM_TCACHE_MAX - 1u && t->obj[c][t->n[c] - 1] != p)
		t->obj[c][t->n[c]++] = p;
	else
		free_slow(p);
}

/* Tables below a chunk are runs of whole slabs of the region, as a class's slabs are: the chunks
 * they lie in are huge pages already in use. A table of its own 2 MiB huge page costs a page
 * the size of a chunk for 64-256 KiB, and a fresh page is what costs here: on this VM the
 * host backs a guest's fresh 2 MiB on first use, ~4 ms against ~0.1 ms for one it has backed
 * (bench/mem_latency; the tables of 10,000 connections were twelve such pages, ~48 ms of the
 * first round in bench/cm_bench). Slabs of a table are marked KMEM_TABLE_CLS in slab_cls, so
 * emu_kmem_free of a table's address is refused as no object. */
#define KMEM_TABLE_CLS 0xff   /* a table's first slab */
#define KMEM_TABLE_FREED 0xfe /* a freed run's first slab: a second free is caught */
#define KMEM_TABLE_BODY 0xfd  /* the run's other slabs: a pointer there is no table */
#define KMEM_RUN_MAX (KMEM_CHUNK / KMEM_SLAB) /* runs of 1 .. 31 slabs; 32 and up: mmap */

/* freed runs by length in slabs, each holding the next one's address in its first word */
static void *run_free[KMEM_RUN_MAX];

static size_t table_len(size_t size)
{
	if (size < KMEM_CHUNK)
		return (size + KMEM_SLAB - 1) & ~(KMEM_SLAB - 1);
	return (size + KMEM_CHUNK - 1) & ~(KMEM_CHUNK - 1);
}

/* k contiguous slabs for a table: a freed run of that length (zeroed again) or fresh ones,
 * which are zero. Called with km.lock held. */
static void *run_take(size_t k)
{
	char *p = run_free[k];

	if (p) {
		run_free[k] = *(void **)p;
		slab_cls[((uintptr_t)p - km.base) / KMEM_SLAB] = KMEM_TABLE_CLS;
		memset(p, 0, k * KMEM_SLAB);
		return p;
	}
	while ((km.next_slab + k) * KMEM_SLAB > km.chunks * KMEM_CHUNK)
		if (grow())
			return NULL;
	p = (char *)km.base + km.next_slab * KMEM_SLAB;
	slab_cls[km.next_slab] = KMEM_TABLE_CLS;
	memset(&slab_cls[km.next_slab + 1], KMEM_TABLE_BODY, k - 1);
	if (km.next_slab * KMEM_SLAB >= km.nhuge * KMEM_CHUNK)
		populate_timed(p, k * KMEM_SLAB, false);
	km.next_slab += k;
	return p;
}

void *emu_kmem_table_zalloc(size_t size)
{
	size_t len;
	char *a;

	if (injected_enomem())
		return NULL;
	if (size < EMU_KMEM_TABLE_MIN || kmem_mode() == EMU_KMEM_LIBC)
		return calloc(1, size ? size : 1);
	len = table_len(size);
	if (len < KMEM_CHUNK) {
		pthread_mutex_lock(&km.lock);
		a = run_take(len / KMEM_SLAB);
		pthread_mutex_unlock(&km.lock);
		if (!a)
			errno = ENOMEM;
		return a;
	}
	a = map_aligned(len, PROT_READ | PROT_WRITE, 0);
	if (!a) {
		errno = ENOMEM;
		return NULL;
	}
	if (!huge_pages() || km.report || madvise(a, len, MADV_HUGEPAGE)) {
		(void)madvise(a, len, MADV_NOHUGEPAGE);
		populate_timed(a, size, false);
	} else {
		populate_timed(a, len, true);
	}
	return a;
}

void emu_kmem_table_free(void *p, size_t size)
{
	size_t len, off, first, k;

	if (!p)
		return;
	if (size < EMU_KMEM_TABLE_MIN || kmem_mode() == EMU_KMEM_LIBC) {
		free(p);
		return;
	}
	len = table_len(size);
	if (len >= KMEM_CHUNK) {
		munmap(p, len);
		return;
	}
	off = (uintptr_t)p - km.base;
	if (off >= km.len || off & (KMEM_SLAB - 1))
		bad_free(p, "not a kmem table");
	first = off / KMEM_SLAB;
	k = len / KMEM_SLAB;
	pthread_mutex_lock(&km.lock);
	if (slab_cls[first] != KMEM_TABLE_CLS)
		bad_free(p, slab_cls[first] == KMEM_TABLE_FREED ? "table freed twice"
								 : "not a kmem table");
	/* the run is as long as the size says: body slabs up to its end, none after it */
	if ((k > 1 && slab_cls[first + k - 1] != KMEM_TABLE_BODY) ||
	    (first + k < km.next_slab && slab_cls[first + k] == KMEM_TABLE_BODY))
		bad_free(p, "not the size the table was made with");
	slab_cls[first] = KMEM_TABLE_FREED;
	*(void **)p = run_free[k];
	run_free[k] = p;
	pthread_mutex_unlock(&km.lock);
}

void emu_kmem_get_stats(struct emu_kmem_stats *s)
{
	struct kmem_tcache *t;

	s->mode = (enum emu_kmem_mode)kmem_mode();
	pthread_mutex_lock(&km.lock);
	s->chunks = km.chunks;
	s->carved = s->cached = 0;
	for (unsigned c = 0; c < KMEM_NCLASS; c++)
		s->carved += km.carved[c];
	for (size_t i = 0; i < km.next_slab; i++)
		if (slab_meta[i]) /* NULL: a table's */
			s->cached += slab_meta[i]->nfree;
	s->huge = chunk_wants_huge(km.chunks);
	s->fresh_bytes = __atomic_load_n(&km.fresh_bytes, __ATOMIC_RELAXED);
	s->fresh_ns = __atomic_load_n(&km.fresh_ns, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&km.lock);
	t = tcp;
	for (unsigned c = 0; t && c < KMEM_NCLASS; c++)
		s->cached += t->n[c];
}
