/*
 * Raw libcurl: the practical limit the Swift clients are measured against.
 *
 *   bench-curl seq      URL N [h1|h2] [CAFILE]   one easy handle reused: N sequential GETs
 *   bench-curl conc     URL N C [h1|h2] [CAFILE] multi handle, C transfers in flight
 *                                                (h1: a pool of C connections; h2: one
 *                                                multiplexed connection, PIPEWAIT)
 *   bench-curl download URL FILE [h1|h2] [CAFILE] streams the body to FILE (BENCH_FSYNC=1: and
 *                                                fsyncs it before closing, as Wattle does)
 *   bench-curl flat     URL N [h1|h2] [CAFILE]   like seq; reports RSS after warm-up and at end
 *
 * Prints one JSON line: requests, seconds (wall, after warm-up), cpu (user+sys seconds over the
 * same span, getrusage), maxrss_kb (VmHWM), bytes, errors.
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

static int one(CURL *easy, struct body *b, long *errors) {
    long status = 0;
    b->size = 0;
    CURLcode rc = curl_easy_perform(easy);
    curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
    if (rc != CURLE_OK || status != 200 || b->size == 0) {
        if (*errors < 3) fprintf(stderr, "bench-curl: %s (status %ld)\n", curl_easy_strerror(rc), status);
        (*errors)++;
        return 0;
    }
    return 1;
}

static int run_seq(const char *url, long n, long version, const char *cafile, int flat) {
    CURL *easy = curl_easy_init();
    struct body b = {0};
    long errors = 0, rss_warm = -1;
    long long bytes = 0;
    common(easy, url, version, cafile);
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(easy, CURLOPT_WRITEDATA, &b);
    for (int i = 0; i < WARMUP; i++) one(easy, &b, &errors);
    long warm = flat ? n / 10 : 0;
    double t0 = now(), c0 = cpu();
    for (long i = 0; i < n; i++) {
        if (one(easy, &b, &errors)) bytes += (long long)b.size;
        if (flat && i + 1 == warm) rss_warm = status_kb("VmRSS");
    }
    double t1 = now(), c1 = cpu();
    report(flat ? "flat" : "seq", n, t1 - t0, c1 - c0, bytes, errors, rss_warm,
           flat ? status_kb("VmRSS") : -1);
    curl_easy_cleanup(easy);
    free(b.data);
    return errors ? 1 : 0;
}

static int run_conc(const char *url, long n, int c, long version, const char *cafile) {
    CURLM *multi = curl_multi_init();
    int h2 = version == CURL_HTTP_VERSION_2TLS;
    curl_multi_setopt(multi, CURLMOPT_PIPELINING, h2 ? CURLPIPE_MULTIPLEX : CURLPIPE_NOTHING);
    curl_multi_setopt(multi, CURLMOPT_MAXCONNECTS, (long)c);
    CURL **easy = calloc((size_t)c, sizeof *easy);
    struct body *bodies = calloc((size_t)c, sizeof *bodies);
    for (int i = 0; i < c; i++) {
        easy[i] = curl_easy_init();
        common(easy[i], url, version, cafile);
        curl_easy_setopt(easy[i], CURLOPT_WRITEFUNCTION, on_body);
        curl_easy_setopt(easy[i], CURLOPT_WRITEDATA, &bodies[i]);
        curl_easy_setopt(easy[i], CURLOPT_PRIVATE, (void *)(long)i);
        if (h2) curl_easy_setopt(easy[i], CURLOPT_PIPEWAIT, 1L);
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
    }
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
    /* BENCH_FSYNC=1: make the file durable before closing it, as Wattle's download does
     * (write to a temporary file, fsync, rename): the like-for-like variant of the reference. */
    const char *durable = getenv("BENCH_FSYNC");
    if (durable && *durable == '1') fsync(fd);
    close(fd);
    double t1 = now(), c1 = cpu();
    long errors = (rc != CURLE_OK || status != 200) ? 1 : 0;
    if (errors) fprintf(stderr, "bench-curl: %s (status %ld)\n", curl_easy_strerror(rc), status);
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
    curl_global_cleanup();
    return rc;
}
