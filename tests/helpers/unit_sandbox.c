/* SPDX-License-Identifier: Apache-2.0 */
/* unit_sandbox.c - runs a command under the kernel-enforced parts of a
 * systemd unit's sandbox, so the units in packaging/ can be checked where
 * systemd cannot start them (CI containers, the lent GPU machines):
 *
 *   NoNewPrivileges=yes            prctl(PR_SET_NO_NEW_PRIVS)
 *   MemoryDenyWriteExecute=yes     seccomp: mmap with PROT_WRITE|PROT_EXEC,
 *                                  mprotect/pkey_mprotect with PROT_EXEC and
 *                                  shmat with SHM_EXEC fail with EPERM
 *   RestrictAddressFamilies=LIST   seccomp: socket() of any other family
 *                                  fails with EAFNOSUPPORT
 *
 * as systemd implements them (src/shared/seccomp-util.c).  The device
 * cgroup, mount namespaces and users are not emulated: tests read those
 * from the unit and check them separately.
 *
 *   unit_sandbox [--mdwe] [--families AF_UNIX,AF_INET,...] -- CMD ARGS...
 *   unit_sandbox --unit FILE -- CMD ARGS...   (both read from the unit)
 *
 * x86_64 and aarch64; elsewhere it says so and exits 77 (a skip).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__)
#define SB_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define SB_ARCH AUDIT_ARCH_AARCH64
#endif

#define SB_MAX_INSNS 128
#define SB_MAX_FAMILIES 16

struct prog {
	struct sock_filter f[SB_MAX_INSNS];
	unsigned short n;
};

static void emit(struct prog *p, struct sock_filter i)
{
	if (p->n >= SB_MAX_INSNS) {
		fprintf(stderr, "unit_sandbox: filter too long\n");
		exit(2);
	}
	p->f[p->n++] = i;
}

#define ARG_LO(k) (offsetof(struct seccomp_data, args) + (k) * sizeof(__u64))

/* if nr is called with (args[k] & mask) == mask: fail with err */
static void deny_masked(struct prog *p, long nr, unsigned k, __u32 mask, int err)
{
	emit(p, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)));
	emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (__u32)nr, 0, 4));
	emit(p, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(k)));
	emit(p, (struct sock_filter)BPF_STMT(BPF_ALU | BPF_AND | BPF_K, mask));
	emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, mask, 0, 1));
	emit(p, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (__u32)err));
}

/* socket(domain, ...) with a domain not in fam: EAFNOSUPPORT */
static void allow_families(struct prog *p, const int *fam, unsigned nfam)
{
	emit(p, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)));
	emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_socket, 0, (__u8)(nfam + 2)));
	emit(p, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(0)));
	for (unsigned i = 0; i < nfam; i++) /* on a match, jump past the denial */
		emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (__u32)fam[i],
						     (__u8)(nfam - i), 0));
	emit(p, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EAFNOSUPPORT));
}

static int family(const char *name)
{
	static const struct { const char *n; int v; } t[] = {
		{"AF_UNIX", AF_UNIX}, {"AF_LOCAL", AF_UNIX}, {"AF_INET", AF_INET},
		{"AF_INET6", AF_INET6}, {"AF_NETLINK", AF_NETLINK}, {"AF_PACKET", AF_PACKET},
	};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
		if (!strcmp(name, t[i].n))
			return t[i].v;
	return -1;
}

/* "AF_UNIX AF_INET" or "AF_UNIX,AF_INET", into at most room entries */
static unsigned parse_families(char *list, int *fam, unsigned room)
{
	unsigned n = 0;
	for (char *save = NULL, *tok = strtok_r(list, " ,\t\n", &save); tok;
	     tok = strtok_r(NULL, " ,\t\n", &save)) {
		int v = family(tok);
		if (v < 0 || n == room) {
			fprintf(stderr, "unit_sandbox: unknown or too many address families at '%s'\n", tok);
			exit(2);
		}
		fam[n++] = v;
	}
	return n;
}

/* systemd's booleans */
static int yes(const char *v)
{
	static const char *const t[] = {"yes", "true", "on", "1", "y", "t"};
	size_t n = strcspn(v, " \t\r\n");
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
		if (n == strlen(t[i]) && !strncasecmp(v, t[i], n))
			return 1;
	return 0;
}

/* reads MemoryDenyWriteExecute= and RestrictAddressFamilies= from a unit:
 * allow lists only (a "~" deny list is refused: no unit here uses one);
 * an empty value resets, "none" allows no family, lines add up */
static void read_unit(const char *path, int *mdwe, int *restrict_fam, int *fam, unsigned *nfam)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "unit_sandbox: %s: %s\n", path, strerror(errno));
		exit(2);
	}
	char line[1024];
	while (fgets(line, sizeof line, f)) {
		if (!strncmp(line, "MemoryDenyWriteExecute=", 23)) {
			*mdwe = yes(line + 23);
		} else if (!strncmp(line, "RestrictAddressFamilies=", 24)) {
			char *v = line + 24;
			v += strspn(v, " \t");
			if (*v == '~') {
				fprintf(stderr, "unit_sandbox: %s: deny lists (~) are not emulated\n", path);
				exit(2);
			}
			if (!*v || *v == '\n') { /* empty: no restriction */
				*restrict_fam = 0;
				*nfam = 0;
			} else if (!strncmp(v, "none", 4)) {
				*restrict_fam = 1;
				*nfam = 0;
			} else {
				*restrict_fam = 1;
				*nfam += parse_families(v, fam + *nfam, SB_MAX_FAMILIES - *nfam);
			}
		}
	}
	fclose(f);
}

int main(int argc, char **argv)
{
	int mdwe = 0, restrict_fam = 0, fam[SB_MAX_FAMILIES];
	unsigned nfam = 0;
	int i = 1;
	for (; i < argc && strcmp(argv[i], "--"); i++) {
		if (!strcmp(argv[i], "--mdwe"))
			mdwe = 1;
		else if (!strcmp(argv[i], "--families") && i + 1 < argc) {
			restrict_fam = 1;
			nfam = parse_families(argv[++i], fam, SB_MAX_FAMILIES);
		} else if (!strcmp(argv[i], "--unit") && i + 1 < argc)
			read_unit(argv[++i], &mdwe, &restrict_fam, fam, &nfam);
		else {
			fprintf(stderr, "usage: unit_sandbox [--mdwe] [--families LIST] [--unit FILE] -- CMD ARGS...\n");
			return 2;
		}
	}
	if (i + 1 >= argc) {
		fprintf(stderr, "unit_sandbox: no command after --\n");
		return 2;
	}
#ifndef SB_ARCH
	fprintf(stderr, "unit_sandbox: no seccomp filter for this architecture\n");
	return 77;
#else
	struct prog p = {.n = 0};
	emit(&p, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)));
	emit(&p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SB_ARCH, 1, 0));
	emit(&p, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS));
#ifdef __x86_64__
	/* x32 system calls (nr | 0x40000000) would pass the checks below
	 * unseen; systemd filters them too.  Refuse them. */
	emit(&p, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)));
	emit(&p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000u, 0, 1));
	emit(&p, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS));
#endif
	if (mdwe) {
		deny_masked(&p, SYS_mmap, 2, PROT_WRITE | PROT_EXEC, EPERM);
		deny_masked(&p, SYS_mprotect, 2, PROT_EXEC, EPERM);
#ifdef SYS_pkey_mprotect
		deny_masked(&p, SYS_pkey_mprotect, 2, PROT_EXEC, EPERM);
#endif
#ifdef SYS_shmat
		deny_masked(&p, SYS_shmat, 2, SHM_EXEC, EPERM);
#endif
	}
	if (restrict_fam)
		allow_families(&p, fam, nfam);
	emit(&p, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
	struct sock_fprog fp = {.len = p.n, .filter = p.f};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fp, 0, 0)) {
		fprintf(stderr, "unit_sandbox: cannot install the filter: %s\n", strerror(errno));
		return 2;
	}
	execvp(argv[i + 1], argv + i + 1);
	fprintf(stderr, "unit_sandbox: %s: %s\n", argv[i + 1], strerror(errno));
	return 127;
#endif
}
