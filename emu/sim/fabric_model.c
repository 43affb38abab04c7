/* Building and freeing the fabric model and the loader's side tables, and the loaders'
 * reading of files with its include stack.
 *
 * While loading, every array may move (realloc), so the loaders refer to hosts, devices and
 * ports by index; the back pointers (port->dev, device->host, host->fabric) are set once the
 * arrays are final, in emu_loader_finish(). */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "emu/sim/fabric_priv.h"
#include "util/failcall.h"

static void free_port(struct emu_port *p)
{
	free(p->gids);
	free(p->pkeys);
}

static void free_host(struct emu_host *h)
{
	for (size_t a = 0; a < h->naliases; a++)
		free(h->aliases[a]);
	free(h->aliases);
	for (size_t d = 0; d < h->ndevices; d++) {
		for (size_t p = 0; p < h->devices[d].nports; p++)
			free_port(&h->devices[d].ports[p]);
		free(h->devices[d].ports);
	}
	free(h->devices);
	for (size_t n = 0; n < h->nnetdevs; n++)
		free(h->netdevs[n].addrs);
	free(h->netdevs);
	free(h->routes);
}

void emu_fabric_free(struct emu_fabric *f)
{
	if (!f)
		return;
	if (f->image) { /* a mapped image (fabric_image.c): f is inside it */
		munmap(f->image, f->image_len);
		return;
	}
	for (size_t i = 0; i < f->nhosts; i++)
		free_host(&f->hosts[i]);
	free(f->hosts);
	for (size_t i = 0; i < f->nswitches; i++)
		free(f->switches[i].port_link);
	free(f->switches);
	free(f->links);
	free(f->names);
	free(f->daemons);
	free(f);
}

/* Side tables grow with the model; both use the same count, so push the side entry with a
 * scratch count equal to the model's count before it grew. */
static int push_side(void *arr, size_t n_before, size_t sz)
{
	size_t n = n_before;

	return emu_array_push(arr, &n, sz) < 0 ? -1 : 0;
}

static size_t name_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ull;
	return (size_t)h;
}

static void host_idx_put(struct emu_loader *L, size_t i)
{
	size_t m = L->host_idx_cap - 1, h = name_hash(L->f->hosts[i].name) & m;

	while (L->host_idx[h])
		h = (h + 1) & m;
	L->host_idx[h] = (int)i + 1;
}

/* Keeps the host-name hash at most half full: 0 (room left), 1 (rebuilt with every host of
 * f->hosts), -1 (out of memory). */
static int host_idx_grow(struct emu_loader *L, size_t nhosts)
{
	size_t cap = L->host_idx_cap ? L->host_idx_cap : 64;
	int *n;

	if (nhosts * 2 <= L->host_idx_cap)
		return 0;
	while (nhosts * 2 > cap)
		cap *= 2;
	n = emu_calloc(cap, sizeof(*n));
	if (!n)
		return -1;
	free(L->host_idx);
	L->host_idx = n;
	L->host_idx_cap = cap;
	for (size_t i = 0; i < L->f->nhosts; i++)
		host_idx_put(L, i);
	return 1;
}

int emu_loader_add_host(struct emu_loader *L, const char *name, bool declared)
{
	struct emu_fabric *f = L->f;
	int i;

	if (push_side(&L->hosts, f->nhosts, sizeof(*L->hosts)))
		return -1;
	i = emu_array_push(&f->hosts, &f->nhosts, sizeof(*f->hosts));
	if (i < 0)
		return -1;
	snprintf(f->hosts[i].name, EMU_NAME_MAX, "%s", name);
	f->hosts[i].cm_abi = 4;
	switch (host_idx_grow(L, f->nhosts)) {
	case -1:
		f->nhosts--;
		return -1;
	case 0:
		host_idx_put(L, (size_t)i);
		break;
	default: /* rehashed every host, this one included */
		break;
	}
	L->hosts[i].declared = declared;
	L->hosts[i].src = L->cur;
	return i;
}

int emu_loader_add_device(struct emu_loader *L, int host, const char *name, uint8_t link_layer)
{
	struct emu_host *h = &L->f->hosts[host];
	struct emu_host_meta *hm = &L->hosts[host];
	struct emu_device *d;
	int i;

	if (push_side(&hm->devs, h->ndevices, sizeof(*hm->devs)))
		return -1;
	i = emu_array_push(&h->devices, &h->ndevices, sizeof(*h->devices));
	if (i < 0)
		return -1;
	d = &h->devices[i];
	snprintf(d->name, EMU_NAME_MAX, "%s", name);
	d->transport = 0; /* IBV_TRANSPORT_IB: rxe reports InfiniBand transport too */
	d->node_type = 1; /* IBV_NODE_CA */
	emu_rxe_default_caps(&d->caps);
	d->vendor_id = 0xffffff; /* rxe: IBTA "no OUI" */
	snprintf(d->fw_ver, sizeof(d->fw_ver), "0.0.0");
	hm->devs[i].src = L->cur;
	(void)link_layer;
	return i;
}

/* Grows device `dev` of `host` to nports ports (never shrinks); new ports get the defaults of
 * their link layer, which the finishing pass may still change. */
int emu_loader_add_ports(struct emu_loader *L, int host, int dev, size_t nports)
{
	struct emu_device *d = &L->f->hosts[host].devices[dev];
	struct emu_dev_meta *dm = &L->hosts[host].devs[dev];

	while (d->nports < nports) {
		size_t before = d->nports;
		int i;

		if (push_side(&dm->ports, before, sizeof(*dm->ports)))
			return -1;
		i = emu_array_push(&d->ports, &d->nports, sizeof(*d->ports));
		if (i < 0)
			return -1;
		d->ports[i].num = (uint8_t)(i + 1);
		d->ports[i].link = -1;
		dm->ports[i].src = L->cur;
	}
	return 0;
}

int emu_loader_add_switch(struct emu_loader *L, const char *name, size_t nports)
{
	struct emu_fabric *f = L->f;
	struct emu_switch *s;
	int i;

	if (push_side(&L->switches, f->nswitches, sizeof(*L->switches)))
		return -1;
	i = emu_array_push(&f->switches, &f->nswitches, sizeof(*f->switches));
	if (i < 0)
		return -1;
	s = &f->switches[i];
	snprintf(s->node_desc, EMU_NAME_MAX, "%s", name);
	snprintf(s->name, EMU_NAME_MAX, "%s", name);
	snprintf(L->switches[i].name, EMU_NAME_MAX, "%s", name);
	L->switches[i].src = L->cur;
	s->nports = nports;
	s->port_link = emu_malloc((nports + 1) * sizeof(int));
	if (!s->port_link)
		return -1;
	for (size_t p = 0; p <= nports; p++)
		s->port_link[p] = -1;
	return i;
}

static void set_endpoint(struct emu_endpoint *to, const struct emu_endpoint *from)
{
	to->kind = from->kind;
	to->node = from->node;
	to->device = from->device;
	to->port = from->port;
}

int emu_loader_add_link(struct emu_loader *L, struct emu_endpoint a, struct emu_endpoint b)
{
	struct emu_fabric *f = L->f;
	int i;

	if (push_side(&L->link_src, f->nlinks, sizeof(*L->link_src)) ||
	    push_side(&L->link_set, f->nlinks, sizeof(*L->link_set)))
		return -1;
	i = emu_array_push(&f->links, &f->nlinks, sizeof(*f->links));
	if (i < 0)
		return -1;
	/* member by member: the pushed element's padding stays zero, as a fabric image (written
	 * byte for byte, fabric_image.c) has it */
	set_endpoint(&f->links[i].a, &a);
	set_endpoint(&f->links[i].b, &b);
	L->link_src[i] = L->cur;
	return i;
}

const char *emu_loader_intern(struct emu_loader *L, const char *file)
{
	char *copy;

	for (size_t i = 0; i < L->nfiles; i++)
		if (!strcmp(L->files[i], file))
			return L->files[i];
	copy = emu_strdup(file);
	if (!copy || emu_array_push(&L->files, &L->nfiles, sizeof(char *)) < 0) {
		free(copy);
		return NULL;
	}
	L->files[L->nfiles - 1] = copy;
	return copy;
}

void emu_loader_free(struct emu_loader *L)
{
	if (L->f) {
		for (size_t h = 0; h < L->f->nhosts && L->hosts; h++) {
			for (size_t d = 0; d < L->f->hosts[h].ndevices && L->hosts[h].devs; d++) {
				struct emu_dev_meta *dm = &L->hosts[h].devs[d];

				for (size_t p = 0; p < L->f->hosts[h].devices[d].nports && dm->ports; p++)
					free(dm->ports[p].explicit_gids);
				free(dm->ports);
			}
			free(L->hosts[h].devs);
			free(L->hosts[h].netdevs);
		}
	}
	free(L->hosts);
	free(L->host_idx);
	free(L->switches);
	free(L->link_src);
	free(L->link_set);
	free(L->routes);
	free(L->links);
	free(L->hostsdata);
	for (size_t i = 0; i < L->nfiles; i++)
		free(L->files[i]);
	free(L->files);
	free(L->read);
	while (L->depth > 0)
		emu_loader_pop(L);
}

int emu_loader_find_host(const struct emu_loader *L, const char *name)
{
	size_t m = L->host_idx_cap - 1;

	if (!L->host_idx)
		return -1;
	/* names are stored truncated to EMU_NAME_MAX - 1: look the stored form up */
	if (strlen(name) >= EMU_NAME_MAX) {
		for (size_t i = 0; i < L->f->nhosts; i++)
			if (!strcmp(L->f->hosts[i].name, name))
				return (int)i;
		return -1;
	}
	for (size_t h = name_hash(name) & m; L->host_idx[h]; h = (h + 1) & m)
		if (!strcmp(L->f->hosts[L->host_idx[h] - 1].name, name))
			return L->host_idx[h] - 1;
	return -1;
}

int emu_loader_find_device(const struct emu_loader *L, int host, const char *name)
{
	const struct emu_host *h = &L->f->hosts[host];

	for (size_t i = 0; i < h->ndevices; i++)
		if (!strcmp(h->devices[i].name, name))
			return (int)i;
	return -1;
}

int emu_loader_find_switch(const struct emu_loader *L, const char *name)
{
	for (size_t i = 0; i < L->f->nswitches; i++)
		if (!strcmp(L->switches[i].name, name))
			return (int)i;
	return -1;
}

int emu_loader_error(struct emu_loader *L, const struct emu_src *src, int errnum,
		     const char *fmt, ...)
{
	va_list ap;

	if (!src)
		src = &L->cur;
	/* keep the first error: later ones are consequences */
	if (L->err && !L->err->msg[0]) {
		snprintf(L->err->file, sizeof(L->err->file), "%s", src->file ? src->file : "");
		L->err->line = src->line;
		va_start(ap, fmt);
		vsnprintf(L->err->msg, sizeof(L->err->msg), fmt, ap);
		va_end(ap);
	}
	errno = errnum;
	return -1;
}

/* ---------- files and the include stack ---------- */

char *emu_path_join_dir(const char *base_file, const char *name)
{
	const char *slash = base_file ? strrchr(base_file, '/') : NULL;
	size_t dlen = slash ? (size_t)(slash - base_file) : 0;
	char *out;

	if (name[0] == '/' || !slash)
		return emu_strdup(name);
	out = emu_malloc(dlen + 1 + strlen(name) + 1);
	if (!out)
		return NULL;
	memcpy(out, base_file, dlen);
	out[dlen] = '/';
	strcpy(out + dlen + 1, name);
	return out;
}

char *emu_loader_read(struct emu_loader *L, const char *path, const struct emu_src *from,
		      char **canon_out)
{
	struct emu_src at = { .file = from ? from->file : emu_loader_intern(L, path),
			      .line = from ? from->line : 0 };
	char *canon, *buf = NULL;
	size_t len = 0, cap = 0;
	FILE *fp;

	*canon_out = NULL;
	canon = realpath(path, NULL);
	if (!canon) {
		int e = errno == ENOMEM ? ENOMEM : ENOENT;

		emu_loader_error(L, &at, e, "cannot open '%s': %s", path, strerror(e));
		return NULL;
	}
	for (int i = 0; i < L->depth; i++) {
		if (!strcmp(L->stack[i], canon)) {
			emu_loader_error(L, &at, ELOOP, "include cycle: '%s' is already being read",
					 path);
			free(canon);
			return NULL;
		}
	}
	if (L->depth == EMU_INCLUDE_DEPTH_MAX) {
		emu_loader_error(L, &at, ELOOP, "includes nested deeper than %d levels at '%s'",
				 EMU_INCLUDE_DEPTH_MAX, path);
		free(canon);
		return NULL;
	}
	fp = fopen(path, "r");
	if (!fp) {
		int e = errno;

		emu_loader_error(L, &at, e, "cannot open '%s': %s", path, strerror(e));
		free(canon);
		return NULL;
	}
	if (emu_loader_record_file(L, canon, fileno(fp))) {
		fclose(fp);
		free(canon);
		emu_loader_error(L, &at, ENOMEM, "out of memory");
		return NULL;
	}
	for (;;) {
		size_t got;

		if (cap - len < 4097) {
			char *nb = emu_realloc(buf, cap ? cap * 2 : 8192);

			if (!nb) {
				free(buf);
				fclose(fp);
				free(canon);
				emu_loader_error(L, &at, ENOMEM, "out of memory");
				return NULL;
			}
			buf = nb;
			cap = cap ? cap * 2 : 8192;
		}
		got = fread(buf + len, 1, cap - len - 1, fp);
		len += got;
		if (got == 0)
			break;
		if (len > EMU_LOADER_FILE_MAX) {
			fclose(fp);
			free(buf);
			free(canon);
			emu_loader_error(L, &at, EFBIG, "'%s' is larger than %u MiB: not a file "
					 "the loader reads", path, EMU_LOADER_FILE_MAX >> 20);
			return NULL;
		}
	}
	if (ferror(fp)) {
		int e = errno ? errno : EIO;

		fclose(fp);
		free(buf);
		free(canon);
		emu_loader_error(L, &at, e, "cannot read '%s': %s", path, strerror(e));
		return NULL;
	}
	fclose(fp);
	buf[len] = 0;
	if (memchr(buf, 0, len)) {
		free(buf);
		free(canon);
		emu_loader_error(L, &at, EINVAL, "'%s' is not a text file", path);
		return NULL;
	}
	L->stack[L->depth++] = canon;
	*canon_out = canon;
	return buf;
}

void emu_loader_pop(struct emu_loader *L)
{
	if (L->depth > 0)
		free(L->stack[--L->depth]);
}
