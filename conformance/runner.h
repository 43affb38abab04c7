/* Runner internals shared by runner.c, report.c, manifest.c and target.c. */
#ifndef CONFORMANCE_RUNNER_H
#define CONFORMANCE_RUNNER_H

#include <stdio.h>

#include "conformance/conformance.h"

struct conf_result {
	const struct conf_case *c;
	enum conf_state state;
	char *msg;      /* detail (pass), failures (fail), reason (notrun/excluded); malloc'ed */
	double seconds;
	char *sweep;    /* a failure sweep's 'W' record (sweep.c); malloc'ed */
};

/* runner.c: one case in a forked child, its result in r. */
void conf_run_case(const struct conf_case *c, const struct conf_variant *v, int timeout,
		   struct conf_result *r);
/* runner.c, child side: runs the case body once, returning its state and writing its result
 * text (the stimulus, then the note or the failures) to text; a conf_fatal or conf_notrun of
 * the body ends that run only. */
enum conf_state conf_body_run(const struct conf_case *c, char *text, size_t size);
/* The last conf_body_run ended by conf_fatal or conf_notrun, not at the body's end (what the
 * body held was not released). */
extern bool conf_body_gave_up;
/* runner.c, child side: a record of the given type on the result pipe; the end of the child
 * with state and text as its result. */
void conf_send_record(char type, enum conf_state state, const char *text);
_Noreturn void conf_finish(enum conf_state state, const char *text);

/* sweep.c: the failure sweep over the cases (docs/failure-sweep.md). */
#define SWEEP_KINDS 5 /* util/failnth.h: alloc, mmap, eventfd, socket, thread */
struct conf_sweep_arm {
	bool active; /* the child runs conf_sweep_child */
	int kind;    /* the kind to fail, -1: count only */
	unsigned long n;
	bool quiet;  /* the child's stderr (the libraries' messages on failures) to /dev/null */
	unsigned timeout; /* the case's timeout, s: the first run's watchdog (0: none) */
};
extern struct conf_sweep_arm conf_sweep_arm;
_Noreturn void conf_sweep_child(const struct conf_case *c);
/* sweep_probe.c: "ok" when the process still connects to itself and moves bytes, else the
 * step that failed and its errno. */
void conf_sweep_probe(char *out, size_t size);
/* Sweeps the selected cases but those m or sweep_ex (may be NULL) list (max: injections a kind at most, spread evenly; 0: every call);
 * prints a line per failed injection and the closing "sweep: ..." line. 1 when any failed. */
struct conf_manifest;
int conf_sweep_run(const struct conf_case *const *sel, const struct conf_variant *const *selv,
		   size_t n, struct conf_manifest *m, struct conf_manifest *sweep_ex, int timeout,
		   unsigned long max, bool verbose);
/* Runs the selected cases once each with one injection (spec "KIND:N") and prints what each
 * run saw: how a sweep's failure is looked at. */
int conf_sweep_one(const struct conf_case *const *sel, const struct conf_variant *const *selv,
		   size_t n, int timeout, const char *spec);

/* target.c: select the target; for emu may re-exec the program (does not return then).
 * Returns 0, or -1 after printing why the target cannot be used. */
int conf_target_setup(enum conf_target t, const char *libdirs, char **argv);

/* target.c: the variant the forked child runs. */
void conf_set_variant(const struct conf_variant *v);

/* variant.c: the settings cases also run in, NULL-terminated. */
extern const struct conf_variant *const conf_variants[];
/* Does case id `id` run in variant v? */
bool conf_variant_has(const struct conf_variant *v, const char *id);
/* Enters v in the child before the case body (emu: attach its fabric, open the peer's
 * devices; system: check the link layer); ends the case with Notrun or Fail if it cannot. */
void conf_variant_enter(const struct conf_variant *v);

/* manifest.c: "ROW-ID  reason..." lines, '#' comment lines; IDs may be fnmatch globs. */
struct conf_manifest;
struct conf_manifest *conf_manifest_load(const char *path, FILE *err);
const char *conf_manifest_reason(struct conf_manifest *m, const char *id);
void conf_manifest_warn_unused(const struct conf_manifest *m, FILE *err);
void conf_manifest_free(struct conf_manifest *m);

/* report.c */
const char *conf_state_name(enum conf_state s);
void conf_report_line(FILE *out, const struct conf_result *r, bool verbose);
void conf_report_summary(FILE *out, const struct conf_result *res, size_t n);
int conf_report_tap(const char *path, const struct conf_result *res, size_t n);
int conf_report_junit(const char *path, const struct conf_result *res, size_t n);
/* The certification report, Markdown (path ends in .md) or HTML (.html/.htm); `header`: the
 * run's header lines (target, libraries, manifest). */
int conf_report_doc(const char *path, const struct conf_result *res, size_t n,
		    const char *header);
/* The same results as JSON (report_json.c). */
int conf_report_json(const char *path, const struct conf_result *res, size_t n,
		     const char *header);

#endif
