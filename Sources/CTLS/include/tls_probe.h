// One HTTPS request over Debian's OpenSSL (libssl), for weave-healthd's http check: connect within
// a deadline, handshake (SNI, the system's or a given CA, an optional client certificate), send a
// GET, read the answer up to a limit, and report what the certificate chain and the session say.
// Blocking: the caller runs it on a thread of its own.
#ifndef WEAVE_TLS_PROBE_H
#define WEAVE_TLS_PROBE_H
#include <stddef.h>

typedef struct {
    const char *host;          // to connect to (a name or an address)
    int port;
    const char *server_name;   // SNI and the name verified; NULL: host
    const char *request;       // the whole HTTP/1.1 request to send
    const char *ca_file;       // NULL: the system's trust store
    const char *client_cert;   // NULL: none (PEM chain)
    const char *client_key;    // NULL: none (PEM)
    int timeout_ms;            // for the whole exchange
    unsigned char *answer;     // receives the response, status line to end of body
    size_t answer_capacity;
} weave_tls_request;

typedef struct {
    int handshake_done;        // 0: no session; `error` says why
    int verified;              // the chain verified against the CAs and the name matched
    char verify_error[160];    // why not, in OpenSSL's words
    double earliest_expiry;    // the earliest notAfter of the peer's chain, seconds since the epoch; 0 when unknown
    double leaf_expiry;        // the leaf's notAfter
    char version[16];          // "TLSv1.3"
    size_t answer_length;
    int truncated;             // the answer was longer than the capacity
    char error[200];
} weave_tls_result;

/// Returns 0 when an answer was read (however the verification went), -1 otherwise (`error`).
int weave_tls_get(const weave_tls_request *request, weave_tls_result *result);

#endif
