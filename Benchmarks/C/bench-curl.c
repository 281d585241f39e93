/*
 * Raw libcurl: the practical limit the Swift clients are measured against.
 *
 *   bench-curl seq      URL N [h1|h2] [CAFILE]   one easy handle reused: N sequential GETs
 *   bench-curl conc     URL N C [h1|h2] [CAFILE] multi handle, C transfers in flight
 *                                                (h1: a pool of C connections; h2: one
 *                                                multiplexed connection, PIPEWAIT)
 *   bench-curl download URL FILE [h1|h2] [CAFILE] streams the body to FILE (BENCH_FSYNC=1: and
 *                                                fsyncs it and its folder, as Wattle's synced
 *                                                download does)
 *   bench-curl flat     URL N [h1|h2] [CAFILE]   like seq; reports RSS after warm-up and at end
 *
 * Prints one JSON line: requests, seconds (wall, after warm-up), cpu (user+sys seconds over the
 * same span, getrusage), maxrss_kb (VmHWM), bytes, errors.
 *
 * BENCH_AS_WATTLE=1 (seq and conc): the same libcurl work Wattle asks for, in C, to tell the
 * cost of Wattle's libcurl features from the cost of its Swift layer. Every transfer runs through
 * a multi handle (added and removed per transfer); each handle has Wattle's fixed options (a
 * share handle for TLS sessions and DNS, content decoding, an error buffer, protocols, TCP
 * keep-alive, host verification, PIPEWAIT, a pre-request callback, a header callback keeping the
 * header lines, Wattle's header list); each transfer sets Wattle's per-transfer options again
 * (URL, trust, timeouts, size limit, method, headers, callbacks' data) and reads the metrics
 * Wattle's `Response` carries. Trust stays the reference's CA file (Wattle allowlists the host
 * instead: a difference in the one handshake, not per request).
 */
#define _GNU_SOURCE
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>
#include <libgen.h>

#define WARMUP 200

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double cpu(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

/* A line of /proc/self/status in kB (VmHWM, VmRSS). */
static long status_kb(const char *field) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long value = -1;
    size_t n = strlen(field);
    if (!f) return -1;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, field, n) == 0 && line[n] == ':') {
            value = strtol(line + n + 1, NULL, 10);
            break;
        }
    }
    fclose(f);
    return value;
}

/* The body of one transfer, kept in a reused buffer (a client keeps the body it asked for). */
struct body {
    char *data;
    size_t size, capacity;
};

static size_t on_body(char *ptr, size_t size, size_t nmemb, void *userdata) {
    struct body *b = userdata;
    size_t n = size * nmemb;
    if (b->size + n > b->capacity) {
        size_t capacity = b->capacity ? b->capacity * 2 : 4096;
        while (capacity < b->size + n) capacity *= 2;
        b->data = realloc(b->data, capacity);
        b->capacity = capacity;
    }
    memcpy(b->data + b->size, ptr, n);
    b->size += n;
    return n;
}

/* BENCH_AS_WATTLE=1: see the top of this file. */
static int as_wattle = 0;
static CURLSH *wattle_share = NULL;
static struct curl_slist *wattle_headers = NULL;

/* A transfer's header lines, kept as Wattle keeps them (a status line starts a new response). */
static size_t on_header(char *ptr, size_t size, size_t nmemb, void *userdata) {
    struct body *h = userdata;
    size_t n = size * nmemb;
    if (n >= 5 && memcmp(ptr, "HTTP/", 5) == 0) h->size = 0;
    return on_body(ptr, size, nmemb, h);
}

static int on_prereq(void *userdata, char *primary_ip, char *local_ip, int primary_port, int local_port) {
    (void)primary_ip, (void)local_ip, (void)primary_port, (void)local_port;
    (*(long *)userdata)++;
    return CURL_PREREQFUNC_OK;
}

/* Per-handle state of the BENCH_AS_WATTLE mode. */
struct wattle_state {
    struct body headers;
    char error[CURL_ERROR_SIZE];
    long sends;
};

/* Wattle's fixed options (EasyHandle.setFixedOptions). */
static void wattle_fixed(CURL *easy, struct wattle_state *w) {
    curl_easy_setopt(easy, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, w->error);
    curl_easy_setopt(easy, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(easy, CURLOPT_ACCEPT_ENCODING, "");
    curl_easy_setopt(easy, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(easy, CURLOPT_SHARE, wattle_share);
    curl_easy_setopt(easy, CURLOPT_PIPEWAIT, 1L);
    curl_easy_setopt(easy, CURLOPT_SSL_VERIFYHOST, 2L);
    curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(easy, CURLOPT_PREREQFUNCTION, on_prereq);
}

/* Wattle's per-transfer options (CurlTransfer.configure), for a GET without a body. */
static void wattle_transfer(CURL *easy, const char *url, struct body *b, struct wattle_state *w) {
    w->error[0] = 0;
    w->headers.size = 0;
    curl_easy_setopt(easy, CURLOPT_URL, url);
    curl_easy_setopt(easy, CURLOPT_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(easy, CURLOPT_PINNEDPUBLICKEY, NULL);
    curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, 60000L);
    curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, 0L);
    curl_easy_setopt(easy, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)(100 << 20));
    curl_easy_setopt(easy, CURLOPT_HTTPGET, 1L);
    curl_easy_setopt(easy, CURLOPT_CUSTOMREQUEST, NULL);
    curl_easy_setopt(easy, CURLOPT_HTTPHEADER, wattle_headers);
    curl_easy_setopt(easy, CURLOPT_WRITEDATA, b);
    curl_easy_setopt(easy, CURLOPT_HEADERDATA, &w->headers);
    curl_easy_setopt(easy, CURLOPT_PREREQDATA, &w->sends);
    curl_easy_setopt(easy, CURLOPT_NOPROGRESS, 1L);
}

/* The metrics Wattle reads after each transfer (CurlTransfer.metrics). */
static void wattle_metrics(CURL *easy) {
    curl_off_t t;
    long l;
    char *ip = NULL;
    curl_easy_getinfo(easy, CURLINFO_NAMELOOKUP_TIME_T, &t);
    curl_easy_getinfo(easy, CURLINFO_CONNECT_TIME_T, &t);
    curl_easy_getinfo(easy, CURLINFO_APPCONNECT_TIME_T, &t);
    curl_easy_getinfo(easy, CURLINFO_STARTTRANSFER_TIME_T, &t);
    curl_easy_getinfo(easy, CURLINFO_TOTAL_TIME_T, &t);
    curl_easy_getinfo(easy, CURLINFO_SIZE_UPLOAD_T, &t);
    curl_easy_getinfo(easy, CURLINFO_HTTP_VERSION, &l);
    curl_easy_getinfo(easy, CURLINFO_NUM_CONNECTS, &l);
    curl_easy_getinfo(easy, CURLINFO_PRIMARY_IP, &ip);
    curl_easy_getinfo(easy, CURLINFO_PRIMARY_PORT, &l);
}

static size_t on_file(char *ptr, size_t size, size_t nmemb, void *userdata) {
    int fd = *(int *)userdata;
    size_t n = size * nmemb, done = 0;
    while (done < n) {
        ssize_t w = write(fd, ptr + done, n - done);
        if (w <= 0) return 0;
        done += (size_t)w;
    }
    return n;
}

static long http_version(const char *v) {
    return (v && strcmp(v, "h2") == 0) ? CURL_HTTP_VERSION_2TLS : CURL_HTTP_VERSION_1_1;
}

static void common(CURL *easy, const char *url, long version, const char *cafile) {
    curl_easy_setopt(easy, CURLOPT_URL, url);
    curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(easy, CURLOPT_PROXY, "");
    curl_easy_setopt(easy, CURLOPT_HTTP_VERSION, version);
    if (cafile && *cafile) curl_easy_setopt(easy, CURLOPT_CAINFO, cafile);
}

static long rss_start = -1;

static void report(const char *mode, long requests, double seconds, double cpu_seconds, long long bytes,
                   long errors, long rss_warm, long rss_end) {
    printf("{\"tool\":\"curl\",\"mode\":\"%s\",\"requests\":%ld,\"seconds\":%.6f,\"cpu\":%.6f,"
           "\"maxrss_kb\":%ld,\"rss_start_kb\":%ld,\"bytes\":%lld,\"errors\":%ld",
           mode, requests, seconds, cpu_seconds, status_kb("VmHWM"), rss_start, bytes, errors);
    if (rss_warm >= 0) printf(",\"rss_warm_kb\":%ld,\"rss_end_kb\":%ld", rss_warm, rss_end);
    printf("}\n");
    fflush(stdout);
}

/* One transfer on a multi handle, added and removed around it, as Wattle's engine does. */
static CURLcode perform_on(CURLM *multi, CURL *easy) {
    CURLcode rc = CURLE_OK;
    int running = 0, left = 0, done = 0;
    curl_multi_add_handle(multi, easy);
    while (!done) {
        curl_multi_perform(multi, &running);
        CURLMsg *m;
        while ((m = curl_multi_info_read(multi, &left))) {
            if (m->msg == CURLMSG_DONE && m->easy_handle == easy) {
                rc = m->data.result;
                done = 1;
            }
        }
        if (!done) curl_multi_poll(multi, NULL, 0, 1000, NULL);
    }
    curl_multi_remove_handle(multi, easy);
    return rc;
}

static int one(CURL *easy, CURLM *multi, const char *url, struct body *b, struct wattle_state *w, long *errors) {
    long status = 0;
    b->size = 0;
    CURLcode rc;
    if (as_wattle) {
        wattle_transfer(easy, url, b, w);
        rc = perform_on(multi, easy);
        wattle_metrics(easy);
    } else {
        rc = curl_easy_perform(easy);
    }
    curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
    if (rc == CURLE_OK && as_wattle && w->headers.size == 0) rc = CURLE_WEIRD_SERVER_REPLY; /* no header kept */
    if (rc != CURLE_OK || status != 200 || b->size == 0) {
        if (*errors < 3) fprintf(stderr, "bench-curl: %s (status %ld)\n", curl_easy_strerror(rc), status);
        (*errors)++;
        return 0;
    }
    return 1;
}

static int run_seq(const char *url, long n, long version, const char *cafile, int flat) {
    CURL *easy = curl_easy_init();
    CURLM *multi = as_wattle ? curl_multi_init() : NULL;
    struct body b = {0};
    struct wattle_state w = {0};
    long errors = 0, rss_warm = -1;
    long long bytes = 0;
    common(easy, url, version, cafile);
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(easy, CURLOPT_WRITEDATA, &b);
    if (as_wattle) wattle_fixed(easy, &w);
    for (int i = 0; i < WARMUP; i++) one(easy, multi, url, &b, &w, &errors);
    long warm = flat ? n / 10 : 0;
    double t0 = now(), c0 = cpu();
    for (long i = 0; i < n; i++) {
        if (one(easy, multi, url, &b, &w, &errors)) bytes += (long long)b.size;
        if (flat && i + 1 == warm) rss_warm = status_kb("VmRSS");
    }
    double t1 = now(), c1 = cpu();
    report(flat ? "flat" : "seq", n, t1 - t0, c1 - c0, bytes, errors, rss_warm,
           flat ? status_kb("VmRSS") : -1);
    curl_easy_cleanup(easy);
    if (multi) curl_multi_cleanup(multi);
    free(b.data);
    free(w.headers.data);
    return errors ? 1 : 0;
}

static int run_conc(const char *url, long n, int c, long version, const char *cafile) {
    CURLM *multi = curl_multi_init();
    int h2 = version == CURL_HTTP_VERSION_2TLS;
    curl_multi_setopt(multi, CURLMOPT_PIPELINING, h2 ? CURLPIPE_MULTIPLEX : CURLPIPE_NOTHING);
    curl_multi_setopt(multi, CURLMOPT_MAXCONNECTS, (long)c);
    CURL **easy = calloc((size_t)c, sizeof *easy);
    struct body *bodies = calloc((size_t)c, sizeof *bodies);
    struct wattle_state *states = calloc((size_t)c, sizeof *states);
    for (int i = 0; i < c; i++) {
        easy[i] = curl_easy_init();
        common(easy[i], url, version, cafile);
        curl_easy_setopt(easy[i], CURLOPT_WRITEFUNCTION, on_body);
        curl_easy_setopt(easy[i], CURLOPT_WRITEDATA, &bodies[i]);
        curl_easy_setopt(easy[i], CURLOPT_PRIVATE, (void *)(long)i);
        if (h2) curl_easy_setopt(easy[i], CURLOPT_PIPEWAIT, 1L);
        if (as_wattle) wattle_fixed(easy[i], &states[i]);
    }
    long errors = 0;
    long long bytes = 0;
    double t0 = 0, c0 = 0;
    /* Phase 0: warm-up (opens the connections), phase 1: measured. */
    for (int phase = 0; phase < 2; phase++) {
        long total = phase == 0 ? WARMUP : n, started = 0, finished = 0;
        if (phase == 1) {
            t0 = now();
            c0 = cpu();
        }
        for (int i = 0; i < c && started < total; i++, started++) {
            bodies[i].size = 0;
            if (as_wattle) wattle_transfer(easy[i], url, &bodies[i], &states[i]);
            curl_multi_add_handle(multi, easy[i]);
        }
        while (finished < total) {
            int running = 0, left = 0;
            curl_multi_perform(multi, &running);
            CURLMsg *m;
            while ((m = curl_multi_info_read(multi, &left))) {
                if (m->msg != CURLMSG_DONE) continue;
                CURL *e = m->easy_handle;
                void *priv = NULL;
                long status = 0;
                curl_easy_getinfo(e, CURLINFO_PRIVATE, &priv);
                curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &status);
                int i = (int)(long)priv;
                if (as_wattle) wattle_metrics(e);
                if (m->data.result != CURLE_OK || status != 200 || bodies[i].size == 0) {
                    if (errors < 3)
                        fprintf(stderr, "bench-curl: %s (status %ld)\n", curl_easy_strerror(m->data.result), status);
                    errors++;
                } else if (phase == 1) {
                    bytes += (long long)bodies[i].size;
                }
                curl_multi_remove_handle(multi, e);
                finished++;
                if (started < total) {
                    bodies[i].size = 0;
                    if (as_wattle) wattle_transfer(e, url, &bodies[i], &states[i]);
                    curl_multi_add_handle(multi, e);
                    started++;
                }
            }
            if (finished < total) curl_multi_poll(multi, NULL, 0, 1000, NULL);
        }
    }
    double t1 = now(), c1 = cpu();
    report("conc", n, t1 - t0, c1 - c0, bytes, errors, -1, -1);
    for (int i = 0; i < c; i++) {
        curl_easy_cleanup(easy[i]);
        free(bodies[i].data);
        free(states[i].headers.data);
    }
    free(states);
    curl_multi_cleanup(multi);
    return errors ? 1 : 0;
}

static int run_download(const char *url, const char *path, long version, const char *cafile) {
    CURL *easy = curl_easy_init();
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        perror(path);
        return 1;
    }
    common(easy, url, version, cafile);
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, on_file);
    curl_easy_setopt(easy, CURLOPT_WRITEDATA, &fd);
    double t0 = now(), c0 = cpu();
    CURLcode rc = curl_easy_perform(easy);
    long status = 0;
    curl_off_t size = 0;
    curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_getinfo(easy, CURLINFO_SIZE_DOWNLOAD_T, &size);
    /* BENCH_FSYNC=1: make the file durable before closing it, and its folder's entry after,
     * as Wattle's synced download does (write to a temporary file, fsync, rename, fsync the
     * folder): the like-for-like variant of the reference. */
    const char *durable = getenv("BENCH_FSYNC");
    int syncing = durable && *durable == '1', sync_failed = 0;
    if (syncing && fsync(fd) != 0) sync_failed = 1;
    close(fd);
    if (syncing) {
        char *copy = strdup(path);
        int folder_fd = copy ? open(dirname(copy), O_RDONLY | O_DIRECTORY) : -1;
        if (folder_fd < 0 || fsync(folder_fd) != 0) sync_failed = 1;
        if (folder_fd >= 0) close(folder_fd);
        free(copy);
    }
    double t1 = now(), c1 = cpu();
    long errors = (rc != CURLE_OK || status != 200 || sync_failed) ? 1 : 0;
    if (errors) fprintf(stderr, "bench-curl: %s (status %ld)%s\n", curl_easy_strerror(rc), status,
                        sync_failed ? ", fsync failed" : "");
    report("download", 1, t1 - t0, c1 - c0, (long long)size, errors, -1, -1);
    curl_easy_cleanup(easy);
    return (int)errors;
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: bench-curl seq|flat URL N [h1|h2] [CAFILE] | conc URL N C [h1|h2] [CAFILE] | "
                        "download URL FILE [h1|h2] [CAFILE]\n");
        return 2;
    }
    rss_start = status_kb("VmRSS");
    curl_global_init(CURL_GLOBAL_ALL);
    const char *like_wattle = getenv("BENCH_AS_WATTLE");
    if (like_wattle && *like_wattle == '1') {
        as_wattle = 1;
        wattle_share = curl_share_init();
        curl_share_setopt(wattle_share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
        curl_share_setopt(wattle_share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
        char agent[96];
        snprintf(agent, sizeof agent, "User-Agent: Wattle/0.1.0 libcurl/%s", curl_version_info(CURLVERSION_NOW)->version);
        wattle_headers = curl_slist_append(wattle_headers, agent);
        /* A GET's list has no Accept line (libcurl sends its own, the same) and no "Expect:"
         * (Wattle turns 100-continue off for requests with a body only): EasyHandle.headerLines. */
        /* Wattle sends the codings libcurl decodes itself (CurlGlobal.acceptEncodingLine). */
        int features = curl_version_info(CURLVERSION_NOW)->features;
        char codings[96] = "Accept-Encoding: ";
        if (features & CURL_VERSION_LIBZ) strcat(codings, "deflate, gzip, ");
        if (features & CURL_VERSION_BROTLI) strcat(codings, "br, ");
        if (features & CURL_VERSION_ZSTD) strcat(codings, "zstd, ");
        size_t length = strlen(codings);
        if (length > 17) {
            codings[length - 2] = 0; /* the last ", " */
            wattle_headers = curl_slist_append(wattle_headers, codings);
        }
    }
    const char *mode = argv[1], *url = argv[2];
    int rc;
    if (strcmp(mode, "seq") == 0 || strcmp(mode, "flat") == 0) {
        rc = run_seq(url, atol(argv[3]), http_version(argc > 4 ? argv[4] : NULL), argc > 5 ? argv[5] : NULL,
                     strcmp(mode, "flat") == 0);
    } else if (strcmp(mode, "conc") == 0 && argc >= 5) {
        rc = run_conc(url, atol(argv[3]), atoi(argv[4]), http_version(argc > 5 ? argv[5] : NULL),
                      argc > 6 ? argv[6] : NULL);
    } else if (strcmp(mode, "download") == 0) {
        rc = run_download(url, argv[3], http_version(argc > 4 ? argv[4] : NULL), argc > 5 ? argv[5] : NULL);
    } else {
        fprintf(stderr, "bench-curl: unknown mode %s\n", mode);
        rc = 2;
    }
    curl_slist_free_all(wattle_headers);
    if (wattle_share) curl_share_cleanup(wattle_share);
    curl_global_cleanup();
    return rc;
}
