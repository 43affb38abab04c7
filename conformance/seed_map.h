/* Seed coverage map (seed_map.c): each seed statement and the cases that check it. */
#ifndef CONFORMANCE_SEED_MAP_H
#define CONFORMANCE_SEED_MAP_H

struct conf_seed {
	const char *seed;      /* "gai", "rai", "cmid" (see seed_map.c) */
	const char *statement; /* quoted (shortened with "...") */
	const char *cases;     /* space-separated case ids, or NULL */
	const char *unchecked; /* why no case can check it (cases NULL) */
};

/* Terminated by an entry with seed NULL. */
extern const struct conf_seed conf_seeds[];

#endif
