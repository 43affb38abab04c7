/* The device model of librdmacm (spec §3.3): the verbs devices, opened lazily, each with a
 * default PD; rdma_get_devices / rdma_free_devices. Devices are matched to the kernel's
 * answers by node GUID, as rdma-core does when the kernel gives no ibdev index it knows.
 *
 * The list follows ibv_get_device_list() as rdma-core 44's sync_devices_list does: at the
 * first use, at every rdma_get_devices, and when the kernel names a device the list does not
 * have. A device that left the verbs list (unregistered: rdmaemu_ctl_device_remove) is closed
 * and dropped at once when nothing holds it, else marked dead and dropped with its last
 * reference (remove_cma_dev); a new one is added in ibdev index order (insert_cma_dev). */
#include "config.h"

#include <endian.h>
#include <stdlib.h>
#include <string.h>

#include "lib/cma.h"
#include "util/failcall.h"
#include "util/failnth.h"

static pthread_mutex_t dev_lock = PTHREAD_MUTEX_INITIALIZER;
static struct cma_device **cma_devs; /* by ibdev index; entries stay put while referenced */
static int cma_dev_cnt;
static struct ibv_device **dev_list; /* the verbs list of the last sync */

/* remove_cma_dev: frees d (closing its context) unless something holds it; then it is only
 * marked dead, and the last put frees it. Called with dev_lock held. */
static void remove_dev(struct cma_device *d)
{
	int k;

	if (d->refcnt) {
		d->dead = true;
		return;
	}
	if (d->xrcd)
		ibv_close_xrcd(d->xrcd);
	if (d->pd)
		ibv_dealloc_pd(d->pd);
	if (d->verbs)
		ibv_close_device(d->verbs);
	for (k = 0; k < cma_dev_cnt && cma_devs[k] != d; k++)
		;
	if (k < cma_dev_cnt) {
		memmove(&cma_devs[k], &cma_devs[k + 1],
			(size_t)(cma_dev_cnt - k - 1) * sizeof *cma_devs);
		cma_dev_cnt--;
	}
	free(d);
}

/* insert_cma_dev, in ibdev index order. */
static int insert_dev(struct ibv_device *dev)
{
	struct cma_device *d = emu_calloc(1, sizeof *d), **t;
	int idx = ibv_get_device_index(dev), k;

	t = d ? emu_realloc(cma_devs, (size_t)(cma_dev_cnt + 1) * sizeof *t) : NULL;
	if (!t) {
		free(d);
		return -1;
	}
	cma_devs = t;
	d->dev = dev;
	d->guid = be64toh(ibv_get_device_guid(dev));
	for (k = cma_dev_cnt; k > 0 && ibv_get_device_index(cma_devs[k - 1]->dev) > idx; k--)
		cma_devs[k] = cma_devs[k - 1];
	cma_devs[k] = d;
	cma_dev_cnt++;
	return 0;
}

static bool listed(struct ibv_device *const *list, const struct ibv_device *dev)
{
	for (; list && *list; list++)
		if (*list == dev)
			return true;
	return false;
}

/* sync_devices_list. Called with dev_lock held; again: even when a list exists. */
static int sync_locked(bool again)
{
	struct ibv_device **list;
	int n = 0;

	if (dev_list && !again)
		return 0;
	list = ibv_get_device_list(&n);
	if (!list)
		return cma_err(ENODEV);
	if (n == 0) {
		ibv_free_device_list(list);
		return cma_err(ENODEV);
	}
	/* gone from the verbs list: drop (walk a copy, removal reorders the array) */
	for (struct ibv_device **o = dev_list; o && *o; o++) {
		if (listed(list, *o))
			continue;
		for (int k = 0; k < cma_dev_cnt; k++)
			if (cma_devs[k]->dev == *o) {
				remove_dev(cma_devs[k]);
				break;
			}
	}
	for (int j = 0; j < n; j++)
		if (!listed(dev_list, list[j]) && insert_dev(list[j])) {
			ibv_free_device_list(list);
			return cma_err(ENOMEM);
		}
	if (dev_list)
		ibv_free_device_list(dev_list);
	dev_list = list;
	return 0;
}

int cma_dev_sync(void)
{
	int ret;

	pthread_mutex_lock(&dev_lock);
	ret = sync_locked(false);
	pthread_mutex_unlock(&dev_lock);
	return ret;
}

/* ucma_init_device: open and query limits. A failure leaves the device as it was, to be
 * opened again by the next id that needs it: ENODEV when it does not open, the query's
 * error otherwise. */
static int init_device(struct cma_device *d)
{
	struct ibv_device_attr attr;
	int ret;

	if (d->verbs)
		return 0;
	if (d->dead)
		return cma_err(ENODEV);
	d->verbs = ibv_open_device(d->dev);
	if (!d->verbs)
		return cma_err(ENODEV);
	ret = ibv_query_device(d->verbs, &attr);
	if (ret) {
		ibv_close_device(d->verbs);
		d->verbs = NULL;
		return cma_err(ret);
	}
	d->port_cnt = attr.phys_port_cnt;
	d->max_qpsize = (uint32_t)attr.max_qp_wr;
	d->max_initiator_depth = (uint8_t)attr.max_qp_init_rd_atom;
	d->max_responder_resources = (uint8_t)attr.max_qp_rd_atom;
	return 0;
}

static struct cma_device *find_live(uint64_t guid)
{
	for (int i = 0; i < cma_dev_cnt; i++)
		if (!cma_devs[i]->dead && cma_devs[i]->guid == guid)
			return cma_devs[i];
	return NULL;
}

int cma_get_device(struct cma_id_private *id_priv, uint64_t guid)
{
	struct cma_device *d;
	int ret = cma_err(ENODEV);

	pthread_mutex_lock(&dev_lock);
	if (sync_locked(false))
		goto out;
	/* ucma_get_cma_device: a device the list does not know yet makes it resync */
	d = find_live(guid);
	if (!d && !sync_locked(true))
		d = find_live(guid);
	if (!d)
		goto out;
	ret = init_device(d);
	if (ret)
		goto out;
	/* ucma_get_device: the default PD with the first id; its failure is alloc_pd's errno */
	if (!d->pd)
		d->pd = ibv_alloc_pd(d->verbs);
	if (!d->pd) {
		ret = -1;
		goto out;
	}
	d->refcnt++;
	id_priv->cma_dev = d;
	id_priv->id.verbs = d->verbs;
	id_priv->id.pd = d->pd;
	ret = 0;
out:
	pthread_mutex_unlock(&dev_lock);
	return ret;
}

void cma_put_device(struct cma_device *d)
{
	pthread_mutex_lock(&dev_lock);
	/* Contexts stay open while the library is loaded (spec §3.3); only the count drops, and
	 * a device that left the verbs list goes with its last reference (ucma_put_device). */
	if (!--d->refcnt && d->dead)
		remove_dev(d);
	pthread_mutex_unlock(&dev_lock);
}

struct cma_device *cma_dev_of_verbs(struct ibv_context *verbs)
{
	struct cma_device *ret = NULL;

	pthread_mutex_lock(&dev_lock);
	for (int i = 0; i < cma_dev_cnt; i++)
		if (cma_devs[i]->verbs == verbs)
			ret = cma_devs[i];
	pthread_mutex_unlock(&dev_lock);
	return ret;
}

struct ibv_context **rdma_get_devices(int *num_devices)
{
	struct ibv_context **devs = NULL;
	int i = 0;

	if (num_devices)
		*num_devices = 0;
	if (cma_init())
		return NULL;
	pthread_mutex_lock(&dev_lock);
	/* every call resyncs with the verbs list (sync_devices_list) */
	if (sync_locked(true))
		goto out;
	devs = emu_calloc((size_t)cma_dev_cnt + 1, sizeof *devs);
	if (!devs)
		goto out;
	/* devices that fail to open are marked dead and left out (spec §3.1), as are devices
	 * unregistered since (still held by an id) */
	for (int k = 0; k < cma_dev_cnt; k++) {
		if (cma_devs[k]->dead)
			continue;
		if (init_device(cma_devs[k])) { /* ucma_init_all: "mark it dead and continue" */
			cma_devs[k]->dead = true;
			emu_fail_lost("an RDMA device (rdma_get_devices marks one that does not open "
				      "dead for the process's life)");
			continue;
		}
		cma_devs[k]->refcnt++;
		devs[i++] = cma_devs[k]->verbs;
	}
	if (num_devices)
		*num_devices = i;
out:
	pthread_mutex_unlock(&dev_lock);
	return devs;
}

void rdma_free_devices(struct ibv_context **list)
{
	/* The real library crashes on NULL (spec §16 item 12): here it is a no-op. */
	if (!list)
		return;
	pthread_mutex_lock(&dev_lock);
	for (struct ibv_context **p = list; *p; p++)
		for (int k = 0; k < cma_dev_cnt; k++)
			if (cma_devs[k]->verbs == *p) {
				struct cma_device *d = cma_devs[k];

				/* skip devices added after the list was handed out */
				if (!--d->refcnt && d->dead)
					remove_dev(d);
				break;
			}
	pthread_mutex_unlock(&dev_lock);
	free(list);
}
