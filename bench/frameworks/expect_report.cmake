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

set(MODE frameworks)
set(ENV FAKE_NO_DEVICE=1)
set(ARGS --transport tcp --script ${SCRIPT})
set(WHY "FAKE_NO_DEVICE is set")
include(${CMAKE_CURRENT_LIST_DIR}/../gpu/expect_no_device.cmake)
