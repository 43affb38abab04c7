/* The per-process engine: creation, the engine lock, thread tracking, running what is due,
 * waiting with virtual time, and the progress thread (the rules are in emu/sim/engine.h and
 * docs/engine.md).
 *
 * State of a known thread (struct emu_engine_thread, one per thread, in thread-local storage
 * so registering never allocates):
 *
 *   (unknown) --emu_engine_lock--> RUNNING --emu_engine_wait--> WAITING --return--> RUNNING
 *                                  RUNNING --note_idle--> IDLE --emu_engine_lock--> RUNNING
 *   any --thread exit / emu_engine_thread_forget--> (unknown)
 *
 * Generations. e->gen counts changes of engine state that a settled thread has not seen:
 * timers fired (run_now, an advance) and the end of a RUNNING thread's call (unlock). A thread
 * is settled when it is WAITING or IDLE and its seen_gen is the current generation. Rule (1)
 * advances only when every known thread is settled, so after each step every waiter evaluates
 * its condition at the new instant before the clock can move again: a waiter satisfied at T
 * returns with the clock at T, whichever thread made the step. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <linux/futex.h>

#include "emu/sim/engine.h"
#include "emu/sim/engine_ext.h"
#include "emu/sim/engine_tasks.h"
#include "emu/sim/process.h"
#include "emu/sim/rtclock.h"
#include "emu/sim/trace.h"
#include "util/failcall.h"

enum emu_engine_thread_state {
	EMU_THREAD_RUNNING,
	EMU_THREAD_WAITING,
	EMU_THREAD_IDLE,
	EMU_THREAD_BLOCKED, /* in a wait of the program's own (emu_engine_appwait_begin) */
};

struct emu_engine_thread {
	struct emu_engine_thread *next, **pprev; /* e->threads list */
	enum emu_engine_thread_state state;
	uint64_t seen_gen;
	const char *what; /* what it waits for (WAITING), for diagnostics */
	/* BLOCKED (emu_engine_appwait_begin): the wait's deadline, what ends it. Here rather
	 * than on the waiting frame's stack: a thread cancelled or jumping out of a signal
	 * handler in the middle of the wait leaves it behind, and the thread-exit destructor or
	 * its next engine call cleans it up (TLS outlives both). */
	struct emu_timer app_tmo;
	int app_woken;   /* atomic: the real wait returned; set by the thread without the lock */
	bool app_expired;
	bool app_active; /* between begin and end: counted in e->nblocked */
	bool spinning;   /* IDLE in a busy loop on the program's clock (note_clock_spin) */
	int entering;    /* atomic, follower mode: waiting for the engine lock in emu_engine_lock */
	int app_wakefd;  /* written when the deadline comes, -1: none */
	pthread_cond_t *app_cond; /* broadcast when the deadline comes, NULL: none */
	/* the fds a BLOCKED poll waits on (emu_engine_appwait_fds), copied: a ready one means
	 * the thread is waking, whatever /proc still says */
	struct pollfd app_fds[EMU_ENGINE_APPWAIT_FDS];
	unsigned app_nfds;
	/* rule (2)'s starvation check (starved()): the kernel's view of the thread */
	pid_t tid;
	clockid_t cpuclock; /* its CPU-time clock; 0: none */
	uint64_t cpu0;      /* its CPU time when the progress thread's interval began */
};

struct emu_engine {
	pthread_mutex_t lock;
	/* set by emu_engine_lock, cleared by emu_engine_unlock: emu_engine_trylock's look
	 * before it tries the mutex (a failing trylock is a locked instruction on the mutex's
	 * line, which the holder's unlock must then take back) */
	int held;
	pthread_cond_t cond;  /* waiters sleep here; broadcast on every new generation */
	pthread_cond_t pcond; /* the progress thread sleeps here (CLOCK_MONOTONIC) */
	struct emu_clock clock;
	struct emu_topology *topo;
	struct emu_engine_ext *ext; /* attached protocol layers (emu/sim/engine_ext.h) */
	/* where frames posted from outside go: the host ports' demultiplexer */
	emu_engine_input_fn *input;
	void *input_ctx;
	const struct emu_fabric *fabric;
	uint64_t epoch; /* tells this engine's thread registrations from a reset engine's */

	struct emu_engine_thread *threads;
	/* The last thread that took the lock and its record: the common one-thread case finds
	 * itself without a TLS lookup (from a shared library each is a __tls_get_addr call: ~23
	 * lock/unlock pairs a connection, ~760 instructions). Under the lock; cleared when the
	 * record is unlinked (a new thread may get an exited one's pthread_t). */
	pthread_t cached_self;
	struct emu_engine_thread *cached_thread;
	size_t nthreads;
	size_t nblocked;   /* threads BLOCKED in waits of the program's own */
	/* signals to send to the process (emu_engine_raise), each holding time still until the
	 * progress thread has sent it */
	uint64_t raise_mask;
	unsigned holds;
	/* atomic: threads waiting for the lock in emu_engine_lock, known or not: each is about
	 * to act at the current instant (the progress thread may hold the lock while it looks) */
	unsigned entering;
	uint64_t raise_seq;  /* sends so far */
	uint64_t raised;     /* the signals of the last send */
	size_t nsleepers;  /* waiters inside pthread_cond_wait or sleep_interruptible */
	uint32_t wake_seq; /* bumped with every broadcast: interruptible sleepers wait on it */
	uint64_t gen;
	uint64_t activity; /* calls that ended RUNNING: the quiescence path watches it */
	uint64_t quiet_since_ns; /* real time of the last activity or quiescence step */

	/* progress thread */
	uint64_t quiesce_ns;
	pthread_t progress;
	pid_t progress_tid; /* 0 until it runs */
	bool progress_started, progress_failed, progress_sleeping, stop;
	uint64_t progress_retry_at; /* CLOCK_MONOTONIC ns: after a failed start, the next try */
	struct emu_tasks tasks; /* the threads not met yet, as last seen */
	/* the program's child processes (follower mode: engine_children.c) */
	struct emu_tasks children;

	uint64_t loop_reported_at; /* virtual instant of the last runaway diagnostic, +1 */

	/* real-time mode (emu_engine_set_realtime): virtual now = CLOCK_MONOTONIC - rt_base */
	bool realtime;
	/* follower mode (emu_engine_set_follower): time moves only by emu_engine_follow_advance;
	 * the progress thread tells fl_idle when the process is idle after a query */
	bool follower;
	bool remote; /* realtime || follower: frames come from outside through the inbox */
	bool fl_pending; /* a query waits for the process to be idle */
	uint64_t fl_token;
	/* the last answer: its query and the deadline it gave. After "no deadline at all" the
	 * authority may call the fabric stuck and ask no more; a thread that then starts to wait
	 * (a poll() with a timeout, once back from a system()) arms fl_reanswer, and once the
	 * process is idle again the progress thread answers that query anew with its deadline */
	uint64_t fl_last_token, fl_last_next;
	bool fl_reanswer;
	emu_engine_idle_fn *fl_idle;
	void *fl_idle_ctx;
	uint64_t spin_quantum_ns; /* the last clock spinner's quantum (follower mode) */
	uint64_t rt_base;
	struct emu_rtclock rtclock; /* the real clock's last reading (lock held) */
	uint64_t progress_wake_at; /* virtual deadline the progress thread sleeps until, or MAX */
	emu_engine_tx_fn *tx;     /* port sends go here instead of the wire (a daemon link) */
	void *tx_ctx;
	/* frames posted from outside the lock (emu_engine_post_frame), delivered under it */
	pthread_mutex_t inbox_lock;
	struct inbox_frame *inbox, **inbox_tail;
	int inbox_full; /* atomic: the inbox is not empty */

};

/* inbox entries that are no frame (ep < 0): the daemon's query and advance, in order with the
 * frames that came before them (follower mode) */
#define INBOX_QUERY (-1)
#define INBOX_ADVANCE (-2)

struct inbox_frame {
	struct inbox_frame *next;
	int ep;
	uint64_t val; /* INBOX_QUERY: the token; INBOX_ADVANCE: the instant */
	size_t len;
	void *buf;
};

static pthread_mutex_t create_lock = PTHREAD_MUTEX_INITIALIZER;
static struct emu_engine *the_engine; /* read with __atomic loads: the fast path of get */
static uint64_t last_epoch;           /* under create_lock */
static struct emu_engine_hook *hooks; /* under create_lock, lowest order first */
/* atomic: set by the attach, which may run inside engine_create (emu_process_fabric) */
static bool wire_remote;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static pthread_key_t thread_key;

static __thread struct emu_engine_thread tls_thread;
static __thread uint64_t tls_epoch; /* epoch of the engine tls_thread is linked into, 0: none */

/* ---------- threads ---------- */

/* Wakes every waiter: those on the condition variable and the interruptible sleepers on
 * wake_seq. Lock held. */
static void wake_all(struct emu_engine *e)
{
	if (!e->nsleepers)
		return;
	pthread_cond_broadcast(&e->cond);
	__atomic_add_fetch(&e->wake_seq, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &e->wake_seq, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL, NULL, 0);
}

/* A thread of a follower starts to wait (or reports an empty poll): after an answer of
 * "no deadline", the progress thread looks whether the process now has one (fl_reanswer).
 * Lock held. */
static inline void reanswer_arm(struct emu_engine *e)
{
	if (e->follower && !e->fl_pending && e->fl_last_next == EMU_ENGINE_FOREVER &&
	    !e->fl_reanswer) {
		e->fl_reanswer = true;
		pthread_cond_signal(&e->pcond);
	}
}

/* The lock let go for a while by a holder that keeps it afterwards (a wait): held says so
 * meanwhile (emu_engine_trylock); what it said comes back with the lock. */
static int held_leave(struct emu_engine *e)
{
	int h = __atomic_load_n(&e->held, __ATOMIC_RELAXED);

	__atomic_store_n(&e->held, 0, __ATOMIC_RELAXED);
	return h;
}

static void held_back(struct emu_engine *e, int h)
{
	__atomic_store_n(&e->held, h, __ATOMIC_RELAXED);
}

/* An untimed sleep until the next wake_all that a signal interrupts as the kernel's own
 * interruptible waits: FUTEX_WAIT without a timeout ends with -ERESTARTSYS on a signal, which
 * the kernel turns into EINTR for a handler without SA_RESTART and restarts otherwise.
 * Lock held, released while asleep. 0 or EINTR. */
static int sleep_interruptible(struct emu_engine *e)
{
	uint32_t seq = __atomic_load_n(&e->wake_seq, __ATOMIC_ACQUIRE);
	long r;
	int err, h = held_leave(e);

	pthread_mutex_unlock(&e->lock);
	r = syscall(SYS_futex, &e->wake_seq, FUTEX_WAIT_PRIVATE, seq, NULL, NULL, 0);
	err = r < 0 ? errno : 0;
	pthread_mutex_lock(&e->lock);
	held_back(e, h);
	return err == EINTR ? EINTR : 0;
}

static void appwait_clear(struct emu_engine *e, struct emu_engine_thread *t);

static void thread_unlink(struct emu_engine *e, struct emu_engine_thread *t)
{
	appwait_clear(e, t);
	*t->pprev = t->next;
	if (t->next)
		t->next->pprev = t->pprev;
	t->next = NULL;
	t->pprev = NULL;
	e->nthreads--;
	if (e->cached_thread == t)
		e->cached_thread = NULL;
	tls_epoch = 0;
	/* Waiters may have been waiting for this thread only: let them look again. */
	wake_all(e);
}

/* Key destructor: the thread is exiting. TLS is still valid while destructors run. */
static void thread_exit_cb(void *unused)
{
	struct emu_engine *e = __atomic_load_n(&the_engine, __ATOMIC_ACQUIRE);

	(void)unused;
	if (!e || tls_epoch != e->epoch)
		return;
	pthread_mutex_lock(&e->lock);
	thread_unlink(e, &tls_thread);
	pthread_mutex_unlock(&e->lock);
}

static void make_key(void)
{
	if (pthread_key_create(&thread_key, thread_exit_cb))
		fprintf(stderr, "rdmaemu: engine: pthread_key_create failed: exited threads will "
				"stay known\n");
}

/* The calling thread's record, registering it (RUNNING) if needed. Lock held. */
static struct emu_engine_thread *thread_self(struct emu_engine *e)
{
	pthread_t me = pthread_self();
	struct emu_engine_thread *t;

	if (e->cached_thread && pthread_equal(e->cached_self, me))
		return e->cached_thread;
	t = &tls_thread;
	if (tls_epoch != e->epoch) {
		memset(t, 0, sizeof(*t));
		t->state = EMU_THREAD_RUNNING;
		t->app_wakefd = -1;
		t->tid = (pid_t)syscall(SYS_gettid);
		if (pthread_getcpuclockid(me, &t->cpuclock))
			t->cpuclock = 0;
		t->next = e->threads;
		if (t->next)
			t->next->pprev = &t->next;
		t->pprev = &e->threads;
		e->threads = t;
		e->nthreads++;
		tls_epoch = e->epoch;
		/* A non-NULL value is what makes the destructor run at thread exit. */
		pthread_setspecific(thread_key, (void *)1);
	}
	e->cached_self = me;
	e->cached_thread = t;
	return t;
}

/* The calling thread's record if it has one, without registering. Lock held. */
static struct emu_engine_thread *thread_known(struct emu_engine *e)
{
	if (e->cached_thread && pthread_equal(e->cached_self, pthread_self()))
		return e->cached_thread;
	return tls_epoch == e->epoch ? &tls_thread : NULL;
}

static bool settled(const struct emu_engine *e, const struct emu_engine_thread *t)
{
	return t->state != EMU_THREAD_RUNNING && t->seen_gen == e->gen;
}

static char thread_kstate(pid_t tid);

/* A thread BLOCKED in a wait of the program's own (its poll, sleep, condition wait) is settled
 * while the kernel has it asleep: whatever ends such a wait (an fd becoming ready, a signal,
 * its deadline firing here) makes the thread runnable at once, and the thread marks its wait
 * woken before it comes back for the lock. A thread on its way into the wait, or just out of
 * it, is runnable: not settled. */
static bool blocked_asleep(const struct emu_engine_thread *t)
{
	struct pollfd fds[EMU_ENGINE_APPWAIT_FDS];
	char st;

	if (__atomic_load_n(&t->app_woken, __ATOMIC_ACQUIRE))
		return false;
	/* An fd of its poll is ready (an event the engine queued, a peer's write): the kernel
	 * has made the thread runnable, but a loaded machine may not have run it yet, and /proc
	 * shows it asleep until then. The copy: poll writes revents. */
	if (t->app_nfds) {
		memcpy(fds, t->app_fds, t->app_nfds * sizeof(fds[0]));
		if (poll(fds, t->app_nfds, 0) != 0)
			return false;
	}
	st = thread_kstate(t->tid);
	return st == 'S' || st == 'T' || st == 't';
}

/* Rule (1): every known thread is waiting or idle, and has seen the current state; a BLOCKED
 * thread is asleep in the kernel (read last: /proc). */
static bool all_settled(const struct emu_engine *e)
{
	if (e->holds || __atomic_load_n(&e->entering, __ATOMIC_SEQ_CST))
		return false;
	for (const struct emu_engine_thread *t = e->threads; t; t = t->next)
		if (t->state != EMU_THREAD_BLOCKED && !settled(e, t))
			return false;
	if (e->nblocked)
		for (const struct emu_engine_thread *t = e->threads; t; t = t->next)
			if (t->state == EMU_THREAD_BLOCKED && !blocked_asleep(t))
				return false;
	return true;
}

static uint64_t mono_ns(void);

/* Rule (1) and the deadlock verdict also need every thread of the process accounted for: a
 * thread the engine has not met yet (just started, about to call) may act. Lock held. */
static bool unmet_busy(struct emu_engine *e)
{
	pid_t small[64], *known = small;
	size_t n = 0, cap = sizeof(small) / sizeof(small[0]);
	bool busy;

	if (e->nthreads + 1 > cap) {
		cap = e->nthreads + 1;
		known = emu_malloc(cap * sizeof(*known));
		if (!known)
			return false;
	}
	for (const struct emu_engine_thread *t = e->threads; t && n < cap; t = t->next)
		known[n++] = t->tid;
	if (e->progress_tid && n < cap)
		known[n++] = e->progress_tid;
	busy = emu_tasks_unmet_busy(&e->tasks, known, n, mono_ns()) > 0;
	if (known != small)
		free(known);
	return busy;
}

static uint64_t thread_cpu_ns(const struct emu_engine_thread *t)
{
	struct timespec ts;

	if (!t->cpuclock || clock_gettime(t->cpuclock, &ts))
		return UINT64_MAX; /* unknown (the thread is going away): never "starved" */
	return (uint64_t)ts.tv_sec * EMU_NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

/* The kernel's state letter of thread tid ('R' runnable, 'S' sleeping, 'D' disk wait...),
 * or 0 when it cannot be read. */
static char thread_kstate(pid_t tid)
{
	char path[64], buf[512], *p;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	if (!(f = fopen(path, "re")))
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	p = strrchr(buf, ')'); /* the command name may hold spaces and parentheses */
	return p && p[1] == ' ' ? p[2] : 0;
}

/* Rule (2) is about a process that has gone quiet: its threads blocked (in poll() on our fds,
 * say) or spinning on memory with the CPU they get. A thread that is merely descheduled on
 * a loaded machine, runnable but given (almost) no CPU during the interval, is not quiet: it
 * is in the middle of work it would have done at once, and moving the clock under it makes
 * the run depend on the machine's load (a CM timer firing before the thread's next call).
 * So the step waits while a RUNNING thread is runnable ('R', or in disk wait 'D') and got
 * less than a tenth of the interval's CPU time. Such a thread runs again soon (the scheduler
 * is fair), and then either calls in, which restarts the interval, or is seen quiet. The
 * interval's start samples the CPU clocks (interval_begin). Lock held. */
static void interval_begin(struct emu_engine *e)
{
	for (struct emu_engine_thread *t = e->threads; t; t = t->next)
		if (t->state == EMU_THREAD_RUNNING)
			t->cpu0 = thread_cpu_ns(t);
}

static bool starved(const struct emu_engine *e, uint64_t interval_ns)
{
	for (const struct emu_engine_thread *t = e->threads; t; t = t->next) {
		uint64_t now;
		char st;

		if (t->state != EMU_THREAD_RUNNING || t->cpu0 == UINT64_MAX)
			continue;
		now = thread_cpu_ns(t);
		if (now == UINT64_MAX || now - t->cpu0 >= interval_ns / 10)
			continue; /* it ran: a spinner, or it was busy and still is */
		st = thread_kstate(t->tid);
		if (st == 'R' || st == 'D')
			return true;
	}
	return false;
}

/* For rule (2): no waiter still has to re-evaluate its condition at the current state. */
static bool waiters_settled(const struct emu_engine *e)
{
	for (const struct emu_engine_thread *t = e->threads; t; t = t->next)
		if (t->state == EMU_THREAD_WAITING && t->seen_gen != e->gen)
			return false;
	return true;
}

static void new_generation(struct emu_engine *e)
{
	e->gen++;
	wake_all(e);
}

/* ---------- running timers ---------- */

static void fmt_time(char *buf, size_t len, uint64_t ns)
{
	snprintf(buf, len, "%" PRIu64 ".%09" PRIu64 " s", (uint64_t)(ns / EMU_NSEC_PER_SEC),
		 (uint64_t)(ns % EMU_NSEC_PER_SEC));
}

static void report_loop(struct emu_engine *e)
{
	char t[40];

	if (e->loop_reported_at == e->clock.now + 1)
		return;
	e->loop_reported_at = e->clock.now + 1;
	fmt_time(t, sizeof(t), e->clock.now);
	fprintf(stderr, "rdmaemu: engine: more than %u events at virtual time %s: timers re-arm "
			"themselves without delay (runaway loop); stopping this instant\n",
		EMU_ENGINE_STEP_LIMIT, t);
}

/* Runs everything due at or before `t`, one instant at a time so that the step limit is per
 * instant (a long advance may legitimately run millions of timers). 0 or -ELOOP. */
static int run_through(struct emu_engine *e, uint64_t t, uint64_t *fired_total)
{
	uint64_t next, fired;
	int rc;

	while (emu_clock_next_deadline(&e->clock, &next) && next <= t) {
		if (next < e->clock.now)
			next = e->clock.now;
		rc = emu_clock_run_until(&e->clock, next, EMU_ENGINE_STEP_LIMIT, &fired);
		*fired_total += fired;
		if (rc < 0) {
			report_loop(e);
			return -ELOOP;
		}
	}
	/* Nothing due until after t: move the clock to t (never backwards). */
	rc = emu_clock_run_until(&e->clock, t, EMU_ENGINE_STEP_LIMIT, &fired) < 0 ? -ELOOP : 0;
	emu_topology_idle(e->topo); /* a pause: captures catch up */
	return rc;
}

long emu_engine_run_now(struct emu_engine *e)
{
	uint64_t fired = 0, next;
	int rc;

	/* nothing due (most unlocks): run_through would only look and move the clock nowhere */
	if (!emu_clock_next_deadline(&e->clock, &next) || next > e->clock.now)
		return 0;
	rc = run_through(e, e->clock.now, &fired);

	if (fired)
		new_generation(e);
	return rc < 0 ? rc : (long)fired;
}

/* Moves the clock to the next timer deadline and runs what is due there. false when no timer
 * is pending; *err = ELOOP on a runaway instant. */
static bool advance_next(struct emu_engine *e, int *err)
{
	uint64_t next, fired = 0;

	if (!emu_clock_next_deadline(&e->clock, &next))
		return false;
	if (run_through(e, next, &fired) < 0)
		*err = ELOOP;
	new_generation(e);
	return true;
}

int emu_engine_advance(struct emu_engine *e, uint64_t delta_ns)
{
	uint64_t fired = 0;
	uint64_t t = e->clock.now + delta_ns < e->clock.now ? UINT64_MAX : e->clock.now + delta_ns;
	int rc = run_through(e, t, &fired);

	new_generation(e);
	return rc;
}

/* ---------- the progress thread (rule 2) ---------- */

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * EMU_NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

/* ---------- real time ---------- */

static void follow_query(struct emu_engine *e, uint64_t token);

/* Delivers the frames posted from outside to their ports' receivers. Lock held. */
static void rt_drain(struct emu_engine *e)
{
	struct inbox_frame *f, *next;

	if (!__atomic_load_n(&e->inbox_full, __ATOMIC_SEQ_CST))
		return;
	pthread_mutex_lock(&e->inbox_lock);
	f = e->inbox;
	e->inbox = NULL;
	e->inbox_tail = &e->inbox;
	__atomic_store_n(&e->inbox_full, 0, __ATOMIC_SEQ_CST);
	pthread_mutex_unlock(&e->inbox_lock);
	if (!f)
		return;
	for (; f; f = next) {
		next = f->next;
		if (f->ep >= 0)
			emu_engine_deliver(e, f->ep, f->buf, f->len, e->clock.now);
		else if (f->ep == INBOX_ADVANCE)
			emu_engine_follow_advance(e, f->val);
		else
			follow_query(e, f->val);
		free(f->buf);
		free(f);
	}
	new_generation(e);
}

/* Real-time mode: moves the clock to the real now (firing what fell due meanwhile, never
 * backwards) and delivers the posted frames. Lock held. */
static void __attribute__((noinline)) rt_catch_up_slow(struct emu_engine *e)
{
	uint64_t t, fired = 0;

	/* frames that came in while another thread held the lock first: an acknowledgement
	 * waiting there cancels the retry timer the catch-up would otherwise fire */
	rt_drain(e);
	if (e->follower)
		return; /* the daemon moves the clock (emu_engine_follow_advance) */
	/* the last reading is under 2 us old and no timer falls due within that (emu/sim/rtclock.h) */
	if (emu_rtclock_fresh(&e->rtclock) &&
	    (!emu_clock_next_deadline(&e->clock, &t) || t > e->clock.now + EMU_RTCLOCK_FRESH_NS))
		return;
	t = emu_rtclock_read(&e->rtclock) - e->rt_base;
	if (t > e->clock.now) {
		run_through(e, t, &fired);
		if (fired)
			new_generation(e);
	}
	rt_drain(e);
}

/* A no-op in virtual mode: the test stays at the caller (every engine lock and unlock runs it;
 * as a call it cost ~14 instructions there, ~650 a connection of bench/cm_bench). */
static inline void rt_catch_up(struct emu_engine *e)
{
	if (e->remote)
		rt_catch_up_slow(e);
}

/* Real time, at an unlock: the frames posted meanwhile, and the timers that fell due during
 * the critical section when one may have: the clock is read again only when the next deadline
 * is within UNLOCK_NEAR_NS of the lock's reading. The loopback frames' deliveries are due
 * within nanoseconds and must fire here (without: the frame path's 64 KiB ib_write_bw fell from
 * 4.1-8.8 to 2.1-2.7 GB/s, each frame waiting for the next lock or the progress thread); a
 * retransmission timer milliseconds ahead fires by the progress thread, which sleeps until
 * the earliest deadline, if a section ever lasted that long. The read cost ~21 ns (the vDSO)
 * at every call, three times a round trip of ib_send_lat on each side. */
#define UNLOCK_NEAR_NS 50000u
static inline void rt_catch_up_unlock(struct emu_engine *e)
{
	uint64_t next;

	if (!e->remote)
		return;
	if (!e->follower && emu_clock_next_deadline(&e->clock, &next) &&
	    next <= e->clock.now + UNLOCK_NEAR_NS)
		rt_catch_up_slow(e);
	else
		rt_drain(e);
}

static struct timespec mono_ts(uint64_t ns)
{
	struct timespec ts;

	ts.tv_sec = (time_t)(ns / EMU_NSEC_PER_SEC);
	ts.tv_nsec = (long)(ns % EMU_NSEC_PER_SEC);
	return ts;
}

/* Real-time progress: sleep until the next timer is due (or a call arms an earlier one),
 * fire what is due. Lock held. */
static void progress_realtime(struct emu_engine *e)
{
	uint64_t next;
	struct timespec ts;

	rt_catch_up(e);
	emu_engine_run_now(e);
	e->progress_sleeping = true;
	if (!emu_clock_next_deadline(&e->clock, &next)) {
		e->progress_wake_at = UINT64_MAX;
		pthread_cond_wait(&e->pcond, &e->lock);
	} else {
		e->progress_wake_at = next;
		ts = mono_ts(e->rt_base + next);
		pthread_cond_timedwait(&e->pcond, &e->lock, &ts);
	}
	e->progress_sleeping = false;
	e->progress_wake_at = UINT64_MAX;
}

/* A BLOCKED thread that has been woken, or is on its way into its wait, is about to act:
 * rule (2) waits for it as for a starved thread. Lock held. */
static bool blocked_waking(const struct emu_engine *e)
{
	if (!e->nblocked)
		return false;
	for (const struct emu_engine_thread *t = e->threads; t; t = t->next) {
		/* its deadline came and it has not run there yet: whatever the kernel says of
		 * it (under valgrind a runnable thread waits for the tool's lock, asleep) */
		if (t->app_active && t->app_expired)
			return true;
		if (t->state == EMU_THREAD_BLOCKED && !blocked_asleep(t))
			return true;
	}
	return false;
}

/* Rule (1) for threads that cannot apply it themselves: with a thread BLOCKED in a wait of
 * the program's own, there may be no waiter or poller left to notice that every thread is
 * settled (a single-threaded program in its own poll()), and the moment it happens (the
 * thread falls asleep in the kernel) calls nobody; so the progress thread looks this often. */
#define BLOCKED_RECHECK_NS (100ull * 1000)

static bool rule1_ready(struct emu_engine *e)
{
	return emu_clock_pending(&e->clock) && all_settled(e) && !unmet_busy(e);
}

/* The signals emu_engine_raise queued, sent from this thread (all signals blocked) without
 * the lock: the kernel gives a process-directed signal to a thread that does not block it, as
 * it does the kernel's own SIGALRM, and never to a thread inside the engine. Lock held. */
static void send_raised(struct emu_engine *e)
{
	uint64_t m = e->raise_mask;
	unsigned n = 0;
	int h;

	e->raise_mask = 0;
	e->raised = m;
	e->raise_seq++;
	h = held_leave(e);
	pthread_mutex_unlock(&e->lock);
	for (int sig = 1; sig < 64; sig++)
		if (m & (1ull << sig)) {
			kill(getpid(), sig);
			n++;
		}
	pthread_mutex_lock(&e->lock);
	held_back(e, h);
	e->holds -= n;
	new_generation(e);
}

/* ---------- follower mode ---------- */

static bool any_spinning(const struct emu_engine *e);

/* A thread that reported an empty poll and has not looked since the state changed (a poll
 * that found completions reports nothing: it takes no lock) is at work on what it found
 * while it runs: rule (2) in follower mode waits for it, since time would otherwise move on
 * under a program that is only slow to come back (the quiescence path in one process lets
 * the thread's own next call see the instant; across processes the others move on). One
 * asleep in the kernel (a read() the engine cannot see) does not hold time. */
static bool pollers_running(const struct emu_engine *e)
{
	for (const struct emu_engine_thread *t = e->threads; t; t = t->next) {
		char st;

		if (t->state != EMU_THREAD_IDLE || t->seen_gen == e->gen)
			continue;
		st = thread_kstate(t->tid);
		if (st != 'S' && st != 'T' && st != 't')
			return true;
	}
	return false;
}

/* Rule (2) across processes: a thread that is not waiting in the library must be asleep in
 * the kernel (blocked in a read() the engine cannot see), not merely quiet: one at work
 * outside the library (between two calls, or descheduled) would see the other processes
 * move on under it, and the run would depend on the machine's load. */
static bool running_asleep(const struct emu_engine *e)
{
	for (const struct emu_engine_thread *t = e->threads; t; t = t->next) {
		char st;

		if (t->state != EMU_THREAD_RUNNING)
			continue;
		if (__atomic_load_n(&t->entering, __ATOMIC_SEQ_CST))
			return false;
		st = thread_kstate(t->tid);
		if (st != 'S' && st != 'T' && st != 't')
			return false;
	}
	return true;
}

/* A thread spinning on the program's clock in follower mode waits for time itself: the
 * process's next deadline is at most this far (its own quantum once it has said it). */
#define FOLLOW_SPIN_DEFAULT_NS (1000ull * 1000)

/* The process has nothing to do until time moves: rule (1)'s condition (every thread settled,
 * BLOCKED ones asleep, none not met yet busy), or rule (2)'s (quiet for the interval, every
 * waiter has looked, nobody starved or waking), with nothing in the inbox. Lock held. */
static bool follower_idle(struct emu_engine *e)
{
	if (e->holds || emu_engine_inbox_pending(e))
		return false;
	if (!(all_settled(e) && !unmet_busy(e)) &&
	    !(e->quiesce_ns && mono_ns() - e->quiet_since_ns >= e->quiesce_ns &&
	      waiters_settled(e) && !blocked_waking(e) && !pollers_running(e) &&
	      running_asleep(e) && !unmet_busy(e)))
		return false;
	/* a command the program started (system(), a pipe) works at the machine's pace: what
	 * it does belongs at this instant, also while the program merely waits for it */
	return !emu_tasks_children_busy(&e->children, mono_ns());
}

/* RDMAEMU_TRACE=vtime: each answer to the time authority, the rule that made the process idle
 * and what each known thread was doing. Lock held. */
static void follow_trace(struct emu_engine *e, bool rule1, uint64_t next)
{
	static int on = -1;
	char buf[512];
	size_t n = 0;

	if (!emu_trace_enabled(&on, "vtime"))
		return;
	for (const struct emu_engine_thread *t = e->threads; t && n < sizeof(buf) - 64; t = t->next)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, " %d:%d%c%s(%s)", (int)t->tid,
				      (int)t->state, thread_kstate(t->tid) ? thread_kstate(t->tid) : '?',
				      t->seen_gen == e->gen ? "" : "*", t->what ? t->what : "-");
	buf[n] = 0;
	fprintf(stderr, "rdmaemu: vtime: idle at %llu (rule %d), next %llu, threads%s\n",
		(unsigned long long)e->clock.now, rule1 ? 1 : 2, (unsigned long long)next, buf);
}

/* A query of the time authority (from the inbox, in order with the frames before it). */
static void follow_query(struct emu_engine *e, uint64_t token)
{
	e->fl_token = token;
	e->fl_pending = true;
	e->fl_reanswer = false;
	interval_begin(e); /* rule (2)'s starvation check looks from here */
	if (e->progress_started)
		pthread_cond_signal(&e->pcond);
}

/* The process's next deadline for the authority: the earliest timer, or this instant plus
 * the spin quantum while a thread spins on the program's clock. Lock held. */
static uint64_t follower_next(struct emu_engine *e)
{
	uint64_t next;

	if (!emu_clock_next_deadline(&e->clock, &next))
		next = EMU_ENGINE_FOREVER;
	if (any_spinning(e) && e->clock.now + e->spin_quantum_ns < next)
		next = e->clock.now + e->spin_quantum_ns;
	return next;
}

/* The last query answered anew: the process has a deadline now where it had none. Lock
 * held. */
static void reanswer(struct emu_engine *e)
{
	uint64_t next = follower_next(e);

	e->fl_reanswer = false;
	if (next == EMU_ENGINE_FOREVER)
		return;
	e->fl_last_next = next;
	follow_trace(e, all_settled(e), next);
	e->fl_idle(e->fl_idle_ctx, e->fl_last_token, next);
}

/* Follower progress: fire what is due, answer a pending query once the process is idle
 * (looking again every BLOCKED_RECHECK_NS while one waits: a thread falling asleep in the
 * kernel calls nobody), sleep otherwise. Lock held. */
static void progress_follower(struct emu_engine *e)
{
	struct timespec ts;

	rt_drain(e);
	emu_engine_run_now(e);
	if (e->fl_pending && e->fl_idle && follower_idle(e)) {
		uint64_t next = follower_next(e);

		e->fl_pending = false;
		e->fl_last_token = e->fl_token;
		e->fl_last_next = next;
		e->fl_reanswer = false;
		follow_trace(e, all_settled(e), next);
		e->fl_idle(e->fl_idle_ctx, e->fl_token, next);
	} else if (e->fl_reanswer && e->fl_idle && follower_idle(e)) {
		reanswer(e);
	}
	e->progress_sleeping = true;
	if (e->fl_pending || e->fl_reanswer) {
		ts = mono_ts(mono_ns() + BLOCKED_RECHECK_NS);
		pthread_cond_timedwait(&e->pcond, &e->lock, &ts);
	} else {
		pthread_cond_wait(&e->pcond, &e->lock);
	}
	e->progress_sleeping = false;
}

int emu_engine_follow_advance(struct emu_engine *e, uint64_t t)
{
	uint64_t fired = 0;
	int rc = 0;

	if (t > e->clock.now) {
		rc = run_through(e, t, &fired);
		new_generation(e);
	}
	/* what fired may wake the program's threads: rule (2) gives them a new interval */
	e->quiet_since_ns = mono_ns();
	return rc;
}

static void inbox_add(struct emu_engine *e, int ep, void *buf, size_t len, uint64_t val);

void emu_engine_queue_query(struct emu_engine *e, uint64_t token)
{
	inbox_add(e, INBOX_QUERY, NULL, 0, token);
}

void emu_engine_queue_advance(struct emu_engine *e, uint64_t t)
{
	inbox_add(e, INBOX_ADVANCE, NULL, 0, t);
}

static void mutex_enter(struct emu_engine *e);

void emu_engine_follow_sync(struct emu_engine *e)
{
	mutex_enter(e);
	rt_drain(e);
	emu_engine_run_now(e);
	pthread_mutex_unlock(&e->lock);
}

bool emu_engine_next_deadline(struct emu_engine *e, uint64_t *t)
{
	return emu_clock_next_deadline(&e->clock, t);
}

static emu_engine_outside_fn *follow_outside; /* set once, before an engine follows */

void emu_engine_set_follow_outside(emu_engine_outside_fn *fn)
{
	follow_outside = fn;
}

void emu_engine_follow_outside(struct emu_engine *e)
{
	if (e->follower && follow_outside)
		follow_outside();
}

static void *progress_main(void *arg)
{
	struct emu_engine *e = arg;

	pthread_mutex_lock(&e->lock);
	e->progress_tid = (pid_t)syscall(SYS_gettid);
	while (!e->stop) {
		uint64_t a0, q0, deadline;
		struct timespec ts;
		int err = 0;

		if (e->raise_mask) {
			send_raised(e);
			continue;
		}
		if (e->realtime) {
			progress_realtime(e);
			continue;
		}
		if (e->follower) {
			progress_follower(e);
			continue;
		}
		if (e->nblocked && rule1_ready(e)) {
			advance_next(e, &err);
			continue;
		}
		if ((!e->quiesce_ns && !e->nblocked) || !emu_clock_pending(&e->clock)) {
			/* Nothing to advance to: sleep until an unlock leaves a timer pending. */
			e->progress_sleeping = true;
			pthread_cond_wait(&e->pcond, &e->lock);
			e->progress_sleeping = false;
			continue;
		}
		a0 = e->activity;
		q0 = e->quiesce_ns;
		interval_begin(e);
		deadline = mono_ns() + (q0 ? q0 : BLOCKED_RECHECK_NS);
		while (!e->stop && e->activity == a0 && e->quiesce_ns == q0 && mono_ns() < deadline) {
			uint64_t until = deadline;

			if (e->nblocked) {
				if (rule1_ready(e))
					break;
				if (mono_ns() + BLOCKED_RECHECK_NS < until)
					until = mono_ns() + BLOCKED_RECHECK_NS;
			}
			ts = mono_ts(until);
			pthread_cond_timedwait(&e->pcond, &e->lock, &ts);
		}
		if (e->stop || !q0 || (e->nblocked && rule1_ready(e)))
			continue;
		/* A call ended meanwhile, or the interval changed: start a new interval. */
		if (e->activity != a0 || e->quiesce_ns != q0)
			continue;
		/* A waiter woken by the last step has not looked yet: give it the time to (it
		 * is runnable, not blocked), rather than moving the clock past its instant. */
		if (!waiters_settled(e))
			continue;
		/* A thread busy outside the library but kept off the CPU, or one just woken
		 * from a wait of its own: not quiet. Nor while a hold keeps time still, a thread
		 * waits for the lock this thread holds (it acts as soon as it has it), or a
		 * thread not met yet is at work (a library's own thread between two waits, a
		 * program's thread on its way to its first call). */
		if (starved(e, q0) || blocked_waking(e) || e->holds ||
		    __atomic_load_n(&e->entering, __ATOMIC_SEQ_CST) || unmet_busy(e))
			continue;
		advance_next(e, &err);
		e->quiet_since_ns = mono_ns();
	}
	pthread_mutex_unlock(&e->lock);
	return NULL;
}

/* Lock held. Makes sure the progress thread runs while timers are pending: an application
 * blocked in the kernel on one of our fds depends on it. */
static void __attribute__((noinline)) kick_progress_slow(struct emu_engine *e)
{
	sigset_t all, old;
	uint64_t next;

	if (!emu_clock_next_deadline(&e->clock, &next)) {
		/* a follower's thread answers the time authority's queries, deadlines or not */
		if (!e->raise_mask && !e->follower)
			return;
		next = 0;
	}
	if (e->progress_started) {
		/* in real time it sleeps until a deadline: wake it only for an earlier one; a
		 * follower's looks again when a query waits (the caller may have gone idle) */
		if (e->progress_sleeping && (e->follower ? e->fl_pending || e->raise_mask :
				(!e->realtime || next < e->progress_wake_at || e->raise_mask)))
			pthread_cond_signal(&e->pcond);
		return;
	}
	/* a thread that could not be had (EAGAIN: the process's or the system's limit) is tried
	 * again 10 ms later, as long as something needs it; until then virtual time moves only
	 * while library calls wait */
	if (e->progress_failed) {
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		if ((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec < e->progress_retry_at)
			return;
	}
	/* Signals stay with the application's threads. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	if (emu_tasks_create_ours(&e->progress, "prog", progress_main, e) == 0) {
		e->progress_started = true;
		__atomic_store_n(&e->progress_failed, false, __ATOMIC_RELAXED);
	} else {
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		e->progress_retry_at = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec +
				       10000000u;
		if (!e->progress_failed)
			fprintf(stderr, "rdmaemu: engine: cannot start the progress thread (tried "
					"again every 10 ms): virtual time moves only while library "
					"calls wait\n");
		__atomic_store_n(&e->progress_failed, true, __ATOMIC_RELAXED);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* Neither rule needs the thread (RDMAEMU_QUIESCE_US=0, virtual time): no deadline lookup
 * either, and the test stays at the caller (every unlock runs it). */
static inline void kick_progress(struct emu_engine *e)
{
	if (e->quiesce_ns || e->remote || e->nblocked)
		kick_progress_slow(e);
}

void emu_engine_set_quiesce_ns(struct emu_engine *e, uint64_t ns)
{
	e->quiesce_ns = ns;
	e->quiet_since_ns = mono_ns(); /* not kept up to date while the path was off */
	pthread_cond_signal(&e->pcond);
	kick_progress(e);
}

/* ---------- creation ---------- */

static uint64_t quiesce_from_env(void)
{
	const char *s = getenv("RDMAEMU_QUIESCE_US");
	unsigned long long us;
	char *end;

	if (!s || !*s)
		return EMU_ENGINE_QUIESCE_NS_DEFAULT;
	errno = 0;
	us = strtoull(s, &end, 10);
	if (errno || *end || us > UINT64_MAX / EMU_NSEC_PER_USEC) {
		fprintf(stderr, "rdmaemu: RDMAEMU_QUIESCE_US='%s' is not a number of microseconds; "
				"using %llu\n", s, EMU_ENGINE_QUIESCE_NS_DEFAULT / EMU_NSEC_PER_USEC);
		return EMU_ENGINE_QUIESCE_NS_DEFAULT;
	}
	return us * EMU_NSEC_PER_USEC;
}

static void flush_at_exit(void)
{
	struct emu_engine *e = __atomic_load_n(&the_engine, __ATOMIC_ACQUIRE);

	/* Best effort: a thread still inside the engine at exit keeps its frames. */
	if (e && pthread_mutex_trylock(&e->lock) == 0) {
		emu_topology_flush(e->topo);
		pthread_mutex_unlock(&e->lock);
	}
}

void emu_engine_on_create(struct emu_engine_hook *h)
{
	struct emu_engine_hook **pp;

	pthread_mutex_lock(&create_lock);
	for (pp = &hooks; *pp && (*pp)->order <= h->order; pp = &(*pp)->next)
		;
	h->next = *pp;
	*pp = h;
	pthread_mutex_unlock(&create_lock);
}

void emu_engine_set_wire_remote(bool remote)
{
	__atomic_store_n(&wire_remote, remote, __ATOMIC_RELEASE);
}

/* Frees an engine no other thread uses (its progress thread stopped): the attachments first,
 * while the topology and the clock they refer to are still there. */
static void engine_free(struct emu_engine *e)
{
	emu_engine_ext_free_all(e, &e->ext);
	emu_topology_free(e->topo);
	emu_clock_fini(&e->clock);
	while (e->inbox) {
		struct inbox_frame *f = e->inbox;

		e->inbox = f->next;
		free(f->buf);
		free(f);
	}
	pthread_mutex_destroy(&e->inbox_lock);
	pthread_cond_destroy(&e->pcond);
	pthread_cond_destroy(&e->cond);
	pthread_mutex_destroy(&e->lock);
	free(e);
}

/* create_lock held. */
static struct emu_engine *engine_create(void)
{
	const struct emu_fabric *f = emu_process_fabric();
	const char *pcap = getenv("RDMAEMU_PCAP");
	static bool atexit_done;
	pthread_condattr_t ca;
	struct emu_engine *e;
	struct emu_error err;
	int saved;

	if (!f)
		return NULL;
	e = emu_calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	memset(&err, 0, sizeof(err));
	emu_clock_init(&e->clock, 0);
	e->fabric = f;
	/* attached through a daemon, the daemon runs the wire and writes the captures */
	if (__atomic_load_n(&wire_remote, __ATOMIC_ACQUIRE))
		pcap = NULL;
	e->topo = emu_topology_build(f, &e->clock, pcap && *pcap ? pcap : NULL, &err);
	if (!e->topo) {
		saved = errno ? errno : ENOMEM;
		fprintf(stderr, "rdmaemu: cannot build the wire of fabric %s: %s\n", f->source,
			err.msg[0] ? err.msg : strerror(saved));
		emu_clock_fini(&e->clock);
		free(e);
		errno = saved;
		return NULL;
	}
	pthread_mutex_init(&e->lock, NULL);
	pthread_mutex_init(&e->inbox_lock, NULL);
	e->inbox_tail = &e->inbox;
	e->progress_wake_at = UINT64_MAX;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&e->cond, &ca); /* real-time waits sleep until a monotonic deadline */
	pthread_cond_init(&e->pcond, &ca);
	pthread_condattr_destroy(&ca);
	e->quiesce_ns = quiesce_from_env();
	e->quiet_since_ns = mono_ns();
	e->epoch = ++last_epoch;
	for (struct emu_engine_hook *h = hooks; h; h = h->next) {
		int rc = h->created(e);

		if (rc < 0) {
			engine_free(e);
			errno = -rc;
			return NULL;
		}
	}
	if (!atexit_done && pcap && *pcap)
		atexit_done = atexit(flush_at_exit) == 0;
	return e;
}

/* The engine points into the attached fabric: it goes first when the process forgets it. */
static struct emu_process_reset_hook reset_hook = { .order = 0, .reset = emu_engine_reset };

__attribute__((constructor)) static void install(void)
{
	emu_process_on_reset(&reset_hook);
}

struct emu_engine *emu_engine_get(void)
{
	struct emu_engine *e = __atomic_load_n(&the_engine, __ATOMIC_ACQUIRE);

	if (e)
		return e;
	pthread_once(&key_once, make_key);
	pthread_mutex_lock(&create_lock);
	e = the_engine;
	if (!e) {
		e = engine_create();
		if (e)
			__atomic_store_n(&the_engine, e, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&create_lock);
	return e;
}

void emu_engine_reset(void)
{
	struct emu_engine *e;

	pthread_mutex_lock(&create_lock);
	e = the_engine;
	__atomic_store_n(&the_engine, NULL, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&create_lock);
	if (!e)
		return;
	pthread_mutex_lock(&e->lock);
	e->stop = true;
	pthread_cond_broadcast(&e->pcond);
	pthread_mutex_unlock(&e->lock);
	if (e->progress_started)
		pthread_join(e->progress, NULL);
	/* Threads still registered (their TLS records) are forgotten through the epoch. */
	if (tls_epoch == e->epoch)
		tls_epoch = 0;
	engine_free(e);
}

/* ---------- entering and leaving ---------- */

/* The engine mutex, for a thread that acts once it has it. In follower mode, asleep on the
 * mutex the thread is about to act: the idle check, which holds the lock, must not take it
 * for a thread asleep in the kernel. */
static void mutex_enter(struct emu_engine *e)
{
	struct emu_engine_thread *t;

	if (!pthread_mutex_trylock(&e->lock))
		return;
	t = e->follower && tls_epoch == e->epoch ? &tls_thread : NULL;
	__atomic_add_fetch(&e->entering, 1, __ATOMIC_SEQ_CST);
	if (t)
		__atomic_store_n(&t->entering, 1, __ATOMIC_SEQ_CST);
	pthread_mutex_lock(&e->lock);
	if (t)
		__atomic_store_n(&t->entering, 0, __ATOMIC_SEQ_CST);
	__atomic_sub_fetch(&e->entering, 1, __ATOMIC_SEQ_CST);
}

static void lock_taken(struct emu_engine *e)
{
	struct emu_engine_thread *t = thread_self(e);

	/* the end of a wait of its own (or it left one without ending it: a longjmp out of
	 * a signal handler) */
	appwait_clear(e, t);
	t->state = EMU_THREAD_RUNNING;
	t->spinning = false;
	__atomic_store_n(&e->held, 1, __ATOMIC_RELAXED);
	rt_catch_up(e);
}

void emu_engine_lock(struct emu_engine *e)
{
	mutex_enter(e);
	lock_taken(e);
}

bool emu_engine_trylock(struct emu_engine *e)
{
	if (!e->realtime || e->follower) {
		emu_engine_lock(e);
		return true;
	}
	if (__atomic_load_n(&e->held, __ATOMIC_RELAXED) || pthread_mutex_trylock(&e->lock))
		return false;
	lock_taken(e);
	return true;
}

/* Real time: frames posted while another thread held the lock are delivered by whoever holds
 * it next; after releasing it, look once more (the poster's trylock may have failed just
 * before this unlock). */
static void rt_after_unlock(struct emu_engine *e)
{
	while (__atomic_load_n(&e->inbox_full, __ATOMIC_SEQ_CST) &&
	       pthread_mutex_trylock(&e->lock) == 0) {
		rt_catch_up(e);
		emu_engine_run_now(e);
		kick_progress(e);
		pthread_mutex_unlock(&e->lock);
	}
}

void emu_engine_unlock(struct emu_engine *e)
{
	struct emu_engine_thread *self;

	rt_catch_up_unlock(e);
	emu_engine_run_now(e);
	/* A RUNNING thread's call may have changed what waiters wait for (posted work,
	 * queued an event): they must look again before time moves. An idle poller's call
	 * changed nothing (what its run_now fired already started a generation). */
	self = thread_known(e);
	if (self && self->state == EMU_THREAD_RUNNING) {
		new_generation(e);
		/* Only such calls hold back the quiescence path: an empty poll (the thread is
		 * IDLE now) says the application is waiting, so a busy-polling thread next to
		 * one blocked in the kernel on our fds cannot stop time for good. */
		e->activity++;
		/* only the quiescence path reads it (note_idle, the progress thread, a
		 * follower's idle test), which real time does not take: with the path off or in
		 * real time, no clock_gettime per call (~a tenth of an 8-byte message-rate run's
		 * requester; emu_engine_set_quiesce_ns and emu_engine_set_follower restart it) */
		if (e->quiesce_ns && (!e->realtime || e->follower))
			e->quiet_since_ns = mono_ns();
	}
	kick_progress(e);
	__atomic_store_n(&e->held, 0, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&e->lock);
	if (e->remote)
		rt_after_unlock(e);
}

bool emu_engine_lock_short(struct emu_engine *e)
{
	if (!e->realtime || e->follower) {
		emu_engine_lock(e);
		return false;
	}
	mutex_enter(e);
	return true;
}

void emu_engine_unlock_short(struct emu_engine *e, bool short_lock)
{
	if (!short_lock) {
		emu_engine_unlock(e);
		return;
	}
	pthread_mutex_unlock(&e->lock);
	rt_after_unlock(e);
}

void emu_engine_set_follower(struct emu_engine *e, emu_engine_tx_fn *tx, void *tx_ctx,
			     emu_engine_idle_fn *idle, void *idle_ctx)
{
	e->follower = true;
	e->remote = true;
	e->quiet_since_ns = mono_ns(); /* (not kept up to date in real time) */
	e->tx = tx;
	e->tx_ctx = tx_ctx;
	e->fl_idle = idle;
	e->fl_idle_ctx = idle_ctx;
	e->spin_quantum_ns = FOLLOW_SPIN_DEFAULT_NS;
	kick_progress(e);
}

bool emu_engine_is_follower(const struct emu_engine *e)
{
	return e->follower;
}

void emu_engine_set_realtime(struct emu_engine *e, emu_engine_tx_fn *tx, void *tx_ctx)
{
	e->realtime = true;
	e->remote = true;
	e->rt_base = mono_ns() - e->clock.now;
	e->tx = tx;
	e->tx_ctx = tx_ctx;
	kick_progress(e);
}

bool emu_engine_is_realtime(const struct emu_engine *e)
{
	return e->realtime;
}

bool emu_engine_progress_missing(const struct emu_engine *e)
{
	return __atomic_load_n(&e->progress_failed, __ATOMIC_RELAXED);
}

void emu_engine_queue_frame(struct emu_engine *e, int ep, void *buf, size_t len)
{
	inbox_add(e, ep, buf, len, 0);
}

static void inbox_add(struct emu_engine *e, int ep, void *buf, size_t len, uint64_t val)
{
	struct inbox_frame *f = emu_malloc(sizeof(*f));

	if (!f) {
		free(buf); /* lost, as a frame a congested link drops */
		return;
	}
	f->next = NULL;
	f->ep = ep;
	f->val = val;
	f->buf = buf;
	f->len = len;
	pthread_mutex_lock(&e->inbox_lock);
	*e->inbox_tail = f;
	e->inbox_tail = &f->next;
	__atomic_store_n(&e->inbox_full, 1, __ATOMIC_SEQ_CST);
	pthread_mutex_unlock(&e->inbox_lock);
}

bool emu_engine_inbox_pending(struct emu_engine *e)
{
	return __atomic_load_n(&e->inbox_full, __ATOMIC_SEQ_CST) != 0;
}

bool emu_engine_try_deliver(struct emu_engine *e)
{
	if (emu_engine_inbox_pending(e) && pthread_mutex_trylock(&e->lock) == 0) {
		rt_catch_up(e);
		emu_engine_run_now(e);
		kick_progress(e);
		pthread_mutex_unlock(&e->lock);
		rt_after_unlock(e);
	}
	return !emu_engine_inbox_pending(e);
}

void emu_engine_post_frame(struct emu_engine *e, int ep, void *buf, size_t len)
{
	emu_engine_queue_frame(e, ep, buf, len);
	/* Deliver it now, unless a holder of the lock does on its way out. Taking the lock,
	 * not just trying it: a holder about to sleep in a wait (on the condition variable)
	 * would otherwise leave the frame behind. The link's receive thread does not come
	 * here (emu_engine_try_deliver, docs/engine.md). */
	pthread_mutex_lock(&e->lock);
	rt_catch_up(e);
	emu_engine_run_now(e);
	kick_progress(e);
	pthread_mutex_unlock(&e->lock);
	rt_after_unlock(e);
}

void emu_engine_thread_forget(struct emu_engine *e)
{
	pthread_mutex_lock(&e->lock);
	if (tls_epoch == e->epoch)
		thread_unlink(e, &tls_thread);
	pthread_mutex_unlock(&e->lock);
}

uint64_t emu_engine_peek_now(struct emu_engine *e)
{
	uint64_t now;

	mutex_enter(e);
	now = e->clock.now;
	pthread_mutex_unlock(&e->lock);
	return now;
}

struct emu_clock *emu_engine_clock(struct emu_engine *e)
{
	return &e->clock;
}

struct emu_topology *emu_engine_topology(struct emu_engine *e)
{
	return e->topo;
}

const struct emu_fabric *emu_engine_fabric(const struct emu_engine *e)
{
	return e->fabric;
}

uint64_t emu_engine_now(const struct emu_engine *e)
{
	return e->clock.now;
}

/* ---------- attachments ---------- */

void *emu_engine_ext_get(struct emu_engine *e, const struct emu_engine_ext_type *type)
{
	return emu_engine_ext_find(e->ext, type);
}

int emu_engine_ext_set(struct emu_engine *e, const struct emu_engine_ext_type *type, void *obj)
{
	return emu_engine_ext_add(&e->ext, type, obj);
}

/* ---------- ports ---------- */

void emu_engine_set_input(struct emu_engine *e, emu_engine_input_fn *fn, void *ctx)
{
	e->input = fn;
	e->input_ctx = ctx;
}

/* The link layer of host port endpoint ep, for its counters (EMU_LL_* as the fabric's
 * link_layer numbers them). */
static int ep_link_layer(const struct emu_engine *e, int ep)
{
	struct emu_endpoint what;
	const struct emu_fabric *f = e->fabric;

	if (emu_topology_endpoint_info(e->topo, ep, &what) || what.kind != EMU_EP_HOST_PORT)
		return EMU_LL_INFINIBAND;
	return f->hosts[what.node].devices[what.device].ports[what.port - 1].link_layer;
}

/* A frame from outside the process crossed no wire of this engine: the port counts it here, as
 * a frame this process sends outside does in port_send. */
void emu_engine_deliver(struct emu_engine *e, int ep, const uint8_t *frame, size_t len,
			uint64_t now)
{
	emu_wire_count(emu_topology_wire(e->topo), ep, true, ep_link_layer(e, ep), frame, len);
	if (e->input)
		e->input(e->input_ctx, ep, frame, len, now);
}

void emu_engine_port_count(struct emu_engine *e, size_t host, size_t dev, unsigned port, bool rx,
			   const uint8_t *frame, size_t len)
{
	int ep = emu_topology_port_endpoint(e->topo, host, dev, port);

	if (ep >= 0)
		emu_wire_count(emu_topology_wire(e->topo), ep, rx, ep_link_layer(e, ep), frame,
			       len);
}

void emu_engine_port_count_rcv_error(struct emu_engine *e, size_t host, size_t dev,
				     unsigned port)
{
	int ep = emu_topology_port_endpoint(e->topo, host, dev, port);

	if (ep >= 0)
		emu_wire_count_rcv_error(emu_topology_wire(e->topo), ep);
}

int emu_engine_port_send(struct emu_engine *e, size_t host, size_t dev, unsigned port,
			 const void *frame, size_t len)
{
	int ep = emu_topology_port_endpoint(e->topo, host, dev, port);

	if (ep >= 0 && e->tx) {
		int rc = e->tx(e->tx_ctx, ep, host, dev, port, frame, len);

		if (!rc)
			emu_wire_count(emu_topology_wire(e->topo), ep, false, ep_link_layer(e, ep),
				       frame, len);
		return rc;
	}
	return ep < 0 ? ep : emu_wire_send(emu_topology_wire(e->topo), ep, frame, len);
}

void *emu_engine_port_send_buf(struct emu_engine *e, size_t host, size_t dev, unsigned port,
			       size_t len)
{
	int ep = emu_topology_port_endpoint(e->topo, host, dev, port);

	if (ep < 0 || e->tx)
		return NULL;
	return emu_wire_send_buf(emu_topology_wire(e->topo), ep, len);
}

int emu_engine_port_send_commit(struct emu_engine *e, size_t host, size_t dev, unsigned port,
				void *buf, size_t len, bool built)
{
	int ep = emu_topology_port_endpoint(e->topo, host, dev, port);

	if (ep < 0) {
		emu_wire_send_abort(emu_topology_wire(e->topo), buf);
		return ep;
	}
	return emu_wire_send_commit(emu_topology_wire(e->topo), ep, buf, len, built);
}

void emu_engine_port_send_abort(struct emu_engine *e, void *buf)
{
	emu_wire_send_abort(emu_topology_wire(e->topo), buf);
}

int emu_engine_port_send_lazy(struct emu_engine *e, size_t host, size_t dev, unsigned port,
			      const struct emu_wire_lazy *ops, const void *obj, size_t objlen,
			      size_t len)
{
	int ep = emu_topology_port_endpoint(e->topo, host, dev, port);
	uint8_t *frame;
	int rc;

	if (ep < 0)
		return ep;
	if (!e->tx)
		return emu_wire_send_lazy(emu_topology_wire(e->topo), ep, ops, obj, objlen, len);
	if (!ops || !obj || !len || len > EMU_WIRE_MAX_FRAME)
		return -EINVAL;
	frame = emu_malloc(len);
	if (!frame)
		return -ENOMEM;
	ops->build(obj, frame, len);
	rc = e->tx(e->tx_ctx, ep, host, dev, port, frame, len);
	if (!rc)
		emu_wire_count(emu_topology_wire(e->topo), ep, false, ep_link_layer(e, ep), frame,
			       len);
	free(frame);
	return rc;
}

/* ---------- waiting ---------- */

/* A waiter that would step or give up but for a thread not met yet looks again this often. */
#define UNMET_RECHECK_NS (5ull * 1000 * 1000)
/* How long after an application's alarm a wait looks again if its signal did not end it. */
#define ALARM_SLACK_NS (2ull * 1000 * 1000)

static bool any_spinning(const struct emu_engine *e)
{
	for (const struct emu_engine_thread *t = e->threads; t; t = t->next)
		if (t->state == EMU_THREAD_IDLE && t->spinning)
			return true;
	return false;
}

static void timeout_fire(struct emu_clock *clk, struct emu_timer *t, void *arg)
{
	(void)clk;
	(void)t;
	*(bool *)arg = true;
}

static void report_deadlock(struct emu_engine *e, const char *what)
{
	char t[40], others[200];
	size_t n = 0, len = 0;

	others[0] = 0;
	for (const struct emu_engine_thread *th = e->threads; th; th = th->next) {
		if (th == &tls_thread)
			continue;
		n++;
		if ((th->state == EMU_THREAD_WAITING || th->state == EMU_THREAD_BLOCKED) &&
		    len < sizeof(others) - 1)
			len += (size_t)snprintf(others + len, sizeof(others) - len, "%s%s",
						len ? ", " : ": ", th->what ? th->what : "?");
	}
	if (len >= sizeof(others))
		len = sizeof(others) - 1;
	fmt_time(t, sizeof(t), e->clock.now);
	fprintf(stderr, "rdmaemu: %s would wait forever at virtual time %s: no timer pending, no "
			"frame in flight, %zu other thread(s) all waiting%s\n",
		what ? what : "a wait", t, n, others);
}

/* Whether a signal the engine sent (emu_engine_raise) while the calling thread slept in an
 * interruptible wait interrupts it, as the kernel's wait would have been: the thread does not
 * block it, its handler has no SA_RESTART, and the thread is the one the kernel gives a
 * process-directed signal to (the main thread, unless that blocks it). The sleep itself may
 * not have seen it: delivered on the way into the sleep (the mutex's unlock), the handler ran
 * before the futex began. */
static bool raised_interrupts(uint64_t sigs)
{
	sigset_t mine;
	bool main_thread = syscall(SYS_gettid) == getpid();

	pthread_sigmask(SIG_BLOCK, NULL, &mine);
	for (int sig = 1; sig < 64; sig++) {
		struct sigaction sa;

		if (!(sigs & (1ull << sig)) || sigismember(&mine, sig) || sigaction(sig, NULL, &sa))
			continue;
		if (sa.sa_handler == SIG_DFL || sa.sa_handler == SIG_IGN ||
		    (sa.sa_flags & SA_RESTART))
			continue;
		if (main_thread)
			return true;
		/* another thread gets it only when the main thread blocks it */
		if (emu_tasks_sig_blocked(getpid(), sig))
			return true;
	}
	return false;
}

/* One sleep of a wait until the next wake_all, or the real-time deadline abs_ns (0: none).
 * An interruptible wait (intr) gives EINTR as the kernel would: exactly for an untimed sleep;
 * for a timed one (the kernel restarts no timed futex) by emu_signal_restarts. Lock held. */
/* An interruptible wait's view of the program's handlers (emu_apptime_signal_counts): the
 * handlers without SA_RESTART the thread had run when the wait began; counted: known. */
static __thread uint64_t tls_wait_norestart;
static __thread bool tls_wait_counted;

static emu_engine_signal_counter_fn *signal_counter; /* set once, before threads wait */

void emu_engine_set_signal_counter(emu_engine_signal_counter_fn *fn)
{
	signal_counter = fn;
}

static void wait_signals_begin(bool intr)
{
	uint64_t handled;

	tls_wait_counted = intr && signal_counter && signal_counter(&handled, &tls_wait_norestart);
}

static int sleep_once(struct emu_engine *e, bool intr, uint64_t abs_ns)
{
	uint64_t seq0 = e->raise_seq;
	struct timespec ts;
	int err = 0, h;

	/* without a progress thread nothing else moves time: try to start it again, and wake
	 * within 10 ms to try once more */
	if (e->progress_failed) {
		uint64_t soon = mono_ns() + 10000000u;

		kick_progress_slow(e);
		if (e->progress_failed && (!abs_ns || abs_ns > soon))
			abs_ns = soon;
	}
	e->nsleepers++;
	if (intr && !abs_ns) {
		err = sleep_interruptible(e);
	} else if (intr) {
		uint32_t seq = __atomic_load_n(&e->wake_seq, __ATOMIC_ACQUIRE);
		uint64_t now = mono_ns(), rel = abs_ns > now ? abs_ns - now : 0;
		long r;

		ts.tv_sec = (time_t)(rel / EMU_NSEC_PER_SEC);
		ts.tv_nsec = (long)(rel % EMU_NSEC_PER_SEC);
		h = held_leave(e);
		pthread_mutex_unlock(&e->lock);
		r = syscall(SYS_futex, &e->wake_seq, FUTEX_WAIT_PRIVATE, seq, &ts, NULL, 0);
		if (r < 0 && errno == EINTR && !emu_signal_restarts())
			err = EINTR;
		pthread_mutex_lock(&e->lock);
		held_back(e, h);
	} else if (abs_ns) {
		ts = mono_ts(abs_ns);
		h = held_leave(e);
		pthread_cond_timedwait(&e->cond, &e->lock, &ts);
		held_back(e, h);
	} else {
		h = held_leave(e);
		pthread_cond_wait(&e->cond, &e->lock);
		held_back(e, h);
	}
	e->nsleepers--;
	if (intr && tls_wait_counted) {
		/* exact: a handler without SA_RESTART ran since the wait began */
		uint64_t handled, norestart;

		signal_counter(&handled, &norestart);
		return norestart != tls_wait_norestart ? EINTR : 0;
	}
	if (intr && !err && e->raise_seq != seq0 && raised_interrupts(e->raised))
		err = EINTR;
	return err;
}

bool emu_signal_restarts(void)
{
	for (int sig = 1; sig < NSIG; sig++) {
		struct sigaction sa;

		if (sig == SIGKILL || sig == SIGSTOP || sigaction(sig, NULL, &sa))
			continue;
		if (sa.sa_handler != SIG_DFL && sa.sa_handler != SIG_IGN &&
		    !(sa.sa_flags & SA_RESTART))
			return false;
	}
	return true;
}

/* The time left on the process's ITIMER_REAL alarm in ns, 0 when none is armed. The engine
 * cannot see POSIX timers (timer_create). */
static uint64_t app_alarm_left(void)
{
	struct itimerval it;

	if (getitimer(ITIMER_REAL, &it))
		return 0;
	return (uint64_t)it.it_value.tv_sec * EMU_NSEC_PER_SEC + (uint64_t)it.it_value.tv_usec * 1000;
}

/* A wait that only the application's alarm can end sleeps until a little after it. Whether
 * its SIGALRM ends the call is the kernel's rule for an interruptible wait: a handler without
 * SA_RESTART does. The sleep may end by its own timeout before the signal's wake-up is seen
 * (a loaded machine), so an alarm whose time passed meanwhile counts as the interruption
 * too. Lock held. 0: look again; EINTR. */
static int sleep_for_alarm(struct emu_engine *e, bool intr, uint64_t left)
{
	uint64_t t0 = mono_ns();
	struct sigaction sa;

	if (sleep_once(e, intr, t0 + left + ALARM_SLACK_NS) == EINTR)
		return EINTR;
	if (!intr || mono_ns() - t0 < left || sigaction(SIGALRM, NULL, &sa))
		return 0;
	return sa.sa_handler != SIG_DFL && sa.sa_handler != SIG_IGN &&
	       !(sa.sa_flags & SA_RESTART) ? EINTR : 0;
}

static int engine_wait(struct emu_engine *e, const char *what, bool (*done)(void *arg), void *arg,
		       uint64_t timeout_ns, bool intr)
{
	struct emu_engine_thread *self = thread_self(e);
	bool timed_out = false, has_timeout = timeout_ns != EMU_ENGINE_FOREVER;
	struct emu_timer tmo;
	int rc = 0;

	/* The timeout is a clock timer like any other, so both rules (1) and (2) move time to
	 * it, in order with the protocol timers. */
	if (has_timeout) {
		emu_timer_init(&tmo, timeout_fire, &timed_out);
		emu_timer_arm_in(&e->clock, &tmo, timeout_ns);
	}
	wait_signals_begin(intr);
	if (emu_engine_run_now(e) == -ELOOP) {
		rc = ELOOP;
		goto out;
	}
	self->state = EMU_THREAD_WAITING;
	reanswer_arm(e);
	self->what = what;
	for (;;) {
		uint64_t alarm_left;
		int err = 0;

		if (e->remote) {
			rt_catch_up(e);
			emu_engine_run_now(e);
		}
		if (done(arg)) {
			rc = 0;
			break;
		}
		if (timed_out) {
			rc = ETIMEDOUT;
			break;
		}
		self->seen_gen = e->gen;
		if (e->follower) {
			/* the time authority moves the clock once every process is idle; another
			 * process may act, so no rule (1) here and no EDEADLK: sleep until the
			 * state changes (a frame, an advance, another thread's call) */
			kick_progress(e);
			if (sleep_once(e, intr, 0) == EINTR) {
				rc = EINTR;
				break;
			}
			continue;
		}
		if (e->realtime) {
			/* frames may come from other processes at any time: no rule 1, no
			 * EDEADLK; sleep until the next deadline or a new generation */
			uint64_t next;

			kick_progress(e);
			if (!emu_clock_next_deadline(&e->clock, &next))
				next = 0;
			else
				next += e->rt_base;
			if (sleep_once(e, intr, next) == EINTR) {
				rc = EINTR;
				break;
			}
			continue;
		}
		if (all_settled(e) && unmet_busy(e)) {
			/* a thread not met yet may still call in: look again shortly (its first
			 * call wakes this wait at once) */
			kick_progress(e);
			if (sleep_once(e, intr, mono_ns() + UNMET_RECHECK_NS) == EINTR) {
				rc = EINTR;
				break;
			}
			continue;
		}
		if (all_settled(e)) {
			if (advance_next(e, &err)) {
				if (err) {
					rc = err;
					break;
				}
				continue;
			}
			/* An alarm the application armed (alarm, setitimer) is a deadline of
			 * its own: its signal may end this wait (EINTR) or let it look again */
			if ((alarm_left = app_alarm_left())) {
				if (sleep_for_alarm(e, intr, alarm_left) == EINTR) {
					rc = EINTR;
					break;
				}
				continue;
			}
			/* A thread in a busy loop on the program's clock moves time itself
			 * (emu_engine_note_clock_spin): no deadlock while it waits for that. */
			if (any_spinning(e)) {
				if (sleep_once(e, intr, mono_ns() + BLOCKED_RECHECK_NS) == EINTR) {
					rc = EINTR;
					break;
				}
				continue;
			}
			/* No timer (so no frame in flight: deliveries are timers), nobody
			 * else can act. */
			report_deadlock(e, what);
			rc = EDEADLK;
			break;
		}
		kick_progress(e);
		/* a thread on its way into a wait of its own calls nobody when it falls asleep */
		if (sleep_once(e, intr, e->nblocked ? mono_ns() + BLOCKED_RECHECK_NS : 0) == EINTR) {
			rc = EINTR;
			break;
		}
	}
out:
	if (has_timeout)
		emu_timer_cancel(&e->clock, &tmo);
	self->state = EMU_THREAD_RUNNING;
	self->what = NULL;
	return rc;
}

int emu_engine_wait(struct emu_engine *e, const char *what, bool (*done)(void *arg), void *arg,
		    uint64_t timeout_ns)
{
	return engine_wait(e, what, done, arg, timeout_ns, false);
}

int emu_engine_wait_interruptible(struct emu_engine *e, const char *what,
				  bool (*done)(void *arg), void *arg)
{
	return engine_wait(e, what, done, arg, EMU_ENGINE_FOREVER, true);
}

bool emu_engine_note_idle(struct emu_engine *e)
{
	struct emu_engine_thread *self;
	int err = 0;

	if (e->follower) {
		/* settled: the progress thread answers the time authority's query */
		self = thread_self(e);
		self->state = EMU_THREAD_IDLE;
		reanswer_arm(e);
		self->seen_gen = e->gen;
		kick_progress(e);
		sched_yield();
		return false;
	}
	if (e->realtime) {
		/* Time follows the real clock and frames come from other threads and processes:
		 * nothing to decide here. A busy poller gives the CPU away instead, since the
		 * "hardware" it waits for is the receive thread and the daemon, on the same
		 * cores (two spinning pingpongs on two cores otherwise wait a scheduler tick,
		 * milliseconds, for every frame). */
		sched_yield();
		return false;
	}
	self = thread_self(e);
	self->state = EMU_THREAD_IDLE;
	reanswer_arm(e);
	self->seen_gen = e->gen;
	if (all_settled(e) && emu_clock_pending(&e->clock) && !unmet_busy(e))
		return advance_next(e, &err); /* rule (1) */
	/* Rule (2) from the poller itself: a thread busy-polling the engine mutex could
	 * otherwise starve the progress thread of it (mutexes are not fair). Same condition
	 * as the progress thread's: a quiet interval, every waiter has looked. */
	if (e->quiesce_ns && mono_ns() - e->quiet_since_ns >= e->quiesce_ns &&
	    waiters_settled(e) && !blocked_waking(e) && advance_next(e, &err)) {
		e->quiet_since_ns = mono_ns();
		return true;
	}
	return false;
}

/* ---------- waits of the program's own (the time layer) ---------- */

static void appwait_fire(struct emu_clock *clk, struct emu_timer *tm, void *arg)
{
	struct emu_engine_thread *t = arg;
	uint64_t one = 1;

	(void)clk;
	(void)tm;
	t->app_expired = true;
	/* It has to run at its deadline before time moves on: not settled any more. */
	t->state = EMU_THREAD_RUNNING;
	if (t->app_wakefd >= 0 && write(t->app_wakefd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		fprintf(stderr, "rdmaemu: time: cannot wake a wait at its deadline: %s\n",
			strerror(errno));
	if (t->app_cond)
		pthread_cond_broadcast(t->app_cond);
}

static void appwait_clear(struct emu_engine *e, struct emu_engine_thread *t)
{
	if (!t->app_active)
		return;
	t->app_active = false;
	emu_timer_cancel(&e->clock, &t->app_tmo);
	e->nblocked--;
	if (t->state == EMU_THREAD_BLOCKED)
		t->state = EMU_THREAD_RUNNING;
	t->app_cond = NULL;
	t->app_wakefd = -1;
	t->app_nfds = 0;
	t->what = NULL;
}

void emu_engine_appwait_fds(struct emu_engine *e, const struct pollfd *fds, size_t n)
{
	struct emu_engine_thread *t = thread_self(e);

	if (!t->app_active)
		return;
	if (n > EMU_ENGINE_APPWAIT_FDS)
		n = EMU_ENGINE_APPWAIT_FDS;
	memcpy(t->app_fds, fds, n * sizeof(fds[0]));
	t->app_nfds = (unsigned)n;
}

int emu_engine_appwait_begin(struct emu_engine *e, const char *what, uint64_t deadline,
			     int wakefd, pthread_cond_t *cond)
{
	struct emu_engine_thread *t = thread_self(e);

	if (t->app_active)
		return -EBUSY; /* a signal handler's wait inside the thread's own */
	emu_timer_init(&t->app_tmo, appwait_fire, t);
	t->app_expired = false;
	__atomic_store_n(&t->app_woken, 0, __ATOMIC_RELEASE);
	t->app_wakefd = wakefd;
	t->app_cond = cond;
	t->what = what;
	if (deadline != EMU_ENGINE_FOREVER)
		emu_timer_arm_at(&e->clock, &t->app_tmo, deadline);
	t->state = EMU_THREAD_BLOCKED;
	reanswer_arm(e);
	t->app_active = true;
	e->nblocked++;
	/* Waiters that saw this thread running look again; the progress thread watches for
	 * the moment it falls asleep. */
	wake_all(e);
	kick_progress(e);
	if (e->progress_started && e->progress_sleeping)
		pthread_cond_signal(&e->pcond);
	return 0;
}

void emu_engine_appwait_woken(struct emu_engine *e)
{
	(void)e;
	__atomic_store_n(&tls_thread.app_woken, 1, __ATOMIC_RELEASE);
}

bool emu_engine_appwait_end(struct emu_engine *e)
{
	struct emu_engine_thread *t = thread_self(e);
	bool expired = t->app_expired;

	appwait_clear(e, t);
	t->app_expired = false;
	return expired;
}

struct emu_engine *emu_engine_current(void)
{
	return __atomic_load_n(&the_engine, __ATOMIC_ACQUIRE);
}

uint64_t emu_engine_now_relaxed(const struct emu_engine *e)
{
	return __atomic_load_n(&e->clock.now, __ATOMIC_RELAXED);
}

/* For a thread spinning on the program's clock: every other thread is settled or asleep in
 * the kernel (a pthread_join, a read() the engine does not see): nothing but time can change
 * what they wait for, as time passes for a real host. Lock held. */
static bool others_asleep(const struct emu_engine *e, const struct emu_engine_thread *self)
{
	if (e->holds || blocked_waking(e))
		return false;
	for (const struct emu_engine_thread *t = e->threads; t; t = t->next) {
		char st;

		if (t == self || (t->state != EMU_THREAD_RUNNING && t->state != EMU_THREAD_BLOCKED &&
				  settled(e, t)))
			continue;
		if (t->state == EMU_THREAD_BLOCKED && !blocked_asleep(t))
			return false;
		st = thread_kstate(t->tid);
		if (st != 'S' && st != 'T' && st != 't')
			return false;
	}
	return true;
}

int emu_engine_note_clock_spin(struct emu_engine *e, uint64_t quantum_ns)
{
	struct emu_engine_thread *self;
	uint64_t next, fired = 0;
	int err = 0;

	if (e->realtime)
		return 0;
	mutex_enter(e);
	self = thread_self(e);
	appwait_clear(e, self);
	self->state = EMU_THREAD_IDLE;
	reanswer_arm(e);
	self->spinning = true;
	self->seen_gen = e->gen;
	if (e->follower) {
		/* its next deadline for the time authority: now + quantum at the latest */
		e->spin_quantum_ns = quantum_ns ? quantum_ns : FOLLOW_SPIN_DEFAULT_NS;
		kick_progress(e);
		pthread_mutex_unlock(&e->lock);
		sched_yield();
		return 0;
	}
	if ((all_settled(e) || others_asleep(e, self)) && !unmet_busy(e)) {
		if (emu_clock_next_deadline(&e->clock, &next) && next <= e->clock.now + quantum_ns) {
			advance_next(e, &err);
		} else {
			err = run_through(e, e->clock.now + quantum_ns, &fired) < 0 ? ELOOP : 0;
			new_generation(e);
		}
	}
	pthread_mutex_unlock(&e->lock);
	return err;
}

void emu_engine_hold(struct emu_engine *e)
{
	e->holds++;
}

void emu_engine_release(struct emu_engine *e)
{
	e->holds--;
	/* the rules look again: the progress thread, and the waiters */
	new_generation(e);
	kick_progress_slow(e);
}

void emu_engine_raise(struct emu_engine *e, int sig)
{
	if (sig <= 0 || sig >= 64 || (e->raise_mask & (1ull << sig)))
		return;
	e->raise_mask |= 1ull << sig;
	e->holds++;
	kick_progress_slow(e);
}
