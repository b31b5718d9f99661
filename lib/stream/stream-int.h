/* stream-int.h — internals shared by the files of lib/stream (not a public header). */
#ifndef PROFF_STREAM_INT_H
#define PROFF_STREAM_INT_H

#include "proff/perfdata.h"
#include "proff/stream.h"
#include "proff/symbol.h"
#include "proff/util.h"
#include "../model/machine.h"

#define ST_NONE UINT32_MAX

typedef pf_range st_map;

/* the stream loader's view of a dso of the machine's registry (same index) */
typedef struct st_dso {
	const char *name, *sname;  /* long and short name (machine.c) */
	enum sym_dso_kind kind;
	sym_dso *sd;
	pf_map64 cache;            /* map address -> index in st_side.addrs */
	pf_map64 gcache;           /* sample map address -> index in st_side.group_period */
} st_dso;

typedef struct st_addr {
	const char *sym;
	uint64_t sym_start, sym_end;
	const char *srcline;       /* callchain srcline ("file:line", "??:0") */
	const char *key_srcline;   /* srcline sort-key text (perf's hist_entry__srcline) */
	const char *path;
	unsigned line;
	bool have_src, have_sym;
	uint32_t blk;              /* cycles.c: 1 + index of its symbol's blocks, 0 if not known */
	uint32_t entry;            /* 1 + index of its hist entry as a sample ip, 0 if not known */
} st_addr;

/* one element of the sample's path (perf's callchain_cursor_node) */
typedef struct st_cnode {
	uint64_t ip, maddr;
	uint32_t dso;
	const char *sym;
	uint64_t sym_start;
	const char *srcline, *path;
	unsigned line;
	bool branch;
	uint64_t cycles;
	uint64_t branch_from;
} st_cnode;

typedef struct st_node {
	struct st_node *parent;
	st_call *val;
	size_t nval;
	struct st_node **kids;     /* in perf's rb-tree in-order */
	size_t nr_kids, cap_kids;
	uint64_t hit, children_hit;
} st_node;

typedef struct st_entry {
	const char *srcline, *sym;
	uint32_t dso;
	size_t seq;
	uint64_t period;
	bool deferred;             /* kernel sample: srcline/sym resolved in make_streams */
	uint64_t kaddr;
	st_node root;
} st_entry;

typedef struct st_blocks st_blocks;

/* (pid, ip, lookup kind) -> map and resolved address; an entry is valid
 * while its generation is the side's (which changes with every map change) */
#define ST_MAPCACHE 32768
typedef struct st_mapcache {
	uint64_t ip;
	uint32_t pid, addr;        /* addr: index in st_side.addrs, ST_NONE without a map */
	uint32_t gen;
	uint8_t kind;
	const st_map *m;
} st_mapcache;

struct st_side {
	st_opts opts;
	const char *path;
	proff_error *err;
	pd_reader *rd;
	sym_ctx *syms;
	pf_arena arena;
	pf_strtab strs;
	const char *unknown_srcline;
	bool use_branches, full_path, any_branches, any_cycles;

	/* dsos, threads, map groups, side-band records (lib/model/machine.c);
	 * pdsos is the machine's registry, dsos this loader's view of each */
	pf_machine m;
	pf_dso *pdsos; size_t nr_pdsos, cap_pdsos;
	st_dso *dsos; size_t nr_dsos, cap_dsos;
	st_addr *addrs; size_t nr_addrs, cap_addrs;

	st_cnode *cur; size_t cur_nr, cur_cap;
	st_mapcache *mapcache;     /* ST_MAPCACHE entries */
	uint32_t map_gen;
	st_entry **entries; size_t nr_entries, cap_entries;
	pf_map64 key2entry;
	uint64_t total_period, stream_hits;
	/* --stream reads the file twice: first the period of each (symbol,
	 * dso) of sample ips, then only the samples whose group can hold a
	 * stream (a hist entry's period is at most its group's) */
	bool counting, pruning;
	uint64_t prune_below;
	uint64_t *group_period; size_t nr_groups, cap_groups;
	pf_map64 key2group;

	st_stream *streams; size_t nr_streams;
	st_blocks *blocks;
	struct uw_ctx *uw;         /* dwarf callchains' unwinder (lib/unwind), NULL: none */
	pd_sample unwound;         /* a sample with its unwound chain */
};

/* stream.c, for cycles.c: perf's cpumode-free lookup of ip (kernel maps
 * first, then the process) with the symbol resolved; sets the map (NULL:
 * none, and returns NULL). Cached like the paths' addresses. NULL with *m set
 * is out of memory. */
const st_addr *st_lookup_sym(st_side *s, uint32_t pid, uint64_t ip, const st_map **m);
uint64_t st_map_addr(const st_side *s, const st_map *m, uint64_t ip);

/* cycles.c */
int st_account_cycles(st_side *s, const pd_sample *sm);
int st_blocks_finish(st_side *s);
void st_blocks_free(st_side *s);

#endif
