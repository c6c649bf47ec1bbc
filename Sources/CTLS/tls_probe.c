#define _GNU_SOURCE
#include "tls_probe.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

// libssl and libcrypto are loaded on the first https request, not linked: a daemon without https
// checks maps none of them (linked, they cost it 1.3 MiB of resident memory at idle). The headers
// give the types; every call goes through this table.
static struct {
    const SSL_METHOD *(*TLS_client_method)(void);
    SSL_CTX *(*SSL_CTX_new)(const SSL_METHOD *);
    long (*SSL_CTX_ctrl)(SSL_CTX *, int, long, void *);
    X509_STORE *(*SSL_CTX_get_cert_store)(const SSL_CTX *);
    uint64_t (*SSL_CTX_set_options)(SSL_CTX *, uint64_t);
    int (*SSL_CTX_set_default_verify_paths)(SSL_CTX *);
    int (*SSL_CTX_use_certificate_chain_file)(SSL_CTX *, const char *);
    int (*SSL_CTX_use_PrivateKey_file)(SSL_CTX *, const char *, int);
    void (*SSL_CTX_set_verify)(SSL_CTX *, int, SSL_verify_cb);
    void (*SSL_CTX_free)(SSL_CTX *);
    SSL *(*SSL_new)(SSL_CTX *);
    long (*SSL_ctrl)(SSL *, int, long, void *);
    int (*SSL_set1_host)(SSL *, const char *);
    int (*SSL_set_fd)(SSL *, int);
    int (*SSL_connect)(SSL *);
    int (*SSL_get_error)(const SSL *, int);
    const char *(*SSL_get_version)(const SSL *);
    long (*SSL_get_verify_result)(const SSL *);
    X509 *(*SSL_get1_peer_certificate)(const SSL *);
    STACK_OF(X509) *(*SSL_get_peer_cert_chain)(const SSL *);
    int (*SSL_write)(SSL *, const void *, int);
    int (*SSL_read)(SSL *, void *, int);
    int (*SSL_shutdown)(SSL *);
    void (*SSL_free)(SSL *);
    const char *(*X509_verify_cert_error_string)(long);
    const ASN1_TIME *(*X509_get0_notAfter)(const X509 *);
    void (*X509_free)(X509 *);
    int (*OPENSSL_sk_num)(const OPENSSL_STACK *);
    void *(*OPENSSL_sk_value)(const OPENSSL_STACK *, int);
    int (*ASN1_TIME_to_tm)(const ASN1_TIME *, struct tm *);
    BIO *(*BIO_new_mem_buf)(const void *, int);
    int (*BIO_free)(BIO *);
    X509 *(*PEM_read_bio_X509)(BIO *, X509 **, pem_password_cb *, void *);
    int (*X509_STORE_add_cert)(X509_STORE *, X509 *);
    void (*ERR_clear_error)(void);
    unsigned long (*ERR_get_error)(void);
    unsigned long (*ERR_peek_error)(void);
    void (*ERR_error_string_n)(unsigned long, char *, size_t);
} L;
// Why OpenSSL could not be loaded (empty when it was); set once, by `load`.
static char load_error[160];
static pthread_once_t loaded = PTHREAD_ONCE_INIT;

// Fills `L` from Debian's libssl.so.3 and libcrypto.so.3 (run once, by the first context), or says
// in `load_error` which library or symbol is missing: a check then fails with that reason.
static void load(void) {
    void *ssl = dlopen("libssl.so.3", RTLD_NOW | RTLD_LOCAL);
    void *crypto = dlopen("libcrypto.so.3", RTLD_NOW | RTLD_LOCAL);
    if (!ssl || !crypto) {
        snprintf(load_error, sizeof load_error, "cannot load OpenSSL 3 (libssl.so.3): %s", dlerror());
        return;
    }
#define FROM(library, name) \
    if (!(*(void **)&L.name = dlsym(library, #name))) { snprintf(load_error, sizeof load_error, "OpenSSL has no %s", #name); return; }
    FROM(ssl, TLS_client_method) FROM(ssl, SSL_CTX_new) FROM(ssl, SSL_CTX_ctrl) FROM(ssl, SSL_CTX_get_cert_store) FROM(ssl, SSL_CTX_set_options)
    FROM(ssl, SSL_CTX_set_default_verify_paths) FROM(ssl, SSL_CTX_use_certificate_chain_file) FROM(ssl, SSL_CTX_use_PrivateKey_file)
    FROM(ssl, SSL_CTX_set_verify) FROM(ssl, SSL_CTX_free) FROM(ssl, SSL_new) FROM(ssl, SSL_ctrl) FROM(ssl, SSL_set1_host)
    FROM(ssl, SSL_set_fd) FROM(ssl, SSL_connect) FROM(ssl, SSL_get_error) FROM(ssl, SSL_get_version) FROM(ssl, SSL_get_verify_result)
    FROM(ssl, SSL_get1_peer_certificate) FROM(ssl, SSL_get_peer_cert_chain) FROM(ssl, SSL_write) FROM(ssl, SSL_read)
    FROM(ssl, SSL_shutdown) FROM(ssl, SSL_free)
    FROM(crypto, X509_verify_cert_error_string) FROM(crypto, X509_get0_notAfter) FROM(crypto, X509_free) FROM(crypto, OPENSSL_sk_num)
    FROM(crypto, OPENSSL_sk_value) FROM(crypto, ASN1_TIME_to_tm) FROM(crypto, BIO_new_mem_buf) FROM(crypto, BIO_free) FROM(crypto, PEM_read_bio_X509)
    FROM(crypto, X509_STORE_add_cert) FROM(crypto, ERR_clear_error) FROM(crypto, ERR_get_error) FROM(crypto, ERR_peek_error)
    FROM(crypto, ERR_error_string_n)
#undef FROM
}

// Milliseconds on the monotonic clock: deadlines do not move with the wall clock.
static long long now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

// Waits until `fd` is ready for `events` or `deadline` passes: 1 when ready, 0 otherwise. Every
// socket is non-blocking, so this is the only place a request waits, and never past its deadline.
static int wait_for(int fd, short events, long long deadline) {
    long long left = deadline - now_ms();
    if (left <= 0) return 0;
    struct pollfd p = {.fd = fd, .events = events};
    int r = poll(&p, 1, (int)left);
    return r > 0;
}

// `what`, and the first error OpenSSL queued for this call (each call starts with an empty queue,
// so the reason is never another call's).
static void ssl_error_text(char *out, size_t capacity, const char *what) {
    unsigned long code = L.ERR_get_error();
    if (code) {
        char text[160];
        L.ERR_error_string_n(code, text, sizeof text);
        snprintf(out, capacity, "%s: %s", what, text);
    } else {
        snprintf(out, capacity, "%s", what);
    }
    L.ERR_clear_error();
}

// `ssl_error_text` into a result's error.
static void ssl_error(weave_tls_result *result, const char *what) { ssl_error_text(result->error, sizeof result->error, what); }

// The seconds since the epoch of an ASN.1 time, any date (before 1970 too); 0 when it has none.
static int asn1_seconds(const ASN1_TIME *time, double *seconds) {
    struct tm parts;
    if (!time || L.ASN1_TIME_to_tm(time, &parts) != 1) return 0;
    *seconds = (double)timegm(&parts);
    return 1;
}

// Keeps the earlier of the result's expiry and `certificate`'s notAfter.
static void note_expiry(weave_tls_result *result, const X509 *certificate) {
    double expiry;
    if (!certificate || !asn1_seconds(L.X509_get0_notAfter(certificate), &expiry)) return;
    if (!result->has_expiry || expiry < result->earliest_expiry) result->earliest_expiry = expiry;
    result->has_expiry = 1;
}

// One check's TLS settings (CAs, client certificate), made once and used by each of its requests.
struct weave_tls_context {
    SSL_CTX *ssl;
};

weave_tls_context *weave_tls_context_new(const unsigned char *ca_pem, size_t ca_length, const char *client_cert,
                                         const char *client_key, char *error, size_t error_capacity) {
    pthread_once(&loaded, load);
    if (load_error[0]) {
        snprintf(error, error_capacity, "%s", load_error);
        return NULL;
    }
    L.ERR_clear_error();
    SSL_CTX *ssl = L.SSL_CTX_new(L.TLS_client_method());
    if (!ssl) {
        ssl_error_text(error, error_capacity, "cannot make a TLS context");
        return NULL;
    }
    // Any version the server offers from TLS 1.0 up: the version used is reported, not refused.
    L.SSL_CTX_ctrl(ssl, SSL_CTRL_SET_MIN_PROTO_VERSION, TLS1_VERSION, NULL);
    // A peer that closes the connection without close_notify after a complete answer has answered
    // (curl and browsers agree); OpenSSL 3 would call it "unexpected eof while reading".
    L.SSL_CTX_set_options(ssl, SSL_OP_IGNORE_UNEXPECTED_EOF);
    // The check's own CAs (its ca_file's PEM text), else the system's store.
    if (ca_pem) {
        BIO *bio = L.BIO_new_mem_buf(ca_pem, (int)ca_length);
        X509_STORE *store = L.SSL_CTX_get_cert_store(ssl);
        int added = 0;
        X509 *certificate;
        while (bio && (certificate = L.PEM_read_bio_X509(bio, NULL, NULL, NULL))) {
            added += L.X509_STORE_add_cert(store, certificate) == 1;
            L.X509_free(certificate);
        }
        if (bio) L.BIO_free(bio);
        L.ERR_clear_error(); // the end of the PEM text is reported as an error
        if (added == 0) {
            snprintf(error, error_capacity, "the CA file holds no PEM certificate OpenSSL can read");
            L.SSL_CTX_free(ssl);
            return NULL;
        }
    } else if (L.SSL_CTX_set_default_verify_paths(ssl) != 1) {
        ssl_error_text(error, error_capacity, "cannot load the system's CA certificates");
        L.SSL_CTX_free(ssl);
        return NULL;
    }
    if (client_cert && (L.SSL_CTX_use_certificate_chain_file(ssl, client_cert) != 1
                        || L.SSL_CTX_use_PrivateKey_file(ssl, client_key, SSL_FILETYPE_PEM) != 1)) {
        ssl_error_text(error, error_capacity, "cannot load the client certificate");
        L.SSL_CTX_free(ssl);
        return NULL;
    }
    // The handshake completes whatever the chain says: the verdict is read afterwards, so an expired
    // or mismatched certificate is reported with its dates rather than as a failed connection.
    L.SSL_CTX_set_verify(ssl, SSL_VERIFY_NONE, NULL);
    weave_tls_context *context = malloc(sizeof *context);
    if (!context) {
        L.SSL_CTX_free(ssl);
        snprintf(error, error_capacity, "out of memory");
        return NULL;
    }
    context->ssl = ssl;
    return context;
}

void weave_tls_context_free(weave_tls_context *context) {
    if (!context) return;
    L.SSL_CTX_free(context->ssl);
    free(context);
}

// A connected non-blocking TCP socket to `host`:`port`, trying each address in turn, or -1 with the
// reason in `result`. getaddrinfo itself can block: the daemon calls this on its blocking-call
// threads, never where requests are served.
static int connect_within(const char *host, int port, long long deadline, weave_tls_result *result) {
    char service[8];
    snprintf(service, sizeof service, "%d", port);
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *found = NULL;
    int code = getaddrinfo(host, service, &hints, &found);
    if (code != 0) {
        snprintf(result->error, sizeof result->error, "cannot resolve %s: %s", host, gai_strerror(code));
        return -1;
    }
    int fd = -1;
    for (struct addrinfo *a = found; a; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0) continue;
        if (connect(fd, a->ai_addr, a->ai_addrlen) == 0) break;
        if (errno == EINPROGRESS && wait_for(fd, POLLOUT, deadline)) {
            int error = 0;
            socklen_t length = sizeof error;
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length);
            if (error == 0) break;
            errno = error;
        } else if (errno == EINPROGRESS) {
            errno = ETIMEDOUT;
        }
        snprintf(result->error, sizeof result->error, "cannot connect to %s:%d: %s", host, port, strerror(errno));
        close(fd);
        fd = -1;
    }
    freeaddrinfo(found);
    return fd;
}

// After an SSL call returned `status`: waits for what it wants (1: call it again), or says it timed
// out (0) or failed (-1).
static int drive(SSL *ssl, int fd, int status, long long deadline) {
    int want = L.SSL_get_error(ssl, status);
    if (want == SSL_ERROR_WANT_READ) return wait_for(fd, POLLIN, deadline) ? 1 : 0;
    if (want == SSL_ERROR_WANT_WRITE) return wait_for(fd, POLLOUT, deadline) ? 1 : 0;
    return -1;
}

// Connects, shakes hands, records the session (version, verdict, earliest expiry of the chain),
// sends the request and reads the answer until the server closes or the buffer is full, all within
// the request's one deadline.
int weave_tls_get(weave_tls_context *context, const weave_tls_request *request, weave_tls_result *result) {
    memset(result, 0, sizeof *result);
    L.ERR_clear_error(); // what an earlier call on this thread left is not this call's reason
    long long deadline = now_ms() + request->timeout_ms;
    int fd = connect_within(request->host, request->port, deadline, result);
    if (fd < 0) return -1;
    int outcome = -1;
    SSL *ssl = L.SSL_new(context->ssl);
    if (!ssl) { ssl_error(result, "cannot make a TLS session"); goto done; }
    // SNI and the name the certificate must match: server_name when the check gives one.
    const char *name = request->server_name ? request->server_name : request->host;
    L.SSL_ctrl(ssl, SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name, (void *)name);
    L.SSL_set1_host(ssl, name);
    L.SSL_set_fd(ssl, fd);
    for (;;) {
        int status = L.SSL_connect(ssl);
        if (status == 1) break;
        int next = drive(ssl, fd, status, deadline);
        if (next == 1) continue;
        if (next == 0) snprintf(result->error, sizeof result->error, "the TLS handshake did not finish within the timeout");
        else ssl_error(result, "the TLS handshake failed");
        goto done;
    }
    // The session, before the request: a server that then fails to answer still shows its certificate.
    result->handshake_done = 1;
    snprintf(result->version, sizeof result->version, "%s", L.SSL_get_version(ssl));
    long verify = L.SSL_get_verify_result(ssl);
    result->verified = verify == X509_V_OK;
    if (!result->verified) snprintf(result->verify_error, sizeof result->verify_error, "%s", L.X509_verify_cert_error_string(verify));
    X509 *leaf = L.SSL_get1_peer_certificate(ssl);
    note_expiry(result, leaf);
    if (leaf) L.X509_free(leaf);
    STACK_OF(X509) *chain = L.SSL_get_peer_cert_chain(ssl);
    for (int i = 0; chain && i < L.OPENSSL_sk_num((const OPENSSL_STACK *)chain); i++) {
        note_expiry(result, L.OPENSSL_sk_value((const OPENSSL_STACK *)chain, i));
    }
    size_t sent = 0, length = strlen(request->request);
    while (sent < length) {
        int status = L.SSL_write(ssl, request->request + sent, (int)(length - sent));
        if (status > 0) { sent += (size_t)status; continue; }
        int next = drive(ssl, fd, status, deadline);
        if (next == 1) continue;
        if (next == 0) snprintf(result->error, sizeof result->error, "no complete response within the timeout");
        else ssl_error(result, "cannot send the request");
        goto done;
    }
    for (;;) {
        if (result->answer_length == request->answer_capacity) { result->truncated = 1; break; }
        int status = L.SSL_read(ssl, request->answer + result->answer_length, (int)(request->answer_capacity - result->answer_length));
        if (status > 0) { result->answer_length += (size_t)status; continue; }
        int error = L.SSL_get_error(ssl, status);
        if (error == SSL_ERROR_ZERO_RETURN || (error == SSL_ERROR_SYSCALL && L.ERR_peek_error() == 0)) break; // closed
        int next = drive(ssl, fd, status, deadline);
        if (next == 1) continue;
        if (next == 0) snprintf(result->error, sizeof result->error, "no complete response within the timeout");
        else ssl_error(result, "cannot read the response");
        goto done;
    }
    outcome = 0;
done:
    if (ssl) { L.SSL_shutdown(ssl); L.SSL_free(ssl); }
    L.ERR_clear_error();
    close(fd);
    return outcome;
}
