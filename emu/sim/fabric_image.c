/* Fabric images: one parse of a large fabric, mapped by every process of a machine.
 *
 * A process started by `rdmaemu run`, each sandboxed host's keeper and rdmaemud itself all load
 * the same fabric file. On a fabric of 10,000 nodes the model is ~10 MiB, and a process's parse
 * peaks at ~30 MiB; with 1,000 processes that is the machine's memory. So the first loader of a
 * large fabric (rdmaemud, which starts before its processes) writes the finished model into an
 * image file in the image directory (the daemon's runtime directory), and later loaders map that
 * file instead of parsing: the pages are the page cache's, shared by every process.
 *
 * The model is plain data linked by pointers (emu/sim/fabric.h). An image holds it packed, with
 * every pointer already set for one address, the image's base; it is mapped there
 * (MAP_FIXED_NOREPLACE) or not at all, and then it is the same model a parse makes, pointer for
 * pointer. The mapping is private and writable: what a process changes after loading (a GID
 * table entry, a removed device) is copied on write into its own page, as with its own parse.
 *
 * An image is used only when all of these hold, else the file is parsed as before:
 *  - the image is a regular file of this user, not writable by group or others, in a directory
 *    set with emu_fabric_set_image_dir();
 *  - its header has the magic, the layout of this build's model structures and its checksum
 *    (FNV-1a over the bytes after the header) is right;
 *  - every file the parse read (the fabric file and what it includes) still has the device,
 *    inode, size, modification and change times recorded in the image;
 *  - the base address is free in this process.
 * The file name is the FNV-1a hash of the fabric file's canonical path, and the base is derived
 * from the same hash, so two fabrics of one machine get different files and addresses. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "emu/sim/fabric_priv.h"
#include "util/failcall.h"

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

/* Bases: 1 GiB apart in [0x3e0000000000, 0x420000000000), below where the kernel puts
 * mappings, libraries and stacks (top down from 0x7f...) and above PIE programs and their heap
 * (0x55... / 0x56...) and ASan's shadow (below 0x10007fff8000). */
#define IMAGE_BASE 0x3e0000000000ull
#define IMAGE_SLOT_SHIFT 30
#define IMAGE_SLOTS 4096u
#define IMAGE_MAX ((size_t)1 << IMAGE_SLOT_SHIFT)
#define IMAGE_ALIGN 16

static const char image_magic[16] = "rdmaemu-fabric1";

/* the files an image was made from: struct emu_loader_file (fabric_priv.h) */
#define image_file emu_loader_file

struct image_hdr {
	char magic[16];
	uint64_t layout;   /* layout_id() of the build that wrote it */
	uint64_t base;     /* the address the image is mapped at */
	uint64_t size;     /* bytes of the file, header included */
	uint64_t checksum; /* FNV-1a of the bytes after the header */
	uint64_t fabric;   /* offset of the struct emu_fabric */
	uint64_t files;    /* offset of nfiles struct image_file */
	uint64_t nfiles;
};

static char image_dir[PATH_MAX];
static size_t image_min_nodes;

void emu_fabric_set_image_dir(const char *dir, size_t min_nodes)
{
	/* the bases are 64-bit addresses: no images in a 32-bit process */
	if (dir && strlen(dir) < sizeof(image_dir) && sizeof(void *) >= 8)
		snprintf(image_dir, sizeof(image_dir), "%s", dir);
	else
		image_dir[0] = 0;
	image_min_nodes = min_nodes;
}

void emu_fabric_set_image_dir_of(const char *sock)
{
	const char *slash = sock ? strrchr(sock, '/') : NULL;
	char dir[PATH_MAX];

	if (!sock || !*sock) {
		emu_fabric_set_image_dir(NULL, 0);
		return;
	}
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == sock)
		snprintf(dir, sizeof(dir), "/");
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - sock), sock);
	emu_fabric_set_image_dir(dir, EMU_FABRIC_LARGE);
}

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *c = p;

	while (n--)
		h = (h ^ *c++) * 1099511628211ull;
	return h;
}

#define FNV_INIT 1469598103934665603ull

/* What an image depends on in this build: the version and the model's structure sizes and
 * pointer offsets. */
static uint64_t layout_id(void)
{
	static const size_t v[] = {
		sizeof(struct emu_fabric), sizeof(struct emu_host), sizeof(struct emu_device),
		sizeof(struct emu_port), sizeof(struct emu_gid), sizeof(struct emu_netdev),
		sizeof(struct emu_ifaddr), sizeof(struct emu_route), sizeof(struct emu_switch),
		sizeof(struct emu_link), sizeof(struct emu_name), sizeof(struct emu_fabric_daemon),
		offsetof(struct emu_fabric, hosts), offsetof(struct emu_fabric, image),
		offsetof(struct emu_host, devices), offsetof(struct emu_host, fabric),
		offsetof(struct emu_device, ports), offsetof(struct emu_device, host),
		offsetof(struct emu_port, gids), offsetof(struct emu_port, dev),
		offsetof(struct emu_netdev, addrs), offsetof(struct emu_switch, port_link),
		sizeof(struct image_hdr), sizeof(struct image_file), sizeof(void *),
	};

	return fnv(fnv(FNV_INIT, PACKAGE_VERSION, sizeof(PACKAGE_VERSION)), v, sizeof(v));
}

/* The image file of the fabric at canonical path `canon` and its base address. */
static int image_path(const char *canon, char *out, size_t len, uint64_t *base)
{
	uint64_t h = fnv(FNV_INIT, canon, strlen(canon));
	int n = snprintf(out, len, "%s/fabric-%016llx.img", image_dir, (unsigned long long)h);

	*base = IMAGE_BASE + ((h % IMAGE_SLOTS) << IMAGE_SLOT_SHIFT);
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

static void file_sig(const char *path, const struct stat *st, struct image_file *out)
{
	memset(out, 0, sizeof(*out));
	snprintf(out->path, sizeof(out->path), "%s", path);
	out->dev = st->st_dev;
	out->ino = st->st_ino;
	out->size = (uint64_t)st->st_size;
	out->mtime_sec = st->st_mtim.tv_sec;
	out->mtime_nsec = st->st_mtim.tv_nsec;
	out->ctime_sec = st->st_ctim.tv_sec;
	out->ctime_nsec = st->st_ctim.tv_nsec;
}

static bool file_unchanged(const struct image_file *rec)
{
	struct image_file now;
	struct stat st;

	if (memchr(rec->path, 0, sizeof(rec->path)) == NULL || stat(rec->path, &st))
		return false;
	file_sig(rec->path, &st, &now);
	return !memcmp(&now, rec, sizeof(now));
}

/* ---------- packing ---------- */

struct packer {
	unsigned char *buf;
	size_t len, cap;
	uint64_t base;
	bool failed;
};

/* Room for n bytes (zeroed, aligned): its offset, or 0 when out of memory. */
static size_t room(struct packer *p, size_t n)
{
	size_t off = (p->len + IMAGE_ALIGN - 1) & ~(size_t)(IMAGE_ALIGN - 1);

	if (p->failed || off + n > IMAGE_MAX) {
		p->failed = true;
		return 0;
	}
	if (off + n > p->cap) {
		size_t cap = p->cap ? p->cap : 1 << 20;
		unsigned char *b;

		while (cap < off + n)
			cap *= 2;
		b = emu_realloc(p->buf, cap);
		if (!b) {
			p->failed = true;
			return 0;
		}
		memset(b + p->cap, 0, cap - p->cap);
		p->buf = b;
		p->cap = cap;
	}
	p->len = off + n;
	return off;
}

static void *at(struct packer *p, size_t off)
{
	return p->buf + off;
}

/* The address `off` has once mapped. */
static void *addr(const struct packer *p, size_t off)
{
	return (void *)(uintptr_t)(p->base + off);
}

/* A copy of n elements of size sz at src (n may be 0 while src is not NULL: one zeroed element
 * keeps the pointer valid): its offset, 0 for NULL (or when out of memory). */
static size_t copy(struct packer *p, const void *src, size_t n, size_t sz)
{
	size_t off;

	if (!src)
		return 0;
	off = room(p, (n ? n : 1) * sz);
	if (off && n)
		memcpy(at(p, off), src, n * sz);
	return off;
}

/* The pointer field a packed copy holds for offset off (0: NULL). */
#define SETPTR(p, field, off) ((field) = (off) ? addr(p, off) : NULL)

static size_t gid_room(const struct emu_port *po)
{
	/* RoCE tables have their whole length allocated (emu/net/roce_gid.c writes in place) */
	if (po->link_layer == 2 /* IBV_LINK_LAYER_ETHERNET */ && po->gids &&
	    po->gid_tbl_len > po->ngids)
		return po->gid_tbl_len;
	return po->ngids;
}

static void pack_device(struct packer *p, size_t doff, size_t hoff)
{
	struct emu_device *d = at(p, doff);
	const struct emu_port *src = d->ports;
	size_t np = d->nports, poff = copy(p, src, np, sizeof(*src));

	d = at(p, doff);
	SETPTR(p, d->ports, poff);
	d->host = addr(p, hoff);
	for (size_t i = 0; i < np && !p->failed; i++) {
		size_t o = poff + i * sizeof(struct emu_port);
		struct emu_port *po = at(p, o);
		size_t g = copy(p, src[i].gids, gid_room(&src[i]), sizeof(*src[i].gids));
		size_t k = copy(p, src[i].pkeys, src[i].npkeys, sizeof(*src[i].pkeys));

		po = at(p, o);
		SETPTR(p, po->gids, g);
		SETPTR(p, po->pkeys, k);
		po->dev = addr(p, doff);
	}
}

static void pack_host(struct packer *p, size_t hoff, size_t foff)
{
	struct emu_host *h = at(p, hoff);
	const struct emu_host src = *h;
	size_t a = copy(p, src.aliases, src.naliases, sizeof(char *));
	size_t d = copy(p, src.devices, src.ndevices, sizeof(*src.devices));
	size_t n = copy(p, src.netdevs, src.nnetdevs, sizeof(*src.netdevs));
	size_t r = copy(p, src.routes, src.nroutes, sizeof(*src.routes));

	h = at(p, hoff);
	SETPTR(p, h->aliases, a);
	SETPTR(p, h->devices, d);
	SETPTR(p, h->netdevs, n);
	SETPTR(p, h->routes, r);
	h->fabric = addr(p, foff);
	for (size_t i = 0; i < src.naliases && !p->failed; i++) {
		size_t s = copy(p, src.aliases[i], strlen(src.aliases[i]) + 1, 1);

		SETPTR(p, ((char **)at(p, a))[i], s);
	}
	for (size_t i = 0; i < src.ndevices && !p->failed; i++)
		pack_device(p, d + i * sizeof(struct emu_device), hoff);
	for (size_t i = 0; i < src.nnetdevs && !p->failed; i++) {
		size_t o = n + i * sizeof(struct emu_netdev);
		const struct emu_netdev *sn = &src.netdevs[i];
		size_t ad = copy(p, sn->addrs, sn->naddrs, sizeof(*sn->addrs));

		SETPTR(p, ((struct emu_netdev *)at(p, o))->addrs, ad);
	}
}

/* Packs f after the header and the file records: the struct emu_fabric's offset, 0 when it
 * does not fit (IMAGE_MAX) or memory ran out. */
static size_t pack(struct packer *p, const struct emu_fabric *f)
{
	size_t foff = copy(p, f, 1, sizeof(*f));
	struct emu_fabric *F;
	size_t h, s, l, n, d;

	if (!foff)
		return 0;
	h = copy(p, f->hosts, f->nhosts, sizeof(*f->hosts));
	s = copy(p, f->switches, f->nswitches, sizeof(*f->switches));
	l = copy(p, f->links, f->nlinks, sizeof(*f->links));
	n = copy(p, f->names, f->nnames, sizeof(*f->names));
	d = copy(p, f->daemons, f->ndaemons, sizeof(*f->daemons));
	F = at(p, foff);
	SETPTR(p, F->hosts, h);
	SETPTR(p, F->switches, s);
	SETPTR(p, F->links, l);
	SETPTR(p, F->names, n);
	SETPTR(p, F->daemons, d);
	for (size_t i = 0; i < f->nhosts && !p->failed; i++)
		pack_host(p, h + i * sizeof(struct emu_host), foff);
	for (size_t i = 0; i < f->nswitches && !p->failed; i++) {
		const struct emu_switch *sw = &f->switches[i];
		size_t o = copy(p, sw->port_link, sw->port_link ? sw->nports + 1 : 0, sizeof(int));

		SETPTR(p, ((struct emu_switch *)at(p, s + i * sizeof(*sw)))->port_link, o);
	}
	if (p->failed)
		return 0;
	F = at(p, foff);
	F->image = addr(p, 0);
	F->image_len = p->len;
	return foff;
}

/* Writes the image of f (read from the files L recorded), replacing the one there: a temporary
 * file renamed into place, so a reader sees the whole image or none. Failures are silent: the
 * image only saves later loaders a parse. */
void emu_fabric_image_save(const struct emu_fabric *f, const struct emu_loader *L)
{
	char path[PATH_MAX], tmp[PATH_MAX + 16];
	struct packer p = { 0 };
	struct image_hdr *hdr;
	size_t hoff, foff, files;
	bool ok;
	int fd;

	if (!image_dir[0] || !L->nread || f->nhosts + f->nswitches < image_min_nodes ||
	    image_path(L->read[0].path, path, sizeof(path), &p.base))
		return;
	hoff = room(&p, sizeof(*hdr));
	files = copy(&p, L->read, L->nread, sizeof(*L->read));
	foff = files ? pack(&p, f) : 0;
	if (!foff) {
		free(p.buf);
		return;
	}
	hdr = at(&p, hoff);
	memcpy(hdr->magic, image_magic, sizeof(hdr->magic));
	hdr->layout = layout_id();
	hdr->base = p.base;
	hdr->size = p.len;
	hdr->fabric = foff;
	hdr->files = files;
	hdr->nfiles = L->nread;
	hdr->checksum = fnv(FNV_INIT, p.buf + sizeof(*hdr), p.len - sizeof(*hdr));
	snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path);
	fd = mkstemp(tmp);
	if (fd < 0) {
		free(p.buf);
		return;
	}
	ok = true;
	for (size_t done = 0; ok && done < p.len;) {
		ssize_t w = write(fd, p.buf + done, p.len - done);

		if (w < 0 && errno == EINTR)
			continue;
		ok = w > 0;
		done += ok ? (size_t)w : 0;
	}
	ok = !close(fd) && ok;
	if (!ok || rename(tmp, path))
		unlink(tmp);
	free(p.buf);
}

/* ---------- mapping ---------- */

static bool hdr_ok(const struct image_hdr *h, const struct stat *st, uint64_t base)
{
	return !memcmp(h->magic, image_magic, sizeof(h->magic)) && h->layout == layout_id() &&
	       h->base == base && h->size == (uint64_t)st->st_size && h->size <= IMAGE_MAX &&
	       h->fabric >= sizeof(*h) && h->fabric + sizeof(struct emu_fabric) <= h->size &&
	       h->files >= sizeof(*h) && h->nfiles >= 1 && h->nfiles < 4096 &&
	       h->files + h->nfiles * sizeof(struct image_file) <= h->size;
}

struct emu_fabric *emu_fabric_image_load(const char *path)
{
	char canon[PATH_MAX], file[PATH_MAX];
	const struct image_file *files;
	struct emu_fabric *f = NULL;
	struct image_hdr hdr;
	struct stat st;
	uint64_t base;
	void *m;
	int fd;

	if (!image_dir[0] || !realpath(path, canon) ||
	    image_path(canon, file, sizeof(file), &base))
		return NULL;
	fd = open(file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != getuid() ||
	    (st.st_mode & 022) || pread(fd, &hdr, sizeof(hdr), 0) != (ssize_t)sizeof(hdr) ||
	    !hdr_ok(&hdr, &st, base)) {
		close(fd);
		return NULL;
	}
	m = emu_mmap((void *)(uintptr_t)base, hdr.size, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_FIXED_NOREPLACE, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return NULL;
	if ((uintptr_t)m != base) { /* a kernel older than 4.17 took the address as a hint */
		munmap(m, hdr.size);
		return NULL;
	}
	files = (const struct image_file *)((const char *)m + hdr.files);
	if (fnv(FNV_INIT, (const char *)m + sizeof(hdr), hdr.size - sizeof(hdr)) != hdr.checksum ||
	    strcmp(files[0].path, canon))
		goto stale;
	for (size_t i = 0; i < hdr.nfiles; i++)
		if (!file_unchanged(&files[i]))
			goto stale;
	f = (struct emu_fabric *)((char *)m + hdr.fabric);
	if (f->image != m || f->image_len != hdr.size)
		goto stale;
	/* named as this loader was asked, as a parse would name it */
	snprintf(f->source, sizeof(f->source), "%s", path);
	return f;
stale:
	munmap(m, hdr.size);
	return NULL;
}

int emu_loader_record_file(struct emu_loader *L, const char *canon, int fd)
{
	struct stat st;
	int i;

	if (fstat(fd, &st))
		return -1;
	i = emu_array_push(&L->read, &L->nread, sizeof(*L->read));
	if (i < 0)
		return -1;
	file_sig(canon, &st, &L->read[i]);
	return 0;
}

bool emu_fabric_is_image(const struct emu_fabric *f)
{
	return f && f->image;
}
