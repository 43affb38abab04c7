/* The program's child processes as the time rules see them (engine_tasks.h, docs/time.md
 * "Child processes"): a command the program runs (system(), popen(), fork and exec) acts at
 * the machine's pace, and what it does (a link taken down, a file written, a message to
 * the fabric) must land at the virtual instant the program started it, not after time has
 * moved on under a parent that merely waits for it. */
#include "config.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

#include "emu/sim/engine_tasks.h"

/* How deep the walk goes below the process (system(): sh, then the command), and how many
 * processes it looks at, at most. */
#define CHILD_DEPTH 6
#define CHILD_MAX 64

/* The first line of a small /proc file into buf, or false. */
static bool read_small(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	size_t n;

	if (!f)
		return false;
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = 0;
	return n > 0;
}

/* Process pid's state letter ('Z' a zombie; 0: gone or unreadable). */
static char proc_state(pid_t pid)
{
	char path[64], buf[512], *p;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (!read_small(path, buf, sizeof(buf)) || !(p = strrchr(buf, ')')) || p[1] != ' ')
		return 0;
	return p[2] == 'X' ? 0 : p[2];
}

/* The thread directory of process pid (0: this one). */
static DIR *tasks_open(pid_t pid)
{
	char path[64];

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	else
		snprintf(path, sizeof(path), "/proc/self/task");
	return opendir(path);
}

/* File `file` of thread d (an entry of tasks_open(pid); false for "." and ".."). */
static bool task_read(pid_t pid, const struct dirent *d, const char *file, char *buf,
		      size_t len)
{
	char path[96];

	if (d->d_name[0] < '0' || d->d_name[0] > '9')
		return false;
	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/task/%.16s/%s", (int)pid, d->d_name, file);
	else
		snprintf(path, sizeof(path), "/proc/self/task/%.16s/%s", d->d_name, file);
	return read_small(path, buf, len);
}

/* Whether a thread of process pid (0: this one) is inside wait4() or waitid() (its syscall
 * file's first field): woken by a child's exit, it comes back at once. */
static bool proc_in_wait(pid_t pid)
{
	char buf[64];
	struct dirent *d;
	bool in = false;
	DIR *dir = tasks_open(pid);

	if (!dir)
		return false;
	while (!in && (d = readdir(dir))) {
		long nr;

		if (!task_read(pid, d, "syscall", buf, sizeof(buf)))
			continue;
		nr = strtol(buf, NULL, 10);
		in = nr == SYS_wait4 || nr == SYS_waitid;
	}
	closedir(dir);
	return in;
}

/* Process pid's time on a CPU in ns (schedstat's first field, every thread of it summed by the
 * kernel for the process's own entry), or UINT64_MAX when it cannot be read. */
static uint64_t proc_cpu_ns(pid_t pid)
{
	char path[64], buf[128];

	snprintf(path, sizeof(path), "/proc/%d/schedstat", (int)pid);
	if (!read_small(path, buf, sizeof(buf)))
		return UINT64_MAX;
	return strtoull(buf, NULL, 10);
}

/* Whether one of pid's threads is the emulator's own (EMU_TASKS_OURS): a process of the fabric
 * in its own right, whose waits the time authority counts itself. */
static bool proc_is_ours(pid_t pid)
{
	char name[32];
	struct dirent *d;
	bool ours = false;
	DIR *dir = tasks_open(pid);

	if (!dir)
		return false;
	while (!ours && (d = readdir(dir)))
		ours = task_read(pid, d, "comm", name, sizeof(name)) &&
		       !strncmp(name, EMU_TASKS_OURS, strlen(EMU_TASKS_OURS));
	closedir(dir);
	return ours;
}

struct walk {
	struct emu_tasks *t;
	uint64_t now_ns;
	size_t seen, busy;
};

static void walk_children(struct walk *w, pid_t pid, int depth);

/* One child of parent (0: this process): busy while runnable or in an uninterruptible wait,
 * or when it has used CPU time since it was last seen, and for the grace period after that
 * (a command between two steps sleeps a moment: a pipe, a round trip to rdmaemud); and an
 * ended one whose parent is in waitpid() (system() waits so): the parent is about to come
 * back with what it does next, which an answer given now would not know of (a zombie
 * nobody waits for holds nothing). Then its own children. */
static void look_at(struct walk *w, pid_t parent, pid_t pid, int depth)
{
	struct emu_task_seen *s;
	uint64_t cpu;
	char st;

	if (w->seen++ >= CHILD_MAX || !(st = proc_state(pid)))
		return;
	if (st == 'Z') {
		w->busy += proc_in_wait(parent);
		return;
	}
	if (proc_is_ours(pid))
		return;
	s = emu_tasks_slot(w->t, pid);
	cpu = proc_cpu_ns(pid);
	if (!s) {
		w->busy++;
	} else {
		s->mark = w->t->scan;
		if (st == 'R' || st == 'D' || cpu != s->cpu_ns) {
			s->cpu_ns = cpu;
			s->quiet_ns = w->now_ns;
			w->busy++;
		} else if (w->now_ns - s->quiet_ns < EMU_TASKS_GRACE_NS) {
			w->busy++;
		}
	}
	if (depth < CHILD_DEPTH)
		walk_children(w, pid, depth + 1);
}

/* The children of every thread of process pid (0: this one), from the kernel's per-thread
 * lists (/proc/PID/task/TID/children). */
static void walk_children(struct walk *w, pid_t pid, int depth)
{
	char list[512];
	struct dirent *d;
	DIR *dir = tasks_open(pid);

	if (!dir)
		return;
	while ((d = readdir(dir))) {
		char *p, *end;

		if (!task_read(pid, d, "children", list, sizeof(list)))
			continue;
		for (p = list;; p = end) {
			long c = strtol(p, &end, 10);

			if (end == p || c <= 0)
				break;
			look_at(w, pid, (pid_t)c, depth);
		}
	}
	closedir(dir);
}

size_t emu_tasks_children_busy(struct emu_tasks *t, uint64_t now_ns)
{
	struct walk w = { t, now_ns, 0, 0 };

	t->scan++;
	walk_children(&w, 0, 1);
	return w.busy;
}
