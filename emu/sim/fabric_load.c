/* The fabric file reader: the project's own line-oriented format (rdmaemu-fabric(5)).
 *
 * Each line is a directive followed by words and key=value attributes. `host`, `device`,
 * `port` and `netdev` lines set the context the following lines apply to, the way
 * ibnetdiscover's output attaches port lines to the last node header. This file only records
 * what the lines say; emu_loader_finish() (fabric_finish.c) resolves names and derives the rest. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <malloc.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "emu/sim/fabric_priv.h"
#include "util/failcall.h"

#define MAX_WORDS 64

/* ---------- small helpers ---------- */

static int bad(struct emu_loader *L, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int bad(struct emu_loader *L, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return emu_loader_error(L, NULL, EINVAL, "%s", msg);
}

static int nomem(struct emu_loader *L)
{
	return emu_loader_error(L, NULL, ENOMEM, "out of memory");
}

/* Splits "key=value"; returns the value (NULL for a bare word) and cuts key at '='. */
static char *split_kv(char *w)
{
	char *eq = strchr(w, '=');

	if (!eq)
		return NULL;
	*eq = 0;
	return eq + 1;
}

static bool valid_name(const char *s)
{
	if (!*s || strlen(s) >= EMU_NAME_MAX)
		return false;
	for (; *s; s++)
		if (*s == '/' || *s == '=' || (unsigned char)*s <= ' ')
			return false;
	return true;
}

static int need_name(struct emu_loader *L, const char *what, int nw, char **w)
{
	if (nw < 2)
		return bad(L, "expected a %s name after '%s'", what, w[0]);
	if (!valid_name(w[1]))
		return bad(L, "expected a %s name after '%s' (up to %d characters, no '/', '=' "
			   "or spaces), got '%s'", what, w[0], EMU_NAME_MAX - 1, w[1]);
	return 0;
}

static int on_off(struct emu_loader *L, const char *key, const char *v, bool *out)
{
	if (v && (!strcmp(v, "on") || !strcmp(v, "yes") || !strcmp(v, "1"))) {
		*out = true;
		return 0;
	}
	if (v && (!strcmp(v, "off") || !strcmp(v, "no") || !strcmp(v, "0"))) {
		*out = false;
		return 0;
	}
	return bad(L, "expected 'on' or 'off' after '%s', got '%s'", key, v ? v : "");
}

static int parse_link_layer(struct emu_loader *L, const char *v, uint8_t *ll)
{
	if (v && (!strcmp(v, "eth") || !strcmp(v, "ethernet") || !strcmp(v, "roce"))) {
		*ll = 2;
		return 0;
	}
	if (v && (!strcmp(v, "ib") || !strcmp(v, "infiniband"))) {
		*ll = 1;
		return 0;
	}
	return bad(L, "expected 'eth' or 'ib' after 'link=', got '%s'", v ? v : "");
}

/* ---------- fault attributes (link and faults lines) ---------- */

/* drop-match=END:OFFSET:VALUE[/MASK]:NTH (END a or b: the link's first or second endpoint
 * sends). */
static int drop_match(struct emu_loader *L, const char *v, struct emu_faults *ft, unsigned *set)
{
	struct emu_fault_match m = { .mask = 0xff };
	unsigned long off, val, mask = 0xff, nth;
	char *end;

	if (ft->nmatch == EMU_FAULT_MATCH_MAX)
		return bad(L, "at most %d drop-match= rules a link", EMU_FAULT_MATCH_MAX);
	if (!v || (v[0] != 'a' && v[0] != 'b') || v[1] != ':')
		goto syntax;
	m.side = v[0] == 'b';
	off = strtoul(v + 2, &end, 0);
	if (*end != ':' || off > 0xffff)
		goto syntax;
	val = strtoul(end + 1, &end, 0);
	if (*end == '/')
		mask = strtoul(end + 1, &end, 0);
	if (*end != ':' || val > 0xff || mask > 0xff)
		goto syntax;
	nth = strtoul(end + 1, &end, 0);
	if (*end || !nth || nth > UINT32_MAX)
		goto syntax;
	m.off = (uint16_t)off;
	m.val = (uint8_t)val;
	m.mask = (uint8_t)mask;
	m.nth = (uint32_t)nth;
	ft->match[ft->nmatch++] = m;
	*set |= EMU_FSET_MATCH;
	return 0;
syntax:
	return bad(L, "expected END:OFFSET:VALUE[/MASK]:NTH after 'drop-match=' (END a or b, "
		   "NTH from 1), got '%s'", v ? v : "");
}

/* Returns 1 when `key` is not a fault attribute, 0 when handled, -1 on error. */
static int fault_attr(struct emu_loader *L, const char *key, const char *v,
		      struct emu_faults *ft, unsigned *set)
{
	if (!strcmp(key, "delay") || !strcmp(key, "jitter")) {
		uint64_t ns;

		if (!v || emu_parse_duration(v, &ns))
			return bad(L, "expected a duration with a unit (ns, us, ms, s) after "
				   "'%s=', got '%s'", key, v ? v : "");
		if (key[0] == 'd') {
			ft->delay_ns = ns;
			*set |= EMU_FSET_DELAY;
		} else {
			ft->jitter_ns = ns;
			*set |= EMU_FSET_JITTER;
		}
		return 0;
	}
	if (!strcmp(key, "loss") || !strcmp(key, "duplicate") || !strcmp(key, "reorder") ||
	    !strcmp(key, "corrupt")) {
		double p;

		if (!v || emu_parse_probability(v, &p))
			return bad(L, "expected a probability (0..1 or 0%%..100%%) after '%s=', "
				   "got '%s'", key, v ? v : "");
		if (key[0] == 'l') {
			ft->loss = p;
			*set |= EMU_FSET_LOSS;
		} else if (key[0] == 'd') {
			ft->duplicate = p;
			*set |= EMU_FSET_DUPLICATE;
		} else if (key[0] == 'c') {
			ft->corrupt = p;
			*set |= EMU_FSET_CORRUPT;
		} else {
			ft->reorder = p;
			*set |= EMU_FSET_REORDER;
		}
		return 0;
	}
	if (!strcmp(key, "drop-match"))
		return drop_match(L, v, ft, set);
	if (!strcmp(key, "down") || !strcmp(key, "up")) {
		bool b = true;

		if (v && on_off(L, key, v, &b))
			return -1;
		ft->down = key[0] == 'd' ? b : !b;
		*set |= EMU_FSET_DOWN;
		return 0;
	}
	return 1;
}

/* ---------- global directives ---------- */

static int d_seed(struct emu_loader *L, int nw, char **w)
{
	if (nw != 2 || emu_parse_u64(w[1], &L->f->seed))
		return bad(L, "expected one number after 'seed', got '%s'", nw > 1 ? w[1] : "");
	L->seed_set = true;
	return 0;
}

static int d_process_qpns(struct emu_loader *L, int nw, char **w)
{
	uint64_t v;

	if (nw != 2 || emu_parse_u64(w[1], &v) || v < EMU_FABRIC_PROCESS_QPNS_MIN ||
	    v > EMU_FABRIC_PROCESS_QPNS_MAX || (v & (v - 1)))
		return bad(L, "expected a power of two from %u to %u after 'process-qpns', got '%s'",
			   EMU_FABRIC_PROCESS_QPNS_MIN, EMU_FABRIC_PROCESS_QPNS_MAX,
			   nw > 1 ? w[1] : "");
	L->f->process_qpns = (uint32_t)v;
	return 0;
}

static int d_resolver(struct emu_loader *L, int nw, char **w)
{
	if (nw == 2 && !strcmp(w[1], "files"))
		L->f->system_resolver = false;
	else if (nw == 2 && !strcmp(w[1], "system"))
		L->f->system_resolver = true;
	else
		return bad(L, "expected 'files' or 'system' after 'resolver', got '%s'",
			   nw > 1 ? w[1] : "");
	L->resolver_set = true;
	return 0;
}

static int d_faults(struct emu_loader *L, int nw, char **w)
{
	unsigned set = 0;

	if (nw < 2)
		return bad(L, "expected attributes (delay=, jitter=, loss=, duplicate=, reorder=, "
			   "corrupt=, drop-match=, down) after 'faults'");
	for (int i = 1; i < nw; i++) {
		char *v = split_kv(w[i]);
		int r = fault_attr(L, w[i], v, &L->f->default_faults, &set);

		if (r < 0)
			return -1;
		if (r > 0)
			return bad(L, "unknown attribute '%s' on a 'faults' line (expected delay, "
				   "jitter, loss, duplicate, reorder, corrupt, drop-match, down)", w[i]);
	}
	return 0;
}

/* IBTA rate encodings by Gb/s, as in ibv_rate / PathRecord Rate. */
static int parse_rate(const char *v, uint8_t *rate)
{
	static const struct {
		const char *gbps;
		uint8_t code;
	} r[] = { { "2.5", 2 }, { "10", 3 }, { "30", 4 },	{ "5", 5 },   { "20", 6 },
		  { "40", 7 },	{ "60", 8 }, { "80", 9 },	{ "120", 10 }, { "14", 11 },
		  { "56", 12 }, { "112", 13 }, { "168", 14 }, { "25", 15 },  { "100", 16 },
		  { "200", 17 }, { "300", 18 }, { "50", 20 },	{ "400", 21 }, { "600", 22 } };

	for (size_t i = 0; i < sizeof(r) / sizeof(r[0]); i++)
		if (!strcmp(v, r[i].gbps)) {
			*rate = r[i].code;
			return 0;
		}
	return -1;
}

static int d_sm(struct emu_loader *L, int nw, char **w)
{
	struct emu_sm *sm = &L->f->sm;

	L->sm_set = true;
	L->sm_src = L->cur;
	if (nw == 2 && (!strcmp(w[1], "none") || !strcmp(w[1], "off"))) {
		sm->present = false;
		return 0;
	}
	sm->present = true;
	for (int i = 1; i < nw; i++) {
		char *k = w[i], *v = split_kv(k);
		uint32_t x;

		if (!v)
			return bad(L, "expected key=value or 'none' after 'sm', got '%s'", k);
		if (!strcmp(k, "lid")) {
			if (emu_parse_u32_max(v, 0xbfff, &x) || !x)
				return bad(L, "expected a unicast LID (1..49151) after 'lid=', got "
					   "'%s'", v);
			sm->sm_lid = (uint16_t)x;
			L->sm_lid_set = true;
		} else if (!strcmp(k, "subnet-prefix")) {
			uint8_t raw[16];

			if (emu_parse_gid(v, raw))
				return bad(L, "expected a subnet prefix like fe80:: after "
					   "'subnet-prefix=', got '%s'", v);
			sm->subnet_prefix = 0;
			for (int b = 0; b < 8; b++)
				sm->subnet_prefix = sm->subnet_prefix << 8 | raw[b];
		} else if (!strcmp(k, "sl")) {
			if (emu_parse_u32_max(v, 15, &x))
				return bad(L, "expected a service level (0..15) after 'sl=', got "
					   "'%s'", v);
			sm->sl = (uint8_t)x;
		} else if (!strcmp(k, "mtu")) {
			if (emu_parse_mtu(v, &sm->mtu))
				return bad(L, "expected an MTU (256, 512, 1024, 2048, 4096) after "
					   "'mtu=', got '%s'", v);
		} else if (!strcmp(k, "rate")) {
			if (parse_rate(v, &sm->rate))
				return bad(L, "expected a rate in Gb/s (2.5, 5, 10, 14, 20, 25, 30, "
					   "40, 50, 56, 60, 80, 100, ...) after 'rate=', got '%s'", v);
		} else if (!strcmp(k, "packet-lifetime")) {
			if (emu_parse_u32_max(v, 63, &x))
				return bad(L, "expected a packet lifetime exponent (0..63) after "
					   "'packet-lifetime=', got '%s'", v);
			sm->packet_lifetime = (uint8_t)x;
		} else if (!strcmp(k, "response-delay")) {
			if (emu_parse_duration(v, &sm->response_delay_ns))
				return bad(L, "expected a duration with a unit (ns, us, ms, s) after "
					   "'response-delay=', got '%s'", v);
		} else if (!strcmp(k, "drop-next") || !strcmp(k, "busy-next")) {
			if (emu_parse_u32_max(v, 1000000, &x))
				return bad(L, "expected a count (0..1000000) after '%s=', got '%s'",
					   k, v);
			*(k[0] == 'd' ? &sm->drop_next : &sm->busy_next) = x;
		} else if (!strcmp(k, "drop") || !strcmp(k, "busy")) {
			char *end;
			double d = strtod(v, &end);

			if (end == v || *end || !(d >= 0 && d <= 1))
				return bad(L, "expected a probability (0..1) after '%s=', got '%s'",
					   k, v);
			*(k[0] == 'd' ? &sm->drop : &sm->busy) = d;
		} else if (!strcmp(k, "error") || !strcmp(k, "error-attr")) {
			if (emu_parse_u32_max(v, 0xffff, &x))
				return bad(L, "expected a 16-bit number (e.g. 0x0300) after '%s=', "
					   "got '%s'", k, v);
			*(k[5] ? &sm->error_attr : &sm->error_status) = (uint16_t)x;
		} else {
			return bad(L, "unknown attribute '%s' on an 'sm' line (expected lid, "
				   "subnet-prefix, sl, mtu, rate, packet-lifetime, response-delay, "
				   "drop-next, drop, busy-next, busy, error, error-attr)", k);
		}
	}
	return 0;
}

static int add_name(struct emu_loader *L, const char *name, const struct emu_ifaddr *a)
{
	struct emu_fabric *f = L->f;
	int i = emu_array_push(&f->names, &f->nnames, sizeof(*f->names));

	if (i < 0)
		return nomem(L);
	snprintf(f->names[i].name, sizeof(f->names[i].name), "%s", name);
	f->names[i].family = a->family;
	if (a->family == AF_INET)
		f->names[i].addr.v4 = a->addr.v4;
	else
		f->names[i].addr.v6 = a->addr.v6;
	return 0;
}

static int d_name(struct emu_loader *L, int nw, char **w)
{
	if (nw < 3)
		return bad(L, "expected a name and at least one address after 'name'");
	if (strlen(w[1]) >= 256)
		return bad(L, "name '%.32s...' is longer than 255 characters", w[1]);
	for (int i = 2; i < nw; i++) {
		struct emu_ifaddr a;

		if (emu_parse_prefix(w[i], &a, false) || strchr(w[i], '/'))
			return bad(L, "expected an IPv4 or IPv6 address after 'name %s', got '%s'",
				   w[1], w[i]);
		if (add_name(L, w[1], &a))
			return -1;
	}
	return 0;
}

static int parse_endpoint(struct emu_loader *L, const char *s, struct emu_pending_ep *ep)
{
	char buf[3 * EMU_NAME_MAX];
	char *parts[4], *save = NULL, *t;
	int n = 0;

	memset(ep, 0, sizeof(*ep));
	if (!strcmp(s, "none"))
		return 0;
	if (strlen(s) >= sizeof(buf))
		goto fail;
	strcpy(buf, s);
	for (t = strtok_r(buf, "/", &save); t && n < 4; t = strtok_r(NULL, "/", &save))
		parts[n++] = t;
	if (n < 2 || n > 3 || s[0] == '/' || s[strlen(s) - 1] == '/' || strstr(s, "//"))
		goto fail;
	for (int i = 0; i < n; i++) {
		if (strlen(parts[i]) >= EMU_NAME_MAX)
			goto fail;
		strcpy(ep->part[i], parts[i]);
	}
	ep->nparts = n;
	return 0;
fail:
	return bad(L, "expected a link endpoint HOST/DEVICE/PORT, SWITCH/PORT or 'none', got "
		   "'%s'", s);
}

static int d_link(struct emu_loader *L, int nw, char **w)
{
	struct emu_pending_link pl;
	int i;

	if (nw < 3)
		return bad(L, "expected two endpoints after 'link' (HOST/DEVICE/PORT, "
			   "SWITCH/PORT or none)");
	memset(&pl, 0, sizeof(pl));
	if (parse_endpoint(L, w[1], &pl.a) || parse_endpoint(L, w[2], &pl.b))
		return -1;
	if (!pl.a.nparts)
		return bad(L, "the first endpoint of a link cannot be 'none'");
	for (i = 3; i < nw; i++) {
		char *v = split_kv(w[i]);
		int r = fault_attr(L, w[i], v, &pl.faults, &pl.set);

		if (r < 0)
			return -1;
		if (r == 0)
			continue;
		if (!strcmp(w[i], "width")) {
			if (!v || emu_parse_width(v, &pl.width))
				return bad(L, "expected a link width (1x, 2x, 4x, 8x, 12x) after "
					   "'width=', got '%s'", v ? v : "");
			pl.set |= EMU_FSET_WIDTH;
		} else if (!strcmp(w[i], "speed")) {
			if (!v || emu_parse_speed(v, &pl.speed))
				return bad(L, "expected a link speed (SDR, DDR, QDR, FDR10, FDR, EDR, "
					   "HDR, NDR) after 'speed=', got '%s'", v ? v : "");
			pl.set |= EMU_FSET_SPEED;
		} else {
			return bad(L, "unknown attribute '%s' on a 'link' line (expected delay, "
				   "jitter, loss, duplicate, reorder, corrupt, drop-match, down, "
				   "width, "
				   "speed)", w[i]);
		}
	}
	pl.src = L->cur;
	i = emu_array_push(&L->links, &L->nlinks, sizeof(*L->links));
	if (i < 0)
		return nomem(L);
	L->links[i] = pl;
	return 0;
}

static int d_switch(struct emu_loader *L, int nw, char **w)
{
	struct emu_switch *s;
	char *vals[MAX_WORDS];
	uint32_t nports = 36, x;
	int i, si;

	if (need_name(L, "switch", nw, w))
		return -1;
	if ((si = emu_loader_find_switch(L, w[1])) >= 0)
		return bad(L, "duplicate switch '%s' (first defined at %s:%u)", w[1],
			   L->switches[si].src.file, L->switches[si].src.line);
	for (i = 2; i < nw; i++) {
		vals[i] = split_kv(w[i]);
		if (!vals[i])
			return bad(L, "expected key=value on a 'switch' line, got '%s'", w[i]);
		if (!strcmp(w[i], "ports")) {
			if (emu_parse_u32_max(vals[i], 254, &nports) || !nports)
				return bad(L, "expected a port count (1..254) after 'ports=', got '%s'",
					   vals[i]);
		}
	}
	si = emu_loader_add_switch(L, w[1], nports);
	if (si < 0)
		return nomem(L);
	s = &L->f->switches[si];
	L->switches[si].declared = true;
	for (i = 2; i < nw; i++) {
		char *k = w[i], *v = vals[i];

		if (!strcmp(k, "ports"))
			continue;
		if (!strcmp(k, "guid")) {
			if (emu_parse_guid(v, &s->node_guid) || !s->node_guid)
				return bad(L, "expected a GUID (0x0123456789abcdef or "
					   "0123:4567:89ab:cdef) after 'guid=', got '%s'", v);
		} else if (!strcmp(k, "lid")) {
			if (emu_parse_u32_max(v, 0xbfff, &x) || !x)
				return bad(L, "expected a unicast LID (1..49151) after 'lid=', got "
					   "'%s'", v);
			s->lid = (uint16_t)x;
			L->switches[si].lid_set = true;
		} else if (!strcmp(k, "lmc")) {
			if (emu_parse_u32_max(v, 7, &x))
				return bad(L, "expected an LMC (0..7) after 'lmc=', got '%s'", v);
			s->lmc = (uint8_t)x;
		} else if (!strcmp(k, "desc")) {
			snprintf(s->node_desc, sizeof(s->node_desc), "%s", v);
		} else {
			return bad(L, "unknown attribute '%s' on a 'switch' line (expected ports, "
				   "guid, lid, lmc, desc)", k);
		}
	}
	return 0;
}

/* ---------- host context ---------- */

static bool name_taken(struct emu_loader *L, const char *name, int except)
{
	for (size_t h = 0; h < L->f->nhosts; h++) {
		const struct emu_host *ho = &L->f->hosts[h];

		if ((int)h != except && !strcmp(ho->name, name))
			return true;
		for (size_t a = 0; a < ho->naliases; a++)
			if (!strcmp(ho->aliases[a], name))
				return true;
	}
	return false;
}

static int add_alias(struct emu_loader *L, int h, const char *alias)
{
	struct emu_host *ho = &L->f->hosts[h];
	char *copy;
	int i;

	if (!valid_name(alias))
		return bad(L, "expected a host alias (up to %d characters, no '/', '=' or spaces), "
			   "got '%s'", EMU_NAME_MAX - 1, alias);
	if (name_taken(L, alias, -1))
		return bad(L, "duplicate host name '%s' (alias of '%s')", alias, ho->name);
	copy = emu_strdup(alias);
	if (!copy)
		return nomem(L);
	i = emu_array_push(&ho->aliases, &ho->naliases, sizeof(char *));
	if (i < 0) {
		free(copy);
		return nomem(L);
	}
	ho->aliases[i] = copy;
	return 0;
}

static int host_kind(struct emu_loader *L, const char *v, enum emu_host_kind *out)
{
	if (v && !strcmp(v, "emulated"))
		*out = EMU_HOST_EMULATED;
	else if (v && !strcmp(v, "rxe-vm"))
		*out = EMU_HOST_RXE_VM;
	else
		return bad(L, "expected 'emulated' or 'rxe-vm' after 'kind=', got '%s'", v ? v : "");
	return 0;
}

static int d_host(struct emu_loader *L, int nw, char **w)
{
	int h;

	if (need_name(L, "host", nw, w))
		return -1;
	h = emu_loader_find_host(L, w[1]);
	if (h >= 0 && L->hosts[h].declared)
		return bad(L, "duplicate host '%s' (first defined at %s:%u)", w[1],
			   L->hosts[h].src.file, L->hosts[h].src.line);
	if (h < 0 && name_taken(L, w[1], -1))
		return bad(L, "duplicate host name '%s' (already an alias)", w[1]);
	if (h >= 0) {
		/* a topology CA created it: this line reopens it */
		L->hosts[h].declared = true;
		L->hosts[h].src = L->cur;
	} else if ((h = emu_loader_add_host(L, w[1], true)) < 0) {
		return nomem(L);
	}
	L->cur_host = h;
	L->cur_dev = L->cur_port = L->cur_netdev = -1;
	for (int i = 2; i < nw; i++) {
		char *v = split_kv(w[i]);

		if (!strcmp(w[i], "alias") && v) {
			if (add_alias(L, h, v))
				return -1;
		} else if (!strcmp(w[i], "acm")) {
			if (on_off(L, "acm=", v, &L->f->hosts[h].acm))
				return -1;
		} else if (!strcmp(w[i], "daemon") && v) {
			if (emu_loader_host_daemon(L, h, v))
				return -1;
		} else if (!strcmp(w[i], "cm-abi")) {
			if (!v || emu_parse_u32_max(v, 255, &L->f->hosts[h].cm_abi))
				return bad(L, "expected a number from 0 to 255 after 'cm-abi=', got '%s'",
					   v ? v : "");
		} else if (!strcmp(w[i], "kind")) {
			if (host_kind(L, v, &L->f->hosts[h].kind))
				return -1;
		} else {
			return bad(L, "unknown attribute '%s' on a 'host' line (expected alias=, "
				   "acm=, cm-abi=, kind=, daemon=)", w[i]);
		}
	}
	return 0;
}

static int need_host(struct emu_loader *L, const char *what)
{
	if (L->cur_host < 0)
		return bad(L, "'%s' needs a preceding 'host' line", what);
	return 0;
}

static int d_alias(struct emu_loader *L, int nw, char **w)
{
	if (need_host(L, w[0]))
		return -1;
	if (nw < 2)
		return bad(L, "expected at least one name after 'alias'");
	for (int i = 1; i < nw; i++)
		if (add_alias(L, L->cur_host, w[i]))
			return -1;
	return 0;
}

static int d_acm(struct emu_loader *L, int nw, char **w)
{
	if (need_host(L, w[0]))
		return -1;
	if (nw != 2)
		return bad(L, "expected 'on' or 'off' after 'acm'");
	return on_off(L, "acm", w[1], &L->f->hosts[L->cur_host].acm);
}

static int d_device(struct emu_loader *L, int nw, char **w)
{
	struct emu_device *d;
	struct emu_dev_meta *dm;
	uint8_t ll = 2;
	uint32_t nports = 1, x;
	bool nports_set = false;
	int h = L->cur_host, di;
	char *vals[MAX_WORDS];

	if (need_host(L, w[0]) || need_name(L, "device", nw, w))
		return -1;
	di = emu_loader_find_device(L, h, w[1]);
	if (di >= 0 && L->hosts[h].devs[di].declared)
		return bad(L, "duplicate device '%s' on host '%s' (first defined at %s:%u)", w[1],
			   L->f->hosts[h].name, L->hosts[h].devs[di].src.file,
			   L->hosts[h].devs[di].src.line);
	if (di < 0 && (di = emu_loader_add_device(L, h, w[1], ll)) < 0)
		return nomem(L);
	dm = &L->hosts[h].devs[di];
	dm->declared = true;
	dm->src = L->cur;
	L->cur_dev = di;
	L->cur_port = L->cur_netdev = -1;
	d = &L->f->hosts[h].devices[di];
	/* link= and ports= first: the port defaults depend on them */
	for (int i = 2; i < nw; i++) {
		char *v = vals[i] = split_kv(w[i]);

		if (!v)
			return bad(L, "expected key=value on a 'device' line, got '%s'", w[i]);
		if (!strcmp(w[i], "link")) {
			if (parse_link_layer(L, v, &ll))
				return -1;
		} else if (!strcmp(w[i], "ports")) {
			if (emu_parse_u32_max(v, 254, &nports) || !nports)
				return bad(L, "expected a port count (1..254) after 'ports=', got '%s'",
					   v);
			nports_set = true;
		}
	}
	if (d->nports == 0 || nports_set) {
		size_t before = d->nports;

		if (emu_loader_add_ports(L, h, di, nports))
			return nomem(L);
		d = &L->f->hosts[h].devices[di];
		for (size_t p = before; p < d->nports; p++)
			d->ports[p].link_layer = ll;
	}
	for (size_t p = 0; p < d->nports; p++) {
		if (!(L->hosts[h].devs[di].ports[p].set & EMU_PSET_LINK_LAYER))
			d->ports[p].link_layer = ll;
	}
	for (int i = 2; i < nw; i++) {
		char *k = w[i], *v = vals[i];

		if (!strcmp(k, "link") || !strcmp(k, "ports"))
			continue;
		if (!strcmp(k, "guid") || !strcmp(k, "sysguid")) {
			uint64_t g;

			if (emu_parse_guid(v, &g) || !g)
				return bad(L, "expected a GUID (0x0123456789abcdef or "
					   "0123:4567:89ab:cdef) after '%s=', got '%s'", k, v);
			if (k[0] == 'g') {
				d->node_guid = g;
				dm->guid_set = true;
			} else {
				d->sys_image_guid = g;
				dm->sysguid_set = true;
			}
		} else if (!strcmp(k, "vendor")) {
			if (emu_parse_u32_max(v, 0xffffff, &d->vendor_id))
				return bad(L, "expected a 24-bit vendor id after 'vendor=', got '%s'", v);
		} else if (!strcmp(k, "part")) {
			if (emu_parse_u32_max(v, UINT32_MAX, &d->vendor_part_id))
				return bad(L, "expected a number after 'part=', got '%s'", v);
		} else if (!strcmp(k, "hw")) {
			if (emu_parse_u32_max(v, UINT32_MAX, &x))
				return bad(L, "expected a number after 'hw=', got '%s'", v);
			d->hw_ver = x;
		} else if (!strcmp(k, "fw")) {
			if (strlen(v) >= sizeof(d->fw_ver))
				return bad(L, "firmware version '%s' is too long", v);
			strcpy(d->fw_ver, v);
		} else if (!strcmp(k, "desc")) {
			if (strlen(v) >= sizeof(d->node_desc))
				return bad(L, "node description '%s' is too long (max %d)", v,
					   EMU_NAME_MAX - 1);
			strcpy(d->node_desc, v);
		} else {
			return bad(L, "unknown attribute '%s' on a 'device' line (expected link, "
				   "ports, guid, sysguid, vendor, part, hw, fw, desc)", k);
		}
	}
	return 0;
}

static int d_cap(struct emu_loader *L, int nw, char **w)
{
	struct emu_device *d;

	if (L->cur_dev < 0)
		return bad(L, "'cap' needs a preceding 'device' line");
	if (nw < 2)
		return bad(L, "expected KEY=VALUE after 'cap'");
	d = &L->f->hosts[L->cur_host].devices[L->cur_dev];
	for (int i = 1; i < nw; i++) {
		char *k = w[i], *v = split_kv(k);
		const struct emu_cap_field *cf = NULL;
		uint64_t x;

		for (size_t c = 0; c < emu_ncap_fields; c++)
			if (!strcmp(emu_cap_fields[c].name, k))
				cf = &emu_cap_fields[c];
		if (!cf)
			return bad(L, "unknown device capability '%s' (see rdmaemu-fabric(5) for the "
				   "list)", k);
		if (!v || emu_parse_u64(v, &x) ||
		    (cf->size < 8 && x >> (8 * cf->size)))
			return bad(L, "expected a number that fits %zu bytes after '%s=', got '%s'",
				   cf->size, k, v ? v : "");
		switch (cf->size) {
		case 1: *((uint8_t *)((char *)&d->caps + cf->offset)) = (uint8_t)x; break;
		case 4: *((uint32_t *)((char *)&d->caps + cf->offset)) = (uint32_t)x; break;
		default: *((uint64_t *)((char *)&d->caps + cf->offset)) = x; break;
		}
	}
	return 0;
}

static int parse_pkeys(struct emu_loader *L, struct emu_port *p, char *v)
{
	char *save = NULL;

	free(p->pkeys);
	p->pkeys = NULL;
	p->npkeys = 0;
	for (char *t = strtok_r(v, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		uint32_t x;
		int i;

		if (emu_parse_u32_max(t, 0xffff, &x) || !(x & 0x7fff))
			return bad(L, "expected P_Keys like 0xffff,0x8001 after 'pkeys=', got '%s'",
				   t);
		i = emu_array_push(&p->pkeys, &p->npkeys, sizeof(uint16_t));
		if (i < 0)
			return nomem(L);
		p->pkeys[i] = (uint16_t)x;
	}
	if (!p->npkeys)
		return bad(L, "expected P_Keys like 0xffff,0x8001 after 'pkeys='");
	return 0;
}

/* A key=value of a 'port' line, and the port it sets. */
struct port_kv {
	struct emu_loader *L;
	struct emu_port *p;
	struct emu_port_meta *pm;
	char *k, *v;
};

static int pa_link(struct port_kv *a)
{
	if (parse_link_layer(a->L, a->v, &a->p->link_layer))
		return -1;
	a->pm->set |= EMU_PSET_LINK_LAYER;
	return 0;
}

static int pa_state(struct port_kv *a)
{
	static const char *const states[] = { "down", "init", "armed", "active" };
	bool ok = false;

	for (uint8_t s = 0; s < 4; s++)
		if (!strcmp(a->v, states[s])) {
			a->p->state = (uint8_t)(s + 1);
			ok = true;
		}
	if (!ok)
		return bad(a->L, "expected 'down', 'init', 'armed' or 'active' after 'state=', got "
			   "'%s'", a->v);
	a->pm->set |= EMU_PSET_STATE;
	return 0;
}

/* mtu= and active-mtu= */
static int pa_mtu(struct port_kv *a)
{
	uint8_t m;

	if (emu_parse_mtu(a->v, &m))
		return bad(a->L, "expected an MTU (256, 512, 1024, 2048, 4096) after '%s=', got "
			   "'%s'", a->k, a->v);
	if (a->k[0] == 'm') {
		a->p->max_mtu = m;
		a->pm->set |= EMU_PSET_MAX_MTU;
	} else {
		a->p->active_mtu = m;
		a->pm->set |= EMU_PSET_ACTIVE_MTU;
	}
	return 0;
}

/* lid= and sm-lid= */
static int pa_lid(struct port_kv *a)
{
	uint32_t x;

	if (emu_parse_u32_max(a->v, 0xbfff, &x) || !x)
		return bad(a->L, "expected a unicast LID (1..49151) after '%s=', got '%s'", a->k,
			   a->v);
	if (a->k[0] == 'l') {
		a->p->lid = (uint16_t)x;
		a->pm->set |= EMU_PSET_LID;
	} else {
		a->p->sm_lid = (uint16_t)x;
		a->pm->set |= EMU_PSET_SM_LID;
	}
	return 0;
}

static int pa_lmc(struct port_kv *a)
{
	uint32_t x;

	if (emu_parse_u32_max(a->v, 7, &x))
		return bad(a->L, "expected an LMC (0..7) after 'lmc=', got '%s'", a->v);
	a->p->lmc = (uint8_t)x;
	a->pm->set |= EMU_PSET_LMC;
	return 0;
}

static int pa_width(struct port_kv *a)
{
	if (emu_parse_width(a->v, &a->p->active_width))
		return bad(a->L, "expected a link width (1x, 2x, 4x, 8x, 12x) after 'width=', got "
			   "'%s'", a->v);
	a->pm->set |= EMU_PSET_WIDTH;
	return 0;
}

static int pa_speed(struct port_kv *a)
{
	if (emu_parse_speed(a->v, &a->p->active_speed))
		return bad(a->L, "expected a link speed (SDR, DDR, QDR, FDR10, FDR, EDR, HDR, NDR) "
			   "after 'speed=', got '%s'", a->v);
	a->pm->set |= EMU_PSET_SPEED;
	return 0;
}

static int pa_guid(struct port_kv *a)
{
	if (emu_parse_guid(a->v, &a->p->port_guid) || !a->p->port_guid)
		return bad(a->L, "expected a GUID (0x0123456789abcdef or 0123:4567:89ab:cdef) "
			   "after 'guid=', got '%s'", a->v);
	a->pm->set |= EMU_PSET_GUID;
	return 0;
}

/* gid= adds a GID; the first of a port's lines replaces the ones it had. */
static int pa_gid(struct port_kv *a)
{
	struct emu_port *p = a->p;
	int gi;

	if (!(a->pm->set & EMU_PSET_GIDS)) {
		free(p->gids);
		p->gids = NULL;
		p->ngids = 0;
	}
	gi = emu_array_push(&p->gids, &p->ngids, sizeof(*p->gids));
	if (gi < 0)
		return nomem(a->L);
	if (emu_parse_gid(a->v, p->gids[gi].raw))
		return bad(a->L, "expected a GID like fe80::2:c903:0:1 after 'gid=', got '%s'",
			   a->v);
	p->gids[gi].netdev = -1;
	a->pm->set |= EMU_PSET_GIDS;
	return 0;
}

static int pa_pkeys(struct port_kv *a)
{
	if (parse_pkeys(a->L, a->p, a->v))
		return -1;
	a->pm->set |= EMU_PSET_PKEYS;
	return 0;
}

/* gid-table= and pkey-table= */
static int pa_table(struct port_kv *a)
{
	uint32_t x;

	if (emu_parse_u32_max(a->v, 0xffff, &x) || !x)
		return bad(a->L, "expected a table length (1..65535) after '%s=', got '%s'", a->k,
			   a->v);
	if (a->k[0] == 'g') {
		a->p->gid_tbl_len = x;
		a->pm->set |= EMU_PSET_GID_TBL_LEN;
	} else {
		a->p->pkey_tbl_len = x;
		a->pm->set |= EMU_PSET_PKEY_TBL_LEN;
	}
	return 0;
}

static const struct {
	const char *name;
	int (*fn)(struct port_kv *a);
} port_attrs[] = {
	{ "link", pa_link },	   { "state", pa_state },	    { "mtu", pa_mtu },
	{ "active-mtu", pa_mtu },  { "lid", pa_lid },		    { "sm-lid", pa_lid },
	{ "lmc", pa_lmc },	   { "width", pa_width },	    { "speed", pa_speed },
	{ "guid", pa_guid },	   { "gid", pa_gid },		    { "pkeys", pa_pkeys },
	{ "gid-table", pa_table }, { "pkey-table", pa_table },
};

/* One key=value word of a 'port' line onto a->p. */
static int port_attr(struct port_kv *a, char *word)
{
	a->k = word;
	a->v = split_kv(word);
	if (!a->v)
		return bad(a->L, "expected key=value on a 'port' line, got '%s'", a->k);
	for (size_t i = 0; i < sizeof(port_attrs) / sizeof(port_attrs[0]); i++)
		if (!strcmp(a->k, port_attrs[i].name))
			return port_attrs[i].fn(a);
	return bad(a->L, "unknown attribute '%s' on a 'port' line (expected link, state, mtu, "
		   "active-mtu, lid, lmc, sm-lid, width, speed, guid, gid, pkeys, gid-table, "
		   "pkey-table)", a->k);
}

static int d_port(struct emu_loader *L, int nw, char **w)
{
	int h = L->cur_host, di = L->cur_dev;
	struct port_kv a = { .L = L };
	struct emu_device *d;
	uint32_t num;

	if (di < 0)
		return bad(L, "'port' needs a preceding 'device' line");
	if (nw < 2 || emu_parse_u32_max(w[1], 254, &num) || !num)
		return bad(L, "expected a port number (1..254) after 'port', got '%s'",
			   nw > 1 ? w[1] : "");
	if (emu_loader_add_ports(L, h, di, num))
		return nomem(L);
	/* ports added here take the device's link layer (its port 1's) */
	d = &L->f->hosts[h].devices[di];
	for (size_t q = 1; q < d->nports; q++)
		if (!d->ports[q].link_layer)
			d->ports[q].link_layer = d->ports[0].link_layer;
	a.p = &d->ports[num - 1];
	a.pm = &L->hosts[h].devs[di].ports[num - 1];
	a.pm->src = L->cur; /* a second line for the same port amends it */
	L->cur_port = (int)num - 1;
	for (int i = 2; i < nw; i++) {
		int err = port_attr(&a, w[i]);

		if (err)
			return err;
	}
	return 0;
}

static int d_netdev(struct emu_loader *L, int nw, char **w)
{
	struct emu_host *ho;
	struct emu_host_meta *hm;
	struct emu_netdev *nd;
	struct emu_netdev_meta *nm;
	int h = L->cur_host, ni;

	if (need_host(L, w[0]) || need_name(L, "netdev", nw, w))
		return -1;
	ho = &L->f->hosts[h];
	hm = &L->hosts[h];
	for (size_t i = 0; i < ho->nnetdevs; i++)
		if (!strcmp(ho->netdevs[i].name, w[1]))
			return bad(L, "duplicate netdev '%s' on host '%s' (first defined at %s:%u)",
				   w[1], ho->name, hm->netdevs[i].src.file, hm->netdevs[i].src.line);
	{
		size_t n = ho->nnetdevs;

		if (emu_array_push(&hm->netdevs, &n, sizeof(*hm->netdevs)) < 0)
			return nomem(L);
	}
	ni = emu_array_push(&ho->netdevs, &ho->nnetdevs, sizeof(*ho->netdevs));
	if (ni < 0)
		return nomem(L);
	nd = &ho->netdevs[ni];
	nm = &hm->netdevs[ni];
	snprintf(nd->name, sizeof(nd->name), "%s", w[1]);
	nd->device = -1;
	nd->up = true;
	nd->ipv6 = true;
	nm->src = L->cur;
	L->cur_netdev = ni;
	L->cur_port = -1;
	for (int i = 2; i < nw; i++) {
		char *k = w[i], *v = split_kv(k);
		uint32_t x;

		if (!strcmp(k, "up") || !strcmp(k, "down")) {
			bool b = true;

			if (v && on_off(L, k, v, &b))
				return -1;
			nd->up = k[0] == 'u' ? b : !b;
		} else if (!v) {
			return bad(L, "expected key=value, 'up' or 'down' on a 'netdev' line, got "
				   "'%s'", k);
		} else if (!strcmp(k, "mac") || !strcmp(k, "hwaddr")) {
			if (emu_parse_hwaddr(v, nd->hwaddr, sizeof(nd->hwaddr), &nd->hwaddr_len) ||
			    (k[0] == 'm' && nd->hwaddr_len != 6))
				return bad(L, "expected a hardware address (6 bytes for Ethernet, 20 for "
					   "IPoIB, like 02:00:00:00:01:01) after '%s=', got '%s'", k, v);
			nm->hwaddr_set = true;
		} else if (!strcmp(k, "ipv6")) {
			if (on_off(L, "ipv6=", v, &nd->ipv6))
				return -1;
		} else if (!strcmp(k, "arp")) {
			bool arp;

			if (on_off(L, "arp=", v, &arp))
				return -1;
			nd->noarp = !arp;
		} else if (!strcmp(k, "mtu")) {
			if (emu_parse_u32_max(v, 65535, &x) || x < 68)
				return bad(L, "expected an MTU in bytes (68..65535) after 'mtu=', got "
					   "'%s'", v);
			nd->mtu = x;
			nm->mtu_set = true;
		} else if (!strcmp(k, "rdma")) {
			char *slash = strchr(v, '/');

			if (!strcmp(v, "none"))
				continue;
			nm->rdma_port = 1;
			if (slash) {
				*slash++ = 0;
				if (emu_parse_u32_max(slash, 254, &nm->rdma_port) || !nm->rdma_port)
					return bad(L, "expected DEVICE or DEVICE/PORT after 'rdma=', got "
						   "a bad port '%s'", slash);
			}
			if (!valid_name(v))
				return bad(L, "expected DEVICE or DEVICE/PORT after 'rdma=', got '%s'",
					   v);
			strcpy(nm->rdma_dev, v);
		} else {
			return bad(L, "unknown attribute '%s' on a 'netdev' line (expected mac, "
				   "hwaddr, mtu, rdma, up, down, ipv6, arp)", k);
		}
	}
	return 0;
}

static int d_addr(struct emu_loader *L, int nw, char **w)
{
	struct emu_netdev *nd;

	if (L->cur_netdev < 0)
		return bad(L, "'addr' needs a preceding 'netdev' line");
	if (nw < 2)
		return bad(L, "expected an address with a prefix length (192.0.2.1/24, "
			   "2001:db8::1/64) after 'addr'");
	nd = &L->f->hosts[L->cur_host].netdevs[L->cur_netdev];
	for (int i = 1; i < nw; i++) {
		struct emu_ifaddr a;
		int r = emu_parse_prefix(w[i], &a, true), k;

		if (r == -2)
			return bad(L, "bad prefix length in '%s' (expected 0..32 for IPv4, 0..128 for "
				   "IPv6)", w[i]);
		if (r)
			return bad(L, "expected an address with a prefix length (192.0.2.1/24, "
				   "2001:db8::1/64) after 'addr', got '%s'", w[i]);
		k = emu_array_push(&nd->addrs, &nd->naddrs, sizeof(*nd->addrs));
		if (k < 0)
			return nomem(L);
		nd->addrs[k] = a;
	}
	return 0;
}

static int d_route(struct emu_loader *L, int nw, char **w)
{
	struct emu_pending_route pr;
	struct emu_ifaddr a;
	int i = 2, r;

	if (need_host(L, w[0]))
		return -1;
	memset(&pr, 0, sizeof(pr));
	pr.host = L->cur_host;
	pr.src = L->cur;
	pr.route.netdev = -1;
	if (nw < 2)
		return bad(L, "expected a destination (PREFIX, 'default' or 'default6') after "
			   "'route'");
	if (!strcmp(w[1], "default") || !strcmp(w[1], "default6")) {
		pr.route.family = w[1][7] ? AF_INET6 : AF_INET;
		pr.route.prefixlen = 0;
	} else {
		r = emu_parse_prefix(w[1], &a, true);
		if (r == -2)
			return bad(L, "bad prefix length in '%s' (expected 0..32 for IPv4, 0..128 for "
				   "IPv6)", w[1]);
		if (r)
			return bad(L, "expected a destination (PREFIX like 198.51.100.0/24, "
				   "'default' or 'default6') after 'route', got '%s'", w[1]);
		pr.route.family = a.family;
		pr.route.prefixlen = a.prefixlen;
		memcpy(&pr.route.dst, &a.addr, sizeof(a.addr));
	}
	for (; i < nw; i += 2) {
		if (i + 1 >= nw)
			return bad(L, "expected a value after '%s' on a 'route' line", w[i]);
		if (!strcmp(w[i], "via")) {
			if (emu_parse_prefix(w[i + 1], &a, false) || strchr(w[i + 1], '/'))
				return bad(L, "expected a gateway address after 'via', got '%s'",
					   w[i + 1]);
			if (a.family != pr.route.family)
				return bad(L, "gateway '%s' is not of the route's address family",
					   w[i + 1]);
			memcpy(&pr.route.gateway, &a.addr, sizeof(a.addr));
			pr.route.has_gateway = true;
		} else if (!strcmp(w[i], "dev")) {
			if (!valid_name(w[i + 1]))
				return bad(L, "expected a netdev name after 'dev', got '%s'", w[i + 1]);
			strcpy(pr.dev, w[i + 1]);
		} else {
			return bad(L, "expected 'via GATEWAY' or 'dev NETDEV' on a 'route' line, got "
				   "'%s'", w[i]);
		}
	}
	if (!pr.dev[0] && !pr.route.has_gateway)
		return bad(L, "a route needs 'via GATEWAY', 'dev NETDEV' or both");
	i = emu_array_push(&L->routes, &L->nroutes, sizeof(*L->routes));
	if (i < 0)
		return nomem(L);
	L->routes[i] = pr;
	return 0;
}

/* ---------- files named by directives ---------- */

static int load_buffer(struct emu_loader *L, char *text, const char *file, const char *base);

static int d_file(struct emu_loader *L, int nw, char **w)
{
	struct emu_src from = L->cur;
	const char *base = L->cur_base;
	char *path;
	int r;

	if (nw != 2)
		return bad(L, "expected one file name after '%s'", w[0]);
	path = emu_path_join_dir(L->cur_base, w[1]);
	if (!path)
		return nomem(L);
	if (!strcmp(w[0], "topology")) {
		r = emu_ibnd_load(L, path);
	} else if (!strcmp(w[0], "hosts-data")) {
		r = emu_hostsdata_load(L, path);
	} else {
		/* include: the included file starts without context; ours comes back after */
		int ch = L->cur_host, cd = L->cur_dev, cp = L->cur_port, cn = L->cur_netdev;
		char *canon, *text = emu_loader_read(L, path, &from, &canon);

		r = -1;
		if (text) {
			const char *name = emu_loader_intern(L, path);

			r = name ? load_buffer(L, text, name, name) : nomem(L);
			free(text);
			emu_loader_pop(L);
		}
		L->cur_host = ch;
		L->cur_dev = cd;
		L->cur_port = cp;
		L->cur_netdev = cn;
	}
	L->cur = from;
	L->cur_base = base;
	free(path);
	return r;
}

static const struct {
	const char *name;
	int (*fn)(struct emu_loader *L, int nw, char **w);
} directives[] = {
	{ "seed", d_seed },	    { "resolver", d_resolver }, { "faults", d_faults },
	{ "sm", d_sm },		    { "name", d_name },		{ "link", d_link },
	{ "switch", d_switch },	    { "host", d_host },		{ "alias", d_alias },
	{ "acm", d_acm },	    { "device", d_device },	{ "cap", d_cap },
	{ "port", d_port },	    { "netdev", d_netdev },	{ "addr", d_addr },
	{ "route", d_route },	    { "include", d_file },	{ "topology", d_file },
	{ "hosts-data", d_file },   { "daemon", emu_load_daemon },
	{ "process-qpns", d_process_qpns },
};

/* Reads the lines of one file; `file` names it in errors, `base` is the path that relative
 * file names resolve against (its directory). */
static int load_buffer(struct emu_loader *L, char *text, const char *file, const char *base)
{
	char *line = text, *next;
	unsigned lineno = 0;

	L->cur_host = L->cur_dev = L->cur_port = L->cur_netdev = -1;
	for (; line; line = next) {
		char *w[MAX_WORDS];
		int nw, r = -1;

		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		L->cur_base = base;
		L->cur.file = file;
		L->cur.line = ++lineno;
		nw = emu_split_words(line, w, MAX_WORDS);
		if (nw == -1)
			return bad(L, "unterminated quote");
		if (nw == -2)
			return bad(L, "too many words on one line (max %d)", MAX_WORDS);
		if (nw == 0)
			continue;
		for (size_t d = 0; d < sizeof(directives) / sizeof(directives[0]); d++)
			if (!strcmp(w[0], directives[d].name)) {
				r = directives[d].fn(L, nw, w);
				goto done;
			}
		return bad(L, "unknown directive '%s' (expected host, device, port, netdev, addr, "
			   "route, alias, acm, cap, link, switch, name, faults, sm, seed, resolver, "
			   "include, topology, hosts-data, daemon, process-qpns)", w[0]);
done:
		if (r)
			return -1;
	}
	return 0;
}

int emu_load_file(struct emu_loader *L, const char *path)
{
	const char *name = emu_loader_intern(L, path);
	char *canon, *text;
	int r;

	if (!name)
		return nomem(L);
	text = emu_loader_read(L, path, NULL, &canon);
	if (!text)
		return -1;
	r = load_buffer(L, text, name, name);
	free(text);
	emu_loader_pop(L);
	return r;
}

/* ---------- entry points ---------- */

static struct emu_fabric *load_common(const char *path, const char *text, const char *name,
				      const char *dir, struct emu_error *err)
{
	struct emu_error scratch;
	struct emu_loader L;
	int r;

	if (!err)
		err = &scratch;
	memset(err, 0, sizeof(*err));
	if (path) {
		struct emu_fabric *img = emu_fabric_image_load(path);

		if (img)
			return img;
	}
	memset(&L, 0, sizeof(L));
	L.err = err;
	L.f = emu_calloc(1, sizeof(*L.f));
	if (!L.f) {
		snprintf(err->msg, sizeof(err->msg), "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	L.cur_host = L.cur_dev = L.cur_port = L.cur_netdev = -1;
	/* defaults that directives may override */
	L.f->seed = 1;
	L.f->sm.subnet_prefix = 0xfe80000000000000ull;
	L.f->sm.packet_lifetime = 18; /* OpenSM's default subnet packet lifetime */
	snprintf(L.f->source, sizeof(L.f->source), "%s", path ? path : name);
	if (path) {
		r = emu_load_file(&L, path);
	} else {
		/* a file name inside `dir` makes relative includes resolve against dir */
		size_t n = strlen(dir ? dir : ".") + 1 + strlen(name) + 1;
		char *pseudo = emu_malloc(n), *copy = emu_strdup(text);
		const char *iname, *ibase;

		r = -1;
		if (!pseudo || !copy) {
			nomem(&L);
		} else {
			snprintf(pseudo, n, "%s/%s", dir ? dir : ".", name);
			/* errors name the text as given, includes resolve against dir */
			iname = emu_loader_intern(&L, name);
			ibase = emu_loader_intern(&L, pseudo);
			if (!iname || !ibase) {
				nomem(&L);
			} else {
				L.cur.file = iname;
				r = load_buffer(&L, copy, iname, ibase);
			}
		}
		free(pseudo);
		free(copy);
	}
	if (r == 0)
		r = emu_loader_finish(&L);
	if (r) {
		int e = errno ? errno : EINVAL;

		emu_loader_free(&L);
		emu_fabric_free(L.f);
		errno = e;
		return NULL;
	}
	if (path)
		emu_fabric_image_save(L.f, &L);
	emu_loader_free(&L);
	/* a large fabric's parse (a topology file's text, its node index, the arrays' growth)
	 * leaves freed pages in the heap: given back, as every process and every sandboxed
	 * host's keeper holds a copy (10,000 nodes: ~8 MiB each) */
	if (L.f->nhosts + L.f->nswitches >= EMU_FABRIC_LARGE)
		malloc_trim(0);
	return L.f;
}

struct emu_fabric *emu_fabric_load(const char *path, struct emu_error *err)
{
	if (!path) {
		if (err) {
			memset(err, 0, sizeof(*err));
			snprintf(err->msg, sizeof(err->msg), "no fabric file given");
		}
		errno = EINVAL;
		return NULL;
	}
	return load_common(path, NULL, NULL, NULL, err);
}

struct emu_fabric *emu_fabric_load_text(const char *text, const char *name, const char *dir,
					struct emu_error *err)
{
	if (!text) {
		if (err) {
			memset(err, 0, sizeof(*err));
			snprintf(err->msg, sizeof(err->msg), "no fabric text given");
		}
		errno = EINVAL;
		return NULL;
	}
	return load_common(NULL, text, name ? name : "(text)", dir, err);
}
