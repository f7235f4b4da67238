# bench_gpu_no_device: `gvirtus-bench gpu` with no CUDA device visible must say so and exit 2,
# writing no result file. CUDA_VISIBLE_DEVICES="" hides any GPU, so the path is tested on GPU
# machines too; without one (or without a driver) the runtime's own error is reported.
#   cmake -DBENCH=<gvirtus-bench> -DJSON=<path> -P expect_no_device.cmake
# Other modes include it with MODE, ENV (the variable that hides the device), ARGS and WHY (what
# "no CUDA device: " must be followed by, a regular expression) set first.
if(NOT DEFINED MODE)
  set(MODE gpu)
  set(ENV CUDA_VISIBLE_DEVICES=)
  set(ARGS --quick)
  set(WHY "cuda[A-Za-z]+")
endif()
file(REMOVE ${JSON})
execute_process(
  COMMAND ${CMAKE_COMMAND} -E env ${ENV} ${BENCH} ${MODE} ${ARGS} --json ${JSON}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 2)
  message(FATAL_ERROR "expected exit status 2, got ${rc}\nstdout: ${out}\nstderr: ${err}")
endif()
if(NOT err MATCHES "gvirtus-bench ${MODE}: no CUDA device: ${WHY}")
  message(FATAL_ERROR "expected \"no CUDA device: <why>\" on stderr, got:\n${err}")
endif()
if(EXISTS ${JSON})
  message(FATAL_ERROR "a result file was written without a device: ${JSON}")
endif()
