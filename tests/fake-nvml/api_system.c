/* SPDX-License-Identifier: Apache-2.0 */
/* api_system.c - the fake's library-level NVML calls: init and shutdown,
 * error strings, versions, and enumeration of GPUs.
 *
 * Init is reference-counted as in NVML: the first nvmlInit_v2 reads the
 * scenario named by FAKE_NVML_SCENARIO, later ones only count, and the world
 * is dropped when the last nvmlShutdown balances them.  Everything else
 * returns NVML_ERROR_UNINITIALIZED outside that window.
 */
#include "fake.h"

#include <string.h>

FAKE_API nvmlReturn_t nvmlInit_v2(void)
{
	return fake_init();
}

FAKE_API nvmlReturn_t nvmlShutdown(void)
{
	return fake_shutdown();
}

/* The strings NVML itself returns; callers may show them to people. */
FAKE_API const char *nvmlErrorString(nvmlReturn_t r)
{
	switch (r) {
	case NVML_SUCCESS: return "Success";
	case NVML_ERROR_UNINITIALIZED: return "Uninitialized";
	case NVML_ERROR_INVALID_ARGUMENT: return "Invalid Argument";
	case NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
	case NVML_ERROR_NO_PERMISSION: return "Insufficient Permissions";
	case NVML_ERROR_ALREADY_INITIALIZED: return "Already Initialized";
	case NVML_ERROR_NOT_FOUND: return "Not Found";
	case NVML_ERROR_INSUFFICIENT_SIZE: return "Insufficient Size";
	case NVML_ERROR_INSUFFICIENT_POWER: return "Insufficient External Power";
	case NVML_ERROR_DRIVER_NOT_LOADED: return "Driver Not Loaded";
	case NVML_ERROR_TIMEOUT: return "Timeout";
	case NVML_ERROR_IRQ_ISSUE: return "Interrupt Request Issue";
	case NVML_ERROR_LIBRARY_NOT_FOUND: return "NVML Shared Library Not Found";
	case NVML_ERROR_FUNCTION_NOT_FOUND: return "Function Not Found";
	case NVML_ERROR_CORRUPTED_INFOROM: return "Corrupted infoROM";
	case NVML_ERROR_GPU_IS_LOST: return "GPU is lost";
	case NVML_ERROR_RESET_REQUIRED: return "GPU requires restart";
	case NVML_ERROR_OPERATING_SYSTEM: return "The operating system has blocked the request";
	case NVML_ERROR_LIB_RM_VERSION_MISMATCH: return "RM has detected an NVML/RM version mismatch";
	case NVML_ERROR_IN_USE: return "In use by another client";
	case NVML_ERROR_MEMORY: return "Insufficient Memory";
	case NVML_ERROR_NO_DATA: return "No data";
	case NVML_ERROR_VGPU_ECC_NOT_SUPPORTED: return "The requested vgpu operation is not available on target device, because ECC is enabled";
	case NVML_ERROR_INSUFFICIENT_RESOURCES: return "Ran out of critical resources, other than memory";
	case NVML_ERROR_FREQ_NOT_SUPPORTED: return "The requested frequency is not supported";
	case NVML_ERROR_ARGUMENT_VERSION_MISMATCH: return "Argument version mismatch";
	case NVML_ERROR_DEPRECATED: return "The requested functionality has been deprecated";
	case NVML_ERROR_NOT_READY: return "The system is not ready for the request";
	case NVML_ERROR_GPU_NOT_FOUND: return "The GPU was not found";
	case NVML_ERROR_INVALID_STATE: return "Invalid state";
	case NVML_ERROR_UNKNOWN: return "Unknown Error";
	}
	return "Unknown Error";
}

#ifndef FAKE_NVML_BROKEN
FAKE_API nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *n)
{
	struct fake_call c;
	nvmlReturn_t r = fake_enter(&c, FN_nvmlDeviceGetCount_v2, CALL_RELOAD);

	if (r == NVML_SUCCESS && !n)
		r = NVML_ERROR_INVALID_ARGUMENT;
	if (r == NVML_SUCCESS)
		*n = c.w->ngpus;
	return fake_leave(&c, r);
}
#endif

FAKE_API nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t *d)
{
	struct fake_call c;
	nvmlReturn_t r = fake_enter_index(&c, FN_nvmlDeviceGetHandleByIndex_v2, i, 0);

	if (r == NVML_SUCCESS && !d)
		r = NVML_ERROR_INVALID_ARGUMENT;
	if (r == NVML_SUCCESS)
		*d = fake_gpu_handle(i);
	return fake_leave(&c, r);
}

/* An absent `driver` / `nvml` / `cuda` line reads as NOT_SUPPORTED. */
static nvmlReturn_t system_string(enum fake_fn fn, char *buf, unsigned len)
{
	struct fake_call c;
	nvmlReturn_t r = fake_enter(&c, fn, 0);

	if (r == NVML_SUCCESS) {
		const char *s = fn == FN_nvmlSystemGetDriverVersion ?
			c.w->driver : c.w->nvml;

		r = *s ? fake_copy_str(buf, len, s) : NVML_ERROR_NOT_SUPPORTED;
	}
	return fake_leave(&c, r);
}

FAKE_API nvmlReturn_t nvmlSystemGetDriverVersion(char *buf, unsigned int len)
{
	return system_string(FN_nvmlSystemGetDriverVersion, buf, len);
}

FAKE_API nvmlReturn_t nvmlSystemGetNVMLVersion(char *buf, unsigned int len)
{
	return system_string(FN_nvmlSystemGetNVMLVersion, buf, len);
}

static nvmlReturn_t cuda_version(enum fake_fn fn, int *v)
{
	struct fake_call c;
	nvmlReturn_t r = fake_enter(&c, fn, 0);

	if (r == NVML_SUCCESS && !v)
		r = NVML_ERROR_INVALID_ARGUMENT;
	if (r == NVML_SUCCESS && !c.w->has_cuda)
		r = NVML_ERROR_NOT_SUPPORTED;
	if (r == NVML_SUCCESS)
		*v = c.w->cuda;
	return fake_leave(&c, r);
}

#if FAKE_NEW_API
FAKE_API nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *v)
{
	return cuda_version(FN_nvmlSystemGetCudaDriverVersion_v2, v);
}
#endif

FAKE_API nvmlReturn_t nvmlSystemGetCudaDriverVersion(int *v)
{
	return cuda_version(FN_nvmlSystemGetCudaDriverVersion, v);
}
