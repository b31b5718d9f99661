/* cmd-push.c — `proff push [--store URL] [--label k=v ...] FILE...`: store
 * profiles with labels in a local store directory or ClickHouse
 * (lib/store; docs/fleet.md).
 *
 * Each file is read like `proff report` reads it, reduced to its distinct
 * frames, stacks and samples, labelled (host from a perf.data header and
 * the file's time by default; --label overrides) and stored under its
 * content hash: a file pushed again is found and left alone. A file that
 * fails is named with what to do; the others are still pushed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli-store.h"
#include "cmds.h"
#include "parse-options.h"
#include "proff/config.h"
#include "proff/perfdata.h"
#include "proff/profile.h"

/* "2026-11-01", "2026-11-01T10:00[:00]" (UTC) or unix seconds */
static int parse_time(const char *v, int64_t *out)
{
	store_sel s;
	char buf[128];
	snprintf(buf, sizeof(buf), "time=%s", v);
	char *w[1] = { buf };
	proff_error err;
	if (store_sel_parse(&s, w, 1, &err))
		return -1;
	*out = s.terms[0].time;
	store_sel_free(&s);
	return 0;
}

typedef struct label_arg {
	const char *key;
	size_t klen;
	const char *value;
} label_arg;

typedef struct push_cli {
	const char *url, *init;
	bool no_srcline, quiet;
	label_arg *labels;       /* room for argc */
	size_t nlabels;
} push_cli;

/* --label KEY=VALUE, repeatable */
static int opt_label(po_ctx *ctx, const opt_def *d, const char *arg, bool unset)
{
	push_cli *c = ctx->obj;
	const char *eq = strchr(arg, '=');
	if (!eq || eq == arg)
		return po_error(ctx->cmd, d, "--label %s: expected KEY=VALUE", arg);
	c->labels[c->nlabels++] = (label_arg){ arg, (size_t)(eq - arg), eq + 1 };
	return 0;
}

#define F(x) offsetof(push_cli, x)
static const opt_def push_opts[] = {
	{ 0, "store", O_STR, F(url), "URL", "a directory (the default: $PROFF_STORE, store.url in the config, or ~/.proff-store) or clickhouse://HOST:PORT/DB", 0, NULL, 0 },
	{ 'l', "label", O_CALLBACK, 0, "KEY=VALUE", "a label of every file pushed (repeatable; time=YYYY-MM-DD[THH:MM[:SS]] sets the time)", PO_NONEG, opt_label, 0 },
	{ 0, "no-srcline", O_BOOL, F(no_srcline), NULL, "do not compute source lines (faster on large binaries; srcline keys then show nothing)", PO_NONEG, NULL, 0 },
	{ 0, "init", O_STR, F(init), "server|local|CLUSTER", "ClickHouse: create the tables (one server: 'server'; a shard's local tables: 'local'; CLUSTER: local and Distributed tables)", 0, NULL, 0 },
	{ 'q', "quiet", O_BOOL, F(quiet), NULL, "no line per file", 0, NULL, 0 },
};
#undef F

static const char *const usage_lines[] = {
	"push [--store URL] [--label KEY=VALUE ...] FILE...",
	"push --store clickhouse://HOST:PORT/DB --init server|local|CLUSTER",
	NULL,
};
const po_cmd cmd_push_opts = {
	"push", usage_lines, push_opts, sizeof(push_opts) / sizeof(push_opts[0]), 0, NULL,
};

/* the host recorded in a perf.data header, if any */
static char *file_host(const char *path)
{
	if (pf_is_trace_file(path))
		return NULL;
	pd_reader *r;
	proff_error err;
	if (pd_open(path, &r, &err) < 0)
		return NULL;
	const pd_header *h = pd_get_header(r);
	char *host = h && h->hostname && *h->hostname ? strdup(h->hostname) : NULL;
	pd_close(r);
	return host;
}

/* a file in the store's form with its labels: 0, -1 (reported), -2 a usage error */
static int prepare(const char *path, const label_arg *labels, size_t nlabels, bool srclines, bool quiet,
		   store_prof **out)
{
	proff_error err;
	proff_err_clear(&err);
	char id[STORE_ID_LEN + 1];
	if (store_file_id(path, id, &err)) {
		cli_error(&err);
		return -1;
	}
	pf_load_opts lo;
	pf_load_opts_init(&lo);
	lo.use_callchain = true;
	lo.merge_by_comm = true;
	pf_profile *p;
	if (pf_profile_load(path, &lo, &p, &err) < 0) {
		cli_error(&err);
		return -1;
	}
	for (size_t i = 0; i < p->nr_warnings; i++)
		cli_warnf("%s", p->warnings[i]);
	store_prof *sp;
	*out = NULL;
	int rc = store_prof_from_profile(p, id, srclines, &sp, &err);
	pf_profile_free(p);
	if (rc) {
		cli_error(&err);
		return -1;
	}
	struct stat st;
	sp->time = stat(path, &st) == 0 ? (int64_t)st.st_mtime : 0;
	char *host = file_host(path);
	if (host && store_prof_label(sp, "host", host, strlen(host), &err) && !quiet)
		cli_warnf("%s: the recorded host name is no label value (%s): not kept", path, err.msg);
	free(host);
	for (size_t i = 0; i < nlabels; i++) {
		if (labels[i].klen == 4 && !strncmp(labels[i].key, "time", 4)) {
			if (parse_time(labels[i].value, &sp->time) < 0) {
				cli_errorf("--label time=%s: not a time (YYYY-MM-DD[THH:MM[:SS]] UTC, or unix seconds)",
					   labels[i].value);
				store_prof_free(sp);
				return -2;
			}
			continue;
		}
		char key[STORE_KEY_MAX + 2];
		snprintf(key, sizeof(key), "%.*s", (int)(labels[i].klen > STORE_KEY_MAX ? STORE_KEY_MAX + 1 : labels[i].klen),
			 labels[i].key);
		if (store_prof_label(sp, key, labels[i].value, strlen(labels[i].value), &err)) {
			cli_errorf("--label: %s", err.msg);
			store_prof_free(sp);
			return -2;
		}
	}
	*out = sp;
	return 0;
}

/* push a batch; the files not stored go to retry */
static size_t push_batch(store *s, store_prof **sps, char **paths, size_t n, bool quiet, char **retry)
{
	int *status = calloc(n, sizeof(int));
	proff_error err;
	proff_err_clear(&err);
	size_t failed = 0;
	int rc = status ? store_put(s, (const store_prof *const *)sps, n, status, &err)
			: proff_err_set(&err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
	if (rc) {
		cli_error(&err);
		for (size_t i = 0; i < n; i++) {
			cli_errorf("%s: not stored (nothing of it is visible in %s)", paths[i], store_name(s));
			retry[failed++] = paths[i];
		}
	} else if (!quiet) {
		for (size_t i = 0; i < n; i++)
			printf("%s %s: %s (%zu stacks, %zu samples)\n", sps[i]->id, paths[i],
			       status[i] == STORE_PUT_EXISTS ? "already stored" : "stored", sps[i]->nr_stacks,
			       sps[i]->nr_samples);
	}
	for (size_t i = 0; i < n; i++) {
		store_prof_free(sps[i]);
		sps[i] = NULL;
	}
	free(status);
	return failed;
}

int cmd_push(int argc, char **argv)
{
	push_cli c = { 0 };
	c.labels = calloc((size_t)argc, sizeof(*c.labels));
	char **files = calloc((size_t)argc + 1, sizeof(char *));
	int nfiles = 0, rc = EXIT_USAGE;
	if (!c.labels || !files)
		goto out;
	if (!po_parse(&cmd_push_opts, &c, argc, argv, files, &nfiles, &rc))
		goto out;
	const char *url = c.url, *init = c.init;
	const label_arg *labels = c.labels;
	size_t nlabels = c.nlabels;
	bool srclines = !c.no_srcline, quiet = c.quiet;
	rc = EXIT_USAGE;
	if (!url)
		url = getenv("PROFF_STORE");
	if (!url)
		url = pf_config_get(cli_config(), "store.url");
	char defdir[4096];
	if (!url) {
		const char *home = getenv("HOME");
		snprintf(defdir, sizeof(defdir), "%s/.proff-store", home && *home ? home : ".");
		url = defdir;
	}
	if (!nfiles && !init) {
		rc = po_error(&cmd_push_opts, NULL, "push: no file to push");
		goto out;
	}
	store *s;
	if ((rc = cli_store_open(url, true, &s)))
		goto out;
	rc = 1;
	if (init) {
		proff_error err;
		proff_err_clear(&err);
		if (store_init(s, !strcmp(init, "server") ? NULL : init, &err)) {
			cli_error(&err);
			store_close(s);
			goto out;
		}
	}
	size_t failed = 0, nb = 0, bsamples = 0;
	char **retry = calloc(nfiles ? (size_t)nfiles : 1, sizeof(char *));
	/* files pushed in batches (one request per table and batch): up to
	 * 64 files or a million samples at a time */
	store_prof *batch[64];
	char *bpath[64];
	if (!retry) {
		store_close(s);
		goto out;
	}
	for (size_t f = 0; f < (size_t)nfiles; f++) {
		store_prof *sp;
		int r = prepare(files[f], labels, nlabels, srclines, quiet, &sp);
		if (r == -2) {       /* a usage error: the same for every file */
			for (size_t i = 0; i < nb; i++)
				store_prof_free(batch[i]);
			store_close(s);
			free(retry);
			rc = EXIT_USAGE;
			goto out;
		}
		if (r < 0) {
			retry[failed++] = files[f];
			continue;
		}
		batch[nb] = sp;
		bpath[nb++] = files[f];
		bsamples += sp->nr_samples;
		if (nb == 64 || bsamples >= 1000000 || f + 1 == (size_t)nfiles) {
			failed += push_batch(s, batch, bpath, nb, quiet, retry + failed);
			nb = bsamples = 0;
		}
	}
	if (nb)
		failed += push_batch(s, batch, bpath, nb, quiet, retry + failed);
	store_close(s);
	rc = 0;
	if (failed) {
		fprintf(stderr, "proff: push: %zu of %d file%s not stored; push %s again:", failed, nfiles,
			nfiles == 1 ? "" : "s", failed == 1 ? "it" : "them");
		for (size_t i = 0; i < failed; i++)
			fprintf(stderr, " %s", retry[i]);
		fputc('\n', stderr);
		rc = 1;
	}
	free(retry);
out:
	free(c.labels);
	free(files);
	return rc;
}
