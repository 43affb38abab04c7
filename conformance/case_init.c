/* INIT (spec §3.1, §15 rows 22-34): library initialisation and the device model.
 *
 * Each case starts in a fresh child, so the library is uninitialised when the body runs. The
 * "no device" rows use the NODEVICE precondition: a real machine without RDMA devices, or on the
 * emulator a fabric whose host has a plain netdev and no RDMA device (emu_fabrics.h). */
#include "config.h"

#include <errno.h>
#include <unistd.h>
#include <sys/wait.h>
#include <rdma/rdma_cma.h>

#include "conformance/conformance.h"
#include "conformance/emu_fabrics.h"

#define SENTINEL ((void *)0x5a5a5a5a5a5aUL)

static void init_22(const struct conf_case *c)
{
	struct rdma_addrinfo *r = SENTINEL;
	int ret;

	conf_stimulus("rdma_getaddrinfo(NULL,NULL,NULL,&r)");
	errno = 0;
	ret = rdma_getaddrinfo(NULL, NULL, NULL, &r);
	int e = errno;
	EXPECT_INT("ret", ret, -1);
	EXPECT_ERRNO("errno", e, EINVAL);
	conf_expect(r == SENTINEL, "*res was written (%p)", (void *)r);
	conf_note("-1 errno %s, res untouched", conf_errno_name(e));
}

static void init_23(const struct conf_case *c)
{
	struct rdma_addrinfo *r = SENTINEL;
	int ret;

	conf_stimulus("no device: rdma_getaddrinfo(\"127.0.0.1\",\"7471\",NULL,&r)");
	errno = 0;
	ret = rdma_getaddrinfo("127.0.0.1", "7471", NULL, &r);
	int e = errno;
	EXPECT_INT("ret", ret, -1);
	EXPECT_ERRNO("errno", e, ENODEV);
	conf_expect(r == SENTINEL, "*res was written (%p)", (void *)r);
	conf_note("-1 errno %s", conf_errno_name(e));
}

static void init_24(const struct conf_case *c)
{
	struct rdma_event_channel *ch;

	conf_stimulus("no device: rdma_create_event_channel()");
	errno = 0;
	ch = rdma_create_event_channel();
	int e = errno;
	EXPECT_NULL("channel", ch);
	EXPECT_ERRNO("errno", e, ENODEV);
	conf_note("NULL errno %s", conf_errno_name(e));
}

static void init_25(const struct conf_case *c)
{
	struct rdma_event_channel dummy = { .fd = -1 };
	struct rdma_cm_id *id = SENTINEL;
	int ret, e;

	conf_stimulus("no device: rdma_create_id(&{fd=-1} / NULL, &id, ctx, RDMA_PS_TCP)");
	errno = 0;
	ret = rdma_create_id(&dummy, &id, SENTINEL, RDMA_PS_TCP);
	e = errno;
	EXPECT_INT("channel {fd=-1}: ret", ret, -1);
	EXPECT_ERRNO("channel {fd=-1}", e, ENODEV);
	conf_expect(id == SENTINEL, "channel {fd=-1}: *id was written");
	errno = 0;
	ret = rdma_create_id(NULL, &id, SENTINEL, RDMA_PS_TCP);
	int e2 = errno;
	EXPECT_INT("channel NULL: ret", ret, -1);
	EXPECT_ERRNO("channel NULL", e2, ENODEV);
	conf_expect(id == SENTINEL, "channel NULL: *id was written");
	conf_note("-1 errno %s / %s", conf_errno_name(e), conf_errno_name(e2));
}

static void init_26(const struct conf_case *c)
{
	struct ibv_context **list;
	int n = -7;

	conf_stimulus("no device: rdma_get_devices(&n)");
	errno = 0;
	list = rdma_get_devices(&n);
	int e = errno;
	EXPECT_NULL("list", list);
	EXPECT_INT("n", n, 0);
	EXPECT_ERRNO("errno", e, ENODEV);
	conf_note("NULL, n %d, errno %s", n, conf_errno_name(e));
}

static void init_27(const struct conf_case *c)
{
	struct rdma_event_channel dummy = { .fd = -1 };
	struct rdma_cm_event *ev = SENTINEL;
	int ret, ret2, e, e2;

	conf_stimulus("no device: rdma_get_cm_event(&{fd=-1}, &ev) and (&{fd=-1}, NULL)");
	errno = 0;
	ret = rdma_get_cm_event(&dummy, &ev);
	e = errno;
	errno = 0;
	ret2 = rdma_get_cm_event(&dummy, NULL);
	e2 = errno;
	EXPECT_INT("&ev: ret", ret, -1);
	EXPECT_ERRNO("&ev", e, ENODEV);
	conf_expect(ev == SENTINEL, "&ev: *event was written");
	EXPECT_INT("NULL: ret", ret2, -1);
	EXPECT_ERRNO("NULL (init is checked before the argument)", e2, ENODEV);
	conf_note("-1 errno %s / -1 errno %s", conf_errno_name(e), conf_errno_name(e2));
}

static void init_28(const struct conf_case *c)
{
	int ret;

	conf_stimulus("rdma_ack_cm_event(NULL)");
	errno = 0;
	ret = rdma_ack_cm_event(NULL);
	int e = errno;
	EXPECT_INT("ret", ret, -1);
	EXPECT_ERRNO("errno", e, EINVAL);
	conf_note("-1 errno %s", conf_errno_name(e));
}

static void init_29(const struct conf_case *c)
{
	conf_stimulus("rdma_freeaddrinfo(NULL)");
	rdma_freeaddrinfo(NULL);
	conf_note("returned");
}

static void init_30(const struct conf_case *c)
{
	struct rdma_event_channel *ch;

	conf_stimulus("device visible, no rdma_cm: rdma_create_event_channel()");
	errno = 0;
	ch = rdma_create_event_channel();
	int e = errno;
	EXPECT_NULL("channel", ch);
	EXPECT_ERRNO("errno", e, ENOENT);
	conf_note("NULL errno %s", conf_errno_name(e));
}

static void init_31(const struct conf_case *c)
{
	struct rdma_cm_id *id = SENTINEL;
	int ret;

	conf_stimulus("device visible, no rdma_cm: rdma_create_id(NULL, &id, ctx, RDMA_PS_TCP)");
	errno = 0;
	ret = rdma_create_id(NULL, &id, SENTINEL, RDMA_PS_TCP);
	int e = errno;
	EXPECT_INT("ret", ret, -1);
	EXPECT_ERRNO("errno", e, ENOMEM);
	conf_expect(id == SENTINEL, "*id was written");
	conf_note("-1 errno %s", conf_errno_name(e));
}

static void init_32(const struct conf_case *c)
{
	struct ibv_context **list;
	int n = -7;

	conf_stimulus("device visible but not openable: rdma_get_devices(&n)");
	list = rdma_get_devices(&n);
	if (!conf_expect(list != NULL, "list NULL (errno %s), want a non-NULL empty array",
			 conf_errno_name(errno)))
		return;
	EXPECT_NULL("list[0]", list[0]);
	EXPECT_INT("n", n, 0);
	rdma_free_devices(list);
	conf_note("non-NULL array, list[0] NULL, n %d", n);
}

static void init_33(const struct conf_case *c)
{
	struct rdma_event_channel dummy = { .fd = -1 };
	struct rdma_cm_event *ev = SENTINEL;
	struct ibv_context **list;
	int n = 0, ret, ret2, e, e2;

	conf_stimulus("after init: rdma_get_cm_event(&{fd=-1}, NULL) / (&{fd=-1}, &ev)");
	list = rdma_get_devices(&n);
	if (!list)
		conf_fatal("rdma_get_devices failed (errno %s): library init did not succeed",
			   conf_errno_name(errno));
	rdma_free_devices(list);
	errno = 0;
	ret = rdma_get_cm_event(&dummy, NULL);
	e = errno;
	errno = 0;
	ret2 = rdma_get_cm_event(&dummy, &ev);
	e2 = errno;
	EXPECT_INT("NULL: ret", ret, -1);
	EXPECT_ERRNO("NULL", e, EINVAL);
	EXPECT_INT("&ev: ret", ret2, -1);
	EXPECT_ERRNO("&ev", e2, EBADF);
	conf_expect(ev == SENTINEL, "&ev: *event was written");
	conf_note("-1 errno %s / -1 errno %s", conf_errno_name(e), conf_errno_name(e2));
}


/* Emulator-only: the kernel side is the emulated host, whose rdma_cm ABI version the fabric
 * sets. Each sub-case needs a fresh library, so each runs in its own grandchild. */
enum abi_call { ABI_GAI, ABI_CHANNEL, ABI_CREATE_ID, ABI_DEVICES, ABI_GET_EVENT, ABI_NCALLS };
static const char *const abi_call_names[ABI_NCALLS] = {
	"rdma_getaddrinfo", "rdma_create_event_channel", "rdma_create_id(NULL, ...)",
	"rdma_get_devices", "rdma_get_cm_event",
};

/* The call's errno in a fresh process (0: success). */
static int abi_call(enum abi_call call)
{
	struct rdma_event_channel dummy = { .fd = -1 }, *ch;
	struct rdma_addrinfo *r = NULL;
	struct rdma_cm_event *ev;
	struct ibv_context **list;
	struct rdma_cm_id *id;

	errno = 0;
	switch (call) {
	case ABI_GAI:
		if (rdma_getaddrinfo("192.0.2.1", "7471", NULL, &r) == 0) {
			rdma_freeaddrinfo(r);
			return 0;
		}
		return errno;
	case ABI_CHANNEL:
		ch = rdma_create_event_channel();
		return ch ? 0 : errno;
	case ABI_CREATE_ID:
		return rdma_create_id(NULL, &id, NULL, RDMA_PS_TCP) ? errno : 0;
	case ABI_DEVICES:
		list = rdma_get_devices(NULL);
		return list ? 0 : errno;
	case ABI_GET_EVENT:
		/* init fails before the fd is used; with init done, fd -1 gives EBADF */
		return rdma_get_cm_event(&dummy, &ev) ? errno : 0;
	default:
		return 0;
	}
}

static int abi_probe_call(const char *fabric, enum abi_call call)
{
	int (*attach)(const char *, const char *) =
		(int (*)(const char *, const char *))conf_ctl_sym("rdmaemu_ctl_attach_text");
	pid_t pid;
	int st;

	if (!attach)
		conf_fatal("rdmaemu_ctl_attach_text not found in the emulator");
	pid = fork();
	if (pid == 0) {
		int ret;

		if (attach(fabric, EMU_FABRIC_CM_ABI_NODE))
			_exit(100);
		ret = abi_call(call);
		_exit(ret < 100 ? ret : 101);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		conf_fatal("ABI probe child failed");
	return WEXITSTATUS(st);
}

static int abi_probe(const char *fabric)
{
	return abi_probe_call(fabric, ABI_GAI);
}

static void init_34(const struct conf_case *c)
{
	int e5, e2, e3, e4;

	conf_stimulus("rdma_getaddrinfo(\"192.0.2.1\",\"7471\") and the CM calls that initialise "
		      "the library, on hosts reporting rdma_cm ABI 5, 2, 3, 4");
	for (int call = ABI_CHANNEL; call < ABI_NCALLS; call++) {
		int x5 = abi_probe_call(EMU_FABRIC_CM_ABI(5), (enum abi_call)call);
		int x2 = abi_probe_call(EMU_FABRIC_CM_ABI(2), (enum abi_call)call);
		int x4 = abi_probe_call(EMU_FABRIC_CM_ABI(4), (enum abi_call)call);

		conf_expect(x5 == EPERM && x2 == EPERM, "%s: ABI 5 %s, ABI 2 %s, want EPERM",
			    abi_call_names[call], conf_errno_name(x5), conf_errno_name(x2));
		conf_expect(x4 == (call == ABI_GET_EVENT ? EBADF : 0), "%s: ABI 4 gives %s",
			    abi_call_names[call], conf_errno_name(x4));
	}
	e5 = abi_probe(EMU_FABRIC_CM_ABI(5));
	e2 = abi_probe(EMU_FABRIC_CM_ABI(2));
	e3 = abi_probe(EMU_FABRIC_CM_ABI(3));
	e4 = abi_probe(EMU_FABRIC_CM_ABI(4));
	conf_expect(e5 != 100 && e2 != 100, "the fabric with cm-abi= did not attach");
	EXPECT_ERRNO("ABI 5", e5, EPERM);
	EXPECT_ERRNO("ABI 2", e2, EPERM);
	EXPECT_INT("ABI 3 (0 = success)", e3, 0);
	EXPECT_INT("ABI 4 (0 = success)", e4, 0);
	conf_note("ABI 5: %s, ABI 2: %s, ABI 3 and 4: success; the CM calls too",
		  conf_errno_name(e5), conf_errno_name(e2));
}

static const struct conf_case cases[] = {
	{ "INIT-22", "INIT", 22, "rdma_getaddrinfo(NULL,NULL,NULL,&r): -1/EINVAL before init (also "
	  "with no device), r untouched",
	  "seeds: node is \"Optional\"; the man page says \"either node, service, or hints must be "
	  "provided\" (EAI_NONAME listed for both NULL)", PRE_NONE, NULL, 0, init_22, NULL },
	{ "INIT-23", "INIT", 23, "no device: rdma_getaddrinfo(\"127.0.0.1\",\"7471\",NULL,&r) = -1/ENODEV",
	  "examples print gai_strerror(-1) = \"Bad value for ai_flags\" for this (EAI_BADFLAGS == -1)",
	  PRE_NODEVICE, NULL, 0, init_23, NULL },
	{ "INIT-24", "INIT", 24, "no device: rdma_create_event_channel() = NULL/ENODEV", NULL,
	  PRE_NODEVICE, NULL, 0, init_24, NULL },
	{ "INIT-25", "INIT", 25, "no device: rdma_create_id(ch, &id, ctx, RDMA_PS_TCP) = -1/ENODEV "
	  "(channel {fd=-1} and NULL)", NULL, PRE_NODEVICE, NULL, 0, init_25, NULL },
	{ "INIT-26", "INIT", 26, "no device: rdma_get_devices(&n) = NULL, n = 0, errno ENODEV", NULL,
	  PRE_NODEVICE, NULL, 0, init_26, NULL },
	{ "INIT-27", "INIT", 27, "no device: rdma_get_cm_event(ch, &ev) and (ch, NULL) = -1/ENODEV "
	  "(init checked before the argument)", NULL, PRE_NODEVICE, NULL, 0, init_27, NULL },
	{ "INIT-28", "INIT", 28, "rdma_ack_cm_event(NULL) = -1/EINVAL", NULL, PRE_NONE, NULL, 0,
	  init_28, NULL },
	{ "INIT-29", "INIT", 29, "rdma_freeaddrinfo(NULL) returns without crashing", NULL, PRE_NONE,
	  NULL, 0, init_29, NULL },
	{ "INIT-30", "INIT", 30, "device visible, no /dev/infiniband/rdma_cm: "
	  "rdma_create_event_channel() = NULL/ENOENT", NULL, PRE_FAKEDEV, NULL, 0, init_30, NULL },
	{ "INIT-31", "INIT", 31, "same: rdma_create_id(NULL, ...) = -1/ENOMEM (private-channel "
	  "failure reported as ENOMEM)", "rdma_create_id.3: errno is the failure reason (the real "
	  "cause is ENOENT here)", PRE_FAKEDEV, NULL, 0, init_31, NULL },
	{ "INIT-32", "INIT", 32, "device visible but not openable: rdma_get_devices(&n) = non-NULL "
	  "array, list[0] == NULL, n = 0", NULL, PRE_FAKEDEV, NULL, 0, init_32, NULL },
	{ "INIT-33", "INIT", 33, "after init: rdma_get_cm_event(&{fd=-1}, NULL) = -1/EINVAL, "
	  "(&{fd=-1}, &ev) = -1/EBADF", NULL, PRE_DEVICE, NULL, 0, init_33, NULL },
	{ "INIT-34", "INIT", 34, "kernel CM ABI version outside [3,4]: every init-dependent call "
	  "-1/EPERM (rdma_getaddrinfo, rdma_create_event_channel, rdma_create_id, rdma_get_devices, "
	  "rdma_get_cm_event)", NULL, PRE_EMU_ONLY,
	  NULL, 0, init_34, NULL },
};

const struct conf_area conf_area_init = { "INIT", cases, sizeof cases / sizeof cases[0] };
