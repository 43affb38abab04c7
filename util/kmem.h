/* kmem: the emulated kernel's object memory (kmalloc/kfree).
 *
 * The kernel keeps its rdma_cm, ib_cm and MAD objects in slab caches carved from memory it
 * maps with large pages (the direct map), so making an id costs no page fault. The emulator
 * keeps the same objects in user memory; from malloc, every first touch of a 4 KiB page is a
 * fault, and a fault costs 1.4-11 us on the VMs this project runs on -- as much as the rest of
 * a whole connection (docs/cma.md "Connection setup cost"). So per-connection
 * objects come from here instead: size classes like kmalloc's in 64 KiB slabs of one class
 * each, with no header (a table by slab gives the class, so an object of 64 bytes or more
 * starts a cache line and spans no more lines than its size), freed objects kept for the next
 * allocation (never given back, as a slab cache keeps its slabs): the last ones a thread
 * freed in its cache, the rest as a bit each in a table by slab, handed out lowest address
 * first (neither alloc nor free touches the object), and the slabs cut from 2 MiB chunks of
 * one reserved region that ask for transparent huge pages (one fault per chunk; where THP is
 * off, past the first chunk where the host takes free memory back (util/pagereport.h), or
 * after a huge page the host had to back first, each slab is populated with one madvise
 * instead of 16 faults). The verbs QPs, CQs and CQ
 * rings come from here too (the kernel's QP and queue objects are slab memory as well):
 * from malloc, making and destroying one a connection grew and trimmed the thread's arena
 * with an mprotect every ~128 KiB (docs/daemon.md).
 *
 * Under AddressSanitizer, under valgrind, and with RDMAEMU_KMEM=0 every call is plain
 * calloc/malloc/free, so those tools see each object on its own (RDMAEMU_KMEM=1 keeps the pool
 * under valgrind, for callgrind). The choice is made once per
 * process, before the first allocation; a process that cannot reserve the region's address
 * space (RLIMIT_AS) runs the libc mode too. Objects above EMU_KMEM_MAX bytes come from malloc
 * behind a 16-byte header, so any size may be asked for; an object is always given back with
 * emu_kmem_free, never free(). All calls are thread-safe. */
#ifndef EMU_KMEM_H
#define EMU_KMEM_H

#include <stddef.h>
#include <stdint.h>

#define EMU_KMEM_MAX 4096

/* Zeroed memory of size bytes (calloc), NULL with errno ENOMEM. */
void *emu_kmem_zalloc(size_t size);
/* Uninitialised memory of size bytes (malloc), NULL with errno ENOMEM. */
void *emu_kmem_alloc(size_t size);
/* Gives back what emu_kmem_zalloc/alloc returned; NULL is ignored. In pool mode a pointer
 * that is not where a kmem object starts aborts with a message, and so does a double free
 * while the object is still the last one the thread freed in its class (as SLUB's hardened
 * free list checks) or once the second free leaves the thread's cache for the shared pool;
 * the libc mode under ASan or valgrind catches every double free at once. */
void emu_kmem_free(void *p);

/* Big zeroed tables (hash buckets, handle tables) that grow with the number of objects, from
 * EMU_KMEM_TABLE_MIN bytes up: below 2 MiB, runs of whole 64 KiB slabs of the pool's region
 * (on its huge pages; a freed run is kept for the next table of its length); from 2 MiB,
 * transparent huge pages of their own (one fault of ~0.1 ms for 2 MiB here, where 512 faults
 * of 4 KiB pages cost ~6 ms). Populated at once where THP is off. Smaller ones and the libc
 * mode: calloc. NULL with errno ENOMEM. Given back with emu_kmem_table_free and the same size
 * (a second free of a run aborts). */
#define EMU_KMEM_TABLE_MIN (64 * 1024)
void *emu_kmem_table_zalloc(size_t size);
void emu_kmem_table_free(void *p, size_t size);

enum emu_kmem_mode {
	EMU_KMEM_POOL = 1, /* size classes in 2 MiB chunks */
	EMU_KMEM_LIBC = 2, /* calloc/malloc/free (sanitizers, valgrind, RDMAEMU_KMEM=0) */
};

struct emu_kmem_stats {
	enum emu_kmem_mode mode;
	size_t chunks;    /* 2 MiB chunks made read-write in the reserved region */
	size_t carved;    /* objects ever cut from the chunks (pool mode) */
	size_t cached;    /* free objects in the shared pool and the calling thread's cache */
	int huge;         /* 1: the next chunk asks for THP; 0: it is populated 64 KiB at a
			     time (no THP; after a huge page the host had to back first; or
			     past the first chunk where the host takes free memory back) */
	/* memory faulted in when made (chunks or slabs, and tables of 64 KiB and up), and the
	 * time that took: what fresh memory costs the process, apart from the emulator's own
	 * work (here ~0.1 ms for a 2 MiB huge page the host backs, ~4.6 ms for one it must back
	 * first, ~0.6 ms for 2 MiB of 4 KiB pages) */
	uint64_t fresh_bytes, fresh_ns;
};

void emu_kmem_get_stats(struct emu_kmem_stats *s);

#endif
