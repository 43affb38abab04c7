/* The fake SA's request dispatch (emu/ib/sa.h): the checks every request goes through, then
 * the handler of its attribute (sa_path.c, sa_mc.c, sa_node.c, sa_pir.c, sa_sm.c), and the policy's verdict
 * before it (emu_sa_process). Kept apart from sa.c, which the handlers build on, so that no
 * dependency circle ties the SA's modules. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "emu/ib/sa_priv.h"

static bool method_ok(uint16_t attr, uint8_t method)
{
	switch (attr) {
	case EMU_SA_ATTR_PATH_RECORD:
	case EMU_SA_ATTR_NODE_RECORD:
	case EMU_SA_ATTR_PORT_INFO_RECORD:
	case EMU_SA_ATTR_SMINFO_RECORD:
		return method == EMU_MAD_METHOD_GET || method == EMU_MAD_METHOD_GET_TABLE;
	case EMU_SA_ATTR_MCMEMBER_RECORD:
	case EMU_SA_ATTR_SERVICE_RECORD:
		return true; /* Get, GetTable, Set, Delete */
	default:
		return false;
	}
}

int emu_sa_handle(struct emu_sa *sa, const uint8_t *mad, size_t len, uint8_t **resp,
		  size_t *resp_len)
{
	struct emu_mad_hdr h;

	*resp = NULL;
	*resp_len = 0;
	if (!mad || len < EMU_SA_HDR_LEN)
		return -EINVAL;
	emu_mad_hdr_get(mad, &h);
	/* An SA drops what is not for its class and any response (13.5.3.2: receivers of a
	 * response without a matching request discard it). */
	if (h.mgmt_class != EMU_MGMT_CLASS_SUBN_ADM || (h.method & EMU_MAD_METHOD_RESP_BIT))
		return -EINVAL;
	if (h.base_version != EMU_MAD_BASE_VERSION || h.class_version != EMU_SA_CLASS_VERSION)
		return emu_sa_respond(mad, len, EMU_MAD_STATUS_BAD_VERSION, NULL, NULL, 0, resp,
				      resp_len);
	if (h.method != EMU_MAD_METHOD_GET && h.method != EMU_MAD_METHOD_SET &&
	    h.method != EMU_MAD_METHOD_GET_TABLE && h.method != EMU_MAD_METHOD_DELETE)
		return emu_sa_respond(mad, len, EMU_MAD_STATUS_UNSUP_METHOD, NULL, NULL, 0, resp,
				      resp_len);
	/* ClassPortInfo has no record table; its handler checks the method itself */
	if (h.attr_id == EMU_SA_ATTR_CLASS_PORT_INFO)
		return emu_sa_class_port_info(sa, mad, len, resp, resp_len);
	if (!method_ok(h.attr_id, h.method))
		return emu_sa_respond(mad, len, EMU_MAD_STATUS_UNSUP_METHOD_ATTR, NULL, NULL, 0,
				      resp, resp_len);
	/* Records must fit the MAD (a request carries one record). */
	if (len < (size_t)EMU_SA_HDR_LEN + emu_sa_record_desc(h.attr_id)->wire_len)
		return emu_sa_respond(mad, len, EMU_MAD_STATUS_INVALID_FIELD, NULL, NULL, 0, resp,
				      resp_len);
	switch (h.attr_id) {
	case EMU_SA_ATTR_PATH_RECORD: return emu_sa_path(sa, mad, len, resp, resp_len);
	case EMU_SA_ATTR_MCMEMBER_RECORD: return emu_sa_mcmember(sa, mad, len, resp, resp_len);
	case EMU_SA_ATTR_NODE_RECORD: return emu_sa_node(sa, mad, len, resp, resp_len);
	case EMU_SA_ATTR_PORT_INFO_RECORD: return emu_sa_portinfo(sa, mad, len, resp, resp_len);
	case EMU_SA_ATTR_SMINFO_RECORD: return emu_sa_sminfo(sa, mad, len, resp, resp_len);
	default: return emu_sa_service(sa, mad, len, resp, resp_len);
	}
}

int emu_sa_process(struct emu_sa *sa, const uint8_t *mad, size_t len, uint8_t **resp,
		   size_t *resp_len, uint64_t *delay_ns)
{
	enum emu_sa_verdict v = emu_sa_decide(sa, delay_ns);
	struct emu_mad_hdr h;

	*resp = NULL;
	*resp_len = 0;
	if (v == EMU_SA_DROP)
		return 0;
	if (!mad || len < EMU_SA_HDR_LEN)
		return -EINVAL;
	emu_mad_hdr_get(mad, &h);
	if (h.mgmt_class != EMU_MGMT_CLASS_SUBN_ADM || (h.method & EMU_MAD_METHOD_RESP_BIT))
		return -EINVAL;
	if (v == EMU_SA_BUSY)
		return emu_sa_respond(mad, len, EMU_MAD_STATUS_BUSY, NULL, NULL, 0, resp,
				      resp_len);
	if (v == EMU_SA_ERROR && (!sa->policy.error_attr || sa->policy.error_attr == h.attr_id))
		return emu_sa_respond(mad, len, sa->policy.error_status,
				      emu_sa_record_desc(h.attr_id), NULL, 0, resp, resp_len);
	return emu_sa_handle(sa, mad, len, resp, resp_len);
}
