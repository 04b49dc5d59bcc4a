/*
 * The TLS identity of the serving port (/healthz, /readyz, /metrics), as kube-scheduler's
 * --tls-cert-file / --tls-private-key-file: a PEM certificate chain and its key from files, or,
 * when neither is given, a self-signed certificate made in memory at start for "localhost" and
 * 127.0.0.1 (upstream's SecureServingOptions.MaybeDefaultWithSelfSignedCerts without a
 * --cert-dir). Upstream signs its self-signed serving certificate with a throw-away CA of its own;
 * here the certificate signs itself, which clients that skip verification (probes, Prometheus
 * with insecure_skip_verify) cannot tell apart.
 *
 * Threads: create on any thread; the returned context is then only read (OpenSSL's SSL_CTX is
 * safe to share between threads once configured).
 */
#ifndef KS_CORE_TLSSERVE_H
#define KS_CORE_TLSSERVE_H

#include <stddef.h>

typedef struct ssl_ctx_st ks_tls_ctx; /* OpenSSL's SSL_CTX */

/* A server context. cert_file and key_file: both or neither (NULL or ""). 0, or KS_EINVAL with
 * a message in err naming the file and what is wrong with it (unreadable, not PEM, the key does
 * not match the certificate), or KS_ENOMEM. OUT: *out, released with ks__tls_ctx_free. */
int ks__tls_ctx_create(const char *cert_file, const char *key_file, ks_tls_ctx **out, char *err,
                       size_t errlen);
void ks__tls_ctx_free(ks_tls_ctx *ctx); /* NULL: no-op */

#endif
