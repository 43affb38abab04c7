/* The umad buffer's accessors, debug dumps and names (rdma-core's umad.c and umad_str.c). */
#include <endian.h>
#include <stdio.h>
#include <string.h>

#include "emu/umad/umad_priv.h"

#define EXPORT __attribute__((visibility("default")))

EXPORT void *umad_get_mad(void *umad)
{
	return ((ib_user_mad_t *)umad)->data;
}

EXPORT size_t umad_size(void)
{
	return sizeof(ib_user_mad_t);
}

EXPORT int umad_status(void *umad)
{
	return (int)((ib_user_mad_t *)umad)->status;
}

EXPORT ib_mad_addr_t *umad_get_mad_addr(void *umad)
{
	return &((ib_user_mad_t *)umad)->addr;
}

EXPORT int umad_set_grh(void *umad, void *mad_addr)
{
	ib_user_mad_t *u = umad;
	ib_mad_addr_t *a = mad_addr;

	if (a) {
		u->addr.grh_present = 1;
		memcpy(u->addr.gid, a->gid, 16);
		u->addr.flow_label = htobe32(a->flow_label);
		u->addr.hop_limit = a->hop_limit;
		u->addr.traffic_class = a->traffic_class;
	} else {
		u->addr.grh_present = 0;
	}
	return 0;
}

EXPORT int umad_set_pkey(void *umad, int pkey_index)
{
	((ib_user_mad_t *)umad)->addr.pkey_index = (uint16_t)pkey_index;
	return 0;
}

EXPORT int umad_get_pkey(void *umad)
{
	return ((ib_user_mad_t *)umad)->addr.pkey_index;
}

EXPORT int umad_set_addr(void *umad, int dlid, int dqp, int sl, int qkey)
{
	ib_user_mad_t *u = umad;

	u->addr.qpn = htobe32((uint32_t)dqp);
	u->addr.lid = htobe16((uint16_t)dlid);
	u->addr.qkey = htobe32((uint32_t)qkey);
	u->addr.sl = (uint8_t)sl;
	return 0;
}

EXPORT int umad_set_addr_net(void *umad, uint16_t dlid, uint32_t dqp, int sl, uint32_t qkey)
{
	ib_user_mad_t *u = umad;

	u->addr.qpn = dqp;
	u->addr.lid = dlid;
	u->addr.qkey = qkey;
	u->addr.sl = (uint8_t)sl;
	return 0;
}

EXPORT int umad_debug(int level)
{
	if (level >= 0)
		umad_debug_level = level;
	return umad_debug_level;
}

EXPORT void umad_addr_dump(ib_mad_addr_t *addr)
{
	char gid[64] = "";

	for (int i = 0; i < 16; i++)
		snprintf(gid + 2 * i, sizeof(gid) - 2 * (size_t)i, "%02x", addr->gid[i]);
	fprintf(stderr,
		"qpn %d qkey 0x%x lid %u sl %d\n"
		"grh_present %d gid_index %d hop_limit %d traffic_class %d flow_label 0x%x pkey_index 0x%x\n"
		"Gid 0x%s\n",
		be32toh(addr->qpn), be32toh(addr->qkey), be16toh(addr->lid), addr->sl,
		addr->grh_present, addr->gid_index, addr->hop_limit, addr->traffic_class,
		be32toh(addr->flow_label), addr->pkey_index, gid);
}

EXPORT void umad_dump(void *umad)
{
	ib_user_mad_t *u = umad;

	fprintf(stderr, "agent id %d status %x timeout %d\n", u->agent_id, u->status,
		u->timeout_ms);
	umad_addr_dump(&u->addr);
}

/* ---- names ---- */

EXPORT const char *umad_class_str(uint8_t mgmt_class)
{
	switch (mgmt_class) {
	case 0x01: return "Subn";
	case 0x81: return "SubnDirectedRoute";
	case 0x03: return "SubnAdmin";
	case 0x04: return "Perf";
	case 0x05: return "BM";
	case 0x06: return "DevMgt";
	case 0x07: return "ComMgt";
	case 0x08: return "SNMP";
	case 0x10: return "DevAdm";
	case 0x21: return "BIS";
	case 0x2e: return "CC";
	default:
		if (mgmt_class >= 0x09 && mgmt_class <= 0x0f)
			return "Vendor";
		if (mgmt_class >= 0x30 && mgmt_class <= 0x4f)
			return "VendorOUI";
		return "<unknown>";
	}
}

EXPORT const char *umad_method_str(uint8_t mgmt_class, uint8_t method)
{
	if (mgmt_class == 0x03)
		switch (method) {
		case 0x12: return "GetTable";
		case 0x92: return "GetTableResp";
		case 0x13: return "GetTraceTable";
		case 0x14: return "GetMulti";
		case 0x94: return "GetMultiResp";
		case 0x15: return "Delete";
		case 0x95: return "DeleteResp";
		default: break;
		}
	switch (method) {
	case 0x01: return "Get";
	case 0x02: return "Set";
	case 0x81: return "GetResp";
	case 0x03: return "Send";
	case 0x05: return "Trap";
	case 0x06: return "Report";
	case 0x86: return "ReportResp";
	case 0x07: return "TrapRepress";
	default: return "<unknown>";
	}
}

static const char *smp_attr(uint16_t id)
{
	switch (id) {
	case 0x0002: return "Notice";
	case 0x0010: return "NodeDescription";
	case 0x0011: return "NodeInfo";
	case 0x0012: return "SwitchInfo";
	case 0x0014: return "GUIDInfo";
	case 0x0015: return "PortInfo";
	case 0x0016: return "P_KeyTable";
	case 0x0017: return "SLtoVLMappingTable";
	case 0x0018: return "VLArbitrationTable";
	case 0x0019: return "LinearForwardingTable";
	case 0x001a: return "RandomForwardingTable";
	case 0x001b: return "MulticastForwardingTable";
	case 0x0020: return "SMInfo";
	case 0x0030: return "VendorDiag";
	case 0x0031: return "LedInfo";
	default: return "<unknown>";
	}
}

static const char *sa_attr(uint16_t id)
{
	switch (id) {
	case 0x0011: return "NodeRecord";
	case 0x0012: return "PortInfoRecord";
	case 0x0013: return "SLtoVLMappingTableRecord";
	case 0x0014: return "SwitchInfoRecord";
	case 0x0015: return "LinearForwardingTableRecord";
	case 0x0018: return "SMInfoRecord";
	case 0x0020: return "LinkRecord";
	case 0x0030: return "GuidInfoRecord";
	case 0x0031: return "ServiceRecord";
	case 0x0033: return "P_KeyTableRecord";
	case 0x0035: return "PathRecord";
	case 0x0038: return "MCMemberRecord";
	case 0x0039: return "TraceRecord";
	case 0x003a: return "MultiPathRecord";
	case 0x00f3: return "InformInfoRecord";
	default: return "<unknown>";
	}
}

static const char *pm_attr(uint16_t id)
{
	switch (id) {
	case 0x0001: return "ClassPortInfo";
	case 0x0010: return "PortSamplesControl";
	case 0x0011: return "PortSamplesResult";
	case 0x0012: return "PortCounters";
	case 0x001d: return "PortCountersExtended";
	default: return "<unknown>";
	}
}

EXPORT const char *umad_attribute_str(uint8_t mgmt_class, uint16_t attr_id)
{
	uint16_t id = be16toh(attr_id);

	switch (mgmt_class) {
	case 0x01:
	case 0x81:
		return smp_attr(id);
	case 0x03:
		return id == 0x0001 ? "ClassPortInfo" : id == 0x0002 ? "Notice"
			: id == 0x0003 ? "InformInfo" : sa_attr(id);
	case 0x04:
		return pm_attr(id);
	default:
		return id == 0x0001 ? "ClassPortInfo" : id == 0x0002 ? "Notice"
			: id == 0x0003 ? "InformInfo" : "<unknown>";
	}
}

EXPORT const char *umad_common_mad_status_str(uint16_t status)
{
	uint16_t s = be16toh(status);

	if (s & 0x0001)
		return "Busy";
	if (s & 0x0002)
		return "Redirection required";
	switch ((s >> 2) & 7) {
	case 0: return "Success";
	case 1: return "Bad version";
	case 2: return "Method not supported";
	case 3: return "Method/Attribute combo not supported";
	case 7: return "Invalid attribute/modifier value";
	default: return "Unknown";
	}
}

EXPORT const char *umad_sa_mad_status_str(uint16_t status)
{
	switch ((be16toh(status) >> 8) & 0x7f) {
	case 0: return "Success";
	case 1: return "No Resources";
	case 2: return "Request Denied";
	case 3: return "Request Invalid";
	case 4: return "No Records";
	case 5: return "Too Many Records";
	case 6: return "Invalid GID";
	case 7: return "Insufficient Components";
	case 8: return "Request Denied (insufficient privilege)";
	default: return "Undefined Error";
	}
}
