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
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "report/report.h"
#include "serve/guard.h"

/* Credentials remembered: right ones (one per scraper, a few at most) and
 * wrong ones (so one wrong password repeated costs one bcrypt). */
#define CACHE_OK 16
#define CACHE_BAD 64
#define CRED_MAX SERVE_AUTH_CRED_MAX

enum { ST_NONE, ST_PENDING, ST_OK, ST_DENIED, ST_BUSY };

struct cache_entry {
	char key[45];      /* base64 SHA-256; "" free */
	uint64_t used;     /* for replacing the least recently used */
};

struct job {
	int busy;          /* 1 queued, 2 being checked */
	uint64_t seq;      /* arrival order */
	int64_t prio_ns;   /* its address's backlog when it came: lower first */
	struct MHD_Connection *c;
	struct serve_auth_req *r;
	unsigned char addr[SERVE_ADDR_KEY_LEN]; /* the per-address limits */
	char key[45];
	char cred[CRED_MAX + 1]; /* user NUL password NUL */
	size_t user_len;
};

/* One client address's budget of checks, as a virtual clock (GCRA): each
 * check moves tat on by SERVE_AUTH_REFILL_MS from max(tat, now); one
 * that would move it beyond now + the burst's worth is refused.
 * tat - now, the backlog, orders the queue: the address that has spent
 * least is checked first. */
struct budget {
	unsigned char addr[SERVE_ADDR_KEY_LEN];
	int64_t tat_ns;    /* 0: free */
};

struct serve_auth {
	/* the users: replaced by serve_auth_set_users under users_lock and
	 * lock both, so the checker (which holds users_lock through a
	 * bcrypt) or a request (lock) sees one set or the other whole */
	pthread_mutex_t users_lock;
	struct serve_user *users;
	unsigned nusers;   /* 0: no authentication, every request passes */
	unsigned users_gen; /* changes with the users: a verdict on old ones is void */
	unsigned char salt[16];
	pthread_mutex_t lock;
	pthread_cond_t wake;
	pthread_t thread;
	int inited, started, stop;
	int refs;          /* the owner's and the running thread's */
	uint64_t seq, tick;
	struct job jobs[SERVE_AUTH_QUEUE];
	struct cache_entry ok[CACHE_OK], bad[CACHE_BAD];
	struct budget budgets[SERVE_AUTH_ADDRS];
};

#define REFILL_NS ((int64_t)SERVE_AUTH_REFILL_MS * 1000000)

/* bcrypt of "vramz" at cost 4: libcrypt must reproduce it */
#define SELFTEST_HASH "$2b$04$oH7LC72P7E4iOSXNUTUfEuM0YNoLBvN5Kdehb/gsiqgHKqFWQDkvi"

static int ct_equal(const char *a, const char *b, size_t n)
{
	unsigned char d = 0;
	for (size_t i = 0; i < n; i++)
		d |= (unsigned char)(a[i] ^ b[i]);
	return d == 0;
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
 * time; an unknown user is checked against the first hash and denied.
 * Called with users_lock held, not the lock. */
static int verify(const struct serve_auth *a, struct crypt_data *cd, const char *user,
		  size_t ulen, const char *pass)
{
	if (!a->nusers)
		return 0;
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

static void free_users(struct serve_user *u, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		free(u[i].name);
		free(u[i].hash);
	}
	free(u);
}

/* A copy of n users; NULL when out of memory (or n is 0). */
static struct serve_user *copy_users(const struct serve_user *users, unsigned n)
{
	struct serve_user *u = n ? calloc(n, sizeof *u) : NULL;
	if (!u)
		return NULL;
	for (unsigned i = 0; i < n; i++) {
		u[i].name = strdup(users[i].name);
		u[i].hash = strdup(users[i].hash);
		if (!u[i].name || !u[i].hash) {
			free_users(u, i + 1);
			return NULL;
		}
	}
	return u;
}

static void auth_destroy(struct serve_auth *a)
{
	if (a->inited) {
		pthread_mutex_destroy(&a->lock);
		pthread_mutex_destroy(&a->users_lock);
		pthread_cond_destroy(&a->wake);
	}
	free_users(a->users, a->nusers);
	free(a);
}

/* Drops a reference (a->lock held, released here); the last frees a. */
static void auth_unref(struct serve_auth *a)
{
	int last = --a->refs == 0;
	pthread_mutex_unlock(&a->lock);
	if (last)
		auth_destroy(a);
}

static void *checker_main(void *arg)
{
	struct serve_auth *a = arg;
	struct crypt_data *cd = calloc(1, sizeof *cd);
	char cred[CRED_MAX + 1];
	pthread_mutex_lock(&a->lock);
	for (;;) {
		if (a->stop)
			break;
		struct job *j = NULL;
		for (unsigned i = 0; i < SERVE_AUTH_QUEUE; i++) {
			struct job *o = &a->jobs[i];
			if (o->busy == 1 && (!j || o->prio_ns < j->prio_ns ||
					     (o->prio_ns == j->prio_ns && o->seq < j->seq)))
				j = o;
		}
		if (!j) {
			pthread_cond_wait(&a->wake, &a->lock);
			continue;
		}
		j->busy = 2; /* being checked: still counts for its address */
		size_t ulen = j->user_len;
		memcpy(cred, j->cred, sizeof cred);
		explicit_bzero(j->cred, sizeof j->cred);
		pthread_mutex_unlock(&a->lock);
		/* on copies: serve_auth_stop may give up on this job (and its
		 * connection) meanwhile, and not wait for bcrypt to end */
		pthread_mutex_lock(&a->users_lock);
		unsigned gen = a->users_gen;
		int ok = cd && verify(a, cd, cred, ulen, cred + ulen + 1);
		pthread_mutex_unlock(&a->users_lock);
		explicit_bzero(cred, sizeof cred);
		pthread_mutex_lock(&a->lock);
		if (a->stop) /* the job was answered by serve_auth_stop */
			break;
		/* checked against users replaced meanwhile: no verdict (503,
		 * retry), and nothing remembered */
		int stale = gen != a->users_gen;
		if (cd && !stale) /* out of memory is no verdict worth remembering */
			cache_put(a, j->key, ok);
		__atomic_store_n(&j->r->state, stale ? ST_BUSY : ok ? ST_OK : ST_DENIED,
				 __ATOMIC_RELEASE);
		struct MHD_Connection *c = j->c;
		j->busy = 0;
		/* resumed under the lock, so serve_auth_stop cannot have
		 * resumed it too, nor MHD have stopped meanwhile */
		MHD_resume_connection(c);
	}
	free(cd);
	auth_unref(a);
	return NULL;
}

struct serve_auth *serve_auth_new(const struct serve_user *users, unsigned n, char *err,
				  size_t errlen)
{
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
	if (!a || (n && !(a->users = copy_users(users, n))))
		goto oom;
	a->nusers = n;
	if (getrandom(a->salt, sizeof a->salt, 0) != (ssize_t)sizeof a->salt) {
		/* no entropy source: the key still hides the password from a
		 * memory dump, only less well from a precomputed table */
		uint64_t t = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
		memcpy(a->salt, &t, sizeof t);
	}
	pthread_mutex_init(&a->lock, NULL);
	pthread_mutex_init(&a->users_lock, NULL);
	pthread_cond_init(&a->wake, NULL);
	a->inited = 1;
	a->refs = 2;
	if (pthread_create(&a->thread, NULL, checker_main, a)) {
		snprintf(err, errlen, "cannot start the password-checking thread");
		auth_destroy(a);
		return NULL;
	}
	a->started = 1;
	return a;
oom:
	snprintf(err, errlen, "out of memory");
	if (a)
		auth_destroy(a);
	return NULL;
}

int serve_auth_set_users(struct serve_auth *a, const struct serve_user *users, unsigned n)
{
	struct serve_user *u = copy_users(users, n), *old;
	if (n && !u)
		return -1;
	/* users_lock first: waits for a bcrypt under way (a second at most) */
	pthread_mutex_lock(&a->users_lock);
	pthread_mutex_lock(&a->lock);
	old = a->users;
	unsigned oldn = a->nusers;
	a->users = u;
	a->nusers = n;
	a->users_gen++;
	/* a password right or wrong for the old users says nothing now */
	memset(a->ok, 0, sizeof a->ok);
	memset(a->bad, 0, sizeof a->bad);
	pthread_mutex_unlock(&a->lock);
	pthread_mutex_unlock(&a->users_lock);
	free_users(old, oldn);
	return 0;
}

void serve_auth_stop(struct serve_auth *a)
{
	if (!a || !a->started)
		return;
	pthread_mutex_lock(&a->lock);
	a->stop = 1;
	pthread_cond_signal(&a->wake);
	/* every connection still waiting is denied now, the one being
	 * checked too: bcrypt cannot be interrupted, and at cost 14 on a
	 * loaded machine it takes seconds that SIGTERM should not wait */
	int checking = 0;
	for (unsigned i = 0; i < SERVE_AUTH_QUEUE; i++) {
		struct job *j = &a->jobs[i];
		if (!j->busy)
			continue;
		checking |= j->busy == 2;
		explicit_bzero(j->cred, sizeof j->cred);
		__atomic_store_n(&j->r->state, ST_DENIED, __ATOMIC_RELEASE);
		j->busy = 0;
		MHD_resume_connection(j->c);
	}
	pthread_mutex_unlock(&a->lock);
	/* a thread in bcrypt ends on its own and frees a if it is last */
	if (checking)
		pthread_detach(a->thread);
	else
		pthread_join(a->thread, NULL);
	a->started = 0;
}

void serve_auth_free(struct serve_auth *a)
{
	if (!a)
		return;
	serve_auth_stop(a);
	pthread_mutex_lock(&a->lock);
	auth_unref(a);
}

/* The budget of an address (a->lock held): its own, or the place of one
 * that has nothing left to remember (tat in the past), or else of the
 * one with the least backlog (forgetting it favours it the least). */
static struct budget *budget_of(struct serve_auth *a, const unsigned char *addr, int64_t now)
{
	struct budget *spare = NULL;
	for (unsigned i = 0; i < SERVE_AUTH_ADDRS; i++) {
		struct budget *b = &a->budgets[i];
		if (b->tat_ns && !memcmp(b->addr, addr, SERVE_ADDR_KEY_LEN))
			return b;
		if (!spare || b->tat_ns < spare->tat_ns)
			spare = b;
	}
	memcpy(spare->addr, addr, SERVE_ADDR_KEY_LEN);
	spare->tat_ns = now;
	return spare;
}

/* Queues new credentials from addr, or says why not (a->lock held). */
static enum serve_auth_verdict enqueue(struct serve_auth *a, struct MHD_Connection *c,
				       struct serve_auth_req *r, const unsigned char *addr,
				       const char *key, const char *cred, size_t len, size_t ulen)
{
	int64_t now = clock_mono_ns();
	struct budget *b = budget_of(a, addr, now);
	int64_t backlog = b->tat_ns > now ? b->tat_ns - now : 0;
	/* its burst spent: no check until the budget refills */
	if (a->stop || backlog + REFILL_NS > (int64_t)SERVE_AUTH_BURST * REFILL_NS)
		return SERVE_AUTH_BUSY;
	struct job *slot = NULL, *victim = NULL;
	unsigned from_addr = 0;
	for (unsigned i = 0; i < SERVE_AUTH_QUEUE; i++) {
		struct job *j = &a->jobs[i];
		if (!j->busy) {
			slot = slot ? slot : j;
		} else if (!memcmp(j->addr, addr, SERVE_ADDR_KEY_LEN)) {
			from_addr++;
		} else if (j->busy == 1 && j->prio_ns > backlog &&
			   (!victim || j->prio_ns > victim->prio_ns ||
			    (j->prio_ns == victim->prio_ns && j->seq > victim->seq))) {
			victim = j; /* queued by an address that has spent more */
		}
	}
	if (from_addr >= SERVE_AUTH_PER_IP || (!slot && !victim))
		return SERVE_AUTH_BUSY;
	if (!slot) {
		/* the queue is full of addresses that spent more than this one:
		 * the newest of the most spent gives way (503, its check
		 * given back), so a flood from other addresses cannot keep a
		 * new scraper waiting behind it */
		struct budget *vb = budget_of(a, victim->addr, now);
		vb->tat_ns -= REFILL_NS;
		explicit_bzero(victim->cred, sizeof victim->cred);
		__atomic_store_n(&victim->r->state, ST_BUSY, __ATOMIC_RELEASE);
		victim->busy = 0;
		MHD_resume_connection(victim->c);
		slot = victim;
	}
	b->tat_ns = (b->tat_ns > now ? b->tat_ns : now) + REFILL_NS;
	slot->busy = 1;
	slot->seq = ++a->seq;
	slot->prio_ns = backlog;
	slot->c = c;
	slot->r = r;
	memcpy(slot->addr, addr, SERVE_ADDR_KEY_LEN);
	memcpy(slot->key, key, 45);
	memcpy(slot->cred, cred, len + 1);
	slot->user_len = ulen;
	r->state = ST_PENDING;
	/* suspended before the checker can see the job, so its resume
	 * always follows this suspend */
	MHD_suspend_connection(c);
	pthread_cond_signal(&a->wake);
	return SERVE_AUTH_PENDING;
}

enum serve_auth_verdict serve_auth_check(struct serve_auth *a, struct MHD_Connection *c,
					 struct serve_auth_req *r)
{
	int st = __atomic_load_n(&r->state, __ATOMIC_ACQUIRE);
	if (st == ST_OK)
		return SERVE_AUTH_OK;
	if (st == ST_BUSY)
		return SERVE_AUTH_BUSY;
	if (st != ST_NONE) /* denied, or (never) called while pending */
		return SERVE_AUTH_DENIED;
	pthread_mutex_lock(&a->lock);
	unsigned nusers = a->nusers;
	pthread_mutex_unlock(&a->lock);
	if (!nusers)
		return SERVE_AUTH_OK;
	char buf[CRED_MAX + 1];
	const char *user, *pass;
	if (serve_auth_parse(MHD_lookup_connection_value(c, MHD_HEADER_KIND,
							 MHD_HTTP_HEADER_AUTHORIZATION),
			     buf, sizeof buf, &user, &pass))
		return SERVE_AUTH_DENIED;
	size_t ulen = strlen(user), len = ulen + 1 + strlen(pass);
	char key[45];
	cred_key(a, buf, len, key);
	unsigned char addr[SERVE_ADDR_KEY_LEN] = {0};
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	if (ci && ci->client_addr)
		serve_addr_key(ci->client_addr, addr);

	enum serve_auth_verdict v;
	pthread_mutex_lock(&a->lock);
	/* known credentials never wait, nor spend a budget */
	int cached = cache_get(a, key);
	if (!a->nusers) { /* the users were all removed: no authentication */
		v = SERVE_AUTH_OK;
		__atomic_store_n(&r->state, ST_OK, __ATOMIC_RELEASE);
	} else if (cached >= 0) {
		v = cached ? SERVE_AUTH_OK : SERVE_AUTH_DENIED;
		__atomic_store_n(&r->state, cached ? ST_OK : ST_DENIED, __ATOMIC_RELEASE);
	} else {
		v = enqueue(a, c, r, addr, key, buf, len, ulen);
	}
	pthread_mutex_unlock(&a->lock);
	explicit_bzero(buf, sizeof buf);
	return v;
}
