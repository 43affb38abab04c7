/* What rdma_resolve_addrinfo (spec §5) leaves on an id: rdma_query_addrinfo hands it over,
 * and for RAI_SA the kernel's ServiceRecord commands fill it (rdma-core >= v60 on a kernel with
 * the 2025 patches; the emulated kernel has them, emu/rdma_cm/cma_svc.c).
 *
 * RESOLVE_IB_SERVICE asks for a service: a number (strtoull(service, 0)) is a ServiceID,
 * anything else a ServiceName of at most 63 characters. After ADDRINFO_RESOLVED the records
 * come back with QUERY option IB_SERVICE (a buffer for 6, again with a larger one when the
 * kernel reports more) and become AF_IB entries: flags RAI_SA, port space RDMA_PS_IB, qp type
 * 0, destination sockaddr_ib {record's P_Key, GID, sid = ServiceID, sid_mask ~0}. */
#include "config.h"

#include <endian.h>
#include <stdlib.h>
#include <string.h>

#include "lib/cma.h"
#include "util/failcall.h"

#define GAI_SA_FIRST_RECS 6

/* The ServiceRecord's wire form (ib_user_service_rec): the fields this file reads. */
#define SR_OFF_ID 0
#define SR_OFF_GID 8
#define SR_OFF_PKEY 24

static struct rdma_addrinfo *rec_to_ai(const uint8_t *rec)
{
	struct rdma_addrinfo *ai = emu_calloc(1, sizeof(*ai));
	struct sockaddr_ib *sib = emu_calloc(1, sizeof(*sib));

	if (!ai || !sib) {
		free(ai);
		free(sib);
		return NULL;
	}
	ai->ai_flags = RAI_SA;
	ai->ai_family = AF_IB;
	ai->ai_port_space = RDMA_PS_IB;
	sib->sib_family = AF_IB;
	memcpy(&sib->sib_pkey, rec + SR_OFF_PKEY, 2);   /* both big-endian */
	memcpy(&sib->sib_addr, rec + SR_OFF_GID, 16);
	memcpy(&sib->sib_sid, rec + SR_OFF_ID, 8);
	sib->sib_sid_mask = htobe64(~0ULL);
	ai->ai_dst_addr = (struct sockaddr *)sib;
	ai->ai_dst_len = sizeof(*sib);
	return ai;
}

int cma_query_ib_service(struct cma_id_private *id_priv, struct rdma_addrinfo **res)
{
	struct ucma_abi_query cmd;
	struct rdma_addrinfo *head = NULL, **tail = &head;
	uint32_t want = GAI_SA_FIRST_RECS, num;
	uint8_t *buf = NULL;

	for (;;) {
		size_t len = 4 + (size_t)want * EMU_UCMA_SERVICE_REC_SIZE;

		free(buf);
		buf = emu_calloc(1, len);
		if (!buf)
			return cma_err(ENOMEM);
		CMA_INIT_CMD_RESP(&cmd, sizeof cmd, QUERY, buf, len);
		cmd.id = id_priv->handle;
		cmd.option = EMU_UCMA_QUERY_IB_SERVICE;
		if (cma_write(id_priv->id.channel->fd, &cmd, sizeof cmd)) {
			free(buf);
			return -1;
		}
		memcpy(&num, buf, 4);
		if (num <= want)
			break;
		want = num;
	}
	if (!num) {
		free(buf);
		return cma_err(ENOENT);
	}
	for (uint32_t i = 0; i < num; i++) {
		struct rdma_addrinfo *ai = rec_to_ai(buf + 4 + (size_t)i * EMU_UCMA_SERVICE_REC_SIZE);

		if (!ai) {
			free(buf);
			rdma_freeaddrinfo(head);
			return cma_err(ENOMEM);
		}
		*tail = ai;
		tail = &ai->ai_next;
	}
	free(buf);
	*res = head;
	return 0;
}

int cma_resolve_ib_service(struct cma_id_private *id_priv, const char *service)
{
	struct emu_ucma_resolve_ib_service cmd;
	unsigned long long sid;
	char *end;

	memset(&cmd, 0, sizeof cmd);
	cmd.cmd = EMU_UCMA_CMD_RESOLVE_IB_SERVICE;
	cmd.in = sizeof cmd - sizeof(struct ucma_abi_cmd_hdr);
	cmd.id = id_priv->handle;
	errno = 0;
	sid = strtoull(service, &end, 0);
	if (*service && !*end && !errno) {
		cmd.service_id = sid;
		cmd.flags = EMU_UCMA_IB_SERVICE_FLAG_ID;
	} else {
		strncpy((char *)cmd.service_name, service, sizeof cmd.service_name - 1);
		cmd.flags = EMU_UCMA_IB_SERVICE_FLAG_NAME;
	}
	return cma_write(id_priv->id.channel->fd, &cmd, sizeof cmd);
}

int rdma_query_addrinfo(struct rdma_cm_id *id, struct rdma_addrinfo **info)
{
	struct cma_id_private *id_priv;

	if (!id || !info)
		return cma_err(EINVAL);
	id_priv = cma_priv(id);
	if (!id_priv->resolving_ai || !id_priv->resolved_ai)
		return cma_err(ENOENT);
	*info = id_priv->resolved_ai;
	id_priv->resolved_ai = NULL;
	id_priv->resolving_ai = false;
	return 0;
}
