/* Port spaces, rdma_bind_addr, rdma_listen and the device association of a bound address,
 * after the kernel's cma.c (Linux 6.1: rdma_bind_addr, cma_get_port, cma_use_port,
 * cma_check_port, cma_alloc_any_port, cma_acquire_dev_by_src_ip, rdma_listen).
 *
 * Each host has one port table per port space (TCP, UDP, IPoIB, IB), as each network namespace
 * has in the kernel. A port's bind list holds every id bound to it; cma_check_port decides
 * whether a further id may join. */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <linux/capability.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "emu/sim/engine.h"
#include "util/kmem.h"
#include "emu/net/neigh.h"
#include "emu/hca/pkt.h"
#include "emu/sim/prng.h"
#include "emu/sim/process.h"
#include "emu/rdma_cm/cma.h"
#include "util/failcall.h"

struct emu_cma_bind {
	uint16_t ps;
	uint16_t port;
	struct emu_list owners; /* struct emu_cma_id.bind_node */
	struct emu_cma_ports *tbl; /* the table holding it */
	struct emu_cma_bind *next; /* hash chain */
};

/* Port tables of one host. */
struct emu_cma_ports {
	const struct emu_host *host;
	/* bind lists hashed by (port space, port): the kernel's per-space IDR lookup is O(1),
	 * and a scan here made ephemeral binds O(bound ports) */
	struct emu_cma_bind **bucket;
	size_t nbuckets; /* a power of two, or 0 before the first bind */
	size_t nbinds;
	struct emu_prng prng;   /* the random first port of cma_alloc_any_port */
	bool seeded;
	struct emu_cma_ports *next;
};

static struct emu_cma_ports *all_ports;

void emu_cma_reset(void)
{
	while (all_ports) {
		struct emu_cma_ports *p = all_ports;

		all_ports = p->next;
		for (size_t i = 0; i < p->nbuckets; i++) {
			while (p->bucket[i]) {
				struct emu_cma_bind *b = p->bucket[i];

				p->bucket[i] = b->next;
				emu_kmem_free(b);
			}
		}
		emu_kmem_table_free(p->bucket, p->nbuckets * sizeof *p->bucket);
		free(p);
	}
}

/* The port spaces refer to the attached fabric's hosts: they go when the process forgets it. */
static struct emu_process_reset_hook reset_hook = { .order = 4, .reset = emu_cma_reset };

__attribute__((constructor)) static void install(void)
{
	emu_process_on_reset(&reset_hook);
}

static struct emu_cma_ports *ports_of(const struct emu_host *h)
{
	struct emu_cma_ports *p;

	for (p = all_ports; p; p = p->next)
		if (p->host == h)
			return p;
	p = emu_calloc(1, sizeof *p);
	if (!p)
		return NULL;
	p->host = h;
	/* One PRNG stream per host, forked from the fabric seed: the same fixture and seed give
	 * the same ephemeral ports run after run. */
	{
		struct emu_prng root;
		size_t idx = 0;

		emu_prng_seed(&root, h->fabric ? h->fabric->seed : 0);
		if (h->fabric)
			idx = (size_t)(h - h->fabric->hosts);
		emu_prng_fork(&root, 0x636d61706f727400ull + idx, &p->prng); /* "cmaport" */
	}
	p->next = all_ports;
	all_ports = p;
	return p;
}

/* ---- address helpers ---- */

bool emu_cma_any_addr(const struct sockaddr *sa)
{
	switch (sa->sa_family) {
	case AF_INET:
		return ((const struct sockaddr_in *)sa)->sin_addr.s_addr == htonl(INADDR_ANY);
	case AF_INET6:
		return IN6_IS_ADDR_UNSPECIFIED(&((const struct sockaddr_in6 *)sa)->sin6_addr);
	case 27: { /* AF_IB: ib_addr_any */
		static const uint8_t zero[16];

		return !memcmp(((const struct emu_sockaddr_ib *)sa)->sib_addr, zero, 16);
	}
	default:
		return false;
	}
}

bool emu_cma_loopback_addr(const struct sockaddr *sa)
{
	switch (sa->sa_family) {
	case AF_INET:
		return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) == 127;
	case AF_INET6:
		return IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)sa)->sin6_addr);
	case 27: { /* AF_IB: ib_addr_loopback, ::1 */
		static const uint8_t one[16] = { [15] = 1 };

		return !memcmp(((const struct emu_sockaddr_ib *)sa)->sib_addr, one, 16);
	}
	default:
		return false;
	}
}

size_t emu_cma_addr_size(const struct sockaddr *sa)
{
	switch (sa->sa_family) {
	case AF_INET:
		return sizeof(struct sockaddr_in);
	case AF_INET6:
		return sizeof(struct sockaddr_in6);
	case 27: /* AF_IB */
		return 48;
	default:
		return 0;
	}
}

void emu_cma_addr_copy(struct emu_cma_sockaddr *to, const struct sockaddr *from)
{
	memset(to, 0, sizeof *to);
	memcpy(to, from, emu_cma_addr_size(from));
}

uint16_t emu_cma_port(const struct sockaddr *sa)
{
	switch (sa->sa_family) {
	case AF_INET:
		return ntohs(((const struct sockaddr_in *)sa)->sin_port);
	case AF_INET6:
		return ntohs(((const struct sockaddr_in6 *)sa)->sin6_port);
	case 27: { /* AF_IB: the low 16 bits of the service ID under its mask (cma_port), so a
		    * mask without port bits means port 0: any port (measured on Linux 6.1) */
		const struct emu_sockaddr_ib *sib = (const struct emu_sockaddr_ib *)sa;

		return (uint16_t)(be64toh(sib->sib_sid) & be64toh(sib->sib_sid_mask));
	}
	default:
		return 0;
	}
}

void emu_cma_set_port(struct sockaddr *sa, uint16_t port)
{
	if (sa->sa_family == AF_INET) {
		((struct sockaddr_in *)sa)->sin_port = htons(port);
	} else if (sa->sa_family == AF_INET6) {
		((struct sockaddr_in6 *)sa)->sin6_port = htons(port);
	} else if (sa->sa_family == 27) {
		struct emu_sockaddr_ib *sib = (struct emu_sockaddr_ib *)sa;

		sib->sib_sid = htobe64((be64toh(sib->sib_sid) & ~0xffffull) | port);
	}
}

static bool addr_equal(const struct sockaddr *a, const struct sockaddr *b)
{
	if (a->sa_family != b->sa_family)
		return false;
	if (a->sa_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
		       ((const struct sockaddr_in *)b)->sin_addr.s_addr;
	if (a->sa_family == AF_INET6)
		return !memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
			       &((const struct sockaddr_in6 *)b)->sin6_addr, 16);
	if (a->sa_family == 27)
		return !memcmp(((const struct emu_sockaddr_ib *)a)->sib_addr,
			       ((const struct emu_sockaddr_ib *)b)->sib_addr, 16);
	return false;
}

/* ---- device association ---- */

/* Addresses looked at per netdev (more is not a configuration anyone tests). */
#define EMU_CMA_MAX_NETDEV_ADDRS 32

/* The netdev of h that carries address sa (rdma_translate_ip): its index, -2 for a loopback
 * address (the implicit "lo"), -1 when no netdev has it. An IPv6 link-local address must be on
 * the netdev its scope names. */
static int netdev_of_addr(const struct emu_host *h, const struct sockaddr *sa, int bound_if)
{
	struct emu_engine *e = emu_engine_get();
	size_t host = (size_t)(h - h->fabric->hosts);

	if (emu_cma_loopback_addr(sa))
		return -2;
	/* the netdevs' addresses as they are now (rdmaemu_ctl_addr_add/del change them) */
	for (size_t i = 0; i < h->nnetdevs; i++) {
		struct sockaddr_storage addrs[EMU_CMA_MAX_NETDEV_ADDRS];
		int n;

		if (bound_if && emu_cma_ifindex(i) != bound_if)
			continue;
		n = e ? emu_neigh_addrs(e, host, (int)i, addrs, NULL, EMU_CMA_MAX_NETDEV_ADDRS) : -1;
		if (n > EMU_CMA_MAX_NETDEV_ADDRS)
			n = EMU_CMA_MAX_NETDEV_ADDRS;
		for (int j = 0; j < n; j++) {
			const struct sockaddr *a = (const struct sockaddr *)&addrs[j];

			if (a->sa_family != sa->sa_family)
				continue;
			if (a->sa_family == AF_INET &&
			    ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
				    ((const struct sockaddr_in *)sa)->sin_addr.s_addr)
				return (int)i;
			if (a->sa_family == AF_INET6 &&
			    !memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
				    &((const struct sockaddr_in6 *)sa)->sin6_addr, 16))
				return (int)i;
		}
	}
	return -1;
}

/* The GID of the id's source address on a port (rdma_ip2gid + the port's GID table): RoCE
 * ports carry ::ffff:a.b.c.d / the IPv6 address itself, preferring the RoCE v2 entry (the
 * kernel's default GID type for the CM on rxe); IB ports use GID 0. -1 if none. */
static int gid_of(const struct emu_port *p, int nd, const struct sockaddr *sa)
{
	uint8_t want[16];
	int v1 = -1;

	if (p->link_layer == 1 /* IBV_LINK_LAYER_INFINIBAND */)
		return p->ngids ? 0 : -1;
	emu_gid_from_sockaddr(sa, want);
	for (size_t g = 0; g < p->ngids; g++) {
		if (p->gids[g].netdev != nd || memcmp(p->gids[g].raw, want, 16))
			continue;
		if (p->gids[g].type == EMU_GID_ROCE_V2)
			return (int)g;
		if (v1 < 0)
			v1 = (int)g;
	}
	return v1;
}

int emu_cma_acquire_dev(struct emu_cma_id *id, int nd)
{
	const struct emu_host *h = id->host;
	const struct emu_netdev *n;
	const struct emu_device *d;
	const struct emu_port *p;
	int g;

	if (nd < 0 || (size_t)nd >= h->nnetdevs)
		return -ENODEV;
	n = &h->netdevs[nd];
	/* cma_acquire_dev_by_src_ip / cma_ib_acquire_dev: an RDMA_PS_IPOIB id needs an IPoIB
	 * netdev (dev_type ARPHRD_INFINIBAND: 20-byte hardware address), checked before any
	 * device is looked for (measured on Linux 6.1 + rxe: bind to the rxe netdev's address
	 * -1/EINVAL; conformance BIND-122c) */
	if (id->ps == EMU_CMA_PS_IPOIB && n->hwaddr_len != 20)
		return -EINVAL;
	if (n->device < 0 || (size_t)n->device >= h->ndevices)
		return -ENODEV;
	d = &h->devices[n->device];
	/* an unregistered device: the netdev stays, without RDMA device */
	if (d->removed || n->port < 1 || n->port > d->nports)
		return -ENODEV;
	p = &d->ports[n->port - 1];
	g = gid_of(p, nd, (const struct sockaddr *)&id->src);
	if (g < 0)
		return -ENODEV;
	id->dev = n->device;
	emu_cma_attach_dev(id);
	id->netdev = nd;
	id->port = n->port;
	id->gid_index = g;
	/* IB: the IPoIB netdev's P_Key (the port's first entry). RoCE: ib_addr_get_pkey reads
	 * bytes 8-9 of the Ethernet broadcast address, which are 0 (measured: QUERY reports 0). */
	if (p->link_layer == 1 /* IBV_LINK_LAYER_INFINIBAND */)
		id->pkey = p->npkeys ? p->pkeys[0] : 0xffff;
	else
		id->pkey = 0;
	return 0;
}

/* ---- ports ---- */

/* cma_check_port: may id join bind list b? */
static int check_port(struct emu_cma_bind *b, struct emu_cma_id *id, bool reuseaddr)
{
	const struct sockaddr *addr = (const struct sockaddr *)&id->src;
	struct emu_list *pos, *tmp;

	emu_list_for_each_safe(pos, tmp, &b->owners) {
		struct emu_cma_id *cur = emu_list_entry(pos, struct emu_cma_id, bind_node);
		const struct sockaddr *cur_addr = (const struct sockaddr *)&cur->src;

		if (cur == id)
			continue;
		if (reuseaddr && cur->reuseaddr)
			continue;
		if (id->afonly && cur->afonly && addr->sa_family != cur_addr->sa_family)
			continue;
		if (emu_cma_any_addr(addr) || emu_cma_any_addr(cur_addr))
			return -EADDRNOTAVAIL;
		if (addr_equal(addr, cur_addr))
			return -EADDRINUSE;
	}
	return 0;
}

static size_t bind_hash(const struct emu_cma_ports *p, uint16_t ps, uint16_t port)
{
	uint32_t key = (uint32_t)ps << 16 | port;

	return (size_t)((key * 2654435761u) >> 8) & (p->nbuckets - 1);
}

static struct emu_cma_bind *find_bind(struct emu_cma_ports *p, uint16_t ps, uint16_t port)
{
	if (!p->nbuckets)
		return NULL;
	for (struct emu_cma_bind *b = p->bucket[bind_hash(p, ps, port)]; b; b = b->next)
		if (b->ps == ps && b->port == port)
			return b;
	return NULL;
}

/* Doubles the buckets once there are as many binds as buckets (chains of ~1). */
static int grow_binds(struct emu_cma_ports *p)
{
	size_t old = p->nbuckets, n = old ? old * 2 : 64;
	struct emu_cma_bind **nb = emu_kmem_table_zalloc(n * sizeof *nb), **ob = p->bucket;

	if (!nb)
		return -ENOMEM;
	p->bucket = nb;
	p->nbuckets = n;
	for (size_t i = 0; i < old; i++) {
		while (ob[i]) {
			struct emu_cma_bind *b = ob[i];
			size_t h = bind_hash(p, b->ps, b->port);

			ob[i] = b->next;
			b->next = nb[h];
			nb[h] = b;
		}
	}
	emu_kmem_table_free(ob, old * sizeof *ob);
	return 0;
}

static void bind_port(struct emu_cma_bind *b, struct emu_cma_id *id)
{
	if (id->src.ss_family == 27) {
		/* cma_bind_port: the masked service ID with the port, and a full mask */
		struct emu_sockaddr_ib *sib = (struct emu_sockaddr_ib *)&id->src;
		uint64_t sid = be64toh(sib->sib_sid) & be64toh(sib->sib_sid_mask);

		sib->sib_sid = htobe64(sid | b->port);
		sib->sib_sid_mask = ~0ull;
	} else {
		emu_cma_set_port((struct sockaddr *)&id->src, b->port);
	}
	id->bind = b;
	emu_list_add_tail(&b->owners, &id->bind_node);
}

static int alloc_port(struct emu_cma_ports *p, struct emu_cma_id *id, uint16_t ps,
		      uint16_t port)
{
	struct emu_cma_bind *b;
	size_t h;

	if (p->nbinds >= p->nbuckets && grow_binds(p))
		return -ENOMEM;
	b = emu_kmem_zalloc(sizeof *b);
	if (!b)
		return -ENOMEM;
	b->ps = ps;
	b->port = port;
	b->tbl = p;
	emu_list_init(&b->owners);
	h = bind_hash(p, b->ps, port);
	b->next = p->bucket[h];
	p->bucket[h] = b;
	p->nbinds++;
	bind_port(b, id);
	return 0;
}

void emu_cma_release_port(struct emu_cma_id *id)
{
	struct emu_cma_bind *b = id->bind;
	struct emu_cma_ports *p;

	if (!b)
		return;
	emu_list_del(&id->bind_node);
	id->bind = NULL;
	if (!emu_list_empty(&b->owners))
		return;
	p = b->tbl;
	for (struct emu_cma_bind **pp = &p->bucket[bind_hash(p, b->ps, b->port)]; *pp;
	     pp = &(*pp)->next) {
		if (*pp == b) {
			*pp = b->next;
			p->nbinds--;
			break;
		}
	}
	emu_kmem_free(b);
}

/* cma_alloc_any_port: a random start in ip_local_port_range, then upwards, wrapping; the first
 * port without a bind list is taken. */
static int alloc_any_port(struct emu_cma_ports *p, struct emu_cma_id *id, uint16_t ps)
{
	unsigned remaining = EMU_CMA_PORT_HIGH - EMU_CMA_PORT_LOW + 1;
	unsigned rover = EMU_CMA_PORT_LOW + (unsigned)emu_prng_below(&p->prng, remaining);

	for (unsigned i = 0; i < remaining; i++) {
		if (!find_bind(p, ps, (uint16_t)rover))
			return alloc_port(p, id, ps, (uint16_t)rover);
		if (++rover > EMU_CMA_PORT_HIGH)
			rover = EMU_CMA_PORT_LOW;
	}
	return -EADDRNOTAVAIL;
}

/* capable(CAP_NET_BIND_SERVICE) of the calling process: in-process hosting, the caller is the
 * process the emulated kernel serves. Under rdmaemud the daemon answers with its own
 * capabilities for its clients: the same answer as long as they run with the same ones (rdmaemu
 * run starts the daemon as its caller; docs/daemon.md "Limits"). */
static bool may_bind_privileged(void)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d))
		return false;
	return d[CAP_NET_BIND_SERVICE / 32].effective & (1u << (CAP_NET_BIND_SERVICE % 32));
}

/* cma_select_inet_ps: an IP id's port space is its own. */
static uint16_t select_inet_ps(const struct emu_cma_id *id)
{
	switch (id->ps) {
	case EMU_CMA_PS_TCP: case EMU_CMA_PS_UDP: case EMU_CMA_PS_IPOIB: case EMU_CMA_PS_IB:
		return id->ps;
	default:
		return 0;
	}
}

/* The service-ID prefixes of the port spaces (RDMA_IB_IP_PS_*: the port space in bits 16-31)
 * and the mask over them (RDMA_IB_IP_PS_MASK). */
#define SID_PS(ps) ((uint64_t)(ps) << 16)
#define SID_PS_MASK 0xFFFFFFFFFFFF0000ull

/* cma_select_ib_ps: an AF_IB address's port space comes from its service ID under the mask;
 * an RDMA_PS_IB id may take any of IB, TCP and UDP, a TCP or UDP id only its own. The chosen
 * prefix is written into the address and the mask widened to cover it. 0: none fits. */
static uint16_t select_ib_ps(struct emu_cma_id *id)
{
	struct emu_sockaddr_ib *sib = (struct emu_sockaddr_ib *)&id->src;
	uint64_t mask = be64toh(sib->sib_sid_mask) & SID_PS_MASK;
	uint64_t sid = be64toh(sib->sib_sid) & mask;
	static const uint16_t order[] = { EMU_CMA_PS_IB, EMU_CMA_PS_TCP, EMU_CMA_PS_UDP };
	uint16_t ps = 0;

	for (size_t i = 0; i < sizeof order / sizeof order[0] && !ps; i++) {
		if (id->ps != EMU_CMA_PS_IB && id->ps != order[i])
			continue;
		if (sid == (SID_PS(order[i]) & mask))
			ps = order[i];
	}
	if (ps) {
		uint16_t port = emu_cma_port((const struct sockaddr *)sib);

		sib->sib_sid = htobe64(SID_PS(ps) | port);
		sib->sib_sid_mask = htobe64(SID_PS_MASK | be64toh(sib->sib_sid_mask));
	}
	return ps;
}

/* cma_get_port: the port space (shared by AF_IB service IDs and IP ids of the same space),
 * then the port: any, or the one asked for (cma_use_port). */
static int get_port(struct emu_cma_id *id)
{
	struct emu_cma_ports *p = ports_of(id->host);
	uint16_t ps, snum;
	struct emu_cma_bind *b;
	int ret;

	if (!p)
		return -ENOMEM;
	ps = id->src.ss_family == 27 ? select_ib_ps(id) : select_inet_ps(id);
	if (!ps)
		return -EPROTONOSUPPORT;
	snum = emu_cma_port((const struct sockaddr *)&id->src);
	if (!snum)
		return alloc_any_port(p, id, ps);
	if (snum < EMU_CMA_PROT_SOCK && !may_bind_privileged())
		return -EACCES;
	b = find_bind(p, ps, snum);
	if (!b)
		return alloc_port(p, id, ps, snum);
	ret = check_port(b, id, id->reuseaddr);
	if (!ret)
		bind_port(b, id);
	return ret;
}

/* AF_IB (cma_translate_addr + cma_acquire_dev_by_src_ip): the InfiniBand port of h whose GID
 * table holds the address; the P_Key comes from the address. The netdev is the port's IPoIB
 * one, if any. An AF_IB address is an IB device address (ARPHRD_INFINIBAND), which
 * cma_validate_port refuses on a RoCE port: binding rxe's own GID 0 or 1 as AF_IB fails with
 * ENODEV on Linux 6.1 (probes/cma/afib_probe.c in scripts/rxe-vm, docs/cma.md "AF_IB"). */
static int bind_ib(struct emu_cma_id *id, const struct emu_sockaddr_ib *sib);

int emu_cma_bind_ib_dev(struct emu_cma_id *id)
{
	return bind_ib(id, (const struct emu_sockaddr_ib *)&id->src);
}

static int bind_ib(struct emu_cma_id *id, const struct emu_sockaddr_ib *sib)
{
	const struct emu_host *h = id->host;

	for (size_t d = 0; d < h->ndevices; d++) {
		const struct emu_device *dev = &h->devices[d];

		for (size_t pi = 0; !dev->removed && pi < dev->nports; pi++) {
			const struct emu_port *p = &dev->ports[pi];

			if (p->link_layer != 1 /* IBV_LINK_LAYER_INFINIBAND */)
				continue;
			for (size_t g = 0; g < p->ngids; g++) {
				if (memcmp(p->gids[g].raw, sib->sib_addr, 16))
					continue;
				id->dev = (int)d;
				emu_cma_attach_dev(id);
				id->port = p->num;
				id->gid_index = (int)g;
				id->pkey = ntohs(sib->sib_pkey);
				id->netdev = -1;
				for (size_t n = 0; n < h->nnetdevs; n++)
					if (h->netdevs[n].device == (int)d &&
					    h->netdevs[n].port == p->num)
						id->netdev = (int)n;
				return 0;
			}
		}
	}
	return -ENODEV;
}

bool emu_cma_ports_plentiful(const struct emu_host *h)
{
	const struct emu_cma_ports *p;

	for (p = all_ports; p && p->host != h; p = p->next)
		;
	/* fewer binds than half the ephemeral range: the next ones surely find a free port */
	return !p || p->nbinds < (EMU_CMA_PORT_HIGH - EMU_CMA_PORT_LOW + 1) / 2;
}

int emu_cma_bind(struct emu_cma_id *id, const struct sockaddr *addr)
{
	const struct emu_host *h = id->host;
	int ret;

	if (addr->sa_family != AF_INET && addr->sa_family != AF_INET6 && addr->sa_family != 27)
		return -EAFNOSUPPORT;
	if (!emu_cma_comp_exch(id, EMU_CMA_IDLE, EMU_CMA_ADDR_BOUND))
		return -EINVAL;
	if (addr->sa_family == 27) {
		memset(&id->src, 0, sizeof id->src);
		memcpy(&id->src, addr, emu_cma_addr_size(addr));
		ret = emu_cma_any_addr(addr) ? 0 :
			bind_ib(id, (const struct emu_sockaddr_ib *)addr);
		if (ret)
			goto err;
		memset(&id->dst, 0, sizeof id->dst);
		id->dst.ss_family = 27;
		ret = get_port(id);
		if (ret)
			goto err;
		return 0;
	}
	/* cma_check_linklocal */
	id->bound_dev_if = 0;
	if (addr->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)addr;

		if (IN6_IS_ADDR_LINKLOCAL(&s6->sin6_addr)) {
			if (!s6->sin6_scope_id) {
				ret = -EINVAL;
				goto err;
			}
			id->bound_dev_if = (int)s6->sin6_scope_id;
		}
	}
	memset(&id->src, 0, sizeof id->src);
	memcpy(&id->src, addr, emu_cma_addr_size(addr));
	if (!emu_cma_any_addr(addr)) {
		int nd = netdev_of_addr(h, addr, id->bound_dev_if);

		if (nd == -1) {
			ret = -EADDRNOTAVAIL;
			goto err;
		}
		/* A loopback address binds like a wildcard: no device (measured on Linux 6.1 with
		 * rxe: 127.0.0.1, 127.0.0.2 and ::1 give 0 and no device; the device comes with
		 * address resolution). Any other netdev needs an RDMA device behind it. */
		ret = nd == -2 ? 0 : emu_cma_acquire_dev(id, nd);
		if (ret)
			goto err;
	}
	if (!id->afonly_set)
		id->afonly = addr->sa_family == AF_INET; /* net.ipv6.bindv6only = 0 */
	memset(&id->dst, 0, sizeof id->dst);
	id->dst.ss_family = addr->sa_family;
	ret = get_port(id);
	if (ret)
		goto err;
	return 0;
err:
	id->dev = id->netdev = -1;
	id->port = 0;
	emu_cma_comp_exch(id, EMU_CMA_ADDR_BOUND, EMU_CMA_IDLE);
	return ret;
}

int emu_cma_listen(struct emu_cma_id *id, int backlog)
{
	int ret;

	if (id->state == EMU_CMA_IDLE) {
		struct sockaddr_in any = { .sin_family = AF_INET };

		ret = emu_cma_bind(id, (const struct sockaddr *)&any);
		if (ret)
			return ret;
	}
	if (!emu_cma_comp_exch(id, EMU_CMA_ADDR_BOUND, EMU_CMA_LISTEN))
		return -EINVAL;
	/* A listener may not share its port: check again as if it had no REUSEADDR. */
	if (id->reuseaddr) {
		ret = check_port(id->bind, id, false);
		if (ret) {
			emu_cma_comp_exch(id, EMU_CMA_LISTEN, EMU_CMA_ADDR_BOUND);
			return ret;
		}
		id->reuseaddr = false;
	}
	ret = emu_cma_cm_listen(id);
	if (ret) {
		emu_cma_comp_exch(id, EMU_CMA_LISTEN, EMU_CMA_ADDR_BOUND);
		return ret;
	}
	id->backlog = backlog;
	return 0;
}

struct emu_cma_id *emu_cma_find_listener(const struct emu_host *h, uint16_t ps, uint16_t port,
					 const struct sockaddr *dst)
{
	struct emu_cma_ports *p = ports_of(h);
	struct emu_cma_bind *b = p ? find_bind(p, ps, port) : NULL;
	struct emu_cma_id *wild = NULL;
	struct emu_list *pos, *tmp;

	if (!b)
		return NULL;
	emu_list_for_each_safe(pos, tmp, &b->owners) {
		struct emu_cma_id *cur = emu_list_entry(pos, struct emu_cma_id, bind_node);
		const struct sockaddr *a = (const struct sockaddr *)&cur->src;

		if (cur->state != EMU_CMA_LISTEN)
			continue;
		if (emu_cma_any_addr(a)) {
			/* An AF_INET6 wildcard that is not AF_ONLY takes IPv4 requests too; an
			 * AF_IB request only an AF_IB listener (cma_match_net_dev) */
			if (a->sa_family == dst->sa_family ||
			    (!cur->afonly && a->sa_family == AF_INET6 && dst->sa_family == AF_INET))
				wild = wild ? wild : cur;
			continue;
		}
		if (addr_equal(a, dst))
			return cur;
	}
	return wild;
}

struct emu_cma_id *emu_cma_find_req_listener(const struct emu_host *h, int dev, uint8_t pnum,
					     uint16_t ps, uint16_t port,
					     const struct sockaddr *dst)
{
	struct emu_cma_ports *p = ports_of(h);
	struct emu_cma_bind *b = p ? find_bind(p, ps, port) : NULL;
	struct emu_cma_id *wild = NULL, *afib = NULL;
	struct emu_list *pos, *tmp;

	if (!b)
		return NULL;
	emu_list_for_each_safe(pos, tmp, &b->owners) {
		struct emu_cma_id *cur = emu_list_entry(pos, struct emu_cma_id, bind_node);
		const struct sockaddr *a = (const struct sockaddr *)&cur->src;
		/* the listener itself is on the device, or a wildcard's child listen is */
		bool on_dev = cur->dev < 0 || cur->dev == dev;

		if (cur->state != EMU_CMA_LISTEN)
			continue;
		if (a->sa_family == 27) {
			/* cma_match_private_data: an AF_IB listener takes any request;
			 * cma_match_net_dev: an IP one on any port, an AF_IB one on its port */
			if (!afib && on_dev && (dst || !cur->port || cur->port == pnum))
				afib = cur;
			continue;
		}
		/* an AF_IB request (no net_dev) matches AF_IB listeners only */
		if (!dst)
			continue;
		if (emu_cma_any_addr(a)) {
			if (a->sa_family == dst->sa_family ||
			    (!cur->afonly && a->sa_family == AF_INET6 && dst->sa_family == AF_INET))
				wild = wild ? wild : cur;
			continue;
		}
		if (addr_equal(a, dst))
			return cur;
	}
	return wild ? wild : afib;
}
