/* User memory as the kernel judges it when an MR is registered (ib_umem_get, Linux 6.1).
 *
 * Mappings: the pages are pinned with FOLL_WRITE, plus FOLL_FORCE when the MR is not writable.
 * So a writable MR needs writable pages; a read-only MR may cover read-only (even PROT_NONE)
 * private pages, which FOLL_FORCE pins for copy-on-write, but not read-only shared ones; an
 * unmapped page, or a VM_IO/VM_PFNMAP one ([vvar]), fails with EFAULT. The emulator reads the
 * process's own /proc/self/maps to decide, as pin_user_pages_fast() walks the VMAs.
 *
 * Pinned pages count against RLIMIT_MEMLOCK per process (mm->pinned_vm) unless the process has
 * CAP_IPC_LOCK, exactly as for a real HCA: a program that needs `ulimit -l` on real hardware
 * needs it here too. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "emu/hca/hca.h"

#define CAP_IPC_LOCK_BIT 14

static pthread_mutex_t pin_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t pinned_pages;

/* CAP_IPC_LOCK in the effective set (capable() looks at the effective set). */
static bool has_cap_ipc_lock(void)
{
	char line[256];
	bool cap = false;
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		uint64_t eff;

		if (sscanf(line, "CapEff: %" SCNx64, &eff) == 1) {
			cap = eff >> CAP_IPC_LOCK_BIT & 1;
			break;
		}
	}
	fclose(f);
	return cap;
}

static uint64_t memlock_pages(void)
{
	struct rlimit rl;
	long page = sysconf(_SC_PAGESIZE);

	if (getrlimit(RLIMIT_MEMLOCK, &rl) || rl.rlim_cur == RLIM_INFINITY)
		return UINT64_MAX;
	return (uint64_t)rl.rlim_cur / (uint64_t)page;
}

int emu_mem_can_lock(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_MEMLOCK, &rl) == 0 && rl.rlim_cur == 0 && !has_cap_ipc_lock())
		return EPERM;
	return 0;
}

int emu_mem_pin(uint64_t npages)
{
	uint64_t limit = memlock_pages();
	int err = 0;

	pthread_mutex_lock(&pin_lock);
	if (pinned_pages + npages > limit && !has_cap_ipc_lock())
		err = ENOMEM;
	else
		pinned_pages += npages;
	pthread_mutex_unlock(&pin_lock);
	return err;
}

void emu_mem_unpin(uint64_t npages)
{
	pthread_mutex_lock(&pin_lock);
	pinned_pages = npages > pinned_pages ? 0 : pinned_pages - npages;
	pthread_mutex_unlock(&pin_lock);
}

/* Whether one VMA allows the pin (check_vma_flags() with FOLL_WRITE [| FOLL_FORCE]). */
static bool vma_ok(const char *perms, const char *name, bool write)
{
	bool w = perms[1] == 'w', shared = perms[3] == 's';

	if (!strcmp(name, "[vvar]") || !strcmp(name, "[vsyscall]"))
		return false; /* VM_IO | VM_PFNMAP */
	if (w)
		return true;
	/* not writable: FOLL_FORCE (read-only MR) may break COW on a private mapping only */
	return !write && !shared;
}

int emu_mem_check_mapped(uintptr_t start, uintptr_t end, bool write)
{
	char line[4096];
	uintptr_t covered = start;
	FILE *f = fopen("/proc/self/maps", "re");

	if (!f)
		return EFAULT;
	while (covered < end && fgets(line, sizeof(line), f)) {
		uintptr_t lo, hi;
		char perms[8] = "", name[4096] = "";

		if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " %7s %*s %*s %*s %4095[^\n]", &lo, &hi,
			   perms, name) < 3)
			continue;
		if (hi <= covered)
			continue;
		if (lo > covered)
			break; /* a hole */
		if (!vma_ok(perms, name, write))
			break;
		covered = hi;
	}
	fclose(f);
	return covered >= end ? 0 : EFAULT;
}
