/* QP, SRQ, DEV (spec §15 rows 228-237, 260-261): rdma_create_qp and friends on an id bound to
 * a local RDMA address (which gives it a device and a default PD), and the device list. */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

#include "conformance/cm_util.h"
#include "conformance/conformance.h"

/* An id of port space ps bound to the idx-th local RDMA address. */
static struct rdma_cm_id *bound_id(enum rdma_port_space ps, unsigned idx)
{
	struct rdma_event_channel *ch = cm_channel();
	struct rdma_cm_id *id = cm_id(ch, ps);
	struct sockaddr_in sin;

	cm_local_ipv4(idx, 0, &sin, NULL);
	if (rdma_bind_addr(id, (struct sockaddr *)&sin))
		conf_fatal("rdma_bind_addr: %s", conf_errno_name(errno));
	if (!id->verbs || !id->pd)
		conf_fatal("bound id without verbs/pd");
	return id;
}

static void qp_attr_init(struct ibv_qp_init_attr *a)
{
	memset(a, 0, sizeof *a);
	a->cap.max_send_wr = 4;
	a->cap.max_recv_wr = 4;
	a->cap.max_send_sge = 1;
	a->cap.max_recv_sge = 1;
	a->qp_type = IBV_QPT_RC;
}

static void qp_228(const struct conf_case *c)
{
	struct rdma_cm_id *id = cm_dummy_id(-1);
	struct ibv_qp_init_attr_ex attr;
	int ret, e;

	memset(&attr, 0, sizeof attr);
	id->qp = (struct ibv_qp *)id; /* rejected before it is used */
	conf_stimulus("rdma_create_qp_ex(dummy id with a QP, &attr)");
	errno = 0;
	ret = rdma_create_qp_ex(id, &attr);
	e = errno;
	CM_EXPECT_FAIL("rdma_create_qp_ex", ret, e, EINVAL);
	conf_note("-1 errno %s", conf_errno_name(e));
}

static void qp_229(const struct conf_case *c)
{
	struct rdma_cm_id *id = bound_id(RDMA_PS_TCP, 0);
	struct ibv_qp_init_attr a;
	int ret;

	qp_attr_init(&a);
	conf_stimulus("rdma_create_qp(bound id, NULL, attr without CQs)");
	ret = rdma_create_qp(id, NULL, &a);
	if (!conf_expect(ret == 0, "ret %d errno %s", ret, conf_errno_name(errno)))
		return;
	conf_expect(id->send_cq && id->recv_cq, "id CQs NULL");
	conf_expect(id->send_cq_channel && id->recv_cq_channel, "id CQ channels NULL");
	conf_expect(id->send_cq && id->send_cq->cq_context == id, "send CQ context != id");
	conf_expect(id->recv_cq && id->recv_cq->cq_context == id, "recv CQ context != id");
	conf_expect(a.send_cq == id->send_cq && a.recv_cq == id->recv_cq,
		    "attr not updated with the CQs");
	rdma_destroy_qp(id);
	conf_note("CQs and channels made, cq_context == id");
}

static void qp_230(const struct conf_case *c)
{
	struct rdma_cm_id *id = bound_id(RDMA_PS_TCP, 0);
	struct ibv_qp_init_attr a;
	struct ibv_cq *cq = ibv_create_cq(id->verbs, 8, NULL, NULL, 0);
	int ret;

	if (!cq)
		conf_fatal("ibv_create_cq: %s", conf_errno_name(errno));
	qp_attr_init(&a);
	a.send_cq = a.recv_cq = cq;
	conf_stimulus("rdma_create_qp(bound id, NULL, attr with the application's CQ)");
	ret = rdma_create_qp(id, NULL, &a);
	if (!conf_expect(ret == 0, "ret %d errno %s", ret, conf_errno_name(errno)))
		return;
	EXPECT_NULL("send_cq", id->send_cq);
	EXPECT_NULL("recv_cq", id->recv_cq);
	EXPECT_NULL("send_cq_channel", id->send_cq_channel);
	EXPECT_NULL("recv_cq_channel", id->recv_cq_channel);
	rdma_destroy_qp(id);
	conf_note("id CQ fields stay NULL");
}

static void qp_state(const struct conf_case *c)
{
	bool ud = c->data != NULL;
	struct rdma_cm_id *id = bound_id(ud ? RDMA_PS_UDP : RDMA_PS_TCP, 0);
	struct ibv_qp_init_attr a, ia;
	struct ibv_qp_attr qa;
	int ret;

	qp_attr_init(&a);
	a.qp_type = ud ? IBV_QPT_UD : IBV_QPT_RC;
	conf_stimulus("rdma_create_qp(bound %s id), ibv_query_qp", ud ? "RDMA_PS_UDP" : "RDMA_PS_TCP");
	ret = rdma_create_qp(id, NULL, &a);
	if (!conf_expect(ret == 0, "ret %d errno %s", ret, conf_errno_name(errno)))
		return;
	if (ibv_query_qp(id->qp, &qa, IBV_QP_STATE | IBV_QP_QKEY | IBV_QP_PORT, &ia))
		conf_fatal("ibv_query_qp: %s", conf_errno_name(errno));
	if (ud) {
		EXPECT_INT("state", qa.qp_state, IBV_QPS_RTS);
		EXPECT_HEX("qkey", qa.qkey, RDMA_UDP_QKEY);
		conf_note("RTS, qkey 0x%x", qa.qkey);
	} else {
		EXPECT_INT("state", qa.qp_state, IBV_QPS_INIT);
		conf_note("INIT");
	}
	EXPECT_INT("port", qa.port_num, id->port_num);
	rdma_destroy_qp(id);
}

/* An RDMA_PS_IPOIB id's UD QP takes the Q_Key of the port's IPoIB broadcast group
 * (cma_set_default_qkey). On RoCE there is no such group: an id that reached a RoCE device
 * (resolution of 127.0.0.1: the binds to a RoCE address are refused, BIND-122c) gets
 * -1/ENODEV from rdma_create_qp (measured on Linux 6.1 + rxe). */
static void qp_231c(const struct conf_case *c)
{
	struct rdma_event_channel *ch = cm_channel();
	struct rdma_cm_id *id = cm_id(ch, RDMA_PS_IPOIB);
	struct rdma_cm_event *ev;
	struct ibv_port_attr pa;
	struct ibv_qp_init_attr a;
	struct sockaddr_in dst;
	int ret, e;

	cm_ipv4("127.0.0.1", 0, &dst);
	if (rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 2000))
		conf_fatal("rdma_resolve_addr(127.0.0.1): %s", conf_errno_name(errno));
	if (rdma_get_cm_event(ch, &ev))
		conf_fatal("rdma_get_cm_event: %s", conf_errno_name(errno));
	e = ev->event;
	rdma_ack_cm_event(ev);
	if (!conf_expect(e == RDMA_CM_EVENT_ADDR_RESOLVED, "event %s", rdma_event_str(e)))
		return;
	if (ibv_query_port(id->verbs, id->port_num, &pa))
		conf_fatal("ibv_query_port: %s", conf_errno_name(errno));
	if (pa.link_layer != IBV_LINK_LAYER_ETHERNET)
		conf_notrun("127.0.0.1 resolved onto an InfiniBand port (needs RoCE)");
	qp_attr_init(&a);
	a.qp_type = IBV_QPT_UD;
	conf_stimulus("RDMA_PS_IPOIB id resolved to 127.0.0.1 (a RoCE device), rdma_create_qp(UD)");
	errno = 0;
	ret = rdma_create_qp(id, NULL, &a);
	e = errno;
	CM_EXPECT_FAIL("rdma_create_qp", ret, e, ENODEV);
	EXPECT_NULL("qp", id->qp);
	conf_note("-1 errno %s", conf_errno_name(e));
}

/* The same on InfiniBand: an RDMA_PS_IPOIB id bound to the IPoIB address; its UD QP is RTS
 * with the broadcast group's Q_Key (0x0b1b on OpenSM's default partition). */
static void qp_231i(const struct conf_case *c)
{
	struct rdma_cm_id *probe = bound_id(RDMA_PS_TCP, 0), *id;
	struct ibv_port_attr pa;
	struct ibv_qp_init_attr a, ia;
	struct ibv_qp_attr qa;
	int ret;

	if (ibv_query_port(probe->verbs, probe->port_num, &pa))
		conf_fatal("ibv_query_port: %s", conf_errno_name(errno));
	if (pa.link_layer != IBV_LINK_LAYER_INFINIBAND)
		conf_notrun("needs an IPoIB address (RoCE: BIND-122c, QP-231c)");
	rdma_destroy_id(probe);
	id = bound_id(RDMA_PS_IPOIB, 0);
	qp_attr_init(&a);
	a.qp_type = IBV_QPT_UD;
	conf_stimulus("rdma_create_qp(RDMA_PS_IPOIB id bound to the IPoIB address, UD), "
		      "ibv_query_qp");
	ret = rdma_create_qp(id, NULL, &a);
	if (!conf_expect(ret == 0, "ret %d errno %s", ret, conf_errno_name(errno)))
		return;
	if (ibv_query_qp(id->qp, &qa, IBV_QP_STATE | IBV_QP_QKEY, &ia))
		conf_fatal("ibv_query_qp: %s", conf_errno_name(errno));
	EXPECT_INT("state", qa.qp_state, IBV_QPS_RTS);
	EXPECT_HEX("qkey", qa.qkey, 0x0b1b);
	conf_note("RTS, qkey 0x%x", qa.qkey);
	rdma_destroy_qp(id);
}

static void qp_233(const struct conf_case *c)
{
	struct rdma_cm_id *a = bound_id(RDMA_PS_TCP, 0), *b = bound_id(RDMA_PS_TCP, 1);
	struct ibv_qp_init_attr qa;
	int ret, e;

	if (a->verbs == b->verbs)
		conf_notrun("needs two RDMA devices with IPv4 addresses");
	qp_attr_init(&qa);
	conf_stimulus("rdma_create_qp(id on device A, PD of device B, attr)");
	errno = 0;
	ret = rdma_create_qp(a, b->pd, &qa);
	e = errno;
	CM_EXPECT_FAIL("rdma_create_qp", ret, e, EINVAL);
	conf_note("-1 errno %s", conf_errno_name(e));
}

static void qp_234(const struct conf_case *c)
{
	struct rdma_cm_id *id = bound_id(RDMA_PS_TCP, 0);
	struct ibv_pd *dflt = id->pd;
	struct ibv_qp_init_attr a;
	int ret;

	qp_attr_init(&a);
	conf_stimulus("rdma_create_qp(bound id, NULL pd, attr)");
	ret = rdma_create_qp(id, NULL, &a);
	if (!conf_expect(ret == 0, "ret %d errno %s", ret, conf_errno_name(errno)))
		return;
	conf_expect(id->qp->pd == dflt, "QP not on the id's default PD");
	conf_expect(id->pd == id->qp->pd, "id->pd != qp->pd");
	rdma_destroy_qp(id);
	conf_note("QP on the default PD, id->pd == qp->pd");
}

static void qp_235(const struct conf_case *c)
{
	struct rdma_cm_id *id = bound_id(RDMA_PS_TCP, 0);
	struct ibv_qp_init_attr a;

	qp_attr_init(&a);
	conf_stimulus("rdma_create_qp then rdma_destroy_qp");
	if (rdma_create_qp(id, NULL, &a))
		conf_fatal("rdma_create_qp: %s", conf_errno_name(errno));
	rdma_destroy_qp(id);
	EXPECT_NULL("qp", id->qp);
	EXPECT_NULL("send_cq", id->send_cq);
	EXPECT_NULL("recv_cq", id->recv_cq);
	EXPECT_NULL("send_cq_channel", id->send_cq_channel);
	EXPECT_NULL("recv_cq_channel", id->recv_cq_channel);
	conf_note("qp, CQs, channels NULL");
}

static void qp_236(const struct conf_case *c)
{
	struct rdma_event_channel *ch = cm_channel();
	struct rdma_cm_id *id = cm_id(ch, RDMA_PS_TCP);
	struct ibv_qp_init_attr a;
	int ret, e;

	qp_attr_init(&a);
	conf_stimulus("rdma_create_qp(id without device, NULL, attr)");
	errno = 0;
	ret = rdma_create_qp(id, NULL, &a);
	e = errno;
	CM_EXPECT_FAIL("rdma_create_qp", ret, e, EINVAL);
	conf_note("-1 errno %s", conf_errno_name(e));
}

static void srq_237(const struct conf_case *c)
{
	struct rdma_cm_id *id = cm_dummy_id(-1);
	struct ibv_srq_init_attr_ex attr;
	int ret, e;

	memset(&attr, 0, sizeof attr);
	attr.comp_mask = IBV_SRQ_INIT_ATTR_PD;
	conf_stimulus("rdma_create_srq_ex(dummy id, comp_mask without IBV_SRQ_INIT_ATTR_TYPE)");
	errno = 0;
	ret = rdma_create_srq_ex(id, &attr);
	e = errno;
	CM_EXPECT_FAIL("rdma_create_srq_ex", ret, e, EINVAL);
	conf_note("-1 errno %s", conf_errno_name(e));
}

static void dev_260(const struct conf_case *c)
{
	struct rdma_cm_id *id = bound_id(RDMA_PS_TCP, 0);
	struct ibv_context **list;
	int n = -1, k;
	bool found = false;

	conf_stimulus("rdma_get_devices(&n); is id->verbs of a bound id in the list?");
	list = rdma_get_devices(&n);
	if (!conf_expect(list != NULL, "NULL (errno %s)", conf_errno_name(errno)))
		return;
	for (k = 0; list[k]; k++)
		found = found || list[k] == id->verbs;
	EXPECT_INT("entries before the NULL", k, n);
	conf_expect(n >= 1, "n %d", n);
	conf_expect(found, "id->verbs not in the list");
	rdma_free_devices(list);
	conf_note("%d contexts, NULL-terminated; id->verbs among them", n);
}

static void dev_261(const struct conf_case *c)
{
	struct ibv_context **list;

	conf_stimulus("rdma_get_devices(NULL)");
	list = rdma_get_devices(NULL);
	if (!conf_expect(list != NULL, "NULL (errno %s)", conf_errno_name(errno)))
		return;
	conf_expect(list[0] != NULL, "empty list");
	rdma_free_devices(list);
	conf_note("non-NULL list");
}

#define DEV (PRE_DEVICE | PRE_CM)
#define C(id_, area_, row_, desc_, pre_, fn_, data_)                                          \
	{ id_, area_, row_, desc_, NULL, pre_, NULL, 0, fn_, data_ }

static const struct conf_case cases[] = {
	C("QP-228", "QP", 228, "rdma_create_qp_ex on an id with QP: -1/EINVAL", PRE_NONE, qp_228,
	  NULL),
	C("QP-229", "QP", 229, "create_qp without CQs: id send/recv CQs and channels set, CQ "
	  "context == id", DEV, qp_229, NULL),
	C("QP-230", "QP", 230, "create_qp with the application's CQs: id CQ fields stay NULL", DEV,
	  qp_230, NULL),
	C("QP-231", "QP", 231, "UD QP right after create: RTS, qkey 0x01234567", DEV, qp_state,
	  (void *)1),
	C("QP-231c", "QP", 231, "RDMA_PS_IPOIB UD QP on a RoCE device (id resolved to "
	  "127.0.0.1): -1/ENODEV (no IPoIB broadcast group to take the Q_Key from; measured on "
	  "Linux 6.1 + rxe)", DEV, qp_231c, NULL),
	C("QP-231i", "QP", 231, "RDMA_PS_IPOIB UD QP on InfiniBand: RTS, the IPoIB broadcast "
	  "group's qkey 0x0b1b (cma_set_default_qkey)", DEV, qp_231i, NULL),
	C("QP-232", "QP", 232, "RC QP right after create: INIT", DEV, qp_state, NULL),
	C("QP-233", "QP", 233, "PD from another device: -1/EINVAL", DEV, qp_233, NULL),
	C("QP-234", "QP", 234, "pd NULL: QP on the device's default PD; id->pd == qp->pd", DEV,
	  qp_234, NULL),
	C("QP-235", "QP", 235, "destroy_qp: id->qp NULL; library CQs/channels destroyed", DEV,
	  qp_235, NULL),
	C("QP-236", "QP", 236, "create_qp on an id without device: -1/EINVAL (the real library "
	  "crashes)", DEV | PRE_EMU_ONLY, qp_236, NULL),
	C("SRQ-237", "SRQ", 237, "rdma_create_srq_ex without IBV_SRQ_INIT_ATTR_TYPE: -1/EINVAL",
	  PRE_NONE, srq_237, NULL),
	C("DEV-260", "DEV", 260, "rdma_get_devices(&n): NULL-terminated array of n contexts; "
	  "a bound id's verbs among them", DEV, dev_260, NULL),
	C("DEV-261", "DEV", 261, "rdma_get_devices(NULL) is allowed", DEV, dev_261, NULL),
};

const struct conf_area conf_area_cmqp = { "CMQP", cases, sizeof cases / sizeof cases[0] };
