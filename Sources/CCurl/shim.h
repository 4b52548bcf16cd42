#ifndef HOSTSCOPE_CCURL_SHIM_H
#define HOSTSCOPE_CCURL_SHIM_H

#include <curl/curl.h>

// curl_easy_setopt and curl_easy_getinfo are variadic and therefore not callable from Swift.
// Each typed wrapper below fixes the argument type for one family of options.

static inline CURLcode hostscope_curl_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode hostscope_curl_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode hostscope_curl_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode hostscope_curl_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode hostscope_curl_setopt_off_t(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}
typedef size_t (*hostscope_curl_data_callback)(char *data, size_t size, size_t count, void *context);
static inline CURLcode hostscope_curl_setopt_data_callback(CURL *handle, CURLoption option,
                                                           hostscope_curl_data_callback callback) {
    return curl_easy_setopt(handle, option, callback);
}
typedef int (*hostscope_curl_progress_callback)(void *context, curl_off_t dltotal, curl_off_t dlnow,
                                                curl_off_t ultotal, curl_off_t ulnow);
static inline CURLcode hostscope_curl_setopt_progress_callback(CURL *handle,
                                                               hostscope_curl_progress_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, callback);
}
static inline CURLcode hostscope_curl_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}
static inline CURLcode hostscope_curl_getinfo_double(CURL *handle, CURLINFO info, double *value) {
    return curl_easy_getinfo(handle, info, value);
}
static inline CURLcode hostscope_curl_getinfo_string(CURL *handle, CURLINFO info, char **value) {
    return curl_easy_getinfo(handle, info, value);
}

// Macros built from other macros, and multi-handle options, are not imported; these give them a typed name.

static inline CURLcode hostscope_curl_global_init(void) {
    return curl_global_init(CURL_GLOBAL_ALL);
}
static const size_t hostscope_curl_writefunc_pause = CURL_WRITEFUNC_PAUSE;
static const size_t hostscope_curl_error_size = CURL_ERROR_SIZE;
static inline CURLcode hostscope_curl_unpause(CURL *handle) {
    return curl_easy_pause(handle, CURLPAUSE_CONT);
}
static inline CURLMcode hostscope_curl_multi_setopt_long(CURLM *multi, CURLMoption option, long value) {
    return curl_multi_setopt(multi, option, value);
}
typedef int (*hostscope_curl_prereq_callback)(void *context, char *primary_ip, char *local_ip, int primary_port,
                                              int local_port);
static inline CURLcode hostscope_curl_setopt_prereq_callback(CURL *handle, hostscope_curl_prereq_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_PREREQFUNCTION, callback);
}
static inline CURLcode hostscope_curl_getinfo_pointer(CURL *handle, CURLINFO info, void **value) {
    return curl_easy_getinfo(handle, info, value);
}
static inline CURLcode hostscope_curl_getinfo_off_t(CURL *handle, CURLINFO info, curl_off_t *value) {
    return curl_easy_getinfo(handle, info, value);
}

#endif
