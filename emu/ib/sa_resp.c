/* The fake SA's response MADs (emu/ib/sa_priv.h): the response header, one record or a
 * GetTable's records at AttributeOffset strides, and the record lists that the record
 * handlers (sa_path.c, sa_mc.c, sa_node.c) build. Kept apart from the dispatch in sa.c so that
 * the handlers do not depend on the dispatcher that calls them. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "emu/ib/sa_priv.h"
#include "util/failcall.h"

uint8_t emu_sa_resp_method(uint8_t method)
{
	switch (method) {
	case EMU_MAD_METHOD_GET:
	case EMU_MAD_METHOD_SET: return EMU_MAD_METHOD_GET_RESP;
	case EMU_MAD_METHOD_GET_TABLE: return EMU_MAD_METHOD_GET_TABLE_RESP;
	case EMU_MAD_METHOD_DELETE: return EMU_MAD_METHOD_DELETE_RESP;
	default: return (uint8_t)(method | EMU_MAD_METHOD_RESP_BIT);
	}
}

/* A response to `req`: its header with the response method and `status`; nrec records of
 * desc (wire form, desc->wire_len each) at AttributeOffset strides. Error responses (nrec 0,
 * not GetTable) echo the request's data as OpenSM's osm_sa_send_error does. */
int emu_sa_respond(const uint8_t *req, size_t req_len, uint16_t status,
		   const struct emu_mad_record_desc *desc, const uint8_t *recs, size_t nrec,
		   uint8_t **out, size_t *out_len)
{
	struct emu_mad_hdr h;
	struct emu_sa_hdr sh;
	bool table;
	size_t stride = desc ? desc->attr_offset * 8u : 0, len;
	uint8_t *r;

	emu_mad_hdr_get(req, &h);
	emu_sa_hdr_get(req + 36, &sh);
	table = h.method == EMU_MAD_METHOD_GET_TABLE;
	len = table ? EMU_SA_HDR_LEN + nrec * stride : EMU_MAD_LEN;
	r = emu_calloc(1, len < EMU_MAD_LEN ? EMU_MAD_LEN : len);
	if (!r)
		return -ENOMEM;
	if (!table && !nrec)
		memcpy(r, req, req_len < EMU_MAD_LEN ? req_len : EMU_MAD_LEN);
	h.method = emu_sa_resp_method(h.method);
	h.status = status;
	emu_mad_hdr_put(r, &h);
	memset(r + 24, 0, EMU_RMPP_HDR_LEN);
	if (table) {
		struct emu_rmpp_hdr rh = { .version = EMU_RMPP_VERSION, .type = EMU_RMPP_TYPE_DATA,
					   .resp_time = EMU_RMPP_NO_RESPTIME,
					   .flags = EMU_RMPP_FLAG_ACTIVE | EMU_RMPP_FLAG_FIRST |
						    EMU_RMPP_FLAG_LAST,
					   .data1 = 1,
					   .data2 = (uint32_t)(len - EMU_SA_HDR_LEN + 20) };
		emu_rmpp_hdr_put(r + 24, &rh);
	}
	/* SM_Key is 0 in responses (15.2.1.2); the component mask is the request's. */
	sh.sm_key = 0;
	if (desc)
		sh.attr_offset = desc->attr_offset;
	emu_sa_hdr_put(r + 36, &sh);
	for (size_t i = 0; i < nrec; i++)
		memcpy(r + EMU_SA_HDR_LEN + i * stride, recs + i * desc->wire_len, desc->wire_len);
	if (!table && len == EMU_MAD_LEN && nrec)
		memset(r + EMU_SA_HDR_LEN + desc->wire_len, 0,
		       EMU_MAD_LEN - EMU_SA_HDR_LEN - desc->wire_len);
	*out = r;
	*out_len = len < EMU_MAD_LEN && !table ? EMU_MAD_LEN : len;
	return 0;
}

/* A Get/Set/Delete answer from a record list: one record, or the IBA statuses for 0 and >1. */
int emu_sa_respond_records(const uint8_t *req, size_t req_len,
			   const struct emu_mad_record_desc *desc, const uint8_t *recs, size_t nrec,
			   uint8_t **out, size_t *out_len)
{
	uint8_t method = req[3];

	if (method != EMU_MAD_METHOD_GET_TABLE) {
		if (!nrec)
			return emu_sa_respond(req, req_len,
					      EMU_SA_STATUS(EMU_SA_ERR_NO_RECORDS), desc, NULL, 0,
					      out, out_len);
		if (nrec > 1)
			return emu_sa_respond(req, req_len,
					      EMU_SA_STATUS(EMU_SA_ERR_TOO_MANY_RECORDS), desc,
					      NULL, 0, out, out_len);
	}
	return emu_sa_respond(req, req_len, 0, desc, recs, nrec, out, out_len);
}

int emu_sa_reclist_add(struct emu_sa_reclist *l, const uint8_t *rec, size_t len)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 8;
		uint8_t *n = emu_realloc(l->buf, cap * len);

		if (!n)
			return -ENOMEM;
		l->buf = n;
		l->cap = cap;
	}
	memcpy(l->buf + l->n++ * len, rec, len);
	return 0;
}

