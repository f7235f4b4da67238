# bench_copy_report: `gvirtus-bench copy` end to end without a GPU - the native run finds no
# device, so the backends run with the accepting device - over tcp and shm must exit 0 and write
# its JSON: every transport measured, beside its raw streaming, and marked as no GPU evidence.
#   cmake -DBENCH=<gvirtus-bench> -DJSON=<path> [-DPRELOAD=<LD_PRELOAD for the backend>]
#         -P expect_report.cmake
file(REMOVE ${JSON})
# No GPU evidence even on a GPU machine: the path under test. (An empty value would unset the
# variable in CMake; an index no machine has hides every device, as CUDA reads the list.)
set(ENV{CUDA_VISIBLE_DEVICES} "-1")
if(PRELOAD)
  set(ENV{GVIRTUS_BENCH_ACCEPTING_DEVICE} "${PRELOAD}")
endif()
execute_process(
  COMMAND ${BENCH} copy --transport tcp --transport shm --quick --max-bytes 1M --json ${JSON}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "expected exit status 0, got ${rc}\nstdout: ${out}\nstderr: ${err}")
endif()
file(READ ${JSON} json)
string(JSON device GET "${json}" device)
string(JSON evidence GET "${json}" gpu_evidence)
if(NOT device STREQUAL "accepting device" OR evidence)
  message(FATAL_ERROR "a run without a GPU must say so: device ${device}, gpu_evidence ${evidence}")
endif()
foreach(transport tcp shm)
  string(JSON points LENGTH "${json}" transports ${transport} points)
  string(JSON raw LENGTH "${json}" transports ${transport} raw_mbps)
  # 4 KiB, 16 KiB, 64 KiB, 256 KiB and 1 MiB; each both ways from pageable and pinned memory.
  if(NOT points EQUAL 20 OR NOT raw EQUAL 5)
    message(FATAL_ERROR "${transport}: ${points} points and ${raw} raw sizes, expected 20 and 5")
  endif()
  string(JSON ratio GET "${json}" transports ${transport} points 19 raw_ratio)
  if(NOT ratio GREATER 0)
    message(FATAL_ERROR "${transport}: no ratio to the raw streaming: ${ratio}")
  endif()
endforeach()
