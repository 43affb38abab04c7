/* The device list: one struct ibv_device per RDMA device of the emulated host, named and
 * pathed as the kernel shows rxe devices (name "rxe0", uverbs device "uverbs0",
 * /sys/class/infiniband_verbs/uverbs0, /sys/class/infiniband/rxe0).
 *
 * Like rdma-core, device objects live for the whole process: lists handed out by
 * ibv_get_device_list() only point at them, so a context outlives the list it was opened from. */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu/sim/process.h"
#include "emu/verbs/verbs_priv.h"
#include "util/failcall.h"

static pthread_mutex_t devices_lock = PTHREAD_MUTEX_INITIALIZER;
static struct emu_vdevice *devices;
static size_t ndevices;
static bool devices_ready;

static void add_host_devices(const struct emu_host *h, size_t *i)
{
	for (size_t j = 0; j < h->ndevices; j++, (*i)++) {
		struct emu_vdevice *d = &devices[*i];
		const struct emu_device *e = &h->devices[j];

		d->edev = e;
		d->index = (int)*i;
		d->dev.node_type = e->node_type;
		d->dev.transport_type = e->transport;
		snprintf(d->dev.name, sizeof(d->dev.name), "%s", e->name);
		snprintf(d->dev.dev_name, sizeof(d->dev.dev_name), "uverbs%zu", *i);
		snprintf(d->dev.dev_path, sizeof(d->dev.dev_path),
			 "/sys/class/infiniband_verbs/uverbs%zu", *i);
		snprintf(d->dev.ibdev_path, sizeof(d->dev.ibdev_path), "/sys/class/infiniband/%s",
			 e->name);
	}
}

/* Builds the device objects once (the host's device set is fixed at attach): the attached
 * host's devices, then those of the hosts rdmaemu_ctl_open_host_devices() added. */
static int devices_init_locked(void)
{
	const struct emu_host *h, *x;
	size_t n, i = 0;

	if (devices_ready)
		return 0;
	h = emu_process_host();
	if (!h) {
		int e = errno;

		/* memory or descriptors that ran out: the next call tries again; a host that
		 * cannot be had is like a machine without uverbs: no ABI to talk to */
		return e == ENOMEM || e == EMFILE || e == ENFILE || e == EAGAIN ? e : ENOSYS;
	}
	emu_process_hosts_freeze();
	n = h->ndevices;
	for (size_t k = 0; (x = emu_process_extra_host(k)); k++)
		n += x->ndevices;
	if (n) {
		devices = emu_calloc(n, sizeof(*devices));
		if (!devices)
			return ENOMEM;
	}
	add_host_devices(h, &i);
	for (size_t k = 0; (x = emu_process_extra_host(k)); k++)
		add_host_devices(x, &i);
	ndevices = n;
	devices_ready = true;
	return 0;
}

struct ibv_device **ibv_get_device_list(int *num)
{
	struct ibv_device **l = NULL;
	size_t n = 0;
	int err;

	if (num)
		*num = 0;
	pthread_mutex_lock(&devices_lock);
	err = devices_init_locked();
	if (err) {
		errno = err;
		goto out;
	}
	l = emu_calloc(ndevices + 1, sizeof(*l));
	if (!l) {
		errno = ENOMEM;
		goto out;
	}
	/* an unregistered device (rdmaemu_ctl_device_remove) is no longer listed; its object
	 * stays, as do the contexts opened on it */
	for (size_t i = 0; i < ndevices; i++)
		if (!__atomic_load_n(&devices[i].edev->removed, __ATOMIC_ACQUIRE))
			l[n++] = &devices[i].dev;
	if (num)
		*num = (int)n;
out:
	pthread_mutex_unlock(&devices_lock);
	return l;
}

void ibv_free_device_list(struct ibv_device **list)
{
	free(list);
}

const char *ibv_get_device_name(struct ibv_device *device)
{
	return device->name;
}

__be64 ibv_get_device_guid(struct ibv_device *device)
{
	return htobe64(((struct emu_vdevice *)device)->edev->node_guid);
}

int ibv_get_device_index(struct ibv_device *device)
{
	return ((struct emu_vdevice *)device)->index;
}
