/* Binding imports in the loaded objects' import tables (emu/sim/bind.h). */
#include "config.h"

#include <elf.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "emu/sim/bind.h"

#if defined(__x86_64__)
#define BIND_JUMP_SLOT R_X86_64_JUMP_SLOT
#define BIND_GLOB_DAT R_X86_64_GLOB_DAT
#elif defined(__aarch64__)
#define BIND_JUMP_SLOT R_AARCH64_JUMP_SLOT
#define BIND_GLOB_DAT R_AARCH64_GLOB_DAT
#endif

static pthread_mutex_t bind_lock = PTHREAD_MUTEX_INITIALIZER;
static const struct emu_bind_sym *g_syms;
static size_t g_n;
static bool (*g_skip)(const char *path);

bool emu_bind_is_system(const char *path)
{
	static const char *const sys[] = { "ld-linux", "ld64.so", "linux-vdso", "linux-gate",
					   "libc.so", "libpthread.so", "librt.so", "libdl.so",
					   "libm.so", "libasan.so", "libubsan.so", "liblsan.so",
					   "libtsan.so", "vgpreload_" };
	const char *b = strrchr(path, '/');

	b = b ? b + 1 : path;
	for (size_t i = 0; i < sizeof(sys) / sizeof(sys[0]); i++)
		if (!strncmp(b, sys[i], strlen(sys[i])))
			return true;
	return false;
}

#ifdef BIND_JUMP_SLOT
struct dyn {
	uintptr_t relro, relro_end; /* PT_GNU_RELRO: read-only once relocated */
	const ElfW(Sym) *symtab;
	const char *strtab;
	const ElfW(Rela) *rel[2];
	size_t relsz[2];
};

/* Writes one slot. A slot in the RELRO range is in a page the dynamic linker made read-only:
 * writable for the write, read-only again after; the others are in writable pages. */
static void bind_slot(const struct dyn *d, void **slot, void *fn)
{
	uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE), a = (uintptr_t)slot & ~(pg - 1);
	bool ro = (uintptr_t)slot >= d->relro && (uintptr_t)slot < d->relro_end;

	if (*slot == fn)
		return;
	if (ro && mprotect((void *)a, pg, PROT_READ | PROT_WRITE))
		return;
	*slot = fn;
	if (ro)
		mprotect((void *)a, pg, PROT_READ);
}

static void bind_rel(const struct dl_phdr_info *info, const struct dyn *d, int k)
{
	for (size_t i = 0; i < d->relsz[k] / sizeof(ElfW(Rela)); i++) {
		const ElfW(Rela) *r = &d->rel[k][i];
		unsigned type = (unsigned)ELF64_R_TYPE(r->r_info);
		const char *name;

		if ((type != BIND_JUMP_SLOT && type != BIND_GLOB_DAT) || !ELF64_R_SYM(r->r_info))
			continue;
		name = d->strtab + d->symtab[ELF64_R_SYM(r->r_info)].st_name;
		for (size_t s = 0; s < g_n; s++)
			if (!strcmp(name, g_syms[s].name))
				bind_slot(d, (void **)(info->dlpi_addr + r->r_offset),
					  g_syms[s].repl);
	}
}

static int bind_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	(void)arg;
	uintptr_t relro = 0, relro_end = 0;

	if (g_skip(info->dlpi_name) || emu_bind_is_system(info->dlpi_name))
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_GNU_RELRO) {
			relro = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
			relro_end = relro + info->dlpi_phdr[i].p_memsz;
		}
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Dyn) *dy;
		struct dyn d = { .relro = relro, .relro_end = relro_end };

		if (info->dlpi_phdr[i].p_type != PT_DYNAMIC)
			continue;
		for (dy = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
		     dy->d_tag != DT_NULL; dy++)
			switch (dy->d_tag) {
			case DT_SYMTAB: d.symtab = (const void *)dy->d_un.d_ptr; break;
			case DT_STRTAB: d.strtab = (const void *)dy->d_un.d_ptr; break;
			case DT_JMPREL: d.rel[0] = (const void *)dy->d_un.d_ptr; break;
			case DT_PLTRELSZ: d.relsz[0] = dy->d_un.d_val; break;
			case DT_RELA: d.rel[1] = (const void *)dy->d_un.d_ptr; break;
			case DT_RELASZ: d.relsz[1] = dy->d_un.d_val; break;
			}
		if (!d.symtab || !d.strtab)
			continue;
		for (int k = 0; k < 2; k++)
			if (d.rel[k])
				bind_rel(info, &d, k);
	}
	return 0;
}
#endif

int emu_bind_install(const struct emu_bind_sym *syms, size_t n, bool (*skip)(const char *path))
{
#ifdef BIND_JUMP_SLOT
	pthread_mutex_lock(&bind_lock);
	g_syms = syms;
	g_n = n;
	g_skip = skip;
	dl_iterate_phdr(bind_object, NULL);
	pthread_mutex_unlock(&bind_lock);
	return 0;
#else
	(void)syms;
	(void)n;
	(void)skip;
	return -ENOSYS;
#endif
}

void emu_bind_rescan(void)
{
#ifdef BIND_JUMP_SLOT
	pthread_mutex_lock(&bind_lock);
	if (g_syms)
		dl_iterate_phdr(bind_object, NULL);
	pthread_mutex_unlock(&bind_lock);
#endif
}
