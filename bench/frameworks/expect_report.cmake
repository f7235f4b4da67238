# bench_frameworks_report: `gvirtus-bench frameworks` end to end without a framework or a GPU - a
# fake workload (fake_workload.py) natively and through gvirtus-run in driver mode over tcp - must
# exit 0 and write its JSON with the ratios (1) and the loss curves' difference (0); and when the
# workload finds no device, say so and exit 2, writing no result file.
#   cmake -DBENCH=<gvirtus-bench> -DSCRIPT=<fake_workload.py> -DJSON=<path> -P expect_report.cmake
file(REMOVE ${JSON})
execute_process(
  COMMAND ${BENCH} frameworks --transport tcp --script ${SCRIPT} --json ${JSON}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "expected exit status 0, got ${rc}\nstdout: ${out}\nstderr: ${err}")
endif()
file(READ ${JSON} json)
foreach(expected "\"mode\": \"frameworks\"" "\"framework\": \"fake\""
        "\"matmul_ms\": 1" "\"mlp_loss_max_rel_diff\": 0")
  string(FIND "${json}" "${expected}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "${expected} is not in ${JSON}:\n${json}")
  endif()
endforeach()

file(REMOVE ${JSON})
execute_process(
  COMMAND ${CMAKE_COMMAND} -E env FAKE_NO_DEVICE=1
          ${BENCH} frameworks --transport tcp --script ${SCRIPT} --json ${JSON}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 2)
  message(FATAL_ERROR "without a device: expected exit status 2, got ${rc}\n${out}\n${err}")
endif()
if(NOT err MATCHES "gvirtus-bench frameworks: no CUDA device: FAKE_NO_DEVICE is set")
  message(FATAL_ERROR "expected \"no CUDA device: <why>\" on stderr, got:\n${err}")
endif()
if(EXISTS ${JSON})
  message(FATAL_ERROR "a result file was written without a device: ${JSON}")
endif()
