/* A loaded object's import slots (bind_elf.h). */
#include "config.h"

#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "emu/sim/bind_elf.h"
#include "util/failcall.h"

/* The relocation types that store a symbol's address into a GOT slot: a call through the PLT
 * (JUMP_SLOT) and a -fno-plt call or an address-taken function (GLOB_DAT). */
#if defined(__x86_64__)
#define BIND_SLOT_TYPES {R_X86_64_JUMP_SLOT, R_X86_64_GLOB_DAT}
#elif defined(__aarch64__)
#define BIND_SLOT_TYPES {R_AARCH64_JUMP_SLOT, R_AARCH64_GLOB_DAT}
#endif

#if __ELF_NATIVE_CLASS == 64
#define BIND_R_SYM(i) ELF64_R_SYM(i)
#define BIND_R_TYPE(i) ELF64_R_TYPE(i)
#else
#define BIND_R_SYM(i) ELF32_R_SYM(i)
#define BIND_R_TYPE(i) ELF32_R_TYPE(i)
#endif

bool emu_bind_arch_known(void)
{
#ifdef BIND_SLOT_TYPES
	return true;
#else
	return false;
#endif
}

static bool is_slot_type(unsigned long type)
{
#ifdef BIND_SLOT_TYPES
	static const unsigned long types[] = BIND_SLOT_TYPES;

	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (type == types[i])
			return true;
#endif
	return false;
}

bool emu_bind_view_holds(const struct emu_bind_view *v, const void *addr)
{
	return (uintptr_t)addr >= v->lo && (uintptr_t)addr < v->hi;
}

/* A pointer of the dynamic section. glibc adds the load address to some of them in place
 * (DT_SYMTAB, DT_STRTAB, the relocation tables) when the section is writable; other loaders
 * and the read-only sections of other linkers leave them relative. An absolute address lies
 * in the object's span; a relative one, plus the base, does. */
static const void *dyn_ptr(const struct emu_bind_view *v, ElfW(Addr) p)
{
	if (p >= v->lo && p < v->hi)
		return (const void *)p;
	return (const void *)(v->base + p);
}

static void read_dynamic(struct emu_bind_view *v, const ElfW(Dyn) *d)
{
	ElfW(Addr) symtab = 0, strtab = 0;
	long pltrel = DT_RELA;

	for (; d->d_tag != DT_NULL; d++) {
		switch (d->d_tag) {
		case DT_SYMTAB: symtab = d->d_un.d_ptr; break;
		case DT_STRTAB: strtab = d->d_un.d_ptr; break;
		case DT_STRSZ: v->strsz = d->d_un.d_val; break;
		case DT_JMPREL: v->tab[0].at = dyn_ptr(v, d->d_un.d_ptr); break;
		case DT_PLTRELSZ: v->tab[0].size = d->d_un.d_val; break;
		case DT_PLTREL: pltrel = (long)d->d_un.d_val; break;
		case DT_RELA: v->tab[1].at = dyn_ptr(v, d->d_un.d_ptr); break;
		case DT_RELASZ: v->tab[1].size = d->d_un.d_val; break;
		case DT_RELAENT: v->tab[1].ent = d->d_un.d_val; break;
		case DT_REL: v->tab[2].at = dyn_ptr(v, d->d_un.d_ptr); break;
		case DT_RELSZ: v->tab[2].size = d->d_un.d_val; break;
		case DT_RELENT: v->tab[2].ent = d->d_un.d_val; break;
		default: break;
		}
	}
	if (symtab)
		v->symtab = dyn_ptr(v, symtab);
	if (strtab)
		v->strtab = dyn_ptr(v, strtab);
	v->tab[0].rela = pltrel == DT_RELA;
	v->tab[0].ent = v->tab[0].rela ? sizeof(ElfW(Rela)) : sizeof(ElfW(Rel));
	v->tab[1].rela = true;
	if (!v->tab[1].ent)
		v->tab[1].ent = sizeof(ElfW(Rela));
	if (!v->tab[2].ent)
		v->tab[2].ent = sizeof(ElfW(Rel));
}

bool emu_bind_view_init(struct emu_bind_view *v, const struct dl_phdr_info *info)
{
	const ElfW(Dyn) *dyn = NULL;
	uintptr_t lo = UINTPTR_MAX, hi = 0;

	*v = (struct emu_bind_view){.base = info->dlpi_addr};
	for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_DYNAMIC)
			dyn = (const ElfW(Dyn) *)(info->dlpi_addr + ph->p_vaddr);
		if (ph->p_type != PT_LOAD)
			continue;
		if (ph->p_vaddr < lo)
			lo = ph->p_vaddr;
		if (ph->p_vaddr + ph->p_memsz > hi)
			hi = ph->p_vaddr + ph->p_memsz;
	}
	if (!dyn || lo >= hi)
		return false;
	v->lo = info->dlpi_addr + lo;
	v->hi = info->dlpi_addr + hi;
	read_dynamic(v, dyn);
	return v->symtab && v->strtab;
}

static void walk_table(const struct emu_bind_view *v, const struct emu_bind_reltab *t,
		       emu_bind_slot_fn *fn, void *arg)
{
	if (!t->at || t->ent < sizeof(ElfW(Rel)))
		return;
	for (size_t off = 0; off + t->ent <= t->size; off += t->ent) {
		/* Rel and Rela begin alike: r_offset, r_info. */
		const ElfW(Rel) *r = (const ElfW(Rel) *)(t->at + off);
		unsigned long isym = BIND_R_SYM(r->r_info);
		const ElfW(Sym) *sym;

		if (!isym || !is_slot_type(BIND_R_TYPE(r->r_info)))
			continue;
		if (t->rela && ((const ElfW(Rela) *)r)->r_addend != 0)
			continue;
		sym = &v->symtab[isym];
		/* A symbol the object defines itself is not an import of it. */
		if (sym->st_shndx != SHN_UNDEF || (v->strsz && sym->st_name >= v->strsz))
			continue;
		fn(arg, (void **)(v->base + r->r_offset), sym, v->strtab + sym->st_name);
	}
}

void emu_bind_view_walk(const struct emu_bind_view *v, emu_bind_slot_fn *fn, void *arg)
{
	for (int i = 0; i < 3; i++)
		walk_table(v, &v->tab[i], fn, arg);
}

struct emu_bind_map {
	uintptr_t lo, hi;
	int prot;
};

static int prot_of(const char *perm)
{
	return (perm[0] == 'r' ? PROT_READ : 0) | (perm[1] == 'w' ? PROT_WRITE : 0) |
	       (perm[2] == 'x' ? PROT_EXEC : 0);
}

static int maps_load(struct emu_bind_maps *m)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char *line = NULL;
	size_t linecap = 0, cap = 0;
	int err = 0;

	if (!f)
		return -errno;
	m->n = 0;
	while (getline(&line, &linecap, f) > 0) {
		unsigned long lo, hi;
		char perm[5];

		if (sscanf(line, "%lx-%lx %4s", &lo, &hi, perm) != 3)
			continue;
		if (m->n == cap) {
			size_t ncap = cap ? 2 * cap : 64;
			struct emu_bind_map *map = emu_realloc(m->map, ncap * sizeof(*map));

			if (!map) {
				err = -ENOMEM;
				break;
			}
			m->map = map;
			cap = ncap;
		}
		m->map[m->n++] = (struct emu_bind_map){.lo = lo, .hi = hi, .prot = prot_of(perm)};
	}
	free(line);
	fclose(f);
	m->loaded = !err;
	return err;
}

void emu_bind_maps_free(struct emu_bind_maps *m)
{
	free(m->map);
	*m = (struct emu_bind_maps){0};
}

int emu_bind_slot_write(struct emu_bind_maps *m, void **slot, void *val)
{
	uintptr_t pagesz = (uintptr_t)sysconf(_SC_PAGESIZE);
	void *page = (void *)((uintptr_t)slot & ~(pagesz - 1));
	const struct emu_bind_map *map = NULL;
	int err;

	if (!m->loaded && (err = maps_load(m)))
		return err;
	for (size_t i = 0; i < m->n && !map; i++)
		if ((uintptr_t)slot >= m->map[i].lo && (uintptr_t)slot < m->map[i].hi)
			map = &m->map[i];
	if (!map)
		return -EFAULT;
	if (map->prot & PROT_WRITE) {
		/* Other threads may be calling through the slot: one aligned store. */
		__atomic_store_n(slot, val, __ATOMIC_RELEASE);
		return 0;
	}
	/* RELRO after relocation, or a GOT the program protected: writable for the store only. */
	if (mprotect(page, pagesz, map->prot | PROT_WRITE))
		return -errno;
	__atomic_store_n(slot, val, __ATOMIC_RELEASE);
	if (mprotect(page, pagesz, map->prot))
		return -errno;
	return 0;
}
