/* Lookups on a loaded fabric, value parsers shared by the loaders, and the *_str helpers. */
#include "config.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "emu/sim/fabric_priv.h"

/* ---------- lookups ---------- */

struct emu_host *emu_fabric_find_host(const struct emu_fabric *f, const char *name)
{
	if (!f || !name)
		return NULL;
	for (size_t i = 0; i < f->nhosts; i++) {
		struct emu_host *h = &f->hosts[i];

		if (!strcmp(h->name, name))
			return h;
		for (size_t a = 0; a < h->naliases; a++)
			if (!strcmp(h->aliases[a], name))
				return h;
	}
	return NULL;
}

static bool name_entry_seen(const struct emu_name *out, size_t n, size_t max,
			    const struct emu_name *e)
{
	size_t lim = n < max ? n : max;

	for (size_t i = 0; i < lim; i++) {
		if (out[i].family != e->family)
			continue;
		if (e->family == AF_INET ? !memcmp(&out[i].addr.v4, &e->addr.v4, 4)
					 : !memcmp(&out[i].addr.v6, &e->addr.v6, 16))
			return true;
	}
	return false;
}

static size_t put_name(struct emu_name *out, size_t n, size_t max, const struct emu_name *e)
{
	/* Only entries we could store can be checked for duplicates; beyond max we still count,
	 * which may overcount a duplicate: callers only use the count to size a retry. */
	if (name_entry_seen(out, n, max, e))
		return n;
	if (n < max && out)
		out[n] = *e;
	return n + 1;
}

/* Names compare case-insensitively, as glibc's files backend compares /etc/hosts names. */
size_t emu_fabric_lookup_name(const struct emu_fabric *f, const char *name, int family,
			      struct emu_name *out, size_t max)
{
	size_t n = 0;

	if (!f || !name)
		return 0;
	if (!out)
		max = 0;
	for (size_t i = 0; i < f->nnames; i++) {
		const struct emu_name *e = &f->names[i];

		if (strcasecmp(e->name, name))
			continue;
		if (family != AF_UNSPEC && e->family != family)
			continue;
		n = put_name(out, n, max, e);
	}
	for (size_t i = 0; i < f->nhosts; i++) {
		const struct emu_host *h = &f->hosts[i];
		bool match = !strcasecmp(h->name, name);

		for (size_t a = 0; !match && a < h->naliases; a++)
			match = !strcasecmp(h->aliases[a], name);
		if (!match)
			continue;
		for (size_t d = 0; d < h->nnetdevs; d++) {
			const struct emu_netdev *nd = &h->netdevs[d];

			for (size_t k = 0; k < nd->naddrs; k++) {
				struct emu_name e;

				if (family != AF_UNSPEC && nd->addrs[k].family != family)
					continue;
				/* a name never resolves to a link-local address: no scope */
				if (nd->addrs[k].family == AF_INET6 &&
				    IN6_IS_ADDR_LINKLOCAL(&nd->addrs[k].addr.v6))
					continue;
				memset(&e, 0, sizeof(e));
				snprintf(e.name, sizeof(e.name), "%s", name);
				e.family = nd->addrs[k].family;
				if (e.family == AF_INET)
					e.addr.v4 = nd->addrs[k].addr.v4;
				else
					e.addr.v6 = nd->addrs[k].addr.v6;
				n = put_name(out, n, max, &e);
			}
		}
	}
	return n;
}

/* glibc's __check_pf, which decides AI_ADDRCONFIG, ignores exactly 127.0.0.1 and ::1; every
 * other address counts, IPv6 link-local ones included. */
static bool addrconfig_ignores(const struct emu_ifaddr *a)
{
	if (a->family == AF_INET)
		return a->addr.v4.s_addr == htonl(INADDR_LOOPBACK);
	return IN6_IS_ADDR_LOOPBACK(&a->addr.v6);
}

bool emu_host_has_family(const struct emu_host *h, int family)
{
	if (!h)
		return false;
	for (size_t d = 0; d < h->nnetdevs; d++) {
		const struct emu_netdev *nd = &h->netdevs[d];

		if (!nd->up)
			continue;
		for (size_t k = 0; k < nd->naddrs; k++)
			if (nd->addrs[k].family == family && !addrconfig_ignores(&nd->addrs[k]))
				return true;
	}
	return false;
}

bool emu_addr_in_prefix(int family, const void *addr, const void *net, unsigned plen)
{
	const uint8_t *a = addr, *b = net;
	unsigned bytes = family == AF_INET ? 4 : 16;

	if (plen > bytes * 8)
		return false;
	for (unsigned i = 0; i < bytes && plen; i++) {
		unsigned bits = plen >= 8 ? 8 : plen;
		uint8_t mask = (uint8_t)(0xff << (8 - bits));

		if ((a[i] & mask) != (b[i] & mask))
			return false;
		plen -= bits;
	}
	return true;
}

/* Longest-prefix match over connected subnets of netdevs that are up, then explicit routes,
 * like the kernel's main table (a down netdev loses its connected and static routes). */
int emu_host_route(const struct emu_host *h, int family, const void *addr)
{
	int best = -1, best_len = -1;

	if (!h || !addr || (family != AF_INET && family != AF_INET6))
		return -1;
	for (size_t d = 0; d < h->nnetdevs; d++) {
		const struct emu_netdev *nd = &h->netdevs[d];

		if (!nd->up)
			continue;
		for (size_t k = 0; k < nd->naddrs; k++) {
			const struct emu_ifaddr *a = &nd->addrs[k];

			if (a->family != family || (int)a->prefixlen <= best_len)
				continue;
			if (emu_addr_in_prefix(family, addr, &a->addr, a->prefixlen)) {
				best = (int)d;
				best_len = a->prefixlen;
			}
		}
	}
	for (size_t r = 0; r < h->nroutes; r++) {
		const struct emu_route *rt = &h->routes[r];

		if (rt->family != family || (int)rt->prefixlen <= best_len)
			continue;
		if (rt->netdev < 0 || (size_t)rt->netdev >= h->nnetdevs || !h->netdevs[rt->netdev].up)
			continue;
		if (emu_addr_in_prefix(family, addr, &rt->dst, rt->prefixlen)) {
			best = rt->netdev;
			best_len = rt->prefixlen;
		}
	}
	return best;
}

/* ---------- strings ---------- */

int emu_parse_gid(const char *s, uint8_t raw[16])
{
	struct in6_addr a;

	if (!s || !raw || inet_pton(AF_INET6, s, &a) != 1) {
		errno = EINVAL;
		return -1;
	}
	memcpy(raw, &a, 16);
	return 0;
}

/* The same words ibv_devinfo prints. */
const char *emu_link_layer_str(uint8_t link_layer)
{
	switch (link_layer) {
	case 1: return "InfiniBand";
	case 2: return "Ethernet";
	default: return "Unspecified";
	}
}

/* The same words ibv_port_state_str() returns. */
const char *emu_port_state_str(uint8_t state)
{
	switch (state) {
	case 0: return "PORT_NOP";
	case 1: return "PORT_DOWN";
	case 2: return "PORT_INIT";
	case 3: return "PORT_ARMED";
	case 4: return "PORT_ACTIVE";
	case 5: return "PORT_ACTIVE_DEFER";
	default: return "invalid state";
	}
}

const char *emu_phys_state_str(uint8_t phys)
{
	switch (phys) {
	case 1: return "Sleep";
	case 2: return "Polling";
	case 3: return "Disabled";
	case 4: return "PortConfigurationTraining";
	case 5: return "LinkUp";
	case 6: return "LinkErrorRecovery";
	case 7: return "PhyTest";
	default: return "NoStateChange";
	}
}

int emu_mtu_bytes(uint8_t ibv_mtu)
{
	return ibv_mtu >= 1 && ibv_mtu <= 5 ? 128 << ibv_mtu : 0;
}

uint8_t emu_mtu_from_bytes(unsigned bytes)
{
	uint8_t m = 0;

	for (uint8_t e = 1; e <= 5; e++)
		if ((unsigned)emu_mtu_bytes(e) <= bytes)
			m = e;
	return m;
}

static const struct {
	const char *name;
	uint8_t code;
} widths[] = { { "1x", 1 }, { "4x", 2 }, { "8x", 4 }, { "12x", 8 }, { "2x", 16 } },
  speeds[] = { { "SDR", 1 }, { "DDR", 2 }, { "QDR", 4 }, { "FDR10", 8 }, { "FDR", 16 },
	       { "EDR", 32 }, { "HDR", 64 }, { "NDR", 128 } };

int emu_parse_width(const char *s, uint8_t *width)
{
	for (size_t i = 0; i < sizeof(widths) / sizeof(widths[0]); i++)
		if (!strcasecmp(s, widths[i].name)) {
			*width = widths[i].code;
			return 0;
		}
	return -1;
}

int emu_parse_speed(const char *s, uint8_t *speed)
{
	for (size_t i = 0; i < sizeof(speeds) / sizeof(speeds[0]); i++)
		if (!strcasecmp(s, speeds[i].name)) {
			*speed = speeds[i].code;
			return 0;
		}
	return -1;
}

const char *emu_width_str(uint8_t width)
{
	for (size_t i = 0; i < sizeof(widths) / sizeof(widths[0]); i++)
		if (widths[i].code == width)
			return widths[i].name;
	return "?";
}

const char *emu_speed_str(uint8_t speed)
{
	for (size_t i = 0; i < sizeof(speeds) / sizeof(speeds[0]); i++)
		if (speeds[i].code == speed)
			return speeds[i].name;
	return "?";
}

int emu_parse_mtu(const char *s, uint8_t *ibv_mtu)
{
	uint32_t v;

	if (emu_parse_u32_max(s, 4096, &v))
		return -1;
	for (uint8_t e = 1; e <= 5; e++)
		if ((uint32_t)emu_mtu_bytes(e) == v) {
			*ibv_mtu = e;
			return 0;
		}
	return -1;
}

/* ---------- numbers and addresses ---------- */

int emu_parse_u64(const char *s, uint64_t *v)
{
	char *end;
	unsigned long long x;

	if (!s || !*s || *s == '-' || *s == '+' || isspace((unsigned char)*s))
		return -1;
	errno = 0;
	x = strtoull(s, &end, 0);
	if (errno || *end)
		return -1;
	*v = x;
	return 0;
}

int emu_parse_u32_max(const char *s, uint32_t max, uint32_t *v)
{
	uint64_t x;

	if (emu_parse_u64(s, &x) || x > max)
		return -1;
	*v = (uint32_t)x;
	return 0;
}

int emu_parse_duration(const char *s, uint64_t *ns)
{
	static const struct {
		const char *unit;
		double mult;
	} units[] = { { "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 } };
	char *end;
	double x;

	if (!s || !*s || *s == '-' || *s == '+' || isspace((unsigned char)*s))
		return -1;
	if (!strcmp(s, "0")) {
		*ns = 0;
		return 0;
	}
	errno = 0;
	x = strtod(s, &end);
	if (errno || end == s || !isfinite(x) || x < 0)
		return -1;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(end, units[i].unit))
			continue;
		x *= units[i].mult;
		if (x > 1e18)
			return -1;
		*ns = (uint64_t)llround(x);
		return 0;
	}
	return -1;
}

int emu_parse_probability(const char *s, double *p)
{
	char *end;
	double x;

	if (!s || !*s || isspace((unsigned char)*s))
		return -1;
	errno = 0;
	x = strtod(s, &end);
	if (errno || end == s || !isfinite(x))
		return -1;
	if (!strcmp(end, "%"))
		x /= 100;
	else if (*end)
		return -1;
	if (x < 0 || x > 1)
		return -1;
	*p = x;
	return 0;
}

/* Colon-separated hex bytes: 6 for Ethernet, 20 for IPoIB. */
int emu_parse_hwaddr(const char *s, uint8_t *out, size_t max, uint8_t *len)
{
	size_t n = 0;

	while (*s) {
		if (!isxdigit((unsigned char)s[0]) || !isxdigit((unsigned char)s[1]) || n == max)
			return -1;
		out[n++] = (uint8_t)strtoul((char[3]){ s[0], s[1], 0 }, NULL, 16);
		s += 2;
		if (*s == ':' && s[1])
			s++;
		else if (*s)
			return -1;
	}
	if (n != 6 && n != 20)
		return -1;
	*len = (uint8_t)n;
	return 0;
}

int emu_parse_guid(const char *s, uint64_t *guid)
{
	uint64_t v = 0;
	int digits = 0;

	if (!strncasecmp(s, "0x", 2))
		return emu_parse_u64(s, guid) || strlen(s) > 18 ? -1 : 0;
	/* 0002:c903:000a:0001, the form ibv_devinfo prints */
	for (const char *p = s; *p; p++) {
		if (*p == ':') {
			if ((p - s + 1) % 5)
				return -1;
			continue;
		}
		if (!isxdigit((unsigned char)*p) || ++digits > 16)
			return -1;
		v = v << 4 | (uint64_t)(isdigit((unsigned char)*p) ? *p - '0'
								 : (tolower((unsigned char)*p) - 'a' + 10));
	}
	if (digits != 16 || strlen(s) != 19)
		return -1;
	*guid = v;
	return 0;
}

void emu_guid_str(uint64_t guid, char buf[20])
{
	snprintf(buf, 20, "%04x:%04x:%04x:%04x", (unsigned)(guid >> 48) & 0xffff,
		 (unsigned)(guid >> 32) & 0xffff, (unsigned)(guid >> 16) & 0xffff,
		 (unsigned)guid & 0xffff);
}

/* "192.0.2.1/28" or "2001:db8::1/64"; without want_prefix, a bare address (prefix = full). */
int emu_parse_prefix(const char *s, struct emu_ifaddr *a, bool want_prefix)
{
	char buf[INET6_ADDRSTRLEN + 8];
	char *slash;
	uint32_t plen;

	if (strlen(s) >= sizeof(buf))
		return -1;
	strcpy(buf, s);
	slash = strchr(buf, '/');
	if (slash)
		*slash++ = 0;
	else if (want_prefix)
		return -1;
	memset(a, 0, sizeof(*a));
	if (inet_pton(AF_INET, buf, &a->addr.v4) == 1)
		a->family = AF_INET;
	else if (inet_pton(AF_INET6, buf, &a->addr.v6) == 1)
		a->family = AF_INET6;
	else
		return -1;
	if (!slash) {
		a->prefixlen = a->family == AF_INET ? 32 : 128;
		return 0;
	}
	if (!*slash || !isdigit((unsigned char)*slash) ||
	    emu_parse_u32_max(slash, a->family == AF_INET ? 32 : 128, &plen))
		return -2; /* address fine, prefix length bad */
	a->prefixlen = (uint8_t)plen;
	return 0;
}

uint64_t emu_eui64_from_mac(const uint8_t mac[6])
{
	return (uint64_t)(mac[0] ^ 0x02) << 56 | (uint64_t)mac[1] << 48 | (uint64_t)mac[2] << 40 |
	       (uint64_t)0xfffe << 24 | (uint64_t)mac[3] << 16 | (uint64_t)mac[4] << 8 | mac[5];
}

void emu_gid_set(uint8_t raw[16], uint64_t prefix, uint64_t iid)
{
	for (int i = 0; i < 8; i++) {
		raw[i] = (uint8_t)(prefix >> (56 - 8 * i));
		raw[8 + i] = (uint8_t)(iid >> (56 - 8 * i));
	}
}

/* ---------- words ---------- */

int emu_split_words(char *line, char **words, int max)
{
	int n = 0;
	char *p = line;

	for (;;) {
		char *w, *o;

		while (*p && isspace((unsigned char)*p))
			p++;
		if (!*p || *p == '#')
			return n;
		if (n == max)
			return -2;
		/* A word is a run of non-space characters in which "..." may hold spaces and
		 * '#'; the quotes are removed (key="a b" yields key=a b). */
		w = o = p;
		while (*p && !isspace((unsigned char)*p)) {
			if (*p == '"') {
				p++;
				while (*p && *p != '"')
					*o++ = *p++;
				if (*p != '"')
					return -1;
				p++;
			} else {
				*o++ = *p++;
			}
		}
		if (*p)
			p++;
		*o = 0;
		words[n++] = w;
	}
}
