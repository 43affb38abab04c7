/* SYM (spec §1, §15 rows 1-6): librdmacm.so.1's SONAME and symbol version nodes.
 *
 * The loaded library is reopened by path (RTLD_NOLOAD) and each name looked up with dlvsym per
 * version node. "At @@NODE" (the default version) means dlvsym(NODE) finds it and plain dlsym
 * returns the same address; a symbol only counts if it is defined by librdmacm itself (dladdr),
 * since a handle lookup also searches the library's dependencies. */
#include "config.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <string.h>

#include "conformance/conformance.h"

static void *lib_handle(void)
{
	void *h = dlopen(conf_librdmacm_path(), RTLD_NOW | RTLD_NOLOAD);

	if (!h)
		conf_fatal("dlopen(%s, RTLD_NOLOAD): %s", conf_librdmacm_path(), dlerror());
	return h;
}

static bool in_lib(void *addr)
{
	Dl_info a, b;
	void *ref = dlsym(RTLD_DEFAULT, "rdma_getaddrinfo");

	return addr && ref && dladdr(addr, &a) && dladdr(ref, &b) && a.dli_fbase == b.dli_fbase;
}

/* Is `name` defined by librdmacm with default version `node`? Records a failure if not. */
static bool expect_default_version(void *h, const char *name, const char *node)
{
	void *v = dlvsym(h, name, node);
	void *d = dlsym(h, name);

	if (!v || !in_lib(v))
		return conf_expect(false, "%s@@%s not exported%s", name, node,
				   in_lib(d) ? " (exported under another version)" : "");
	return conf_expect(d == v, "%s: %s is not the default version", name, node);
}

static void check_nodes(const char *const *names, const char *node)
{
	unsigned n = 0;

	conf_stimulus("dlvsym(%s, name, \"%s\")", conf_librdmacm_path(), node);
	for (; *names; names++, n++)
		expect_default_version(lib_handle(), *names, node);
	conf_note("%u symbols @@%s", n, node);
}

static const char *soname_of(void *h)
{
	struct link_map *lm = NULL;
	const char *strtab = NULL;
	ElfW(Xword) off = (ElfW(Xword))-1;

	if (dlinfo(h, RTLD_DI_LINKMAP, &lm) || !lm)
		return NULL;
	for (const ElfW(Dyn) *d = lm->l_ld; d->d_tag != DT_NULL; d++) {
		if (d->d_tag == DT_STRTAB) {
			/* glibc relocates DT_STRTAB in place on most targets; be safe either way. */
			ElfW(Addr) p = d->d_un.d_ptr;
			strtab = (const char *)(p < lm->l_addr ? p + lm->l_addr : p);
		} else if (d->d_tag == DT_SONAME) {
			off = d->d_un.d_val;
		}
	}
	return strtab && off != (ElfW(Xword))-1 ? strtab + off : NULL;
}

static void sym_1(const struct conf_case *c)
{
	static const char *const names[] = {
		"rdma_getaddrinfo", "rdma_freeaddrinfo",
		"rdma_create_id", "rdma_destroy_id", "rdma_create_ep", "rdma_destroy_ep",
		"rdma_bind_addr", "rdma_resolve_addr", "rdma_resolve_route", "rdma_listen",
		"rdma_connect", "rdma_get_request", "rdma_accept", "rdma_reject", "rdma_notify",
		"rdma_disconnect", "rdma_set_option", "rdma_migrate_id", "rdma_get_src_port",
		"rdma_get_dst_port", "rdma_get_devices", "rdma_free_devices", "rdma_event_str",
		"rdma_create_event_channel", "rdma_destroy_event_channel", "rdma_get_cm_event",
		"rdma_ack_cm_event",
		"rdma_create_qp", "rdma_destroy_qp", "rdma_create_srq", "rdma_destroy_srq",
		"rdma_create_qp_ex", "rdma_create_srq_ex",
		"rdma_join_multicast", "rdma_leave_multicast",
		NULL,
	};
	const char *so = soname_of(lib_handle());

	check_nodes(names, "RDMACM_1.0");
	conf_expect(so && !strcmp(so, "librdmacm.so.1"), "SONAME %s, want librdmacm.so.1",
		    so ? so : "(none)");
	conf_note("SONAME %s", so ? so : "(none)");
}

static void sym_2(const struct conf_case *c)
{
	static const char *const names[] = { "rdma_join_multicast_ex", NULL };
	check_nodes(names, "RDMACM_1.1");
}

static void sym_3(const struct conf_case *c)
{
	static const char *const names[] = { "rdma_establish", "rdma_init_qp_attr", NULL };
	check_nodes(names, "RDMACM_1.2");
}

static void sym_4(const struct conf_case *c)
{
	static const char *const names[] = { "rdma_get_remote_ece", "rdma_set_local_ece",
					     "rdma_reject_ece", NULL };
	check_nodes(names, "RDMACM_1.3");
}

static void sym_5(const struct conf_case *c)
{
	static const char *const names[] = { "rdma_resolve_addrinfo", "rdma_query_addrinfo",
					     "rdma_write_cm_event", NULL };
	int level = conf_rdmacm_level();

	if (level >= 60) {
		check_nodes(names, "RDMACM_1.4");
		return;
	}
	conf_stimulus("dlsym(%s, name) at level %d", conf_librdmacm_path(), level);
	for (const char *const *n = names; *n; n++) {
		conf_expect(!in_lib(dlsym(lib_handle(), *n)), "%s exported below v60", *n);
		conf_expect(!in_lib(dlvsym(lib_handle(), *n, "RDMACM_1.4")),
			    "%s@RDMACM_1.4 exported below v60", *n);
	}
	conf_note("RDMACM_1.4 names absent");
}

static void sym_6(const struct conf_case *c)
{
	static const char *const names[] = {
		"rdma_get_local_addr", "rdma_get_peer_addr", "rdma_reject_msg",
		"rdma_consumer_reject_data", "rdma_accept_ece", "ucma_init", "ucma_complete",
		"ucma_max_qpsize", "ucma_addrlen", "ucma_shutdown", "ucma_ib_init",
		"ucma_ib_resolve", "ucma_set_af_ib_support", "ucma_get_device", "ucma_getaddrinfo",
		NULL,
	};
	unsigned n = 0;

	conf_stimulus("dlsym(%s, name)", conf_librdmacm_path());
	for (const char *const *p = names; *p; p++, n++)
		conf_expect(!in_lib(dlsym(lib_handle(), *p)), "%s is exported", *p);
	conf_note("none of %u names exported", n);
}

static const struct conf_case cases[] = {
	{ "SYM-1", "SYM", 1, "SONAME librdmacm.so.1; every CM/channel/QP/SRQ/multicast symbol of §1 "
	  "at @@RDMACM_1.0", NULL, PRE_NONE, NULL, 0, sym_1, NULL },
	{ "SYM-2", "SYM", 2, "rdma_join_multicast_ex at @@RDMACM_1.1", NULL, PRE_NONE, NULL, 0,
	  sym_2, NULL },
	{ "SYM-3", "SYM", 3, "rdma_establish, rdma_init_qp_attr at @@RDMACM_1.2", NULL, PRE_NONE,
	  NULL, 0, sym_3, NULL },
	{ "SYM-4", "SYM", 4, "rdma_get_remote_ece, rdma_set_local_ece, rdma_reject_ece at "
	  "@@RDMACM_1.3 (no rdma_accept_ece)", NULL, PRE_NONE, NULL, 0, sym_4, NULL },
	{ "SYM-5", "SYM", 5, "level >= 60: rdma_resolve_addrinfo, rdma_query_addrinfo, "
	  "rdma_write_cm_event at @@RDMACM_1.4; below v60: absent",
	  "rdma-core 7b1a686bc and 7d7ca522f (v60), librdmacm/librdmacm.map", PRE_NONE, NULL, 0, sym_5,
	  NULL },
	{ "SYM-6", "SYM", 6, "not exported: rdma_get_local_addr/peer_addr (inline), kernel-only "
	  "rdma_reject_msg/rdma_consumer_reject_data, rdma_accept_ece, ucma_* internals",
	  "rdma_accept.3 mentions ECE on accept, but there is no rdma_accept_ece; rdma_reject_msg "
	  "and rdma_consumer_reject_data are kernel APIs", PRE_NONE, NULL, 0, sym_6, NULL },
};

const struct conf_area conf_area_sym = { "SYM", cases, sizeof cases / sizeof cases[0] };
