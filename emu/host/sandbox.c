/* Host sandboxes (emu/host/sandbox.h): finding, making and joining a host's sandbox, and the
 * keeper that holds it. */
#define _GNU_SOURCE
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "emu/host/sandbox.h"
#include "emu/host/sandbox_fs.h"
#include "emu/host/sandbox_net.h"
#include "emu/link/link.h"
#include "emu/link/proto.h"
#include "emu/sim/fabric.h"

/* How often the keeper looks for the processes of its sandbox. It leaves after two looks
 * that found none, the second with the lock held: a run joins with the lock held, so a
 * joining process is either in by then or will find no keeper and make a new sandbox. */
#define KEEPER_TICK_MS 250

struct sandbox {
	const struct emu_sandbox_opts *o;
	struct emu_fabric *f;
	struct emu_host *h; /* the keeper marks the devices rdmaemud removed */
	char dir[PATH_MAX];	    /* <runtime>/hosts */
	char state[PATH_MAX + 80]; /* <dir>/<node>.pid */
	char lock[PATH_MAX + 80];  /* <dir>/<node>.lock */
};

static void say(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void say(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

static int write_maps(void)
{
	const char *files[] = { "/proc/self/setgroups", "/proc/self/uid_map", "/proc/self/gid_map" };
	char vals[3][32];

	snprintf(vals[0], sizeof(vals[0]), "deny\n");
	snprintf(vals[1], sizeof(vals[1]), "%u %u 1\n", (unsigned)getuid(), (unsigned)getuid());
	snprintf(vals[2], sizeof(vals[2]), "%u %u 1\n", (unsigned)getgid(), (unsigned)getgid());
	for (int i = 0; i < 3; i++) {
		int fd = open(files[i], O_WRONLY | O_CLOEXEC);
		ssize_t n;

		if (fd < 0)
			return -errno;
		n = write(fd, vals[i], strlen(vals[i]));
		close(fd);
		if (n < 0)
			return -errno;
	}
	return 0;
}

static ino_t netns_ino(pid_t pid)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d/ns/net", (int)pid);
	return stat(path, &st) ? 0 : st.st_ino;
}

/* rdmaemud removed device `dev` of host `host` (`rdma link delete`): gone from the model the
 * keeper writes the files from. */
static void device_gone(const struct sandbox *s, unsigned host, unsigned dev)
{
	if (host == (unsigned)(s->h - s->f->hosts) && dev < s->h->ndevices)
		s->h->devices[dev].removed = true;
}

/* A message of the daemon to the keeper: DEVICE_GONE brings the files up to date. false when
 * the daemon closed the connection (its taps went with it). */
static bool daemon_msg(const struct sandbox *s, int dconn)
{
	struct emu_dmsg h;
	char err[256];
	ssize_t n = recv(dconn, &h, sizeof(h), MSG_DONTWAIT);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return true;
	if (n < (ssize_t)sizeof(h))
		return false;
	if (h.type == EMU_DMSG_DEVICE_GONE) {
		device_gone(s, h.arg >> 16, h.arg & 0xffff);
		if (emu_sandbox_fs_update(s->h, err, sizeof(err)))
			fprintf(stderr, "rdmaemu-host %s: %s\n", s->h->name, err);
	}
	return true;
}

/* Hands tap fd to the daemon on connection c as netdev `name`: 0 or the daemon's errno. */
static int tap_hand(int c, const struct sandbox *s, const char *name, int fd)
{
	struct {
		struct emu_dmsg h;
		struct emu_dmsg_tap t;
	} m;
	union {
		struct cmsghdr c;
		char b[CMSG_SPACE(sizeof(int))];
	} cm = { 0 };
	struct iovec iov = { &m, sizeof(m) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cm.b,
			      .msg_controllen = sizeof(cm.b) };
	struct cmsghdr *ch = CMSG_FIRSTHDR(&msg);
	struct {
		struct emu_dmsg h;
		struct emu_dmsg_tap_ans a;
	} ans;
	ssize_t n;

	memset(&m, 0, sizeof(m));
	m.h = (struct emu_dmsg){ EMU_DPROTO_MAGIC, EMU_DPROTO_VERSION, EMU_DMSG_TAP_ATTACH, 0, 0 };
	snprintf(m.t.node, sizeof(m.t.node), "%s", s->h->name);
	snprintf(m.t.netdev, sizeof(m.t.netdev), "%s", name);
	snprintf(m.t.fabric, sizeof(m.t.fabric), "%s", s->o->fabric ? s->o->fabric : "");
	ch->cmsg_level = SOL_SOCKET;
	ch->cmsg_type = SCM_RIGHTS;
	ch->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(ch), &fd, sizeof(int));
	if (sendmsg(c, &msg, MSG_NOSIGNAL) < 0)
		return errno;
	n = recv(c, &ans, sizeof(ans), 0);
	if (n < (ssize_t)sizeof(ans.h) || ans.h.type != EMU_DMSG_TAP_ATTACH)
		return EPROTO;
	if (n == (ssize_t)sizeof(ans))
		for (uint32_t i = 0; i < ans.a.devrm_gen && i < EMU_DPROTO_MAX_REMOVED; i++)
			device_gone(s, ans.a.removed[i].host, ans.a.removed[i].dev);
	return (int)ans.h.arg;
}

/* Whether a process other than the keeper is in the network namespace `ino`. */
static bool has_members(ino_t ino)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	pid_t self = getpid();
	bool found = false;

	if (!d)
		return true; /* cannot tell: stay */
	while (!found && (de = readdir(d))) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);

		if (*end || pid <= 0 || pid == self)
			continue;
		found = netns_ino((pid_t)pid) == ino;
	}
	closedir(d);
	return found;
}

/* The keeper's life after setting up: until the sandbox has no process left or the daemon,
 * which holds its taps, goes away. The state file goes first, under the lock, so that a run
 * joining now makes a new sandbox instead. */
static void keeper_loop(const struct sandbox *s, int dconn)
{
	ino_t ino = netns_ino(getpid());
	unsigned idle = 0;

	for (;;) {
		struct pollfd p = { .fd = dconn, .events = POLLIN };
		int lk;

		if (poll(&p, 1, KEEPER_TICK_MS) > 0 && !daemon_msg(s, dconn))
			break; /* the daemon closed the connection: its taps are gone */
		if (has_members(ino)) {
			idle = 0;
			continue;
		}
		if (++idle < 2)
			continue;
		lk = open(s->lock, O_RDWR | O_CLOEXEC);
		if (lk >= 0)
			flock(lk, LOCK_EX);
		if (!has_members(ino)) {
			unlink(s->state);
			return;
		}
		if (lk >= 0)
			close(lk);
		idle = 0;
	}
	unlink(s->state);
}

/* Enters new namespaces; tells EMU_SANDBOX_NOT_PERMITTED from other failures. */
static enum emu_sandbox_result keeper_unshare(char *err, size_t errlen)
{
	int flags = CLONE_NEWNET | CLONE_NEWNS;
	bool user = geteuid() != 0;
	int rc;

	if (user)
		flags |= CLONE_NEWUSER;
	if (unshare(flags) < 0) {
		say(err, errlen, "unshare(%s): %s", user ? "user, network, mount"
							       : "network, mount",
			 strerror(errno));
		return errno == EPERM || errno == EINVAL || errno == ENOSPC || errno == EUSERS
			       ? EMU_SANDBOX_NOT_PERMITTED
			       : EMU_SANDBOX_FAILED;
	}
	if (user && (rc = write_maps())) {
		say(err, errlen, "user namespace maps: %s", strerror(-rc));
		return EMU_SANDBOX_NOT_PERMITTED;
	}
	return EMU_SANDBOX_INSIDE;
}

/* Everything the keeper makes, then the state file; EMU_SANDBOX_INSIDE with *dconn the
 * connection holding the taps. */
static enum emu_sandbox_result keeper_setup(const struct sandbox *s, int *dconn, char *err,
					     size_t errlen)
{
	enum emu_sandbox_result r = keeper_unshare(err, errlen);
	int taps[64], rc;
	char tmp[PATH_MAX + 96];
	FILE *f;

	if (r != EMU_SANDBOX_INSIDE)
		return r;
	if (s->h->nnetdevs > 64) {
		say(err, errlen, "host %s has more than 64 netdevs", s->h->name);
		return EMU_SANDBOX_FAILED;
	}
	rc = emu_sandbox_net_setup(s->h, taps, err, errlen);
	if (rc == -EPERM)
		return EMU_SANDBOX_NOT_PERMITTED;
	if (rc)
		return EMU_SANDBOX_FAILED;
	*dconn = emu_link_connect(s->o->sock);
	if (*dconn < 0) {
		say(err, errlen, "rdmaemud on %s: %s", s->o->sock, strerror(errno));
		return EMU_SANDBOX_FAILED;
	}
	for (size_t i = 0; i < s->h->nnetdevs; i++) {
		if (taps[i] < 0)
			continue;
		rc = tap_hand(*dconn, s, s->h->netdevs[i].name, taps[i]);
		if (rc == ENODEV)
			continue; /* no port on the wire: the keeper's fd keeps the interface */
		close(taps[i]);
		if (rc) {
			say(err, errlen, "rdmaemud would not carry %s: %s",
				 s->h->netdevs[i].name, strerror(rc));
			return EMU_SANDBOX_FAILED;
		}
	}
	if (emu_sandbox_fs_setup(s->h, err, errlen))
		/* a kernel that refuses these mounts in a namespace refuses the sandbox */
		return errno == EPERM || errno == EACCES ? EMU_SANDBOX_NOT_PERMITTED
							 : EMU_SANDBOX_FAILED;
	emu_sandbox_net_settle(s->h);
	snprintf(tmp, sizeof(tmp), "%s.new", s->state);
	f = fopen(tmp, "w");
	if (!f || fprintf(f, "%d %lu\n", (int)getpid(), (unsigned long)netns_ino(getpid())) < 0 ||
	    fclose(f) || rename(tmp, s->state)) {
		say(err, errlen, "%s: %s", s->state, strerror(errno));
		return EMU_SANDBOX_FAILED;
	}
	return EMU_SANDBOX_INSIDE;
}

/* Closes every descriptor above 2 but `keep`: the keeper must not hold the caller's lock,
 * pipes or sockets (a shell waiting for a pipe's end would wait for the sandbox). */
static void close_others(int keep)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int dfd = d ? dirfd(d) : -1;

	if (!d)
		return;
	while ((de = readdir(d))) {
		int fd = atoi(de->d_name);

		if (fd > 2 && fd != keep && fd != dfd)
			close(fd);
	}
	closedir(d);
}

/* The keeper process: a grandchild in a session of its own, reporting on `rep` one byte (the
 * result) and the error text. Never returns. */
static void keeper_main(const struct sandbox *s, int rep)
{
	char err[512] = "", log[PATH_MAX + 80];
	enum emu_sandbox_result r;
	int dconn = -1, fd;
	unsigned char code;

	prctl(PR_SET_NAME, "rdmaemu-host");
	prctl(PR_SET_PDEATHSIG, 0);
	signal(SIGINT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	snprintf(log, sizeof(log), "%s/%s.log", s->dir, s->h->name);
	fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (fd >= 0)
		dup2(fd, 0);
	fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd >= 0) {
		dup2(fd, 1);
		dup2(fd, 2);
	}
	close_others(rep);
	r = keeper_setup(s, &dconn, err, sizeof(err));
	code = (unsigned char)r;
	if (write(rep, &code, 1) != 1 || (r != EMU_SANDBOX_INSIDE && write(rep, err, strlen(err)) < 0))
		_exit(1);
	close(rep);
	if (r != EMU_SANDBOX_INSIDE) {
		fprintf(stderr, "rdmaemu-host %s: %s\n", s->h->name, err);
		_exit(1);
	}
	keeper_loop(s, dconn);
	_exit(0);
}

/* Makes the keeper; its pid, or -1 with err filled and *r the result. */
static pid_t keeper_start(const struct sandbox *s, enum emu_sandbox_result *r, char *err,
			  size_t errlen)
{
	int p[2];
	pid_t pid;
	unsigned char code;
	ssize_t n;
	char state[64];
	FILE *f;

	*r = EMU_SANDBOX_FAILED;
	if (pipe2(p, O_CLOEXEC) < 0) {
		say(err, errlen, "pipe: %s", strerror(errno));
		return -1;
	}
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		if (setsid() < 0 || fork() != 0)
			_exit(0);
		keeper_main(s, p[1]);
	}
	close(p[1]);
	if (pid > 0)
		waitpid(pid, NULL, 0);
	n = read(p[0], &code, 1);
	if (n == 1 && code != EMU_SANDBOX_INSIDE) {
		n = read(p[0], err, errlen - 1);
		err[n > 0 ? n : 0] = 0;
		*r = (enum emu_sandbox_result)code;
	} else if (n != 1) {
		say(err, errlen, "the sandbox of %s did not come up (see %s/%s.log)",
			 s->h->name, s->dir, s->h->name);
	}
	close(p[0]);
	if (n != 1 || code != EMU_SANDBOX_INSIDE)
		return -1;
	f = fopen(s->state, "r");
	if (!f || !fgets(state, sizeof(state), f) || sscanf(state, "%d", &pid) != 1) {
		say(err, errlen, "%s: unreadable", s->state);
		pid = -1;
	}
	if (f)
		fclose(f);
	*r = EMU_SANDBOX_INSIDE;
	return pid;
}

/* The running keeper of the host from its state file, or 0. */
static pid_t keeper_find(const struct sandbox *s)
{
	FILE *f = fopen(s->state, "r");
	int pid = 0;
	unsigned long ino = 0;

	if (!f)
		return 0;
	if (fscanf(f, "%d %lu", &pid, &ino) != 2 || pid <= 0 || !ino ||
	    netns_ino((pid_t)pid) != (ino_t)ino) {
		pid = 0; /* a keeper that died with the machine's last boot, or was killed */
		unlink(s->state);
	}
	fclose(f);
	return (pid_t)pid;
}

/* Moves the caller into the keeper's namespaces: user (when the keeper made one), network,
 * mount; then back to its working directory. */
static int join(pid_t keeper, char *err, size_t errlen)
{
	static const struct {
		const char *ns;
		int type;
	} order[] = { { "user", CLONE_NEWUSER }, { "net", CLONE_NEWNET }, { "mnt", CLONE_NEWNS } };
	char cwd[PATH_MAX], path[64];
	struct stat mine, theirs;
	bool have_cwd = getcwd(cwd, sizeof(cwd)) != NULL;

	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		int fd;

		snprintf(path, sizeof(path), "/proc/%d/ns/%s", (int)keeper, order[i].ns);
		if (order[i].type == CLONE_NEWUSER) {
			char self[64];

			snprintf(self, sizeof(self), "/proc/self/ns/%s", order[i].ns);
			if (!stat(path, &theirs) && !stat(self, &mine) &&
			    theirs.st_ino == mine.st_ino)
				continue;
		}
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0 || setns(fd, order[i].type) < 0) {
			say(err, errlen, "joining %s: %s", path, strerror(errno));
			if (fd >= 0)
				close(fd);
			return -1;
		}
		close(fd);
	}
	if (!have_cwd || chdir(cwd) < 0) {
		if (chdir("/") < 0) {
			/* / always exists */
		}
	}
	return 0;
}

static struct emu_host *host_of(const struct emu_fabric *f, const char *node)
{
	if (!node || !*node)
		return f->nhosts ? &f->hosts[0] : NULL;
	return emu_fabric_find_host(f, node);
}

enum emu_sandbox_result emu_sandbox_enter(const struct emu_sandbox_opts *o, char *err,
					  size_t errlen)
{
	struct sandbox s = { .o = o };
	struct emu_fabric *f;
	enum emu_sandbox_result r = EMU_SANDBOX_FAILED;
	struct emu_error ferr = { 0 };
	int lk;
	pid_t keeper;

	f = s.f = o->fabric ? emu_fabric_load(o->fabric, &ferr) : emu_fabric_builtin();
	if (!f) {
		say(err, errlen, "%s: %s", o->fabric ? o->fabric : "(built-in)", ferr.msg);
		return EMU_SANDBOX_FAILED;
	}
	s.h = host_of(f, o->node);
	if (!s.h) {
		say(err, errlen, "no host '%s' in fabric %s", o->node,
			 o->fabric ? o->fabric : "(built-in)");
		goto out;
	}
	snprintf(s.dir, sizeof(s.dir), "%s/hosts", o->runtime_dir);
	if (mkdir(s.dir, 0700) < 0 && errno != EEXIST) {
		say(err, errlen, "%s: %s", s.dir, strerror(errno));
		goto out;
	}
	snprintf(s.state, sizeof(s.state), "%s/%s.pid", s.dir, s.h->name);
	snprintf(s.lock, sizeof(s.lock), "%s/%s.lock", s.dir, s.h->name);
	lk = open(s.lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (lk < 0 || flock(lk, LOCK_EX) < 0) {
		say(err, errlen, "%s: %s", s.lock, strerror(errno));
		goto out;
	}
	keeper = keeper_find(&s);
	if (!keeper)
		keeper = keeper_start(&s, &r, err, errlen);
	if (keeper > 0)
		r = join(keeper, err, errlen) ? EMU_SANDBOX_FAILED : EMU_SANDBOX_INSIDE;
	close(lk);
out:
	emu_fabric_free(f);
	return r;
}
