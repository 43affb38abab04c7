/* The per-process engine: the clock and the topology of the attached fabric behind one mutex,
 * and the progress model that decides when virtual time moves (docs/engine.md).
 *
 * One engine per process, created on first use (emu_engine_get) from emu_process_fabric():
 * clock at 0, topology built with emu_topology_build, pcap captures when $RDMAEMU_PCAP names a
 * prefix. Every host of the fabric lives in it; the protocol engines (HCA data path,
 * neighbour responder, CM agent, SA) hook into it with port receivers, port sends and clock
 * timers.
 *
 * Locking. One mutex (emu_engine_lock/unlock) serialises the clock, the wire, the topology and
 * every callback they run. Lock order: the engine lock first, then an HCA mutex (emu/hca/hca.h):
 * timer and receive callbacks run with the engine lock held and may take HCA mutexes; code
 * holding an HCA mutex must never take the engine lock. Nothing blocks while holding the
 * engine lock except emu_engine_wait, which releases it while it sleeps.
 *
 * Threads. A thread becomes known at its first emu_engine_lock (thread-local registration,
 * dropped when the thread exits or calls emu_engine_thread_forget). A known thread is
 *   RUNNING  from emu_engine_lock on (inside the engine, or outside it doing its own work),
 *   WAITING  inside emu_engine_wait,
 *   IDLE     after emu_engine_note_idle, until its next emu_engine_lock.
 * WAITING and IDLE count as "settled" only for the engine state they saw: every change of
 * state (timers fired, a RUNNING thread's call ended) starts a new generation, and a thread
 * has to look again (a waiter re-evaluates done(), a poller polls again) before it counts
 * as settled.
 *
 * When virtual time advances (never backwards; never while a thread holds the lock):
 *  (1) all known threads settled: the waiter (or the thread calling note_idle) that sees it
 *      advances the clock to the next timer deadline at once and runs everything due there.
 *      Deterministic, costs no wall time.
 *  (2) quiescence: a progress thread (started at the first unlock that leaves a timer
 *      pending) advances to the next timer deadline when no call has ended RUNNING (empty
 *      polls reported with note_idle do not count) for the quiescence interval (1 ms; $RDMAEMU_QUIESCE_US; 0 turns the path off) and every
 *      waiter has seen the current state. This is what moves time for threads blocked in the
 *      kernel on the engine's eventfds, or busy outside the library: such a thread sees time
 *      jump after the interval, as if the network had run on meanwhile.
 *  (3) a wait that nothing can satisfy (no timer pending, no frame in flight, every known
 *      thread settled) fails with EDEADLK and a one-line diagnostic.
 */
#ifndef RDMAEMU_EMU_ENGINE_H
#define RDMAEMU_EMU_ENGINE_H

#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "emu/sim/clock.h"
#include "emu/sim/fabric.h"
#include "emu/sim/topology.h"
#include "emu/sim/wire.h"

/* Most callbacks run at one virtual instant before run_now gives up on it (a timer that
 * re-arms itself with no delay, or two that ping-pong, would otherwise hang the process). */
#define EMU_ENGINE_STEP_LIMIT (1u << 20)

/* Default quiescence interval of the progress thread, real time. */
#define EMU_ENGINE_QUIESCE_NS_DEFAULT (1 * EMU_NSEC_PER_MSEC)

/* "No timeout" for emu_engine_wait. */
#define EMU_ENGINE_FOREVER UINT64_MAX

struct emu_engine;

/* The process-wide engine, created on first use. NULL with errno set (that of
 * emu_process_fabric, or ENOMEM, or the error of creating a capture file) when the process
 * has no fabric. Thread-safe; does not register the calling thread. */
struct emu_engine *emu_engine_get(void);

/* What the layers above do with every new engine. The layers that live on each engine (the
 * host ports' receive demultiplexer, the hosts' network stacks, the link to rdmaemud)
 * register a hook once, before the first engine exists (a constructor of librdmaemu.so). Each
 * creation runs the hooks, lowest order first, once the clock, the topology and the lock
 * exist and before any other thread can see the engine (lock not held). A negative errno from
 * a hook fails the creation with that errno; the engine is freed with its extensions. */
struct emu_engine_hook {
	int order; /* the registering layer's rank: emu/hca 1, emu/net 3, emu/link 5 */
	int (*created)(struct emu_engine *e);
	struct emu_engine_hook *next; /* the engine's */
};
void emu_engine_on_create(struct emu_engine_hook *h);

/* The fabric's wire runs in another process (rdmaemud, which writes the captures): engines
 * created while this holds open no capture files ($RDMAEMU_PCAP). The link layer sets it when
 * the process attaches through the daemon and clears it when the link closes. */
void emu_engine_set_wire_remote(bool remote);

/* For tests: stops the progress thread and frees the engine (the next emu_engine_get creates a
 * new one at virtual time 0). No other thread may be using the engine. emu_process_reset()
 * calls it first (the engine refers to the attached fabric). No-op without an engine. */
void emu_engine_reset(void);

/* Enter / leave the engine. lock registers the calling thread (RUNNING). unlock first runs
 * everything due at the current virtual time (so zero-delay work triggered by the call is
 * complete when the call returns); if the caller is still RUNNING (it did not report an empty
 * poll) it then starts a new generation, wakes the waiters (the call may have changed what they
 * wait for) and counts as activity for the quiescence path. It starts the progress thread if
 * timers are pending. Not recursive: timer and receive callbacks run with the lock held and
 * must not call lock, unlock or emu_engine_wait. */
void emu_engine_lock(struct emu_engine *e);
void emu_engine_unlock(struct emu_engine *e);
/* In real time (not following a daemon's clock): emu_engine_lock if nobody holds the lock,
 * false at once otherwise (a helper thread with other things to do does not queue behind the
 * application's calls, whose unlock would then wake it with a system call). In virtual time
 * emu_engine_lock, and true. */
bool emu_engine_trylock(struct emu_engine *e);
/* A short call that changes nothing a waiter, a timer or the clock depends on (a posted
 * receive WR: the responder takes it when a message comes). In real time (not following a
 * daemon's clock) only the mutex: no clock read, no thread state, no new generation, the
 * frames queued meanwhile delivered after the unlock as emu_engine_unlock does; in virtual
 * time the full emu_engine_lock / emu_engine_unlock (the thread's call counts there). lock
 * returns what unlock_short must be given. */
bool emu_engine_lock_short(struct emu_engine *e);
void emu_engine_unlock_short(struct emu_engine *e, bool short_lock);

/* The calling thread will not call the engine for a while (e.g. it is about to join the
 * threads that do): it stops counting as a thread that could act. It becomes known again at
 * its next emu_engine_lock. Takes the lock itself. */
void emu_engine_thread_forget(struct emu_engine *e);

/* Virtual time read under the lock without counting as an engine call: no registration, no
 * activity (an observer spinning on it does not hold back the quiescence path). */
uint64_t emu_engine_peek_now(struct emu_engine *e);

/* ---- with the engine lock held ---- */

struct emu_clock *emu_engine_clock(struct emu_engine *e);
struct emu_topology *emu_engine_topology(struct emu_engine *e);
const struct emu_fabric *emu_engine_fabric(const struct emu_engine *e);
uint64_t emu_engine_now(const struct emu_engine *e);

/* Fires every timer and delivers every frame due at the current virtual time, repeatedly,
 * until nothing is due now. Returns the number of callbacks run, or -ELOOP (after printing a
 * diagnostic) when more than EMU_ENGINE_STEP_LIMIT were due at this instant. */
long emu_engine_run_now(struct emu_engine *e);

/* What arrives at a host port goes to the receivers registered with emu/hca/engine_rx.h, whose
 * demultiplexer is the topology's receiver of every host port and the engine's input: where
 * frames that reach the process from outside (emu_engine_post_frame, the link's shared-memory
 * rings) go. The input gets host port endpoint ep's frame at virtual instant now; the
 * demultiplexer sets it when the engine is created. Lock held. */
typedef void emu_engine_input_fn(void *ctx, int ep, const uint8_t *frame, size_t len,
				 uint64_t now);
void emu_engine_set_input(struct emu_engine *e, emu_engine_input_fn *fn, void *ctx);
/* Hands such a frame to it (dropped without one). Lock held. */
void emu_engine_deliver(struct emu_engine *e, int ep, const uint8_t *frame, size_t len,
			uint64_t now);
/* Sends a frame from that port to its link peer: 0, -ENOENT (no such port), or the error of
 * emu_wire_send (-ENOTCONN, -EMSGSIZE, -EINVAL, -ENOMEM). */
int emu_engine_port_send(struct emu_engine *e, size_t host, size_t dev, unsigned port,
			 const void *frame, size_t len);
/* The same with the frame written in place (emu_wire_send_buf): room for len bytes in a
 * packet of the wire's, NULL when that port's frames do not go through this process's wire
 * (rdmaemud carries them, no such port, not connected, no memory: then build the frame
 * elsewhere and use emu_engine_port_send); commit sends the len bytes written there as
 * emu_engine_port_send does (built: emu_wire_send_commit's), abort gives the room back
 * unsent. Lock held throughout. */
void *emu_engine_port_send_buf(struct emu_engine *e, size_t host, size_t dev, unsigned port,
			       size_t len);
int emu_engine_port_send_commit(struct emu_engine *e, size_t host, size_t dev, unsigned port,
				void *buf, size_t len, bool built);
void emu_engine_port_send_abort(struct emu_engine *e, void *buf);
/* The port counters (emu_wire_port_counters) of a frame that port sent (rx false) or received
 * (rx true) without crossing the engine's wire or its link to rdmaemud: the HCA's loopback.
 * Lock held. Frames through emu_engine_port_send, emu_engine_deliver and the wire are counted
 * where they pass. */
void emu_engine_port_count(struct emu_engine *e, size_t host, size_t dev, unsigned port, bool rx,
			   const uint8_t *frame, size_t len);
/* A frame that port received and dropped as malformed (PortRcvErrors). Lock held. */
void emu_engine_port_count_rcv_error(struct emu_engine *e, size_t host, size_t dev,
				     unsigned port);
/* The same with a frame described, not built (emu_wire_send_lazy): frames to another process
 * (real-time mode) are built here. */
int emu_engine_port_send_lazy(struct emu_engine *e, size_t host, size_t dev, unsigned port,
			      const struct emu_wire_lazy *ops, const void *obj, size_t objlen,
			      size_t len);

/* Blocks until done(arg) holds, evaluating it with the lock held (the lock is released while
 * sleeping). `what` names the wait in diagnostics ("rdma_get_cm_event", ...). timeout_ns is
 * virtual, relative to now (EMU_ENGINE_FOREVER: none; 0: look once, after running what is due).
 * Returns 0 (done), ETIMEDOUT (the virtual clock reached now + timeout_ns: emu_engine_now()
 * is exactly that instant when no later timer fired), EDEADLK (nothing can ever make done()
 * true; a diagnostic naming `what` went to stderr) or ELOOP (runaway timers at one instant).
 * done() may be called any number of times and must not block or call the engine. */
int emu_engine_wait(struct emu_engine *e, const char *what, bool (*done)(void *arg), void *arg,
		    uint64_t timeout_ns);
/* The same without a timeout, for a wait the kernel makes interruptible (the rdma_cm file's
 * read): a signal whose handler was installed without SA_RESTART ends it with EINTR; with
 * SA_RESTART, or without a handler, it goes on, as the kernel restarts the call. */
int emu_engine_wait_interruptible(struct emu_engine *e, const char *what,
				  bool (*done)(void *arg), void *arg);
/* How an interruptible wait learns which signal handlers ran during it: the time layer counts
 * the program's handlers, all and those without SA_RESTART, per thread (false: it cannot).
 * With one, the wait's EINTR is exact; without, it follows emu_signal_restarts. */
typedef bool emu_engine_signal_counter_fn(uint64_t *handled, uint64_t *norestart);
void emu_engine_set_signal_counter(emu_engine_signal_counter_fn *fn);
/* After a system call failed with EINTR: would the kernel have restarted an interruptible
 * wait of the same thread? True when every caught signal has SA_RESTART (the signal that came
 * cannot be named afterwards; a mix of handlers counts as not restarting). */
bool emu_signal_restarts(void);

/* The calling thread polled (CQ, event queue) and found nothing: it counts as settled until
 * its next emu_engine_lock. If that makes every known thread settled, virtual time advances
 * to the next timer now (rule 1), so a single-threaded busy-poll loop runs timers in order
 * without wall time. Otherwise, when the quiescence interval has passed since the last call
 * that ended RUNNING (and every waiter has looked), it applies rule (2) itself rather than
 * leave it to the progress thread, which a busy poller could starve of the mutex. Returns
 * true when it advanced time. */
/* Engine lock held (between the poll's emu_engine_lock and emu_engine_unlock). */
bool emu_engine_note_idle(struct emu_engine *e);

/* Quiescence interval of the progress thread, real ns (0: never advance by quiescence).
 * The initial value comes from $RDMAEMU_QUIESCE_US. */
void emu_engine_set_quiesce_ns(struct emu_engine *e, uint64_t ns);

/* Advances virtual time by delta, firing the timers due meanwhile in order (the control API's
 * rdmaemu_ctl_advance_ns). 0 or -ELOOP. */
int emu_engine_advance(struct emu_engine *e, uint64_t delta_ns);

/* ---- waits of the program's own (the time layer, emu/sim/apptime.h): a thread blocked in
 * the kernel in its own poll(), sleep, condition wait... with a deadline on the virtual clock.
 * Such a thread is BLOCKED: it counts as settled for rules (1) and (4) while the kernel has it
 * asleep (/proc/self/task/TID/stat says 'S'), and its deadline is a clock timer, so neither
 * rule moves time past it before the thread has run there. Rule (1) for BLOCKED threads is
 * also applied by the progress thread (a program alone in its own poll() has no waiter to
 * apply it). */

/* Lock held. The calling thread is about to block in a wait of its own until `deadline`
 * (virtual, absolute; EMU_ENGINE_FOREVER: none). At the deadline the engine writes 1 to
 * wakefd (an eventfd the wait includes; -1: none) and broadcasts cond (the condition variable
 * the thread waits on; NULL: none). `what` names the wait in diagnostics. 0, or -EBUSY when
 * the thread is already in such a wait (a signal handler's wait inside it: the caller
 * waits in real time). */
int emu_engine_appwait_begin(struct emu_engine *e, const char *what, uint64_t deadline,
			     int wakefd, pthread_cond_t *cond);
/* Lock held, after emu_engine_appwait_begin: the wait is a poll on fds[0..n) (the first
 * EMU_ENGINE_APPWAIT_FDS of them are kept). While one of them is ready the thread counts as
 * waking, not asleep: time does not move past an instant whose event the thread has not run
 * at yet. */
#define EMU_ENGINE_APPWAIT_FDS 16
void emu_engine_appwait_fds(struct emu_engine *e, const struct pollfd *fds, size_t n);
/* WITHOUT the lock, as soon as the real wait returned (before taking the lock): the thread is
 * awake, so no rule may treat it as asleep while it comes back. */
void emu_engine_appwait_woken(struct emu_engine *e);
/* Lock held (emu_engine_lock ends the BLOCKED state). Whether the deadline came. */
bool emu_engine_appwait_end(struct emu_engine *e);

/* The calling thread keeps reading the program's clock at one virtual instant, calling nothing
 * else: it waits for time to pass, in a busy loop. It counts as idle (an empty poll); when
 * every thread is settled, time moves to the next timer, or by quantum_ns when that comes
 * first (time passes for a program that waits for it, timers or not). Takes the lock. 0 or
 * ELOOP. */
int emu_engine_note_clock_spin(struct emu_engine *e, uint64_t quantum_ns);

/* Lock held. Time stays still from emu_engine_hold until the matching emu_engine_release: the
 * calling thread is at work the engine cannot see, whose outcome comes without time passing
 * (a command the time authority answers at once, a child process the program waits for).
 * Holds nest and may be taken by any thread. */
void emu_engine_hold(struct emu_engine *e);
void emu_engine_release(struct emu_engine *e);

/* Lock held (a timer callback): sends signal sig to the process from the progress thread, as
 * the kernel sends an alarm's SIGALRM; time does not move until it has been sent. */
void emu_engine_raise(struct emu_engine *e, int sig);

/* The engine if one exists, without creating it. */
struct emu_engine *emu_engine_current(void);
/* Virtual time read without the lock (a torn read is impossible: one aligned 64-bit load). For
 * the program's clock, which may be read in a signal handler. */
uint64_t emu_engine_now_relaxed(const struct emu_engine *e);

/* ---- real-time mode (docs/engine.md, "Real time"): a process attached through rdmaemud, and
 * the daemon itself. Virtual time follows CLOCK_MONOTONIC from the instant of the switch on:
 * every lock, unlock and wait moves the clock to the real now and fires what fell due; the
 * progress thread sleeps until the next deadline and fires it; rules (1)-(3) are off (frames
 * may arrive from other processes at any time, so nothing may jump ahead or give up). */

/* Where port sends go instead of the wire (NULL: the wire). `ep` is the port's topology
 * endpoint. Returns 0 or a negative errno, as emu_engine_port_send. Lock held. */
typedef int emu_engine_tx_fn(void *ctx, int ep, size_t host, size_t dev, unsigned port,
			     const void *frame, size_t len);
/* Lock held. Switches the engine to real time for good; tx as above. */
void emu_engine_set_realtime(struct emu_engine *e, emu_engine_tx_fn *tx, void *tx_ctx);
bool emu_engine_is_realtime(const struct emu_engine *e);
/* Without the lock: the progress thread could not be started (and is tried again): a wait
 * must then wake now and then to let the next try happen. */
bool emu_engine_progress_missing(const struct emu_engine *e);
/* From any thread, WITHOUT the lock: hands a frame that arrived from outside the process at
 * topology endpoint `ep` (a host port) to that port's receivers, as if the wire had delivered
 * it. Takes ownership of buf (malloc'd). The frame goes to an inbox that every lock and unlock
 * delivers; the poster then takes the lock itself to deliver it (it blocks on the lock, so no
 * thread may hold the engine lock while waiting for a poster). */
void emu_engine_post_frame(struct emu_engine *e, int ep, void *buf, size_t len);
/* The same in two halves, for a receiver that must never block on the engine lock (the
 * daemon link's receive thread: a holder may be blocked sending to the daemon, which must
 * be able to send to us meanwhile). queue_frame only puts the frame in the inbox;
 * try_deliver delivers what is there if the lock is free (a holder delivers it on its way
 * out otherwise) and returns whether the inbox is empty. A receiver that leaves frames
 * there must try again soon (a holder that went to sleep in a wait does not look; its wait
 * releases the lock, so the next try succeeds). */
void emu_engine_queue_frame(struct emu_engine *e, int ep, void *buf, size_t len);
bool emu_engine_try_deliver(struct emu_engine *e);
bool emu_engine_inbox_pending(struct emu_engine *e);

/* ---- follower mode (docs/engine.md, "Following a time authority"): a process attached to
 * rdmaemud in virtual time, and the daemon itself. The clock is virtual and moves only when
 * the authority says (emu_engine_follow_advance: everything due up to T runs, never
 * backwards). Rules (1) and (2) do not move it: when the authority has asked (a query) and the
 * process is idle by either rule's condition, the progress thread tells the idle hook the
 * next deadline instead. No EDEADLK (another process may act). Frames from outside, the
 * queries and the advances go through the inbox, in their order. */

/* Lock held: the process is idle after the query `token`; next_deadline is its earliest
 * timer (EMU_ENGINE_FOREVER: none). Called from the progress thread, once per query. */
typedef void emu_engine_idle_fn(void *ctx, uint64_t token, uint64_t next_deadline);
/* Lock held. Switches the engine to follower mode for good; tx as emu_engine_set_realtime's,
 * idle NULL for an authority following itself (the daemon: it advances its own engine). */
void emu_engine_set_follower(struct emu_engine *e, emu_engine_tx_fn *tx, void *tx_ctx,
			     emu_engine_idle_fn *idle, void *idle_ctx);
bool emu_engine_is_follower(const struct emu_engine *e);
/* Without the lock (the link's receive thread), in order with emu_engine_queue_frame: the
 * authority asks whether the process is idle; the authority moves the clock to t. */
void emu_engine_queue_query(struct emu_engine *e, uint64_t token);
void emu_engine_queue_advance(struct emu_engine *e, uint64_t t);
/* Lock held: runs everything due up to t and leaves the clock at t (nothing if t is not
 * ahead). 0 or -ELOOP. */
int emu_engine_follow_advance(struct emu_engine *e, uint64_t t);
/* Without the lock: delivers what the inbox holds now (frames, advances), waiting for a
 * holder that is delivering it. */
void emu_engine_follow_sync(struct emu_engine *e);
/* Lock held: the earliest pending timer. */
bool emu_engine_next_deadline(struct emu_engine *e, uint64_t *t);
/* What the authority sent before now on other channels (an rdma_cm event on its file's
 * socket) may wake a program before the advance that came with it is applied: the link
 * registers how to wait for that (once, before any engine follows), and a wait of the
 * program's own that an fd ended calls emu_engine_follow_outside (no lock held; a no-op
 * unless the engine follows). */
typedef void emu_engine_outside_fn(void);
void emu_engine_set_follow_outside(emu_engine_outside_fn *fn);
void emu_engine_follow_outside(struct emu_engine *e);

/* ---- fds the application sees (completion channels, CM event channel, async fd) ----
 * eventfds, blocking like the kernel's channel fds until the application sets O_NONBLOCK.
 * The engine never reads them to wait: blocking library calls wait in emu_engine_wait; an
 * application blocked in read/poll/epoll on one is woken when a callback (run by a library
 * call, rule 1 or the progress thread) signals it. Callers keep their own "readable" state
 * and keep the fd in step with it. */

/* A new eventfd (EFD_CLOEXEC, blocking, counter 0): the fd, or -1 with errno. */
int emu_engine_eventfd_new(void);
/* Makes the fd readable (adds 1 to its counter). 0 or -errno. */
int emu_engine_fd_signal(int fd);
/* Makes the fd not readable (reads the counter back to 0 if it is readable, without
 * blocking). 0 or -errno. An application reading the fd itself at the same time could race
 * with this (rdma-core's own libraries are the only readers of these fds in practice). */
int emu_engine_fd_clear(int fd);

#endif
