/* Binding into import tables (bind.h): the table of names, the objects bound and their
 * slots, and the scans over the loaded objects. The ELF side is bind_elf.c. */
#include "config.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>

#include "emu/sim/array.h"
#include "emu/sim/bind.h"
#include "emu/sim/bind_elf.h"
#include "util/failcall.h"

struct bind_name {
	char *name;
	void *repl;
	void *orig;
	void *canonical; /* the program's PLT entry standing for it, or NULL (bind_orig.c) */
};

struct bind_slot {
	void **at;
	void *old; /* what it held before: the function, or a PLT stub under lazy binding */
	void *to;  /* what it holds bound: the replacement, or in a skipped object the original */
};

/* An object scanned: the slots written in it (none if it imports no name of the table). A
 * skipped object is kept only when a program linked without -pie gives a name of the table
 * its own PLT entry as address: the object's address-taken imports of that name hold the
 * entry, which leads to the replacement through the program's slot; they are given the
 * original instead, so that a skipped object keeps libc's functions. */
struct bind_obj {
	uintptr_t base;
	char *path;
	struct bind_slot *slot;
	size_t nslot;
	uint64_t mark; /* the last scan that saw it loaded */
};

static struct {
	pthread_mutex_t mu;
	struct bind_name *names; /* NULL when not installed */
	size_t nnames;
	bool (*skip)(const char *path);
	struct bind_obj *obj;
	size_t nobj;
	size_t nbound;
	uint64_t mark;
} B = {.mu = PTHREAD_MUTEX_INITIALIZER};

/* One pass over the loaded objects. */
struct scan {
	struct emu_bind_maps maps;
	const ElfW(Ehdr) *vdso;
	uintptr_t ldso;
	struct bind_obj *o; /* the object being bound */
	bool skipped;       /* o is skipped: only its slots holding a canonical entry change */
	int err;            /* the first error */
	bool restore;       /* uninstall: give the slots their old values back */
};

static const char *const system_prefixes[] = {
	/* the dynamic linker and the vDSO */
	"ld-linux", "ld64.so", "ld.so", "linux-vdso.so", "linux-gate.so",
	/* glibc: its calls to itself are internal anyway, and what they time is their own */
	"libc.so", "libpthread.so", "librt.so", "libdl.so", "libm.so", "libmvec.so",
	"libresolv.so", "libanl.so", "libnsl.so", "libutil.so", "libnss_", "libthread_db.so",
	"libc_malloc_debug.so", "libBrokenLocale.so",
	/* sanitizer runtimes and valgrind's preloads: they wrap libc for the program */
	"libasan.so", "libubsan.so", "liblsan.so", "libtsan.so", "libhwasan.so", "libclang_rt.",
	"vgpreload_",
};

bool emu_bind_is_system(const char *path)
{
	const char *base;

	if (!path)
		return false;
	base = strrchr(path, '/');
	base = base ? base + 1 : path;
	for (size_t i = 0; i < sizeof(system_prefixes) / sizeof(system_prefixes[0]); i++)
		if (!strncmp(base, system_prefixes[i], strlen(system_prefixes[i])))
			return true;
	return false;
}

static bool is_vdso(const struct dl_phdr_info *info, const ElfW(Ehdr) *vdso)
{
	return vdso && (const char *)info->dlpi_phdr == (const char *)vdso + vdso->e_phoff;
}

static long name_find(const char *name)
{
	for (size_t i = 0; i < B.nnames; i++)
		if (B.names[i].name[0] == name[0] && !strcmp(B.names[i].name, name))
			return (long)i;
	return -1;
}

static void note_err(struct scan *s, int err)
{
	if (err && !s->err)
		s->err = err;
}

/* emu_bind_slot_fn for an object scanned the first time. */
static void bind_slot(void *arg, void **at, const ElfW(Sym) *sym, const char *name)
{
	struct scan *s = arg;
	long i = name_find(name);
	void *old, *to;
	int err;

	if (i < 0)
		return;
	old = __atomic_load_n(at, __ATOMIC_ACQUIRE);
	to = s->skipped ? B.names[i].orig : B.names[i].repl;
	if (s->skipped && (!B.names[i].canonical || old != B.names[i].canonical))
		return;
	if (!to || old == to)
		return; /* no original to give, or the same slot listed by DT_RELA and DT_JMPREL */
	if (emu_array_push(&s->o->slot, &s->o->nslot, sizeof(*s->o->slot)) < 0) {
		note_err(s, -ENOMEM);
		return;
	}
	if ((err = emu_bind_slot_write(&s->maps, at, to))) {
		s->o->nslot--;
		note_err(s, err);
		return;
	}
	s->o->slot[s->o->nslot - 1] = (struct bind_slot){.at = at, .old = old, .to = to};
	B.nbound++;
}

/* An object seen before: its slots as they should be. A slot that no longer holds its value
 * was written again by the loader (the object was being relocated when the last scan saw it,
 * or it was closed and loaded again at the same address): bound again. */
static void recheck(struct scan *s, struct bind_obj *o)
{
	for (size_t k = 0; k < o->nslot; k++) {
		struct bind_slot *sl = &o->slot[k];
		void *cur = __atomic_load_n(sl->at, __ATOMIC_ACQUIRE);

		if (s->restore) {
			if (cur == sl->to)
				note_err(s, emu_bind_slot_write(&s->maps, sl->at, sl->old));
		} else if (cur != sl->to) {
			sl->old = cur;
			note_err(s, emu_bind_slot_write(&s->maps, sl->at, sl->to));
		}
	}
}

static bool any_canonical(void)
{
	for (size_t i = 0; i < B.nnames; i++)
		if (B.names[i].canonical)
			return true;
	return false;
}

static struct bind_obj *obj_find(uintptr_t base, const char *path)
{
	for (size_t i = 0; i < B.nobj; i++)
		if (B.obj[i].base == base && !strcmp(B.obj[i].path, path))
			return &B.obj[i];
	return NULL;
}

static bool never_bound(const struct dl_phdr_info *info, const struct emu_bind_view *v,
			const struct scan *s)
{
	return is_vdso(info, s->vdso) || (s->ldso && info->dlpi_addr == s->ldso) ||
	       emu_bind_is_system(info->dlpi_name) ||
	       emu_bind_view_holds(v, (const void *)(uintptr_t)emu_bind_install);
}

static int scan_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct scan *s = arg;
	const char *path = info->dlpi_name ? info->dlpi_name : "";
	struct emu_bind_view v;
	struct bind_obj *o;

	if (!emu_bind_view_init(&v, info) || never_bound(info, &v, s))
		return 0;
	if ((o = obj_find(info->dlpi_addr, path))) {
		o->mark = B.mark;
		recheck(s, o);
		return 0;
	}
	if (s->restore)
		return 0;
	s->skipped = B.skip && B.skip(path);
	if (s->skipped && !any_canonical())
		return 0; /* nothing to do there: asked again at the next scan */
	if (emu_array_push(&B.obj, &B.nobj, sizeof(*B.obj)) < 0) {
		note_err(s, -ENOMEM);
		return 0;
	}
	o = &B.obj[B.nobj - 1];
	if (!(o->path = emu_strdup(path))) {
		B.nobj--;
		note_err(s, -ENOMEM);
		return 0;
	}
	o->base = info->dlpi_addr;
	o->mark = B.mark;
	s->o = o;
	emu_bind_view_walk(&v, bind_slot, s);
	return 0;
}

static void obj_free(struct bind_obj *o)
{
	B.nbound -= o->nslot;
	free(o->slot);
	free(o->path);
}

/* The objects not seen by the last scan have been unloaded: their records go. */
static void sweep(void)
{
	for (size_t i = 0; i < B.nobj;) {
		if (B.obj[i].mark == B.mark) {
			i++;
			continue;
		}
		obj_free(&B.obj[i]);
		B.obj[i] = B.obj[--B.nobj];
	}
}

/* Lock held. */
static int scan_all(bool restore)
{
	struct scan s = {
		.vdso = (const ElfW(Ehdr) *)getauxval(AT_SYSINFO_EHDR),
		.ldso = (uintptr_t)getauxval(AT_BASE),
		.restore = restore,
	};

	B.mark++;
	dl_iterate_phdr(scan_object, &s);
	sweep();
	emu_bind_maps_free(&s.maps);
	return s.err;
}

/* The loader lists an object before it has relocated it, and dl_iterate_phdr does not wait for
 * a dlopen in flight in another thread; dlopen does (the loader's lock). Called without our
 * lock: a constructor run by that dlopen may be waiting for it. */
static void loader_barrier(void)
{
	void *h = dlopen(NULL, RTLD_LAZY | RTLD_NOLOAD);

	if (h)
		dlclose(h);
}

static void names_free(struct bind_name *names, size_t n)
{
	for (size_t i = 0; names && i < n; i++)
		free(names[i].name);
	free(names);
}

static void fork_prepare(void)
{
	pthread_mutex_lock(&B.mu);
}

static void fork_release(void)
{
	pthread_mutex_unlock(&B.mu);
}

/* A child forked while another thread scanned must find the lock free. */
static void fork_register(void)
{
	pthread_atfork(fork_prepare, fork_release, fork_release);
}

int emu_bind_install(const struct emu_bind_sym *syms, size_t n, bool (*skip)(const char *path))
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	struct bind_name *names;
	int err;

	if (!emu_bind_arch_known())
		return -ENOSYS;
	if (!syms || !n)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (!syms[i].name || !syms[i].name[0] || !syms[i].repl)
			return -EINVAL;
	if (!(names = emu_calloc(n, sizeof(*names))))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		if (!(names[i].name = emu_strdup(syms[i].name))) {
			names_free(names, n);
			return -ENOMEM;
		}
		names[i].repl = syms[i].repl;
	}
	pthread_once(&once, fork_register);
	/* dlsym takes the loader's lock: before ours, and before any slot changes. */
	for (size_t i = 0; i < n; i++)
		names[i].orig = emu_bind_resolve(syms[i].name, &names[i].canonical);
	loader_barrier();
	pthread_mutex_lock(&B.mu);
	if (B.names) {
		pthread_mutex_unlock(&B.mu);
		names_free(names, n);
		return -EBUSY;
	}
	/* Before the first slot points at a replacement that calls them. */
	for (size_t i = 0; i < n; i++)
		if (syms[i].orig)
			*syms[i].orig = names[i].orig;
	B.names = names;
	B.nnames = n;
	B.skip = skip;
	err = scan_all(false);
	pthread_mutex_unlock(&B.mu);
	return err;
}

void emu_bind_rescan(void)
{
	loader_barrier();
	pthread_mutex_lock(&B.mu);
	if (B.names)
		scan_all(false);
	pthread_mutex_unlock(&B.mu);
}

void emu_bind_uninstall(void)
{
	loader_barrier();
	pthread_mutex_lock(&B.mu);
	if (B.names)
		scan_all(true);
	for (size_t i = 0; i < B.nobj; i++)
		obj_free(&B.obj[i]);
	free(B.obj);
	B.obj = NULL;
	B.nobj = 0;
	names_free(B.names, B.nnames);
	B.names = NULL;
	B.nnames = 0;
	B.skip = NULL;
	pthread_mutex_unlock(&B.mu);
}

size_t emu_bind_count(void)
{
	size_t n;

	pthread_mutex_lock(&B.mu);
	n = B.nbound;
	pthread_mutex_unlock(&B.mu);
	return n;
}
