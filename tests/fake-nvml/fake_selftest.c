/* SPDX-License-Identifier: Apache-2.0 */
/* fake_selftest.c - tests the fake libnvidia-ml.so.1 the way the backend
 * will use it: dlopen by path, resolve NVML_FUNCS, call through pointers.
 *
 * Every other test in the project trusts the fake to behave like NVML, so
 * this one pins down the behaviours they lean on: which symbols each build
 * variant exports, that every shipped scenario parses, the size protocol of
 * list calls, memory arithmetic (v1 counts reserved as used), `lost`,
 * scripted errors, MIG, NVLink, reloads, growth, `follow`, tracing, and
 * that concurrent callers are safe.  Plain checks (not assert, which
 * RelWithDebInfo compiles out); exit status 1 on any failure.
 *
 * Usage: fake_selftest FAKE_BUILD_DIR SCENARIOS_DIR
 */
#include "backend/nvml_abi.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define GiB (1024ULL * 1024 * 1024)
#define MiB (1024ULL * 1024)

static int failures;
static char tmpdir[256];
static const char *build_dir, *scen_dir;

#define CHECK(e)                                                               \
	do {                                                                   \
		if (!(e)) {                                                    \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, \
				__LINE__, #e);                                 \
			failures++;                                            \
		}                                                              \
	} while (0)

#define CHECK_RC(call, want)                                                   \
	do {                                                                   \
		nvmlReturn_t r_ = (call);                                      \
		if (r_ != (want)) {                                            \
			fprintf(stderr, "%s:%d: %s returned %d, want %d\n",    \
				__FILE__, __LINE__, #call, (int)r_, (int)(want)); \
			failures++;                                            \
		}                                                              \
	} while (0)

/* The library as the backend sees it: one pointer per NVML_FUNCS entry. */
struct nvml {
	void *dl;
	nvmlErrorString_fn nvmlErrorString;
#define SELFTEST_PTR(req, name, params) nvmlReturn_t(*name) params;
	NVML_FUNCS(SELFTEST_PTR)
#undef SELFTEST_PTR
};

static const char *const legacy_missing[] = {
	"nvmlDeviceGetMemoryInfo_v2",
	"nvmlDeviceGetComputeRunningProcesses_v3",
	"nvmlDeviceGetComputeRunningProcesses_v2",
	"nvmlDeviceGetGraphicsRunningProcesses_v3",
	"nvmlDeviceGetGraphicsRunningProcesses_v2",
	"nvmlDeviceGetMPSComputeRunningProcesses_v3",
	"nvmlDeviceGetMPSComputeRunningProcesses_v2",
	"nvmlDeviceGetCurrentClocksEventReasons",
	"nvmlSystemGetCudaDriverVersion_v2",
	"nvmlDeviceGetGpuMaxPcieLinkGeneration",
};

static bool in_list(const char *name, const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(name, list[i]))
			return true;
	return false;
}

static void *open_variant(const char *variant)
{
	char path[512];
	void *dl;

	snprintf(path, sizeof(path), "%s/%s/libnvidia-ml.so.1", build_dir, variant);
	dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!dl)
		fprintf(stderr, "dlopen %s: %s\n", path, dlerror());
	return dl;
}

/* Resolves every symbol; returns how many NVML_FUNCS entries are missing. */
static unsigned resolve(struct nvml *n, const char *const *missing, size_t nmissing)
{
	unsigned absent = 0;

	*(void **)&n->nvmlErrorString = dlsym(n->dl, "nvmlErrorString");
	CHECK(n->nvmlErrorString != NULL);
#define SELFTEST_SYM(req, name, params)                                        \
	*(void **)&n->name = dlsym(n->dl, #name);                              \
	absent += !n->name;                                                    \
	if ((n->name == NULL) != in_list(#name, missing, nmissing)) {          \
		fprintf(stderr, "symbol %s: %s\n", #name,                      \
			n->name ? "present, should not be" : "missing");       \
		failures++;                                                    \
	}
	NVML_FUNCS(SELFTEST_SYM)
#undef SELFTEST_SYM
	return absent;
}

static void test_variants(void)
{
	static const char *const broken_missing[] = {"nvmlDeviceGetCount_v2"};
	struct nvml n = {0};

	n.dl = open_variant("legacy");
	CHECK(n.dl != NULL);
	if (n.dl) {
		CHECK(resolve(&n, legacy_missing, sizeof(legacy_missing) /
			      sizeof(legacy_missing[0])) == 10);
		dlclose(n.dl);
	}
	memset(&n, 0, sizeof(n));
	n.dl = open_variant("broken");
	CHECK(n.dl != NULL);
	if (n.dl) {
		CHECK(resolve(&n, broken_missing, 1) == 1);
		dlclose(n.dl);
	}
}

/* ---- helpers ------------------------------------------------------------- */

/* Written aside and renamed over, as tests changing a live scenario must. */
static const char *write_scn(const char *name, const char *text)
{
	static char path[512];
	char tmp[600];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f || fputs(text, f) < 0 || fclose(f) || rename(tmp, path))
		perror(tmp);
	return path;
}

static nvmlReturn_t init_with(struct nvml *n, const char *path)
{
	setenv("FAKE_NVML_SCENARIO", path, 1);
	return n->nvmlInit_v2();
}

static nvmlReturn_t init_shipped(struct nvml *n, const char *name)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", scen_dir, name);
	return init_with(n, path);
}

static nvmlDevice_t dev(struct nvml *n, unsigned i)
{
	nvmlDevice_t d = NULL;

	CHECK_RC(n->nvmlDeviceGetHandleByIndex_v2(i, &d), NVML_SUCCESS);
	return d;
}

static nvmlMemory_v2_t mem2(struct nvml *n, nvmlDevice_t d, nvmlReturn_t want)
{
	nvmlMemory_v2_t m = {.version = nvmlMemory_v2};

	CHECK_RC(n->nvmlDeviceGetMemoryInfo_v2(d, &m), want);
	return m;
}

static bool has_pid(const nvmlProcessInfo_t *p, unsigned n, unsigned pid)
{
	for (unsigned i = 0; i < n; i++)
		if (p[i].pid == pid)
			return true;
	return false;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- init ---------------------------------------------------------------- */

static void test_init(struct nvml *n)
{
	unsigned count;

	CHECK_RC(n->nvmlDeviceGetCount_v2(&count), NVML_ERROR_UNINITIALIZED);
	CHECK_RC(n->nvmlShutdown(), NVML_ERROR_UNINITIALIZED);
	unsetenv("FAKE_NVML_SCENARIO");
	CHECK_RC(n->nvmlInit_v2(), NVML_ERROR_DRIVER_NOT_LOADED);
	CHECK_RC(init_with(n, "/nonexistent/x.scn"), NVML_ERROR_DRIVER_NOT_LOADED);
	CHECK_RC(init_with(n, write_scn("bad.scn", "gpu 0 mem_total=1GiB\nbogus 1\n")),
		 NVML_ERROR_UNKNOWN);
	CHECK_RC(init_with(n, write_scn("bad2.scn", "gpu 0 temp=hot\n")),
		 NVML_ERROR_UNKNOWN);
	CHECK_RC(init_with(n, write_scn("bad3.scn", "gpu 1 temp=1\n")),
		 NVML_ERROR_UNKNOWN);
	CHECK_RC(init_with(n, write_scn("mm.scn", "init_error LIB_RM_VERSION_MISMATCH\n")),
		 NVML_ERROR_LIB_RM_VERSION_MISMATCH);
	CHECK(!strcmp(n->nvmlErrorString(NVML_ERROR_LIB_RM_VERSION_MISMATCH),
		      "RM has detected an NVML/RM version mismatch"));
	CHECK(!strcmp(n->nvmlErrorString(NVML_ERROR_GPU_IS_LOST), "GPU is lost"));
	CHECK(!strcmp(n->nvmlErrorString(NVML_SUCCESS), "Success"));
	CHECK(!strcmp(n->nvmlErrorString((nvmlReturn_t)12345), "Unknown Error"));

	/* Reference counted: two inits need two shutdowns. */
	CHECK_RC(init_shipped(n, "1gpu.scn"), NVML_SUCCESS);
	CHECK_RC(n->nvmlInit_v2(), NVML_SUCCESS);
	CHECK_RC(n->nvmlShutdown(), NVML_SUCCESS);
	CHECK_RC(n->nvmlDeviceGetCount_v2(&count), NVML_SUCCESS);
	CHECK(count == 1);
	CHECK_RC(n->nvmlShutdown(), NVML_SUCCESS);
	CHECK_RC(n->nvmlDeviceGetCount_v2(&count), NVML_ERROR_UNINITIALIZED);
}

static void test_shipped(struct nvml *n)
{
	static const struct {
		const char *name;
		unsigned gpus;
	} scns[] = {
		{"1gpu.scn", 1}, {"2gpu-h200.scn", 2}, {"8gpu.scn", 8},
		{"mig.scn", 1}, {"lost.scn", 2}, {"errors.scn", 2},
	};

	for (size_t i = 0; i < sizeof(scns) / sizeof(scns[0]); i++) {
		unsigned count = 0, np = 0;

		CHECK_RC(init_shipped(n, scns[i].name), NVML_SUCCESS);
		CHECK_RC(n->nvmlDeviceGetCount_v2(&count), NVML_SUCCESS);
		if (count != scns[i].gpus)
			fprintf(stderr, "%s: %u gpus\n", scns[i].name, count);
		CHECK(count == scns[i].gpus);
		for (unsigned g = 0; g < count; g++) {
			unsigned k = 0;

			n->nvmlDeviceGetComputeRunningProcesses_v3(dev(n, g), &k, NULL);
			np += k;
			k = 0;
			n->nvmlDeviceGetGraphicsRunningProcesses_v3(dev(n, g), &k, NULL);
			np += k;
		}
		if (!strcmp(scns[i].name, "8gpu.scn"))
			CHECK(np >= 95);
		CHECK_RC(n->nvmlShutdown(), NVML_SUCCESS);
	}
}

/* ---- 2gpu-h200: memory, lists, links ------------------------------------- */

static void test_memory(struct nvml *n, nvmlDevice_t d0)
{
	nvmlMemory_v2_t m = mem2(n, d0, NVML_SUCCESS);
	nvmlMemory_t m1;

	CHECK(m.total == 143771 * MiB);
	CHECK(m.reserved == 616 * MiB);
	CHECK(m.used == 71 * GiB);
	CHECK(m.free == m.total - m.reserved - m.used);
	CHECK_RC(n->nvmlDeviceGetMemoryInfo(d0, &m1), NVML_SUCCESS);
	CHECK(m1.used == m.used + m.reserved);
	CHECK(m1.free == m1.total - m1.used);
	m.version = 2;  /* plain 2 is the classic mistake */
	CHECK_RC(n->nvmlDeviceGetMemoryInfo_v2(d0, &m), NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
}

static void test_lists(struct nvml *n, nvmlDevice_t d0)
{
	nvmlProcessInfo_t p[8];
	nvmlProcessInfo_v1_t p1[8];
	nvmlProcessUtilizationSample_t s[8];
	unsigned k = 0;

	CHECK_RC(n->nvmlDeviceGetComputeRunningProcesses_v3(d0, &k, NULL),
		 NVML_ERROR_INSUFFICIENT_SIZE);
	CHECK(k == 2);
	k = 1;
	CHECK_RC(n->nvmlDeviceGetComputeRunningProcesses_v3(d0, &k, p),
		 NVML_ERROR_INSUFFICIENT_SIZE);
	CHECK(k == 2);
	k = 8;
	CHECK_RC(n->nvmlDeviceGetComputeRunningProcesses_v3(d0, &k, p), NVML_SUCCESS);
	CHECK(k == 2 && p[0].pid == 4200101 && p[1].pid == 4200301);
	CHECK(p[0].usedGpuMemory == 10 * GiB);
	CHECK(p[0].gpuInstanceId == 0xFFFFFFFFu && p[0].computeInstanceId == 0xFFFFFFFFu);
	k = 8;
	CHECK_RC(n->nvmlDeviceGetComputeRunningProcesses(d0, &k, p1), NVML_SUCCESS);
	CHECK(k == 2 && p1[1].usedGpuMemory == 61 * GiB);
	k = 0;
	CHECK_RC(n->nvmlDeviceGetGraphicsRunningProcesses_v3(d0, &k, NULL), NVML_SUCCESS);
	CHECK(k == 0);
	CHECK_RC(n->nvmlDeviceGetComputeRunningProcesses_v3(d0, NULL, p),
		 NVML_ERROR_INVALID_ARGUMENT);

	k = 0;
	CHECK_RC(n->nvmlDeviceGetProcessUtilization(d0, NULL, &k, 0),
		 NVML_ERROR_INSUFFICIENT_SIZE);
	CHECK(k == 2);
	CHECK_RC(n->nvmlDeviceGetProcessUtilization(d0, s, &k, 0), NVML_SUCCESS);
	CHECK(k == 2 && s[0].smUtil == 12 && s[1].smUtil == 55 && s[0].timeStamp > 0);
	CHECK_RC(n->nvmlDeviceGetProcessUtilization(d0, s, &k, ~0ULL >> 1),
		 NVML_ERROR_NOT_FOUND);
}

static void test_links(struct nvml *n, nvmlDevice_t d0, nvmlDevice_t d1)
{
	nvmlEnableState_t on;
	nvmlPciInfo_t pci;
	nvmlGpuTopologyLevel_t lvl;

	CHECK_RC(n->nvmlDeviceGetNvLinkState(d0, 17, &on), NVML_SUCCESS);
	CHECK(on == NVML_FEATURE_ENABLED);
	CHECK_RC(n->nvmlDeviceGetNvLinkState(d0, 18, &on), NVML_ERROR_INVALID_ARGUMENT);
	CHECK_RC(n->nvmlDeviceGetNvLinkRemotePciInfo_v2(d0, 3, &pci), NVML_SUCCESS);
	CHECK(!strcmp(pci.busId, "00000000:3B:00.0") && pci.bus == 0x3B);
	CHECK_RC(n->nvmlDeviceGetPciInfo_v3(d0, &pci), NVML_SUCCESS);
	CHECK(!strcmp(pci.busId, "00000000:19:00.0"));
	CHECK(!strcmp(pci.busIdLegacy, "0000:19:00.0"));
	CHECK_RC(n->nvmlDeviceGetTopologyCommonAncestor(d0, d1, &lvl), NVML_SUCCESS);
	CHECK(lvl == NVML_TOPOLOGY_NODE);
}

static void test_h200(struct nvml *n)
{
	nvmlDevice_t d0, d1;
	unsigned v;
	char buf[96];
	double t;

	CHECK_RC(init_shipped(n, "2gpu-h200.scn"), NVML_SUCCESS);
	d0 = dev(n, 0);
	d1 = dev(n, 1);
	CHECK_RC(n->nvmlDeviceGetHandleByIndex_v2(2, &d0), NVML_ERROR_INVALID_ARGUMENT);
	d0 = dev(n, 0);
	test_memory(n, d0);
	test_lists(n, d0);
	test_links(n, d0, d1);
	CHECK_RC(n->nvmlDeviceGetName(d0, buf, sizeof(buf)), NVML_SUCCESS);
	CHECK(!strcmp(buf, "NVIDIA H200"));
	CHECK_RC(n->nvmlDeviceGetName(d0, buf, 5), NVML_ERROR_INSUFFICIENT_SIZE);
	CHECK_RC(n->nvmlSystemGetDriverVersion(buf, sizeof(buf)), NVML_SUCCESS);
	CHECK(!strcmp(buf, "580.159.04"));
	CHECK_RC(n->nvmlDeviceGetFanSpeed(d0, &v), NVML_ERROR_NOT_SUPPORTED);
	CHECK_RC(n->nvmlDeviceGetTemperature(d1, NVML_TEMPERATURE_GPU, &v), NVML_SUCCESS);
	CHECK(v == 47);
	CHECK_RC(n->nvmlDeviceGetPowerUsage((nvmlDevice_t)&v, &v), NVML_ERROR_INVALID_ARGUMENT);
	t = now_s();
	CHECK_RC(n->nvmlDeviceGetPcieThroughput(d0, NVML_PCIE_UTIL_TX_BYTES, &v), NVML_SUCCESS);
	CHECK(now_s() - t >= 0.019 && v == 1000);
	CHECK_RC(n->nvmlShutdown(), NVML_SUCCESS);
	CHECK_RC(n->nvmlDeviceGetPowerUsage(d0, &v), NVML_ERROR_UNINITIALIZED);
}

/* ---- faults -------------------------------------------------------------- */

static void test_lost(struct nvml *n)
{
	nvmlDevice_t d0, d1;
	unsigned v;

	CHECK_RC(init_shipped(n, "lost.scn"), NVML_SUCCESS);
	d0 = dev(n, 0);
	d1 = dev(n, 1);
	mem2(n, d1, NVML_SUCCESS);
	mem2(n, d1, NVML_SUCCESS);
	mem2(n, d1, NVML_ERROR_GPU_IS_LOST);
	CHECK_RC(n->nvmlDeviceGetTemperature(d1, NVML_TEMPERATURE_GPU, &v), NVML_ERROR_GPU_IS_LOST);
	CHECK_RC(n->nvmlDeviceGetHandleByIndex_v2(1, &d1), NVML_ERROR_GPU_IS_LOST);
	CHECK_RC(n->nvmlDeviceGetCount_v2(&v), NVML_SUCCESS);
	CHECK(v == 2);
	mem2(n, d0, NVML_SUCCESS);
	CHECK_RC(n->nvmlDeviceGetTemperature(d0, NVML_TEMPERATURE_GPU, &v), NVML_SUCCESS);
	CHECK_RC(n->nvmlShutdown(), NVML_SUCCESS);
}

/* VRAM health and events: counters as written, moved by the timeline;
 * unsupported where left out; the retired-pages count protocol; an event
 * set that times out when nothing is due and delivers each event once,
 * in time order, only to GPUs registered for its type. */
static void test_health(struct nvml *n)
{
	const char *p = write_scn("health.scn",
		"gpu 0 name=A uuid=GPU-a mem_total=1GiB ecc=1 ecc_sbe_vol=3 ecc_dbe_vol=0 "
		"remap_corr=2 remap_pending=1 pcie_replay=9 retired_sbe=4 events=0xb\n"
		"gpu 1 name=B uuid=GPU-b mem_total=1GiB ecc=0 ecc_sbe_vol=0 events=0x8\n"
		"at 300ms gpu=0 ecc_dbe=+2\n"
		"at 300ms gpu=0 xid=48\n"
		"at 400ms gpu=1 ecc_sbe=+1\n"
		"at 500ms gpu=1 xid=79\n"
		"at 600ms gpu=1 lost\n");
	nvmlDevice_t d0, d1;
	unsigned long long v;
	unsigned a, b, c, e, cnt;
	nvmlEnableState_t st;
	nvmlEventSet_t set = NULL;
	nvmlEventData_t ev;

	CHECK_RC(init_with(n, p), NVML_SUCCESS);
	d0 = dev(n, 0);
	d1 = dev(n, 1);
	CHECK_RC(n->nvmlDeviceGetTotalEccErrors(d0, NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_VOLATILE_ECC, &v), NVML_SUCCESS);
	CHECK(v == 3);
	CHECK_RC(n->nvmlDeviceGetTotalEccErrors(d0, NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_AGGREGATE_ECC, &v), NVML_ERROR_NOT_SUPPORTED);
	CHECK_RC(n->nvmlDeviceGetTotalEccErrors(d1, NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_VOLATILE_ECC, &v), NVML_ERROR_NOT_SUPPORTED); /* ECC off */
	CHECK_RC(n->nvmlDeviceGetRemappedRows(d0, &a, &b, &c, &e), NVML_SUCCESS);
	CHECK(a == 2 && b == 0 && c == 1 && e == 0);
	CHECK_RC(n->nvmlDeviceGetRemappedRows(d1, &a, &b, &c, &e), NVML_ERROR_NOT_SUPPORTED);
	cnt = 0;
	CHECK_RC(n->nvmlDeviceGetRetiredPages_v2(d0, NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS, &cnt, NULL, NULL), NVML_ERROR_INSUFFICIENT_SIZE);
	CHECK(cnt == 4);
	CHECK_RC(n->nvmlDeviceGetRetiredPages_v2(d0, NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR, &cnt, NULL, NULL), NVML_ERROR_INVALID_ARGUMENT); /* room for 4, no array */
	cnt = 0;
	CHECK_RC(n->nvmlDeviceGetRetiredPages_v2(d0, NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR, &cnt, NULL, NULL), NVML_ERROR_NOT_SUPPORTED);
	CHECK_RC(n->nvmlDeviceGetRetiredPagesPendingStatus(d0, &st), NVML_ERROR_NOT_SUPPORTED);
	CHECK_RC(n->nvmlDeviceGetPcieReplayCounter(d0, &a), NVML_SUCCESS);
	CHECK(a == 9);
	CHECK_RC(n->nvmlEventSetCreate(&set), NVML_SUCCESS);
	CHECK_RC(n->nvmlDeviceRegisterEvents(d0, nvmlEventTypeXidCriticalError | nvmlEventTypeDoubleBitEccError, set), NVML_SUCCESS);
	/* GPU 1 supports Xid only: a mask with ECC is refused whole */
	CHECK_RC(n->nvmlDeviceRegisterEvents(d1, nvmlEventTypeXidCriticalError | nvmlEventTypeSingleBitEccError, set), NVML_ERROR_NOT_SUPPORTED);
	CHECK_RC(n->nvmlDeviceRegisterEvents(d1, nvmlEventTypeXidCriticalError, set), NVML_SUCCESS);
	double t0 = now_s();
	CHECK_RC(n->nvmlEventSetWait_v2(set, &ev, 50), NVML_ERROR_TIMEOUT);
	CHECK(now_s() - t0 >= 0.045);
	CHECK_RC(n->nvmlEventSetWait_v2(set, &ev, 2000), NVML_SUCCESS);
	CHECK(ev.device == d0 && ev.eventType == nvmlEventTypeDoubleBitEccError);
	CHECK_RC(n->nvmlEventSetWait_v2(set, &ev, 2000), NVML_SUCCESS);
	CHECK(ev.device == d0 && ev.eventType == nvmlEventTypeXidCriticalError && ev.eventData == 48);
	/* GPU 1's single-bit error is not registered: the next is its Xid 79 */
	CHECK_RC(n->nvmlEventSetWait_v2(set, &ev, 2000), NVML_SUCCESS);
	CHECK(ev.device == d1 && ev.eventType == nvmlEventTypeXidCriticalError && ev.eventData == 79);
	CHECK_RC(n->nvmlEventSetWait_v2(set, &ev, 300), NVML_ERROR_TIMEOUT);
	/* the timeline moved the counters and lost GPU 1 */
	CHECK_RC(n->nvmlDeviceGetTotalEccErrors(d0, NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC, &v), NVML_SUCCESS);
	CHECK(v == 2);
	CHECK_RC(n->nvmlDeviceGetPcieReplayCounter(d1, &a), NVML_ERROR_GPU_IS_LOST);
	CHECK_RC(n->nvmlEventSetFree(set), NVML_SUCCESS);
	CHECK_RC(n->nvmlEventSetFree(set), NVML_ERROR_INVALID_ARGUMENT);
	CHECK_RC(n->nvmlShutdown(), NVML_SUCCESS);
}

static void test_errors(struct nvml *n)
{
	nvmlDevice_t d0, d1;
	nvmlUtilization_t u;
	nvmlProcessInfo_t p[8];
	char buf[64];
	unsigned v, k = 8;

	CHECK_RC(init_shipped(n, "errors.scn"), NVML_SUCCESS);
	d0 = dev(n, 0);
	d1 = dev(n, 1);
	CHECK_RC(n->nvmlDeviceGetPowerUsage(d0, &v), NVML_SUCCESS);
	CHECK_RC(n->nvmlDeviceGetPowerUsage(d1, &v), NVML_ERROR_NOT_SUPPORTED);
	CHECK_RC(n->nvmlDeviceGetSerial(d1, buf, sizeof(buf)), NVML_ERROR_NO_PERMISSION);
	CHECK_RC(n->nvmlDeviceGetTemperature(d1, NVML_TEMPERATURE_GPU, &v), NVML_ERROR_NOT_SUPPORTED);
	CHECK_RC(n->nvmlDeviceGetPcieThroughput(d0, NVML_PCIE_UTIL_RX_BYTES, &v), NVML_ERROR_NOT_SUPPORTED);
	for (int i = 0; i < 3; i++)
		CHECK_RC(n->nvmlDeviceGetUtilizationRates(d1, &u), NVML_SUCCESS);
	CHECK_RC(n->nvmlDeviceGetUtilizationRates(d1, &u), NVML_ERROR_UNKNOWN);
	CHECK_RC(n->nvmlDeviceGetUtilizationRates(d0, &u), NVML_SUCCESS);
	CHECK_RC(n->nvmlDeviceGetComputeRunningProcesses_v3(d1, &k, p), NVML_SUCCESS);
	CHECK(k == 2 && p[0].usedGpuMemory == NVML_VALUE_NOT_AVAILABLE);
	CHECK(p[1].usedGpuMemory == 9 * GiB);
	CHECK(mem2(n, d1, NVML_SUCCESS).used == 12 * GiB);
	CHECK_RC(n->nvmlShutdown(), NVML_SUCCESS);
}

static void test_mig(struct nvml *n)
{
	nvmlDevice_t d0, m0 = NULL, m2 = NULL, mx;
	nvmlProcessInfo_t p[8];
	unsigned v, k = 8;
	char uuid[96];

	CHECK_RC(init_shipped(n, "mig.scn"), NVML_SUCCESS);
	d0 = dev(n, 0);
	CHECK_RC(n->nvmlDeviceGetMaxMigDeviceCount(d0, &v), NVML_SUCCESS);
	CHECK(v == 7);
	CHECK_RC(n->nvmlDeviceGetMigDeviceHandleByIndex(d0, 0, &m0), NVML_SUCCESS);
	CHECK_RC(n->nvmlDeviceGetMigDeviceHandleByIndex(d0, 2, &m2), NVML_SUCCESS);
	CHECK_RC(n->nvmlDeviceGetMigDeviceHandleByIndex(d0, 3, &mx), NVML_ERROR_NOT_FOUND);
	CHECK_RC(n->nvmlDeviceGetMigDeviceHandleByIndex(d0, 7, &mx), NVML_ERROR_INVALID_ARGUMENT);
	CHECK_RC(n->nvmlDeviceGetGpuInstanceId(m2, &v), NVML_SUCCESS);
	CHECK(v == 13);
	CHECK_RC(n->nvmlDeviceGetComputeInstanceId(m2, &v), NVML_SUCCESS);
	CHECK(v == 0);
	CHECK_RC(n->nvmlDeviceGetGpuInstanceId(d0, &v), NVML_ERROR_NOT_SUPPORTED);
	CHECK_RC(n->nvmlDeviceGetUUID(m0, uuid, sizeof(uuid)), NVML_SUCCESS);
	CHECK(!strncmp(uuid, "MIG-", 4));
	CHECK(mem2(n, m0, NVML_SUCCESS).used == 32 * GiB);
	CHECK(mem2(n, m2, NVML_SUCCESS).used == 1 * GiB);
	CHECK_RC(n->nvmlDeviceGetTemperature(m0, NVML_TEMPERATURE_GPU, &v), NVML_ERROR_NOT_SUPPORTED);
	CHECK_RC(n->nvmlDeviceGetComputeRunningProcesses_v3(m0, &k, p), NVML_SUCCESS);
	CHECK(k == 2 && p[0].gpuInstanceId == 1);
	k = 8;
	CHECK_RC(n->nvmlDeviceGetComputeRunningProcesses_v3(d0, &k, p), NVML_SUCCESS);
	CHECK(k == 3 && p[2].gpuInstanceId == 5);
	CHECK_RC(n->nvmlShutdown(), NVML_SUCCESS);
}

/* ---- a world that changes ------------------------------------------------ */

static pid_t spawn_sleeper(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		for (;;)
			pause();
	}
	return pid;
}

static unsigned list_self_world(struct nvml *n, nvmlDevice_t d,
				nvmlProcessInfo_t *p)
{
	unsigned k = 8;

	CHECK_RC(n->nvmlDeviceGetComputeRunningProcesses_v3(d, &k, p), NVML_SUCCESS);
	return k;
}

static void test_dynamic(struct nvml *n)
{
	static const char one[] =
		"gpu 0 mem_total=10GiB mem_reserved=0\n"
		"proc gpu=0 pid=self used=1GiB\n"
		"proc gpu=0 pid=env:SELFTEST_CHILD used=2GiB follow\n"
		"grow gpu=0 pid=self rate=+1GiB/s\n";
	static const char two[] =
		"gpu 0 mem_total=10GiB\ngpu 1 mem_total=10GiB mem_used=1GiB\n"
		"grow gpu=1 rate=-100GiB/s\n"
		"proc gpu=0 pid=self used=1GiB\ngrow gpu=0 pid=self rate=+1GiB/s\n";
	nvmlProcessInfo_t p[8];
	char env[32];
	pid_t child = spawn_sleeper();
	nvmlDevice_t d;
	unsigned k, count;

	snprintf(env, sizeof(env), "%d", (int)child);
	setenv("SELFTEST_CHILD", env, 1);
	CHECK_RC(init_with(n, write_scn("dyn.scn", one)), NVML_SUCCESS);
	d = dev(n, 0);
	k = list_self_world(n, d, p);
	CHECK(k == 2 && has_pid(p, k, (unsigned)getpid()) && has_pid(p, k, (unsigned)child));
	usleep(200000);
	k = list_self_world(n, d, p);
	CHECK(p[0].usedGpuMemory >= GiB + GiB / 8);
	CHECK(mem2(n, d, NVML_SUCCESS).used >= 3 * GiB + GiB / 8);

	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	k = list_self_world(n, d, p);
	CHECK(k == 1 && !has_pid(p, k, (unsigned)child));
	CHECK(mem2(n, d, NVML_SUCCESS).used < 2 * GiB);

	/* Reload on change; growth keeps counting from nvmlInit. */
	write_scn("dyn.scn", two);
	CHECK_RC(n->nvmlDeviceGetCount_v2(&count), NVML_SUCCESS);
	CHECK(count == 2);
	CHECK(mem2(n, d, NVML_SUCCESS).used >= GiB + GiB / 8);
	CHECK(mem2(n, dev(n, 1), NVML_SUCCESS).used == 0);
	write_scn("dyn.scn", "gpu 0 what=1\n");
	fprintf(stderr, "(one 'keeping the previous scenario' line is expected)\n");
	CHECK_RC(n->nvmlDeviceGetCount_v2(&count), NVML_SUCCESS);
	CHECK(count == 2);
	CHECK_RC(n->nvmlShutdown(), NVML_SUCCESS);
}

/* FAKE_NVML_EPOCH 10 s ago: growth counts from then, not from nvmlInit, so
 * processes started at different moments share one clock; a value that is
 * not a time is ignored. */
static void test_epoch(struct nvml *n)
{
	static const char scn[] =
		"gpu 0 mem_total=100GiB mem_reserved=0 mem_used=0\n"
		"grow gpu=0 rate=+1GiB/s\n";
	struct timespec now;
	char env[64];
	unsigned long long used;

	clock_gettime(CLOCK_REALTIME, &now);
	snprintf(env, sizeof(env), "%lld.%09ld", (long long)now.tv_sec - 10, now.tv_nsec);
	setenv("FAKE_NVML_EPOCH", env, 1);
	CHECK_RC(init_with(n, write_scn("epoch.scn", scn)), NVML_SUCCESS);
	used = mem2(n, dev(n, 0), NVML_SUCCESS).used;
	CHECK(used >= 10 * GiB && used < 20 * GiB);
	CHECK_RC(n->nvmlShutdown(), NVML_SUCCESS);

	setenv("FAKE_NVML_EPOCH", "soon", 1);
	CHECK_RC(init_with(n, write_scn("epoch.scn", scn)), NVML_SUCCESS);
	CHECK(mem2(n, dev(n, 0), NVML_SUCCESS).used < 5 * GiB);
	CHECK_RC(n->nvmlShutdown(), NVML_SUCCESS);
	unsetenv("FAKE_NVML_EPOCH");
}

/* ---- concurrency ---------------------------------------------------------- */

struct hammer {
	struct nvml *n;
	nvmlDevice_t d;
	int errors;
};

static void *hammer_run(void *arg)
{
	struct hammer *h = arg;

	for (int i = 0; i < 3000; i++) {
		nvmlMemory_v2_t m = {.version = nvmlMemory_v2};
		nvmlProcessInfo_t p[8];
		unsigned k = 8;

		h->errors += h->n->nvmlDeviceGetMemoryInfo_v2(h->d, &m) != NVML_SUCCESS;
		h->errors += h->n->nvmlDeviceGetComputeRunningProcesses_v3(h->d, &k, p) != NVML_SUCCESS;
	}
	return NULL;
}

static void test_threads(struct nvml *n)
{
	struct hammer h[4];
	pthread_t t[4];
	const char *path = write_scn("thr.scn", "gpu 0 mem_total=1GiB\nproc gpu=0 pid=1 used=1MiB\n");

	CHECK_RC(init_with(n, path), NVML_SUCCESS);
	for (int i = 0; i < 4; i++) {
		h[i] = (struct hammer){.n = n, .d = dev(n, 0)};
		pthread_create(&t[i], NULL, hammer_run, &h[i]);
	}
	for (int i = 0; i < 20; i++) {
		write_scn("thr.scn", i % 2 ? "gpu 0 mem_total=1GiB\n" :
			  "gpu 0 mem_total=2GiB\nproc gpu=0 pid=1 used=2MiB\n");
		usleep(1000);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		CHECK(h[i].errors == 0);
	}
	CHECK_RC(n->nvmlShutdown(), NVML_SUCCESS);
}

/* ---- tracing and the legacy variant -------------------------------------- */

static void test_trace(const char *trace_path)
{
	char line[256];
	bool saw_init = false, saw_mem = false;
	FILE *f = fopen(trace_path, "r");

	CHECK(f != NULL);
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		saw_init |= !strcmp(line, "nvmlInit_v2 -\n");
		saw_mem |= !strcmp(line, "nvmlDeviceGetMemoryInfo_v2 1\n");
	}
	fclose(f);
	CHECK(saw_init && saw_mem);
}

static void test_legacy(void)
{
	struct nvml n = {0};
	nvmlMemory_t m;
	nvmlProcessInfo_v1_t p[4];
	unsigned k = 4;

	n.dl = open_variant("legacy");
	if (!n.dl)
		return;
	resolve(&n, legacy_missing, sizeof(legacy_missing) / sizeof(legacy_missing[0]));
	CHECK_RC(init_shipped(&n, "1gpu.scn"), NVML_SUCCESS);
	CHECK_RC(n.nvmlDeviceGetMemoryInfo(dev(&n, 0), &m), NVML_SUCCESS);
	CHECK(m.used == 4 * GiB + 616 * MiB);
	CHECK_RC(n.nvmlDeviceGetComputeRunningProcesses(dev(&n, 0), &k, p), NVML_SUCCESS);
	CHECK(k == 1 && p[0].pid == 4200001);
	CHECK_RC(n.nvmlShutdown(), NVML_SUCCESS);
	dlclose(n.dl);
}

int main(int argc, char **argv)
{
	struct nvml n = {0};
	char trace_path[300];

	if (argc != 3) {
		fprintf(stderr, "usage: fake_selftest FAKE_BUILD_DIR SCENARIOS_DIR\n");
		return 2;
	}
	build_dir = argv[1];
	scen_dir = argv[2];
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/fake_selftest.XXXXXX");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(trace_path, sizeof(trace_path), "%s/trace", tmpdir);
	setenv("FAKE_NVML_TRACE", trace_path, 1);

	n.dl = open_variant("full");
	if (!n.dl)
		return 1;
	CHECK(resolve(&n, NULL, 0) == 0);
	test_variants();
	test_init(&n);
	test_shipped(&n);
	test_h200(&n);
	test_lost(&n);
	test_health(&n);
	test_errors(&n);
	test_mig(&n);
	test_dynamic(&n);
	test_epoch(&n);
	test_threads(&n);
	test_trace(trace_path);
	test_legacy();
	dlclose(n.dl);
	if (failures)
		fprintf(stderr, "fake_selftest: %d failure(s); files in %s\n", failures, tmpdir);
	else
		fprintf(stderr, "fake_selftest: all checks passed\n");
	return failures != 0;
}
