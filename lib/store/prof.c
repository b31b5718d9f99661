/* prof.c — a profile in the store's form (store_prof): its frames, stacks
 * and samples made from a loaded pf_profile, its labels, its id (a hash
 * of the file's bytes), and the text helpers every store writes with
 * (TabSeparated escapes, SQL string literals, a growable buffer).
 *
 * A frame is what a row key can see of a location: dso names, symbol
 * name, source line, the unresolved address and the level. Locations
 * that look the same are one frame, stacks of the same frames one stack
 * and samples of the same (event, comm, stack) one sample, so a profile
 * is stored as small as its distinct call paths.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store-int.h"


/* ---- labels ------------------------------------------------------------------ */

int store_label_check(const char *key, const char *value, size_t value_len, proff_error *err)
{
	size_t kl = strlen(key);
	if (!kl || kl > STORE_KEY_MAX)
		return proff_err_set(err, PROFF_EUSAGE, NULL, PROFF_NO_OFFSET,
				     "label key '%.64s' must have 1 to %d bytes", key, STORE_KEY_MAX);
	for (size_t i = 0; i < kl; i++) {
		char c = key[i];
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
			  (i && ((c >= '0' && c <= '9') || c == '.' || c == '-'));
		if (!ok)
			return proff_err_set(err, PROFF_EUSAGE, NULL, PROFF_NO_OFFSET,
					     "label key '%.64s': character %zu is not a letter, digit, '_', '.' or '-'",
					     key, i + 1);
	}
	if (!strcmp(key, "time") || !strcmp(key, "id"))
		return proff_err_set(err, PROFF_EUSAGE, NULL, PROFF_NO_OFFSET,
				     "label key '%s' is reserved (the profile's %s)", key, key);
	if (value_len > STORE_VALUE_MAX)
		return proff_err_set(err, PROFF_EUSAGE, NULL, PROFF_NO_OFFSET,
				     "label %s: a value of %zu bytes is longer than the limit of %d", key, value_len,
				     STORE_VALUE_MAX);
	for (size_t i = 0; i < value_len; i++) {
		unsigned char c = (unsigned char)value[i];
		if (c < 0x20 || c == 0x7f)
			return proff_err_set(err, PROFF_EUSAGE, NULL, PROFF_NO_OFFSET,
					     "label %s: byte %zu of the value is a control character (0x%02x): refused",
					     key, i + 1, c);
	}
	return 0;
}

int store_prof_label(store_prof *sp, const char *key, const char *value, size_t value_len, proff_error *err)
{
	if (store_label_check(key, value, value_len, err))
		return err ? err->code : PROFF_EUSAGE;
	int64_t k = pf_strtab_intern(&sp->strs, key, strlen(key));
	int64_t v = pf_strtab_intern(&sp->strs, value, value_len);
	if (k < 0 || v < 0)
		goto nomem;
	for (size_t i = 0; i < sp->nr_labels; i++)
		if (sp->labels[i].key == (uint32_t)k) {
			sp->labels[i].value = (uint32_t)v;
			return 0;
		}
	if (sp->nr_labels >= STORE_MAX_LABELS)
		return proff_err_set(err, PROFF_EUSAGE, NULL, PROFF_NO_OFFSET, "more than %d labels", STORE_MAX_LABELS);
	store_label *l = pf_realloc_array(sp->labels, sp->nr_labels + 1, sizeof(*l));
	if (!l)
		goto nomem;
	sp->labels = l;
	/* kept sorted by key: the stored form does not depend on the order given */
	size_t at = sp->nr_labels;
	while (at > 0 && strcmp(pf_strtab_get(&sp->strs, l[at - 1].key), key) > 0) {
		l[at] = l[at - 1];
		at--;
	}
	l[at] = (store_label){ (uint32_t)k, (uint32_t)v };
	sp->nr_labels++;
	return 0;
nomem:
	return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
}

const char *store_prof_label_value(const store_prof *sp, const char *key)
{
	for (size_t i = 0; i < sp->nr_labels; i++)
		if (!strcmp(pf_strtab_get(&sp->strs, sp->labels[i].key), key))
			return pf_strtab_get(&sp->strs, sp->labels[i].value);
	return NULL;
}

/* ---- ids and hashes ------------------------------------------------------------- */

int store_file_id(const char *path, char id[STORE_ID_LEN + 1], proff_error *err)
{
	int fd = pf_open_regular(path);
	if (fd < 0)
		return proff_err_sys(err, PROFF_EIO, path, "cannot open");
	struct stat st;
	if (fstat(fd, &st) < 0) {
		close(fd);
		return proff_err_sys(err, PROFF_EIO, path, "cannot stat");
	}
	uint64_t h1 = 0x243f6a8885a308d3ULL, h2 = 0x13198a2e03707344ULL;
	if (st.st_size > 0) {
		void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (m == MAP_FAILED) {
			close(fd);
			return proff_err_sys(err, PROFF_EIO, path, "cannot map");
		}
		h1 = pf_hash_bytes(m, (size_t)st.st_size, h1);
		h2 = pf_hash_bytes(m, (size_t)st.st_size, h2 ^ (uint64_t)st.st_size);
		munmap(m, (size_t)st.st_size);
	}
	close(fd);
	snprintf(id, STORE_ID_LEN + 1, "%016llx%016llx", (unsigned long long)h1, (unsigned long long)h2);
	return 0;
}

static uint64_t str_hash(const pf_strtab *t, uint32_t id, uint64_t seed)
{
	return pf_hash_bytes(pf_strtab_get(t, id), t->lens[id], seed);
}

static uint64_t frame_hash(const store_prof *sp, const store_frame *f)
{
	uint64_t h = str_hash(&sp->strs, f->dso, 1);
	h = str_hash(&sp->strs, f->dso_long, h);
	h = str_hash(&sp->strs, f->sym, h);
	h = str_hash(&sp->strs, f->srcline, h);
	h = pf_hash64(h ^ pf_hash64(f->addr) ^ ((uint64_t)(unsigned char)f->level << 56));
	return f->ip == f->addr ? h : pf_hash64(h ^ f->ip);
}

uint64_t store_stack_hash(const store_prof *sp, const uint32_t *frames, size_t n)
{
	uint64_t h = 0x9e3779b97f4a7c15ULL ^ n;
	for (size_t i = 0; i < n; i++) {
		uint64_t fh = sp->priv && frames[i] < sp->priv->cap_frame_hash ? sp->priv->frame_hash[frames[i]]
									  : frame_hash(sp, &sp->frames[frames[i]]);
		h = pf_hash64(h * 31 + fh);
	}
	return h ? h : 1;
}

/* ---- from a profile ---------------------------------------------------------------- */

void store_prof_free(store_prof *sp)
{
	if (!sp)
		return;
	pf_strtab_free(&sp->strs);
	free(sp->labels);
	free(sp->events);
	free(sp->frames);
	free(sp->stack_frames);
	free(sp->stacks);
	free(sp->samples);
	if (sp->priv) {
		free(sp->priv->frame_hash);
		free(sp->priv->keyrows);
		free(sp->priv->keyrow_set);
	}
	free(sp->priv);
	free(sp);
}

static uint32_t intern(store_prof *sp, const pf_profile *p, uint32_t *smap, uint32_t sid)
{
	if (smap[sid] == PF_NONE) {
		int64_t id = pf_strtab_intern(&sp->strs, pf_str(p, sid), p->strs.lens[sid]);
		if (id < 0)
			return PF_NONE;
		smap[sid] = (uint32_t)id;
	}
	return smap[sid];
}

int store_prof_from_profile(pf_profile *p, const char *id, bool srclines, store_prof **out, proff_error *err)
{
	*out = NULL;
	/* source lines first: they add strings the map below must cover */
	if (srclines && pf_locs_srclines(p, NULL) < 0)
		return proff_err_set(err, PROFF_ENOMEM, p->path, PROFF_NO_OFFSET, "out of memory");
	store_prof *sp = pf_calloc(1, sizeof(*sp));
	uint32_t *smap = pf_calloc(p->strs.n ? p->strs.n : 1, sizeof(uint32_t));
	uint32_t *loc_frame = pf_calloc(p->nr_locs ? p->nr_locs : 1, sizeof(uint32_t));
	uint32_t *node_stack = pf_calloc(p->nr_nodes ? p->nr_nodes : 1, sizeof(uint32_t));
	uint32_t *chain = NULL;
	size_t cap_chain = 0;
	pf_map64 fmap, stmap, smpmap;
	pf_map64_init(&fmap);
	pf_map64_init(&stmap);
	pf_map64_init(&smpmap);
	if (!sp || !smap || !loc_frame || !node_stack || pf_strtab_init(&sp->strs))
		goto nomem;
	sp->priv = pf_calloc(1, sizeof(*sp->priv));
	if (!sp->priv)
		goto nomem;
	snprintf(sp->id, sizeof(sp->id), "%s", id);
	memset(smap, 0xff, (p->strs.n ? p->strs.n : 1) * sizeof(uint32_t));
	memset(loc_frame, 0xff, (p->nr_locs ? p->nr_locs : 1) * sizeof(uint32_t));
	memset(node_stack, 0xff, (p->nr_nodes ? p->nr_nodes : 1) * sizeof(uint32_t));

	sp->events = pf_calloc(p->nr_events ? p->nr_events : 1, sizeof(*sp->events));
	if (!sp->events)
		goto nomem;
	sp->nr_events = p->nr_events;
	for (size_t e = 0; e < p->nr_events; e++) {
		const pf_event *ev = &p->events[e];
		const char *nm = ev->name ? ev->name : "?";
		int64_t nid = pf_strtab_intern(&sp->strs, nm, strlen(nm));
		if (nid < 0)
			goto nomem;
		sp->events[e] = (store_event){ (uint32_t)nid, ev->type, ev->config, ev->total_period, ev->nr_samples,
					       ev->has_callchain };
	}

	for (size_t si = 0; si < p->nr_samples; si++) {
		const pf_sample *s = &p->samples[si];
		uint32_t stack = node_stack[s->stack];
		if (stack == PF_NONE) {
			/* the frames of this node's path, leaf first */
			size_t n = 0;
			for (uint32_t nd = s->stack; nd; nd = p->nodes[nd].parent) {
				if (PF_GROW(chain, cap_chain, n + 1))
					goto nomem;
				uint32_t loc = p->nodes[nd].loc, fr = loc_frame[loc];
				const pf_loc *l = &p->locs[loc];
				/* the level perf shows: a sample's own from its cpumode, a
				 * callchain frame without a map the sample's */
				char level = l->level;
				if (nd == s->stack || (l->dso == PF_NONE && l->sym == PF_NONE))
					level = pf_sample_level(p, si);
				if (fr == PF_NONE || sp->frames[fr].level != level) {
					store_frame f = { 0 };
					f.level = level;
					if (l->dso != PF_NONE) {
						f.dso = intern(sp, p, smap, p->dsos[l->dso].short_name);
						f.dso_long = intern(sp, p, smap, p->dsos[l->dso].long_name);
					}
					if (l->sym != PF_NONE)
						f.sym = intern(sp, p, smap, p->syms[l->sym].name);
					else {
						f.addr = l->addr;
						f.ip = l->ip;
					}
					if (srclines && l->srcline != PF_NONE)
						f.srcline = intern(sp, p, smap, l->srcline);
					if (f.dso == PF_NONE || f.dso_long == PF_NONE || f.sym == PF_NONE || f.srcline == PF_NONE)
						goto nomem;
					uint64_t fh = frame_hash(sp, &f);
					bool found;
					uint64_t *slot = pf_map64_upsert(&fmap, fh, &found);
					if (!slot)
						goto nomem;
					if (!found) {
						if (PF_GROW(sp->frames, sp->cap_frames, sp->nr_frames + 1) ||
						    PF_GROW(sp->priv->frame_hash, sp->priv->cap_frame_hash, sp->nr_frames + 1))
							goto nomem;
						sp->frames[sp->nr_frames] = f;
						sp->priv->frame_hash[sp->nr_frames] = fh;
						*slot = sp->nr_frames++;
					}
					fr = (uint32_t)*slot;
					if (loc_frame[loc] == PF_NONE)
						loc_frame[loc] = fr;
				}
				chain[n++] = fr;
				if (pf_node_nochain(p, nd))
					break;
			}
			uint64_t h = store_stack_hash(sp, chain, n);
			bool found;
			uint64_t *slot = pf_map64_upsert(&stmap, h, &found);
			if (!slot)
				goto nomem;
			if (!found) {
				if (PF_GROW(sp->stacks, sp->cap_stacks, sp->nr_stacks + 1) ||
				    PF_GROW(sp->stack_frames, sp->cap_stack_frames, sp->nr_stack_frames + n))
					goto nomem;
				sp->stacks[sp->nr_stacks] = (store_stack){ h, (uint32_t)sp->nr_stack_frames, (uint32_t)n };
				memcpy(sp->stack_frames + sp->nr_stack_frames, chain, n * sizeof(*chain));
				sp->nr_stack_frames += n;
				*slot = sp->nr_stacks++;
			}
			stack = node_stack[s->stack] = (uint32_t)*slot;
		}
		uint32_t comm = intern(sp, p, smap, s->comm);
		if (comm == PF_NONE)
			goto nomem;
		uint64_t key = pf_hash64(((uint64_t)s->evsel << 32 | comm) ^ pf_hash64(stack + 1));
		bool found;
		uint64_t *slot = pf_map64_upsert(&smpmap, key, &found);
		if (!slot)
			goto nomem;
		/* a hash match is checked: another key of the same hash goes
		 * into a sample of its own, found by scanning (never met) */
		if (found) {
			store_sample *t = &sp->samples[*slot];
			if (t->event != s->evsel || t->comm != comm || t->stack != stack) {
				found = false;
				for (size_t j = 0; j < sp->nr_samples && !found; j++) {
					t = &sp->samples[j];
					if (t->event == s->evsel && t->comm == comm && t->stack == stack) {
						t->period += s->period;
						t->count += s->count;
						found = true;
					}
				}
				if (found)
					continue;
				slot = NULL;
			} else {
				t->period += s->period;
				t->count += s->count;
				continue;
			}
		}
		if (PF_GROW(sp->samples, sp->cap_samples, sp->nr_samples + 1))
			goto nomem;
		sp->samples[sp->nr_samples] = (store_sample){ s->evsel, comm, stack, s->period, s->count };
		if (slot)
			*slot = sp->nr_samples;
		sp->nr_samples++;
	}
	free(smap);
	free(loc_frame);
	free(node_stack);
	free(chain);
	pf_map64_free(&fmap);
	pf_map64_free(&stmap);
	pf_map64_free(&smpmap);
	*out = sp;
	return 0;
nomem:
	free(smap);
	free(loc_frame);
	free(node_stack);
	free(chain);
	pf_map64_free(&fmap);
	pf_map64_free(&stmap);
	pf_map64_free(&smpmap);
	store_prof_free(sp);
	return proff_err_set(err, PROFF_ENOMEM, p->path, PROFF_NO_OFFSET, "out of memory");
}

/* ---- text helpers --------------------------------------------------------------------- */

static const char *tsv_escape(unsigned char c)
{
	switch (c) {
	case '\\': return "\\\\";
	case '\t': return "\\t";
	case '\n': return "\\n";
	case '\r': return "\\r";
	case '\0': return "\\0";
	case '\b': return "\\b";
	case '\f': return "\\f";
	default: return NULL;
	}
}

void store_tsv_put(FILE *out, const char *s, size_t len)
{
	size_t run = 0;
	for (size_t i = 0; i < len; i++) {
		const char *e = tsv_escape((unsigned char)s[i]);
		if (!e)
			continue;
		fwrite(s + run, 1, i - run, out);
		fputs(e, out);
		run = i + 1;
	}
	fwrite(s + run, 1, len - run, out);
}

int store_tsv_get(const char **pp, const char *end, char **out, size_t *len)
{
	const char *p = *pp;
	const char *stop = p;
	while (stop < end && *stop != '\t' && *stop != '\n')
		stop++;
	char *o = malloc((size_t)(stop - p) + 1);
	if (!o)
		return -2;
	size_t n = 0;
	while (p < stop) {
		if (*p != '\\') {
			o[n++] = *p++;
			continue;
		}
		if (p + 1 >= stop) {
			free(o);
			return -1;
		}
		char c = p[1];
		switch (c) {
		case '\\': o[n++] = '\\'; break;
		case 't': o[n++] = '\t'; break;
		case 'n': o[n++] = '\n'; break;
		case 'r': o[n++] = '\r'; break;
		case '0': o[n++] = '\0'; break;
		case 'b': o[n++] = '\b'; break;
		case 'f': o[n++] = '\f'; break;
		case '\'': o[n++] = '\''; break;
		default:
			free(o);
			return -1;
		}
		p += 2;
	}
	o[n] = '\0';
	*out = o;
	*len = n;
	*pp = stop;
	return 0;
}

void sbuf_put(sbuf *b, const void *s, size_t n)
{
	if (b->oom)
		return;
	if (b->n + n + 1 > b->cap) {
		size_t nc = b->cap ? b->cap : 4096;
		while (nc < b->n + n + 1)
			nc *= 2;
		char *np = realloc(b->p, nc);
		if (!np) {
			b->oom = true;
			return;
		}
		b->p = np;
		b->cap = nc;
	}
	memcpy(b->p + b->n, s, n);
	b->n += n;
	b->p[b->n] = '\0';
}

void sbuf_puts(sbuf *b, const char *s)
{
	sbuf_put(b, s, strlen(s));
}

void sbuf_printf(sbuf *b, const char *fmt, ...)
{
	char tmp[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n < 0) {
		b->oom = true;
		return;
	}
	if ((size_t)n < sizeof(tmp)) {
		sbuf_put(b, tmp, (size_t)n);
		return;
	}
	char *big = malloc((size_t)n + 1);
	if (!big) {
		b->oom = true;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(big, (size_t)n + 1, fmt, ap);
	va_end(ap);
	sbuf_put(b, big, (size_t)n);
	free(big);
}

void sbuf_tsv(sbuf *b, const char *s, size_t len)
{
	size_t run = 0;
	for (size_t i = 0; i < len; i++) {
		const char *e = tsv_escape((unsigned char)s[i]);
		if (!e)
			continue;
		sbuf_put(b, s + run, i - run);
		sbuf_puts(b, e);
		run = i + 1;
	}
	sbuf_put(b, s + run, len - run);
}

/* ClickHouse string literal: every byte as itself but the quote and the
 * backslash (escaped) and the bytes below 0x20 (as \xHH): no value can end
 * the literal early */
void sbuf_quote(sbuf *b, const char *s, size_t len)
{
	sbuf_put(b, "'", 1);
	size_t run = 0;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c != '\'' && c != '\\' && c >= 0x20 && c != 0x7f)
			continue;
		sbuf_put(b, s + run, i - run);
		if (c == '\'' || c == '\\') {
			char e[2] = { '\\', (char)c };
			sbuf_put(b, e, 2);
		} else {
			sbuf_printf(b, "\\x%02x", c);
		}
		run = i + 1;
	}
	sbuf_put(b, s + run, len - run);
	sbuf_put(b, "'", 1);
}

char *store_sql_quote(const char *s, size_t len)
{
	sbuf b = { 0 };
	sbuf_quote(&b, s, len);
	if (b.oom) {
		sbuf_free(&b);
		return NULL;
	}
	return b.p;
}

void sbuf_free(sbuf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

int store_events_add(char ***names, size_t *n, const char *name)
{
	for (size_t i = 0; i < *n; i++)
		if (!strcmp((*names)[i], name))
			return 0;
	char **nv = realloc(*names, (*n + 2) * sizeof(char *));
	if (!nv)
		return -1;
	*names = nv;
	nv[*n] = strdup(name);
	if (!nv[*n])
		return -1;
	nv[++*n] = NULL;
	return 0;
}
