/* Shared by test_neigh and neigh_gen: attaching a fixture with a fresh engine, sockaddrs, and
 * the resolution scenarios whose exchanges both check. */
#ifndef RDMAEMU_NEIGH_TEST_H
#define RDMAEMU_NEIGH_TEST_H

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu/sim/engine.h"
#include "emu/net/neigh.h"
#include "emu/sim/process.h"
#include "rdmaemu/ctl.h"

#define MS EMU_NSEC_PER_MSEC
#define SEC EMU_NSEC_PER_SEC

/* The engine the test holds locked, so that a failed assertion (which leaves the test with a
 * longjmp) does not leave the lock held for the next test: nt_teardown releases it. */
static struct emu_engine *nt_held;

static inline void nt_lock(struct emu_engine *e)
{
	emu_engine_lock(e);
	nt_held = e;
}

static inline void nt_unlock(struct emu_engine *e)
{
	nt_held = NULL;
	emu_engine_unlock(e);
}

/* A fresh engine attached to fixtures/<name> as node `node`, locked. NULL on failure. */
static inline struct emu_engine *nt_attach(const char *name, const char *node)
{
	char path[1200];
	const char *top = getenv("RDMAEMU_TOP_SRCDIR");
	struct emu_engine *e;

	emu_engine_reset();
	emu_process_reset();
	snprintf(path, sizeof(path), "%s/fixtures/%s", top && *top ? top : RDMAEMU_SRCDIR, name);
	if (rdmaemu_ctl_attach(path, node))
		return NULL;
	e = emu_engine_get();
	if (e)
		nt_lock(e);
	return e;
}

static inline void nt_detach(struct emu_engine *e)
{
	if (e && nt_held == e)
		nt_unlock(e);
	emu_engine_reset();
	emu_process_reset();
}

/* cmocka teardown: whatever the test left behind. */
static inline int nt_teardown(void **state)
{
	(void)state;
	nt_detach(nt_held);
	return 0;
}

static inline struct sockaddr_storage nt_sa(const char *s, unsigned scope)
{
	struct sockaddr_storage ss;

	memset(&ss, 0, sizeof(ss));
	if (inet_pton(AF_INET, s, &((struct sockaddr_in *)&ss)->sin_addr) == 1) {
		ss.ss_family = AF_INET;
	} else if (inet_pton(AF_INET6, s, &((struct sockaddr_in6 *)&ss)->sin6_addr) == 1) {
		ss.ss_family = AF_INET6;
		((struct sockaddr_in6 *)&ss)->sin6_scope_id = scope;
	}
	return ss;
}

/* One resolution's outcome, recorded by nt_cb. */
struct nt_res {
	int calls;
	uint64_t at;
	struct emu_engine *e;
	struct emu_neigh_result r;
};

static inline void nt_cb(void *ctx, const struct emu_neigh_result *r)
{
	struct nt_res *o = ctx;

	o->calls++;
	o->at = emu_engine_now(o->e);
	o->r = *r;
}

/* Resolves dst from host `host` with a timeout and runs the engine until the callback ran
 * (or `limit` ns passed). Returns the synchronous result. */
static inline int nt_resolve(struct emu_engine *e, size_t host, const char *dst, unsigned scope,
			     uint64_t timeout, uint64_t limit, struct nt_res *o)
{
	struct sockaddr_storage d = nt_sa(dst, scope);
	int ret;

	memset(o, 0, sizeof(*o));
	o->e = e;
	ret = emu_neigh_resolve(e, host, NULL, (struct sockaddr *)&d, timeout, nt_cb, o, NULL);
	if (ret)
		return ret;
	emu_engine_run_now(e);
	for (uint64_t step = 0; !o->calls && step < limit; step += MS)
		emu_engine_advance(e, MS);
	return 0;
}

#endif
