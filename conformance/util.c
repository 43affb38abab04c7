/* Names of errno and EAI values, and sockaddr text in both directions. */
#include "config.h"

#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <infiniband/ib.h>
#include <inttypes.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conformance/conformance.h"
#include "rdmaemu/compat.h"
#include "util/selfexe.h"

#define N(x) { x, #x }
static const struct {
	int val;
	const char *name;
} errno_names[] = {
	{ 0, "0" }, N(EPERM), N(ENOENT), N(ESRCH), N(EINTR), N(EIO), N(ENXIO), N(E2BIG),
	N(EBADF), N(EAGAIN), N(ENOMEM), N(EACCES), N(EFAULT), N(EBUSY), N(EEXIST), N(ENODEV),
	N(EINVAL), N(ENFILE), N(EMFILE), N(ENOSPC), N(EPIPE), N(ERANGE), N(ENOSYS), N(ENODATA),
	N(ETIME), N(EBADE), N(EPROTO), N(EOVERFLOW), N(ENOTSOCK), N(EPROTONOSUPPORT),
	N(EOPNOTSUPP), N(EAFNOSUPPORT), N(EADDRINUSE), N(EADDRNOTAVAIL), N(ENETDOWN),
	N(ENETUNREACH), N(ENETRESET), N(ECONNABORTED), N(ECONNRESET), N(ENOBUFS), N(EISCONN),
	N(ENOTCONN), N(ETIMEDOUT), N(EDEADLK), N(ECONNREFUSED), N(EHOSTUNREACH), N(EALREADY),
	N(EINPROGRESS),
};

static const struct {
	int val;
	const char *name;
} eai_names[] = {
	{ 0, "0" }, N(EAI_BADFLAGS), N(EAI_NONAME), N(EAI_AGAIN), N(EAI_FAIL), N(EAI_NODATA),
	N(EAI_FAMILY), N(EAI_SOCKTYPE), N(EAI_SERVICE), N(EAI_ADDRFAMILY), N(EAI_MEMORY),
	N(EAI_SYSTEM), N(EAI_OVERFLOW),
};
#undef N

const char *conf_errno_name(int e)
{
	static __thread char buf[32];

	for (size_t i = 0; i < sizeof errno_names / sizeof errno_names[0]; i++)
		if (errno_names[i].val == e)
			return errno_names[i].name;
	snprintf(buf, sizeof buf, "errno %d", e);
	return buf;
}

const char *conf_eai_name(int ret)
{
	static __thread char buf[32];

	for (size_t i = 0; i < sizeof eai_names / sizeof eai_names[0]; i++)
		if (eai_names[i].val == ret)
			return eai_names[i].name;
	snprintf(buf, sizeof buf, "ret %d", ret);
	return buf;
}

char *conf_fmt_sockaddr(char *buf, size_t size, const struct sockaddr *sa, socklen_t len)
{
	char a[INET6_ADDRSTRLEN];

	if (!sa || !len) {
		snprintf(buf, size, "-");
		return buf;
	}
	switch (sa->sa_family) {
	case AF_INET: {
		const struct sockaddr_in *in = (const void *)sa;
		inet_ntop(AF_INET, &in->sin_addr, a, sizeof a);
		snprintf(buf, size, "%s:%u/%u", a, ntohs(in->sin_port), (unsigned)len);
		break;
	}
	case AF_INET6: {
		const struct sockaddr_in6 *in6 = (const void *)sa;
		inet_ntop(AF_INET6, &in6->sin6_addr, a, sizeof a);
		snprintf(buf, size, "[%s]:%u/%u", a, ntohs(in6->sin6_port), (unsigned)len);
		break;
	}
	case AF_IB: {
		const struct sockaddr_ib *ib = (const void *)sa;
		inet_ntop(AF_INET6, &ib->sib_addr, a, sizeof a);
		snprintf(buf, size, "ib[%s] pkey 0x%04x sid 0x%016" PRIx64 " mask 0x%016" PRIx64 "/%u",
			 a, be16toh(ib->sib_pkey), (uint64_t)be64toh(ib->sib_sid),
			 (uint64_t)be64toh(ib->sib_sid_mask), (unsigned)len);
		break;
	}
	default:
		snprintf(buf, size, "family %u/%u", sa->sa_family, (unsigned)len);
	}
	return buf;
}

static int parse_port(const char *s)
{
	char *end;
	long v = strtol(s, &end, 10);

	return (*s && !*end && v >= 0 && v <= 65535) ? (int)v : -1;
}

socklen_t conf_parse_sockaddr(const char *spec, struct sockaddr_storage *ss)
{
	char tmp[128];
	char *p;

	memset(ss, 0, sizeof *ss);
	if (snprintf(tmp, sizeof tmp, "%s", spec) >= (int)sizeof tmp)
		return 0;
	if (!strncmp(tmp, "ib:[", 4)) {
		struct sockaddr_ib *ib = (void *)ss;
		unsigned pkey = 0;
		unsigned long long sid = 0, mask = 0;

		if (!(p = strchr(tmp, ']')))
			return 0;
		*p++ = 0;
		if (inet_pton(AF_INET6, tmp + 4, &ib->sib_addr) != 1 ||
		    sscanf(p, " pkey=%x sid=%llx mask=%llx", &pkey, &sid, &mask) != 3)
			return 0;
		ib->sib_family = AF_IB;
		ib->sib_pkey = htobe16((uint16_t)pkey);
		ib->sib_sid = htobe64(sid);
		ib->sib_sid_mask = htobe64(mask);
		return sizeof *ib;
	}
	if (tmp[0] == '[') {
		struct sockaddr_in6 *in6 = (void *)ss;
		int port;

		if (!(p = strstr(tmp, "]:")))
			return 0;
		*p = 0;
		if (inet_pton(AF_INET6, tmp + 1, &in6->sin6_addr) != 1 || (port = parse_port(p + 2)) < 0)
			return 0;
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)port);
		return sizeof *in6;
	}
	{
		struct sockaddr_in *in = (void *)ss;
		int port;

		if (!(p = strrchr(tmp, ':')))
			return 0;
		*p = 0;
		if (inet_pton(AF_INET, tmp, &in->sin_addr) != 1 || (port = parse_port(p + 1)) < 0)
			return 0;
		in->sin_family = AF_INET;
		in->sin_port = htons((uint16_t)port);
		return sizeof *in;
	}
}

bool conf_path_exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

/* util/selfexe.h: the executable's own path decides. */
bool conf_in_build_tree(void)
{
	return emu_self_exe_below(RDMAEMU_BUILDDIR);
}
