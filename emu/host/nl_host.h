/* What the kernel's RDMA core knows of the emulated host, as RDMA netlink reports it: the
 * devices of <sysfs class dir>/infiniband, their ports and the ports' netdevs, read from the
 * files kernel rxe has there (docs/reference/rdma-netlink.md). */
#ifndef RDMAEMU_HOST_NL_HOST_H
#define RDMAEMU_HOST_NL_HOST_H

#include <stddef.h>
#include <stdint.h>

#define NLH_NAME_MAX 64

struct nlh_counter {
	char name[NLH_NAME_MAX];
	uint64_t value;
};

struct nlh_port {
	uint8_t state;      /* IB port state, ports/N/state */
	uint8_t phys_state; /* ports/N/phys_state */
	int ib;             /* link_layer InfiniBand (else Ethernet: RoCE) */
	uint32_t lid, sm_lid;
	uint8_t lmc;
	uint64_t cap_flags;
	uint64_t subnet_prefix;
	char netdev[NLH_NAME_MAX]; /* empty: no netdev in this network namespace */
	uint32_t ifindex;
	int has_counters;          /* ports/N/hw_counters exists */
	size_t ncounters;
	struct nlh_counter *counters; /* in the driver's order */
};

struct nlh_dev {
	char name[NLH_NAME_MAX];
	uint32_t index;
	uint64_t node_guid, sys_image_guid;
	uint8_t node_type;
	char fw_ver[NLH_NAME_MAX];
	unsigned nports;
	struct nlh_port *ports; /* ports[0] is port 1 */
};

struct nlh_host {
	size_t ndev;
	struct nlh_dev *devs;
};

/* The class directory read: $RDMAEMU_HOST_SYSFS, else /sys/class. */
const char *nlh_class_dir(void);

/* Reads the host; 0, or -errno (the host then holds no device). */
int nlh_host_load(struct nlh_host *h, const char *classdir);
void nlh_host_free(struct nlh_host *h);
const struct nlh_dev *nlh_dev_by_index(const struct nlh_host *h, uint32_t index);

#endif
