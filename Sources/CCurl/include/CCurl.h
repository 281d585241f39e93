/// Typed wrappers over libcurl's variadic functions.
///
/// `curl_easy_setopt`, `curl_easy_getinfo`, `curl_multi_setopt` and `curl_share_setopt` are
/// variadic, so Swift cannot call them. Each wrapper here fixes the type of the third argument,
/// which is exactly what libcurl requires per option. Every symbol is prefixed `wattle_`.
#ifndef WATTLE_CCURL_H
#define WATTLE_CCURL_H

#include <curl/curl.h>
#include <stddef.h>

/// `CURLOPT_WRITEFUNCTION` / `CURLOPT_HEADERFUNCTION` callback shape.
typedef size_t (*wattle_curl_data_callback)(char *data, size_t size, size_t count, void *userdata);
/// `CURLOPT_XFERINFOFUNCTION` callback shape.
typedef int (*wattle_curl_xferinfo_callback)(void *userdata, curl_off_t dltotal, curl_off_t dlnow,
                                             curl_off_t ultotal, curl_off_t ulnow);

CURLcode wattle_curl_easy_setopt_long(CURL *handle, CURLoption option, long value);
CURLcode wattle_curl_easy_setopt_off_t(CURL *handle, CURLoption option, curl_off_t value);
CURLcode wattle_curl_easy_setopt_string(CURL *handle, CURLoption option, const char *value);
CURLcode wattle_curl_easy_setopt_pointer(CURL *handle, CURLoption option, void *value);
CURLcode wattle_curl_easy_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value);
CURLcode wattle_curl_easy_setopt_share(CURL *handle, CURLSH *share);
/// Sets a `struct curl_blob` option; `CURL_BLOB_COPY` is always used, so `data` may be freed after.
CURLcode wattle_curl_easy_setopt_blob_copy(CURL *handle, CURLoption option, const void *data, size_t length);
CURLcode wattle_curl_easy_setopt_data_function(CURL *handle, CURLoption option, wattle_curl_data_callback callback);
CURLcode wattle_curl_easy_setopt_xferinfo_function(CURL *handle, wattle_curl_xferinfo_callback callback);

/// Sets `CURLOPT_OPENSOCKETFUNCTION` to one that opens every connection's socket
/// close-on-exec: libcurl 7.88 opens them without it, so a process the program starts (a
/// `system()`, a fork and exec of its own) inherited its connections, keeping them open past
/// their close here and able to read or write them. (libcurl's wake-up socket pair of a multi
/// handle cannot be reached from here and stays inheritable.)
CURLcode wattle_curl_easy_setopt_cloexec_sockets(CURL *handle);

/// `CURLOPT_PREREQFUNCTION` callback shape: called once a connection is ready, before the request is sent.
typedef int (*wattle_curl_prereq_callback)(void *userdata, char *primary_ip, char *local_ip, int primary_port,
                                           int local_port);
CURLcode wattle_curl_easy_setopt_prereq_function(CURL *handle, wattle_curl_prereq_callback callback);

/// `CURLOPT_SEEKFUNCTION` callback shape: moves an upload back (libcurl rewinds to send a body
/// again, on a new connection); returns a `CURL_SEEKFUNC_*` value.
typedef int (*wattle_curl_seek_callback)(void *userdata, curl_off_t offset, int origin);
CURLcode wattle_curl_easy_setopt_seek_function(CURL *handle, wattle_curl_seek_callback callback);
/// `CURL_READFUNC_ABORT`, which Swift cannot import (a cast macro).
static const size_t wattle_curl_readfunc_abort = CURL_READFUNC_ABORT;
/// `CURL_WRITEFUNC_PAUSE`: a write callback's answer that pauses receiving; the bytes it was
/// given are handed over again once `curl_easy_pause` lets it go on.
static const size_t wattle_curl_writefunc_pause = CURL_WRITEFUNC_PAUSE;
/// `CURLPAUSE_CONT` (an expression macro): lets a paused transfer send and receive again.
static const int wattle_curlpause_cont = CURLPAUSE_CONT;

CURLcode wattle_curl_easy_getinfo_long(CURL *handle, CURLINFO info, long *value);
CURLcode wattle_curl_easy_getinfo_off_t(CURL *handle, CURLINFO info, curl_off_t *value);
CURLcode wattle_curl_easy_getinfo_double(CURL *handle, CURLINFO info, double *value);
CURLcode wattle_curl_easy_getinfo_string(CURL *handle, CURLINFO info, const char **value);
CURLcode wattle_curl_easy_getinfo_pointer(CURL *handle, CURLINFO info, void **value);

CURLMcode wattle_curl_multi_setopt_long(CURLM *multi, CURLMoption option, long value);
CURLSHcode wattle_curl_share_setopt_long(CURLSH *share, CURLSHoption option, long value);

/// `CURL_ERROR_SIZE`, the size `CURLOPT_ERRORBUFFER` needs.
static const size_t wattle_curl_error_size = CURL_ERROR_SIZE;

/// Number of certificates in a `CURLINFO_CERTINFO` result, or 0.
int wattle_curl_certinfo_count(const struct curl_certinfo *info);

/// Names the calling thread (Linux shows at most 15 bytes), as `ps -L` and debuggers show it.
void wattle_set_current_thread_name(const char *name);
/// Starts writing a file's range to disk without waiting for it (`sync_file_range` with
/// `SYNC_FILE_RANGE_WRITE`, which Swift's Glibc module leaves out: it needs `_GNU_SOURCE`).
int wattle_start_writeback(int descriptor, long long offset, long long count);
/// The linked list of "Name:value" lines of certificate `index`.
const struct curl_slist *wattle_curl_certinfo_at(const struct curl_certinfo *info, int index);



/// `CURL_GLOBAL_ALL`, a composite macro Swift cannot import.
static const long wattle_curl_global_all = CURL_GLOBAL_ALL;
/// The libcurl version string, e.g. "7.88.1".
static inline const char *wattle_curl_version_string(void) {
    return curl_version_info(CURLVERSION_NOW)->version;
}
/// Whether the running libcurl's `curl_global_init` is thread-safe (the `threadsafe` feature,
/// 7.84.0 and later on platforms with atomics).
static inline int wattle_curl_global_init_is_threadsafe(void) {
    return (curl_version_info(CURLVERSION_NOW)->features & CURL_VERSION_THREADSAFE) != 0;
}
/// The running libcurl's version as 0xXXYYZZ (8.0.0 is 0x080000).
static inline unsigned int wattle_curl_version_number(void) {
    return curl_version_info(CURLVERSION_NOW)->version_num;
}
/// The feature bits of the running libcurl.
static inline int wattle_curl_version_features(void) {
    return curl_version_info(CURLVERSION_NOW)->features;
}
/// The feature bit set when libcurl decodes deflate and gzip bodies.
static const int wattle_curl_feature_libz = CURL_VERSION_LIBZ;
/// The feature bit set when libcurl decodes br (Brotli) bodies.
static const int wattle_curl_feature_brotli = CURL_VERSION_BROTLI;
/// The feature bit set when libcurl decodes zstd bodies.
static const int wattle_curl_feature_zstd = CURL_VERSION_ZSTD;
#endif
