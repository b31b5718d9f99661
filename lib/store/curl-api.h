/* curl-api.h — the libcurl functions the ClickHouse store calls, found in
 * libcurl.so.4 with dlopen when a ClickHouse store opens (curl-api.c).
 *
 * Linking libcurl into proff loaded it and some thirty libraries of its
 * own (TLS, Kerberos, LDAP, ...) into every command: 15 ms of dynamic
 * linking and 6 MB of resident memory for a report that never speaks
 * HTTP. Only the store that needs it pays for it now.
 */
#ifndef PROFF_STORE_CURL_API_H
#define PROFF_STORE_CURL_API_H

#include <curl/curl.h>

#include "proff/error.h"

typedef struct ch_curl {
	void *lib;  /* dlopen's handle */
	CURLcode (*global_init)(long flags);
	CURL *(*easy_init)(void);
	void (*easy_cleanup)(CURL *h);
	void (*easy_reset)(CURL *h);
	CURLcode (*easy_setopt)(CURL *h, CURLoption opt, ...);
	CURLcode (*easy_perform)(CURL *h);
	CURLcode (*easy_getinfo)(CURL *h, CURLINFO info, ...);
	const char *(*easy_strerror)(CURLcode code);
	char *(*easy_escape)(CURL *h, const char *s, int len);
	void (*free)(void *p);
	struct curl_slist *(*slist_append)(struct curl_slist *list, const char *s);
	void (*slist_free_all)(struct curl_slist *list);
} ch_curl;

/* Loads libcurl and fills api; an error names the library and dlerror's
 * reason. The library stays loaded for the process's life (its TLS
 * libraries register exit handlers). */
int ch_curl_load(ch_curl *api, proff_error *err);

#endif
