/* modules.c — the kernel's loaded modules as perf record names them in its
 * module MMAPs: each /proc/modules line (name, size, load address) is a map;
 * its file is looked for under /lib/modules/RELEASE (RELEASE from
 * /proc/version), every directory but the top-level "source" and "build"
 * links, where "name.ko", "name.ko.xz" or "name.ko.gz" (dashes of the file
 * name read as underscores, as the kernel names modules) is the module's
 * path; a module with no file keeps the name "[name]". Its build id is the
 * kernel's note, /sys/module/NAME/notes/.note.gnu.build-id (the loaded
 * image's, whatever the file holds).
 *
 * Every path is under root ("" for this host; a directory in the tests, as
 * perf's machine root for a guest).
 */
#include "rec-int.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "proff/error.h"

void rec_modules_free(rec_module *m, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(m[i].filename);
	free(m);
}

/* The module a file name is, "[name]" with dashes as underscores, into
 * out; false when it is not "name.ko" (or compressed as perf reads). */
static bool kmod_file_name(const char *file, char *out, size_t len)
{
	size_t n = strlen(file);
	if (n > 3 && (!strcmp(file + n - 3, ".xz") || !strcmp(file + n - 3, ".gz")))
		n -= 3;
	if (n <= 3 || strncmp(file + n - 3, ".ko", 3))
		return false;
	n -= 3;
	if (n + 3 > len)
		return false;
	out[0] = '[';
	for (size_t i = 0; i < n; i++)
		out[i + 1] = file[i] == '-' ? '_' : file[i];
	out[n + 1] = ']';
	out[n + 2] = '\0';
	return true;
}

/* dir's files, depth first: a module's file becomes its filename */
static int scan_dir(const char *dir, int depth, rec_module *m, size_t n)
{
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	struct dirent *de;
	int rc = 0;
	while (!rc && (de = readdir(d)) != NULL) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		char path[4096];
		if (snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) >= (int)sizeof(path))
			continue;
		struct stat st;
		if (stat(path, &st) != 0)    /* d_type may be unknown (network file systems) */
			continue;
		if (S_ISDIR(st.st_mode)) {
			/* the build tree's links; a loop deeper is cut by depth */
			if ((depth == 0 && (!strcmp(de->d_name, "source") || !strcmp(de->d_name, "build"))) ||
			    depth > 16)
				continue;
			rc = scan_dir(path, depth + 1, m, n);
			continue;
		}
		char name[256];
		if (!kmod_file_name(de->d_name, name, sizeof(name)))
			continue;
		for (size_t i = 0; i < n; i++)
			if (m[i].filename[0] == '[' && !strcmp(m[i].filename, name)) {
				char *p = strdup(path);
				if (!p) {
					rc = PROFF_ENOMEM;
					break;
				}
				free(m[i].filename);
				m[i].filename = p;
				break;
			}
	}
	closedir(d);
	return rc;
}

/* "Linux version RELEASE ..." of root/proc/version */
static bool kernel_release(const char *root, char *out, size_t len)
{
	char path[4096], line[512];
	snprintf(path, sizeof(path), "%s/proc/version", root);
	FILE *f = fopen(path, "re");
	if (!f)
		return false;
	bool ok = fgets(line, sizeof(line), f) != NULL;
	fclose(f);
	const char *v = ok ? strstr(line, "Linux version ") : NULL;
	if (!v)
		return false;
	v += strlen("Linux version ");
	size_t n = strcspn(v, " \n");
	if (!n || n >= len)
		return false;
	memcpy(out, v, n);
	out[n] = '\0';
	return true;
}

static void module_build_id(const char *root, rec_module *m)
{
	char path[4096], notes[4096];
	size_t n = strlen(m->filename);
	const char *name = m->filename + 1;   /* still "[name]" here */
	snprintf(path, sizeof(path), "%s/sys/module/%.*s/notes/.note.gnu.build-id", root, (int)(n - 2), name);
	int got = rec_read_small(path, notes, sizeof(notes));
	int len = got > 0 ? rec_build_id_notes(notes, (size_t)got, m->bid) : -1;
	m->bid_size = len > 0 ? (uint8_t)len : 0;
}

int rec_modules_read(const char *root, rec_module **out, size_t *nout)
{
	*out = NULL;
	*nout = 0;
	char path[4096];
	snprintf(path, sizeof(path), "%s/proc/modules", root);
	FILE *f = fopen(path, "re");
	if (!f)
		return 0;
	rec_module *m = NULL;
	size_t n = 0, cap = 0;
	char line[1024];
	int rc = 0;
	while (!rc && fgets(line, sizeof(line), f)) {
		char name[64];
		unsigned long long size, addr;
		/* "name size refcount deps state address" */
		if (sscanf(line, "%63s %llu %*s %*s %*s %llx", name, &size, &addr) != 3 || !addr)
			continue;
		if (PF_GROW(m, cap, n + 1) < 0) {
			rc = PROFF_ENOMEM;
			break;
		}
		memset(&m[n], 0, sizeof(m[n]));
		if (asprintf(&m[n].filename, "[%s]", name) < 0) {
			m[n].filename = NULL;
			rc = PROFF_ENOMEM;
			break;
		}
		m[n].start = addr;
		m[n].size = size;
		module_build_id(root, &m[n]);
		n++;
	}
	fclose(f);
	char release[256];
	if (!rc && n && kernel_release(root, release, sizeof(release))) {
		snprintf(path, sizeof(path), "%s/lib/modules/%s", root, release);
		rc = scan_dir(path, 0, m, n);
	}
	if (rc) {
		rec_modules_free(m, n);
		return rc;
	}
	*out = m;
	*nout = n;
	return 0;
}
