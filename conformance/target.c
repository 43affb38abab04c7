/* Which librdmacm the suite runs against, chosen at run time.
 *
 * The binary links the ordinary -lrdmacm -libverbs. For --target emu the dynamic linker must
 * pick the emulator's drop-in libraries: if they are not loaded, the runner re-executes itself
 * with LD_LIBRARY_PATH prefixed by the emulator's library directories. The emulator is
 * recognised by its control API (rdmaemu_ctl_version), found with dlsym only.
 */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conformance/conformance.h"
#include "conformance/runner.h"

static enum conf_target target = TARGET_SYSTEM;
static bool fake_device;
static char libpath[4096];
static const char *fabric_path, *local_addr, *peer_addr;
static bool passive;
static const struct conf_variant *variant;

const char *conf_fabric_path(void)
{
	return fabric_path;
}

void conf_set_fabric_path(const char *path)
{
	fabric_path = path;
}

const char *conf_local_addr(void)
{
	return local_addr;
}

void conf_set_local_addr(const char *addr)
{
	local_addr = addr;
}

const char *conf_peer_addr(void)
{
	return peer_addr;
}

void conf_set_peer_addr(const char *addr)
{
	peer_addr = addr;
}

bool conf_passive(void)
{
	return passive;
}

void conf_set_passive(bool on)
{
	passive = on;
}

const struct conf_variant *conf_variant(void)
{
	return variant;
}

void conf_set_variant(const struct conf_variant *v)
{
	variant = v;
}

enum conf_target conf_target(void)
{
	return target;
}

const char *conf_target_name(void)
{
	return target == TARGET_EMU ? "emu" : "system";
}

bool conf_fake_device(void)
{
	return fake_device;
}

void conf_set_fake_device(bool on)
{
	fake_device = on;
}

void *conf_ctl_sym(const char *name)
{
	return dlsym(RTLD_DEFAULT, name);
}

int conf_rdmacm_level(void)
{
	if (target == TARGET_EMU) {
		int (*level)(void) = (int (*)(void))conf_ctl_sym("rdmaemu_ctl_rdmacm_level");
		return level ? level() : 0;
	}
	return dlvsym(RTLD_DEFAULT, "rdma_resolve_addrinfo", "RDMACM_1.4") ? 60 : 44;
}

const char *conf_librdmacm_path(void)
{
	if (!libpath[0]) {
		Dl_info info;
		void *sym = dlsym(RTLD_DEFAULT, "rdma_getaddrinfo");

		if (sym && dladdr(sym, &info) && info.dli_fname)
			snprintf(libpath, sizeof libpath, "%s", info.dli_fname);
		else
			snprintf(libpath, sizeof libpath, "(unknown)");
	}
	return libpath;
}

/* The libibverbs the dynamic linker chose: the emulator's drop-in on --target emu once it
 * is built, the system's otherwise. */
const char *conf_libibverbs_path(void)
{
	static char path[4096];
	Dl_info info;
	void *sym;

	if (!path[0]) {
		sym = dlsym(RTLD_DEFAULT, "ibv_get_device_list");
		if (sym && dladdr(sym, &info) && info.dli_fname)
			snprintf(path, sizeof path, "%s", info.dli_fname);
		else
			snprintf(path, sizeof path, "(unknown)");
	}
	return path;
}

/* The build tree's libraries for the build tree's program, else pkglibdir's; RDMAEMU_RDMA_CORE (--rdma-core)
 * puts that librdmacm personality's directory first (docs/rdma-core-generations.md). */
static const char *default_libdirs(void)
{
	static char dirs[8192];
	char first[4200] = "";
	const char *rdma_core = getenv("RDMAEMU_RDMA_CORE");
	bool build = conf_in_build_tree();

	if (rdma_core && *rdma_core)
		snprintf(first, sizeof first, build ? "%s/lib/rdma-core-%s/.libs:" : "%s/rdma-core-%s:",
			 build ? RDMAEMU_BUILDDIR : RDMAEMU_PKGLIBDIR, rdma_core);
	if (build)
		snprintf(dirs, sizeof dirs, "%s%s/lib/.libs:%s/emu/verbs/.libs:%s/emu/.libs", first,
			 RDMAEMU_BUILDDIR, RDMAEMU_BUILDDIR, RDMAEMU_BUILDDIR);
	else
		snprintf(dirs, sizeof dirs, "%s%s", first, RDMAEMU_PKGLIBDIR);
	return dirs;
}

#define REEXEC_ENV "RDMAEMU_CONFORMANCE_REEXEC"

/* `rdmaemu run` loads the emulator's libraries and names rdmaemud's socket in RDMAEMU_DAEMON:
 * the program runs on an emulated host of the daemon's fabric, which is then its system (the
 * system target's two-node halves against a kernel rxe VM, docs/mixed-fabric.md). */
bool conf_on_emulated_host(void)
{
	const char *d = getenv("RDMAEMU_DAEMON");

	return d && *d && conf_ctl_sym("rdmaemu_ctl_version") != NULL;
}

int conf_target_setup(enum conf_target t, const char *libdirs, char **argv)
{
	bool emu_loaded = conf_ctl_sym("rdmaemu_ctl_version") != NULL;

	target = t;
	if (t == TARGET_SYSTEM) {
		if (emu_loaded && !conf_on_emulated_host()) {
			fprintf(stderr,
				"rdmaemu-conformance: --target system, but the emulator's librdmacm is "
				"loaded (%s) outside `rdmaemu run`; unset LD_LIBRARY_PATH/LD_PRELOAD, "
				"use --target emu, or run the suite on an emulated host with "
				"`rdmaemu run --node HOST --`\n",
				conf_librdmacm_path());
			return -1;
		}
		return 0;
	}
	/* The emulator attaches each case's process to $RDMAEMU_FABRIC on its first call (a
	 * case may attach another fabric before that: variants, the no-device rows). */
	if (fabric_path) {
		char *abs = realpath(fabric_path, NULL);

		if (!abs) {
			fprintf(stderr, "rdmaemu-conformance: --fabric %s: %s\n", fabric_path,
				strerror(errno));
			return -1;
		}
		if (setenv("RDMAEMU_FABRIC", abs, 1)) {
			free(abs);
			return -1;
		}
		free(abs);
	}
	if (emu_loaded) {
		unsetenv(REEXEC_ENV);
		return 0;
	}
	if (!libdirs)
		libdirs = getenv("RDMAEMU_LIBDIR");
	if (!libdirs || !*libdirs)
		libdirs = default_libdirs();
	if (getenv(REEXEC_ENV)) {
		fprintf(stderr,
			"rdmaemu-conformance: --target emu, but the emulator's librdmacm is not loaded "
			"even with LD_LIBRARY_PATH=%s (loaded: %s); build the project or pass --libdir\n",
			getenv("LD_LIBRARY_PATH") ? getenv("LD_LIBRARY_PATH") : "",
			conf_librdmacm_path());
		return -1;
	}

	const char *old = getenv("LD_LIBRARY_PATH");
	size_t n = strlen(libdirs) + (old ? strlen(old) : 0) + 2;
	char *path = malloc(n);

	if (!path)
		return -1;
	snprintf(path, n, "%s%s%s", libdirs, old && *old ? ":" : "", old ? old : "");
	if (setenv("LD_LIBRARY_PATH", path, 1) || setenv(REEXEC_ENV, "1", 1)) {
		free(path);
		return -1;
	}
	free(path);
	execv("/proc/self/exe", argv);
	fprintf(stderr, "rdmaemu-conformance: re-exec failed: %s\n", strerror(errno));
	return -1;
}
