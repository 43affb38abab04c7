/* Seed coverage: every statement of the seed man pages (docs/reference/man-pages.md) and the
 * cases that check it, or why none can. The runner refuses to start if a case id named here
 * does not exist (so the map cannot rot), --seeds prints it with this run's results, and the
 * --report documents carry it as their "Seed statements" section.
 *
 * Seeds (the IDs of man-pages.md): gai = rdma_getaddrinfo(3) (its Chinese translation gai-zh
 * says EAI_QPTYPE for EAI_SOCKTYPE; the 2010 page gai-2010 says "-1 on error" only, no EAI
 * list), rai = rdma_resolve_addrinfo(3), cmid = the NVIDIA "Connection Manager (CM) ID
 * Operations" chapter. */
#include "config.h"

#include <stddef.h>

#include "conformance/seed_map.h"

#define NOT(why) NULL, why

const struct conf_seed conf_seeds[] = {
	/* rdma_getaddrinfo(3) */
	{ "gai", "Either node, service, or hints must be provided.", "INIT-22 GAI-51", NULL },
	{ "gai", "Returns 0 on success, or -1 on error (errno will be set to indicate the failure "
		 "reason), or one of the following nonzero error codes", "INIT-23 GAI-41 GAI-55", NULL },
	{ "gai", "EAI_ADDRFAMILY: The specified network host does not have any network addresses in "
		 "the requested address family.", "GAI-57a GAI-57b", NULL },
	{ "gai", "EAI_AGAIN: The name server returned a temporary failure indication.",
	  NOT("needs a name server's answer; the suite never queries DNS") },
	{ "gai", "EAI_BADFLAGS: hints.ai_flags contains invalid flags.", "GAI-59", NULL },
	{ "gai", "EAI_FAIL: The name server returned a permanent failure indication.",
	  NOT("needs a name server's answer; the suite never queries DNS") },
	{ "gai", "EAI_FAMILY: The requested address family is not supported.", "GAI-60", NULL },
	{ "gai", "EAI_MEMORY: Out of memory.",
	  NOT("an allocation failure inside glibc cannot be provoked through the API") },
	{ "gai", "EAI_NODATA: The specified network host exists, but does not have any network "
		 "addresses defined.", NOT("needs a DNS name without addresses; the suite never "
					    "queries DNS") },
	{ "gai", "EAI_NONAME: The node or service is not known; or both node and service are NULL.",
	  "GAI-54 GAI-51", NULL },
	{ "gai", "EAI_SERVICE: The requested service is not available for the requested QP type.",
	  "GAI-55 GAI-56", NULL },
	{ "gai", "EAI_SOCKTYPE (zh: EAI_QPTYPE): hints.ai_qptype and hints.ai_port_space are "
		 "inconsistent (e.g., IBV_QPT_UD and RDMA_PS_TCP)", "GAI-41 GAI-42 GAI-43", NULL },
	{ "gai", "EAI_SYSTEM: Other system error, check errno for details.",
	  NOT("needs a failing system call inside glibc's getaddrinfo") },
	{ "gai", "If RAI_PASSIVE is specified, the call will resolve address information for use on "
		 "the passive side of a connection.", "GAI-45 GAI-46 GAI-47 GAI-50a", NULL },
	{ "gai", "If node is not given, rdma_getaddrinfo will attempt to resolve the RDMA addressing "
		 "information based on the hints.ai_src_addr, hints.ai_dst_addr, or hints.ai_route.",
	  "GAI-51 GAI-52 GAI-53", NULL },
	{ "gai", "RAI_NUMERICHOST: the node parameter, if provided, must be a numerical network "
		 "address.", "GAI-54", NULL },
	{ "gai", "RAI_NOROUTE: If set, this flag suppresses any lengthy route resolution.",
	  "GAI-61a GAI-61b ACM-80", NULL },
	{ "gai", "RAI_FAMILY: the ai_family setting should be used as an input hint for "
		 "interpretting the node parameter.", "GAI-58 GAI-64 GAI-68a GAI-68b", NULL },
	{ "gai", "ai_family: Supported families are: AF_INET, AF_INET6, and AF_IB.",
	  "GAI-35 GAI-50a GAI-50b GAI-64", NULL },
	{ "gai", "ai_qp_type: Supported types are: IBV_QPT_UD and IBV_QPT_RC.",
	  "GAI-39a GAI-39b GAI-39c GAI-40a GAI-40b GAI-44a", NULL },
	{ "gai", "ai_port_space: Supported values are: RDMA_PS_UDP, RDMA_PS_TCP, and RDMA_PS_IB.",
	  "GAI-36 GAI-37 GAI-38 GAI-44b", NULL },
	{ "gai", "ai_src_len: This will be 0 if an appropriate source address could not be "
		 "discovered for a given destination.", "GAI-35 ACM-86", NULL },
	{ "gai", "ai_dst_len: This will be 0 if the RAI_PASSIVE flag was specified as part of the "
		 "hints.", "GAI-45 GAI-53", NULL },
	{ "gai", "ai_src_canonname / ai_dst_canonname: The canonical for the source / destination.",
	  "GAI-62", NULL },
	{ "gai", "ai_route_len: This will be 0 if the underlying transport does not require routing "
		 "data, or none could be resolved.", "GAI-35 ACM-78", NULL },
	{ "gai", "For Infiniband, hints.ai_route may reference an array of struct ibv_path_record "
		 "or struct ibv_path_data on input.", "ACM-82", NULL },
	{ "gai", "ai_connect_len: This will be 0 if the underlying transport does not require "
		 "additional connection information.", "GAI-35 ACM-89", NULL },
	{ "gai", "ai_next: Will be NULL if no more structures exist.", "GAI-63 GAI-71", NULL },
	/* rdma_resolve_addrinfo(3) */
	{ "rai", "This call submits an asynchronous address resolution request ... generating an "
		 "event on the RDMA CM event channel that is associated with the specified "
		 "rdma_cm_id when complete.", "RAI-93 RAI-99", NULL },
	{ "rai", "Returns -1 on error, errno will be set to indicate the failure reason. The address "
		 "resolution was not started, and no event will be generated.",
	  "RAI-90 RAI-91 RAI-96a RAI-96b RAI-97 RAI-98", NULL },
	{ "rai", "RAI_SA: The %node parameter must be null (not supported).", "RAI-96b", NULL },
	{ "rai", "RAI_SA: The rdma_cm_id associated with the call must be bound to an Infiniband "
		 "port, or an error will occur.",
	  NOT("RESOLVE_IB_SERVICE exists in no Linux 6.1 kernel (spec §3.4): no real result to "
	      "compare; the emulator's answer is in docs/cma.md") },
	{ "rai", "These 2 flags are mutual-exclusive; If none of them is set then DNS is the "
		 "default.", "RAI-96a RAI-93", NULL },
	{ "rai", "The cm event RDMA_CM_EVENT_ADDRINFO_RESOLVED (on success) or "
		 "RDMA_CM_EVENT_ADDRINFO_ERROR (on failure) is generated.", "RAI-93 RAI-98", NULL },
	/* CM ID Operations */
	{ "cmid", "rdma_create_id: 0 on success, -1 on error. If the call fails, errno will be set.",
	  "ID-107 ID-110 INIT-25", NULL },
	{ "cmid", "RDMA_PS_TCP Provides reliable, connection-oriented QP communication.", "ID-107",
	  NULL },
	{ "cmid", "RDMA_PS_UDP Provides unreliable, connectionless QP communication. Supports both "
		  "datagram and multicast communication.", "ID-108 ACC-177 MC-221", NULL },
	{ "cmid", "rdma_destroy_id: Destroys the specified rdma_cm_id and cancels any outstanding "
		  "asynchronous operation.", "ID-113 ID-114 ID-172", NULL },
	{ "cmid", "rdma_destroy_id: Users must free any associated QP with the rdma_cm_id before "
		  "calling this routine and ack an related events.", "ID-111 ID-112c", NULL },
	{ "cmid", "rdma_migrate_id ... moves any pending events associated with the rdma_cm_id to "
		  "the new channel.", "MIG-196", NULL },
	{ "cmid", "rdma_migrate_id will block while there are any unacknowledged events.",
	  "MIG-198", NULL },
	{ "cmid", "If the channel parameter is NULL, then the specified rdma_cm_id will be placed "
		  "into synchronous operation mode.", "MIG-197 MIG-194", NULL },
	{ "cmid", "rdma_set_option sets communication options for an rdma_cm_id.",
	  "OPT-199 OPT-200a OPT-201a OPT-205a OPT-206", NULL },
	{ "cmid", "rdma_create_ep: If qp_init_attr is not NULL, then a QP will be allocated and "
		  "associated with the rdma_cm_id.", "SEED-2 SEED-3 ACC-179", NULL },
	{ "cmid", "rdma_create_ep: If a protection domain (PD) is provided, then the QP will be "
		  "created on that PD. Otherwise the QP will be allocated on a default PD.",
	  "SEED-1 SEED-2", NULL },
	{ "cmid", "rdma_create_ep: The rdma_cm_id will be set to use synchronous operations ... To "
		  "use asynchronous operations, rdma_cm_id must be migrated to a user allocated "
		  "event channel using rdma_migrate_id.", "SEED-4", NULL },
	{ "cmid", "ai_flags: Supported flags are: RAI_PASSIVE, RAI_NUMERICHOST and RAI_NOROUTE.",
	  "ABI-14 GAI-64", NULL },
	{ "cmid", "ai_port_space: RDMA port space used (RDMA_PS_UDP or RDMA_PS_TCP).",
	  "GAI-37 GAI-38", NULL },
	{ "cmid", "rdma_destroy_ep destroys the specified rdma_cm_id and all associated resources, "
		  "including QPs associated with the id.",
	  NOT("the freed objects cannot be inspected through the API; the sanitizer and valgrind "
	      "runs of the suite check that nothing leaks (row 254)") },
	{ "cmid", "rdma_resolve_addr: If successful, the specified rdma_cm_id will be bound to a "
		  "local device.", "RADDR-133", NULL },
	{ "cmid", "rdma_resolve_addr: If a source address is given, the rdma_cm_id is bound to "
		  "that address, the same as if rdma_bind_addr were called.", "SEED-6", NULL },
	{ "cmid", "rdma_resolve_addr, InfiniBand: This call maps the destination and, if given, "
		  "source IP addresses to GIDs ... IPoIB must be running.", "RADDR-133@IB", NULL },
	{ "cmid", "rdma_bind_addr: The address may be wild carded. If binding to a specific local "
		  "address, the rdma_cm_id will also be bound to a local RDMA device.",
	  "BIND-119 BIND-120", NULL },
	{ "cmid", "rdma_resolve_route: The destination must already have been resolved by calling "
		  "rdma_resolve_addr.", "RROUTE-140 SEED-9", NULL },
	{ "cmid", "rdma_resolve_route: For InfiniBand connections, the call obtains a path record.",
	  "RROUTE-141e", NULL },
	{ "cmid", "rdma_listen: the rdma_cm_id must already have been bound to a local address by "
		  "calling rdma_bind_addr before calling rdma_listen.", "LISTEN-146", NULL },
	{ "cmid", "rdma_listen: If the rdma_cm_id is bound to a specific IP address, the listen "
		  "will be restricted to that address (else: on all RDMA devices).",
	  "LISTEN-149 LISTEN-149b", NULL },
	{ "cmid", "rdma_connect: For a connected rdma_cm_id, the call initiates a connection "
		  "request; for an unconnected one, a lookup of the remote QP.",
	  "CONN-153 ACC-177", NULL },
	{ "cmid", "responder_resources / initiator_depth: must be less than or equal to the local "
		  "RDMA device attribute.", "CONN-151 CONN-161 CONN-162", NULL },
	{ "cmid", "private_data_len: the actual amount of data transferred to the remote side is "
		  "transport dependent and may be larger than that requested.",
	  "CONN-153 CONN-158 CONN-160", NULL },
	{ "cmid", "qp_num: This field is ignored by the library if a QP has been created on the "
		  "rdma_cm_id.", "CONN-154", NULL },
	{ "cmid", "rdma_get_request ... may only be used on listening rdma_cm_ids operating "
		  "synchronously.", "REQ-170", NULL },
	{ "cmid", "rdma_get_request: If QP attributes are associated with the listening endpoint, "
		  "the returned rdma_cm_id will also reference an allocated QP.", "ACC-179", NULL },
	{ "cmid", "rdma_accept: Unlike the socket accept routine, rdma_accept is not called on a "
		  "listening rdma_cm_id.", "SEED-30 ACC-173", NULL },
	{ "cmid", "rdma_reject ... to reject a connection or datagram service lookup request. The "
		  "optional private data will be passed to the remote side.",
	  "CONN-157 REJ-180 REJ-181b REJ-182", NULL },
	{ "cmid", "rdma_notify is used to notify the librdmacm of asynchronous events which have "
		  "occurred on a QP.", "NOTIFY-191 NOTIFY-192", NULL },
	{ "cmid", "rdma_disconnect disconnects a connection and transitions any associated QP to "
		  "the error state ... posted work requests being flushed.", "CONN-153 SEED-31",
	  NULL },
	{ "cmid", "rdma_get_src_port: returns the 16-bit port number ... or 0 if the rdma_cm_id is "
		  "not bound to a port.", "SEED-8 PORT-255 PORT-258", NULL },
	{ "cmid", "rdma_get_dst_port: If the rdma_cm_id, id, is not connected, then the routine "
		  "will return 0.", "SEED-7 PORT-256", NULL },
	{ NULL, NULL, NULL, NULL },
};
