/* SPDX-License-Identifier: Apache-2.0 */
/* nvml_abi.h - the subset of NVML's ABI that vramz uses, declared here so the
 * project builds without CUDA or nvml.h.
 *
 * Values, struct layouts and symbol names follow NVIDIA's nvml.h (CUDA 12/13);
 * the layouts are checked with static asserts below.  The fake NVML in
 * tests/fake-nvml implements these same symbols, so tests run the real
 * backend code (lib/backend/nvml.c) unchanged.
 *
 * Adding a call: declare its function type in NVML_FUNCS below (X-macro),
 * with REQ (open fails without it) or OPT (optional; the feature is then
 * unknown).  The backend's symbol table and the fake's coverage test are
 * generated from that list.
 */
#ifndef VRAMZ_NVML_ABI_H
#define VRAMZ_NVML_ABI_H

#include <stddef.h>

typedef struct nvmlDevice_st *nvmlDevice_t;

typedef enum nvmlReturn_enum {
	NVML_SUCCESS = 0,
	NVML_ERROR_UNINITIALIZED = 1,
	NVML_ERROR_INVALID_ARGUMENT = 2,
	NVML_ERROR_NOT_SUPPORTED = 3,
	NVML_ERROR_NO_PERMISSION = 4,
	NVML_ERROR_ALREADY_INITIALIZED = 5,
	NVML_ERROR_NOT_FOUND = 6,
	NVML_ERROR_INSUFFICIENT_SIZE = 7,
	NVML_ERROR_INSUFFICIENT_POWER = 8,
	NVML_ERROR_DRIVER_NOT_LOADED = 9,
	NVML_ERROR_TIMEOUT = 10,
	NVML_ERROR_IRQ_ISSUE = 11,
	NVML_ERROR_LIBRARY_NOT_FOUND = 12,
	NVML_ERROR_FUNCTION_NOT_FOUND = 13,
	NVML_ERROR_CORRUPTED_INFOROM = 14,
	NVML_ERROR_GPU_IS_LOST = 15,
	NVML_ERROR_RESET_REQUIRED = 16,
	NVML_ERROR_OPERATING_SYSTEM = 17,
	NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18,
	NVML_ERROR_IN_USE = 19,
	NVML_ERROR_MEMORY = 20,
	NVML_ERROR_NO_DATA = 21,
	NVML_ERROR_VGPU_ECC_NOT_SUPPORTED = 22,
	NVML_ERROR_INSUFFICIENT_RESOURCES = 23,
	NVML_ERROR_FREQ_NOT_SUPPORTED = 24,
	NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25,
	NVML_ERROR_DEPRECATED = 26,
	NVML_ERROR_NOT_READY = 27,
	NVML_ERROR_GPU_NOT_FOUND = 28,
	NVML_ERROR_INVALID_STATE = 29,
	NVML_ERROR_UNKNOWN = 999
} nvmlReturn_t;

#define NVML_VALUE_NOT_AVAILABLE (~0ULL)
#define NVML_DEVICE_NAME_V2_BUFFER_SIZE 96
#define NVML_DEVICE_UUID_V2_BUFFER_SIZE 96
#define NVML_DEVICE_SERIAL_BUFFER_SIZE 30
#define NVML_DEVICE_VBIOS_VERSION_BUFFER_SIZE 32
#define NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE 80
#define NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE 80
#define NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE 32
#define NVML_NVLINK_MAX_LINKS 18

typedef struct nvmlMemory_st {
	unsigned long long total;
	unsigned long long free;
	unsigned long long used;
} nvmlMemory_t;

typedef struct nvmlMemory_v2_st {
	unsigned int version;
	unsigned long long total;
	unsigned long long reserved;
	unsigned long long free;
	unsigned long long used;
} nvmlMemory_v2_t;
/* NVML_STRUCT_VERSION(Memory, 2): sizeof | 2 << 24, not plain 2. */
#define nvmlMemory_v2 ((unsigned int)(sizeof(nvmlMemory_v2_t) | (2u << 24)))

typedef struct nvmlBAR1Memory_st {
	unsigned long long bar1Total;
	unsigned long long bar1Free;
	unsigned long long bar1Used;
} nvmlBAR1Memory_t;

/* Used by the _v2 and _v3 process-list calls. */
typedef struct nvmlProcessInfo_st {
	unsigned int pid;
	unsigned long long usedGpuMemory; /* NVML_VALUE_NOT_AVAILABLE: unknown */
	unsigned int gpuInstanceId;       /* 0xFFFFFFFF without MIG */
	unsigned int computeInstanceId;
} nvmlProcessInfo_t;

/* Used by the original (unversioned) process-list calls. */
typedef struct nvmlProcessInfo_v1_st {
	unsigned int pid;
	unsigned long long usedGpuMemory;
} nvmlProcessInfo_v1_t;

typedef struct nvmlUtilization_st {
	unsigned int gpu;
	unsigned int memory;
} nvmlUtilization_t;

typedef struct nvmlProcessUtilizationSample_st {
	unsigned int pid;
	unsigned long long timeStamp; /* CPU timestamp, microseconds */
	unsigned int smUtil;
	unsigned int memUtil;
	unsigned int encUtil;
	unsigned int decUtil;
} nvmlProcessUtilizationSample_t;

typedef struct nvmlPciInfo_st {
	char busIdLegacy[16];
	unsigned int domain;
	unsigned int bus;
	unsigned int device;
	unsigned int pciDeviceId;
	unsigned int pciSubSystemId;
	char busId[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE];
} nvmlPciInfo_t;

typedef enum { NVML_TEMPERATURE_GPU = 0 } nvmlTemperatureSensors_t;
typedef enum {
	NVML_TEMPERATURE_THRESHOLD_SHUTDOWN = 0,
	NVML_TEMPERATURE_THRESHOLD_SLOWDOWN = 1,
	NVML_TEMPERATURE_THRESHOLD_MEM_MAX = 2,
	NVML_TEMPERATURE_THRESHOLD_GPU_MAX = 3,
} nvmlTemperatureThresholds_t;
typedef enum {
	NVML_CLOCK_GRAPHICS = 0,
	NVML_CLOCK_SM = 1,
	NVML_CLOCK_MEM = 2,
	NVML_CLOCK_VIDEO = 3,
} nvmlClockType_t;
typedef enum {
	NVML_PCIE_UTIL_TX_BYTES = 0,
	NVML_PCIE_UTIL_RX_BYTES = 1,
} nvmlPcieUtilCounter_t;
typedef enum {
	NVML_TOPOLOGY_INTERNAL = 0,
	NVML_TOPOLOGY_SINGLE = 10,
	NVML_TOPOLOGY_MULTIPLE = 20,
	NVML_TOPOLOGY_HOSTBRIDGE = 30,
	NVML_TOPOLOGY_NODE = 40,
	NVML_TOPOLOGY_SYSTEM = 50,
} nvmlGpuTopologyLevel_t;
typedef enum { NVML_FEATURE_DISABLED = 0, NVML_FEATURE_ENABLED = 1 } nvmlEnableState_t;

/* nvmlDeviceGetFieldValues: one field per entry, each with its own return */
typedef enum {
	NVML_VALUE_TYPE_DOUBLE = 0,
	NVML_VALUE_TYPE_UNSIGNED_INT = 1,
	NVML_VALUE_TYPE_UNSIGNED_LONG = 2,
	NVML_VALUE_TYPE_UNSIGNED_LONG_LONG = 3,
	NVML_VALUE_TYPE_SIGNED_LONG_LONG = 4,
	NVML_VALUE_TYPE_SIGNED_INT = 5,
	NVML_VALUE_TYPE_UNSIGNED_SHORT = 6,
} nvmlValueType_t;
typedef union nvmlValue_st {
	double dVal;
	int siVal;
	unsigned int uiVal;
	unsigned long ulVal;
	unsigned long long ullVal;
	signed long long sllVal;
	unsigned short usVal;
} nvmlValue_t;
typedef struct nvmlFieldValue_st {
	unsigned int fieldId;
	unsigned int scopeId;
	long long timestamp;   /* us since 1970 */
	long long latencyUsec;
	nvmlValueType_t valueType;
	nvmlReturn_t nvmlReturn; /* this field's; value is undefined unless SUCCESS */
	nvmlValue_t value;
} nvmlFieldValue_t;
#define NVML_FI_DEV_MEMORY_TEMP 82 /* HBM / GDDR temperature, C */
#define NVML_FI_DEV_PCIE_COUNT_TX_BYTES 197 /* bytes sent over PCIe, a counter */
#define NVML_FI_DEV_PCIE_COUNT_RX_BYTES 198

/* nvmlDeviceGetArchitecture */
#define NVML_DEVICE_ARCH_KEPLER 2
#define NVML_DEVICE_ARCH_MAXWELL 3
#define NVML_DEVICE_ARCH_PASCAL 4
#define NVML_DEVICE_ARCH_VOLTA 5
#define NVML_DEVICE_ARCH_TURING 6
#define NVML_DEVICE_ARCH_AMPERE 7
#define NVML_DEVICE_ARCH_ADA 8
#define NVML_DEVICE_ARCH_HOPPER 9
#define NVML_DEVICE_ARCH_BLACKWELL 10

/* VRAM health (nvml.h): error and counter types of nvmlDeviceGetTotalEccErrors */
typedef enum {
	NVML_MEMORY_ERROR_TYPE_CORRECTED = 0,
	NVML_MEMORY_ERROR_TYPE_UNCORRECTED = 1,
} nvmlMemoryErrorType_t;
typedef enum {
	NVML_VOLATILE_ECC = 0,
	NVML_AGGREGATE_ECC = 1,
} nvmlEccCounterType_t;
typedef enum {
	NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS = 0,
	NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR = 1,
} nvmlPageRetirementCause_t;

/* Events: nvmlEventSetCreate / nvmlDeviceRegisterEvents / nvmlEventSetWait_v2 */
typedef struct nvmlEventSet_st *nvmlEventSet_t;
#define nvmlEventTypeSingleBitEccError 0x0000000000000001LL
#define nvmlEventTypeDoubleBitEccError 0x0000000000000002LL
#define nvmlEventTypePState 0x0000000000000004LL
#define nvmlEventTypeXidCriticalError 0x0000000000000008LL
typedef struct nvmlEventData_st {
	nvmlDevice_t device;
	unsigned long long eventType;
	unsigned long long eventData;  /* the Xid for nvmlEventTypeXidCriticalError */
	unsigned int gpuInstanceId;
	unsigned int computeInstanceId;
} nvmlEventData_t;

/* nvmlErrorString is the one call that returns a string. */
typedef const char *(*nvmlErrorString_fn)(nvmlReturn_t r);

/* X(REQ|OPT, name, (parameter list)).  All return nvmlReturn_t. */
#define NVML_FUNCS(X)                                                          \
	X(REQ, nvmlInit_v2, (void))                                            \
	X(REQ, nvmlShutdown, (void))                                           \
	X(REQ, nvmlDeviceGetCount_v2, (unsigned int *n))                       \
	X(REQ, nvmlDeviceGetHandleByIndex_v2, (unsigned int i, nvmlDevice_t *d)) \
	X(OPT, nvmlSystemGetDriverVersion, (char *buf, unsigned int len))      \
	X(OPT, nvmlSystemGetNVMLVersion, (char *buf, unsigned int len))        \
	X(OPT, nvmlSystemGetCudaDriverVersion_v2, (int *v))                    \
	X(OPT, nvmlSystemGetCudaDriverVersion, (int *v))                       \
	X(OPT, nvmlDeviceGetName, (nvmlDevice_t d, char *buf, unsigned int len)) \
	X(OPT, nvmlDeviceGetUUID, (nvmlDevice_t d, char *buf, unsigned int len)) \
	X(OPT, nvmlDeviceGetSerial, (nvmlDevice_t d, char *buf, unsigned int len)) \
	X(OPT, nvmlDeviceGetVbiosVersion, (nvmlDevice_t d, char *buf, unsigned int len)) \
	X(OPT, nvmlDeviceGetPciInfo_v3, (nvmlDevice_t d, nvmlPciInfo_t *p))    \
	X(OPT, nvmlDeviceGetArchitecture, (nvmlDevice_t d, unsigned int *a))   \
	X(OPT, nvmlDeviceGetMinorNumber, (nvmlDevice_t d, unsigned int *minor)) \
	X(OPT, nvmlDeviceGetCudaComputeCapability, (nvmlDevice_t d, int *maj, int *min)) \
	X(OPT, nvmlDeviceGetMemoryBusWidth, (nvmlDevice_t d, unsigned int *bits)) \
	X(OPT, nvmlDeviceGetMaxClockInfo, (nvmlDevice_t d, nvmlClockType_t t, unsigned int *mhz)) \
	X(OPT, nvmlDeviceGetMaxPcieLinkGeneration, (nvmlDevice_t d, unsigned int *g)) \
	X(OPT, nvmlDeviceGetGpuMaxPcieLinkGeneration, (nvmlDevice_t d, unsigned int *g)) \
	X(OPT, nvmlDeviceGetMaxPcieLinkWidth, (nvmlDevice_t d, unsigned int *w)) \
	X(OPT, nvmlDeviceGetCurrPcieLinkGeneration, (nvmlDevice_t d, unsigned int *g)) \
	X(OPT, nvmlDeviceGetCurrPcieLinkWidth, (nvmlDevice_t d, unsigned int *w)) \
	X(OPT, nvmlDeviceGetPcieThroughput, (nvmlDevice_t d, nvmlPcieUtilCounter_t c, unsigned int *kbps)) \
	X(OPT, nvmlDeviceGetNvLinkState, (nvmlDevice_t d, unsigned int link, nvmlEnableState_t *on)) \
	X(OPT, nvmlDeviceGetNvLinkRemotePciInfo_v2, (nvmlDevice_t d, unsigned int link, nvmlPciInfo_t *p)) \
	X(OPT, nvmlDeviceGetTopologyCommonAncestor, (nvmlDevice_t a, nvmlDevice_t b, nvmlGpuTopologyLevel_t *l)) \
	X(OPT, nvmlDeviceGetMigMode, (nvmlDevice_t d, unsigned int *cur, unsigned int *pend)) \
	X(OPT, nvmlDeviceGetMaxMigDeviceCount, (nvmlDevice_t d, unsigned int *n)) \
	X(OPT, nvmlDeviceGetMigDeviceHandleByIndex, (nvmlDevice_t d, unsigned int i, nvmlDevice_t *m)) \
	X(OPT, nvmlDeviceGetGpuInstanceId, (nvmlDevice_t d, unsigned int *id)) \
	X(OPT, nvmlDeviceGetComputeInstanceId, (nvmlDevice_t d, unsigned int *id)) \
	X(OPT, nvmlDeviceGetEccMode, (nvmlDevice_t d, nvmlEnableState_t *cur, nvmlEnableState_t *pend)) \
	X(OPT, nvmlDeviceGetPersistenceMode, (nvmlDevice_t d, nvmlEnableState_t *m)) \
	X(OPT, nvmlDeviceGetPowerManagementDefaultLimit, (nvmlDevice_t d, unsigned int *mw)) \
	X(OPT, nvmlDeviceGetPowerManagementLimitConstraints, (nvmlDevice_t d, unsigned int *min, unsigned int *max)) \
	X(OPT, nvmlDeviceGetEnforcedPowerLimit, (nvmlDevice_t d, unsigned int *mw)) \
	X(OPT, nvmlDeviceGetTemperatureThreshold, (nvmlDevice_t d, nvmlTemperatureThresholds_t t, unsigned int *c)) \
	X(OPT, nvmlDeviceGetBAR1MemoryInfo, (nvmlDevice_t d, nvmlBAR1Memory_t *m)) \
	X(OPT, nvmlDeviceGetMemoryInfo_v2, (nvmlDevice_t d, nvmlMemory_v2_t *m)) \
	X(OPT, nvmlDeviceGetMemoryInfo, (nvmlDevice_t d, nvmlMemory_t *m))     \
	X(OPT, nvmlDeviceGetUtilizationRates, (nvmlDevice_t d, nvmlUtilization_t *u)) \
	X(OPT, nvmlDeviceGetTemperature, (nvmlDevice_t d, nvmlTemperatureSensors_t s, unsigned int *c)) \
	X(OPT, nvmlDeviceGetPowerUsage, (nvmlDevice_t d, unsigned int *mw))    \
	X(OPT, nvmlDeviceGetClockInfo, (nvmlDevice_t d, nvmlClockType_t t, unsigned int *mhz)) \
	X(OPT, nvmlDeviceGetCurrentClocksEventReasons, (nvmlDevice_t d, unsigned long long *r)) \
	X(OPT, nvmlDeviceGetCurrentClocksThrottleReasons, (nvmlDevice_t d, unsigned long long *r)) \
	X(OPT, nvmlDeviceGetFanSpeed, (nvmlDevice_t d, unsigned int *pct))     \
	X(OPT, nvmlDeviceGetTotalEnergyConsumption, (nvmlDevice_t d, unsigned long long *mj)) \
	X(OPT, nvmlDeviceGetFieldValues, (nvmlDevice_t d, int n, nvmlFieldValue_t *v)) \
	X(OPT, nvmlDeviceGetComputeRunningProcesses_v3, (nvmlDevice_t d, unsigned int *n, nvmlProcessInfo_t *p)) \
	X(OPT, nvmlDeviceGetComputeRunningProcesses_v2, (nvmlDevice_t d, unsigned int *n, nvmlProcessInfo_t *p)) \
	X(OPT, nvmlDeviceGetComputeRunningProcesses, (nvmlDevice_t d, unsigned int *n, nvmlProcessInfo_v1_t *p)) \
	X(OPT, nvmlDeviceGetGraphicsRunningProcesses_v3, (nvmlDevice_t d, unsigned int *n, nvmlProcessInfo_t *p)) \
	X(OPT, nvmlDeviceGetGraphicsRunningProcesses_v2, (nvmlDevice_t d, unsigned int *n, nvmlProcessInfo_t *p)) \
	X(OPT, nvmlDeviceGetGraphicsRunningProcesses, (nvmlDevice_t d, unsigned int *n, nvmlProcessInfo_v1_t *p)) \
	X(OPT, nvmlDeviceGetMPSComputeRunningProcesses_v3, (nvmlDevice_t d, unsigned int *n, nvmlProcessInfo_t *p)) \
	X(OPT, nvmlDeviceGetMPSComputeRunningProcesses_v2, (nvmlDevice_t d, unsigned int *n, nvmlProcessInfo_t *p)) \
	X(OPT, nvmlDeviceGetProcessUtilization, (nvmlDevice_t d, nvmlProcessUtilizationSample_t *s, unsigned int *n, unsigned long long since_us)) \
	X(OPT, nvmlDeviceGetTotalEccErrors, (nvmlDevice_t d, nvmlMemoryErrorType_t e, nvmlEccCounterType_t c, unsigned long long *n)) \
	X(OPT, nvmlDeviceGetRemappedRows, (nvmlDevice_t d, unsigned int *corr, unsigned int *unc, unsigned int *pending, unsigned int *failure)) \
	X(OPT, nvmlDeviceGetRetiredPages_v2, (nvmlDevice_t d, nvmlPageRetirementCause_t c, unsigned int *n, unsigned long long *addr, unsigned long long *ts)) \
	X(OPT, nvmlDeviceGetRetiredPagesPendingStatus, (nvmlDevice_t d, nvmlEnableState_t *pending)) \
	X(OPT, nvmlDeviceGetPcieReplayCounter, (nvmlDevice_t d, unsigned int *n)) \
	X(OPT, nvmlDeviceGetSupportedEventTypes, (nvmlDevice_t d, unsigned long long *types)) \
	X(OPT, nvmlEventSetCreate, (nvmlEventSet_t *set))                      \
	X(OPT, nvmlDeviceRegisterEvents, (nvmlDevice_t d, unsigned long long types, nvmlEventSet_t set)) \
	X(OPT, nvmlEventSetWait_v2, (nvmlEventSet_t set, nvmlEventData_t *data, unsigned int timeout_ms)) \
	X(OPT, nvmlEventSetFree, (nvmlEventSet_t set))

/* Layout checks against nvml.h on LP64. */
_Static_assert(sizeof(nvmlMemory_v2_t) == 40, "nvmlMemory_v2_t layout");
_Static_assert(sizeof(nvmlProcessInfo_t) == 24, "nvmlProcessInfo_t layout");
_Static_assert(sizeof(nvmlProcessInfo_v1_t) == 16, "nvmlProcessInfo_v1_t layout");
_Static_assert(sizeof(nvmlPciInfo_t) == 68, "nvmlPciInfo_t layout");
_Static_assert(sizeof(nvmlFieldValue_t) == 40, "nvmlFieldValue_t layout");
_Static_assert(offsetof(nvmlFieldValue_t, value) == 32, "nvmlFieldValue_t layout");
_Static_assert(sizeof(nvmlEventData_t) == 32, "nvmlEventData_t layout");
_Static_assert(sizeof(nvmlProcessUtilizationSample_t) == 32,
	       "nvmlProcessUtilizationSample_t layout");

#endif /* VRAMZ_NVML_ABI_H */
