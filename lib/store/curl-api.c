/* curl-api.c — libcurl found at run time for the ClickHouse store
 * (curl-api.h says why it is not linked).
 */
#include <dlfcn.h>

#include "curl-api.h"

/* the library's versioned name: the ABI of libcurl4's packages, the one the
 * headers proff was built with describe */
#define CURL_LIBRARY "libcurl.so.4"

int ch_curl_load(ch_curl *api, proff_error *err)
{
	*api = (ch_curl){ 0 };
	/* RTLD_NODELETE: never unmapped under exit handlers that its TLS
	 * libraries registered */
	void *lib = dlopen(CURL_LIBRARY, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
	if (!lib)
		return proff_err_set(err, PROFF_EINTERNAL, NULL, PROFF_NO_OFFSET,
				     "cannot load %s for the ClickHouse store (Debian: libcurl4): %s",
				     CURL_LIBRARY, dlerror());
	struct {
		const char *name;
		void **slot;
	} fns[] = {
		{ "curl_global_init", (void **)&api->global_init },
		{ "curl_easy_init", (void **)&api->easy_init },
		{ "curl_easy_cleanup", (void **)&api->easy_cleanup },
		{ "curl_easy_reset", (void **)&api->easy_reset },
		{ "curl_easy_setopt", (void **)&api->easy_setopt },
		{ "curl_easy_perform", (void **)&api->easy_perform },
		{ "curl_easy_getinfo", (void **)&api->easy_getinfo },
		{ "curl_easy_strerror", (void **)&api->easy_strerror },
		{ "curl_easy_escape", (void **)&api->easy_escape },
		{ "curl_free", (void **)&api->free },
		{ "curl_slist_append", (void **)&api->slist_append },
		{ "curl_slist_free_all", (void **)&api->slist_free_all },
	};
	for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
		void *fn = dlsym(lib, fns[i].name);
		if (!fn) {
			dlclose(lib);
			return proff_err_set(err, PROFF_EINTERNAL, NULL, PROFF_NO_OFFSET,
					     "%s has no %s", CURL_LIBRARY, fns[i].name);
		}
		*fns[i].slot = fn;
	}
	api->lib = lib;
	return 0;
}
