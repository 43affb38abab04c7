/* RAI_SA: rdma_getaddrinfo (spec §4.6) and rdma_resolve_addrinfo (§5) asking the subnet
 * administrator for ServiceRecords through the kernel's RESOLVE_IB_SERVICE command (rdma-core
 * >= v60 on a kernel with the 2025 patches; the emulated kernel has them, emu/rdma_cm/cma_svc.c).
 *
 * rdma_getaddrinfo binds a private RDMA_PS_IB id to GID 0 of every active InfiniBand port in
 * turn, asks for `service` (strtoull(service, 0): a number is a ServiceID, anything else a
 * ServiceName of at most 63 characters) and waits for the outcome; the first port whose
 * answer has records wins, none gives ENOENT. RoCE and iWARP ports are skipped, so a RoCE-only
 * host always gets ENOENT.
 *
 * The records come back with QUERY option IB_SERVICE (a buffer for 6, again with a larger one
 * when the kernel reports more) and become AF_IB entries: flags RAI_SA, port space RDMA_PS_IB,
 * qp type 0, destination sockaddr_ib {record's P_Key, GID, sid = ServiceID, sid_mask ~0}.
 *
 * The bind goes to the kernel as a BIND command directly (no QUERY round trips: only the
 * kernel's answer to the service lookup is wanted). */
#include "config.h"

#include <endian.h>
#include <stdlib.h>
#include <string.h>

#include "lib/cma.h"
#include "lib/gai.h"

#define GAI_SA_PS_IB_SID 0x00000000013F0000ULL /* RDMA_IB_IP_PS_IB */
#define GAI_SA_FIRST_RECS 6

/* The ServiceRecord's wire form (ib_user_service_rec): the fields this file reads. */
#define SR_OFF_ID 0
#define SR_OFF_GID 8
#define SR_OFF_PKEY 24

static struct rdma_addrinfo *rec_to_ai(const uint8_t *rec)
{
	struct rdma_addrinfo *ai = calloc(1, sizeof(*ai));
	struct sockaddr_ib *sib = calloc(1, sizeof(*sib));

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
		buf = calloc(1, len);
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

/* Binds id to GID 0 of (dev, port) as AF_IB in the IB port space (the kernel's BIND). */
static int bind_gid(struct rdma_cm_id *id, const uint8_t gid[16])
{
	struct ucma_abi_bind cmd;
	struct sockaddr_ib sib;

	memset(&sib, 0, sizeof sib);
	sib.sib_family = AF_IB;
	sib.sib_pkey = htobe16(0xffff);
	memcpy(&sib.sib_addr, gid, 16);
	sib.sib_sid = htobe64(GAI_SA_PS_IB_SID);
	sib.sib_sid_mask = htobe64(RDMA_IB_IP_PS_MASK);
	CMA_INIT_CMD(&cmd, sizeof cmd, BIND);
	cmd.id = cma_priv(id)->handle;
	cmd.addr_size = sizeof sib;
	memcpy(&cmd.addr, &sib, sizeof sib);
	return cma_write(id->channel->fd, &cmd, sizeof cmd);
}

/* One port: 0 with *res, or -1 (errno) when it has nothing. */
static int resolve_on_gid(struct rdma_event_channel *ch, const uint8_t gid[16],
			  const char *service, struct rdma_addrinfo **res)
{
	struct rdma_cm_event *ev = NULL;
	struct rdma_cm_id *id;
	struct rdma_addrinfo *ai;
	int ret;

	if (rdma_create_id(ch, &id, NULL, RDMA_PS_IB))
		return -1;
	ret = bind_gid(id, gid);
	if (!ret) {
		cma_priv(id)->resolving_ai = true;
		ret = cma_resolve_ib_service(cma_priv(id), service);
	}
	if (!ret)
		ret = rdma_get_cm_event(ch, &ev);
	if (!ret && ev->event != RDMAEMU_CM_EVENT_ADDRINFO_RESOLVED)
		ret = cma_err(ENOENT);
	if (ev)
		rdma_ack_cm_event(ev);
	if (!ret && rdma_query_addrinfo(id, res))
		ret = -1;
	if (!ret) {
		for (ai = *res; ai; ai = ai->ai_next) {
			struct sockaddr_ib *src = calloc(1, sizeof(*src));

			if (!src) {
				rdma_freeaddrinfo(*res);
				ret = cma_err(ENOMEM);
				break;
			}
			src->sib_family = AF_IB;
			src->sib_pkey = ((struct sockaddr_ib *)ai->ai_dst_addr)->sib_pkey;
			memcpy(&src->sib_addr, gid, 16);
			src->sib_sid = htobe64(GAI_SA_PS_IB_SID);
			src->sib_sid_mask = htobe64(RDMA_IB_IP_PS_MASK);
			ai->ai_src_addr = (struct sockaddr *)src;
			ai->ai_src_len = sizeof(*src);
		}
	}
	rdma_destroy_id(id);
	return ret;
}

int cma_gai_sa(const struct emu_host *h, const char *service, struct rdma_addrinfo **res)
{
	struct rdma_event_channel *ch;
	int ret = -1;

	if (!service)
		return cma_err(EINVAL);
	ch = rdma_create_event_channel();
	if (!ch)
		return -1;
	for (size_t d = 0; ret && d < h->ndevices; d++) {
		const struct emu_device *dev = &h->devices[d];

		for (size_t p = 0; ret && p < dev->nports; p++) {
			const struct emu_port *port = &dev->ports[p];

			if (port->link_layer != IBV_LINK_LAYER_INFINIBAND ||
			    port->state < IBV_PORT_ACTIVE || !port->ngids)
				continue;
			ret = resolve_on_gid(ch, port->gids[0].raw, service, res);
		}
	}
	rdma_destroy_event_channel(ch);
	return ret ? cma_err(ENOENT) : 0;
}
