/* getaddrinfo(3) as the emulated host sees it (rdmaemu_ctl_getaddrinfo): name and service
 * resolution for rdma_getaddrinfo (lib/addrinfo.c) and any program that wants the emulated
 * host's view.
 *
 * The real librdmacm hands everything to glibc's getaddrinfo(3). Doing that would make
 * results depend on the machine running the emulator (its interfaces, its resolver, DNS), so
 * only the parts of glibc that are pure parsing are used as they are (numeric hosts, services
 * from /etc/services, socket type/protocol checks, EAI_* precedence): every call that reaches
 * glibc carries AI_NUMERICHOST. Names are resolved here to a literal first, the way glibc's
 * "files" backend would, against the fabric's name table and /etc/hosts.
 *
 * Facts this relies on were measured with glibc 2.36 (Debian 12): service and socket-type
 * errors are reported before any host lookup; a name that exists only in the other family
 * gives EAI_NONAME; a literal of the wrong family gives EAI_ADDRFAMILY; "%name" scope ids are
 * looked up with if_nametoindex() (unknown name: EAI_NONAME).
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "rdmaemu/ctl.h"
#include "emu/sim/process.h"

#define MAX_CANDIDATES 64

/* Interface index of the emulated host's netdev i: 1 is the implicit loopback "lo". */
static unsigned host_ifindex(size_t netdev)
{
	return (unsigned)netdev + 2;
}

/* Appends the addresses of `name` in an /etc/hosts-format file, in file order. */
static size_t hosts_file_lookup(const char *path, const char *name, int family,
				struct emu_name *out, size_t n, size_t max)
{
	char line[1024];
	FILE *f = fopen(path, "re");

	if (!f)
		return n;
	while (fgets(line, sizeof(line), f)) {
		char *save = NULL, *addr, *tok;
		struct emu_name e;
		bool match = false;

		line[strcspn(line, "#\n")] = '\0';
		addr = strtok_r(line, " \t", &save);
		if (!addr)
			continue;
		while ((tok = strtok_r(NULL, " \t", &save)))
			if (strcasecmp(tok, name) == 0)
				match = true;
		if (!match)
			continue;
		memset(&e, 0, sizeof(e));
		snprintf(e.name, sizeof(e.name), "%s", name);
		if (inet_pton(AF_INET, addr, &e.addr.v4) == 1)
			e.family = AF_INET;
		else if (inet_pton(AF_INET6, addr, &e.addr.v6) == 1)
			e.family = AF_INET6;
		else
			continue;
		if (family != AF_UNSPEC && family != e.family)
			continue;
		if (n < max)
			out[n] = e;
		n++;
	}
	fclose(f);
	return n;
}

/* RFC 3484 precedence with glibc's default policy table (gai.conf's defaults). */
static int precedence(const struct emu_name *e)
{
	const uint8_t *a = e->addr.v6.s6_addr;
	static const uint8_t zero12[12];

	if (e->family == AF_INET)
		return 10; /* ::ffff:0:0/96 */
	if (IN6_IS_ADDR_LOOPBACK(&e->addr.v6))
		return 50;
	if (IN6_IS_ADDR_V4MAPPED(&e->addr.v6))
		return 10;
	if (a[0] == 0x20 && a[1] == 0x02)
		return 30; /* 2002::/16, 6to4 */
	if (memcmp(a, zero12, 12) == 0)
		return 20; /* ::/96, IPv4-compatible */
	return 40;
}

static bool is_loopback(const struct emu_name *e)
{
	if (e->family == AF_INET)
		return (ntohl(e->addr.v4.s_addr) >> 24) == 127;
	return IN6_IS_ADDR_LOOPBACK(&e->addr.v6);
}

/* A destination is usable when the host has a source address for it (RFC 3484 rule 1);
 * loopback always is. */
static bool usable(const struct emu_host *h, const struct emu_name *e)
{
	return is_loopback(e) || emu_host_has_family(h, e->family);
}

/* The first address glibc would return: usable before unusable, then higher precedence, then
 * table order (a stable selection, so the result is deterministic). */
static const struct emu_name *pick_first(const struct emu_host *h, const struct emu_name *c, size_t n)
{
	const struct emu_name *best = NULL;

	for (size_t i = 0; i < n; i++) {
		if (!best || (usable(h, &c[i]) && !usable(h, best)) ||
		    (usable(h, &c[i]) == usable(h, best) && precedence(&c[i]) > precedence(best)))
			best = &c[i];
	}
	return best;
}

/* Rewrites "addr%ifname" to "addr%index" using the emulated host's interfaces, so glibc never
 * consults the real machine's. An unknown name becomes one longer than IFNAMSIZ, which glibc
 * rejects (EAI_NONAME) after its service checks, keeping glibc's order of errors. Returns false
 * only when the node does not fit the buffer. */
static bool translate_scope(const struct emu_host *h, const char *node, char *buf, size_t len)
{
	const char *pct = strchr(node, '%');
	const char *scope;
	unsigned idx = 0;

	if (strlen(node) + 32 >= len)
		return false;
	if (!pct) {
		strcpy(buf, node);
		return true;
	}
	scope = pct + 1;
	if (*scope && strspn(scope, "0123456789") == strlen(scope)) {
		strcpy(buf, node);
		return true;
	}
	if (strcmp(scope, "lo") == 0)
		idx = 1;
	for (size_t i = 0; !idx && i < h->nnetdevs; i++)
		if (strcmp(scope, h->netdevs[i].name) == 0)
			idx = host_ifindex(i);
	if (idx)
		snprintf(buf, len, "%.*s%%%u", (int)(pct - node), node, idx);
	else
		snprintf(buf, len, "%.*s%%rdmaemu-no-such-interface", (int)(pct - node), node);
	return true;
}

static int host_getaddrinfo(const struct emu_host *h, const char *node, const char *service,
			    const struct addrinfo *hints, struct addrinfo **res)
{
	struct emu_name cand[MAX_CANDIDATES];
	const struct emu_name *first;
	struct addrinfo hh;
	char lit[NI_MAXHOST + 64];
	const char *hosts;
	bool numeric_only;
	size_t n;
	int ret;

	if (hints) {
		hh = *hints;
	} else {
		/* glibc's defaults for NULL hints */
		memset(&hh, 0, sizeof(hh));
		hh.ai_family = AF_UNSPEC;
		hh.ai_flags = AI_V4MAPPED | AI_ADDRCONFIG;
	}
	if (hh.ai_flags & AI_ADDRCONFIG) {
		/* glibc narrows AF_UNSPEC to the one family the host has configured. */
		bool v4 = emu_host_has_family(h, AF_INET), v6 = emu_host_has_family(h, AF_INET6);

		hh.ai_flags &= ~AI_ADDRCONFIG;
		if (hh.ai_family == AF_UNSPEC && v4 != v6)
			hh.ai_family = v4 ? AF_INET : AF_INET6;
	}
	if (!node)
		return getaddrinfo(NULL, service, &hh, res);
	if (!translate_scope(h, node, lit, sizeof(lit)))
		return EAI_NONAME;

	numeric_only = hh.ai_flags & AI_NUMERICHOST;
	hh.ai_flags |= AI_NUMERICHOST;
	ret = getaddrinfo(lit, service, &hh, res);
	if (ret != EAI_NONAME || numeric_only)
		return ret;

	/* A name: the fabric's table, then /etc/hosts, then (only if the fabric allows) DNS. */
	n = emu_fabric_lookup_name(h->fabric, node, hh.ai_family, cand, MAX_CANDIDATES);
	if (n == 0) {
		hosts = getenv("RDMAEMU_HOSTS_FILE");
		n = hosts_file_lookup(hosts && *hosts ? hosts : "/etc/hosts", node, hh.ai_family,
				      cand, 0, MAX_CANDIDATES);
	}
	if (n == 0) {
		if (!h->fabric->system_resolver)
			return EAI_NONAME;
		hh.ai_flags &= ~AI_NUMERICHOST;
		return getaddrinfo(node, service, &hh, res);
	}
	first = pick_first(h, cand, n < MAX_CANDIDATES ? n : MAX_CANDIDATES);
	inet_ntop(first->family, &first->addr, lit, sizeof(lit));
	return getaddrinfo(lit, service, &hh, res);
}

int rdmaemu_ctl_getaddrinfo(const char *node, const char *service, const struct addrinfo *hints,
			    struct addrinfo **res)
{
	const struct emu_host *h = emu_process_host();

	if (!h)
		return EAI_SYSTEM; /* errno: the attach error */
	return host_getaddrinfo(h, node, service, hints, res);
}
