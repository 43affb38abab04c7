/* CM MAD layouts as data, and the one packer/unpacker that walks them. Offsets and widths are
 * IBTA vol. 1 tables 106-120 (release 1.4, with the ECE vendor-ID bits), the same numbers as
 * the kernel's include/rdma/ibta_vol1_c12.h; the ECE placement follows the kernel's
 * cm_format_req / cm_format_rep / cm_format_sidr_rep (drivers/infiniband/core/cm.c). */
#include <pthread.h>
#include <string.h>

#include "emu/cm_mad.h"
#include "emu/pkt.h"

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

#define NO_COUNT UINT16_MAX
#define M(member) offsetof(struct emu_cm_msg, member), sizeof(((struct emu_cm_msg *)0)->member)

/* A row of a layout: the public description plus two checks. */
struct field {
	struct emu_cm_field f;
	uint32_t max;	/* largest valid value, 0: what the width holds */
	uint16_t count; /* offsetof the byte count of an array, NO_COUNT: all of it */
};

/* name, member, byte, bit (from the MSB), width in bits */
#define F(name, member, byte, bit, width) { { name, M(member), byte, bit, width, 0 }, 0, NO_COUNT }
/* one part of a member split over several fields: its bits [shift, shift + width) */
#define P(name, member, byte, bit, width, shift) \
	{ { name, M(member), byte, bit, width, shift }, 0, NO_COUNT }
/* a field whose values stop below the width's maximum */
#define FMAX(name, member, byte, bit, width, max) \
	{ { name, M(member), byte, bit, width, 0 }, max, NO_COUNT }
/* a byte array of which the count member says how many bytes are used */
#define ARR(name, member, byte, count)                                                    \
	{ { name, M(member), byte, 0, 8 * sizeof(((struct emu_cm_msg *)0)->member), 0 }, 0, \
	  offsetof(struct emu_cm_msg, count) }
#define END { { NULL, 0, 0, 0, 0, 0, 0 }, 0, 0 }

/* The path block of a REQ at `o` (52 primary, 96 alternate; IBTA table 106). */
#define REQ_PATH(pfx, p, o)                                                       \
	F(pfx " Local Port LID", p.local_lid, o, 0, 16),                          \
	F(pfx " Remote Port LID", p.remote_lid, o + 2, 0, 16),                    \
	F(pfx " Local Port GID", p.local_gid, o + 4, 0, 128),                     \
	F(pfx " Remote Port GID", p.remote_gid, o + 20, 0, 128),                  \
	F(pfx " Flow Label", p.flow_label, o + 36, 0, 20),                        \
	F(pfx " Packet Rate", p.packet_rate, o + 39, 2, 6),                       \
	F(pfx " Traffic Class", p.traffic_class, o + 40, 0, 8),                   \
	F(pfx " Hop Limit", p.hop_limit, o + 41, 0, 8),                           \
	F(pfx " SL", p.sl, o + 42, 0, 4),                                         \
	F(pfx " Subnet Local", p.subnet_local, o + 42, 4, 1),                     \
	F(pfx " Local ACK Timeout", p.local_ack_timeout, o + 43, 0, 5)

static const struct field req_fields[] = {
	F("Local Communication ID", local_comm_id, 0, 0, 32),
	F("Vendor ID", vendor_id, 5, 0, 24), /* ECE, kernel CM_REQ_VENDOR_ID */
	F("ServiceID", service_id, 8, 0, 64),
	F("Local CA GUID", local_ca_guid, 16, 0, 64),
	F("Local Q_Key", qkey, 28, 0, 32),
	F("Local QPN", local_qpn, 32, 0, 24),
	F("Responder Resources", responder_resources, 35, 0, 8),
	F("Local EECN", local_eecn, 36, 0, 24),
	F("Initiator Depth", initiator_depth, 39, 0, 8),
	F("Remote EECN", remote_eecn, 40, 0, 24),
	F("Remote CM Response Timeout", remote_cm_response_timeout, 43, 0, 5),
	F("Transport Service Type", transport_service_type, 43, 5, 2),
	F("End-to-End Flow Control", end_to_end_flow_control, 43, 7, 1),
	F("Starting PSN", starting_psn, 44, 0, 24),
	F("Local CM Response Timeout", local_cm_response_timeout, 47, 0, 5),
	F("Retry Count", retry_count, 47, 5, 3),
	F("Partition Key", pkey, 48, 0, 16),
	F("Path Packet Payload MTU", path_mtu, 50, 0, 4),
	F("RDC Exists", rdc_exists, 50, 4, 1),
	F("RNR Retry Count", rnr_retry_count, 50, 5, 3),
	F("Max CM Retries", max_cm_retries, 51, 0, 4),
	F("SRQ", srq, 51, 4, 1),
	F("Extended Transport Type", extended_transport_type, 51, 5, 3),
	REQ_PATH("Primary", primary, 52),
	REQ_PATH("Alternate", alternate, 96),
	F("SAP Supported", sap_supported, 139, 5, 1),
	END,
};

static const struct field mra_fields[] = {
	F("Local Communication ID", local_comm_id, 0, 0, 32),
	F("Remote Communication ID", remote_comm_id, 4, 0, 32),
	FMAX("Message MRAed", message_mraed, 8, 0, 2, EMU_CM_MSG_RESPONSE_OTHER),
	F("Service Timeout", service_timeout, 9, 0, 5),
	END,
};

static const struct field rej_fields[] = {
	F("Local Communication ID", local_comm_id, 0, 0, 32),
	F("Remote Communication ID", remote_comm_id, 4, 0, 32),
	FMAX("Message REJected", message_rejected, 8, 0, 2, EMU_CM_MSG_RESPONSE_OTHER),
	FMAX("Reject Info Length", reject_info_len, 9, 0, 7, EMU_CM_REJ_ARI_LENGTH),
	F("Reason", reason, 10, 0, 16),
	ARR("ARI", ari, 12, reject_info_len),
	END,
};

static const struct field rep_fields[] = {
	F("Local Communication ID", local_comm_id, 0, 0, 32),
	F("Remote Communication ID", remote_comm_id, 4, 0, 32),
	F("Local Q_Key", qkey, 8, 0, 32),
	F("Local QPN", local_qpn, 12, 0, 24),
	P("Vendor ID[23:16]", vendor_id, 15, 0, 8, 16), /* ECE, CM_REP_VENDOR_ID_H */
	F("Local EE Context Number", local_eecn, 16, 0, 24),
	P("Vendor ID[15:8]", vendor_id, 19, 0, 8, 8),	/* CM_REP_VENDOR_ID_M */
	F("Starting PSN", starting_psn, 20, 0, 24),
	P("Vendor ID[7:0]", vendor_id, 23, 0, 8, 0),	/* CM_REP_VENDOR_ID_L */
	F("Responder Resources", responder_resources, 24, 0, 8),
	F("Initiator Depth", initiator_depth, 25, 0, 8),
	F("Target ACK Delay", target_ack_delay, 26, 0, 5),
	F("Failover Accepted", failover_accepted, 26, 5, 2),
	F("End-to-End Flow Control", end_to_end_flow_control, 26, 7, 1),
	F("RNR Retry Count", rnr_retry_count, 27, 0, 3),
	F("SRQ", srq, 27, 3, 1),
	F("Local CA GUID", local_ca_guid, 28, 0, 64),
	END,
};

static const struct field rtu_fields[] = {
	F("Local Communication ID", local_comm_id, 0, 0, 32),
	F("Remote Communication ID", remote_comm_id, 4, 0, 32),
	END,
};

static const struct field dreq_fields[] = {
	F("Local Communication ID", local_comm_id, 0, 0, 32),
	F("Remote Communication ID", remote_comm_id, 4, 0, 32),
	F("Remote QPN/EECN", remote_qpn_eecn, 8, 0, 24),
	END,
};

#define drep_fields rtu_fields /* same two IDs, IBTA table 113 */

static const struct field sidr_req_fields[] = {
	F("RequestID", request_id, 0, 0, 32),
	F("Partition Key", pkey, 4, 0, 16),
	F("ServiceID", service_id, 8, 0, 64),
	END,
};

/* The kernel writes (vendor_id >> 8) & 0xff into the 16-bit CM_SIDR_REP_VENDOR_ID_H at bytes
 * 6-7, so byte 6 stays zero and SIDR_REP carries 16 bits of the vendor ID. */
static const struct field sidr_rep_fields[] = {
	F("RequestID", request_id, 0, 0, 32),
	F("Status", sidr_status, 4, 0, 8),
	FMAX("Additional Information Length", info_len, 5, 0, 8, EMU_CM_SIDR_REP_INFO_LENGTH),
	P("Vendor ID[15:8]", vendor_id, 7, 0, 8, 8),
	F("QPN", qpn, 8, 0, 24),
	P("Vendor ID[7:0]", vendor_id, 11, 0, 8, 0),
	F("ServiceID", service_id, 12, 0, 64),
	F("Q_Key", qkey, 20, 0, 32),
	ARR("Additional Information", info, 24, info_len),
	END,
};

static const struct field lap_fields[] = {
	F("Local Communication ID", local_comm_id, 0, 0, 32),
	F("Remote Communication ID", remote_comm_id, 4, 0, 32),
	F("Remote QPN/EECN", remote_qpn_eecn, 12, 0, 24),
	F("Remote CM Response Timeout", remote_cm_response_timeout, 15, 0, 5),
	F("Alternate Local Port LID", alternate.local_lid, 20, 0, 16),
	F("Alternate Remote Port LID", alternate.remote_lid, 22, 0, 16),
	F("Alternate Local Port GID", alternate.local_gid, 24, 0, 128),
	F("Alternate Remote Port GID", alternate.remote_gid, 40, 0, 128),
	F("Alternate Flow Label", alternate.flow_label, 56, 0, 20),
	F("Alternate Traffic Class", alternate.traffic_class, 59, 0, 8),
	F("Alternate Hop Limit", alternate.hop_limit, 60, 0, 8),
	F("Alternate Packet Rate", alternate.packet_rate, 61, 2, 6),
	F("Alternate SL", alternate.sl, 62, 0, 4),
	F("Alternate Subnet Local", alternate.subnet_local, 62, 4, 1),
	F("Alternate Local ACK Timeout", alternate.local_ack_timeout, 63, 0, 5),
	END,
};

static const struct field apr_fields[] = {
	F("Local Communication ID", local_comm_id, 0, 0, 32),
	F("Remote Communication ID", remote_comm_id, 4, 0, 32),
	FMAX("Additional Information Length", info_len, 8, 0, 8, EMU_CM_APR_INFO_LENGTH),
	F("AP Status", ap_status, 9, 0, 8),
	ARR("Additional Information", info, 12, info_len),
	END,
};

/* One row per message: fields, then where the private data lies. Every message fills the
 * 232-byte MAD data exactly: private_off + private_size == 232. */
struct layout {
	struct emu_cm_layout pub;
	const struct field *fields;
};

static struct emu_cm_field pub_fields[11][64]; /* filled lazily: see emu_cm_layout() */

static const struct layout layouts[] = {
	{ { EMU_CM_ATTR_REQ, "REQ", NULL, 140, EMU_CM_REQ_PRIVATE_DATA_SIZE }, req_fields },
	{ { EMU_CM_ATTR_MRA, "MRA", NULL, 10, EMU_CM_MRA_PRIVATE_DATA_SIZE }, mra_fields },
	{ { EMU_CM_ATTR_REJ, "REJ", NULL, 84, EMU_CM_REJ_PRIVATE_DATA_SIZE }, rej_fields },
	{ { EMU_CM_ATTR_REP, "REP", NULL, 36, EMU_CM_REP_PRIVATE_DATA_SIZE }, rep_fields },
	{ { EMU_CM_ATTR_RTU, "RTU", NULL, 8, EMU_CM_RTU_PRIVATE_DATA_SIZE }, rtu_fields },
	{ { EMU_CM_ATTR_DREQ, "DREQ", NULL, 12, EMU_CM_DREQ_PRIVATE_DATA_SIZE }, dreq_fields },
	{ { EMU_CM_ATTR_DREP, "DREP", NULL, 8, EMU_CM_DREP_PRIVATE_DATA_SIZE }, drep_fields },
	{ { EMU_CM_ATTR_SIDR_REQ, "SIDR_REQ", NULL, 16, EMU_CM_SIDR_REQ_PRIVATE_DATA_SIZE },
	  sidr_req_fields },
	{ { EMU_CM_ATTR_SIDR_REP, "SIDR_REP", NULL, 96, EMU_CM_SIDR_REP_PRIVATE_DATA_SIZE },
	  sidr_rep_fields },
	{ { EMU_CM_ATTR_LAP, "LAP", NULL, 64, EMU_CM_LAP_PRIVATE_DATA_SIZE }, lap_fields },
	{ { EMU_CM_ATTR_APR, "APR", NULL, 84, EMU_CM_APR_PRIVATE_DATA_SIZE }, apr_fields },
};
#define NLAYOUTS (sizeof(layouts) / sizeof(layouts[0]))

/* The layouts are in attribute order from REQ (0x0010) on: an index, not a scan. */
static const struct layout *find(uint16_t attr_id)
{
	unsigned i = (unsigned)attr_id - EMU_CM_ATTR_REQ;

	return i < NLAYOUTS && layouts[i].pub.attr_id == attr_id ? &layouts[i] : NULL;
}

/* The public view copies the rows' emu_cm_field parts into static arrays, once per process
 * (pthread_once: the agent may look layouts up from several threads); the tables above stay
 * the single source. */
static struct emu_cm_layout pub_layouts[NLAYOUTS];
static pthread_once_t pub_once = PTHREAD_ONCE_INIT;

/* The compiled form of a row: what pack and unpack need, worked out once. Pack and unpack ran
 * the general bit loop, the width mask and the array test for every field of every MAD (~60
 * fields a connection each way); now a field is one big-endian load/store of the 1 to 8 bytes
 * that hold it plus a shift and a mask. The tables above stay the single source. */
struct op {
	const char *name;
	uint64_t bad;	 /* member bits no row of the layout carries: pack's range check */
	uint64_t wmask;	 /* the field's width, as a mask */
	uint32_t max;	 /* largest valid value, 0: what the width holds */
	uint16_t member; /* offsetof in struct emu_cm_msg */
	uint16_t count;	 /* arrays: offsetof the byte count, NO_COUNT: all of it */
	uint8_t msize;	 /* sizeof the member; > 8: a byte array */
	uint8_t off;	 /* first byte of the field in the MAD data */
	uint8_t nbytes;	 /* bytes from off that hold the field (1-8), 0 for an array */
	uint8_t lsb;	 /* the field's lowest bit in those bytes read as a big-endian number */
	uint8_t shift;	 /* lowest member bit carried here */
	bool whole;	 /* the field is those bytes exactly: a plain store, nothing to keep */
	bool split;	 /* other rows carry other bits of the member (REP's vendor ID) */
};

static struct op ops[NLAYOUTS][64]; /* each ends with name == NULL */

static uint64_t covered(const struct field *fields, uint16_t member);
static uint64_t width_mask(unsigned width);

static struct op compile(const struct field *fields, const struct field *r)
{
	const struct emu_cm_field *f = &r->f;
	struct op o = {
		.name = f->name,
		.max = r->max,
		.member = f->member,
		.count = r->count,
		.msize = f->size,
		.off = f->byte,
		.shift = f->shift,
	};

	if (f->size > 8)
		return o; /* array: copied whole, nbytes = 0 */
	o.bad = ~covered(fields, f->member);
	o.wmask = width_mask(f->width);
	o.nbytes = (uint8_t)((f->bit + f->width + 7) / 8);
	o.lsb = (uint8_t)(8 * o.nbytes - f->bit - f->width);
	o.whole = !f->bit && !(f->width % 8);
	o.split = ~o.bad != o.wmask << o.shift;
	return o;
}

static void build_pub_layouts(void)
{
	for (size_t i = 0; i < NLAYOUTS; i++) {
		size_t n;

		for (n = 0; layouts[i].fields[n].f.name; n++) {
			pub_fields[i][n] = layouts[i].fields[n].f;
			ops[i][n] = compile(layouts[i].fields, &layouts[i].fields[n]);
		}
		pub_fields[i][n] = (struct emu_cm_field){ 0 };
		ops[i][n] = (struct op){ 0 };
		pub_layouts[i] = layouts[i].pub;
		pub_layouts[i].fields = pub_fields[i];
	}
}

const struct emu_cm_layout *emu_cm_layout(uint16_t attr_id)
{
	const struct layout *l = find(attr_id);

	if (!l)
		return NULL;
	pthread_once(&pub_once, build_pub_layouts);
	return &pub_layouts[l - layouts];
}

int emu_cm_private_data_size(uint16_t attr_id)
{
	const struct layout *l = find(attr_id);
	return l ? l->pub.private_size : -1;
}

/* ---- bits ---- */

static uint64_t member_get(const struct emu_cm_msg *m, unsigned member, unsigned size)
{
	const uint8_t *p = (const uint8_t *)m + member;

	switch (size) {
	case 1: return *p;
	case 2: { uint16_t v; memcpy(&v, p, 2); return v; }
	case 4: { uint32_t v; memcpy(&v, p, 4); return v; }
	default: { uint64_t v; memcpy(&v, p, 8); return v; }
	}
}

static void member_put(struct emu_cm_msg *m, unsigned member, unsigned size, uint64_t v)
{
	uint8_t *p = (uint8_t *)m + member;

	switch (size) {
	case 1: *p = (uint8_t)v; break;
	case 2: { uint16_t x = (uint16_t)v; memcpy(p, &x, 2); break; }
	case 4: { uint32_t x = (uint32_t)v; memcpy(p, &x, 4); break; }
	default: memcpy(p, &v, 8); break;
	}
}

static void member_or(struct emu_cm_msg *m, unsigned member, unsigned size, uint64_t bits)
{
	member_put(m, member, size, member_get(m, member, size) | bits);
}

/* Bit string of `width` bits at bit position `pos` of `d` (0 = MSB of d[0]). */
/* A byte (or the part of one the field covers) at a time: pack and unpack ran a loop
 * iteration per bit. */
static void bits_put(uint8_t *d, unsigned pos, unsigned width, uint64_t v)
{
	if (!(pos % 8) && !(width % 8)) { /* whole bytes, most fields: big-endian store */
		for (unsigned i = width / 8; i--; v >>= 8)
			d[pos / 8 + i] = (uint8_t)v;
		return;
	}
	while (width) {
		unsigned off = pos % 8, n = 8 - off < width ? 8 - off : width;
		unsigned sh = 8 - off - n, ones = (1u << n) - 1;
		unsigned chunk = (unsigned)(v >> (width - n)) & ones;
		uint8_t *b = &d[pos / 8];

		*b = (uint8_t)((*b & ~(ones << sh)) | chunk << sh);
		pos += n;
		width -= n;
	}
}

static uint64_t bits_get(const uint8_t *d, unsigned pos, unsigned width)
{
	uint64_t v = 0;

	if (!(pos % 8) && !(width % 8)) {
		for (unsigned i = 0; i < width / 8; i++)
			v = v << 8 | d[pos / 8 + i];
		return v;
	}
	while (width) {
		unsigned off = pos % 8, n = 8 - off < width ? 8 - off : width;
		unsigned sh = 8 - off - n, ones = (1u << n) - 1;

		v = v << n | ((d[pos / 8] >> sh) & ones);
		pos += n;
		width -= n;
	}
	return v;
}

static uint64_t width_mask(unsigned width)
{
	return width >= 64 ? UINT64_MAX : (1ull << width) - 1;
}

/* The member bits some row of the layout carries (the union of a split member's parts). */
static uint64_t covered(const struct field *fields, uint16_t member)
{
	uint64_t mask = 0;

	for (const struct field *r = fields; r->f.name; r++)
		if (r->f.member == member)
			mask |= width_mask(r->f.width) << r->f.shift;
	return mask;
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

static int fail(const char **bad_field, const char *name, int err)
{
	if (bad_field)
		*bad_field = name;
	return err;
}

int emu_cm_pack_ex(uint16_t attr_id, const struct emu_cm_msg *m, uint8_t mad[EMU_MAD_LEN],
		   const char **bad_field)
{
	const struct layout *l = find(attr_id);
	uint8_t *data = mad + EMU_MAD_HDR_LEN;

	if (bad_field)
		*bad_field = NULL;
	if (!m || !mad)
		return -EINVAL;
	if (!l)
		return -EMU_CM_EATTR;
	if (m->private_data_len > l->pub.private_size)
		return fail(bad_field, "PrivateData", -EMU_CM_EPRIVLEN);
	pthread_once(&pub_once, build_pub_layouts);

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
	for (const struct op *o = ops[l - layouts]; o->name; o++) {
		if (!o->nbytes) { /* byte array */
			size_t n = o->msize;

			if (o->count != NO_COUNT) {
				n = ((const uint8_t *)m)[o->count];
				if (n > o->msize)
					return fail(bad_field, o->name, -EMU_CM_EINFOLEN);
			}
			memcpy(data + o->off, (const uint8_t *)m + o->member, n);
			continue;
		}
		uint64_t v = member_get(m, o->member, o->msize);
		if ((v & o->bad) || (o->max && v > o->max))
			return fail(bad_field, o->name, -EMU_CM_ERANGE);
		uint64_t bits = (v >> o->shift) & o->wmask;
		uint8_t *p = data + o->off;

		if (o->whole) {
			emu_be_store_n(p, o->nbytes, bits);
		} else if (o->nbytes == 1) {
			/* the bytes of a field may hold other fields: clear this one's bits only */
			*p = (uint8_t)((*p & ~(o->wmask << o->lsb)) | bits << o->lsb);
		} else {
			uint64_t w = emu_be_load_n(p, o->nbytes) & ~(o->wmask << o->lsb);
			emu_be_store_n(p, o->nbytes, w | bits << o->lsb);
		}
	}
	memcpy(data + l->pub.private_off, m->private_data, m->private_data_len);
	return 0;
}

int emu_cm_unpack_ex(const uint8_t *mad, size_t len, uint16_t *attr_id, struct emu_cm_msg *m,
		     const char **bad_field)
{
	struct emu_mad_hdr h;
	const struct layout *l;
	const uint8_t *data;

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
	data = mad + EMU_MAD_HDR_LEN;
	pthread_once(&pub_once, build_pub_layouts);
	for (const struct op *o = ops[l - layouts]; o->name; o++) {
		if (!o->nbytes) {
			memcpy((uint8_t *)m + o->member, data + o->off, o->msize);
			continue;
		}
		const uint8_t *p = data + o->off;
		uint64_t v = (o->nbytes == 1 ? *p : emu_be_load_n(p, o->nbytes)) >> o->lsb & o->wmask;
		if (o->max && v > o->max)
			return fail(bad_field, o->name,
				    o->max == EMU_CM_MSG_RESPONSE_OTHER ? -EMU_CM_ERANGE
									: -EMU_CM_EINFOLEN);
		if (o->split)
			member_or(m, o->member, o->msize, v << o->shift);
		else
			member_put(m, o->member, o->msize, v << o->shift);
	}
	m->private_data_len = l->pub.private_size;
	memcpy(m->private_data, data + l->pub.private_off, l->pub.private_size);
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
	bits_put(p + 2, 0, 16, h->port);
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
	h->port = (uint16_t)bits_get(p + 2, 0, 16);
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
