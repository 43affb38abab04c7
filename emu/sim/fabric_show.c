/* `rdmaemu fabric show`: the loaded model as stable, diff-friendly text.
 *
 * One fact per line where it matters for diffs (each GID, address, route, link), fixed field
 * order, no pointers or timestamps, so two fabrics can be compared with diff(1) and tests can
 * compare the output of two loads. Values are printed the way ibv_devinfo prints them (GUIDs
 * as 0000:00ff:fe00:0101, port states as PORT_ACTIVE) where it has a way. */
#include "config.h"

#include <arpa/inet.h>
#include <string.h>
#include <sys/socket.h>

#include "emu/sim/fabric_priv.h"

static void duration(FILE *out, uint64_t ns)
{
	if (!ns)
		fputs("0", out);
	else if (ns % 1000000000ull == 0)
		fprintf(out, "%llus", (unsigned long long)(ns / 1000000000ull));
	else if (ns % 1000000ull == 0)
		fprintf(out, "%llums", (unsigned long long)(ns / 1000000ull));
	else if (ns % 1000ull == 0)
		fprintf(out, "%lluus", (unsigned long long)(ns / 1000ull));
	else
		fprintf(out, "%lluns", (unsigned long long)ns);
}

static void faults(FILE *out, const struct emu_faults *ft)
{
	fputs("delay=", out);
	duration(out, ft->delay_ns);
	fputs(" jitter=", out);
	duration(out, ft->jitter_ns);
	fprintf(out, " loss=%g duplicate=%g reorder=%g %s", ft->loss, ft->duplicate, ft->reorder,
		ft->down ? "down" : "up");
	if (ft->corrupt > 0)
		fprintf(out, " corrupt=%g", ft->corrupt);
	for (unsigned i = 0; i < ft->nmatch; i++)
		fprintf(out, " drop-match=%c:%u:0x%02x/0x%02x:%u", ft->match[i].side ? 'b' : 'a',
			ft->match[i].off, ft->match[i].val, ft->match[i].mask, ft->match[i].nth);
}

static void addr(FILE *out, int family, const void *a)
{
	char s[INET6_ADDRSTRLEN];

	fputs(inet_ntop(family, a, s, sizeof(s)) ? s : "?", out);
}

static const char *gid_type_str(enum emu_gid_type t)
{
	switch (t) {
	case EMU_GID_IB: return "IB";
	case EMU_GID_ROCE_V1: return "RoCE v1";
	case EMU_GID_ROCE_V2: return "RoCE v2";
	}
	return "?";
}

static void guid(FILE *out, uint64_t g)
{
	char b[20];

	emu_guid_str(g, b);
	fputs(b, out);
}

static void endpoint(FILE *out, const struct emu_fabric *f, const struct emu_endpoint *e)
{
	if (e->kind == EMU_EP_SWITCH_PORT)
		fprintf(out, "%s/%u", f->switches[e->node].name, e->port);
	else
		fprintf(out, "%s/%s/%u", f->hosts[e->node].name,
			f->hosts[e->node].devices[e->device].name, e->port);
}

static void caps(FILE *out, const struct emu_device_caps *c)
{
	struct emu_device_caps rxe;
	bool any = false;

	emu_rxe_default_caps(&rxe);
	fputs("    caps rxe", out);
	for (size_t i = 0; i < emu_ncap_fields; i++) {
		const struct emu_cap_field *cf = &emu_cap_fields[i];
		const char *a = (const char *)c + cf->offset, *b = (const char *)&rxe + cf->offset;
		unsigned long long v = 0;

		if (!memcmp(a, b, cf->size))
			continue;
		switch (cf->size) {
		case 1: v = *(const uint8_t *)a; break;
		case 4: v = *(const uint32_t *)a; break;
		default: v = *(const uint64_t *)a; break;
		}
		fprintf(out, "%s %s=%llu", any ? "" : " except", cf->name, v);
		any = true;
	}
	fputc('\n', out);
}

static void port(FILE *out, const struct emu_fabric *f, const struct emu_host *h,
		 const struct emu_port *p)
{
	fprintf(out, "    port %u %s %s (%s)\n", p->num, emu_link_layer_str(p->link_layer),
		emu_port_state_str(p->state), emu_phys_state_str(p->phys_state));
	fprintf(out, "      mtu active %d max %d  width %s speed %s\n", emu_mtu_bytes(p->active_mtu),
		emu_mtu_bytes(p->max_mtu), emu_width_str(p->active_width),
		emu_speed_str(p->active_speed));
	fprintf(out, "      lid %u lmc %u sm_lid %u sm_sl %u  port_guid ", p->lid, p->lmc, p->sm_lid,
		p->sm_sl);
	guid(out, p->port_guid);
	fprintf(out, "\n      gid_tbl_len %u pkey_tbl_len %u  pkeys", p->gid_tbl_len,
		p->pkey_tbl_len);
	for (size_t k = 0; k < p->npkeys; k++)
		fprintf(out, " 0x%04x", p->pkeys[k]);
	fputc('\n', out);
	for (size_t k = 0; k < p->ngids; k++) {
		fprintf(out, "      gid %zu ", k);
		addr(out, AF_INET6, p->gids[k].raw);
		fprintf(out, " %s", gid_type_str(p->gids[k].type));
		if (p->gids[k].netdev >= 0 && (size_t)p->gids[k].netdev < h->nnetdevs)
			fprintf(out, " %s", h->netdevs[p->gids[k].netdev].name);
		fputc('\n', out);
	}
	fputs("      link ", out);
	if (p->link < 0 || (size_t)p->link >= f->nlinks) {
		fputs("none\n", out);
	} else {
		const struct emu_link *lk = &f->links[p->link];
		const struct emu_endpoint *peer = &lk->b;

		if (lk->b.kind == EMU_EP_HOST_PORT && &f->hosts[lk->b.node] == h &&
		    &h->devices[lk->b.device] == p->dev && lk->b.port == p->num)
			peer = &lk->a;
		fprintf(out, "%d to ", p->link);
		endpoint(out, f, peer);
		fputc('\n', out);
	}
}

static void host(FILE *out, const struct emu_fabric *f, const struct emu_host *h)
{
	fprintf(out, "\nhost %s\n", h->name);
	if (h->naliases) {
		fputs("  aliases", out);
		for (size_t a = 0; a < h->naliases; a++)
			fprintf(out, " %s", h->aliases[a]);
		fputc('\n', out);
	}
	fprintf(out, "  acm %s\n", h->acm ? "on" : "off");
	if (h->cm_abi != 4)
		fprintf(out, "  cm-abi %u\n", h->cm_abi);
	if (h->kind == EMU_HOST_RXE_VM)
		fputs("  kind rxe-vm\n", out);
	for (size_t d = 0; d < h->ndevices; d++) {
		const struct emu_device *dv = &h->devices[d];

		fprintf(out, "  device %s\n    node_guid ", dv->name);
		guid(out, dv->node_guid);
		fputs(" sys_image_guid ", out);
		guid(out, dv->sys_image_guid);
		fprintf(out, "\n    vendor_id 0x%x vendor_part_id %u hw_ver 0x%x fw_ver %s\n",
			dv->vendor_id, dv->vendor_part_id, dv->hw_ver, dv->fw_ver);
		fprintf(out, "    node_desc \"%s\"\n", dv->node_desc);
		caps(out, &dv->caps);
		for (size_t p = 0; p < dv->nports; p++)
			port(out, f, h, &dv->ports[p]);
	}
	for (size_t n = 0; n < h->nnetdevs; n++) {
		const struct emu_netdev *nd = &h->netdevs[n];

		fprintf(out, "  netdev %s %s%s mtu %u hwaddr ", nd->name, nd->up ? "up" : "down",
			nd->noarp ? " noarp" : "", nd->mtu);
		for (unsigned b = 0; b < nd->hwaddr_len; b++)
			fprintf(out, "%s%02x", b ? ":" : "", nd->hwaddr[b]);
		if (nd->device >= 0 && (size_t)nd->device < h->ndevices)
			fprintf(out, " rdma %s/%u\n", h->devices[nd->device].name, nd->port);
		else
			fputs(" rdma none\n", out);
		for (size_t k = 0; k < nd->naddrs; k++) {
			fputs(nd->addrs[k].family == AF_INET ? "    inet " : "    inet6 ", out);
			addr(out, nd->addrs[k].family, &nd->addrs[k].addr);
			fprintf(out, "/%u\n", nd->addrs[k].prefixlen);
		}
	}
	for (size_t r = 0; r < h->nroutes; r++) {
		const struct emu_route *rt = &h->routes[r];

		fputs("  route ", out);
		if (rt->prefixlen == 0) {
			fputs(rt->family == AF_INET ? "default" : "default6", out);
		} else {
			addr(out, rt->family, &rt->dst);
			fprintf(out, "/%u", rt->prefixlen);
		}
		if (rt->has_gateway) {
			fputs(" via ", out);
			addr(out, rt->family, &rt->gateway);
		}
		if (rt->netdev >= 0 && (size_t)rt->netdev < h->nnetdevs)
			fprintf(out, " dev %s", h->netdevs[rt->netdev].name);
		fputc('\n', out);
	}
}

void emu_fabric_show(const struct emu_fabric *f, FILE *out)
{
	if (!f || !out)
		return;
	fprintf(out, "fabric %s\n", f->source);
	fprintf(out, "seed %llu\n", (unsigned long long)f->seed);
	fprintf(out, "resolver %s\n", f->system_resolver ? "system" : "files");
	fputs("faults ", out);
	faults(out, &f->default_faults);
	fputc('\n', out);
	if (f->sm.present) {
		uint8_t raw[16];

		emu_gid_set(raw, f->sm.subnet_prefix, 0);
		fprintf(out, "sm lid %u subnet-prefix ", f->sm.sm_lid);
		addr(out, AF_INET6, raw);
		fprintf(out, " sl %u mtu ", f->sm.sl);
		if (f->sm.mtu)
			fprintf(out, "%d", emu_mtu_bytes(f->sm.mtu));
		else
			fputs("path", out);
		if (f->sm.rate)
			fprintf(out, " rate %u", f->sm.rate);
		else
			fputs(" rate path", out);
		fprintf(out, " packet-lifetime %u response-delay ", f->sm.packet_lifetime);
		duration(out, f->sm.response_delay_ns);
		fputc('\n', out);
	} else {
		fputs("sm none\n", out);
	}
	for (size_t h = 0; h < f->nhosts; h++)
		host(out, f, &f->hosts[h]);
	for (size_t s = 0; s < f->nswitches; s++) {
		const struct emu_switch *sw = &f->switches[s];

		fprintf(out, "\nswitch %s\n  node_desc \"%s\"\n  node_guid ", sw->name, sw->node_desc);
		guid(out, sw->node_guid);
		fprintf(out, " lid %u lmc %u ports %zu\n", sw->lid, sw->lmc, sw->nports);
		for (size_t p = 1; p <= sw->nports; p++) {
			const struct emu_link *lk;
			const struct emu_endpoint *peer;

			if (sw->port_link[p] < 0)
				continue;
			lk = &f->links[sw->port_link[p]];
			peer = lk->a.kind == EMU_EP_SWITCH_PORT && (size_t)lk->a.node == s &&
					       lk->a.port == p
				       ? &lk->b
				       : &lk->a;
			fprintf(out, "  port %zu link %d to ", p, sw->port_link[p]);
			endpoint(out, f, peer);
			fputc('\n', out);
		}
	}
	if (f->nlinks)
		fputc('\n', out);
	for (size_t i = 0; i < f->nlinks; i++) {
		const struct emu_link *lk = &f->links[i];

		fprintf(out, "link %zu ", i);
		endpoint(out, f, &lk->a);
		fputs(" ", out);
		endpoint(out, f, &lk->b);
		fprintf(out, " %s %s ", emu_width_str(lk->width), emu_speed_str(lk->speed));
		faults(out, &lk->faults);
		fputc('\n', out);
	}
	if (f->nnames)
		fputc('\n', out);
	for (size_t i = 0; i < f->nnames; i++) {
		fprintf(out, "name %s ", f->names[i].name);
		addr(out, f->names[i].family, &f->names[i].addr);
		fputc('\n', out);
	}
	emu_fabric_show_daemons(f, out);
}
