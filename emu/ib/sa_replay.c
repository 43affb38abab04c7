/* Replay of PathRecords recorded on a real fabric: `saquery PR` output, i.e. blocks of
 *
 *   PathRecord dump:
 *           service_id..............0x0000000000000000
 *           dgid....................fe80::2:c903:0:b01
 *           ...
 *           mtu.....................0x84
 *
 * Numbers are read with base 0: saquery prints LIDs in decimal (rdma-core) or 0x hex (older
 * infiniband-diags); the mtu/rate/pkt_life lines are the raw bytes with the selector in their
 * top two bits, hop_flow_raw the raw 32-bit word (RawTraffic, FlowLabel, HopLimit). */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu/ib/sa_priv.h"
#include "util/failcall.h"

static int set_err(struct emu_error *err, const char *name, unsigned line, const char *msg,
		   const char *arg)
{
	if (err) {
		snprintf(err->file, sizeof(err->file), "%s", name);
		err->line = line;
		snprintf(err->msg, sizeof(err->msg), "%s '%s'", msg, arg);
	}
	errno = EINVAL;
	return -1;
}

static int flush(struct emu_sa *sa, struct emu_sa_path_rec *r, bool *open)
{
	uint8_t (*n)[64];

	if (!*open)
		return 0;
	n = emu_realloc(sa->replay, (sa->nreplay + 1) * sizeof(*n));
	if (!n) {
		errno = ENOMEM;
		return -1;
	}
	sa->replay = n;
	emu_mad_record_pack(&emu_sa_path_rec_desc, r, n[sa->nreplay++]);
	*open = false;
	return 0;
}

int emu_sa_replay_saquery(struct emu_sa *sa, const char *text, const char *name,
			  struct emu_error *err)
{
	struct emu_sa_path_rec r;
	bool open = false;
	unsigned lineno = 0;
	size_t before = sa->nreplay;
	const char *p = text;

	while (*p) {
		const char *eol = strchr(p, '\n');
		size_t n = eol ? (size_t)(eol - p) : strlen(p);
		char line[512], *key, *dots, *val, *end;
		unsigned long long v;

		lineno++;
		if (n >= sizeof(line))
			return set_err(err, name, lineno, "line too long", "");
		memcpy(line, p, n);
		line[n] = 0;
		p += n + (eol ? 1 : 0);
		key = line + strspn(line, " \t");
		if (!*key || *key == '#')
			continue;
		if (!strncmp(key, "PathRecord dump:", 16)) {
			if (flush(sa, &r, &open))
				return -1;
			memset(&r, 0, sizeof(r));
			open = true;
			continue;
		}
		dots = strstr(key, "..");
		if (!dots || !open)
			return set_err(err, name, lineno, "expected 'PathRecord dump:' or a field",
				       key);
		*dots = 0;
		val = dots + strspn(dots + 1, ".") + 1;
		val[strcspn(val, " \t\r")] = 0;
		if (!strcmp(key, "dgid") || !strcmp(key, "sgid")) {
			if (inet_pton(AF_INET6, val, key[0] == 'd' ? r.dgid : r.sgid) != 1)
				return set_err(err, name, lineno, "expected a GID, got", val);
			continue;
		}
		errno = 0;
		v = strtoull(val, &end, 0);
		if (errno || end == val || *end)
			return set_err(err, name, lineno, "expected a number, got", val);
		if (!strcmp(key, "service_id") || !strcmp(key, "resv0"))
			r.service_id = v;
		else if (!strcmp(key, "dlid"))
			r.dlid = (uint16_t)v;
		else if (!strcmp(key, "slid"))
			r.slid = (uint16_t)v;
		else if (!strcmp(key, "hop_flow_raw")) {
			r.raw_traffic = (uint8_t)(v >> 31);
			r.flow_label = (uint32_t)(v >> 8) & 0xfffff;
			r.hop_limit = (uint8_t)v;
		} else if (!strcmp(key, "tclass"))
			r.traffic_class = (uint8_t)v;
		else if (!strcmp(key, "num_path_revers")) {
			r.reversible = (uint8_t)(v >> 7);
			r.numb_path = v & 0x7f;
		} else if (!strcmp(key, "pkey"))
			r.pkey = (uint16_t)v;
		else if (!strcmp(key, "qos_class"))
			r.qos_class = v & 0xfff;
		else if (!strcmp(key, "sl"))
			r.sl = v & 0xf;
		else if (!strcmp(key, "mtu")) {
			r.mtu_selector = (uint8_t)(v >> 6) & 3;
			r.mtu = v & 0x3f;
		} else if (!strcmp(key, "rate")) {
			r.rate_selector = (uint8_t)(v >> 6) & 3;
			r.rate = v & 0x3f;
		} else if (!strcmp(key, "pkt_life")) {
			r.packet_life_time_selector = (uint8_t)(v >> 6) & 3;
			r.packet_life_time = v & 0x3f;
		} else if (!strcmp(key, "preference"))
			r.preference = (uint8_t)v;
		/* resv2, resv3 and fields of newer saquery versions are ignored */
	}
	if (flush(sa, &r, &open))
		return -1;
	return (int)(sa->nreplay - before);
}

int emu_sa_replay_saquery_file(struct emu_sa *sa, const char *path, struct emu_error *err)
{
	FILE *fp = fopen(path, "r");
	char *buf;
	long sz;
	int ret;

	if (!fp) {
		int e = errno;

		if (err) {
			snprintf(err->file, sizeof(err->file), "%s", path);
			err->line = 0;
			snprintf(err->msg, sizeof(err->msg), "%s", strerror(e));
		}
		errno = e;
		return -1;
	}
	if (fseek(fp, 0, SEEK_END) || (sz = ftell(fp)) < 0 || fseek(fp, 0, SEEK_SET)) {
		fclose(fp);
		errno = EIO;
		return -1;
	}
	buf = emu_malloc((size_t)sz + 1);
	if (!buf || fread(buf, 1, (size_t)sz, fp) != (size_t)sz) {
		free(buf);
		fclose(fp);
		errno = buf ? EIO : ENOMEM;
		return -1;
	}
	buf[sz] = 0;
	fclose(fp);
	ret = emu_sa_replay_saquery(sa, buf, path, err);
	free(buf);
	return ret;
}
