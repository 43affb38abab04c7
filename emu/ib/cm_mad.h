/* The IB Communication Manager's wire formats: CM MADs (IBTA vol. 1 ch. 12.6, tables 106-120)
 * and the RDMA IP CM service's private-data header (annex A11, the kernel's struct cma_hdr).
 *
 * A CM message is a 256-byte MAD (IBTA 13.4.2: 24-byte common header + 232 bytes of data) sent
 * with a UD SEND to QP1 (GSI), Q_Key 0x80010000. Every message layout is a data table
 * (emu/ib/cm_mad.c) of fields given, like the kernel's include/rdma/ibta_vol1_c12.h, as a byte
 * offset from the start of the MAD data (after the common header), a bit offset from the most
 * significant bit of that byte, and a width in bits. A field is a bit string in network order
 * (most significant bit first), so one generic packer/unpacker serves every message.
 *
 * The decoded view of every message is one struct, emu_cm_msg, whose members are named after
 * the IBTA fields; a message uses the members its table lists and ignores the others.
 */
#ifndef RDMAEMU_EMU_CM_MAD_H
#define RDMAEMU_EMU_CM_MAD_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "emu/ib/mad.h"

/* ---- the MAD common header (IBTA 13.4.3): emu/ib/mad.h (the SA work's) has the lengths,
 * methods and struct emu_mad_hdr; the CM keeps its own header accessors below so that the CM
 * library links without the SA's. ---- */
#ifndef EMU_MAD_DATA_LEN
#define EMU_MAD_DATA_LEN (EMU_MAD_LEN - EMU_MAD_HDR_LEN) /* 232 */
#endif

#define EMU_CM_MGMT_CLASS 0x07	 /* IB_MGMT_CLASS_CM */
#define EMU_CM_CLASS_VERSION 2	 /* IB_CM_CLASS_VERSION: what ib_cm registers and sends */
#define EMU_CM_QP 1		 /* CM MADs go to the GSI, QP1 */
#define EMU_CM_QKEY EMU_QP1_QKEY /* IB_QP1_QKEY, the well-known GSI Q_Key (IBTA 10.2.5) */

/* Attribute IDs (IBTA table 104; cm_msgs.h CM_*_ATTR_ID). */
enum emu_cm_attr {
	EMU_CM_ATTR_CLASSPORTINFO = 0x0001,
	EMU_CM_ATTR_REQ = 0x0010,
	EMU_CM_ATTR_MRA = 0x0011,
	EMU_CM_ATTR_REJ = 0x0012,
	EMU_CM_ATTR_REP = 0x0013,
	EMU_CM_ATTR_RTU = 0x0014,
	EMU_CM_ATTR_DREQ = 0x0015,
	EMU_CM_ATTR_DREP = 0x0016,
	EMU_CM_ATTR_SIDR_REQ = 0x0017,
	EMU_CM_ATTR_SIDR_REP = 0x0018,
	EMU_CM_ATTR_LAP = 0x0019,
	EMU_CM_ATTR_APR = 0x001a,
};

/* "REQ", "SIDR_REP", "ClassPortInfo"; NULL for an attribute ID the CM does not have. */
const char *emu_cm_attr_name(uint16_t attr_id);

/* Private-data sizes (IBTA tables 106-120; include/rdma/ib_cm.h IB_CM_*_PRIVATE_DATA_SIZE). The
 * kernel's ib_send_cm_* return -EINVAL beyond them (spec §9). */
#define EMU_CM_REQ_PRIVATE_DATA_SIZE 92
#define EMU_CM_MRA_PRIVATE_DATA_SIZE 222
#define EMU_CM_REJ_PRIVATE_DATA_SIZE 148
#define EMU_CM_REP_PRIVATE_DATA_SIZE 196
#define EMU_CM_RTU_PRIVATE_DATA_SIZE 224
#define EMU_CM_DREQ_PRIVATE_DATA_SIZE 220
#define EMU_CM_DREP_PRIVATE_DATA_SIZE 224
#define EMU_CM_SIDR_REQ_PRIVATE_DATA_SIZE 216
#define EMU_CM_SIDR_REP_PRIVATE_DATA_SIZE 136
#define EMU_CM_LAP_PRIVATE_DATA_SIZE 168
#define EMU_CM_APR_PRIVATE_DATA_SIZE 148
#define EMU_CM_PRIVATE_DATA_MAX 224
#define EMU_CM_REJ_ARI_LENGTH 72      /* IB_CM_REJ_ARI_LENGTH */
#define EMU_CM_SIDR_REP_INFO_LENGTH 72 /* IB_CM_SIDR_REP_INFO_LENGTH */
#define EMU_CM_APR_INFO_LENGTH 72

/* The private-data field size of a message, or -1 for an attribute without one. */
int emu_cm_private_data_size(uint16_t attr_id);

/* REJ "Message REJected" and MRA "Message MRAed" (IBTA 12.6.6/12.6.7; cm_msgs.h
 * enum cm_msg_response). */
enum emu_cm_msg_response {
	EMU_CM_MSG_RESPONSE_REQ = 0,
	EMU_CM_MSG_RESPONSE_REP = 1,
	EMU_CM_MSG_RESPONSE_OTHER = 2,
};
const char *emu_cm_msg_response_name(unsigned v);

/* REJ reasons (IBTA table 109; include/rdma/ib_cm.h enum ib_cm_rej_reason). Which one the
 * kernel sends when (spec §7.3): no listener 8 (cm_match_req), duplicate/stale 10, rdma_reject
 * 28, rdma_reject_ece 35 (ucma maps RDMA_USER_CM_REJ_VENDOR_OPTION_NOT_SUPPORTED to it),
 * destroy while the REQ is outstanding 4 (cm_destroy_id). */
enum emu_cm_rej_reason {
	EMU_CM_REJ_NO_QP = 1,
	EMU_CM_REJ_NO_EEC = 2,
	EMU_CM_REJ_NO_RESOURCES = 3,
	EMU_CM_REJ_TIMEOUT = 4,
	EMU_CM_REJ_UNSUPPORTED = 5,
	EMU_CM_REJ_INVALID_COMM_ID = 6,
	EMU_CM_REJ_INVALID_COMM_INSTANCE = 7,
	EMU_CM_REJ_INVALID_SERVICE_ID = 8,
	EMU_CM_REJ_INVALID_TRANSPORT_TYPE = 9,
	EMU_CM_REJ_STALE_CONN = 10,
	EMU_CM_REJ_RDC_NOT_EXIST = 11,
	EMU_CM_REJ_INVALID_GID = 12,
	EMU_CM_REJ_INVALID_LID = 13,
	EMU_CM_REJ_INVALID_SL = 14,
	EMU_CM_REJ_INVALID_TRAFFIC_CLASS = 15,
	EMU_CM_REJ_INVALID_HOP_LIMIT = 16,
	EMU_CM_REJ_INVALID_PACKET_RATE = 17,
	EMU_CM_REJ_INVALID_ALT_GID = 18,
	EMU_CM_REJ_INVALID_ALT_LID = 19,
	EMU_CM_REJ_INVALID_ALT_SL = 20,
	EMU_CM_REJ_INVALID_ALT_TRAFFIC_CLASS = 21,
	EMU_CM_REJ_INVALID_ALT_HOP_LIMIT = 22,
	EMU_CM_REJ_INVALID_ALT_PACKET_RATE = 23,
	EMU_CM_REJ_PORT_CM_REDIRECT = 24,
	EMU_CM_REJ_PORT_REDIRECT = 25,
	EMU_CM_REJ_INVALID_MTU = 26,
	EMU_CM_REJ_INSUFFICIENT_RESP_RESOURCES = 27,
	EMU_CM_REJ_CONSUMER_DEFINED = 28,
	EMU_CM_REJ_INVALID_RNR_RETRY = 29,
	EMU_CM_REJ_DUPLICATE_LOCAL_COMM_ID = 30,
	EMU_CM_REJ_INVALID_CLASS_VERSION = 31,
	EMU_CM_REJ_INVALID_FLOW_LABEL = 32,
	EMU_CM_REJ_INVALID_ALT_FLOW_LABEL = 33,
	/* 34 is unassigned in the kernel's enum */
	EMU_CM_REJ_VENDOR_OPTION_NOT_SUPPORTED = 35,
};
#define EMU_CM_REJ_REASON_MAX 35
/* The enumerator's name without prefix ("INVALID_SERVICE_ID"), NULL for an unassigned code. */
const char *emu_cm_rej_reason_name(unsigned reason);
/* The kernel's ibcm_reject_msg() text ("invalid service ID"), "unrecognized reason" else. */
const char *emu_cm_rej_reason_msg(unsigned reason);

/* SIDR_REP status (IBTA table 121; ib_cm.h enum ib_cm_sidr_status). */
enum emu_cm_sidr_status {
	EMU_CM_SIDR_SUCCESS = 0,
	EMU_CM_SIDR_UNSUPPORTED = 1, /* no listener: cm_sidr_req_handler */
	EMU_CM_SIDR_REJECT = 2,	     /* rdma_reject on UD, or destroy of a pending SIDR id */
	EMU_CM_SIDR_NO_QP = 3,
	EMU_CM_SIDR_REDIRECT = 4,
	EMU_CM_SIDR_UNSUPPORTED_VERSION = 5,
};
const char *emu_cm_sidr_status_name(unsigned status);

/* REQ Transport Service Type (12.6.5) and what the kernel's cm_req_set_qp_type writes. */
enum {
	EMU_CM_TRANSPORT_RC = 0,
	EMU_CM_TRANSPORT_UC = 1,
	EMU_CM_TRANSPORT_RD = 2,
	EMU_CM_TRANSPORT_EXTENDED = 3, /* XRC: extended transport type 1 */
};
#define EMU_CM_EXT_TRANSPORT_XRC 1

/* One path of a REQ (primary/alternate) or the LAP's alternate path. */
struct emu_cm_path {
	uint16_t local_lid, remote_lid; /* 0xffff (permissive) when routed (hop limit > 1) */
	uint8_t local_gid[16], remote_gid[16];
	uint32_t flow_label;	      /* 20 bits */
	uint8_t packet_rate;	      /* 6 bits, IBTA rate encoding */
	uint8_t traffic_class, hop_limit;
	uint8_t sl;		      /* 4 bits */
	uint8_t subnet_local;	      /* 1 bit */
	uint8_t local_ack_timeout;    /* 5 bits */
};

/* The decoded view of any CM message. Widths of the wire fields are in the tables; a value that
 * does not fit its field makes emu_cm_pack fail (EMU_CM_ERANGE) instead of being truncated. */
struct emu_cm_msg {
	/* MAD header: base version, class, class version are fixed; method is Send */
	uint16_t status;
	uint64_t tid;
	uint32_t attr_mod; /* ECE: the options (ece.attr_mod) of REQ, REP, SIDR_REP */

	uint32_t local_comm_id, remote_comm_id;
	uint64_t service_id;
	uint64_t local_ca_guid;
	uint32_t qkey;
	uint32_t local_qpn;	/* 24 */
	uint32_t local_eecn;	/* 24 (REP: Local EE Context Number, XRC TGT: the SRQ/QPN) */
	uint32_t remote_eecn;	/* 24 */
	uint8_t responder_resources, initiator_depth;
	uint8_t remote_cm_response_timeout; /* 5 */
	uint8_t transport_service_type;	    /* 2 */
	uint8_t end_to_end_flow_control;    /* 1 */
	uint32_t starting_psn;		    /* 24 */
	uint8_t local_cm_response_timeout;  /* 5 */
	uint8_t retry_count;		    /* 3 */
	uint16_t pkey;
	uint8_t path_mtu;		    /* 4, IB MTU enum */
	uint8_t rdc_exists;		    /* 1 */
	uint8_t rnr_retry_count;	    /* 3 */
	uint8_t max_cm_retries;		    /* 4 */
	uint8_t srq;			    /* 1 */
	uint8_t extended_transport_type;    /* 3 */
	struct emu_cm_path primary, alternate;
	uint8_t sap_supported; /* 1 */
	/* ECE vendor ID (IBTA 1.4; kernel cm_format_req/cm_format_rep/cm_format_sidr_rep): 24 bits
	 * in REQ and REP (REP splits it over three reserved bytes), 16 in SIDR_REP. */
	uint32_t vendor_id;

	/* REP */
	uint8_t target_ack_delay;  /* 5 */
	uint8_t failover_accepted; /* 2 */

	/* MRA */
	uint8_t message_mraed;	 /* 2, enum emu_cm_msg_response */
	uint8_t service_timeout; /* 5 */

	/* REJ */
	uint8_t message_rejected; /* 2 */
	uint8_t reject_info_len;  /* 7, <= 72 */
	uint16_t reason;
	uint8_t ari[EMU_CM_REJ_ARI_LENGTH];

	/* DREQ, LAP */
	uint32_t remote_qpn_eecn; /* 24 */

	/* SIDR_REQ, SIDR_REP */
	uint32_t request_id;
	uint8_t sidr_status;
	uint8_t info_len; /* SIDR_REP / APR additional information length, <= 72 */
	uint32_t qpn;	  /* SIDR_REP QPN, 24 */
	uint8_t info[EMU_CM_SIDR_REP_INFO_LENGTH];

	/* APR */
	uint8_t ap_status;

	/* pack: bytes of private_data to send (the rest of the field is zero), <= the message's
	 * size; unpack: always the field's full size, as the kernel reports it (spec §9). */
	uint8_t private_data_len;
	uint8_t private_data[EMU_CM_PRIVATE_DATA_MAX];
};

/* One field of a message layout. The member's value bits [shift, shift + width) go to the wire
 * at bit `bit` of byte `byte` of the MAD data, most significant first; a byte-array member
 * (size > 8) is copied whole (width = 8 * size). A member split over several fields (the REP's
 * vendor ID) has one row per part. */
struct emu_cm_field {
	const char *name; /* IBTA's name, for errors and dumps */
	uint16_t member;  /* offsetof(struct emu_cm_msg, ...) */
	uint8_t size;	  /* sizeof the member: 1, 2, 4, 8, or a byte array's length */
	uint8_t byte;	  /* from the start of the MAD data (add EMU_MAD_HDR_LEN for the MAD) */
	uint8_t bit;	  /* 0 = most significant bit of that byte */
	uint16_t width;	  /* bits */
	uint8_t shift;	  /* lowest bit of the member carried here */
};

struct emu_cm_layout {
	uint16_t attr_id;
	const char *name;
	const struct emu_cm_field *fields; /* ends with name == NULL */
	uint8_t private_off;		   /* private data, in the MAD data */
	uint8_t private_size;
};

/* The layout table of a CM message, NULL for ClassPortInfo or an unknown attribute. */
const struct emu_cm_layout *emu_cm_layout(uint16_t attr_id);

/* Errors of pack/unpack, as negative errno values. */
#define EMU_CM_ETRUNC ENODATA		 /* fewer than 256 bytes */
#define EMU_CM_ECLASS EPROTONOSUPPORT	 /* base version or management class not the CM's */
#define EMU_CM_EVERSION EPROTO		 /* class version not 2 */
#define EMU_CM_EMETHOD EOPNOTSUPP	 /* method not Send */
#define EMU_CM_EATTR ENOENT		 /* attribute ID without a message layout */
#define EMU_CM_ERANGE ERANGE		 /* a value does not fit its field */
#define EMU_CM_EPRIVLEN EMSGSIZE	 /* private_data_len larger than the message's field */
#define EMU_CM_EINFOLEN EOVERFLOW	 /* ARI / additional information length over 72 */
/* A sentence for any of the above (or strerror's). */
const char *emu_cm_strerror(int err);

/* Writes a CM message: the MAD header (base version 1, class 0x07, class version 2, method
 * Send, status, TID, attribute ID, attribute modifier) and every field of the attribute's
 * table, reserved bits and unused private data zero. 0 or a negative EMU_CM_E* / -EINVAL (NULL
 * argument). On a field error, *bad_field (if given) names the field. */
int emu_cm_pack_ex(uint16_t attr_id, const struct emu_cm_msg *m, uint8_t mad[EMU_MAD_LEN],
		   const char **bad_field);
static inline int emu_cm_pack(uint16_t attr_id, const struct emu_cm_msg *m,
			      uint8_t mad[EMU_MAD_LEN])
{
	return emu_cm_pack_ex(attr_id, m, mad, NULL);
}

/* Reads a CM message of `len` bytes (a UD payload: must be >= 256; bytes past 256 ignored).
 * Checks the header (base version, class, class version, method Send), the attribute, and the
 * length fields (ARI/info <= 72, MRAed/REJected <= 2). *attr_id gets the attribute ID even when
 * the rest fails. 0 or a negative EMU_CM_E* code; *bad_field as for pack. */
int emu_cm_unpack_ex(const uint8_t *mad, size_t len, uint16_t *attr_id, struct emu_cm_msg *m,
		     const char **bad_field);
static inline int emu_cm_unpack(const uint8_t *mad, size_t len, uint16_t *attr_id,
				struct emu_cm_msg *m)
{
	return emu_cm_unpack_ex(mad, len, attr_id, m, NULL);
}


/* ---- the RDMA IP CM service (annex A11; kernel cma.c struct cma_hdr, cma_format_hdr) ----
 * The first 36 bytes of the REQ / SIDR_REQ private data of an AF_INET/AF_INET6 rdma_cm id:
 *   byte 0     CMA version (A11: MajV 4 bits, MinV 4 bits) = 0x00 (CMA_VERSION)
 *   byte 1     IP version in bits 7:4 (4 or 6), bits 3:0 reserved
 *   bytes 2-3  the active side's (source) port
 *   bytes 4-19 source IP, 20-35 destination IP; IPv4 in the last 4 bytes, the first 12 zero
 *              (union cma_ip_addr ip4.pad[3])
 * That leaves 92 - 36 = 56 bytes of REQ and 216 - 36 = 180 of SIDR_REQ to the application. */
#define EMU_CMA_HDR_LEN 36
#define EMU_CMA_VERSION 0x00
#define EMU_CMA_REQ_USER_PRIVATE_DATA (EMU_CM_REQ_PRIVATE_DATA_SIZE - EMU_CMA_HDR_LEN)
#define EMU_CMA_SIDR_REQ_USER_PRIVATE_DATA (EMU_CM_SIDR_REQ_PRIVATE_DATA_SIZE - EMU_CMA_HDR_LEN)

struct emu_cma_hdr {
	uint8_t cma_version;
	uint8_t ip_version; /* 4 or 6 */
	uint16_t port;	    /* host order */
	/* IPv6 addresses, or IPv4 in bytes 12-15 (0..11 ignored on pack, zero on unpack) */
	uint8_t src[16], dst[16];
};

/* 0, or -EINVAL (NULL, cma_version not 0) / -EAFNOSUPPORT (ip_version not 4 or 6). */
int emu_cma_hdr_pack(uint8_t p[EMU_CMA_HDR_LEN], const struct emu_cma_hdr *h);
/* Same errors, as the kernel's cma_get_net_info/cma_save_ip_info reject such a REQ. */
int emu_cma_hdr_unpack(const uint8_t *p, size_t len, struct emu_cma_hdr *h);

/* RDMA port spaces and the IB service IDs of IP ids (include/rdma/rdma_cm.h; spec §2.3):
 * service ID = port space << 16 | port. */
#define EMU_RDMA_PS_IPOIB 0x0002
#define EMU_RDMA_PS_IB 0x013f
#define EMU_RDMA_PS_TCP 0x0106
#define EMU_RDMA_PS_UDP 0x0111
#define EMU_RDMA_IB_IP_PS_MASK 0xffffffffffff0000ull
#define EMU_RDMA_IB_IP_PORT_MASK 0x000000000000ffffull
#define EMU_RDMA_IB_IP_PS_TCP 0x0000000001060000ull
#define EMU_RDMA_IB_IP_PS_UDP 0x0000000001110000ull
#define EMU_RDMA_IB_IP_PS_IB 0x00000000013f0000ull

static inline uint64_t emu_cma_service_id(uint16_t ps, uint16_t port)
{
	return (uint64_t)ps << 16 | port; /* cma.c rdma_get_service_id */
}
/* The port space of an IP service ID (TCP, UDP, IB or IPOIB), or 0 when the ID is not one. */
uint16_t emu_cma_service_id_ps(uint64_t sid);
static inline uint16_t emu_cma_service_id_port(uint64_t sid)
{
	return (uint16_t)(sid & EMU_RDMA_IB_IP_PORT_MASK);
}

#endif
