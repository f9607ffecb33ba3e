# Runs one Google Benchmark program and checks what it reported.
#
#   cmake -DPROGRAM=path -DARGS="a;b" -DREPORT=out.json -DCASE=name
#         [-DEXPECT_RC=0] -P run_and_check.cmake
#
# The program runs with ARGS plus --benchmark_out=REPORT in JSON, and the
# report is read with string(JSON): no C++ and no Python in the check. CASE
# selects the expectations below; every failed one is printed, then the test
# fails with FATAL_ERROR.
cmake_minimum_required(VERSION 3.19) # string(JSON)

foreach(var PROGRAM REPORT CASE)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "run_and_check.cmake: -D${var}=... is required")
  endif()
endforeach()
if(NOT DEFINED EXPECT_RC)
  set(EXPECT_RC 0)
endif()

set(failures 0)
macro(fail what)
  message(SEND_ERROR "FAILED: ${what}")
  math(EXPR failures "${failures} + 1")
endmacro()

file(REMOVE "${REPORT}")
execute_process(
  COMMAND "${PROGRAM}" ${ARGS} "--benchmark_out=${REPORT}" --benchmark_out_format=json
  RESULT_VARIABLE rc
  OUTPUT_VARIABLE out
  ERROR_VARIABLE err)
message("${out}${err}")
if(NOT rc STREQUAL "${EXPECT_RC}")
  fail("exit status ${rc}, expected ${EXPECT_RC}")
endif()

# ---- reading the report ----

set(json "")
if(EXISTS "${REPORT}")
  file(READ "${REPORT}" json)
endif()

# The index of the benchmark entry named `name` in `out_var`, or -1.
function(benchmark_index out_var name)
  set(found -1)
  string(JSON count ERROR_VARIABLE jerr LENGTH "${json}" benchmarks)
  if(NOT jerr AND count GREATER 0)
    math(EXPR last "${count} - 1")
    foreach(i RANGE ${last})
      string(JSON n GET "${json}" benchmarks ${i} name)
      if(n STREQUAL "${name}")
        set(found ${i})
        break()
      endif()
    endforeach()
  endif()
  set(${out_var} ${found} PARENT_SCOPE)
endfunction()

# Sets `out_var` to benchmark `name`'s field `key`, failing (and setting it
# to NOTFOUND) when the benchmark or the field is missing.
macro(field out_var name key)
  benchmark_index(_idx "${name}")
  set(${out_var} NOTFOUND)
  if(_idx EQUAL -1)
    fail("no benchmark named '${name}' in the report")
  else()
    string(JSON ${out_var} ERROR_VARIABLE _jerr GET "${json}" benchmarks ${_idx} ${key})
    if(_jerr)
      fail("'${name}' has no '${key}'")
      set(${out_var} NOTFOUND)
    endif()
  endif()
endmacro()

# (field() has reported a missing field already; these skip NOTFOUND.)
macro(expect_equal name key expected)
  field(_v "${name}" "${key}")
  if(NOT "${_v}" STREQUAL "NOTFOUND" AND NOT "${_v}" STREQUAL "${expected}")
    fail("'${name}' ${key} is '${_v}', expected '${expected}'")
  endif()
endmacro()

# Numbers compare as numbers: the report may write 42 and CMake read 42.0.
macro(expect_number name key expected)
  field(_v "${name}" "${key}")
  if(NOT "${_v}" STREQUAL "NOTFOUND" AND NOT "${_v}" EQUAL "${expected}")
    fail("'${name}' ${key} is '${_v}', expected ${expected}")
  endif()
endmacro()

macro(expect_positive name key)
  field(_v "${name}" "${key}")
  if(NOT "${_v}" STREQUAL "NOTFOUND" AND NOT "${_v}" GREATER 0)
    fail("'${name}' ${key} is '${_v}', expected a positive number")
  endif()
endmacro()

# A benchmark that ran: no error, some iterations and a positive item rate.
macro(expect_measured name)
  benchmark_index(_idx "${name}")
  if(_idx EQUAL -1)
    fail("no benchmark named '${name}' in the report")
  else()
    string(JSON _e ERROR_VARIABLE _jerr GET "${json}" benchmarks ${_idx} error_message)
    if(NOT _jerr)
      fail("'${name}' failed: ${_e}")
    endif()
    expect_positive("${name}" iterations)
    expect_positive("${name}" items_per_second)
  endif()
endmacro()

macro(expect_error name message_part)
  expect_equal("${name}" error_occurred ON)
  field(_m "${name}" error_message)
  if(NOT "${_m}" STREQUAL "NOTFOUND")
    string(FIND "${_m}" "${message_part}" _at)
    if(_at EQUAL -1)
      fail("'${name}' error_message '${_m}' does not mention '${message_part}'")
    endif()
  endif()
endmacro()

macro(expect_context key expected)
  string(JSON _c ERROR_VARIABLE _jerr GET "${json}" context ${key})
  if(_jerr)
    fail("the report's context has no '${key}'")
  elseif(NOT "${expected}" STREQUAL "" AND NOT _c STREQUAL "${expected}")
    fail("context ${key} is '${_c}', expected '${expected}'")
  endif()
endmacro()

# ---- the cases ----

if(CASE STREQUAL "shim")
  # shim_probe.c: every call of gbench.h reaches Google Benchmark's report.
  expect_context(probe_context probe-value)
  set(c "probe/counters/3")
  expect_measured(${c})
  expect_number(${c} answer 42)          # COUNTERS_ARG * COUNTERS_FACTOR
  expect_positive(${c} bytes_per_second)
  expect_equal(${c} label probe-label)
  # an iteration-invariant counter of 1 is multiplied by the iterations
  field(iters ${c} iterations)
  expect_number(${c} per_iteration "${iters}")
  expect_number(${c} inverted 0.25)     # GB_COUNTER_INVERT of 4
  set(a "probe/args/first:5/second:7")
  expect_number(${a} sum 12)
  expect_equal(${a} time_unit us)
  set(t "probe/threads/real_time/threads:2")
  expect_number(${t} threads 2)
  expect_number(${t} threads_seen 2)     # one per thread, summed
  expect_error("probe/skip" "skipped on purpose by shim_probe")
elseif(CASE STREQUAL "allocators")
  # heaplab-gbench --alloc system: one benchmark of each family ran.
  expect_context(heaplab_allocator system)
  expect_context(heaplab_allocator_version "")
  foreach(name pair/system/64 batch/fifo/system/64 batch/lifo/system/64
               realloc/system/from:16/to:4096 aligned/system/align:64/size:64 calloc/system/64)
    expect_measured(${name})
  endforeach()
  expect_number(realloc/system/from:16/to:4096 calls_per_iteration 9) # 16 .. 4096 by doubling
elseif(CASE STREQUAL "threaded")
  foreach(name pair/system/16/real_time/threads:2 batch/lifo/system/64/real_time/threads:2)
    expect_measured(${name})
    expect_number(${name} threads 2)
  endforeach()
elseif(CASE STREQUAL "missing")
  # an allocator that cannot be loaded: every benchmark is Google Benchmark's error
  expect_context(heaplab_allocator_error "")
  expect_error("pair/so:/nonexistent/heaplab-gbench-missing.so/64" "heaplab-gbench-missing.so")
elseif(CASE STREQUAL "unknown")
  # a misspelt allocator: refused before anything runs, naming the choices
  string(FIND "${err}" "unknown allocator 'jemaloc'" at)
  if(at EQUAL -1)
    fail("stderr does not say \"unknown allocator 'jemaloc'\": ${err}")
  endif()
else()
  message(FATAL_ERROR "run_and_check.cmake: unknown CASE '${CASE}'")
endif()

if(failures GREATER 0)
  message(FATAL_ERROR "${failures} expectation(s) failed (report: ${REPORT})")
endif()
message("all expectations of case '${CASE}' met")
