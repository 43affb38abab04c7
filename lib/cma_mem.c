/* The library's own memory for what it makes once or more per connection: ids, their path
 * records and event records (lib/cma.h, cma_mem_*).
 *
 * From malloc, 10,000 connections' ids (512 bytes each, both ends) touch ~2,700 fresh 4 KiB
 * pages, and a first touch is a page fault: ~10 us on the VMs this project runs on, more than
 * the rest of a connection (docs/cma.md "Connection setup cost"). So these records come from
 * 2 MiB chunks that ask for transparent huge pages and are faulted in at once, in a few size
 * classes. Free records are kept for reuse (memory is never given back) as pointers in
 * arrays, the calling thread's and then a shared one, so that neither a free nor an
 * allocation touches a record: a free list through the records made every allocation of an
 * id freed long ago a cache miss that the next one waited for (+0.1 us a connection's id in
 * bench/cm_bench). The last record freed is the first handed out (an acked event record is
 * the next one read, still in cache).
 *
 * Under AddressSanitizer and valgrind every call is plain calloc/malloc/free, so those tools
 * see each record on its own; RDMAEMU_KMEM, which makes the same choice for the emulator's
 * kmem, makes it here too (0: plain malloc; 1: the pool even under valgrind, for callgrind). */
#include "config.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "lib/cma.h"

#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#define MEM_ON_VALGRIND() (RUNNING_ON_VALGRIND != 0)
#endif
#endif
#ifndef MEM_ON_VALGRIND
#define MEM_ON_VALGRIND() 0
#endif
#if defined(__SANITIZE_ADDRESS__)
#define MEM_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MEM_ASAN 1
#endif
#endif

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

#define MEM_CHUNK ((size_t)2 << 20) /* one transparent huge page (x86-64, arm64 with 4K) */

/* Classes: cma_mem_class (lib/cma.h). Each is a multiple of 64 bytes, so a record carved
 * after another starts a cache line. */
static const size_t class_size[CMA_MEM_NCLASS] = { 64, 128, 256, 384, 512 };

/* Each thread keeps up to MEM_CACHE_MAX free records a class and trades MEM_CACHE_BATCH at a
 * time with the shared arrays, so most calls take no lock (a lock and an unlock for every
 * event and id were ~3 % of all instructions of bench/cm_bench). */
#define MEM_CACHE_MAX 128
#define MEM_CACHE_BATCH 32

struct mem_cache {
	unsigned n[CMA_MEM_NCLASS];
	void *obj[CMA_MEM_NCLASS][MEM_CACHE_MAX];
};

/* A free record the shared array had no room for (its growth failed): linked through the
 * record itself, taken after the array's. */
struct mem_spill {
	struct mem_spill *next;
};

enum { MEM_UNDECIDED, MEM_POOL, MEM_LIBC };

static struct {
	pthread_mutex_t lock;
	int mode;
	pthread_once_t once;
	pthread_key_t key; /* gives a thread's cache back when it exits */
	struct {
		void **obj; /* a stack: obj[n - 1] was given back last */
		size_t n, cap;
		struct mem_spill *spill;
	} shared[CMA_MEM_NCLASS];
	char *cur, *end; /* the chunk being carved */
} mem = { .lock = PTHREAD_MUTEX_INITIALIZER, .once = PTHREAD_ONCE_INIT };

/* The cache lives on the heap; the thread keeps a pointer to it in initial-exec TLS (no
 * __tls_get_addr, and 8 bytes of static TLS keep the library loadable by dlopen). */
static __thread struct mem_cache *tc __attribute__((tls_model("initial-exec")));

static void atfork_prepare(void)
{
	pthread_mutex_lock(&mem.lock);
}

static void atfork_release(void)
{
	pthread_mutex_unlock(&mem.lock);
}

/* Gives n records of class c to the shared pool. Called with mem.lock held. */
static void share(int c, void *const *obj, size_t n)
{
	size_t need = mem.shared[c].n + n;

	if (need > mem.shared[c].cap) {
		size_t cap = need > 2 * mem.shared[c].cap ? need : 2 * mem.shared[c].cap;
		void **a = realloc(mem.shared[c].obj, cap * sizeof *a);

		if (!a) {
			for (size_t i = 0; i < n; i++) {
				struct mem_spill *s = obj[i];

				s->next = mem.shared[c].spill;
				mem.shared[c].spill = s;
			}
			return;
		}
		mem.shared[c].obj = a;
		mem.shared[c].cap = cap;
	}
	memcpy(mem.shared[c].obj + mem.shared[c].n, obj, n * sizeof *obj);
	mem.shared[c].n += n;
}

static void cache_flush(void *arg)
{
	struct mem_cache *t = arg;

	pthread_mutex_lock(&mem.lock);
	for (int c = 0; c < CMA_MEM_NCLASS; c++)
		share(c, t->obj[c], t->n[c]);
	pthread_mutex_unlock(&mem.lock);
	tc = NULL; /* a later call of this thread's (another key's destructor) makes a new one */
	free(t);
}

static void decide(void)
{
	const char *e = getenv("RDMAEMU_KMEM");
	int m = MEM_POOL;

#ifdef MEM_ASAN
	m = MEM_LIBC;
#endif
	if ((MEM_ON_VALGRIND() && !(e && !strcmp(e, "1"))) || (e && !strcmp(e, "0")))
		m = MEM_LIBC;
	/* without a key, records cached by exiting threads would be lost: plain malloc */
	if (m == MEM_POOL && pthread_key_create(&mem.key, cache_flush))
		m = MEM_LIBC;
	if (m == MEM_POOL)
		pthread_atfork(atfork_prepare, atfork_release, atfork_release);
	__atomic_store_n(&mem.mode, m, __ATOMIC_RELEASE);
}

static inline int mem_mode(void)
{
	int m = __atomic_load_n(&mem.mode, __ATOMIC_ACQUIRE);

	if (m)
		return m;
	pthread_once(&mem.once, decide);
	return __atomic_load_n(&mem.mode, __ATOMIC_ACQUIRE);
}

/* The calling thread's cache, made at its first call; NULL when there is no memory. */
static inline struct mem_cache *cache(void)
{
	if (__builtin_expect(tc != NULL, 1))
		return tc;
	tc = calloc(1, sizeof *tc);
	if (tc && pthread_setspecific(mem.key, tc)) {
		free(tc);
		tc = NULL;
	}
	return tc;
}

/* A fresh 2 MiB chunk on a 2 MiB boundary (huge pages back only aligned ranges), mapped a
 * chunk more than needed and trimmed. Called with mem.lock held. */
static int grow(void)
{
	char *p = mmap(NULL, 2 * MEM_CHUNK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);
	char *a;

	if (p == MAP_FAILED)
		return -1;
	a = (char *)(((uintptr_t)p + MEM_CHUNK - 1) & ~(uintptr_t)(MEM_CHUNK - 1));
	if (a > p)
		munmap(p, (size_t)(a - p));
	munmap(a + MEM_CHUNK, (size_t)(p + MEM_CHUNK - a));
	madvise(a, MEM_CHUNK, MADV_HUGEPAGE);
	/* one fault for the chunk now rather than one a page later (older kernels: at first
	 * touch) */
	madvise(a, MEM_CHUNK, MADV_POPULATE_WRITE);
	mem.cur = a;
	mem.end = a + MEM_CHUNK;
	return 0;
}

/* Fills the empty cache t of class c: from the shared pool (the records given back last),
 * else carved from the chunk. */
static void refill(struct mem_cache *t, int c)
{
	size_t k;

	pthread_mutex_lock(&mem.lock);
	k = mem.shared[c].n < MEM_CACHE_BATCH ? mem.shared[c].n : MEM_CACHE_BATCH;
	mem.shared[c].n -= k;
	memcpy(t->obj[c], mem.shared[c].obj + mem.shared[c].n, k * sizeof(void *));
	t->n[c] = (unsigned)k;
	while (t->n[c] < MEM_CACHE_BATCH && mem.shared[c].spill) {
		t->obj[c][t->n[c]++] = mem.shared[c].spill;
		mem.shared[c].spill = mem.shared[c].spill->next;
	}
	if (!t->n[c]) {
		/* a batch from one chunk (the old one's tail, less than a batch, stays unused),
		 * carved in address order: the cache hands out the lowest first */
		if ((size_t)(mem.end - mem.cur) < MEM_CACHE_BATCH * class_size[c])
			grow();
		k = (size_t)(mem.end - mem.cur) / class_size[c];
		if (k > MEM_CACHE_BATCH)
			k = MEM_CACHE_BATCH;
		for (size_t i = 0; i < k; i++)
			t->obj[c][k - 1 - i] = mem.cur + i * class_size[c];
		mem.cur += k * class_size[c];
		t->n[c] = (unsigned)k;
	}
	pthread_mutex_unlock(&mem.lock);
}

void *cma_mem_alloc_class(int c, size_t size)
{
	struct mem_cache *t;

	if (c < 0 || mem_mode() == MEM_LIBC)
		return malloc(size);
	t = cache();
	if (t && !t->n[c])
		refill(t, c);
	if (!t || !t->n[c]) {
		errno = ENOMEM;
		return NULL;
	}
	return t->obj[c][--t->n[c]];
}

void *cma_mem_zalloc_class(int c, size_t size)
{
	void *p;

	if (c < 0 || mem_mode() == MEM_LIBC)
		return calloc(1, size);
	p = cma_mem_alloc_class(c, size);
	if (p)
		memset(p, 0, size);
	return p;
}

void cma_mem_free_class(int c, void *p)
{
	struct mem_cache *t;

	if (!p)
		return;
	if (c < 0 || mem_mode() == MEM_LIBC) {
		free(p);
		return;
	}
	t = cache();
	if (!t) {
		pthread_mutex_lock(&mem.lock);
		share(c, &p, 1);
		pthread_mutex_unlock(&mem.lock);
		return;
	}
	if (t->n[c] == MEM_CACHE_MAX) {
		/* the oldest go to the shared pool, the most recent stay */
		pthread_mutex_lock(&mem.lock);
		share(c, t->obj[c], MEM_CACHE_BATCH);
		pthread_mutex_unlock(&mem.lock);
		memmove(t->obj[c], t->obj[c] + MEM_CACHE_BATCH,
			(MEM_CACHE_MAX - MEM_CACHE_BATCH) * sizeof(void *));
		t->n[c] -= MEM_CACHE_BATCH;
	}
	t->obj[c][t->n[c]++] = p;
}
