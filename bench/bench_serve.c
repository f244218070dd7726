/* SPDX-License-Identifier: Apache-2.0 */
/* bench_serve.c - what a scrape of `vramz serve` costs: latency (median,
 * p99) and requests per second over one keep-alive connection, the
 * exporter's RSS before and after 100,000 scrapes, and (with --cpu S) the
 * share of a core it uses over S seconds of 1 s sampling with one scrape a
 * second, as on a real node.
 *
 * It starts the exporter itself: `bench_serve VRAMZ_BIN [--scrapes N]
 * [--cpu S] [--real]`.  Without --real it writes a fake-NVML scenario of
 * 8 GPUs and 200 processes and expects LD_LIBRARY_PATH to hold the fake
 * (bench/serve.sh sets it up); with --real it samples the machine's GPUs.
 * Loopback only.  Targets (issue 6): p99 < 1 ms, RSS < 8 MiB and flat.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static long rss_kib(pid_t pid)
{
	char path[64], line[256];
	long kib = -1;
	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "VmRSS: %ld", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

/* utime + stime of pid in clock ticks */
static long long cpu_ticks(pid_t pid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = 0;
	char *p = strrchr(buf, ')');
	unsigned long long ut = 0, st = 0;
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
		return -1;
	return (long long)(ut + st);
}

static void write_scenario(const char *path)
{
	FILE *f = fopen(path, "w");
	if (!f) {
		perror(path);
		exit(1);
	}
	fprintf(f, "driver 580.159.04\nnvml 13.580.159.04\ncuda 13000\n");
	for (int i = 0; i < 8; i++)
		fprintf(f, "gpu %d name=\"NVIDIA H200\" uuid=GPU-%08x-1c35-4f8a-b6d2-7e90a15c3f48 "
			   "pci=00000000:%02X:00.0 arch=hopper cc=9.0 mem_total=143771MiB "
			   "mem_reserved=616MiB mem_used=auto util=50 mem_util=10 temp=45 power=300000 "
			   "power_limit=700000 sm_clock=1980 mem_clock=3201 pcie_gen=5 pcie_width=16 "
			   "pcie_max_gen=5 pcie_max_width=16 nvlinks=18 throttle=0x4 energy=123456789\n",
			i, 0x10000000 + i, 0x19 + i);
	for (int i = 0; i < 200; i++)
		fprintf(f, "proc gpu=%d pid=%d used=%dMiB type=compute sm=%d mem=3\n", i % 8,
			4000000 + i, 100 + i, i % 100);
	fclose(f);
}

/* Starts the exporter on a free port; returns its pid, sets *port. */
static pid_t start_serve(const char *bin, unsigned *port)
{
	int pfd[2];
	if (pipe(pfd))
		exit(1);
	pid_t pid = fork();
	if (pid == 0) {
		dup2(pfd[1], 2);
		close(pfd[0]);
		execl(bin, bin, "serve", "--listen", "127.0.0.1:0", "--procs", "--interval", "1s",
		      (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	FILE *f = fdopen(pfd[0], "r");
	char line[512];
	*port = 0;
	while (fgets(line, sizeof line, f)) {
		char *p = strstr(line, "http://127.0.0.1:");
		if (p) {
			*port = (unsigned)atoi(p + strlen("http://127.0.0.1:"));
			break;
		}
		fputs(line, stderr);
	}
	if (!*port) {
		fprintf(stderr, "bench_serve: %s serve did not start\n", bin);
		exit(1);
	}
	return pid; /* the pipe stays open: the exporter's stderr has a reader */
}

static int connect_to(unsigned port)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	if (connect(fd, (struct sockaddr *)&a, sizeof a)) {
		perror("connect");
		exit(1);
	}
	return fd;
}

/* One GET /metrics on a keep-alive connection; returns the body size. */
static size_t scrape(int fd, char *buf, size_t cap)
{
	static const char req[] = "GET /metrics HTTP/1.1\r\nHost: bench\r\n\r\n";
	if (write(fd, req, sizeof req - 1) != (ssize_t)(sizeof req - 1)) {
		perror("write");
		exit(1);
	}
	size_t have = 0, need = 0;
	for (;;) {
		ssize_t n = read(fd, buf + have, cap - have - 1);
		if (n <= 0) {
			fprintf(stderr, "bench_serve: connection closed mid-answer\n");
			exit(1);
		}
		have += (size_t)n;
		buf[have] = 0;
		if (!need) {
			char *end = strstr(buf, "\r\n\r\n");
			char *cl = strcasestr(buf, "Content-Length:");
			if (!end || !cl)
				continue;
			need = (size_t)(end + 4 - buf) + strtoul(cl + 15, NULL, 10);
		}
		if (have >= need)
			return need;
	}
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	const char *bin = NULL;
	long scrapes = 100000, cpu_s = 0;
	int real = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--scrapes") && i + 1 < argc)
			scrapes = atol(argv[++i]);
		else if (!strcmp(argv[i], "--cpu") && i + 1 < argc)
			cpu_s = atol(argv[++i]);
		else if (!strcmp(argv[i], "--real"))
			real = 1;
		else
			bin = argv[i];
	}
	if (!bin || scrapes < 100) {
		fprintf(stderr, "usage: bench_serve VRAMZ_BIN [--scrapes N>=100] [--cpu SECONDS] [--real]\n");
		return 2;
	}
	char scn[] = "/tmp/vramz-bench-serve-XXXXXX";
	if (!real) {
		int fd = mkstemp(scn);
		close(fd);
		write_scenario(scn);
		setenv("FAKE_NVML_SCENARIO", scn, 1);
	}
	signal(SIGPIPE, SIG_IGN);
	unsigned port;
	pid_t pid = start_serve(bin, &port);
	size_t cap = 1 << 22;
	char *buf = malloc(cap);
	int fd = connect_to(port);

	size_t body = 0;
	for (int i = 0; i < 1000; i++) /* warm up: first samples, allocations */
		body = scrape(fd, buf, cap);
	long rss0 = rss_kib(pid);

	double *lat = malloc((size_t)scrapes * sizeof *lat);
	double t0 = now_s();
	for (long i = 0; i < scrapes; i++) {
		double a = now_s();
		scrape(fd, buf, cap);
		lat[i] = now_s() - a;
	}
	double wall = now_s() - t0;
	long rss1 = rss_kib(pid);
	qsort(lat, (size_t)scrapes, sizeof *lat, cmp_d);

	printf("vramz serve, %s, body %zu bytes\n",
	       real ? "this machine's GPUs" : "fake NVML: 8 GPUs, 200 processes, --procs", body);
	printf("scrapes            %ld over one keep-alive connection\n", scrapes);
	printf("latency median     %.1f us\n", lat[scrapes / 2] * 1e6);
	printf("latency p99        %.1f us   (target < 1000)\n", lat[scrapes * 99 / 100] * 1e6);
	printf("latency max        %.1f us\n", lat[scrapes - 1] * 1e6);
	printf("requests/s         %.0f\n", (double)scrapes / wall);
	printf("RSS after warm-up  %ld KiB\n", rss0);
	printf("RSS after scrapes  %ld KiB   (target < 8192, flat)\n", rss1);

	if (cpu_s > 0) {
		long long c0 = cpu_ticks(pid);
		double a = now_s();
		for (long i = 0; i < cpu_s; i++) {
			scrape(fd, buf, cap);
			sleep(1);
		}
		long long c1 = cpu_ticks(pid);
		double el = now_s() - a;
		printf("CPU at 1 s sampling, 1 scrape/s over %.0f s: %.2f %% of a core\n", el,
		       100.0 * (double)(c1 - c0) / (double)sysconf(_SC_CLK_TCK) / el);
	}
	close(fd);
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
	if (!real)
		unlink(scn);
	free(lat);
	free(buf);
	return 0;
}
