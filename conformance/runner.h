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
};

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
