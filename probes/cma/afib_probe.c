/* afib_probe: what a librdmacm + kernel pair does with AF_IB addresses.
 * Built against the system's rdma-core headers and library only, so the same binary runs on
 * the real stack and on the emulator:
 *   cc -O2 -o afib_probe probes/cma/afib_probe.c -lrdmacm -libverbs
 *   scripts/rxe-vm run --copy afib_probe -- /opt/rdmaemu/afib_probe
 *   RDMAEMU_FABRIC=fixtures/rxe-ref.fabric LD_LIBRARY_PATH=<build>/lib/.libs:<build>/emu/verbs/.libs:<build>/emu/.libs ./afib_probe
 * Each line is one call and its answer; docs/cma.md "AF_IB" quotes the real stack's. */
#include <errno.h>
#include <endian.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
#include <rdma/rdma_cma.h>
#include <infiniband/ib.h>


static void show_sib(const char *what, const struct sockaddr *sa)
{
	const struct sockaddr_ib *sib = (const struct sockaddr_ib *)sa;
	char gid[INET6_ADDRSTRLEN];

	if (sa->sa_family != AF_IB) {
		printf("  %s family %d\n", what, sa->sa_family);
		return;
	}
	inet_ntop(AF_INET6, sib->sib_addr.sib_raw, gid, sizeof gid);
	printf("  %s AF_IB gid %s pkey 0x%04x sid 0x%016llx mask 0x%016llx\n", what, gid,
	       ntohs(sib->sib_pkey), (unsigned long long)be64toh(sib->sib_sid),
	       (unsigned long long)be64toh(sib->sib_sid_mask));
}

static struct sockaddr_ib mk_sib(const union ibv_gid *gid, uint64_t sid, uint64_t mask)
{
	struct sockaddr_ib sib;

	memset(&sib, 0, sizeof sib);
	sib.sib_family = AF_IB;
	if (gid)
		memcpy(sib.sib_addr.sib_raw, gid->raw, 16);
	sib.sib_sid = htobe64(sid);
	sib.sib_sid_mask = htobe64(mask);
	return sib;
}

static void bind_case(const char *name, enum rdma_port_space ps, struct sockaddr_ib sib)
{
	struct rdma_cm_id *id;
	int ret;

	if (rdma_create_id(NULL, &id, NULL, ps)) {
		printf("%s: create_id errno %d\n", name, errno);
		return;
	}
	errno = 0;
	ret = rdma_bind_addr(id, (struct sockaddr *)&sib);
	printf("%s: bind ret %d errno %d (%s)\n", name, ret, ret ? errno : 0,
	       ret ? strerror(errno) : "ok");
	if (!ret) {
		show_sib("src", rdma_get_local_addr(id));
		show_sib("dst", rdma_get_peer_addr(id));
		printf("  verbs %s port_num %u src_port %u\n",
		       id->verbs ? ibv_get_device_name(id->verbs->device) : "(none)", id->port_num,
		       ntohs(rdma_get_src_port(id)));
	}
	rdma_destroy_id(id);
}

static void resolve_case(const char *name, struct sockaddr *src, struct sockaddr *dst)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;
	int ret;

	if (!ch || rdma_create_id(ch, &id, NULL, RDMA_PS_IB)) {
		printf("%s: setup errno %d\n", name, errno);
		return;
	}
	errno = 0;
	ret = rdma_resolve_addr(id, src, dst, 2000);
	printf("%s: resolve_addr ret %d errno %d (%s)\n", name, ret, ret ? errno : 0,
	       ret ? strerror(errno) : "ok");
	if (!ret && !rdma_get_cm_event(ch, &ev)) {
		printf("  event %s status %d\n", rdma_event_str(ev->event), ev->status);
		rdma_ack_cm_event(ev);
		show_sib("src", rdma_get_local_addr(id));
		show_sib("dst", rdma_get_peer_addr(id));
		{
			char sg[INET6_ADDRSTRLEN], dg[INET6_ADDRSTRLEN];

			inet_ntop(AF_INET6, id->route.addr.addr.ibaddr.sgid.raw, sg, sizeof sg);
			inet_ntop(AF_INET6, id->route.addr.addr.ibaddr.dgid.raw, dg, sizeof dg);
			printf("  ibaddr sgid %s dgid %s pkey 0x%04x\n", sg, dg,
			       ntohs(id->route.addr.addr.ibaddr.pkey));
		}
		ret = rdma_resolve_route(id, 2000);
		printf("  resolve_route ret %d errno %d\n", ret, ret ? errno : 0);
		if (!ret && !rdma_get_cm_event(ch, &ev)) {
			printf("  event %s status %d\n", rdma_event_str(ev->event), ev->status);
			rdma_ack_cm_event(ev);
		}
		printf("  verbs %s port_num %u\n",
		       id->verbs ? ibv_get_device_name(id->verbs->device) : "(none)", id->port_num);
	}
	rdma_destroy_id(id);
	rdma_destroy_event_channel(ch);
}

int main(void)
{
	struct ibv_context **devs = rdma_get_devices(NULL);
	union ibv_gid g0, g1;
	struct rdma_cm_id *a, *b;
	struct sockaddr_in sin;
	struct sockaddr_ib sib;

	if (!devs || !devs[0] || ibv_query_gid(devs[0], 1, 0, &g0) ||
	    ibv_query_gid(devs[0], 1, 1, &g1)) {
		printf("no device\n");
		return 1;
	}
	printf("device %s\n", ibv_get_device_name(devs[0]->device));

	bind_case("probe ps_ib any sid=TCP mask=PS", RDMA_PS_IB,
		  mk_sib(NULL, RDMA_IB_IP_PS_TCP, RDMA_IB_IP_PS_MASK));
	bind_case("ps_ib any sid=0 mask=0", RDMA_PS_IB, mk_sib(NULL, 0, 0));
	bind_case("ps_ib any sid=IB|7000 mask=~0", RDMA_PS_IB,
		  mk_sib(NULL, RDMA_IB_PS_IB | 7000, ~0ULL));
	bind_case("ps_tcp any sid=TCP|7001 mask=PS", RDMA_PS_TCP,
		  mk_sib(NULL, RDMA_IB_IP_PS_TCP | 7001, RDMA_IB_IP_PS_MASK));
	bind_case("ps_udp any sid=TCP mask=PS", RDMA_PS_UDP,
		  mk_sib(NULL, RDMA_IB_IP_PS_TCP, RDMA_IB_IP_PS_MASK));
	bind_case("ps_tcp any sid=IB mask=PS", RDMA_PS_TCP,
		  mk_sib(NULL, RDMA_IB_PS_IB, RDMA_IB_IP_PS_MASK));
	bind_case("ps_ipoib any sid=TCP mask=PS", RDMA_PS_IPOIB,
		  mk_sib(NULL, RDMA_IB_IP_PS_TCP, RDMA_IB_IP_PS_MASK));
	bind_case("ps_ib gid0 sid=TCP|7002 mask=PS", RDMA_PS_IB,
		  mk_sib(&g0, RDMA_IB_IP_PS_TCP | 7002, RDMA_IB_IP_PS_MASK));
	bind_case("ps_ib gid1 sid=TCP|7003 mask=PS", RDMA_PS_IB,
		  mk_sib(&g1, RDMA_IB_IP_PS_TCP | 7003, RDMA_IB_IP_PS_MASK));

	sib = mk_sib(&g0, RDMA_IB_IP_PS_TCP | 7004, RDMA_IB_IP_PS_MASK);
	sib.sib_pkey = htons(0xffff);
	bind_case("ps_ib gid0 pkey ffff sid=TCP|7004 mask=PS", RDMA_PS_IB, sib);

	/* one port space for AF_IB TCP sids and AF_INET TCP ids */
	if (!rdma_create_id(NULL, &a, NULL, RDMA_PS_TCP) &&
	    !rdma_create_id(NULL, &b, NULL, RDMA_PS_TCP)) {
		int r1, r2;

		sib = mk_sib(NULL, RDMA_IB_IP_PS_TCP | 7010, ~0ULL);
		r1 = rdma_bind_addr(a, (struct sockaddr *)&sib);
		memset(&sin, 0, sizeof sin);
		sin.sin_family = AF_INET;
		sin.sin_port = htons(7010);
		errno = 0;
		r2 = rdma_bind_addr(b, (struct sockaddr *)&sin);
		printf("shared tcp ps: AF_IB 7010 ret %d, then AF_INET any:7010 ret %d errno %d\n",
		       r1, r2, r2 ? errno : 0);
		rdma_destroy_id(b);
		rdma_destroy_id(a);
	}

	sib = mk_sib(NULL, RDMA_IB_IP_PS_TCP | 7021, ~0ULL);
	resolve_case("resolve dst AF_IB any", NULL, (struct sockaddr *)&sib);
	sib.sib_addr.sib_raw[15] = 1;
	resolve_case("resolve dst AF_IB ::1", NULL, (struct sockaddr *)&sib);
	sib = mk_sib(&g0, RDMA_IB_IP_PS_TCP | 7022, ~0ULL);
	sib.sib_pkey = htons(0xffff);
	resolve_case("resolve dst AF_IB gid0 pkey ffff", NULL, (struct sockaddr *)&sib);
	sib = mk_sib(&g1, RDMA_IB_IP_PS_TCP | 7023, ~0ULL);
	sib.sib_pkey = htons(0xffff);
	resolve_case("resolve dst AF_IB gid1 pkey ffff", NULL, (struct sockaddr *)&sib);
	sib.sib_pkey = htons(0x7fff);
	resolve_case("resolve dst AF_IB gid1 pkey 7fff", NULL, (struct sockaddr *)&sib);
	sib.sib_pkey = htons(0xffff);
	sib.sib_addr.sib_raw[15] ^= 0x55;
	resolve_case("resolve dst AF_IB ::ffff:192.0.2.x (not own) pkey ffff", NULL,
		     (struct sockaddr *)&sib);
	sib = mk_sib(&g0, RDMA_IB_IP_PS_TCP | 7024, ~0ULL);
	sib.sib_pkey = htons(0xffff);
	sib.sib_addr.sib_raw[15] ^= 0x55;
	resolve_case("resolve dst AF_IB fe80::other pkey ffff", NULL, (struct sockaddr *)&sib);
	sib = mk_sib(&g1, RDMA_IB_IP_PS_TCP | 7020, RDMA_IB_IP_PS_MASK);
	resolve_case("resolve dst AF_IB gid1", NULL, (struct sockaddr *)&sib);
	memset(&sin, 0, sizeof sin);
	sin.sin_family = AF_INET;
	inet_pton(AF_INET, "192.0.2.1", &sin.sin_addr);
	resolve_case("resolve src 192.0.2.1 dst AF_IB gid1", (struct sockaddr *)&sin,
		     (struct sockaddr *)&sib);
	resolve_case("resolve dst 192.0.2.1 (IP id after probe)", NULL, (struct sockaddr *)&sin);
	/* an AF_IB multicast group on a RoCE port (the id resolved to its own GID 1) */
	{
		struct rdma_event_channel *ch = rdma_create_event_channel();
		struct rdma_cm_event *ev;
		struct rdma_cm_id *id;
		struct sockaddr_ib grp;
		int ret;

		sib = mk_sib(&g1, RDMA_IB_IP_PS_UDP | 7030, ~0ULL);
		sib.sib_pkey = htons(0xffff);
		if (ch && !rdma_create_id(ch, &id, NULL, RDMA_PS_UDP) &&
		    !rdma_resolve_addr(id, NULL, (struct sockaddr *)&sib, 2000) &&
		    !rdma_get_cm_event(ch, &ev)) {
			rdma_ack_cm_event(ev);
			memset(&grp, 0, sizeof grp);
			grp.sib_family = AF_IB;
			grp.sib_pkey = htons(0xffff);
			grp.sib_addr.sib_raw[0] = 0xff;
			grp.sib_addr.sib_raw[1] = 0x12;
			grp.sib_addr.sib_raw[15] = 0x42;
			errno = 0;
			ret = rdma_join_multicast(id, (struct sockaddr *)&grp, NULL);
			printf("join AF_IB group on RoCE: ret %d errno %d\n", ret, ret ? errno : 0);
			if (!ret && !rdma_get_cm_event(ch, &ev)) {
				printf("  event %s status %d\n", rdma_event_str(ev->event), ev->status);
				rdma_ack_cm_event(ev);
			}
		}
	}
	rdma_free_devices(devs);
	return 0;
}
