/* The umad files: open ports, agents, and MADs written and read, as the kernel's ib_umad
 * (drivers/infiniband/core/user_mad.c) behaves toward libibumad (rdma-core's umad.c). */
#define _GNU_SOURCE /* pipe2 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "emu/umad/umad_priv.h"
#include "util/failcall.h"

#define EXPORT __attribute__((visibility("default")))

#define MAD_HDR_LEN 24
#define RMPP_HDR_END 36 /* ib_umad refuses writes shorter than the MAD and RMPP headers */

pthread_mutex_t umad_lock = PTHREAD_MUTEX_INITIALIZER;
static struct umad_file **files;
static size_t nfiles;
/* ib_mad's client ids: each registered agent gets the next */
static uint32_t next_hi_tid = 1;

struct umad_file *umad_file_get(int fd)
{
	return fd >= 0 && (size_t)fd < nfiles ? files[fd] : NULL;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

EXPORT int umad_open_port(const char *ca_name, int portnum)
{
	const struct emu_host *h;
	struct umad_file *f;
	int p[2];
	char *name;

	if (umad_resolve(ca_name, &portnum, &name) < 0)
		return -ENODEV;
	h = umad_host();
	const struct emu_device *d = umad_device(h, name);

	free(name);
	if (!d || portnum < 1 || (size_t)portnum > d->nports)
		return -EINVAL;
	f = emu_calloc(1, sizeof(*f));
	if (!f || pipe2(p, O_CLOEXEC | O_NONBLOCK)) {
		free(f);
		return -EIO;
	}
	f->fd = p[0];
	f->wfd = p[1];
	f->host = (size_t)(h - h->fabric->hosts);
	f->dev = (size_t)(d - h->devices);
	f->port = (unsigned)portnum;
	pthread_mutex_lock(&umad_lock);
	if ((size_t)f->fd >= nfiles) {
		size_t n = (size_t)f->fd + 16;
		struct umad_file **v = emu_realloc(files, n * sizeof(*v));

		if (!v) {
			pthread_mutex_unlock(&umad_lock);
			close(p[0]);
			close(p[1]);
			free(f);
			return -EIO;
		}
		memset(v + nfiles, 0, (n - nfiles) * sizeof(*v));
		files = v;
		nfiles = n;
	}
	files[f->fd] = f;
	pthread_mutex_unlock(&umad_lock);
	return f->fd;
}

EXPORT int umad_close_port(int fd)
{
	struct umad_file *f;

	pthread_mutex_lock(&umad_lock);
	f = umad_file_get(fd);
	if (f)
		files[fd] = NULL;
	pthread_mutex_unlock(&umad_lock);
	if (!f)
		return close(fd) ? -EINVAL : 0;
	while (f->head) {
		struct umad_msg *m = f->head;

		f->head = m->next;
		free(m);
	}
	close(f->wfd);
	close(f->fd);
	free(f);
	return 0;
}

EXPORT int umad_get_fd(int fd)
{
	return fd;
}

/* ib_umad's registration ioctl: the QP follows the class (SMI classes on QP0, the rest on
 * QP1); bad arguments are EINVAL, a full table ENOMEM; libibumad turns a failure into -EPERM. */
static int reg(int fd, uint8_t cls, uint8_t version, uint8_t rmpp, uint32_t oui,
	       const uint64_t mask[2], uint32_t *id)
{
	struct umad_file *f;
	int r = -EINVAL;

	/* classes 0x01 .. 0x7f and directed-route SMPs (0x81) */
	if (cls == 0 || (cls >= 0x80 && cls != 0x81))
		return -EINVAL;
	if (rmpp > 1)
		return -EINVAL;
	pthread_mutex_lock(&umad_lock);
	f = umad_file_get(fd);
	if (f) {
		r = -ENOMEM;
		for (uint32_t i = 0; i < UMAD_CA_MAX_AGENTS; i++) {
			struct umad_agent *a = &f->agents[i];

			if (a->used)
				continue;
			memset(a, 0, sizeof(*a));
			a->used = true;
			a->mgmt_class = cls;
			a->class_version = version;
			a->rmpp_version = rmpp;
			a->oui = oui;
			a->qpn = cls == 0x01 || cls == 0x81 ? 0 : 1;
			if (mask)
				memcpy(a->method_mask, mask, sizeof(a->method_mask));
			a->hi_tid = next_hi_tid++;
			*id = i;
			r = 0;
			break;
		}
	}
	pthread_mutex_unlock(&umad_lock);
	return r;
}

EXPORT int umad_register(int fd, int mgmt_class, int mgmt_version, uint8_t rmpp_version,
			 long method_mask[16 / sizeof(long)])
{
	uint64_t mask[2] = { 0, 0 };
	uint32_t id;

	if (method_mask)
		memcpy(mask, method_mask, sizeof(mask));
	if (reg(fd, (uint8_t)mgmt_class, (uint8_t)mgmt_version, rmpp_version, 0x001405, mask, &id))
		return -EPERM;
	return (int)id;
}

EXPORT int umad_register_oui(int fd, int mgmt_class, uint8_t rmpp_version, uint8_t oui[3],
			     long method_mask[16 / sizeof(long)])
{
	uint64_t mask[2] = { 0, 0 };
	uint32_t id;

	/* vendor classes with an OUI: 0x30 .. 0x4f */
	if (mgmt_class < 0x30 || mgmt_class > 0x4f)
		return -EINVAL;
	if (method_mask)
		memcpy(mask, method_mask, sizeof(mask));
	if (reg(fd, (uint8_t)mgmt_class, 1, rmpp_version,
		(uint32_t)oui[0] << 16 | (uint32_t)oui[1] << 8 | oui[2], mask, &id))
		return -EPERM;
	return (int)id;
}

EXPORT int umad_register2(int fd, struct umad_reg_attr *attr, uint32_t *agent_id)
{
	if (!attr || !agent_id)
		return EINVAL;
	/* the user RMPP flag asks ib_umad to leave RMPP to the caller: supported as in ABI 5 */
	if (attr->flags & ~1u)
		return EINVAL;
	return -reg(fd, attr->mgmt_class, attr->mgmt_class_version, attr->rmpp_version,
		    attr->oui, attr->method_mask, agent_id);
}

EXPORT int umad_unregister(int fd, int agentid)
{
	struct umad_file *f;
	int r = -1;

	pthread_mutex_lock(&umad_lock);
	f = umad_file_get(fd);
	if (f && agentid >= 0 && agentid < UMAD_CA_MAX_AGENTS && f->agents[agentid].used) {
		f->agents[agentid].used = false;
		r = 0;
	}
	pthread_mutex_unlock(&umad_lock);
	if (r)
		errno = EINVAL;
	return r;
}

/* Queues a MAD for reading (under umad_lock): one byte in the pipe per MAD. */
static int queue(struct umad_file *f, const ib_user_mad_t *hdr, const uint8_t *mad, size_t len,
		 uint64_t ready_ns)
{
	struct umad_msg *m = emu_calloc(1, sizeof(*m) + len);
	char b = 0;

	if (!m)
		return -ENOMEM;
	m->umad = *hdr;
	m->umad.length = (uint32_t)(sizeof(ib_user_mad_t) + len);
	memcpy(m->umad.data, mad, len);
	m->len = sizeof(ib_user_mad_t) + len;
	m->ready_ns = ready_ns;
	if (f->tail)
		f->tail->next = m;
	else
		f->head = m;
	f->tail = m;
	if (write(f->wfd, &b, 1) != 1)
		return -EIO;
	return 0;
}

static bool is_response(uint8_t method)
{
	return (method & 0x80) || method == 0x07; /* TrapRepress is answered to, like a response */
}

/* ib_umad_write: the agent's TID half put in, the MAD handed to the fabric, and what comes
 * back queued: the answer for the sending agent, or the send's MAD header with status
 * ETIMEDOUT once its timeout and retries have run out. */
static int do_send(struct umad_file *f, int agentid, ib_user_mad_t *u, size_t mad_len)
{
	uint8_t orig[MAD_HDR_LEN];
	struct umad_agent *a;
	uint8_t *resp = NULL;
	size_t resp_len = 0;
	uint16_t slid = 0;
	int r;

	if (agentid < 0 || agentid >= UMAD_CA_MAX_AGENTS || !f->agents[agentid].used)
		return -EINVAL;
	a = &f->agents[agentid];
	if (mad_len < RMPP_HDR_END || mad_len > 256 * 1024)
		return -EINVAL;
	memcpy(orig, u->data, sizeof(orig));
	if (!is_response(u->data[3])) {
		uint32_t hi = htobe32(a->hi_tid);

		memcpy(u->data + 8, &hi, 4);
	}
	/* responses and sends without a timeout expect nothing back */
	if (is_response(u->data[3]) || !u->timeout_ms)
		return 0;
	r = umad_fabric_answer(f, u, mad_len, &resp, &resp_len, &slid);
	if (r == 0) {
		ib_user_mad_t h;

		memset(&h, 0, sizeof(h));
		h.agent_id = (uint32_t)agentid;
		h.addr.qpn = htobe32(a->qpn);
		h.addr.qkey = a->qpn ? htobe32(0x80010000u) : 0;
		h.addr.lid = htobe16(slid);
		/* an agent without RMPP reads one MAD */
		if (!a->rmpp_version && resp_len > 256)
			resp_len = 256;
		r = queue(f, &h, resp, resp_len, 0);
		free(resp);
		return r;
	}
	/* ib_umad's send_handler: the send comes back as its MAD header, as the caller wrote it
	 * (the TID without the agent's half), with status ETIMEDOUT */
	u->status = ETIMEDOUT;
	memcpy(u->data, orig, sizeof(orig));
	return queue(f, u, orig, sizeof(orig),
		     now_ns() + (uint64_t)u->timeout_ms * (u->retries + 1) * 1000000ull);
}

EXPORT int umad_send(int fd, int agentid, void *umad, int length, int timeout_ms, int retries)
{
	ib_user_mad_t *u = umad;
	struct umad_file *f;
	int r = -EBADF;

	errno = 0;
	u->timeout_ms = (uint32_t)timeout_ms;
	u->retries = (uint32_t)retries;
	u->agent_id = (uint32_t)agentid;
	pthread_mutex_lock(&umad_lock);
	f = umad_file_get(fd);
	if (f && length >= 0)
		r = do_send(f, agentid, u, (size_t)length);
	pthread_mutex_unlock(&umad_lock);
	if (r == 0)
		return 0;
	errno = -r;
	return -EIO;
}

/* dev_poll of rdma-core: 0 when something can be read, -ETIMEDOUT, -EIO. A queued MAD that is
 * not yet due (a send whose timeout runs) makes the wait go on until it is. */
static int wait_ready(int fd, int timeout_ms)
{
	uint64_t deadline = timeout_ms < 0 ? UINT64_MAX : now_ns() + (uint64_t)timeout_ms * 1000000ull;

	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		uint64_t now = now_ns(), due = UINT64_MAX;
		struct umad_file *f;
		int ms, r;

		pthread_mutex_lock(&umad_lock);
		f = umad_file_get(fd);
		if (f && f->head)
			due = f->head->ready_ns;
		pthread_mutex_unlock(&umad_lock);
		if (!f)
			return -EIO;
		if (due <= now)
			return 0;
		if (now >= deadline)
			return -ETIMEDOUT;
		uint64_t until = due < deadline ? due : deadline;

		ms = until == UINT64_MAX ? -1 : (int)((until - now + 999999) / 1000000);
		if (due != UINT64_MAX) {
			/* something is queued: sleep until it is due (or the caller's end) */
			struct timespec ts = { (time_t)((until - now) / 1000000000ull),
					       (long)((until - now) % 1000000000ull) };

			nanosleep(&ts, NULL);
			continue;
		}
		r = poll(&p, 1, ms);
		if (r < 0 && errno != EINTR)
			return -EIO;
	}
}

EXPORT int umad_poll(int fd, int timeout_ms)
{
	return wait_ready(fd, timeout_ms);
}

EXPORT int umad_recv(int fd, void *umad, int *length, int timeout_ms)
{
	ib_user_mad_t *u = umad;
	struct umad_file *f;
	struct umad_msg *m;
	char b;
	int r;

	errno = 0;
	if (!umad || !length) {
		errno = EINVAL;
		return -EINVAL;
	}
	if (timeout_ms && (r = wait_ready(fd, timeout_ms)) < 0) {
		errno = -r;
		return r;
	}
	pthread_mutex_lock(&umad_lock);
	f = umad_file_get(fd);
	m = f ? f->head : NULL;
	if (!f || !m || m->ready_ns > now_ns()) {
		pthread_mutex_unlock(&umad_lock);
		errno = f ? EWOULDBLOCK : EBADF;
		return f ? -EWOULDBLOCK : -EIO;
	}
	if (m->len > sizeof(ib_user_mad_t) + (size_t)*length) {
		/* ib_umad_read: the header only, ENOSPC, the MAD stays queued */
		*u = m->umad;
		*length = (int)(m->len - sizeof(ib_user_mad_t));
		pthread_mutex_unlock(&umad_lock);
		errno = ENOSPC;
		return -ENOSPC;
	}
	f->head = m->next;
	if (!f->head)
		f->tail = NULL;
	if (read(f->fd, &b, 1) != 1)
		b = 0;
	pthread_mutex_unlock(&umad_lock);
	memcpy(u, &m->umad, m->len);
	*length = (int)(m->len - sizeof(ib_user_mad_t));
	r = (int)m->umad.agent_id;
	free(m);
	return r;
}
