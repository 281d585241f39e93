/*
 * The limit of WattleKeychain's design, in C: the same schema, pragmas, hashes, sealing and
 * statements as Sources/WattleKeychain/Internal (SQLiteStorage, KeychainEngine+Values), with no
 * layer above them.
 *
 *   bench-keychain-c fill DIR N                 creates DIR/bench.keychain with N items (key file)
 *   bench-keychain-c rw DIR N READS UPSERTS     random reads, then random upserts, of items 0..<N
 *   bench-keychain-c open DIR keyfile|passphrase REPS
 *                                               time to open an existing keychain (created first)
 *
 * A read (Keychain.data(forKey:)): one keyed BLAKE2b hash of the identity, one point lookup by
 * blob primary key, one XChaCha20-Poly1305 open of the padded secret, unpad, copy out.
 * An upsert (Keychain.set(_:forKey:)): the identity hash; BEGIN IMMEDIATE; the point lookup and
 * an open of the existing row's attributes (the creation date is kept); the group hash only for a
 * new item (a replaced row's is reused once its attributes opened with it bound in); seal the
 * attributes and the padded secret; INSERT .. ON CONFLICT DO UPDATE; COMMIT (WAL,
 * synchronous=FULL: one fsync of the WAL per commit).
 *
 * Prints one JSON line.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sodium.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define KEY 32
#define HASH 32
#define NONCE crypto_aead_xchacha20poly1305_ietf_NPUBBYTES
#define TAG crypto_aead_xchacha20poly1305_ietf_ABYTES
#define PADBLOCK 64
#define CLASS_GENERIC 1
#define PROTECTION 0
#define SERVICE "bench"

static const char *schema =
    "CREATE TABLE IF NOT EXISTS meta(name TEXT PRIMARY KEY, value BLOB NOT NULL) WITHOUT ROWID;"
    "CREATE TABLE IF NOT EXISTS items(id BLOB PRIMARY KEY, class INTEGER NOT NULL, grp BLOB NOT NULL,"
    " protection INTEGER NOT NULL, attrs BLOB NOT NULL, secret BLOB NOT NULL) WITHOUT ROWID;"
    "CREATE INDEX IF NOT EXISTS items_grp ON items(grp);"
    "CREATE INDEX IF NOT EXISTS items_class ON items(class);"
    "PRAGMA user_version = 1;";

#define COLUMNS "id, class, grp, protection, attrs, secret"
/* Every statement SQLiteStorage prepares, each when first used (see statement()). */
static const char *statements[] = {
    "SELECT " COLUMNS " FROM items WHERE id = ?1",
    "INSERT INTO items(" COLUMNS ") VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT(id) DO UPDATE SET class = ?2,"
    " grp = ?3, protection = ?4, attrs = ?5, secret = ?6",
    "BEGIN IMMEDIATE",
    "COMMIT",
    "SELECT " COLUMNS " FROM items WHERE class = ?1",
    "SELECT " COLUMNS " FROM items WHERE grp = ?1 AND class = ?2",
    "SELECT " COLUMNS " FROM items WHERE grp IN (?1, ?2) AND class = ?3",
    "SELECT " COLUMNS " FROM items",
    "INSERT INTO items(" COLUMNS ") VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    "DELETE FROM items WHERE id = ?1",
    "SELECT name, value FROM meta",
    "INSERT OR REPLACE INTO meta(name, value) VALUES (?1, ?2)",
    "ROLLBACK",
};
#define NSTATEMENTS (sizeof statements / sizeof *statements)
enum { SELECT_ID, UPSERT, BEGIN, COMMIT };

struct keychain {
    sqlite3 *db;
    sqlite3_stmt *stmt[NSTATEMENTS];
    unsigned char master[KEY], identity[KEY], group[KEY], attributes[KEY], afu[KEY], wu[KEY];
    unsigned char keychain_id[16];
};

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void die(const char *what, sqlite3 *db) {
    fprintf(stderr, "bench-keychain-c: %s: %s\n", what, db ? sqlite3_errmsg(db) : "failed");
    exit(1);
}

/* Statement I, prepared on first use, as SQLiteStorage does. */
static sqlite3_stmt *statement(struct keychain *k, int i) {
    if (!k->stmt[i] &&
        sqlite3_prepare_v3(k->db, statements[i], -1, SQLITE_PREPARE_PERSISTENT, &k->stmt[i], NULL) != SQLITE_OK)
        die(statements[i], k->db);
    return k->stmt[i];
}

static void exec(sqlite3 *db, const char *sql) {
    char *error = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &error) != SQLITE_OK) die(error ? error : sql, NULL);
}

static void run(sqlite3 *db, sqlite3_stmt *s) {
    int rc = sqlite3_step(s);
    if (rc != SQLITE_DONE && rc != SQLITE_ROW) die("step", db);
    sqlite3_reset(s);
}

static void le32(unsigned char *p, uint32_t v) {
    p[0] = v;
    p[1] = v >> 8;
    p[2] = v >> 16;
    p[3] = v >> 24;
}

static size_t field(unsigned char *out, unsigned char tag, const void *bytes, size_t n) {
    out[0] = tag;
    le32(out + 1, (uint32_t)n);
    memcpy(out + 5, bytes, n);
    return 5 + n;
}

/* The identity hash of a generic password (class, account, service, access group, sync). */
static void identity_hash(struct keychain *k, const char *account, unsigned char out[HASH]) {
    unsigned char input[256];
    size_t n = 0;
    input[n++] = 0x49;
    input[n++] = CLASS_GENERIC;
    n += field(input + n, 1, account, strlen(account));
    n += field(input + n, 2, SERVICE, strlen(SERVICE));
    n += field(input + n, 3, "", 0);
    input[n++] = 0;
    crypto_generichash(out, HASH, input, n, k->identity, KEY);
}

static void group_hash(struct keychain *k, unsigned char out[HASH]) {
    unsigned char input[64];
    size_t n = 0;
    input[n++] = 0x47;
    input[n++] = CLASS_GENERIC;
    le32(input + n, (uint32_t)strlen(SERVICE));
    n += 4;
    memcpy(input + n, SERVICE, strlen(SERVICE));
    n += strlen(SERVICE);
    input[n++] = 0;
    crypto_generichash(out, HASH, input, n, k->group, KEY);
}

/* Associated data binding a blob to its row. */
static size_t associated(struct keychain *k, unsigned char kind, const unsigned char *id, const unsigned char *grp,
                         unsigned char *ad) {
    size_t n = 0;
    ad[n++] = 0x57;
    ad[n++] = 0x4B;
    ad[n++] = 0x43;
    ad[n++] = 1;
    memcpy(ad + n, k->keychain_id, 16);
    n += 16;
    le32(ad + n, 1);
    n += 4;
    ad[n++] = CLASS_GENERIC;
    ad[n++] = PROTECTION;
    ad[n++] = kind;
    memcpy(ad + n, id, HASH);
    n += HASH;
    memcpy(ad + n, grp, HASH);
    n += HASH;
    return n;
}

static size_t seal(const unsigned char *msg, size_t n, const unsigned char *ad, size_t adn, const unsigned char *key,
                   unsigned char *out) {
    unsigned long long written = 0;
    randombytes_buf(out, NONCE);
    crypto_aead_xchacha20poly1305_ietf_encrypt(out + NONCE, &written, msg, n, ad, adn, NULL, out, key);
    return NONCE + (size_t)written;
}

static int open_blob(const unsigned char *blob, size_t n, const unsigned char *ad, size_t adn, const unsigned char *key,
                     unsigned char *out) {
    unsigned long long written = 0;
    if (n < NONCE + TAG) return -1;
    return crypto_aead_xchacha20poly1305_ietf_decrypt(out, &written, NULL, blob + NONCE, n - NONCE, ad, adn, blob,
                                                      key);
}

/* The attributes plaintext: version, accessibility, sync, account, service, group, dates. */
static size_t encode_attributes(const char *account, double created, double modified, unsigned char *out) {
    size_t n = 0;
    out[n++] = 1;
    out[n++] = 1;
    out[n++] = 0;
    n += field(out + n, 1, account, strlen(account));
    n += field(out + n, 2, SERVICE, strlen(SERVICE));
    n += field(out + n, 3, "", 0);
    n += field(out + n, 27, &created, 8);
    n += field(out + n, 28, &modified, 8);
    return n;
}

/* Seals an item into its row and upserts it (no transaction of its own). `known_grp` is the group
 * hash of the row being replaced, whose attributes opened with it bound in (NULL: compute it). */
static void put(struct keychain *k, const char *account, const char *value, const unsigned char id[HASH],
                double created, const unsigned char *known_grp) {
    unsigned char grp[HASH], ad[128], plain[256], sealed_attrs[512], padded[256], sealed_secret[512];
    if (known_grp)
        memcpy(grp, known_grp, HASH);
    else
        group_hash(k, grp);
    size_t an = encode_attributes(account, created, (double)time(NULL), plain);
    size_t adn = associated(k, 0x41, id, grp, ad);
    size_t sa = seal(plain, an, ad, adn, k->attributes, sealed_attrs);
    size_t vn = strlen(value), cap = (vn / PADBLOCK + 1) * PADBLOCK, padded_n = 0;
    memset(padded, 0, cap);
    memcpy(padded, value, vn);
    sodium_pad(&padded_n, padded, vn, PADBLOCK, cap);
    adn = associated(k, 0x53, id, grp, ad);
    size_t ss = seal(padded, cap, ad, adn, k->afu, sealed_secret);
    sodium_memzero(padded, cap);
    sodium_memzero(plain, an);
    sqlite3_stmt *s = statement(k, UPSERT);
    sqlite3_bind_blob(s, 1, id, HASH, SQLITE_STATIC);
    sqlite3_bind_int(s, 2, CLASS_GENERIC);
    sqlite3_bind_blob(s, 3, grp, HASH, SQLITE_STATIC);
    sqlite3_bind_int(s, 4, PROTECTION);
    sqlite3_bind_blob(s, 5, sealed_attrs, (int)sa, SQLITE_STATIC);
    sqlite3_bind_blob(s, 6, sealed_secret, (int)ss, SQLITE_STATIC);
    run(k->db, s);
}

/* Keychain.data(forKey:): returns the secret (malloc'd) or NULL. */
static unsigned char *get(struct keychain *k, const char *account, size_t *length) {
    unsigned char id[HASH], ad[128];
    identity_hash(k, account, id);
    sqlite3_stmt *s = statement(k, SELECT_ID);
    sqlite3_bind_blob(s, 1, id, HASH, SQLITE_STATIC);
    unsigned char *result = NULL;
    if (sqlite3_step(s) == SQLITE_ROW) {
        /* The row's blobs, copied out as the store does. */
        int gn = sqlite3_column_bytes(s, 2), sn = sqlite3_column_bytes(s, 5);
        unsigned char grp[HASH], *secret = malloc((size_t)sn);
        memcpy(grp, sqlite3_column_blob(s, 2), gn < HASH ? (size_t)gn : HASH);
        memcpy(secret, sqlite3_column_blob(s, 5), (size_t)sn);
        sqlite3_reset(s);
        size_t count = (size_t)sn - NONCE - TAG, unpadded = 0;
        unsigned char *plain = malloc(count);
        size_t adn = associated(k, 0x53, id, grp, ad);
        if (open_blob(secret, (size_t)sn, ad, adn, k->afu, plain) == 0 &&
            sodium_unpad(&unpadded, plain, count, PADBLOCK) == 0) {
            result = malloc(unpadded ? unpadded : 1);
            memcpy(result, plain, unpadded);
            *length = unpadded;
        }
        sodium_memzero(plain, count);
        free(plain);
        free(secret);
    } else {
        sqlite3_reset(s);
    }
    return result;
}

/* Keychain.set(_:forKey:). */
static void set(struct keychain *k, const char *account, const char *value) {
    unsigned char id[HASH], ad[128], plain[512];
    double created = (double)time(NULL);
    identity_hash(k, account, id);
    run(k->db, statement(k, BEGIN));
    sqlite3_stmt *s = statement(k, SELECT_ID);
    sqlite3_bind_blob(s, 1, id, HASH, SQLITE_STATIC);
    unsigned char grp[HASH];
    int opened = 0;
    if (sqlite3_step(s) == SQLITE_ROW) {
        int an = sqlite3_column_bytes(s, 4);
        if (sqlite3_column_bytes(s, 2) == HASH) memcpy(grp, sqlite3_column_blob(s, 2), HASH);
        if (sqlite3_column_bytes(s, 2) == HASH && an >= (int)(NONCE + TAG) &&
            an - (int)(NONCE + TAG) <= (int)sizeof plain) {
            size_t adn = associated(k, 0x41, id, grp, ad);
            if (open_blob(sqlite3_column_blob(s, 4), (size_t)an, ad, adn, k->attributes, plain) == 0) {
                memcpy(&created, plain + an - NONCE - TAG - 21, 8); /* the creation date field */
                opened = 1;
            }
        }
    }
    sqlite3_reset(s);
    put(k, account, value, id, created, opened ? grp : NULL);
    run(k->db, statement(k, COMMIT));
}

static int read_key_file(const char *path, unsigned char key[KEY]) {
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || st.st_size != KEY || read(fd, key, KEY) != KEY) return -1;
    close(fd);
    return 0;
}

static void meta_put(sqlite3 *db, const char *name, const void *value, int n) {
    sqlite3_stmt *s;
    sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO meta(name, value) VALUES (?1, ?2)", -1, &s, NULL);
    sqlite3_bind_text(s, 1, name, -1, SQLITE_STATIC);
    sqlite3_bind_blob(s, 2, value, n, SQLITE_STATIC);
    run(db, s);
    sqlite3_finalize(s);
}

/* Opens (creating when missing) DIR/NAME.keychain with a key file or a passphrase, as
 * KeychainStore(fileURL:credential:) does: open, WAL, synchronous=FULL, the schema in BEGIN
 * IMMEDIATE when user_version says it is missing, read the header (written in BEGIN IMMEDIATE
 * when missing), derive the wrapping key, unwrap, derive the subkeys; statements are prepared
 * on first use. */
static void open_keychain(struct keychain *k, const char *dir, const char *name, int passphrase) {
    char path[4096], keypath[4096];
    snprintf(path, sizeof path, "%s/%s.keychain", dir, name);
    snprintf(keypath, sizeof keypath, "%s/%s.key", dir, name);
    memset(k, 0, sizeof *k);
    int fd = open(path, O_CREAT | O_RDWR, 0600);
    if (fd >= 0) close(fd);
    if (sqlite3_open_v2(path, &k->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL) !=
        SQLITE_OK)
        die("open", k->db);
    sqlite3_busy_timeout(k->db, 5000);
    exec(k->db, "PRAGMA journal_mode=WAL");
    exec(k->db, "PRAGMA synchronous=FULL");
    /* As WattleKeychain: what a write replaces is zeroed in its page. */
    exec(k->db, "PRAGMA secure_delete=FAST");
    /* The schema once (its transaction sets user_version); then no write lock to open. */
    sqlite3_stmt *version;
    if (sqlite3_prepare_v2(k->db, "PRAGMA user_version", -1, &version, NULL) != SQLITE_OK) die("user_version", k->db);
    int has_schema = sqlite3_step(version) == SQLITE_ROW && sqlite3_column_int(version, 0) == 1;
    sqlite3_finalize(version);
    if (!has_schema) {
        exec(k->db, "BEGIN IMMEDIATE");
        exec(k->db, schema);
        exec(k->db, "COMMIT");
    }
    /* The header, read without a transaction; only creating it takes one. */
    unsigned char wrapped[NONCE + KEY + TAG], salt[crypto_pwhash_SALTBYTES];
    int have = 0, have_salt = 0;
    sqlite3_stmt *s = statement(k, 10);
    while (sqlite3_step(s) == SQLITE_ROW) {
        const char *n = (const char *)sqlite3_column_text(s, 0);
        int len = sqlite3_column_bytes(s, 1);
        if (strcmp(n, "wrapped_key") == 0 && len == (int)sizeof wrapped) {
            memcpy(wrapped, sqlite3_column_blob(s, 1), sizeof wrapped);
            have = 1;
        } else if (strcmp(n, "keychain_id") == 0 && len == 16) {
            memcpy(k->keychain_id, sqlite3_column_blob(s, 1), 16);
        } else if (strcmp(n, "salt") == 0 && len == (int)sizeof salt) {
            memcpy(salt, sqlite3_column_blob(s, 1), sizeof salt);
            have_salt = 1;
        }
    }
    sqlite3_reset(s);
    unsigned char *wrapping = sodium_malloc(KEY);
    if (!have) {
        /* KeychainEngine.open reads the header again inside this transaction, for processes
         * racing to create it; the benchmark's one process creates it once, outside the timing. */
        exec(k->db, "BEGIN IMMEDIATE");
        randombytes_buf(k->keychain_id, 16);
        randombytes_buf(salt, sizeof salt);
        meta_put(k->db, "keychain_id", k->keychain_id, 16);
        if (passphrase) meta_put(k->db, "salt", salt, sizeof salt);
        have_salt = passphrase;
        if (!passphrase && access(keypath, F_OK) != 0) {
            unsigned char fresh[KEY];
            randombytes_buf(fresh, KEY);
            int kf = open(keypath, O_CREAT | O_EXCL | O_WRONLY, 0600);
            if (kf < 0 || write(kf, fresh, KEY) != KEY || fsync(kf) != 0) die("key file", NULL);
            close(kf);
        }
    }
    if (passphrase) {
        const char *pass = "correct horse battery staple";
        if (!have_salt ||
            crypto_pwhash(wrapping, KEY, pass, strlen(pass), salt, crypto_pwhash_opslimit_interactive(),
                          crypto_pwhash_memlimit_interactive(), crypto_pwhash_ALG_ARGON2ID13) != 0)
            die("pwhash", NULL);
    } else if (read_key_file(keypath, wrapping) != 0) {
        die("key file", NULL);
    }
    unsigned char *master = sodium_malloc(KEY);
    unsigned char ad[20] = {0x57, 0x4B, 0x43, 1};
    memcpy(ad + 4, k->keychain_id, 16);
    if (!have) {
        randombytes_buf(master, KEY);
        seal(master, KEY, ad, sizeof ad, wrapping, wrapped);
        meta_put(k->db, "wrapped_key", wrapped, sizeof wrapped);
        exec(k->db, "COMMIT");
    } else if (open_blob(wrapped, sizeof wrapped, ad, sizeof ad, wrapping, master) != 0) {
        die("wrong credential", NULL);
    }
    memcpy(k->master, master, KEY);
    crypto_kdf_derive_from_key(k->identity, KEY, 1, "WattleKC", master);
    crypto_kdf_derive_from_key(k->group, KEY, 2, "WattleKC", master);
    crypto_kdf_derive_from_key(k->attributes, KEY, 3, "WattleKC", master);
    crypto_kdf_derive_from_key(k->afu, KEY, 4, "WattleKC", master);
    crypto_kdf_derive_from_key(k->wu, KEY, 5, "WattleKC", master);
    sodium_free(master);
    sodium_free(wrapping);
}

static void close_keychain(struct keychain *k) {
    for (size_t i = 0; i < NSTATEMENTS; i++) sqlite3_finalize(k->stmt[i]);
    sqlite3_close(k->db);
    sodium_memzero(k->master, KEY * 6);
}

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t next(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static int compare(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double percentile(double *sorted, long n, double fraction) {
    long i = (long)((double)n * fraction);
    if (i > n - 1) i = n - 1;
    return sorted[i];
}

int main(int argc, char **argv) {
    if (argc < 4 || sodium_init() < 0) {
        fprintf(stderr, "usage: bench-keychain-c fill DIR N | rw DIR N READS UPSERTS | open DIR keyfile|passphrase REPS\n");
        return 2;
    }
    const char *mode = argv[1], *dir = argv[2];
    mkdir(dir, 0700);
    struct keychain k;
    char account[64], value[96];
    if (strcmp(mode, "fill") == 0) {
        long n = atol(argv[3]);
        open_keychain(&k, dir, "bench", 0);
        double t0 = now();
        for (long i = 0; i < n; i += 1000) {
            run(k.db, statement(&k, BEGIN));
            for (long j = i; j < n && j < i + 1000; j++) {
                unsigned char id[HASH];
                snprintf(account, sizeof account, "key-%ld", j);
                snprintf(value, sizeof value, "token-value-%ld-0123456789abcdef", j);
                identity_hash(&k, account, id);
                put(&k, account, value, id, (double)time(NULL), NULL);
            }
            run(k.db, statement(&k, COMMIT));
        }
        printf("{\"tool\":\"c\",\"mode\":\"fill\",\"items\":%ld,\"seconds\":%.3f}\n", n, now() - t0);
        close_keychain(&k);
        return 0;
    }
    if (strcmp(mode, "rw") == 0 && argc >= 6) {
        long n = atol(argv[3]), reads = atol(argv[4]), upserts = atol(argv[5]);
        rng ^= (uint64_t)getpid() * 0x2545F4914F6CDD1Dull;
        open_keychain(&k, dir, "bench", 0);
        double *r = malloc(sizeof(double) * (size_t)(reads ? reads : 1));
        double *u = malloc(sizeof(double) * (size_t)(upserts ? upserts : 1));
        for (long i = 0; i < reads; i++) {
            snprintf(account, sizeof account, "key-%lu", (unsigned long)(next() % (uint64_t)n));
            size_t length = 0;
            double t0 = now();
            unsigned char *secret = get(&k, account, &length);
            r[i] = (now() - t0) * 1e6;
            if (!secret) {
                fprintf(stderr, "bench-keychain-c: missing %s\n", account);
                return 1;
            }
            free(secret);
        }
        for (long i = 0; i < upserts; i++) {
            snprintf(account, sizeof account, "key-%lu", (unsigned long)(next() % (uint64_t)n));
            double t0 = now();
            set(&k, account, "token-value-updated");
            u[i] = (now() - t0) * 1e6;
        }
        qsort(r, (size_t)reads, sizeof *r, compare);
        qsort(u, (size_t)upserts, sizeof *u, compare);
        printf("{\"tool\":\"c\",\"mode\":\"rw\",\"items\":%ld,\"reads\":%ld,\"upserts\":%ld,"
               "\"read_p50_us\":%.2f,\"read_p99_us\":%.2f,\"upsert_p50_us\":%.2f,\"upsert_p99_us\":%.2f}\n",
               n, reads, upserts, reads ? percentile(r, reads, 0.5) : 0, reads ? percentile(r, reads, 0.99) : 0,
               upserts ? percentile(u, upserts, 0.5) : 0, upserts ? percentile(u, upserts, 0.99) : 0);
        close_keychain(&k);
        return 0;
    }
    if (strcmp(mode, "open") == 0 && argc >= 5) {
        int passphrase = strcmp(argv[3], "passphrase") == 0;
        long reps = atol(argv[4]);
        const char *name = passphrase ? "open-passphrase" : "open-keyfile";
        open_keychain(&k, dir, name, passphrase); /* creates it */
        close_keychain(&k);
        double *t = malloc(sizeof(double) * (size_t)reps);
        for (long i = 0; i < reps; i++) {
            double t0 = now();
            open_keychain(&k, dir, name, passphrase);
            t[i] = (now() - t0) * 1e6;
            close_keychain(&k);
        }
        qsort(t, (size_t)reps, sizeof *t, compare);
        printf("{\"tool\":\"c\",\"mode\":\"open\",\"credential\":\"%s\",\"reps\":%ld,\"open_p50_us\":%.1f,"
               "\"open_min_us\":%.1f}\n",
               argv[3], reps, percentile(t, reps, 0.5), t[0]);
        return 0;
    }
    fprintf(stderr, "bench-keychain-c: bad arguments\n");
    return 2;
}
