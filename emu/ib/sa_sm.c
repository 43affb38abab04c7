/* What the fake SA says of itself and of its SM: ClassPortInfo (Get) and the SMInfoRecord of
 * the fabric's one SM (Get, GetTable), as OpenSM's osm_sa_class_port_info.c and
 * osm_sa_sminfo_record.c answer them. docs/sa.md "ClassPortInfo and SMInfoRecord". */
#include <errno.h>
#include <string.h>

#include "emu/hca/pkt.h"
#include "emu/ib/sa_priv.h"
#include "emu/ib/sma.h"

#define CPI_LEN 72
#define QP1_QKEY 0x80010000u

/* ClassPortInfo CapabilityMask bits of the SA (IBA table 195, OpenSM's OSM_CAP_IS_*): the
 * fake SA serves MCMemberRecord (UD multicast) and matches PortInfoRecord CapabilityMask by
 * bits; it has no Notice/InformInfo, MultiPathRecord or optional records. */
#define CAP_UD_MCAST (1u << 9)
#define CAP_PORTINFO_CAPMASK_MATCH (1u << 13)
/* CapabilityMask2 (OSM_CAP2_IS_*): PortInfoRecords carry the PortInfo unchanged (bit 6),
 * CapabilityMask2 matched by bits (10), SendOnlyFullMember joins (12: the kernel's IPoIB asks
 * for this bit before it joins send-only). */
#define CAP2_FULL_PORTINFO_REC (1u << 6)
#define CAP2_PORTINFO_CAPMASK2_MATCH (1u << 10)
#define CAP2_SEND_ONLY_FULL_MEMBER (1u << 12)

/* The RespTimeValue for a response delay: the smallest n with 4.096 us * 2^n >= delay. */
static uint8_t resp_time_value(uint64_t delay_ns)
{
	uint8_t n = 0;

	while (n < 31 && 4096ull << n < delay_ns)
		n++;
	return n;
}

int emu_sa_class_port_info(struct emu_sa *sa, const uint8_t *mad, size_t len, uint8_t **resp,
			   size_t *resp_len)
{
	uint8_t c[CPI_LEN] = { 0 };
	uint32_t cap2 = CAP2_FULL_PORTINFO_REC | CAP2_PORTINFO_CAPMASK2_MATCH |
			CAP2_SEND_ONLY_FULL_MEMBER;

	/* OpenSM answers every method but Get with ERR_REQ_INVALID */
	if (mad[3] != EMU_MAD_METHOD_GET)
		return emu_sa_respond(mad, len, EMU_SA_STATUS(EMU_SA_ERR_REQ_INVALID), NULL,
				      NULL, 0, resp, resp_len);
	c[0] = EMU_MAD_BASE_VERSION;
	c[1] = EMU_SA_CLASS_VERSION;
	emu_be16_put(c + 2, CAP_UD_MCAST | CAP_PORTINFO_CAPMASK_MATCH);
	emu_be32_put(c + 4, cap2 << 5 | resp_time_value(sa->f->sm.response_delay_ns));
	emu_be32_put(c + 32, 1);         /* RedirectQP: QP1, no redirection */
	emu_be32_put(c + 36, QP1_QKEY);  /* RedirectQ_Key */
	emu_be32_put(c + 68, QP1_QKEY);  /* TrapQ_Key */
	if (emu_sa_respond(mad, len, 0, NULL, NULL, 0, resp, resp_len))
		return -ENOMEM;
	memset(*resp + EMU_SA_HDR_LEN, 0, *resp_len - EMU_SA_HDR_LEN);
	memcpy(*resp + EMU_SA_HDR_LEN, c, sizeof(c));
	return 0;
}

/* The SM's port: its GUID and LID range, from the node owning the SM's LID. */
static int sm_port(const struct emu_fabric *f, uint64_t *guid, uint16_t *lid, uint8_t *lmc)
{
	struct emu_sma_node n;

	if (!f->sm.present || emu_sma_find_lid(f, f->sm.sm_lid, &n))
		return -ENOENT;
	if (n.kind == EMU_EP_SWITCH_PORT) {
		*guid = f->switches[n.node].node_guid;
		*lid = f->switches[n.node].lid;
		*lmc = 0;
	} else {
		const struct emu_port *p = &f->hosts[n.node].devices[n.device].ports[n.port - 1];

		*guid = p->port_guid;
		*lid = p->lid;
		*lmc = p->lmc;
	}
	return 0;
}

int emu_sa_sminfo(struct emu_sa *sa, const uint8_t *mad, size_t len, uint8_t **resp,
		  size_t *resp_len)
{
	struct emu_sa_hdr sh;
	struct emu_sa_sminfo_rec q, r = { 0 };
	uint8_t w[25];
	size_t n = 0;
	uint8_t lmc;

	emu_sa_hdr_get(mad + 36, &sh);
	emu_mad_record_unpack(&emu_sa_sminfo_rec_desc, mad + EMU_SA_HDR_LEN, &q);
	/* The emulated SM is master at priority 0 (OpenSM's default sm_priority); it sends no
	 * SMPs (the model configures the subnet), so its ActCount stays 0. */
	r.priority = 0;
	r.sm_state = EMU_SM_STATE_MASTER;
	if (!sm_port(sa->f, &r.guid, &r.lid, &lmc) &&
	    (!(sh.comp_mask & EMU_SMIR_COMP_LID) ||
	     (q.lid >= r.lid && q.lid <= r.lid + (1u << lmc) - 1)) &&
	    (!(sh.comp_mask & EMU_SMIR_COMP_GUID) || q.guid == r.guid) &&
	    (!(sh.comp_mask & EMU_SMIR_COMP_PRIORITY) || q.priority == r.priority) &&
	    (!(sh.comp_mask & EMU_SMIR_COMP_SM_STATE) || q.sm_state == r.sm_state)) {
		emu_mad_record_pack(&emu_sa_sminfo_rec_desc, &r, w);
		n = 1;
	}
	return emu_sa_respond_records(mad, len, &emu_sa_sminfo_rec_desc, w, n, resp, resp_len);
}
