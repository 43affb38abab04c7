/* Helpers shared by the fabric unit tests (header-only: each test is one program). */
#ifndef RDMAEMU_FABRIC_TEST_H
#define RDMAEMU_FABRIC_TEST_H

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "emu/sim/fabric.h"

/* The source tree's fixtures/ (the harness exports RDMAEMU_TOP_SRCDIR; the build knows it too). */
static inline const char *fixture_dir(void)
{
	static char buf[1024];
	const char *top = getenv("RDMAEMU_TOP_SRCDIR");

	snprintf(buf, sizeof(buf), "%s/fixtures", top && *top ? top : RDMAEMU_SRCDIR);
	return buf;
}

static inline char *fixture_path(const char *name)
{
	static char buf[1200];

	snprintf(buf, sizeof(buf), "%s/%s", fixture_dir(), name);
	return buf;
}

/* A scratch directory for files the tests write; removed by tmpdir_cleanup(). */
static char tmpdir_path[256];

static inline const char *tmpdir_make(void)
{
	if (!tmpdir_path[0]) {
		snprintf(tmpdir_path, sizeof(tmpdir_path), "/tmp/rdmaemu-fabric-test.XXXXXX");
		assert_non_null(mkdtemp(tmpdir_path));
	}
	return tmpdir_path;
}

static inline void tmpdir_cleanup(void)
{
	char cmd[300];

	if (!tmpdir_path[0])
		return;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir_path);
	assert_int_equal(system(cmd), 0);
	tmpdir_path[0] = 0;
}

/* Writes `text` to tmpdir/name (creating subdirectories named in it); returns the path. */
static inline const char *write_file(const char *name, const char *text)
{
	static char path[2][512];
	static int which;
	char *p = path[which ^= 1];
	FILE *fp;

	snprintf(p, 512, "%s/%s", tmpdir_make(), name);
	for (char *s = strchr(p + strlen(tmpdir_path) + 1, '/'); s; s = strchr(s + 1, '/')) {
		*s = 0;
		mkdir(p, 0700);
		*s = '/';
	}
	fp = fopen(p, "w");
	assert_non_null(fp);
	fputs(text, fp);
	assert_int_equal(fclose(fp), 0);
	return p;
}

static inline struct emu_fabric *load_ok(const char *text)
{
	struct emu_error err;
	struct emu_fabric *f = emu_fabric_load_text(text, "t.fabric", tmpdir_make(), &err);

	if (!f)
		fail_msg("load failed: %s:%u: %s", err.file, err.line, err.msg);
	return f;
}

/* Loads text that must fail with errno `e` at line `line` with a message containing `msg`. */
static inline void load_bad(const char *text, int e, unsigned line, const char *msg)
{
	struct emu_error err;
	struct emu_fabric *f;

	errno = 0;
	f = emu_fabric_load_text(text, "t.fabric", tmpdir_make(), &err);
	if (f) {
		emu_fabric_free(f);
		fail_msg("loaded, expected error '%s'", msg);
	}
	if (errno != e || err.line != line || !strstr(err.msg, msg))
		fail_msg("got errno %d line %u '%s' (file %s), expected errno %d line %u '%s'",
			 errno, err.line, err.msg, err.file, e, line, msg);
}

static inline char *show_to_string(const struct emu_fabric *f)
{
	FILE *fp = tmpfile();
	long len;
	char *buf;

	assert_non_null(fp);
	emu_fabric_show(f, fp);
	len = ftell(fp);
	assert_true(len > 0);
	buf = malloc((size_t)len + 1);
	assert_non_null(buf);
	rewind(fp);
	assert_int_equal(fread(buf, 1, (size_t)len, fp), (size_t)len);
	buf[len] = 0;
	fclose(fp);
	return buf;
}

static inline const struct emu_port *port_of(const struct emu_fabric *f, const char *host,
					     const char *dev, unsigned port)
{
	const struct emu_host *h = emu_fabric_find_host(f, host);

	assert_non_null(h);
	for (size_t d = 0; d < h->ndevices; d++)
		if (!strcmp(h->devices[d].name, dev)) {
			assert_true(port >= 1 && port <= h->devices[d].nports);
			return &h->devices[d].ports[port - 1];
		}
	fail_msg("no device %s on %s", dev, host);
	return NULL;
}

static inline void assert_gid(const struct emu_gid *g, const char *text)
{
	uint8_t raw[16];

	assert_int_equal(emu_parse_gid(text, raw), 0);
	assert_memory_equal(g->raw, raw, 16);
}

#endif
