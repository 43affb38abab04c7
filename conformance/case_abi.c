/* ABI (spec §2, §15 rows 7-17): struct layouts and constants of the headers this binary was
 * built with. These are compile-time facts, checked at run time so that a binary built against
 * a different rdma-core (or the emulator's own headers) reports the difference. Layout rows are
 * the x86_64 values of the spec. */
#include "config.h"

#include <infiniband/ib.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
/* rdma-core >= v60 headers define RAI_SA and the events 16-19 themselves. */
#if defined(RAI_SA)
#define HEADERS_V60 1
#else
#define HEADERS_V60 0
#endif
#include "rdmaemu/compat.h"

#include <stddef.h>

#include "conformance/conformance.h"

#define OFF(type, field, want) EXPECT_INT(#type "." #field " offset", offsetof(struct type, field), want)
#define SIZE(type, want) EXPECT_INT("sizeof(struct " #type ")", sizeof(struct type), want)
#define VAL(name, want) EXPECT_HEX(#name, (name), want)

static void need_x86_64(void)
{
#if !defined(__x86_64__)
	conf_notrun("layout values of the spec are for x86_64");
#endif
}

static void abi_7(const struct conf_case *c)
{
	need_x86_64();
	conf_stimulus("struct rdma_cm_id");
	SIZE(rdma_cm_id, 416);
	OFF(rdma_cm_id, verbs, 0);
	OFF(rdma_cm_id, channel, 8);
	OFF(rdma_cm_id, context, 16);
	OFF(rdma_cm_id, qp, 24);
	OFF(rdma_cm_id, route, 32);
	OFF(rdma_cm_id, route.addr.src_addr, 32);
	OFF(rdma_cm_id, route.addr.dst_addr, 160);
	OFF(rdma_cm_id, route.addr.addr.ibaddr, 288);
	OFF(rdma_cm_id, route.path_rec, 328);
	OFF(rdma_cm_id, route.num_paths, 336);
	OFF(rdma_cm_id, ps, 344);
	OFF(rdma_cm_id, port_num, 348);
	OFF(rdma_cm_id, event, 352);
	OFF(rdma_cm_id, send_cq_channel, 360);
	OFF(rdma_cm_id, send_cq, 368);
	OFF(rdma_cm_id, recv_cq_channel, 376);
	OFF(rdma_cm_id, recv_cq, 384);
	OFF(rdma_cm_id, srq, 392);
	OFF(rdma_cm_id, pd, 400);
	OFF(rdma_cm_id, qp_type, 408);
	EXPECT_INT("sizeof(struct rdma_route)", sizeof(struct rdma_route), 312);
	EXPECT_INT("sizeof(port_num)", sizeof(((struct rdma_cm_id *)0)->port_num), 1);
	conf_note("size 416, offsets as §2.2");
}

static void abi_8(const struct conf_case *c)
{
	need_x86_64();
	conf_stimulus("struct rdma_cm_event");
	SIZE(rdma_cm_event, 80);
	OFF(rdma_cm_event, id, 0);
	OFF(rdma_cm_event, listen_id, 8);
	OFF(rdma_cm_event, event, 16);
	OFF(rdma_cm_event, status, 20);
	OFF(rdma_cm_event, param, 24);
	EXPECT_INT("sizeof(param)", sizeof(((struct rdma_cm_event *)0)->param), 56);
#if HEADERS_V60
	OFF(rdma_cm_event, param.arg, 24);
	EXPECT_INT("sizeof(param.arg)", sizeof(((struct rdma_cm_event *)0)->param.arg), 8);
	conf_note("size 80, param 24 (v60 headers: param.arg @24)");
#else
	/* v44 headers lack param.arg (a uint64_t at the start of the union since v60): the union
	 * is 8-aligned, so the member the library writes for USER events lives at offset 24. */
	EXPECT_INT("alignof(param)", _Alignof(__typeof__(((struct rdma_cm_event *)0)->param)), 8);
	conf_note("size 80, param 24 (pre-v60 headers: param.arg would be @24)");
#endif
}

static void abi_9(const struct conf_case *c)
{
	need_x86_64();
	conf_stimulus("struct rdma_conn_param, struct rdma_ud_param");
	SIZE(rdma_conn_param, 24);
	OFF(rdma_conn_param, private_data, 0);
	OFF(rdma_conn_param, private_data_len, 8);
	OFF(rdma_conn_param, responder_resources, 9);
	OFF(rdma_conn_param, initiator_depth, 10);
	OFF(rdma_conn_param, flow_control, 11);
	OFF(rdma_conn_param, retry_count, 12);
	OFF(rdma_conn_param, rnr_retry_count, 13);
	OFF(rdma_conn_param, srq, 14);
	OFF(rdma_conn_param, qp_num, 16);
	SIZE(rdma_ud_param, 56);
	OFF(rdma_ud_param, private_data, 0);
	OFF(rdma_ud_param, private_data_len, 8);
	OFF(rdma_ud_param, ah_attr, 16);
	OFF(rdma_ud_param, qp_num, 48);
	OFF(rdma_ud_param, qkey, 52);
	conf_note("24 B / 56 B");
}

static void abi_10(const struct conf_case *c)
{
	need_x86_64();
	conf_stimulus("struct rdma_addrinfo");
	SIZE(rdma_addrinfo, 96);
	OFF(rdma_addrinfo, ai_flags, 0);
	OFF(rdma_addrinfo, ai_family, 4);
	OFF(rdma_addrinfo, ai_qp_type, 8);
	OFF(rdma_addrinfo, ai_port_space, 12);
	OFF(rdma_addrinfo, ai_src_len, 16);
	OFF(rdma_addrinfo, ai_dst_len, 20);
	OFF(rdma_addrinfo, ai_src_addr, 24);
	OFF(rdma_addrinfo, ai_dst_addr, 32);
	OFF(rdma_addrinfo, ai_src_canonname, 40);
	OFF(rdma_addrinfo, ai_dst_canonname, 48);
	OFF(rdma_addrinfo, ai_route_len, 56);
	OFF(rdma_addrinfo, ai_route, 64);
	OFF(rdma_addrinfo, ai_connect_len, 72);
	OFF(rdma_addrinfo, ai_connect, 80);
	OFF(rdma_addrinfo, ai_next, 88);
	EXPECT_INT("sizeof(ai_route_len)", sizeof(((struct rdma_addrinfo *)0)->ai_route_len), 8);
	conf_note("96 B, offsets as §2.2");
}

static void abi_11(const struct conf_case *c)
{
	need_x86_64();
	conf_stimulus("struct sockaddr_ib, AF_IB");
	SIZE(sockaddr_ib, 48);
	OFF(sockaddr_ib, sib_family, 0);
	OFF(sockaddr_ib, sib_pkey, 2);
	OFF(sockaddr_ib, sib_flowinfo, 4);
	OFF(sockaddr_ib, sib_addr, 8);
	OFF(sockaddr_ib, sib_sid, 24);
	OFF(sockaddr_ib, sib_sid_mask, 32);
	OFF(sockaddr_ib, sib_scope_id, 40);
	EXPECT_INT("AF_IB", AF_IB, 27);
	conf_note("48 B, AF_IB %d", AF_IB);
}

static void abi_12(const struct conf_case *c)
{
	static const int want[] = {
		RDMA_CM_EVENT_ADDR_RESOLVED, RDMA_CM_EVENT_ADDR_ERROR, RDMA_CM_EVENT_ROUTE_RESOLVED,
		RDMA_CM_EVENT_ROUTE_ERROR, RDMA_CM_EVENT_CONNECT_REQUEST,
		RDMA_CM_EVENT_CONNECT_RESPONSE, RDMA_CM_EVENT_CONNECT_ERROR,
		RDMA_CM_EVENT_UNREACHABLE, RDMA_CM_EVENT_REJECTED, RDMA_CM_EVENT_ESTABLISHED,
		RDMA_CM_EVENT_DISCONNECTED, RDMA_CM_EVENT_DEVICE_REMOVAL,
		RDMA_CM_EVENT_MULTICAST_JOIN, RDMA_CM_EVENT_MULTICAST_ERROR,
		RDMA_CM_EVENT_ADDR_CHANGE, RDMA_CM_EVENT_TIMEWAIT_EXIT,
	};

	conf_stimulus("enum rdma_cm_event_type");
	for (int i = 0; i < (int)(sizeof want / sizeof want[0]); i++)
		conf_expect(want[i] == i, "event #%d has value %d", i, want[i]);
#if HEADERS_V60
	EXPECT_INT("RDMA_CM_EVENT_ADDRINFO_RESOLVED", RDMA_CM_EVENT_ADDRINFO_RESOLVED, 16);
	EXPECT_INT("RDMA_CM_EVENT_ADDRINFO_ERROR", RDMA_CM_EVENT_ADDRINFO_ERROR, 17);
	EXPECT_INT("RDMA_CM_EVENT_USER", RDMA_CM_EVENT_USER, 18);
	EXPECT_INT("RDMA_CM_EVENT_INTERNAL", RDMA_CM_EVENT_INTERNAL, 19);
	conf_note("0..15, 16..19 from <rdma/rdma_cma.h>");
#else
	EXPECT_INT("ADDRINFO_RESOLVED (compat.h)", RDMAEMU_CM_EVENT_ADDRINFO_RESOLVED, 16);
	EXPECT_INT("ADDRINFO_ERROR (compat.h)", RDMAEMU_CM_EVENT_ADDRINFO_ERROR, 17);
	EXPECT_INT("USER (compat.h)", RDMAEMU_CM_EVENT_USER, 18);
	EXPECT_INT("INTERNAL (compat.h)", RDMAEMU_CM_EVENT_INTERNAL, 19);
	conf_note("0..15; 16..19 from rdmaemu/compat.h (pre-v60 headers)");
#endif
}

static void abi_13(const struct conf_case *c)
{
	conf_stimulus("enum rdma_port_space");
	VAL(RDMA_PS_IPOIB, 0x0002);
	VAL(RDMA_PS_TCP, 0x0106);
	VAL(RDMA_PS_UDP, 0x0111);
	VAL(RDMA_PS_IB, 0x013F);
	VAL(RDMA_IB_IP_PS_MASK, 0xFFFFFFFFFFFF0000ULL);
	VAL(RDMA_IB_IP_PORT_MASK, 0x000000000000FFFFULL);
	VAL(RDMA_IB_IP_PS_TCP, 0x0000000001060000ULL);
	VAL(RDMA_IB_IP_PS_UDP, 0x0000000001110000ULL);
	VAL(RDMA_IB_PS_IB, 0x00000000013F0000ULL);
	conf_note("IPOIB 0x2 TCP 0x106 UDP 0x111 IB 0x13f, IB service-id masks");
}

static void abi_14(const struct conf_case *c)
{
	conf_stimulus("RAI_* flags");
	VAL(RAI_PASSIVE, 0x01);
	VAL(RAI_NUMERICHOST, 0x02);
	VAL(RAI_NOROUTE, 0x04);
	VAL(RAI_FAMILY, 0x08);
	VAL(RAI_SA, 0x10);
	VAL(RAI_DNS, 0x20);
	conf_note("1 2 4 8 0x10 0x20 (SA/DNS %s)", HEADERS_V60 ? "from rdma_cma.h" : "from compat.h");
}

static void abi_15(const struct conf_case *c)
{
	conf_stimulus("rdma_set_option levels and names");
	VAL(RDMA_OPTION_ID, 0);
	VAL(RDMA_OPTION_IB, 1);
	VAL(RDMA_OPTION_ID_TOS, 0);
	VAL(RDMA_OPTION_ID_REUSEADDR, 1);
	VAL(RDMA_OPTION_ID_AFONLY, 2);
	VAL(RDMA_OPTION_ID_ACK_TIMEOUT, 3);
	VAL(RDMA_OPTION_IB_PATH, 1);
	conf_note("levels 0/1; TOS 0 REUSEADDR 1 AFONLY 2 ACK_TIMEOUT 3; IB_PATH 1");
}

static void abi_16(const struct conf_case *c)
{
	conf_stimulus("misc constants");
	VAL(RDMA_UDP_QKEY, 0x01234567);
	VAL(RDMA_MAX_RESP_RES, 0xFF);
	VAL(RDMA_MAX_INIT_DEPTH, 0xFF);
	VAL(RDMA_CM_JOIN_MC_ATTR_ADDRESS, 1);
	VAL(RDMA_CM_JOIN_MC_ATTR_JOIN_FLAGS, 2);
	VAL(RDMA_CM_JOIN_MC_ATTR_RESERVED, 4);
	VAL(RDMA_MC_JOIN_FLAG_FULLMEMBER, 0);
	VAL(RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER, 1);
	VAL(RDMA_MC_JOIN_FLAG_RESERVED, 2);
	SIZE(rdma_cm_join_mc_attr_ex, 16);
	conf_note("QKEY 0x01234567, MAX_RESP_RES/INIT_DEPTH 0xff, join attr 1/2/4, flags 0/1/2");
}

static void abi_17(const struct conf_case *c)
{
	conf_stimulus("struct rdma_event_channel");
	SIZE(rdma_event_channel, 4);
	OFF(rdma_event_channel, fd, 0);
	EXPECT_INT("sizeof(fd)", sizeof(((struct rdma_event_channel *)0)->fd), sizeof(int));
	conf_note("{ int fd; }");
}

#define ABI(row, desc, doc) { "ABI-" #row, "ABI", row, desc, doc, PRE_NONE, NULL, 0, abi_##row, NULL }
static const struct conf_case cases[] = {
	ABI(7, "sizeof(struct rdma_cm_id) 416 and field offsets (x86_64)", NULL),
	ABI(8, "struct rdma_cm_event: 80 B; id 0, listen_id 8, event 16, status 20, param 24", NULL),
	ABI(9, "struct rdma_conn_param 24 B (qp_num @16) / rdma_ud_param 56 B (ah_attr @16, "
	       "qp_num @48, qkey @52)", NULL),
	ABI(10, "struct rdma_addrinfo 96 B, offsets per §2.2", NULL),
	ABI(11, "struct sockaddr_ib 48 B (sid @24, sid_mask @32, scope_id @40); AF_IB == 27", NULL),
	ABI(12, "event enum: ADDR_RESOLVED 0 .. TIMEWAIT_EXIT 15; ADDRINFO_RESOLVED 16, "
		"ADDRINFO_ERROR 17, USER 18, INTERNAL 19", NULL),
	ABI(13, "port spaces IPOIB 0x0002, TCP 0x0106, UDP 0x0111, IB 0x013F", NULL),
	ABI(14, "RAI flags PASSIVE 1, NUMERICHOST 2, NOROUTE 4, FAMILY 8, SA 0x10, DNS 0x20",
	    "rdma_getaddrinfo.3 (2010) lists PASSIVE/NUMERICHOST/NOROUTE/FAMILY only"),
	ABI(15, "option constants: levels ID 0, IB 1; TOS 0, REUSEADDR 1, AFONLY 2, "
		"ACK_TIMEOUT 3; IB_PATH 1", NULL),
	ABI(16, "RDMA_UDP_QKEY 0x01234567; RDMA_MAX_RESP_RES = RDMA_MAX_INIT_DEPTH = 0xFF; join attr "
		"mask 1/2/4; join flags 0/1/2", NULL),
	ABI(17, "struct rdma_event_channel is exactly { int fd; } (4 B)", NULL),
};

const struct conf_area conf_area_abi = { "ABI", cases, sizeof cases / sizeof cases[0] };
