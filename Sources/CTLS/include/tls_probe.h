// One HTTPS request over Debian's OpenSSL (libssl), for weave-healthd's http check: connect within
// a deadline, handshake (SNI, the system's or a given CA, an optional client certificate), send a
// GET, read the answer up to a limit, and report what the certificate chain and the session say.
// Blocking: the caller runs it on a thread of its own. The CA certificates and the client
// certificate are loaded once, into a context that the check keeps until a reload.
#ifndef WEAVE_TLS_PROBE_H
#define WEAVE_TLS_PROBE_H
#include <stddef.h>

/// What a check keeps between requests: OpenSSL's SSL_CTX with its CAs and client certificate.
typedef struct weave_tls_context weave_tls_context;

/// A context whose CAs are the PEM certificates of `ca_pem` (`ca_length` bytes; NULL: the system's
/// trust store), with a client certificate chain and key read from PEM files (NULL: none). NULL on
/// failure, with the reason in `error`.
weave_tls_context *weave_tls_context_new(const unsigned char *ca_pem, size_t ca_length, const char *client_cert,
                                         const char *client_key, char *error, size_t error_capacity);
void weave_tls_context_free(weave_tls_context *context);

typedef struct {
    const char *host;          // to connect to (a name or an address)
    int port;
    const char *server_name;   // SNI and the name verified; NULL: host
    const char *request;       // the whole HTTP/1.1 request to send
    int timeout_ms;            // for the whole exchange
    unsigned char *answer;     // receives the response, status line to end of body
    size_t answer_capacity;
} weave_tls_request;

typedef struct {
    int handshake_done;        // 0: no session; `error` says why
    int verified;              // the chain verified against the CAs and the name matched
    char verify_error[160];    // why not, in OpenSSL's words
    int has_expiry;            // whether earliest_expiry is known
    double earliest_expiry;    // the earliest notAfter of the peer's chain, seconds since the epoch (negative before 1970)
    char version[16];          // "TLSv1.3"
    size_t answer_length;
    int truncated;             // the answer was longer than the capacity
    char error[200];
} weave_tls_result;

/// Returns 0 when an answer was read (however the verification went), -1 otherwise (`error`). The
/// answer ends where the peer closed the connection, with or without TLS's close_notify (as curl).
int weave_tls_get(weave_tls_context *context, const weave_tls_request *request, weave_tls_result *result);

#endif
