/* synth.c — what the recorder writes besides the kernel's own records:
 *  - synthesized records for the state that existed before recording, read
 *    from /proc like perf does: the kernel map ([kernel.kallsyms]_text with
 *    pgoff = address of _text) and one per module, FORK + COMM for every thread, MMAP2 for every
 *    executable mapping. Their sample_id_all trailer is zero (time 0 sorts
 *    them first);
 *  - the header features (HOSTNAME, OSRELEASE, VERSION, ARCH, NRCPUS,
 *    CPUDESC, CPUID, TOTAL_MEM, CMDLINE, PMU_MAPPINGS, SAMPLE_TIME, ...);
 *  - BUILD_ID entries and build-id cache copies of the DSOs samples hit. */
#include "rec-int.h"
#include "proff/perfdata.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <unistd.h>

#ifndef PROFF_VERSION
#define PROFF_VERSION "0"
#endif

struct rbuf {
	uint8_t b[8192];
	size_t n;
};

static void rb_hdr(struct rbuf *r, uint32_t type, uint16_t misc)
{
	memset(r->b, 0, sizeof(r->b));
	memcpy(r->b, &type, 4);
	memcpy(r->b + 4, &misc, 2);
	r->n = 8;
}
static void rb_u32(struct rbuf *r, uint32_t v) { memcpy(r->b + r->n, &v, 4); r->n += 4; }
static void rb_u64(struct rbuf *r, uint64_t v) { memcpy(r->b + r->n, &v, 8); r->n += 8; }
static void rb_str(struct rbuf *r, const char *s)
{
	size_t l = strlen(s);
	if (l > 4096)
		l = 4096;
	memcpy(r->b + r->n, s, l);
	r->n += (l + 1 + 7) & ~(size_t)7;   /* NUL-terminated, 8-aligned */
}
static int rb_emit(rec_state *s, struct rbuf *r, proff_error *err)
{
	r->n += s->id_hdr_size;             /* zero sample_id_all trailer */
	uint16_t sz = (uint16_t)r->n;
	memcpy(r->b + 6, &sz, 2);
	return rec_emit(s, r->b, r->n, err);
}

/* Size of the kernel text from /proc/iomem ("Kernel code" = __pa(_text) ..
 * __pa(_etext) - 1 on x86): far cheaper than walking all of /proc/kallsyms. */
static uint64_t iomem_kernel_code(void)
{
	FILE *f = fopen("/proc/iomem", "re");
	if (!f)
		return 0;
	char line[256];
	uint64_t len = 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long a, b;
		if (strstr(line, ": Kernel code") && sscanf(line, " %llx-%llx", &a, &b) == 2 && b > a) {
			len = b - a + 1;
			break;
		}
	}
	fclose(f);
	return len;
}

static int kallsyms_text(uint64_t *text, uint64_t *etext)
{
	FILE *f = fopen("/proc/kallsyms", "re");
	if (!f)
		return -1;
	char line[512];
	uint64_t code_len = 0;
	bool looked = false;
	*text = *etext = 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long a;
		char t, name[256];
		if (!strstr(line, " _text") && !strstr(line, " _etext"))
			continue;
		if (sscanf(line, "%llx %c %255s", &a, &t, name) != 3)
			continue;
		if (!strcmp(name, "_text"))
			*text = a;
		else if (!strcmp(name, "_etext"))
			*etext = a;
		if (*text && !looked) {
			looked = true;
			code_len = iomem_kernel_code();
			if (code_len) {
				*etext = *text + code_len;
				break;
			}
		}
		if (*text && *etext)
			break;
	}
	fclose(f);
	return *text ? 0 : -1;
}

static int synth_modules(rec_state *s, struct rbuf *r, proff_error *err);

int rec_synth_kernel(rec_state *s, proff_error *err)
{
	uint64_t text = 0, etext = 0;
	kallsyms_text(&text, &etext);
	struct rbuf *r = malloc(sizeof(*r));
	if (!r)
		return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
	rb_hdr(r, PERF_RECORD_MMAP, PERF_RECORD_MISC_KERNEL);
	rb_u32(r, (uint32_t)-1);
	rb_u32(r, 0);
	rb_u64(r, text);
	rb_u64(r, etext > text ? etext - text : (uint64_t)0 - text);
	rb_u64(r, text);
	rb_str(r, "[kernel.kallsyms]_text");
	int rc = rb_emit(s, r, err);
	if (!rc)
		rc = synth_modules(s, r, err);
	free(r);
	return rc;
}

/* One kernel MMAP per loaded module, named as perf record names it (its
 * .ko under /lib/modules/RELEASE, else "[name]": modules.c), so module
 * samples fall in a module map; its build id kept for rec_build_ids. */
static int synth_modules(rec_state *s, struct rbuf *r, proff_error *err)
{
	rec_module *m;
	size_t n;
	if (rec_modules_read("", &m, &n))
		return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
	int rc = 0;
	for (size_t i = 0; i < n && !rc; i++) {
		rb_hdr(r, PERF_RECORD_MMAP, PERF_RECORD_MISC_KERNEL);
		rb_u32(r, (uint32_t)-1);
		rb_u32(r, 0);
		rb_u64(r, m[i].start);
		rb_u64(r, m[i].size);
		rb_u64(r, 0);
		rb_str(r, m[i].filename);
		rc = rb_emit(s, r, err);
		uint32_t d = rc ? UINT32_MAX : rec_dso_intern(s, m[i].filename);
		if (d != UINT32_MAX && m[i].bid_size) {
			memcpy(s->dsos[d].bid, m[i].bid, m[i].bid_size);
			s->dsos[d].bid_size = m[i].bid_size;
		}
	}
	rec_modules_free(m, n);
	return rc;
}

int rec_synth_comm(rec_state *s, uint32_t pid, uint32_t tid, const char *comm, proff_error *err)
{
	struct rbuf *r = malloc(sizeof(*r));
	if (!r)
		return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
	rb_hdr(r, PERF_RECORD_COMM, 0);
	rb_u32(r, pid);
	rb_u32(r, tid);
	char c[16];
	snprintf(c, sizeof(c), "%s", comm);
	rb_str(r, c);
	int rc = rb_emit(s, r, err);
	free(r);
	return rc;
}

static int synth_fork(rec_state *s, uint32_t pid, uint32_t ppid, uint32_t tid, uint32_t ptid,
		      proff_error *err)
{
	struct rbuf r;
	rb_hdr(&r, PERF_RECORD_FORK, 0);
	rb_u32(&r, pid);
	rb_u32(&r, ppid);
	rb_u32(&r, tid);
	rb_u32(&r, ptid);
	rb_u64(&r, 0);
	return rb_emit(s, &r, err);
}

int rec_read_small(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = 0;
	return (int)n;
}

static int synth_maps(rec_state *s, uint32_t pid, proff_error *err)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return 0;
	char *line = NULL;
	size_t cap = 0;
	int rc = 0;
	struct rbuf *r = malloc(sizeof(*r));
	if (!r) {
		fclose(f);
		return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
	}
	while (getline(&line, &cap, f) > 0) {
		unsigned long long start, end, pgoff, ino;
		unsigned maj, min;
		char perm[8];
		int pos = 0;
		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end, perm, &pgoff,
			   &maj, &min, &ino, &pos) < 7)
			continue;
		if (strlen(perm) < 4 || perm[2] != 'x')
			continue;
		char *name = line + pos;
		name[strcspn(name, "\n")] = 0;
		if (!*name)
			name = "//anon";
		uint32_t prot = (perm[0] == 'r' ? PROT_READ : 0) | (perm[1] == 'w' ? PROT_WRITE : 0) | PROT_EXEC;
		uint32_t flags = perm[3] == 's' ? MAP_SHARED : MAP_PRIVATE;
		rb_hdr(r, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER);
		rb_u32(r, pid);
		rb_u32(r, pid);
		rb_u64(r, start);
		rb_u64(r, end - start);
		rb_u64(r, pgoff);
		rb_u32(r, maj);
		rb_u32(r, min);
		rb_u64(r, ino);
		rb_u64(r, 0);
		rb_u32(r, prot);
		rb_u32(r, flags);
		rb_str(r, name);
		if ((rc = rb_emit(s, r, err)))
			break;
	}
	free(r);
	free(line);
	fclose(f);
	return rc;
}

static int status_field(const char *status, const char *key, long *v)
{
	const char *p = strstr(status, key);
	if (!p)
		return -1;
	*v = strtol(p + strlen(key), NULL, 10);
	return 0;
}

int rec_synth_process(rec_state *s, uint32_t pid, proff_error *err)
{
	char path[96], status[4096];
	snprintf(path, sizeof(path), "/proc/%u/status", pid);
	if (rec_read_small(path, status, sizeof(status)) < 0)
		return 0;
	long tgid = pid, ppid = 0;
	status_field(status, "\nTgid:", &tgid);
	status_field(status, "\nPPid:", &ppid);
	if ((uint32_t)tgid != pid)
		return 0;    /* a thread: handled with its process */
	snprintf(path, sizeof(path), "/proc/%u/task", pid);
	DIR *d = opendir(path);
	if (!d)
		return 0;
	struct dirent *de;
	int rc = 0;
	while ((de = readdir(d))) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		uint32_t tid = (uint32_t)strtoul(de->d_name, NULL, 10);
		char comm[64];
		snprintf(path, sizeof(path), "/proc/%u/task/%u/comm", pid, tid);
		if (rec_read_small(path, comm, sizeof(comm)) < 0)
			continue;
		comm[strcspn(comm, "\n")] = 0;
		if (tid == pid)
			rc = synth_fork(s, pid, (uint32_t)ppid, tid, (uint32_t)ppid, err);
		else
			rc = synth_fork(s, pid, pid, tid, pid, err);
		if (!rc)
			rc = rec_synth_comm(s, pid, tid, comm, err);
		if (rc)
			break;
	}
	closedir(d);
	if (!rc)
		rc = synth_maps(s, pid, err);
	return rc;
}

int rec_synth_all(rec_state *s, proff_error *err)
{
	DIR *d = opendir("/proc");
	if (!d)
		return proff_err_sys(err, PROFF_EIO, "/proc", "cannot list processes");
	struct dirent *de;
	int rc = 0;
	while (!rc && (de = readdir(d)))
		if (isdigit((unsigned char)de->d_name[0]))
			rc = rec_synth_process(s, (uint32_t)strtoul(de->d_name, NULL, 10), err);
	closedir(d);
	return rc;
}

/* ---- header features ------------------------------------------------------ */

static void cpuinfo(char *desc, size_t dl, char *cpuid, size_t cl)
{
	FILE *f = fopen("/proc/cpuinfo", "re");
	char vendor[64] = "", model_name[256] = "";
	long family = -1, model = -1, stepping = -1;
	desc[0] = cpuid[0] = 0;
	if (f) {
		char line[512];
		while (fgets(line, sizeof(line), f)) {
			if (line[0] == '\n')
				break;   /* first CPU only */
			char *colon = strchr(line, ':');
			if (!colon)
				continue;
			char *v = colon + 1;
			while (*v == ' ')
				v++;
			v[strcspn(v, "\n")] = 0;
			if (!strncmp(line, "vendor_id", 9))
				snprintf(vendor, sizeof(vendor), "%s", v);
			else if (!strncmp(line, "model name", 10))
				snprintf(model_name, sizeof(model_name), "%s", v);
			else if (!strncmp(line, "cpu family", 10))
				family = atol(v);
			else if (!strncmp(line, "model\t", 6))
				model = atol(v);
			else if (!strncmp(line, "stepping", 8))
				stepping = atol(v);
		}
		fclose(f);
	}
	/* squeeze repeated blanks as perf does */
	size_t j = 0;
	for (size_t i = 0; model_name[i] && j + 1 < dl; i++) {
		if (model_name[i] == ' ' && j && desc[j - 1] == ' ')
			continue;
		desc[j++] = model_name[i];
	}
	desc[j] = 0;
	if (vendor[0])
		snprintf(cpuid, cl, "%s,%ld,%ld,%ld", vendor, family, model, stepping);
}

static int pmu_mappings(rec_state *s, proff_error *err)
{
	DIR *d = opendir("/sys/bus/event_source/devices");
	if (!d)
		return 0;
	uint8_t *buf = NULL;
	size_t len = 4, cap = 0;
	uint32_t nr = 0;
	struct dirent *de;
	int rc = 0;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		char path[PATH_MAX], v[64];
		snprintf(path, sizeof(path), "/sys/bus/event_source/devices/%s/type", de->d_name);
		if (rec_read_small(path, v, sizeof(v)) <= 0)
			continue;
		uint32_t type = (uint32_t)strtoul(v, NULL, 10);
		size_t need = len + 4 + pdw_encode_string(NULL, de->d_name);
		if (PF_GROW(buf, cap, need)) {
			rc = proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
			break;
		}
		memcpy(buf + len, &type, 4);
		len += 4;
		len += pdw_encode_string(buf + len, de->d_name);
		nr++;
	}
	closedir(d);
	if (!rc && nr) {
		memcpy(buf, &nr, 4);
		rc = pdw_set_feature(s->w, PD_FEAT_PMU_MAPPINGS, buf, len, err);
	}
	free(buf);
	return rc;
}

int rec_set_features(rec_state *s, proff_error *err)
{
	struct utsname u;
	int rc = 0;
	if (uname(&u) == 0) {
		rc = rc ? rc : pdw_set_feature_string(s->w, PD_FEAT_HOSTNAME, u.nodename, err);
		rc = rc ? rc : pdw_set_feature_string(s->w, PD_FEAT_OSRELEASE, u.release, err);
		rc = rc ? rc : pdw_set_feature_string(s->w, PD_FEAT_ARCH, u.machine, err);
	}
	rc = rc ? rc : pdw_set_feature_string(s->w, PD_FEAT_VERSION, PROFF_VERSION " (proff)", err);
	long conf = sysconf(_SC_NPROCESSORS_CONF), onln = sysconf(_SC_NPROCESSORS_ONLN);
	uint32_t nrc[2] = { (uint32_t)(conf > 0 ? conf : 1), (uint32_t)(onln > 0 ? onln : 1) };
	rc = rc ? rc : pdw_set_feature(s->w, PD_FEAT_NRCPUS, nrc, sizeof(nrc), err);
	char desc[256], cpuid[128];
	cpuinfo(desc, sizeof(desc), cpuid, sizeof(cpuid));
	if (desc[0])
		rc = rc ? rc : pdw_set_feature_string(s->w, PD_FEAT_CPUDESC, desc, err);
	if (cpuid[0])
		rc = rc ? rc : pdw_set_feature_string(s->w, PD_FEAT_CPUID, cpuid, err);
	char mi[4096];
	if (rec_read_small("/proc/meminfo", mi, sizeof(mi)) > 0) {
		char *p = strstr(mi, "MemTotal:");
		if (p) {
			uint64_t kb = strtoull(p + 9, NULL, 10);
			rc = rc ? rc : pdw_set_feature(s->w, PD_FEAT_TOTAL_MEM, &kb, 8, err);
		}
	}
	if (s->o->nr_cmdline)
		rc = rc ? rc : pdw_set_feature_strings(s->w, PD_FEAT_CMDLINE, s->o->cmdline, s->o->nr_cmdline, err);
	rc = rc ? rc : pmu_mappings(s, err);
	uint64_t t[2] = { s->first_time, s->last_time };
	rc = rc ? rc : pdw_set_feature(s->w, PD_FEAT_SAMPLE_TIME, t, sizeof(t), err);
	if (s->o->branch_stack)
		rc = rc ? rc : pdw_set_feature_flag(s->w, PD_FEAT_BRANCH_STACK, err);
	return rc;
}

/* ---- build-ids -------------------------------------------------------------- */

static const char *cache_dir(const rec_opts *o, char *buf, size_t len)
{
	if (o->buildid_dir && *o->buildid_dir)
		return o->buildid_dir;
	const char *e = getenv("PROFF_BUILDID_DIR");
	if (e && *e)
		return e;
	const char *home = getenv("HOME");
	if (!home || !*home)
		return NULL;
	snprintf(buf, len, "%s/.debug", home);
	return buf;
}

/* The vdso image of this process (the same for every process of this ABI). */
static uint8_t *vdso_image(size_t *len)
{
	FILE *f = fopen("/proc/self/maps", "re");
	if (!f)
		return NULL;
	char line[512];
	uint8_t *img = NULL;
	while (fgets(line, sizeof(line), f)) {
		if (!strstr(line, "[vdso]"))
			continue;
		unsigned long long a, b;
		if (sscanf(line, "%llx-%llx", &a, &b) == 2 && b > a && b - a <= (1u << 24)) {
			img = malloc(b - a);
			if (img) {
				memcpy(img, (const void *)(uintptr_t)a, b - a);
				*len = b - a;
			}
		}
		break;
	}
	fclose(f);
	return img;
}

int rec_build_ids(rec_state *s, proff_error *err)
{
	char dbuf[PATH_MAX];
	const char *dir = s->o->no_buildid_cache ? NULL : cache_dir(s->o, dbuf, sizeof(dbuf));
	int first_err = 0;
	for (size_t i = 0; i < s->nr_dsos; i++) {
		struct rec_dso *d = &s->dsos[i];
		if (!d->hit)
			continue;
		uint8_t id[20];
		int n = -1;
		uint8_t *img = NULL;
		size_t img_len = 0;
		const char *base = "elf", *src = d->name;
		uint16_t mode = PERF_RECORD_MISC_USER;
		if (i == s->kernel_dso) {
			char notes[8192];
			int l = rec_read_small("/sys/kernel/notes", notes, sizeof(notes));
			if (l > 0)
				n = rec_build_id_notes(notes, (size_t)l, id);
			base = "kallsyms";
			src = "/proc/kallsyms";
			mode = PERF_RECORD_MISC_KERNEL;
		} else if (!strcmp(d->name, "[vdso]")) {
			img = vdso_image(&img_len);
			if (img)
				n = rec_build_id_mem(img, img_len, id);
			base = "vdso";
		} else if (d->module) {
			/* the kernel's note of the loaded image, else its file's
			 * (perf record writes a module's under cpumode kernel) */
			n = d->bid_size ? (memcpy(id, d->bid, d->bid_size), d->bid_size)
				: d->name[0] == '/' ? rec_read_build_id(d->name, id, NULL) : -1;
			mode = PERF_RECORD_MISC_KERNEL;
		} else if (d->name[0] == '/') {
			n = rec_read_build_id(d->name, id, NULL);
		}
		if (n <= 0) {
			free(img);
			continue;
		}
		int rc = pdw_add_build_id(s->w, -1, mode, id, (size_t)n, d->name, err);
		if (rc) {
			free(img);
			return rc;
		}
		s->st->nr_build_ids++;
		if (dir && (d->name[0] == '/' || !d->module)) {    /* a "[name]" module has no file to keep */
			proff_error e2;
			if (rec_cache_add(dir, d->name, id, (size_t)n, base, img, img_len, src, &e2) == 0)
				s->st->nr_cached++;
			else if (!first_err && err) {
				*err = e2;
				first_err = e2.code;
			}
		}
		free(img);
	}
	return first_err;
}
