/* Fabrics run by several daemons (docs/multi-daemon.md): the `daemon NAME udp=ADDR:PORT`
 * directive, the hosts' `daemon=NAME`, their checks, their `fabric show` lines and the fabric's
 * identity that the daemons compare in every datagram. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "emu/sim/fabric_priv.h"

static bool daemon_name_ok(const char *s)
{
	size_t n = strlen(s);

	return n && n < EMU_NAME_MAX && !strpbrk(s, "/= \t");
}

/* "ADDR:PORT" or "[ADDR6]:PORT" into dm: 0, or -1 when it is neither. */
static int parse_udp(const char *v, struct emu_fabric_daemon *dm)
{
	char host[INET6_ADDRSTRLEN + 2];
	const char *colon, *a = v;
	size_t n;
	uint32_t port;

	if (*v == '[') {
		const char *close = strchr(v, ']');

		if (!close || close[1] != ':')
			return -1;
		a = v + 1;
		n = (size_t)(close - a);
		colon = close + 1;
	} else {
		colon = strrchr(v, ':');
		if (!colon)
			return -1;
		n = (size_t)(colon - v);
	}
	if (!n || n >= sizeof(host))
		return -1;
	memcpy(host, a, n);
	host[n] = 0;
	if (emu_parse_u32_max(colon + 1, 65535, &port) || !port)
		return -1;
	dm->port = (uint16_t)port;
	if (*v != '[' && inet_pton(AF_INET, host, &dm->addr.v4) == 1) {
		dm->family = AF_INET;
		return 0;
	}
	if (*v == '[' && inet_pton(AF_INET6, host, &dm->addr.v6) == 1) {
		dm->family = AF_INET6;
		return 0;
	}
	return -1;
}

int emu_load_daemon(struct emu_loader *L, int nw, char **w)
{
	struct emu_fabric_daemon dm;
	bool have_udp = false;
	int i;

	memset(&dm, 0, sizeof(dm));
	if (nw < 2 || !daemon_name_ok(w[1]))
		return emu_loader_error(L, NULL, EINVAL,
					"expected a daemon name after 'daemon' (up to %d characters, "
					"no '/', '=' or spaces)", EMU_NAME_MAX - 1);
	if (emu_fabric_find_daemon(L->f, w[1]))
		return emu_loader_error(L, NULL, EINVAL, "duplicate daemon '%s'", w[1]);
	snprintf(dm.name, sizeof(dm.name), "%s", w[1]);
	for (i = 2; i < nw; i++) {
		if (strncmp(w[i], "udp=", 4))
			return emu_loader_error(L, NULL, EINVAL, "unknown attribute '%s' on a "
						"'daemon' line (expected udp=)", w[i]);
		if (parse_udp(w[i] + 4, &dm))
			return emu_loader_error(L, NULL, EINVAL, "expected udp=IPV4:PORT or "
						"udp=[IPV6]:PORT (port 1-65535), got '%s'", w[i]);
		have_udp = true;
	}
	if (!have_udp)
		return emu_loader_error(L, NULL, EINVAL, "daemon '%s' needs udp=ADDR:PORT", w[1]);
	for (size_t k = 0; k < L->f->ndaemons; k++) {
		const struct emu_fabric_daemon *o = &L->f->daemons[k];

		if (o->family == dm.family && o->port == dm.port &&
		    !memcmp(&o->addr, &dm.addr, dm.family == AF_INET ? 4 : 16))
			return emu_loader_error(L, NULL, EINVAL, "daemons '%s' and '%s' have the "
						"same udp= address", o->name, dm.name);
	}
	i = emu_array_push(&L->f->daemons, &L->f->ndaemons, sizeof(dm));
	if (i < 0)
		return emu_loader_error(L, NULL, ENOMEM, "out of memory");
	L->f->daemons[i] = dm;
	return 0;
}

int emu_loader_host_daemon(struct emu_loader *L, int host, const char *name)
{
	if (!daemon_name_ok(name))
		return emu_loader_error(L, NULL, EINVAL, "expected a daemon name after 'daemon=', "
					"got '%s'", name);
	snprintf(L->hosts[host].daemon, sizeof(L->hosts[host].daemon), "%s", name);
	return 0;
}

/* Either no daemon at all, or every host named one of those declared. */
int emu_loader_finish_daemons(struct emu_loader *L)
{
	struct emu_fabric *f = L->f;

	for (size_t h = 0; h < f->nhosts; h++) {
		const struct emu_host_meta *m = &L->hosts[h];
		const struct emu_fabric_daemon *dm;

		if (!m->daemon[0]) {
			if (f->ndaemons)
				return emu_loader_error(L, &m->src, EINVAL, "host '%s' names no "
							"daemon= (the fabric declares daemons: "
							"each host runs under one)", f->hosts[h].name);
			continue;
		}
		dm = emu_fabric_find_daemon(f, m->daemon);
		if (!dm)
			return emu_loader_error(L, &m->src, EINVAL, "host '%s': no daemon '%s' (a "
						"'daemon NAME udp=ADDR:PORT' line declares it)",
						f->hosts[h].name, m->daemon);
		f->hosts[h].daemon = (unsigned)(dm - f->daemons) + 1;
	}
	return 0;
}

const struct emu_fabric_daemon *emu_fabric_find_daemon(const struct emu_fabric *f,
							const char *name)
{
	for (size_t i = 0; f && i < f->ndaemons; i++)
		if (!strcmp(f->daemons[i].name, name))
			return &f->daemons[i];
	return NULL;
}

void emu_fabric_show_daemons(const struct emu_fabric *f, FILE *out)
{
	if (f->ndaemons)
		fputc('\n', out);
	for (size_t i = 0; i < f->ndaemons; i++) {
		const struct emu_fabric_daemon *dm = &f->daemons[i];
		char a[INET6_ADDRSTRLEN];

		inet_ntop(dm->family, &dm->addr, a, sizeof(a));
		fprintf(out, dm->family == AF_INET6 ? "daemon %s udp [%s]:%u hosts" :
						      "daemon %s udp %s:%u hosts",
			dm->name, a, dm->port);
		for (size_t h = 0; h < f->nhosts; h++)
			if (f->hosts[h].daemon == i + 1)
				fprintf(out, " %s", f->hosts[h].name);
		fputc('\n', out);
	}
}

uint64_t emu_fabric_id(const struct emu_fabric *f)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */
	char *text = NULL, *p;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);

	if (!m)
		return 0;
	emu_fabric_show(f, m);
	fclose(m);
	p = strchr(text, '\n'); /* the first line names the file */
	for (p = p ? p + 1 : text; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ull;
	free(text);
	return h;
}
