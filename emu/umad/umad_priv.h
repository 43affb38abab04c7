/* libibumad.so.3 on the emulated host: the ABI that rdma-core 44's <infiniband/umad.h> gives
 * applications (the layouts are the kernel's struct ib_user_mad of <rdma/ib_user_mad.h>, ABI
 * version 5 with P_Key indices), and the library's internals.
 *
 * Where rdma-core reads sysfs and talks to /dev/infiniband/umadN, this library reads the
 * emulated host's sysfs (emu/hca/sysfs_class.h, the same files the host's sandbox shows) and
 * hands MADs to the emulated fabric's agents: the nodes' SMAs (emu/ib/sma.h) on QP0 and the
 * fake SA (emu/ib/sa.h) on QP1. docs/umad.md tells what is emulated. */
#ifndef RDMAEMU_EMU_UMAD_PRIV_H
#define RDMAEMU_EMU_UMAD_PRIV_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "emu/sim/fabric.h"

#define UMAD_CA_NAME_LEN 20
#define UMAD_CA_MAX_PORTS 10
#define UMAD_CA_MAX_AGENTS 32

union umad_gid {
	uint8_t raw[16];
	uint16_t raw_be16[8];
	struct {
		uint64_t subnet_prefix;
		uint64_t interface_id;
	} global;
} __attribute__((aligned(4))) __attribute__((packed));

typedef struct ib_mad_addr {
	uint32_t qpn;   /* big-endian, as every multi-byte field here but pkey_index */
	uint32_t qkey;
	uint16_t lid;
	uint8_t sl;
	uint8_t path_bits;
	uint8_t grh_present;
	uint8_t gid_index;
	uint8_t hop_limit;
	uint8_t traffic_class;
	union {
		uint8_t gid[16];
		union umad_gid ib_gid;
	};
	uint32_t flow_label;
	uint16_t pkey_index;
	uint8_t reserved[6];
} ib_mad_addr_t;

typedef struct ib_user_mad {
	uint32_t agent_id;
	uint32_t status;
	uint32_t timeout_ms;
	uint32_t retries;
	uint32_t length;
	ib_mad_addr_t addr;
	uint8_t data[];
} ib_user_mad_t;

typedef struct umad_port {
	char ca_name[UMAD_CA_NAME_LEN];
	int portnum;
	unsigned base_lid;
	unsigned lmc;
	unsigned sm_lid;
	unsigned sm_sl;
	unsigned state;
	unsigned phys_state;
	unsigned rate;
	uint32_t capmask;
	uint64_t gid_prefix;
	uint64_t port_guid;
	unsigned pkeys_size;
	uint16_t *pkeys;
	char link_layer[UMAD_CA_NAME_LEN];
} umad_port_t;

typedef struct umad_ca {
	char ca_name[UMAD_CA_NAME_LEN];
	unsigned node_type;
	int numports;
	char fw_ver[20];
	char ca_type[40];
	char hw_ver[20];
	uint64_t node_guid;
	uint64_t system_guid;
	umad_port_t *ports[UMAD_CA_MAX_PORTS];
} umad_ca_t;

struct umad_device_node {
	struct umad_device_node *next;
	const char *ca_name;
};

struct umad_reg_attr {
	uint8_t mgmt_class;
	uint8_t mgmt_class_version;
	uint32_t flags;
	uint64_t method_mask[2];
	uint32_t oui;
	uint8_t rmpp_version;
};

/* The API (rdma-core 44's <infiniband/umad.h>). */
int umad_init(void);
int umad_done(void);
int umad_get_cas_names(char cas[][UMAD_CA_NAME_LEN], int max);
int umad_get_ca_portguids(const char *ca_name, uint64_t *portguids, int max);
int umad_get_ca(const char *ca_name, umad_ca_t *ca);
int umad_release_ca(umad_ca_t *ca);
int umad_get_port(const char *ca_name, int portnum, umad_port_t *port);
int umad_release_port(umad_port_t *port);
int umad_get_issm_path(const char *ca_name, int portnum, char path[], int max);
int umad_open_port(const char *ca_name, int portnum);
int umad_close_port(int portid);
void *umad_get_mad(void *umad);
size_t umad_size(void);
int umad_status(void *umad);
ib_mad_addr_t *umad_get_mad_addr(void *umad);
int umad_set_grh(void *umad, void *mad_addr);
int umad_set_addr_net(void *umad, uint16_t dlid, uint32_t dqp, int sl, uint32_t qkey);
int umad_set_addr(void *umad, int dlid, int dqp, int sl, int qkey);
int umad_set_pkey(void *umad, int pkey_index);
int umad_get_pkey(void *umad);
int umad_send(int portid, int agentid, void *umad, int length, int timeout_ms, int retries);
int umad_recv(int portid, void *umad, int *length, int timeout_ms);
int umad_poll(int portid, int timeout_ms);
int umad_get_fd(int portid);
int umad_register(int portid, int mgmt_class, int mgmt_version, uint8_t rmpp_version,
		  long method_mask[16 / sizeof(long)]);
int umad_register_oui(int portid, int mgmt_class, uint8_t rmpp_version, uint8_t oui[3],
		      long method_mask[16 / sizeof(long)]);
int umad_unregister(int portid, int agentid);
int umad_sort_ca_device_list(struct umad_device_node **head, size_t size);
struct umad_device_node *umad_get_ca_device_list(void);
void umad_free_ca_device_list(struct umad_device_node *head);
int umad_register2(int port_fd, struct umad_reg_attr *attr, uint32_t *agent_id);
int umad_debug(int level);
void umad_addr_dump(ib_mad_addr_t *addr);
void umad_dump(void *umad);
const char *umad_class_str(uint8_t mgmt_class);
const char *umad_method_str(uint8_t mgmt_class, uint8_t method);
const char *umad_attribute_str(uint8_t mgmt_class, uint16_t attr_id);
const char *umad_common_mad_status_str(uint16_t status);
const char *umad_sa_mad_status_str(uint16_t status);

/* ---- inside the library ---- */

extern int umad_debug_level;

/* The attached host (NULL with the reason printed when the fabric does not load). */
const struct emu_host *umad_host(void);
/* The device `name` of the host (removed ones are gone), or NULL. */
const struct emu_device *umad_device(const struct emu_host *h, const char *name);
/* rdma-core's choice of CA and port when the caller leaves them open (resolve_ca_name): the
 * first CA, in the device list's order, with an active port, else one whose port is up. 0 with
 * *name (malloc'd) and *port set, -1 when none. */
int umad_resolve(const char *ca_in, int *port, char **name);

/* An agent registered on an open port. */
struct umad_agent {
	bool used;
	uint8_t mgmt_class, class_version, rmpp_version, qpn;
	uint32_t oui;
	uint64_t method_mask[2];
	uint32_t hi_tid; /* the MAD layer's id of the agent: the top half of its requests' TIDs */
};

/* A MAD waiting to be read: an answer, or a send that timed out. */
struct umad_msg {
	struct umad_msg *next;
	uint64_t ready_ns; /* CLOCK_MONOTONIC: not readable before */
	size_t len;        /* of umad (the header and the MAD) */
	struct ib_user_mad umad;
};

/* An open port: the fd the application holds is the read end of a pipe that carries one byte
 * per queued MAD, so that poll(2) on it works as on the kernel's umad file. */
struct umad_file {
	int fd, wfd;
	size_t host, dev; /* the fabric's indices of the port's device */
	unsigned port;
	struct umad_agent agents[UMAD_CA_MAX_AGENTS];
	struct umad_msg *head, *tail;
};

/* The open files (under umad_lock). */
extern pthread_mutex_t umad_lock;
struct umad_file *umad_file_get(int fd);

/* The answer of the fabric's agent to a request sent on f: 0 with *resp (malloc'd, the whole
 * MAD or RMPP message, *resp_len bytes) and *slid (the responder's LID), -ETIMEDOUT when none
 * comes. */
int umad_fabric_answer(const struct umad_file *f, const ib_user_mad_t *req, size_t mad_len,
		       uint8_t **resp, size_t *resp_len, uint16_t *slid);

#endif
