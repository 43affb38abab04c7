/* MAD and SA headers, the SA record tables with their packers and unpackers, and match. */
#include <stddef.h>
#include <string.h>

#include "emu/ib/mad.h"
#include "emu/hca/pkt.h" /* emu_be*_put/get */

void emu_mad_hdr_put(uint8_t *p, const struct emu_mad_hdr *h)
{
	p[0] = h->base_version;
	p[1] = h->mgmt_class;
	p[2] = h->class_version;
	p[3] = h->method;
	emu_be16_put(p + 4, h->status);
	emu_be16_put(p + 6, h->class_specific);
	emu_be64_put(p + 8, h->tid);
	emu_be16_put(p + 16, h->attr_id);
	emu_be16_put(p + 18, 0);
	emu_be32_put(p + 20, h->attr_mod);
}

void emu_mad_hdr_get(const uint8_t *p, struct emu_mad_hdr *h)
{
	h->base_version = p[0];
	h->mgmt_class = p[1];
	h->class_version = p[2];
	h->method = p[3];
	h->status = emu_be16_get(p + 4);
	h->class_specific = emu_be16_get(p + 6);
	h->tid = emu_be64_get(p + 8);
	h->attr_id = emu_be16_get(p + 16);
	h->attr_mod = emu_be32_get(p + 20);
}

void emu_rmpp_hdr_put(uint8_t *p, const struct emu_rmpp_hdr *h)
{
	p[0] = h->version;
	p[1] = h->type;
	p[2] = (uint8_t)((h->resp_time << 3) | (h->flags & 7));
	p[3] = h->status;
	emu_be32_put(p + 4, h->data1);
	emu_be32_put(p + 8, h->data2);
}

void emu_rmpp_hdr_get(const uint8_t *p, struct emu_rmpp_hdr *h)
{
	h->version = p[0];
	h->type = p[1];
	h->resp_time = p[2] >> 3;
	h->flags = p[2] & 7;
	h->status = p[3];
	h->data1 = emu_be32_get(p + 4);
	h->data2 = emu_be32_get(p + 8);
}

void emu_sa_hdr_put(uint8_t *p, const struct emu_sa_hdr *h)
{
	emu_be64_put(p, h->sm_key);
	emu_be16_put(p + 8, h->attr_offset);
	emu_be16_put(p + 10, 0);
	emu_be64_put(p + 12, h->comp_mask);
}

void emu_sa_hdr_get(const uint8_t *p, struct emu_sa_hdr *h)
{
	h->sm_key = emu_be64_get(p);
	h->attr_offset = emu_be16_get(p + 8);
	h->comp_mask = emu_be64_get(p + 12);
}

/* ---- names ---- */

const char *emu_mad_status_name(uint16_t status)
{
	static const char *const sa[] = {
		[EMU_SA_ERR_NO_RESOURCES] = "ERR_NO_RESOURCES",
		[EMU_SA_ERR_REQ_INVALID] = "ERR_REQ_INVALID",
		[EMU_SA_ERR_NO_RECORDS] = "ERR_NO_RECORDS",
		[EMU_SA_ERR_TOO_MANY_RECORDS] = "ERR_TOO_MANY_RECORDS",
		[EMU_SA_ERR_REQ_INVALID_GID] = "ERR_REQ_INVALID_GID",
		[EMU_SA_ERR_REQ_INSUFFICIENT_COMPONENTS] = "ERR_REQ_INSUFFICIENT_COMPONENTS",
		[EMU_SA_ERR_REQ_DENIED] = "ERR_REQ_DENIED",
		[EMU_SA_ERR_PRIO_SUGGESTED] = "ERR_PRIO_SUGGESTED",
	};
	static const char *const code[8] = { "SUCCESS",	       "BAD_VERSION",
					     "UNSUP_METHOD",   "UNSUP_METHOD_ATTR",
					     "RESERVED_4",     "RESERVED_5",
					     "RESERVED_6",     "INVALID_FIELD" };
	unsigned cls = (status >> 8) & 0x7f;

	if (cls)
		return cls < sizeof(sa) / sizeof(sa[0]) && sa[cls] ? sa[cls] : "ERR_UNKNOWN";
	if ((status >> 2) & 7)
		return code[(status >> 2) & 7];
	if (status & EMU_MAD_STATUS_BUSY)
		return "BUSY";
	if (status & EMU_MAD_STATUS_REDIRECT)
		return "REDIRECT";
	return "SUCCESS";
}

const char *emu_mad_method_name(uint8_t method)
{
	switch (method) {
	case EMU_MAD_METHOD_GET: return "Get";
	case EMU_MAD_METHOD_SET: return "Set";
	case EMU_MAD_METHOD_GET_RESP: return "GetResp";
	case EMU_MAD_METHOD_SEND: return "Send";
	case EMU_MAD_METHOD_TRAP: return "Trap";
	case EMU_MAD_METHOD_REPORT: return "Report";
	case EMU_MAD_METHOD_REPORT_RESP: return "ReportResp";
	case EMU_MAD_METHOD_TRAP_REPRESS: return "TrapRepress";
	case EMU_MAD_METHOD_GET_TABLE: return "GetTable";
	case EMU_MAD_METHOD_GET_TABLE_RESP: return "GetTableResp";
	case EMU_MAD_METHOD_GET_TRACE_TABLE: return "GetTraceTable";
	case EMU_MAD_METHOD_GET_MULTI: return "GetMulti";
	case EMU_MAD_METHOD_DELETE: return "Delete";
	case EMU_MAD_METHOD_DELETE_RESP: return "DeleteResp";
	default: return "Unknown";
	}
}

const char *emu_sa_attr_name(uint16_t attr_id)
{
	static const struct {
		uint16_t id;
		const char *name;
	} t[] = {
		{ EMU_SA_ATTR_CLASS_PORT_INFO, "ClassPortInfo" },
		{ EMU_SA_ATTR_NOTICE, "Notice" },
		{ EMU_SA_ATTR_INFORM_INFO, "InformInfo" },
		{ EMU_SA_ATTR_NODE_RECORD, "NodeRecord" },
		{ EMU_SA_ATTR_PORT_INFO_RECORD, "PortInfoRecord" },
		{ EMU_SA_ATTR_SL2VL_RECORD, "SLtoVLMappingTableRecord" },
		{ EMU_SA_ATTR_SWITCH_INFO_RECORD, "SwitchInfoRecord" },
		{ EMU_SA_ATTR_LFT_RECORD, "LinearForwardingTableRecord" },
		{ EMU_SA_ATTR_LINK_RECORD, "LinkRecord" },
		{ EMU_SA_ATTR_GUID_INFO_RECORD, "GuidInfoRecord" },
		{ EMU_SA_ATTR_SERVICE_RECORD, "ServiceRecord" },
		{ EMU_SA_ATTR_PKEY_TABLE_RECORD, "P_KeyTableRecord" },
		{ EMU_SA_ATTR_PATH_RECORD, "PathRecord" },
		{ EMU_SA_ATTR_VL_ARB_RECORD, "VLArbitrationTableRecord" },
		{ EMU_SA_ATTR_MCMEMBER_RECORD, "MCMemberRecord" },
		{ EMU_SA_ATTR_TRACE_RECORD, "TraceRecord" },
		{ EMU_SA_ATTR_MULTIPATH_RECORD, "MultiPathRecord" },
		{ EMU_SA_ATTR_INFORM_INFO_RECORD, "InformInfoRecord" },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (t[i].id == attr_id)
			return t[i].name;
	return "Unknown";
}

/* ---- bit fields (emu_bits_get/put, emu/hca/pkt.h) ---- */

uint64_t emu_mad_bits_get(const uint8_t *rec, unsigned bit_off, unsigned bits)
{
	return emu_bits_get(rec, bit_off, bits);
}

void emu_mad_bits_put(uint8_t *rec, unsigned bit_off, unsigned bits, uint64_t v)
{
	emu_bits_put(rec, bit_off, bits, v);
}

/* ---- records ----
 * Each record's rows (below) are expanded into its field table (names, component mask bits;
 * match and the dissectors read it) and into its own straight-line packer and unpacker, which
 * the compiler folds to a load or store and a shift per field. A walk over compiled rows cost
 * ~20 instructions a field, ~2.5 k a connection through the route, the REQ's path and the
 * passive side's path (45.25 k -> 42.9 k instructions a connection in bench/cm_bench). */

/* Row kinds: X(kind, T, member, bit offset, bits, component mask bit)
 *   FLD    an unsigned integer member
 *   SID    the 64-bit ServiceID, selected by either of mask bits comp and comp + 1
 *   BYTES  bits / 8 bytes copied as they are
 *   RSV    reserved bits (the member name is a placeholder)
 * and X(ARRAY, T, member, bit offset, bits of one element, elements, comp). */
#define MF_SPAN(type, member, kind_, bitoff, nbits, n, comp, span)                           \
	{ .name = #member, .kind = (kind_), .bit_off = (bitoff), .bits = (nbits),            \
	  .count = (n), .comp_bit = (comp), .comp_span = (span),                             \
	  .struct_off = offsetof(type, member), .struct_size = sizeof(((type *)0)->member) }
#define TAB(kind, ...) TAB_##kind(__VA_ARGS__)
#define TAB_FLD(T, member, off, bits, comp) MF_SPAN(T, member, EMU_MF_UINT, off, bits, 1, comp, 1),
#define TAB_SID(T, member, off, bits, comp) MF_SPAN(T, member, EMU_MF_UINT, off, bits, 1, comp, 2),
#define TAB_BYTES(T, member, off, bits, comp) \
	MF_SPAN(T, member, EMU_MF_BYTES, off, bits, 1, comp, 1),
#define TAB_RSV(T, member, off, nb, comp)                                                    \
	{ .name = "reserved", .kind = EMU_MF_RESERVED, .bit_off = (off), .bits = (nb),       \
	  .count = 1, .comp_bit = (comp), .comp_span = 1 },
#define TAB_ARRAY(T, member, off, nb, n, comp)                                               \
	{ .name = #member, .kind = EMU_MF_UINT, .bit_off = (off), .bits = (nb),              \
	  .count = (n), .comp_bit = (comp), .comp_span = 1,                                  \
	  .struct_off = offsetof(T, member), .struct_size = sizeof(((T *)0)->member[0]) },

#define PACK(kind, ...) PACK_##kind(__VA_ARGS__)
#define PACK_FLD(T, member, off, bits, comp) emu_bits_put(w, off, bits, s->member);
#define PACK_SID PACK_FLD
#define PACK_BYTES(T, member, off, bits, comp) memcpy(w + (off) / 8, s->member, (bits) / 8);
#define PACK_RSV(T, member, off, bits, comp)
#define PACK_ARRAY(T, member, off, bits, n, comp)           \
	for (unsigned i_ = 0; i_ < (n); i_++)               \
		emu_bits_put(w, (off) + i_ * (bits), bits, s->member[i_]);

#define UNPACK(kind, ...) UNPACK_##kind(__VA_ARGS__)
#define UNPACK_FLD(T, member, off, bits, comp) \
	s->member = (__typeof__(s->member))emu_bits_get(w, off, bits);
#define UNPACK_SID UNPACK_FLD
#define UNPACK_BYTES(T, member, off, bits, comp) memcpy(s->member, w + (off) / 8, (bits) / 8);
#define UNPACK_RSV(T, member, off, bits, comp)
#define UNPACK_ARRAY(T, member, off, bits, n, comp) \
	for (unsigned i_ = 0; i_ < (n); i_++)       \
		s->member[i_] = (__typeof__(s->member[0]))emu_bits_get(w, (off) + i_ * (bits), bits);

#define RECORD(lc, T, ROWS)                                                  \
	static const struct emu_mad_field lc##_fields[] = { ROWS(TAB, T) }; \
	static void lc##_pack(const void *sv, uint8_t *w)                    \
	{                                                                    \
		const T *s = sv;                                             \
		ROWS(PACK, T)                                                \
	}                                                                    \
	static void lc##_unpack(const uint8_t *w, void *sv)                  \
	{                                                                    \
		T *s = sv;                                                   \
		ROWS(UNPACK, T)                                              \
	}

/* Table 206. ServiceID is one 64-bit field selected by either of mask bits 0 (ServiceID8MSB)
 * and 1 (ServiceID56LSB): a query gives both in practice (the CM sets both). */
#define PATH_REC_ROWS(X, T)                                \
	X(SID, T, service_id, 0, 64, 0)                    \
	X(BYTES, T, dgid, 64, 128, 2)                      \
	X(BYTES, T, sgid, 192, 128, 3)                     \
	X(FLD, T, dlid, 320, 16, 4)                        \
	X(FLD, T, slid, 336, 16, 5)                        \
	X(FLD, T, raw_traffic, 352, 1, 6)                  \
	X(RSV, T, rsv, 353, 3, 7)                          \
	X(FLD, T, flow_label, 356, 20, 8)                  \
	X(FLD, T, hop_limit, 376, 8, 9)                    \
	X(FLD, T, traffic_class, 384, 8, 10)               \
	X(FLD, T, reversible, 392, 1, 11)                  \
	X(FLD, T, numb_path, 393, 7, 12)                   \
	X(FLD, T, pkey, 400, 16, 13)                       \
	X(FLD, T, qos_class, 416, 12, 14)                  \
	X(FLD, T, sl, 428, 4, 15)                          \
	X(FLD, T, mtu_selector, 432, 2, 16)                \
	X(FLD, T, mtu, 434, 6, 17)                         \
	X(FLD, T, rate_selector, 440, 2, 18)               \
	X(FLD, T, rate, 442, 6, 19)                        \
	X(FLD, T, packet_life_time_selector, 448, 2, 20)   \
	X(FLD, T, packet_life_time, 450, 6, 21)            \
	X(FLD, T, preference, 456, 8, 22)                  \
	X(RSV, T, rsv, 464, 48, EMU_MF_NO_COMP)

#define MCMEMBER_REC_ROWS(X, T)                            \
	X(BYTES, T, mgid, 0, 128, 0)                       \
	X(BYTES, T, port_gid, 128, 128, 1)                 \
	X(FLD, T, qkey, 256, 32, 2)                        \
	X(FLD, T, mlid, 288, 16, 3)                        \
	X(FLD, T, mtu_selector, 304, 2, 4)                 \
	X(FLD, T, mtu, 306, 6, 5)                          \
	X(FLD, T, traffic_class, 312, 8, 6)                \
	X(FLD, T, pkey, 320, 16, 7)                        \
	X(FLD, T, rate_selector, 336, 2, 8)                \
	X(FLD, T, rate, 338, 6, 9)                         \
	X(FLD, T, packet_life_time_selector, 344, 2, 10)   \
	X(FLD, T, packet_life_time, 346, 6, 11)            \
	X(FLD, T, sl, 352, 4, 12)                          \
	X(FLD, T, flow_label, 356, 20, 13)                 \
	X(FLD, T, hop_limit, 376, 8, 14)                   \
	X(FLD, T, scope, 384, 4, 15)                       \
	X(FLD, T, join_state, 388, 4, 16)                  \
	X(FLD, T, proxy_join, 392, 1, 17)                  \
	X(RSV, T, rsv, 393, 23, EMU_MF_NO_COMP)

/* Table 186 with NodeInfo (table 146) inline: one component mask bit per NodeInfo field. */
#define NODE_REC_ROWS(X, T)                                \
	X(FLD, T, lid, 0, 16, 0)                           \
	X(RSV, T, rsv, 16, 16, 1)                          \
	X(FLD, T, base_version, 32, 8, 2)                  \
	X(FLD, T, class_version, 40, 8, 3)                 \
	X(FLD, T, node_type, 48, 8, 4)                     \
	X(FLD, T, num_ports, 56, 8, 5)                     \
	X(FLD, T, sys_guid, 64, 64, 6)                     \
	X(FLD, T, node_guid, 128, 64, 7)                   \
	X(FLD, T, port_guid, 192, 64, 8)                   \
	X(FLD, T, partition_cap, 256, 16, 9)               \
	X(FLD, T, device_id, 272, 16, 10)                  \
	X(FLD, T, revision, 288, 32, 11)                   \
	X(FLD, T, local_port_num, 320, 8, 12)              \
	X(FLD, T, vendor_id, 328, 24, 13)                  \
	X(BYTES, T, node_desc, 352, 512, 14)

#define SERVICE_REC_ROWS(X, T)                             \
	X(FLD, T, id, 0, 64, 0)                            \
	X(BYTES, T, gid, 64, 128, 1)                       \
	X(FLD, T, pkey, 192, 16, 2)                        \
	X(RSV, T, rsv, 208, 16, 3)                         \
	X(FLD, T, lease, 224, 32, 4)                       \
	X(BYTES, T, key, 256, 128, 5)                      \
	X(BYTES, T, name, 384, 512, 6)                     \
	X(ARRAY, T, data8, 896, 8, 16, 7)                  \
	X(ARRAY, T, data16, 1024, 16, 8, 23)               \
	X(ARRAY, T, data32, 1152, 32, 4, 31)               \
	X(ARRAY, T, data64, 1280, 64, 2, 35)

/* Table 187 with PortInfo (table 148) 32 bits in: libibmad's fields.c gives the PortInfo bit
 * offsets, OpenSM's IB_PIR_COMPMASK_* the mask bits. */
#define PORTINFO_REC_ROWS(X, T)                            \
	X(FLD, T, lid, 0, 16, 0)                           \
	X(FLD, T, port_num, 16, 8, 1)                      \
	X(FLD, T, options, 24, 8, 2)                       \
	X(FLD, T, m_key, 32, 64, 3)                        \
	X(FLD, T, gid_prefix, 96, 64, 4)                   \
	X(FLD, T, base_lid, 160, 16, 5)                    \
	X(FLD, T, sm_lid, 176, 16, 6)                      \
	X(FLD, T, cap_mask, 192, 32, 7)                    \
	X(FLD, T, diag_code, 224, 16, 8)                   \
	X(FLD, T, m_key_lease, 240, 16, 9)                 \
	X(FLD, T, local_port, 256, 8, 10)                  \
	X(FLD, T, width_enabled, 264, 8, 11)               \
	X(FLD, T, width_supported, 272, 8, 12)             \
	X(FLD, T, width_active, 280, 8, 13)                \
	X(FLD, T, speed_supported, 288, 4, 14)             \
	X(FLD, T, port_state, 292, 4, 15)                  \
	X(FLD, T, phys_state, 296, 4, 16)                  \
	X(FLD, T, link_down_def, 300, 4, 17)               \
	X(FLD, T, m_key_prot, 304, 2, 18)                  \
	X(RSV, T, rsv, 306, 3, 19)                         \
	X(FLD, T, lmc, 309, 3, 20)                         \
	X(FLD, T, speed_active, 312, 4, 21)                \
	X(FLD, T, speed_enabled, 316, 4, 22)               \
	X(FLD, T, neighbor_mtu, 320, 4, 23)                \
	X(FLD, T, sm_sl, 324, 4, 24)                       \
	X(FLD, T, vl_cap, 328, 4, 25)                      \
	X(FLD, T, init_type, 332, 4, 26)                   \
	X(FLD, T, vl_high_limit, 336, 8, 27)               \
	X(FLD, T, vl_arb_high_cap, 344, 8, 28)             \
	X(FLD, T, vl_arb_low_cap, 352, 8, 29)              \
	X(FLD, T, init_type_reply, 360, 4, 30)             \
	X(FLD, T, mtu_cap, 364, 4, 31)                     \
	X(FLD, T, vl_stall_count, 368, 3, 32)              \
	X(FLD, T, hoq_life, 371, 5, 33)                    \
	X(FLD, T, oper_vls, 376, 4, 34)                    \
	X(FLD, T, part_enf_in, 380, 1, 35)                 \
	X(FLD, T, part_enf_out, 381, 1, 36)                \
	X(FLD, T, filter_raw_in, 382, 1, 37)               \
	X(FLD, T, filter_raw_out, 383, 1, 38)              \
	X(FLD, T, m_key_viol, 384, 16, 39)                 \
	X(FLD, T, p_key_viol, 400, 16, 40)                 \
	X(FLD, T, q_key_viol, 416, 16, 41)                 \
	X(FLD, T, guid_cap, 432, 8, 42)                    \
	X(FLD, T, client_rereg, 440, 1, 43)                \
	X(FLD, T, mcast_trap_supp, 441, 2, 44)             \
	X(FLD, T, subnet_timeout, 443, 5, 45)              \
	X(RSV, T, rsv, 448, 3, 46)                         \
	X(FLD, T, resp_time, 451, 5, 47)                   \
	X(FLD, T, local_phys_err, 456, 4, 48)              \
	X(FLD, T, overrun_err, 460, 4, 49)                 \
	X(FLD, T, max_credit_hint, 464, 16, 50)            \
	X(RSV, T, rsv, 480, 8, 51)                         \
	X(FLD, T, round_trip, 488, 24, 52)                 \
	X(FLD, T, cap_mask2, 512, 16, 53)                  \
	X(FLD, T, speed_ext_active, 528, 4, 54)            \
	X(FLD, T, speed_ext_supported, 532, 4, 55)         \
	X(RSV, T, rsv, 536, 3, 56)                         \
	X(FLD, T, speed_ext_enabled, 539, 5, 57)

/* Table 192 with SMInfo (table 153): the record ends in the middle of its last 8-byte word. */
#define SMINFO_REC_ROWS(X, T)                              \
	X(FLD, T, lid, 0, 16, 0)                           \
	X(RSV, T, rsv, 16, 16, 1)                          \
	X(FLD, T, guid, 32, 64, 2)                         \
	X(FLD, T, sm_key, 96, 64, 3)                       \
	X(FLD, T, act_count, 160, 32, 4)                   \
	X(FLD, T, priority, 192, 4, 5)                     \
	X(FLD, T, sm_state, 196, 4, 6)

RECORD(path_rec, struct emu_sa_path_rec, PATH_REC_ROWS)
RECORD(mcmember_rec, struct emu_sa_mcmember_rec, MCMEMBER_REC_ROWS)
RECORD(service_rec, struct emu_sa_service_rec, SERVICE_REC_ROWS)
RECORD(node_rec, struct emu_sa_node_rec, NODE_REC_ROWS)
RECORD(portinfo_rec, struct emu_sa_portinfo_rec, PORTINFO_REC_ROWS)
RECORD(sminfo_rec, struct emu_sa_sminfo_rec, SMINFO_REC_ROWS)

void emu_mad_record_pack(const struct emu_mad_record_desc *d, const void *s, uint8_t *wire)
{
	memset(wire, 0, d->wire_len);
	d->pack(s, wire);
}

void emu_mad_record_unpack(const struct emu_mad_record_desc *d, const uint8_t *wire, void *s)
{
	memset(s, 0, d->struct_size);
	d->unpack(wire, s);
}

static bool bits_equal(const uint8_t *a, const uint8_t *b, unsigned off, unsigned bits)
{
	if (off % 8 == 0 && bits % 8 == 0)
		return !memcmp(a + off / 8, b + off / 8, bits / 8);
	return emu_bits_get(a, off, bits) == emu_bits_get(b, off, bits);
}

/* Calls fn for each element of each field whose component bit is in mask, in field order,
 * while fn returns true; false when fn stopped it. */
static bool each_compared(const struct emu_mad_record_desc *d, uint64_t mask,
			  bool (*fn)(const struct emu_mad_field *f, unsigned e, void *arg), void *arg)
{
	for (size_t i = 0; i < d->nfields; i++) {
		const struct emu_mad_field *f = &d->fields[i];

		if (f->comp_bit == EMU_MF_NO_COMP)
			continue;
		for (unsigned e = 0; e < f->count; e++) {
			unsigned bit = (unsigned)f->comp_bit + e * f->comp_span;
			uint64_t sel = ((1ull << f->comp_span) - 1) << bit;

			if ((mask & sel) && !fn(f, e, arg))
				return false;
		}
	}
	return true;
}

struct match_arg {
	const uint8_t *query, *rec;
};

static bool element_equal(const struct emu_mad_field *f, unsigned e, void *arg)
{
	const struct match_arg *m = arg;

	return bits_equal(m->query, m->rec, f->bit_off + e * f->bits, f->bits);
}

bool emu_mad_record_match(const struct emu_mad_record_desc *d, const uint8_t *query,
			  const uint8_t *rec, uint64_t mask, uint64_t skip)
{
	struct match_arg m = { query, rec };

	return each_compared(d, mask & ~skip, element_equal, &m);
}

static bool element_bits(const struct emu_mad_field *f, unsigned e, void *arg)
{
	uint8_t *bits = arg;

	for (unsigned b = f->bit_off + e * f->bits; b < f->bit_off + (e + 1) * f->bits; b++)
		bits[b / 8] |= (uint8_t)(0x80u >> (b % 8));
	return true;
}

void emu_mad_record_comp_bits(const struct emu_mad_record_desc *d, uint64_t mask, uint64_t skip,
			      uint8_t *bits)
{
	memset(bits, 0, d->wire_len);
	(void)each_compared(d, mask & ~skip, element_bits, bits);
}

bool emu_mad_bits_agree(const uint8_t *a, const uint8_t *b, const uint8_t *bits, size_t len)
{
	size_t i = 0;
	uint64_t diff = 0;

	/* a word at a time, no early exit: this is a scan's inner loop */
	for (; i + 8 <= len; i += 8) {
		uint64_t x, y, m;

		memcpy(&x, a + i, 8);
		memcpy(&y, b + i, 8);
		memcpy(&m, bits + i, 8);
		diff |= (x ^ y) & m;
	}
	for (; i < len; i++)
		diff |= (uint64_t)((a[i] ^ b[i]) & bits[i]);
	return !diff;
}

const struct emu_mad_field *emu_mad_field_find(const struct emu_mad_record_desc *d,
					       const char *name)
{
	for (size_t i = 0; i < d->nfields; i++)
		if (!strcmp(d->fields[i].name, name))
			return &d->fields[i];
	return NULL;
}

/* ---- the tables ---- */

#define N(a) (sizeof(a) / sizeof((a)[0]))
const struct emu_mad_record_desc emu_sa_path_rec_desc = {
	"PathRecord", EMU_SA_ATTR_PATH_RECORD, 64, 8, sizeof(struct emu_sa_path_rec),
	path_rec_fields, N(path_rec_fields), path_rec_pack, path_rec_unpack
};
const struct emu_mad_record_desc emu_sa_mcmember_rec_desc = {
	"MCMemberRecord", EMU_SA_ATTR_MCMEMBER_RECORD, 52, 7, sizeof(struct emu_sa_mcmember_rec),
	mcmember_rec_fields, N(mcmember_rec_fields), mcmember_rec_pack, mcmember_rec_unpack
};
const struct emu_mad_record_desc emu_sa_service_rec_desc = {
	"ServiceRecord", EMU_SA_ATTR_SERVICE_RECORD, 176, 22, sizeof(struct emu_sa_service_rec),
	service_rec_fields, N(service_rec_fields), service_rec_pack, service_rec_unpack
};

const struct emu_mad_record_desc emu_sa_node_rec_desc = {
	"NodeRecord", EMU_SA_ATTR_NODE_RECORD, 108, 14, sizeof(struct emu_sa_node_rec),
	node_rec_fields, N(node_rec_fields), node_rec_pack, node_rec_unpack
};

const struct emu_mad_record_desc emu_sa_portinfo_rec_desc = {
	"PortInfoRecord", EMU_SA_ATTR_PORT_INFO_RECORD, 68, 9, sizeof(struct emu_sa_portinfo_rec),
	portinfo_rec_fields, N(portinfo_rec_fields), portinfo_rec_pack, portinfo_rec_unpack
};

const struct emu_mad_record_desc emu_sa_sminfo_rec_desc = {
	"SMInfoRecord", EMU_SA_ATTR_SMINFO_RECORD, 25, 4, sizeof(struct emu_sa_sminfo_rec),
	sminfo_rec_fields, N(sminfo_rec_fields), sminfo_rec_pack, sminfo_rec_unpack
};

const struct emu_mad_record_desc *emu_sa_record_desc(uint16_t attr_id)
{
	switch (attr_id) {
	case EMU_SA_ATTR_NODE_RECORD: return &emu_sa_node_rec_desc;
	case EMU_SA_ATTR_PORT_INFO_RECORD: return &emu_sa_portinfo_rec_desc;
	case EMU_SA_ATTR_SMINFO_RECORD: return &emu_sa_sminfo_rec_desc;
	case EMU_SA_ATTR_PATH_RECORD: return &emu_sa_path_rec_desc;
	case EMU_SA_ATTR_MCMEMBER_RECORD: return &emu_sa_mcmember_rec_desc;
	case EMU_SA_ATTR_SERVICE_RECORD: return &emu_sa_service_rec_desc;
	default: return NULL;
	}
}

/* ---- rates ---- */

/* Nominal data rates of the IBTA rate codes (table 205 and its extensions, as ibv_rate). */
static const unsigned rate_mbps[] = {
	[2] = 2500,    [3] = 10000,   [4] = 30000,   [5] = 5000,    [6] = 20000,
	[7] = 40000,   [8] = 60000,   [9] = 80000,   [10] = 120000, [11] = 14000,
	[12] = 56000,  [13] = 112000, [14] = 168000, [15] = 25000,  [16] = 100000,
	[17] = 200000, [18] = 300000, [19] = 28000,  [20] = 50000,  [21] = 400000,
	[22] = 600000,
};

unsigned emu_sa_rate_mbps(uint8_t rate)
{
	return rate < N(rate_mbps) ? rate_mbps[rate] : 0;
}

uint8_t emu_sa_rate_from_mbps(unsigned mbps)
{
	uint8_t best = 0;

	for (uint8_t r = 0; r < N(rate_mbps); r++)
		if (rate_mbps[r] && rate_mbps[r] <= mbps &&
		    (!best || rate_mbps[r] > rate_mbps[best]))
			best = r;
	return best;
}
