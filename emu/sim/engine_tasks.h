/* The process's threads the engine has not met (docs/engine.md "Threads not met yet").
 *
 * A thread becomes known to the engine at its first call. Before that it may be about to
 * call (a thread the application has just started to connect) or never (a logger blocked in
 * read()). The engine asks before it concludes that every thread is settled: a thread it has
 * not met that is runnable, or that used CPU time lately, or that has not been seen asleep for
 * the grace period, counts as busy. Found in /proc/self/task; the count in /proc/self/stat
 * makes the usual case (no such thread) one read. */
#ifndef RDMAEMU_EMU_SIM_ENGINE_TASKS_H
#define RDMAEMU_EMU_SIM_ENGINE_TASKS_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define EMU_TASKS_TRACK 64

/* The name prefix of the emulator's own threads (pthread_setname_np): never counted. */
#define EMU_TASKS_OURS "rdmaemu-"

struct emu_task_seen {
	pid_t tid;
	uint64_t cpu_ns;   /* its CPU time when last sampled */
	uint64_t quiet_ns; /* real time since which it was seen asleep with that CPU time */
	uint64_t mark;     /* the scan that last saw it */
};

struct emu_tasks {
	struct emu_task_seen seen[EMU_TASKS_TRACK];
	uint64_t scan;
};

/* How long a thread the engine has not met must be seen asleep, without using CPU, before it
 * counts as blocked outside the library for good. */
#define EMU_TASKS_GRACE_NS (50ull * 1000 * 1000)

/* The number of threads of this process that are not in known[] and not settled by the rule
 * above, at real time now_ns. */
size_t emu_tasks_unmet_busy(struct emu_tasks *t, const pid_t *known, size_t nknown,
			    uint64_t now_ns);

/* The number of this process's descendants (children, theirs, ...) that are at work by the same
 * rule: runnable, or asleep for less than the grace period with the same CPU time. A
 * descendant running the emulator's threads is a process of the fabric on its own and is
 * not counted; one past the kernel's per-thread child lists (CONFIG_PROC_CHILDREN) is not
 * seen (engine_children.c). */
size_t emu_tasks_children_busy(struct emu_tasks *t, uint64_t now_ns);
/* The record of task or process id in t (a new one when it has none), or NULL when t is
 * full. */
struct emu_task_seen *emu_tasks_slot(struct emu_tasks *t, pid_t id);

/* pthread_create for one of the emulator's own threads: named EMU_TASKS_OURS + name (at most
 * 7 more characters) from its first instant. */
/* Whether thread tid of this process blocks signal sig (its SigBlk in /proc). */
bool emu_tasks_sig_blocked(pid_t tid, int sig);

int emu_tasks_create_ours(pthread_t *th, const char *name, void *(*fn)(void *), void *arg);

#endif
