/* SPDX-License-Identifier: Apache-2.0 */
/* auth.c - basic authentication with bcrypt off the HTTP threads (auth.h
 * says why and how).
 *
 * What is compared is done in constant time: the crypt(3) result with the
 * stored hash, the user name with every configured one; an unknown user
 * costs a bcrypt too (against the first user's hash, then denied), so
 * timing tells no user names apart.  Nothing here logs: a name typed as a
 * password is not written anywhere, and a flood of failures does not fill
 * the journal.
 *
 * The cache keys are SHA-256 of a per-process random salt, the user and
 * the password (src/report/sha256.c, the tool's one SHA-256): neither a
 * password nor a fast unsalted hash of one stays in memory.
 */
#include "serve/auth.h"

#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "report/report.h"

/* Credentials remembered: right ones (one per scraper, a few at most) and
 * wrong ones (so one wrong password repeated costs one bcrypt). */
#define CACHE_OK 16
#define CACHE_BAD 64
/* user:password as sent, decoded; longer ones are refused unread */
#define CRED_MAX 512

enum { ST_NONE, ST_PENDING, ST_OK, ST_DENIED };

struct cache_entry {
	char key[45];      /* base64 SHA-256; "" free */
	uint64_t used;     /* for replacing the least recently used */
};

struct job {
	int busy;          /* queued, or being checked */
	uint64_t seq;      /* arrival order */
	struct MHD_Connection *c;
	struct serve_auth_req *r;
	unsigned char addr[17]; /* family + address: the per-address limit */
	char key[45];
	char cred[CRED_MAX + 1]; /* user NUL password NUL */
	size_t user_len;
};

struct serve_auth {
	struct serve_user *users;
	unsigned nusers;
	unsigned char salt[16];
	pthread_mutex_t lock;
	pthread_cond_t wake;
	pthread_t thread;
	int inited, started, stop;
	uint64_t seq, tick;
	struct job jobs[SERVE_AUTH_QUEUE];
	struct cache_entry ok[CACHE_OK], bad[CACHE_BAD];
};

/* bcrypt of "vramz" at cost 4: libcrypt must reproduce it */
#define SELFTEST_HASH "$2b$04$oH7LC72P7E4iOSXNUTUfEuM0YNoLBvN5Kdehb/gsiqgHKqFWQDkvi"

static int ct_equal(const char *a, const char *b, size_t n)
{
	unsigned char d = 0;
	for (size_t i = 0; i < n; i++)
		d |= (unsigned char)(a[i] ^ b[i]);
	return d == 0;
}

static int decode64(const char *in, unsigned char *out, size_t cap, size_t *outlen)
{
	static const char alpha[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	uint32_t acc = 0;
	int bits = 0;
	size_t n = 0, i = 0;
	for (; in[i] && in[i] != '='; i++) {
		const char *p = strchr(alpha, in[i]);
		if (!p)
			return -1;
		acc = acc << 6 | (uint32_t)(p - alpha);
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			if (n == cap)
				return -1;
			out[n++] = (unsigned char)(acc >> bits);
		}
	}
	size_t pad = 0;
	while (in[i] == '=')
		i++, pad++;
	if (in[i] || pad > 2 || (i % 4) != 0)
		return -1;
	*outlen = n;
	return 0;
}

int serve_auth_parse(const char *header, char *buf, size_t buflen, const char **user,
		     const char **pass)
{
	if (!header || strncasecmp(header, "Basic ", 6))
		return -1;
	const char *p = header + 6;
	while (*p == ' ')
		p++;
	size_t tl = strlen(p);
	while (tl && (p[tl - 1] == ' ' || p[tl - 1] == '\t'))
		tl--;
	char tok[(CRED_MAX + 2) / 3 * 4 + 8];
	if (!tl || tl >= sizeof tok || buflen < 2)
		return -1;
	memcpy(tok, p, tl);
	tok[tl] = 0;
	size_t n;
	if (decode64(tok, (unsigned char *)buf, buflen - 1, &n))
		return -1;
	buf[n] = 0;
	char *colon = memchr(buf, ':', n);
	if (!colon || memchr(buf, 0, n))
		return -1;
	*colon = 0;
	*user = buf;
	*pass = colon + 1;
	return 0;
}

/* The cache key of user and password (NUL-separated in cred). */
static void cred_key(const struct serve_auth *a, const char *cred, size_t len, char key[45])
{
	unsigned char m[sizeof a->salt + CRED_MAX + 1];
	memcpy(m, a->salt, sizeof a->salt);
	memcpy(m + sizeof a->salt, cred, len);
	sha256_b64(m, sizeof a->salt + len, key);
	explicit_bzero(m, sizeof m);
}

/* 1 right, 0 wrong, -1 not cached; a->lock held. */
static int cache_get(struct serve_auth *a, const char *key)
{
	int found = -1;
	for (unsigned i = 0; i < CACHE_OK; i++)
		if (a->ok[i].key[0] && ct_equal(a->ok[i].key, key, 44)) {
			a->ok[i].used = ++a->tick;
			found = 1;
		}
	for (unsigned i = 0; i < CACHE_BAD && found < 0; i++)
		if (a->bad[i].key[0] && ct_equal(a->bad[i].key, key, 44)) {
			a->bad[i].used = ++a->tick;
			found = 0;
		}
	return found;
}

static void cache_put(struct serve_auth *a, const char *key, int ok)
{
	struct cache_entry *e = ok ? a->ok : a->bad, *victim = e;
	unsigned n = ok ? CACHE_OK : CACHE_BAD;
	for (unsigned i = 0; i < n; i++)
		if (e[i].used < victim->used)
			victim = &e[i];
	memcpy(victim->key, key, 45);
	victim->used = ++a->tick;
}

/* bcrypt of the password against the user's hash, compared in constant
 * time; an unknown user is checked against the first hash and denied. */
static int verify(const struct serve_auth *a, struct crypt_data *cd, const char *user,
		  size_t ulen, const char *pass)
{
	unsigned match = a->nusers;
	for (unsigned i = 0; i < a->nusers; i++) {
		const char *name = a->users[i].name;
		size_t nl = strlen(name);
		int same = nl == ulen && ct_equal(name, user, ulen);
		if (same && match == a->nusers)
			match = i;
	}
	const char *hash = a->users[match < a->nusers ? match : 0].hash;
	const char *out = crypt_rn(pass, hash, cd, (int)sizeof *cd);
	int ok = out && strlen(out) == 60 && ct_equal(out, hash, 60);
	return ok && match < a->nusers;
}

static void *checker_main(void *arg)
{
	struct serve_auth *a = arg;
	struct crypt_data *cd = calloc(1, sizeof *cd);
	pthread_mutex_lock(&a->lock);
	for (;;) {
		struct job *j = NULL;
		for (unsigned i = 0; i < SERVE_AUTH_QUEUE; i++)
			if (a->jobs[i].busy == 1 && (!j || a->jobs[i].seq < j->seq))
				j = &a->jobs[i];
		if (a->stop)
			break;
		if (!j) {
			pthread_cond_wait(&a->wake, &a->lock);
			continue;
		}
		j->busy = 2; /* being checked: still counts for its address */
		pthread_mutex_unlock(&a->lock);
		int ok = cd && verify(a, cd, j->cred, j->user_len, j->cred + j->user_len + 1);
		explicit_bzero(j->cred, sizeof j->cred);
		pthread_mutex_lock(&a->lock);
		if (cd) /* out of memory is no verdict worth remembering */
			cache_put(a, j->key, ok);
		__atomic_store_n(&j->r->state, ok ? ST_OK : ST_DENIED, __ATOMIC_RELEASE);
		struct MHD_Connection *c = j->c;
		j->busy = 0;
		pthread_mutex_unlock(&a->lock);
		MHD_resume_connection(c);
		pthread_mutex_lock(&a->lock);
	}
	pthread_mutex_unlock(&a->lock);
	free(cd);
	return NULL;
}

struct serve_auth *serve_auth_new(const struct serve_user *users, unsigned n, char *err,
				  size_t errlen)
{
	if (!n) {
		snprintf(err, errlen, "basic_auth_users: no user");
		return NULL;
	}
	struct crypt_data *cd = calloc(1, sizeof *cd);
	const char *out = cd ? crypt_rn("vramz", SELFTEST_HASH, cd, (int)sizeof *cd) : NULL;
	int works = out && !strcmp(out, SELFTEST_HASH);
	free(cd);
	if (!works) {
		snprintf(err, errlen, "basic_auth_users: libcrypt here does not compute bcrypt "
			 "($2b$) hashes");
		return NULL;
	}
	struct serve_auth *a = calloc(1, sizeof *a);
	if (!a || !(a->users = calloc(n ? n : 1, sizeof *a->users)))
		goto oom;
	for (unsigned i = 0; i < n; i++, a->nusers++) {
		a->users[i].name = strdup(users[i].name);
		a->users[i].hash = strdup(users[i].hash);
		if (!a->users[i].name || !a->users[i].hash) {
			a->nusers++;
			goto oom;
		}
	}
	if (getrandom(a->salt, sizeof a->salt, 0) != (ssize_t)sizeof a->salt) {
		/* no entropy source: the key still hides the password from a
		 * memory dump, only less well from a precomputed table */
		uint64_t t = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
		memcpy(a->salt, &t, sizeof t);
	}
	pthread_mutex_init(&a->lock, NULL);
	pthread_cond_init(&a->wake, NULL);
	a->inited = 1;
	if (pthread_create(&a->thread, NULL, checker_main, a)) {
		snprintf(err, errlen, "cannot start the password-checking thread");
		serve_auth_free(a);
		return NULL;
	}
	a->started = 1;
	return a;
oom:
	snprintf(err, errlen, "out of memory");
	serve_auth_free(a);
	return NULL;
}

void serve_auth_stop(struct serve_auth *a)
{
	if (!a || !a->started)
		return;
	pthread_mutex_lock(&a->lock);
	a->stop = 1;
	pthread_cond_signal(&a->wake);
	pthread_mutex_unlock(&a->lock);
	pthread_join(a->thread, NULL);
	a->started = 0;
	/* the thread resumed every connection it finished; the rest wait */
	for (unsigned i = 0; i < SERVE_AUTH_QUEUE; i++) {
		struct job *j = &a->jobs[i];
		if (!j->busy)
			continue;
		explicit_bzero(j->cred, sizeof j->cred);
		__atomic_store_n(&j->r->state, ST_DENIED, __ATOMIC_RELEASE);
		j->busy = 0;
		MHD_resume_connection(j->c);
	}
}

void serve_auth_free(struct serve_auth *a)
{
	if (!a)
		return;
	serve_auth_stop(a);
	if (a->inited) {
		pthread_mutex_destroy(&a->lock);
		pthread_cond_destroy(&a->wake);
	}
	for (unsigned i = 0; i < a->nusers; i++) {
		free(a->users[i].name);
		free(a->users[i].hash);
	}
	free(a->users);
	free(a);
}

/* The client's address (not its port), for the per-address limit. */
static void client_addr(struct MHD_Connection *c, unsigned char out[17])
{
	memset(out, 0, 17);
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	const struct sockaddr *sa = ci ? ci->client_addr : NULL;
	if (!sa)
		return;
	out[0] = (unsigned char)sa->sa_family;
	if (sa->sa_family == AF_INET)
		memcpy(out + 1, &((const struct sockaddr_in *)sa)->sin_addr, 4);
	else if (sa->sa_family == AF_INET6)
		memcpy(out + 1, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
}

enum serve_auth_verdict serve_auth_check(struct serve_auth *a, struct MHD_Connection *c,
					 struct serve_auth_req *r)
{
	int st = __atomic_load_n(&r->state, __ATOMIC_ACQUIRE);
	if (st == ST_OK)
		return SERVE_AUTH_OK;
	if (st != ST_NONE) /* denied, or (never) called while pending */
		return SERVE_AUTH_DENIED;
	char buf[CRED_MAX + 1];
	const char *user, *pass;
	if (serve_auth_parse(MHD_lookup_connection_value(c, MHD_HEADER_KIND,
							 MHD_HTTP_HEADER_AUTHORIZATION),
			     buf, sizeof buf, &user, &pass))
		return SERVE_AUTH_DENIED;
	size_t ulen = strlen(user), len = ulen + 1 + strlen(pass);
	char key[45];
	cred_key(a, buf, len, key);
	unsigned char addr[17];
	client_addr(c, addr);

	enum serve_auth_verdict v = SERVE_AUTH_BUSY;
	pthread_mutex_lock(&a->lock);
	int cached = cache_get(a, key);
	struct job *slot = NULL;
	unsigned from_addr = 0;
	for (unsigned i = 0; i < SERVE_AUTH_QUEUE; i++) {
		if (!a->jobs[i].busy)
			slot = slot ? slot : &a->jobs[i];
		else if (!memcmp(a->jobs[i].addr, addr, sizeof addr))
			from_addr++;
	}
	if (cached >= 0) {
		v = cached ? SERVE_AUTH_OK : SERVE_AUTH_DENIED;
		__atomic_store_n(&r->state, cached ? ST_OK : ST_DENIED, __ATOMIC_RELEASE);
	} else if (slot && !a->stop && from_addr < SERVE_AUTH_PER_IP) {
		slot->busy = 1;
		slot->seq = ++a->seq;
		slot->c = c;
		slot->r = r;
		memcpy(slot->addr, addr, sizeof addr);
		memcpy(slot->key, key, sizeof key);
		memcpy(slot->cred, buf, len + 1);
		slot->user_len = ulen;
		r->state = ST_PENDING;
		/* suspended before the checker can see the job, so its resume
		 * always follows this suspend */
		MHD_suspend_connection(c);
		pthread_cond_signal(&a->wake);
		v = SERVE_AUTH_PENDING;
	}
	pthread_mutex_unlock(&a->lock);
	explicit_bzero(buf, sizeof buf);
	return v;
}
