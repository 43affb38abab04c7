/* The values every golden CM message of the tests is built from. An IPv4 RC connection
 * 192.0.2.65:49152 -> 192.0.2.66:20000 (service ID 0x1064e20) with ECE vendor 0x0002c9 and
 * options 3, and a UD SIDR exchange fe80::1:4660 -> fe80::2 port 20001 (service ID 0x1114e21). */
#include <string.h>

#include "cm_samples.h"

const uint16_t cm_sample_attrs[9] = {
	EMU_CM_ATTR_REQ,  EMU_CM_ATTR_MRA,  EMU_CM_ATTR_REP,	  EMU_CM_ATTR_RTU,	EMU_CM_ATTR_REJ,
	EMU_CM_ATTR_DREQ, EMU_CM_ATTR_DREP, EMU_CM_ATTR_SIDR_REQ, EMU_CM_ATTR_SIDR_REP,
};

static const uint8_t gid_a[16] = { [10] = 0xff, 0xff, 192, 0, 2, 65 };
static const uint8_t gid_b[16] = { [10] = 0xff, 0xff, 192, 0, 2, 66 };

void cm_sample(uint16_t attr_id, struct emu_cm_msg *m)
{
	struct emu_cma_hdr h = { .cma_version = 0, .ip_version = 4, .port = 0xc000 };

	memset(m, 0, sizeof(*m));
	m->tid = 0x0000000100001234ull;
	switch (attr_id) {
	case EMU_CM_ATTR_REQ:
		m->attr_mod = 3; /* ECE options */
		m->local_comm_id = 0x11223344;
		m->vendor_id = 0x0002c9;
		m->service_id = 0x0000000001064e20ull;
		m->local_ca_guid = 0x0002c90300a1b2c3ull;
		m->local_qpn = 0x11;
		m->responder_resources = 4;
		m->initiator_depth = 4;
		m->remote_cm_response_timeout = 20;
		m->end_to_end_flow_control = 1;
		m->starting_psn = 0xabcdef;
		m->local_cm_response_timeout = 20;
		m->retry_count = 7;
		m->pkey = 0xffff;
		m->path_mtu = 3;
		m->rnr_retry_count = 7;
		m->max_cm_retries = 15;
		memcpy(m->primary.local_gid, gid_a, 16);
		memcpy(m->primary.remote_gid, gid_b, 16);
		m->primary.packet_rate = 3;
		m->primary.hop_limit = 64;
		m->primary.local_ack_timeout = 17;
		memcpy(h.src, gid_a, 16);
		memcpy(h.dst, gid_b, 16);
		emu_cma_hdr_pack(m->private_data, &h);
		memcpy(m->private_data + EMU_CMA_HDR_LEN, "hello", 5);
		m->private_data_len = EMU_CMA_HDR_LEN + 5;
		break;
	case EMU_CM_ATTR_MRA:
		m->local_comm_id = 0x55667788;
		m->remote_comm_id = 0x11223344;
		m->message_mraed = EMU_CM_MSG_RESPONSE_REQ;
		m->service_timeout = 24;
		break;
	case EMU_CM_ATTR_REP:
		m->attr_mod = 3;
		m->local_comm_id = 0x55667788;
		m->remote_comm_id = 0x11223344;
		m->local_qpn = 0x12;
		m->vendor_id = 0x0002c9;
		m->starting_psn = 0x123456;
		m->responder_resources = 4;
		m->initiator_depth = 4;
		m->target_ack_delay = 15;
		m->end_to_end_flow_control = 1;
		m->rnr_retry_count = 7;
		m->local_ca_guid = 0x0002c90300d4e5f6ull;
		memcpy(m->private_data, "world", 5);
		m->private_data_len = 5;
		break;
	case EMU_CM_ATTR_RTU:
		m->local_comm_id = 0x11223344;
		m->remote_comm_id = 0x55667788;
		break;
	case EMU_CM_ATTR_REJ:
		m->local_comm_id = 0x55667788;
		m->remote_comm_id = 0x11223344;
		m->message_rejected = EMU_CM_MSG_RESPONSE_OTHER;
		m->reject_info_len = 8;
		m->reason = EMU_CM_REJ_TIMEOUT;
		memcpy(m->ari, (const uint8_t[8]){ 0x00, 0x02, 0xc9, 0x03, 0x00, 0xa1, 0xb2, 0xc3 }, 8);
		memcpy(m->private_data, "no", 2);
		m->private_data_len = 2;
		break;
	case EMU_CM_ATTR_DREQ:
		m->tid = 0x0000000111223344ull; /* cm_form_tid: hi_tid << 32 | local id */
		m->local_comm_id = 0x11223344;
		m->remote_comm_id = 0x55667788;
		m->remote_qpn_eecn = 0x12;
		break;
	case EMU_CM_ATTR_DREP:
		m->tid = 0x0000000111223344ull;
		m->local_comm_id = 0x55667788;
		m->remote_comm_id = 0x11223344;
		break;
	case EMU_CM_ATTR_SIDR_REQ:
		m->request_id = 0x01020304;
		m->pkey = 0xffff;
		m->service_id = 0x0000000001114e21ull;
		h.ip_version = 6;
		h.port = 0x1234;
		memcpy(h.src, (const uint8_t[16]){ 0xfe, 0x80, [15] = 1 }, 16);
		memcpy(h.dst, (const uint8_t[16]){ 0xfe, 0x80, [15] = 2 }, 16);
		emu_cma_hdr_pack(m->private_data, &h);
		m->private_data_len = EMU_CMA_HDR_LEN;
		break;
	case EMU_CM_ATTR_SIDR_REP:
		m->request_id = 0x01020304;
		m->sidr_status = EMU_CM_SIDR_SUCCESS;
		m->vendor_id = 0xc9ab;
		m->qpn = 0x13;
		m->service_id = 0x0000000001114e21ull;
		m->qkey = 0x01234567;
		break;
	}
}
