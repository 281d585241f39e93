#define _GNU_SOURCE
#include "CCurl.h"

#include <pthread.h>
#include <sys/socket.h>
#include <fcntl.h>

void wattle_set_current_thread_name(const char *name) {
#if defined(__APPLE__)
    pthread_setname_np(name);
#else
    pthread_setname_np(pthread_self(), name);
#endif
}

int wattle_start_writeback(int descriptor, long long offset, long long count) {
#if defined(__APPLE__)
    (void)descriptor; (void)offset; (void)count;
    return 0;
#else
    return sync_file_range(descriptor, offset, count, SYNC_FILE_RANGE_WRITE);
#endif
}

CURLcode wattle_curl_easy_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}
CURLcode wattle_curl_easy_setopt_off_t(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}
CURLcode wattle_curl_easy_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}
CURLcode wattle_curl_easy_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}
CURLcode wattle_curl_easy_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(handle, option, value);
}
CURLcode wattle_curl_easy_setopt_share(CURL *handle, CURLSH *share) {
    return curl_easy_setopt(handle, CURLOPT_SHARE, share);
}
CURLcode wattle_curl_easy_setopt_blob_copy(CURL *handle, CURLoption option, const void *data, size_t length) {
    struct curl_blob blob;
    blob.data = (void *)data;
    blob.len = length;
    blob.flags = CURL_BLOB_COPY;
    return curl_easy_setopt(handle, option, &blob);
}
CURLcode wattle_curl_easy_setopt_data_function(CURL *handle, CURLoption option, wattle_curl_data_callback callback) {
    return curl_easy_setopt(handle, option, callback);
}
CURLcode wattle_curl_easy_setopt_xferinfo_function(CURL *handle, wattle_curl_xferinfo_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, callback);
}

static curl_socket_t wattle_open_cloexec_socket(void *clientp, curlsocktype purpose, struct curl_sockaddr *address) {
    (void)clientp;
    (void)purpose;
#if defined(SOCK_CLOEXEC)
    return socket(address->family, address->socktype | SOCK_CLOEXEC, address->protocol);
#else
    curl_socket_t descriptor = socket(address->family, address->socktype, address->protocol);
    if (descriptor != CURL_SOCKET_BAD) fcntl(descriptor, F_SETFD, FD_CLOEXEC);
    return descriptor;
#endif
}

CURLcode wattle_curl_easy_setopt_cloexec_sockets(CURL *handle) {
    CURLcode code = curl_easy_setopt(handle, CURLOPT_OPENSOCKETFUNCTION, wattle_open_cloexec_socket);
    return code != CURLE_OK ? code : curl_easy_setopt(handle, CURLOPT_OPENSOCKETDATA, NULL);
}

CURLcode wattle_curl_easy_setopt_prereq_function(CURL *handle, wattle_curl_prereq_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_PREREQFUNCTION, callback);
}

CURLcode wattle_curl_easy_setopt_seek_function(CURL *handle, wattle_curl_seek_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_SEEKFUNCTION, callback);
}

CURLcode wattle_curl_easy_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}
CURLcode wattle_curl_easy_getinfo_off_t(CURL *handle, CURLINFO info, curl_off_t *value) {
    return curl_easy_getinfo(handle, info, value);
}
CURLcode wattle_curl_easy_getinfo_double(CURL *handle, CURLINFO info, double *value) {
    return curl_easy_getinfo(handle, info, value);
}
CURLcode wattle_curl_easy_getinfo_string(CURL *handle, CURLINFO info, const char **value) {
    char *result = NULL;
    CURLcode code = curl_easy_getinfo(handle, info, &result);
    *value = result;
    return code;
}
CURLcode wattle_curl_easy_getinfo_pointer(CURL *handle, CURLINFO info, void **value) {
    return curl_easy_getinfo(handle, info, value);
}

CURLMcode wattle_curl_multi_setopt_long(CURLM *multi, CURLMoption option, long value) {
    return curl_multi_setopt(multi, option, value);
}
CURLSHcode wattle_curl_share_setopt_long(CURLSH *share, CURLSHoption option, long value) {
    return curl_share_setopt(share, option, value);
}

int wattle_curl_certinfo_count(const struct curl_certinfo *info) {
    return info ? info->num_of_certs : 0;
}
const struct curl_slist *wattle_curl_certinfo_at(const struct curl_certinfo *info, int index) {
    if (!info || index < 0 || index >= info->num_of_certs) return NULL;
    return info->certinfo[index];
}
