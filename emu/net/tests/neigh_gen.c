/* Writes captures of the neighbour exchanges for neigh-tshark.sh: ARP and IPv6 ND between
 * rxe-ref2's A and B (DIR/neigh-eth.pcap), IPoIB ARP on ib.fabric through its switch
 * (DIR/neigh-ib.pcap, DLT_USER0 for Wireshark 4.0, see emu/sim/pcap.h), IPv6 ND over IPoIB on
 * ib.fabric with the SA joins before it (DIR/neigh-ib6.pcap). Prints what it resolved.
 * Usage: neigh_gen DIR */
#include "config.h"

#include "emu/sim/pcap.h"
#include "emu/sim/topology.h"
#include "emu/sim/wire.h"
#include "neigh_test.h"

static int tap(struct emu_engine *e, const char *dir, const char *name, int ll, int dlt,
	       struct emu_pcap **out)
{
	char path[1100];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	*out = emu_pcap_open_dlt(path, ll, dlt);
	if (!*out)
		return -1;
	return emu_wire_set_tap(emu_topology_wire(emu_engine_topology(e)), ll, *out);
}

/* Ends a capture run: the tap off, the capture closed (1 when it failed), the engine gone. */
static int untap(struct emu_engine *e, int ll, struct emu_pcap *p)
{
	int bad;

	emu_wire_set_tap(emu_topology_wire(emu_engine_topology(e)), ll, NULL);
	bad = emu_pcap_close(p) ? 1 : 0;
	nt_detach(e);
	return bad;
}

static int show(const char *what, int ret, const struct nt_res *o)
{
	printf("%s: ret %d calls %d status %d at %llu\n", what, ret, o->calls, o->r.status,
	       (unsigned long long)o->at);
	return ret || o->calls != 1 || o->r.status ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct emu_engine *e;
	struct emu_pcap *p;
	struct nt_res o;
	int bad = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: neigh_gen DIR\n");
		return 2;
	}
	e = nt_attach("rxe-ref2.fabric", "A");
	if (!e || tap(e, argv[1], "neigh-eth.pcap", EMU_LL_ETHERNET, -1, &p))
		return 1;
	bad |= show("arp 192.0.2.66", nt_resolve(e, 0, "192.0.2.66", 0, 2 * SEC, 3 * SEC, &o), &o);
	bad |= show("nd fe80::ff:fe00:202",
		    nt_resolve(e, 0, "fe80::ff:fe00:202", 2, 2 * SEC, 3 * SEC, &o), &o);
	nt_resolve(e, 0, "192.0.2.77", 0, 2 * SEC, 3 * SEC, &o); /* unanswered: 3 requests */
	printf("arp 192.0.2.77: status %d at %llu\n", o.r.status, (unsigned long long)o.at);
	bad |= untap(e, EMU_LL_ETHERNET, p);

	e = nt_attach("ib.fabric", "ib-a");
	if (!e || tap(e, argv[1], "neigh-ib.pcap", EMU_LL_INFINIBAND, 147, &p))
		return 1;
	bad |= show("ipoib arp 192.0.2.130",
		    nt_resolve(e, 0, "192.0.2.130", 0, 2 * SEC, 3 * SEC, &o), &o);
	bad |= untap(e, EMU_LL_INFINIBAND, p);

	e = nt_attach("ib.fabric", "ib-a");
	if (!e || tap(e, argv[1], "neigh-ib6.pcap", EMU_LL_INFINIBAND, 147, &p))
		return 1;
	bad |= show("ipoib nd 2001:db8:0:81::b",
		    nt_resolve(e, 0, "2001:db8:0:81::b", 0, 2 * SEC, 3 * SEC, &o), &o);
	bad |= untap(e, EMU_LL_INFINIBAND, p);
	return bad;
}
