/* Per-target deviation manifests (fixtures/conformance/<target>.exclude).
 *
 * One entry a line: `ROW-ID  reason...`; lines starting with '#' are comments (a reason may
 * contain '#', e.g. an issue number); blank lines are ignored. The ID may be a glob (`GAI-39*`). An excluded case is not run and is reported with the reason, like
 * rdma-unit-test's per-NIC deviation tables. */
#include "config.h"

#include <ctype.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "conformance/runner.h"

struct entry {
	char *id;
	char *reason;
	bool used;
};

struct conf_manifest {
	struct entry *e;
	size_t n;
};

struct conf_manifest *conf_manifest_load(const char *path, FILE *err)
{
	struct conf_manifest *m = calloc(1, sizeof *m);
	FILE *f;
	char *line = NULL;
	size_t cap = 0;
	unsigned lineno = 0;

	if (!m)
		return NULL;
	if (!path)
		return m;
	if (!(f = fopen(path, "r"))) {
		free(m);
		return NULL;
	}
	while (getline(&line, &cap, f) > 0) {
		char *p = line, *id, *reason;

		lineno++;
		while (isspace((unsigned char)*p))
			p++;
		if (!*p || *p == '#')
			continue;
		id = p;
		while (*p && !isspace((unsigned char)*p))
			p++;
		if (*p)
			*p++ = 0;
		while (isspace((unsigned char)*p))
			p++;
		reason = p;
		for (p = reason + strlen(reason); p > reason && isspace((unsigned char)p[-1]); p--)
			p[-1] = 0;
		if (!*reason) {
			fprintf(err, "%s:%u: %s has no reason; every exclusion needs one\n", path,
				lineno, id);
			reason = "(no reason given)";
		}
		struct entry *ne = realloc(m->e, (m->n + 1) * sizeof *ne);
		if (!ne)
			break;
		m->e = ne;
		m->e[m->n].id = strdup(id);
		m->e[m->n].reason = strdup(reason);
		m->e[m->n].used = false;
		if (m->e[m->n].id && m->e[m->n].reason)
			m->n++;
	}
	free(line);
	fclose(f);
	return m;
}

const char *conf_manifest_reason(struct conf_manifest *m, const char *id)
{
	if (!m)
		return NULL;
	for (size_t i = 0; i < m->n; i++)
		if (!fnmatch(m->e[i].id, id, 0)) {
			m->e[i].used = true;
			return m->e[i].reason;
		}
	return NULL;
}

void conf_manifest_warn_unused(const struct conf_manifest *m, FILE *err)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n; i++)
		if (!m->e[i].used)
			fprintf(err, "note: manifest entry %s matches no selected case\n", m->e[i].id);
}

void conf_manifest_free(struct conf_manifest *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n; i++) {
		free(m->e[i].id);
		free(m->e[i].reason);
	}
	free(m->e);
	free(m);
}
