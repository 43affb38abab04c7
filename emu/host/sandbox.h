/* Host sandboxes: `rdmaemu run --node X` runs its program in a whole emulated host X.
 *
 * A sandbox is a network namespace and a mount namespace (and a user namespace owning them
 * when the caller is not root), held by a small process of its own, the host's keeper
 * (`rdmaemu-host X` in ps). In it the host's netdevs are tap devices that rdmaemud carries
 * over the emulated wire (emu/daemon/tap.h), so IP between the fabric's hosts works and
 * nothing has a route to the machine's own network; /sys/class/net shows them, and
 * /sys/class/infiniband*, /dev/infiniband show the host's emulated devices
 * (emu/host/sandbox_fs.c). Every program run for host X joins the same sandbox; the keeper
 * leaves when no other process is in it, and everything it made goes with its namespaces.
 *
 * The keeper's state is <runtime dir>/hosts/<X>.pid ("PID NETNS-INODE"), guarded by
 * <X>.lock (flock), so that two runs starting at once make one sandbox. */
#ifndef RDMAEMU_EMU_HOST_SANDBOX_H
#define RDMAEMU_EMU_HOST_SANDBOX_H

struct emu_sandbox_opts {
	const char *runtime_dir; /* emu_link_runtime_dir() */
	const char *sock;	 /* the daemon's socket */
	const char *fabric;	 /* the fabric file's real path, NULL for the built-in fabric */
	const char *node;	 /* the host; NULL: the fabric's first */
};

enum emu_sandbox_result {
	EMU_SANDBOX_INSIDE = 0,	    /* the caller now runs in the host's sandbox */
	EMU_SANDBOX_NOT_PERMITTED, /* namespaces are not permitted here; why is in err */
	EMU_SANDBOX_FAILED,	    /* something else went wrong; what is in err */
};

/* Joins host o->node's sandbox, making it first when none runs. The caller must be single
 * threaded; its working directory is kept. */
enum emu_sandbox_result emu_sandbox_enter(const struct emu_sandbox_opts *o, char *err,
					  size_t errlen);

#endif
