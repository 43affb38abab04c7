/* Management datagrams (IBTA vol. 1 ch. 13) and the Subnet Administration class (ch. 15): the
 * common MAD header, the RMPP header, the SA header, and the SA records as data tables.
 *
 * Records are described by tables of fields (name, bit offset in the record, width, component
 * mask bit, where the value lives in the C struct), in the spirit of the kernel's sa_query.c
 * field tables: one table drives packing a struct to the wire, unpacking it, and component-mask
 * matching of two wire records, so a layout is written down exactly once.
 *
 * Bit offsets count from the most significant bit of the record's first byte (IBA's big-endian
 * bit numbering: offset 0 is bit 7 of byte 0). Multi-byte values are big-endian on the wire;
 * structs hold host-order integers, and GIDs, keys and names as byte arrays.
 */
#ifndef RDMAEMU_EMU_MAD_H
#define RDMAEMU_EMU_MAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define EMU_MAD_LEN 256
#define EMU_MAD_HDR_LEN 24   /* common MAD header */
#define EMU_RMPP_HDR_LEN 12  /* after the MAD header in RMPP classes (SA) */
#define EMU_SA_HDR_LEN 56    /* MAD + RMPP + SA header (SM_Key .. ComponentMask) */
#define EMU_SA_DATA_LEN 200  /* SA payload per MAD */
#define EMU_SA_RMPP_SEG_LEN 220 /* what RMPP PayloadLength counts per segment: SA header + data */

#define EMU_MAD_BASE_VERSION 1
#define EMU_MGMT_CLASS_SUBN_ADM 0x03
#define EMU_SA_CLASS_VERSION 2
#define EMU_QP1_QKEY 0x80010000u /* the GSI's well-known Q_Key */

/* Methods (13.4.5, 15.2.2). A response is the request's method with bit 7 set. */
#define EMU_MAD_METHOD_GET 0x01
#define EMU_MAD_METHOD_SET 0x02
#define EMU_MAD_METHOD_GET_RESP 0x81
#define EMU_MAD_METHOD_SEND 0x03
#define EMU_MAD_METHOD_TRAP 0x05
#define EMU_MAD_METHOD_REPORT 0x06
#define EMU_MAD_METHOD_REPORT_RESP 0x86
#define EMU_MAD_METHOD_TRAP_REPRESS 0x07
#define EMU_MAD_METHOD_GET_TABLE 0x12
#define EMU_MAD_METHOD_GET_TABLE_RESP 0x92
#define EMU_MAD_METHOD_GET_TRACE_TABLE 0x13
#define EMU_MAD_METHOD_GET_MULTI 0x14
#define EMU_MAD_METHOD_DELETE 0x15
#define EMU_MAD_METHOD_DELETE_RESP 0x95
#define EMU_MAD_METHOD_RESP_BIT 0x80

/* MAD status (13.4.7, table 119): bit 0 busy, bit 1 redirect, bits 2-4 an invalid-field code,
 * bits 8-15 class specific (the SA puts its status codes in bits 8-14, 15.2.1.1). */
#define EMU_MAD_STATUS_BUSY 0x0001
#define EMU_MAD_STATUS_REDIRECT 0x0002
#define EMU_MAD_STATUS_BAD_VERSION 0x0004     /* code 1: base or class version unsupported */
#define EMU_MAD_STATUS_UNSUP_METHOD 0x0008    /* code 2 */
#define EMU_MAD_STATUS_UNSUP_METHOD_ATTR 0x000c /* code 3: method/attribute combination */
#define EMU_MAD_STATUS_INVALID_FIELD 0x001c   /* code 7: invalid value in attribute/modifier */
#define EMU_SA_STATUS(code) ((uint16_t)((code) << 8))
enum emu_sa_status_code {
	EMU_SA_ERR_NO_RESOURCES = 1,
	EMU_SA_ERR_REQ_INVALID = 2,
	EMU_SA_ERR_NO_RECORDS = 3,
	EMU_SA_ERR_TOO_MANY_RECORDS = 4,
	EMU_SA_ERR_REQ_INVALID_GID = 5,
	EMU_SA_ERR_REQ_INSUFFICIENT_COMPONENTS = 6,
	EMU_SA_ERR_REQ_DENIED = 7,
	EMU_SA_ERR_PRIO_SUGGESTED = 8,
};
/* "SUCCESS", "BUSY", "ERR_NO_RECORDS", ... for a status word (class code wins). */
const char *emu_mad_status_name(uint16_t status);
const char *emu_mad_method_name(uint8_t method);

/* SA attribute IDs (15.2.5, table 183). */
#define EMU_SA_ATTR_CLASS_PORT_INFO 0x0001
#define EMU_SA_ATTR_NOTICE 0x0002
#define EMU_SA_ATTR_INFORM_INFO 0x0003
#define EMU_SA_ATTR_NODE_RECORD 0x0011
#define EMU_SA_ATTR_PORT_INFO_RECORD 0x0012
#define EMU_SA_ATTR_SMINFO_RECORD 0x0018
#define EMU_SA_ATTR_SL2VL_RECORD 0x0013
#define EMU_SA_ATTR_SWITCH_INFO_RECORD 0x0014
#define EMU_SA_ATTR_LFT_RECORD 0x0015
#define EMU_SA_ATTR_LINK_RECORD 0x0020
#define EMU_SA_ATTR_GUID_INFO_RECORD 0x0030
#define EMU_SA_ATTR_SERVICE_RECORD 0x0031
#define EMU_SA_ATTR_PKEY_TABLE_RECORD 0x0033
#define EMU_SA_ATTR_PATH_RECORD 0x0035
#define EMU_SA_ATTR_VL_ARB_RECORD 0x0036
#define EMU_SA_ATTR_MCMEMBER_RECORD 0x0038
#define EMU_SA_ATTR_TRACE_RECORD 0x0039
#define EMU_SA_ATTR_MULTIPATH_RECORD 0x003a
#define EMU_SA_ATTR_INFORM_INFO_RECORD 0x00f3
const char *emu_sa_attr_name(uint16_t attr_id);

/* RMPP (13.6.2). */
#define EMU_RMPP_VERSION 1
#define EMU_RMPP_TYPE_DATA 1
#define EMU_RMPP_TYPE_ACK 2
#define EMU_RMPP_TYPE_STOP 3
#define EMU_RMPP_TYPE_ABORT 4
#define EMU_RMPP_FLAG_ACTIVE 0x01
#define EMU_RMPP_FLAG_FIRST 0x02
#define EMU_RMPP_FLAG_LAST 0x04
#define EMU_RMPP_NO_RESPTIME 0x1f

/* Path/MCMember selectors (15.2.5.16): how a value with its selector compares. */
enum emu_sa_selector {
	EMU_SA_SEL_GT = 0,
	EMU_SA_SEL_LT = 1,
	EMU_SA_SEL_EQ = 2,
	EMU_SA_SEL_BEST = 3, /* largest MTU/rate, smallest packet lifetime */
};

struct emu_mad_hdr {
	uint8_t base_version, mgmt_class, class_version, method;
	uint16_t status, class_specific;
	uint64_t tid;
	uint16_t attr_id;
	uint32_t attr_mod;
};

struct emu_rmpp_hdr {
	uint8_t version, type, resp_time, flags, status; /* resp_time 5 bits, flags 3 bits */
	uint32_t data1; /* SegmentNumber (DATA, ACK) */
	uint32_t data2; /* PayloadLength (DATA) / NewWindowLast (ACK) */
};

struct emu_sa_hdr {
	uint64_t sm_key;
	uint16_t attr_offset; /* record stride in 8-byte words */
	uint64_t comp_mask;
};

void emu_mad_hdr_put(uint8_t *p, const struct emu_mad_hdr *h);
void emu_mad_hdr_get(const uint8_t *p, struct emu_mad_hdr *h);
void emu_rmpp_hdr_put(uint8_t *p, const struct emu_rmpp_hdr *h); /* p = MAD + 24 */
void emu_rmpp_hdr_get(const uint8_t *p, struct emu_rmpp_hdr *h);
void emu_sa_hdr_put(uint8_t *p, const struct emu_sa_hdr *h); /* p = MAD + 36 */
void emu_sa_hdr_get(const uint8_t *p, struct emu_sa_hdr *h);

/* ---- record tables ---- */

enum emu_mad_field_kind {
	EMU_MF_UINT,     /* an unsigned integer of 1..64 bits; struct member of struct_size bytes */
	EMU_MF_BYTES,    /* bits/8 bytes copied as they are (GIDs, keys, names) */
	EMU_MF_RESERVED, /* zero on the wire, no struct member */
};

#define EMU_MF_NO_COMP (-1)

struct emu_mad_field {
	const char *name;
	enum emu_mad_field_kind kind;
	uint16_t bit_off, bits; /* of one element */
	uint8_t count;          /* elements (arrays such as ServiceData16), 1 for a scalar */
	int8_t comp_bit;        /* component mask bit of the first element, EMU_MF_NO_COMP */
	uint8_t comp_span;      /* mask bits per element that select it (ServiceID: 2) */
	uint16_t struct_off;
	uint8_t struct_size;    /* of one element */
};

struct emu_mad_record_desc {
	const char *name; /* "PathRecord" */
	uint16_t attr_id;
	uint16_t wire_len;    /* record bytes */
	uint16_t attr_offset; /* record stride in 8-byte words (wire_len rounded up) */
	size_t struct_size;
	const struct emu_mad_field *fields;
	size_t nfields;
	/* expanded from the same rows as fields (emu/ib/mad.c): the wire is zeroed before pack,
	 * the struct before unpack */
	void (*pack)(const void *s, uint8_t *wire);
	void (*unpack)(const uint8_t *wire, void *s);
};

/* Bit field access on a big-endian wire record. bits <= 64. */
uint64_t emu_mad_bits_get(const uint8_t *rec, unsigned bit_off, unsigned bits);
void emu_mad_bits_put(uint8_t *rec, unsigned bit_off, unsigned bits, uint64_t v);

/* Struct <-> wire by table. pack writes all desc->wire_len bytes (reserved bits zero). */
void emu_mad_record_pack(const struct emu_mad_record_desc *d, const void *s, uint8_t *wire);
void emu_mad_record_unpack(const struct emu_mad_record_desc *d, const uint8_t *wire, void *s);
/* Whether `rec` matches `query` on every field whose component bit is in `mask` and not in
 * `skip` (fields the caller compares itself, e.g. selector-driven ones). Wire records. */
bool emu_mad_record_match(const struct emu_mad_record_desc *d, const uint8_t *query,
			  const uint8_t *rec, uint64_t mask, uint64_t skip);
/* The bits a query under mask (less skip) compares, set in bits[d->wire_len]: a record matches
 * the query (emu_mad_record_match) exactly when emu_mad_bits_agree(query, rec, bits) - for a
 * scan of many records, the fields walked once. */
void emu_mad_record_comp_bits(const struct emu_mad_record_desc *d, uint64_t mask, uint64_t skip,
			      uint8_t *bits);
/* Whether a and b agree on every bit set in bits (len bytes each). */
bool emu_mad_bits_agree(const uint8_t *a, const uint8_t *b, const uint8_t *bits, size_t len);
/* The table's field of that name, NULL if none. */
const struct emu_mad_field *emu_mad_field_find(const struct emu_mad_record_desc *d,
					       const char *name);
/* The record table of an attribute, NULL for one without a table. */
const struct emu_mad_record_desc *emu_sa_record_desc(uint16_t attr_id);

/* ---- the SA records ---- */

/* PathRecord (15.2.5.16), 64 bytes. */
struct emu_sa_path_rec {
	uint64_t service_id;
	uint8_t dgid[16], sgid[16];
	uint16_t dlid, slid;
	uint8_t raw_traffic;
	uint32_t flow_label;
	uint8_t hop_limit, traffic_class, reversible, numb_path;
	uint16_t pkey, qos_class;
	uint8_t sl, mtu_selector, mtu, rate_selector, rate;
	uint8_t packet_life_time_selector, packet_life_time, preference;
};

/* PathRecord component mask bits (table 207). ServiceID is bits 0 (8 MSBs) and 1 (56 LSBs). */
#define EMU_PR_COMP_SERVICE_ID (3ull << 0)
#define EMU_PR_COMP_DGID (1ull << 2)
#define EMU_PR_COMP_SGID (1ull << 3)
#define EMU_PR_COMP_DLID (1ull << 4)
#define EMU_PR_COMP_SLID (1ull << 5)
#define EMU_PR_COMP_RAW_TRAFFIC (1ull << 6)
#define EMU_PR_COMP_FLOW_LABEL (1ull << 8)
#define EMU_PR_COMP_HOP_LIMIT (1ull << 9)
#define EMU_PR_COMP_TCLASS (1ull << 10)
#define EMU_PR_COMP_REVERSIBLE (1ull << 11)
#define EMU_PR_COMP_NUMB_PATH (1ull << 12)
#define EMU_PR_COMP_PKEY (1ull << 13)
#define EMU_PR_COMP_QOS_CLASS (1ull << 14)
#define EMU_PR_COMP_SL (1ull << 15)
#define EMU_PR_COMP_MTU_SELECTOR (1ull << 16)
#define EMU_PR_COMP_MTU (1ull << 17)
#define EMU_PR_COMP_RATE_SELECTOR (1ull << 18)
#define EMU_PR_COMP_RATE (1ull << 19)
#define EMU_PR_COMP_PKT_LIFE_SELECTOR (1ull << 20)
#define EMU_PR_COMP_PKT_LIFE (1ull << 21)
#define EMU_PR_COMP_PREFERENCE (1ull << 22)

/* MCMemberRecord (15.2.5.17), 52 bytes. */
struct emu_sa_mcmember_rec {
	uint8_t mgid[16], port_gid[16];
	uint32_t qkey;
	uint16_t mlid;
	uint8_t mtu_selector, mtu, traffic_class;
	uint16_t pkey;
	uint8_t rate_selector, rate, packet_life_time_selector, packet_life_time, sl;
	uint32_t flow_label;
	uint8_t hop_limit, scope, join_state, proxy_join;
};

#define EMU_MCR_COMP_MGID (1ull << 0)
#define EMU_MCR_COMP_PORT_GID (1ull << 1)
#define EMU_MCR_COMP_QKEY (1ull << 2)
#define EMU_MCR_COMP_MLID (1ull << 3)
#define EMU_MCR_COMP_MTU_SELECTOR (1ull << 4)
#define EMU_MCR_COMP_MTU (1ull << 5)
#define EMU_MCR_COMP_TCLASS (1ull << 6)
#define EMU_MCR_COMP_PKEY (1ull << 7)
#define EMU_MCR_COMP_RATE_SELECTOR (1ull << 8)
#define EMU_MCR_COMP_RATE (1ull << 9)
#define EMU_MCR_COMP_PKT_LIFE_SELECTOR (1ull << 10)
#define EMU_MCR_COMP_PKT_LIFE (1ull << 11)
#define EMU_MCR_COMP_SL (1ull << 12)
#define EMU_MCR_COMP_FLOW_LABEL (1ull << 13)
#define EMU_MCR_COMP_HOP_LIMIT (1ull << 14)
#define EMU_MCR_COMP_SCOPE (1ull << 15)
#define EMU_MCR_COMP_JOIN_STATE (1ull << 16)
#define EMU_MCR_COMP_PROXY_JOIN (1ull << 17)

/* JoinState bits. */
#define EMU_MC_JOIN_FULL 0x1
#define EMU_MC_JOIN_NON 0x2
#define EMU_MC_JOIN_SEND_ONLY 0x4
#define EMU_MC_JOIN_SEND_ONLY_FULL 0x8

/* ServiceRecord (15.2.5.14), 176 bytes. */
struct emu_sa_service_rec {
	uint64_t id;
	uint8_t gid[16];
	uint16_t pkey;
	uint32_t lease; /* seconds, 0xffffffff = indefinite */
	uint8_t key[16];
	uint8_t name[64];
	uint8_t data8[16];
	uint16_t data16[8];
	uint32_t data32[4];
	uint64_t data64[2];
};

#define EMU_SR_COMP_ID (1ull << 0)
#define EMU_SR_COMP_GID (1ull << 1)
#define EMU_SR_COMP_PKEY (1ull << 2)
#define EMU_SR_COMP_LEASE (1ull << 4)
#define EMU_SR_COMP_KEY (1ull << 5)
#define EMU_SR_COMP_NAME (1ull << 6)
#define EMU_SR_COMP_DATA8(i) (1ull << (7 + (i)))
#define EMU_SR_COMP_DATA16(i) (1ull << (23 + (i)))
#define EMU_SR_COMP_DATA32(i) (1ull << (31 + (i)))
#define EMU_SR_COMP_DATA64(i) (1ull << (35 + (i)))
#define EMU_SR_LEASE_INFINITE 0xffffffffu

/* NodeRecord (15.2.5.2), 108 bytes: a port's LID and its node's NodeInfo (14.2.5.3) and
 * NodeDescription. */
struct emu_sa_node_rec {
	uint16_t lid;
	uint8_t base_version, class_version, node_type, num_ports;
	uint64_t sys_guid, node_guid, port_guid;
	uint16_t partition_cap, device_id;
	uint32_t revision;
	uint8_t local_port_num;
	uint32_t vendor_id;
	uint8_t node_desc[64];
};

#define EMU_NR_COMP_LID (1ull << 0)
#define EMU_NR_COMP_NODE_TYPE (1ull << 4)
#define EMU_NR_COMP_NODE_GUID (1ull << 7)
#define EMU_NR_COMP_PORT_GUID (1ull << 8)
#define EMU_NR_COMP_NODE_DESC (1ull << 14)

/* PortInfoRecord (15.2.5.3), 68 bytes: EndPortLID, PortNum, Options and the port's PortInfo
 * (14.2.5.6), one component mask bit per PortInfo field in order (OpenSM's IB_PIR_COMPMASK_*;
 * the reserved runs have bits of their own). */
struct emu_sa_portinfo_rec {
	uint16_t lid;
	uint8_t port_num, options;
	uint64_t m_key, gid_prefix;
	uint16_t base_lid, sm_lid;
	uint32_t cap_mask;
	uint16_t diag_code, m_key_lease;
	uint8_t local_port, width_enabled, width_supported, width_active;
	uint8_t speed_supported, port_state, phys_state, link_down_def, m_key_prot, lmc;
	uint8_t speed_active, speed_enabled, neighbor_mtu, sm_sl, vl_cap, init_type;
	uint8_t vl_high_limit, vl_arb_high_cap, vl_arb_low_cap, init_type_reply, mtu_cap;
	uint8_t vl_stall_count, hoq_life, oper_vls, part_enf_in, part_enf_out, filter_raw_in,
		filter_raw_out;
	uint16_t m_key_viol, p_key_viol, q_key_viol;
	uint8_t guid_cap, client_rereg, mcast_trap_supp, subnet_timeout, resp_time;
	uint8_t local_phys_err, overrun_err;
	uint16_t max_credit_hint;
	uint32_t round_trip;
	uint16_t cap_mask2;
	uint8_t speed_ext_active, speed_ext_supported, speed_ext_enabled;
};

#define EMU_PIR_COMP_LID (1ull << 0)
#define EMU_PIR_COMP_PORT_NUM (1ull << 1)
#define EMU_PIR_COMP_OPTIONS (1ull << 2)
#define EMU_PIR_COMP_BASE_LID (1ull << 5)
#define EMU_PIR_COMP_CAP_MASK (1ull << 7)
#define EMU_PIR_COMP_INIT_TYPE_REPLY (1ull << 30)
#define EMU_PIR_COMP_CLIENT_REREG (1ull << 43)
#define EMU_PIR_COMP_MCAST_TRAP_SUPP (1ull << 44)
#define EMU_PIR_COMP_MAX_CREDIT_HINT (1ull << 50)
#define EMU_PIR_COMP_ROUND_TRIP (1ull << 52)
#define EMU_PIR_COMP_CAP_MASK2 (1ull << 53)
#define EMU_PIR_COMP_SPEED_EXT (1ull << 54 | 1ull << 55 | 1ull << 57)
/* Options bit 7: the requester asks for the PortInfo as it is, without OpenSM's QDR folding
 * for ports with extended speeds. */
#define EMU_PIR_OPT_FULL 0x80
/* AttributeModifier bit 31 of a PortInfoRecord query: CapabilityMask(2) match by bits set
 * (IBA 1.2 errata) rather than by equality. */
#define EMU_PIR_ENHANCED_MATCH 0x80000000u

/* SMInfoRecord (15.2.5.8), 25 bytes: the SM port's LID and its SMInfo (14.2.5.13). */
struct emu_sa_sminfo_rec {
	uint16_t lid;
	uint64_t guid, sm_key;
	uint32_t act_count;
	uint8_t priority, sm_state;
};

#define EMU_SMIR_COMP_LID (1ull << 0)
#define EMU_SMIR_COMP_GUID (1ull << 2)
#define EMU_SMIR_COMP_PRIORITY (1ull << 5)
#define EMU_SMIR_COMP_SM_STATE (1ull << 6)
#define EMU_SM_STATE_MASTER 3

extern const struct emu_mad_record_desc emu_sa_portinfo_rec_desc;
extern const struct emu_mad_record_desc emu_sa_sminfo_rec_desc;
extern const struct emu_mad_record_desc emu_sa_node_rec_desc;
extern const struct emu_mad_record_desc emu_sa_path_rec_desc;
extern const struct emu_mad_record_desc emu_sa_mcmember_rec_desc;
extern const struct emu_mad_record_desc emu_sa_service_rec_desc;

/* IBTA rate encodings (PathRecord Rate, ibv_rate) to Mb/s, 0 for an unknown code; and the
 * largest code not faster than mbps (0 if none). Rate codes are not ordered by speed, so
 * selectors compare through these. */
unsigned emu_sa_rate_mbps(uint8_t rate);
uint8_t emu_sa_rate_from_mbps(unsigned mbps);

#endif
