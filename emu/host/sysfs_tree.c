/* The RDMA class directories of a host's sandbox: the device directories only. */
#include "config.h"
#include <stdio.h>
#include <sys/stat.h>
#include "emu/host/sysfs_tree.h"
int emu_host_sysfs_write(const struct emu_host *h, const char *class_root, const char *devib_root)
{
	char p[512];
	(void)devib_root;
	snprintf(p, sizeof(p), "%s/infiniband", class_root);
	mkdir(p, 0755);
	for (size_t i = 0; i < h->ndevices; i++) {
		snprintf(p, sizeof(p), "%s/infiniband/%s", class_root, h->devices[i].name);
		mkdir(p, 0755);
	}
	return 0;
}
int emu_host_dev_nodes(const struct emu_host *h, char (*names)[32], int max)
{
	int n = 0;
	for (size_t i = 0; i < h->ndevices && n < max - 1; i++)
		snprintf(names[n++], 32, "uverbs%zu", i);
	snprintf(names[n++], 32, "rdma_cm");
	return n;
}
