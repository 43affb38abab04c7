/* failnth: failure injection into the libraries' own calls that can fail for lack of a
 * resource (memory, mappings, eventfds, sockets, threads), for the failure sweeps
 * (docs/failure-sweep.md).
 *
 * Every such call site asks emu_fail_nth(kind) first and, when it answers 1, fails as the
 * real call would (NULL or -1 with errno ENOMEM, EMFILE, EAGAIN, ...). Calls are counted per
 * kind from the process's start. RDMAEMU_FAIL_NTH=kind:N makes the N-th call of that kind
 * fail (once); RDMAEMU_FAIL_COUNT=1 prints, at exit, one line on stderr
 * "rdmaemu-fail: alloc=A mmap=M eventfd=E socket=S thread=T" with every count, which is how a
 * sweep learns how many injections a case allows. Unset, the cost is one atomic increment. */
#ifndef EMU_FAILNTH_H
#define EMU_FAILNTH_H

enum emu_fail_kind {
	EMU_FAIL_ALLOC,   /* malloc, calloc, strdup, kmem */
	EMU_FAIL_MMAP,    /* mmap */
	EMU_FAIL_EVENTFD, /* eventfd */
	EMU_FAIL_SOCKET,  /* socket, socketpair */
	EMU_FAIL_THREAD,  /* pthread_create */
	EMU_FAIL_KINDS,
};

/* 1: this call must fail (it is the N-th of its kind RDMAEMU_FAIL_NTH names); 0: go on. */
int emu_fail_nth(enum emu_fail_kind kind);
/* In-process sweeps: the n-th call of kind from now fails (once), replacing what
 * RDMAEMU_FAIL_NTH or an earlier arm said; n == 0 disarms. */
void emu_fail_arm(enum emu_fail_kind kind, unsigned long n);
/* Calls of kind counted so far in this process. */
unsigned long emu_fail_count(enum emu_fail_kind kind);
/* Whether the call failnth was told to fail has failed (in this process, since the last arm). */
int emu_fail_fired(void);
/* A call site whose failure loses something the real stack loses alike in that case (an
 * rdma_cm event the kernel's ucma_event_handler cannot allocate, a CM MAD that cannot be
 * sent) names it here; after an injected failure a sweep then accepts that a wait for it
 * ends only by the waiter's own timeout. Recorded only once a failure was injected. */
void emu_fail_lost(const char *what);
/* What emu_fail_lost named since the last arm, or NULL. */
const char *emu_fail_lost_what(void);
/* The kind's name in RDMAEMU_FAIL_NTH ("alloc", "mmap", ...). */
const char *emu_fail_kind_name(enum emu_fail_kind kind);

#endif
