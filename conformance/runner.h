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

#endif
