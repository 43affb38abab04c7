/* CM MAD layouts as data, and each message's packer and unpacker expanded from them. Offsets and widths are
 * IBTA vol. 1 tables 106-120 (release 1.4, with the ECE vendor-ID bits), the same numbers as
 * the kernel's include/rdma/ibta_vol1_c12.h; the ECE placement follows the kernel's
 * cm_format_req / cm_format_rep / cm_format_sidr_rep (drivers/infiniband/core/cm.c). */
#include <stdbool.h>
#include <string.h>

#include "emu/ib/cm_mad.h"
#include "emu/hca/pkt.h"

/* ---- names ---- */

static const char *const attr_names[] = {
	[EMU_CM_ATTR_CLASSPORTINFO] = "ClassPortInfo",
	[EMU_CM_ATTR_REQ] = "REQ",
	[EMU_CM_ATTR_MRA] = "MRA",
	[EMU_CM_ATTR_REJ] = "REJ",
	[EMU_CM_ATTR_REP] = "REP",
	[EMU_CM_ATTR_RTU] = "RTU",
	[EMU_CM_ATTR_DREQ] = "DREQ",
	[EMU_CM_ATTR_DREP] = "DREP",
	[EMU_CM_ATTR_SIDR_REQ] = "SIDR_REQ",
	[EMU_CM_ATTR_SIDR_REP] = "SIDR_REP",
	[EMU_CM_ATTR_LAP] = "LAP",
	[EMU_CM_ATTR_APR] = "APR",
};

const char *emu_cm_attr_name(uint16_t attr_id)
{
	return attr_id < sizeof(attr_names) / sizeof(attr_names[0]) ? attr_names[attr_id] : NULL;
}

const char *emu_cm_msg_response_name(unsigned v)
{
	static const char *const n[] = { "REQ", "REP", "OTHER" };
	return v < 3 ? n[v] : NULL;
}

/* Enumerator names and the kernel's ibcm_rej_reason_strs (cm.c) side by side. */
static const struct {
	const char *name, *msg;
} rej_reasons[EMU_CM_REJ_REASON_MAX + 1] = {
	[1] = { "NO_QP", "no QP" },
	[2] = { "NO_EEC", "no EEC" },
	[3] = { "NO_RESOURCES", "no resources" },
	[4] = { "TIMEOUT", "timeout" },
	[5] = { "UNSUPPORTED", "unsupported" },
	[6] = { "INVALID_COMM_ID", "invalid comm ID" },
	[7] = { "INVALID_COMM_INSTANCE", "invalid comm instance" },
	[8] = { "INVALID_SERVICE_ID", "invalid service ID" },
	[9] = { "INVALID_TRANSPORT_TYPE", "invalid transport type" },
	[10] = { "STALE_CONN", "stale conn" },
	[11] = { "RDC_NOT_EXIST", "RDC not exist" },
	[12] = { "INVALID_GID", "invalid GID" },
	[13] = { "INVALID_LID", "invalid LID" },
	[14] = { "INVALID_SL", "invalid SL" },
	[15] = { "INVALID_TRAFFIC_CLASS", "invalid traffic class" },
	[16] = { "INVALID_HOP_LIMIT", "invalid hop limit" },
	[17] = { "INVALID_PACKET_RATE", "invalid packet rate" },
	[18] = { "INVALID_ALT_GID", "invalid alt GID" },
	[19] = { "INVALID_ALT_LID", "invalid alt LID" },
	[20] = { "INVALID_ALT_SL", "invalid alt SL" },
	[21] = { "INVALID_ALT_TRAFFIC_CLASS", "invalid alt traffic class" },
	[22] = { "INVALID_ALT_HOP_LIMIT", "invalid alt hop limit" },
	[23] = { "INVALID_ALT_PACKET_RATE", "invalid alt packet rate" },
	[24] = { "PORT_CM_REDIRECT", "port CM redirect" },
	[25] = { "PORT_REDIRECT", "port redirect" },
	[26] = { "INVALID_MTU", "invalid MTU" },
	[27] = { "INSUFFICIENT_RESP_RESOURCES", "insufficient resp resources" },
	[28] = { "CONSUMER_DEFINED", "consumer defined" },
	[29] = { "INVALID_RNR_RETRY", "invalid RNR retry" },
	[30] = { "DUPLICATE_LOCAL_COMM_ID", "duplicate local comm ID" },
	[31] = { "INVALID_CLASS_VERSION", "invalid class version" },
	[32] = { "INVALID_FLOW_LABEL", "invalid flow label" },
	[33] = { "INVALID_ALT_FLOW_LABEL", "invalid alt flow label" },
	[35] = { "VENDOR_OPTION_NOT_SUPPORTED", "vendor option is not supported" },
};

const char *emu_cm_rej_reason_name(unsigned reason)
{
	return reason <= EMU_CM_REJ_REASON_MAX ? rej_reasons[reason].name : NULL;
}

const char *emu_cm_rej_reason_msg(unsigned reason)
{
	const char *m = reason <= EMU_CM_REJ_REASON_MAX ? rej_reasons[reason].msg : NULL;
	return m ? m : "unrecognized reason";
}

const char *emu_cm_sidr_status_name(unsigned status)
{
	static const char *const n[] = { "SUCCESS", "UNSUPPORTED", "REJECT", "NO_QP", "REDIRECT",
					 "UNSUPPORTED_VERSION" };
	return status < sizeof(n) / sizeof(n[0]) ? n[status] : NULL;
}

/* ---- layouts ---- */

/* Each message is a list of rows, X(kind, name, member, ...), expanded three times: into the
 * public table (emu_cm_layout), into the message's packer and into its unpacker. Packer and
 * unpacker are straight-line code that the compiler folds to a load or store, a shift and a
 * mask per field: the walk over compiled rows they replace cost ~45 instructions a field, ~6.5 k
 * of a connection's ~50 k in bench/cm_bench. The rows stay the single source.
 *
 *   F(name, member, byte, bit, width)           member bits [0, width) at bit `bit` of byte
 *                                               `byte` of the MAD data (0 = the MSB)
 *   FMAX(name, member, byte, bit, width, max)   same; values above max are invalid
 *   P(name, member, byte, bit, width, shift, cover)  one part of a member split over several
 *                                               fields (the REP's vendor ID): its bits
 *                                               [shift, shift + width); all parts together
 *                                               carry the member's low `cover` bits
 *   G(name, member, byte)                       a byte array (a GID), copied whole
 *   ARR(name, member, byte, count)              a byte array of which member `count` says
 *                                               how many bytes are used */

/* The path block of a REQ at `o` (52 primary, 96 alternate; IBTA table 106). */
#define REQ_PATH(X, pfx, p, o)                                         \
	X(F, pfx " Local Port LID", p.local_lid, o, 0, 16)             \
	X(F, pfx " Remote Port LID", p.remote_lid, o + 2, 0, 16)       \
	X(G, pfx " Local Port GID", p.local_gid, o + 4)                \
	X(G, pfx " Remote Port GID", p.remote_gid, o + 20)             \
	X(F, pfx " Flow Label", p.flow_label, o + 36, 0, 20)           \
	X(F, pfx " Packet Rate", p.packet_rate, o + 39, 2, 6)          \
	X(F, pfx " Traffic Class", p.traffic_class, o + 40, 0, 8)      \
	X(F, pfx " Hop Limit", p.hop_limit, o + 41, 0, 8)              \
	X(F, pfx " SL", p.sl, o + 42, 0, 4)                            \
	X(F, pfx " Subnet Local", p.subnet_local, o + 42, 4, 1)        \
	X(F, pfx " Local ACK Timeout", p.local_ack_timeout, o + 43, 0, 5)

#define REQ_ROWS(X)                                                                    \
	X(F, "Local Communication ID", local_comm_id, 0, 0, 32)                        \
	X(F, "Vendor ID", vendor_id, 5, 0, 24) /* ECE, kernel CM_REQ_VENDOR_ID */      \
	X(F, "ServiceID", service_id, 8, 0, 64)                                        \
	X(F, "Local CA GUID", local_ca_guid, 16, 0, 64)                                \
	X(F, "Local Q_Key", qkey, 28, 0, 32)                                           \
	X(F, "Local QPN", local_qpn, 32, 0, 24)                                        \
	X(F, "Responder Resources", responder_resources, 35, 0, 8)                     \
	X(F, "Local EECN", local_eecn, 36, 0, 24)                                      \
	X(F, "Initiator Depth", initiator_depth, 39, 0, 8)                             \
	X(F, "Remote EECN", remote_eecn, 40, 0, 24)                                    \
	X(F, "Remote CM Response Timeout", remote_cm_response_timeout, 43, 0, 5)       \
	X(F, "Transport Service Type", transport_service_type, 43, 5, 2)               \
	X(F, "End-to-End Flow Control", end_to_end_flow_control, 43, 7, 1)             \
	X(F, "Starting PSN", starting_psn, 44, 0, 24)                                  \
	X(F, "Local CM Response Timeout", local_cm_response_timeout, 47, 0, 5)         \
	X(F, "Retry Count", retry_count, 47, 5, 3)                                     \
	X(F, "Partition Key", pkey, 48, 0, 16)                                         \
	X(F, "Path Packet Payload MTU", path_mtu, 50, 0, 4)                            \
	X(F, "RDC Exists", rdc_exists, 50, 4, 1)                                       \
	X(F, "RNR Retry Count", rnr_retry_count, 50, 5, 3)                             \
	X(F, "Max CM Retries", max_cm_retries, 51, 0, 4)                               \
	X(F, "SRQ", srq, 51, 4, 1)                                                     \
	X(F, "Extended Transport Type", extended_transport_type, 51, 5, 3)             \
	REQ_PATH(X, "Primary", primary, 52)                                            \
	REQ_PATH(X, "Alternate", alternate, 96)                                        \
	X(F, "SAP Supported", sap_supported, 139, 5, 1)

#define MRA_ROWS(X)                                                                    \
	X(F, "Local Communication ID", local_comm_id, 0, 0, 32)                        \
	X(F, "Remote Communication ID", remote_comm_id, 4, 0, 32)                      \
	X(FMAX, "Message MRAed", message_mraed, 8, 0, 2, EMU_CM_MSG_RESPONSE_OTHER)    \
	X(F, "Service Timeout", service_timeout, 9, 0, 5)

#define REJ_ROWS(X)                                                                        \
	X(F, "Local Communication ID", local_comm_id, 0, 0, 32)                            \
	X(F, "Remote Communication ID", remote_comm_id, 4, 0, 32)                          \
	X(FMAX, "Message REJected", message_rejected, 8, 0, 2, EMU_CM_MSG_RESPONSE_OTHER)  \
	X(FMAX, "Reject Info Length", reject_info_len, 9, 0, 7, EMU_CM_REJ_ARI_LENGTH)     \
	X(F, "Reason", reason, 10, 0, 16)                                                  \
	X(ARR, "ARI", ari, 12, reject_info_len)

#define REP_ROWS(X)                                                                        \
	X(F, "Local Communication ID", local_comm_id, 0, 0, 32)                            \
	X(F, "Remote Communication ID", remote_comm_id, 4, 0, 32)                          \
	X(F, "Local Q_Key", qkey, 8, 0, 32)                                                \
	X(F, "Local QPN", local_qpn, 12, 0, 24)                                            \
	X(P, "Vendor ID[23:16]", vendor_id, 15, 0, 8, 16, 24) /* ECE, CM_REP_VENDOR_ID_H */ \
	X(F, "Local EE Context Number", local_eecn, 16, 0, 24)                             \
	X(P, "Vendor ID[15:8]", vendor_id, 19, 0, 8, 8, 24) /* CM_REP_VENDOR_ID_M */       \
	X(F, "Starting PSN", starting_psn, 20, 0, 24)                                      \
	X(P, "Vendor ID[7:0]", vendor_id, 23, 0, 8, 0, 24) /* CM_REP_VENDOR_ID_L */        \
	X(F, "Responder Resources", responder_resources, 24, 0, 8)                         \
	X(F, "Initiator Depth", initiator_depth, 25, 0, 8)                                 \
	X(F, "Target ACK Delay", target_ack_delay, 26, 0, 5)                               \
	X(F, "Failover Accepted", failover_accepted, 26, 5, 2)                             \
	X(F, "End-to-End Flow Control", end_to_end_flow_control, 26, 7, 1)                 \
	X(F, "RNR Retry Count", rnr_retry_count, 27, 0, 3)                                 \
	X(F, "SRQ", srq, 27, 3, 1)                                                         \
	X(F, "Local CA GUID", local_ca_guid, 28, 0, 64)

#define RTU_ROWS(X)                                               \
	X(F, "Local Communication ID", local_comm_id, 0, 0, 32)   \
	X(F, "Remote Communication ID", remote_comm_id, 4, 0, 32)

#define DREQ_ROWS(X)                                              \
	X(F, "Local Communication ID", local_comm_id, 0, 0, 32)   \
	X(F, "Remote Communication ID", remote_comm_id, 4, 0, 32) \
	X(F, "Remote QPN/EECN", remote_qpn_eecn, 8, 0, 24)

#define DREP_ROWS RTU_ROWS /* same two IDs, IBTA table 113 */

#define SIDR_REQ_ROWS(X)                                \
	X(F, "RequestID", request_id, 0, 0, 32)         \
	X(F, "Partition Key", pkey, 4, 0, 16)           \
	X(F, "ServiceID", service_id, 8, 0, 64)

/* The kernel writes (vendor_id >> 8) & 0xff into the 16-bit CM_SIDR_REP_VENDOR_ID_H at bytes
 * 6-7, so byte 6 stays zero and SIDR_REP carries 16 bits of the vendor ID. */
#define SIDR_REP_ROWS(X)                                                                     \
	X(F, "RequestID", request_id, 0, 0, 32)                                              \
	X(F, "Status", sidr_status, 4, 0, 8)                                                 \
	X(FMAX, "Additional Information Length", info_len, 5, 0, 8,                          \
	  EMU_CM_SIDR_REP_INFO_LENGTH)                                                       \
	X(P, "Vendor ID[15:8]", vendor_id, 7, 0, 8, 8, 16)                                   \
	X(F, "QPN", qpn, 8, 0, 24)                                                           \
	X(P, "Vendor ID[7:0]", vendor_id, 11, 0, 8, 0, 16)                                   \
	X(F, "ServiceID", service_id, 12, 0, 64)                                             \
	X(F, "Q_Key", qkey, 20, 0, 32)                                                       \
	X(ARR, "Additional Information", info, 24, info_len)

#define LAP_ROWS(X)                                                                         \
	X(F, "Local Communication ID", local_comm_id, 0, 0, 32)                             \
	X(F, "Remote Communication ID", remote_comm_id, 4, 0, 32)                           \
	X(F, "Remote QPN/EECN", remote_qpn_eecn, 12, 0, 24)                                 \
	X(F, "Remote CM Response Timeout", remote_cm_response_timeout, 15, 0, 5)            \
	X(F, "Alternate Local Port LID", alternate.local_lid, 20, 0, 16)                    \
	X(F, "Alternate Remote Port LID", alternate.remote_lid, 22, 0, 16)                  \
	X(G, "Alternate Local Port GID", alternate.local_gid, 24)                           \
	X(G, "Alternate Remote Port GID", alternate.remote_gid, 40)                         \
	X(F, "Alternate Flow Label", alternate.flow_label, 56, 0, 20)                       \
	X(F, "Alternate Traffic Class", alternate.traffic_class, 59, 0, 8)                  \
	X(F, "Alternate Hop Limit", alternate.hop_limit, 60, 0, 8)                          \
	X(F, "Alternate Packet Rate", alternate.packet_rate, 61, 2, 6)                      \
	X(F, "Alternate SL", alternate.sl, 62, 0, 4)                                        \
	X(F, "Alternate Subnet Local", alternate.subnet_local, 62, 4, 1)                    \
	X(F, "Alternate Local ACK Timeout", alternate.local_ack_timeout, 63, 0, 5)

#define APR_ROWS(X)                                                                         \
	X(F, "Local Communication ID", local_comm_id, 0, 0, 32)                             \
	X(F, "Remote Communication ID", remote_comm_id, 4, 0, 32)                           \
	X(FMAX, "Additional Information Length", info_len, 8, 0, 8, EMU_CM_APR_INFO_LENGTH) \
	X(F, "AP Status", ap_status, 9, 0, 8)                                               \
	X(ARR, "Additional Information", info, 12, info_len)

/* -- the public table: one struct emu_cm_field a row -- */

#define MEMBER(mem) offsetof(struct emu_cm_msg, mem), sizeof(((struct emu_cm_msg *)0)->mem)
#define PUB(kind, ...) PUB_##kind(__VA_ARGS__)
#define PUB_F(name, mem, byte, bit, width) { name, MEMBER(mem), byte, bit, width, 0 },
#define PUB_FMAX(name, mem, byte, bit, width, max) PUB_F(name, mem, byte, bit, width)
#define PUB_P(name, mem, byte, bit, width, shift, cover) \
	{ name, MEMBER(mem), byte, bit, width, shift },
#define PUB_G(name, mem, byte) \
	{ name, MEMBER(mem), byte, 0, 8 * sizeof(((struct emu_cm_msg *)0)->mem), 0 },
#define PUB_ARR(name, mem, byte, count) PUB_G(name, mem, byte)

/* -- the packer -- */

/* false: the value has bits above `cover` or exceeds max (0: no maximum). The arguments but v
 * are constants: what is left is a range test, a shift and a store. */
static inline __attribute__((always_inline)) bool put_field(uint8_t *d, unsigned byte,
							     unsigned bit, unsigned width,
							     unsigned shift, uint64_t max,
							     unsigned cover, uint64_t v)
{
	if ((cover < 64 && v >> cover) || (max && v > max))
		return false;
	emu_bits_put(d, 8 * byte + bit, width, v >> shift);
	return true;
}

#define PACK(kind, ...) PACK_##kind(__VA_ARGS__)
#define PACK_ONE(name, mem, byte, bit, width, shift, max, cover)           \
	if (!put_field(data, byte, bit, width, shift, max, cover, m->mem)) \
		return fail(bad_field, name, -EMU_CM_ERANGE);
#define PACK_F(name, mem, byte, bit, width) PACK_ONE(name, mem, byte, bit, width, 0, 0, width)
#define PACK_FMAX(name, mem, byte, bit, width, max) \
	PACK_ONE(name, mem, byte, bit, width, 0, max, width)
#define PACK_P(name, mem, byte, bit, width, shift, cover) \
	PACK_ONE(name, mem, byte, bit, width, shift, 0, cover)
#define PACK_G(name, mem, byte) memcpy(data + (byte), m->mem, sizeof(m->mem));
#define PACK_ARR(name, mem, byte, count)                              \
	if (m->count > sizeof(m->mem))                                \
		return fail(bad_field, name, -EMU_CM_EINFOLEN);       \
	memcpy(data + (byte), m->mem, m->count);

/* -- the unpacker: the message starts zeroed -- */

#define get_field(d, byte, bit, width) emu_bits_get(d, 8 * (byte) + (bit), width)

/* A count past its array, or a message-response value 3 (reserved). */
#define RANGE_ERR(max) ((max) == EMU_CM_MSG_RESPONSE_OTHER ? -EMU_CM_ERANGE : -EMU_CM_EINFOLEN)

#define UNPACK(kind, ...) UNPACK_##kind(__VA_ARGS__)
#define UNPACK_F(name, mem, byte, bit, width) \
	m->mem = (__typeof__(m->mem))get_field(data, byte, bit, width);
#define UNPACK_FMAX(name, mem, byte, bit, width, max)               \
	if (get_field(data, byte, bit, width) > (max))              \
		return fail(bad_field, name, RANGE_ERR(max));       \
	UNPACK_F(name, mem, byte, bit, width)
#define UNPACK_P(name, mem, byte, bit, width, shift, cover) \
	m->mem |= (__typeof__(m->mem))(get_field(data, byte, bit, width) << (shift));
#define UNPACK_G(name, mem, byte) memcpy(m->mem, data + (byte), sizeof(m->mem));
#define UNPACK_ARR(name, mem, byte, count) UNPACK_G(name, mem, byte)

static int fail(const char **bad_field, const char *name, int err)
{
	if (bad_field)
		*bad_field = name;
	return err;
}

typedef int pack_fn(const struct emu_cm_msg *m, uint8_t *data, const char **bad_field);
typedef int unpack_fn(const uint8_t *data, struct emu_cm_msg *m, const char **bad_field);

#define CODEC(lc, ROWS)                                                                     \
	static int pack_##lc(const struct emu_cm_msg *m, uint8_t *data, const char **bad_field) \
	{                                                                                   \
		ROWS(PACK)                                                                  \
		return 0;                                                                   \
	}                                                                                   \
	static int unpack_##lc(const uint8_t *data, struct emu_cm_msg *m,                   \
			       const char **bad_field)                                      \
	{                                                                                   \
		ROWS(UNPACK)                                                                \
		return 0;                                                                   \
	}                                                                                   \
	static const struct emu_cm_field lc##_fields[] = { ROWS(PUB){ NULL, 0, 0, 0, 0, 0, 0 } };

CODEC(req, REQ_ROWS)
CODEC(mra, MRA_ROWS)
CODEC(rej, REJ_ROWS)
CODEC(rep, REP_ROWS)
CODEC(rtu, RTU_ROWS)
CODEC(dreq, DREQ_ROWS)
CODEC(drep, DREP_ROWS)
CODEC(sidr_req, SIDR_REQ_ROWS)
CODEC(sidr_rep, SIDR_REP_ROWS)
CODEC(lap, LAP_ROWS)
CODEC(apr, APR_ROWS)

/* One row per message: its public layout (where the private data lies) and its codec. Every
 * message fills the 232-byte MAD data exactly: private_off + private_size == 232. */
struct layout {
	struct emu_cm_layout pub;
	pack_fn *pack;
	unpack_fn *unpack;
};

#define LAYOUT(attr, name, lc, off, size) \
	{ { EMU_CM_ATTR_##attr, name, lc##_fields, off, size }, pack_##lc, unpack_##lc }

static const struct layout layouts[] = {
	LAYOUT(REQ, "REQ", req, 140, EMU_CM_REQ_PRIVATE_DATA_SIZE),
	LAYOUT(MRA, "MRA", mra, 10, EMU_CM_MRA_PRIVATE_DATA_SIZE),
	LAYOUT(REJ, "REJ", rej, 84, EMU_CM_REJ_PRIVATE_DATA_SIZE),
	LAYOUT(REP, "REP", rep, 36, EMU_CM_REP_PRIVATE_DATA_SIZE),
	LAYOUT(RTU, "RTU", rtu, 8, EMU_CM_RTU_PRIVATE_DATA_SIZE),
	LAYOUT(DREQ, "DREQ", dreq, 12, EMU_CM_DREQ_PRIVATE_DATA_SIZE),
	LAYOUT(DREP, "DREP", drep, 8, EMU_CM_DREP_PRIVATE_DATA_SIZE),
	LAYOUT(SIDR_REQ, "SIDR_REQ", sidr_req, 16, EMU_CM_SIDR_REQ_PRIVATE_DATA_SIZE),
	LAYOUT(SIDR_REP, "SIDR_REP", sidr_rep, 96, EMU_CM_SIDR_REP_PRIVATE_DATA_SIZE),
	LAYOUT(LAP, "LAP", lap, 64, EMU_CM_LAP_PRIVATE_DATA_SIZE),
	LAYOUT(APR, "APR", apr, 84, EMU_CM_APR_PRIVATE_DATA_SIZE),
};
#define NLAYOUTS (sizeof(layouts) / sizeof(layouts[0]))

/* The layouts are in attribute order from REQ (0x0010) on: an index, not a scan. */
static const struct layout *find(uint16_t attr_id)
{
	unsigned i = (unsigned)attr_id - EMU_CM_ATTR_REQ;

	return i < NLAYOUTS && layouts[i].pub.attr_id == attr_id ? &layouts[i] : NULL;
}

const struct emu_cm_layout *emu_cm_layout(uint16_t attr_id)
{
	const struct layout *l = find(attr_id);

	return l ? &l->pub : NULL;
}

int emu_cm_private_data_size(uint16_t attr_id)
{
	const struct layout *l = find(attr_id);
	return l ? l->pub.private_size : -1;
}

/* ---- pack / unpack ---- */

const char *emu_cm_strerror(int err)
{
	switch (err < 0 ? -err : err) {
	case EMU_CM_ETRUNC: return "CM MAD shorter than 256 bytes";
	case EMU_CM_ECLASS: return "not a CM MAD (base version or management class)";
	case EMU_CM_EVERSION: return "CM class version not 2";
	case EMU_CM_EMETHOD: return "CM method not Send";
	case EMU_CM_EATTR: return "CM attribute without a message layout";
	case EMU_CM_ERANGE: return "CM field value out of range";
	case EMU_CM_EPRIVLEN: return "CM private data longer than the message allows";
	case EMU_CM_EINFOLEN: return "CM ARI/additional information length over 72";
	case EINVAL: return "invalid argument";
	default: return "unknown CM error";
	}
}

int emu_cm_pack_ex(uint16_t attr_id, const struct emu_cm_msg *m, uint8_t mad[EMU_MAD_LEN],
		   const char **bad_field)
{
	const struct layout *l = find(attr_id);
	int rc;

	if (bad_field)
		*bad_field = NULL;
	if (!m || !mad)
		return -EINVAL;
	if (!l)
		return -EMU_CM_EATTR;
	if (m->private_data_len > l->pub.private_size)
		return fail(bad_field, "PrivateData", -EMU_CM_EPRIVLEN);

	memset(mad, 0, EMU_MAD_LEN);
	emu_mad_hdr_put(mad, &(struct emu_mad_hdr){
					.base_version = EMU_MAD_BASE_VERSION,
					.mgmt_class = EMU_CM_MGMT_CLASS,
					.class_version = EMU_CM_CLASS_VERSION,
					.method = EMU_MAD_METHOD_SEND,
					.status = m->status,
					.tid = m->tid,
					.attr_id = attr_id,
					.attr_mod = m->attr_mod,
				});
	rc = l->pack(m, mad + EMU_MAD_HDR_LEN, bad_field);
	if (rc)
		return rc;
	memcpy(mad + EMU_MAD_HDR_LEN + l->pub.private_off, m->private_data, m->private_data_len);
	return 0;
}

int emu_cm_unpack_ex(const uint8_t *mad, size_t len, uint16_t *attr_id, struct emu_cm_msg *m,
		     const char **bad_field)
{
	struct emu_mad_hdr h;
	const struct layout *l;
	int rc;

	if (bad_field)
		*bad_field = NULL;
	if (!mad || !m)
		return -EINVAL;
	if (len < EMU_MAD_LEN)
		return -EMU_CM_ETRUNC;
	emu_mad_hdr_get(mad, &h);
	if (attr_id)
		*attr_id = h.attr_id;
	if (h.base_version != EMU_MAD_BASE_VERSION || h.mgmt_class != EMU_CM_MGMT_CLASS)
		return -EMU_CM_ECLASS;
	if (h.class_version != EMU_CM_CLASS_VERSION)
		return -EMU_CM_EVERSION;
	if (h.method != EMU_MAD_METHOD_SEND)
		return -EMU_CM_EMETHOD;
	l = find(h.attr_id);
	if (!l)
		return -EMU_CM_EATTR;

	memset(m, 0, sizeof(*m));
	m->status = h.status;
	m->tid = h.tid;
	m->attr_mod = h.attr_mod;
	rc = l->unpack(mad + EMU_MAD_HDR_LEN, m, bad_field);
	if (rc)
		return rc;
	m->private_data_len = l->pub.private_size;
	memcpy(m->private_data, mad + EMU_MAD_HDR_LEN + l->pub.private_off, l->pub.private_size);
	return 0;
}

/* ---- the CMA IP header (annex A11; cma.c cma_format_hdr / cma_get_net_info) ---- */

int emu_cma_hdr_pack(uint8_t p[EMU_CMA_HDR_LEN], const struct emu_cma_hdr *h)
{
	if (!p || !h || h->cma_version != EMU_CMA_VERSION)
		return -EINVAL;
	if (h->ip_version != 4 && h->ip_version != 6)
		return -EAFNOSUPPORT;
	memset(p, 0, EMU_CMA_HDR_LEN);
	p[0] = h->cma_version;
	p[1] = (uint8_t)(h->ip_version << 4); /* cma_set_ip_ver: version in the high nibble */
	emu_be16_put(p + 2, h->port);
	if (h->ip_version == 4) {
		memcpy(p + 4 + 12, h->src + 12, 4);
		memcpy(p + 20 + 12, h->dst + 12, 4);
	} else {
		memcpy(p + 4, h->src, 16);
		memcpy(p + 20, h->dst, 16);
	}
	return 0;
}

int emu_cma_hdr_unpack(const uint8_t *p, size_t len, struct emu_cma_hdr *h)
{
	if (!p || !h || len < EMU_CMA_HDR_LEN)
		return -EINVAL;
	memset(h, 0, sizeof(*h));
	h->cma_version = p[0];
	h->ip_version = p[1] >> 4;
	h->port = emu_be16_get(p + 2);
	if (h->cma_version != EMU_CMA_VERSION)
		return -EINVAL;
	if (h->ip_version == 4) {
		/* The kernel reads only ip4.addr; the pad is not checked, so it is not here. */
		memcpy(h->src + 12, p + 4 + 12, 4);
		memcpy(h->dst + 12, p + 20 + 12, 4);
		return 0;
	}
	if (h->ip_version == 6) {
		memcpy(h->src, p + 4, 16);
		memcpy(h->dst, p + 20, 16);
		return 0;
	}
	return -EAFNOSUPPORT;
}

uint16_t emu_cma_service_id_ps(uint64_t sid)
{
	static const uint16_t ps[] = { EMU_RDMA_PS_TCP, EMU_RDMA_PS_UDP, EMU_RDMA_PS_IB,
				       EMU_RDMA_PS_IPOIB };

	for (size_t i = 0; i < sizeof(ps) / sizeof(ps[0]); i++)
		if ((sid & EMU_RDMA_IB_IP_PS_MASK) == (uint64_t)ps[i] << 16)
			return ps[i];
	return 0;
}
