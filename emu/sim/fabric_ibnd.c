/* ibnetdiscover topology reader (also ibsim's net files, which use the same layout).
 *
 * Accepted verbatim, as `ibnetdiscover` prints it:
 *
 *   vendid=0x2c9
 *   devid=0xc738
 *   sysimgguid=0x2c90200000001
 *   switchguid=0x2c90200000001(2c90200000001)
 *   Switch  36 "S-0002c90200000001"  # "sw1" enhanced port 0 lid 1 lmc 0
 *   [1]  "H-0002c90300000a00"[1](2c90300000a01)  # "hostA mlx5_0" lid 2 4xQDR
 *
 *   caguid=0x2c90300000a00
 *   Ca  1 "H-0002c90300000a00"  # "hostA mlx5_0"
 *   [1](2c90300000a01)  "S-0002c90200000001"[1]  # lid 2 lmc 0 "sw1" lid 1 4xQDR
 *
 * plus ibsim's forms (`Hca 2 "Hca1"`, `[1] "Switch1"[1] w=4`) and its `include FILE` and
 * `do COMMAND` lines (the latter ignored). The file is read whole into a node/port list first,
 * because a port line may name a node that is described further down; then every CA becomes a
 * device of a host, every switch a switch, every cable one link (both directions of it appear
 * in the file and are merged). */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "emu/sim/fabric_priv.h"
#include "util/failcall.h"

#define ID_MAX EMU_NAME_MAX

enum { NODE_CA = 1, NODE_SWITCH = 2 };

struct tnode {
	char id[ID_MAX];
	size_t first_port; /* its port lines follow its header: T->ports[first_port..] */
	int type;
	unsigned nports;
	uint64_t guid, sysguid, port0guid;
	bool guid_known, sysguid_known;
	uint32_t vendid, devid;
	char desc[EMU_NAME_MAX];
	bool has_desc;
	uint16_t lid;
	uint8_t lmc;
	bool lid_known;
	struct emu_src src;
	int host, dev, sw; /* where it went in the model */
};

struct tport {
	int node;
	unsigned port;
	uint64_t guid;
	bool has_guid;
	char rid[ID_MAX];
	unsigned rport;
	uint64_t rguid;
	bool has_rguid;
	uint16_t own_lid, remote_lid;
	uint8_t own_lmc;
	bool own_lid_set, remote_lid_set;
	uint8_t width, speed;
	struct emu_src src;
	int link; /* model link index once made */
};

struct topo {
	struct emu_loader *L;
	struct tnode *nodes;
	size_t nnodes;
	struct tport *ports;
	size_t nports;
	/* the vendid=/devid=/...guid= lines seen since the last node header */
	uint32_t vendid, devid;
	uint64_t sysguid, guid, port0guid;
	bool sysguid_known, guid_known, port0guid_known;
	int cur_node;
	/* node ids hashed (open addressing, node index + 1, 0 empty): a 10,000-node topology
	 * would otherwise cost a linear search per node header and per cable */
	int *idx;
	size_t idx_cap;
	/* built before placing the cables: the tports of (node, port), chained */
	size_t *pbase; /* per node: its slots in phead (nports + 1 each) */
	int *phead, *pnext;
	size_t nhosts_before; /* hosts of the fabric when the topology line was reached */
};

static uint64_t id_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ull;
	return h;
}

static int idx_insert(struct topo *T, size_t node)
{
	if ((T->nnodes + 1) * 2 > T->idx_cap) {
		size_t cap = T->idx_cap ? 2 * T->idx_cap : 64;
		int *n = emu_calloc(cap, sizeof(*n));

		if (!n)
			return -1;
		free(T->idx);
		T->idx = n;
		T->idx_cap = cap;
		for (size_t i = 0; i < T->nnodes; i++)
			if (i != node) {
				size_t h = id_hash(T->nodes[i].id) & (cap - 1);

				while (T->idx[h])
					h = (h + 1) & (cap - 1);
				T->idx[h] = (int)i + 1;
			}
	}
	size_t h = id_hash(T->nodes[node].id) & (T->idx_cap - 1);

	while (T->idx[h])
		h = (h + 1) & (T->idx_cap - 1);
	T->idx[h] = (int)node + 1;
	return 0;
}

static int tbad(struct topo *T, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int tbad(struct topo *T, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return emu_loader_error(T->L, NULL, EINVAL, "%s", msg);
}

static const char *skip_ws(const char *p)
{
	while (*p && isspace((unsigned char)*p))
		p++;
	return p;
}

/* "ID" at *pp; advances past the closing quote. */
static int quoted(const char **pp, char *out, size_t max)
{
	const char *p = *pp, *end;

	if (*p != '"')
		return -1;
	end = strchr(p + 1, '"');
	if (!end || (size_t)(end - p - 1) >= max)
		return -1;
	memcpy(out, p + 1, (size_t)(end - p - 1));
	out[end - p - 1] = 0;
	*pp = end + 1;
	return 0;
}

/* [N] at *pp. */
static int bracket_num(const char **pp, unsigned *n)
{
	const char *p = *pp;
	char *end;
	unsigned long v;

	if (*p != '[' || !isdigit((unsigned char)p[1]))
		return -1;
	v = strtoul(p + 1, &end, 10);
	if (*end != ']' || v > 255)
		return -1;
	*n = (unsigned)v;
	*pp = end + 1;
	return 0;
}

/* (hexguid) at *pp, optional. */
static int paren_guid(const char **pp, uint64_t *g, bool *has)
{
	const char *p = *pp;
	char *end;

	*has = false;
	if (*p != '(')
		return 0;
	if (!isxdigit((unsigned char)p[1]))
		return -1;
	*g = strtoull(p + 1, &end, 16);
	if (*end != ')' || end - p - 1 > 16)
		return -1;
	*has = true;
	*pp = end + 1;
	return 0;
}

/* The words of a comment: "quoted" ones are marked by a leading '"' kept in the copy. */
static int comment_words(const char *p, char words[][ID_MAX], int max)
{
	int n = 0;

	for (p = skip_ws(p); *p && n < max; p = skip_ws(p)) {
		size_t len;

		if (*p == '"') {
			const char *end = strchr(p + 1, '"');

			if (!end)
				return -1;
			len = (size_t)(end - p);
			if (len >= ID_MAX)
				len = ID_MAX - 1;
			memcpy(words[n], p, len);
			words[n][len] = 0;
			p = end + 1;
		} else {
			const char *end = p;

			while (*end && !isspace((unsigned char)*end))
				end++;
			len = (size_t)(end - p);
			if (len >= ID_MAX)
				len = ID_MAX - 1;
			memcpy(words[n], p, len);
			words[n][len] = 0;
			p = end;
		}
		n++;
	}
	return n;
}

static bool parse_lid(const char *s, uint16_t *lid)
{
	uint32_t v;

	if (emu_parse_u32_max(s, 0xffff, &v))
		return false;
	*lid = (uint16_t)v;
	return true;
}

/* "4xQDR" */
static bool parse_ws(const char *s, uint8_t *width, uint8_t *speed)
{
	char w[8];
	const char *x = strchr(s, 'x');

	if (!x || x == s || (size_t)(x - s) >= sizeof(w) - 1)
		return false;
	memcpy(w, s, (size_t)(x - s + 1));
	w[x - s + 1] = 0;
	return !emu_parse_width(w, width) && !emu_parse_speed(x + 1, speed);
}

static int find_node(const struct topo *T, const char *id)
{
	if (!T->idx_cap)
		return -1;
	for (size_t h = id_hash(id) & (T->idx_cap - 1); T->idx[h]; h = (h + 1) & (T->idx_cap - 1))
		if (!strcmp(T->nodes[T->idx[h] - 1].id, id))
			return T->idx[h] - 1;
	return -1;
}

/* First tport of (node, port), -1 for none; pnext chains the others. */
static int port_first(const struct topo *T, int node, unsigned port)
{
	if (port > T->nodes[node].nports)
		return -1;
	return T->phead[T->pbase[node] + port];
}

static int port_index(struct topo *T)
{
	size_t total = 0;

	T->pbase = emu_malloc((T->nnodes ? T->nnodes : 1) * sizeof(*T->pbase));
	for (size_t i = 0; T->pbase && i < T->nnodes; i++) {
		T->pbase[i] = total;
		total += T->nodes[i].nports + 1u;
	}
	T->phead = emu_malloc((total ? total : 1) * sizeof(*T->phead));
	T->pnext = emu_malloc((T->nports ? T->nports : 1) * sizeof(*T->pnext));
	if (!T->pbase || !T->phead || !T->pnext)
		return -1;
	for (size_t i = 0; i < total; i++)
		T->phead[i] = -1;
	/* chained in reverse so that a chain lists the tports in file order */
	for (size_t k = T->nports; k-- > 0;) {
		const struct tport *t = &T->ports[k];

		T->pnext[k] = -1;
		if (t->port > T->nodes[t->node].nports)
			continue;
		T->pnext[k] = T->phead[T->pbase[t->node] + t->port];
		T->phead[T->pbase[t->node] + t->port] = (int)k;
	}
	return 0;
}

/* Node GUID from an ibnetdiscover ID ("S-0002c90200000001"), when it has that form. */
static bool guid_from_id(const char *id, uint64_t *g)
{
	char *end;

	if (strlen(id) < 3 || id[1] != '-' || !strchr("SHR", id[0]) || !isxdigit((unsigned char)id[2]))
		return false;
	*g = strtoull(id + 2, &end, 16);
	return !*end && strlen(id + 2) <= 16;
}

static int header_line(struct topo *T, const char *p, int type)
{
	struct tnode n;
	char words[16][ID_MAX], *end;
	unsigned long nports;
	int nw, i;

	memset(&n, 0, sizeof(n));
	n.type = type;
	n.src = T->L->cur;
	n.host = n.dev = n.sw = -1;
	while (*p && !isspace((unsigned char)*p))
		p++;
	p = skip_ws(p);
	nports = strtoul(p, &end, 10);
	if (end == p || nports < 1 || nports > 254)
		return tbad(T, "expected a port count (1..254) after the node type, got '%.20s'", p);
	n.nports = (unsigned)nports;
	p = skip_ws(end);
	if (quoted(&p, n.id, sizeof(n.id)) || !n.id[0])
		return tbad(T, "expected a quoted node id like \"S-0002c90200000001\" after the "
			    "port count");
	if (find_node(T, n.id) >= 0)
		return tbad(T, "duplicate node \"%s\" (first at %s:%u)", n.id,
			    T->nodes[find_node(T, n.id)].src.file,
			    T->nodes[find_node(T, n.id)].src.line);
	p = skip_ws(p);
	if (*p == '#') {
		nw = comment_words(p + 1, words, 16);
		if (nw < 0)
			return tbad(T, "unterminated quote in the comment");
		for (i = 0; i < nw; i++) {
			if (words[i][0] == '"' && !n.has_desc) {
				snprintf(n.desc, sizeof(n.desc), "%s", words[i] + 1);
				n.has_desc = true;
			} else if (!strcmp(words[i], "lid") && i + 1 < nw) {
				if (!parse_lid(words[++i], &n.lid))
					return tbad(T, "expected a LID after 'lid', got '%s'", words[i]);
				n.lid_known = n.lid != 0;
			} else if (!strcmp(words[i], "lmc") && i + 1 < nw) {
				uint32_t v;

				if (emu_parse_u32_max(words[++i], 7, &v))
					return tbad(T, "expected an LMC (0..7) after 'lmc', got '%s'",
						    words[i]);
				n.lmc = (uint8_t)v;
			}
		}
	} else if (*p && strncmp(p, "w=", 2)) {
		return tbad(T, "unexpected '%.20s' after the node id (expected '# \"description\"')",
			    p);
	}
	/* GUIDs: the ...guid= line before the header, else the id itself */
	if (T->guid_known) {
		n.guid = T->guid;
		n.guid_known = true;
	} else {
		n.guid_known = guid_from_id(n.id, &n.guid);
	}
	n.sysguid = T->sysguid;
	n.sysguid_known = T->sysguid_known;
	n.port0guid = T->port0guid_known ? T->port0guid : n.guid;
	n.vendid = T->vendid;
	n.devid = T->devid;
	T->vendid = T->devid = 0;
	T->guid_known = T->sysguid_known = T->port0guid_known = false;
	i = emu_array_push(&T->nodes, &T->nnodes, sizeof(*T->nodes));
	if (i < 0)
		return emu_loader_error(T->L, NULL, ENOMEM, "out of memory");
	n.first_port = T->nports;
	T->nodes[i] = n;
	T->cur_node = i;
	if (idx_insert(T, (size_t)i))
		return emu_loader_error(T->L, NULL, ENOMEM, "out of memory");
	return 0;
}

static int port_line(struct topo *T, const char *p)
{
	struct tnode *n;
	struct tport t;
	char words[16][ID_MAX];
	bool after_desc = false;
	int nw, i;

	if (T->cur_node < 0)
		return tbad(T, "port line before any node header (Switch, Ca)");
	n = &T->nodes[T->cur_node];
	memset(&t, 0, sizeof(t));
	t.node = T->cur_node;
	t.src = T->L->cur;
	t.link = -1;
	if (bracket_num(&p, &t.port) || paren_guid(&p, &t.guid, &t.has_guid))
		return tbad(T, "expected a port line like [1] \"S-0002c90200000001\"[3], got "
			    "'%.40s'", p);
	if (t.port < 1 || t.port > n->nports)
		return tbad(T, "port %u is out of range for \"%s\" (1..%u)", t.port, n->id,
			    n->nports);
	p = skip_ws(p);
	if (quoted(&p, t.rid, sizeof(t.rid)) || bracket_num(&p, &t.rport) ||
	    paren_guid(&p, &t.rguid, &t.has_rguid))
		return tbad(T, "expected the peer as \"NODE-ID\"[PORT] after [%u]", t.port);
	p = skip_ws(p);
	if (!strncmp(p, "w=", 2)) { /* ibsim's width extension */
		char w[8];
		size_t k = 0;

		for (p += 2; *p && !isspace((unsigned char)*p) && k < sizeof(w) - 2; p++)
			w[k++] = *p;
		w[k++] = 'x';
		w[k] = 0;
		if (emu_parse_width(w, &t.width))
			return tbad(T, "expected w=1, w=4, w=8 or w=12");
		t.speed = 1;
		p = skip_ws(p);
	}
	if (*p == '#') {
		nw = comment_words(p + 1, words, 16);
		if (nw < 0)
			return tbad(T, "unterminated quote in the comment");
		/* CA lines: lid L lmc M "peer desc" lid PL 4xQDR; switch lines: "peer desc" lid
		 * PL 4xQDR. Before the description a lid is ours, after it the peer's. */
		for (i = 0; i < nw; i++) {
			if (words[i][0] == '"') {
				after_desc = true;
			} else if (!strcmp(words[i], "lid") && i + 1 < nw) {
				uint16_t lid;

				if (!parse_lid(words[++i], &lid))
					return tbad(T, "expected a LID after 'lid', got '%s'", words[i]);
				if (after_desc || n->type == NODE_SWITCH) {
					t.remote_lid = lid;
					t.remote_lid_set = lid != 0;
				} else {
					t.own_lid = lid;
					t.own_lid_set = lid != 0;
				}
			} else if (!strcmp(words[i], "lmc") && i + 1 < nw) {
				uint32_t v;

				if (emu_parse_u32_max(words[++i], 7, &v))
					return tbad(T, "expected an LMC (0..7) after 'lmc', got '%s'",
						    words[i]);
				if (!after_desc)
					t.own_lmc = (uint8_t)v;
			} else {
				parse_ws(words[i], &t.width, &t.speed);
			}
		}
	} else if (*p) {
		return tbad(T, "unexpected '%.20s' after the peer port (expected '# comment')", p);
	}
	for (size_t k = n->first_port; k < T->nports; k++)
		if (T->ports[k].node == t.node && T->ports[k].port == t.port)
			return tbad(T, "port %u of \"%s\" is listed twice (first at %s:%u)", t.port,
				    n->id, T->ports[k].src.file, T->ports[k].src.line);
	i = emu_array_push(&T->ports, &T->nports, sizeof(*T->ports));
	if (i < 0)
		return emu_loader_error(T->L, NULL, ENOMEM, "out of memory");
	T->ports[i] = t;
	return 0;
}

static int guid_line(struct topo *T, const char *key, const char *val)
{
	uint64_t v;
	char *end;

	errno = 0;
	v = strtoull(val, &end, 16);
	if (errno || end == val || (*end && *end != '('))
		return tbad(T, "expected a hex value after '%s=', got '%s'", key, val);
	if (!strcmp(key, "vendid") || !strcmp(key, "devid")) {
		if (*end || v > UINT32_MAX)
			return tbad(T, "expected a hex value after '%s=', got '%s'", key, val);
		if (key[0] == 'v')
			T->vendid = (uint32_t)v;
		else
			T->devid = (uint32_t)v;
	} else if (!strcmp(key, "sysimgguid")) {
		T->sysguid = v;
		T->sysguid_known = true;
	} else {
		T->guid = v;
		T->guid_known = true;
		if (*end == '(') {
			const char *q = end;
			bool has;

			if (paren_guid(&q, &T->port0guid, &has) || *skip_ws(q))
				return tbad(T, "expected '%s=0xGUID(PORTGUID)', got '%s'", key, val);
			T->port0guid_known = true;
		}
	}
	return 0;
}

static int topo_file(struct topo *T, const char *path, const struct emu_src *from);

static int topo_buffer(struct topo *T, char *text, const char *file, const char *base)
{
	unsigned lineno = 0;
	char *next;

	for (char *line = text; line; line = next) {
		const char *p;
		int r = 0;

		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		T->L->cur.file = file;
		T->L->cur.line = ++lineno;
		{
			size_t len = strlen(line);

			while (len && isspace((unsigned char)line[len - 1]))
				line[--len] = 0;
		}
		p = skip_ws(line);
		if (!*p || *p == '#')
			continue;
		if (!strncmp(p, "include", 7) && isspace((unsigned char)p[7])) {
			struct emu_src from = T->L->cur;
			char *path = emu_path_join_dir(base, skip_ws(p + 7));

			if (!path)
				return emu_loader_error(T->L, NULL, ENOMEM, "out of memory");
			r = topo_file(T, path, &from);
			free(path);
			T->L->cur = from;
			T->cur_node = -1;
		} else if (!strncmp(p, "do", 2) && isspace((unsigned char)p[2])) {
			continue; /* ibsim console commands: nothing to emulate */
		} else if (!strncmp(p, "Non-Chassis Nodes", 17) || !strncmp(p, "Chassis ", 8)) {
			continue; /* ibnetdiscover -g grouping headers */
		} else if (!strncmp(p, "Switch", 6) && isspace((unsigned char)p[6])) {
			r = header_line(T, p, NODE_SWITCH);
		} else if ((!strncmp(p, "Ca", 2) && isspace((unsigned char)p[2])) ||
			   (!strncmp(p, "Hca", 3) && isspace((unsigned char)p[3]))) {
			r = header_line(T, p, NODE_CA);
		} else if (!strncmp(p, "Rt", 2) && isspace((unsigned char)p[2])) {
			r = tbad(T, "IB routers (Rt) are not supported");
		} else if (*p == '[') {
			r = port_line(T, p);
		} else if (strchr(p, '=')) {
			char key[32];
			const char *eq = strchr(p, '=');
			static const char *const keys[] = { "vendid", "devid", "sysimgguid",
							    "switchguid", "caguid", "rtguid" };
			bool known = false;

			snprintf(key, sizeof(key), "%.*s", (int)(eq - p < 31 ? eq - p : 31), p);
			for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
				known |= !strcmp(key, keys[k]);
			if (!known)
				return tbad(T, "unknown topology line '%.40s' (expected vendid=, devid=, "
					    "sysimgguid=, switchguid=, caguid=)", p);
			r = guid_line(T, key, eq + 1);
		} else {
			r = tbad(T, "expected a node header (Switch N \"ID\", Ca N \"ID\"), a port "
				 "line ([N] \"ID\"[N]) or vendid=/devid=/...guid=, got '%.40s'", p);
		}
		if (r)
			return -1;
	}
	return 0;
}

static int topo_file(struct topo *T, const char *path, const struct emu_src *from)
{
	char *canon, *text = emu_loader_read(T->L, path, from, &canon);
	const char *name;
	int r;

	if (!text)
		return -1;
	name = emu_loader_intern(T->L, path);
	r = name ? topo_buffer(T, text, name, name)
		 : emu_loader_error(T->L, NULL, ENOMEM, "out of memory");
	free(text);
	emu_loader_pop(T->L);
	return r;
}

/* ---------- into the model ---------- */

static bool two_word_desc(const char *desc, char *host, char *dev)
{
	char a[EMU_NAME_MAX], b[EMU_NAME_MAX], c;

	if (sscanf(desc, "%63s %63s %c", a, b, &c) != 2)
		return false;
	if (strchr(a, '/') || strchr(a, '=') || strchr(b, '/') || strchr(b, '='))
		return false;
	strcpy(host, a);
	strcpy(dev, b);
	return true;
}

static int place_ca(struct topo *T, struct tnode *n)
{
	struct emu_loader *L = T->L;
	char hname[EMU_NAME_MAX], dname[EMU_NAME_MAX];
	struct emu_device *d;
	int h = -1, di = -1;

	/* a device declared with this GUID before the topology line claims the CA (only hosts
	 * that existed then can hold one: the search stays linear in the declared hosts) */
	for (size_t hh = 0; n->guid_known && hh < T->nhosts_before && h < 0; hh++)
		for (size_t dd = 0; dd < L->f->hosts[hh].ndevices; dd++)
			if (L->hosts[hh].devs[dd].guid_set &&
			    L->f->hosts[hh].devices[dd].node_guid == n->guid) {
				h = (int)hh;
				di = (int)dd;
				break;
			}
	if (h < 0) {
		const char *desc = n->has_desc ? n->desc : n->id;

		if (!two_word_desc(desc, hname, dname)) {
			snprintf(hname, sizeof(hname), "%.*s", (int)strcspn(desc, " \t"), desc);
			dname[0] = 0;
		}
		if (!hname[0] || strchr(hname, '/') || strchr(hname, '='))
			snprintf(hname, sizeof(hname), "%s", n->id);
		h = emu_loader_find_host(L, hname);
		if (h < 0 && (h = emu_loader_add_host(L, hname, false)) < 0)
			return emu_loader_error(L, NULL, ENOMEM, "out of memory");
		if (!dname[0] || emu_loader_find_device(L, h, dname) >= 0)
			snprintf(dname, sizeof(dname), "hca%zu", L->f->hosts[h].ndevices);
		if (emu_loader_find_device(L, h, dname) >= 0)
			return tbad(T, "CA \"%s\": host '%s' already has a device '%s'", n->id, hname,
				    dname);
		di = emu_loader_add_device(L, h, dname, 1);
		if (di < 0)
			return emu_loader_error(L, NULL, ENOMEM, "out of memory");
		L->hosts[h].devs[di].src = n->src;
	}
	if (L->hosts[h].devs[di].from_topology)
		return tbad(T, "CA \"%s\" has the GUID of a CA already in the topology", n->id);
	if (emu_loader_add_ports(L, h, di, n->nports))
		return emu_loader_error(L, NULL, ENOMEM, "out of memory");
	d = &L->f->hosts[h].devices[di];
	for (size_t p = 0; p < d->nports; p++) {
		struct emu_port_meta *pm = &L->hosts[h].devs[di].ports[p];

		if ((pm->set & EMU_PSET_LINK_LAYER) && d->ports[p].link_layer != 1)
			return tbad(T, "CA \"%s\" is InfiniBand but device '%s' port %zu is declared "
				    "link=eth (%s:%u)", n->id, d->name, p + 1, pm->src.file,
				    pm->src.line);
		d->ports[p].link_layer = 1;
	}
	L->hosts[h].devs[di].from_topology = true;
	if (n->guid_known) {
		d->node_guid = n->guid;
		L->hosts[h].devs[di].guid_set = true;
	}
	if (n->sysguid_known && !L->hosts[h].devs[di].sysguid_set) {
		d->sys_image_guid = n->sysguid;
		L->hosts[h].devs[di].sysguid_set = true;
	}
	if (n->vendid && !L->hosts[h].devs[di].declared)
		d->vendor_id = n->vendid;
	if (n->devid && !L->hosts[h].devs[di].declared)
		d->vendor_part_id = n->devid;
	if (!d->node_desc[0])
		snprintf(d->node_desc, sizeof(d->node_desc), "%s", n->has_desc ? n->desc : n->id);
	n->host = h;
	n->dev = di;
	return 0;
}

static int place_switch(struct topo *T, struct tnode *n)
{
	struct emu_loader *L = T->L;
	struct emu_switch *s;
	int si;

	if (emu_loader_find_switch(L, n->id) >= 0)
		return emu_loader_error(L, &n->src, EINVAL, "duplicate switch '%s'", n->id);
	si = emu_loader_add_switch(L, n->id, n->nports);
	if (si < 0)
		return emu_loader_error(L, NULL, ENOMEM, "out of memory");
	L->switches[si].src = n->src;
	s = &L->f->switches[si];
	snprintf(s->node_desc, sizeof(s->node_desc), "%s", n->has_desc ? n->desc : n->id);
	s->node_guid = n->guid_known ? n->guid : 0;
	s->sys_image_guid = n->sysguid_known ? n->sysguid : 0;
	s->vendor_id = n->vendid;
	s->device_id = n->devid;
	if (n->lid_known) {
		s->lid = n->lid;
		s->lmc = n->lmc;
		L->switches[si].lid_set = true;
	}
	n->sw = si;
	return 0;
}

static struct emu_endpoint endpoint_of(const struct tnode *n, unsigned port)
{
	struct emu_endpoint e;

	memset(&e, 0, sizeof(e));
	e.kind = n->type == NODE_SWITCH ? EMU_EP_SWITCH_PORT : EMU_EP_HOST_PORT;
	e.node = n->type == NODE_SWITCH ? n->sw : n->host;
	e.device = n->type == NODE_SWITCH ? 0 : n->dev;
	e.port = (uint8_t)port;
	return e;
}

/* Records a LID learnt for a CA port or switch from either end of a cable. */
static int learn_lid(struct topo *T, struct tnode *n, unsigned port, uint16_t lid, uint8_t lmc,
		     bool with_lmc, const struct emu_src *src)
{
	struct emu_loader *L = T->L;

	if (n->type == NODE_SWITCH) {
		struct emu_switch *s = &L->f->switches[n->sw];

		if (L->switches[n->sw].lid_set && s->lid != lid)
			return emu_loader_error(L, src, EINVAL, "switch \"%s\" has LID %u here but "
						"%u elsewhere", n->id, lid, s->lid);
		s->lid = lid;
		L->switches[n->sw].lid_set = true;
		return 0;
	}
	{
		struct emu_port *p = &L->f->hosts[n->host].devices[n->dev].ports[port - 1];
		struct emu_port_meta *pm = &L->hosts[n->host].devs[n->dev].ports[port - 1];

		if ((pm->set & EMU_PSET_LID) && p->lid != lid)
			return emu_loader_error(L, src, EINVAL, "port %u of \"%s\" has LID %u here "
						"but %u elsewhere", port, n->id, lid, p->lid);
		p->lid = lid;
		pm->set |= EMU_PSET_LID;
		if (with_lmc) {
			p->lmc = lmc;
			pm->set |= EMU_PSET_LMC;
		}
	}
	return 0;
}

static int build(struct topo *T)
{
	struct emu_loader *L = T->L;

	if (port_index(T))
		return emu_loader_error(L, NULL, ENOMEM, "out of memory");
	T->nhosts_before = L->f->nhosts;

	for (size_t i = 0; i < T->nnodes; i++) {
		struct tnode *n = &T->nodes[i];
		int r;

		L->cur = n->src; /* errors about a node point at its header line */
		r = n->type == NODE_SWITCH ? place_switch(T, n) : place_ca(T, n);

		if (r)
			return -1;
	}
	for (size_t i = 0; i < T->nports; i++) {
		struct tport *t = &T->ports[i];
		struct tnode *n = &T->nodes[t->node], *rn;
		int r = find_node(T, t->rid);

		if (r < 0)
			return emu_loader_error(L, &t->src, EINVAL, "port %u of \"%s\" is cabled to "
						"unknown node \"%s\"", t->port, n->id, t->rid);
		rn = &T->nodes[r];
		if (t->rport < 1 || t->rport > rn->nports)
			return emu_loader_error(L, &t->src, EINVAL, "port %u of \"%s\" is cabled to "
						"port %u of \"%s\", which has ports 1..%u", t->port,
						n->id, t->rport, rn->id, rn->nports);
		if (r == t->node && t->rport == t->port)
			return emu_loader_error(L, &t->src, EINVAL, "port %u of \"%s\" is cabled to "
						"itself", t->port, n->id);
		/* the other direction of the same cable, if listed, must agree */
		for (int k = port_first(T, r, t->rport); k >= 0; k = T->pnext[k]) {
			struct tport *o = &T->ports[k];

			if (strcmp(o->rid, n->id) || o->rport != t->port)
				return emu_loader_error(L, &t->src, EINVAL, "port %u of \"%s\" is "
							"cabled to \"%s\"[%u], but that port is "
							"cabled to \"%s\"[%u] (%s:%u)", t->port, n->id,
							rn->id, t->rport, o->rid, o->rport,
							o->src.file, o->src.line);
			if (o->link >= 0)
				t->link = o->link;
		}
		if (n->type == NODE_CA) {
			struct emu_port *p = &L->f->hosts[n->host].devices[n->dev].ports[t->port - 1];
			struct emu_port_meta *pm =
				&L->hosts[n->host].devs[n->dev].ports[t->port - 1];

			pm->in_topology = true;
			if (t->has_guid && !(pm->set & EMU_PSET_GUID)) {
				p->port_guid = t->guid;
				pm->set |= EMU_PSET_GUID;
			}
			if (t->own_lid_set &&
			    learn_lid(T, n, t->port, t->own_lid, t->own_lmc, true, &t->src))
				return -1;
		}
		if (t->remote_lid_set &&
		    learn_lid(T, rn, t->rport, t->remote_lid, 0, false, &t->src))
			return -1;
		if (rn->type == NODE_CA && t->has_rguid) {
			struct emu_port *p = &L->f->hosts[rn->host].devices[rn->dev].ports[t->rport - 1];
			struct emu_port_meta *pm =
				&L->hosts[rn->host].devs[rn->dev].ports[t->rport - 1];

			if (!(pm->set & EMU_PSET_GUID)) {
				p->port_guid = t->rguid;
				pm->set |= EMU_PSET_GUID;
			}
		}
		if (rn->type == NODE_CA)
			L->hosts[rn->host].devs[rn->dev].ports[t->rport - 1].in_topology = true;
		if (t->link < 0) {
			struct emu_src keep = L->cur;
			int li;

			L->cur = t->src;
			li = emu_loader_add_link(L, endpoint_of(n, t->port), endpoint_of(rn, t->rport));
			L->cur = keep;
			if (li < 0)
				return emu_loader_error(L, NULL, ENOMEM, "out of memory");
			t->link = li;
			for (int k = port_first(T, r, t->rport); k >= 0; k = T->pnext[k])
				T->ports[k].link = li;
		}
		if (t->width && t->speed) {
			L->f->links[t->link].width = t->width;
			L->f->links[t->link].speed = t->speed;
			L->link_set[t->link] |= EMU_FSET_WIDTH | EMU_FSET_SPEED;
		}
	}
	return 0;
}

int emu_ibnd_load(struct emu_loader *L, const char *path)
{
	struct topo T;
	struct emu_src from = L->cur;
	int r;

	memset(&T, 0, sizeof(T));
	T.L = L;
	T.cur_node = -1;
	r = topo_file(&T, path, &from);
	if (r == 0) {
		if (!T.nnodes)
			r = emu_loader_error(L, &from, EINVAL, "topology '%s' describes no nodes",
					     path);
		else
			r = build(&T);
	}
	free(T.nodes);
	free(T.ports);
	free(T.idx);
	free(T.pbase);
	free(T.phead);
	free(T.pnext);
	return r;
}
