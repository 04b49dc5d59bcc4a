/*
 * The TLS identity of the serving port (/healthz, /readyz, /metrics), as kube-scheduler's
 * --tls-cert-file / --tls-private-key-file: a PEM certificate chain and its key from files, or,
 * when neither is given, a self-signed certificate made in memory at start for "localhost" and
 * 127.0.0.1 (upstream's SecureServingOptions.MaybeDefaultWithSelfSignedCerts without a
 * --cert-dir). Upstream signs its self-signed serving certificate with a throw-away CA of its own;
 * here the certificate signs itself, which clients that skip verification (probes, Prometheus
 * with insecure_skip_verify) cannot tell apart.
 *
 * The files are read and checked with OpenSSL (the messages name the flag, the file and the
 * reason), and the self-signed pair is made with it; the result is kept as PEM text, which the
 * HTTP server hands to libmicrohttpd, whose TLS is GnuTLS.
 *
 * Threads: create on any thread; the returned context is then only read.
 */
#ifndef KS_CORE_TLSSERVE_H
#define KS_CORE_TLSSERVE_H

#include <stddef.h>

/* The serving identity: the certificate chain and its unencrypted key, as PEM. */
typedef struct ks_tls_ctx ks_tls_ctx;

/* A server context. cert_file and key_file: both or neither (NULL or ""). 0, or KS_EINVAL with
 * a message in err naming the file and what is wrong with it (unreadable, not PEM, the key does
 * not match the certificate), or KS_ENOMEM. OUT: *out, released with ks__tls_ctx_free. */
int ks__tls_ctx_create(const char *cert_file, const char *key_file, ks_tls_ctx **out, char *err,
                       size_t errlen);
void ks__tls_ctx_free(ks_tls_ctx *ctx); /* NULL: no-op */

/* --client-ca-file: the CA certificates a client certificate must chain to, read and checked
 * (PEM, at least one certificate). 0 with *pem (malloc'd PEM text of those certificates), or
 * KS_EINVAL with a sentence naming the flag and the file, or KS_ENOMEM. */
int ks__tls_read_client_ca(const char *file, char **pem, char *err, size_t errlen);

/* The certificate chain (leaf first) and the private key, PEM, NUL-terminated; owned by ctx. */
const char *ks__tls_cert_pem(const ks_tls_ctx *ctx);
const char *ks__tls_key_pem(const ks_tls_ctx *ctx);

#endif
