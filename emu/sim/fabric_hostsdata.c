/* ibacm_hosts.data reader: the address map ibacm's "acm_hosts" provider reads.
 *
 * Lines are `ADDRESS GID [QPN]`, '#' starts a comment. ADDRESS is an IPv4 or IPv6 address or a
 * host name. The entries are only recorded here; emu_loader_finish() maps each address onto
 * the netdev whose port owns the GID (and adds the address there when missing), and each name
 * to the addresses of that netdev in the fabric's name table. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "emu/sim/fabric_priv.h"

static int hd_buffer(struct emu_loader *L, char *text, const char *file)
{
	unsigned lineno = 0;
	char *next;

	for (char *line = text; line; line = next) {
		struct emu_pending_hostsdata e;
		char *w[8];
		int nw, i;

		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		L->cur.file = file;
		L->cur.line = ++lineno;
		nw = emu_split_words(line, w, 8);
		if (nw == 0)
			continue;
		if (nw < 2 || nw > 3)
			return emu_loader_error(L, NULL, EINVAL, "expected 'ADDRESS GID [QPN]', got "
						"%d words", nw < 0 ? 8 : nw);
		memset(&e, 0, sizeof(e));
		e.src = L->cur;
		if (strlen(w[0]) >= sizeof(e.name))
			return emu_loader_error(L, NULL, EINVAL, "address or name '%.32s...' is too "
						"long", w[0]);
		strcpy(e.name, w[0]);
		if (inet_pton(AF_INET, w[0], &e.addr.v4) == 1)
			e.family = AF_INET;
		else if (inet_pton(AF_INET6, w[0], &e.addr.v6) == 1)
			e.family = AF_INET6;
		else if (strchr(w[0], '/') || strchr(w[0], '='))
			return emu_loader_error(L, NULL, EINVAL, "expected an address or host name, "
						"got '%s'", w[0]);
		else
			e.family = AF_UNSPEC;
		if (emu_parse_gid(w[1], e.gid))
			return emu_loader_error(L, NULL, EINVAL, "expected a GID like "
						"fe80::2:c903:0:1 after '%s', got '%s'", w[0], w[1]);
		if (nw == 3) {
			uint32_t qpn;

			/* ibacm reads the QPN as hex; it does not matter to the emulator */
			if (emu_parse_u32_max(w[2], 0xffffff, &qpn))
				return emu_loader_error(L, NULL, EINVAL, "expected a QPN (0..0xffffff) "
							"after the GID, got '%s'", w[2]);
		}
		i = emu_array_push(&L->hostsdata, &L->nhostsdata, sizeof(*L->hostsdata));
		if (i < 0)
			return emu_loader_error(L, NULL, ENOMEM, "out of memory");
		L->hostsdata[i] = e;
	}
	return 0;
}

int emu_hostsdata_load(struct emu_loader *L, const char *path)
{
	struct emu_src from = L->cur;
	char *canon, *text = emu_loader_read(L, path, &from, &canon);
	const char *name;
	int r;

	if (!text)
		return -1;
	name = emu_loader_intern(L, path);
	r = name ? hd_buffer(L, text, name) : emu_loader_error(L, NULL, ENOMEM, "out of memory");
	free(text);
	emu_loader_pop(L);
	return r;
}
