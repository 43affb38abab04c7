/* Common set-up of the verbs tests.
 *
 * The tests are built like an application: the system's <infiniband/verbs.h>, linked with
 * -libverbs. verbs_test_init() re-executes the test with LD_LIBRARY_PATH on the build's
 * emu/verbs/.libs and emu/.libs, so the dynamic linker binds the program to the emulated
 * libibverbs.so.1 (and the symbol versions of the system library must resolve in it); then it
 * checks that the emulator really is what got loaded, and attaches the process to a fabric. */
#ifndef RDMAEMU_VERBS_TEST_H
#define RDMAEMU_VERBS_TEST_H

#include <dlfcn.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <infiniband/verbs.h>

#define VT_CHILD_ENV "RDMAEMU_VERBS_TEST_CHILD"

/* fixture: a file under fixtures/ (NULL with text); text: a fabric in rdmaemu-fabric(5) form. */
static inline void verbs_test_init(char **argv, const char *fixture, const char *text,
				   const char *node)
{
	const char *b = getenv("RDMAEMU_TOP_BUILDDIR"), *s = getenv("RDMAEMU_TOP_SRCDIR");
	int (*attach)(const char *, const char *);
	int (*attach_text)(const char *, const char *);

	if (!b)
		b = RDMAEMU_BUILDDIR;
	if (!s)
		s = RDMAEMU_SRCDIR;
	if (!getenv(VT_CHILD_ENV)) {
		const char *old = getenv("LD_LIBRARY_PATH");
		char *path;

		if (asprintf(&path, "%s/emu/verbs/.libs:%s/emu/.libs%s%s", b, b, old ? ":" : "",
			     old ? old : "") < 0)
			exit(99);
		setenv("LD_LIBRARY_PATH", path, 1);
		setenv(VT_CHILD_ENV, "1", 1);
		free(path);
		execv("/proc/self/exe", argv);
		perror("execv");
		exit(99);
	}
	attach = (int (*)(const char *, const char *))dlsym(RTLD_DEFAULT, "rdmaemu_ctl_attach");
	attach_text = (int (*)(const char *, const char *))dlsym(RTLD_DEFAULT,
								  "rdmaemu_ctl_attach_text");
	if (!attach || !attach_text) {
		fprintf(stderr, "the emulated libibverbs.so.1 is not the one loaded\n");
		exit(99);
	}
	if (fixture) {
		char *path;

		if (asprintf(&path, "%s/fixtures/%s", s, fixture) < 0 || attach(path, node)) {
			perror("rdmaemu_ctl_attach");
			exit(99);
		}
		free(path);
	} else if (attach_text(text, node)) {
		perror("rdmaemu_ctl_attach_text");
		exit(99);
	}
}

/* Opens device `name` of the attached host. */
static inline struct ibv_context *vt_open(const char *name)
{
	struct ibv_device **l = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;

	assert_non_null(l);
	for (int i = 0; l[i]; i++)
		if (!strcmp(ibv_get_device_name(l[i]), name))
			ctx = ibv_open_device(l[i]);
	ibv_free_device_list(l);
	assert_non_null(ctx);
	return ctx;
}

#endif
