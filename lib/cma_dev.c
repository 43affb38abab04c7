/* The device model of librdmacm (spec §3.3): the verbs devices, opened lazily, each with a
 * default PD; rdma_get_devices / rdma_free_devices. Devices are matched to the kernel's
 * answers by node GUID, as rdma-core does when the kernel gives no ibdev index it knows. */
#include "config.h"

#include <endian.h>
#include <stdlib.h>

#include "lib/cma.h"

static pthread_mutex_t dev_lock = PTHREAD_MUTEX_INITIALIZER;
static struct cma_device *cma_devs;
static int cma_dev_cnt;
static struct ibv_device **dev_list;

/* Called with dev_lock held. */
static int sync_locked(void)
{
	int n = 0;

	if (dev_list)
		return 0;
	dev_list = ibv_get_device_list(&n);
	if (!dev_list)
		return cma_err(ENODEV);
	if (n == 0) {
		ibv_free_device_list(dev_list);
		dev_list = NULL;
		return cma_err(ENODEV);
	}
	cma_devs = calloc((size_t)n, sizeof *cma_devs);
	if (!cma_devs) {
		ibv_free_device_list(dev_list);
		dev_list = NULL;
		return cma_err(ENOMEM);
	}
	for (int i = 0; i < n; i++) {
		cma_devs[i].dev = dev_list[i];
		cma_devs[i].guid = be64toh(ibv_get_device_guid(dev_list[i]));
	}
	cma_dev_cnt = n;
	return 0;
}

int cma_dev_sync(void)
{
	int ret;

	pthread_mutex_lock(&dev_lock);
	ret = sync_locked();
	pthread_mutex_unlock(&dev_lock);
	return ret;
}

/* ucma_init_device: open, query limits, allocate the default PD. */
static int init_device(struct cma_device *d)
{
	struct ibv_device_attr attr;

	if (d->verbs)
		return 0;
	if (d->dead)
		return cma_err(ENODEV);
	d->verbs = ibv_open_device(d->dev);
	if (!d->verbs)
		goto dead;
	if (ibv_query_device(d->verbs, &attr))
		goto close;
	d->pd = ibv_alloc_pd(d->verbs);
	if (!d->pd)
		goto close;
	d->port_cnt = attr.phys_port_cnt;
	d->max_qpsize = (uint32_t)attr.max_qp_wr;
	d->max_initiator_depth = (uint8_t)attr.max_qp_init_rd_atom;
	d->max_responder_resources = (uint8_t)attr.max_qp_rd_atom;
	return 0;
close:
	ibv_close_device(d->verbs);
	d->verbs = NULL;
dead:
	d->dead = true;
	return cma_err(ENODEV);
}

int cma_get_device(struct cma_id_private *id_priv, uint64_t guid)
{
	int ret = cma_err(ENODEV);

	pthread_mutex_lock(&dev_lock);
	if (sync_locked())
		goto out;
	for (int i = 0; i < cma_dev_cnt; i++) {
		struct cma_device *d = &cma_devs[i];

		if (d->guid != guid)
			continue;
		if (init_device(d))
			goto out;
		d->refcnt++;
		id_priv->cma_dev = d;
		id_priv->id.verbs = d->verbs;
		id_priv->id.pd = d->pd;
		ret = 0;
		break;
	}
out:
	pthread_mutex_unlock(&dev_lock);
	if (ret)
		errno = ENODEV;
	return ret;
}

void cma_put_device(struct cma_device *d)
{
	pthread_mutex_lock(&dev_lock);
	/* Contexts stay open while the library is loaded (spec §3.3); only the count drops. */
	d->refcnt--;
	pthread_mutex_unlock(&dev_lock);
}

struct cma_device *cma_dev_of_verbs(struct ibv_context *verbs)
{
	struct cma_device *ret = NULL;

	pthread_mutex_lock(&dev_lock);
	for (int i = 0; i < cma_dev_cnt; i++)
		if (cma_devs[i].verbs == verbs)
			ret = &cma_devs[i];
	pthread_mutex_unlock(&dev_lock);
	return ret;
}

struct ibv_context **rdma_get_devices(int *num_devices)
{
	struct ibv_context **devs = NULL;
	int i = 0;

	if (num_devices)
		*num_devices = 0;
	if (cma_init(NULL))
		return NULL;
	pthread_mutex_lock(&dev_lock);
	if (sync_locked())
		goto out;
	devs = calloc((size_t)cma_dev_cnt + 1, sizeof *devs);
	if (!devs)
		goto out;
	/* devices that fail to open are marked dead and left out (spec §3.1) */
	for (int k = 0; k < cma_dev_cnt; k++) {
		if (init_device(&cma_devs[k]))
			continue;
		cma_devs[k].refcnt++;
		devs[i++] = cma_devs[k].verbs;
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
			if (cma_devs[k].verbs == *p)
				cma_devs[k].refcnt--;
	pthread_mutex_unlock(&dev_lock);
	free(list);
}
