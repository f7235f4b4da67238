// nvmlErrorString, answered by the stub: a description of each of nvml.h's codes (the strings
// live in the caller's process, so they cannot come from the backend). Unknown codes get
// "Unknown Error", as NVML gives.
#include <nvml.h>

extern "C" __attribute__((visibility("default"))) const char* nvmlErrorString(nvmlReturn_t result) {
  switch (result) {
    case NVML_SUCCESS:
      return "Success";
    case NVML_ERROR_UNINITIALIZED:
      return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT:
      return "Invalid Argument";
    case NVML_ERROR_NOT_SUPPORTED:
      return "Not Supported";
    case NVML_ERROR_NO_PERMISSION:
      return "Insufficient Permissions";
    case NVML_ERROR_ALREADY_INITIALIZED:
      return "Already Initialized";
    case NVML_ERROR_NOT_FOUND:
      return "Not Found";
    case NVML_ERROR_INSUFFICIENT_SIZE:
      return "Insufficient Size";
    case NVML_ERROR_INSUFFICIENT_POWER:
      return "Insufficient External Power";
    case NVML_ERROR_DRIVER_NOT_LOADED:
      return "Driver Not Loaded";
    case NVML_ERROR_TIMEOUT:
      return "Timeout";
    case NVML_ERROR_IRQ_ISSUE:
      return "Interrupt request issue";
    case NVML_ERROR_LIBRARY_NOT_FOUND:
      return "NVML Shared Library Not Found";
    case NVML_ERROR_FUNCTION_NOT_FOUND:
      return "Function Not Found";
    case NVML_ERROR_CORRUPTED_INFOROM:
      return "Corrupted infoROM";
    case NVML_ERROR_GPU_IS_LOST:
      return "GPU is lost";
    case NVML_ERROR_RESET_REQUIRED:
      return "GPU requires reset";
    case NVML_ERROR_OPERATING_SYSTEM:
      return "GPU access blocked by the operating system";
    case NVML_ERROR_LIB_RM_VERSION_MISMATCH:
      return "Driver/library version mismatch";
    case NVML_ERROR_IN_USE:
      return "In use by another client";
    case NVML_ERROR_MEMORY:
      return "Insufficient Memory";
    case NVML_ERROR_NO_DATA:
      return "No data";
    case NVML_ERROR_VGPU_ECC_NOT_SUPPORTED:
      return "vGPU operation not supported while ECC is enabled";
    case NVML_ERROR_INSUFFICIENT_RESOURCES:
      return "Insufficient resources";
    case NVML_ERROR_FREQ_NOT_SUPPORTED:
      return "Frequency not supported";
    case NVML_ERROR_ARGUMENT_VERSION_MISMATCH:
      return "Argument version mismatch";
    case NVML_ERROR_DEPRECATED:
      return "Deprecated";
    case NVML_ERROR_NOT_READY:
      return "Not ready";
    case NVML_ERROR_GPU_NOT_FOUND:
      return "GPU not found";
    case NVML_ERROR_INVALID_STATE:
      return "Invalid state";
    case NVML_ERROR_RESET_TYPE_NOT_SUPPORTED:
      return "Reset type not supported";
    default:
      return "Unknown Error";
  }
}
