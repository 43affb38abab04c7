/* The failure sweep over the conformance cases (`rdmaemu-conformance --sweep`,
 * docs/failure-sweep.md).
 *
 * For each selected case a first run counts the resource calls (allocations, mappings,
 * eventfds, sockets, threads) the case body makes in the emulator's libraries; then one run per
 * call fails that call (util/failnth.h, found with dlsym like the rest of the emulator's control
 * API). In each run the forked child runs the case body, disarms the injection, runs the body a
 * second time, runs the go-on probe (sweep_probe.c), and asks LeakSanitizer (in a sanitizer build) for
 * leaks; it sends the first run's result and those figures as a 'W' record and the second run's
 * result as its ordinary one.
 *
 * The oracle, against the count run's figures:
 *   - no crash, no hang past the case's timeout, no leak (when the case ran to its end: a
 *     case that gave up half-way with conf_fatal left what it held; when the case leaks
 *     nothing without injection);
 *   - the first run passes (the failure was absorbed, as a retry or a fallback does), ends
 *     Notrun (a precondition the failure took away), or fails with a message naming the real
 *     stack's error for the failure (names_real_error), or after a loss the real stack has too
 *     (util/failnth.h emu_fail_lost: ibacm, AF_IB support, an event);
 *   - the process goes on: the case run again passes or ends as it does without injection
 *     (a case that leaves its ids bound fails a second run alike), and the go-on probe's
 *     result is the count run's.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "conformance/runner.h"

struct conf_sweep_arm conf_sweep_arm;

/* util/failnth.h's kinds, in its order; the first five of emu_fail_kind_name. */
static const char *const kind_name[SWEEP_KINDS] = { "alloc", "mmap", "eventfd", "socket",
						    "thread" };

/* ---- child side ------------------------------------------------------------------------ */

/* A sanitizer build's leak check (weak: absent otherwise). Returns nonzero on leaks. */
int __lsan_do_recoverable_leak_check(void) __attribute__((weak));

/* The watchdog of the first run: a loss the real stack has too can leave a wait that never
 * ends where the emulator cannot see every thread waiting (a thread blocked in raccept's read
 * of its accept queue, as in rdma-core), and the real program hangs there as well. Two seconds
 * before the case's timeout, with the first run still under way, it sends the record with
 * "HUNG" as the first run's state and ends the child: the parent then judges the hang on what
 * the injection lost. */
static struct {
	int (*fired)(void);
	const char *(*lost)(void);
	unsigned seconds;
	int done; /* the first run ended (atomic) */
} dog;

static void *watchdog(void *unused)
{
	static char rec[512];
	const char *what;

	struct timespec ts = { .tv_sec = dog.seconds };

	(void)unused;
	/* one sleep, asleep throughout, by the system call itself: the emulator's time layer
	 * (which takes the program's sleeps and polls) never sees this thread, and its
	 * scan of the process's threads finds it asleep, so it changes nothing of the run */
	while (syscall(SYS_nanosleep, &ts, &ts) < 0 && errno == EINTR)
		;
	if (__atomic_load_n(&dog.done, __ATOMIC_ACQUIRE))
		return NULL;
	what = dog.lost();
	snprintf(rec, sizeof rec,
		 "alloc=0 mmap=0 eventfd=0 socket=0 thread=0 fired=%d leaks=-1 probe=- lost=%s\n"
		 "HUNG the first run did not end within %u s", dog.fired(), what ? what : "-",
		 dog.seconds);
	conf_send_record('W', CONF_FAIL, rec);
	_exit(0);
}

_Noreturn void conf_sweep_child(const struct conf_case *c)
{
	void (*arm)(int, unsigned long) = (void (*)(int, unsigned long))conf_ctl_sym("emu_fail_arm");
	unsigned long (*count)(int) = (unsigned long (*)(int))conf_ctl_sym("emu_fail_count");
	int (*fired)(void) = (int (*)(void))conf_ctl_sym("emu_fail_fired");
	const char *(*lost)(void) = (const char *(*)(void))conf_ctl_sym("emu_fail_lost_what");
	static char first[8192], second[8192], rec[8192 + 512];
	unsigned long before[SWEEP_KINDS], counts[SWEEP_KINDS];
	enum conf_state st1, st2;
	char probe[256];
	const char *what;
	int did, leaks = -1;
	bool gave_up;

	if (conf_sweep_arm.quiet && !freopen("/dev/null", "w", stderr))
		conf_finish(CONF_FAIL, "cannot open /dev/null");
	if (!arm || !count || !fired || !lost)
		conf_finish(CONF_FAIL, "the failure sweep needs the emulator's failure injection "
				       "(emu_fail_arm in librdmaemu.so.0)");
	for (int k = 0; k < SWEEP_KINDS; k++)
		before[k] = count(k);
	dog.fired = fired;
	dog.lost = lost;
	dog.seconds = conf_sweep_arm.timeout > 4 ? conf_sweep_arm.timeout - 2 : 2;
	if (conf_sweep_arm.kind >= 0) {
		pthread_t t;

		if (pthread_create(&t, NULL, watchdog, NULL) == 0)
			pthread_detach(t);
		arm(conf_sweep_arm.kind, conf_sweep_arm.n);
	}
	st1 = conf_body_run(c, first, sizeof first);
	__atomic_store_n(&dog.done, 1, __ATOMIC_RELEASE);
	gave_up = conf_body_gave_up;
	for (int k = 0; k < SWEEP_KINDS; k++)
		counts[k] = count(k) - before[k];
	did = fired();
	what = lost();
	arm(-1, 0);
	st2 = conf_body_run(c, second, sizeof second);
	conf_sweep_probe(probe, sizeof probe);
	for (char *q = probe; *q; q++)
		if (*q == ' ')
			*q = '_'; /* one word in the record */
	/* a first run that gave up half-way (conf_fatal) left what it held, as a program that
	 * exits on an error does: leaks count only after a body that ran to its end */
	if (__lsan_do_recoverable_leak_check && !gave_up)
		leaks = __lsan_do_recoverable_leak_check() != 0;
	snprintf(rec, sizeof rec,
		 "alloc=%lu mmap=%lu eventfd=%lu socket=%lu thread=%lu fired=%d leaks=%d "
		 "probe=%s lost=%s\n%s %s",
		 counts[0], counts[1], counts[2], counts[3], counts[4], did, leaks, probe,
		 what ? what : "-", conf_state_name(st1), first);
	conf_send_record('W', st1, rec);
	conf_finish(st2, second);
}

/* ---- parent side ----------------------------------------------------------------------- */

/* What a 'W' record says. */
struct sweep_obs {
	bool valid;
	unsigned long counts[SWEEP_KINDS];
	int fired, leaks;
	bool hung; /* the first run did not end (the watchdog's record) */
	char probe[256], lost[256];
	enum conf_state first;
	const char *first_text; /* into the record */
};

static bool parse_obs(const char *w, struct sweep_obs *o)
{
	char st[16];
	const char *nl;
	int used = 0;

	memset(o, 0, sizeof *o);
	if (!w || !(nl = strchr(w, '\n')))
		return false;
	if (sscanf(w, "alloc=%lu mmap=%lu eventfd=%lu socket=%lu thread=%lu fired=%d leaks=%d "
		      "probe=%255s lost=%n",
		   &o->counts[0], &o->counts[1], &o->counts[2], &o->counts[3], &o->counts[4],
		   &o->fired, &o->leaks, o->probe, &used) != 8 || !used)
		return false;
	snprintf(o->lost, sizeof o->lost, "%.*s", (int)(nl - (w + used)), w + used);
	if (sscanf(nl + 1, "%15s", st) != 1)
		return false;
	o->hung = !strcmp(st, "HUNG");
	o->first = !strcmp(st, "PASS") ? CONF_PASS : !strcmp(st, "NOTRUN") ? CONF_NOTRUN : CONF_FAIL;
	o->first_text = nl + 1 + strlen(st) + (nl[1 + strlen(st)] == ' ');
	o->valid = true;
	return true;
}

/* The errors the real stack gives when a resource runs out underneath: the injected kind's own
 * (ENOMEM, EMFILE, EAGAIN), and those rdma-core and the kernel turn it into on the way up,
 * which depend on the call site (a failed eventfd of rdma_create_id's own channel is ENOMEM:
 * cma.c returns ERR(ENOMEM) when ucma_alloc_id fails; a device list or a device that cannot be
 * had is ENODEV: sync_devices_list(), ucma_init_device()); an event's processing that failed
 * is status -1 (a synchronous id's call then fails with EPERM: rdma-core's ucma_complete
 * returns ERR(-status)), a peer whose request failed rejects it (cm_destroy_id(): REJ reason 28, SIDR
 * status IB_SIDR_REJECT; rsockets' ECONNREFUSED), or leaves it unanswered (rdma-core's
 * rdma_get_request leaves a request whose QP it could not create: the peer's connect ends
 * ETIMEDOUT), a send whose packet could not be had completes LOC_QP_OP_ERR and flushes the
 * rest. EDEADLK is the emulator's answer to a wait the real stack would never end (nothing
 * can come: rdma-core's rdma_get_cm_event drops a CONNECT_REQUEST whose id it cannot
 * allocate and waits for the next event; a DREQ that could not be sent leaves both sides
 * waiting for DISCONNECTED), where a real program hangs. faults/sweep_cm.c and sweep_rs.c check the exact error at each step. */
static bool names_real_error(const char *text, const char *lost)
{
	static const char *const words[] = {
		"ENOMEM", "EMFILE", "ENFILE", "EAGAIN", "ENOBUFS", "ENODEV", "status -12",
		"status -24", "status -11", "status -1", "REJECTED", "UNREACHABLE",
		"CONNECT_ERROR", "ADDR_ERROR", "ROUTE_ERROR", "MULTICAST_ERROR", "LOC_QP_OP_ERR",
		"WR_FLUSH_ERR",
		"ECONNREFUSED", "ETIMEDOUT", "EPERM", "EDEADLK", "status: got -12", "status: got -24",
		"status: got -11", "status: got -1,", "status: got -1;",
		"Cannot allocate memory", "Too many open files",
	};

	for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
		if (strstr(text, words[i]))
			return true;
	/* a loss the real stack has too: the case misses what was lost (an ibacm answer, AF_IB
	 * addresses, an event whose wait ends by its own timeout) */
	return strcmp(lost, "-") != 0;
}

enum verdict { V_ABSORBED, V_REPORTED, V_UNREACHED, V_FAILED };

static enum verdict judge(const struct conf_result *r, const struct sweep_obs *base,
			  enum conf_state again, char *why, size_t size)
{
	struct sweep_obs o;

	if (!parse_obs(r->sweep, &o)) {
		/* a precondition (no ibacm running) that no longer holds: the body did not run */
		if (r->state == CONF_NOTRUN)
			return V_UNREACHED;
		snprintf(why, size, "%s", r->msg ? r->msg : "no result");
		return V_FAILED;
	}
	/* a wait that never ends after a loss the real stack has too hangs there as well */
	if (o.hung) {
		if (!strcmp(o.lost, "-")) {
			snprintf(why, size, "%s, nothing lost", o.first_text);
			return V_FAILED;
		}
		return V_REPORTED;
	}
	if (o.leaks > 0 && base->leaks == 0) {
		snprintf(why, size, "LeakSanitizer found leaks (first run: %s %s)",
			 conf_state_name(o.first), o.first_text);
		return V_FAILED;
	}
	if (o.first == CONF_PASS && !o.fired)
		return V_UNREACHED;
	/* a Notrun: the case's precondition (a device, AF_IB) was not met because of the failure */
	if (o.first == CONF_FAIL && !names_real_error(o.first_text, o.lost)) {
		snprintf(why, size, "first run %s without the real stack's error: %s",
			 conf_state_name(o.first), o.first_text);
		return V_FAILED;
	}
	/* after an absorbed failure the case run again passes, or ends as it does without
	 * injection (a case that leaves its ids bound fails a second run alike); a case that
	 * failed may have left what it held (a bound port) as it gave up, so there the probe
	 * alone shows the process goes on; after a loss the real stack has too, the process
	 * goes on without what was lost */
	if (o.first == CONF_PASS && r->state != CONF_PASS && r->state != again &&
	    !strcmp(o.lost, "-")) {
		snprintf(why, size, "the process did not go on: the case run again %s (without "
			 "injection %s): %s", conf_state_name(r->state), conf_state_name(again),
			 r->msg ? r->msg : "");
		return V_FAILED;
	}
	if (strcmp(o.probe, base->probe)) {
		snprintf(why, size, "the process did not go on: probe %s (without injection %s)",
			 o.probe, base->probe);
		return V_FAILED;
	}
	return o.first == CONF_PASS ? V_ABSORBED : V_REPORTED;
}

int conf_sweep_one(const struct conf_case *const *sel, const struct conf_variant *const *selv,
		   size_t n, int timeout, const char *spec)
{
	char kind[16];
	unsigned long nth = 0;
	int k, rc = 0;

	if (sscanf(spec, "%15[a-z]:%lu", kind, &nth) != 2 || !nth)
		k = SWEEP_KINDS;
	else
		for (k = 0; k < SWEEP_KINDS && strcmp(kind, kind_name[k]); k++)
			;
	if (k == SWEEP_KINDS) {
		fprintf(stderr, "rdmaemu-conformance: --sweep-inject %s: want KIND:N, KIND one of "
				"alloc, mmap, eventfd, socket, thread, N >= 1\n", spec);
		return 2;
	}
	for (size_t i = 0; i < n; i++) {
		struct conf_result r = { 0 };
		struct sweep_obs o;

		conf_sweep_arm = (struct conf_sweep_arm){ true, k, nth, false,
							    sel[i]->timeout ? sel[i]->timeout : timeout };
		conf_run_case(sel[i], selv[i], timeout, &r);
		if (!parse_obs(r.sweep, &o)) {
			printf("%s %s: no sweep record; %s %s\n", sel[i]->id, spec,
			       conf_state_name(r.state), r.msg ? r.msg : "");
			rc = 1;
		} else {
			printf("%s %s: fired %d, lost %s, leaks %d, probe %s\n  first run: %s %s\n"
			       "  run again: %s %s\n", sel[i]->id, spec, o.fired, o.lost, o.leaks,
			       o.probe, conf_state_name(o.first), o.first_text,
			       conf_state_name(r.state), r.msg ? r.msg : "");
		}
		free(r.msg);
		free(r.sweep);
	}
	conf_sweep_arm.active = false;
	return rc;
}

int conf_sweep_run(const struct conf_case *const *sel, const struct conf_variant *const *selv,
		   size_t n, struct conf_manifest *m, struct conf_manifest *sweep_ex, int timeout,
		   unsigned long max, bool verbose)
{
	unsigned long tot_inj = 0, tot[4] = { 0 }, swept = 0, skipped = 0, noleakcheck = 0;
	int rc = 0;

	for (size_t i = 0; i < n; i++) {
		const struct conf_case *c = sel[i];
		struct conf_result r = { 0 };
		struct sweep_obs base;
		unsigned long inj = 0, v[4] = { 0 };
		char why[1024];

		if (conf_manifest_reason(m, c->id) ||
		    (sweep_ex && conf_manifest_reason(sweep_ex, c->id))) {
			skipped++;
			continue;
		}
		conf_sweep_arm = (struct conf_sweep_arm){ true, -1, 0, !verbose, 0 };
		conf_run_case(c, selv[i], timeout, &r);
		if (r.state == CONF_NOTRUN) {
			skipped++;
			free(r.msg);
			free(r.sweep);
			continue;
		}
		if (!parse_obs(r.sweep, &base) || base.first != CONF_PASS) {
			printf("sweep %s: FAIL without injection: %s%s%s\n", c->id,
			       base.valid ? conf_state_name(base.first) : "",
			       base.valid ? " " : "", base.valid ? base.first_text : r.msg ? r.msg : "");
			free(r.msg);
			free(r.sweep);
			rc = 1;
			continue;
		}
		/* base.first_text points into r.sweep, kept until the case's end. A case that
		 * leaves objects of its own unfreed (a channel it never destroys) leaks without
		 * injection: its runs are judged on everything but leaks. */
		swept++;
		noleakcheck += base.leaks > 0;
		for (int k = 0; k < SWEEP_KINDS; k++) {
			unsigned long total = base.counts[k], step = 1;

			if (max && total > max)
				step = (total + max - 1) / max;
			for (unsigned long nth = 1; nth <= total; nth += step) {
				struct conf_result ri = { 0 };
				enum verdict vd;

				conf_sweep_arm = (struct conf_sweep_arm){ true, k, nth, !verbose,
									    c->timeout ? c->timeout : timeout };
				conf_run_case(c, selv[i], timeout, &ri);
				vd = judge(&ri, &base, r.state, why, sizeof why);
				v[vd]++;
				inj++;
				if (vd == V_FAILED) {
					printf("sweep %s %s:%lu: FAIL %s\n", c->id, kind_name[k], nth,
					       why);
					rc = 1;
				}
				free(ri.msg);
				free(ri.sweep);
			}
		}
		if (verbose || v[V_FAILED])
			printf("sweep %s: %lu injections, %lu absorbed, %lu reported, %lu not "
			       "reached, %lu failed (alloc=%lu mmap=%lu eventfd=%lu socket=%lu "
			       "thread=%lu)\n",
			       c->id, inj, v[V_ABSORBED], v[V_REPORTED], v[V_UNREACHED], v[V_FAILED],
			       base.counts[0], base.counts[1], base.counts[2], base.counts[3],
			       base.counts[4]);
		fflush(stdout);
		tot_inj += inj;
		for (int j = 0; j < 4; j++)
			tot[j] += v[j];
		free(r.msg);
		free(r.sweep);
	}
	conf_sweep_arm.active = false;
	if (__lsan_do_recoverable_leak_check)
		printf("sweep: %lu cases of %lu leak without injection (objects the case leaves "
		       "unfreed): their runs are judged on everything but leaks\n",
		       noleakcheck, swept);
	printf("sweep: %lu cases, %lu injections, %lu absorbed, %lu reported, %lu not reached, "
	       "%lu failed; %lu not swept (Notrun, Excluded or in sweep.exclude)\n",
	       swept, tot_inj, tot[V_ABSORBED], tot[V_REPORTED], tot[V_UNREACHED], tot[V_FAILED],
	       skipped);
	return rc;
}
