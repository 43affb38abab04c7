/* Process attachment to an emulated host, and the attach part of the control API.
 *
 * A process is one node of one fabric, fixed at first use: the real stack's libraries likewise
 * discover "this machine" once (ucma_init caches the device list). Attaching is guarded by a
 * mutex rather than pthread_once so that tests can reset it and a failed attach can report
 * the same error to every caller. A fabric that cannot be used (malformed, no such node)
 * stays failed; a resource that ran out (memory, descriptors) does not: the next call tries
 * again, as libibverbs' ibv_get_device_list() runs its initialisation again until it succeeds. */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu/sim/process.h"
#include "rdmaemu/ctl.h"

static pthread_mutex_t attach_lock = PTHREAD_MUTEX_INITIALIZER;
static struct emu_fabric *attached_fabric;
static struct emu_host *attached_host;
static int attach_errno; /* non-zero: attaching failed with this errno (sticky) */

/* A resource that ran out, which a later attempt may have. */
static bool attach_transient(int e)
{
	return e == ENOMEM || e == EMFILE || e == ENFILE || e == EAGAIN;
}
static const struct emu_host *extra_hosts[EMU_PROCESS_MAX_EXTRA_HOSTS];
static size_t nextra_hosts;
static bool hosts_frozen; /* the verbs device list exists: its device set is fixed */
static emu_process_attach_fn *attach_hook;         /* under attach_lock */
static struct emu_process_reset_hook *reset_hooks; /* by order; changed under attach_lock */

void emu_process_set_attach_hook(emu_process_attach_fn *fn)
{
	pthread_mutex_lock(&attach_lock);
	attach_hook = fn;
	pthread_mutex_unlock(&attach_lock);
}

void emu_process_on_reset(struct emu_process_reset_hook *h)
{
	struct emu_process_reset_hook **pp;

	pthread_mutex_lock(&attach_lock);
	for (pp = &reset_hooks; *pp && (*pp)->order <= h->order; pp = &(*pp)->next)
		;
	h->next = *pp;
	*pp = h;
	pthread_mutex_unlock(&attach_lock);
}

/* Loads the fabric and picks the node; on failure prints why and returns an errno. */
static int attach_locked(const char *path, const char *text, const char *node)
{
	struct emu_error err;
	struct emu_fabric *f;
	struct emu_host *h;

	memset(&err, 0, sizeof(err));
	if (text)
		f = emu_fabric_load_text(text, "(control API text)", ".", &err);
	else if (path && *path)
		f = emu_fabric_load(path, &err);
	else
		f = emu_fabric_builtin();
	if (!f) {
		int e = errno ? errno : EINVAL;

		fprintf(stderr, "rdmaemu: cannot load fabric: %s:%u: %s\n",
			err.file[0] ? err.file : (path ? path : "(text)"), err.line,
			err.msg[0] ? err.msg : strerror(e));
		return e;
	}
	if (node && *node) {
		h = emu_fabric_find_host(f, node);
		if (!h) {
			fprintf(stderr, "rdmaemu: fabric %s has no host named '%s'\n", f->source, node);
			emu_fabric_free(f);
			return ENOENT;
		}
	} else if (f->nhosts) {
		h = &f->hosts[0];
	} else {
		fprintf(stderr, "rdmaemu: fabric %s has no hosts\n", f->source);
		emu_fabric_free(f);
		return ENOENT;
	}
	if (!text && attach_hook) {
		int e = attach_hook(f, h, path);

		if (e) {
			emu_fabric_free(f);
			return e;
		}
	}
	attached_fabric = f;
	/* released: emu_process_host's lock-free read sees a complete fabric */
	__atomic_store_n(&attached_host, h, __ATOMIC_RELEASE);
	return 0;
}

const struct emu_host *emu_process_host(void)
{
	struct emu_host *h = __atomic_load_n(&attached_host, __ATOMIC_ACQUIRE);
	int e;

	/* attached: no lock (9 calls a connection; the host stays until emu_process_reset,
	 * which nothing may race) */
	if (h)
		return h;
	pthread_mutex_lock(&attach_lock);
	if (!attached_host && !attach_errno)
		attach_errno = attach_locked(getenv("RDMAEMU_FABRIC"), NULL, getenv("RDMAEMU_NODE"));
	h = attached_host;
	e = attach_errno;
	if (attach_transient(e))
		attach_errno = 0;
	pthread_mutex_unlock(&attach_lock);
	if (!h)
		errno = e;
	return h;
}

const struct emu_fabric *emu_process_fabric(void)
{
	const struct emu_host *h = emu_process_host();

	return h ? h->fabric : NULL;
}

void emu_process_reset(void)
{
	/* the hooks were registered when the library loaded; they run without attach_lock, as
	 * the layers' own locks are taken in them */
	for (struct emu_process_reset_hook *h = reset_hooks; h; h = h->next)
		h->reset();
	pthread_mutex_lock(&attach_lock);
	emu_fabric_free(attached_fabric);
	attached_fabric = NULL;
	__atomic_store_n(&attached_host, NULL, __ATOMIC_RELEASE);
	attach_errno = 0;
	nextra_hosts = 0;
	hosts_frozen = false;
	pthread_mutex_unlock(&attach_lock);
}

const struct emu_host *emu_process_extra_host(size_t i)
{
	const struct emu_host *h;

	pthread_mutex_lock(&attach_lock);
	h = i < nextra_hosts ? extra_hosts[i] : NULL;
	pthread_mutex_unlock(&attach_lock);
	return h;
}

void emu_process_hosts_freeze(void)
{
	pthread_mutex_lock(&attach_lock);
	hosts_frozen = true;
	pthread_mutex_unlock(&attach_lock);
}

int rdmaemu_ctl_open_host_devices(const char *node)
{
	const struct emu_host *self = emu_process_host(); /* attaches if needed */
	int e = 0;

	if (!self)
		return -1; /* errno: the attach error */
	pthread_mutex_lock(&attach_lock);
	{
		const struct emu_host *h = node ? emu_fabric_find_host(attached_fabric, node) : NULL;

		if (!h)
			e = ENOENT;
		else if (h == self)
			e = EINVAL;
		else if (hosts_frozen)
			e = EBUSY;
		for (size_t i = 0; !e && i < nextra_hosts; i++)
			if (extra_hosts[i] == h)
				goto out; /* already there */
		if (!e && nextra_hosts == EMU_PROCESS_MAX_EXTRA_HOSTS)
			e = ENOSPC;
		if (!e)
			extra_hosts[nextra_hosts++] = h;
	}
out:
	pthread_mutex_unlock(&attach_lock);
	if (e) {
		errno = e;
		return -1;
	}
	return 0;
}

/* The host whose rdma_cm files this thread opens (rdmaemu_ctl_cm_host); NULL: the attached
 * host. */
static _Thread_local const struct emu_host *cm_host;

const struct emu_host *emu_process_cm_host(void)
{
	return cm_host ? cm_host : emu_process_host();
}

int rdmaemu_ctl_cm_host(const char *node)
{
	const struct emu_host *self = emu_process_host(); /* attaches if needed */
	const struct emu_host *h;
	int e = ENOENT;

	if (!self)
		return -1; /* errno: the attach error */
	if (!node) {
		cm_host = NULL;
		return 0;
	}
	pthread_mutex_lock(&attach_lock);
	h = emu_fabric_find_host(attached_fabric, node);
	if (h == self)
		e = 0;
	for (size_t i = 0; h && e && i < nextra_hosts; i++)
		if (extra_hosts[i] == h)
			e = 0;
	if (h && e)
		e = EINVAL; /* a host whose devices this process does not open */
	pthread_mutex_unlock(&attach_lock);
	if (e) {
		errno = e;
		return -1;
	}
	cm_host = h == self ? NULL : h;
	return 0;
}

static int ctl_attach(const char *path, const char *text, const char *node)
{
	int e;

	pthread_mutex_lock(&attach_lock);
	if (attached_host || attach_errno)
		e = EBUSY;
	else
		e = attach_locked(path, text, node);
	pthread_mutex_unlock(&attach_lock);
	if (e) {
		errno = e;
		return -1;
	}
	return 0;
}

const char *rdmaemu_ctl_version(void)
{
	return "rdmaemu " PACKAGE_VERSION;
}

/* The emulated librdmacm says its personality from its constructor (lib/personality.c); the
 * emulator itself behaves the same under both. */
static int rdmacm_level;

void rdmaemu_ctl_rdmacm_loaded(int level)
{
	__atomic_store_n(&rdmacm_level, level, __ATOMIC_RELEASE);
}

int rdmaemu_ctl_rdmacm_level(void)
{
	return __atomic_load_n(&rdmacm_level, __ATOMIC_ACQUIRE);
}

int rdmaemu_ctl_attach(const char *path, const char *node)
{
	return ctl_attach(path, NULL, node);
}

int rdmaemu_ctl_attach_text(const char *text, const char *node)
{
	if (!text) {
		errno = EINVAL;
		return -1;
	}
	return ctl_attach(NULL, text, node);
}

const char *rdmaemu_ctl_node(void)
{
	const struct emu_host *h = emu_process_host();

	return h ? h->name : NULL;
}
