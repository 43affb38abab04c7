/* The emulated /dev/infiniband/rdma_cm: what open(), write() and close() on the real char device
 * do, as calls. librdmacm (lib/) marshals rdma-core's ucma_abi_* commands exactly as it would
 * for the kernel and hands the bytes to emu_ucma_write(); the emulated kernel side (emu/rdma_cm/ucma*.c,
 * emu/rdma_cm/cma*.c) decodes them with the kernel's own UAPI layouts (<rdma/rdma_user_cm.h>). Keeping
 * the boundary a byte buffer is what lets the multi-process daemon (rdmaemud) carry the same
 * commands over a socket later.
 *
 * This header deliberately includes neither <rdma/rdma_user_cm.h> nor <rdma/rdma_cma.h> (they
 * define the same option enums and cannot be included together).
 */
#ifndef RDMAEMU_EMU_UCMA_API_H
#define RDMAEMU_EMU_UCMA_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Commands 23 and 24 postdate the installed kernel header (spec §3.4). */
#define EMU_UCMA_CMD_RESOLVE_IB_SERVICE 23
#define EMU_UCMA_CMD_WRITE_CM_EVENT 24
#define EMU_UCMA_NCMDS 25

/* Event numbers (the kernel's and librdmacm's enum rdma_cm_event_type share them). */
enum emu_cma_event {
	EMU_CMA_EVENT_ADDR_RESOLVED = 0,
	EMU_CMA_EVENT_ADDR_ERROR = 1,
	EMU_CMA_EVENT_ROUTE_RESOLVED = 2,
	EMU_CMA_EVENT_ROUTE_ERROR = 3,
	EMU_CMA_EVENT_CONNECT_REQUEST = 4,
	EMU_CMA_EVENT_CONNECT_RESPONSE = 5,
	EMU_CMA_EVENT_CONNECT_ERROR = 6,
	EMU_CMA_EVENT_UNREACHABLE = 7,
	EMU_CMA_EVENT_REJECTED = 8,
	EMU_CMA_EVENT_ESTABLISHED = 9,
	EMU_CMA_EVENT_DISCONNECTED = 10,
	EMU_CMA_EVENT_DEVICE_REMOVAL = 11,
	EMU_CMA_EVENT_MULTICAST_JOIN = 12,
	EMU_CMA_EVENT_MULTICAST_ERROR = 13,
	EMU_CMA_EVENT_ADDR_CHANGE = 14,
	EMU_CMA_EVENT_TIMEWAIT_EXIT = 15,
	EMU_CMA_EVENT_ADDRINFO_RESOLVED = 16,
	EMU_CMA_EVENT_ADDRINFO_ERROR = 17,
	EMU_CMA_EVENT_USER = 18,
	EMU_CMA_EVENT_INTERNAL = 19,
};

/* The WRITE_CM_EVENT command (rdma-core >= v60's ucma_abi_write_cm_event). */
struct emu_ucma_write_cm_event {
	uint32_t cmd;
	uint16_t in;
	uint16_t out;
	uint32_t id;
	uint32_t reserved;
	uint32_t event;
	uint32_t status;
	uint64_t arg;
};

/* The RESOLVE_IB_SERVICE command: the header, then the kernel's struct
 * rdma_ucm_resolve_ib_service (u32 id, then struct rdma_ucm_ib_service at offset 8 of the
 * body: u64 service_id, u8 service_name[64], u32 flags, u32 reserved; 88 bytes). */
#define EMU_UCMA_IB_SERVICE_FLAG_ID 1u
#define EMU_UCMA_IB_SERVICE_FLAG_NAME 2u
#define EMU_UCMA_QUERY_IB_SERVICE 3 /* RDMA_USER_CM_QUERY_IB_SERVICE */
struct emu_ucma_resolve_ib_service {
	uint32_t cmd;
	uint16_t in;
	uint16_t out;
	uint32_t id;
	uint32_t reserved0; /* the u64's alignment */
	uint64_t service_id;
	uint8_t service_name[64];
	uint32_t flags;
	uint32_t reserved;
};
/* QUERY option IB_SERVICE's answer: u32 num_service_recs, then 176-byte records
 * (ib_user_service_rec: the ServiceRecord's wire form) as many as fit. */
#define EMU_UCMA_SERVICE_REC_SIZE 176

/* open("/dev/infiniband/rdma_cm"): a new file (an event channel) of the host this process is
 * attached to. Returns its fd (an eventfd: readable iff >= 1 event is queued, blocking until
 * the application sets O_NONBLOCK), or -errno (ENODEV without a fabric, the eventfd's errno). */
int emu_ucma_open(void);

/* write(fd, buf, len): executes one command. Returns len, or -errno as the kernel's ucma_write
 * would: EBADF (fd not open), EINVAL (fd is not an rdma_cm file, short buffer, unknown command),
 * ENOSYS (a command the kernel has no handler for), or the command's own error. Blocking
 * commands (GET_EVENT on a blocking fd) wait in emu_engine_wait, so virtual time moves. */
ssize_t emu_ucma_write(int fd, const void *buf, size_t len);

/* close(fd): destroys every id still on the file (kernel ucma_close) and closes the fd.
 * 0 or -EBADF. A plain fd that is not an rdma_cm file is just closed. */
int emu_ucma_close(int fd);

/* Whether fd is an open rdma_cm file. */
bool emu_ucma_is_file(int fd);

/* ---- what librdmacm learns of the host besides the commands (emu/rdma_cm/ucma_host.c) ---- */

/* ucma_init's checks before the first command: the char device's ABI version (the kernel's
 * /sys/class/misc/rdma_cm/abi_version) and how many RDMA devices the attached host has (the
 * real library counts ibv_get_device_list(); asking the emulated libibverbs would fix its
 * device list before rdmaemu_ctl_open_host_devices may still extend it). 0, or -errno when
 * the process has no host (the fabric did not load or has no such node; said on stderr). */
struct emu_ucma_sysfs {
	unsigned abi_version;
	size_t ndevices;
};
int emu_ucma_sysfs(struct emu_ucma_sysfs *out);

/* The calling thread is about to block on something only application threads end (librdmacm's
 * wait until the events it handed out are acked): the engine stops counting it as a thread
 * that could still act, so virtual time may move meanwhile. Its next call counts it again. */
void emu_ucma_thread_idle(void);

#endif
