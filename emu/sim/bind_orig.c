/* The functions the imports resolved to before binding (bind_elf.h: emu_bind_resolve).
 *
 * dlsym(RTLD_DEFAULT, name) is what every import of name was bound to, with one exception: a
 * program linked without -pie that takes the address of a library function gives that
 * function its PLT entry as address for the whole process (an undefined symbol with a value),
 * so that pointers compare equal everywhere; the loader and dlsym return that entry. It jumps
 * through the program's own GOT slot, which binding rewrites: a replacement calling it would
 * call itself. The function behind it is found in the objects after the program, in load
 * order, as the loader would have found it for the program. */
#include "config.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>

#include "emu/sim/array.h"
#include "emu/sim/bind_elf.h"
#include "util/failcall.h"

struct probe {
	const char *name;
	void *addr;
	uintptr_t base;
	bool canonical;
};

static void probe_slot(void *arg, void **slot, const ElfW(Sym) *sym, const char *name)
{
	struct probe *p = arg;

	if (sym->st_value && !strcmp(name, p->name) && p->base + sym->st_value == (uintptr_t)p->addr)
		p->canonical = true;
}

/* The program is the first object listed. */
static int probe_program(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct probe *p = arg;
	struct emu_bind_view v;

	if (emu_bind_view_init(&v, info) && emu_bind_view_holds(&v, p->addr)) {
		p->base = info->dlpi_addr;
		emu_bind_view_walk(&v, probe_slot, p);
	}
	return 1;
}

struct later {
	char **path;
	size_t n;
	size_t seen;
	const ElfW(Ehdr) *vdso;
	bool nomem;
};

/* The objects after the program, but the vDSO (it defines clock_gettime and others too). */
static int list_later(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct later *l = arg;

	if (l->seen++ == 0 || !info->dlpi_name || !info->dlpi_name[0])
		return 0;
	if (l->vdso && (const char *)info->dlpi_phdr == (const char *)l->vdso + l->vdso->e_phoff)
		return 0;
	if (emu_array_push(&l->path, &l->n, sizeof(*l->path)) < 0 ||
	    !(l->path[l->n - 1] = emu_strdup(info->dlpi_name))) {
		l->nomem = true;
		return 1;
	}
	return 0;
}

static void *resolve_after_program(const char *name)
{
	struct later l = {.vdso = (const ElfW(Ehdr) *)getauxval(AT_SYSINFO_EHDR)};
	void *found = NULL;

	dl_iterate_phdr(list_later, &l);
	for (size_t i = 0; i < l.n && l.path[i] && !found; i++) {
		void *h = dlopen(l.path[i], RTLD_LAZY | RTLD_NOLOAD);

		if (!h)
			continue;
		found = dlsym(h, name); /* that object, then its dependencies */
		dlclose(h);
	}
	for (size_t i = 0; i < l.n; i++)
		free(l.path[i]);
	free(l.path);
	return found;
}

void *emu_bind_resolve(const char *name, void **canonical)
{
	struct probe p = {.name = name, .addr = dlsym(RTLD_DEFAULT, name)};

	*canonical = NULL;
	if (!p.addr)
		return NULL;
	dl_iterate_phdr(probe_program, &p);
	if (!p.canonical)
		return p.addr;
	*canonical = p.addr;
	return resolve_after_program(name);
}
