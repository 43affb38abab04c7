/* rdmaemu-conformance: runs the conformance cases against the emulator or the system's
 * rdma-core and reports Pass / Fail / Notrun / Excluded.
 *
 * Why not cmocka here (the project's unit tests use it): a conformance case must survive the
 * implementation under test crashing or hanging (the real librdmacm crashes on several inputs,
 * spec §16 item 12), must start with an uninitialised library (librdmacm caches its device list
 * on first use), and needs four result states with reasons, per-target manifests and per-case
 * timeouts. cmocka 1.1 runs tests in one process with setjmp-based failure and has no
 * Notrun/Excluded distinction, so the suite uses a fabtests-style runner: one forked child per
 * case, the result sent back over a pipe.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fnmatch.h>
#include <getopt.h>
#include <infiniband/verbs.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "conformance/emu_fabrics.h"
#include "conformance/fakedev.h"
#include "conformance/runner.h"
#include "conformance/seed_map.h"

#define DEFAULT_TIMEOUT 10

static const struct conf_area *const areas[] = {
	&conf_area_sym, &conf_area_abi, &conf_area_str, &conf_area_init,
	&conf_area_gai, &conf_area_acm, &conf_area_cmid, &conf_area_cmbind, &conf_area_cmqp,
	&conf_area_cmroute,
	&conf_area_cmconn, &conf_area_fab,
	&conf_area_port, &conf_area_ex, &conf_area_seed, &conf_area_rs,
	&conf_area_rs_conn, &conf_area_rs_io, &conf_area_rs_ext,
};

/* ---- child side ------------------------------------------------------------------------- */

/* Records on the result pipe: a 4-byte header {type, state, len16} and len bytes of text.
 * 'S' carries the stimulus as soon as it is known (so a crash can still name it), 'R' the
 * result. */
struct rec_hdr {
	uint8_t type;
	uint8_t state;
	uint16_t len;
};

static int result_fd = -1;
static char stim[1024], note[2048], fails[4096];

static void send_rec(uint8_t type, uint8_t state, const char *text)
{
	struct rec_hdr h = { type, state, (uint16_t)strnlen(text, 8192) };
	char buf[sizeof h + 8192];

	memcpy(buf, &h, sizeof h);
	memcpy(buf + sizeof h, text, h.len);
	for (size_t off = 0, n = sizeof h + h.len; off < n;) {
		ssize_t w = write(result_fd, buf + off, n - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		off += (size_t)w;
	}
}

static void vappend(char *buf, size_t size, const char *sep, const char *fmt, va_list ap)
{
	size_t len = strlen(buf);

	if (len && sep && len < size)
		len += (size_t)snprintf(buf + len, size - len, "%s", sep);
	if (len < size)
		vsnprintf(buf + len, size - len, fmt, ap);
}

void conf_stimulus(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(stim, sizeof stim, fmt, ap);
	va_end(ap);
	send_rec('S', 0, stim);
}

void conf_note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vappend(note, sizeof note, "; ", fmt, ap);
	va_end(ap);
}

bool conf_expect(bool ok, const char *fmt, ...)
{
	va_list ap;

	if (ok)
		return true;
	va_start(ap, fmt);
	vappend(fails, sizeof fails, "; ", fmt, ap);
	va_end(ap);
	return false;
}

bool conf_expect_int(const char *what, long long got, long long want, int err)
{
	if (got == want)
		return true;
	if (got == -1)
		return conf_expect(false, "%s: got -1 (errno %s), want %lld", what,
				   conf_errno_name(err), want);
	return conf_expect(false, "%s: got %lld, want %lld", what, got, want);
}

bool conf_expect_hex(const char *what, unsigned long long got, unsigned long long want, int err)
{
	if (got == want)
		return true;
	/* -1 of an int or a long: a failed call */
	if (got == ~0ULL || got == 0xffffffffULL)
		return conf_expect(false, "%s: got -1 (errno %s), want 0x%llx", what,
				   conf_errno_name(err), want);
	return conf_expect(false, "%s: got 0x%llx, want 0x%llx", what, got, want);
}

#ifdef RDMAEMU_COVERAGE
void __gcov_dump(void); /* libgcov's, linked in by --coverage */
#endif

/* A failure sweep's child (sweep.c) runs the case body more than once: finish() called by the
 * body on the main thread then ends that run only, back in body_run(). */
static sigjmp_buf body_jmp;
static bool body_active;
static pthread_t body_thread;
static enum conf_state body_state;
static const char *final_text; /* conf_finish()'s whole result text */
bool conf_body_gave_up;

static _Noreturn void finish(enum conf_state state, const char *reason)
{
	char msg[8192];

	if (body_active && pthread_equal(pthread_self(), body_thread)) {
		body_state = state;
		if (state == CONF_NOTRUN)
			snprintf(fails, sizeof fails, "%s", reason);
		body_active = false;
		siglongjmp(body_jmp, 1);
	}
	if (final_text)
		snprintf(msg, sizeof msg, "%s", final_text);
	else if (state == CONF_NOTRUN)
		snprintf(msg, sizeof msg, "%s", reason);
	else if (state == CONF_FAIL)
		snprintf(msg, sizeof msg, "%s%s%s", stim, stim[0] ? ": " : "", fails);
	else
		snprintf(msg, sizeof msg, "%s%s%s", stim, stim[0] && note[0] ? " -> " : "", note);
	send_rec('R', (uint8_t)state, msg);
#ifdef RDMAEMU_COVERAGE
	/* the counters of every instrumented object of the process (the library under test's
	 * too) written as its gcov destructors would at exit() */
	__gcov_dump();
#endif
	/* _exit() keeps the parent's atexit handlers (and LeakSanitizer's verdict on a real
	 * library's leaks) out of the child */
	_exit(0);
}

void conf_notrun(const char *fmt, ...)
{
	char reason[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(reason, sizeof reason, fmt, ap);
	va_end(ap);
	finish(CONF_NOTRUN, reason);
}

void conf_fatal(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vappend(fails, sizeof fails, "; ", fmt, ap);
	va_end(ap);
	finish(CONF_FAIL, NULL);
}

static int device_count(void)
{
	int n = 0;
	struct ibv_device **list = ibv_get_device_list(&n);

	if (!list)
		return 0;
	ibv_free_device_list(list);
	return n;
}

/* device_count() in a grandchild: libibverbs fixes its sysfs path on first use, so a case
 * that is about to enter the fake-device namespace must not initialise it yet. */
static int device_count_isolated(void)
{
	pid_t pid = fork();
	int st;

	if (pid == 0)
		_exit(device_count() > 0 ? 1 : 0);
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return 0;
	return WEXITSTATUS(st);
}

static void check_preconditions(const struct conf_case *c, const struct conf_variant *v)
{
	bool emu = conf_target() == TARGET_EMU;
	int level = conf_rdmacm_level();

	if (v)
		conf_variant_enter(v);

	if ((c->pre & PRE_EMU_ONLY) && !emu)
		conf_notrun("emulator-only case");
	if ((c->pre & PRE_NODNS_SYSTEM) && !emu)
		conf_notrun("would query DNS through the system resolver (tests never use DNS)");
	if (c->pre & PRE_NOACM) {
		if (conf_path_exists("/run/ibacm.port"))
			conf_notrun("ibacm is running (/run/ibacm.port exists)");
		if (conf_path_exists("/run/ibacm.sock"))
			conf_notrun("ibacm is running (/run/ibacm.sock exists)");
	}
	if ((c->pre & PRE_FAKEACM) && !emu) {
		if (conf_path_exists("/run/ibacm.port") || conf_path_exists("/run/ibacm.sock"))
			conf_notrun("ibacm is running (/run/ibacm.port or /run/ibacm.sock exists): "
				    "the fake ibacm needs their place");
		if (geteuid() != 0)
			conf_notrun("needs root (the fake ibacm listens on /run/ibacm.sock)");
	}
	if (c->pre & PRE_NODEVICE) {
		if (emu) {
			int (*attach)(const char *, const char *) =
				(int (*)(const char *, const char *))conf_ctl_sym("rdmaemu_ctl_attach_text");
			if (!attach)
				conf_fatal("rdmaemu_ctl_attach_text not found in the emulator");
			if (attach(EMU_FABRIC_NODEV, EMU_FABRIC_NODEV_NODE))
				conf_fatal("precondition: rdmaemu_ctl_attach_text(nodev fabric) failed: %s",
					   conf_errno_name(errno));
		} else {
			int n = device_count();
			if (n > 0)
				conf_notrun("needs a machine without RDMA devices (%d present)", n);
		}
	}
	if ((c->pre & PRE_CM) && !emu) {
		if (conf_fake_device())
			conf_notrun("needs the kernel CM (a fake device has none)");
		if (!conf_path_exists("/dev/infiniband/rdma_cm"))
			conf_notrun("no kernel CM on this system (/dev/infiniband/rdma_cm)");
		if (device_count() == 0)
			conf_notrun("no RDMA device on this system");
	}
	if ((c->pre & PRE_FAKEDEV) || ((c->pre & PRE_DEVICE) && !emu && conf_fake_device())) {
		char why[256];

		if (emu)
			conf_notrun("needs a visible device without /dev/infiniband/rdma_cm (no emulated "
				    "equivalent)");
		/* rdma-core finds devices through RDMA netlink before sysfs, so the fake-device
		 * namespace (a private sysfs) cannot hide a real device: the state these rows need
		 * exists only on a machine without one (measured in the rxe VM: INIT-32 saw rxe0). */
		if ((c->pre & PRE_FAKEDEV) && device_count_isolated() > 0)
			conf_notrun("needs a machine without real RDMA devices (a fake device cannot "
				    "hide them)");
		if (conf_fakedev_enter(why, sizeof why))
			conf_notrun("cannot create a fake device (needs root): %s", why);
	}
	/* On the emulator the default fabric has devices; counting them here would also make the
	 * addrinfo rows depend on the emulated libibverbs. */
	if ((c->pre & PRE_DEVICE) && !emu && device_count() == 0)
		conf_notrun("no RDMA device on this system");
	if ((c->pre & PRE_LEVEL60) && level < 60) {
		if (emu)
			conf_notrun("needs rdma-core >= v60 behaviour (emulated level %d)", level);
		conf_notrun("needs rdma-core >= v60 (RDMACM_1.4 absent)");
	}
	if ((c->pre & PRE_LEVEL_BELOW60) && level >= 60)
		conf_notrun("needs rdma-core < v60 behaviour (level %d)", level);
	if (c->notrun)
		conf_notrun("%s", c->notrun);
}

enum conf_state conf_body_run(const struct conf_case *c, char *text, size_t size)
{
	stim[0] = note[0] = fails[0] = '\0';
	body_thread = pthread_self();
	body_state = CONF_PASS;
	conf_body_gave_up = false;
	if (sigsetjmp(body_jmp, 1) == 0) {
		body_active = true;
		c->fn(c);
		body_active = false;
		body_state = fails[0] ? CONF_FAIL : CONF_PASS;
	} else {
		conf_body_gave_up = true;
	}
	snprintf(text, size, "%s%s%s", stim, stim[0] && (fails[0] || note[0]) ? ": " : "",
		 body_state == CONF_PASS ? note : fails);
	return body_state;
}

void conf_send_record(char type, enum conf_state state, const char *text)
{
	send_rec((uint8_t)type, (uint8_t)state, text);
}

_Noreturn void conf_finish(enum conf_state state, const char *text)
{
	final_text = text;
	finish(state, text);
}

static _Noreturn void child_main(const struct conf_case *c, const struct conf_variant *v, int fd)
{
	result_fd = fd;
	conf_set_variant(v);
	setpgid(0, 0);
	signal(SIGPIPE, SIG_IGN);
	check_preconditions(c, v);
	if (conf_sweep_arm.active)
		conf_sweep_child(c);
	c->fn(c);
	finish(fails[0] ? CONF_FAIL : CONF_PASS, NULL);
}

/* ---- parent side ------------------------------------------------------------------------ */

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	return s;
}

static const char *signame(int sig)
{
	static char buf[32];
	const char *abbrev = sigabbrev_np(sig);

	if (abbrev)
		snprintf(buf, sizeof buf, "SIG%s", abbrev);
	else
		snprintf(buf, sizeof buf, "signal %d", sig);
	return buf;
}

void conf_run_case(const struct conf_case *c, const struct conf_variant *v, int timeout,
		   struct conf_result *r)
{
	int fds[2], st = 0;
	char buf[16384];
	size_t have = 0;
	bool timed_out = false, got_result = false;
	char *stimulus = NULL;
	/* a fake ibacm of the system target may leave /run/ibacm.* if its case dies before the
	 * library connected: remove them afterwards, when they were not there before */
	bool acm_cleanup = (c->pre & PRE_FAKEACM) && conf_target() == TARGET_SYSTEM &&
			   !conf_path_exists("/run/ibacm.port") &&
			   !conf_path_exists("/run/ibacm.sock");
	double t0 = now(), deadline;
	pid_t pid;

	r->c = c;
	if (pipe(fds)) {
		r->state = CONF_FAIL;
		r->msg = xasprintf("pipe: %s", strerror(errno));
		return;
	}
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		r->state = CONF_FAIL;
		r->msg = xasprintf("fork: %s", strerror(errno));
		return;
	}
	if (pid == 0) {
		close(fds[0]);
		child_main(c, v, fds[1]);
	}
	close(fds[1]);
	setpgid(pid, pid);
	deadline = t0 + (c->timeout ? c->timeout : timeout);

	for (;;) {
		double left = deadline - now();
		struct pollfd p = { .fd = fds[0], .events = POLLIN };

		if (left <= 0) {
			timed_out = true;
			break;
		}
		int pr = poll(&p, 1, (int)(left * 1000) + 1);
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr <= 0)
			continue;
		if (have == sizeof buf)
			have = 0; /* a runaway child: keep reading, drop what it sent */
		ssize_t n = read(fds[0], buf + have, sizeof buf - have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		have += (size_t)n;
		/* Consume complete records. */
		size_t off = 0;
		while (have - off >= sizeof(struct rec_hdr)) {
			struct rec_hdr h;
			memcpy(&h, buf + off, sizeof h);
			if (have - off < sizeof h + h.len)
				break;
			char *text = strndup(buf + off + sizeof h, h.len);
			if (h.type == 'S') {
				free(stimulus);
				stimulus = text;
			} else if (h.type == 'W') {
				free(r->sweep);
				r->sweep = text;
			} else {
				free(r->msg);
				r->msg = text;
				r->state = h.state <= CONF_EXCLUDED ? (enum conf_state)h.state : CONF_FAIL;
				got_result = true;
			}
			off += sizeof h + h.len;
		}
		memmove(buf, buf + off, have - off);
		have -= off;
	}
	close(fds[0]);
	if (timed_out) {
		kill(-pid, SIGKILL);
		kill(pid, SIGKILL);
	}
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	/* Reap whatever the case left in its process group. */
	kill(-pid, SIGKILL);
	if (acm_cleanup) {
		unlink("/run/ibacm.port");
		unlink("/run/ibacm.sock");
	}
	r->seconds = now() - t0;

	const char *s = stimulus ? stimulus : "";
	const char *sep = stimulus ? ": " : "";
	if (timed_out) {
		free(r->msg);
		r->state = CONF_FAIL;
		r->msg = xasprintf("%s%stimed out after %d s", s, sep, c->timeout ? c->timeout : timeout);
	} else if (WIFSIGNALED(st)) {
		free(r->msg);
		r->state = CONF_FAIL;
		r->msg = xasprintf("%s%scrashed with %s", s, sep, signame(WTERMSIG(st)));
	} else if (!got_result || (WIFEXITED(st) && WEXITSTATUS(st))) {
		free(r->msg);
		r->state = CONF_FAIL;
		r->msg = xasprintf("%s%sexited with status %d without reporting a result%s", s, sep,
				   WIFEXITED(st) ? WEXITSTATUS(st) : -1,
				   WIFEXITED(st) && WEXITSTATUS(st) == 127
					   ? " (symbol lookup error: a function missing from the library?)"
					   : "");
	}
	free(stimulus);
}

/* ---- options, selection, main ----------------------------------------------------------- */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: rdmaemu-conformance [--target emu|system] [--case ID]... [--area AREA]...\n"
		"         [--list] [--verbose] [--timeout S] [--tap FILE] [--junit FILE]\n"
		"         [--exclude-file FILE] [--fixtures DIR] [--libdir DIRS] [--fake-device]\n"
		"         [--fabric FILE] [--local ADDR] [--peer ADDR] [--report FILE] [--seeds]\n"
		"         [--passive] [--rdma-core 44|61] [--sweep [--sweep-max K]]\n"
		"         [--sweep-inject KIND:N]\n"
		"See rdmaemu-conformance(1).\n");
}

struct strlist {
	char **v;
	size_t n;
};

static void strlist_add(struct strlist *l, char *s)
{
	char **nv = realloc(l->v, (l->n + 1) * sizeof *nv);

	if (!nv) {
		perror("realloc");
		exit(2);
	}
	l->v = nv;
	l->v[l->n++] = s;
}

static bool selected(const struct conf_case *c, const struct strlist *cases,
		     const struct strlist *areasel, bool *case_hit)
{
	bool ok = !cases->n && !areasel->n;

	for (size_t i = 0; i < areasel->n; i++)
		if (!strcasecmp(areasel->v[i], c->area))
			ok = true;
	for (size_t i = 0; i < cases->n; i++)
		if (!fnmatch(cases->v[i], c->id, FNM_CASEFOLD)) {
			case_hit[i] = true;
			ok = true;
		}
	return ok;
}

static const char *pre_text(const struct conf_case *c)
{
	static char buf[128];

	buf[0] = 0;
	if (c->notrun)
		strcat(buf, "never ");
	if (c->pre & PRE_DEVICE)
		strcat(buf, "device ");
	if (c->pre & PRE_NODEVICE)
		strcat(buf, "nodevice ");
	if (c->pre & PRE_EMU_ONLY)
		strcat(buf, "emu-only ");
	if (c->pre & PRE_LEVEL60)
		strcat(buf, ">=v60 ");
	if (c->pre & PRE_LEVEL_BELOW60)
		strcat(buf, "<v60 ");
	if (c->pre & PRE_NOACM)
		strcat(buf, "no-ibacm ");
	if (c->pre & PRE_NODNS_SYSTEM)
		strcat(buf, "no-dns ");
	if (c->pre & PRE_FAKEDEV)
		strcat(buf, "fakedev ");
	if (c->pre & PRE_FAKEACM)
		strcat(buf, "fake-ibacm ");
	if (!buf[0])
		strcat(buf, "- ");
	buf[strlen(buf) - 1] = 0;
	return buf;
}

/* The variant copies of every case a variant names (variant.c), in table order. */
static struct conf_case *make_variants(size_t *n, const struct conf_variant ***which)
{
	struct conf_case *v = NULL;
	const struct conf_variant **w = NULL;
	size_t cap = 0;

	*n = 0;
	for (const struct conf_variant *const *vp = conf_variants; *vp; vp++)
		for (size_t a = 0; a < sizeof areas / sizeof areas[0]; a++)
			for (size_t i = 0; i < areas[a]->count; i++) {
				const struct conf_case *c = &areas[a]->cases[i];

				if (!conf_variant_has(*vp, c->id))
					continue;
				if (*n == cap) {
					struct conf_case *nv;

					cap = cap ? 2 * cap : 64;
					nv = realloc(v, cap * sizeof *v);
					const struct conf_variant **nw = realloc(w, cap * sizeof *w);
					if (!nv || !nw) {
						perror("realloc");
						exit(2);
					}
					v = nv;
					w = nw;
				}
				v[*n] = *c;
				v[*n].id = xasprintf("%s@%s", c->id, (*vp)->name);
				v[*n].area = xasprintf("%s@%s", c->area, (*vp)->name);
				v[*n].desc = xasprintf("%s%s", (*vp)->what, c->desc);
				w[*n] = *vp;
				if ((*vp)->peer_node && v[*n].timeout < 30)
					v[*n].timeout = 30;
				if (!v[*n].id || !v[*n].area || !v[*n].desc) {
					perror("asprintf");
					exit(2);
				}
				(*n)++;
			}
	*which = w;
	return v;
}

static void free_variants(struct conf_case *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free((char *)v[i].id);
		free((char *)v[i].area);
		free((char *)v[i].desc);
	}
	free(v);
}

static const struct conf_case *find_case(const char *id, size_t len, const struct conf_case *var,
					 size_t nvar)
{
	for (size_t a = 0; a < sizeof areas / sizeof areas[0]; a++)
		for (size_t i = 0; i < areas[a]->count; i++)
			if (strlen(areas[a]->cases[i].id) == len &&
			    !strncmp(areas[a]->cases[i].id, id, len))
				return &areas[a]->cases[i];
	for (size_t i = 0; i < nvar; i++)
		if (strlen(var[i].id) == len && !strncmp(var[i].id, id, len))
			return &var[i];
	return NULL;
}

static int seed_map_check(const struct conf_case *var, size_t nvar)
{
	int bad = 0;

	for (const struct conf_seed *s = conf_seeds; s->seed; s++) {
		if (!s->cases != !!s->unchecked) {
			fprintf(stderr, "rdmaemu-conformance: seed map: '%s' needs cases or a reason\n",
				s->statement);
			bad = 1;
		}
		for (const char *p = s->cases; p && *p;) {
			size_t len = strcspn(p, " ");

			if (!find_case(p, len, var, nvar)) {
				fprintf(stderr, "rdmaemu-conformance: seed map names an unknown case "
					"'%.*s'\n", (int)len, p);
				bad = 1;
			}
			p += len;
			p += strspn(p, " ");
		}
	}
	return bad;
}

/* --seeds: the seed statements with the cases that check them. */
static void print_seeds(FILE *f)
{
	unsigned total = 0, mapped = 0;

	for (const struct conf_seed *s = conf_seeds; s->seed; s++) {
		total++;
		mapped += s->cases != NULL;
		fprintf(f, "%-4s \"%s\"\n", s->seed, s->statement);
		if (!s->cases) {
			fprintf(f, "       not checked: %s\n", s->unchecked);
			continue;
		}
		fprintf(f, "       checked by:");
		for (const char *p = s->cases; *p;) {
			size_t len = strcspn(p, " ");

			fprintf(f, " %.*s", (int)len, p);
			p += len;
			p += strspn(p, " ");
		}
		fputc('\n', f);
	}
	fprintf(f, "seeds: %u statements, %u checked by cases, %u not checkable\n", total, mapped,
		total - mapped);
}

/* The run's header, printed and repeated in the --report documents. */
struct hdr {
	char *buf;
	size_t len;
};

static void hdr_printf(struct hdr *h, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void hdr_printf(struct hdr *h, const char *fmt, ...)
{
	char *line = NULL, *nb;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&line, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	nb = realloc(h->buf, h->len + (size_t)n + 1);
	if (nb) {
		memcpy(nb + h->len, line, (size_t)n + 1);
		h->buf = nb;
		h->len += (size_t)n;
	}
	free(line);
}

/* One report document by the extension of its path. */
static int write_report(const char *path, const struct conf_result *res, size_t n,
			const char *header)
{
	const char *dot = strrchr(path, '.');
	int rc = dot && !strcmp(dot, ".json") ? conf_report_json(path, res, n, header)
					      : conf_report_doc(path, res, n, header);

	if (rc)
		fprintf(stderr, "rdmaemu-conformance: cannot write %s: %s\n", path, strerror(errno));
	return rc;
}

/* --report FILE: FILE.md, FILE.html and FILE.json, or only the one its extension names. */
static int write_reports(const char *report, const struct conf_result *res, size_t n,
			 const char *header)
{
	const char *dot = strrchr(report, '.');
	const char *slash = strrchr(report, '/');
	int rc = 0;

	if (dot && (!slash || dot > slash) &&
	    (!strcmp(dot, ".md") || !strcmp(dot, ".html") || !strcmp(dot, ".htm") ||
	     !strcmp(dot, ".json")))
		return write_report(report, res, n, header);
	static const char *const ext[] = { ".md", ".html", ".json" };
	for (size_t i = 0; i < 3; i++) {
		char *path = xasprintf("%s%s", report, ext[i]);

		if (!path || write_report(path, res, n, header))
			rc = -1;
		free(path);
	}
	return rc;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "target", required_argument, NULL, 't' },
		{ "case", required_argument, NULL, 'c' },
		{ "area", required_argument, NULL, 'a' },
		{ "list", no_argument, NULL, 'l' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "timeout", required_argument, NULL, 'T' },
		{ "tap", required_argument, NULL, 'P' },
		{ "junit", required_argument, NULL, 'J' },
		{ "exclude-file", required_argument, NULL, 'x' },
		{ "fixtures", required_argument, NULL, 'f' },
		{ "libdir", required_argument, NULL, 'L' },
		{ "fake-device", no_argument, NULL, 'F' },
		{ "fabric", required_argument, NULL, 'B' },
		{ "local", required_argument, NULL, 'O' },
		{ "peer", required_argument, NULL, 'E' },
		{ "report", required_argument, NULL, 'R' },
		{ "seeds", no_argument, NULL, 'S' },
		{ "passive", no_argument, NULL, 'p' },
		{ "rdma-core", required_argument, NULL, 'C' },
		{ "sweep", no_argument, NULL, 'W' },
		{ "sweep-max", required_argument, NULL, 'M' },
		{ "sweep-inject", required_argument, NULL, 'I' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	enum conf_target target = TARGET_EMU;
	struct strlist cases = { 0 }, areasel = { 0 };
	const char *tap = NULL, *junit = NULL, *exclude = NULL, *fixtures = NULL, *libdir = NULL;
	const char *report = NULL;
	bool list = false, verbose = false, seeds = false, rdma_core = false, sweep = false;
	unsigned long sweep_max = 0;
	const char *inject = NULL;
	int timeout = DEFAULT_TIMEOUT, opt;

	while ((opt = getopt_long(argc, argv, "t:c:a:lvT:hx:", opts, NULL)) != -1) {
		switch (opt) {
		case 't':
			if (!strcmp(optarg, "emu"))
				target = TARGET_EMU;
			else if (!strcmp(optarg, "system"))
				target = TARGET_SYSTEM;
			else {
				fprintf(stderr, "rdmaemu-conformance: unknown target '%s'\n", optarg);
				return 2;
			}
			break;
		case 'c': strlist_add(&cases, optarg); break;
		case 'a': strlist_add(&areasel, optarg); break;
		case 'l': list = true; break;
		case 'v': verbose = true; break;
		case 'T':
			timeout = atoi(optarg);
			if (timeout <= 0) {
				fprintf(stderr, "rdmaemu-conformance: bad --timeout '%s'\n", optarg);
				return 2;
			}
			break;
		case 'P': tap = optarg; break;
		case 'J': junit = optarg; break;
		case 'x': exclude = optarg; break;
		case 'f': fixtures = optarg; break;
		case 'L': libdir = optarg; break;
		case 'F': conf_set_fake_device(true); break;
		case 'B': conf_set_fabric_path(optarg); break;
		case 'O':
		case 'E': {
			struct in_addr a;

			if (inet_pton(AF_INET, optarg, &a) != 1) {
				fprintf(stderr, "rdmaemu-conformance: --%s needs an IPv4 address, not '%s'\n",
					opt == 'O' ? "local" : "peer", optarg);
				return 2;
			}
			if (opt == 'O')
				conf_set_local_addr(optarg);
			else
				conf_set_peer_addr(optarg);
			break;
		}
		case 'R': report = optarg; break;
		case 'S': seeds = true; break;
		case 'p': conf_set_passive(true); break;
		case 'C':
			/* the emulated librdmacm's personality: its directory (target.c) and the
			 * library's own check of what was asked (lib/personality.c) */
			if (strcmp(optarg, "44") && strcmp(optarg, "61")) {
				fprintf(stderr, "rdmaemu-conformance: --rdma-core %s: the personalities "
						"are 44 and 61\n", optarg);
				return 2;
			}
			setenv("RDMAEMU_RDMA_CORE", optarg, 1);
			rdma_core = true;
			break;
		case 'W': sweep = true; break;
		case 'I': inject = optarg; break;
		case 'M': {
			char *end;

			errno = 0;
			sweep_max = strtoul(optarg, &end, 10);
			if (errno || end == optarg || *end || !sweep_max) {
				fprintf(stderr, "rdmaemu-conformance: bad --sweep-max '%s' (a count > 0)\n",
					optarg);
				return 2;
			}
			break;
		}
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind < argc) {
		usage(stderr);
		return 2;
	}

	/* Selection (also for --list, which needs no target). */
	size_t total = 0, nvar = 0;
	for (size_t a = 0; a < sizeof areas / sizeof areas[0]; a++)
		total += areas[a]->count;
	const struct conf_variant **varv = NULL;
	struct conf_case *var = make_variants(&nvar, &varv);
	total += nvar;
	const struct conf_case **sel = calloc(total ? total : 1, sizeof *sel);
	const struct conf_variant **selv = calloc(total ? total : 1, sizeof *selv);
	bool *case_hit = calloc(cases.n ? cases.n : 1, sizeof *case_hit);
	size_t nsel = 0;
	if (!sel || !selv || !case_hit)
		return 2;
	for (size_t a = 0; a < sizeof areas / sizeof areas[0]; a++)
		for (size_t i = 0; i < areas[a]->count; i++)
			if (selected(&areas[a]->cases[i], &cases, &areasel, case_hit))
				sel[nsel++] = &areas[a]->cases[i];
	for (size_t i = 0; i < nvar; i++)
		if (selected(&var[i], &cases, &areasel, case_hit)) {
			selv[nsel] = varv[i];
			sel[nsel++] = &var[i];
		}
	/* The seed map may only name cases that exist. */
	if (seed_map_check(var, nvar))
		return 2;
	for (size_t i = 0; i < cases.n; i++)
		if (!case_hit[i]) {
			fprintf(stderr, "rdmaemu-conformance: no case matches '%s'\n", cases.v[i]);
			return 2;
		}
	if (seeds) {
		print_seeds(stdout);
		return 0;
	}
	if (list) {
		for (size_t i = 0; i < nsel; i++) {
			printf("%-9s row %-3d %-18s %s\n", sel[i]->id, sel[i]->row, pre_text(sel[i]),
			       sel[i]->desc);
			if (verbose && sel[i]->documented)
				printf("%34s documented: %s\n", "", sel[i]->documented);
		}
		return 0;
	}

	if (rdma_core && target == TARGET_SYSTEM)
		fprintf(stderr, "rdmaemu-conformance: --rdma-core chooses the emulator's librdmacm; "
				"--target system runs this machine's rdma-core as it is\n");
	if (conf_target_setup(target, libdir, argv))
		return 2;
	if (conf_passive() && (target != TARGET_SYSTEM || !conf_local_addr())) {
		fprintf(stderr, "rdmaemu-conformance: --passive needs --target system and --local\n");
		return 2;
	}

	/* The deviation manifest of this target. */
	char exclude_buf[8192], probe[4096];
	bool exclude_explicit = exclude != NULL;
	if (!exclude) {
		if (!fixtures) {
			const char *env = getenv("RDMAEMU_TOP_SRCDIR");

			snprintf(probe, sizeof probe, "%s/fixtures", env ? env : RDMAEMU_SRCDIR);
			fixtures = (env || conf_in_build_tree()) && conf_path_exists(probe) ?
				   probe : RDMAEMU_PKGDATADIR "/fixtures";
		}
		snprintf(exclude_buf, sizeof exclude_buf, "%s/conformance/%s.exclude", fixtures,
			 conf_target_name());
		exclude = exclude_buf;
	}
	struct conf_manifest *manifest = NULL;
	if (conf_path_exists(exclude) || exclude_explicit) {
		manifest = conf_manifest_load(exclude, stderr);
		if (!manifest) {
			fprintf(stderr, "rdmaemu-conformance: cannot read %s: %s\n", exclude,
				strerror(errno));
			return 2;
		}
	} else {
		manifest = conf_manifest_load(NULL, stderr);
		exclude = NULL;
	}

	struct hdr hdr = { NULL, 0 };

	hdr_printf(&hdr, "rdmaemu-conformance: target %s\n", conf_target_name());
	hdr_printf(&hdr, "librdmacm: %s (rdma-core level %d%s)\n", conf_librdmacm_path(),
	       conf_rdmacm_level(),
	       target == TARGET_SYSTEM ? (conf_rdmacm_level() >= 60 ? ", RDMACM_1.4 present"
								      : ", RDMACM_1.4 absent")
				       : ", from rdmaemu_ctl_rdmacm_level");
	hdr_printf(&hdr, "libibverbs: %s\n", conf_libibverbs_path());
	if (target == TARGET_EMU) {
		const char *(*ver)(void) = (const char *(*)(void))conf_ctl_sym("rdmaemu_ctl_version");
		hdr_printf(&hdr, "emulator: %s\n", ver ? ver() : "?");
	}
	if (target == TARGET_SYSTEM && conf_on_emulated_host()) {
		const char *(*ver)(void) = (const char *(*)(void))conf_ctl_sym("rdmaemu_ctl_version");
		const char *node = getenv("RDMAEMU_NODE");

		hdr_printf(&hdr, "system: emulated host %s of rdmaemud (rdmaemu run), emulator %s\n",
			   node && *node ? node : "(the fabric's first)", ver ? ver() : "?");
	}
	if (conf_fake_device() && target == TARGET_SYSTEM)
		hdr_printf(&hdr, "device: a fake rxe0 per case (--fake-device; no kernel CM)\n");
	if (target == TARGET_EMU)
		hdr_printf(&hdr, "fabric: %s\n", conf_fabric_path() ? conf_fabric_path()
								   : "(built-in default: rxe-ref)");
	else if (conf_fabric_path())
		hdr_printf(&hdr, "fabric: %s ignored (--target system runs on this machine's devices)\n",
			   conf_fabric_path());
	hdr_printf(&hdr, "local: %s; peer: %s%s\n",
		   conf_local_addr() ? conf_local_addr() : "(the devices' IPv4 addresses)",
		   conf_peer_addr() ? conf_peer_addr() : "(loopback to local)",
		   conf_passive() ? "; role: passive side of the two-node cases" : "");
	hdr_printf(&hdr, "manifest: %s\n", exclude ? exclude : "(none)");
	fputs(hdr.buf ? hdr.buf : "", stdout);
	putchar('\n');


	struct conf_result *res = NULL;
	unsigned passed = 0, failed = 0, skipped = 0;
	int rc = 0;

	if (sweep || inject) {
		int src;

		if (target != TARGET_EMU) {
			fprintf(stderr, "rdmaemu-conformance: --sweep and --sweep-inject need --target emu (the "
					"emulator's failure injection)\n");
			return 2;
		}
		/* the cases the sweep leaves out, with their reasons: sweep.exclude beside the
		 * target's manifest */
		struct conf_manifest *sweep_ex = NULL;
		char sweep_path[8192];
		const char *slash = exclude ? strrchr(exclude, '/') : NULL;

		if (slash) {
			snprintf(sweep_path, sizeof sweep_path, "%.*s/sweep.exclude",
				 (int)(slash - exclude), exclude);
			if (conf_path_exists(sweep_path) &&
			    !(sweep_ex = conf_manifest_load(sweep_path, stderr))) {
				fprintf(stderr, "rdmaemu-conformance: cannot read %s: %s\n",
					sweep_path, strerror(errno));
				return 2;
			}
		}
		src = inject ? conf_sweep_one(sel, selv, nsel, timeout, inject) :
			       conf_sweep_run(sel, selv, nsel, manifest, sweep_ex, timeout,
					      sweep_max, verbose);
		conf_manifest_free(sweep_ex);
		free(hdr.buf);
		rc = src;
		goto out;
	}

	res = calloc(nsel ? nsel : 1, sizeof *res);
	if (!res)
		return 2;
	for (size_t i = 0; i < nsel; i++) {
		const char *reason = conf_manifest_reason(manifest, sel[i]->id);

		if (reason) {
			res[i].c = sel[i];
			res[i].state = CONF_EXCLUDED;
			res[i].msg = strdup(reason);
		} else {
			conf_run_case(sel[i], selv[i], timeout, &res[i]);
		}
		conf_report_line(stdout, &res[i], verbose);
	}
	if (verbose)
		conf_manifest_warn_unused(manifest, stderr);

	conf_report_summary(stdout, res, nsel);
	if (tap && conf_report_tap(tap, res, nsel)) {
		fprintf(stderr, "rdmaemu-conformance: cannot write %s: %s\n", tap, strerror(errno));
		rc = 2;
	}
	if (junit && conf_report_junit(junit, res, nsel)) {
		fprintf(stderr, "rdmaemu-conformance: cannot write %s: %s\n", junit, strerror(errno));
		rc = 2;
	}
	if (report && write_reports(report, res, nsel, hdr.buf ? hdr.buf : ""))
		rc = 2;
	free(hdr.buf);

	for (size_t i = 0; i < nsel; i++) {
		passed += res[i].state == CONF_PASS;
		failed += res[i].state == CONF_FAIL;
		skipped += res[i].state == CONF_NOTRUN || res[i].state == CONF_EXCLUDED;
		free(res[i].msg);
		free(res[i].sweep);
	}
	printf("conformance: %u passed, %u failed, %u skipped\n", passed, failed, skipped);
	if (failed)
		rc = 1;
out:
	free(res);
	free(sel);
	free(case_hit);
	free_variants(var, nvar);
	free(varv);
	free(selv);
	free(cases.v);
	free(areasel.v);
	conf_manifest_free(manifest);
	return rc;
}
