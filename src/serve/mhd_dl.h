/* SPDX-License-Identifier: Apache-2.0 */
/* mhd_dl.h - libmicrohttpd (and zlib, libcrypt and libyaml, which serve
 * alone needs), loaded only when `vramz serve` starts.
 *
 * Linking libmicrohttpd pulls GnuTLS and a dozen libraries behind it into
 * every run of vramz, which made `vramz -h` or a one-shot `status` pay
 * for a TLS stack they never use (issue 14: the one-shot path loads
 * nothing it does not use).  So the tool is built against the header but
 * not linked with the library: serve calls mhd_dl_load() first, which
 * dlopen()s the soname found at configure time, and the MHD_* calls in
 * serve's files go through a table of pointers whose types are the
 * header's own (no signature is copied by hand, so none can drift).
 * zlib (gzip for scrapers that accept it), libcrypt (bcrypt for basic
 * authentication) and libyaml (the web configuration) are small, but no
 * other command uses them either, so they are loaded the same way.
 *
 * Include this instead of <microhttpd.h>, <zlib.h> or <crypt.h>; the
 * functions listed below then call through the table.
 */
#ifndef VRAMZ_MHD_DL_H
#define VRAMZ_MHD_DL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <crypt.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <microhttpd.h>
#include <yaml.h>
#include <zlib.h>

/* every libmicrohttpd function serve uses: add one here to use it */
#define VRAMZ_MHD_FUNCS(X)                                                   \
	X(MHD_start_daemon)                                                  \
	X(MHD_stop_daemon)                                                   \
	X(MHD_get_daemon_info)                                               \
	X(MHD_get_connection_info)                                           \
	X(MHD_create_response_from_buffer)                                   \
	X(MHD_create_response_from_callback)                                 \
	X(MHD_add_response_header)                                           \
	X(MHD_queue_response)                                                \
	X(MHD_destroy_response)                                              \
	X(MHD_lookup_connection_value)                                       \
	X(MHD_suspend_connection)                                            \
	X(MHD_resume_connection)                                             \
	X(MHD_is_feature_supported)                                          \
	X(MHD_get_response_header)
/* zlib: gzip bodies (serve/gzip.c); deflateInit2 is a macro over deflateInit2_ */
#define VRAMZ_Z_FUNCS(X) X(deflateInit2_) X(deflateBound) X(deflate) X(deflateEnd)
/* libxcrypt: bcrypt password hashes (serve/auth.c) */
#define VRAMZ_CRYPT_FUNCS(X) X(crypt_rn)
/* GnuTLS (libmicrohttpd maps it already): client certificates, and each
 * session's credentials and priorities from the web configuration of the
 * moment (serve/tlsconf.c) */
#define VRAMZ_GNUTLS_FUNCS(X)                                                \
	X(gnutls_certificate_get_peers)                                      \
	X(gnutls_certificate_verify_peers2)                                  \
	X(gnutls_certificate_allocate_credentials)                           \
	X(gnutls_certificate_free_credentials)                               \
	X(gnutls_certificate_set_x509_key_mem)                               \
	X(gnutls_certificate_set_x509_trust_mem)                             \
	X(gnutls_certificate_server_set_request)                             \
	X(gnutls_credentials_set)                                            \
	X(gnutls_credentials_get)                                            \
	X(gnutls_priority_init)                                              \
	X(gnutls_priority_deinit)                                            \
	X(gnutls_priority_set)                                               \
	X(gnutls_strerror)                                                   \
	X(gnutls_x509_crt_init)                                              \
	X(gnutls_x509_crt_deinit)                                            \
	X(gnutls_x509_crt_import)                                            \
	X(gnutls_x509_crt_get_activation_time)                               \
	X(gnutls_x509_crt_get_expiration_time)                               \
	X(gnutls_x509_crt_get_pk_algorithm)                                  \
	X(gnutls_x509_crt_get_subject_alt_name)
/* libyaml: the --web-config file (serve/webconf.c), loaded by
 * yaml_dl_load() only when there is one */
#define VRAMZ_YAML_FUNCS(X)                                                  \
	X(yaml_parser_initialize)                                            \
	X(yaml_parser_delete)                                                \
	X(yaml_parser_set_input_string)                                      \
	X(yaml_parser_load)                                                  \
	X(yaml_document_delete)                                              \
	X(yaml_document_get_node)                                            \
	X(yaml_document_get_root_node)

struct vramz_mhd_api {
#define VRAMZ_MHD_FIELD(f) __typeof__(f) *f;
	VRAMZ_MHD_FUNCS(VRAMZ_MHD_FIELD)
	VRAMZ_Z_FUNCS(VRAMZ_MHD_FIELD)
	VRAMZ_CRYPT_FUNCS(VRAMZ_MHD_FIELD)
	VRAMZ_GNUTLS_FUNCS(VRAMZ_MHD_FIELD)
	VRAMZ_YAML_FUNCS(VRAMZ_MHD_FIELD)
#undef VRAMZ_MHD_FIELD
};
extern struct vramz_mhd_api vramz_mhd;

/* Loads the four libraries once (GnuTLS too); 0, or -1 with a one-line reason in err. */
int mhd_dl_load(char *err, size_t errlen);
/* Loads libyaml once; the same. */
int yaml_dl_load(char *err, size_t errlen);

#ifndef VRAMZ_MHD_DL_IMPL
#define MHD_start_daemon (*vramz_mhd.MHD_start_daemon)
#define MHD_stop_daemon (*vramz_mhd.MHD_stop_daemon)
#define MHD_get_daemon_info (*vramz_mhd.MHD_get_daemon_info)
#define MHD_get_connection_info (*vramz_mhd.MHD_get_connection_info)
#define MHD_create_response_from_buffer (*vramz_mhd.MHD_create_response_from_buffer)
#define MHD_create_response_from_callback (*vramz_mhd.MHD_create_response_from_callback)
#define MHD_add_response_header (*vramz_mhd.MHD_add_response_header)
#define MHD_queue_response (*vramz_mhd.MHD_queue_response)
#define MHD_destroy_response (*vramz_mhd.MHD_destroy_response)
#define MHD_lookup_connection_value (*vramz_mhd.MHD_lookup_connection_value)
#define MHD_suspend_connection (*vramz_mhd.MHD_suspend_connection)
#define MHD_resume_connection (*vramz_mhd.MHD_resume_connection)
#define MHD_is_feature_supported (*vramz_mhd.MHD_is_feature_supported)
#define MHD_get_response_header (*vramz_mhd.MHD_get_response_header)
#define gnutls_certificate_get_peers (*vramz_mhd.gnutls_certificate_get_peers)
#define gnutls_certificate_verify_peers2 (*vramz_mhd.gnutls_certificate_verify_peers2)
#define gnutls_certificate_allocate_credentials (*vramz_mhd.gnutls_certificate_allocate_credentials)
#define gnutls_certificate_free_credentials (*vramz_mhd.gnutls_certificate_free_credentials)
#define gnutls_certificate_set_x509_key_mem (*vramz_mhd.gnutls_certificate_set_x509_key_mem)
#define gnutls_certificate_set_x509_trust_mem (*vramz_mhd.gnutls_certificate_set_x509_trust_mem)
#define gnutls_certificate_server_set_request (*vramz_mhd.gnutls_certificate_server_set_request)
#define gnutls_credentials_set (*vramz_mhd.gnutls_credentials_set)
#define gnutls_credentials_get (*vramz_mhd.gnutls_credentials_get)
#define gnutls_priority_init (*vramz_mhd.gnutls_priority_init)
#define gnutls_priority_deinit (*vramz_mhd.gnutls_priority_deinit)
#define gnutls_priority_set (*vramz_mhd.gnutls_priority_set)
#define gnutls_strerror (*vramz_mhd.gnutls_strerror)
#define gnutls_x509_crt_init (*vramz_mhd.gnutls_x509_crt_init)
#define gnutls_x509_crt_deinit (*vramz_mhd.gnutls_x509_crt_deinit)
#define gnutls_x509_crt_import (*vramz_mhd.gnutls_x509_crt_import)
#define gnutls_x509_crt_get_activation_time (*vramz_mhd.gnutls_x509_crt_get_activation_time)
#define gnutls_x509_crt_get_expiration_time (*vramz_mhd.gnutls_x509_crt_get_expiration_time)
#define gnutls_x509_crt_get_pk_algorithm (*vramz_mhd.gnutls_x509_crt_get_pk_algorithm)
#define gnutls_x509_crt_get_subject_alt_name (*vramz_mhd.gnutls_x509_crt_get_subject_alt_name)
#define deflateInit2_ (*vramz_mhd.deflateInit2_)
#define deflateBound (*vramz_mhd.deflateBound)
#define deflate (*vramz_mhd.deflate)
#define deflateEnd (*vramz_mhd.deflateEnd)
#define crypt_rn (*vramz_mhd.crypt_rn)
#define yaml_parser_initialize (*vramz_mhd.yaml_parser_initialize)
#define yaml_parser_delete (*vramz_mhd.yaml_parser_delete)
#define yaml_parser_set_input_string (*vramz_mhd.yaml_parser_set_input_string)
#define yaml_parser_load (*vramz_mhd.yaml_parser_load)
#define yaml_document_delete (*vramz_mhd.yaml_document_delete)
#define yaml_document_get_node (*vramz_mhd.yaml_document_get_node)
#define yaml_document_get_root_node (*vramz_mhd.yaml_document_get_root_node)
#endif

#endif
