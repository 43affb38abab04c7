/* The process's threads the engine has not met (engine_tasks.h). */
#include "config.h"

#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "emu/sim/engine_tasks.h"
#include "util/failcall.h"

/* /proc/self/stat's num_threads (the 20th field), or 0 when it cannot be read. */
static size_t num_threads(void)
{
	char buf[1024], *p;
	size_t n;
	FILE *f = fopen("/proc/self/stat", "re");
	int field;

	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	p = strrchr(buf, ')'); /* the command name may hold spaces and parentheses */
	if (!p)
		return 0;
	/* field 2 ends at p; fields 3.. follow, one space before each */
	for (field = 2; field < 20 && p; field++)
		p = strchr(p + 1, ' ');
	return p ? (size_t)strtoul(p + 1, NULL, 10) : 0;
}

/* The emulator's own threads (the progress thread, the link's receive and ring threads, the
 * rsocket services) carry names starting "rdmaemu-": they never make an application's call. */
static bool is_ours(pid_t tid)
{
	char path[64], name[32];
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/comm", (int)tid);
	if (!(f = fopen(path, "re")))
		return false;
	n = fread(name, 1, sizeof(name) - 1, f);
	fclose(f);
	name[n] = 0;
	return strncmp(name, EMU_TASKS_OURS, strlen(EMU_TASKS_OURS)) == 0;
}

/* The kernel's state letter of thread tid, or 0 when it is gone or going: a thread that
 * has begun to exit (PF_EXITING in the flags, the 9th field) stays listed for a moment after
 * pthread_join returned. */
#define TASK_PF_EXITING 0x4u

static char task_state(pid_t tid)
{
	char path[64], buf[512], *p, st;
	unsigned long flags;
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	if (!(f = fopen(path, "re")))
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ')
		return 0;
	st = p[2];
	/* fields 3 (state) to 9 (flags), one space before each */
	for (int field = 2; field < 9 && p; field++)
		p = strchr(p + 1, ' ');
	if (!p)
		return 0;
	flags = strtoul(p + 1, NULL, 10);
	return (flags & TASK_PF_EXITING) || st == 'Z' || st == 'X' ? 0 : st;
}

/* Thread tid's CPU time through its CPU-time clock (the kernel's clockid for a thread of the
 * calling process: CPUCLOCK_PERTHREAD | CPUCLOCK_SCHED over ~tid), or UINT64_MAX. */
static uint64_t task_cpu_ns(pid_t tid)
{
	clockid_t cid = (clockid_t)((~(unsigned)tid << 3) | 6);
	struct timespec ts;

	if (clock_gettime(cid, &ts))
		return UINT64_MAX;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static bool is_known(pid_t tid, const pid_t *known, size_t nknown)
{
	for (size_t i = 0; i < nknown; i++)
		if (known[i] == tid)
			return true;
	return false;
}

struct emu_task_seen *emu_tasks_slot(struct emu_tasks *t, pid_t tid)
{
	struct emu_task_seen *free_slot = NULL;

	for (size_t i = 0; i < EMU_TASKS_TRACK; i++) {
		if (t->seen[i].tid == tid)
			return &t->seen[i];
		if (!free_slot && (!t->seen[i].tid || t->seen[i].mark + 1 < t->scan))
			free_slot = &t->seen[i];
	}
	if (free_slot) {
		memset(free_slot, 0, sizeof(*free_slot));
		free_slot->tid = tid;
		free_slot->cpu_ns = UINT64_MAX;
	}
	return free_slot;
}

/* One thread not met: busy unless asleep with the same CPU time for the grace period. */
static bool unmet_is_busy(struct emu_tasks *t, pid_t tid, uint64_t now_ns)
{
	struct emu_task_seen *s = emu_tasks_slot(t, tid);
	char st = task_state(tid);
	uint64_t cpu;

	if (!st)
		return false; /* gone meanwhile */
	if (!s)
		return true; /* too many to follow: assume the worst */
	s->mark = t->scan;
	cpu = task_cpu_ns(tid);
	if (st == 'R' || st == 'D' || cpu != s->cpu_ns) {
		s->cpu_ns = cpu;
		s->quiet_ns = now_ns;
		return true;
	}
	return now_ns - s->quiet_ns < EMU_TASKS_GRACE_NS;
}

size_t emu_tasks_unmet_busy(struct emu_tasks *t, const pid_t *known, size_t nknown,
			    uint64_t now_ns)
{
	struct dirent *d;
	size_t busy = 0;
	DIR *dir;

	if (num_threads() <= nknown)
		return 0;
	dir = opendir("/proc/self/task");
	if (!dir)
		return 0;
	t->scan++;
	while ((d = readdir(dir))) {
		pid_t tid = (pid_t)strtol(d->d_name, NULL, 10);

		if (tid <= 0 || is_known(tid, known, nknown) || is_ours(tid))
			continue;
		if (unmet_is_busy(t, tid, now_ns))
			busy++;
	}
	closedir(dir);
	return busy;
}

int emu_tasks_create_ours(pthread_t *th, const char *name, void *(*fn)(void *), void *arg)
{
	char mine[16] = "", full[16];
	int err;

	/* A new thread starts with its creator's name: lend it ours for the clone, so that no
	 * scan ever sees the new thread under the application's name. */
	snprintf(full, sizeof(full), "%s%s", EMU_TASKS_OURS, name);
	if (pthread_getname_np(pthread_self(), mine, sizeof(mine)))
		mine[0] = 0;
	pthread_setname_np(pthread_self(), full);
	err = emu_pthread_create(th, NULL, fn, arg);
	if (mine[0])
		pthread_setname_np(pthread_self(), mine);
	return err;
}

bool emu_tasks_sig_blocked(pid_t tid, int sig)
{
	char path[64], line[128];
	unsigned long long mask = 0;
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/status", (int)tid);
	if (!(f = fopen(path, "re")))
		return false;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "SigBlk: %llx", &mask) == 1) {
			found = true;
			break;
		}
	fclose(f);
	return found && sig >= 1 && sig <= 64 && (mask >> (sig - 1)) & 1;
}
